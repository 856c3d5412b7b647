"""The tile engine: any zoom of any recording, without skipping a frame.

Power is kept in a level-of-detail pyramid.  A *cell* at level ``L`` holds the
sum and the maximum of the power of ``2**L`` consecutive STFT frames; a *tile*
holds ``TILE_CELLS`` consecutive cells.  A view of ``n_cols`` columns over a
time span uses the level whose cells are at most a quarter of a column wide,
so each column aggregates whole cells plus two partial ones at its edges:

- ``reduce="mean"``: the power-weighted mean of the frames whose centres fall
  in the column (partial edge cells are weighted by the share of their frames
  inside the column);
- ``reduce="max"``: the maximum over every cell that overlaps the column, so a
  column is never below the loudest frame that lies wholly inside it.

When a span holds fewer frames than columns, each column shows the frame
nearest to its centre: frames are repeated, never interpolated.

Tiles are computed from the recording block by block (memory does not grow
with the file), kept in an LRU cache bounded in bytes, built from their two
children when those are cached, and — optionally — stored on disk keyed by the
file's identity and the analysis parameters, so reopening a file is instant.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .. import operators
from ..errors import Cancelled, InputError
from ..io import Recording
from ..spectral import FRAMES_PER_BLOCK, StftParams, hz_to_mel, kernel_dtype, mel_to_hz
from .images import DisplayImage, RenderResult
from .scales import check_freq_scale

TILE_CELLS = 256
REDUCTIONS = ("mean", "max")
DEFAULT_CACHE_BYTES = 384 << 20
#: levels at or above this are worth keeping on disk (each cell >= 16 frames)
DISK_MIN_LEVEL = 4
#: a tile computed from the recording is built from its descendants this many
#: levels down, which are cached too: zooming in from a fresh view is then fast
DERIVED_LEVELS = 3
#: tiles are not derived from tiles below this level: those hold fewer frames than one
#: kernel block (FRAMES_PER_BLOCK / TILE_CELLS frames per cell), so building a tile from
#: many of them costs more (one read and one kernel call each) than it saves on zoom-in
FINEST_DERIVED_LEVEL = max(0, (FRAMES_PER_BLOCK // TILE_CELLS).bit_length() - 1)


class Tile:
    """Sums and maxima of power over ``2**level`` frames per cell.

    ``sums`` and ``maxs`` are float32 ``(n_freq, n_cells)`` (the same array at
    level 0); ``counts`` int64 ``(n_cells,)``, the frames in each cell (the last
    tile may be short).  A tile computed on a GPU keeps its cells on the device
    (``device``: ``(sums, maxs)`` device arrays) and brings them to the host
    only when they are first read there (``fetch(device_array)``): a view
    reduces them to its columns on the device instead.
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
    """A thread-safe LRU of tiles, bounded in bytes."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[tuple[int, int], Tile] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

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

    def put(self, key: tuple[int, int], tile: Tile) -> None:
        """Cache a tile, dropping the least recently used ones beyond ``max_bytes``."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = tile
            self._bytes += tile.nbytes
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.nbytes

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached tiles."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)


