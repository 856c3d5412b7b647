"""Basic element-wise, reduction and reshaping operators, written once against ``xp``."""

from __future__ import annotations

import numpy as np
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators.registry import REQUIRED, Param, operator

from ._common import AXIS
from .helpers import frames

FAMILY = "basic"


@operator("gain", family=FAMILY, summary="Multiply by a constant",
          params=[Param("factor", float, 1.0, min=0.0, help="linear gain")],
          reference="numpy.multiply", streamable=True)
def gain(x, *, factor, xp):
    return x * x.real.dtype.type(factor) if x.dtype.kind in "fc" else x * factor


@operator("gain_db", family=FAMILY, summary="Multiply by a gain given in decibels",
          params=[Param("db", float, 0.0, min=-400.0, max=400.0, unit="dB",
                        help="amplitude gain, 20 log10")],
          reference="numpy.multiply(x, 10**(db/20))", streamable=True)
def gain_db(x, *, db, xp):
    f = 10.0 ** (db / 20.0)
    return x * x.real.dtype.type(f) if x.dtype.kind in "fc" else x * f


@operator("offset", family=FAMILY, summary="Add a constant",
          params=[Param("value", float, 0.0, help="added to every sample")],
          reference="numpy.add", streamable=True)
def offset(x, *, value, xp):
    return x + x.real.dtype.type(value) if x.dtype.kind in "fc" else x + value


def _unary(name: str, summary: str, ref: str, fn, nan_policy: str = "propagate") -> None:
    def impl(x, *, xp):
        return fn(x, xp)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=ref, streamable=True,
             nan_policy=nan_policy)(impl)


_unary("abs", "Absolute value (magnitude of complex samples)", "numpy.abs",
       lambda x, xp: xp.abs(x))
_unary("real", "Real part", "numpy.real", lambda x, xp: xp.real(x))
_unary("imag", "Imaginary part (zeros for real input)", "numpy.imag",
       lambda x, xp: xp.imag(x) if x.dtype.kind == "c" else xp.zeros_like(x))
_unary("conj", "Complex conjugate", "numpy.conj", lambda x, xp: xp.conj(x))
_unary("magnitude_squared", "Power |x|^2", "numpy.abs(x)**2",
       lambda x, xp: (x.real * x.real + x.imag * x.imag) if x.dtype.kind == "c" else x * x)
_unary("sqrt", "Square root (complex for complex input)", "numpy.sqrt", lambda x, xp: xp.sqrt(x))
_unary("exp", "Exponential", "numpy.exp", lambda x, xp: xp.exp(x))
_unary("log", "Natural logarithm", "numpy.log", lambda x, xp: xp.log(x))
_unary("log10", "Base-10 logarithm", "numpy.log10", lambda x, xp: xp.log10(x))
_unary("sign", "Sign of each sample", "numpy.sign", lambda x, xp: xp.sign(x))
_unary("negate", "Negate", "numpy.negative", lambda x, xp: -x)
_unary("am_demod", "AM demodulation: envelope |x| of an IQ signal", "numpy.abs",
       lambda x, xp: xp.abs(x))


@operator("angle", family=FAMILY, summary="Phase angle of complex samples",
          params=[Param("deg", bool, False, help="degrees instead of radians")],
          reference="numpy.angle", streamable=True)
def angle(x, *, deg, xp):
    return xp.angle(x, deg=deg)


@operator("unwrap", family=FAMILY, summary="Unwrap phase jumps larger than discont",
          params=[Param("discont", float, None, min=0.0, help="jump to unwrap (default pi)"),
                  AXIS, Param("period", float, 2 * np.pi, min=0.0, help="range of the phase")],
          reference="numpy.unwrap", history=1)
def unwrap(x, *, discont, axis, period, xp):
    return xp.unwrap(x, discont=discont, axis=axis, period=period)


