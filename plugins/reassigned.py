"""Reassigned spectrogram: STFT power moved to its local centre of gravity in time and frequency."""

from __future__ import annotations

from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators import Param, operator
from specscope.compute.ops import timefreq

from ._common import WINDOW, real_signal

SPECSCOPE_PLUGIN = {
    "summary": "Reassigned spectrogram (sharpened STFT image)",
    "outputs": {"spectrogram": "image"},
    "titles": {"spectrogram": "Reassigned spectrogram"},
}


@operator("spectrogram", family="timefreq",
          summary="Reassigned spectrogram on the STFT grid: (freqs Hz, frame centres s, power)",
          params=[Param("nfft", int, 512, min=4, unit="samples", help="frame length"),
                  Param("hop", int, 64, min=1, unit="samples", help="samples between frames"),
                  WINDOW],
          reference="Auger-Flandrin reassignment (f - Im(X_dh X_h*)/|X_h|^2 fs/2pi, "
                    "t + Re(X_th X_h*)/|X_h|^2 / fs); power summed into the nearest bin/frame",
          history=lambda p: p["nfft"] - p["hop"])
def spectrogram(x, *, nfft, hop, window, fs, xp):
    """Power that reassigns outside the grid (before the first or after the last frame
    centre, beyond 0..fs/2) is dropped."""
    if x.ndim != 1:
        raise operator_error(InputError, "reassigned.spectrogram", f"input must be one channel (1-D), got "
                         f"shape {tuple(x.shape)}")
    real_signal(x, "reassigned.spectrogram", nfft)
    f_hat, t_hat, power = timefreq.reassigned_spectrogram.function(
        x, nfft=nfft, hop=hop, window=window, fs=fs, xp=xp)
    n_bins, n_frames = power.shape
    c = (nfft - 1) / 2.0
    fi = xp.rint(f_hat * (nfft / fs)).astype(xp.int64)
    ti = xp.rint((t_hat * fs - c) / hop).astype(xp.int64)
    ok = (fi >= 0) & (fi < n_bins) & (ti >= 0) & (ti < n_frames)
    flat = (fi * n_frames + ti)[ok]
    image = xp.bincount(flat, weights=power[ok].astype(xp.float64),
                        minlength=n_bins * n_frames).reshape(n_bins, n_frames)
    freqs = xp.arange(n_bins, dtype=xp.float64) * (fs / nfft)
    times = (xp.arange(n_frames, dtype=xp.float64) * hop + c) / fs
    return freqs, times, image.astype(power.dtype)