class TileEngine:
    """View-independent spectrogram service for one channel of a recording.

    Parameters
    ----------
    recording : Recording
    nfft, hop, window, scaling
        STFT parameters (see :class:`~specscope.compute.spectral.StftParams`).
    channel : int
    pipeline : callable, optional
        ``pipeline(x, fs) -> y`` applied to each block of samples before the
        STFT (e.g. :meth:`~specscope.compute.pipeline.Pipeline.block_function`).
        It must be sample-wise or carry its own history, unless
        ``pipeline_context`` says how much it needs.
    pipeline_context : int or (int, int), optional
        Samples read before (and after) each block, run through ``pipeline``
        with it and cut off again, for steps with history (filters); default
        ``pipeline.context`` when it has one, else 0.
    cache_bytes : int
        Bound of the in-memory tile cache.
    disk_cache : str, Path or None
        Folder for coarse tiles kept across sessions; None disables it.
    backend : str
        Where the ``stft_power`` operator runs: ``"auto"``, ``"numpy"`` or ``"cupy"``.
        On a GPU (``"cupy"``, or ``"auto"`` when a device answers and the
        preference allows it) tiles are computed on the device and only their
        cells come back (:meth:`use_device`).
    """

    def __init__(self, recording: Recording, *, nfft: int = 1024, hop: int = 256,
                 window: str | tuple = "hann", scaling: str = "psd", channel: int = 0,
                 pipeline: Callable[[np.ndarray, float], np.ndarray] | None = None,
                 pipeline_context: int | tuple[int, int] | None = None,
                 cache_bytes: int = DEFAULT_CACHE_BYTES,
                 disk_cache: str | os.PathLike[str] | None = None,
                 backend: str = "auto") -> None:
        self.recording = recording
        self.backend = backend
        self.params = StftParams(nfft, hop, window, scaling)
        recording.channel_list(channel)
        self.params.check_length(recording.n_samples, recording.path.name)
        self.channel = int(channel)
        self.pipeline = pipeline
        ctx = getattr(pipeline, "context", 0) if pipeline_context is None else pipeline_context
        before, after = (ctx, 0) if isinstance(ctx, (int, np.integer)) else ctx
        if before < 0 or after < 0:
            raise InputError(f"pipeline_context={pipeline_context!r} must be >= 0 samples")
        self.pipeline_context = (int(before), int(after))
        self.fs = float(recording.sample_rate)
        self.n_frames = self.params.n_frames(recording.n_samples)
        self.two_sided = bool(recording.is_complex)
        f = self.params.frequencies(self.fs, self.two_sided)
        self.frequencies = f + (recording.center_frequency or 0.0)
        self.n_freq = f.size
        self.cache = TileCache(cache_bytes)
        self.max_level = max(0, math.ceil(math.log2(max(self.n_frames, 1) / TILE_CELLS)))
        self._disk = (Path(disk_cache) / self._identity()
                      if disk_cache and recording.path.is_file() else None)
        self.tiles_computed = 0
        self._local = threading.local()  # per thread: the block buffer of the spectra
        self._cells = None  # the device path (a CellStream), set up on first use
        self._device_checked = False

    # -- the device path ---------------------------------------------------------
    def use_device(self, cp, budget: int | None = None) -> None:
        """Compute tiles with the array module ``cp`` (CuPy: on the GPU); None: on the host.

        ``budget`` bounds the device bytes of one block (default
        :data:`specscope.compute.ops.device.DEFAULT_BUDGET`).

        Each tile's samples are streamed to the device in blocks of whole cells
        and reduced there to the cells' sums and maxima
        (:class:`specscope.compute.ops.device.CellStream`), so only the cells
        cross the bus: the sums at once, the maxima when a peak-hold view (or
        the disk cache) first reads them.  Tiles are computed at their own level
        rather than from finer ones, which would bring back more.  numpy may
        stand in for CuPy (the same code runs).
        """
        self._device_checked = True
        if cp is None:
            self._cells = None
            return
        from ..ops import device
        self._cells = device.CellStream(cp, self.params, self.fs, two_sided=self.two_sided,
                                        budget=budget or device.DEFAULT_BUDGET)

    @property
    def device_stats(self):
        """What crossed the bus so far on the device path (``TransferStats``), else None."""
        self._device()
        return None if self._cells is None else self._cells.stats

    def _device(self):
        if not self._device_checked:
            self._device_checked = True
            from .. import backend as _backend
            name = self.backend
            if name == "auto":
                name = "cupy" if (_backend.preference() != "numpy"
                                  and "cupy" in _backend.available_backends()) else "numpy"
            if name == "cupy":
                self.use_device(_backend.get_xp("cupy"))
        return self._cells

    # -- geometry ------------------------------------------------------------
    @property
    def duration(self) -> float:
        """Length of the recording in seconds."""
        return self.recording.n_samples / self.fs

    def frame_centre(self, k: np.ndarray | float) -> np.ndarray:
        """Time (s) of the centre of frame ``k``."""
        return (np.asarray(k, dtype=np.float64) * self.params.hop + self.params.nfft / 2) / self.fs

    def frame_position(self, t: np.ndarray | float) -> np.ndarray:
        """Continuous frame index whose centre is at time ``t``."""
        return (np.asarray(t, dtype=np.float64) * self.fs - self.params.nfft / 2) / self.params.hop

    _frame_position = frame_position

    def level_for(self, frames_per_column: float) -> int:
        """The coarsest level whose cells are at most half a column."""
        if frames_per_column < 4:
            return 0
        return int(min(self.max_level, max(0, math.floor(math.log2(frames_per_column / 2)))))

    # -- tiles ---------------------------------------------------------------
    def has_tile(self, level: int, index: int) -> bool:
        """Whether tile ``index`` of ``level`` is in the memory cache."""
        return self.cache.peek((level, index))

    def get_tile(self, level: int, index: int,
                 cancelled: Callable[[], bool] | None = None,
                 derive: int = DERIVED_LEVELS,
                 progress: Callable[[float], None] | None = None) -> Tile:
        """A tile from the cache, the disk, its two children, or the recording.

        Computed from the recording, a tile is assembled from its descendants
        ``derive`` levels down, which stay cached for the zoom-in that usually
        follows.  ``progress(fraction)`` hears how much of this tile is done,
        block by block; ``cancelled()`` is checked between blocks.
        """
        key = (level, index)
        tile = self.cache.get(key)
        if tile is not None:
            return tile
        if self._device() is not None:
            derive = 0  # finer tiles would bring more back over the bus than this one
        derive = min(derive, max(0, level - FINEST_DERIVED_LEVEL))
        tile = self._load_disk(level, index)
        if tile is None and level > 0:
            kids = [(level - 1, 2 * index + k) for k in (0, 1)
                    if self._tile_exists(level - 1, 2 * index + k)]
            if all(self.cache.peek(k) for k in kids) or derive > 0:
                for n, k in enumerate(kids):  # cached, or computed now, one level down
                    self.get_tile(*k, cancelled=cancelled, derive=max(derive - 1, 0),
                                  progress=_share(progress, n, len(kids)))
                tile = self._combine(level, index, cancelled)
        if tile is None:
            tile = self._compute(level, index, cancelled, progress)
        self._save_disk(tile)
        self.cache.put(key, tile)
        return tile

    def _tile_exists(self, level: int, index: int) -> bool:
        return index * (TILE_CELLS << level) < self.n_frames

    def _combine(self, level: int, index: int,
                 cancelled: Callable[[], bool] | None = None) -> Tile:
        parts = [self.cache.get((level - 1, 2 * index + k)) for k in (0, 1)
                 if self._tile_exists(level - 1, 2 * index + k)]
        if any(p is None for p in parts):  # evicted meanwhile: compute directly
            return self._compute(level, index, cancelled)
        if self._cells is not None and all(p.device is not None for p in parts):
            return self._combine_on_device(level, index, parts)
        sums = np.concatenate([p.sums for p in parts], axis=1)
        maxs = np.concatenate([p.maxs for p in parts], axis=1)
        counts = np.concatenate([p.counts for p in parts])
        n = counts.size
        if n % 2:  # an odd last cell pairs with nothing
            sums = np.concatenate([sums, np.zeros((self.n_freq, 1), np.float32)], axis=1)
            maxs = np.concatenate([maxs, np.full((self.n_freq, 1), -np.inf, np.float32)], axis=1)
            counts = np.concatenate([counts, [0]])
        return Tile(level, index, sums[:, 0::2] + sums[:, 1::2],
                    np.maximum(maxs[:, 0::2], maxs[:, 1::2]), counts[0::2] + counts[1::2])

    def _combine_on_device(self, level: int, index: int, parts: list[Tile]) -> Tile:
        """A parent of two device tiles, made on the device (nothing crosses the bus)."""
        cp = self._cells.cp
        counts = np.concatenate([p.counts for p in parts])
        sums = cp.concatenate([p.device[0] for p in parts], axis=1)
        maxs = cp.concatenate([p.device[1] if p.device[1] is not None else p.device[0]
                               for p in parts], axis=1)
        if counts.size % 2:  # an odd last cell pairs with nothing
            sums = cp.concatenate([sums, cp.zeros((self.n_freq, 1), np.float32)], axis=1)
            maxs = cp.concatenate([maxs, cp.full((self.n_freq, 1), -np.inf, np.float32)],
                                  axis=1)
            counts = np.concatenate([counts, [0]])
        return Tile(level, index, None, None, counts[0::2] + counts[1::2],
                    device=(cp.ascontiguousarray(sums[:, 0::2] + sums[:, 1::2]),
                            cp.ascontiguousarray(cp.maximum(maxs[:, 0::2], maxs[:, 1::2]))),
                    fetch=self._cells.fetch)

    def _compute(self, level: int, index: int, cancelled: Callable[[], bool] | None,
                 progress: Callable[[float], None] | None = None) -> Tile:
        cell = 1 << level
        f0 = index * TILE_CELLS * cell
        f1 = min(f0 + TILE_CELLS * cell, self.n_frames)
        if f1 <= f0:
            raise InputError(f"tile {index} of level {level} lies beyond the recording")
        n_cells = -(-(f1 - f0) // cell)
        if self._device() is not None:
            return self._compute_on_device(level, index, f0, f1, cancelled, progress)
        sums = np.zeros((self.n_freq, n_cells), np.float32)
        maxs = sums if level == 0 else np.full((self.n_freq, n_cells), -np.inf, np.float32)
        hop, nfft = self.params.hop, self.params.nfft
        block = max(1, FRAMES_PER_BLOCK // cell) * cell if cell <= FRAMES_PER_BLOCK \
            else FRAMES_PER_BLOCK
        for k0 in range(f0, f1, block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            k1 = min(k0 + block, f1)
            x = self.read_processed(k0 * hop, (k1 - 1) * hop + nfft)
            # (frames, freq) into this thread's block buffer: cells reduce along rows
            p = self.spectra(x, out=self.block_buffer(k1 - k0))
            if not self.params.is_power:
                np.square(p, out=p)
            if level == 0:
                sums[:, k0 - f0:k1 - f0] = p.T
                if progress is not None:
                    progress((k1 - f0) / (f1 - f0))
                continue
            # blocks start on a cell boundary (a block is a multiple of a cell, or a
            # cell a multiple of a block), so whole cells reduce as a reshape
            c0, m = (k0 - f0) // cell, k1 - k0
            full = m // cell
            if full:  # cells wholly in this block: reduced straight into the tile
                g = p[:full * cell].reshape(full, cell, -1)
                np.sum(g, axis=1, out=sums[:, c0:c0 + full].T)
                np.max(g, axis=1, out=maxs[:, c0:c0 + full].T)
            if m % cell:  # the part of a cell in this block
                rest = p[full * cell:]
                sums[:, c0 + full] += rest.sum(axis=0)
                np.maximum(maxs[:, c0 + full], rest.max(axis=0), out=maxs[:, c0 + full])
            if progress is not None:
                progress((k1 - f0) / (f1 - f0))
        counts = np.full(n_cells, cell, np.int64)
        counts[-1] = (f1 - f0) - cell * (n_cells - 1)
        self.tiles_computed += 1
        return Tile(level, index, sums, maxs, counts)

    def _compute_on_device(self, level: int, index: int, f0: int, f1: int,
                           cancelled: Callable[[], bool] | None,
                           progress: Callable[[float], None] | None) -> Tile:
        cell = 1 << level
        hop = self.params.hop
        n_samples = (f1 - f0 - 1) * hop + self.params.nfft

        def read(a: int, b: int) -> np.ndarray:
            if cancelled is not None and cancelled():
                raise Cancelled()
            x = self.read_processed(f0 * hop + a, f0 * hop + b)
            if progress is not None:
                progress(min(1.0, b / n_samples))
            return x

        sums, maxs = self._cells.resident(read, f1 - f0, cell, want_max=level > 0)
        n_cells = int(sums.shape[1])
        counts = np.full(n_cells, cell, np.int64)
        counts[-1] = (f1 - f0) - cell * (n_cells - 1)
        self.tiles_computed += 1
        return Tile(level, index, None, None, counts, device=(sums, maxs),
                    fetch=self._cells.fetch)

    def spectra(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Every whole frame of ``x`` by the ``stft_power`` operator: (frames, freq) float32.

        ``out`` (float32, the result's shape) receives the spectra when the
        kernel computes in float32, as it does for every input but float64.
        """
        if out is not None and kernel_dtype(x.dtype) != np.float32:
            out = None  # a float64 kernel: its result is converted below
        p = operators.call("stft_power", x, backend=self.backend, fs=self.fs,
                           two_sided=self.two_sided, layout="frames", out=out,
                           **self.params.operator_params())
        return p if p.dtype == np.float32 else p.astype(np.float32)

    def block_buffer(self, frames: int) -> np.ndarray:
        """This thread's buffer for the spectra of one block: ``(frames, n_freq)`` float32.

        Allocated once per engine and thread (:data:`FRAMES_PER_BLOCK` rows) and
        reused for every block: a block's spectra (about 4 MiB at nfft 1024) are
        above glibc's mmap threshold, so a new array per block would be mapped,
        faulted in and unmapped each time.
        """
        buf = getattr(self._local, "block", None)
        if buf is None or buf.shape[0] < frames:
            buf = self._local.block = np.empty((max(frames, FRAMES_PER_BLOCK), self.n_freq),
                                               np.float32)
        return buf[:frames]

    def read_processed(self, a: int, b: int) -> np.ndarray:
        """Samples ``a:b`` of the channel through the pipeline (with its context)."""
        if self.pipeline is None:
            return self.recording.read(a, b, self.channel)[:, 0]
        before, after = self.pipeline_context
        a0, b1 = max(0, a - before), min(self.recording.n_samples, b + after)
        x = self.recording.read(a0, b1, self.channel)[:, 0]
        y = np.asarray(self.pipeline(x, self.fs))
        return y[a - a0:a - a0 + (b - a)]

    # -- disk cache ------------------------------------------------------------
    def _identity(self) -> str:
        st = self.recording.path.stat()
        key = json.dumps({"path": str(self.recording.path.resolve()), "size": st.st_size,
                          "mtime": st.st_mtime_ns, "nfft": self.params.nfft,
                          "hop": self.params.hop, "window": str(self.params.window),
                          "scaling": self.params.scaling, "channel": self.channel,
                          "two_sided": self.two_sided, "v": 1}, sort_keys=True)
        return hashlib.sha256(key.encode()).hexdigest()[:32]

    def _disk_path(self, level: int, index: int) -> Path | None:
        if self._disk is None or level < DISK_MIN_LEVEL or self.pipeline is not None:
            return None
        return self._disk / f"L{level:02d}_{index:08d}.npz"

    def _load_disk(self, level: int, index: int) -> Tile | None:
        path = self._disk_path(level, index)
        if path is None or not path.exists():
            return None
        try:
            with np.load(path) as z:
                return Tile(level, index, z["sums"], z["maxs"], z["counts"])
        except (OSError, ValueError, KeyError):
            return None  # a damaged cache file is recomputed

    def _save_disk(self, tile: Tile) -> None:
        path = self._disk_path(tile.level, tile.index)
        if path is None or path.exists():
            return
        if tile.device is not None and not (tile.sums_on_host and tile.maxs_on_host):
            return  # cells on the device stay there: saving them would bring every cell over
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, sums=tile.sums, maxs=tile.maxs, counts=tile.counts)
            os.replace(tmp, path)
        except OSError:
            pass  # the disk cache is an optimisation; never fail a render for it

    # -- rendering -------------------------------------------------------------
    def column_frames(self, t0: float, t1: float, n_cols: int, level: int | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Columns of a view: their edges, their frame ranges ``[a, b)`` and the level.

        Column ``j`` aggregates exactly the frames whose centres lie in
        ``[edges[j], edges[j+1])``.  At level ``L > 0`` the frame bounds are
        snapped to whole cells of ``2**L`` frames (less than a quarter of a
        column, so under a quarter pixel) and the returned edges are the exact
        ones.  A column holding no frame centre gets the frame nearest to its
        centre (frames are repeated when zoomed in past one frame per column).
        Columns wholly outside the recording get ``a == b == -1``.
        """
        edges = np.linspace(t0, t1, n_cols + 1)
        u = self._frame_position(edges)
        bounds = np.clip(np.ceil(u), 0, self.n_frames).astype(np.int64)
        a, b = bounds[:-1].copy(), bounds[1:].copy()
        inside_n = max(1, int(np.sum(b > a)))
        fpc = float(np.sum(b - a)) / inside_n
        L = self.level_for(fpc) if level is None else int(level)
        hop_t = self.params.hop / self.fs
        first_c, last_c = self.frame_centre(0), self.frame_centre(self.n_frames - 1)
        outside = (edges[1:] <= first_c - hop_t / 2) | (edges[:-1] >= last_c + hop_t / 2)
        if L > 0:
            cell = 1 << L
            snapped = np.minimum(np.rint(bounds / cell).astype(np.int64) * cell, self.n_frames)
            snapped[bounds >= self.n_frames] = self.n_frames  # keep the short last cell
            a, b = snapped[:-1].copy(), snapped[1:].copy()
            inner = (b > a) & ~outside
            exact = (np.maximum(snapped, 0) * self.params.hop + self.params.nfft / 2) / self.fs \
                - hop_t / 2
            # keep the requested outer edges where the view extends beyond the recording
            keep = (u <= 0) | (u >= self.n_frames)
            edges = np.where(keep, edges, exact)
            outside |= ~inner
        else:
            empty = (b <= a) & ~outside
            if np.any(empty):
                mid = np.clip(np.rint((u[:-1] + u[1:]) / 2).astype(np.int64), 0,
                              self.n_frames - 1)
                a = np.where(empty, mid, a)
                b = np.where(empty, mid + 1, b)
        a[outside] = -1
        b[outside] = -1
        return edges, a, b, L

    def render(self, t0: float, t1: float, n_cols: int, reduce: str = "mean", *,
               freq_scale: str = "linear", n_rows: int | None = None,
               level: int | None = None, progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None,
               cached_only: bool = False) -> RenderResult:
        """Power image of ``[t0, t1]`` seconds in ``n_cols`` columns.

        Parameters
        ----------
        t0, t1 : float
            Time span in seconds (may extend beyond the recording: such columns are NaN).
        n_cols : int
            Number of columns, usually the view's width in pixels.
        reduce : {"mean", "max"}
        freq_scale : {"linear", "log", "mel"}
            Rows on a linear axis (the FFT bins), or ``n_rows`` rows spaced
            logarithmically or on the mel scale (each row the mean, or max, of
            the bins in it; a row narrower than a bin repeats that bin).
        level : int, optional
            Force a pyramid level (default: chosen from the zoom).
        cached_only : bool
            Use only tiles already in memory; return None when some are missing.
        """
        if reduce not in REDUCTIONS:
            raise InputError(f"reduce={reduce!r} must be one of {', '.join(REDUCTIONS)}")
        check_freq_scale(freq_scale)
        if not (isinstance(n_cols, (int, np.integer)) and n_cols >= 1):
            raise InputError(f"n_cols={n_cols!r} must be a whole number >= 1")
        if not t1 > t0:
            raise InputError(f"time span {t0}..{t1} s is empty; t1 must be after t0")
        edges, a, b, L = self.column_frames(t0, t1, int(n_cols), level)
        inside = a >= 0
        fpc = float(np.sum(b[inside] - a[inside])) / max(1, int(np.sum(inside)))
        image = np.full((self.n_freq, int(n_cols)), np.nan, np.float32)
        if np.any(inside):
            cols = np.flatnonzero(inside)
            got = self._aggregate(L, a[cols], b[cols], reduce, progress, cancelled, cached_only)
            if got is None:
                return None  # type: ignore[return-value]
            image[:, cols] = got
        freqs, fedges = self.freq_axis()
        if freq_scale != "linear":
            image, freqs, fedges = self._rescale_rows(image, freq_scale, n_rows or 512, reduce)
        return RenderResult(np.ascontiguousarray(image), edges, freqs, fedges, L, fpc, reduce)

    def freq_axis(self) -> tuple[np.ndarray, np.ndarray]:
        """Row centres and row edges (Hz) of a linear-frequency image."""
        f = self.frequencies
        df = self.fs / self.params.nfft
        return f, np.concatenate([f - df / 2, [f[-1] + df / 2]])

    def _aggregate(self, L: int, a: np.ndarray, b: np.ndarray, reduce: str,
                   progress, cancelled, cached_only: bool) -> np.ndarray | None:
        cell = 1 << L
        c_first = a // cell
        c_last = (b - 1) // cell
        c0, c1 = int(c_first.min()), int(c_last.max()) + 1
        tiles = range(c0 // TILE_CELLS, (c1 - 1) // TILE_CELLS + 1)
        if cached_only and not all(self.has_tile(L, i) for i in tiles):
            return None
        fl, ll = c_first - c0, c_last - c0
        if self._cells is not None:
            got = self._aggregate_on_device(L, tiles, c0, c1, fl, ll, reduce, progress,
                                            cancelled)
            if got is not None:
                return got
        sums = np.empty((self.n_freq, c1 - c0), np.float32)
        peak = L > 0 and reduce == "max"  # a view of means reads no maxima
        maxs = np.empty_like(sums) if peak else sums
        counts = np.empty(c1 - c0, np.int64)
        for n, i in enumerate(tiles):
            tile = self.get_tile(L, i, cancelled, progress=_share(progress, n, len(tiles)))
            s0 = i * TILE_CELLS
            lo, hi = max(c0, s0), min(c1, s0 + tile.counts.size)
            sums[:, lo - c0:hi - c0] = tile.sums[:, lo - s0:hi - s0]
            if peak:
                maxs[:, lo - c0:hi - c0] = tile.maxs[:, lo - s0:hi - s0]
            counts[lo - c0:hi - c0] = tile.counts[lo - s0:hi - s0]
            if progress is not None:
                progress((n + 1) / len(tiles))
        if reduce == "max":
            # reduceat spans cells [fl_j, fl_{j+1}); at level 0 a repeated frame
            # makes fl_j == fl_{j+1}, so take each column's last cell explicitly
            out = np.maximum.reduceat(maxs, fl, axis=1)
            np.maximum(out, maxs[:, ll], out=out)
            return out
        # columns hold whole cells: the mean is (sum of their sums) / (their frames)
        cum = np.zeros((self.n_freq, sums.shape[1] + 1), np.float64)
        np.cumsum(sums, axis=1, out=cum[:, 1:])
        ccount = np.concatenate([[0], np.cumsum(counts)])
        total = cum[:, ll + 1] - cum[:, fl]
        return (total / (ccount[ll + 1] - ccount[fl])).astype(np.float32)

    def _aggregate_on_device(self, L: int, tiles: range, c0: int, c1: int, fl: np.ndarray,
                             ll: np.ndarray, reduce: str, progress, cancelled
                             ) -> np.ndarray | None:
        """The columns reduced on the device from tiles whose cells are there: only the
        columns cross the bus.  None when a tile holds its cells on the host only."""
        which = 1 if (L > 0 and reduce == "max") else 0
        parts, counts = [], np.empty(c1 - c0, np.int64)
        for n, i in enumerate(tiles):
            tile = self.get_tile(L, i, cancelled, progress=_share(progress, n, len(tiles)))
            if tile.device is None:
                return None
            s0 = i * TILE_CELLS
            lo, hi = max(c0, s0), min(c1, s0 + tile.counts.size)
            parts.append(tile.device[which][:, lo - s0:hi - s0])
            counts[lo - c0:hi - c0] = tile.counts[lo - s0:hi - s0]
            if progress is not None:
                progress((n + 1) / len(tiles))
        return self._cells.columns(parts, counts, fl, ll, reduce)

    def _rescale_rows(self, image: np.ndarray, scale: str, n_rows: int, reduce: str):
        check_freq_scale(scale, two_sided=self.two_sided)
        f = self.frequencies
        df = self.fs / self.params.nfft
        fmax = f[-1] + df / 2
        if scale == "log":  # from the first bin above DC
            edges = np.geomspace(df / 2, fmax, n_rows + 1)
            centres = np.sqrt(edges[:-1] * edges[1:])
        else:
            m = np.linspace(hz_to_mel(0.0), hz_to_mel(fmax), n_rows + 1)
            edges = mel_to_hz(m)
            centres = mel_to_hz((m[:-1] + m[1:]) / 2)
        # bins whose centres fall in each row; rows with none repeat the nearest bin
        i0 = np.searchsorted(f, edges[:-1], side="left")
        i1 = np.searchsorted(f, edges[1:], side="left")
        nearest = np.clip(np.rint((centres - f[0]) / df).astype(np.int64), 0, f.size - 1)
        empty = i1 <= i0
        i0 = np.where(empty, nearest, i0)
        i1 = np.where(empty, nearest + 1, i1)
        if reduce == "max":
            out = np.stack([image[s:e].max(axis=0) for s, e in zip(i0, i1)])
        else:
            cum = np.concatenate([np.zeros((1, image.shape[1])), np.cumsum(image, axis=0,
                                                                          dtype=np.float64)])
            out = (cum[i1] - cum[i0]) / (i1 - i0)[:, None]
        return np.ascontiguousarray(out.astype(np.float32)), centres, edges

    def preview(self, t0: float, t1: float, n_cols: int, *,
                cancelled: Callable[[], bool] | None = None) -> RenderResult:
        """A fast, approximate image: one frame per column, computed at once.

        Used only to show something while the exact image is computed; it may
        miss short events and is marked ``preview=True``.  ``cancelled()`` is
        checked between columns (with a long pipeline each one reads a lot).
        """
        edges, a, b, _ = self.column_frames(t0, t1, int(n_cols), level=0)
        inside = np.flatnonzero(a >= 0)
        image = np.full((self.n_freq, int(n_cols)), np.nan, np.float32)
        hop, nfft = self.params.hop, self.params.nfft
        for j in inside:
            if cancelled is not None and cancelled():
                raise Cancelled()
            k = int((a[j] + b[j] - 1) // 2)
            x = self.read_processed(k * hop, k * hop + nfft)
            p = self.spectra(x)[0]
            image[:, j] = p * p if not self.params.is_power else p
        freqs, fedges = self.freq_axis()
        return RenderResult(image, edges, freqs, fedges, 0,
                            float(np.sum(b[inside] - a[inside])) / max(1, inside.size),
                            "mean", preview=True)

    def envelope(self, n_points: int, *, cancelled: Callable[[], bool] | None = None,
                 block: int = 1 << 20, progress: Callable[[float], None] | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Min/max envelope of the waveform in ``n_points`` buckets (real part for IQ).

        Returns bucket edge times (s), minima and maxima; every sample is
        looked at, in blocks (``progress(fraction)`` after each).
        """
        n = self.recording.n_samples
        n_points = max(1, min(int(n_points), n))
        bounds = np.round(np.linspace(0, n, n_points + 1)).astype(np.int64)
        mins = np.full(n_points, np.inf, np.float32)
        maxs = np.full(n_points, -np.inf, np.float32)
        for s0 in range(0, n, block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            s1 = min(s0 + block, n)
            x = self.recording.read(s0, s1, self.channel)[:, 0]
            if np.iscomplexobj(x):
                x = x.real
            j0 = int(np.searchsorted(bounds, s0, side="right")) - 1
            j1 = int(np.searchsorted(bounds, s1 - 1, side="right")) - 1
            starts = np.clip(bounds[j0:j1 + 1] - s0, 0, None)
            mins[j0:j1 + 1] = np.minimum(mins[j0:j1 + 1], np.minimum.reduceat(x, starts))
            maxs[j0:j1 + 1] = np.maximum(maxs[j0:j1 + 1], np.maximum.reduceat(x, starts))
            if progress is not None:
                progress(s1 / n)
        return bounds / self.fs, mins, maxs


def _share(progress: Callable[[float], None] | None, n: int, total: int
           ) -> Callable[[float], None] | None:
    """Progress of part ``n`` of ``total`` equal parts, reported as the whole's fraction."""
    if progress is None:
        return None
    return lambda fraction: progress((n + fraction) / total)


def render_progressive(engine: TileEngine, t0: float, t1: float, n_cols: int,
                       reduce: str = "mean", *, freq_scale: str = "linear",
                       n_rows: int | None = None,
                       partial: Callable[[DisplayImage], None] | None = None,
                       progress: Callable[[float], None] | None = None,
                       cancelled: Callable[[], bool] | None = None) -> DisplayImage:
    """The exact image of a view, with something to show first when it takes time.

    When the exact tiles are cached the image returns at once.  Otherwise
    ``partial`` first receives a coarser image built from cached tiles (every
    frame counted, fewer columns' worth of detail) or, when nothing is cached
    yet, a quick one-frame-per-column preview; then the exact image is
    computed, reporting progress and checking for cancellation between tiles.
    """
    kw = {"freq_scale": freq_scale, "n_rows": n_rows}
    exact = engine.render(t0, t1, n_cols, reduce, cached_only=True, **kw)
    if exact is not None:
        return DisplayImage.from_render(exact)
    if partial is not None:
        _, _, _, level = engine.column_frames(t0, t1, n_cols)
        coarse = None
        for L in range(level + 1, engine.max_level + 1):
            coarse = engine.render(t0, t1, n_cols, reduce, level=L, cached_only=True, **kw)
            if coarse is not None:
                break
        if coarse is None and freq_scale == "linear":
            coarse = engine.preview(t0, t1, min(n_cols, 1024), cancelled=cancelled)
        if coarse is not None:
            partial(DisplayImage.from_render(coarse))
    return DisplayImage.from_render(engine.render(t0, t1, n_cols, reduce, progress=progress,
                                                  cancelled=cancelled, **kw))
