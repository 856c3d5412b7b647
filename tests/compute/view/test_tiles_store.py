"""Tiles kept on disk (the disk cache and the session's spill), the cache's budget, the
finer levels computed with a tile, and how much a jump to a part never seen transforms."""

import numpy as np
import pytest
import soundfile
from specscope.compute import open_recording
from specscope.compute.io import ArrayRecording
from specscope.compute.view import TILE_CELLS, Tile, TileCache, TileEngine
from specscope.compute.view.store import TileStore
from specscope.compute.view.tiles import FRAMES_PER_BLOCK

FS = 8000
NFFT, HOP = 256, 64
N_FREQ = NFFT // 2 + 1


@pytest.fixture(scope="module")
def signal():
    rng = np.random.default_rng(5)
    n = FS * 120
    t = np.arange(n) / FS
    x = 0.01 * rng.standard_normal(n) + 0.05 * np.sin(2 * np.pi * 440 * t)
    x[700_000:700_020] += 1.0
    return x.astype(np.float32)


@pytest.fixture()
def wav(signal, tmp_path):
    path = tmp_path / "x.wav"
    soundfile.write(str(path), signal, FS, subtype="FLOAT")
    with open_recording(path) as rec:
        yield rec


def _tile(level, index, n_cells=TILE_CELLS, seed=0):
    rng = np.random.default_rng(seed)
    sums = rng.random((N_FREQ, n_cells), dtype=np.float32)
    maxs = sums if level == 0 else rng.random((N_FREQ, n_cells), dtype=np.float32)
    counts = np.full(n_cells, 1 << level, np.int64)
    counts[-1] = 1
    return Tile(level, index, sums, maxs, counts)


def test_store_reads_back_what_it_wrote_and_reopens(tmp_path):
    store = TileStore(tmp_path, N_FREQ, TILE_CELLS)
    tiles = [_tile(0, 3, seed=1), _tile(2, 0, seed=2), _tile(2, 5, n_cells=17, seed=3)]
    for t in tiles:
        assert store.put(t.level, t.index, t.sums, t.maxs, t.counts)
    assert not store.has(2, 1) and store.get(2, 1) is None
    store.close()
    again = TileStore(tmp_path, N_FREQ, TILE_CELLS)  # a new session finds them
    for t in tiles:
        assert again.has(t.level, t.index)
        sums, maxs, counts = again.get(t.level, t.index)
        np.testing.assert_array_equal(sums, t.sums)
        np.testing.assert_array_equal(maxs, t.maxs)
        np.testing.assert_array_equal(counts, t.counts)
    again.close()


def test_a_damaged_slot_reads_as_missing(tmp_path):
    store = TileStore(tmp_path, N_FREQ, TILE_CELLS)
    t = _tile(1, 2)
    store.put(1, 2, t.sums, t.maxs, t.counts)
    store.close()
    path = tmp_path / "L01.tiles"
    with open(path, "r+b") as f:  # the header of slot 2 overwritten
        f.seek(2 * store.slot_bytes(1))
        f.write(b"\0" * 16)
    again = TileStore(tmp_path, N_FREQ, TILE_CELLS)
    assert not again.has(1, 2) and again.get(1, 2) is None
    again.close()


def test_spill_stays_within_its_budget_and_goes_with_the_session(tmp_path):
    one = N_FREQ * TILE_CELLS * 4 * 2
    spill = TileStore(tmp_path, N_FREQ, TILE_CELLS, max_bytes=3 * one, temporary=True)
    folder = spill.folder
    assert folder.parent == tmp_path and folder.is_dir()
    written = [spill.put(1, i, *(lambda t: (t.sums, t.maxs, t.counts))(_tile(1, i, seed=i)))
               for i in range(5)]
    assert written == [True, True, True, False, False]
    assert spill.nbytes <= 3 * one
    assert spill.has(1, 2) and not spill.has(1, 3)
    spill.close()
    assert not folder.exists()


def test_cold_tiles_never_push_out_the_ones_a_view_used():
    gone = []
    one = _tile(1, 0).nbytes
    cache = TileCache(2 * one, on_evict=gone.append)
    cache.put((1, 0), _tile(1, 0))
    cache.put((1, 1), _tile(1, 1))
    cache.put((1, 2), _tile(1, 2), cold=True)  # does not fit: dropped at once
    assert [(t.level, t.index) for t in gone] == [(1, 2)]
    assert cache.peek((1, 0)) and cache.peek((1, 1)) and cache.nbytes <= 2 * one
    cache.put((1, 3), _tile(1, 3))  # a hot one drops the least recently used
    assert [(t.level, t.index) for t in gone] == [(1, 2), (1, 0)]


