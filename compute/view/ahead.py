"""The pyramid built ahead: tiles a view's likely next views need, computed in idle time.

After a view is shown, the zoom-outs that usually follow (by 2, 4 and 8) and
the pans by a view either side need tiles that are not cached yet: a zoom-out
by 8 at a fine level transforms every frame of a span eight times the view's.
:func:`plan_ahead` lists those tiles, nearest first, and :func:`build_ahead`
computes them one at a time, checking ``cancelled()`` between blocks, so the
compute thread can do it while the user looks at the view and drop it the
moment a new request comes (a cancelled tile is left out; the others stay
cached).

The zoom-outs' spans are covered at the finest of their levels first, centre
outwards; the coarser levels are then built from those tiles (two cached
children make a parent without reading the recording), so the three zoom-outs
cost the transforms of the widest one, once.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import Cancelled
from .tiles import TILE_CELLS, TileEngine

#: zoom-outs prepared after a view: by 2, 4, ... 2**ZOOM_OUT_STEPS
ZOOM_OUT_STEPS = 3
#: share of the tile cache the tiles built ahead may fill (the view's own tiles stay)
CACHE_SHARE = 0.25


def _tile_bytes(engine: TileEngine, level: int) -> int:
    per = engine.n_freq * TILE_CELLS * 4
    return per if level == 0 else 2 * per


def _level_of(engine: TileEngine, t0: float, t1: float, n_cols: int) -> int:
    return engine.column_frames(t0, t1, n_cols)[3]


def _tiles_over(engine: TileEngine, level: int, t0: float, t1: float, centre: float
                ) -> list[tuple[int, int]]:
    """Tiles of ``level`` holding frames centred in ``[t0, t1]``, nearest to ``centre`` first."""
    per_tile = TILE_CELLS << level
    k = engine.frame_position
    n_tiles = -(-engine.n_frames // per_tile)
    first = max(0, int(k(t0) // per_tile))
    last = min(n_tiles - 1, int(k(t1) // per_tile))
    mid = float(k(centre)) / per_tile
    order = sorted(range(first, last + 1), key=lambda i: abs(i + 0.5 - mid))
    return [(level, i) for i in order]


def plan_ahead(engine: TileEngine, t0: float, t1: float, n_cols: int, *,
               zoom_out: int = ZOOM_OUT_STEPS, pans: bool = True,
               budget_bytes: int | None = None) -> list[tuple[int, int]]:
    """Tiles ``(level, index)`` the views after ``t0 .. t1`` at ``n_cols`` columns need.

    In order: the zoom-outs by 2 .. ``2**zoom_out`` about the view's centre
    (their widest span at each level from the first zoom-out's to the last's),
    then the pans by one view either side at the view's level.  Tiles already
    cached are left out, and the list stops at ``budget_bytes`` (default: a
    quarter of the engine's cache) so building ahead never evicts the view.

    Parameters
    ----------
    engine : TileEngine
        The engine of the view.
    t0, t1 : float
        The view's span in seconds, clipped to the recording.
    n_cols : int
        The view's columns.
    zoom_out : int
        Zoom-outs by 2, 4, ... ``2**zoom_out`` are prepared; 0 for none.
    pans : bool
        Whether to prepare the pans by one view either side.
    budget_bytes : int, optional
        Most bytes of tiles to plan; :data:`CACHE_SHARE` of the cache by default.

    Returns
    -------
    list of (int, int)
        ``(level, index)`` of the tiles to build, in order; empty for an empty view.
    """
    duration = engine.duration
    t0, t1 = max(0.0, float(t0)), min(duration, float(t1))
    if not t1 > t0 or n_cols < 1:
        return []
    centre, span = (t0 + t1) / 2, t1 - t0
    budget = int(engine.cache.max_bytes * CACHE_SHARE) if budget_bytes is None \
        else int(budget_bytes)
    wanted: list[tuple[int, int]] = []
    if zoom_out > 0:
        wide = min(span * (1 << zoom_out), duration)
        w0 = min(max(0.0, centre - wide / 2), duration - wide)
        levels = [_level_of(engine, max(0.0, centre - s / 2), min(duration, centre + s / 2),
                            n_cols)
                  for s in (min(span * (1 << k), duration) for k in (1, zoom_out))]
        for level in range(levels[0], levels[1] + 1):
            wanted += _tiles_over(engine, level, w0, w0 + wide, centre)
    if pans:
        level = _level_of(engine, t0, t1, n_cols)
        wanted += _tiles_over(engine, level, max(0.0, t0 - span), min(duration, t1 + span),
                              centre)
    plan, seen, total = [], set(), 0
    for key in wanted:
        if key in seen or engine.is_available(*key):
            continue
        seen.add(key)
        total += _tile_bytes(engine, key[0])
        if total > budget:
            break
        plan.append(key)
    return plan


def build_ahead(engine: TileEngine, plan: list[tuple[int, int]], *,
                cancelled: Callable[[], bool] | None = None,
                progress: Callable[[float], None] | None = None) -> int:
    """Compute the tiles of ``plan`` in order (finer ones first); the number computed.

    Stops quietly at the first ``cancelled()`` (checked between blocks of
    frames); the tiles finished so far stay cached.

    Parameters
    ----------
    engine : TileEngine
        The engine the tiles are built in.
    plan : list of (int, int)
        ``(level, index)`` of the tiles, as :func:`plan_ahead` gives them.
    cancelled : callable, optional
        ``cancelled() -> bool``; True stops the build.
    progress : callable, optional
        ``progress(fraction)`` after each tile of the plan.

    Returns
    -------
    int
        Tiles of the plan that are available now (computed here or already there).
    """
    done = 0
    for n, (level, index) in enumerate(plan):
        if cancelled is not None and cancelled():
            break
        if not engine.is_available(level, index):
            try:
                engine.get_tile(level, index, cancelled)
            except Cancelled:
                break
        done += 1
        if progress is not None:
            progress((n + 1) / len(plan))
    return done
