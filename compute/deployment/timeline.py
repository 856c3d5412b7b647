"""The absolute time of a recording's axis: clock ticks, gaps, files and diel counts.

A view draws a recording on its sample axis (seconds = sample / rate); a
:class:`Timeline` says what time each point of that axis was recorded: a
:class:`~specscope.compute.deployment.Deployment`'s segments (gaps take no room on the
axis) or one stretch from a file's start time.  It gives the ticks of an axis in
calendar steps (years down to milliseconds, in the recording's zone), the gaps with
their lengths, the file under a point, and the point of a date and time (an error
naming the gap when none was recorded then).  :func:`diel_counts` counts detections
by date, hour of day and label, with the seconds recorded in each hour.
"""

from __future__ import annotations

import bisect
import csv
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .times import parse_iso, parse_zone

__all__ = ["DielCounts", "GapMark", "Stretch", "TimeNotRecorded", "Timeline",
           "diel_counts", "duration_text", "offset_text", "write_diel_csv"]

#: tick steps below a day (s), finest first
CLOCK_STEPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
               15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
               10800.0, 21600.0, 43200.0)
#: tick steps of days, then of months (as negative month counts), then years
DAY_STEPS = (1, 2, 7, 14)
MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120)
#: most ticks one call gives (a bound against a huge span at a fine step)
MAX_TICKS = 2000


class TimeNotRecorded(InputError):
    """A date and time at which the recording holds no sample.

    Attributes
    ----------
    when : datetime
        The time asked for (UTC).
    gap : GapMark or None
        The gap it lies in; None when it lies before the first or after the last sample.
    """

    def __init__(self, message: str, when: datetime, gap: GapMark | None = None) -> None:
        super().__init__(message)
        self.when = when
        self.gap = gap


@dataclass(frozen=True)
class Stretch:
    """A contiguous piece of the axis: ``t0 .. t1`` s, recorded from ``start`` (UTC)."""

    t0: float
    t1: float
    start: datetime


@dataclass(frozen=True)
class GapMark:
    """A gap as a view marks it.

    Attributes
    ----------
    t : float
        Where it sits on the axis (s): the first sample after it.
    length_s : float
        How long nothing was recorded.
    start : datetime
        When it starts (UTC).
    before, after : str
        Names of the files on either side ("" when unknown).
    """

    t: float
    length_s: float
    start: datetime
    before: str = ""
    after: str = ""

    @property
    def end(self) -> datetime:
        """When recording starts again (UTC)."""
        return self.start + timedelta(seconds=self.length_s)

    def text(self) -> str:
        """``"gap 2 h 13 min"``."""
        return f"gap {duration_text(self.length_s)}"


