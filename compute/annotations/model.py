"""The annotation model: a box in time (and optionally frequency) with a label.

An :class:`Annotation` marks what a person or a detector found in a recording:
a bat call, a burst in an IQ capture, a word.  Times are seconds from the
recording's first sample; frequencies are absolute Hz (for IQ recordings the RF
frequency, as SigMF writes them), or both ``None`` for a time-only annotation.

Annotations are immutable; :meth:`Annotation.replace` makes an edited copy.
:meth:`Annotation.to_dict` / :meth:`Annotation.from_dict` use the field names
below with plain JSON types, which are also the column names of the CSV format.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import uuid as _uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import InputError

__all__ = ["FIELDS", "Annotation", "clip_annotations", "new_uuid", "stable_uuid"]

#: the model's field names, in the order of :meth:`Annotation.to_dict`
FIELDS = ("start_s", "stop_s", "freq_low_hz", "freq_high_hz", "label", "comment", "uuid",
          "generator", "channel", "tier")

# namespace of the uuids given to annotations read from files that carry none
_NAMESPACE = _uuid.UUID("5d3e0f4a-5b7e-4c55-9d0e-2a1f6c7b8e90")


def new_uuid() -> str:
    """A fresh random (version 4) uuid as text.

    Returns
    -------
    str
        36 characters, in the canonical 8-4-4-4-12 hexadecimal form.
    """
    return str(_uuid.uuid4())


def stable_uuid(*parts: Any) -> str:
    """A name-based (version 5) uuid of ``parts``.

    Formats that carry no uuid (Audacity labels, most Raven tables) give each
    annotation the uuid of its position and content, so reading the same file
    twice gives equal annotations.

    Parameters
    ----------
    *parts : object
        What identifies the annotation (format, position, times, band, label);
        their ``repr`` is hashed.

    Returns
    -------
    str
        The uuid in canonical text form; equal parts give an equal uuid.

    Examples
    --------
    >>> stable_uuid("audacity", 0, 1.5) == stable_uuid("audacity", 0, 1.5)
    True
    >>> stable_uuid("audacity", 0, 1.5) == stable_uuid("audacity", 1, 1.5)
    False
    """
    return str(_uuid.uuid5(_NAMESPACE, "\x1f".join(repr(p) for p in parts)))


def _number(name: str, value: Any, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"Annotation: {name}={value!r} must be a number")
    x = float(value)
    if not math.isfinite(x):
        raise InputError(f"Annotation: {name}={value!r} must be finite")
    return x


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InputError(f"Annotation: {name}={value!r} must be text")
    return value


@dataclass(frozen=True)
class Annotation:
    """A marked region of a recording.

    Parameters
    ----------
    start_s, stop_s : float
        Start and end in seconds from the recording's first sample;
        ``0 <= start_s <= stop_s``.
    freq_low_hz, freq_high_hz : float or None
        Lower and upper edge in absolute Hz (RF for IQ recordings), both given
        with ``freq_low_hz <= freq_high_hz``, or both ``None`` for a time-only
        annotation.
    label : str
        Short text (a species, a word, a signal type).
    comment : str
        Longer free text.
    uuid : str
        Identity of the annotation; a new random uuid by default.
    generator : str
        Who made it: ``"person"`` (the default) or a detector's name; ``""``
        when a file does not say.
    channel : int or None
        0-based channel the annotation belongs to; ``None`` for all channels
        or unknown.
    tier : str or None
        The layer the annotation belongs to (a Praat tier, an ELAN tier):
        ``None`` (``""`` is taken as ``None``) when it belongs to none.
    extra : mapping of str to object
        Fields a file carried that the model has no name for (Raven
        measurement columns, SigMF keys of other namespaces).  Kept for
        writers that can carry them back; not compared and not part of
        :meth:`to_dict`.

    Raises
    ------
    InputError
        A value is of the wrong kind or the box is invalid; the message names
        the field.
    """

    start_s: float
    stop_s: float
    freq_low_hz: float | None = None
    freq_high_hz: float | None = None
    label: str = ""
    comment: str = ""
    uuid: str = field(default_factory=new_uuid)
    generator: str = "person"
    channel: int | None = None
    tier: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        start = _number("start_s", self.start_s)
        stop = _number("stop_s", self.stop_s)
        if start < 0:
            raise InputError(f"Annotation: start_s={self.start_s!r} must be >= 0")
        if stop < start:
            raise InputError(f"Annotation: stop_s={self.stop_s!r} must be >= "
                             f"start_s={self.start_s!r}")
        lo = _number("freq_low_hz", self.freq_low_hz, optional=True)
        hi = _number("freq_high_hz", self.freq_high_hz, optional=True)
        if (lo is None) != (hi is None):
            raise InputError(f"Annotation: give both freq_low_hz and freq_high_hz or neither "
                             f"(got {self.freq_low_hz!r} and {self.freq_high_hz!r})")
        if lo is not None and hi is not None and hi < lo:
            raise InputError(f"Annotation: freq_high_hz={self.freq_high_hz!r} must be >= "
                             f"freq_low_hz={self.freq_low_hz!r}")
        channel = self.channel
        if channel is not None:
            if isinstance(channel, bool) or not isinstance(channel, numbers.Integral) \
                    or channel < 0:
                raise InputError(f"Annotation: channel={channel!r} must be a whole number "
                                 ">= 0 or None")
            channel = int(channel)
        tier = None if self.tier is None else (_text("tier", self.tier) or None)
        uid = _text("uuid", self.uuid)
        if not uid:
            raise InputError("Annotation: uuid must not be empty")
        # plain Python types, whatever the caller passed (numpy scalars, ints)
        values = {"start_s": start, "stop_s": stop, "freq_low_hz": lo, "freq_high_hz": hi,
                  "label": _text("label", self.label),
                  "comment": _text("comment", self.comment), "uuid": uid,
                  "generator": _text("generator", self.generator), "channel": channel,
                  "tier": tier, "extra": MappingProxyType(dict(self.extra or {}))}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    # -- derived values ---------------------------------------------------------------

    @property
    def duration_s(self) -> float:
        """``stop_s - start_s``."""
        return self.stop_s - self.start_s

    @property
    def bandwidth_hz(self) -> float | None:
        """``freq_high_hz - freq_low_hz``, or ``None`` for a time-only annotation."""
        if self.freq_low_hz is None or self.freq_high_hz is None:
            return None
        return self.freq_high_hz - self.freq_low_hz

    @property
    def has_band(self) -> bool:
        """True when the annotation has frequency edges."""
        return self.freq_low_hz is not None

    def replace(self, **changes: Any) -> Annotation:
        """A copy with some fields changed (validated like a new annotation).

        Parameters
        ----------
        **changes
            Field names and their new values, e.g. ``label="bat"``.
        """
        unknown = set(changes) - set(FIELDS) - {"extra"}
        if unknown:
            raise InputError(f"Annotation.replace: unknown field(s) {', '.join(sorted(unknown))}"
                             f"; fields are {', '.join(FIELDS)}")
        return dataclasses.replace(self, **changes)

    # -- JSON -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The fields :data:`FIELDS` as plain JSON types (``None`` stays ``None``)."""
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Annotation:
        """An annotation from :meth:`to_dict`'s output.

        ``start_s`` and ``stop_s`` are required; missing optional fields take
        their defaults (a missing ``uuid`` a new one).

        Raises
        ------
        InputError
            ``data`` is not a mapping, has unknown keys, misses a required key
            or holds an invalid value.
        """
        if not isinstance(data, Mapping):
            raise InputError(f"Annotation.from_dict: expected an object with {', '.join(FIELDS)}"
                             f", got {type(data).__name__}")
        unknown = [k for k in data if k not in FIELDS]
        if unknown:
            raise InputError(f"Annotation.from_dict: unknown key(s) {', '.join(map(str, unknown))}"
                             f"; expected {', '.join(FIELDS)}")
        for name in ("start_s", "stop_s"):
            if name not in data:
                raise InputError(f"Annotation.from_dict: {name} is missing")
        values = dict(data)
        if values.get("uuid") is None:
            values.pop("uuid", None)
        for name in ("label", "comment"):
            if values.get(name, "") is None:
                values[name] = ""
        return cls(**values)


