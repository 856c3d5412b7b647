"""Signal generators: scipy.signal waveforms of a time axis (input), and parameter-only sources."""

from __future__ import annotations

import numpy as np
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators.registry import REQUIRED, Param, operator
from specscope.compute.types import ChirpMethod, choices

from ..backend import scipy_fn
from ._common import DTYPE

FAMILY = "generators"
NSAMP = Param("n", int, REQUIRED, min=0, unit="samples", help="number of samples")
SEED = Param("seed", int, None, min=0, help="random seed (fresh entropy when omitted)")


@operator("chirp", family=FAMILY, summary="Frequency-swept cosine at times t (input, s)",
          params=[Param("f0", float, REQUIRED, unit="Hz"), Param("t1", float, REQUIRED, unit="s"),
                  Param("f1", float, REQUIRED, unit="Hz"),
                  Param("method", str, "linear", choices=choices(ChirpMethod)),
                  Param("phi", float, 0.0, unit="deg"), Param("vertex_zero", bool, True),
                  Param("complex", bool, False, help="complex exponential instead of cosine")],
          reference="scipy.signal.chirp", streamable=True)
def chirp(x, *, f0, t1, f1, method, phi, vertex_zero, complex, xp):
    if xp is np:
        return scipy_fn(np, "signal.chirp")(x, f0, t1, f1, method=method, phi=phi,
                                            vertex_zero=vertex_zero, complex=complex)
    # cupyx's chirp is real only: exp(1j*p) = cos(p) + 1j*cos(p - 90 deg)
    fn = scipy_fn(xp, "signal.chirp")
    re = fn(x, f0, t1, f1, method=method, phi=phi, vertex_zero=vertex_zero)
    if not complex:
        return re
    im = fn(x, f0, t1, f1, method=method, phi=phi - 90.0, vertex_zero=vertex_zero)
    return re + 1j * im


@operator("sweep_poly", family=FAMILY, summary="Cosine with polynomial frequency at times t",
          params=[Param("poly", "array", REQUIRED, help="frequency polynomial, highest first"),
                  Param("phi", float, 0.0, unit="deg")],
          reference="scipy.signal.sweep_poly", streamable=True)
def sweep_poly(x, *, poly, phi):
    return __import__("scipy.signal").signal.sweep_poly(x, np.asarray(poly), phi=phi)


@operator("gausspulse", family=FAMILY, summary="Gaussian-modulated sinusoid at times t",
          params=[Param("fc", float, 1000.0, min=0.0, unit="Hz"),
                  Param("bw", float, 0.5, min=0.0, help="fractional bandwidth"),
                  Param("bwr", float, -6.0, max=0.0, unit="dB"),
                  Param("tpr", float, -60.0, max=0.0, unit="dB")],
          reference="scipy.signal.gausspulse", streamable=True)
def gausspulse(x, *, fc, bw, bwr, tpr, xp):
    return scipy_fn(xp, "signal.gausspulse")(x, fc=fc, bw=bw, bwr=bwr, tpr=tpr)


@operator("square", family=FAMILY, summary="Square wave of phase t (input, period 2 pi)",
          params=[Param("duty", float, 0.5, min=0.0, max=1.0)],
          reference="scipy.signal.square", streamable=True)
def square(x, *, duty, xp):
    return scipy_fn(xp, "signal.square")(x, duty=duty)


@operator("sawtooth", family=FAMILY, summary="Sawtooth wave of phase t (input, period 2 pi)",
          params=[Param("width", float, 1.0, min=0.0, max=1.0)],
          reference="scipy.signal.sawtooth", streamable=True)
def sawtooth(x, *, width, xp):
    return scipy_fn(xp, "signal.sawtooth")(x, width=width)


@operator("unit_impulse", family=FAMILY, summary="Unit impulse (Kronecker delta)",
          params=[Param("n", int, None, min=0, unit="samples", help="number of samples"),
                  Param("idx", int, None, min=0, help="position (0); 'mid' or an index per "
                        "axis from Python, as scipy"),
                  Param("mid", bool, False, help="put it in the middle"), DTYPE,
                  Param("shape", "array", None, help="shape of the output (scipy's name; "
                        "instead of n)")],
          reference="scipy.signal.unit_impulse", takes_input=False)
