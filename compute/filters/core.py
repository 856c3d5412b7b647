"""Filter design, analysis and specification checks: the one design path of specscope.

The filter designer (GUI), the pipeline's ``filter`` step and ``specscope filter``
all go through this module, so a filter designed by dragging is, coefficient for
coefficient, the filter a pipeline applies and the CLI prints.

Quick tour::

    spec = FilterSpec("butter", btype="bandpass", order=4, cutoff=(300.0, 3000.0))
    d = design(spec, fs=48000)            # Design: d.sos, d.order, d.stable, ...
    a = analyze(d)                         # Analysis: a.f, a.magnitude_db, a.group_delay, ...
    v = verify(d)                          # Verdict: v.passed, v.worst
    spec2 = dataclasses.replace(spec, cutoff=(350.0, 3000.0))   # a drag: a new spec

    hum = notch_from_click(50.0, fs=48000, harmonics="nyquist")  # comb for hum + harmonics

Specification (:class:`FilterSpec`)
-----------------------------------
A frozen dataclass whose :meth:`~FilterSpec.to_params` is exactly the ``params``
of a pipeline ``filter`` step (frequencies in Hz; no sample rate in it).
``design`` selects the method:

========== ============================================================================
design      fields
========== ============================================================================
butter      ``order`` + ``cutoff``; or the minimum order from ``passband``,
cheby1      ``stopband``, ``rp`` (max passband loss, dB) and ``rs`` (min stopband
cheby2      attenuation, dB), via scipy's ``buttord`` / ``cheb1ord`` / ``cheb2ord``
ellip       / ``ellipord`` (cheby1 also needs ``rp``, cheby2 ``rs``, ellip both)
bessel      ``order`` + ``cutoff`` (+ ``norm``); no minimum-order design exists
iirnotch    ``frequency`` + ``q``: one second-order notch (``iirpeak``: resonator)
iircomb     ``frequency`` (must divide the sample rate) + ``q`` + ``kind`` +
            ``pass_zero``: scipy's comb, kept as ``(b, a)`` (see "Forms")
notches     ``frequency`` + ``q`` + ``harmonics``: a notch at each harmonic
            ``k * frequency`` (k = 1 .. harmonics, or up to Nyquist when
            ``harmonics`` is None), one section each, all of the same width
            (``frequency / q`` Hz); works for any frequency
firwin      window method: ``numtaps`` + ``cutoff`` (+ ``window``, ``width``);
            ``cutoff`` may hold several band edges (multiband) for band types;
            without ``numtaps``: Kaiser window with length and beta from
            ``passband``/``stopband``/``rs`` (+ ``rp``) via ``kaiserord``
remez       equiripple: ``numtaps`` + (``bands`` + ``desired`` [+ ``weight``]) or
            (``btype`` + ``passband`` + ``stopband``); without ``numtaps``: the
            minimum length estimated from ``rp``/``rs`` and the transition widths
            (Herrmann, Rabiner and Chan), weights from ``rp``/``rs``
firls       least squares: ``numtaps`` (odd) + bands as for remez
firwin2     frequency sampling: ``numtaps`` + ``freq`` + ``gain`` (+ ``window``)
========== ============================================================================

``passband``/``stopband``/``rp``/``rs`` double as the *tolerance* drawn on the
magnitude plot and checked by :func:`verify`: passband gain within
``[-rp, +rp]`` dB, stopband gain at most ``-rs`` dB.  ``zero_phase`` filters
forwards and backwards: the applied response is ``|H|**2`` with zero phase and
zero delay, and the analysis and the verdict show that applied response.

Forms
-----
``Design.form`` is ``"sos"`` for IIR designs (second-order sections all the
way: design, analysis, filtering, export), ``"fir"`` for FIR designs (taps
``b``; an FIR's SOS form would need the roots of a long polynomial and adds
nothing), and ``"comb"`` for ``iircomb``, whose ``(b, a)`` are non-zero only
at 0 and ``N = fs / frequency``: its SOS form has ``N / 2`` sections, so the
comb is analysed analytically and filtered as ``N`` interleaved first-order
recursions.

Errors
------
Every impossible specification raises :class:`FilterSpecError`, an
:class:`~specscope.compute.errors.InputError` whose one-line message starts
with the field (``cutoff=[300.0, 5000.0] Hz must be below the Nyquist
frequency ...``) and whose ``field`` attribute names it, so a GUI can show it
next to that field and keep the last valid design.

Nothing here imports Qt.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InputError
from ..operators import registry
from ..params import REQUIRED, Param, json_types

__all__ = [
    "BTYPES",
    "DESIGNS",
    "FILTER_DESIGNS",
    "MAX_ORDER",
    "SETTLE_TOL",
    "Analysis",
    "BandCheck",
    "Design",
    "FilterSpec",
    "FilterSpecError",
    "Verdict",
    "analyze",
    "block_filter",
    "design",
    "impulse_settle",
    "notch_from_click",
    "tolerance_bands",
    "verify",
]

#: IIR impulse-response tail (relative L1) treated as settled (chunked pipeline runs)
SETTLE_TOL = 1e-12
#: poles closer than this to the unit circle count as unstable: in float64 such a
#: filter rings for ~1e9 samples and coefficient rounding can push it outside
STABILITY_MARGIN = 1e-9
#: highest IIR order designed (higher orders lose stability in float64)
MAX_ORDER = 64
#: longest FIR designed
MAX_NUMTAPS = 1 << 16
#: FIR longer than this gets no pole-zero analysis (polynomial roots cost O(n^3))
MAX_FIR_ROOTS = 256
_MAX_SETTLE = 1 << 24
#: lengthenings tried when the equiripple length estimate misses the tolerance
REMEZ_REFINE = 12
#: a band edge met to within this (dB) passes: minimum-order designs meet edges exactly
VERDICT_TOL_DB = 1e-6

BTYPES = ("lowpass", "highpass", "bandpass", "bandstop")
IIR_DESIGNS = ("butter", "cheby1", "cheby2", "ellip", "bessel")
FIR_DESIGNS = ("firwin", "remez", "firls", "firwin2")
NOTCH_DESIGNS = ("iirnotch", "iirpeak", "iircomb", "notches")
_ORD_OPS = {"butter": "buttord", "cheby1": "cheb1ord", "cheby2": "cheb2ord",
            "ellip": "ellipord"}


class FilterSpecError(InputError):
    """An impossible or incomplete specification; ``field`` names the culprit."""

    def __init__(self, field_name: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field_name


# -- the schema (shared with the pipeline's filter step) ----------------------------

_P = {p.name: p for p in (
    Param("order", int, None, min=1, max=MAX_ORDER,
          help="IIR order (omit for the minimum order meeting the tolerance)"),
    Param("cutoff", "array", None, min=0.0, unit="Hz",
          help="cut-off frequency, or [low, high] for band filters"),
    Param("btype", str, "lowpass", choices=BTYPES),
    Param("passband", "array", None, min=0.0, unit="Hz",
          help="passband edge, or [low, high] (tolerance and minimum order)"),
    Param("stopband", "array", None, min=0.0, unit="Hz",
          help="stopband edge, or [low, high] (tolerance and minimum order)"),
    Param("rp", float, None, min=0.0, unit="dB", help="passband ripple"),
    Param("rs", float, None, min=0.0, unit="dB", help="stopband attenuation"),
    Param("norm", str, "phase", choices=("phase", "delay", "mag")),
    Param("frequency", float, REQUIRED, min=0.0, unit="Hz", help="centre frequency"),
    Param("q", float, REQUIRED, min=0.0, help="quality factor: frequency / bandwidth"),
    Param("kind", str, "notch", choices=("notch", "peak")),
    Param("pass_zero", bool, False),
    Param("harmonics", int, None, min=1, max=4096,
          help="notch harmonics 1..N (omit: up to Nyquist)"),
    Param("numtaps", int, None, min=1, max=MAX_NUMTAPS,
          help="FIR length (omit for the minimum length meeting the tolerance)"),
    Param("window", "window", "hamming", help="window name or (name, parameter)"),
    Param("width", float, None, min=0.0, unit="Hz", help="transition width (Kaiser)"),
    Param("bands", "array", None, min=0.0, unit="Hz", help="band edges, two per band"),
    Param("desired", "array", None, help="gain per band"),
    Param("weight", "array", None, min=0.0, help="weight per band"),
    Param("freq", "array", None, min=0.0, unit="Hz", help="frequencies of the gain table"),
    Param("gain", "array", None, help="gains at freq"),
    Param("zero_phase", bool, False, help="filter forwards and backwards"),
)}
_P_GIVEN = {n: dataclasses.replace(p, default=REQUIRED) for n, p in _P.items()}
_IIR_FIELDS = ("order", "cutoff", "btype", "passband", "stopband", "rp", "rs")
_BAND_FIELDS = ("btype", "passband", "stopband", "rp", "rs", "bands", "desired", "weight")

#: design -> (registry design operator, its fields in order)
DESIGNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "butter": ("butter", _IIR_FIELDS),
    "cheby1": ("cheby1", _IIR_FIELDS),
    "cheby2": ("cheby2", _IIR_FIELDS),
    "ellip": ("ellip", _IIR_FIELDS),
    "bessel": ("bessel", _IIR_FIELDS + ("norm",)),
    "iirnotch": ("iirnotch", ("frequency", "q")),
    "iirpeak": ("iirpeak", ("frequency", "q")),
    "iircomb": ("iircomb", ("frequency", "q", "kind", "pass_zero")),
    "notches": ("iirnotch", ("frequency", "q", "harmonics")),
    "firwin": ("firwin", ("numtaps", "cutoff", "btype", "window", "width", "passband",
                          "stopband", "rp", "rs")),
    "remez": ("remez", ("numtaps",) + _BAND_FIELDS),
    "firls": ("firls", ("numtaps",) + _BAND_FIELDS),
    "firwin2": ("firwin2", ("numtaps", "freq", "gain", "window")),
}
DESIGN_PARAM = Param("design", str, REQUIRED, choices=tuple(DESIGNS))
ZERO_PHASE_PARAM = _P["zero_phase"]
#: design -> (registry operator, Params): the pipeline filter step's schema
FILTER_DESIGNS: dict[str, tuple[str, tuple[Param, ...]]] = {
    k: (op, tuple(_P[n] for n in names)) for k, (op, names) in DESIGNS.items()}

_ARRAYS = ("cutoff", "passband", "stopband", "bands", "desired", "weight", "freq", "gain")


def _show(v: Any) -> str:
    return json.dumps(json_types(v))


def _arr(v: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(v, dtype=float))


def _window_text(w: Any) -> Any:
    if isinstance(w, tuple):
        return ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in w)
    return w


def _fail(name: str | None, msg: str) -> FilterSpecError:
    return FilterSpecError(name, msg)


# -- the specification --------------------------------------------------------------


@dataclass(frozen=True)
class FilterSpec:
    """What to design, in Hz (immutable; change it with ``dataclasses.replace``).

    Fields that do not apply to ``design`` are ignored and reset to their
    defaults, so a GUI can switch ``design`` without clearing fields first.
    Construction validates everything that needs no sample rate and raises
    :class:`FilterSpecError` naming the field; :func:`design` checks the rest
    (Nyquist, stability).  See the module documentation for the fields of
    each design.
    """

    design: str
    btype: str = "lowpass"
    order: int | None = None
    cutoff: float | tuple[float, ...] | None = None
    passband: float | tuple[float, ...] | None = None
    stopband: float | tuple[float, ...] | None = None
    rp: float | None = None
    rs: float | None = None
    norm: str = "phase"
    frequency: float | None = None
    q: float | None = None
    kind: str = "notch"
    pass_zero: bool = False
    harmonics: int | None = None
    numtaps: int | None = None
    window: str | tuple = "hamming"
    width: float | None = None
    bands: tuple[float, ...] | None = None
    desired: tuple[float, ...] | None = None
    weight: tuple[float, ...] | None = None
    freq: tuple[float, ...] | None = None
    gain: tuple[float, ...] | None = None
    zero_phase: bool = False

    def __post_init__(self) -> None:
        d = DESIGN_PARAM.validate(self.design) if isinstance(self.design, str) else None
        if d is None:
            raise _fail("design", f"design={self.design!r} must be one of "
                                  f"{', '.join(DESIGNS)}")
        used = set(DESIGNS[d][1]) | {"zero_phase"}
        for f in dataclasses.fields(self):
            if f.name == "design":
                continue
            value = getattr(self, f.name)
            if f.name not in used:
                object.__setattr__(self, f.name, f.default)
                continue
            p = _P[f.name]
            if isinstance(value, list) and f.name == "window":
                value = tuple(value)
            if value is None and p.required:
                raise _fail(f.name, f"{f.name} is required for design {d!r}"
                            + (f" ({p.help})" if p.help else ""))
            if value is None and p.default is not None:
                value = p.default
            try:  # a given value is checked without "or None" in the message
                v = None if value is None else _P_GIVEN[f.name].validate(value)
            except InputError as exc:
                raise _fail(f.name, str(exc)) from None
            if f.name in _ARRAYS and v is not None:
                a = np.asarray(v, dtype=float)
                if a.ndim > 1:
                    raise _fail(f.name, f"{f.name}={_show(value)} must be a number or a "
                                        "list of numbers")
                if not np.all(np.isfinite(a)):
                    raise _fail(f.name, f"{f.name}={_show(value)} must be finite")
                v = float(a) if a.ndim == 0 else tuple(float(x) for x in a)
            elif f.name == "window" and isinstance(v, str):
                from ..spectral import parse_window
                try:
                    parse_window(v)
                except InputError as exc:
                    raise _fail("window", str(exc)) from None
            object.__setattr__(self, f.name, v)
        _check_spec(self)

    # -- JSON ------------------------------------------------------------------------
    @classmethod
    def from_params(cls, params: dict[str, Any]) -> FilterSpec:
        """From a pipeline ``filter`` step's params (unknown keys are errors)."""
        if not isinstance(params, dict):
            raise _fail(None, f"filter params must be an object, got {type(params).__name__}")
        if "design" not in params:
            raise _fail("design", f"parameter 'design' is required (one of "
                                  f"{', '.join(DESIGNS)})")
        try:
            d = DESIGN_PARAM.validate(params["design"])
        except InputError as exc:
            raise _fail("design", str(exc)) from None
        names = DESIGNS[d][1] + ("zero_phase",)
        for k in params:
            if k != "design" and k not in names:
                close = difflib.get_close_matches(k, list(names), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise _fail(k, f"unknown parameter {k!r}{hint} (parameters of {d}: "
                               f"{', '.join(names)})")
        for k in names:
            if _P[k].required and k not in params:
                p = _P[k]
                raise _fail(k, f"parameter {k!r} is required"
                               + (f" ({p.help})" if p.help else ""))
        kw = {k: params[k] for k in names if k in params}
        if isinstance(kw.get("window"), list):
            kw["window"] = tuple(kw["window"])
        return cls(d, **kw)

    def to_params(self) -> dict[str, Any]:
        """The pipeline ``filter`` step's params: JSON types, defaults left out."""
        out: dict[str, Any] = {"design": self.design}
        for name in DESIGNS[self.design][1] + ("zero_phase",):
            v = getattr(self, name)
            p = _P[name]
            if v is None or (not p.required and v == p.default):
                continue
            out[name] = _window_text(v) if name == "window" else json_types(v)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_params())

    @classmethod
    def from_json(cls, text: str) -> FilterSpec:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _fail(None, f"not a JSON filter spec: {exc.msg}") from None
        return cls.from_params(d)

    def values(self) -> dict[str, Any]:
        """Every field of this design (defaults filled in), plus design and zero_phase."""
        out = {"design": self.design, "zero_phase": self.zero_phase}
        for name in DESIGNS[self.design][1]:
            out[name] = getattr(self, name)
        return out

    # -- what it is --------------------------------------------------------------------
    @property
    def form(self) -> str:
        """"sos", "fir" or "comb" (see the module documentation)."""
        if self.design in FIR_DESIGNS:
            return "fir"
        return "comb" if self.design == "iircomb" else "sos"

    @property
    def min_order(self) -> bool:
        """True when the order (or FIR length) is derived from the tolerance."""
        if self.design in _ORD_OPS:
            return self.order is None
        return self.design in ("firwin", "remez") and self.numtaps is None

    def operators(self) -> list[str]:
        """Registry operators the design uses."""
        ops = [DESIGNS[self.design][0]]
        if self.min_order and self.design in _ORD_OPS:
            ops.append(_ORD_OPS[self.design])
        if self.min_order and self.design == "firwin":
            ops.append("kaiserord")
        return ops


