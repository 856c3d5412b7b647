"""Time-frequency analysis: STFT/ISTFT, spectrogram, PSD estimators, filter banks, CQT."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from specscope.compute import spectral
from specscope.compute.errors import Cancelled, InputError, operator_error
from specscope.compute.operators.registry import REQUIRED, Param, operator
from specscope.compute.types import Layout, Scaling, SpecMode, Statistic, choices

from ..backend import get_xp, is_device_array, scipy_fn
from . import _cuda
from ._common import AXIS, on_host
from .helpers import as_float, frames, sums_at

FAMILY = "timefreq"

WINDOW = Param("window", "window", "hann", help="window name or (name, parameter)")
NPERSEG = Param("nperseg", int, 256, min=1, unit="samples", help="window length")
HOP = Param("hop", int, 64, min=1, unit="samples", help="samples between frames")
FFT_MODE = Param("fft_mode", str, "onesided",
                 choices=("onesided", "twosided", "centered", "onesided2X"),
                 help="which FFT bins, as ShortTimeFFT")
MFFT = Param("mfft", int, None, min=1, help="FFT length (nperseg when omitted)")
SCALE_TO = Param("scale_to", str, None, choices=("magnitude", "psd"),
                 help="scale the window for magnitude or PSD (unscaled when omitted)")


# -- STFT with ShortTimeFFT semantics ---------------------------------------------------


@lru_cache(maxsize=64)
def _sft(window, nperseg: int, hop: int, fs: float, fft_mode: str, mfft: int | None,
         scale_to: str | None) -> Any:
    import scipy.signal
    win = spectral.get_window(window, nperseg)
    return scipy.signal.ShortTimeFFT(np.array(win), hop, fs, fft_mode=fft_mode, mfft=mfft,
                                     scale_to=scale_to)


def _stft_xp(x, sft, xp):
    """``ShortTimeFFT.stft(x)`` (last axis) computed with ``xp``: gather, window, FFT."""
    n = x.shape[-1]
    if n < 1:
        raise operator_error(InputError, "stft", "the signal is empty; it needs at least 1 sample")
    p0, p1 = sft.p_min, sft.p_max(n)
    m, mid, hop, mfft = sft.m_num, sft.m_num_mid, sft.hop, sft.mfft
    p = xp.arange(p0, p1)
    idx = p[:, None] * hop - mid + xp.arange(m)[None, :]
    lo = max(0, -(p0 * hop - mid))
    hi = max(0, (p1 - 1) * hop - mid + m - n)
    xpad = xp.pad(x, [(0, 0)] * (x.ndim - 1) + [(lo, hi)])
    seg = xpad[..., idx + lo]
    ctype = xp.result_type(x.dtype, xp.complex64)
    win = xp.asarray(np.conj(sft.win)).astype(ctype if x.dtype.kind == "c" else x.dtype)
    seg = seg * win
    if mfft > m:
        seg = xp.concatenate([seg, xp.zeros(seg.shape[:-1] + (mfft - m,), seg.dtype)], -1)
    ps = (sft.phase_shift + mid) % m
    seg = xp.roll(seg, -ps, axis=-1)
    mode = sft.fft_mode
    if mode == "twosided":
        out = xp.fft.fft(seg, n=mfft, axis=-1)
    elif mode == "centered":
        out = xp.fft.fftshift(xp.fft.fft(seg, n=mfft, axis=-1), axes=-1)
    else:
        out = xp.fft.rfft(seg, n=mfft, axis=-1)
        if mode == "onesided2X":
            fac = np.sqrt(2) if sft.scaling == "psd" else 2
            out[..., 1:-1 if mfft % 2 == 0 else None] *= fac
    return xp.swapaxes(out, -1, -2).astype(ctype, copy=False)


@operator("stft", family=FAMILY, summary="Short-time Fourier transform (ShortTimeFFT semantics)",
          params=[WINDOW, NPERSEG, HOP, FFT_MODE, MFFT, SCALE_TO],
          reference="scipy.signal.ShortTimeFFT.stft",
          history=lambda p: p["nperseg"] - p["hop"])
def stft(x, *, window, nperseg, hop, fft_mode, mfft, scale_to, fs, xp):
    """STFT shaped ``(..., n_freq, n_slices)``; slices overhang both ends as in ShortTimeFFT,
    so :func:`istft` reconstructs the signal exactly."""
    if x.dtype.kind == "c" and fft_mode in ("onesided", "onesided2X"):
        raise operator_error(InputError, "stft", f"fft_mode={fft_mode!r} needs real input; use 'twosided' "
                         "or 'centered' for complex signals")
    sft = _sft(window, nperseg, hop, fs, fft_mode, mfft, scale_to)
    return _stft_xp(as_float(x, xp), sft, xp)


@operator("istft", family=FAMILY, summary="Inverse STFT (ShortTimeFFT semantics, exact inverse)",
          params=[WINDOW, NPERSEG, HOP, FFT_MODE, MFFT, SCALE_TO,
                  Param("n", int, None, min=1, unit="samples", help="output length")],
          reference="scipy.signal.ShortTimeFFT.istft", history=None)
def istft(x, *, window, nperseg, hop, fft_mode, mfft, scale_to, n, fs):
    sft = _sft(window, nperseg, hop, fs, fft_mode, mfft, scale_to)
    return sft.istft(x, k1=n)


# -- the STFT kernel and the spectrogram --------------------------------------------------
#
# ``stft_power`` is the one STFT kernel (frames -> window -> FFT -> power) behind every
# spectrogram: the public :func:`spectrogram`, the tile engine, the exports, the
# pipeline's spectrogram stage, live blocks and batch runs call it through the operator
# core, so one backend choice and one profile see them all.  Its NumPy implementation
# is :func:`specscope.compute.spectral.stft_kernel` (a base room, so code below the
# operator core computes the same numbers); :func:`stft_power_xp` is the same kernel
# written once against ``xp``, the CuPy implementation.

SPEC_MODES = choices(SpecMode)
#: frames per kernel call of :func:`spectrogram` when it reports progress or can be
#: cancelled (without either the whole signal is one call)
SPECTROGRAM_BLOCK = 16384


@lru_cache(maxsize=128)
def _stft_params(nfft: int, hop: int, window, scaling: str) -> spectral.StftParams:
    return spectral.StftParams(nfft, hop, tuple(window) if isinstance(window, list)
                               else window, scaling)


def stft_power_xp(x, params: spectral.StftParams, fs: float, *, two_sided=None,
                  layout: Layout = "frames", xp=np):
    """:func:`~specscope.compute.spectral.stft_kernel` written against ``xp``.

    The same numbers (scaling folded into the window, DC and Nyquist halved)
    computed with whole-array operations: the CuPy implementation of
    ``stft_power``; with ``xp=numpy`` it is the reference the tests compare the
    threaded kernel with.
    """
    x = as_float(x, xp)
    complex_in = x.dtype.kind == "c"
    two_sided = complex_in if two_sided is None else bool(two_sided)
    if complex_in and not two_sided:
        raise InputError("two_sided=False needs real input; complex signals have "
                         "two-sided spectra")
    if layout not in spectral.LAYOUTS:
        raise InputError(f"layout={layout!r} must be one of {', '.join(spectral.LAYOUTS)}")
    ftype = spectral.kernel_dtype(x.dtype)
    nfft = params.nfft
    win = xp.asarray(spectral.kernel_window(params, float(fs), ftype, two_sided))
    seg = frames(x, nfft, params.hop, xp) * win
    if two_sided:
        spec = xp.fft.fftshift(xp.fft.fft(seg, axis=-1), axes=-1)
    else:
        spec = xp.fft.rfft(seg, axis=-1)
    if params.is_power:
        out = (spec.real * spec.real + spec.imag * spec.imag).astype(ftype, copy=False)
        if not two_sided:  # the doubling in the window must not double DC and Nyquist
            out[..., 0] *= 0.5
            if nfft % 2 == 0:
                out[..., -1] *= 0.5
    else:
        out = xp.abs(spec).astype(ftype, copy=False)
    if layout == "freq":
        out = xp.swapaxes(out, -1, -2)
    return xp.ascontiguousarray(out)


_STFT_PARAMS = [
    Param("nfft", int, 1024, min=2, unit="samples", help="frame and FFT length"),
    Param("hop", int, 256, min=1, unit="samples", help="samples between frames"),
    WINDOW,
    Param("scaling", str, "psd", choices=spectral.SCALINGS,
          help="psd (unit²/Hz), spectrum (unit²) or magnitude (unit)"),
    Param("two_sided", bool, None,
          help="two-sided, centred spectra (default: for complex input only)"),
    Param("layout", str, "frames", choices=spectral.LAYOUTS,
          help="frames: (..., frames, freq); freq: (..., freq, frames)"),
    Param("out", "any", None, python_only=True,
          help="array the result is written into (Python only): C-contiguous, of the "
               "result's shape and dtype, in the input's namespace"),
]


def _check_out(out, xp=np):
    """``out=`` as the implementations take it: None or an array (a clear error otherwise)."""
    if out is None or isinstance(out, np.ndarray) or (xp is not np and isinstance(out, xp.ndarray)):
        return out
    raise operator_error(InputError, "stft_power", f"out= must be an array of the result's shape and dtype, "
                     f"got {type(out).__name__}")


def _into(out, result, xp):
    """``result`` written into ``out`` (on the host when ``out`` is a numpy array)."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape) or out.dtype != result.dtype or \
            not out.flags.c_contiguous:
        raise operator_error(InputError, "stft_power", f"out= must be a C-contiguous {result.dtype} array of "
                         f"shape {tuple(result.shape)}, got {out.dtype} {tuple(out.shape)}")
    if isinstance(out, np.ndarray) and xp is not np:
        out[...] = xp.asnumpy(result)
    else:
        out[...] = result
    return out