@operator("to_db", family=FAMILY, summary="Decibels: 10 log10 of power or 20 log10 of amplitude",
          params=[Param("power", bool, True, help="power (10 log10) or amplitude (20 log10)"),
                  Param("ref", float, 1.0, min=0.0, help="value of 0 dB"),
                  Param("floor", float, 1e-20, min=0.0, help="smallest power considered")],
          reference="10*numpy.log10(max(x, floor)/ref)", streamable=True)
def to_db(x, *, power, ref, floor, xp):
    ftype = x.real.dtype if x.dtype.kind in "fc" else xp.float64
    v = xp.abs(x) if x.dtype.kind == "c" else x
    if power:
        return (10.0 * xp.log10(xp.maximum(v, floor) / ref)).astype(ftype, copy=False)
    return (20.0 * xp.log10(xp.maximum(v, np.sqrt(floor)) / ref)).astype(ftype, copy=False)


@operator("db_to_power", family=FAMILY, summary="Power from decibels: ref * 10**(x/10)",
          params=[Param("ref", float, 1.0, min=0.0, help="value of 0 dB")],
          reference="ref * 10**(x/10)", streamable=True)
def db_to_power(x, *, ref, xp):
    return ref * 10.0 ** (x / 10.0)


@operator("db_to_amplitude", family=FAMILY, summary="Amplitude from decibels: ref * 10**(x/20)",
          params=[Param("ref", float, 1.0, min=0.0, help="value of 0 dB")],
          reference="ref * 10**(x/20)", streamable=True)
def db_to_amplitude(x, *, ref, xp):
    return ref * 10.0 ** (x / 20.0)


@operator("clip", family=FAMILY, summary="Limit values to [lo, hi]",
          params=[Param("lo", float, None, help="lower limit (none when omitted)"),
                  Param("hi", float, None, help="upper limit (none when omitted)")],
          reference="numpy.clip", streamable=True)
def clip(x, *, lo, hi, xp):
    if lo is None and hi is None:
        return x.copy()
    if lo is not None and hi is not None and lo > hi:
        raise operator_error(InputError, "clip", f"lo={lo} must be <= hi={hi}")
    return xp.clip(x, lo, hi)


@operator("normalize_peak", family=FAMILY, summary="Scale so the largest |x| equals peak",
          params=[Param("peak", float, 1.0, min=0.0, help="target peak magnitude"), AXIS],
          reference="x * peak / max(abs(x))", history=None)
def normalize_peak(x, *, peak, axis, xp):
    if x.size == 0:
        return x.astype(x.dtype if x.dtype.kind in "fc" else xp.float64)
    m = xp.max(xp.abs(x), axis=axis, keepdims=True)
    m = xp.where(m == 0, 1, m)
    return x * (peak / m).astype(x.real.dtype if x.dtype.kind in "fc" else xp.float64)


@operator("normalize_rms", family=FAMILY, summary="Scale so the RMS equals rms",
          params=[Param("rms", float, 1.0, min=0.0, help="target RMS"), AXIS],
          reference="x * rms / sqrt(mean(abs(x)**2))", history=None)
def normalize_rms(x, *, rms, axis, xp):
    if x.size == 0:
        return x.astype(x.dtype if x.dtype.kind in "fc" else xp.float64)
    r = xp.sqrt(xp.mean(xp.abs(x) ** 2, axis=axis, keepdims=True))
    r = xp.where(r == 0, 1, r)
    return x * (rms / r).astype(x.real.dtype if x.dtype.kind in "fc" else xp.float64)


@operator("remove_dc", family=FAMILY, summary="Subtract the mean", params=[AXIS],
          reference="x - mean(x)", history=None)
def remove_dc(x, *, axis, xp):
    if x.shape[axis] == 0:
        return x.copy()
    return x - xp.mean(x, axis=axis, keepdims=True).astype(x.dtype)


