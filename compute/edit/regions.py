"""Regions of time and frequency: a box, a lasso, brush strokes, a box with its harmonics.

A region lives in the recording's own axes, seconds from its start and Hz (for an IQ
capture, Hz from its centre frequency: the view adds the centre frequency when it
draws one), so it stays right under every zoom, frequency scale and representation.  :meth:`contains` says which cells of a
time-frequency grid it covers; :func:`region_from_dict` reads the JSON form that
pipelines, sessions and region files keep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..types import RegionShape, choices

__all__ = ["REGION_SHAPES", "Box", "Brush", "Harmonics", "Lasso", "Region", "region_from_dict"]

#: the shapes a region may have
REGION_SHAPES = choices(RegionShape)


def _number(d: dict[str, Any], key: str, where: str) -> float:
    if key not in d:
        raise InputError(f"{where}: missing {key}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(f"{where}: {key}={shown(v)} must be a finite number")
    return float(v)


def _points(d: dict[str, Any], key: str, where: str, least: int) -> tuple[tuple[float, float], ...]:
    raw = d.get(key, [])
    if not isinstance(raw, (list, tuple)):
        raise InputError(f"{where}: {key} must be a list of [seconds, Hz] pairs")
    pts = []
    for i, p in enumerate(raw):
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise InputError(f"{where}: {key}[{i}]={shown(p)} must be a [seconds, Hz] pair")
        pts.append((_number({"t": p[0]}, "t", f"{where}: {key}[{i}]"),
                    _number({"f": p[1]}, "f", f"{where}: {key}[{i}]")))
    if len(pts) < least:
        raise InputError(f"{where}: {key} has {len(pts)} point(s); a {where.split()[-1]} "
                         f"needs at least {least}")
    return tuple(pts)


@dataclass(frozen=True)
class Box:
    """A rectangle: ``t0 <= t < t1`` seconds, ``f0 <= f < f1`` Hz."""

    t0: float
    t1: float
    f0: float
    f1: float
    shape = "box"

    def bounds(self) -> tuple[float, float, float, float]:
        """``(t0, t1, f0, f1)``: the smallest box holding the region."""
        return self.t0, self.t1, self.f0, self.f1

    def contains(self, t: np.ndarray, f: np.ndarray) -> np.ndarray:
        """Which cells it covers: bool, shaped ``(len(f), len(t))``."""
        return (((f >= self.f0) & (f < self.f1))[:, None]
                & ((t >= self.t0) & (t < self.t1))[None, :])

    def area(self) -> float:
        """Seconds times Hz."""
        return max(0.0, self.t1 - self.t0) * max(0.0, self.f1 - self.f0)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": "box", "t0": self.t0, "t1": self.t1, "f0": self.f0, "f1": self.f1}


@dataclass(frozen=True)
class Harmonics:
    """A box and its harmonics: ``k*f0 <= f < k*f1`` for ``k = 1 .. count``."""

    t0: float
    t1: float
    f0: float
    f1: float
    count: int = 4
    shape = "harmonics"

    def bounds(self) -> tuple[float, float, float, float]:
        return self.t0, self.t1, self.f0, self.f1 * self.count

    def contains(self, t: np.ndarray, f: np.ndarray) -> np.ndarray:
        inside = np.zeros(f.shape, bool)
        for k in range(1, self.count + 1):
            inside |= (f >= k * self.f0) & (f < k * self.f1)
        return inside[:, None] & ((t >= self.t0) & (t < self.t1))[None, :]

    def area(self) -> float:
        return Box(self.t0, self.t1, self.f0, self.f1).area() * sum(
            range(1, self.count + 1))

    def to_dict(self) -> dict[str, Any]:
        return {"shape": "harmonics", "t0": self.t0, "t1": self.t1, "f0": self.f0,
                "f1": self.f1, "count": self.count}


@dataclass(frozen=True)
class Lasso:
    """A polygon of ``(seconds, Hz)`` vertices (even-odd rule; closed by itself)."""

    points: tuple[tuple[float, float], ...]
    shape = "lasso"

    def bounds(self) -> tuple[float, float, float, float]:
        t, f = np.array(self.points).T
        return float(t.min()), float(t.max()), float(f.min()), float(f.max())

    def contains(self, t: np.ndarray, f: np.ndarray) -> np.ndarray:
        tt, ff = np.meshgrid(t, f)
        inside = np.zeros(tt.shape, bool)
        pts = self.points
        for (ta, fa), (tb, fb) in zip(pts, pts[1:] + pts[:1], strict=True):
            if fa == fb:
                continue
            crosses = (fa > ff) != (fb > ff)
            t_at = ta + (ff - fa) * (tb - ta) / (fb - fa)
            inside ^= crosses & (tt < t_at)
        return inside

    def area(self) -> float:
        t, f = np.array(self.points).T
        return float(abs(np.dot(t, np.roll(f, -1)) - np.dot(f, np.roll(t, -1))) / 2)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": "lasso", "points": [list(p) for p in self.points]}


@dataclass(frozen=True)
class Brush:
    """Painted cells: ellipses of ``radius_s`` by ``radius_hz`` around each point, less those
    around each erased point."""

    points: tuple[tuple[float, float], ...]
    radius_s: float
    radius_hz: float
    erased: tuple[tuple[float, float], ...] = ()
    shape = "brush"

    def bounds(self) -> tuple[float, float, float, float]:
        t, f = np.array(self.points).T
        return (float(t.min()) - self.radius_s, float(t.max()) + self.radius_s,
                float(f.min()) - self.radius_hz, float(f.max()) + self.radius_hz)

    def _near(self, pts: tuple[tuple[float, float], ...], t: np.ndarray,
              f: np.ndarray) -> np.ndarray:
        near = np.zeros((f.size, t.size), bool)
        for pt, pf in pts:
            dt = ((t - pt) / self.radius_s) ** 2
            df = ((f - pf) / self.radius_hz) ** 2
            near |= (df[:, None] + dt[None, :]) <= 1.0
        return near

    def contains(self, t: np.ndarray, f: np.ndarray) -> np.ndarray:
        return self._near(self.points, t, f) & ~self._near(self.erased, t, f)

    def area(self) -> float:
        t0, t1, f0, f1 = self.bounds()
        t = np.linspace(t0, t1, 200)
        f = np.linspace(f0, f1, 200)
        return float(self.contains(t, f).mean() * (t1 - t0) * (f1 - f0))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"shape": "brush", "points": [list(p) for p in self.points],
                             "radius_s": self.radius_s, "radius_hz": self.radius_hz}
        if self.erased:
            d["erased"] = [list(p) for p in self.erased]
        return d


Region = Box | Harmonics | Lasso | Brush


def region_from_dict(d: Any, where: str = "region") -> Region:
    """A region from its JSON form (``{"shape": "box", "t0": ..., ...}``).

    Parameters
    ----------
    d : dict
        ``shape`` (one of :data:`REGION_SHAPES`) and that shape's fields.
    where : str
        How messages name it.

    Returns
    -------
    Region

    Raises
    ------
    InputError
        A missing or bad field, or a region of zero area, naming it.
    """
    if not isinstance(d, dict):
        raise InputError(f"{where}: must be an object with a shape, got {type(d).__name__}")
    shape = d.get("shape", "box")
    if shape not in REGION_SHAPES:
        raise InputError(f"{where}: shape={shown(shape)} must be one of "
                         f"{', '.join(REGION_SHAPES)}")
    region: Region
    if shape in ("box", "harmonics"):
        t0, t1, f0, f1 = (_number(d, k, where) for k in ("t0", "t1", "f0", "f1"))
        if shape == "box":
            region = Box(t0, t1, f0, f1)
        else:
            count = d.get("count", 4)
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 64:
                raise InputError(f"{where}: count={shown(count)} must be a whole number "
                                 "from 1 to 64")
            region = Harmonics(t0, t1, f0, f1, count)
    elif shape == "lasso":
        region = Lasso(_points(d, "points", f"{where} lasso", 3))
    else:
        rs, rf = _number(d, "radius_s", where), _number(d, "radius_hz", where)
        if rs <= 0 or rf <= 0:
            raise InputError(f"{where}: radius_s={rs:g} and radius_hz={rf:g} must be > 0")
        erased = _points(d, "erased", f"{where} brush", 0) if "erased" in d else ()
        region = Brush(_points(d, "points", f"{where} brush", 1), rs, rf, erased)
    if not region.area() > 0:
        t0, t1, f0, f1 = region.bounds()
        raise InputError(f"{where}: the {shape} from {t0:g} to {t1:g} s and {f0:g} to {f1:g} "
                         "Hz has zero area")
    return region