def clip_annotations(annotations: Sequence[Annotation], start_s: float, stop_s: float, *,
                     channels: Sequence[int] | None = None) -> list[Annotation]:
    """The annotations inside ``[start_s, stop_s)``, clipped and shifted to start at 0.

    What an export of part of a recording carries: each annotation that
    overlaps the range (or, of zero length, lies in it) is cut to the range
    and moved so that ``start_s`` becomes 0.  Uuid, label and the other
    fields are kept, so a clipped annotation is still the same one.

    Parameters
    ----------
    annotations : sequence of Annotation
        Times in seconds from the recording's first sample.
    start_s, stop_s : float
        The range in the same seconds; ``start_s`` may be negative (a view
        that begins before the recording).
    channels : sequence of int, optional
        The source channels the output holds, in its order.  An annotation of
        another channel is left out; one of a kept channel gets its position
        in the output.  ``None`` keeps every annotation's channel as it is.

    Returns
    -------
    list of Annotation
        In the order given.
    """
    t0, t1 = float(start_s), float(stop_s)
    order = None if channels is None else [int(c) for c in channels]
    out = []
    for a in annotations:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
        if a.start_s == a.stop_s:
            inside = t0 <= a.start_s < t1
        else:
            inside = a.stop_s > t0 and a.start_s < t1
        if not inside:
            continue
        channel = a.channel
        if order is not None and channel is not None:
            if channel not in order:
                continue
            channel = order.index(channel)
        # max(0, ...): a start rounded a hair below the range edge is still inside it
        start = max(0.0, max(a.start_s, t0) - t0)
        stop = max(start, min(a.stop_s, t1) - t0)
        out.append(a.replace(start_s=start, stop_s=stop, channel=channel))
    return out