def _need(spec: FilterSpec, *names: str, why: str) -> None:
    for n in names:
        if getattr(spec, n) is None:
            help_ = _P[n].help
            raise _fail(n, f"parameter {n!r} is required {why}"
                           + (f" ({help_})" if help_ else ""))


def _check_edges(spec: FilterSpec, name: str, multiband: bool = False) -> None:
    value = getattr(spec, name)
    if value is None:
        return
    a = _arr(value)
    band = spec.btype in ("bandpass", "bandstop")
    if multiband and band:
        ok = a.size >= 2 and a.size % 2 == 0
        want = "an even number of band edges [low, high, ...] in Hz"
    else:
        ok = a.size == (2 if band else 1)
        want = "two frequencies [low, high] in Hz" if band else "one frequency in Hz"
    if not ok:
        raise _fail(name, f"{name}={_show(value)} must be {want} for btype={spec.btype!r}")
    if np.any(a <= 0):
        raise _fail(name, f"{name}={_show(value)} must be > 0 Hz")
    if np.any(np.diff(a) <= 0):
        raise _fail(name, f"{name}={_show(value)} must be increasing [low, high]")


def _check_tolerance(spec: FilterSpec) -> None:
    """passband and stopband sizes and their order for the response type."""
    _check_edges(spec, "passband")
    _check_edges(spec, "stopband")
    if spec.passband is None or spec.stopband is None:
        return
    p, s = _arr(spec.passband), _arr(spec.stopband)
    bt = spec.btype
    ok = {"lowpass": lambda: s[0] > p[0], "highpass": lambda: s[0] < p[0],
          "bandpass": lambda: s[0] < p[0] and p[1] < s[1],
          "bandstop": lambda: p[0] < s[0] and s[1] < p[1]}[bt]()
    want = {"lowpass": "above the passband edge", "highpass": "below the passband edge",
            "bandpass": "outside the passband: stopband[0] < passband[0] < passband[1] < "
                        "stopband[1]",
            "bandstop": "inside the passband gap: passband[0] < stopband[0] < stopband[1] < "
                        "passband[1]"}[bt]
    if not ok:
        raise _fail("stopband", f"stopband={_show(spec.stopband)} Hz must lie {want} "
                                f"(passband={_show(spec.passband)} Hz, btype={bt!r})")