@operator("stft_power", family=FAMILY,
          summary="The STFT kernel: frames -> window -> FFT -> power, every whole frame",
          params=_STFT_PARAMS,
          reference="scipy.signal.spectrogram(detrend=False, noverlap=nfft-hop)",
          history=lambda p: p["nfft"] - p["hop"])
def stft_power(x, *, nfft, hop, window, scaling, two_sided, layout, out, fs):
    """Frame ``k`` covers samples ``k*hop .. k*hop+nfft-1`` of the last axis; power for
    psd/spectrum scaling, amplitude for magnitude (see StftParams).  With ``out=`` the
    kernel writes into that array and returns it (a caller's buffer reused across
    blocks: nothing of the result's size is allocated per call)."""
    return spectral.stft_kernel(x, _stft_params(nfft, hop, window, scaling), fs,
                                two_sided=two_sided, layout=layout, out=_check_out(out))


@stft_power.implementation("cupy")
def _stft_power_cupy(x, *, nfft, hop, window, scaling, two_sided, layout, out, fs, xp):
    # fused kernels: window-and-pack, cuFFT's batched R2C, |X|**2 (compute/ops/_cuda.py)
    out = _check_out(out, xp)
    return _into(out, _cuda.stft_power_fused(x, _stft_params(nfft, hop, window, scaling), fs,
                                             two_sided=two_sided, layout=layout, cp=xp), xp)


