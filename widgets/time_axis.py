"""TimeAxis: a time axis that reads like a clock on long spans and in s / ms on short ones.

pyqtgraph's own axis writes seconds with SI prefixes ("2.3444 ks"), which nobody
reads as a position in a recording.  This axis writes ``h:mm:ss`` (with as many
decimals as the tick spacing needs: ``0:39:04.25``) once a tick lies a minute
or more into the recording, plain seconds (``12.5 s``) below that, and
milliseconds (``20 ms``) within the first second; its major ticks fall on whole
clock steps (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h).
"""

from __future__ import annotations

import math

import pyqtgraph as pg

__all__ = ["CLOCK_STEPS", "TimeAxis", "format_time", "parse_time", "time_tick_strings"]

#: tick spacings (s) of spans of a second and more: whole clock steps
CLOCK_STEPS = (1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
               3600.0, 7200.0, 10800.0, 21600.0, 43200.0, 86400.0)
#: the most decimals a tick shows (microseconds)
MAX_DECIMALS = 6


def _decimals(spacing: float) -> int:
    """Decimals that tell ticks ``spacing`` apart (0 for whole units)."""
    if not spacing > 0 or spacing >= 1:
        return 0
    return min(MAX_DECIMALS, math.ceil(-math.log10(spacing) - 1e-9))


def format_time(seconds: float, spacing: float, style: str) -> str:
    """One tick label.

    Parameters
    ----------
    seconds : float
        The tick's time from the start of the recording.
    spacing : float
        Distance to the next tick (s): how many decimals are needed.
    style : {"clock", "s", "ms"}
        ``h:mm:ss(.fff)``, seconds with the unit, or milliseconds with the unit.
    """
    if style == "ms":
        return f"{seconds * 1000.0:.{_decimals(spacing * 1000.0)}f} ms"
    places = _decimals(spacing)
    if style == "s":
        return f"{seconds:.{places}f} s"
    sign = "-" if seconds < 0 else ""
    # round once at the shown precision, so 59.9996 s becomes 0:01:00.000, not 0:00:60.000
    ticks = round(abs(seconds) * 10 ** places)
    whole, frac = divmod(ticks, 10 ** places)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    text = f"{sign}{h}:{m:02d}:{s:02d}"
    return text + (f".{frac:0{places}d}" if places else "")


def parse_time(text: str) -> float:
    """A time typed by a person, in seconds: ``"12.5"``, ``"12.5 s"``, ``"250 ms"``,
    ``"1:05"`` (m:ss) or ``"0:39:04.25"`` (h:mm:ss).

    Raises
    ------
    ValueError
        The text is no time; the message says what is expected.
    """
    t = text.strip().lower()
    try:
        if ":" in t:
            parts = [float(p) for p in t.split(":")]
            if len(parts) > 3 or any(p < 0 for p in parts[1:]):
                raise ValueError
            value = 0.0
            for p in parts:
                value = value * 60.0 + p
        elif t.endswith("ms"):
            value = float(t[:-2]) / 1000.0
        else:
            value = float(t.removesuffix("s"))
    except ValueError:
        raise ValueError(f"{text!r} is not a time: write seconds (12.5), milliseconds "
                         "(250 ms) or h:mm:ss (0:39:04.25)") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite time")
    return value


def time_tick_strings(values: list[float], spacing: float) -> list[str]:
    """Labels of ticks ``spacing`` apart: clock, seconds or milliseconds by how far in they are.

    Ticks a minute or more from the start read as a clock; ticks within the
    first second, spaced below a second, in milliseconds; the rest in seconds.
    """
    if not values:
        return []
    far = max(abs(v) for v in values)
    if far >= 60.0:
        style = "clock"
    elif far < 1.0 and spacing < 1.0:
        style = "ms"
    else:
        style = "s"
    return [format_time(v, spacing, style) for v in values]


class TimeAxis(pg.AxisItem):
    """An axis of seconds labelled as clock time, seconds or milliseconds (no SI prefixes)."""

    def __init__(self, orientation: str = "bottom", **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickSpacing(self, minVal: float, maxVal: float, size: float):
        """Whole clock steps once the major ticks are a second or more apart."""
        spacings = super().tickSpacing(minVal, maxVal, size)
        if not spacings or spacings[0][0] < 1.0:
            return spacings
        # as many intervals as pyqtgraph would draw, on the next clock step up
        wanted = spacings[0][0]
        major = next((s for s in CLOCK_STEPS if s >= wanted - 1e-9), None)
        if major is None:  # beyond days: whole days
            major = 86400.0 * math.ceil(wanted / 86400.0)
        minor = next((s for s in reversed(CLOCK_STEPS) if s < major and major % s == 0
                      and major / s <= 6), major / 5 if major < 1.5 else None)
        result = [(major, 0.0)]
        if minor:
            result.append((minor, 0.0))
        return result

    def tickStrings(self, values, scale, spacing):
        """Clock, seconds or milliseconds (see :func:`time_tick_strings`)."""
        return time_tick_strings([v * scale for v in values], spacing * scale)
