"""The tile engine's device path, with numpy standing in for CuPy.

On a GPU, :meth:`TileEngine.use_device` streams each tile's samples to the
device (:class:`DeviceStream`: pinned buffers, a copy stream, events) and
reduces them there to the cells' sums and maxima (:func:`stft_cells`), so only
the cells come back.  Here a stand-in module gives numpy arrays and no-op streams
and events: the same lines run (block planning, the double-buffered loop, the
cell reduction written with array operations, the transfer accounting) and must
give the CPU path's tiles and images.  ``tests/compute/ops/test_gpu.py`` checks the CUDA
kernels themselves on a device.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from specscope.compute.io import ArrayRecording
from specscope.compute.ops import _cuda
from specscope.compute.spectral import StftParams
from specscope.compute.view import TILE_CELLS, TileEngine

FS = 8000


class _Stream:
    def __init__(self, non_blocking: bool = False) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def wait_event(self, event) -> None:
        assert event.recorded, "a stream waits on an event that was never recorded"

    def synchronize(self) -> None:
        pass


class _Event:
    def __init__(self) -> None:
        self.recorded = False

    def record(self, stream=None) -> None:
        self.recorded = True

    def synchronize(self) -> None:
        pass


def stand_in() -> types.ModuleType:
    """numpy with CuPy's stream, event and pinned-memory calls (and no kernels)."""
    cp = types.ModuleType("numpy_standing_in_for_cupy")
    for name in ("empty", "zeros", "full", "asarray", "stack", "concatenate", "multiply",
                 "roll", "maximum", "minimum", "cumsum", "ascontiguousarray", "fft", "float32",
                 "float64", "complex64"):
        setattr(cp, name, getattr(np, name))
    cp.cuda = types.SimpleNamespace(Stream=_Stream, Event=_Event,
                                    alloc_pinned_memory=bytearray,
                                    get_elapsed_time=lambda a, b: 0.0)
    return cp


