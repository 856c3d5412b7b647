"""Filter analysis and peak finding: responses, group delay from SOS, peaks."""

from __future__ import annotations

import numpy as np
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators.registry import REQUIRED, Param, operator

from ..backend import scipy_fn
from ._common import AXIS

FAMILY = "analysis"
WORN = Param("worN", "array", 512, help="number of frequencies (an integer), or the "
             "frequencies themselves; None: 512")
WHOLE = Param("whole", bool, False, help="0..fs instead of 0..fs/2")
A = Param("a", "array", 1.0, help="denominator coefficients")
PLOT = Param("plot", "any", None, python_only=True,
             help="callable given (w, h), as scipy's plot (Python only)")


@operator("freqz", family=FAMILY, summary="Frequency response of (b input, a): (w, h)",
          params=[A, WORN, WHOLE, PLOT, Param("include_nyquist", bool, False)],
          reference="scipy.signal.freqz", history=None)
def freqz(x, *, a, worN, whole, plot, include_nyquist, fs=2 * np.pi, xp):
    """From Python ``worN`` may also be None or an array of frequencies, as in scipy."""
    return scipy_fn(xp, "signal.freqz")(x, a, worN=_count_or_array(worN), whole=whole,
                                        plot=plot, fs=fs,
                                        include_nyquist=include_nyquist)


@operator("sosfreqz", family=FAMILY, summary="Frequency response of SOS (input): (w, h)",
          params=[WORN, WHOLE], reference="scipy.signal.freqz_sos", history=None)
def sosfreqz(x, *, worN, whole, fs=2 * np.pi, xp):
    return scipy_fn(xp, "signal.freqz_sos")(x, worN=_count_or_array(worN), whole=whole, fs=fs)


@operator("freqz_zpk", family=FAMILY, summary="Frequency response of zpk (zeros input): (w, h)",
          params=[Param("p", "array", REQUIRED), Param("k", (float, "array"), REQUIRED), WORN,
                  WHOLE],
          reference="scipy.signal.freqz_zpk", history=None)
def freqz_zpk(x, *, p, k, worN, whole, fs=2 * np.pi, xp):
    return scipy_fn(xp, "signal.freqz_zpk")(x, p, k, worN=_count_or_array(worN), whole=whole,
                                            fs=fs)


@operator("freqs", family=FAMILY, summary="Analog frequency response of (b input, a): (w, h)",
          params=[Param("a", "array", REQUIRED), Param("worN", "array", 200), PLOT],
          reference="scipy.signal.freqs", history=None)
def freqs(x, *, a, worN, plot):
    import scipy.signal as ss
    return ss.freqs(x, a, worN=_count_or_array(worN), plot=plot)


def _count_or_array(worN):
    """scipy's worN: None, a count (an integral scalar) or the frequencies themselves."""
    if worN is None or np.ndim(worN) != 0 or not hasattr(worN, "dtype"):
        return worN
    return int(worN) if worN.dtype.kind in "iu" else worN  # a float is one frequency


@operator("freqs_zpk", family=FAMILY, summary="Analog frequency response of zpk: (w, h)",
          params=[Param("p", "array", REQUIRED), Param("k", (float, "array"), REQUIRED),
                  Param("worN", "array", 200)], reference="scipy.signal.freqs_zpk", history=None)
def freqs_zpk(x, *, p, k, worN):
    import scipy.signal as ss
    return ss.freqs_zpk(x, p, k, worN=_count_or_array(worN))