def unit_impulse(*, n, idx, mid, dtype, shape, xp):
    if (n is None) == (shape is None):
        raise operator_error(InputError, "unit_impulse", "give the length as n or the shape as shape, once")
    if shape is not None or not (idx is None or isinstance(idx, int)):
        import scipy.signal
        size = n if shape is None else (int(shape) if np.ndim(shape) == 0
                                        else tuple(int(v) for v in np.asarray(shape).tolist()))
        pos = "mid" if mid and idx is None else idx
        return xp.asarray(scipy.signal.unit_impulse(size, pos, dtype=dtype))
    if n == 0:
        return xp.zeros(0, dtype=dtype)
    pos = n // 2 if mid else (0 if idx is None else idx)
    if pos >= n:
        raise operator_error(InputError, "unit_impulse", f"idx={pos} must be in [0, {n - 1}]")
    out = xp.zeros(n, dtype=dtype)
    out[pos] = 1
    return out


def _rng(seed):
    return np.random.default_rng(seed)


@operator("white_noise", family=FAMILY, summary="Gaussian white noise",
          params=[NSAMP, Param("std", float, 1.0, min=0.0), SEED, DTYPE],
          reference="numpy.random.default_rng(seed).standard_normal(n) * std",
          takes_input=False)
def white_noise(*, n, std, seed, dtype, xp):
    return xp.asarray((_rng(seed).standard_normal(n) * std).astype(dtype))


def _coloured(n, seed, exponent, dtype):
    """Gaussian noise with power spectrum ~ 1/f**exponent (DC removed), unit variance."""
    if n == 0:
        return np.zeros(0, dtype=dtype)
    spec = np.fft.rfft(_rng(seed).standard_normal(n))
    f = np.fft.rfftfreq(n)
    scale = np.zeros_like(f)
    scale[1:] = f[1:] ** (-exponent / 2.0)
    y = np.fft.irfft(spec * scale, n)
    s = y.std()
    return (y / s if s > 0 else y).astype(dtype)


@operator("pink_noise", family=FAMILY, summary="Pink (1/f) Gaussian noise, unit variance",
          params=[NSAMP, SEED, DTYPE], reference="PSD slope of -1 (welch fit)",
          takes_input=False)
def pink_noise(*, n, seed, dtype, xp):
    return xp.asarray(_coloured(n, seed, 1.0, dtype))


@operator("brown_noise", family=FAMILY, summary="Brown (1/f^2) Gaussian noise, unit variance",
          params=[NSAMP, SEED, DTYPE], reference="PSD slope of -2 (welch fit)",
          takes_input=False)
def brown_noise(*, n, seed, dtype, xp):
    return xp.asarray(_coloured(n, seed, 2.0, dtype))


@operator("tone", family=FAMILY, summary="Sampled sinusoid: amplitude * cos(2 pi f t + phase)",
          params=[NSAMP, Param("frequency", float, 1000.0, unit="Hz"),
                  Param("amplitude", float, 1.0), Param("phase", float, 0.0, unit="rad"),
                  Param("complex", bool, False, help="complex exponential"), DTYPE],
          reference="numpy.cos(2*pi*f*arange(n)/fs + phase)", takes_input=False)
def tone(*, n, frequency, amplitude, phase, complex, dtype, fs, xp):
    t = xp.arange(n, dtype=xp.float64) / fs
    arg = 2 * np.pi * frequency * t + phase
    if complex:
        ctype = np.complex64 if dtype == "float32" else np.complex128
        return (amplitude * xp.exp(1j * arg)).astype(ctype)
    return (amplitude * xp.cos(arg)).astype(dtype)


@operator("time_axis", family=FAMILY, summary="Sample times arange(n) / fs",
          params=[NSAMP, Param("start", float, 0.0, unit="s"), DTYPE],
          reference="start + numpy.arange(n) / fs", takes_input=False)
def time_axis(*, n, start, dtype, fs, xp):
    return (start + xp.arange(n, dtype=xp.float64) / fs).astype(dtype)


@operator("max_len_seq", family=FAMILY, summary="Maximum length sequence: (seq, state)",
          params=[Param("nbits", int, REQUIRED, min=1, max=32),
                  Param("state", "array", None, help="initial state (all ones when omitted)"),
                  Param("length", int, None, min=0),
                  Param("taps", "array", None, help="feedback taps (scipy's table when "
                        "omitted)")],
          reference="scipy.signal.max_len_seq", takes_input=False)
def max_len_seq(*, nbits, state, length, taps):
    import scipy.signal
    return scipy.signal.max_len_seq(nbits, state=state, length=length, taps=taps)