@stft_power.implementation("cupy", "xp")
def _stft_power_cupy_xp(x, *, nfft, hop, window, scaling, two_sided, layout, out, fs, xp):
    out = _check_out(out, xp)
    return _into(out, stft_power_xp(x, _stft_params(nfft, hop, window, scaling), fs,
                                    two_sided=two_sided, layout=layout, xp=xp), xp)


def spectrogram(x, fs: float, *, nfft: int = 1024, hop: int = 256,
                window: str | tuple = "hann", scaling: Scaling = "psd", axis: int = -1,
                progress=None, cancelled=None, backend: str = "auto"):
    """Spectrogram of a signal, computed by the ``stft_power`` operator.

    Parameters
    ----------
    x : array_like
        Signal; time runs along ``axis``.  Real input gives one-sided spectra,
        complex input two-sided spectra centred on 0 Hz.
    fs : float
        Sample rate in Hz.
    nfft, hop : int
        Frame length and frame step in samples.
    window : str or tuple
        Window name (``scipy.signal.get_window``).
    scaling : {"psd", "spectrum", "magnitude"}
        See :class:`~specscope.compute.spectral.StftParams`.
    axis : int
        Time axis of ``x``.
    progress, cancelled : callable, optional
        ``progress(fraction)`` is called after each block of frames;
        ``cancelled()`` returning True stops the work with :class:`Cancelled`.
    backend : str
        ``"auto"`` (autotuned), ``"numpy"`` or ``"cupy"``: where the kernel runs.

    Returns
    -------
    frequencies : ndarray, shape (n_freq,)
    times : ndarray, shape (n_frames,)
        Frame centres in seconds.
    S : ndarray, shape (..., n_freq, n_frames)
        float32 for float32/int input, float64 for float64 input; the other
        axes of ``x`` lead.  The numbers of ``scipy.signal.spectrogram``
        (``detrend=False``, ``noverlap=nfft-hop``).  Each frame's spectrum is
        contiguous in memory (the array is a view of a ``(..., n_frames,
        n_freq)`` one, laid out as librosa's and torch's spectrograms are):
        ``S[..., k]`` is one frame without a copy; ``numpy.ascontiguousarray(S)``
        gives C order where a consumer needs it.
    """
    params = spectral.StftParams(nfft, hop, window, scaling)
    if isinstance(fs, bool) or not isinstance(fs, (int, float, np.number)) or not fs > 0:
        raise InputError(f"fs={fs!r} must be a positive sample rate in Hz")
    fs = float(fs)
    x = x if is_device_array(x) else np.asarray(x)
    if x.ndim == 0:
        raise InputError("expected a signal, got a scalar")
    if x.dtype.kind in "iub" or x.dtype == np.float16:
        x = x.astype(np.float32)
    x = (get_xp("cupy") if is_device_array(x) else np).moveaxis(x, axis, -1)
    n = x.shape[-1]
    params.check_length(n, "the signal")
    two_sided = x.dtype.kind == "c"
    freqs = params.frequencies(fs, two_sided)
    times = params.frame_times(n, fs)
    # computed frame by frame (each spectrum contiguous, as librosa's and torch's
    # results are laid out) and returned as the (..., freq, frames) view of it
    kw = dict(params.operator_params(), two_sided=two_sided, layout="frames")
    n_frames = params.n_frames(n)
    if progress is None and cancelled is None:
        return freqs, times, _freq_view(stft_power.run(x, backend=backend, fs=fs, **kw))
    out = None
    for k0 in range(0, n_frames, SPECTROGRAM_BLOCK):
        if cancelled is not None and cancelled():
            raise Cancelled()
        k1 = min(k0 + SPECTROGRAM_BLOCK, n_frames)
        part = stft_power.run(x[..., k0 * hop:(k1 - 1) * hop + nfft], backend=backend,
                              fs=fs, **kw)
        if out is None:
            xp = np if not is_device_array(part) else get_xp("cupy")
            out = xp.empty((*part.shape[:-2], n_frames, part.shape[-1]), part.dtype)
        out[..., k0:k1, :] = part
        if progress is not None:
            progress(k1 / n_frames)
    return freqs, times, _freq_view(out)


def _freq_view(s):
    """``(..., frames, freq)`` as its ``(..., freq, frames)`` view (no copy)."""
    return s.swapaxes(-1, -2)