def _check_spec(spec: FilterSpec) -> None:
    d = spec.design
    for n in ("rp", "rs"):
        v = getattr(spec, n)
        if v is not None and v <= 0:
            raise _fail(n, f"{n}={v:g} dB must be > 0 dB")
    if d in NOTCH_DESIGNS:
        if spec.frequency <= 0:
            raise _fail("frequency", f"frequency={spec.frequency:g} must be > 0 Hz")
        if spec.q <= 0:
            raise _fail("q", f"q={spec.q:g} must be > 0")
        return
    if d in IIR_DESIGNS:
        _check_edges(spec, "cutoff")
        _check_tolerance(spec)
        if spec.order is None:
            if d == "bessel":
                raise _fail("order", "parameter 'order' is required (bessel has no "
                                     "minimum-order design; give order and cutoff)")
            if spec.cutoff is not None:
                raise _fail("order", "parameter 'order' is required with cutoff (or give "
                                     "passband, stopband, rp and rs for the minimum order)")
            _need(spec, "passband", "stopband", "rp", "rs", why="for the minimum order "
                  "(or give order and cutoff)")
            if spec.rs <= spec.rp:
                raise _fail("rs", f"rs={spec.rs:g} dB must be larger than rp={spec.rp:g} dB")
            return
        _need(spec, "cutoff", why="with order")
        if d in ("cheby1", "ellip"):
            _need(spec, "rp", why=f"for {d}")
        if d in ("cheby2", "ellip"):
            _need(spec, "rs", why=f"for {d}")
        return
    if d == "firwin":
        _check_edges(spec, "cutoff", multiband=True)
        _check_tolerance(spec)
        if spec.numtaps is None:
            if spec.cutoff is not None:
                raise _fail("numtaps", "parameter 'numtaps' is required with cutoff (or give "
                                       "passband, stopband and rs for a Kaiser design)")
            _need(spec, "passband", "stopband", "rs",
                  why="for a Kaiser design of minimum length (or give numtaps and cutoff)")
        else:
            _need(spec, "cutoff", why="with numtaps")
        return
    if d in ("remez", "firls"):
        if spec.numtaps is None and d == "firls":
            _need(spec, "numtaps", why="for firls")
        if spec.bands is not None or spec.desired is not None:
            _need(spec, "bands", "desired", why="for a band table")
            b, des = _arr(spec.bands), _arr(spec.desired)
            if b.size < 2 or b.size % 2 or np.any(np.diff(b) < 0) or np.any(b[1::2] <= b[::2]):
                raise _fail("bands", f"bands={_show(spec.bands)} must be increasing band "
                                     "edges in Hz, two per band")
            nb = b.size // 2
            if des.size not in ((nb, 2 * nb) if d == "firls" else (nb,)):
                want = "one per band" + (" or one per edge" if d == "firls" else "")
                raise _fail("desired", f"desired has {des.size} values; expected {want} "
                                       f"({nb} bands)")
            if spec.weight is not None and _arr(spec.weight).size != nb:
                raise _fail("weight", f"weight has {_arr(spec.weight).size} values; expected "
                                      f"one per band ({nb})")
            if spec.passband is not None or spec.stopband is not None:
                raise _fail("passband", "give either bands and desired, or passband and "
                                        "stopband, not both")
        else:
            _need(spec, "passband", "stopband", why="(or give bands and desired)")
            _check_tolerance(spec)
        if spec.numtaps is None:
            _need(spec, "rp", "rs", why="for the minimum length (or give numtaps)")
        if d == "firls" and spec.numtaps % 2 == 0:
            raise _fail("numtaps", f"numtaps={spec.numtaps} must be odd for firls")
        return
    if d == "firwin2":
        _need(spec, "numtaps", "freq", "gain", why="for firwin2")
        f, g = _arr(spec.freq), _arr(spec.gain)
        if f.size != g.size or f.size < 2:
            raise _fail("gain", f"gain has {g.size} values; expected one per frequency "
                                f"({f.size}, at least 2)")
        if f[0] != 0 or np.any(np.diff(f) < 0):
            raise _fail("freq", f"freq={_show(spec.freq)} must start at 0 Hz and not "
                                "decrease (and end at the Nyquist frequency)")


