"""What a filter starts as, and what it becomes under another method.

The filter designer (desktop and notebook), the Processing panel's filter
steps and ``specscope filter`` share these rules; the front-ends only present
them:

* :data:`METHODS`: every design method with the label a person reads, in the
  order of :data:`~specscope.compute.filters.spec.DESIGNS`;
* the defaults of a new filter: :data:`DEFAULT_ORDER` (IIR), :data:`DEFAULT_RP_DB`
  (passband ripple of Chebyshev I and elliptic), :data:`DEFAULT_RS_DB` (stopband
  attenuation of Chebyshev II and elliptic), :data:`DEFAULT_NUMTAPS` (FIR),
  :data:`DEFAULT_Q` (notches, peaks, combs) and :data:`MAINS_HZ` (a notch or comb
  with nothing to centre on), :data:`DEFAULT_SPEC` (the designer's first filter)
  and :func:`starter` (a new filter of a chain, by kind);
* :func:`convert`: the current filter under another method, keeping what carries
  over (edges, zero phase) and filling the rest with the defaults;
* :func:`form_values` / :func:`spec_from_form`: a spec as the values of its
  generated form, and back; :func:`beyond_nyquist` names the band edge of a form
  that lies past Nyquist; :func:`in_force` says which filled-in fields decide the
  design.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import InputError
from ..types import FilterDesign
from .spec import (
    DESIGNS,
    FIR_DESIGNS,
    IIR_DESIGNS,
    FilterSpec,
    FilterSpecError,
    field_array,
    field_text,
)

__all__ = [
    "DEFAULT_NUMTAPS",
    "DEFAULT_ORDER",
    "DEFAULT_Q",
    "DEFAULT_RP_DB",
    "DEFAULT_RS_DB",
    "DEFAULT_SPEC",
    "EDGE_FIELDS",
    "FIELD_DEFAULTS",
    "MAINS_HZ",
    "METHODS",
    "STARTER_KINDS",
    "beyond_nyquist",
    "convert",
    "form_values",
    "in_force",
    "size_field",
    "spec_from_form",
    "starter",
]

#: order of a new IIR filter (Butterworth, Chebyshev, elliptic, Bessel)
DEFAULT_ORDER = 4
#: passband ripple of a new Chebyshev I or elliptic filter (dB)
DEFAULT_RP_DB = 1.0
#: stopband attenuation of a new Chebyshev II or elliptic filter (dB)
DEFAULT_RS_DB = 40.0
#: length of a new FIR filter
DEFAULT_NUMTAPS = 101
#: quality factor of a new notch, peak or comb (each notch frequency / q Hz wide)
DEFAULT_Q = 30.0
#: centre of a notch or comb with nothing to centre on: mains hum
MAINS_HZ = 50.0
#: the designer's first filter: a voice band
DEFAULT_SPEC = FilterSpec("butter", btype="bandpass", order=DEFAULT_ORDER,
                          cutoff=(300.0, 3000.0))

#: design method -> the label a person reads, in the order of ``DESIGNS``
METHODS: dict[str, str] = {
    "butter": "IIR Butterworth", "cheby1": "IIR Chebyshev I", "cheby2": "IIR Chebyshev II",
    "ellip": "IIR elliptic", "bessel": "IIR Bessel", "iirnotch": "Notch",
    "iirpeak": "Peak", "iircomb": "Comb (hum and harmonics)",
    "notches": "Notches (frequency and harmonics)", "firwin": "FIR window / Kaiser",
    "remez": "FIR equiripple (remez)", "firls": "FIR least squares",
    "firwin2": "FIR frequency sampling",
}

#: field -> the value a new filter takes when it needs one (what a front-end suggests)
FIELD_DEFAULTS: dict[str, float] = {"order": DEFAULT_ORDER, "rp": DEFAULT_RP_DB,
                                    "rs": DEFAULT_RS_DB, "numtaps": DEFAULT_NUMTAPS,
                                    "q": DEFAULT_Q}

#: spec fields that are band edges or centre frequencies (Hz), in the order they are drawn
EDGE_FIELDS = ("cutoff", "passband", "stopband", "frequency")

#: kind of a new filter of a chain -> its label
STARTER_KINDS = {"bandpass": "Band-pass", "lowpass": "Low-pass", "highpass": "High-pass",
                 "bandstop": "Band-stop", "notch": "Notch"}


def starter(kind: str, fs: float) -> FilterSpec:
    """A new filter of ``kind`` (a key of :data:`STARTER_KINDS`) for sample rate ``fs``.

    Band filters are Butterworth of :data:`DEFAULT_ORDER` around the voice band,
    kept below Nyquist at any sample rate; a notch sits on :data:`MAINS_HZ`.

    Parameters
    ----------
    kind : str
        ``"bandpass"``, ``"lowpass"``, ``"highpass"``, ``"bandstop"`` or ``"notch"``.
    fs : float
        Sample rate (Hz).

    Returns
    -------
    FilterSpec
        The new filter.

    Raises
    ------
    InputError
        If ``kind`` is not a key of :data:`STARTER_KINDS`.

    Examples
    --------
    >>> starter("notch", 48000.0).to_params()["frequency"]
    50.0
    """
    top = 0.45 * fs  # below Nyquist at any sample rate
    params: dict[str, Any]
    if kind == "notch":
        params = {"design": "iirnotch", "frequency": min(MAINS_HZ, top), "q": DEFAULT_Q}
    elif kind in STARTER_KINDS:
        cutoff = {"bandpass": [min(300.0, top / 10), min(3000.0, top)],
                  "lowpass": min(3000.0, top), "highpass": min(300.0, top),
                  "bandstop": [min(1000.0, top / 2), min(2000.0, top)]}[kind]
        params = {"design": "butter", "btype": kind, "order": DEFAULT_ORDER, "cutoff": cutoff}
    else:
        raise InputError(f"kind={kind!r} must be one of {', '.join(STARTER_KINDS)}")
    return FilterSpec.from_params(params)


def size_field(design: str) -> str | None:
    """The field that sizes a design: ``"order"`` (IIR), ``"numtaps"`` (FIR) or None.

    Parameters
    ----------
    design : str
        A design method (a key of ``DESIGNS``).

    Returns
    -------
    str or None
        ``"order"``, ``"numtaps"``, or None for designs sized by neither.

    Examples
    --------
    >>> size_field("butter"), size_field("firwin"), size_field("iirnotch")
    ('order', 'numtaps', None)
    """
    return "order" if design in IIR_DESIGNS else "numtaps" if design in FIR_DESIGNS else None


def form_values(spec: FilterSpec) -> dict[str, Any]:
    """The values of ``spec``'s form (its pipeline params, lists for several numbers).

    Parameters
    ----------
    spec : FilterSpec
        The filter.

    Returns
    -------
    dict
        Field name -> value, tuples turned into lists.
    """
    return {k: list(v) if isinstance(v, tuple) else v for k, v in spec.to_params().items()}


def spec_from_form(design: FilterDesign, values: Mapping[str, Any]) -> FilterSpec:
    """The spec a form of ``design`` says (empty fields left out: their defaults).

    Parameters
    ----------
    design : str
        The design method of the form.
    values : Mapping
        Field name -> value; None for an empty field.

    Returns
    -------
    FilterSpec
        The filter the form describes.

    Raises
    ------
    FilterSpecError
        The values cannot be a filter; the message names the field.
    """
    return FilterSpec.from_params({"design": design, **{
        k: v for k, v in values.items() if v is not None}})


def beyond_nyquist(values: Mapping[str, Any], fs: float) -> str:
    """The first band edge of a form at or above the Nyquist frequency, as a message.

    Parameters
    ----------
    values : Mapping
        Field name -> value of the form; the edge fields (:data:`EDGE_FIELDS`) are read.
    fs : float
        Sample rate (Hz).

    Returns
    -------
    str
        A sentence naming the field, its value and the Nyquist frequency; ``""`` when
        every edge lies below Nyquist.

    Examples
    --------
    >>> beyond_nyquist({"cutoff": 30000.0}, 48000.0)
    'cutoff=30000.0 Hz must be below the Nyquist frequency 24000 Hz (sample rate 48000 Hz)'
    """
    nyq = fs / 2.0
    for name in EDGE_FIELDS:
        v = values.get(name)
        if v is None:
            continue
        try:
            a = field_array(v)
        except (TypeError, ValueError):
            continue
        if a.size and np.any(a >= nyq):
            return (f"{name}={field_text(v)} Hz must be below the Nyquist frequency "
                    f"{nyq:g} Hz (sample rate {fs:g} Hz)")
    return ""


def _hz(value: Any) -> str:
    return " – ".join(f"{v:g}" for v in field_array(value)) + " Hz"


def in_force(spec: FilterSpec) -> str:
    """Which of the filled-in fields decide the design, when others could too.

    An order (or a number of taps) with a cutoff, and a passband/stopband
    specification, may both be filled in: the first designs the filter and the
    second is only the tolerance it is checked against.  Without an order the
    specification designs the filter (its minimum order).  Empty for designs
    with neither an order nor a number of taps.

    Parameters
    ----------
    spec : FilterSpec
        The filter.

    Returns
    -------
    str
        A note for the person filling in the form; ``""`` when nothing competes.
    """
    size = size_field(spec.design)
    if size is None:
        return ""
    n = getattr(spec, size)
    tolerance = spec.passband is not None or spec.stopband is not None
    edge = getattr(spec, "cutoff", None)
    if n is not None and tolerance:
        what = f"{size} {n}" + (f" and cutoff {_hz(edge)}" if edge is not None else "")
        return (f"In force: {what}. Passband/stopband are only the tolerance it is checked "
                f"against; clear {size} to design the minimum {size} from them.")
    if n is None and tolerance:
        return f"In force: passband/stopband, rp and rs (the minimum {size} meeting them)."
    return ""


def _comb_frequency(frequency: float, fs: float) -> float:
    """``frequency`` when a comb's teeth at it divide ``fs``; else :data:`MAINS_HZ`."""
    ratio = fs / frequency
    return frequency if abs(ratio - round(ratio)) <= 1e-9 * ratio else MAINS_HZ


