"""Continuous-wavelet scalogram (Morlet) on log-spaced frequencies, via PyWavelets."""

from __future__ import annotations

import functools

import numpy as np
import pywt
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators import Param, operator
from specscope.compute.ops import sums_at

SPECSCOPE_PLUGIN = {
    "summary": "Continuous-wavelet scalogram (Morlet)",
    "outputs": {"morlet": "image"},
    "titles": {"morlet": "Morlet scalogram"},
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
        raise operator_error(InputError, "scalogram.morlet", f"input must be one channel (1-D), got shape "
                         f"{x.shape}")
    if x.dtype.kind == "c":
        raise operator_error(InputError, "scalogram.morlet", "input must be real")
    if x.size < 2:
        raise operator_error(InputError, "scalogram.morlet", f"the signal has {x.size} samples; it needs >= 2")
    top = 0.45 * fs if fmax is None else fmax
    if not 0 < fmin < top <= fs / 2:
        raise operator_error(InputError, "scalogram.morlet", f"need 0 < fmin={fmin} < fmax={top} <= fs/2="
                         f"{fs / 2} Hz")
    f = frequencies(fmin, top, n_freqs)
    scales = pywt.central_frequency(wavelet) * fs / f
    dtype = np.float32 if x.dtype == np.float32 else np.float64
    n_out = -(-x.size // hop)
    if hop == 1 or _direct_cost(x.size, n_out, scales, wavelet) > 1.0:
        coef, _ = pywt.cwt(x.astype(dtype, copy=False), scales, wavelet,
                           sampling_period=1.0 / fs, method=method)
        coef = coef[:, ::hop]
    else:  # a view's hop: pywt's sums, only at the kept columns
        coef = sums_at(x.astype(dtype, copy=False), [_cwt_kernel(s, wavelet) for s in scales], hop,
                       n_out, np) * -np.sqrt(scales)[:, None]
    power = (coef.real ** 2 + coef.imag ** 2) if np.iscomplexobj(coef) else coef ** 2
    times = np.arange(0, x.size, hop, dtype=np.float64) / fs
    return f, times, power.astype(dtype, copy=False)


@functools.lru_cache(maxsize=8)
def _integrated(wavelet: str) -> tuple[np.ndarray, np.ndarray]:
    w = pywt.ContinuousWavelet(wavelet)
    int_psi, grid = pywt.integrate_wavelet(w, precision=12)  # pywt.cwt's default
    return (np.conj(int_psi) if w.complex_cwt else int_psi), grid


def _psi_kernel(scale: float, wavelet: str) -> np.ndarray:
    """pywt.cwt's kernel at ``scale``: the integrated wavelet resampled, reversed."""
    int_psi, grid = _integrated(wavelet)
    step = grid[1] - grid[0]
    j = (np.arange(scale * (grid[-1] - grid[0]) + 1) / (scale * step)).astype(int)
    return int_psi[j[j < int_psi.size]][::-1]


def _direct_cost(n: int, n_out: int, scales: np.ndarray, wavelet: str) -> float:
    """Direct sums at the kept columns over pywt's FFT convolutions (ratio of work)."""
    lengths = [_psi_kernel(s, wavelet).size for s in (scales.min(), scales.max())]
    direct = n_out * sum(lengths) / 2 * scales.size
    fft = scales.size * 6 * (n + max(lengths)) * np.log2(n + max(lengths))
    return direct / fft


def _cwt_kernel(scale: float, wavelet: str) -> tuple[int, np.ndarray]:
    """``(first, kernel)`` whose sums at ``n*hop`` are ``pywt.cwt(x, [scale], wavelet)[0][0,
    ::hop] / -sqrt(scale)``.

    pywt takes ``-sqrt(scale) * diff(convolve(x, k))`` trimmed by ``floor((len(k) - 2) / 2)``
    on the left; the difference of a convolution is the convolution with ``diff(k)``.
    """
    k = _psi_kernel(scale, wavelet).astype(np.complex128)
    if k.size < 2:
        raise operator_error(InputError, "scalogram.morlet", f"scale {scale:.3g} is too small for {wavelet}")
    d = np.diff(np.concatenate([[0], k, [0]]))  # diff(k) with k zero outside
    return (k.size - 2) // 2 + 1 - k.size, d[::-1]