# -- design ---------------------------------------------------------------------------


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
    p, s = _arr(spec.passband).tolist(), _arr(spec.stopband).tolist()
    if spec.btype == "lowpass":
        return [0.0, p[0], s[0], nyq], [1.0, 0.0]
    if spec.btype == "highpass":
        return [0.0, s[0], p[0], nyq], [0.0, 1.0]
    if spec.btype == "bandpass":
        return [0.0, s[0], p[0], p[1], s[1], nyq], [0.0, 1.0, 0.0]
    return [0.0, p[0], s[0], s[1], p[1], nyq], [1.0, 0.0, 1.0]


def _band_table(spec: FilterSpec, nyq: float) -> tuple[list[float], list[float]]:
    if spec.bands is not None:
        return list(_arr(spec.bands)), list(_arr(spec.desired))
    return _edge_bands(spec, nyq)


@dataclass(frozen=True)
class Call:
    """One registry design call (also what the Python export writes, as scipy)."""

    op: str
    kwargs: dict[str, Any]


def _call(spec: FilterSpec, c: Call, fs: float, name: str | None) -> Any:
    try:
        return registry.call(c.op, backend="numpy", fs=fs, **c.kwargs)
    except InputError as exc:
        msg = str(exc)
        msg = msg[len(c.op) + 2:] if msg.startswith(c.op + ": ") else msg
        raise _fail(name, f"{spec.design}: {msg}") from None


def _check_nyquist(spec: FilterSpec, fs: float) -> None:
    nyq = fs / 2.0
    for name in ("cutoff", "frequency", "passband", "stopband", "width", "bands", "freq"):
        v = getattr(spec, name)
        if v is None or (name == "frequency" and spec.design == "notches"):
            continue
        a = _arr(v)
        ok = np.all(a <= nyq) if name in ("bands", "freq") else np.all(a < nyq)
        if not ok:
            raise _fail(name, f"{name}={_show(v)} Hz must be below the Nyquist frequency "
                              f"{nyq:g} Hz (sample rate {fs:g} Hz)")
    if spec.design == "notches" and not spec.frequency < nyq:
        raise _fail("frequency", f"frequency={spec.frequency:g} Hz must be below the "
                                 f"Nyquist frequency {nyq:g} Hz (sample rate {fs:g} Hz)")
    if spec.design == "firwin2" and _arr(spec.freq)[-1] != nyq:
        raise _fail("freq", f"freq={_show(spec.freq)} must end at the Nyquist frequency "
                            f"{nyq:g} Hz")


def design(spec: FilterSpec, fs: float) -> Design:
    """Design ``spec`` for sample rate ``fs`` (Hz).

    Raises
    ------
    FilterSpecError
        Naming the field: edges at or beyond Nyquist, a minimum order above
        :data:`MAX_ORDER`, an unstable result (``order``), etc.
    """
    if not isinstance(spec, FilterSpec):
        raise _fail(None, f"expected a FilterSpec, got {type(spec).__name__}")
    if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not (
            math.isfinite(fs) and fs > 0):
        raise _fail("fs", f"fs={fs!r} must be a positive sample rate in Hz")
    fs = float(fs)
    _check_nyquist(spec, fs)
    d = spec.design
    if d in IIR_DESIGNS:
        return _design_iir(spec, fs)
    if d in ("iirnotch", "iirpeak"):
        c = Call(d, {"w0": spec.frequency, "Q": spec.q, "output": "sos"})
        return _sos_design(spec, fs, np.asarray(_call(spec, c, fs, "q"), float), 2, (c,))
    if d == "notches":
        return _design_notches(spec, fs)
    if d == "iircomb":
        return _design_comb(spec, fs)
    return _design_fir(spec, fs)


def _design_iir(spec: FilterSpec, fs: float) -> Design:
    d = spec.design
    calls: list[Call] = []
    if spec.order is None:
        oc = Call(_ORD_OPS[d], {"wp": json_types(spec.passband), "ws": json_types(spec.stopband),
                                "gpass": spec.rp, "gstop": spec.rs})
        n, wn = _call(spec, oc, fs, "stopband")
        n = int(n)
        if n > MAX_ORDER:
            raise _fail("stopband", f"stopband={_show(spec.stopband)} Hz: meeting rp={spec.rp:g}"
                                    f" dB and rs={spec.rs:g} dB needs order {n} > {MAX_ORDER};"
                                    " widen the transition band or relax rp/rs")
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
    return _sos_design(spec, fs, sos, full, tuple(calls), culprit)


def _design_notches(spec: FilterSpec, fs: float) -> Design:
    nyq = fs / 2.0
    top = math.ceil(nyq / spec.frequency) - 1
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
    return _sos_design(spec, fs, sos, 2 * h, calls)


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
        sos = np.asarray(registry.call("tf2sos", b, backend="numpy", a=a), float)
        return _sos_design(spec, fs, sos, b.size - 1, (c,))
    if abs(a[-1] / a[0]) >= 1.0:
        raise _fail("q", f"q={spec.q:g}: the comb is unstable")
    return Design(spec, fs, "comb", None, b, a, b.size - 1, (c,))


def _sos_design(spec: FilterSpec | None, fs: float, sos: np.ndarray, order: int,
                calls: tuple[Call, ...], culprit: str = "order") -> Design:
    if sos.ndim != 2 or sos.shape[1] != 6 or sos.shape[0] == 0:
        raise _fail(culprit, f"the design gave sections shaped {sos.shape}, expected (n, 6)")
    if not np.all(np.isfinite(sos)):
        raise _fail(culprit, "the design gave non-finite coefficients; lower the order or "
                             "widen the band")
    d = Design(spec, fs, "sos", sos, None, None, order, calls)
    if d.max_pole_radius >= 1.0 - STABILITY_MARGIN:
        what = f"{culprit}={_show(getattr(spec, culprit, None))}: " if spec else ""
        where = "on or outside" if d.max_pole_radius >= 1.0 else "numerically on"
        raise _fail(culprit, f"{what}the designed filter is unstable (a pole {where} the "
                             "unit circle); lower the order or widen the band")
    return d


def _design_fir(spec: FilterSpec, fs: float) -> Design:
    d, nyq = spec.design, fs / 2.0
    pass_nyq = False
    if d == "firwin":
        if spec.numtaps is None:
            p, s = _arr(spec.passband), _arr(spec.stopband)
            width = float(np.min(np.abs(s - p)))
            cutoff = json_types((p + s) / 2.0)
            atten = spec.rs if spec.rp is None else max(spec.rs, -20 * math.log10(
                _delta_pass(spec.rp)))
            kc = Call("kaiserord", {"ripple": atten, "width": width / nyq})
            try:
                numtaps, beta = registry.call("kaiserord", backend="numpy", **kc.kwargs)
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
        cut = _arr(spec.cutoff)
        if cut.size > 2:  # multiband: scipy's bool form
            pass_zero: Any = spec.btype == "bandstop"
        else:
            pass_zero = spec.btype
        pass_nyq = spec.btype in ("highpass", "bandstop") or (cut.size > 2 and (
            (cut.size % 2 == 0) == (spec.btype == "bandstop")))
        if pass_nyq and spec.numtaps % 2 == 0:
            raise _fail("numtaps", f"numtaps={spec.numtaps} must be odd: a {spec.btype} FIR "
                                   "passes the Nyquist frequency")
        from ..spectral import parse_window
        c = Call("firwin", {"numtaps": spec.numtaps, "cutoff": json_types(spec.cutoff),
                            "window": parse_window(spec.window), "pass_zero": pass_zero,
                            "width": spec.width})
        b = _call(spec, c, fs, "cutoff")
        return Design(spec, fs, "fir", None, np.asarray(b, float), np.ones(1),
                      spec.numtaps - 1, (c,))
    if d == "firwin2":
        g = _arr(spec.gain)
        if spec.numtaps % 2 == 0 and g[-1] != 0:
            raise _fail("numtaps", f"numtaps={spec.numtaps} must be odd when the gain at "
                                   "Nyquist is not 0")
        from ..spectral import parse_window
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
        raise _fail(culprit, f"{culprit}={_show(getattr(spec, culprit))} Hz: the tolerance needs"
                             f" {n} taps > {MAX_NUMTAPS}; widen the transition band or relax "
                             "rp/rs")