@dataclass
class Timeline:
    """Absolute times of a recording's axis.

    Parameters
    ----------
    stretches : list of Stretch
        The contiguous pieces, in order on the axis.
    tz : str
        The zone dates and hours are shown in (``"UTC"``, ``"+02:00"``, an IANA name).
    gaps : list of GapMark, optional
        The gaps between stretches.
    file_starts : list of float, optional
        The axis time (s) each file starts at, with ``file_names``.
    file_names : list of str, optional
        The files' names (shown in a readout).
    """

    stretches: list[Stretch]
    tz: str = "UTC"
    gaps: list[GapMark] = field(default_factory=list)
    file_starts: list[float] = field(default_factory=list)
    file_names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.zone: tzinfo = parse_zone(self.tz)
        self._t0s = [s.t0 for s in self.stretches]
        self._starts = [s.start for s in self.stretches]

    # -- making one --------------------------------------------------------------------
    @classmethod
    def of(cls, recording: Any) -> Timeline | None:
        """The timeline of ``recording``: a deployment's segments, or one stretch from a
        file's ``start_time``; None when it states no absolute start."""
        index = getattr(recording, "index", None)
        rate = float(recording.sample_rate)
        if index is not None and getattr(index, "segments", None):
            stretches = [Stretch(s.start_sample / rate, s.stop_sample / rate,
                                 s.start.astimezone(UTC)) for s in index.segments]
            gaps = [GapMark(g.sample / rate, float(g.length_s), g.start.astimezone(UTC),
                            Path(str(g.before)).name, Path(str(g.after)).name)
                    for g in index.gaps]
            offsets = index.file_offsets()[:-1]
            return cls(stretches, str(index.tz), gaps, [o / rate for o in offsets],
                       [Path(str(f.path)).name for f in index.used])
        text = getattr(recording, "start_time", None)
        start = parse_iso(str(text)) if text else None
        if start is None:
            return None
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        duration = recording.n_samples / rate
        return cls([Stretch(0.0, duration, start.astimezone(UTC))], "UTC")

    # -- the axis and time -------------------------------------------------------------
    @property
    def start(self) -> datetime:
        """Time of the first sample (UTC)."""
        return self.stretches[0].start

    @property
    def end(self) -> datetime:
        """Time just after the last sample (UTC)."""
        s = self.stretches[-1]
        return s.start + timedelta(seconds=s.t1 - s.t0)

    def _stretch(self, t: float) -> Stretch:
        i = bisect.bisect_right(self._t0s, t) - 1
        return self.stretches[min(max(i, 0), len(self.stretches) - 1)]

    def to_time(self, t: float) -> datetime:
        """The time (UTC) of axis point ``t`` s."""
        s = self._stretch(t)
        return s.start + timedelta(seconds=t - s.t0)

    def local(self, when: datetime) -> datetime:
        """``when`` in the timeline's zone."""
        return when.astimezone(self.zone)

    def to_axis(self, when: datetime) -> float:
        """The axis point (s) of ``when`` (naive: in the timeline's zone).

        Raises
        ------
        TimeNotRecorded
            ``when`` lies before the first sample, after the last or in a gap (named).
        """
        if when.tzinfo is None:
            when = when.replace(tzinfo=self.zone)
        when = when.astimezone(UTC)
        if when < self.start or when > self.end:
            raise TimeNotRecorded(
                f"{self.format(when, None)} lies outside the recording "
                f"({self.format(self.start, None)} to {self.format(self.end, None)})", when)
        i = max(bisect.bisect_right(self._starts, when) - 1, 0)
        s = self.stretches[i]
        t = s.t0 + (when - s.start).total_seconds()
        if t <= s.t1:
            return t
        gap = next((g for g in self.gaps if abs(g.t - s.t1) < 1e-9 or g.t == s.t1), None)
        if gap is None:  # no gap list: the stretch after names it
            nxt = self.stretches[i + 1]
            end = s.start + timedelta(seconds=s.t1 - s.t0)
            gap = GapMark(nxt.t0, (nxt.start - end).total_seconds(), end)
        between = f" between {gap.before} and {gap.after}" if gap.before else ""
        raise TimeNotRecorded(
            f"{self.format(when, None)} lies in a {gap.text()}{between} "
            f"({self.format(gap.start, None)} to {self.format(gap.end, None)}): nothing was "
            "recorded then", when, gap)

    def parse(self, text: str) -> float:
        """The axis point (s) of a date and time a person typed (ISO 8601; without a zone,
        in the timeline's zone).

        Raises
        ------
        InputError
            The text is no date and time; :class:`TimeNotRecorded` when nothing was
            recorded then.
        """
        when = parse_iso(_whole(str(text)))
        if when is None:
            raise InputError(f"{str(text).strip()!r} is no date and time (write it as "
                             "2024-05-01T14:30:00, a zone such as Z or +02:00 optional)")
        return self.to_axis(when)

    def format(self, when: datetime, decimals: int | None = 3) -> str:
        """``2024-05-01 14:30:05.250 UTC``: ``when`` in the timeline's zone, with
        ``decimals`` of a second (None: those it has, none for a whole second)."""
        loc = self.local(when)
        text = loc.strftime("%Y-%m-%d %H:%M:%S")
        if decimals is None:
            text += f".{loc.microsecond:06d}".rstrip("0").rstrip(".")
        elif decimals:
            text += f".{loc.microsecond:06d}"[:decimals + 1]
        return f"{text} {self.tz}"

    def file_at(self, t: float) -> tuple[str, float] | None:
        """The file holding axis point ``t`` s and the time into it (s); None without
        files."""
        if not self.file_starts:
            return None
        k = bisect.bisect_right(self.file_starts, t) - 1
        k = min(max(k, 0), len(self.file_starts) - 1)
        return self.file_names[k], max(t - self.file_starts[k], 0.0)

    def file_span(self, t: float) -> tuple[str, float, float] | None:
        """The file holding axis point ``t`` s: its name, first and end point (s); None
        without files."""
        if not self.file_starts:
            return None
        k = bisect.bisect_right(self.file_starts, t) - 1
        k = min(max(k, 0), len(self.file_starts) - 1)
        end = self.file_starts[k + 1] if k + 1 < len(self.file_starts) else \
            self.stretches[-1].t1
        return self.file_names[k], self.file_starts[k], end

    def gaps_in(self, t0: float, t1: float) -> list[GapMark]:
        """The gaps whose marks lie within ``t0 .. t1`` s."""
        return [g for g in self.gaps if t0 <= g.t <= t1]

    # -- the ticks of an axis ----------------------------------------------------------
    def ticks(self, t0: float, t1: float, most: int) -> tuple[str, list[tuple[float, str]]]:
        """Ticks of the axis span ``t0 .. t1`` s: calendar steps in the timeline's zone.

        Parameters
        ----------
        t0, t1 : float
            The visible span of the axis (s).
        most : int
            About how many ticks fit.

        Returns
        -------
        (str, list of (float, str))
            The step's kind (``"year"``, ``"month"``, ``"day"``, ``"minute"``,
            ``"second"``, ``"subsecond"``, ``"ms"``) and each tick's axis point and label.
        """
        if not t1 > t0 or not self.stretches:
            return "second", []
        most = max(int(most), 1)
        i0 = max(bisect.bisect_right(self._t0s, t0) - 1, 0)
        i1 = bisect.bisect_right(self._t0s, t1)
        span = (self.to_time(t1) - self.to_time(t0)).total_seconds()
        # a gap in view holds at most one tick (at its mark): the step is chosen by the
        # recorded seconds in view plus the gaps, so that about `most` ticks are drawn
        step = _step(t1 - t0, most, span, max(i1 - i0 - 1, 0))
        least = (t1 - t0) / most * 0.5  # ticks closer than this are left out
        out: list[tuple[float, str]] = []

        def add(t: float, when: datetime) -> None:
            if not out or t - out[-1][0] >= least:
                out.append((t, _label(when, step)))

        for i in range(i0, min(i1, len(self.stretches))):
            s = self.stretches[i]
            if i > i0 and t0 <= s.t0 <= t1:
                # a gap holding a grid time: one tick at its mark, naming the time
                # recording starts again
                prev = self.stretches[i - 1]
                gap_start = prev.start + timedelta(seconds=prev.t1 - prev.t0)
                first = next(iter(_calendar(self.local(gap_start), self.local(s.start),
                                            step)), None)
                if first is not None and first < s.start:
                    add(s.t0, self.local(s.start))
            a, b = max(t0, s.t0), min(t1, s.t1)
            if b < a:
                continue
            lo = s.start + timedelta(seconds=a - s.t0)
            hi = s.start + timedelta(seconds=b - s.t0)
            for when in _calendar(self.local(lo), self.local(hi), step):
                t = s.t0 + (when.astimezone(UTC) - s.start).total_seconds()
                last = i + 1 < len(self.stretches) and t >= s.t1 - 1e-9  # the next's
                if a - 1e-9 <= t <= b + 1e-9 and not last:
                    add(t, when)
                if len(out) >= MAX_TICKS:
                    break
            if len(out) >= MAX_TICKS:
                break
        return _kind(step), out

    def caption(self, t: float, t1: float | None = None) -> str:
        """The axis title of a view from ``t`` to ``t1`` s: ``"2024-05-01 (UTC)"``, or
        ``"2024-05-01 – 2024-05-02 (UTC)"`` when it spans days."""
        first = self.local(self.to_time(t)).strftime("%Y-%m-%d")
        last = first if t1 is None else self.local(self.to_time(t1)).strftime("%Y-%m-%d")
        return f"{first}{'' if last == first else ' – ' + last} ({self.tz})"