def _biquad_group_delay(sec, w, xp):
    """Group delay (samples) of one section at angular frequencies w.

    With c = b * reversed(a) (a degree-4 polynomial), the delay is
    Re(sum k c_k e^{-jwk} / sum c_k e^{-jwk}) - 2; where the denominator
    vanishes (a zero on the unit circle) the delay is undefined and set to 0,
    as scipy.signal.group_delay does.
    """
    b, a = sec[:3], sec[3:]
    c = xp.stack([b[0] * a[2], b[0] * a[1] + b[1] * a[2], b[0] * a[0] + b[1] * a[1] + b[2] * a[2],
                  b[1] * a[0] + b[2] * a[1], b[2] * a[0]])
    k = xp.arange(5, dtype=xp.float64)
    e = xp.exp(-1j * w[:, None] * k[None, :])
    num = (e * (c * k)[None, :]).sum(-1)
    den = (e * c[None, :]).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gd = xp.real(num / den) - 2
    return xp.where(xp.isfinite(gd), gd, 0.0)


@operator("group_delay", family=FAMILY,
          summary="Group delay in samples of a (b, a) pair or of SOS, summed over sections: "
                  "(w, gd)",
          params=[Param("w", "array", 512, help="number of frequencies (an integer), or the "
                        "frequencies themselves (scipy's name)"),
                  WHOLE, Param("worN", "array", None, help="the same as w")],
          reference="scipy.signal.group_delay", history=None, nan_policy="reject",
          input_kind="any")
def group_delay(x, *, w, whole, worN, fs=2 * np.pi, xp):
    """The input is scipy's ``system``, a ``(b, a)`` pair (computed by scipy), or an SOS
    array of shape ``(n_sections, 6)``: the delay of each section at once, summed."""
    import scipy.signal as ss
    n = _count_or_array(w if worN is None else worN)
    if isinstance(x, (tuple, list)):
        return ss.group_delay(tuple(_backend_host(v) for v in x), w=n, whole=whole, fs=fs)
    sos = xp.asarray(x, dtype=xp.float64)
    if sos.ndim != 2 or sos.shape[1] != 6:
        raise operator_error(InputError, "group_delay", f"sos must have shape (n_sections, 6), got {sos.shape} "
                         "(give a (b, a) pair as a tuple)")
    if n is None:
        n = 512
    if isinstance(n, int):
        top = 2 * np.pi if whole else np.pi
        wr = xp.linspace(0, top, n, endpoint=False)
    else:
        wr = xp.asarray(n, dtype=xp.float64).reshape(-1) * (2 * np.pi / fs)
    gd = xp.zeros(wr.shape[0])
    for sec in sos:
        gd = gd + _biquad_group_delay(sec, wr, xp)
    return wr * (fs / (2 * np.pi)), gd


def _backend_host(v):
    from specscope.compute.backend import to_host
    return to_host(v)


@operator("impulse_response", family=FAMILY, summary="First n samples of an SOS filter's impulse response",
          params=[Param("n", int, 256, min=1, unit="samples")],
          reference="scipy.signal.sosfilt(sos, unit_impulse(n))", history=None)
def impulse_response(x, *, n, xp):
    d = xp.zeros(n)
    d[0] = 1.0
    return scipy_fn(xp, "signal.sosfilt")(x, d)


@operator("step_response", family=FAMILY, summary="First n samples of an SOS filter's step response",
          params=[Param("n", int, 256, min=1, unit="samples")],
          reference="scipy.signal.sosfilt(sos, ones(n))", history=None)
def step_response(x, *, n, xp):
    return scipy_fn(xp, "signal.sosfilt")(x, xp.ones(n))


def _opt(v):
    if v is None or (isinstance(v, (tuple, list)) and any(u is None for u in v)):
        return v  # scipy's open ranges: (None, max), (min, None)
    v = np.asarray(v, dtype=float)
    return float(v) if v.ndim == 0 else v


@operator("find_peaks", family=FAMILY, summary="Peaks of a 1-D signal: (indices, properties)",
          params=[Param("height", "array", None), Param("threshold", "array", None),
                  Param("distance", float, None, min=1.0, unit="samples"),
                  Param("prominence", "array", None), Param("width", "array", None),
                  Param("wlen", int, None, min=1), Param("rel_height", float, 0.5, min=0.0),
                  Param("plateau_size", "array", None)],
          reference="scipy.signal.find_peaks", history=None, nan_policy="reject")