def _spectrogram_xp(x, fs, nfft, hop, window, mode, xp):
    """The ``spectrogram`` operator with ``xp``: the kernel for power and magnitude,
    the complex spectra themselves for ``angle`` and ``complex``."""
    params = spectral.StftParams(nfft, hop, window, mode if mode in spectral.SCALINGS
                                 else "magnitude")
    x = as_float(x, xp)
    n = x.shape[-1]
    params.check_length(n, "the signal")
    two_sided = x.dtype.kind == "c"
    freqs = params.frequencies(fs, two_sided)
    times = params.frame_times(n, fs)
    if mode in spectral.SCALINGS:
        out = stft_power_xp(x, params, fs, two_sided=two_sided, layout="freq", xp=xp)
        return xp.asarray(freqs), xp.asarray(times), out
    ftype = spectral.kernel_dtype(x.dtype)
    seg = frames(x, nfft, hop, xp) * xp.asarray(params.win.astype(ftype))
    spec = xp.fft.fftshift(xp.fft.fft(seg, axis=-1), axes=-1) if two_sided \
        else xp.fft.rfft(seg, axis=-1)
    spec = spec * ftype(1.0 / float(np.sum(params.win)))
    out = xp.angle(spec) if mode == "angle" else spec
    return xp.asarray(freqs), xp.asarray(times), xp.swapaxes(out, -1, -2)


_SPEC_PARAMS = [Param("nfft", int, 256, min=2, unit="samples", help="frame and FFT length"),
                HOP, WINDOW,
                Param("mode", str, "psd", choices=SPEC_MODES,
                      help="psd (unit²/Hz), spectrum (unit²), magnitude, angle or complex")]


@operator("spectrogram", family=FAMILY, summary="Spectrogram: (frequencies, times, S)",
          params=_SPEC_PARAMS,
          reference="scipy.signal.spectrogram(detrend=False, noverlap=nfft-hop)",
          history=lambda p: p["nfft"] - p["hop"])
def spectrogram_op(x, *, nfft, hop, window, mode, fs):
    """Real input: one-sided; complex input: two-sided, centred (fftshift).  Signals
    shorter than nfft are rejected (scipy would shrink the window).  psd, spectrum and
    magnitude run the ``stft_power`` kernel."""
    if mode in spectral.SCALINGS:
        return spectrogram(x, fs, nfft=nfft, hop=hop, window=window, scaling=mode,
                           backend="numpy")
    return _spectrogram_xp(x, fs, nfft, hop, window, mode, np)


@spectrogram_op.implementation("cupy")
def _spectrogram_cupy(x, *, nfft, hop, window, mode, fs, xp):
    return _spectrogram_xp(x, fs, nfft, hop, window, mode, xp)


# -- PSD estimators -----------------------------------------------------------------------

_DETREND = Param("detrend", (str, bool), "constant", choices=("constant", "linear", False),
                 help="detrend each segment")
_SCALING = Param("scaling", str, "density", choices=("density", "spectrum"))
_ONESIDED = Param("return_onesided", bool, True, help="one-sided spectrum for real input")
_NOVERLAP = Param("noverlap", int, None, min=0, unit="samples", help="overlap (nperseg/2)")
_NFFT = Param("nfft", int, None, min=1, unit="samples", help="FFT length (nperseg)")
_AVERAGE = Param("average", str, "mean", choices=choices(Statistic))
_Y = Param("y", "array", REQUIRED, help="second signal")
#: scipy's nperseg of the averaged estimators: None is 256, or the length of an array window
_NPERSEG_AVG = Param("nperseg", int, None, min=1, unit="samples",
                     help="segment length (256, or an array window's length)")


@operator("welch", family=FAMILY, summary="Power spectral density by Welch's method",
          params=[WINDOW, _NPERSEG_AVG, _NOVERLAP, _NFFT, _DETREND, _ONESIDED, _SCALING, AXIS,
                  _AVERAGE], reference="scipy.signal.welch", history=None)
def welch(x, *, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
          average, fs, xp):
    return scipy_fn(xp, "signal.welch")(
        x, fs=fs, window=spectral.parse_window(window), nperseg=nperseg, noverlap=noverlap,
        nfft=nfft, detrend=detrend, return_onesided=return_onesided, scaling=scaling,
        axis=axis, average=average)


@operator("periodogram", family=FAMILY, summary="Power spectral density by the periodogram",
          params=[Param("window", "window", "boxcar"), _NFFT, _DETREND, _ONESIDED, _SCALING,
                  AXIS], reference="scipy.signal.periodogram", history=None)
def periodogram(x, *, window, nfft, detrend, return_onesided, scaling, axis, fs, xp):
    return scipy_fn(xp, "signal.periodogram")(
        x, fs=fs, window=spectral.parse_window(window), nfft=nfft, detrend=detrend,
        return_onesided=return_onesided, scaling=scaling, axis=axis)


@operator("csd", family=FAMILY, summary="Cross spectral density by Welch's method",
          params=[_Y, WINDOW, _NPERSEG_AVG, _NOVERLAP, _NFFT, _DETREND, _ONESIDED, _SCALING, AXIS,
                  _AVERAGE], reference="scipy.signal.csd", history=None)
