"""Filter specifications: what to design, in Hz, and the parameter table behind it.

A :class:`FilterSpec` is a frozen dataclass whose :meth:`~FilterSpec.to_params`
is exactly the ``params`` of a pipeline ``filter`` step (frequencies in Hz; no
sample rate in it).  ``design`` selects the method:

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
            ``pass_zero``: scipy's comb, kept as ``(b, a)``
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
magnitude plot and checked by :func:`~specscope.compute.filters.verify`:
passband gain within ``[-rp, +rp]`` dB, stopband gain at most ``-rs`` dB.
``zero_phase`` filters forwards and backwards: the applied response is
``|H|**2`` with zero phase and zero delay.

Every impossible specification raises :class:`FilterSpecError`, an
:class:`~specscope.compute.errors.InputError` whose one-line message starts
with the field (``cutoff=[300.0, 5000.0] Hz must be below the Nyquist
frequency ...``) and whose ``field`` attribute names it, so a GUI can show it
next to that field and keep the last valid design.  :func:`field_schema` gives
the parameters of one design as form schemas.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import jsonsafe
from ..errors import InputError
from ..params import REQUIRED, Param, json_types
from ..spectral import parse_window
from ..types import (
    BesselNorm,
    Btype,
    CombKind,
    FilterDesign,
    FirDesign,
    IirDesign,
    NotchDesign,
    choices,
)

__all__ = [
    "BTYPES",
    "DESIGNS",
    "DESIGN_PARAM",
    "FILTER_DESIGNS",
    "FIR_DESIGNS",
    "IIR_DESIGNS",
    "MAX_NUMTAPS",
    "MAX_ORDER",
    "MIN_ORDER_OPS",
    "NOTCH_DESIGNS",
    "FilterSpec",
    "FilterSpecError",
    "field_array",
    "field_schema",
    "field_text",
]

#: highest IIR order designed (higher orders lose stability in float64)
MAX_ORDER = 64
#: longest FIR designed
MAX_NUMTAPS = 1 << 16

BTYPES = choices(Btype)
IIR_DESIGNS = choices(IirDesign)
FIR_DESIGNS = choices(FirDesign)
NOTCH_DESIGNS = choices(NotchDesign)
#: IIR design -> the registry operator that finds its minimum order
MIN_ORDER_OPS = {"butter": "buttord", "cheby1": "cheb1ord", "cheby2": "cheb2ord",
                 "ellip": "ellipord"}


#: largest filter spec file read (a spec is a few lines)
MAX_SPEC_BYTES = 1 << 20


class FilterSpecError(InputError):
    """An impossible or incomplete specification; ``field`` names the culprit.

    Parameters
    ----------
    field_name : str or None
        The field at fault (kept as ``field``); None when no one field is.
    message : str
        One line, starting with the field.
    """

    def __init__(self, field_name: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field_name


#: the error of every impossible specification (a short name for the checks below)
_fail = FilterSpecError


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
    Param("norm", str, "phase", choices=choices(BesselNorm)),
    Param("frequency", float, REQUIRED, min=0.0, unit="Hz", help="centre frequency"),
    Param("q", float, REQUIRED, min=0.0, help="quality factor: frequency / bandwidth"),
    Param("kind", str, "notch", choices=choices(CombKind)),
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
DESIGN_PARAM = Param("design", str, REQUIRED, choices=choices(FilterDesign))
#: design -> (registry operator, Params): the pipeline filter step's schema
FILTER_DESIGNS: dict[str, tuple[str, tuple[Param, ...]]] = {
    k: (op, tuple(_P[n] for n in names)) for k, (op, names) in DESIGNS.items()}

_ARRAYS = ("cutoff", "passband", "stopband", "bands", "desired", "weight", "freq", "gain")


def field_text(v: Any) -> str:
    """A field value as JSON text, for messages.

    Parameters
    ----------
    v : object
        A field value (number, tuple, array, string).

    Returns
    -------
    str
        Its JSON text.

    Examples
    --------
    >>> field_text((300.0, 3000.0))
    '[300.0, 3000.0]'
    """
    return json.dumps(json_types(v))


def field_array(v: Any) -> np.ndarray:
    """A frequency field (one number or several) as a 1-D float array.

    Parameters
    ----------
    v : float or sequence of float
        The field value.

    Returns
    -------
    numpy.ndarray
        The values, 1-D, float64.

    Examples
    --------
    >>> field_array(50.0)
    array([50.])
    """
    return np.atleast_1d(np.asarray(v, dtype=float))


def _window_text(w: Any) -> Any:
    if isinstance(w, tuple):
        return ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in w)
    return w


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

    Parameters
    ----------
    design : str
        The design method, a key of :data:`DESIGNS`.
    btype : str
        ``"lowpass"``, ``"highpass"``, ``"bandpass"`` or ``"bandstop"``.
    order : int, optional
        IIR order (None: the minimum order meeting the tolerance).
    cutoff : float or tuple of float, optional
        Cut-off frequency, or ``(low, high)`` for band filters (Hz).
    passband, stopband : float or tuple of float, optional
        Passband and stopband edges (Hz): the tolerance, and the minimum-order design.
    rp : float, optional
        Passband ripple (dB).
    rs : float, optional
        Stopband attenuation (dB).
    norm : str
        Bessel normalisation: ``"phase"``, ``"delay"`` or ``"mag"``.
    frequency : float, optional
        Centre frequency of a notch, peak or comb (Hz).
    q : float, optional
        Quality factor: frequency / bandwidth.
    kind : str
        Comb type: ``"notch"`` or ``"peak"``.
    pass_zero : bool
        Whether the comb passes 0 Hz.
    harmonics : int, optional
        Notch harmonics 1..N (None: up to Nyquist).
    numtaps : int, optional
        FIR length (None: the minimum length meeting the tolerance).
    window : str or tuple
        Window name, or ``(name, parameter)``.
    width : float, optional
        Transition width of a Kaiser FIR (Hz).
    bands : tuple of float, optional
        Band edges, two per band (Hz).
    desired : tuple of float, optional
        Gain per band.
    weight : tuple of float, optional
        Weight per band.
    freq : tuple of float, optional
        Frequencies of the ``firwin2`` gain table (Hz), from 0 to Nyquist.
    gain : tuple of float, optional
        Gains at ``freq``.
    zero_phase : bool
        Filter forwards and backwards (applied response ``|H|**2``).

    Raises
    ------
    FilterSpecError
        If a field is missing, out of range or inconsistent; ``field`` names it.
    """

    design: FilterDesign
    btype: Btype = "lowpass"
    order: int | None = None
    cutoff: float | tuple[float, ...] | None = None
    passband: float | tuple[float, ...] | None = None
    stopband: float | tuple[float, ...] | None = None
    rp: float | None = None
    rs: float | None = None
    norm: BesselNorm = "phase"
    frequency: float | None = None
    q: float | None = None
    kind: CombKind = "notch"
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
                    raise _fail(f.name, f"{f.name}={field_text(value)} must be a number or a "
                                        "list of numbers")
                if not np.all(np.isfinite(a)):
                    raise _fail(f.name, f"{f.name}={field_text(value)} must be finite")
                v = float(a) if a.ndim == 0 else tuple(float(x) for x in a)
            elif f.name == "window" and isinstance(v, str):
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
    def from_json(cls, text: str | bytes, where: str = "spec") -> FilterSpec:
        """From JSON text, read within the limits of :mod:`~specscope.compute.jsonsafe`."""
        return cls.from_params(jsonsafe.loads(text, where, what="JSON filter spec",
                                              max_bytes=MAX_SPEC_BYTES))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FilterSpec:
        """Read a filter spec file (JSON); every problem is one line naming the file."""
        p = Path(path)
        doc = jsonsafe.load_file(p, what="JSON filter spec", max_bytes=MAX_SPEC_BYTES)
        try:
            return cls.from_params(doc)
        except InputError as exc:
            raise InputError(f"{p.name}: {exc}") from None

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
        if self.design in MIN_ORDER_OPS:
            return self.order is None
        return self.design in ("firwin", "remez") and self.numtaps is None

    def operators(self) -> list[str]:
        """Registry operators the design uses."""
        ops = [DESIGNS[self.design][0]]
        if self.min_order and self.design in MIN_ORDER_OPS:
            ops.append(MIN_ORDER_OPS[self.design])
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
    a = field_array(value)
    band = spec.btype in ("bandpass", "bandstop")
    if multiband and band:
        ok = a.size >= 2 and a.size % 2 == 0
        want = "an even number of band edges [low, high, ...] in Hz"
    else:
        ok = a.size == (2 if band else 1)
        want = "two frequencies [low, high] in Hz" if band else "one frequency in Hz"
    if not ok:
        raise _fail(name, f"{name}={field_text(value)} must be {want} for btype={spec.btype!r}")
    if np.any(a <= 0):
        raise _fail(name, f"{name}={field_text(value)} must be > 0 Hz")
    if np.any(np.diff(a) <= 0):
        raise _fail(name, f"{name}={field_text(value)} must be increasing [low, high]")