@operator("cumsum", family=FAMILY, summary="Cumulative sum", params=[AXIS],
          reference="numpy.cumsum", streamable=True)
def cumsum(x, *, axis, xp):
    return xp.cumsum(x, axis=axis)


@operator("diff", family=FAMILY, summary="n-th discrete difference",
          params=[Param("n", int, 1, min=0, help="times to differentiate"), AXIS],
          reference="numpy.diff", history=lambda p: p["n"])
def diff(x, *, n, axis, xp):
    return xp.diff(x, n=n, axis=axis)


@operator("gradient", family=FAMILY, summary="Central-difference gradient (fs sets the spacing)",
          params=[AXIS, Param("edge_order", int, 1, choices=(1, 2), help="edge accuracy")],
          reference="numpy.gradient(x, 1/fs)", history=2)
def gradient(x, *, axis, edge_order, fs, xp):
    return xp.gradient(x, 1.0 / fs, axis=axis, edge_order=edge_order)


@operator("reverse", family=FAMILY, summary="Reverse along an axis", params=[AXIS],
          reference="numpy.flip", history=None)
def reverse(x, *, axis, xp):
    return xp.flip(x, axis=axis)


@operator("roll", family=FAMILY, summary="Circular shift",
          params=[Param("shift", int, 0, help="samples to shift by"), AXIS],
          reference="numpy.roll", history=None)
def roll(x, *, shift, axis, xp):
    return xp.roll(x, shift, axis=axis)


@operator("pad", family=FAMILY, summary="Pad the last axis",
          params=[Param("before", int, 0, min=0, unit="samples"),
                  Param("after", int, 0, min=0, unit="samples"),
                  Param("mode", str, "constant",
                        choices=("constant", "edge", "reflect", "symmetric", "wrap")),
                  Param("value", float, 0.0, help="fill value for mode='constant'")],
          reference="numpy.pad", history=None)
def pad(x, *, before, after, mode, value, xp):
    widths = [(0, 0)] * (x.ndim - 1) + [(before, after)]
    if mode == "constant":
        return xp.pad(x, widths, mode=mode, constant_values=value)
    return xp.pad(x, widths, mode=mode)


@operator("zero_pad", family=FAMILY, summary="Zero-pad (or truncate) the last axis to n samples",
          params=[Param("n", int, None, min=0, unit="samples",
                        help="output length (default: next power of two)")],
          reference="numpy.pad / slicing", history=None)
def zero_pad(x, *, n, xp):
    m = x.shape[-1]
    if n is None:
        n = 1 if m <= 1 else 1 << (m - 1).bit_length()
    if n <= m:
        return x[..., :n].copy()
    return xp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - m)])


@operator("astype", family=FAMILY, summary="Convert the sample type",
          params=[Param("dtype", str, "float32",
                        choices=("float32", "float64", "complex64", "complex128",
                                 "int16", "int32"))],
          reference="numpy.ndarray.astype", streamable=True)
def astype(x, *, dtype, xp):
    if np.dtype(dtype).kind in "fi" and x.dtype.kind == "c":
        raise operator_error(InputError, "astype", f"dtype={dtype!r} would drop the imaginary part; "
                         "take 'real' or 'abs' first")
    return x.astype(dtype)


@operator("quantize", family=FAMILY, summary="Round to a uniform grid of 2**bits levels in [-1, 1)",
          params=[Param("bits", int, 16, min=1, max=32, help="bits per sample")],
          reference="round(x * 2**(bits-1)) / 2**(bits-1), clipped", streamable=True)
def quantize(x, *, bits, xp):
    q = float(2 ** (bits - 1))
    return xp.clip(xp.round(x * q), -q, q - 1) / q


def _reduction(name: str, summary: str, ref: str, fn, extra=()) -> None:
    def impl(x, *, axis, xp, **kw):
        return fn(x, axis, xp, **kw)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=ref, history=None,
             params=[AXIS, *extra])(impl)


