"""Constant-Q transform as a time-frequency image."""

from __future__ import annotations

from specscope.compute.operators import Param, operator
from specscope.compute.ops import timefreq

from ._common import WINDOW, real_signal

SPECSCOPE_PLUGIN = {
    "summary": "Constant-Q transform (log-frequency spectrogram)",
    "outputs": {"spectrogram": "image"},
    "titles": {"spectrogram": "Constant-Q"},
    "examples": {"spectrogram": {"fmin": 55.0, "n_bins": 48}},
}


@operator("spectrogram", family="timefreq",
          summary="Constant-Q spectrogram: (bin frequencies Hz, frame times s, |C|**2 or |C|)",
          params=[Param("fmin", float, 32.70, min=0.0, unit="Hz", help="lowest bin"),
                  Param("n_bins", int, 84, min=1, max=1024, help="number of bins"),
                  Param("bins_per_octave", int, 12, min=1, max=96),
                  Param("hop", int, 256, min=1, unit="samples", help="samples between frames"),
                  WINDOW,
                  Param("scale", str, "power", choices=("power", "magnitude"))],
          reference="C[k, m] = sum_j x[m*hop - N_k//2 + j] conj(w_k[j] exp(2j pi f_k j/fs))/N_k,"
                    " N_k = ceil(Q fs / f_k), f_k = fmin 2**(k/bins_per_octave)",
          history=None)
def spectrogram(x, *, fmin, n_bins, bins_per_octave, hop, window, scale, fs, xp):
    """Frame ``m`` is centred on sample ``m*hop``; the signal is zero outside."""
    real_signal(x, "cqt.spectrogram")
    f, c = timefreq.cqt.function(x, fmin=fmin, n_bins=n_bins, bins_per_octave=bins_per_octave,
                                 hop=hop, window=window, fs=fs, xp=xp)
    mag = xp.abs(c)
    values = mag * mag if scale == "power" else mag
    times = xp.arange(c.shape[-1], dtype=xp.float64) * (hop / fs)
    return f, times, values