def test_spilled_tiles_come_back_equal_without_computing(wav, tmp_path):
    one = N_FREQ * TILE_CELLS * 4 * 2
    eng = TileEngine(wav, nfft=NFFT, hop=HOP, cache_bytes=3 * one, disk_cache=tmp_path / "c")
    plain = TileEngine(wav, nfft=NFFT, hop=HOP)  # memory only, large cache
    views = [(t0, t0 + 20.0) for t0 in (0.0, 30.0, 60.0, 90.0)]
    first = [eng.render(a, b, 400) for a, b in views]
    assert eng.cache.evicted > 0 and eng.spill.nbytes > 0
    assert eng.cache.nbytes <= 3 * one
    n = eng.tiles_computed
    for (a, b), before in zip(views, first):
        again = eng.render(a, b, 400, cached_only=True)  # every tile memory or spill
        assert again is not None
        np.testing.assert_array_equal(again.image, before.image)
        np.testing.assert_array_equal(again.image, plain.render(a, b, 400).image)
        np.testing.assert_array_equal(eng.render(a, b, 400, "max").image,
                                      plain.render(a, b, 400, "max").image)
    assert eng.tiles_computed == n
    folder = eng.spill.folder
    eng.close()
    assert not folder.exists()


def test_finer_levels_computed_with_a_tile_equal_their_own(wav, tmp_path):
    eng = TileEngine(wav, nfft=NFFT, hop=HOP, disk_cache=tmp_path / "c")
    direct = TileEngine(wav, nfft=NFFT, hop=HOP)
    assert eng.byproduct_levels(4) == [2, 3] and direct.byproduct_levels(4) == []
    eng.get_tile(4, 1, derive=0)
    assert eng.tiles_computed == 1
    for level, n_tiles in ((3, 2), (2, 4)):
        for i in range(2 * n_tiles // 2, 2 * n_tiles // 2 + n_tiles):
            assert eng.is_available(level, i)
            got = eng.get_tile(level, i)
            ref = direct.get_tile(level, i, derive=0)
            np.testing.assert_allclose(got.sums, ref.sums, rtol=1e-5)
            np.testing.assert_array_equal(got.maxs, ref.maxs)
            np.testing.assert_array_equal(got.counts, ref.counts)
    assert eng.tiles_computed == 1  # none of them was transformed again


def test_a_run_of_fine_tiles_equals_tiles_computed_one_by_one(signal):
    rec = ArrayRecording(signal, FS)
    eng = TileEngine(rec, nfft=NFFT, hop=HOP)
    one = TileEngine(rec, nfft=NFFT, hop=HOP)
    calls = []
    spectra = eng.spectra
    eng.spectra = lambda x, out=None: calls.append(x.size) or spectra(x, out=out)
    n_tiles = -(-eng.n_frames // (TILE_CELLS << 1))
    run = range(n_tiles - 13, n_tiles)  # the last tile is short
    tiles = eng.compute_run(1, run)
    assert len(calls) == -(-(eng.n_frames - run[0] * (TILE_CELLS << 1)) // FRAMES_PER_BLOCK)
    for t in tiles:
        ref = one.get_tile(1, t.index, derive=0)
        np.testing.assert_array_equal(t.sums, ref.sums)
        np.testing.assert_array_equal(t.maxs, ref.maxs)
        np.testing.assert_array_equal(t.counts, ref.counts)


@pytest.mark.parametrize("t0,t1", [(50.0, 58.0), (101.3, 117.0), (7.0, 7.4), (40.0, 90.0)])
def test_a_jump_to_a_part_never_seen_transforms_only_the_view(signal, t0, t1):
    eng = TileEngine(ArrayRecording(signal, FS), nfft=NFFT, hop=HOP)
    eng.render(0.0, 120.0, 1600)  # the whole file first
    before = eng.frames_computed
    r = eng.render(t0, t1, 1600)
    tile_frames = TILE_CELLS << r.level
    in_view = (t1 - t0) * FS / HOP
    assert eng.frames_computed - before <= in_view + 2 * tile_frames + 1
    # and a second look transforms nothing
    eng.render(t0, t1, 1600)
    assert eng.frames_computed - before <= in_view + 2 * tile_frames + 1


@pytest.mark.parametrize("scaling", ["psd", "magnitude"])
def test_preview_shows_each_columns_middle_frame(signal, scaling):
    from specscope.compute import spectrogram

    eng = TileEngine(ArrayRecording(signal, FS), nfft=NFFT, hop=HOP, scaling=scaling)
    r = eng.preview(3.0, 40.0, 300)
    assert r.preview
    _, a, b, _ = eng.column_frames(3.0, 40.0, 300, level=0)
    _, _, s = spectrogram(signal, FS, nfft=NFFT, hop=HOP, scaling=scaling)
    power = s if scaling == "psd" else s * s
    k = (a + b - 1) // 2
    np.testing.assert_allclose(r.image, power[:, k], rtol=1e-4, atol=1e-6 * power.max())


def test_an_engine_nobody_holds_takes_its_spill_with_it(wav, tmp_path):
    eng = TileEngine(wav, nfft=NFFT, hop=HOP, cache_bytes=1 << 20, disk_cache=tmp_path / "c")
    eng.render(0.0, 30.0, 400)
    folder = eng.spill.folder
    assert folder.is_dir() and eng.cache.evicted > 0
    del eng  # no reference cycle keeps it: no garbage collection needed
    assert not folder.exists()


def test_tiles_of_the_npz_format_are_removed_when_the_cache_opens(wav, tmp_path):
    cache = tmp_path / "cache"
    old = cache / ("ab" * 16)  # a recording's folder of the earlier format
    old.mkdir(parents=True)
    t = _tile(3, 0)
    for name in ("L03_00000000.npz", "L04_00000001.npz", "L03_00000002.tmp.npz"):
        np.savez(old / name, sums=t.sums, maxs=t.maxs, counts=t.counts)
    mixed = cache / ("cd" * 16)  # an old tile beside a file of someone else's
    mixed.mkdir()
    np.savez(mixed / "L05_00000003.npz", sums=t.sums)
    (mixed / "notes.txt").write_text("keep")
    other = cache / "not-an-identity"  # npz files outside an identity's folder stay
    other.mkdir()
    np.savez(other / "L03_00000000.npz", sums=t.sums)
    (cache / "L03_00000000.npz").write_bytes(b"x")  # and in the cache folder itself
    outside = tmp_path / "outside"  # a link to a folder elsewhere is not followed
    outside.mkdir()
    np.savez(outside / "L03_00000000.npz", sums=t.sums)
    (cache / ("ef" * 16)).symlink_to(outside, target_is_directory=True)

    eng = TileEngine(wav, nfft=NFFT, hop=HOP, disk_cache=cache)
    first = eng.render(0.0, 120.0, 300).image
    assert not old.exists()
    assert sorted(p.name for p in mixed.iterdir()) == ["notes.txt"]
    assert (other / "L03_00000000.npz").is_file() and (cache / "L03_00000000.npz").is_file()
    assert (outside / "L03_00000000.npz").is_file()
    eng.close()
    # the new format's folder is kept and read back by the next session
    again = TileEngine(wav, nfft=NFFT, hop=HOP, disk_cache=cache)
    np.testing.assert_array_equal(again.render(0.0, 120.0, 300, cached_only=True).image, first)
    again.close()


# -- writing in the background -------------------------------------------------------------


def test_tiles_written_in_the_background_read_back_bit_identical(tmp_path):
    store = TileStore(tmp_path, N_FREQ, TILE_CELLS, background=True)
    tiles = [_tile(k % 3, k, n_cells=TILE_CELLS - k, seed=k) for k in range(12)]
    for t in tiles:
        assert store.put(t.level, t.index, t.sums, t.maxs, t.counts)
    store.flush()
    for t in tiles:
        sums, maxs, counts = store.get(t.level, t.index)
        assert sums is not t.sums  # read from its slot, not from the queue
        np.testing.assert_array_equal(sums, t.sums)
        np.testing.assert_array_equal(maxs, t.maxs)
        np.testing.assert_array_equal(counts, t.counts)
    more = [_tile(4, k, seed=100 + k) for k in range(6)]
    for t in more:
        store.put(t.level, t.index, t.sums, t.maxs, t.counts)
    store.close()  # a persistent store writes what is queued before it closes
    again = TileStore(tmp_path, N_FREQ, TILE_CELLS)
    for t in tiles + more:
        sums, maxs, counts = again.get(t.level, t.index)
        np.testing.assert_array_equal(sums, t.sums)
        np.testing.assert_array_equal(maxs, t.maxs)
        np.testing.assert_array_equal(counts, t.counts)
    again.close()


@pytest.fixture
def held_writes(monkeypatch):
    """Slot writes held until ``release`` is set; ``started`` says one is waiting."""
    import threading

    from specscope.compute.view import store as store_module

    release, started = threading.Event(), threading.Event()
    write = store_module.write_slot

    def slow(*args):
        started.set()
        assert release.wait(60)
        write(*args)
    monkeypatch.setattr(store_module, "write_slot", slow)
    return release, started


def test_a_tile_waiting_to_be_written_is_read_from_the_queue(tmp_path, held_writes):
    import threading

    release, started = held_writes
    one = N_FREQ * TILE_CELLS * 4 * 2
    spill = TileStore(tmp_path, N_FREQ, TILE_CELLS, temporary=True, background=True,
                      queue_bytes=2 * one)
    tiles = [_tile(1, i, seed=i) for i in range(2)]
    for t in tiles:
        assert spill.put(1, t.index, t.sums, t.maxs, t.counts)
    assert started.wait(60)  # the first is being written, the second waits
    for t in tiles:
        assert spill.has(1, t.index)
        sums, maxs, counts = spill.get(1, t.index)
        np.testing.assert_array_equal(sums, t.sums)
        np.testing.assert_array_equal(maxs, t.maxs)
        np.testing.assert_array_equal(counts, t.counts)
    third = _tile(1, 2, seed=2)  # the queue is full: this put waits for room
    done = threading.Thread(target=spill.put, args=(1, 2, third.sums, third.maxs, third.counts))
    done.start()
    release.set()
    done.join(60)
    spill.flush()
    for t in [*tiles, third]:
        sums, maxs, _ = spill.get(1, t.index)
        assert sums is not t.sums
        np.testing.assert_array_equal(sums, t.sums)
        np.testing.assert_array_equal(maxs, t.maxs)
    folder = spill.folder
    spill.close()
    assert not folder.exists()


def test_a_full_disk_turns_the_spill_off_and_renders_stay_equal(wav, tmp_path, monkeypatch,
                                                                caplog):
    import errno
    import logging

    from specscope.compute.view import store as store_module

    calls = []

    def full(fd, offset, parts, header):
        calls.append(offset)
        if len(calls) > 3:  # a few tiles fit, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        store_module.os.pwritev(fd, parts, offset + store_module.HEADER_BYTES)
        store_module.os.pwrite(fd, header, offset)
    monkeypatch.setattr(store_module, "write_slot", full)
    one = N_FREQ * TILE_CELLS * 4 * 2
    eng = TileEngine(wav, nfft=NFFT, hop=HOP, cache_bytes=3 * one, disk_cache=tmp_path / "c")
    plain = TileEngine(wav, nfft=NFFT, hop=HOP)
    views = [(t0, t0 + 20.0) for t0 in (0.0, 30.0, 60.0, 90.0)]
    with caplog.at_level(logging.WARNING, logger=store_module.__name__):
        for _ in range(2):
            for a, b in views:
                for reduce in ("mean", "max"):
                    np.testing.assert_array_equal(eng.render(a, b, 400, reduce).image,
                                                  plain.render(a, b, 400, reduce).image)
            eng.spill.flush()
    assert not eng.spill.writing
    lines = [r.getMessage() for r in caplog.records if "spill" in r.getMessage()]
    assert len(lines) == 1 and "No space left" in lines[0], lines
    folder = eng.spill.folder
    eng.close()
    assert not folder.exists()


def test_a_disk_cache_dropped_unclosed_leaves_its_writer_to_finish(tmp_path, held_writes):
    import threading


    release, started = held_writes
    store = TileStore(tmp_path, N_FREQ, TILE_CELLS, background=True)
    tiles = [_tile(3, i, seed=i) for i in range(4)]
    for t in tiles:
        store.put(3, t.index, t.sums, t.maxs, t.counts)
    assert started.wait(60)
    writers = [t for t in threading.enumerate() if t.name == "specscope-tile-writer"]
    del store  # returns while the writer is held: nobody waits for the disk here
    release.set()
    for w in writers:
        w.join(60)
    assert not any(w.is_alive() for w in writers)
    again = TileStore(tmp_path, N_FREQ, TILE_CELLS)
    for t in tiles:
        sums, maxs, _ = again.get(3, t.index)
        np.testing.assert_array_equal(sums, t.sums)
        np.testing.assert_array_equal(maxs, t.maxs)
    again.close()
