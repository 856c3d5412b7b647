"""Continuous-wavelet scalogram (Morlet) on log-spaced frequencies, via PyWavelets."""

from __future__ import annotations

import numpy as np
import pywt
from specscope.compute.errors import InputError
from specscope.compute.operators import Param, operator

SPECSCOPE_PLUGIN = {
    "summary": "Continuous-wavelet scalogram (Morlet)",
    "outputs": {"morlet": "image"},
}


def frequencies(fmin: float, fmax: float, n_freqs: int) -> np.ndarray:
    """Log-spaced analysis frequencies, ascending."""
    return np.geomspace(fmin, fmax, n_freqs)


@operator("morlet", family="timefreq",
          summary="Morlet scalogram: (frequencies Hz, times s, |CWT|**2)",
          params=[Param("fmin", float, 20.0, min=0.0, unit="Hz", help="lowest frequency"),
                  Param("fmax", float, None, min=0.0, unit="Hz",
                        help="highest frequency (0.45 fs)"),
                  Param("n_freqs", int, 64, min=2, max=1024, help="log-spaced rows"),
                  Param("wavelet", str, "cmor1.5-1.0", choices=("cmor1.5-1.0", "cmor1.0-1.0",
                                                                  "cmor3.0-1.0", "morl"),
                        help="complex Morlet (bandwidth-centre) or the real Morlet"),
                  Param("hop", int, 16, min=1, unit="samples", help="keep every hop-th column"),
                  Param("method", str, "fft", choices=("fft", "conv"))],
          reference="pywt.cwt(x, scales=central_frequency(wavelet) * fs / f, wavelet, "
                    "sampling_period=1/fs)[0][:, ::hop], squared magnitude",
          history=None)
def morlet(x, *, fmin, fmax, n_freqs, wavelet, hop, method, fs):
    x = np.asarray(x)
    if x.ndim != 1:
        raise InputError(f"scalogram.morlet: input must be one channel (1-D), got shape "
                         f"{x.shape}")
    if x.dtype.kind == "c":
        raise InputError("scalogram.morlet: input must be real")
    if x.size < 2:
        raise InputError(f"scalogram.morlet: the signal has {x.size} samples; it needs >= 2")
    top = 0.45 * fs if fmax is None else fmax
    if not 0 < fmin < top <= fs / 2:
        raise InputError(f"scalogram.morlet: need 0 < fmin={fmin} < fmax={top} <= fs/2="
                         f"{fs / 2} Hz")
    f = frequencies(fmin, top, n_freqs)
    scales = pywt.central_frequency(wavelet) * fs / f
    dtype = np.float32 if x.dtype == np.float32 else np.float64
    coef, _ = pywt.cwt(x.astype(dtype, copy=False), scales, wavelet, sampling_period=1.0 / fs,
                       method=method)
    coef = coef[:, ::hop]
    power = (coef.real ** 2 + coef.imag ** 2) if np.iscomplexobj(coef) else coef ** 2
    times = np.arange(0, x.size, hop, dtype=np.float64) / fs
    return f, times, power.astype(dtype, copy=False)
