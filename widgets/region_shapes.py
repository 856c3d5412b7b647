"""Regions of time and frequency drawn on a view's axes, and the words people read for them.

A region (:mod:`specscope.compute.edit`) lives in seconds and Hz; a view draws it in its
own coordinates (seconds on x, the frequency scale's coordinate on y: linear, log or
mel).  :func:`region_outline` builds the region's outline and :func:`feather_outline`
the outline of how far its edit reaches (the region grown by the feather: ``feather_ms``
in time, ``feather_hz`` in frequency), both as a ``QPainterPath`` in view coordinates.
They are built in seconds and Hz, in units of the feather, where the feather is a circle
(so the grown region is the region's outline stroked with a pen of the feather's
width), and only then mapped point by point through the frequency scale: straight edges
in Hz (a lasso's) are cut into short pieces first, so they bend with a log or mel axis
the way the cells they cover do.

:func:`region_text` and :func:`edit_text` are the one line the region panel, the
processing steps and the undo history show for a region and an edit step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from PyQt6.QtCore import QPointF, QRectF, Qt
from PyQt6.QtGui import QPainterPath, QPainterPathStroker, QPolygonF
from specscope.compute.edit import Box, Brush, Harmonics, Lasso, Region, region_from_dict
from specscope.compute.errors import SpecscopeError
from specscope.compute.freqfmt import format_frequency

from .frequency_axis import forward

__all__ = ["EDGE_PIECES", "ELLIPSE_POINTS", "edit_text", "feather_outline", "region_outline",
           "region_text"]

#: corners of the polygon a brush dab is drawn as
ELLIPSE_POINTS = 32
#: pieces each straight edge of a lasso is cut into before it is mapped to the axis
EDGE_PIECES = 16
#: a feather of zero on one axis is drawn this small (a fraction of the region's extent)
_THIN = 1e-4


class _Frame:
    """Seconds and Hz in units of the feather, around the region's corner (small numbers
    keep the path's arithmetic exact)."""

    def __init__(self, region: Region, feather_s: float, feather_hz: float) -> None:
        t0, t1, f0, f1 = region.bounds()
        self.t0, self.f0 = t0, f0
        self.st = feather_s if feather_s > 0 else max(_THIN * (t1 - t0), 1e-12)
        self.sf = feather_hz if feather_hz > 0 else max(_THIN * (f1 - f0), 1e-9)

    def point(self, t: float, f: float) -> QPointF:
        return QPointF((t - self.t0) / self.st, (f - self.f0) / self.sf)

    def rect(self, t0: float, t1: float, f0: float, f1: float) -> QRectF:
        return QRectF(self.point(t0, f0), self.point(t1, f1)).normalized()

    def back(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.t0 + u * self.st, self.f0 + v * self.sf


def _dabs(frame: _Frame, points: tuple[tuple[float, float], ...], rs: float,
          rf: float) -> QPainterPath:
    """The union of the ellipses of a brush's points."""
    path = QPainterPath()
    path.setFillRule(Qt.FillRule.WindingFill)
    a = np.linspace(0.0, 2 * np.pi, ELLIPSE_POINTS, endpoint=False)
    ct, sf = np.cos(a), np.sin(a)
    for t, f in points:
        path.addPolygon(QPolygonF([frame.point(t + rs * c, f + rf * s)
                                   for c, s in zip(ct, sf, strict=True)]))
        path.closeSubpath()
    return path.simplified()


def _lasso_points(points: tuple[tuple[float, float], ...]) -> np.ndarray:
    """The lasso's closed ring with each edge cut into :data:`EDGE_PIECES`."""
    p = np.asarray(points, dtype=np.float64)
    q = np.roll(p, -1, axis=0)
    k = np.arange(EDGE_PIECES)[None, :, None] / EDGE_PIECES
    return (p[:, None, :] + (q - p)[:, None, :] * k).reshape(-1, 2)


def _normalized(region: Region, frame: _Frame) -> QPainterPath:
    """The region as a path in the frame's units."""
    path = QPainterPath()
    if isinstance(region, Harmonics):
        for k in range(1, region.count + 1):
            path.addRect(frame.rect(region.t0, region.t1, k * region.f0, k * region.f1))
        return path.simplified()
    if isinstance(region, Box):
        path.addRect(frame.rect(region.t0, region.t1, region.f0, region.f1))
        return path
    if isinstance(region, Lasso):
        path.setFillRule(Qt.FillRule.OddEvenFill)  # the region's own rule
        path.addPolygon(QPolygonF([frame.point(t, f) for t, f in _lasso_points(region.points)]))
        path.closeSubpath()
        return path
    if isinstance(region, Brush):
        painted = _dabs(frame, region.points, region.radius_s, region.radius_hz)
        if region.erased:
            painted = painted.subtracted(_dabs(frame, region.erased, region.radius_s,
                                               region.radius_hz))
        return painted
    raise TypeError(f"not a region: {type(region).__name__}")


def _to_view(path: QPainterPath, frame: _Frame, to_y: Callable[[np.ndarray], np.ndarray]
             ) -> QPainterPath:
    """``path`` (frame units) in view coordinates, point by point."""
    out = QPainterPath()
    out.setFillRule(Qt.FillRule.OddEvenFill)  # subpaths are outlines and their holes
    for poly in path.toSubpathPolygons():
        if poly.size() < 3:
            continue
        uv = np.array([(p.x(), p.y()) for p in poly], dtype=np.float64)
        t, f = frame.back(uv[:, 0], uv[:, 1])
        y = to_y(f)
        out.addPolygon(QPolygonF([QPointF(a, b) for a, b in zip(t, y, strict=True)]))
        out.closeSubpath()
    return out


def _axis(scale: str, offset_hz: float) -> Callable[[np.ndarray], np.ndarray]:
    def to_y(f: np.ndarray) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64) + offset_hz
        return forward(scale, np.maximum(f, 1e-3) if scale == "log" else f)
    return to_y