_reduction("sum", "Sum along an axis", "numpy.sum", lambda x, a, xp: xp.sum(x, axis=a))
_reduction("mean", "Mean along an axis", "numpy.mean", lambda x, a, xp: xp.mean(x, axis=a))
_reduction("var", "Variance along an axis", "numpy.var",
           lambda x, a, xp, ddof: xp.var(x, axis=a, ddof=ddof),
           [Param("ddof", int, 0, min=0, help="delta degrees of freedom")])
_reduction("std", "Standard deviation along an axis", "numpy.std",
           lambda x, a, xp, ddof: xp.std(x, axis=a, ddof=ddof),
           [Param("ddof", int, 0, min=0, help="delta degrees of freedom")])
_reduction("min", "Minimum along an axis", "numpy.min", lambda x, a, xp: xp.min(x, axis=a))
_reduction("max", "Maximum along an axis", "numpy.max", lambda x, a, xp: xp.max(x, axis=a))
_reduction("ptp", "Peak-to-peak range along an axis", "numpy.ptp",
           lambda x, a, xp: xp.max(x, axis=a) - xp.min(x, axis=a))
_reduction("median", "Median along an axis", "numpy.median",
           lambda x, a, xp: xp.median(x, axis=a))
_reduction("percentile", "q-th percentile along an axis", "numpy.percentile",
           lambda x, a, xp, q: xp.percentile(x, q, axis=a),
           [Param("q", float, 50.0, min=0.0, max=100.0, unit="%")])
_reduction("rms_total", "Root mean square of the whole axis", "sqrt(mean(abs(x)**2))",
           lambda x, a, xp: xp.sqrt(xp.mean(xp.abs(x) ** 2, axis=a)))
_reduction("energy", "Sum of |x|^2 along an axis", "sum(abs(x)**2)",
           lambda x, a, xp: xp.sum(xp.abs(x) ** 2, axis=a))
_reduction("crest_factor", "Peak over RMS along an axis", "max(abs(x))/sqrt(mean(abs(x)**2))",
           lambda x, a, xp: xp.max(xp.abs(x), axis=a)
           / xp.sqrt(xp.mean(xp.abs(x) ** 2, axis=a)))


@operator("mean_channels", family=FAMILY, summary="Average the channels (first axis) into one",
          reference="numpy.mean(x, axis=0)", streamable=True)
def mean_channels(x, *, xp):
    return xp.mean(x, axis=0)


@operator("frame", family=FAMILY, summary="Split the last axis into overlapping frames",
          params=[Param("frame_length", int, 256, min=1, unit="samples"),
                  Param("hop", int, 128, min=1, unit="samples")],
          reference="numpy.lib.stride_tricks.sliding_window_view(x, L)[..., ::hop, :]",
          history=lambda p: p["frame_length"] - 1)
def frame(x, *, frame_length, hop, xp):
    return frames(x, frame_length, hop, xp)


@operator("overlap_add", family=FAMILY, summary="Sum frames (..., n_frames, L) spaced by hop",
          params=[Param("hop", int, 128, min=1, unit="samples")],
          reference="explicit overlap-add loop", history=None)
def overlap_add(x, *, hop, xp):
    if x.ndim < 2:
        raise operator_error(InputError, "overlap_add", f"input must have shape (..., n_frames, frame_length), "
                         f"got {x.shape}")
    n_frames, length = x.shape[-2], x.shape[-1]
    n = 0 if n_frames == 0 else (n_frames - 1) * hop + length
    out = xp.zeros(x.shape[:-2] + (n,), dtype=x.dtype)
    # one strided add per frame offset class keeps it vectorised on the GPU
    for k in range(n_frames):
        out[..., k * hop:k * hop + length] += x[..., k, :]
    return out


@operator("downsample", family=FAMILY, summary="Keep every q-th sample (no anti-alias filter)",
          params=[Param("q", int, 2, min=1), Param("phase", int, 0, min=0), AXIS],
          reference="x[..., phase::q]", history=None)
