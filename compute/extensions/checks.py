"""Checks of plugin results: the declared output kinds and what a result of each looks like.

Every result of a plugin operator is checked against the output kind its
plugin declares for it (:data:`OUTPUT_KINDS`); :func:`events_to_annotations`
turns an ``events`` result into annotations
(:class:`~specscope.compute.annotations.Annotation`).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .. import backend as _backend
from ..annotations import Annotation
from ..annotations.model import stable_uuid
from ..errors import InputError
from ..types import OutputKind, choices

__all__ = ["OUTPUT_KINDS", "check_result", "events_to_annotations"]

#: what an operator returns, declared per operator in the plugin's metadata
#: (``outputs = {"op": "image"}``); see :func:`check_result`
OUTPUT_KINDS = choices(OutputKind)


def _what(v: Any) -> str:
    if v is None:
        return "None"
    return f"a {type(v).__name__}"


def _shape(a: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in a.shape)


def _is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or _backend.is_device_array(a)


def _leaf_problem(v: Any, where: str) -> str | None:
    if _is_array(v):
        if np.dtype(v.dtype).kind not in "biufc":
            return f"an array of dtype {v.dtype}{where} (numbers were expected)"
        return None
    if isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, (str, bytes)):
        if isinstance(v, np.generic) and v.dtype.kind not in "biufc":
            return f"a {v.dtype} scalar{where}"
        return None
    if isinstance(v, (tuple, list)):
        for i, u in enumerate(v):
            bad = _leaf_problem(u, f"{where}[{i}]")
            if bad:
                return bad
        return None
    if isinstance(v, dict):
        for k, u in v.items():
            if not isinstance(k, str):
                return f"a dict with key {k!r}{where} (string keys were expected)"
            bad = _leaf_problem(u, f"{where}[{k!r}]")
            if bad:
                return bad
        return None
    return f"{_what(v)}{where} (arrays or numbers were expected)"


def check_result(kind: OutputKind, result: Any, x: Any = None) -> str | None:
    """What is wrong with an operator's result for its declared output kind, or None.

    Kinds
    -----
    ``array``
        Numeric arrays or numbers, possibly in tuples, lists or dicts.
    ``same``
        One numeric array with the shape of the input.
    ``image``
        ``(freqs, times, values)``: 1-D ``freqs`` (n_f) and ``times`` (n_t) in Hz
        and s, real ``values`` shaped ``(..., n_f, n_t)`` -- what a spectrogram
        pane can show instead of the STFT.
    ``series``
        A dict with 1-D ``times`` and numeric arrays whose last axis has its length.
    ``events``
        A dict with 1-D ``times`` (s) and ``sample`` (int) and optional 1-D
        arrays of the same length (``strength``, ...); see
        :func:`events_to_annotations`.

    Parameters
    ----------
    kind : str
        The declared output kind, one of :data:`OUTPUT_KINDS`.
    result : object
        What the operator returned.
    x : array, optional
        The operator's input (for ``same``, whose shape must match).

    Returns
    -------
    str or None
        A phrase naming what was returned and what was expected (``"shape (3,)
        for input shape (4,) (the same was expected)"``), or None when the result
        fits.

    Examples
    --------
    >>> import numpy as np
    >>> check_result("same", np.zeros(3), np.zeros(4))
    'shape (3,) for input shape (4,) (the same was expected)'
    >>> check_result("array", {"peak": np.float64(1.5)}) is None
    True
    """
    if result is None:
        return "None"
    bad = _leaf_problem(result, "")
    if bad:
        return bad
    if kind == "same":
        if not _is_array(result):
            return f"{_what(result)} (one array was expected)"
        if x is not None and _is_array(x) and _shape(result) != _shape(x):
            return f"shape {_shape(result)} for input shape {_shape(x)} (the same was expected)"
    elif kind == "image":
        if not isinstance(result, (tuple, list)) or len(result) != 3 or not all(
                _is_array(a) for a in result):
            return f"{_what(result)} ((freqs, times, values) arrays were expected)"
        f, t, s = result
        if f.ndim != 1 or t.ndim != 1:
            return (f"freqs of shape {_shape(f)} and times of shape {_shape(t)} "
                    "(1-D arrays were expected)")
        if s.ndim < 2 or _shape(s)[-2:] != (f.shape[0], t.shape[0]):
            return (f"values of shape {_shape(s)} for {f.shape[0]} freqs and {t.shape[0]} "
                    f"times (..., {f.shape[0]}, {t.shape[0]}) was expected)")
        if np.dtype(s.dtype).kind == "c":
            return f"complex values ({s.dtype}; real power or magnitude was expected)"
    elif kind in ("series", "events"):
        if not isinstance(result, dict) or "times" not in result or not _is_array(
                result["times"]) or result["times"].ndim != 1:
            return f"{_what(result)} (a dict with 1-D 'times' was expected)"
        n = result["times"].shape[0]
        if kind == "events" and ("sample" not in result or not _is_array(result["sample"])
                                 or np.dtype(result["sample"].dtype).kind not in "iu"):
            return "events without an integer 'sample' array"
        for k, v in result.items():
            if not _is_array(v) or v.ndim < 1 or v.shape[-1] != n:
                got = _shape(v) if _is_array(v) else _what(v)
                return f"{k!r} of shape {got} for {n} times (last axis {n} was expected)"
            if kind == "events" and v.ndim != 1:
                return f"{k!r} of shape {_shape(v)} (1-D per event was expected)"
    return None


def events_to_annotations(events: dict[str, Any], label: str = "onset",
                          fs: float | None = None, *, generator: str = "",
                          channel: int | None = None) -> list[Annotation]:
    """Annotations from an ``events`` result: one zero-length annotation per event.

    Parameters
    ----------
    events : dict
        An ``events`` result (see :func:`check_result`).
    label : str
        The label of every annotation.
    fs : float, optional
        Samples per second: the annotation starts at ``sample / fs``; without
        it, at the event's ``times``.
    generator : str
        Who found the events: the detector operator's name (``"onsets.detect"``).
    channel : int, optional
        The channel the detector ran on.

    Returns
    -------
    list of Annotation
        In event order.  The comment carries the strength (``strength=0.42``)
        when the result has one, and each annotation's
        :attr:`~specscope.compute.annotations.Annotation.extra` holds the
        event's other per-event values.
    """
    problem = check_result("events", events)
    if problem:
        raise InputError(f"events must be an 'events' result; got {problem}")
    if fs is not None and (isinstance(fs, bool) or not isinstance(fs, numbers.Real)
                           or not fs > 0):
        raise InputError(f"fs={fs!r} must be a number > 0")
    ev = {k: np.asarray(v) for k, v in _backend.to_host(events).items()}
    samples = ev["sample"].tolist()
    times = (ev["sample"] / float(fs)) if fs is not None else ev["times"]
    others = [k for k in ev if k not in ("times", "sample")]
    strength = ev.get("strength")
    out = []
    for i, s in enumerate(samples):
        comment = "" if strength is None else f"strength={float(strength[i]):.4g}"
        extra = {"sample": int(s), **{k: ev[k][i].item() for k in others}}
        # an event a detector places before the first sample is at the first sample
        t = max(0.0, float(times[i]))
        out.append(Annotation(t, t, label=label, comment=comment,
                              uuid=stable_uuid("event", generator, channel, i, int(s), label),
                              generator=generator, channel=channel, extra=extra))
    return out
