"""Tiles of the pyramid and the memory cache that holds them.

A :class:`Tile` holds the sums and maxima of ``TILE_CELLS`` consecutive cells of
one level (see :mod:`specscope.compute.view.tiles`); a :class:`TileCache` keeps
tiles in a thread-safe LRU bounded in bytes.  Tiles put in *cold* (finer
levels computed along with a tile a view asked for) go to the end that is
dropped first, so they never push out what a view used; each dropped tile is
handed to ``on_evict`` (outside the lock), which may keep it on disk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

DEFAULT_CACHE_BYTES = 384 << 20


class Tile:
    """Sums and maxima of power over ``2**level`` frames per cell.

    ``sums`` and ``maxs`` are float32 ``(n_freq, n_cells)`` (the same array at
    level 0); ``counts`` int64 ``(n_cells,)``, the frames in each cell (the last
    tile may be short).  A tile computed on a GPU keeps its cells on the device
    (``device``: ``(sums, maxs)`` device arrays) and brings them to the host
    only when they are first read there (``fetch(device_array)``): a view
    reduces them to its columns on the device instead.

    Parameters
    ----------
    level : int
        Pyramid level: each cell spans ``2**level`` frames.
    index : int
        Position of the tile in its level.
    sums, maxs : numpy.ndarray or None
        The cells on the host; None while they are on the device only.
    counts : numpy.ndarray
        Frames in each cell.
    device : tuple, optional
        ``(sums, maxs)`` device arrays.
    fetch : callable, optional
        ``fetch(device_array) -> numpy.ndarray``, bringing cells to the host.

    Raises
    ------
    ValueError
        Neither the host cells nor the device's with ``fetch`` are given.
    """

    __slots__ = ("_fetch", "_maxs", "_sums", "counts", "device", "index", "level")

    def __init__(self, level: int, index: int, sums: np.ndarray | None,
                 maxs: np.ndarray | None, counts: np.ndarray, *,
                 device: tuple | None = None,
                 fetch: Callable[[object], np.ndarray] | None = None) -> None:
        if (sums is None or maxs is None) and (device is None or fetch is None):
            raise ValueError("a tile needs its cells, or the device's and a way to fetch them")
        self.level, self.index, self.counts = level, index, counts
        self._sums, self._maxs, self.device, self._fetch = sums, maxs, device, fetch

    @property
    def sums(self) -> np.ndarray:
        """The sums (brought from the device on first use when they are still there)."""
        if self._sums is None:
            self._sums = self._fetch(self.device[0])
            if self.level == 0:
                self._maxs = self._sums
        return self._sums

    @property
    def maxs(self) -> np.ndarray:
        """The maxima (brought from the device on first use when they are still there)."""
        if self._maxs is None:
            self._maxs = self.sums if self.level == 0 else self._fetch(self.device[1])
        return self._maxs

    @property
    def maxs_on_host(self) -> bool:
        """Whether the maxima are in host memory (False: still on the device only)."""
        return self._maxs is not None

    @property
    def sums_on_host(self) -> bool:
        """Whether the sums are in host memory (False: still on the device only)."""
        return self._sums is not None

    @property
    def nbytes(self) -> int:
        """Memory held by the tile's cells, wherever they are (counts included)."""
        n = len(self.counts) * self._rows() * 4
        return (n if self.level == 0 else 2 * n) + self.counts.nbytes

    def _rows(self) -> int:
        a = self._sums if self._sums is not None else self.device[0]
        return int(a.shape[0])


class TileCache:
    """A thread-safe LRU of tiles, bounded in bytes.

    Parameters
    ----------
    max_bytes : int
        Bound of the bytes held by the cached tiles.
    on_evict : callable, optional
        ``on_evict(tile)`` hears of every tile dropped to stay within
        ``max_bytes`` (called after the cache's lock is released).
    """

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES,
                 on_evict: Callable[[Tile], None] | None = None) -> None:
        self.max_bytes = int(max_bytes)
        self.on_evict = on_evict
        self._items: OrderedDict[tuple[int, int], Tile] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = self.evicted = 0

    def get(self, key: tuple[int, int]) -> Tile | None:
        """The tile of ``(level, index)``, marked as recently used; None when not cached."""
        with self._lock:
            tile = self._items.get(key)
            if tile is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return tile

    def peek(self, key: tuple[int, int]) -> bool:
        """Whether ``(level, index)`` is cached (without counting a hit or miss)."""
        with self._lock:
            return key in self._items

    def put(self, key: tuple[int, int], tile: Tile, *, cold: bool = False) -> None:
        """Cache a tile, dropping the least recently used ones beyond ``max_bytes``.

        ``cold``: the tile goes to the end dropped first (a tile computed along
        with the ones asked for; it never pushes out a tile a view used).  A cold
        tile that does not fit is dropped at once.
        """
        dropped = []
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = tile
            if cold:
                self._items.move_to_end(key, last=False)
            self._bytes += tile.nbytes
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, gone = self._items.popitem(last=False)
                self._bytes -= gone.nbytes
                dropped.append(gone)
            self.evicted += len(dropped)
        if self.on_evict is not None:
            for gone in dropped:
                self.on_evict(gone)

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached tiles."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

