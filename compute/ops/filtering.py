"""Filtering, convolution and resampling: scipy.signal names; cupyx.scipy.signal on the GPU."""

from __future__ import annotations

import math

import numpy as np
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators.registry import REQUIRED, Param, operator

from ..backend import scipy_fn
from ..params import check_bytes, check_frame
from ._common import AXES, AXIS, axes_tuple, on_host
from .helpers import as_float

FAMILY = "filtering"

SOS = Param("sos", "array", REQUIRED, help="second-order sections, shape (n_sections, 6)")
B = Param("b", "array", REQUIRED, help="numerator coefficients")
A = Param("a", "array", 1.0, help="denominator coefficients")
ZI = Param("zi", "array", None, help="initial filter state; when given, returns (y, zf)")
PADTYPE = Param("padtype", str, "odd", choices=("odd", "even", "constant"),
                help="edge extension (None: pass padlen=0)")
PADLEN = Param("padlen", int, None, min=0, unit="samples")
# scipy's names: a pipeline written against scipy.signal reads the same here
IN2 = Param("in2", "array", REQUIRED, help="second operand (a kernel, or the signal to "
           "correlate with)")
MODE = Param("mode", str, "full", choices=("full", "valid", "same"))
METHOD = Param("method", str, "auto", choices=("auto", "direct", "fft"))


@operator("sosfilt", family=FAMILY, summary="IIR filter in second-order sections",
          params=[SOS, AXIS, ZI], reference="scipy.signal.sosfilt", streamable=True,
          history=0)
def sosfilt(x, *, sos, axis, zi, xp):
    """Streams with carried state: pass ``zi`` (scipy's layout, from ``sosfilt_zi``) and
    feed ``zf`` back.  cupyx keeps its state in another layout, so with ``zi`` the CuPy
    path runs scipy on the host to keep states interchangeable."""
    return scipy_fn(xp, "signal.sosfilt")(sos, as_float(x, xp), axis=axis, zi=zi)


@sosfilt.implementation("cupy")
def _sosfilt_cupy(x, *, sos, axis, zi, xp):
    import scipy.signal as ss
    if zi is not None:
        from specscope.compute.backend import to_device, to_host
        return to_device(ss.sosfilt(to_host(sos), to_host(x), axis=axis, zi=to_host(zi)),
                         "cupy")
    return scipy_fn(xp, "signal.sosfilt")(sos, as_float(x, xp), axis=axis)


@operator("sosfiltfilt", family=FAMILY, summary="Zero-phase forward-backward SOS filter",
          params=[SOS, AXIS, PADTYPE, PADLEN], reference="scipy.signal.sosfiltfilt",
          history=None)
def sosfiltfilt(x, *, sos, axis, padtype, padlen, xp):
    return scipy_fn(xp, "signal.sosfiltfilt")(sos, as_float(x, xp), axis=axis, padtype=padtype,
                                              padlen=padlen)


@operator("lfilter", family=FAMILY, summary="IIR/FIR filter by numerator and denominator",
          params=[B, A, AXIS, ZI], reference="scipy.signal.lfilter", streamable=True,
          history=0)
def lfilter(x, *, b, a, axis, zi, xp):
    """With ``zi`` returns ``(y, zf)`` in scipy's layout (host path on CuPy, as sosfilt)."""
    return scipy_fn(xp, "signal.lfilter")(b, a, as_float(x, xp), axis=axis, zi=zi)


@lfilter.implementation("cupy")
def _lfilter_cupy(x, *, b, a, axis, zi, xp):
    import scipy.signal as ss
    if zi is not None:
        from specscope.compute.backend import to_device, to_host
        return to_device(ss.lfilter(to_host(b), to_host(a), to_host(x), axis=axis,
                                    zi=to_host(zi)), "cupy")
    return scipy_fn(xp, "signal.lfilter")(b, a, as_float(x, xp), axis=axis)


@operator("filtfilt", family=FAMILY, summary="Zero-phase forward-backward (b, a) filter",
          params=[B, A, AXIS, PADTYPE, PADLEN,
                  Param("method", str, "pad", choices=("pad", "gust")),
                  Param("irlen", int, None, min=1, unit="samples",
                        help="impulse-response length the 'gust' method assumes")],
          reference="scipy.signal.filtfilt", history=None)