def region_outline(region: Region, scale: str = "linear", offset_hz: float = 0.0
                   ) -> QPainterPath:
    """The region's outline in view coordinates.

    Parameters
    ----------
    region : Region
        A box, lasso, brush or harmonics region, in seconds and Hz.
    scale : {"linear", "log", "mel"}
        The view's frequency scale.
    offset_hz : float
        Added to the region's frequencies (an IQ capture's centre frequency: its
        regions are in Hz from the centre, the view in absolute Hz).

    Returns
    -------
    QPainterPath
        Closed subpaths (outlines and the holes in them, odd-even fill).
    """
    frame = _Frame(region, 0.0, 0.0)
    return _to_view(_normalized(region, frame), frame, _axis(scale, offset_hz))


def feather_outline(region: Region, feather_ms: float, feather_hz: float,
                    scale: str = "linear", offset_hz: float = 0.0) -> QPainterPath:
    """The outline of the region grown by its feather: where its edit fades out.

    Parameters
    ----------
    region : Region
    feather_ms, feather_hz : float
        How far outside the region the change reaches, in time and in frequency.
    scale : {"linear", "log", "mel"}
    offset_hz : float
        As for :func:`region_outline`.

    Returns
    -------
    QPainterPath
        Empty when both feathers are zero.
    """
    if not (feather_ms > 0 or feather_hz > 0):
        return QPainterPath()
    frame = _Frame(region, feather_ms / 1000.0, feather_hz)
    inner = _normalized(region, frame)
    stroker = QPainterPathStroker()
    stroker.setWidth(2.0)  # one feather either side of the outline
    stroker.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    stroker.setCapStyle(Qt.PenCapStyle.RoundCap)
    grown = inner.united(stroker.createStroke(inner)).simplified()
    return _to_view(grown, frame, _axis(scale, offset_hz))


def _seconds(t: float) -> str:
    """Seconds to the millisecond, without trailing zeros."""
    return f"{t:.3f}".rstrip("0").rstrip(".")


def _band(f0: float, f1: float) -> str:
    """``"2.5–3.5 kHz"``; each with its unit where the units differ (``"300 Hz–3 kHz"``),
    to a hundredth of the band."""
    step = (f1 - f0) / 100 if f1 > f0 else None
    a, b = format_frequency(f0, step), format_frequency(f1, step)
    if a.rsplit(" ", 1)[-1] == b.rsplit(" ", 1)[-1]:
        return f"{a.rsplit(' ', 1)[0]}–{b}"
    return f"{a}–{b}"


def _area(a: float) -> str:
    """An area in s·Hz with three significant digits."""
    if not math.isfinite(a):
        return "—"
    return f"{a:.3g} s·Hz" if abs(a) < 1000 else f"{a:.0f} s·Hz"


def region_text(region: Region, offset_hz: float = 0.0) -> str:
    """One line for a region: its shape, time span, band and area.

    Parameters
    ----------
    region : Region
    offset_hz : float
        Added to its frequencies (an IQ capture's centre frequency).

    Returns
    -------
    str
        E.g. ``"lasso 0.42–0.78 s, 2.5–3.5 kHz, 270 s·Hz"``.

    Examples
    --------
    >>> from specscope.compute.edit import Box
    >>> region_text(Box(1.0, 2.5, 300.0, 3000.0))
    'box 1–2.5 s, 300 Hz–3.00 kHz, 4050 s·Hz'
    """
    t0, t1, f0, f1 = region.bounds()
    name = region.shape if not isinstance(region, Harmonics) else \
        f"box with {region.count} harmonics"
    return (f"{name} {_seconds(t0)}–{_seconds(t1)} s, {_band(f0 + offset_hz, f1 + offset_hz)}, "
            f"{_area(region.area())}")


#: how each operation reads in a sentence
_VERBS = {"attenuate": "attenuate", "gain": "gain", "remove": "remove", "isolate": "isolate"}


def edit_text(params: Mapping[str, Any], offset_hz: float = 0.0) -> str:
    """One line for an edit step's parameters (``RegionEdit.to_dict()``).

    Parameters
    ----------
    params : mapping
        The step's parameters.
    offset_hz : float
        Added to the region's frequencies.

    Returns
    -------
    str
        E.g. ``"remove lasso 0.42–0.78 s, 2.5–3.5 kHz, 270 s·Hz (feather 10 ms, 50 Hz)"``;
        the operation and ``"region"`` when the region cannot be read.
    """
    op = str(params.get("operation", "attenuate"))
    verb = _VERBS.get(op, op)
    if op in ("attenuate", "gain"):
        db = params.get("db", 20.0)
        verb += f" {db:g} dB" if isinstance(db, (int, float)) else ""
    try:
        region = region_from_dict(params.get("region"))
    except SpecscopeError:
        return f"{verb} region"
    fm, fh = params.get("feather_ms", 10.0), params.get("feather_hz", 50.0)
    return f"{verb} {region_text(region, offset_hz)} (feather {fm:g} ms, {fh:g} Hz)"
