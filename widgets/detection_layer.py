"""DetectionLayer: a detector's events over a SpectrogramView, apart from the annotations.

Detections are drawn as dashed boxes with their score above the top-left
corner, so they never read as annotations (solid boxes with labels): pending
ones in yellow, accepted ones in green, rejected ones in a dim grey; the one
under review is drawn thicker with a light fill.  The layer draws in the
spectrogram's own axes (time on x, the frequency axis' coordinate on y, so
linear, log and mel scales line up); only the detections in view get items,
recycled from a pool, and more than :data:`MAX_ITEMS` in view are drawn
together as one path without scores.  It takes no gestures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QObject, QRectF, Qt
from PyQt6.QtGui import QPainterPath
from PyQt6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem, QLabel

from .frequency_axis import forward
from .spectrogram_view import SpectrogramView

__all__ = ["COLORS", "MAX_ITEMS", "DetectionLayer"]

#: most detections drawn as separate items; beyond, one path without scores
MAX_ITEMS = 300
#: colour of a detection by its decision
COLORS = {"": (255, 225, 60), "accepted": (90, 230, 110), "rejected": (150, 150, 150)}


class DetectionLayer(QObject):
    """Dashed boxes of detections with their scores, over ``view``'s plot.

    Parameters
    ----------
    view : SpectrogramView
        The view whose plot the boxes are drawn on.
    parent : QObject or None, optional
        The Qt parent.
    """

    def __init__(self, view: SpectrogramView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.plot = view.plot
        self.vb = view.plot.getViewBox()
        #: index of the detection under review, or None
        self.current: int | None = None
        self._boxes = np.zeros((0, 4))   # start, stop, low, high (NaN: time only)
        self._scores = np.zeros(0)       # the scores (NaN: none), formatted when drawn
        self._states: list[str] = []
        self._rects: list[QGraphicsRectItem] = []
        self._texts: list[pg.TextItem] = []
        self._shown: list[int] = []
        self._dense = QGraphicsPathItem()
        self._dense.setPen(pg.mkPen((255, 225, 60, 170), width=1, style=Qt.PenStyle.DashLine))
        self._dense.setZValue(4)
        self._dense.setVisible(False)
        self.plot.addItem(self._dense, ignoreBounds=True)
        self.banner = QLabel(view)
        self.banner.setStyleSheet("QLabel { background: rgba(0, 0, 0, 170); color: #ffe13c; "
                                  "padding: 3px 8px; font-weight: bold; }")
        self.banner.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.banner.setVisible(False)
        self.vb.sigRangeChanged.connect(self.redraw)
        self.vb.sigResized.connect(self._place_banner)

    # -- what is drawn -------------------------------------------------------------------
    def set_detections(self, boxes: np.ndarray, scores: Sequence[float],
                       states: Sequence[str] | None = None) -> None:
        """Draw ``boxes`` (rows of start s, stop s, low Hz, high Hz; NaN band: time only)."""
        self._boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        self._scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        self._states = list(states) if states is not None else [""] * len(self._boxes)
        if self.current is not None and self.current >= len(self._boxes):
            self.current = None
        self.redraw()

    def set_states(self, states: Sequence[str]) -> None:
        """New decisions (colours), the boxes as they were."""
        self._states = list(states)
        self.redraw()

    def set_current(self, index: int | None, redraw: bool = True) -> None:
        """Draw detection ``index`` as the one under review (None: none); ``redraw=False``
        when a change of the view's range that redraws anyway follows."""
        self.current = index
        if redraw:
            self.redraw()

    def set_banner(self, text: str) -> None:
        """A line over the plot's top-right corner ("" hides it): what is under review."""
        self.banner.setText(text)
        self.banner.adjustSize()
        self._place_banner()
        self.banner.setVisible(bool(text))

    def _place_banner(self, *_: object) -> None:
        rect = self.vb.sceneBoundingRect()
        top_right = self.view.mapFromScene(rect.topRight())
        self.banner.move(max(0, top_right.x() - self.banner.width() - 6), top_right.y() + 6)

    def clear(self) -> None:
        self.current = None
        self.set_detections(np.zeros((0, 4)), [], [])

    def drawn(self) -> list[int]:
        """Indices of the detections drawn as separate items."""
        return list(self._shown)

    def item_of(self, index: int) -> QGraphicsRectItem | None:
        """The rectangle item drawn for detection ``index`` (None when not drawn)."""
        for i, rect in zip(self._shown, self._rects, strict=False):
            if i == index:
                return rect
        return None

    def rect_of(self, index: int) -> QRectF | None:
        """The rectangle (view coordinates) drawn for detection ``index``."""
        item = self.item_of(index)
        return None if item is None else item.rect()

    def score_items(self) -> list[pg.TextItem]:
        return [t for t in self._texts if t.isVisible()]

    # -- drawing -------------------------------------------------------------------------
    def _y(self, f: np.ndarray) -> np.ndarray:
        scale = self.view.freq_scale
        f = np.asarray(f, dtype=np.float64)
        return forward(scale, np.maximum(f, 1e-3) if scale == "log" else f)

    def redraw(self, *_: object) -> None:
        """Place the items of the detections in view (on every pan and zoom)."""
        (t0, t1), (y0, y1) = self.vb.viewRange()
        b = self._boxes
        if len(b):
            timeonly = np.isnan(b[:, 2]) | np.isnan(b[:, 3])
            lo = np.where(timeonly, y0, self._y(np.where(timeonly, 0.0, b[:, 2])))
            hi = np.where(timeonly, y1, self._y(np.where(timeonly, 0.0, b[:, 3])))
            idx = np.flatnonzero((b[:, 1] >= t0) & (b[:, 0] <= t1) & (hi >= y0) & (lo <= y1))
        else:
            lo = hi = np.zeros(0)
            idx = np.zeros(0, int)
        dense = len(idx) > MAX_ITEMS
        self._dense.setVisible(dense)
        if dense:
            path = QPainterPath()
            for i in idx:
                path.addRect(QRectF(b[i, 0], lo[i], b[i, 1] - b[i, 0], hi[i] - lo[i]))
            self._dense.setPath(path)
            idx = np.array([i for i in idx if i == self.current], int)
        n = len(idx)
        while len(self._rects) < n:
            item = QGraphicsRectItem()
            self.plot.addItem(item, ignoreBounds=True)
            self._rects.append(item)
        while len(self._texts) < n:
            text = pg.TextItem("", anchor=(0, 1), fill=pg.mkBrush(0, 0, 0, 140))
            text.setZValue(8)
            self.plot.addItem(text, ignoreBounds=True)
            self._texts.append(text)
        self._shown = [int(i) for i in idx]
        px_t = self.vb.sceneBoundingRect().width() / max(t1 - t0, 1e-300)
        right = -math.inf  # where the last score drawn ends (pixels): scores never overlap
        for k, i in enumerate(self._shown):
            color = COLORS.get(self._states[i] if i < len(self._states) else "", COLORS[""])
            current = i == self.current
            rect = self._rects[k]
            rect.setRect(QRectF(b[i, 0], lo[i], b[i, 1] - b[i, 0], hi[i] - lo[i]))
            rect.setPen(pg.mkPen(color, width=3 if current else 1.5,
                                 style=Qt.PenStyle.DashLine))
            rect.setBrush(pg.mkBrush(*color, 40) if current else pg.mkBrush(0, 0, 0, 0))
            rect.setZValue(6 if current else 4)
            rect.setVisible(True)
            text = self._texts[k]
            score = _score_text(self._scores[i]) if i < len(self._scores) else ""
            x = max(b[i, 0], t0)
            x_px = (x - t0) * px_t
            room = bool(score) and bool(current or x_px >= right)
            if room:
                text.setText(score, color=color)
                text.setPos(x, min(hi[i], y1))
                right = x_px + 8 * len(score) + 10
            text.setVisible(room)
        for item in self._rects[n:]:
            item.setVisible(False)
        for item in self._texts[n:]:
            item.setVisible(False)


def _score_text(score: float) -> str:
    return f"{score:.3g}" if math.isfinite(score) else ""
