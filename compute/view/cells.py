"""Pyramid cells of one block of spectra, several levels from one pass.

A block of spectra ``p`` (``(frames, n_freq)`` float32, starting on a cell
boundary of every level asked for) is reduced to the sums and maxima of the
cells of ``2**fine`` frames (a reshape and one reduction along the frames),
and each coarser level from the one below by adding (and taking the maximum
of) neighbouring pairs of cells, the way a tile is made from its two children.
A level's cells are therefore the same numbers whether that level was asked
for alone, derived from its children or had finer levels computed with it.

The reductions write into contiguous per-thread scratch rows: a reduction
whose output is the transposed slice of a tile (cells along columns) runs
about ten times slower than one into rows followed by one transposed copy.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np

from .tile_cache import Tile


class Scratch:
    """Per-thread rows for the cells of one block (allocated once per thread and size)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def buffers(self, rows: int, n_freq: int) -> np.ndarray:
        """This thread's ``(4, rows, n_freq)`` float32 buffer: two pairs of sums and maxima."""
        buf = getattr(self._local, "buf", None)
        if buf is None or buf.shape[1] < rows or buf.shape[2] != n_freq:
            buf = self._local.buf = np.empty((4, max(rows, 1), n_freq), np.float32)
        return buf


def block_cells(p: np.ndarray, fine: int, top: int, scratch: Scratch
                ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(level, sums, maxs)`` of the block ``p`` for each level from ``fine`` to ``top``.

    ``sums`` and ``maxs`` are ``(cells, n_freq)``: the block's cells of
    ``2**level`` frames, the last one partial when the block ends inside a cell.
    At level 0 both are ``p`` itself.  The arrays are scratch: each is valid
    until the next one is produced.
    """
    frames, n_freq = p.shape
    buf = scratch.buffers(-(-frames // 2), n_freq)  # the most rows any level needs here
    if fine == 0:
        sums = maxs = p
        pair = -1  # the cells are p itself
    else:
        cell = 1 << fine
        n_cells = -(-frames // cell)
        sums, maxs = buf[0, :n_cells], buf[1, :n_cells]
        pair = 0
        full = frames // cell
        if full:
            g = p[:full * cell].reshape(full, cell, n_freq)
            np.sum(g, axis=1, out=sums[:full])
            np.max(g, axis=1, out=maxs[:full])
        if full < n_cells:  # the block ends inside a cell
            np.sum(p[full * cell:], axis=0, out=sums[full])
            np.max(p[full * cell:], axis=0, out=maxs[full])
    yield fine, sums, maxs
    for level in range(fine + 1, top + 1):
        n = sums.shape[0]
        half, n_next = n // 2, -(-n // 2)
        pair = 1 if pair == 0 else 0  # the other pair of rows than the current cells'
        out_s, out_m = buf[2 * pair, :n_next], buf[2 * pair + 1, :n_next]
        np.add(sums[0:2 * half:2], sums[1:2 * half:2], out=out_s[:half])
        np.maximum(maxs[0:2 * half:2], maxs[1:2 * half:2], out=out_m[:half])
        if n % 2:  # an odd last cell pairs with nothing
            out_s[half] = sums[n - 1]
            out_m[half] = maxs[n - 1]
        sums, maxs = out_s, out_m
        yield level, sums, maxs


def scatter(tiles: list[Tile], first_cell: int, sums: np.ndarray, maxs: np.ndarray,
            tile_cells: int) -> None:
    """Rows of cells (``(cells, n_freq)``) from global cell ``first_cell`` on, into the
    columns of the consecutive ``tiles`` (``tile_cells`` cells each) holding them."""
    first, n, row = tiles[0].index, sums.shape[0], 0
    while row < n:
        cell = first_cell + row
        tile = tiles[cell // tile_cells - first]
        col = cell % tile_cells
        take = min(n - row, tile.counts.size - col)
        tile.sums[:, col:col + take] = sums[row:row + take].T
        if tile.level > 0:
            tile.maxs[:, col:col + take] = maxs[row:row + take].T
        row += take


def empty_tile(level: int, index: int, n_frames: int, n_freq: int, tile_cells: int,
               accumulate: bool) -> Tile:
    """Tile ``index`` of ``level`` before its cells are written: zeros and -inf when
    blocks accumulate into its cells, else uninitialised (every cell is written once)."""
    cell = 1 << level
    g0 = index * tile_cells * cell
    g1 = min(g0 + tile_cells * cell, n_frames)
    n_cells = -(-(g1 - g0) // cell)
    make = np.zeros if accumulate else np.empty
    sums = make((n_freq, n_cells), np.float32)
    maxs = sums if level == 0 else (np.full((n_freq, n_cells), -np.inf, np.float32)
                                    if accumulate else np.empty_like(sums))
    counts = np.full(n_cells, cell, np.int64)
    counts[-1] = (g1 - g0) - cell * (n_cells - 1)
    return Tile(level, index, sums, maxs, counts)