def filtfilt(x, *, b, a, axis, padtype, padlen, method, irlen, xp):
    kw = {} if irlen is None else {"irlen": irlen}
    return scipy_fn(xp, "signal.filtfilt")(b, a, as_float(x, xp), axis=axis, padtype=padtype,
                                           padlen=padlen, method=method, **kw)


@operator("lfilter_zi", family=FAMILY, summary="Steady-state initial state of lfilter (input: b)",
          params=[Param("a", "array", REQUIRED)], reference="scipy.signal.lfilter_zi",
          history=None)
def lfilter_zi(x, *, a):
    import scipy.signal as ss
    return ss.lfilter_zi(x, a)


@operator("sosfilt_zi", family=FAMILY, summary="Steady-state initial state of sosfilt (input: sos)",
          reference="scipy.signal.sosfilt_zi", history=None)
def sosfilt_zi(x):
    import scipy.signal as ss
    return ss.sosfilt_zi(x)


@operator("lfiltic", family=FAMILY, summary="lfilter state from past inputs and outputs (input: b)",
          params=[Param("a", "array", REQUIRED), Param("y", "array", REQUIRED, help="past outputs"),
                  Param("x", "array", None, help="past inputs (scipy's name)"),
                  Param("past_x", "array", None, help="past inputs (the same as x)")],
          reference="scipy.signal.lfiltic", history=None)
def lfiltic(b, /, *, a, y, x, past_x):
    import scipy.signal as ss
    if x is not None and past_x is not None:
        raise operator_error(InputError, "lfiltic", "give the past inputs once, as x or as past_x")
    return ss.lfiltic(b, a, y, past_x if x is None else x)


def _conv_history(p):
    k = p.get("in2")
    return None if k is None else int(np.asarray(k).shape[-1]) - 1 if np.ndim(k) else 0


@operator("convolve", family=FAMILY, summary="Convolution with a kernel",
          params=[IN2, MODE, METHOD], reference="scipy.signal.convolve", history=_conv_history)
def convolve(x, *, in2, mode, method, xp):
    return scipy_fn(xp, "signal.convolve")(x, in2, mode=mode, method=method)


@convolve.implementation("numpy", "fft")
def _convolve_fft(x, *, in2, mode, method, xp):
    if x.ndim != in2.ndim or x.size == 0 or in2.size == 0:
        return scipy_fn(xp, "signal.convolve")(x, in2, mode=mode, method="direct")
    return scipy_fn(xp, "signal.fftconvolve")(x, in2, mode=mode)


@operator("fftconvolve", family=FAMILY, summary="Convolution by FFT",
          params=[IN2, MODE, AXES], reference="scipy.signal.fftconvolve",
          history=_conv_history)
def fftconvolve(x, *, in2, mode, axes, xp):
    return scipy_fn(xp, "signal.fftconvolve")(x, in2, mode=mode, axes=axes_tuple(axes, True))


@operator("oaconvolve", family=FAMILY, summary="Convolution by overlap-add",
          params=[IN2, MODE, AXES], reference="scipy.signal.oaconvolve",
          history=_conv_history)
def oaconvolve(x, *, in2, mode, axes, xp):
    return scipy_fn(xp, "signal.oaconvolve")(x, in2, mode=mode, axes=axes_tuple(axes, True))


@operator("correlate", family=FAMILY, summary="Cross-correlation with a second signal",
          params=[IN2, MODE, METHOD], reference="scipy.signal.correlate", history=None)
def correlate(x, *, in2, mode, method, xp):
    return scipy_fn(xp, "signal.correlate")(x, in2, mode=mode, method=method)


@operator("correlation_lags", family=FAMILY, summary="Lag of each output of correlate",
          params=[Param("in1_len", int, REQUIRED, min=1), Param("in2_len", int, REQUIRED, min=1),
                  MODE], reference="scipy.signal.correlation_lags", takes_input=False)
def correlation_lags(*, in1_len, in2_len, mode):
    import scipy.signal as ss
    return ss.correlation_lags(in1_len, in2_len, mode=mode)