def _whole(text: str) -> str:
    """A date, or a date and hh:mm, completed to a date and hh:mm:ss."""
    text = text.strip()
    m = re.match(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}):(\d{2}))?\s*(Z|[+-]\d{2}:?\d{2})?$",
                 text, re.IGNORECASE)
    if not m:
        return text
    day, hour, minute, zone = m.groups()
    clock = f"{int(hour):02d}:{minute}:00" if hour else "00:00:00"
    return f"{day}T{clock}{zone or ''}"


def _step(recorded: float, most: int, span: float | None = None,
          gaps: int = 0) -> float | tuple[str, int]:
    """The finest calendar step giving at most about ``most`` ticks: ``recorded``
    seconds in view, ``gaps`` gaps (one tick each at most) over ``span`` seconds of time."""
    span = recorded if span is None else span

    def fits(step_s: float) -> bool:
        return recorded / step_s + min(gaps, span / step_s) <= most

    for s in CLOCK_STEPS:
        if fits(s):
            return s
    for d in DAY_STEPS:
        if fits(d * 86400.0):
            return ("day", d)
    for m in MONTH_STEPS:
        if fits(m * 30.44 * 86400.0):
            return ("month", m)
    return ("month", 12 * max(1, math.ceil(span / (365.25 * 86400.0) / most)))


