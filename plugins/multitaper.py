"""Multitaper spectrogram: per frame, the mean of DPSS-tapered periodograms."""

from __future__ import annotations

from specscope.compute.operators import Param, operator
from specscope.compute.ops import frames, timefreq

from ._common import frame_times, real_signal

SPECSCOPE_PLUGIN = {
    "summary": "Multitaper (DPSS) spectrogram",
    "outputs": {"spectrogram": "image"},
    "titles": {"spectrogram": "Multitaper spectrogram"},
}


@operator("spectrogram", family="timefreq",
          summary="Multitaper spectrogram: (freqs Hz, frame centres s, PSD per Hz)",
          params=[Param("nperseg", int, 256, min=4, unit="samples", help="frame length"),
                  Param("hop", int, 64, min=1, unit="samples", help="samples between frames"),
                  Param("NW", float, 3.0, min=0.5, max=50.0, help="time-half-bandwidth product"),
                  Param("K", int, None, min=1, help="number of tapers (2*NW - 1)"),
                  Param("nfft", int, None, min=4, unit="samples",
                        help="FFT length (nperseg)")],
          reference="mean over k of |rfft(frame * dpss_k)|**2 / (fs * sum(dpss_0**2)), "
                    "one-sided (doubled except DC and Nyquist); frames at k*hop",
          history=lambda p: p["nperseg"] - p["hop"])
def spectrogram(x, *, nperseg, hop, NW, K, nfft, fs, xp):
    real_signal(x, "multitaper.spectrogram", nperseg)
    segs = frames(x, nperseg, hop, xp)  # (..., n_frames, nperseg)
    f, p = timefreq.multitaper_psd.function(segs, NW=NW, K=K, nfft=nfft, axis=-1, fs=fs,
                                            xp=xp)
    return f, frame_times(segs.shape[-2], nperseg, hop, fs, xp), xp.swapaxes(p, -1, -2)
