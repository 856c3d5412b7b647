"""A view's columns over the pyramid: the frames each column holds, and the columns
reduced from a run of cells.

Both are pure functions of the frame grid (sample rate, hop, frame length, frame
count) and of cells, used by :class:`~specscope.compute.view.tiles.TileEngine`.
A recording made of contiguous stretches with gaps between them (a deployment) has
its frames planned per stretch (:class:`FrameGrid`): no frame crosses a gap.
"""

from __future__ import annotations

import math

import numpy as np


class FrameGrid:
    """The frames of a recording, planned per contiguous segment of its sample axis.

    Frames are numbered across segments: segment ``s`` holds frames
    ``first[s] .. first[s] + n[s]``, frame ``first[s] + j`` reading samples
    ``start[s] + j*hop`` to ``start[s] + j*hop + nfft``.  No frame crosses from one
    segment into the next; a segment shorter than ``nfft`` holds none.  One segment
    is the plain grid (frame ``k`` at sample ``k*hop``).

    Parameters
    ----------
    segments : sequence of (int, int)
        The segments as sample ranges ``(start, stop)``, in order, not overlapping.
    nfft, hop : int
        Frame length and hop in samples.
    """

    def __init__(self, segments, nfft: int, hop: int) -> None:
        self.nfft, self.hop = int(nfft), int(hop)
        seg = np.asarray(segments, np.int64).reshape(-1, 2)
        self.start, self.stop = seg[:, 0].copy(), seg[:, 1].copy()
        size = self.stop - self.start
        self.n = np.where(size < self.nfft, 0, (size - self.nfft) // self.hop + 1)
        self.first = np.concatenate([[0], np.cumsum(self.n)[:-1]]).astype(np.int64)
        self.n_frames = int(self.n.sum())

    @property
    def segmented(self) -> bool:
        """Whether there is more than one segment."""
        return self.start.size > 1

    def _seg_of_frame(self, k: np.ndarray) -> np.ndarray:
        # the last segment whose first frame is <= k: the one holding k (empty ones skipped)
        s = np.searchsorted(self.first, k, side="right") - 1
        return np.clip(s, 0, self.first.size - 1)

    def frame_start(self, k) -> np.ndarray:
        """First sample of frame ``k`` (frames before 0 or past the end extrapolated)."""
        k = np.asarray(k, np.int64)
        s = self._seg_of_frame(k)
        return self.start[s] + (k - self.first[s]) * self.hop

    def centre(self, k) -> np.ndarray:
        """Centre of frame ``k`` in samples (float64)."""
        k = np.asarray(k)
        s = self._seg_of_frame(np.floor(k).astype(np.int64))
        return self.start[s] + (k - self.first[s]) * self.hop + self.nfft / 2

    def position(self, x) -> np.ndarray:
        """Continuous frame index at sample position ``x`` (float): ``ceil`` of it counts
        the frames centred before ``x``.  Linear within a segment; between segments it
        stays within half a frame of the segments' frames."""
        x = np.asarray(x, np.float64)
        if not self.segmented:
            return (x - self.start[0] - self.nfft / 2) / self.hop
        s = np.clip(np.searchsorted(self.start, x, side="right") - 1, 0, self.start.size - 1)
        v = (x - self.start[s] - self.nfft / 2) / self.hop
        last = self.start.size - 1
        v = np.where(s > 0, np.maximum(v, -0.5), v)
        v = np.where(s < last, np.minimum(v, self.n[s] - 0.5), v)
        return self.first[s] + v

    def segment_span(self, k: int) -> tuple[int, int]:
        """The sample range ``(start, stop)`` of the segment holding frame ``k``."""
        s = int(self._seg_of_frame(np.int64(k)))
        return int(self.start[s]), int(self.stop[s])

    def pieces(self, k0: int, k1: int) -> list[tuple[int, int, int, int]]:
        """Frames ``k0 .. k1`` split where segments meet: ``(a, b, seg_start, seg_stop)``
        per segment, ``a .. b`` its frames among them."""
        out = []
        s = int(self._seg_of_frame(np.int64(k0)))
        while k0 < k1 and s < self.start.size:
            a, b = max(k0, int(self.first[s])), min(k1, int(self.first[s] + self.n[s]))
            if b > a:
                out.append((a, b, int(self.start[s]), int(self.stop[s])))
            k0 = max(k0, b)
            s += 1
        return out


def level_for(frames_per_column: float, max_level: int) -> int:
    """The coarsest level whose cells are at most half a column (0 below 4 frames)."""
    if frames_per_column < 4:
        return 0
    return int(min(max_level, max(0, math.floor(math.log2(frames_per_column / 2)))))


def column_frames(t0: float, t1: float, n_cols: int, level: int | None, *, fs: float,
                  hop: int, nfft: int, n_frames: int, max_level: int,
                  grid: FrameGrid | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Columns of a view: their edges, their frame ranges ``[a, b)`` and the level.

    Column ``j`` aggregates exactly the frames whose centres lie in
    ``[edges[j], edges[j+1])`` (frame ``k`` centred at ``(k*hop + nfft/2) / fs``).
    At level ``L > 0`` the frame bounds are snapped to whole cells of ``2**L``
    frames (less than a quarter of a column, so under a quarter pixel) and the
    returned edges are the exact ones.  A column holding no frame centre gets
    the frame nearest to its centre (frames are repeated when zoomed in past
    one frame per column).  Columns wholly outside the recording get
    ``a == b == -1``.  ``level`` forces a level (None: :func:`level_for`).  ``grid``
    gives the frames of a recording with segments (default: one segment).
    """
    if grid is None:
        grid = FrameGrid([(0, (n_frames - 1) * hop + nfft)], nfft, hop)
    edges = np.linspace(t0, t1, n_cols + 1)
    u = grid.position(np.asarray(edges, dtype=np.float64) * fs)
    bounds = np.clip(np.ceil(u), 0, n_frames).astype(np.int64)
    a, b = bounds[:-1].copy(), bounds[1:].copy()
    inside_n = max(1, int(np.sum(b > a)))
    fpc = float(np.sum(b - a)) / inside_n
    L = level_for(fpc, max_level) if level is None else int(level)
    hop_t = hop / fs
    first_c = float(grid.centre(np.float64(0))) / fs
    last_c = float(grid.centre(np.float64(n_frames - 1))) / fs
    outside = (edges[1:] <= first_c - hop_t / 2) | (edges[:-1] >= last_c + hop_t / 2)
    if L > 0:
        cell = 1 << L
        snapped = np.minimum(np.rint(bounds / cell).astype(np.int64) * cell, n_frames)
        snapped[bounds >= n_frames] = n_frames  # keep the short last cell
        a, b = snapped[:-1].copy(), snapped[1:].copy()
        inner = (b > a) & ~outside
        exact = grid.centre(np.maximum(snapped, 0)) / fs - hop_t / 2
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
