"""A view's columns over the pyramid: the frames each column holds, and the columns
reduced from a run of cells.

Both are pure functions of the frame grid (sample rate, hop, frame length, frame
count) and of cells, used by :class:`~specscope.compute.view.tiles.TileEngine`.
"""

from __future__ import annotations

import math

import numpy as np


def level_for(frames_per_column: float, max_level: int) -> int:
    """The coarsest level whose cells are at most half a column (0 below 4 frames)."""
    if frames_per_column < 4:
        return 0
    return int(min(max_level, max(0, math.floor(math.log2(frames_per_column / 2)))))


def column_frames(t0: float, t1: float, n_cols: int, level: int | None, *, fs: float,
                  hop: int, nfft: int, n_frames: int, max_level: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Columns of a view: their edges, their frame ranges ``[a, b)`` and the level.

    Column ``j`` aggregates exactly the frames whose centres lie in
    ``[edges[j], edges[j+1])`` (frame ``k`` centred at ``(k*hop + nfft/2) / fs``).
    At level ``L > 0`` the frame bounds are snapped to whole cells of ``2**L``
    frames (less than a quarter of a column, so under a quarter pixel) and the
    returned edges are the exact ones.  A column holding no frame centre gets
    the frame nearest to its centre (frames are repeated when zoomed in past
    one frame per column).  Columns wholly outside the recording get
    ``a == b == -1``.  ``level`` forces a level (None: :func:`level_for`).
    """
    edges = np.linspace(t0, t1, n_cols + 1)
    u = (np.asarray(edges, dtype=np.float64) * fs - nfft / 2) / hop
    bounds = np.clip(np.ceil(u), 0, n_frames).astype(np.int64)
    a, b = bounds[:-1].copy(), bounds[1:].copy()
    inside_n = max(1, int(np.sum(b > a)))
    fpc = float(np.sum(b - a)) / inside_n
    L = level_for(fpc, max_level) if level is None else int(level)
    hop_t = hop / fs
    first_c = (0.0 * hop + nfft / 2) / fs
    last_c = (np.float64(n_frames - 1) * hop + nfft / 2) / fs
    outside = (edges[1:] <= first_c - hop_t / 2) | (edges[:-1] >= last_c + hop_t / 2)
    if L > 0:
        cell = 1 << L
        snapped = np.minimum(np.rint(bounds / cell).astype(np.int64) * cell, n_frames)
        snapped[bounds >= n_frames] = n_frames  # keep the short last cell
        a, b = snapped[:-1].copy(), snapped[1:].copy()
        inner = (b > a) & ~outside
        exact = (np.maximum(snapped, 0) * hop + nfft / 2) / fs - hop_t / 2
        # keep the requested outer edges where the view extends beyond the recording
        keep = (u <= 0) | (u >= n_frames)
        edges = np.where(keep, edges, exact)
        outside |= ~inner
    else:
        empty = (b <= a) & ~outside
        if np.any(empty):
            mid = np.clip(np.rint((u[:-1] + u[1:]) / 2).astype(np.int64), 0, n_frames - 1)
            a = np.where(empty, mid, a)
            b = np.where(empty, mid + 1, b)
    a[outside] = -1
    b[outside] = -1
    return edges, a, b, L


def reduce_columns(sums: np.ndarray, maxs: np.ndarray, counts: np.ndarray, fl: np.ndarray,
                   ll: np.ndarray, reduce: str) -> np.ndarray:
    """Columns from a run of cells: column ``j`` holds cells ``fl[j] .. ll[j]``.

    ``reduce="max"``: the maximum of their maxima; ``"mean"``: the sum of their
    sums over their frames (``counts``), in float64, returned as float32.
    """
    if reduce == "max":
        # reduceat spans cells [fl_j, fl_{j+1}); at level 0 a repeated frame
        # makes fl_j == fl_{j+1}, so take each column's last cell explicitly
        out = np.maximum.reduceat(maxs, fl, axis=1)
        np.maximum(out, maxs[:, ll], out=out)
        return out
    # columns hold whole cells: the mean is (sum of their sums) / (their frames)
    if fl.size > 1 and np.array_equal(fl[1:], ll[:-1] + 1):
        # consecutive runs of cells (every level above 0): one pass over the cells
        total = np.add.reduceat(sums, fl, axis=1, dtype=np.float64)
        return (total / np.add.reduceat(counts, fl)).astype(np.float32)
    cum = np.zeros((sums.shape[0], sums.shape[1] + 1), np.float64)
    np.cumsum(sums, axis=1, out=cum[:, 1:])
    ccount = np.concatenate([[0], np.cumsum(counts)])
    total = cum[:, ll + 1] - cum[:, fl]
    return (total / (ccount[ll + 1] - ccount[fl])).astype(np.float32)
