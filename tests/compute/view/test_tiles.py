"""The tile engine against a brute-force full-resolution spectrogram."""

import numpy as np
import pytest
from specscope.compute import Cancelled, InputError, spectrogram
from specscope.compute.io import ArrayRecording
from specscope.compute.view import TILE_CELLS, TileEngine

FS = 8000
NFFT, HOP = 256, 64


@pytest.fixture(scope="module")
def noisy():
    """Two minutes of noise with tones and a single 2.5 ms click."""
    rng = np.random.default_rng(11)
    n = FS * 120
    t = np.arange(n) / FS
    x = 0.01 * rng.standard_normal(n) + 0.05 * np.sin(2 * np.pi * 440 * t)
    x[40 * FS:60 * FS] += 0.1 * np.sin(2 * np.pi * 2000 * t[40 * FS:60 * FS])
    click = 777_777
    x[click:click + 20] += rng.choice([-1.0, 1.0], 20)  # broadband
    x = x.astype(np.float32)
    _, times, s = spectrogram(x, FS, nfft=NFFT, hop=HOP)
    return x, times, s, click


def brute(times, s, edges, reduce):
    out = np.full((s.shape[0], edges.size - 1), np.nan)
    for j in range(edges.size - 1):
        m = (times >= edges[j]) & (times < edges[j + 1])
        if m.any():
            out[:, j] = s[:, m].mean(axis=1) if reduce == "mean" else s[:, m].max(axis=1)
    return out


def engine(x, **kw):
    return TileEngine(ArrayRecording(x, FS), nfft=NFFT, hop=HOP, **kw)


VIEWS = [(0.0, 120.0, 1600), (0.0013, 120.0, 100), (10.0013, 20.0, 777),
         (33.3013, 33.9, 1600), (-5.0, 130.0, 1000), (59.99, 60.51, 333), (0.0, 120.0, 37)]


@pytest.mark.parametrize("t0,t1,n", VIEWS)
def test_mean_matches_brute_force(noisy, t0, t1, n):
    x, times, s, _ = noisy
    r = engine(x).render(t0, t1, n, "mean")
    ref = brute(times, s, r.column_edges, "mean")
    ok = np.isfinite(ref)
    assert np.all(np.isfinite(r.image[ok])), "columns with frames must be drawn"
    err_db = np.abs(10 * np.log10(r.image[ok]) - 10 * np.log10(ref[ok]))
    assert np.percentile(err_db, 99) < 0.5      # the criterion
    assert err_db.max() < 0.01                  # in fact: exact to float32 rounding


@pytest.mark.parametrize("t0,t1,n", VIEWS)
def test_max_never_below_any_frame_inside(noisy, t0, t1, n):
    x, times, s, _ = noisy
    r = engine(x).render(t0, t1, n, "max")
    ref = brute(times, s, r.column_edges, "max")
    ok = np.isfinite(ref)
    assert np.all(r.image[ok] >= ref[ok] * (1 - 1e-5))


def test_returned_edges_are_close_to_the_requested_grid(noisy):
    x = noisy[0]
    r = engine(x).render(0.0013, 119.0, 1600)
    grid = np.linspace(0.0013, 119.0, 1601)
    assert r.level >= 1
    # edges sit between frames (one hop) and snap to whole cells (half a cell)
    cell_frames = 2 ** r.level
    bound = (cell_frames / 2 + 1) * HOP / FS
    assert np.max(np.abs(r.column_edges - grid)) <= bound + 1e-9
    assert bound < 0.35 * (grid[1] - grid[0])


def test_one_click_in_two_minutes_stays_visible(noisy):
    x, _times, _s, click = noisy
    eng = engine(x)
    for reduce, margin_db in (("max", 20.0), ("mean", 3.0)):
        r = eng.render(0.0, 120.0, 200, reduce)
        assert r.level >= 3
        j = np.searchsorted(r.column_edges, click / FS) - 1
        hi = r.image[60:, :]  # above the tones: noise everywhere but at the click
        db = 10 * np.log10(hi)
        others = np.delete(db, j, axis=1)
        assert db[:, j].mean() > others.mean() + margin_db, reduce


def test_fewer_frames_than_columns_repeats_frames(noisy):
    x, times, s, _ = noisy
    r = engine(x).render(50.0, 50.05, 500)  # ~6 frames over 500 columns
    assert r.level == 0
    cols = {tuple(np.round(r.image[:, j], 12)) for j in range(500)}
    assert len(cols) <= 8
    for j in range(0, 500, 37):  # each column is one real frame, never a blend
        centre = (r.column_edges[j] + r.column_edges[j + 1]) / 2
        k = np.argmin(np.abs(times - centre))
        np.testing.assert_allclose(r.image[:, j], s[:, k], rtol=1e-5, atol=1e-12)