def downsample(x, *, q, phase, axis, xp):
    if phase >= q:
        raise operator_error(InputError, "downsample", f"phase={phase} must be in [0, {q - 1}]")
    sl = [slice(None)] * x.ndim
    sl[axis] = slice(phase, None, q)
    return x[tuple(sl)].copy()


@operator("upsample", family=FAMILY, summary="Insert L-1 zeros between samples (no filter)",
          params=[Param("factor", int, 2, min=1)],
          reference="zeros with y[..., ::L] = x", history=None)
def upsample(x, *, factor, xp):
    out = xp.zeros(x.shape[:-1] + (x.shape[-1] * factor,), dtype=x.dtype)
    out[..., ::factor] = x
    return out


@operator("frequency_shift", family=FAMILY,
          summary="Shift the spectrum by shift Hz: x * exp(2j pi shift t)",
          params=[Param("shift", float, 0.0, unit="Hz")],
          reference="x * exp(2j*pi*shift*arange(n)/fs)", history=None)
def frequency_shift(x, *, shift, fs, xp):
    n = x.shape[-1]
    ctype = xp.complex64 if x.dtype in (np.float32, np.complex64) else xp.complex128
    t = xp.arange(n, dtype=xp.float64) / fs
    return (x * xp.exp(2j * np.pi * shift * t)).astype(ctype)


@operator("fm_demod", family=FAMILY,
          summary="FM demodulation: instantaneous frequency in Hz of an IQ signal",
          reference="angle(x[1:] * conj(x[:-1])) * fs / (2 pi)", history=1)
def fm_demod(x, *, fs, xp):
    d = x[..., 1:] * xp.conj(x[..., :-1])
    return xp.angle(d) * (fs / (2 * np.pi))


@operator("iq_to_complex", family=FAMILY,
          summary="Interleaved or paired I/Q (last axis of 2) to complex samples",
          reference="x[..., 0] + 1j*x[..., 1]", streamable=True)
def iq_to_complex(x, *, xp):
    if x.ndim < 1 or x.shape[-1] != 2:
        raise operator_error(InputError, "iq_to_complex", f"input must have a last axis of 2 (I, Q), "
                         f"got shape {x.shape}")
    ctype = xp.complex64 if x.dtype == np.float32 else xp.complex128
    return (x[..., 0] + 1j * x[..., 1]).astype(ctype)


@operator("complex_to_iq", family=FAMILY, summary="Complex samples to a last axis of 2 (I, Q)",
          reference="stack([x.real, x.imag], -1)", streamable=True)
def complex_to_iq(x, *, xp):
    return xp.stack([xp.real(x), xp.imag(x) if x.dtype.kind == "c" else xp.zeros_like(x)],
                    axis=-1)


@operator("apply_window", family=FAMILY, summary="Multiply the last axis by a window",
          params=[Param("window", "window", "hann"),
                  Param("sym", bool, True, help="symmetric (filter) or periodic (DFT) window")],
          reference="x * scipy.signal.get_window(window, n, fftbins=not sym)", history=None)
def apply_window(x, *, window, sym, xp):
    import scipy.signal
    from specscope.compute.spectral import parse_window
    w = scipy.signal.get_window(parse_window(window), x.shape[-1], fftbins=not sym)
    return x * xp.asarray(w.astype(x.real.dtype if x.dtype.kind in "fc" else np.float64))


@operator("polyval", family=FAMILY, summary="Evaluate a polynomial at every sample",
          params=[Param("coefficients", "array", REQUIRED, help="highest power first")],
          reference="numpy.polyval", streamable=True)
def polyval(x, *, coefficients, xp):
    out = xp.zeros_like(x, dtype=xp.result_type(x.dtype, coefficients.dtype))
    for c in coefficients.ravel():
        out = out * x + c
    return out
