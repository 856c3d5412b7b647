"""The tile engine: any zoom of any recording, without skipping a frame.

Power is kept in a level-of-detail pyramid of cells (sums and maxima of ``2**L``
frames) grouped in tiles of ``TILE_CELLS`` cells; a view reduces whole cells to its
columns.  Tiles are computed block by block and kept in memory, in a session's
spill and, optionally, in a disk cache across sessions.

A recording with gaps (a deployment: ``recording.segments()`` gives its contiguous
stretches) has its frames planned per stretch (:class:`~.columns.FrameGrid`): no frame,
and no filter's history, crosses a gap; a cell may hold frames of two stretches.

See docs/explanation/rooms/view.md.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable

import numpy as np

from .. import operators
from ..errors import Cancelled, InputError
from ..io import Recording
from ..spectral import FRAMES_PER_BLOCK, StftParams, kernel_dtype
from ..types import FreqScale, Reduction, Scaling, choices
from .cells import Scratch, block_cells, empty_tile, scatter
from .columns import FrameGrid, column_frames, level_for, reduce_columns
from .envelope import waveform_envelope
from .images import DisplayImage, RenderResult
from .scales import check_freq_scale, rescale_rows
from .store import TileStore
from .tile_cache import DEFAULT_CACHE_BYTES, Tile, TileCache
from .tile_stores import DEFAULT_SPILL_BYTES, DISK_MIN_LEVEL, EngineStores, recording_identity

__all__ = ["DEFAULT_CACHE_BYTES", "REDUCTIONS", "TILE_CELLS", "Tile", "TileCache", "TileEngine",
           "render_progressive"]

TILE_CELLS = 256
REDUCTIONS = choices(Reduction)
#: a tile computed from the recording also yields the cells of this many finer
#: levels from the same frames, down to SPILL_MIN_LEVEL: building the whole file's
#: levels 4 and up stores its levels 2 and 3 too, which every view of 50-200 s
#: reads (a view's cost is then bounded by a span of 50 s, 9400 frames at hop 256)
BYPRODUCT_DEPTH = 2
#: the finest level kept as a by-product (in the session's spill)
SPILL_MIN_LEVEL = 2
#: a tile computed from the recording is built from its descendants this many
#: levels down, which are cached too: zooming in from a fresh view is then fast
DERIVED_LEVELS = 3
#: tiles are not derived from tiles below this level: those hold fewer frames than one
#: kernel block (FRAMES_PER_BLOCK / TILE_CELLS frames per cell), so building a tile from
#: many of them costs more (one read and one kernel call each) than it saves on zoom-in
FINEST_DERIVED_LEVEL = max(0, (FRAMES_PER_BLOCK // TILE_CELLS).bit_length() - 1)


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
        STFT (e.g. :meth:`~specscope.compute.pipeline.Pipeline.block_function`);
        ``pipeline(x, fs, start)`` when its ``placed`` is true (it edits a region: the
        recording's sample at the block's start is given).
        It must be sample-wise or carry its own history, unless
        ``pipeline_context`` says how much it needs.
    pipeline_context : int or (int, int), optional
        Samples read before (and after) each block, run through ``pipeline``
        with it and cut off again, for steps with history (filters); default
        ``pipeline.context`` when it has one, else 0.
    cache_bytes : int
        Bound of the in-memory tile cache.
    disk_cache : str, Path or None
        Folder for coarse tiles kept across sessions; None disables it.  With
        it, tiles the memory cache drops are spilled to a session folder inside
        it (``spill_bytes`` at most, removed when the engine goes), so a tile
        once computed is read back rather than computed again.
    spill_bytes : int
        Bound of that spill (0: none).
    backend : str
        Where the ``stft_power`` operator runs: ``"auto"``, ``"numpy"`` or ``"cupy"``.
        On a GPU (``"cupy"``, or ``"auto"`` when a device answers and the
        preference allows it) tiles are computed on the device and only their
        cells come back (:meth:`use_device`).
    """

    def __init__(self, recording: Recording, *, nfft: int = 1024, hop: int = 256,
                 window: str | tuple = "hann", scaling: Scaling = "psd", channel: int = 0,
                 pipeline: Callable[[np.ndarray, float], np.ndarray] | None = None,
                 pipeline_context: int | tuple[int, int] | None = None,
                 cache_bytes: int = DEFAULT_CACHE_BYTES,
                 disk_cache: str | os.PathLike[str] | None = None,
                 spill_bytes: int = DEFAULT_SPILL_BYTES,
                 backend: str = "auto") -> None:
        self.recording = recording
        self.backend = backend
        self.params = StftParams(nfft, hop, window, scaling)
        recording.channel_list(channel)
        self.params.check_length(recording.n_samples, recording.path.name)
        self.channel = int(channel)
        self.pipeline = pipeline
        #: the pipeline takes the recording's sample at a block's start (``pipeline(x, fs,
        #: start)``): it holds edits of a region
        self.placed = bool(getattr(pipeline, "placed", None))
        ctx = getattr(pipeline, "context", 0) if pipeline_context is None else pipeline_context
        before, after = (ctx, 0) if isinstance(ctx, (int, np.integer)) else ctx
        if before < 0 or after < 0:
            raise InputError(f"pipeline_context={pipeline_context!r} must be >= 0 samples")
        self.pipeline_context = (int(before), int(after))
        self.fs = float(recording.sample_rate)
        #: the frames, planned per contiguous segment of the recording
        self.grid = FrameGrid(segments_of(recording), self.params.nfft, self.params.hop)
        self.n_frames = self.grid.n_frames
        if self.n_frames < 1:
            raise InputError(f"nfft={self.params.nfft} is larger than every contiguous "
                             f"stretch of {recording.path.name}; choose a smaller nfft")
        self.two_sided = bool(recording.is_complex)
        f = self.params.frequencies(self.fs, self.two_sided)
        self.frequencies = f + (recording.center_frequency or 0.0)
        self.n_freq = f.size
        self.max_level = max(0, math.ceil(math.log2(max(self.n_frames, 1) / TILE_CELLS)))
        fingerprint = getattr(recording, "fingerprint", None)
        fingerprint = fingerprint() if callable(fingerprint) else None
        if fingerprint is not None:  # the files, and where the gaps cut the frames
            fingerprint += ":" + ",".join(f"{a}-{b}" for a, b in segments_of(recording))
        persist = disk_cache and pipeline is None and (
            fingerprint is not None or recording.path.is_file())
        identity = recording_identity(
            recording.path, fingerprint=fingerprint, nfft=self.params.nfft,
            hop=self.params.hop, window=str(self.params.window), scaling=self.params.scaling,
            channel=self.channel, two_sided=self.two_sided) if persist else None
        self._stores = EngineStores(disk_cache, identity, self.n_freq, TILE_CELLS, spill_bytes)
        # the cache holds the stores, not the engine: an engine nobody holds goes at once
        self.cache = TileCache(cache_bytes, on_evict=self._stores.spill_tile)
        self.tiles_computed = 0
        #: frames transformed so far (every tile computed from the recording adds its own)
        self.frames_computed = 0
        self._local = threading.local()  # per thread: the block buffer of the spectra
        self._scratch = Scratch()  # per thread: the rows of a block's cells
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
        if cp is None or self.grid.segmented:  # segments: frames planned on the host
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
            if self.grid.segmented:
                return None  # the device streams one run of samples: frames per segment here
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
        return self.grid.centre(np.asarray(k, dtype=np.float64)) / self.fs

    def frame_position(self, t: np.ndarray | float) -> np.ndarray:
        """Continuous frame index whose centre is at time ``t``."""
        return self.grid.position(np.asarray(t, dtype=np.float64) * self.fs)

    def level_for(self, frames_per_column: float) -> int:
        """The coarsest level whose cells are at most half a column."""
        return level_for(frames_per_column, self.max_level)

    # -- tiles ---------------------------------------------------------------
    def has_tile(self, level: int, index: int) -> bool:
        """Whether tile ``index`` of ``level`` is in the memory cache."""
        return self.cache.peek((level, index))

    @property
    def spill(self) -> TileStore | None:
        """The session's spill of tiles the memory cache dropped (None without one)."""
        return self._stores.spill

    def is_available(self, level: int, index: int) -> bool:
        """Whether the tile is had without transforming a frame: in memory, in the disk
        cache or in the session's spill."""
        return self.cache.peek((level, index)) or self._stores.has(level, index)

    def close(self) -> None:
        """Drop the cached tiles and the session's spill (the disk cache stays: the tiles
        still queued for it are written first)."""
        self.cache = TileCache(self.cache.max_bytes, on_evict=self._stores.spill_tile)
        self._stores.close()

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
        tile = self._stores.get(level, index)
        stored = tile is not None
        if tile is None and level > 0:
            kids = [(level - 1, 2 * index + k) for k in (0, 1)
                    if self._tile_exists(level - 1, 2 * index + k)]
            if all(self.is_available(*k) for k in kids) or derive > 0:
                for n, k in enumerate(kids):  # cached, or computed now, one level down
                    self.get_tile(*k, cancelled=cancelled, derive=max(derive - 1, 0),
                                  progress=_share(progress, n, len(kids)))
                tile = self._combine(level, index, cancelled)
        if tile is None:
            tile = self._compute(level, index, cancelled, progress)
        if not stored:
            self._stores.save(tile)
        self.cache.put(key, tile)
        return tile

    def _tile_exists(self, level: int, index: int) -> bool:
        return index * (TILE_CELLS << level) < self.n_frames

    def _combine(self, level: int, index: int,
                 cancelled: Callable[[], bool] | None = None) -> Tile:
        parts = [self.cache.get((level - 1, 2 * index + k))
                 or self._stores.get(level - 1, 2 * index + k) for k in (0, 1)
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

    def byproduct_levels(self, level: int) -> list[int]:
        """The finer levels whose cells a tile of ``level`` computed from the recording
        also yields (from the same frames, kept cached at the cold end and stored).

        Down to :data:`BYPRODUCT_DEPTH` levels, not below :data:`SPILL_MIN_LEVEL`
        (the whole hour's level 1 would be 1.4 GB, and writing a block's cells to
        more levels would slow the view that asked) where a spill keeps them, not
        below :data:`DISK_MIN_LEVEL` with the disk cache only, none without either
        (the memory cache alone would drop them), on the device or for cells
        longer than a block.
        """
        if (1 << level) > FRAMES_PER_BLOCK or self._cells is not None:
            return []
        floor = SPILL_MIN_LEVEL if self._stores.spill is not None else (
            DISK_MIN_LEVEL if self._stores.disk is not None else level)  # nowhere to keep them
        return list(range(max(floor, level - BYPRODUCT_DEPTH), level))

    def _descendants(self, level: int, index: int, k: int) -> range:
        """Indices of the tiles of level ``k <= level`` covering tile ``(level, index)``."""
        first = index << (level - k)
        last = min(first + (1 << (level - k)), -(-self.n_frames // (TILE_CELLS << k)))
        return range(first, last)

    def _empty_tile(self, level: int, index: int, accumulate: bool) -> Tile:
        return empty_tile(level, index, self.n_frames, self.n_freq, TILE_CELLS, accumulate)

    def _compute(self, level: int, index: int, cancelled: Callable[[], bool] | None,
                 progress: Callable[[float], None] | None = None) -> Tile:
        cell = 1 << level
        f0 = index * TILE_CELLS * cell
        f1 = min(f0 + TILE_CELLS * cell, self.n_frames)
        if f1 <= f0:
            raise InputError(f"tile {index} of level {level} lies beyond the recording")
        if self._device() is not None:
            return self._compute_on_device(level, index, f0, f1, cancelled, progress)
        long_cells = cell > FRAMES_PER_BLOCK
        extra = [k for k in self.byproduct_levels(level)
                 if not all(self.is_available(k, i) for i in self._descendants(level, index, k))]
        tiles = {k: [self._empty_tile(k, i, long_cells) for i in self._descendants(level, index, k)]
                 for k in [*extra, level]}
        self._compute_frames(f0, f1, tiles, level, cancelled, progress)
        self.tiles_computed += 1
        for k in extra:
            for tile in tiles[k]:
                if not self.is_available(tile.level, tile.index):
                    self._stores.save(tile)
                    self.cache.put((tile.level, tile.index), tile, cold=True)
        return tiles[level][0]

    def compute_run(self, level: int, indices: range,
                    cancelled: Callable[[], bool] | None = None,
                    progress: Callable[[float], None] | None = None) -> list[Tile]:
        """Consecutive tiles of a fine level computed together and cached.

        Below :data:`FINEST_DERIVED_LEVEL` a tile holds fewer frames than one
        kernel block; a run of them is transformed in whole blocks (one read and
        one kernel call per block, not per tile), each block's cells scattered to
        the tiles holding them.  Numbers equal :meth:`get_tile`'s.
        """
        if not indices:
            return []
        if (1 << level) > FRAMES_PER_BLOCK or self._device() is not None:
            return [self.get_tile(level, i, cancelled) for i in indices]
        tiles = [self._empty_tile(level, i, False) for i in indices]
        f0 = indices[0] * (TILE_CELLS << level)
        f1 = min((indices[-1] + 1) * (TILE_CELLS << level), self.n_frames)
        self._compute_frames(f0, f1, {level: tiles}, level, cancelled, progress)
        self.tiles_computed += len(tiles)
        for tile in tiles:
            self._stores.save(tile)
            self.cache.put((level, tile.index), tile)
        return tiles

    def _compute_frames(self, f0: int, f1: int, tiles: dict[int, list[Tile]], top: int,
                        cancelled: Callable[[], bool] | None,
                        progress: Callable[[float], None] | None) -> None:
        """Transform frames ``f0 .. f1`` block by block into the cells of ``tiles``
        (level -> consecutive tiles covering those frames, ``top`` the coarsest)."""
        cell = 1 << top
        block = FRAMES_PER_BLOCK  # a multiple of a cell, or a cell a multiple of it
        fine = min(tiles)
        for k0 in range(f0, f1, block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            k1 = min(k0 + block, f1)
            # (frames, freq) into this thread's block buffer: cells reduce along rows
            p = self.block_spectra(k0, k1)
            if not self.params.is_power:
                np.square(p, out=p)
            if cell > block:  # the block lies in one cell
                tile = tiles[top][0]
                c = (k0 - f0) // cell
                tile.sums[:, c] += p.sum(axis=0)
                np.maximum(tile.maxs[:, c], p.max(axis=0), out=tile.maxs[:, c])
            else:  # blocks start on a cell boundary of every level computed
                for k, s_rows, m_rows in block_cells(p, fine, top, self._scratch):
                    if k in tiles:
                        scatter(tiles[k], k0 >> k, s_rows, m_rows, TILE_CELLS)
            if progress is not None:
                progress((k1 - f0) / (f1 - f0))
        self.frames_computed += f1 - f0

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

    def block_spectra(self, k0: int, k1: int) -> np.ndarray:
        """Spectra of frames ``k0 .. k1`` into this thread's block buffer, each segment's
        frames from its own samples (none crosses a gap)."""
        hop, nfft = self.params.hop, self.params.nfft
        if not self.grid.segmented:
            x = self.read_processed(k0 * hop, (k1 - 1) * hop + nfft)
            return self.spectra(x, out=self.block_buffer(k1 - k0))
        buf = self.block_buffer(k1 - k0)
        for a, b, s0, s1 in self.grid.pieces(k0, k1):
            first = int(self.grid.frame_start(a))
            x = self.read_processed(first, first + (b - a - 1) * hop + nfft, (s0, s1))
            rows = buf[a - k0:b - k0]
            got = self.spectra(x, out=rows)
            if got is not rows:
                rows[...] = got
        return buf

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

    def read_processed(self, a: int, b: int, within: tuple[int, int] | None = None
                       ) -> np.ndarray:
        """Samples ``a:b`` of the channel through the pipeline, with its context taken
        from ``within`` only (a segment's samples: no filter runs across a gap)."""
        if self.pipeline is None:
            return self.recording.read(a, b, self.channel)[:, 0]
        before, after = self.pipeline_context
        lo, hi = within if within is not None else (0, self.recording.n_samples)
        a0, b1 = max(lo, a - before), min(hi, b + after)
        x = self.recording.read(a0, b1, self.channel)[:, 0]
        y = np.asarray(self.pipeline(x, self.fs, a0) if self.placed else
                       self.pipeline(x, self.fs))
        return y[a - a0:a - a0 + (b - a)]

    # -- rendering -------------------------------------------------------------
    def column_frames(self, t0: float, t1: float, n_cols: int, level: int | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Columns of a view: their edges, their frame ranges ``[a, b)`` and the level
        (:func:`specscope.compute.view.columns.column_frames` on this recording's frames)."""
        return column_frames(t0, t1, n_cols, level, fs=self.fs, hop=self.params.hop,
                             nfft=self.params.nfft, n_frames=self.n_frames,
                             max_level=self.max_level, grid=self.grid)

    def render(self, t0: float, t1: float, n_cols: int, reduce: Reduction = "mean", *,
               freq_scale: FreqScale = "linear", n_rows: int | None = None,
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
            Use only tiles computed already (in memory, the disk cache or the
            spill); return None when some are missing.
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
        if cached_only and not all(self.is_available(L, i) for i in tiles):
            return None
        fl, ll = c_first - c0, c_last - c0
        if self._cells is not None:
            got = self._aggregate_on_device(L, tiles, c0, c1, fl, ll, reduce, progress,
                                            cancelled)
            if got is not None:
                return got
        fresh: dict[int, Tile] = {}  # tiles computed here (the cache may drop them)
        if L < FINEST_DERIVED_LEVEL and self._cells is None:
            progress = self._compute_missing(L, tiles, fresh, cancelled, progress)
        sums = np.empty((self.n_freq, c1 - c0), np.float32)
        peak = L > 0 and reduce == "max"  # a view of means reads no maxima
        maxs = np.empty_like(sums) if peak else sums
        counts = np.empty(c1 - c0, np.int64)
        for n, i in enumerate(tiles):
            tile = fresh.get(i) or self.get_tile(L, i, cancelled,
                                                 progress=_share(progress, n, len(tiles)))
            s0 = i * TILE_CELLS
            lo, hi = max(c0, s0), min(c1, s0 + tile.counts.size)
            sums[:, lo - c0:hi - c0] = tile.sums[:, lo - s0:hi - s0]
            if peak:
                maxs[:, lo - c0:hi - c0] = tile.maxs[:, lo - s0:hi - s0]
            counts[lo - c0:hi - c0] = tile.counts[lo - s0:hi - s0]
            if progress is not None:
                progress((n + 1) / len(tiles))
        return reduce_columns(sums, maxs, counts, fl, ll, reduce)

    def _compute_missing(self, level: int, tiles: range, fresh: dict[int, Tile], cancelled,
                         progress):
        """Compute the view's missing tiles of a fine level in runs of whole blocks
        (:meth:`compute_run`) into ``fresh``; returns the progress callback for what
        follows."""
        missing = [i for i in tiles if not self.is_available(level, i)]
        if not missing:
            return progress
        runs, start = [], missing[0]
        for a, b in zip(missing, [*missing[1:], None]):
            if b != a + 1:
                runs.append(range(start, a + 1))
                start = b
        total = len(missing)
        done = 0
        for run in runs:
            part = None if progress is None else (
                lambda f, d=done, n=len(run): progress(0.9 * (d + f * n) / total))
            fresh.update((t.index, t) for t in self.compute_run(level, run, cancelled, part))
            done += len(run)
        return None if progress is None else (lambda f: progress(0.9 + 0.1 * f))

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
        return rescale_rows(image, self.frequencies, self.fs / self.params.nfft, scale, n_rows,
                            reduce)

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
        nfft = self.params.nfft
        # each column's frame read on its own, all transformed in one kernel call:
        # the frames laid end to end and framed with a hop of nfft
        frames = []
        for j in inside:
            if cancelled is not None and cancelled():
                raise Cancelled()
            k = int((a[j] + b[j] - 1) // 2)
            first = int(self.grid.frame_start(k))
            frames.append(self.read_processed(first, first + nfft, self.grid.segment_span(k)))
        if frames:
            params = {**self.params.operator_params(), "hop": nfft}
            p = operators.call("stft_power", np.concatenate(frames), backend=self.backend,
                               fs=self.fs, two_sided=self.two_sided, layout="frames", **params)
            p = np.asarray(p, np.float32)
            image[:, inside] = (p * p if not self.params.is_power else p).T
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
        return waveform_envelope(self.recording, self.channel, n_points, cancelled=cancelled,
                                 block=block, progress=progress)


def segments_of(recording: Recording) -> list[tuple[int, int]]:
    """The contiguous stretches of a recording as sample ranges: its ``segments()`` where
    it has them (a deployment's, split at its gaps), else the whole recording."""
    fn = getattr(recording, "segments", None)
    segs = list(fn()) if callable(fn) else []
    return segs or [(0, int(recording.n_samples))]


def _share(progress: Callable[[float], None] | None, n: int, total: int
           ) -> Callable[[float], None] | None:
    """Progress of part ``n`` of ``total`` equal parts, reported as the whole's fraction."""
    if progress is None:
        return None
    return lambda fraction: progress((n + fraction) / total)


def render_progressive(engine: TileEngine, t0: float, t1: float, n_cols: int,
                       reduce: Reduction = "mean", *, freq_scale: FreqScale = "linear",
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

    Parameters
    ----------
    engine : TileEngine
        The engine of the channel shown.
    t0, t1 : float
        The view's span in seconds.
    n_cols : int
        Columns of the image.
    reduce : {"mean", "max"}
        How a column aggregates its frames.
    freq_scale : {"linear", "log", "mel"}
        The frequency axis.
    n_rows : int, optional
        Rows of a log or mel image (512 by default).
    partial : callable, optional
        ``partial(image)`` receives the image to show first.
    progress : callable, optional
        ``progress(fraction)`` while the exact image is computed.
    cancelled : callable, optional
        ``cancelled() -> bool``, checked between tiles.

    Returns
    -------
    DisplayImage
        The exact image, in dB.

    Raises
    ------
    InputError
        A bad span, column count, reduction or frequency scale.
    Cancelled
        ``cancelled()`` returned True.
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