def csd(x, *, y, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
        average, fs, xp):
    return scipy_fn(xp, "signal.csd")(
        x, y, fs=fs, window=spectral.parse_window(window), nperseg=nperseg, noverlap=noverlap,
        nfft=nfft, detrend=detrend, return_onesided=return_onesided, scaling=scaling,
        axis=axis, average=average)


@operator("coherence", family=FAMILY, summary="Magnitude-squared coherence of two signals",
          params=[_Y, WINDOW, _NPERSEG_AVG, _NOVERLAP, _NFFT, _DETREND, AXIS],
          reference="scipy.signal.coherence", history=None)
def coherence(x, *, y, window, nperseg, noverlap, nfft, detrend, axis, fs, xp):
    return scipy_fn(xp, "signal.coherence")(
        x, y, fs=fs, window=spectral.parse_window(window), nperseg=nperseg, noverlap=noverlap,
        nfft=nfft, detrend=detrend, axis=axis)


@operator("lombscargle", family=FAMILY,
          summary="Lomb-Scargle periodogram of unevenly sampled data (input: the samples)",
          params=[Param("t", "array", None, unit="s", help="sample times"),
                  Param("freqs", "array", REQUIRED, unit="rad/s", help="angular frequencies"),
                  Param("y", "array", None, help="the samples, scipy's order: with y the "
                        "input is the sample times"),
                  Param("precenter", bool, None, help="subtract the mean first (deprecated "
                        "by scipy: use floating_mean)"),
                  Param("normalize", (bool, str), False,
                        choices=(False, True, "power", "normalize", "amplitude")),
                  Param("weights", "array", None, help="a weight per sample"),
                  Param("floating_mean", bool, False)],
          reference="scipy.signal.lombscargle", history=None)
def lombscargle(x, *, t, freqs, y, precenter, normalize, weights, floating_mean, xp):
    """scipy's ``lombscargle(x, y, freqs)`` takes the times first: give ``y`` and the input
    is read as the times; otherwise the input is the samples and ``t`` their times."""
    if (t is None) == (y is None):
        raise operator_error(InputError, "lombscargle", "give the sample times as t (input: the samples), or "
                         "the samples as y (input: the times, as scipy)")
    times, samples = (t, x) if y is None else (x, y)
    extra: dict = {}
    if precenter is not None:
        extra["precenter"] = precenter
    if weights is not None:
        extra["weights"] = weights
    if xp is np:
        return scipy_fn(np, "signal.lombscargle")(times, samples, freqs, normalize=normalize,
                                                  floating_mean=floating_mean, **extra)
    # cupyx has the classic periodogram only (no floating mean, 1-D input)
    if floating_mean or extra or samples.ndim != 1 or isinstance(normalize, str):
        return on_host(xp, "signal.lombscargle", times, samples, freqs, normalize=normalize,
                       floating_mean=floating_mean, **extra)
    return scipy_fn(xp, "signal.lombscargle")(times, samples, freqs, normalize=normalize)


@operator("multitaper_psd", family=FAMILY,
          summary="Multitaper PSD: mean of DPSS-tapered periodograms, (f, Pxx)",
          params=[Param("NW", float, 4.0, min=0.5, help="time-half-bandwidth product"),
                  Param("K", int, None, min=1, help="number of tapers (2*NW - 1)"),
                  _NFFT, AXIS],
          reference="mean over k of scipy.signal.periodogram(window=dpss_k, detrend=False)",
          history=None)
def multitaper_psd(x, *, NW, K, nfft, axis, fs, xp):
    import scipy.signal
    x = xp.moveaxis(as_float(x, xp), axis, -1)
    n = x.shape[-1]
    if n < 2:
        raise operator_error(InputError, "multitaper_psd", f"the signal has {n} samples; it needs at least 2")
    k = K if K is not None else max(1, int(2 * NW) - 1)
    tapers = scipy.signal.windows.dpss(n, NW, k, sym=True)
    tapers = np.atleast_2d(tapers)
    ftype = np.float32 if x.dtype in (np.float32, np.complex64) else np.float64
    nf = n if nfft is None else nfft
    seg = x[..., None, :] * xp.asarray(tapers.astype(ftype))
    if x.dtype.kind == "c":
        spec = xp.fft.fft(seg, n=nf, axis=-1)
        freqs = np.fft.fftfreq(nf, 1.0 / fs)
    else:
        spec = xp.fft.rfft(seg, n=nf, axis=-1)
        freqs = np.fft.rfftfreq(nf, 1.0 / fs)
    p = xp.mean(spec.real ** 2 + spec.imag ** 2, axis=-2) / (fs * ftype(np.sum(tapers[0] ** 2)))
    if x.dtype.kind != "c":
        p[..., 1:-1 if nf % 2 == 0 else None] *= 2
    return xp.asarray(freqs), xp.moveaxis(p.astype(ftype), -1, axis)


@operator("reassigned_spectrogram", family=FAMILY,
          summary="Reassigned spectrogram: (reassigned freqs Hz, reassigned times s, power)",
          params=[Param("nfft", int, 256, min=4, unit="samples"), HOP, WINDOW],
          reference="definition (Auger-Flandrin) evaluated by direct DFT",
          history=lambda p: p["nfft"] - p["hop"])