# -- the designed filter ---------------------------------------------------------------


def _quad_roots(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Roots of rows ``c0 + c1 z^-1 + c2 z^-2`` as (roots shaped (n, 2), delays (n,)).

    Roots are in z; a missing root (degree < 2) is returned as 0 (no effect on
    the response's shape).  ``delays`` counts leading zero coefficients (pure
    delays z^-1).  Uses the cancellation-free form of the quadratic formula.
    """
    c = np.asarray(c, dtype=np.float64)
    c0, c1, c2 = c[:, 0], c[:, 1], c[:, 2]
    delays = np.where(c0 != 0, 0, np.where(c1 != 0, 1, 2)).astype(np.int64)
    disc = np.sqrt((c1 * c1 - 4 * c0 * c2).astype(complex))
    disc = np.where(c1 * disc.real >= 0, disc, -disc)
    qv = -0.5 * (c1 + disc)
    roots = np.zeros((c.shape[0], 2), complex)
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = (delays == 0) & (qv != 0)  # qv == 0: c1 == c2 == 0, both roots at 0
        roots[:, 0] = np.where(quad, qv / np.where(c0 != 0, c0, 1), 0)
        roots[:, 1] = np.where(quad, c2 / np.where(qv != 0, qv, 1), 0)
        lin = delays == 1
        roots[:, 0] = np.where(lin, -c2 / np.where(c1 != 0, c1, 1), roots[:, 0])
    return roots, delays


def _root_gd(roots: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Group delay (samples) of the factors ``1 - r e^{jt} e^{-jw}``, summed over roots.

    ``(r^2 - r cos u) / (1 - 2 r cos u + r^2)`` with ``u = t - w``, written with
    ``sin^2(u/2)`` so that it does not cancel: a root on the unit circle gives
    exactly 1/2 (its true value everywhere but at the root itself, where the
    phase jumps by pi), so zeros on the circle never make spikes or NaNs.
    """
    roots = np.ravel(roots)
    roots = roots[roots != 0]
    out = np.zeros(w.shape, np.float64)
    for k in range(0, roots.size, 64):  # bounded temporaries
        q = roots[k:k + 64, None]
        r, t = np.abs(q), np.angle(q)
        s2 = np.sin((t - w) / 2.0) ** 2
        num = r * ((r - 1.0) + 2.0 * s2)
        den = (1.0 - r) ** 2 + 4.0 * r * s2
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(den > 1e-300, num / den, 0.5)
        out += g.sum(axis=0)
    return out


@dataclass(frozen=True, eq=False)
class Design:
    """A designed filter for one sample rate.

    Attributes
    ----------
    spec : FilterSpec or None
        None for imported coefficients.
    sample_rate : float
    form : {"sos", "fir", "comb"}
    sos : ndarray (n_sections, 6) or None
        Second-order sections (``form == "sos"``).
    b, a : ndarray or None
        Taps (``"fir"``: ``a == [1]``) or the comb's sparse ``(b, a)``.
    order : int
        Filter order (IIR: of the whole filter, e.g. 8 for a 4th-order
        band-pass; FIR: ``numtaps - 1``).
    calls : tuple of Call
        The registry (scipy) calls that made it, with resolved arguments
        (minimum order, Kaiser beta): what the Python export writes.
    """

    spec: FilterSpec | None
    sample_rate: float
    form: str
    sos: np.ndarray | None
    b: np.ndarray | None
    a: np.ndarray | None
    order: int
    calls: tuple[Call, ...] = field(default=(), repr=False)

    # -- construction from coefficients ---------------------------------------------------
    @classmethod
    def from_coefficients(cls, fs: float, *, sos: Any = None, b: Any = None, a: Any = None,
                          z: Any = None, p: Any = None, k: Any = None,
                          spec: FilterSpec | None = None) -> Design:
        """A design from coefficients: SOS, numerator/denominator, or zeros/poles/gain."""
        import scipy.signal as ss
        if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not fs > 0:
            raise _fail("fs", f"fs={fs!r} must be a positive sample rate in Hz")
        fs = float(fs)
        if sos is not None:
            sos = np.atleast_2d(np.asarray(sos, dtype=float))
            if sos.ndim != 2 or sos.shape[1] != 6:
                raise _fail("sos", f"sos must be shaped (n_sections, 6), got {sos.shape}")
            if np.any(sos[:, 3] == 0):
                raise _fail("sos", "sos: a0 (column 4) must not be 0")
            order = 2 * sos.shape[0] if np.any(sos[:, [2, 5]] != 0) else sos.shape[0]
            return _sos_design(spec, fs, sos, order, (), "sos")
        if z is not None or p is not None:
            if z is None or p is None or k is None:
                raise _fail("zpk", "zeros, poles and gain are all needed")
            sos = ss.zpk2sos(np.atleast_1d(z), np.atleast_1d(p), float(np.real(k)))
            return _sos_design(spec, fs, np.asarray(sos, float), max(np.size(z), np.size(p)),
                               (), "poles")
        if b is None:
            raise _fail("coefficients", "give sos, b (and a), or z, p and k")
        b = np.atleast_1d(np.asarray(b, dtype=float))
        a = np.ones(1) if a is None else np.atleast_1d(np.asarray(a, dtype=float))
        if a.size == 0 or a[0] == 0:
            raise _fail("a", "a[0] must not be 0")
        a_t = np.trim_zeros(a, "b")
        if a_t.size == 1:
            return cls(spec, fs, "fir", None, b / a_t[0], np.ones(1), b.size - 1)
        nz = set(np.flatnonzero(b)) | set(np.flatnonzero(a))
        if a.size == b.size and a.size > 3 and nz <= {0, a.size - 1}:
            if abs(a[-1] / a[0]) >= 1:
                raise _fail("a", "the comb filter is unstable")
            return cls(spec, fs, "comb", None, b, a, b.size - 1)
        sos = ss.tf2sos(b, a)
        return _sos_design(spec, fs, np.asarray(sos, float), max(a.size, b.size) - 1, (), "a")

    # -- what it is ------------------------------------------------------------------
    @property
    def sections(self) -> int:
        """Second-order sections (FIR: 0; comb: the N/2 it would need)."""
        if self.form == "sos":
            return int(self.sos.shape[0])
        return 0 if self.form == "fir" else (self.order + 1) // 2

    @property
    def numtaps(self) -> int | None:
        return int(self.b.size) if self.form == "fir" else None

    @property
    def zero_phase(self) -> bool:
        return bool(self.spec.zero_phase) if self.spec is not None else False

    @property
    def coefficients(self) -> dict[str, np.ndarray]:
        """``{"sos": ...}``, ``{"b": ...}`` (FIR) or ``{"b": ..., "a": ...}`` (comb)."""
        if self.form == "sos":
            return {"sos": self.sos}
        if self.form == "fir":
            return {"b": self.b}
        return {"b": self.b, "a": self.a}

    def ba(self) -> tuple[np.ndarray, np.ndarray]:
        """Numerator and denominator (for SOS: multiplied out; ill-conditioned when long)."""
        if self.form == "sos":
            import scipy.signal as ss
            b, a = ss.sos2tf(self.sos)
            return np.asarray(b, float), np.asarray(a, float)
        return self.b, self.a

    @cached_property
    def _section_roots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        zr, zd = _quad_roots(self.sos[:, :3])
        pr, pd = _quad_roots(self.sos[:, 3:])
        return zr, zd, pr, pd

    @cached_property
    def zpk(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """Zeros, poles and gain (None for an FIR longer than ``MAX_FIR_ROOTS``)."""
        if self.form == "sos":
            zr, zd, pr, pd = self._section_roots
            s = self.sos
            z_count = np.where(zd == 0, np.where(s[:, 2] != 0, 2, np.where(s[:, 1] != 0, 1, 0)),
                               np.where(zd == 1, np.where(s[:, 2] != 0, 1, 0), 0))
            p_count = np.where(pd == 0, np.where(s[:, 5] != 0, 2, np.where(s[:, 4] != 0, 1, 0)),
                               np.where(pd == 1, np.where(s[:, 5] != 0, 1, 0), 0))
            zeros = np.concatenate([zr[i, :z_count[i]] for i in range(len(s))])
            poles = np.concatenate([pr[i, :p_count[i]] for i in range(len(s))])
            lead_b = s[np.arange(len(s)), np.minimum(zd, 2)] if np.all(zd < 3) else s[:, 0]
            lead_a = s[np.arange(len(s)), 3 + np.minimum(pd, 2)]
            k = float(np.prod(lead_b / lead_a))
            return zeros, poles, k
        if self.form == "comb":
            n = self.order
            b0, bn, an = self.b[0] / self.a[0], self.b[-1] / self.a[0], self.a[-1] / self.a[0]
            ang = 2 * np.pi * np.arange(n) / n

            def ring(c: float) -> np.ndarray:  # the N roots of z^N = c
                return abs(c) ** (1.0 / n) * np.exp(1j * (np.angle(c) / n + ang))
            zeros = ring(-bn / b0) if b0 != 0 else np.zeros(0, complex)
            return zeros, ring(-an), float(b0)
        b = np.trim_zeros(self.b, "f")
        if b.size > MAX_FIR_ROOTS:
            return None
        if b.size <= 1:
            return np.zeros(0, complex), np.zeros(0, complex), float(b[0]) if b.size else 0.0
        return np.roots(b), np.zeros(0, complex), float(b[0])

    @cached_property
    def max_pole_radius(self) -> float:
        if self.form == "fir":
            return 0.0
        if self.form == "comb":
            return abs(self.a[-1] / self.a[0]) ** (1.0 / self.order)
        _, _, pr, _ = self._section_roots
        return float(np.max(np.abs(pr))) if pr.size else 0.0

    @property
    def stable(self) -> bool:
        """All poles strictly inside the unit circle."""
        return self.max_pole_radius < 1.0

    @cached_property
    def minimum_phase(self) -> bool | None:
        """All zeros on or inside the unit circle (None: FIR too long to factor)."""
        if self.form == "fir" and _linear_phase(self.b) and self.b.size > MAX_FIR_ROOTS:
            return False  # reciprocal zero pairs off the circle: not minimum phase
        zpk = self.zpk
        if zpk is None:
            return None
        return bool(np.all(np.abs(zpk[0]) <= 1.0 + 1e-9))

    @cached_property
    def delay_samples(self) -> float:
        """Delay shown for the filter, in samples (zero-phase: 0).

        Linear-phase FIR: ``(numtaps - 1) / 2``; otherwise the group delay at
        the centre of the passband (0 Hz for low-pass, band-stop and notches,
        Nyquist for high-pass, the geometric centre of a band-pass).
        """
        if self.zero_phase:
            return 0.0
        if self.form == "fir" and _linear_phase(self.b):
            return (self.b.size - 1) / 2.0
        f = self.reference_frequency
        return float(_group_delay(self, np.array([2 * np.pi * f / self.sample_rate]))[0])

    @property
    def delay_s(self) -> float:
        return self.delay_samples / self.sample_rate

    @property
    def reference_frequency(self) -> float:
        """Where the delay is measured (Hz)."""
        s, nyq = self.spec, self.sample_rate / 2
        if s is None:
            return 0.0
        edges = s.passband if s.passband is not None else s.cutoff
        if s.design == "iirpeak":
            return float(s.frequency)
        if s.btype == "highpass" and s.design in IIR_DESIGNS + ("firwin", "remez", "firls"):
            return nyq
        if s.btype == "bandpass" and edges is not None and np.size(edges) >= 2:
            e = _arr(edges)
            return float(math.sqrt(e[0] * e[1]))
        return 0.0

    @cached_property
    def settle(self) -> int:
        """Samples after which the impulse response keeps <= SETTLE_TOL of its L1 norm."""
        if self.form == "fir":
            return int(self.b.size) - 1
        return impulse_settle(self.impulse_response)

    def impulse_response(self, n: int) -> np.ndarray:
        """The first ``n`` samples of the causal (one-pass) impulse response."""
        imp = np.zeros(n)
        if n:
            imp[0] = 1.0
        if self.form == "sos":
            import scipy.signal as ss
            return ss.sosfilt(self.sos, imp)
        if self.form == "fir":
            out = np.zeros(n)
            m = min(n, self.b.size)
            out[:m] = self.b[:m]
            return out
        # comb: b0 + (bN - aN b0) v / (1 + aN v), v = z^-N: h[mN] = c (-aN)^(m-1)
        nn = self.order
        b0, bn, an = self.b[0] / self.a[0], self.b[-1] / self.a[0], self.a[-1] / self.a[0]
        out = np.zeros(n)
        if n:
            out[0] = b0
        m = np.arange(1, (n - 1) // nn + 1)
        out[m * nn] = (bn - an * b0) * (-an) ** (m - 1)
        return out

    def display_length(self, tol: float = 1e-6, cap: int = 1 << 14) -> int:
        """Samples of impulse response worth showing (decayed to ``tol``)."""
        if self.form == "fir":
            return int(self.b.size) + 16
        r = self.max_pole_radius
        if r <= 0:
            return 64
        n = math.log(tol) / math.log(r) if r < 1 else cap
        # repeated poles decay as n^k r^n: pad by the order
        return int(min(cap, max(64, 1.5 * n + 8 * min(self.order, 64))))


def _linear_phase(b: np.ndarray) -> bool:
    tol = 1e-12 * max(1e-300, float(np.max(np.abs(b)))) if b.size else 0.0
    return bool(b.size and (np.all(np.abs(b - b[::-1]) <= tol)
                            or np.all(np.abs(b + b[::-1]) <= tol)))


def impulse_settle(apply: Callable[[int], np.ndarray], tol: float = SETTLE_TOL) -> int:
    """Samples after which an impulse response keeps at most ``tol`` of its L1 norm.

    ``apply(n)`` returns the first ``n`` samples of the impulse response.
    Raises :class:`InputError` for an unstable filter or one that does not
    settle within 2**24 samples.
    """
    n = 4096
    while True:
        h = np.abs(apply(n))
        if not np.all(np.isfinite(h)):
            raise InputError("the designed filter is unstable")
        total = float(h.sum())
        tail = np.cumsum(h[::-1])[::-1]
        if total > 0 and tail[-max(1, n // 8)] <= tol * total:
            return int(np.argmax(tail <= tol * total))
        if total == 0:
            return 0
        if n >= _MAX_SETTLE:
            raise InputError(f"the designed filter does not settle within {_MAX_SETTLE} "
                             "samples (unstable or too narrow)")
        n *= 4


# -- analysis -------------------------------------------------------------------------


def _poly_response(c: np.ndarray, w: np.ndarray, uniform_n: int | None) -> np.ndarray:
    """``sum c[i] e^{-j w i}``; FFT when ``w`` is the uniform grid of ``uniform_n`` points."""
    nz = np.flatnonzero(c)
    if nz.size <= 32:
        return np.exp(-1j * np.outer(w, nz)) @ c[nz]
    if uniform_n is not None and c.size <= 2 * (uniform_n - 1):
        return np.fft.rfft(c, 2 * (uniform_n - 1))
    out = np.zeros(w.shape, complex)
    zinv = np.exp(-1j * w)
    for coef in c[::-1]:  # Horner in z^-1
        out = out * zinv + coef
    return out


def _response(d: Design, w: np.ndarray, uniform_n: int | None = None) -> np.ndarray:
    """The one-pass (causal) complex response at ``w`` (rad/sample)."""
    if d.form == "sos":
        z1 = np.exp(-1j * w)
        z2 = z1 * z1
        s = d.sos
        num = s[:, 0, None] + s[:, 1, None] * z1 + s[:, 2, None] * z2
        den = s[:, 3, None] + s[:, 4, None] * z1 + s[:, 5, None] * z2
        return np.prod(num / den, axis=0)
    if d.form == "fir":
        return _poly_response(d.b, w, uniform_n)
    zn = np.exp(-1j * d.order * w)
    return (d.b[0] + d.b[-1] * zn) / (d.a[0] + d.a[-1] * zn)


def _group_delay(d: Design, w: np.ndarray) -> np.ndarray:
    """One-pass group delay in samples, from the sections (see :func:`_root_gd`)."""
    if d.form == "sos":
        zr, zd, pr, pd = d._section_roots
        return float(np.sum(zd) - np.sum(pd)) + _root_gd(zr, w) - _root_gd(pr, w)
    if d.form == "comb":
        n = d.order
        b0, bn, an = d.b[0], d.b[-1], d.a[-1] / d.a[0]
        q = -bn / b0 if b0 != 0 else 0.0
        gd = _root_gd(np.array([q]), n * w) - _root_gd(np.array([-an]), n * w)
        return n * gd + (n if b0 == 0 else 0)
    b = d.b
    if _linear_phase(b):
        return np.full(w.shape, (b.size - 1) / 2.0)
    n = np.arange(b.size)
    B = _poly_response(b, w, None)
    nB = _poly_response(n * b, w, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.real(nB / B)
    small = np.abs(B) < 1e-10 * max(1e-300, float(np.max(np.abs(B))))
    return np.where(small, np.nan, g)


@dataclass(frozen=True, eq=False)
class Analysis:
    """Every analysis view of a design, computed on first access (the GUI pays for what it shows).

    Frequencies ``f`` are ``n`` points from 0 to Nyquist inclusive (Hz).
    Responses are those *applied*: for zero-phase designs the forward-backward
    response ``|H|**2`` with zero phase and zero group delay.
    """

    design: Design
    n: int = 2048

    @cached_property
    def f(self) -> np.ndarray:
        return np.linspace(0.0, self.design.sample_rate / 2.0, self.n)

    @cached_property
    def w(self) -> np.ndarray:
        return np.linspace(0.0, np.pi, self.n)

    @cached_property
    def h(self) -> np.ndarray:
        """Complex response (applied)."""
        h = _response(self.design, self.w, self.n)
        if self.design.zero_phase:
            return (np.abs(h) ** 2).astype(complex)
        return h

    @cached_property
    def magnitude(self) -> np.ndarray:
        return np.abs(self.h)

    @cached_property
    def magnitude_db(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.maximum(20.0 * np.log10(self.magnitude), -400.0)

    @cached_property
    def phase(self) -> np.ndarray:
        """Wrapped phase (rad)."""
        return np.angle(self.h)

    @cached_property
    def phase_unwrapped(self) -> np.ndarray:
        return np.unwrap(self.phase)

    @cached_property
    def group_delay(self) -> np.ndarray:
        """Group delay in samples (computed from the sections, robust at zeros)."""
        if self.design.zero_phase:
            return np.zeros(self.n)
        return _group_delay(self.design, self.w)

    @property
    def group_delay_s(self) -> np.ndarray:
        return self.group_delay / self.design.sample_rate

    @cached_property
    def zpk(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """Zeros, poles, gain of the one-pass filter (None: FIR too long to factor)."""
        return self.design.zpk

    @cached_property
    def impulse(self) -> tuple[np.ndarray, np.ndarray]:
        """(t in s, h): causal, or for zero-phase the two-sided forward-backward response."""
        d = self.design
        n = d.display_length()
        h = d.impulse_response(n)
        if d.zero_phase:
            h = np.convolve(h, h[::-1])
            k = np.arange(-(n - 1), n)
            return k / d.sample_rate, h
        return np.arange(n) / d.sample_rate, h

    @cached_property
    def step(self) -> tuple[np.ndarray, np.ndarray]:
        t, h = self.impulse
        return t, np.cumsum(h)

    def compute_all(self) -> Analysis:
        """Compute every view now (a worker thread can do this before handing it over)."""
        for name in ("magnitude_db", "phase_unwrapped", "group_delay", "zpk", "step"):
            getattr(self, name)
        return self


def analyze(d: Design, n: int = 2048) -> Analysis:
    """The analysis views of a design on ``n`` frequencies (lazy; see :class:`Analysis`)."""
    if not isinstance(n, numbers.Integral) or n < 2:
        raise _fail("n", f"n={n!r} must be a whole number >= 2")
    return Analysis(d, int(n))


# -- specification verdict ---------------------------------------------------------------


@dataclass(frozen=True)
class BandCheck:
    """One tolerance band and how the response sits in it (dB; margin < 0: violated)."""

    kind: str        # "pass" or "stop"
    f0: float
    f1: float
    lo_db: float     # -inf for stopbands
    hi_db: float
    worst_db: float  # the response value that comes closest to (or beyond) a limit
    worst_hz: float
    margin_db: float

    @property
    def passed(self) -> bool:
        return self.margin_db >= -VERDICT_TOL_DB


@dataclass(frozen=True)
class Verdict:
    """Pass/fail of a design against its tolerance bands.

    ``passed`` is None when the spec sets no tolerance (nothing to check);
    ``worst`` is the band with the smallest margin.
    """

    bands: tuple[BandCheck, ...]

    @property
    def passed(self) -> bool | None:
        return None if not self.bands else all(b.passed for b in self.bands)

    @property
    def worst(self) -> BandCheck | None:
        return min(self.bands, key=lambda b: b.margin_db) if self.bands else None

    def text(self) -> str:
        w = self.worst
        if w is None:
            return "no tolerance to check"
        state = "meets the specification" if self.passed else "misses the specification"
        return (f"{state}: worst margin {w.margin_db:+.2f} dB at {w.worst_hz:g} Hz "
                f"({w.kind}band {w.f0:g}-{w.f1:g} Hz)")


def tolerance_bands(spec: FilterSpec, fs: float) -> list[tuple[str, float, float, float, float]]:
    """``(kind, f0, f1, lo_db, hi_db)`` of each tolerance band (what the plot draws)."""
    nyq = fs / 2.0
    out = []
    if spec.design in ("remez", "firls") and spec.bands is not None:
        b, des = _arr(spec.bands), _arr(spec.desired)
        for i in range(b.size // 2):
            g = des[i] if des.size == b.size // 2 else des[2 * i]
            if g > 0 and spec.rp is not None:
                ref = 20 * math.log10(g)
                out.append(("pass", b[2 * i], b[2 * i + 1], ref - spec.rp, ref + spec.rp))
            elif g == 0 and spec.rs is not None:
                out.append(("stop", b[2 * i], b[2 * i + 1], -math.inf, -spec.rs))
        return out
    if spec.btype not in BTYPES or "passband" not in DESIGNS[spec.design][1]:
        return out
    if spec.passband is not None and spec.rp is not None:
        p = _arr(spec.passband).tolist()
        spans = {"lowpass": [(0.0, p[0])], "highpass": [(p[0], nyq)],
                 "bandpass": [(p[0], p[-1])], "bandstop": [(0.0, p[0]), (p[-1], nyq)]}
        out += [("pass", a, b, -spec.rp, spec.rp) for a, b in spans[spec.btype]]
    if spec.stopband is not None and spec.rs is not None:
        s = _arr(spec.stopband).tolist()
        spans = {"lowpass": [(s[0], nyq)], "highpass": [(0.0, s[0])],
                 "bandpass": [(0.0, s[0]), (s[-1], nyq)], "bandstop": [(s[0], s[-1])]}
        out += [("stop", a, b, -math.inf, -spec.rs) for a, b in spans[spec.btype]]
    return out


def verify(d: Design, spec: FilterSpec | None = None, analysis: Analysis | None = None
           ) -> Verdict:
    """Check the applied response against the tolerance of ``spec`` (default: the design's).

    The response is evaluated on the analysis grid (``analysis``, or 2048
    points) plus exactly at every band edge.
    """
    spec = spec if spec is not None else d.spec
    if spec is None:
        return Verdict(())
    bands = tolerance_bands(spec, d.sample_rate)
    if not bands:
        return Verdict(())
    a = analysis if analysis is not None else analyze(d)
    fs = d.sample_rate
    edges = np.array(sorted({x for _, f0, f1, _, _ in bands for x in (f0, f1)}))
    he = _response(d, 2 * np.pi * edges / fs)
    if d.zero_phase:
        he = np.abs(he) ** 2
    with np.errstate(divide="ignore"):
        edge_db = 20 * np.log10(np.abs(he))
    f_all = np.concatenate([a.f, edges])
    db_all = np.concatenate([a.magnitude_db, edge_db])
    checks = []
    for kind, f0, f1, lo, hi in bands:
        sel = (f_all >= f0 - 1e-9 * fs) & (f_all <= f1 + 1e-9 * fs)
        f_in, db_in = f_all[sel], db_all[sel]
        m = np.minimum(db_in - lo, hi - db_in) if kind == "pass" else hi - db_in
        i = int(np.argmin(m))
        checks.append(BandCheck(kind, float(f0), float(f1), float(lo), float(hi),
                                float(db_in[i]), float(f_in[i]), float(m[i])))
    return Verdict(tuple(checks))


# -- helpers for the GUI ---------------------------------------------------------------


def notch_from_click(frequency: float, fs: float, *, q: float = 30.0,
                     harmonics: int | str | None = None, zero_phase: bool = False
                     ) -> FilterSpec:
    """A spec that removes the spectral line clicked at ``frequency`` Hz.

    ``harmonics``: None for one notch; an int N for the harmonics 1..N (those
    below Nyquist); ``"nyquist"`` for every harmonic below Nyquist.  All
    harmonics up to Nyquist of a frequency that divides ``fs`` give scipy's
    comb (``iircomb``: one cheap recursion; it also removes DC), otherwise a
    cascade of notches (``notches``), each ``frequency / q`` Hz wide.
    """
    if isinstance(frequency, bool) or not isinstance(frequency, numbers.Real) or not (
            0 < frequency < fs / 2):
        raise _fail("frequency", f"frequency={frequency!r} must be between 0 Hz and the "
                                 f"Nyquist frequency {fs / 2:g} Hz")
    f = float(frequency)
    if harmonics is None:
        return FilterSpec("iirnotch", frequency=f, q=q, zero_phase=zero_phase)
    if harmonics == "nyquist":
        ratio = fs / f
        if abs(ratio - round(ratio)) <= 1e-9 * ratio and round(ratio) >= 4:
            return FilterSpec("iircomb", frequency=f, q=q, zero_phase=zero_phase)
        return FilterSpec("notches", frequency=f, q=q, zero_phase=zero_phase)
    if isinstance(harmonics, bool) or not isinstance(harmonics, numbers.Integral) or \
            harmonics < 1:
        raise _fail("harmonics", f"harmonics={harmonics!r} must be None, 'nyquist' or a "
                                 "whole number >= 1")
    return FilterSpec("notches", frequency=f, q=q, harmonics=int(harmonics),
                      zero_phase=zero_phase)


class BlockFilter:
    """``f(x, fs)`` applying a design to an independent block (for the tile engine).

    ``context = (before, after)`` is how many samples the block needs around
    it so that the output in the block is settled (IIR: to ``tol`` of the
    impulse response's L1 norm; FIR: exact).  Pass it as the tile engine's
    ``pipeline_context``.
    """

    def __init__(self, d: Design, tol: float = 1e-7) -> None:
        import scipy.signal as ss
        self.design = d
        self._ss = ss
        if d.form == "fir":
            reach = d.b.size - 1
        else:
            reach = impulse_settle(d.impulse_response, tol)
        self.context = (reach, reach if d.zero_phase else 0)

    def __call__(self, x: np.ndarray, fs: float) -> np.ndarray:
        ss, d = self._ss, self.design
        if d.zero_phase:
            if d.form == "sos":
                return ss.sosfiltfilt(d.sos, x)
            return ss.filtfilt(d.b, d.a, x)
        if d.form == "sos":
            return ss.sosfilt(d.sos, x)
        if d.form == "fir":
            return ss.oaconvolve(x, d.b)[:x.shape[0]] if d.b.size > 64 else \
                ss.lfilter(d.b, 1.0, x)
        return _comb_filter(d.b, d.a, x)


def _comb_filter(b: np.ndarray, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``lfilter(b, a, x)`` for the sparse comb, as N first-order recursions."""
    import scipy.signal as ss
    n = b.size - 1
    L = x.shape[0]
    m = -(-L // n)
    pad = np.zeros(m * n, np.result_type(x.dtype, np.float64))
    pad[:L] = x
    rows = pad.reshape(m, n)
    y = ss.lfilter([b[0] / a[0], b[-1] / a[0]], [1.0, a[-1] / a[0]], rows, axis=0)
    return y.reshape(-1)[:L]


def block_filter(spec: FilterSpec | Design, fs: float | None = None, tol: float = 1e-7
                 ) -> BlockFilter:
    """A :class:`BlockFilter` for a spec (designed for ``fs``) or a design."""
    d = spec if isinstance(spec, Design) else design(spec, fs)
    return BlockFilter(d, tol)


def field_schema(design_name: str) -> list[dict[str, Any]]:
    """The parameters of a design, as form schemas (``Param.to_dict()``), ``zero_phase`` last.

    What a generated form shows for one design; unknown names raise
    :class:`FilterSpecError` naming ``design``.
    """
    if design_name not in DESIGNS:
        raise _fail("design", f"design={design_name!r} must be one of {', '.join(DESIGNS)}")
    names = [n for n in DESIGNS[design_name][1] if n != "zero_phase"] + ["zero_phase"]
    return [_P[n].to_dict() for n in names]
