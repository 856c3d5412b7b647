"""A band's level by local day and hour of day: the soundscape's diel pattern."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from .products import Levels

__all__ = ["DielLevels", "diel_levels"]


@dataclass
class DielLevels:
    """One band's median level per day and hour of day (``grid``: days x 24, NaN: none)."""

    band: int
    days: list[date]
    grid: np.ndarray
    counts: np.ndarray
    tz: str


def diel_levels(levels: Levels, band: int, db: np.ndarray | None = None,
                tz: Any = UTC, tz_name: str = "UTC") -> DielLevels | None:
    """The median level of ``band`` per local day and hour of the intervals' starts.

    Returns None where the levels hold no absolute times.
    """
    if not levels.absolute or not len(levels.time):
        return None
    col = (levels.db() if db is None else db)[:, band]
    t = np.asarray(levels.time, dtype=np.float64)
    # every zone's offset is a whole number of quarter hours: one conversion per quarter
    quarter = np.floor(t / 900.0).astype(np.int64)
    uniq, inverse = np.unique(quarter, return_inverse=True)
    local = [datetime.fromtimestamp(int(q) * 900, UTC).astimezone(tz) for q in uniq]
    first = local[0].date()
    day_of = np.array([(d.date() - first).days for d in local])[inverse]
    hour_of = np.array([d.hour for d in local])[inverse]
    n_days = int(day_of.max()) + 1
    cell = day_of * 24 + hour_of
    grid = np.full(n_days * 24, np.nan)
    counts = np.zeros(n_days * 24, dtype=np.int64)
    order = np.argsort(cell, kind="stable")
    cells, starts = np.unique(cell[order], return_index=True)
    for c, group in zip(cells, np.split(col[order], starts[1:]), strict=True):
        finite = group[np.isfinite(group)]
        counts[c] = finite.size
        if finite.size:
            grid[c] = float(np.median(finite))
    return DielLevels(band, [first + timedelta(days=k) for k in range(n_days)],
                      grid.reshape(n_days, 24), counts.reshape(n_days, 24), tz_name)
