"""RegionLayer: region tools over a SpectrogramView, and the current region drawn.

The layer draws in the view's own axes (seconds on x, the frequency scale's coordinate
on y), so a region stays on the cells it covers under any zoom, a log or mel axis, or a
plugin's representation.  With a tool chosen (:meth:`RegionLayer.set_tool`), a plain
left drag on the spectrogram makes a region:

* ``"lasso"``: the drag draws a polygon in time x frequency; the release closes it;
* ``"brush"``: the drag paints ellipses of :attr:`RegionLayer.brush_px` screen pixels
  around the pointer, added to the current brush region; with Shift (:data:`ERASE`) it
  erases them from it;
* ``"harmonics"``: the drag draws a box, taken with its harmonics
  (:attr:`RegionLayer.harmonics` of them);
* ``"box"``: nothing here: a box is the view's selection (drawn by
  :class:`~specscope.widgets.annotation_layer.AnnotationLayer`), which the owner makes
  the region.

A drag with Ctrl is left to the selection in every mode.  Frequencies of the regions the
layer gives are the view's Hz less :attr:`RegionLayer.offset_hz` (an IQ capture's centre
frequency: its regions are in Hz from the centre).  The current region is drawn with its
outline and, fainter, the outline of how far its edit reaches (the feather); the layer
only shows and reports: whoever owns the regions decides what a gesture makes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QEvent, QObject, QPointF, Qt, pyqtSignal
from PyQt6.QtGui import QPainterPath, QPolygonF
from PyQt6.QtWidgets import QGraphicsPathItem
from specscope.compute.edit import Brush, Harmonics, Lasso, Region

from .frequency_axis import forward, inverse
from .region_shapes import feather_outline, region_outline
from .spectrogram_view import SpectrogramView

__all__ = ["ERASE", "REGION_TOOLS", "RegionLayer"]

#: the tools a layer has ("" draws nothing: drags pan)
REGION_TOOLS = ("", "box", "lasso", "brush", "harmonics")
#: the modifier that makes a brush stroke erase
ERASE = Qt.KeyboardModifier.ShiftModifier
#: a lasso takes a point every this many screen pixels of the drag
LASSO_STEP_PX = 3.0
#: a drag shorter than this (pixels, both axes) is a click
_CLICK_PX = 3
_OUTLINE_PEN = pg.mkPen((255, 230, 0), width=2)
_FEATHER_PEN = pg.mkPen((255, 230, 0, 110), width=1, style=Qt.PenStyle.DashLine)
_FILL = pg.mkBrush(255, 230, 0, 28)
_ERASE_PEN = pg.mkPen((255, 120, 120), width=1, style=Qt.PenStyle.DotLine)


@dataclass
class _Stroke:
    tool: str
    start: QPointF                       # viewport position of the press
    points: list[tuple[float, float]] = field(default_factory=list)  # seconds, Hz
    last: QPointF | None = None          # viewport position of the last point taken
    erase: bool = False
    box: tuple[float, float, float, float] | None = None


class RegionLayer(QObject):
    """Region tools and the current region over ``view``'s plot.

    Parameters
    ----------
    view : SpectrogramView
        The view whose plot the region is drawn on and whose drags are taken.
    parent : QObject or None, optional
        The Qt parent.

    Signals
    -------
    regionDrawn(object)
        A gesture made a region (a ``Region``; a brush stroke gives the whole brush
        region, the stroke added or erased).
    refused(str)
        A gesture made no region: why, in one line.
    """

    regionDrawn = pyqtSignal(object)
    refused = pyqtSignal(str)

    def __init__(self, view: SpectrogramView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.plot = view.plot
        self.vb = view.plot.getViewBox()
        #: the tool plain drags use ("": none, drags pan)
        self.tool = ""
        #: subtracted from the view's Hz to give a region's (an IQ capture's centre)
        self.offset_hz = 0.0
        #: the brush's radius in screen pixels (each stroke keeps the seconds and Hz it
        #: had when the brush region was begun)
        self.brush_px = 12.0
        #: harmonics a harmonics box takes (the box itself is the first)
        self.harmonics = 4
        #: the region drawn as current (None: none)
        self.region: Region | None = None
        self.feather = (10.0, 50.0)  # ms, Hz
        self._stroke: _Stroke | None = None
        self._feather_item = self._path_item(_FEATHER_PEN, None, 9)
        self._outline_item = self._path_item(_OUTLINE_PEN, _FILL, 10)
        self._live_item = self._path_item(_OUTLINE_PEN, None, 11)
        view.viewport().installEventFilter(self)
        self.vb.sigRangeChanged.connect(self._range_changed)
        self._scale_drawn = view.freq_scale

    def _path_item(self, pen, brush, z: float) -> QGraphicsPathItem:
        item = QGraphicsPathItem()
        item.setPen(pen)
        if brush is not None:
            item.setBrush(brush)
        item.setZValue(z)
        item.setVisible(False)
        self.plot.addItem(item, ignoreBounds=True)
        return item

    # -- what is drawn -------------------------------------------------------------------
    def set_tool(self, tool: str) -> None:
        """Use ``tool`` (one of :data:`REGION_TOOLS`) for plain drags."""
        if tool not in REGION_TOOLS:
            raise ValueError(f"tool={tool!r} must be one of {', '.join(map(repr, REGION_TOOLS))}")
        self.tool = tool
        self._stroke = None
        self._live_item.setVisible(False)
        vp = self.view.viewport()
        if tool in ("lasso", "brush", "harmonics"):
            vp.setCursor(Qt.CursorShape.CrossCursor)
        else:
            vp.unsetCursor()

    def set_region(self, region: Region | None) -> None:
        """Draw ``region`` as the current one (None: none)."""
        self.region = region
        self.redraw()

    def set_feather(self, feather_ms: float, feather_hz: float) -> None:
        """The feather the current region's second outline shows."""
        self.feather = (float(feather_ms), float(feather_hz))
        self.redraw()

    def set_offset(self, offset_hz: float) -> None:
        """Regions are in the view's Hz less ``offset_hz``."""
        self.offset_hz = float(offset_hz)
        self.redraw()

    def outline(self) -> QPainterPath:
        """The current region's outline as drawn (view coordinates)."""
        return self._outline_item.path()

    def feather_path(self) -> QPainterPath:
        """The outline of the current region's feather as drawn (view coordinates)."""
        return self._feather_item.path()

    def redraw(self) -> None:
        """Draw the current region on the view's axes (after a change of frequency scale)."""
        self._scale_drawn = scale = self.view.freq_scale
        region = self.region
        if region is None or self.view.freq_axis.stack is not None:
            self._outline_item.setVisible(False)
            self._feather_item.setVisible(False)
            return
        self._outline_item.setPath(region_outline(region, scale, self.offset_hz))
        self._outline_item.setVisible(True)
        feather = feather_outline(region, *self.feather, scale, self.offset_hz)
        self._feather_item.setPath(feather)
        self._feather_item.setVisible(not feather.isEmpty())

    def _range_changed(self, *_: object) -> None:
        if self.view.freq_scale != self._scale_drawn:
            self.redraw()

    # -- coordinates ---------------------------------------------------------------------
    def _to_view(self, pos: QPointF) -> tuple[QPointF, bool]:
        """View coordinates of a viewport position, and whether it lies on the plot."""
        scene = self.view.mapToScene(pos.toPoint())
        return self.vb.mapSceneToView(QPointF(scene)), \
            self.vb.sceneBoundingRect().contains(QPointF(scene))

    def _hz(self, y: float) -> float:
        return float(inverse(self.view.freq_scale, y)) - self.offset_hz

    def _y(self, f: np.ndarray | float) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64) + self.offset_hz
        scale = self.view.freq_scale
        return forward(scale, np.maximum(f, 1e-3) if scale == "log" else f)

    def _radius(self, f_view: float) -> tuple[float, float]:
        """Seconds and Hz of :attr:`brush_px` screen pixels at ``f_view`` (view Hz)."""
        return (self.brush_px * self.view.seconds_per_pixel(),
                self.brush_px * self.view.hz_per_pixel(max(f_view, 1e-3)))

    # -- mouse -----------------------------------------------------------------------------
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
        self._stroke = None
        if self.tool in ("", "box") or event.button() != Qt.MouseButton.LeftButton:
            return False
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False  # Ctrl+drag selects in every mode
        pos = event.position()
        p, on_plot = self._to_view(pos)
        if not on_plot:
            return False
        if self.view.freq_axis.stack is not None:
            self.refused.emit("Region tools draw on one channel: choose a channel in the "
                              "Spectrogram settings")
            return True
        erase = bool(event.modifiers() & ERASE) and self.tool == "brush"
        if erase and not isinstance(self.region, Brush):
            self.refused.emit("Nothing to erase: paint a brush region first (drag without "
                              "Shift)")
            return True
        self._stroke = _Stroke(self.tool, pos, erase=erase)
        self._take(self._stroke, pos, p)
        self._draw_stroke()
        return True

    def _moved(self, event) -> bool:
        stroke = self._stroke
        if stroke is None:
            return False
        pos = event.position()
        p, _ = self._to_view(pos)
        self._take(stroke, pos, p)
        self._draw_stroke()
        return True

    def _released(self, event) -> bool:
        stroke, self._stroke = self._stroke, None
        if stroke is None:
            return False
        pos = event.position()
        p, _ = self._to_view(pos)
        self._take(stroke, pos, p, final=True)
        self._live_item.setVisible(False)
        region = self._finish(stroke)
        if region is not None:
            self.region = region
            self.redraw()
            self.regionDrawn.emit(region)
        else:
            self.redraw()
        return True

    def _take(self, stroke: _Stroke, pos: QPointF, p: QPointF, final: bool = False) -> None:
        """Note the pointer at viewport ``pos`` (view coordinates ``p``) in the stroke."""
        t, f = float(p.x()), self._hz(float(p.y()))
        if stroke.tool == "harmonics":
            a = stroke.points[0] if stroke.points else (t, f)
            if not stroke.points:
                stroke.points.append(a)
            stroke.box = (min(a[0], t), max(a[0], t), min(a[1], f), max(a[1], f))
            stroke.last = QPointF(pos)
            return
        step = LASSO_STEP_PX if stroke.tool == "lasso" else max(self.brush_px / 2, 1.0)
        last = stroke.last
        if stroke.tool == "brush" and last is not None:
            # a quick drag's pointer jumps: the stroke is painted along the way, without gaps
            dist = math.hypot(pos.x() - last.x(), pos.y() - last.y())
            for k in range(1, int(dist // step) + 1):
                q = last + (pos - last) * (k * step / dist)
                v, _ = self._to_view(q)
                stroke.points.append((float(v.x()), self._hz(float(v.y()))))
                stroke.last = QPointF(q)
            return
        if last is None or math.hypot(pos.x() - last.x(), pos.y() - last.y()) >= step or (
                final and stroke.tool == "lasso" and _far(last, pos)):
            stroke.points.append((t, f))
            stroke.last = QPointF(pos)

    def _brush_with(self, stroke: _Stroke) -> Brush | None:
        """The brush region with the stroke added (or erased)."""
        old = self.region if isinstance(self.region, Brush) else None
        pts = tuple(stroke.points)
        if not pts:
            return old
        if stroke.erase:
            assert old is not None
            return Brush(old.points, old.radius_s, old.radius_hz, old.erased + pts)
        if old is not None:
            return Brush(old.points + pts, old.radius_s, old.radius_hz, old.erased)
        rs, rf = self._radius(pts[0][1] + self.offset_hz)
        return Brush(pts, rs, rf)

    def _finish(self, stroke: _Stroke) -> Region | None:
        if stroke.tool == "lasso":
            pts = tuple(stroke.points)
            lasso = Lasso(pts) if len(pts) >= 3 else None
            if lasso is None or not lasso.area() > 0:
                self.refused.emit("A lasso is drawn by dragging around the region; release "
                                  "closes it")
                return None
            return lasso
        if stroke.tool == "harmonics":
            b = stroke.box
            if b is None or _near(stroke.start, stroke.last or stroke.start) \
                    or not (b[1] > b[0] and b[3] > b[2]):
                self.refused.emit("Drag a box around the fundamental; its harmonics follow")
                return None
            return Harmonics(*b, int(self.harmonics))
        return self._brush_with(stroke)

    def _draw_stroke(self) -> None:
        """What the drag has made so far."""
        stroke = self._stroke
        if stroke is None:
            return
        item = self._live_item
        if stroke.tool == "brush":
            brush = self._brush_with(stroke)
            if brush is not None:
                if stroke.erase:
                    item.setPen(_ERASE_PEN)
                    item.setPath(region_outline(Brush(tuple(stroke.points), brush.radius_s,
                                                      brush.radius_hz), self.view.freq_scale,
                                                self.offset_hz))
                    item.setVisible(True)
                    return
                self.region_preview(brush)
            return
        item.setPen(_OUTLINE_PEN)
        if stroke.tool == "harmonics" and stroke.box is not None:
            t0, t1, f0, f1 = stroke.box
            if t1 > t0 and f1 > f0:
                item.setPath(region_outline(Harmonics(t0, t1, f0, f1, int(self.harmonics)),
                                            self.view.freq_scale, self.offset_hz))
                item.setVisible(True)
            return
        if len(stroke.points) >= 2:  # the lasso so far, open
            t = np.array([q[0] for q in stroke.points])
            y = self._y([q[1] for q in stroke.points])
            path = QPainterPath()
            path.addPolygon(QPolygonF([QPointF(a, b) for a, b in zip(t, y, strict=True)]))
            item.setPath(path)
            item.setVisible(True)

    def region_preview(self, region: Region) -> None:
        """Draw ``region`` as the current one while it is being made (no signal)."""
        self._outline_item.setPath(region_outline(region, self.view.freq_scale,
                                                  self.offset_hz))
        self._outline_item.setVisible(True)
        self._feather_item.setVisible(False)


def _near(a: QPointF, b: QPointF) -> bool:
    return abs(a.x() - b.x()) < _CLICK_PX and abs(a.y() - b.y()) < _CLICK_PX


def _far(a: QPointF, b: QPointF) -> bool:
    return not _near(a, b)