_BOUNDARY = Param("boundary", str, "fill", choices=("fill", "wrap", "symm"))
_FILL = Param("fillvalue", float, 0.0)


@operator("convolve2d", family=FAMILY, summary="2-D convolution",
          params=[IN2, MODE, _BOUNDARY, _FILL], reference="scipy.signal.convolve2d",
          history=None)
def convolve2d(x, *, in2, mode, boundary, fillvalue, xp):
    return scipy_fn(xp, "signal.convolve2d")(x, in2, mode=mode, boundary=boundary,
                                             fillvalue=fillvalue)


@operator("correlate2d", family=FAMILY, summary="2-D cross-correlation",
          params=[IN2, MODE, _BOUNDARY, _FILL], reference="scipy.signal.correlate2d",
          history=None)
def correlate2d(x, *, in2, mode, boundary, fillvalue, xp):
    return scipy_fn(xp, "signal.correlate2d")(x, in2, mode=mode, boundary=boundary,
                                              fillvalue=fillvalue)


@operator("upfirdn", family=FAMILY, summary="Upsample, FIR filter, downsample",
          params=[Param("h", "array", REQUIRED, help="FIR coefficients"),
                  Param("up", int, 1, min=1), Param("down", int, 1, min=1), AXIS,
                  Param("mode", str, "constant",
                        choices=("constant", "symmetric", "reflect", "edge", "wrap", "smooth",
                                 "antisymmetric", "antireflect", "line")),
                  Param("cval", float, 0.0)],
          reference="scipy.signal.upfirdn", history=None)
def upfirdn(x, *, h, up, down, axis, mode, cval, xp):
    check_bytes(x.size / max(x.shape[axis], 1) * (x.shape[axis] * up + len(h)) / down * 16,
                f"upfirdn(up={up}, down={down}) output")
    return scipy_fn(xp, "signal.upfirdn")(h, x, up=up, down=down, axis=axis, mode=mode,
                                          cval=cval)


@operator("resample", family=FAMILY, summary="Resample to num samples by the Fourier method",
          params=[Param("num", int, REQUIRED, min=1, unit="samples"),
                  Param("t", "array", None, help="sample times; when given returns (y, t_new)"),
                  AXIS, Param("window", "window", None),
                  Param("domain", str, "time", choices=("time", "freq"),
                        help="'freq' when the input is already a spectrum")],
          reference="scipy.signal.resample", history=None)
def resample(x, *, num, t, axis, window, domain, xp):
    """``window`` may also be an array or a callable, as in scipy."""
    from specscope.compute.spectral import parse_window
    w = None if window is None else parse_window(window)
    check_bytes(x.size / max(x.shape[axis], 1) * num * 16, f"resample(num={num}) output")
    kw = {} if t is None else {"t": t}
    return scipy_fn(xp, "signal.resample")(x, num, axis=axis, window=w, domain=domain, **kw)


@operator("resample_poly", family=FAMILY, summary="Resample by up/down with a polyphase filter",
          params=[Param("up", int, REQUIRED, min=1), Param("down", int, REQUIRED, min=1), AXIS,
                  Param("window", "window", ("kaiser", 5.0)),
                  Param("padtype", str, "constant",
                        choices=("constant", "line", "mean", "median", "maximum", "minimum",
                                 "wrap", "edge", "smooth", "symmetric", "reflect",
                                 "antisymmetric", "antireflect")),
                  Param("cval", float, None, help="padding value of padtype 'constant'")],
          reference="scipy.signal.resample_poly", history=None)
