"""OverviewPlot: the whole recording as a min/max envelope, with the visible span.

Stretches of NaN samples (buckets whose minimum or maximum is NaN) are drawn
in :data:`MISSING_COLOR` across the strip, and listed in
:attr:`OverviewPlot.missing_spans`.

A recording with a timeline (a deployment) shows each gap as a hatched mark at its
place on the sample axis (gaps take no samples), its length as tool tip; hovering
the strip marks the boundaries of the file under the pointer and names it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QObject, QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QBrush, QColor, QPen
from PyQt6.QtWidgets import QGraphicsItem

from .time_axis import TimeAxis

__all__ = ["GAP_COLOR", "MISSING_COLOR", "OverviewPlot", "gap_pen", "nan_spans"]

#: colour of stretches without valid samples (NaN), in the overview and the spectrogram
MISSING_COLOR = (0, 230, 120, 255)
#: colour of the hatched marks of gaps (no recording), in the overview and the spectrogram
GAP_COLOR = (255, 200, 40, 230)


def gap_pen(width: int) -> QPen:
    """The hatched pen of a gap's mark, ``width`` screen pixels wide."""
    pen = QPen(QBrush(QColor(*GAP_COLOR), Qt.BrushStyle.BDiagPattern), width)
    pen.setCosmetic(True)
    return pen


#: gaps marked on the strip at most (the first ones; more would cover it)
GAP_MARKS_UP_TO = 500
#: what the strip's tool tip says
OVERVIEW_TIP = "The whole recording; click or drag the bright region to move the view"


class _Signals(QObject):
    regionChanged = pyqtSignal(float, float)
    missingChanged = pyqtSignal()


