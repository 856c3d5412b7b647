"""The gaps of a timeline marked over a plot: a hatched line each, with its length.

A deployment's gaps take no samples on the axis (docs/explanation/rooms/deployment.md),
so each is a mark at the sample where recording resumes, labelled with the time that
was not recorded.
"""

from __future__ import annotations

import bisect

import pyqtgraph as pg

from .overview import gap_pen

__all__ = ["GAP_LABELS_UP_TO", "GAP_MARKS_UP_TO", "GapMarks"]

#: gap marks in view up to which each shows its length as text (more: tool tips only)
GAP_LABELS_UP_TO = 20
#: gaps in view up to which each is marked (more would cover the image)
GAP_MARKS_UP_TO = 200


class GapMarks:
    """The marks of a timeline's gaps in a plot's view, made as needed and reused.

    Parameters
    ----------
    plot : pyqtgraph.PlotItem
        The plot the marks are drawn in.
    """

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        self.marks: list[pg.InfiniteLine] = []
        self.timeline = None
        self._ts: list[float] = []

    def set_timeline(self, timeline) -> None:
        """Mark the gaps of ``timeline`` (None: no gaps)."""
        for mark in self.marks:
            self.plot.removeItem(mark)
        self.marks = []
        self.timeline = timeline
        self._ts = [g.t for g in timeline.gaps] if timeline is not None else []

    def _mark(self) -> pg.InfiniteLine:
        mark = pg.InfiniteLine(angle=90, movable=False, pen=gap_pen(10), label="gap",
                               labelOpts={"position": 0.94, "color": (255, 220, 120),
                                          "fill": (0, 0, 0, 170), "anchors": [(0, 0), (0, 0)]})
        mark.setZValue(15)
        self.plot.addItem(mark, ignoreBounds=True)
        self.marks.append(mark)
        return mark

    def show_between(self, t0: float, t1: float) -> None:
        """Show the marks of the gaps between ``t0`` and ``t1`` s on the axis: each with its
        length while few are, none past :data:`GAP_MARKS_UP_TO`."""
        timeline = self.timeline
        if timeline is None:
            return
        lo, hi = bisect.bisect_left(self._ts, t0), bisect.bisect_right(self._ts, t1)
        shown = timeline.gaps[lo:hi] if hi - lo <= GAP_MARKS_UP_TO else []
        while len(self.marks) < len(shown):
            self._mark()
        labelled = len(shown) <= GAP_LABELS_UP_TO
        for k, mark in enumerate(self.marks):
            if k >= len(shown):
                mark.setVisible(False)
                continue
            gap = shown[k]
            if mark.value() != gap.t or mark.label.format != gap.text():
                mark.setValue(gap.t)
                mark.label.setFormat(gap.text())
                tip = (f"{gap.text()}: nothing recorded from "
                       f"{timeline.format(gap.start, 0)} to {timeline.format(gap.end, 0)}")
                if gap.before:
                    tip += f" (between {gap.before} and {gap.after})"
                mark.setToolTip(tip)
            mark.setVisible(True)
            mark.label.setVisible(labelled)

    def labels(self) -> list[tuple[float, str]]:
        """The marks shown: (place on the axis in s, label)."""
        return [(float(m.value()), m.label.format) for m in self.marks if m.isVisible()]
