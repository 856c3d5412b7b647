"""Absolute start times of recordings: time zones, metadata texts and file names.

Every time here becomes an aware :class:`datetime.datetime` in UTC.  A time written
without a zone (a name, a BWF ``bext`` date, a GUANO timestamp without offset) is read
in the deployment's zone (``tz``, UTC unless given); one that carries its zone (``Z``,
``+02:00``, AudioMoth's ``(UTC+1)``) keeps it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import BadOption

__all__ = ["NAME_FORMS", "NameTime", "PatternError", "aware", "build_time", "compile_pattern",
           "iso_time", "name_time", "parse_iso", "parse_zone"]

_OFFSET = re.compile(r"^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


def parse_zone(tz: str | tzinfo | None) -> tzinfo:
    """The time zone named by ``tz``: ``"UTC"``, ``"+02:00"``, ``"UTC-5"`` or an IANA name.

    Raises
    ------
    BadOption
        ``tz`` names no zone (option ``tz``).
    """
    if tz is None:
        return UTC
    if isinstance(tz, tzinfo):
        return tz
    text = str(tz).strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return UTC
    m = _OFFSET.match(text)
    if m:
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise BadOption("tz", tz, "the offset is out of range",
                            expected="an offset within 23:59")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if m.group(1) == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise BadOption("tz", tz, "names no time zone",
                        expected="UTC, an offset such as +02:00 or a name such as "
                                 "Europe/Berlin") from None


def aware(dt: datetime, zone: tzinfo) -> datetime:
    """``dt`` in UTC; a naive ``dt`` is read in ``zone``."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=zone)
    return dt.astimezone(UTC)


def iso_time(dt: datetime) -> str:
    """ISO 8601 text of a UTC time, ``Z`` for the zone and microseconds only when there are any."""
    dt = dt.astimezone(UTC)
    spec = "microseconds" if dt.microsecond else "seconds"
    return dt.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def parse_iso(text: str) -> datetime | None:
    """An ISO 8601 date and time (naive when it names no zone); ``None`` when it is none.

    Accepts ``T`` or a space between date and time, ``Z``, ``+hh:mm`` / ``+hhmm`` offsets
    and fractions of a second of any length (cut to microseconds).
    """
    if not isinstance(text, str) or len(text) > 64:
        return None
    m = re.match(r"^\s*(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?"
                 r"\s*(Z|[+-]\d{2}:?\d{2})?\s*$", text, re.IGNORECASE)
    if not m:
        return None
    return build_time(*m.groups()[:6], fraction=m.group(7), zone=m.group(8))


def build_time(year: str, month: str, day: str, hour: str, minute: str, second: str, *,
               fraction: str | None = None, zone: str | None = None,
               two_digit_year: bool = False) -> datetime | None:
    """A datetime from the digits of a date and time; ``None`` when they name none.

    ``fraction`` is the digits after the second's point (cut to microseconds), ``zone``
    ``Z`` or ``+hh:mm`` / ``+hhmm`` (naive without one).
    """
    try:
        y = int(year) + (2000 if two_digit_year else 0)
        micro = int((fraction or "0")[:6].ljust(6, "0"))
        dt = datetime(y, int(month), int(day), int(hour), int(minute), int(second), micro)
    except ValueError:
        return None
    if zone:
        if zone.upper() == "Z":
            return dt.replace(tzinfo=UTC)
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        if delta >= timedelta(hours=24):
            return None
        return dt.replace(tzinfo=timezone(sign * delta))
    return dt


@dataclass(frozen=True)
class NameTime:
    """A start time found in a file name.

    Attributes
    ----------
    time : datetime
        The time, naive when the name gives no zone.
    form : str
        The form that matched (a key of :data:`NAME_FORMS`, or the person's pattern).
    """

    time: datetime
    form: str


_NAME_RES: dict[str, re.Pattern[str]] = {
    # AudioMoth, Song Meter, most recorders: 20240501_143000 (also 20240501-143000)
    "YYYYMMDD_HHMMSS": re.compile(
        r"(?<!\d)(\d{4})(\d{2})(\d{2})[_-](\d{2})(\d{2})(\d{2})(?:[._](\d{1,6}))?(?!\d)"),
    # ISO 8601 basic: 20240501T143000Z (SDR loggers)
    "YYYYMMDDTHHMMSSZ": re.compile(
        r"(?<!\d)(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(?:[.,](\d{1,6}))?(Z?)(?![\dZ])",
        re.IGNORECASE),
    # SoundTrap: 5490.170302103452 (unit id, then yymmddHHMMSS)
    "ID.YYMMDDHHMMSS": re.compile(r"(?<![\d.])\d+\.(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})"
                                  r"(?!\d)"),
    # ISO 8601 extended, with - or _ where a file name cannot hold ':'
    "ISO 8601": re.compile(
        r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[T_ ](\d{2})[:\-_]?(\d{2})[:\-_]?(\d{2})"
        r"(?:[.,](\d{1,6}))?(Z|[+-]\d{2}:?\d{2})?(?!\d)", re.IGNORECASE),
}