def resample_poly(x, *, up, down, axis, window, padtype, cval, xp):
    """``window`` may also be an array of filter taps, as in scipy."""
    from specscope.compute.spectral import parse_window
    g = math.gcd(up, down)
    # scipy's default filter has 20 * max(up, down) / gcd + 1 taps
    check_frame(20 * max(up, down) // g + 1, "resample_poly filter taps")
    check_bytes(x.size * (up / down) * 16, f"resample_poly(up={up}, down={down}) output")
    return scipy_fn(xp, "signal.resample_poly")(x, up, down, axis=axis,
                                                window=parse_window(window), padtype=padtype,
                                                cval=cval)


@operator("decimate", family=FAMILY, summary="Low-pass filter and downsample by q",
          params=[Param("q", int, REQUIRED, min=1), Param("n", int, None, min=1),
                  Param("ftype", str, "iir", choices=("iir", "fir")), AXIS,
                  Param("zero_phase", bool, True)],
          reference="scipy.signal.decimate", history=None)
def decimate(x, *, q, n, ftype, axis, zero_phase, xp):
    return scipy_fn(xp, "signal.decimate")(as_float(x, xp), q, n=n, ftype=ftype, axis=axis,
                                           zero_phase=zero_phase)


@operator("savgol_filter", family=FAMILY, summary="Savitzky-Golay smoothing/differentiation",
          params=[Param("window_length", int, REQUIRED, min=1),
                  Param("polyorder", int, REQUIRED, min=0), Param("deriv", int, 0, min=0),
                  Param("delta", float, 1.0, min=0.0), AXIS,
                  Param("mode", str, "interp",
                        choices=("mirror", "constant", "nearest", "wrap", "interp")),
                  Param("cval", float, 0.0)],
          reference="scipy.signal.savgol_filter", history=lambda p: p["window_length"] // 2,
          nan_policy="reject")
def savgol_filter(x, *, window_length, polyorder, deriv, delta, axis, mode, cval, xp):
    return scipy_fn(xp, "signal.savgol_filter")(as_float(x, xp), window_length, polyorder,
                                                deriv=deriv, delta=delta, axis=axis, mode=mode,
                                                cval=cval)


@operator("medfilt", family=FAMILY, summary="Median filter (odd kernel size)",
          params=[Param("kernel_size", int, 3, min=1)], reference="scipy.signal.medfilt",
          history=lambda p: p["kernel_size"] // 2, nan_policy="reject")
def medfilt(x, *, kernel_size, xp):
    """``kernel_size`` may also be one odd size per axis, as in scipy."""
    if isinstance(kernel_size, int) and kernel_size % 2 == 0:
        raise operator_error(InputError, "medfilt", f"kernel_size={kernel_size} must be odd")
    return scipy_fn(xp, "signal.medfilt")(x, kernel_size)


@operator("medfilt2d", family=FAMILY, summary="2-D median filter (odd kernel size)",
          params=[Param("kernel_size", int, 3, min=1)], reference="scipy.signal.medfilt2d",
          history=None, nan_policy="reject")
def medfilt2d(x, *, kernel_size, xp):
    """``kernel_size`` may also be one odd size per axis, as in scipy."""
    if isinstance(kernel_size, int) and kernel_size % 2 == 0:
        raise operator_error(InputError, "medfilt2d", f"kernel_size={kernel_size} must be odd")
    return scipy_fn(xp, "signal.medfilt2d")(x, kernel_size)


@operator("order_filter", family=FAMILY, summary="Rank-order filter over a length-n neighbourhood",
          params=[Param("size", int, 3, min=1, help="odd neighbourhood length"),
                  Param("rank", int, 0, min=0, help="0 is the minimum"),
                  Param("domain", "array", None,
                        help="neighbourhood mask, as scipy (replaces size when given)")],
          reference="scipy.signal.order_filter",
          history=lambda p: None if p.get("domain") is not None else p["size"] // 2,
          nan_policy="reject")
def order_filter(x, *, size, rank, domain, xp):
    if domain is not None:
        return scipy_fn(xp, "signal.order_filter")(x, domain, rank)
    if size % 2 == 0 or rank >= size:
        raise operator_error(InputError, "order_filter", f"size={size} must be odd and rank={rank} < size")
    domain = xp.ones((1,) * (x.ndim - 1) + (size,))
    return scipy_fn(xp, "signal.order_filter")(x, domain, rank)


@operator("wiener", family=FAMILY, summary="Wiener (local-statistics) denoising filter",
          params=[Param("mysize", int, 3, min=1), Param("noise", float, None, min=0.0)],
          reference="scipy.signal.wiener", history=lambda p: p["mysize"] // 2)
def wiener(x, *, mysize, noise, xp):
    return scipy_fn(xp, "signal.wiener")(as_float(x, xp), mysize=mysize, noise=noise)


@operator("detrend", family=FAMILY, summary="Remove a constant or linear trend",
          params=[AXIS, Param("type", str, "linear", choices=("linear", "constant")),
                  Param("bp", "array", 0, help="breakpoints of a piecewise-linear trend"),
                  Param("overwrite_data", bool, False)],
          reference="scipy.signal.detrend", history=None, nan_policy="reject")
def detrend(x, *, axis, type, bp, overwrite_data, xp):
    if np.ndim(bp) == 0 and not isinstance(bp, np.ndarray):
        bp = int(bp)
    elif isinstance(bp, np.ndarray) and bp.ndim == 0:
        bp = bp.item()
    return scipy_fn(xp, "signal.detrend")(x, axis=axis, type=type, bp=bp,
                                          overwrite_data=overwrite_data)


@operator("hilbert", family=FAMILY, summary="Analytic signal by the Hilbert transform",
          params=[Param("N", int, None, min=1), AXIS], reference="scipy.signal.hilbert",
          history=None)
def hilbert(x, *, N, axis, xp):
    return scipy_fn(xp, "signal.hilbert")(x, N=N, axis=axis)


@operator("hilbert2", family=FAMILY, summary="2-D analytic signal",
          params=[Param("N", "array", None, help="FFT size per axis (an int or two)"),
                  Param("axes", "array", (-2, -1), help="the two axes to transform")],
          reference="scipy.signal.hilbert2", history=None)
def hilbert2(x, *, N, axes, xp):
    if N is not None and np.ndim(N) == 0:
        N = int(N)
    elif N is not None:
        N = tuple(int(n) for n in np.asarray(N).tolist())
    ax = tuple(int(a) for a in np.asarray(axes).tolist()) if isinstance(
        axes, (np.ndarray, list, tuple)) else axes
    if ax == (-2, -1):
        return scipy_fn(xp, "signal.hilbert2")(x, N=N)
    return on_host(xp, "signal.hilbert2", x, N=N, axes=ax)


@operator("envelope", family=FAMILY, summary="Envelope of a signal (scipy.signal.envelope)",
          params=[Param("bp_in", "any", (1, None), help="pass band as (low, high) bin indices"),
                  Param("n_out", int, None, min=1), Param("squared", bool, False),
                  Param("residual", str, "lowpass", choices=("lowpass", "all")), AXIS],
          reference="scipy.signal.envelope", history=None)
def envelope(x, *, bp_in, n_out, squared, residual, axis):
    import scipy.signal as ss
    bp = bp_in.tolist() if isinstance(bp_in, np.ndarray) else bp_in
    bp = tuple(bp) if isinstance(bp, list) else bp  # a JSON list; scipy checks the rest
    return ss.envelope(x, bp, n_out=n_out, squared=squared, residual=residual, axis=axis)


@operator("deconvolve", family=FAMILY, summary="Polynomial division: (quotient, remainder)",
          params=[Param("divisor", "array", REQUIRED)], reference="scipy.signal.deconvolve",
          history=None)
def deconvolve(x, *, divisor):
    import scipy.signal as ss
    return ss.deconvolve(x, divisor)


@operator("moving_average", family=FAMILY, summary="Mean over a sliding length-n window (valid)",
          params=[Param("n", int, 8, min=1, unit="samples"), AXIS],
          reference="numpy.convolve(x, ones(n)/n, 'valid')", history=lambda p: p["n"] - 1)
def moving_average(x, *, n, axis, xp):
    x = xp.moveaxis(as_float(x, xp), axis, -1)
    if x.shape[-1] < n:
        raise operator_error(InputError, "moving_average", f"n={n} is longer than the signal "
                         f"({x.shape[-1]} samples)")
    c = xp.cumsum(x, axis=-1, dtype=xp.result_type(x.dtype, xp.float64))
    pad = xp.zeros(c.shape[:-1] + (1,), dtype=c.dtype)
    c = xp.concatenate([pad, c], axis=-1)
    out = (c[..., n:] - c[..., :-n]) / n
    return xp.moveaxis(out.astype(x.dtype), -1, axis)
