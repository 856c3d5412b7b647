"""Filter design: a :class:`~specscope.compute.filters.FilterSpec` and a sample rate in,
a :class:`~specscope.compute.filters.Design` out.

:func:`design` is the one design path: the filter designer (GUI), the
pipeline's ``filter`` step and ``specscope filter`` all call it, so a filter
designed by dragging is, coefficient for coefficient, the filter a pipeline
applies and the CLI prints.  Every scipy call goes through the operator
registry and is kept in :attr:`Design.calls` (what the Python export replays).
:func:`notch_from_click` turns a frequency into a notch spec; :func:`notch_for_line`
turns a line measured by :func:`~specscope.compute.filters.find_line` (a click
refined on the recording's samples) into one that notches only the harmonics
standing above the noise floor.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import operators
from ..errors import InputError, operator_detail
from ..params import json_types
from ..spectral import parse_window
from .analysis import analyze, verify
from .defaults import DEFAULT_Q
from .designed import Call, Design
from .lines import LineFit
from .spec import (
    IIR_DESIGNS,
    MAX_NUMTAPS,
    MAX_ORDER,
    MIN_ORDER_OPS,
    FilterSpec,
    FilterSpecError,
    field_array,
    field_text,
)

__all__ = ["COMB_MIN_HARMONICS", "MAX_NOTCH_HARMONICS", "REMEZ_REFINE", "clear_design_cache",
           "design", "notch_for_line", "notch_from_click", "remez_length"]

#: the error of every impossible specification (a short name for the checks below)
_fail = FilterSpecError

#: most notches (one section each) designed for "every harmonic up to Nyquist"
MAX_NOTCH_HARMONICS = 40
#: a line dividing the sample rate with at least this many harmonics above the floor
#: gets the comb (one recursion) instead of a notch per harmonic
COMB_MIN_HARMONICS = 16

#: designs kept for reuse: the app designs on its compute thread, then binds the same
#: spec into the view's pipeline on the GUI thread, which then finds it (and its
#: settling length, the costly part) ready
DESIGN_CACHE_SIZE = 32
_cache: OrderedDict[tuple[FilterSpec, float], Design] = OrderedDict()
_cache_lock = threading.Lock()

def clear_design_cache() -> None:
    """Forget the kept designs (benchmarks time a redesign, which always misses the cache)."""
    with _cache_lock:
        _cache.clear()


#: lengthenings tried when the equiripple length estimate misses the tolerance
REMEZ_REFINE = 12


def _delta_pass(rp: float) -> float:
    """Linear passband deviation for ``rp`` dB peak-to-peak ripple."""
    g = 10.0 ** (rp / 20.0)
    return (g - 1.0) / (g + 1.0)


def _delta_stop(rs: float) -> float:
    return 10.0 ** (-rs / 20.0)


def remez_length(bands: Sequence[float], desired: Sequence[float], deltas: Sequence[float],
                 fs: float) -> int:
    """Estimated equiripple FIR length (Herrmann, Rabiner and Chan, 1973).

    For each transition between neighbouring bands the estimate for a
    two-band filter with those bands' deviations; the longest wins.

    Parameters
    ----------
    bands : sequence of float
        Band edges in pairs, ``[f0, f1, f2, f3, ...]`` (Hz).
    desired : sequence of float
        Gain of each band.
    deltas : sequence of float
        Allowed linear deviation in each band.
    fs : float
        Sample rate (Hz).

    Returns
    -------
    int
        The estimated number of taps (at least 1).
    """
    b = np.asarray(bands, float)
    n = 1
    for i in range(len(desired) - 1):
        df = (b[2 * i + 2] - b[2 * i + 1]) / fs
        d1, d2 = sorted((deltas[i], deltas[i + 1]), reverse=True)
        lp, ls = math.log10(d1), math.log10(d2)
        dinf = ((5.309e-3 * lp * lp + 7.114e-2 * lp - 0.4761) * ls
                - (2.66e-3 * lp * lp + 0.5941 * lp + 0.4278))
        f = 11.01217 + 0.51244 * (lp - ls)
        n = max(n, math.ceil(dinf / df - f * df + 1))
    return int(n)


def _edge_bands(spec: FilterSpec, nyq: float) -> tuple[list[float], list[float]]:
    """(bands, desired per band) of a btype + passband + stopband specification."""
    p, s = field_array(spec.passband).tolist(), field_array(spec.stopband).tolist()
    if spec.btype == "lowpass":
        return [0.0, p[0], s[0], nyq], [1.0, 0.0]
    if spec.btype == "highpass":
        return [0.0, s[0], p[0], nyq], [0.0, 1.0]
    if spec.btype == "bandpass":
        return [0.0, s[0], p[0], p[1], s[1], nyq], [0.0, 1.0, 0.0]
    return [0.0, p[0], s[0], s[1], p[1], nyq], [1.0, 0.0, 1.0]


def _band_table(spec: FilterSpec, nyq: float) -> tuple[list[float], list[float]]:
    if spec.bands is not None:
        return list(field_array(spec.bands)), list(field_array(spec.desired))
    return _edge_bands(spec, nyq)


def _call(spec: FilterSpec, c: Call, fs: float, name: str | None) -> Any:
    try:
        return operators.call(c.op, backend="numpy", fs=fs, **c.kwargs)
    except InputError as exc:
        raise _fail(name, f"{spec.design}: {operator_detail(exc, c.op)}") from None


def _check_nyquist(spec: FilterSpec, fs: float) -> None:
    nyq = fs / 2.0
    for name in ("cutoff", "frequency", "passband", "stopband", "width", "bands", "freq"):
        v = getattr(spec, name)
        if v is None or (name == "frequency" and spec.design == "notches"):
            continue
        a = field_array(v)
        ok = np.all(a <= nyq) if name in ("bands", "freq") else np.all(a < nyq)
        if not ok:
            raise _fail(name, f"{name}={field_text(v)} Hz must be below the Nyquist frequency "
                              f"{nyq:g} Hz (sample rate {fs:g} Hz)")
    if spec.design == "notches" and not spec.frequency < nyq:
        raise _fail("frequency", f"frequency={spec.frequency:g} Hz must be below the "
                                 f"Nyquist frequency {nyq:g} Hz (sample rate {fs:g} Hz)")
    if spec.design == "firwin2" and field_array(spec.freq)[-1] != nyq:
        raise _fail("freq", f"freq={field_text(spec.freq)} must end at the Nyquist frequency "
                            f"{nyq:g} Hz")


def design(spec: FilterSpec, fs: float) -> Design:
    """Design ``spec`` for sample rate ``fs`` (Hz).

    Designs are immutable; the last :data:`DESIGN_CACHE_SIZE` are kept, so the
    same spec and rate give the same :class:`Design` (with whatever it has
    computed lazily, e.g. its settling length) at no cost.

    Parameters
    ----------
    spec : FilterSpec
        The specification.
    fs : float
        Sample rate (Hz), positive and finite.

    Returns
    -------
    Design
        Coefficients, order, the scipy calls made and the lazily computed properties.

    Raises
    ------
    FilterSpecError
        Naming the field: edges at or beyond Nyquist, a minimum order above
        :data:`MAX_ORDER`, an unstable result (``order``), etc.; also ``fs`` not a
        positive sample rate, or ``spec`` no :class:`FilterSpec`.
    """
    if not isinstance(spec, FilterSpec):
        raise _fail(None, f"expected a FilterSpec, got {type(spec).__name__}")
    if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not (
            math.isfinite(fs) and fs > 0):
        raise _fail("fs", f"fs={fs!r} must be a positive sample rate in Hz")
    fs = float(fs)
    try:
        key: tuple[FilterSpec, float] | None = (spec, fs)
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return hit
    except TypeError:  # a field holding something unhashable: design it every time
        key = None
    d = _design(spec, fs)
    if key is not None:
        with _cache_lock:
            _cache[key] = d
            while len(_cache) > DESIGN_CACHE_SIZE:
                _cache.popitem(last=False)
    return d


def _design(spec: FilterSpec, fs: float) -> Design:
    _check_nyquist(spec, fs)
    d = spec.design
    if d in IIR_DESIGNS:
        return _design_iir(spec, fs)
    if d in ("iirnotch", "iirpeak"):
        c = Call(d, {"w0": spec.frequency, "Q": spec.q, "output": "sos"})
        return Design.from_sos(spec, fs, np.asarray(_call(spec, c, fs, "q"), float), 2, (c,))
    if d == "notches":
        return _design_notches(spec, fs)
    if d == "iircomb":
        return _design_comb(spec, fs)
    return _design_fir(spec, fs)


def _design_iir(spec: FilterSpec, fs: float) -> Design:
    d = spec.design
    calls: list[Call] = []
    if spec.order is None:
        oc = Call(MIN_ORDER_OPS[d], {"wp": json_types(spec.passband),
                                     "ws": json_types(spec.stopband),
                                     "gpass": spec.rp, "gstop": spec.rs})
        n, wn = _call(spec, oc, fs, "stopband")
        n = int(n)
        if n > MAX_ORDER:
            raise _fail("stopband", f"stopband={field_text(spec.stopband)} Hz: meeting "
                                    f"rp={spec.rp:g} dB and rs={spec.rs:g} dB needs order {n} > "
                                    f"{MAX_ORDER}; widen the transition band or relax rp/rs")
        calls.append(oc)
        order, wn, culprit = n, json_types(np.asarray(wn, float)), "stopband"
    else:
        order, wn, culprit = spec.order, json_types(spec.cutoff), "order"
    kw: dict[str, Any] = {"N": order, "Wn": wn, "btype": spec.btype, "output": "sos"}
    if d in ("cheby1", "ellip"):
        kw["rp"] = spec.rp
    if d in ("cheby2", "ellip"):
        kw["rs"] = spec.rs
    if d == "bessel":
        kw["norm"] = spec.norm
    c = Call(d, kw)
    calls.append(c)
    sos = np.asarray(_call(spec, c, fs, culprit), float)
    full = order * (2 if spec.btype in ("bandpass", "bandstop") else 1)
    return Design.from_sos(spec, fs, sos, full, tuple(calls), culprit)


def _design_notches(spec: FilterSpec, fs: float) -> Design:
    nyq = fs / 2.0
    top = math.ceil(nyq / spec.frequency) - 1
    if spec.harmonics is None and top > MAX_NOTCH_HARMONICS:
        # hundreds of sections ring for seconds and cost a section per sample each
        raise _fail("harmonics", f"harmonics: {top} harmonics of {spec.frequency:g} Hz lie "
                                 f"below Nyquist, more than the {MAX_NOTCH_HARMONICS} notches "
                                 "designed for 'up to Nyquist'; give harmonics (those above "
                                 "the noise floor), or use iircomb when the frequency divides "
                                 "the sample rate")
    h = top if spec.harmonics is None else min(spec.harmonics, top)
    k = np.arange(1, h + 1)
    # scipy.signal.iirnotch for every harmonic at once (same bandwidth frequency / q)
    w0 = np.pi * (k * spec.frequency) / nyq
    beta = np.tan(w0 / (k * spec.q) / 2.0)
    gain = 1.0 / (1.0 + beta)
    cw = np.cos(w0)
    sos = np.column_stack([gain, -2.0 * gain * cw, gain, np.ones(h), -2.0 * gain * cw,
                           2.0 * gain - 1.0])
    calls = tuple(Call("iirnotch", {"w0": float(kk * spec.frequency), "Q": float(kk * spec.q),
                                    "output": "sos"}) for kk in k)
    return Design.from_sos(spec, fs, sos, 2 * h, calls)


def _design_comb(spec: FilterSpec, fs: float) -> Design:
    ratio = fs / spec.frequency
    if abs(ratio - round(ratio)) > 1e-9 * ratio:
        raise _fail("frequency", f"frequency={spec.frequency:g} Hz must divide the sample rate "
                                 f"{fs:g} Hz (a comb needs fs / frequency teeth, a whole "
                                 "number); use design 'notches' for any frequency")
    c = Call("iircomb", {"w0": spec.frequency, "Q": spec.q, "ftype": spec.kind,
                         "pass_zero": spec.pass_zero, "output": "ba"})
    b, a = (np.asarray(x, dtype=np.float64) for x in _call(spec, c, fs, "q"))
    nz = set(np.flatnonzero(b)) | set(np.flatnonzero(a))
    if not nz <= {0, b.size - 1} or a.size != b.size:  # not the sparse comb: sections
        sos = np.asarray(operators.call("tf2sos", b, backend="numpy", a=a), float)
        return Design.from_sos(spec, fs, sos, b.size - 1, (c,))
    if abs(a[-1] / a[0]) >= 1.0:
        raise _fail("q", f"q={spec.q:g}: the comb is unstable")
    return Design(spec, fs, "comb", None, b, a, b.size - 1, (c,))


def _design_fir(spec: FilterSpec, fs: float) -> Design:
    d, nyq = spec.design, fs / 2.0
    pass_nyq = False
    if d == "firwin":
        if spec.numtaps is None:
            p, s = field_array(spec.passband), field_array(spec.stopband)
            width = float(np.min(np.abs(s - p)))
            cutoff = json_types((p + s) / 2.0)
            atten = spec.rs if spec.rp is None else max(spec.rs, -20 * math.log10(
                _delta_pass(spec.rp)))
            kc = Call("kaiserord", {"ripple": atten, "width": width / nyq})
            try:
                numtaps, beta = operators.call("kaiserord", backend="numpy", **kc.kwargs)
            except InputError as exc:
                raise _fail("rs", f"rs: {exc}") from None
            numtaps = int(numtaps)
            if spec.btype in ("highpass", "bandstop") and numtaps % 2 == 0:
                numtaps += 1  # a passband at Nyquist needs a type I (odd) filter
            _check_numtaps(numtaps, "stopband", spec)
            c = Call("firwin", {"numtaps": numtaps, "cutoff": cutoff,
                                "window": ("kaiser", float(beta)), "pass_zero": spec.btype,
                                "width": None})
            b = _call(spec, c, fs, "stopband")
            return Design(spec, fs, "fir", None, np.asarray(b, float), np.ones(1),
                          numtaps - 1, (kc, c))
        cut = field_array(spec.cutoff)
        if cut.size > 2:  # multiband: scipy's bool form
            pass_zero: Any = spec.btype == "bandstop"
        else:
            pass_zero = spec.btype
        pass_nyq = spec.btype in ("highpass", "bandstop") or (cut.size > 2 and (
            (cut.size % 2 == 0) == (spec.btype == "bandstop")))
        if pass_nyq and spec.numtaps % 2 == 0:
            raise _fail("numtaps", f"numtaps={spec.numtaps} must be odd: a {spec.btype} FIR "
                                   "passes the Nyquist frequency")
        c = Call("firwin", {"numtaps": spec.numtaps, "cutoff": json_types(spec.cutoff),
                            "window": parse_window(spec.window), "pass_zero": pass_zero,
                            "width": spec.width})
        b = _call(spec, c, fs, "cutoff")
        return Design(spec, fs, "fir", None, np.asarray(b, float), np.ones(1),
                      spec.numtaps - 1, (c,))
    if d == "firwin2":
        g = field_array(spec.gain)
        if spec.numtaps % 2 == 0 and g[-1] != 0:
            raise _fail("numtaps", f"numtaps={spec.numtaps} must be odd when the gain at "
                                   "Nyquist is not 0")
        c = Call("firwin2", {"numtaps": spec.numtaps, "freq": json_types(spec.freq),
                             "gain": json_types(spec.gain),
                             "window": parse_window(spec.window)})
        b = _call(spec, c, fs, "freq")
        return Design(spec, fs, "fir", None, np.asarray(b, float), np.ones(1),
                      spec.numtaps - 1, (c,))
    bands, desired = _band_table(spec, nyq)
    nb = len(bands) // 2
    weight = None if spec.weight is None else json_types(spec.weight)
    deltas = None
    if spec.rp is not None and spec.rs is not None:
        dp, ds = _delta_pass(spec.rp), _delta_stop(spec.rs)
        deltas = [dp * (des if des > 0 else 1.0) if des > 0 else ds
                  for des in desired[:nb]]
        if weight is None:
            weight = [min(deltas) / x for x in deltas]
    numtaps = spec.numtaps
    calls: list[Call] = []
    if numtaps is None:
        numtaps = remez_length(bands, desired, deltas, fs)
        if desired[-1] != 0 and numtaps % 2 == 0:
            numtaps += 1  # gain at Nyquist needs a type I (odd) filter
        _check_numtaps(numtaps, "stopband", spec)
    elif d == "remez" and desired[-1] != 0 and numtaps % 2 == 0:
        raise _fail("numtaps", f"numtaps={numtaps} must be odd: the last band (up to "
                               f"{bands[-1]:g} Hz) has gain {desired[-1]:g}")
    if d == "remez":
        c = Call("remez", {"numtaps": numtaps, "bands": bands, "desired": desired,
                           "weight": weight})
        if spec.numtaps is None:  # the estimate can fall short: lengthen until met
            for _ in range(REMEZ_REFINE):
                b = _call(spec, c, fs, "stopband")
                trial = Design(spec, fs, "fir", None, np.asarray(b, float), np.ones(1),
                               numtaps - 1)
                if verify(trial, analysis=analyze(trial, 1024)).passed is not False:
                    return dataclasses.replace(trial, calls=(c,))
                numtaps += max(2, 2 * (numtaps // 40))
                _check_numtaps(numtaps, "stopband", spec)
                c = Call("remez", dict(c.kwargs, numtaps=numtaps))
    else:
        des2 = desired if len(desired) == len(bands) else [x for x in desired for _ in (0, 1)]
        c = Call("firls", {"numtaps": numtaps, "bands": bands, "desired": des2,
                           "weight": weight})
    calls.append(c)
    b = _call(spec, c, fs, "bands" if spec.bands is not None else "stopband")
    return Design(spec, fs, "fir", None, np.asarray(b, float), np.ones(1), numtaps - 1,
                  tuple(calls))


def _check_numtaps(n: int, culprit: str, spec: FilterSpec) -> None:
    if n > MAX_NUMTAPS:
        raise _fail(culprit, f"{culprit}={field_text(getattr(spec, culprit))} Hz: the "
                             f"tolerance needs {n} taps > {MAX_NUMTAPS}; widen the transition "
                             "band or relax rp/rs")


def _divisor(frequency: float, fs: float, tolerance_hz: float) -> float | None:
    """``fs / n`` (n >= 4 whole) when within ``tolerance_hz`` of ``frequency``, else None."""
    n = round(fs / frequency)
    if n >= 4 and abs(fs / n - frequency) <= tolerance_hz:
        return fs / n
    return None


def notch_from_click(frequency: float, fs: float, *, q: float = DEFAULT_Q,
                     harmonics: int | str | None = None, zero_phase: bool = False
                     ) -> FilterSpec:
    """A spec that removes a line at exactly ``frequency`` Hz (no measurement).

    ``harmonics``: None for one notch; an int N for the harmonics 1..N (those
    below Nyquist); ``"nyquist"`` for every harmonic below Nyquist: scipy's
    comb (``iircomb``: one cheap recursion; it also removes DC) when the
    frequency divides ``fs``, otherwise notches (``notches``, each
    ``frequency / q`` Hz wide) for the first :data:`MAX_NOTCH_HARMONICS`
    harmonics at most.  To notch a line seen in a recording, measure it first
    (:func:`~specscope.compute.filters.find_line`) and use :func:`notch_for_line`.

    Parameters
    ----------
    frequency : float
        The line (Hz), between 0 and Nyquist.
    fs : float
        Sample rate (Hz).
    q : float
        Quality factor: every notch is ``frequency / q`` Hz wide.
    harmonics : int, "nyquist" or None
        None: one notch; N: harmonics 1..N; ``"nyquist"``: every harmonic below Nyquist.
    zero_phase : bool
        Filter forwards and backwards.

    Returns
    -------
    FilterSpec
        An ``iirnotch``, ``notches`` or ``iircomb`` specification.

    Raises
    ------
    FilterSpecError
        If ``frequency`` is not between 0 Hz and Nyquist, or ``harmonics`` is invalid.

    Examples
    --------
    >>> notch_from_click(50.0, 48000.0, harmonics="nyquist").design
    'iircomb'
    >>> notch_from_click(49.5, 48000.0, harmonics=3).design
    'notches'
    """
    if isinstance(frequency, bool) or not isinstance(frequency, numbers.Real) or not (
            0 < frequency < fs / 2):
        raise _fail("frequency", f"frequency={frequency!r} must be between 0 Hz and the "
                                 f"Nyquist frequency {fs / 2:g} Hz")
    f = float(frequency)
    if harmonics is None:
        return FilterSpec("iirnotch", frequency=f, q=q, zero_phase=zero_phase)
    if harmonics == "nyquist":
        if _divisor(f, fs, 1e-9 * f) is not None:
            return FilterSpec("iircomb", frequency=f, q=q, zero_phase=zero_phase)
        top = math.ceil(fs / 2 / f) - 1
        return FilterSpec("notches", frequency=f, q=q,
                          harmonics=min(top, MAX_NOTCH_HARMONICS), zero_phase=zero_phase)
    if isinstance(harmonics, bool) or not isinstance(harmonics, numbers.Integral) or \
            harmonics < 1:
        raise _fail("harmonics", f"harmonics={harmonics!r} must be None, 'nyquist' or a "
                                 "whole number >= 1")
    return FilterSpec("notches", frequency=f, q=q, harmonics=int(harmonics),
                      zero_phase=zero_phase)


def _to_digits(f: float, stderr: float) -> float:
    """``f`` rounded to the decimal digit its standard error ``stderr`` reaches."""
    if not (math.isfinite(stderr) and stderr > 0):
        return f
    return round(f, -math.floor(math.log10(stderr)))


def notch_for_line(fit: LineFit, fs: float, *, q: float = DEFAULT_Q,
                   harmonics: int | str | None = "all", zero_phase: bool = False
                   ) -> FilterSpec:
    """A spec that notches a measured line and only its harmonics above the noise floor.

    Parameters
    ----------
    fit : LineFit
        The line, from :func:`~specscope.compute.filters.find_line`.
    fs : float
        Sample rate in Hz.
    q : float
        Quality factor: every notch is ``frequency / q`` Hz wide.
    harmonics : {"all", None} or int
        ``"all"`` (or ``"nyquist"``): every harmonic found above the floor;
        an int N: those up to N; None: the fundamental only.
    zero_phase : bool
        Filter forwards and backwards.

    Returns
    -------
    FilterSpec
        ``iircomb`` when the line divides ``fs`` (within three standard errors)
        and at least :data:`COMB_MIN_HARMONICS` harmonics stand out; otherwise
        ``notches`` up to the highest harmonic found (at most
        :data:`MAX_NOTCH_HARMONICS`), or one ``iirnotch``.

    Raises
    ------
    FilterSpecError
        If ``fit`` is no :class:`LineFit`, its frequency is not between 0 Hz and
        Nyquist, or ``harmonics`` is invalid.
    """
    if not isinstance(fit, LineFit):
        raise _fail(None, f"expected a LineFit, got {type(fit).__name__}")
    f = float(fit.frequency_hz)
    if not 0 < f < fs / 2:
        raise _fail("frequency", f"frequency={f:g} must be between 0 Hz and the Nyquist "
                                 f"frequency {fs / 2:g} Hz")
    # to the digits the measurement tells (50.0000071 Hz measured to ±3 mHz is 50.000 Hz)
    f = _to_digits(f, fit.stderr_hz)
    if harmonics is None:
        return FilterSpec("iirnotch", frequency=f, q=q, zero_phase=zero_phase)
    ks = fit.harmonics
    if harmonics not in ("all", "nyquist"):
        if isinstance(harmonics, bool) or not isinstance(harmonics, numbers.Integral) or \
                harmonics < 1:
            raise _fail("harmonics", f"harmonics={harmonics!r} must be None, 'all' or a "
                                     "whole number >= 1")
        ks = tuple(k for k in ks if k <= harmonics) or (1,)
    exact = _divisor(f, fs, max(3.0 * fit.stderr_hz, 1e-9 * f))
    if harmonics in ("all", "nyquist") and exact is not None and \
            len(ks) >= COMB_MIN_HARMONICS:
        return FilterSpec("iircomb", frequency=exact, q=q, zero_phase=zero_phase)
    top = min(max(ks), MAX_NOTCH_HARMONICS)
    if top == 1:
        return FilterSpec("iirnotch", frequency=f, q=q, zero_phase=zero_phase)
    return FilterSpec("notches", frequency=f, q=q, harmonics=top, zero_phase=zero_phase)
