"""TimeAxis: a time axis that reads like a clock on long spans and in s / ms on short ones.

pyqtgraph's own axis writes seconds with SI prefixes ("2.3444 ks"), which nobody
reads as a position in a recording.  This axis writes ``h:mm:ss`` (with as many
decimals as the tick spacing needs: ``0:39:04.25``) once a tick lies a minute
or more into the recording, plain seconds (``12.5 s``) below that, and
milliseconds (``20 ms``) within the first second; its major ticks fall on whole
clock steps (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h).
The labels follow :mod:`specscope.compute.timefmt`, the rule every time shown
by specscope follows.

A recording with an absolute start (a deployment, a file stating its start time)
gives the axis a :class:`~specscope.compute.deployment.timeline.Timeline`
(:meth:`TimeAxis.set_timeline`): the ticks then fall on calendar steps in the
recording's zone and read as dates, ``hh:mm``, ``hh:mm:ss.fff`` or ms, by the zoom;
a gap in view holds at most one tick, at its mark.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from specscope.compute.timefmt import format_time, time_style

__all__ = ["CLOCK_STEPS", "TimeAxis", "time_tick_strings"]

#: tick spacings (s) of spans of a second and more: whole clock steps
CLOCK_STEPS = (1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
               3600.0, 7200.0, 10800.0, 21600.0, 43200.0, 86400.0)


def time_tick_strings(values: list[float], spacing: float) -> list[str]:
    """Labels of ticks ``spacing`` apart: clock, seconds or milliseconds by how far in they are.

    Ticks a minute or more from the start read as a clock; ticks within the
    first second, spaced below a second, in milliseconds; the rest in seconds.

    Parameters
    ----------
    values : list of float
        The tick positions (s).
    spacing : float
        The spacing of the ticks (s): it sets the decimals shown.

    Returns
    -------
    list of str
        One label per tick, all in the style of the farthest one.

    Examples
    --------
    >>> time_tick_strings([0.0, 0.02, 0.04], 0.02)
    ['0 ms', '20 ms', '40 ms']
    >>> time_tick_strings([3600.0, 3660.0], 60.0)
    ['1:00:00', '1:01:00']
    """
    if not values:
        return []
    style = time_style(max(abs(v) for v in values), spacing)
    return [format_time(v, spacing, style) for v in values]


class TimeAxis(pg.AxisItem):
    """An axis of seconds labelled as clock time, seconds or milliseconds (no SI prefixes).

    Parameters
    ----------
    orientation : {"bottom", "top", "left", "right"}, optional
        Where the axis sits.
    **kwargs
        Passed to :class:`pyqtgraph.AxisItem`.
    """

    #: least room of a label of absolute time (pixels)
    CLOCK_LABEL_PX = 95

    def __init__(self, orientation: str = "bottom", **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)
        #: the absolute times of the axis (None: seconds into the recording)
        self.timeline = None
        self._labels: dict[float, str] = {}
        #: the kind of step of the last ticks of absolute time ("day", "minute", ...)
        self.step_kind = ""

    def set_timeline(self, timeline) -> None:
        """Label the axis with absolute times of ``timeline`` (None: seconds again)."""
        self.timeline = timeline
        self._labels = {}
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):
        """Calendar ticks of the timeline, else pyqtgraph's (on clock steps)."""
        if self.timeline is None:
            return super().tickValues(minVal, maxVal, size)
        kind, ticks = self.timeline.ticks(float(minVal), float(maxVal),
                                          max(2, int(size / self.CLOCK_LABEL_PX)))
        self.step_kind = kind
        self._labels = dict(ticks)
        spacing = (maxVal - minVal) / max(len(ticks), 1)
        return [(spacing, [t for t, _ in ticks])]

    def tick_labels(self) -> list[tuple[float, str]]:
        """The ticks of absolute time last drawn: (position s, label)."""
        return sorted(self._labels.items())

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
        """Clock, seconds or milliseconds (see :func:`time_tick_strings`); the labels
        of the timeline's ticks when it has one."""
        if self.timeline is not None:
            return [self._labels.get(v, "") for v in values]
        return time_tick_strings([v * scale for v in values], spacing * scale)