def _check_tolerance(spec: FilterSpec) -> None:
    """passband and stopband sizes and their order for the response type."""
    _check_edges(spec, "passband")
    _check_edges(spec, "stopband")
    if spec.passband is None or spec.stopband is None:
        return
    p, s = field_array(spec.passband), field_array(spec.stopband)
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
        raise _fail("stopband", f"stopband={field_text(spec.stopband)} Hz must lie {want} "
                                f"(passband={field_text(spec.passband)} Hz, btype={bt!r})")


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
            b, des = field_array(spec.bands), field_array(spec.desired)
            if b.size < 2 or b.size % 2 or np.any(np.diff(b) < 0) or np.any(b[1::2] <= b[::2]):
                raise _fail("bands", f"bands={field_text(spec.bands)} must be increasing band "
                                     "edges in Hz, two per band")
            nb = b.size // 2
            if des.size not in ((nb, 2 * nb) if d == "firls" else (nb,)):
                want = "one per band" + (" or one per edge" if d == "firls" else "")
                raise _fail("desired", f"desired has {des.size} values; expected {want} "
                                       f"({nb} bands)")
            if spec.weight is not None and field_array(spec.weight).size != nb:
                raise _fail("weight", f"weight has {field_array(spec.weight).size} values; "
                                      f"expected one per band ({nb})")
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
        f, g = field_array(spec.freq), field_array(spec.gain)
        if f.size != g.size or f.size < 2:
            raise _fail("gain", f"gain has {g.size} values; expected one per frequency "
                                f"({f.size}, at least 2)")
        if f[0] != 0 or np.any(np.diff(f) < 0):
            raise _fail("freq", f"freq={field_text(spec.freq)} must start at 0 Hz and not "
                                "decrease (and end at the Nyquist frequency)")


def field_schema(design_name: str) -> list[dict[str, Any]]:
    """The parameters of a design, as form schemas (``Param.to_dict()``), ``zero_phase`` last.

    What a generated form shows for one design.

    Parameters
    ----------
    design_name : str
        A key of :data:`DESIGNS`.

    Returns
    -------
    list of dict
        One schema per field of the design, ``zero_phase`` last.

    Raises
    ------
    FilterSpecError
        If ``design_name`` is no design (naming ``design``).

    Examples
    --------
    >>> [p["name"] for p in field_schema("iirnotch")]
    ['frequency', 'q', 'zero_phase']
    """
    if design_name not in DESIGNS:
        raise _fail("design", f"design={design_name!r} must be one of {', '.join(DESIGNS)}")
    names = [n for n in DESIGNS[design_name][1] if n != "zero_phase"] + ["zero_phase"]
    return [_P[n].to_dict() for n in names]