def _signal(n: int, complex_: bool = False) -> np.ndarray:
    rng = np.random.default_rng(3)
    t = np.arange(n) / FS
    x = 0.01 * rng.standard_normal(n) + 0.1 * np.sin(2 * np.pi * 1000 * t)
    x[n // 3:n // 3 + 16] += 1.0  # a click: the maxima must keep it
    if complex_:
        x = x + 1j * (0.01 * rng.standard_normal(n) + 0.1 * np.cos(2 * np.pi * 1000 * t))
        return x.astype(np.complex64)
    return x.astype(np.float32)


@pytest.mark.parametrize(("scaling", "complex_", "nfft"), [
    ("psd", False, 256), ("spectrum", False, 255), ("magnitude", False, 256),
    ("psd", True, 256)])
@pytest.mark.parametrize("level", [0, 1, 3, 5])
def test_device_tiles_equal_the_cpu_tiles(scaling, complex_, nfft, level) -> None:
    x = _signal(FS * 40 + 77, complex_)
    kw = {"nfft": nfft, "hop": 64, "scaling": scaling, "backend": "numpy"}
    cpu = TileEngine(ArrayRecording(x, FS), **kw)
    dev = TileEngine(ArrayRecording(x, FS), **kw)
    dev.use_device(stand_in())
    n_tiles = -(-cpu.n_frames // (TILE_CELLS << level))
    for i in {0, n_tiles - 1}:  # a whole tile and the short last one
        a, b = cpu.get_tile(level, i, derive=0), dev.get_tile(level, i)
        np.testing.assert_array_equal(a.counts, b.counts)
        peak = float(a.maxs.max())
        np.testing.assert_allclose(b.sums, a.sums, rtol=1e-4, atol=1e-6 * peak * (1 << level))
        np.testing.assert_allclose(b.maxs, a.maxs, rtol=1e-4, atol=1e-6 * peak)
        assert (b.maxs is b.sums) == (level == 0)


@pytest.mark.parametrize("reduce", ["mean", "max"])
def test_device_render_equals_the_cpu_render(reduce) -> None:
    x = _signal(FS * 120)
    cpu = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    dev = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    dev.use_device(stand_in())
    for t0, t1, cols in [(0.0, 120.0, 800), (10.0, 17.0, 300), (39.9, 40.3, 640)]:
        a = cpu.render(t0, t1, cols, reduce).image
        b = dev.render(t0, t1, cols, reduce).image
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        ok = ~np.isnan(a)
        np.testing.assert_allclose(b[ok], a[ok], rtol=1e-4, atol=1e-7 * float(a[ok].max()))


def test_only_display_columns_cross_the_bus() -> None:
    x = _signal(FS * 300)
    eng = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    eng.use_device(stand_in())
    res = eng.render(0.0, 300.0, 400)
    stats = eng.device_stats
    level = res.level
    assert level >= 4
    n_freq, cell = 129, 1 << level
    n_cells = -(-eng.n_frames // cell)
    columns = int(np.isfinite(res.image[0]).sum())
    assert columns >= 399
    # a view of means brings back its columns, float32, and no cell
    assert stats.d2h_bytes == 4 * n_freq * columns
    # sent: every sample once, plus the nfft - hop samples blocks share
    assert 4 * x.size <= stats.h2d_bytes <= 4 * x.size * 1.01
    assert eng.tiles_computed == -(-n_cells // TILE_CELLS)  # no finer tiles computed
    tile = eng.get_tile(level, 0)
    assert not tile.sums_on_host and not tile.maxs_on_host
    # a peak-hold view brings its columns' maxima, the cells' maxima stay on the device
    peak = eng.render(0.0, 300.0, 400, "max").image
    assert stats.d2h_bytes == 2 * 4 * n_freq * columns
    assert not tile.maxs_on_host
    cpu = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    np.testing.assert_allclose(peak, cpu.render(0.0, 300.0, 400, "max").image, rtol=1e-4)
    # against the cells of the level (what came back before): a share of them
    assert stats.d2h_bytes < 0.4 * 2 * 4 * n_freq * n_cells
    assert eng.cache.nbytes == sum(  # the cache counts the cells wherever they are
        2 * 4 * n_freq * t.counts.size + t.counts.nbytes
        for t in (eng.get_tile(level, i) for i in range(-(-n_cells // TILE_CELLS))))
    # a zoomed view of cached tiles: its own columns again, nothing else
    before = stats.d2h_bytes
    part = eng.render(100.0, 160.0, 300, "max")
    assert stats.d2h_bytes - before == 4 * n_freq * 300
    np.testing.assert_allclose(part.image, cpu.render(100.0, 160.0, 300, "max").image,
                               rtol=1e-4)
    # read on the host (the disk cache, a caller), a tile's cells come over once each
    before = stats.d2h_bytes
    _, maxs = tile.sums, tile.maxs  # both read: each comes over once
    assert stats.d2h_bytes - before == 2 * 4 * n_freq * tile.counts.size
    np.testing.assert_allclose(maxs, cpu.get_tile(level, 0).maxs, rtol=1e-4)
    _ = tile.sums, tile.maxs
    assert stats.d2h_bytes - before == 2 * 4 * n_freq * tile.counts.size


def test_device_parents_are_made_on_the_device() -> None:
    x = _signal(FS * 60)
    eng = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    eng.use_device(stand_in())
    cpu = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    level = 3
    kids = [eng.get_tile(level - 1, i) for i in (0, 1)]
    before = eng.device_stats.d2h_bytes
    parent = eng.get_tile(level, 0)  # both children cached: combined, not computed
    assert eng.device_stats.d2h_bytes == before and parent.device is not None
    assert eng.tiles_computed == 2
    ref = cpu.get_tile(level, 0, derive=0)
    np.testing.assert_allclose(parent.sums, ref.sums, rtol=1e-4)
    np.testing.assert_allclose(parent.maxs, ref.maxs, rtol=1e-4)
    assert all(k.device is not None for k in kids)


def test_blocks_keep_cells_whole_and_reuse_two_buffers() -> None:
    params = StftParams(256, 64)
    cells = _cuda.CellStream(stand_in(), params, FS, budget=1 << 20)
    x = _signal(FS * 30)
    reads = []

    def read(a, b):
        reads.append((a, b))
        return x[a:b]

    n_frames = params.n_frames(x.size)
    sums, maxs = cells.cells(read, n_frames, 16)
    assert len(reads) > 2  # several blocks through the two buffers
    assert all((a // 64) % 16 == 0 for a, _ in reads)  # each block starts on a cell
    ref = TileEngine(ArrayRecording(x, FS), nfft=256, hop=64, backend="numpy")
    whole = np.concatenate([ref.get_tile(4, i, derive=0).sums
                            for i in range(-(-n_frames // (16 * TILE_CELLS)))], axis=1)
    np.testing.assert_allclose(sums, whole, rtol=1e-4, atol=1e-9)
    assert maxs.shape == sums.shape and np.all(maxs <= sums + 1e-12)