def nan_spans(edges: np.ndarray, mins: np.ndarray, maxs: np.ndarray) -> list[tuple[float, float]]:
    """Time spans (s) of the envelope buckets holding NaN samples, neighbours merged.

    Parameters
    ----------
    edges : array
        Bucket edges (s), one more than buckets.
    mins, maxs : array
        Minimum and maximum sample of each bucket (NaN where a sample is NaN).

    Returns
    -------
    list of (float, float)
        Start and end (s) of each run of buckets holding NaN samples.

    Examples
    --------
    >>> nan_spans([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, float("nan"), float("nan"), 0.0],
    ...           [1.0, 1.0, 1.0, 1.0])
    [(1.0, 3.0)]
    """
    bad = np.isnan(np.asarray(mins, dtype=float)) | np.isnan(np.asarray(maxs, dtype=float))
    if not bad.any():
        return []
    step = np.diff(np.concatenate([[0], bad.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(step == 1), np.flatnonzero(step == -1)
    return [(float(edges[a]), float(edges[b])) for a, b in zip(starts, stops, strict=True)]


class OverviewPlot(pg.PlotItem):
    """A thin plot of the waveform envelope; the bright region is the visible span.

    ``signals.regionChanged(t0, t1)`` is emitted when the person drags the region;
    ``signals.missingChanged()`` when a new envelope changed :attr:`missing_spans`.
    Meant to sit under a spectrogram in the same layout column, so the time
    axes line up.

    Parameters
    ----------
    left_axis_width : int, optional
        Width of the (empty) left axis in pixels: the spectrogram's left axis width,
        so that the time axes line up.
    """

    def __init__(self, left_axis_width: int = 64) -> None:
        super().__init__(axisItems={"bottom": TimeAxis("bottom")})
        self.signals = _Signals()
        self.regionChanged = self.signals.regionChanged
        self.missingChanged = self.signals.missingChanged
        #: spans (s) of NaN samples in the recording, from the last envelope
        self.missing_spans: list[tuple[float, float]] = []
        self.setMaximumHeight(80)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getAxis("left").setWidth(left_axis_width)
        self.getAxis("left").setStyle(showValues=False)
        self.getAxis("left").setTicks([[]])
        pen = pg.mkPen((120, 180, 255), width=1)
        self._lo = pg.PlotDataItem(pen=pen)
        self._hi = pg.PlotDataItem(pen=pen)
        self._fill = pg.FillBetweenItem(self._lo, self._hi, brush=pg.mkBrush(80, 140, 230, 140))
        # filling the envelope's outline (thousands of vertices) takes a tenth of a second
        # and more; drawn once into a pixmap, it is copied when the region or the play
        # cursor moves over it (redrawn when the envelope or the strip's size changes)
        # (and so are its two outlines: the visible span moves over the strip at every step
        # of a review, and stroking them took a millisecond or two each time)
        for item in (self._fill, self._lo.curve, self._hi.curve):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        for item in (self._lo, self._hi, self._fill):
            self.addItem(item)
        self._missing = pg.ImageItem(axisOrder="row-major")
        self._missing.setZValue(5)
        self.addItem(self._missing)
        self.region = pg.LinearRegionItem(values=(0, 1), brush=pg.mkBrush(255, 255, 255, 40),
                                          pen=pg.mkPen((255, 255, 255, 200), width=1))
        self.region.setZValue(10)
        self.addItem(self.region)
        self._quiet = False
        self._extent: tuple[float, float] | None = None
        self.region.sigRegionChanged.connect(self._on_region)
        #: where playback is in the recording (hidden while nothing plays)
        self.play_cursor = pg.InfiniteLine(angle=90, movable=False,
                                           pen=pg.mkPen((255, 90, 60), width=2))
        self.play_cursor.setZValue(20)
        self.play_cursor.setVisible(False)
        self.addItem(self.play_cursor, ignoreBounds=True)
        self.setToolTip(OVERVIEW_TIP)
        #: the timeline of a recording with absolute times (None: none)
        self.timeline = None
        #: the marks of the gaps (hatched lines at their places on the axis)
        self.gap_marks: list[pg.InfiniteLine] = []
        #: the boundaries of the file under the pointer (hidden while it is away)
        self.file_lines = [pg.InfiniteLine(angle=90, movable=False,
                                           pen=pg.mkPen((255, 255, 255, 160), width=1,
                                                        style=Qt.PenStyle.DashLine))
                           for _ in range(2)]
        for line in self.file_lines:
            line.setVisible(False)
            line.setZValue(15)
            self.addItem(line, ignoreBounds=True)

    def set_timeline(self, timeline) -> None:
        """Mark the gaps of ``timeline`` (None: no marks, no file names on hover)."""
        for mark in self.gap_marks:
            self.removeItem(mark)
        self.gap_marks = []
        self.timeline = timeline
        self.hover_file(None)
        if timeline is None:
            return
        for gap in timeline.gaps[:GAP_MARKS_UP_TO]:
            mark = pg.InfiniteLine(pos=gap.t, angle=90, movable=False, pen=gap_pen(6))
            mark.setZValue(12)
            mark.setToolTip(f"{gap.text()}: {timeline.format(gap.start, 0)} to "
                            f"{timeline.format(gap.end, 0)}")
            self.addItem(mark, ignoreBounds=True)
            self.gap_marks.append(mark)

    def hover_file(self, t: float | None) -> str:
        """Mark the file at ``t`` s (its boundaries, its name as tool tip) and return
        its description; None: the pointer left."""
        timeline = self.timeline
        at = None if t is None or timeline is None else timeline.file_span(t)
        if at is None:
            for line in self.file_lines:
                line.setVisible(False)
            self.setToolTip(OVERVIEW_TIP)
            return ""
        name, start, end = at
        for line, pos in zip(self.file_lines, (start, end), strict=True):
            line.setPos(pos)
            line.setVisible(True)
        text = f"{name}  {timeline.format(timeline.to_time(start), 0)}"
        self.setToolTip(f"{text}\n{OVERVIEW_TIP}")
        return text

    def set_extent(self, t0: float, t1: float) -> None:
        """The recording's time span: the strip's axis, the region's bounds.

        A new span (another recording) puts the region over all of it; the same
        span keeps the region where it is.
        """
        if not t1 > t0:
            return
        new = self._extent != (t0, t1)
        self._extent = (t0, t1)
        self.setXRange(t0, t1, padding=0)
        self._quiet = True
        try:
            # bounds before the region: a region is clamped to the bounds it is given
            self.region.setBounds((t0, t1))
            if new:
                self.region.setRegion((t0, t1))
        finally:
            self._quiet = False

    def set_envelope(self, edges: np.ndarray, mins: np.ndarray, maxs: np.ndarray) -> None:
        """Bucket edges (s) and the minimum and maximum sample of each bucket."""
        edges = np.asarray(edges, dtype=float)
        centres = (edges[:-1] + edges[1:]) / 2
        self.missing_spans = nan_spans(edges, mins, maxs)
        lo, hi = np.nan_to_num(mins), np.nan_to_num(maxs)  # NaN buckets: drawn as gaps
        self._lo.setData(centres, lo)
        self._hi.setData(centres, hi)
        peak = float(max(np.max(np.abs(lo)), np.max(np.abs(hi)), 1e-12)) if lo.size else 1.0
        self.setYRange(-peak, peak, padding=0.05)
        self.set_extent(float(edges[0]), float(edges[-1]))
        self._draw_missing(edges, mins, maxs, peak)
        self.missingChanged.emit()

    def _draw_missing(self, edges: np.ndarray, mins: np.ndarray, maxs: np.ndarray,
                      peak: float) -> None:
        if not self.missing_spans:
            self._missing.clear()
            return
        bad = np.isnan(np.asarray(mins, dtype=float)) | np.isnan(np.asarray(maxs, dtype=float))
        rgba = np.zeros((1, bad.size, 4), np.uint8)
        rgba[0, bad] = MISSING_COLOR
        self._missing.setImage(rgba, autoLevels=False)
        self._missing.setRect(QRectF(float(edges[0]), -peak, float(edges[-1] - edges[0]),
                                     2 * peak))

    def clear_envelope(self) -> None:
        """Forget the envelope (a new recording is coming); its span comes with set_extent."""
        self._lo.setData([], [])
        self._hi.setData([], [])
        self._missing.clear()
        self._extent = None
        if self.missing_spans:
            self.missing_spans = []
            self.missingChanged.emit()

    def set_region(self, t0: float, t1: float) -> None:
        """Show the visible span (does not emit regionChanged)."""
        self._quiet = True
        try:
            self.region.setRegion((t0, t1))
        finally:
            self._quiet = False

    def jump_to(self, t: float) -> None:
        """Centre the region on ``t`` s, its width kept, inside the recording; emits
        regionChanged (a click on the strip moves the view there)."""
        if self._extent is None:
            return
        e0, e1 = self._extent
        r0, r1 = self.region.getRegion()
        width = min(r1 - r0, e1 - e0)
        a = min(max(t - width / 2, e0), e1 - width)
        self.region.setRegion((a, a + width))  # emits through _on_region

    def set_play_cursor(self, t: float | None) -> None:
        """Draw the play cursor at ``t`` s; None hides it."""
        if t is None:
            self.play_cursor.setVisible(False)
            return
        self.play_cursor.setValue(float(t))
        self.play_cursor.setVisible(True)

    def _on_region(self) -> None:
        if not self._quiet:
            t0, t1 = self.region.getRegion()
            self.regionChanged.emit(float(t0), float(t1))