def reassigned_spectrogram(x, *, nfft, hop, window, fs, xp):
    """Frame ``k`` covers samples ``k*hop .. k*hop+nfft-1`` and is centred at
    ``k*hop + (nfft-1)/2``.  Bins with almost no energy keep their nominal position."""
    import scipy.signal
    x = as_float(x, xp)
    if x.dtype.kind == "c":
        raise operator_error(InputError, "reassigned_spectrogram", "input must be real")
    n = x.shape[-1]
    if n < nfft:
        raise operator_error(InputError, "reassigned_spectrogram", f"nfft={nfft} is larger than the signal "
                         f"({n} samples); choose nfft <= {n}")
    h = scipy.signal.get_window(spectral.parse_window(window), nfft, fftbins=False)
    c = (nfft - 1) / 2.0
    dh = np.gradient(h)
    th = (np.arange(nfft) - c) * h
    ftype = np.float32 if x.dtype == np.float32 else np.float64
    seg = frames(x, nfft, hop, xp)
    wins = xp.asarray(np.stack([h, dh, th]).astype(ftype))
    spec = xp.fft.rfft(seg[..., None, :] * wins[:, None, :].swapaxes(0, 1)[None]
                       if False else seg[..., None, :, :] * wins[:, None, :], axis=-1)
    xh, xdh, xth = spec[..., 0, :, :], spec[..., 1, :, :], spec[..., 2, :, :]
    power = xh.real ** 2 + xh.imag ** 2
    tiny = power <= (xp.max(power) if power.size else 0) * 1e-12
    safe = xp.where(tiny, 1, power)
    k = xp.arange(nfft // 2 + 1, dtype=xp.float64)
    nominal_f = k * (fs / nfft)
    nominal_t = (xp.arange(seg.shape[-2], dtype=xp.float64) * hop + c) / fs
    f_hat = nominal_f[:, None] - xp.imag(xdh * xp.conj(xh)).swapaxes(-1, -2) \
        / safe.swapaxes(-1, -2) * (fs / (2 * np.pi))
    t_hat = nominal_t[None, :] + xp.real(xth * xp.conj(xh)).swapaxes(-1, -2) \
        / safe.swapaxes(-1, -2) / fs
    tiny_t = tiny.swapaxes(-1, -2)
    f_hat = xp.where(tiny_t, nominal_f[:, None], f_hat)
    t_hat = xp.where(tiny_t, nominal_t[None, :], t_hat)
    return f_hat, t_hat, power.swapaxes(-1, -2)


# -- mel and octave filter banks --------------------------------------------------------

_HTK = Param("htk", bool, False, help="HTK mel formula instead of Slaney's")


@operator("hz_to_mel", family=FAMILY, summary="Frequency in Hz to mel", params=[_HTK],
          reference="Slaney / HTK mel formulas", streamable=True)
def hz_to_mel(x, *, htk, xp):
    return spectral.hz_to_mel(x, htk=htk, xp=xp)


@operator("mel_to_hz", family=FAMILY, summary="Mel to frequency in Hz", params=[_HTK],
          reference="Slaney / HTK mel formulas", streamable=True)
def mel_to_hz(x, *, htk, xp):
    return spectral.mel_to_hz(x, htk=htk, xp=xp)


_N_MELS = Param("n_mels", int, 40, min=1, help="number of mel bands")
_FMIN = Param("fmin", float, 0.0, min=0.0, unit="Hz")
_FMAX = Param("fmax", float, None, min=0.0, unit="Hz", help="upper edge (fs/2)")


@operator("mel_frequencies", family=FAMILY, summary="n_mels frequencies evenly spaced in mel",
          params=[_N_MELS, _FMIN, Param("fmax", float, 11025.0, min=0.0, unit="Hz"), _HTK],
          reference="mel_to_hz(linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels))",
          takes_input=False)
def mel_frequencies(*, n_mels, fmin, fmax, htk, xp):
    lo, hi = (spectral.hz_to_mel(fmin, htk=htk, xp=xp), spectral.hz_to_mel(fmax, htk=htk, xp=xp))
    return spectral.mel_to_hz(xp.linspace(lo, hi, n_mels), htk=htk, xp=xp)


def _mel_weights(fs, nfft, n_mels, fmin, fmax, htk, norm, xp):
    fmax = fs / 2.0 if fmax is None else fmax
    if fmin >= fmax:
        raise InputError(f"fmin={fmin} must be below fmax={fmax}")
    fft_f = xp.asarray(np.fft.rfftfreq(nfft, 1.0 / fs))
    lo, hi = (spectral.hz_to_mel(fmin, htk=htk, xp=xp), spectral.hz_to_mel(fmax, htk=htk, xp=xp))
    edges = spectral.mel_to_hz(xp.linspace(lo, hi, n_mels + 2), htk=htk, xp=xp)
    width = xp.diff(edges)
    rising = (fft_f[None, :] - edges[:-2, None]) / width[:-1, None]
    falling = (edges[2:, None] - fft_f[None, :]) / width[1:, None]
    w = xp.maximum(0.0, xp.minimum(rising, falling))
    if norm == "slaney":
        w = w * (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return w


@operator("mel_filterbank", family=FAMILY,
          summary="Triangular mel filter bank weights, shape (n_mels, nfft//2+1)",
          params=[Param("nfft", int, 512, min=2), _N_MELS, _FMIN, _FMAX, _HTK,
                  Param("norm", str, "slaney", choices=("slaney", "none"),
                        help="area normalisation")],
          reference="triangles between mel-spaced edges (librosa.filters.mel definition)",
          takes_input=False)
def mel_filterbank(*, nfft, n_mels, fmin, fmax, htk, norm, fs, xp):
    return _mel_weights(fs, nfft, n_mels, fmin, fmax, htk, norm, xp)


@operator("mel_spectrogram", family=FAMILY,
          summary="Mel spectrogram: mel filter bank applied to |STFT|**power",
          params=[Param("nfft", int, 512, min=2), HOP, WINDOW, _N_MELS, _FMIN, _FMAX, _HTK,
                  Param("norm", str, "slaney", choices=("slaney", "none")),
                  Param("power", float, 2.0, min=0.0),
                  Param("center", bool, False,
                        help="frames centred on k*hop, the signal padded with nfft//2 zeros "
                             "each side (librosa's center=True, pad_mode='constant'); off: "
                             "frames start at k*hop")],
          reference="mel_filterbank @ abs(rfft(frames * window))**power",
          history=lambda p: None if p.get("center") else p["nfft"] - p["hop"])
def mel_spectrogram(x, *, nfft, hop, window, n_mels, fmin, fmax, htk, norm, power, fs, xp,
                    center=False):
    """``librosa.feature.melspectrogram`` with the same parameters (and ``center``) to 1e-6
    relative; without ``center`` its frames are librosa's with ``center=False``."""
    x = as_float(x, xp)
    if x.dtype.kind == "c":
        raise operator_error(InputError, "mel_spectrogram", "input must be real")
    if center:
        x = xp.pad(x, [(0, 0)] * (x.ndim - 1) + [(nfft // 2, nfft // 2)])
    if x.shape[-1] < nfft:
        raise operator_error(InputError, "mel_spectrogram", f"nfft={nfft} is larger than the signal "
                         f"({x.shape[-1]} samples); choose nfft <= {x.shape[-1]}")
    win = spectral.get_window(window, nfft).astype(x.dtype)
    mag = xp.abs(xp.fft.rfft(frames(x, nfft, hop, xp) * xp.asarray(win), axis=-1)) ** power
    w = _mel_weights(fs, nfft, n_mels, fmin, fmax, htk, norm, xp).astype(x.dtype)
    return xp.matmul(w, xp.swapaxes(mag, -1, -2))


def _octave_bands(fraction, fmin, fmax):
    g = 10.0 ** (3.0 / 10.0)
    b = fraction
    # band index range covering [fmin, fmax] (base-ten, IEC 61260-1)
    def centre(i):
        return 1000.0 * g ** (i / b) if b % 2 else 1000.0 * g ** ((2 * i + 1) / (2 * b))
    lo_i = math.floor(b * math.log(max(fmin, 1e-9) / 1000.0) / math.log(g)) - 2
    hi_i = math.ceil(b * math.log(fmax / 1000.0) / math.log(g)) + 2
    rows = []
    for i in range(lo_i, hi_i + 1):
        fc = centre(i)
        if fmin <= fc <= fmax:
            rows.append((fc * g ** (-1 / (2 * b)), fc, fc * g ** (1 / (2 * b))))
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


@operator("octave_bands", family=FAMILY,
          summary="Fractional-octave bands (IEC 61260, base ten): rows of (lower, centre, upper)",
          params=[Param("fraction", int, 3, min=1, max=48, help="bands per octave"),
                  Param("fmin", float, 20.0, min=0.0, unit="Hz"),
                  Param("fmax", float, 20000.0, min=0.0, unit="Hz")],
          reference="IEC 61260-1 base-ten band formulas", takes_input=False)
def octave_bands(*, fraction, fmin, fmax):
    if fmax <= fmin:
        raise operator_error(InputError, "octave_bands", f"fmax={fmax} must be above fmin={fmin}")
    return _octave_bands(fraction, fmin, fmax)


@operator("octave_filterbank", family=FAMILY,
          summary="Split a signal into fractional-octave bands: shape (n_bands, ..., n)",
          params=[Param("fraction", int, 3, min=1, max=48, help="bands per octave"),
                  Param("fmin", float, 20.0, min=0.0, unit="Hz"),
                  Param("fmax", float, 20000.0, min=0.0, unit="Hz"),
                  Param("order", int, 4, min=1, max=12, help="Butterworth order per band")],
          reference="scipy.signal.butter(bandpass, sos) + sosfilt per band",
          streamable=True)
def octave_filterbank(x, *, fraction, fmin, fmax, order, fs, xp):
    """Bands whose upper edge reaches fs/2 are left out."""
    import scipy.signal
    bands = _octave_bands(fraction, fmin, min(fmax, fs / 2))
    bands = bands[bands[:, 2] < fs / 2]
    if len(bands) == 0:
        raise operator_error(InputError, "octave_filterbank", f"no band between fmin={fmin} and "
                         f"min(fmax, fs/2)={min(fmax, fs / 2)} Hz")
    sosfilt = scipy_fn(xp, "signal.sosfilt")
    out = []
    for lo, _, hi in bands:
        sos = scipy.signal.butter(order, [lo, hi], btype="bandpass", fs=fs, output="sos")
        out.append(sosfilt(xp.asarray(sos), x, axis=-1))
    return xp.stack(out)


# -- constant-Q -----------------------------------------------------------------------


def _cqt_kernels(fs, fmin, n_bins, bins_per_octave, window):
    return _cqt_kernels_cached(float(fs), float(fmin), int(n_bins), int(bins_per_octave),
                               repr(window))


@lru_cache(maxsize=8)
def _cqt_kernels_cached(fs, fmin, n_bins, bins_per_octave, window_repr):
    """The kernels of one parameter set (read-only; a view computes chunk after chunk)."""
    import ast

    import scipy.signal
    window = ast.literal_eval(window_repr)
    q = 1.0 / (2.0 ** (1.0 / bins_per_octave) - 1.0)
    out = []
    for k in range(n_bins):
        fk = fmin * 2.0 ** (k / bins_per_octave)
        nk = math.ceil(q * fs / fk)
        w = scipy.signal.get_window(spectral.parse_window(window), nk, fftbins=False)
        kern = w * np.exp(2j * np.pi * fk * np.arange(nk) / fs) / nk
        kern.flags.writeable = False
        out.append((fk, kern))
    return tuple(out)


@operator("cqt", family=FAMILY,
          summary="Constant-Q transform: (bin frequencies, C of shape (..., n_bins, n_frames))",
          params=[Param("fmin", float, 32.70, min=0.0, unit="Hz", help="lowest bin"),
                  Param("n_bins", int, 48, min=1), Param("bins_per_octave", int, 12, min=1),
                  HOP, WINDOW],
          reference="C[k, m] = sum_j x[m*hop - N_k//2 + j] conj(kernel_k[j]) (direct sum)",
          history=None)
def cqt(x, *, fmin, n_bins, bins_per_octave, hop, window, fs, xp):
    """Kernel k: window of N_k = ceil(Q fs / f_k) samples times exp(2j pi f_k n / fs) / N_k,
    centred on frame times m*hop (zero outside the signal)."""
    x = as_float(x, xp)
    n = x.shape[-1]
    if n < 1:
        raise operator_error(InputError, "cqt", "the signal is empty")
    top = fmin * 2.0 ** ((n_bins - 1) / bins_per_octave)
    if top >= fs / 2:
        raise operator_error(InputError, "cqt", f"the top bin ({top:.1f} Hz) must be below fs/2={fs / 2} Hz; "
                         "lower n_bins or fmin")
    if fmin <= 0:
        raise operator_error(InputError, "cqt", f"fmin={fmin} must be > 0")
    n_frames = (n - 1) // hop + 1
    conv = scipy_fn(xp, "signal.fftconvolve")
    ctype = np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128
    kernels = _cqt_kernels(fs, fmin, n_bins, bins_per_octave, window)
    out = xp.zeros(x.shape[:-1] + (n_bins, n_frames), dtype=ctype)
    direct = []  # few frames (a view's hop): the sums only where frames are
    for k, (fk, kern) in enumerate(kernels):
        nk = kern.size
        if n_frames * nk <= 8 * (n + nk) * math.log2(n + nk + 1):
            direct.append(k)
            continue
        g = xp.asarray(np.conj(kern)[::-1].astype(ctype))
        full = conv(x, g.reshape((1,) * (x.ndim - 1) + (nk,)), mode="full", axes=-1)
        idx = xp.arange(n_frames) * hop - nk // 2 + nk - 1
        out[..., k, :] = full[..., idx]
    if direct:
        out[..., direct, :] = sums_at(
            x, [(-(kernels[k][1].size // 2), np.conj(kernels[k][1]).astype(ctype))
                for k in direct], hop, n_frames, xp)
    return xp.asarray(np.array([fk for fk, _ in kernels])), out


# -- checks and misc ------------------------------------------------------------------


@operator("check_cola", family=FAMILY, summary="Whether a window/overlap is COLA",
          params=[WINDOW, Param("nperseg", int, REQUIRED, min=1),
                  Param("noverlap", int, REQUIRED, min=0), Param("tol", float, 1e-10, min=0.0)],
          reference="scipy.signal.check_COLA", takes_input=False)
def check_cola(*, window, nperseg, noverlap, tol):
    import scipy.signal
    return bool(scipy.signal.check_COLA(spectral.parse_window(window), nperseg, noverlap, tol))


@operator("check_nola", family=FAMILY, summary="Whether a window/overlap is NOLA (invertible)",
          params=[WINDOW, Param("nperseg", int, REQUIRED, min=1),
                  Param("noverlap", int, REQUIRED, min=0), Param("tol", float, 1e-10, min=0.0)],
          reference="scipy.signal.check_NOLA", takes_input=False)
def check_nola(*, window, nperseg, noverlap, tol):
    import scipy.signal
    return bool(scipy.signal.check_NOLA(spectral.parse_window(window), nperseg, noverlap, tol))


@operator("vectorstrength", family=FAMILY, summary="Vector strength of event times for a period",
          params=[Param("period", "array", REQUIRED, min=0.0, unit="s")],
          reference="scipy.signal.vectorstrength", history=None)
def vectorstrength(x, *, period, xp):
    return scipy_fn(xp, "signal.vectorstrength")(x, period)
