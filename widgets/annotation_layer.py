"""AnnotationLayer: annotations and a selection box drawn over a SpectrogramView.

The layer draws in the spectrogram's own axes (time in seconds on x, the
frequency axis' coordinate on y, so linear, log and mel scales line up) and
takes the mouse gestures that make or edit boxes:

* a left drag with Ctrl (in any mode), or a plain left drag in select mode,
  draws a selection box; with Alt held as well, the selection spans the whole
  frequency range (a time selection, ``None`` edges);
* a left drag on an edge of a drawn annotation moves that edge;
* a click inside an annotation reports it (the click still sets the view's
  measurement reference).

It only shows what it is given and reports gestures as signals: whoever owns
the annotations decides what a gesture changes.  Only the annotations inside
the visible span get graphics items, recycled from a pool as the view pans;
when more than :data:`MAX_ITEMS` are visible at once (a whole file of dense
detections), they are drawn together as one path without labels or handles.
Labels that would overlap a label already placed are left out.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QFont, QFontMetrics, QPainterPath
from PyQt6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem
from specscope.compute.annotations import Annotation

from .frequency_axis import forward, inverse
from .spectrogram_view import SpectrogramView

__all__ = ["EDGE_GRAB_PX", "MAX_ITEMS", "PALETTE", "AnnotationLayer", "label_color"]

#: most annotations drawn as separate items; beyond, one path without labels
MAX_ITEMS = 400
#: how close (device pixels) the pointer must be to an edge to grab it
EDGE_GRAB_PX = 5
#: a drag shorter than this (pixels, both axes) is a click
_CLICK_PX = 3
#: colours of labels: distinct on the dark colour maps
PALETTE = ((102, 204, 255), (255, 170, 60), (120, 230, 120), (255, 110, 160),
           (200, 160, 255), (255, 235, 90), (80, 230, 210), (255, 140, 110),
           (170, 210, 255), (220, 255, 140))
_SELECTION_PEN = pg.mkPen((255, 255, 255), width=2, style=Qt.PenStyle.DashLine)
_DENSE_PEN = pg.mkPen((170, 210, 255, 160), width=1)


def label_color(label: str) -> tuple[int, int, int]:
    """The colour of a label: a stable hash of its text into :data:`PALETTE`.

    Parameters
    ----------
    label : str
        The annotation's label.

    Returns
    -------
    tuple of int
        Red, green and blue, 0 to 255; the same label always gets the same colour.

    Examples
    --------
    >>> label_color("bat")
    (255, 235, 90)
    """
    return PALETTE[zlib.crc32(label.encode("utf-8")) % len(PALETTE)]


@dataclass
class _Drag:
    kind: str                 # "select" or "edge"
    start: QPointF            # viewport position of the press
    t: float = 0.0            # view coordinates of the press
    y: float = 0.0
    whole_band: bool = False  # a time selection
    uuid: str = ""            # the annotation whose edge moves
    edge: str = ""            # "start", "stop", "low" or "high"
    value: float | None = None


class AnnotationLayer(QObject):
    """Annotations, the current one and a selection, over ``view``'s plot.

    Parameters
    ----------
    view : SpectrogramView
        The view whose plot the boxes are drawn on and whose gestures are taken.
    parent : QObject or None, optional
        The Qt parent.

    Signals
    -------
    selectionDrawn(float, float, object, object)
        A box was dragged: start and stop (s), low and high edges (Hz), the edges
        ``None`` for a time selection.  Not clipped to the recording.
    selectionCleared()
        A click (a drag shorter than a few pixels) in a selecting gesture.
    edgeMoved(str, str, float)
        An annotation's edge was dragged: uuid, ``"start"``/``"stop"`` (s) or
        ``"low"``/``"high"`` (Hz), the new value.  Emitted once, on release.
    annotationClicked(str)
        A click inside an annotation (the topmost one): its uuid.
    """

    selectionDrawn = pyqtSignal(float, float, object, object)
    selectionCleared = pyqtSignal()
    edgeMoved = pyqtSignal(str, str, float)
    annotationClicked = pyqtSignal(str)

    def __init__(self, view: SpectrogramView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.plot = view.plot
        self.vb = view.plot.getViewBox()
        #: plain drags select (True) or pan (False); Ctrl+drag selects in both
        self.select_mode = False
        #: uuid of the annotation drawn highlighted, or None
        self.current: str | None = None
        #: the selection box (t0, t1, f0, f1), f0/f1 None for a time selection
        self.selection: tuple[float, float, float | None, float | None] | None = None
        #: the stacked channel the selection was drawn on (None: not stacked)
        self.selection_channel: int | None = None
        self._annotations: list[Annotation] = []
        self._boxes = np.zeros((0, 4))  # start, stop, low, high (NaN: time only)
        self._rects: list[QGraphicsRectItem] = []
        self._labels: list[pg.TextItem] = []
        self._shown: list[tuple[str, float, float, float, float]] = []  # uuid, t0, t1, y0, y1
        self._dense = QGraphicsPathItem()
        self._dense.setPen(_DENSE_PEN)
        self._dense.setZValue(5)
        self._dense.setVisible(False)
        self.plot.addItem(self._dense, ignoreBounds=True)
        self._selection_item = QGraphicsRectItem()
        self._selection_item.setPen(_SELECTION_PEN)
        self._selection_item.setBrush(pg.mkBrush(255, 255, 255, 25))
        self._selection_item.setZValue(7)
        self._selection_item.setVisible(False)
        self.plot.addItem(self._selection_item, ignoreBounds=True)
        self._font = QFont()
        self._metrics = QFontMetrics(self._font)
        self._drag: _Drag | None = None
        self._press: QPointF | None = None
        self._hover_cursor = False
        self.vb.sigRangeChanged.connect(self.redraw)
        view.viewport().installEventFilter(self)

    # -- what is drawn -----------------------------------------------------------------
    def set_annotations(self, annotations: Sequence[Annotation]) -> None:
        """Draw ``annotations`` (those in view); replaces the ones drawn before."""
        self._annotations = list(annotations)
        nan = math.nan
        self._boxes = np.array([(a.start_s, a.stop_s,
                                 nan if a.freq_low_hz is None else a.freq_low_hz,
                                 nan if a.freq_high_hz is None else a.freq_high_hz)
                                for a in self._annotations], dtype=np.float64).reshape(-1, 4)
        self.redraw()

    def set_current(self, uuid: str | None) -> None:
        """Highlight the annotation ``uuid`` (None: none)."""
        self.current = uuid
        self.redraw()

    def set_selection(self, selection: tuple[float, float, float | None, float | None] | None,
                      channel: int | None = None) -> None:
        """Show the selection box ``(t0, t1, f0, f1)`` (None hides it), on ``channel``'s
        band when channels are stacked."""
        self.selection = selection
        if channel is not None or selection is None:
            self.selection_channel = channel
        self.redraw()

    def items(self) -> list:
        """The graphics items the layer holds for annotations (rectangles and labels)."""
        return [*self._rects, *self._labels, self._dense]

    def drawn(self) -> list[str]:
        """Uuids of the annotations drawn as separate items, in drawing order."""
        return [s[0] for s in self._shown]

    def label_items(self) -> list[pg.TextItem]:
        """The label items shown now."""
        return [t for t in self._labels if t.isVisible()]

    def rect_of(self, uuid: str) -> QRectF | None:
        """The rectangle (view coordinates) drawn for ``uuid``, None when not drawn."""
        for (u, *_), rect in zip(self._shown, self._rects, strict=False):
            if u == uuid:
                return rect.rect()
        return None

    # -- drawing -------------------------------------------------------------------------
    def _y(self, f: np.ndarray) -> np.ndarray:
        scale = self.view.freq_scale
        f = np.asarray(f, dtype=np.float64)
        return forward(scale, np.maximum(f, 1e-3) if scale == "log" else f)

    def _stack(self) -> tuple[int, float, float, float] | None:
        """``(channels, f0, band, span)`` of stacked channel bands, None when not stacked."""
        return getattr(self.view.freq_axis, "stack", None)

    def channel_at(self, y: float) -> int | None:
        """The stacked channel whose band holds ``y`` (view coordinate); None unstacked."""
        st = self._stack()
        if st is None:
            return None
        n, _, band, _ = st
        return int(min(max(math.floor(y / band), 0), n - 1))

    def _y_on(self, f: float, channel: int | None) -> float:
        """The view coordinate of ``f`` Hz on ``channel``'s band (stacked), else on the axis."""
        st = self._stack()
        if st is None or channel is None:
            return float(self._y(f))
        _, f0, band, span = st
        return channel * band + min(max(f - f0, 0.0), span)

    def _hz_on(self, y: float, channel: int | None) -> float:
        """:meth:`_y_on` backwards, ``y`` kept inside the channel's band."""
        st = self._stack()
        if st is None or channel is None:
            return float(inverse(self.view.freq_scale, y))
        _, f0, band, span = st
        return f0 + min(max(y - channel * band, 0.0), span)

    def _visible(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Indices of annotations in view, and their y edges (time-only ones span the view).

        Stacked channels: each annotation on the band of its channel (one of no
        channel on every band), a time-only one over its band's height.
        """
        (t0, t1), (y0, y1) = self.vb.viewRange()
        b = self._boxes
        if not len(b):
            return np.zeros(0, int), np.zeros(0), np.zeros(0)
        timeonly = np.isnan(b[:, 2])
        st = self._stack()
        if st is None:
            rows = np.arange(len(b))
            lo = np.where(timeonly, y0, self._y(np.where(timeonly, 0.0, b[:, 2])))
            hi = np.where(timeonly, y1, self._y(np.where(timeonly, 0.0, b[:, 3])))
        else:
            n, _, band, span = st
            rows_l, lo_l, hi_l = [], [], []
            for i, a in enumerate(self._annotations):
                chans = [a.channel] if a.channel is not None and a.channel < n else range(n)
                for c in chans:
                    rows_l.append(i)
                    lo_l.append(c * band if timeonly[i] else self._y_on(b[i, 2], c))
                    hi_l.append(c * band + span if timeonly[i] else self._y_on(b[i, 3], c))
            rows, lo, hi = np.array(rows_l, int), np.array(lo_l), np.array(hi_l)
        inside = (b[rows, 1] >= t0) & (b[rows, 0] <= t1) & (hi >= y0) & (lo <= y1)
        keep = np.flatnonzero(inside)
        return rows[keep], lo[keep], hi[keep]

    def _pixels(self) -> tuple[float, float]:
        """Device pixels per second and per unit of y."""
        (t0, t1), (y0, y1) = self.vb.viewRange()
        r = self.vb.sceneBoundingRect()
        return r.width() / max(t1 - t0, 1e-300), r.height() / max(y1 - y0, 1e-300)

    def redraw(self, *_: object) -> None:
        """Place the items of the annotations in view (called on every pan and zoom)."""
        idx, lo, hi = self._visible()
        dense = len(idx) > MAX_ITEMS
        n = 0 if dense else len(idx)
        self._dense.setVisible(dense)
        if dense:
            path = QPainterPath()
            b = self._boxes
            for i, y0, y1 in zip(idx, lo, hi, strict=True):
                path.addRect(QRectF(b[i, 0], y0, b[i, 1] - b[i, 0], y1 - y0))
            self._dense.setPath(path)
        self._pool(self._rects, n, self._new_rect)
        self._shown = []
        px_t, px_y = self._pixels()
        (vt0, _), (_, vy1) = self.vb.viewRange()
        placed: list[tuple[float, float, float, float]] = []  # label boxes, pixels
        labels = 0
        for k in range(n):
            a = self._annotations[idx[k]]
            t0, t1, y0, y1 = a.start_s, a.stop_s, float(lo[k]), float(hi[k])
            color = label_color(a.label)
            rect = self._rects[k]
            rect.setRect(QRectF(t0, y0, t1 - t0, y1 - y0))
            current = a.uuid == self.current
            rect.setPen(pg.mkPen(color, width=3 if current else 1.5))
            rect.setBrush(pg.mkBrush(*color, 45 if current else 18))
            rect.setZValue(6 if current else 5)
            rect.setVisible(True)
            self._shown.append((a.uuid, t0, t1, y0, y1))
            if not a.label:
                continue
            # the label just above the box's top-left corner (never over what it marks),
            # kept inside the view
            w = self._metrics.horizontalAdvance(a.label) + 8
            h = self._metrics.height() + 4
            x_px = (max(t0, vt0) - vt0) * px_t
            y_px = max((vy1 - min(y1, vy1)) * px_y - h, 0.0)
            if any(x_px < px1 and px0 < x_px + w and y_px < py1 and py0 < y_px + h
                   for px0, py0, px1, py1 in placed):
                continue  # would cover a label already placed
            placed.append((x_px, y_px, x_px + w, y_px + h))
            if labels == len(self._labels):
                self._labels.append(self._new_label())
            text = self._labels[labels]
            text.setText(a.label, color=color)
            text.setPos(max(t0, vt0), vy1 - y_px / px_y)
            text.setVisible(True)
            labels += 1
        self._pool(self._labels, labels, None)
        self._draw_selection()

    def _pool(self, items: list, n: int, make) -> None:
        """Grow ``items`` to ``n`` (with ``make``), hide the rest, drop a large surplus."""
        while make is not None and len(items) < n:
            items.append(make())
        for item in items[n:]:
            item.setVisible(False)
        if len(items) > n + 64:  # recycle a few, give the rest back
            for item in items[n + 32:]:
                self.plot.removeItem(item)
            del items[n + 32:]

    def _new_rect(self) -> QGraphicsRectItem:
        item = QGraphicsRectItem()
        self.plot.addItem(item, ignoreBounds=True)
        return item

    def _new_label(self) -> pg.TextItem:
        item = pg.TextItem("", anchor=(0, 0), fill=pg.mkBrush(0, 0, 0, 150))
        item.setZValue(8)
        self.plot.addItem(item, ignoreBounds=True)
        return item

    def _draw_selection(self) -> None:
        sel = self.selection
        if self._drag is not None and self._drag.kind == "select" and self._drag.value is not None:
            sel = self._drag.value  # the box being dragged
        if sel is None:
            self._selection_item.setVisible(False)
            return
        t0, t1, f0, f1 = sel
        st, c = self._stack(), self.selection_channel
        if f0 is None or f1 is None:
            _, (y0, y1) = self.vb.viewRange()
            if st is not None and c is not None:
                y0, y1 = c * st[2], c * st[2] + st[3]
        else:
            y0, y1 = self._y_on(f0, c), self._y_on(f1, c)
        self._selection_item.setRect(QRectF(t0, y0, t1 - t0, y1 - y0))
        self._selection_item.setVisible(True)

    # -- mouse -----------------------------------------------------------------------------
    def _to_view(self, pos: QPointF) -> tuple[QPointF, bool]:
        """View coordinates of a viewport position, and whether it lies on the plot."""
        scene = self.view.mapToScene(pos.toPoint())
        return self.vb.mapSceneToView(QPointF(scene)), \
            self.vb.sceneBoundingRect().contains(QPointF(scene))

    def _edge_at(self, p: QPointF) -> tuple[str, str] | None:
        """The annotation edge within :data:`EDGE_GRAB_PX` of ``p`` (view coordinates)."""
        px_t, px_y = self._pixels()
        tol_t, tol_y = EDGE_GRAB_PX / px_t, EDGE_GRAB_PX / px_y
        x, y = p.x(), p.y()
        best = None
        # the current annotation first, then the topmost (last drawn)
        order = sorted(self._shown, key=lambda s: s[0] != self.current)
        for uuid, t0, t1, y0, y1 in order:
            timeonly = self._time_only(uuid)
            if y0 - tol_y <= y <= y1 + tol_y:
                for edge, t in (("start", t0), ("stop", t1)):
                    d = abs(x - t) / tol_t
                    if d <= 1 and (best is None or d < best[0]):
                        best = (d, uuid, edge)
            if not timeonly and t0 - tol_t <= x <= t1 + tol_t:
                for edge, yy in (("low", y0), ("high", y1)):
                    d = abs(y - yy) / tol_y
                    if d <= 1 and (best is None or d < best[0]):
                        best = (d, uuid, edge)
            if best is not None and uuid == self.current:
                break
        return None if best is None else (best[1], best[2])

    def _time_only(self, uuid: str) -> bool:
        """Whether ``uuid`` is a time-only annotation."""
        for a in self._annotations:
            if a.uuid == uuid:
                return not a.has_band
        return True

    def _inside(self, p: QPointF) -> str | None:
        for uuid, t0, t1, y0, y1 in reversed(self._shown):
            if t0 <= p.x() <= t1 and y0 <= p.y() <= y1:
                return uuid
        return None

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress:
            return self._pressed(event)
        if kind == QEvent.Type.MouseMove:
            return self._moved(event)
        if kind == QEvent.Type.MouseButtonRelease:
            return self._released(event)
        return False

    def _pressed(self, event) -> bool:
        self._press = None
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        pos = event.position()
        p, on_plot = self._to_view(pos)
        if not on_plot:
            return False
        mods = event.modifiers()
        if mods & Qt.KeyboardModifier.ControlModifier or self.select_mode:
            self._drag = _Drag("select", pos, p.x(), p.y(),
                               whole_band=bool(mods & Qt.KeyboardModifier.AltModifier))
            return True
        edge = self._edge_at(p)
        if edge is not None:
            self._drag = _Drag("edge", pos, p.x(), p.y(), uuid=edge[0], edge=edge[1])
            return True
        self._press = pos
        return False

    def _moved(self, event) -> bool:
        drag = self._drag
        pos = event.position()
        if drag is None:
            if event.buttons() == Qt.MouseButton.NoButton:
                self._hover(pos)
            return False
        p, _ = self._to_view(pos)
        if drag.kind == "select":
            drag.value = self._box(drag, p)
            self._draw_selection()
        else:
            drag.value = self._edge_value(drag, p)
            self._preview_edge(drag)
        return True

    def _released(self, event) -> bool:
        drag, self._drag = self._drag, None
        pos = event.position()
        if drag is None:
            press, self._press = self._press, None
            if press is not None and event.button() == Qt.MouseButton.LeftButton \
                    and _near(press, pos):
                p, on_plot = self._to_view(pos)
                uuid = self._inside(p) if on_plot else None
                if uuid is not None:
                    self.annotationClicked.emit(uuid)
            return False
        p, _ = self._to_view(pos)
        if drag.kind == "select":
            if _near(drag.start, pos):
                self._draw_selection()
                self.selectionCleared.emit()
                return True
            t0, t1, f0, f1 = self._box(drag, p)
            self.selection = (t0, t1, f0, f1)
            self._draw_selection()
            self.selectionDrawn.emit(t0, t1, f0, f1)
            return True
        if not _near(drag.start, pos):
            self.edgeMoved.emit(drag.uuid, drag.edge, self._edge_value(drag, p))
        self.redraw()  # drawn from the annotations given, moved or not
        return True

    def _box(self, drag: _Drag, p: QPointF) -> tuple[float, float, float | None, float | None]:
        """The box dragged so far, in Hz; on stacked channels kept to the band it began on
        (:attr:`selection_channel`)."""
        t0, t1 = sorted((drag.t, p.x()))
        c = self.selection_channel = self.channel_at(drag.y)
        if drag.whole_band:
            return t0, t1, None, None
        f0, f1 = sorted((self._hz_on(drag.y, c), self._hz_on(p.y(), c)))
        return t0, t1, f0, f1

    def _edge_value(self, drag: _Drag, p: QPointF) -> float:
        if drag.edge in ("start", "stop"):
            return float(p.x())
        return self._hz_on(p.y(), self.channel_at(drag.y))

    def _preview_edge(self, drag: _Drag) -> None:
        for (uuid, t0, t1, y0, y1), rect in zip(self._shown, self._rects, strict=False):
            if uuid != drag.uuid or drag.value is None:
                continue
            v = drag.value
            if drag.edge in ("start", "stop"):
                a, b = (v, t1) if drag.edge == "start" else (t0, v)
                a, b = sorted((a, b))
                rect.setRect(QRectF(a, y0, b - a, y1 - y0))
            else:
                yv = self._y_on(v, self.channel_at(drag.y))
                if self._stack() is not None \
                        and self.channel_at((y0 + y1) / 2) != self.channel_at(drag.y):
                    continue  # the same annotation drawn on another channel's band
                a, b = sorted((yv, y1) if drag.edge == "low" else (y0, yv))
                rect.setRect(QRectF(t0, a, t1 - t0, b - a))

    def _hover(self, pos: QPointF) -> None:
        """The resize cursor over a grabbable edge."""
        p, on_plot = self._to_view(pos)
        edge = self._edge_at(p) if on_plot and not self.select_mode else None
        vp = self.view.viewport()
        if edge is not None:
            shape = (Qt.CursorShape.SizeHorCursor if edge[1] in ("start", "stop")
                     else Qt.CursorShape.SizeVerCursor)
            vp.setCursor(shape)
            self._hover_cursor = True
        elif self._hover_cursor:
            vp.unsetCursor()
            self._hover_cursor = False


def _near(a: QPointF, b: QPointF) -> bool:
    return abs(a.x() - b.x()) < _CLICK_PX and abs(a.y() - b.y()) < _CLICK_PX


def color_of(label: str) -> QColor:
    """:func:`label_color` as a QColor."""
    return QColor(*label_color(label))