def convert(spec: FilterSpec, method: FilterDesign, fs: float) -> FilterSpec:
    """``spec`` under another design ``method``, keeping what carries over.

    The fields both methods have are kept; a notch, peak or comb is centred on
    the old centre frequency (or the geometric centre of the old cutoffs, else
    :data:`MAINS_HZ`; a comb's teeth must divide ``fs``); a band filter gets
    cutoffs around the old centre (else ``fs / 8``); the rest are the defaults of
    this module.  Equiripple, least-squares and frequency-sampling FIRs start as a
    low-pass band table (pass to 0.1, stop from 0.15 of Nyquist).

    Parameters
    ----------
    spec : FilterSpec
        The current filter.
    method : str
        The new design method (a key of ``DESIGNS``).
    fs : float
        Sample rate (Hz).

    Returns
    -------
    FilterSpec
        The filter under ``method``.

    Raises
    ------
    FilterSpecError
        ``method`` is no design, or the result cannot be a filter.
    """
    if method not in DESIGNS:
        raise FilterSpecError("design", f"design={method!r} must be one of "
                                        f"{', '.join(DESIGNS)}")
    old = spec.to_params()
    params: dict[str, Any] = {"design": method, "zero_phase": old.get("zero_phase", False)}
    fields = DESIGNS[method][1]
    for k in fields:
        if k in old:
            params[k] = old[k]
    centre = old.get("frequency")
    if centre is None and old.get("cutoff") is not None:
        c = np.atleast_1d(old["cutoff"]).astype(float)
        centre = float(f"{np.sqrt(c[0] * c[-1]):.4g}")  # 948.7, not 948.6832980505138
    if "frequency" in fields:
        params.setdefault("frequency", centre or MAINS_HZ)
        params.setdefault("q", DEFAULT_Q)
        if method == "iircomb":  # a comb's teeth must divide the sample rate: mains hum
            params["frequency"] = _comb_frequency(params["frequency"], fs)
    if "cutoff" in fields and params.get("cutoff") is None and "passband" not in params:
        f0 = centre or fs / 8
        params["cutoff"] = [f0 / 2, min(f0 * 2, 0.45 * fs)] if old.get("btype") in (
            "bandpass", "bandstop") else f0
    if method in IIR_DESIGNS and not params.get("order") \
            and not (params.get("passband") and params.get("rs")):
        params["order"] = DEFAULT_ORDER
    if method in ("cheby1", "ellip"):
        params.setdefault("rp", DEFAULT_RP_DB)
    if method in ("cheby2", "ellip"):
        params.setdefault("rs", DEFAULT_RS_DB)
    if method == "firwin":
        params.setdefault("numtaps", DEFAULT_NUMTAPS)
    nyq = fs / 2
    if method in ("remez", "firls"):
        params = {"design": method, "numtaps": DEFAULT_NUMTAPS,
                  "bands": [0, 0.1 * nyq, 0.15 * nyq, nyq],
                  "desired": [1, 1, 0, 0] if method == "firls" else [1, 0],
                  "zero_phase": params["zero_phase"]}
    if method == "firwin2":
        params = {"design": method, "numtaps": DEFAULT_NUMTAPS,
                  "freq": [0, 0.1 * nyq, 0.15 * nyq, nyq],
                  "gain": [1, 1, 0, 0], "zero_phase": params["zero_phase"]}
    return FilterSpec.from_params({k: v for k, v in params.items() if v is not None})