def _kind(step: float | tuple[str, int]) -> str:
    if isinstance(step, tuple):
        return "year" if step[0] == "month" and step[1] % 12 == 0 else step[0]
    if step >= 60:
        return "minute"
    if step >= 1:
        return "second"
    return "subsecond" if step >= 0.01 else "ms"


def _calendar(lo: datetime, hi: datetime, step: float | tuple[str, int]) -> Iterable[datetime]:
    """Local times on the step's grid from ``lo`` to ``hi`` (both local, aware)."""
    zone = lo.tzinfo
    if isinstance(step, tuple):
        kind, n = step
        if kind == "day":
            day0 = date(1970, 1, 1)
            d = lo.date()
            d -= timedelta(days=(d - day0).days % n)
            while True:
                when = datetime(d.year, d.month, d.day, tzinfo=zone)
                if when > hi:
                    return
                if when >= lo:
                    yield when
                d += timedelta(days=n)
        m = (lo.year * 12 + lo.month - 1) // n * n
        while True:
            when = datetime(m // 12, m % 12 + 1, 1, tzinfo=zone)
            if when > hi:
                return
            if when >= lo:
                yield when
            m += n
    midnight = datetime(lo.year, lo.month, lo.day, tzinfo=zone)
    into = (lo.replace(tzinfo=None) - midnight.replace(tzinfo=None)).total_seconds()
    # whole microseconds: steps of a millisecond land exactly
    us = round(step * 1e6)
    k = math.ceil(round(into * 1e6) / us)
    while True:
        when = midnight + timedelta(microseconds=k * us)
        if when.date() != midnight.date():  # the next day starts its own grid
            when = datetime(when.year, when.month, when.day, tzinfo=zone)
            midnight, k = when, 0
        if when > hi:
            return
        yield when
        k += 1


def _label(when: datetime, step: float | tuple[str, int]) -> str:
    if isinstance(step, tuple):
        if step[0] == "day":
            return when.strftime("%Y-%m-%d")
        return when.strftime("%Y") if step[1] % 12 == 0 else when.strftime("%Y-%m")
    if when.hour == when.minute == when.second == when.microsecond == 0:
        return when.strftime("%Y-%m-%d")  # midnight names the day
    if step >= 60:
        return when.strftime("%H:%M")
    if step >= 1 or when.microsecond == 0:
        return when.strftime("%H:%M:%S")
    if step >= 0.01:
        decimals = max(1, -math.floor(math.log10(step) + 1e-9))
        return when.strftime("%H:%M:%S") + f".{when.microsecond:06d}"[:decimals + 1]
    return f"{when.microsecond // 1000:03d} ms"


def duration_text(seconds: float) -> str:
    """A length as people say it: ``"2 h 13 min"``, ``"4 min 5 s"``, ``"3 d 2 h"``.

    Examples
    --------
    >>> duration_text(7980), duration_text(245), duration_text(0.25)
    ('2 h 13 min', '4 min 5 s', '0.25 s')
    """
    s = float(seconds)
    if s < 60:
        return f"{s:.3g} s" if s < 10 else f"{round(s)} s"
    if s < 3600:
        m, r = divmod(round(s), 60)
        return f"{m} min {r} s" if r else f"{m} min"
    if s < 86400:
        h, r = divmod(round(s / 60), 60)
        return f"{h} h {r} min" if r else f"{h} h"
    d, r = divmod(round(s / 3600), 24)
    return f"{d} d {r} h" if r else f"{d} d"


def offset_text(seconds: float) -> str:
    """A time into a file: ``"+00:12.345"``, ``"+1:02:03.456"``.

    Examples
    --------
    >>> offset_text(12.345), offset_text(3723.456)
    ('+00:12.345', '+1:02:03.456')
    """
    ms = round(max(float(seconds), 0.0) * 1000)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    sec, frac = divmod(rest, 1000)
    if h:
        return f"+{h}:{m:02d}:{sec:02d}.{frac:03d}"
    return f"+{m:02d}:{sec:02d}.{frac:03d}"


# -- detections by date and hour ---------------------------------------------------------


@dataclass
class DielCounts:
    """Detections counted by date, hour of day and label.

    Attributes
    ----------
    dates : list of date
        Every date from the first to the last (in the zone), in order.
    labels : list of str
        The labels, sorted.
    counts : ndarray of int, shape (labels, dates, 24)
        Detections starting in each hour.
    recorded_s : ndarray of float, shape (dates, 24)
        Seconds recorded in each hour (NaN when not known).
    tz : str
        The zone of the dates and hours.
    """

    dates: list[date]
    labels: list[str]
    counts: np.ndarray
    recorded_s: np.ndarray
    tz: str = "UTC"

    def total(self, label: str | None = None) -> np.ndarray:
        """Counts of one label, or of all (``None``), shape (dates, 24)."""
        if label is None:
            return self.counts.sum(axis=0)
        return self.counts[self.labels.index(label)]

    def rows(self) -> list[tuple[str, int, str, int, float]]:
        """``(date, hour, label, count, recorded_s)`` of every cell, by date, hour, label."""
        out = []
        for d, day in enumerate(self.dates):
            for h in range(24):
                for k, label in enumerate(self.labels):
                    out.append((day.isoformat(), h, label, int(self.counts[k, d, h]),
                                float(self.recorded_s[d, h])))
        return out


def diel_counts(times: Sequence[datetime], labels: Sequence[str], *, tz: str = "UTC",
                timeline: Timeline | None = None) -> DielCounts:
    """Count detections by date, hour of day (in ``tz``) and label.

    Parameters
    ----------
    times : sequence of datetime
        When each detection starts (aware; naive ones are read as UTC).
    labels : sequence of str
        Each detection's label ("" counts as ``"(none)"``).
    tz : str
        The zone of dates and hours.
    timeline : Timeline, optional
        The recording's timeline: the dates span it, and ``recorded_s`` says how long
        each hour was recorded.

    Returns
    -------
    DielCounts

    Raises
    ------
    InputError
        ``times`` and ``labels`` differ in length.
    """
    if len(times) != len(labels):
        raise InputError(f"{len(times)} detection times but {len(labels)} labels")
    zone = parse_zone(tz)

    def local(when: datetime) -> datetime:
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(zone)

    stamps = [local(t) for t in times]
    names = [str(v) or "(none)" for v in labels]
    days = [s.date() for s in stamps]
    if timeline is not None:
        days += [local(timeline.start).date(), local(timeline.end).date()]
    if not days:
        return DielCounts([], [], np.zeros((0, 0, 24), np.int64), np.zeros((0, 24)), str(tz))
    first, last = min(days), max(days)
    dates = [first + timedelta(days=k) for k in range((last - first).days + 1)]
    kinds = sorted(set(names))
    counts = np.zeros((len(kinds), len(dates), 24), np.int64)
    for s, name in zip(stamps, names, strict=True):
        counts[kinds.index(name), (s.date() - first).days, s.hour] += 1
    recorded = np.full((len(dates), 24), np.nan)
    if timeline is not None:
        recorded[:] = 0.0
        for st in timeline.stretches:
            _add_recorded(recorded, first, local(st.start),
                          local(st.start + timedelta(seconds=st.t1 - st.t0)))
    return DielCounts(dates, kinds, counts, recorded, str(tz))


def _add_recorded(recorded: np.ndarray, first: date, a: datetime, b: datetime) -> None:
    """Add the seconds from ``a`` to ``b`` (local) to the hours they cover."""
    while a < b:
        hour = a.replace(minute=0, second=0, microsecond=0)
        nxt = min(b, (hour.replace(tzinfo=None) + timedelta(hours=1)).replace(tzinfo=a.tzinfo))
        if nxt <= a:  # a clock change: take an hour by elapsed time
            nxt = min(b, a + timedelta(hours=1))
        d = (a.date() - first).days
        if 0 <= d < recorded.shape[0]:
            recorded[d, a.hour] += (nxt - a).total_seconds()
        a = nxt


def write_diel_csv(path: str | Path, counts: DielCounts) -> Path:
    """Write ``counts`` as CSV: ``date,hour,label,count,recorded_s`` (a new file; an
    existing one is replaced whole).

    Returns
    -------
    Path
        The file written.
    """
    from ..files import atomic_file

    path = Path(path)
    with atomic_file(path, what="file name ending in .csv") as tmp, \
            open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["date", "hour", "label", "count", "recorded_s"])
        for day, hour, label, n, rec in counts.rows():
            w.writerow([day, hour, label, n, "" if math.isnan(rec) else f"{rec:g}"])
    return path