#: the name forms tried, in order, when a file's metadata gives no time
NAME_FORMS: tuple[str, ...] = tuple(_NAME_RES)


def name_time(name: str, pattern: CompiledPattern | None = None) -> NameTime | None:
    """The start time a file name states, or ``None``.

    Parameters
    ----------
    name : str
        The file name (its folder is not looked at).
    pattern : CompiledPattern, optional
        A person's pattern (:func:`compile_pattern`), tried before the built-in forms.
    """
    if pattern is not None:
        found = pattern.search(name)
        if found is not None:
            return NameTime(found, pattern.text)
    for form, rx in _NAME_RES.items():
        for m in rx.finditer(name):
            g = m.groups()
            if form == "YYYYMMDD_HHMMSS":
                dt = build_time(*g[:6], fraction=g[6])
            elif form == "YYYYMMDDTHHMMSSZ":
                dt = build_time(*g[:6], fraction=g[6], zone=g[7] or None)
            elif form == "ID.YYMMDDHHMMSS":
                dt = build_time(*g[:6], two_digit_year=True)
            else:
                dt = build_time(*g[:6], fraction=g[6], zone=g[7])
            if dt is not None:
                return NameTime(dt, form)
    return None


class PatternError(BadOption):
    """A name pattern that cannot be used (option ``name_pattern``)."""

    def __init__(self, value: str, problem: str) -> None:
        super().__init__("name_pattern", value, problem,
                         expected="text with strftime fields such as site_%Y%m%d_%H%M%S")


_FIELDS = {"Y": r"\d{4}", "y": r"\d{2}", "m": r"\d{1,2}", "d": r"\d{1,2}", "H": r"\d{1,2}",
           "M": r"\d{1,2}", "S": r"\d{1,2}", "f": r"\d{1,6}", "j": r"\d{1,3}",
           "z": r"(?:Z|[+-]\d{2}:?\d{2})", "b": r"[A-Za-z]{3}", "p": r"(?:AM|PM|am|pm)",
           "I": r"\d{1,2}"}


@dataclass(frozen=True)
class CompiledPattern:
    """A person's name pattern: its text and the regular expression made of it."""

    text: str
    regex: re.Pattern[str]

    def search(self, name: str) -> datetime | None:
        """The time the pattern reads in ``name`` (naive unless it has ``%z``), else ``None``."""
        m = self.regex.search(name)
        if m is None:
            return None
        try:
            return datetime.strptime(m.group(0), self.text)
        except ValueError:
            return None


def compile_pattern(text: str | None) -> CompiledPattern | None:
    """A name pattern with strftime fields (``%Y %y %m %d %H %M %S %f %j %z``) as a searcher.

    The pattern may be a part of the name: ``"%Y%m%d_%H%M%S"`` finds the time in
    ``"SITE3_20240501_143000.wav"``.

    Raises
    ------
    PatternError
        A field the pattern uses is not one of those, or it has no year or no day.
    """
    if text is None:
        return None
    text = str(text)
    if not text or len(text) > 200:
        raise PatternError(text, "is empty" if not text else "is longer than 200 characters")
    parts, i, used = [], 0, set()
    while i < len(text):
        ch = text[i]
        if ch == "%":
            if i + 1 >= len(text):
                raise PatternError(text, "ends with a lone %")
            f = text[i + 1]
            if f == "%":
                parts.append("%")
            elif f in _FIELDS:
                parts.append(_FIELDS[f])
                used.add(f)
            else:
                raise PatternError(text, f"%{f} is not a field a name pattern may use "
                                   f"(%{' %'.join(_FIELDS)})")
            i += 2
        else:
            parts.append(re.escape(ch))
            i += 1
    if not used & {"Y", "y"} or not (used & {"j"} or {"m", "d"} <= used):
        raise PatternError(text, "gives no full date (it needs %Y or %y, and %m with %d or %j)")
    return CompiledPattern(text, re.compile("".join(parts)))


def tried_forms(pattern: CompiledPattern | None) -> str:
    """The name forms tried, for a message: the person's pattern first."""
    forms = ([pattern.text] if pattern is not None else []) + list(NAME_FORMS)
    return ", ".join(forms)