def find_peaks(x, *, height, threshold, distance, prominence, width, wlen, rel_height,
               plateau_size):
    import scipy.signal as ss
    return ss.find_peaks(x, height=_opt(height), threshold=_opt(threshold), distance=distance,
                         prominence=_opt(prominence), width=_opt(width), wlen=wlen,
                         rel_height=rel_height, plateau_size=_opt(plateau_size))


@operator("peak_prominences", family=FAMILY,
          summary="Prominence of given peaks: (prominences, left_bases, right_bases)",
          params=[Param("peaks", "array", REQUIRED), Param("wlen", int, None, min=1)],
          reference="scipy.signal.peak_prominences", history=None, nan_policy="reject")
def peak_prominences(x, *, peaks, wlen):
    import scipy.signal as ss
    return ss.peak_prominences(x, _peaks(peaks), wlen=wlen)


@operator("peak_widths", family=FAMILY,
          summary="Width of given peaks: (widths, heights, left_ips, right_ips)",
          params=[Param("peaks", "array", REQUIRED), Param("rel_height", float, 0.5, min=0.0),
                  Param("prominence_data", "any", None,
                        help="(prominences, left_bases, right_bases) of peak_prominences"),
                  Param("wlen", int, None, min=1)],
          reference="scipy.signal.peak_widths", history=None, nan_policy="reject")
def peak_widths(x, *, peaks, rel_height, prominence_data, wlen):
    import scipy.signal as ss
    return ss.peak_widths(x, _peaks(peaks), rel_height=rel_height,
                          prominence_data=prominence_data, wlen=wlen)


def _peaks(peaks):
    """Peak indices as scipy takes them (non-integers are left for scipy to refuse)."""
    arr = np.asarray(peaks)
    return arr.astype(np.intp) if arr.dtype.kind in "biu" or arr.size == 0 else arr


@operator("argrelmax", family=FAMILY, summary="Indices of relative maxima",
          params=[Param("order", int, 1, min=1), AXIS,
                  Param("mode", str, "clip", choices=("clip", "wrap"))],
          reference="scipy.signal.argrelmax", history=None, nan_policy="reject")
def argrelmax(x, *, order, axis, mode):
    import scipy.signal as ss
    return ss.argrelmax(x, order=order, axis=axis, mode=mode)


@operator("argrelmin", family=FAMILY, summary="Indices of relative minima",
          params=[Param("order", int, 1, min=1), AXIS,
                  Param("mode", str, "clip", choices=("clip", "wrap"))],
          reference="scipy.signal.argrelmin", history=None, nan_policy="reject")
def argrelmin(x, *, order, axis, mode):
    import scipy.signal as ss
    return ss.argrelmin(x, order=order, axis=axis, mode=mode)


@operator("residue", family=FAMILY, summary="Partial fractions of analog (b input, a): (r, p, k)",
          params=[Param("a", "array", REQUIRED), Param("tol", float, 1e-3, min=0.0)],
          reference="scipy.signal.residue", history=None)
def residue(x, *, a, tol):
    import scipy.signal as ss
    return ss.residue(x, a, tol=tol)


@operator("residuez", family=FAMILY, summary="Partial fractions of digital (b input, a): (r, p, k)",
          params=[Param("a", "array", REQUIRED), Param("tol", float, 1e-3, min=0.0)],
          reference="scipy.signal.residuez", history=None)
def residuez(x, *, a, tol):
    import scipy.signal as ss
    return ss.residuez(x, a, tol=tol)


@operator("is_stable", family=FAMILY, summary="Whether an SOS (input) filter is stable",
          reference="all(abs(poles) < 1) of scipy.signal.sos2zpk", history=None,
          nan_policy="reject")
def is_stable(x):
    import scipy.signal as ss
    _, p, _ = ss.sos2zpk(x)
    return bool(np.all(np.abs(p) < 1.0))