def test_tiles_from_children_equal_direct(noisy):
    x = noisy[0]
    direct = engine(x)
    built = engine(x)
    for i in range(4):
        built.get_tile(2, i, derive=0)
    assert built.tiles_computed == 4
    for i in range(2):
        combined = built.get_tile(3, i)  # from its two cached children
        fresh = direct.get_tile(3, i, derive=0)  # straight from the frames
        np.testing.assert_allclose(combined.sums, fresh.sums, rtol=1e-5)
        np.testing.assert_array_equal(combined.maxs, fresh.maxs)
        np.testing.assert_array_equal(combined.counts, fresh.counts)
    assert built.tiles_computed == 4
    # the last tile of a level may have a single child: still exact
    last = (x.size // HOP) // (TILE_CELLS << 3)
    np.testing.assert_allclose(built.get_tile(3, last).sums,
                               direct.get_tile(3, last, derive=0).sums, rtol=1e-5)


def test_a_computed_tile_leaves_its_descendants_cached(noisy):
    eng = engine(noisy[0])
    eng.get_tile(5, 0)
    assert eng.has_tile(4, 0) and eng.has_tile(4, 1)
    assert all(eng.has_tile(3, i) for i in range(4))
    n = eng.tiles_computed
    r = eng.render(0.0, 10.0, 40)  # a zoom into that span needs nothing new
    assert r.level == 3
    assert eng.tiles_computed == n


def test_cache_is_bounded_in_bytes(noisy):
    x = noisy[0]
    eng = engine(x, cache_bytes=4 << 20)
    for t0 in np.linspace(0, 110, 23):
        eng.render(t0, t0 + 10, 800)
        assert eng.cache.nbytes <= 4 << 20
    tile_bytes = (NFFT // 2 + 1) * TILE_CELLS * 4
    assert len(eng.cache) <= (4 << 20) // tile_bytes + 1


def test_cache_makes_a_second_render_compute_nothing(noisy):
    eng = engine(noisy[0])
    assert eng.render(0, 120, 1000, cached_only=True) is None
    first = eng.render(0, 120, 1000)
    n = eng.tiles_computed
    again = eng.render(0, 120, 1000)
    assert eng.tiles_computed == n
    np.testing.assert_array_equal(first.image, again.image)
    assert eng.render(0, 120, 1000, cached_only=True) is not None


def test_disk_cache_reopens_without_computing(noisy, tmp_path):
    import soundfile

    x = noisy[0]
    wav = tmp_path / "n.wav"
    soundfile.write(str(wav), x, FS, subtype="FLOAT")
    from specscope.compute import open_recording

    with open_recording(wav) as rec:
        first = TileEngine(rec, nfft=NFFT, hop=HOP, disk_cache=tmp_path / "cache")
        a = first.render(0, 120, 60)
        assert a.level >= 4 and first.tiles_computed > 0
        first.close()  # the disk cache is written on a thread: close writes what is queued
        second = TileEngine(rec, nfft=NFFT, hop=HOP, disk_cache=tmp_path / "cache")
        b = second.render(0, 120, 60)
        assert second.tiles_computed == 0
        np.testing.assert_array_equal(a.image, b.image)
        # other parameters do not reuse those tiles
        third = TileEngine(rec, nfft=NFFT, hop=HOP * 2, disk_cache=tmp_path / "cache")
        third.render(0, 120, 60)
        assert third.tiles_computed > 0


def test_complex_recording_is_two_sided_around_centre(noisy):
    n = FS * 4
    t = np.arange(n) / FS
    iq = np.exp(2j * np.pi * -1000 * t).astype(np.complex64)
    eng = TileEngine(ArrayRecording(iq, FS, center_frequency=100e6), nfft=NFFT, hop=HOP)
    r = eng.render(0, 4, 100)
    assert r.image.shape[0] == NFFT
    assert r.frequencies[0] < 100e6 < r.frequencies[-1]
    peak = r.frequencies[np.argmax(r.image.mean(axis=1))]
    assert peak == pytest.approx(100e6 - 1000, abs=FS / NFFT)


@pytest.mark.parametrize("scale", ["log", "mel"])
def test_log_and_mel_rows(noisy, scale):
    x = noisy[0]
    eng = engine(x)
    lin = eng.render(0, 120, 50)
    r = eng.render(0, 120, 50, freq_scale=scale, n_rows=64)
    assert r.image.shape == (64, 50)
    assert np.all(np.diff(r.frequency_edges) > 0)
    if scale == "log":
        np.testing.assert_allclose(np.diff(np.log(r.frequency_edges)),
                                   np.log(r.frequency_edges[1] / r.frequency_edges[0]))
    # the 440 Hz tone lands in the row that contains 440 Hz
    row = np.searchsorted(r.frequency_edges, 440.0) - 1
    assert np.argmax(r.image.mean(axis=1)) == row
    # a wide row is the mean of the bins whose centres it holds
    top = r.image.shape[0] - 1
    f = eng.frequencies
    m = (f >= r.frequency_edges[top]) & (f < r.frequency_edges[top + 1])
    np.testing.assert_allclose(r.image[top], lin.image[m].mean(axis=0), rtol=1e-4)


def test_envelope_matches_brute_force(noisy):
    x = noisy[0]
    edges, lo, hi = engine(x).envelope(1000, block=77_777)
    b = np.round(np.linspace(0, x.size, 1001)).astype(int)
    np.testing.assert_array_equal(lo, np.minimum.reduceat(x, b[:-1]))
    np.testing.assert_array_equal(hi, np.maximum.reduceat(x, b[:-1]))
    np.testing.assert_allclose(edges, b / FS)


def test_cancel_and_bad_arguments(noisy):
    eng = engine(noisy[0])
    with pytest.raises(Cancelled):
        eng.render(0, 120, 100, cancelled=lambda: True)
    with pytest.raises(InputError, match="reduce='median'"):
        eng.render(0, 1, 10, "median")
    with pytest.raises(InputError, match="t1 must be after t0"):
        eng.render(2, 1, 10)
    with pytest.raises(InputError, match="n_cols=0"):
        eng.render(0, 1, 0)


@pytest.mark.parametrize("scaling", ["psd", "magnitude"])
def test_blocks_write_into_one_reused_buffer_with_the_same_numbers(noisy, scaling):
    """Each block's spectra go into the engine's block buffer (``out=`` of stft_power):
    the same array, at the same address, for every block of every tile, and the same
    tiles as spectra computed into new arrays."""
    x = noisy[0]
    eng = engine(x, scaling=scaling)
    addresses = []
    spectra = eng.spectra

    def spy(samples, out=None):
        p = spectra(samples, out=out)
        assert out is not None and p is out  # written into the buffer, not a new array
        addresses.append(p.__array_interface__["data"][0])
        return p

    eng.spectra = spy
    plain = engine(x, scaling=scaling)
    plain.spectra = lambda samples, out=None: spectra(samples)  # a new array per block
    for level in (0, 2, 5):
        n_tiles = -(-eng.n_frames // (TILE_CELLS << level))
        for i in {0, n_tiles - 1}:
            a = eng.get_tile(level, i, derive=0)
            b = plain.get_tile(level, i, derive=0)
            np.testing.assert_array_equal(a.sums, b.sums)
            np.testing.assert_array_equal(a.maxs, b.maxs)
            np.testing.assert_array_equal(a.counts, b.counts)
    assert len(addresses) > 10 and len(set(addresses)) == 1
    assert eng.block_buffer(7).__array_interface__["data"][0] == addresses[0]


def test_building_ahead_makes_the_zoom_outs_and_pans_hit_the_cache(noisy):
    from specscope.compute.view import build_ahead, plan_ahead
    x = noisy[0]
    eng = engine(x)
    t0, t1, n = 50.0, 53.0, 400  # a fine level: the zoom-outs need tiles not cached
    eng.render(t0, t1, n)
    plan = plan_ahead(eng, t0, t1, n)
    assert plan and len(set(plan)) == len(plan)
    assert not any(eng.has_tile(*k) for k in plan)
    views = [(51.5 - 1.5 * z, 51.5 + 1.5 * z) for z in (2, 4, 8)] + [(47.0, 50.0), (53.0, 56.0)]
    assert all(eng.render(a, b, n, cached_only=True) is None for a, b in views[:1])
    assert build_ahead(eng, plan) == len(plan)
    fresh = engine(x)
    for a, b in views:
        for reduce in ("mean", "max"):
            got = eng.render(a, b, n, reduce, cached_only=True)
            assert got is not None, f"{a}..{b} s not prepared"
            np.testing.assert_array_equal(got.image, fresh.render(a, b, n, reduce).image)
    assert plan_ahead(eng, t0, t1, n) == []  # nothing left to do


def test_building_ahead_stops_when_cancelled_and_keeps_what_it_built(noisy):
    from specscope.compute.view import build_ahead, plan_ahead
    x = noisy[0]
    eng = engine(x)
    eng.render(50.0, 53.0, 400)
    plan = plan_ahead(eng, 50.0, 53.0, 400)
    checks = []

    def cancelled():
        checks.append(1)
        return len(checks) > 3

    done = build_ahead(eng, plan, cancelled=cancelled)
    assert 0 < done < len(plan)
    assert all(eng.has_tile(*k) for k in plan[:done])
    assert not any(eng.has_tile(*k) for k in plan[done:])


def test_building_ahead_stays_within_its_share_of_the_cache(noisy):
    from specscope.compute.view import plan_ahead
    x = noisy[0]
    eng = engine(x)
    per_cell = eng.n_freq * TILE_CELLS * 4  # a tile's sums (and as much again in maxima)
    budget = 5 * 2 * per_cell
    whole = plan_ahead(eng, 50.0, 60.0, 400)
    plan = plan_ahead(eng, 50.0, 60.0, 400, budget_bytes=budget)
    assert sum(per_cell * (1 if lv == 0 else 2) for lv, _ in plan) <= budget
    assert 0 < len(plan) < len(whole) and plan == whole[:len(plan)]
