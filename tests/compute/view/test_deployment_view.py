"""The tile engine over a deployment: frames planned per segment, never across a gap."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from _deployments import stamped
from specscope.compute.deployment import open_deployment
from specscope.compute.spectral import StftParams, stft_frame_rows
from specscope.compute.view import TileEngine
from specscope.compute.view.columns import FrameGrid

RATE = 8000
NFFT, HOP = 256, 16
# 1 s files: two contiguous pairs with 30 s between them (one gap)
STARTS = [0.0, 1.0, 31.0, 32.0]


@pytest.fixture
def deployment(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    data = stamped(tmp_path / "site", STARTS, n=RATE, rate=RATE)
    dep = open_deployment(tmp_path / "site")
    yield dep, [x[:, 0] for x in data]
    dep.close()


class _Spy:
    """Records every range read from a recording."""

    def __init__(self, rec):
        self.rec, self.reads = rec, []
        self._read = rec.read

    def __call__(self, start=0, stop=None, channels=None):
        self.reads.append((int(start), int(stop)))
        return self._read(start, stop, channels)


def _reference(samples: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Power of every frame of each segment transformed alone, and the frames' centres (s)
    on the deployment's sample axis."""
    params = StftParams(NFFT, HOP, "hann", "psd")
    segments = [np.concatenate(samples[:2]), np.concatenate(samples[2:])]
    powers, centres, offset = [], [], 0
    for seg in segments:
        p = np.asarray(stft_frame_rows(seg, params, RATE), np.float64)
        powers.append(p)
        k = np.arange(p.shape[0])
        centres.append((offset + k * HOP + NFFT / 2) / RATE)
        offset += seg.size
    return np.concatenate(powers), np.concatenate(centres)


def test_frames_are_planned_per_segment(deployment):
    dep, _ = deployment
    assert dep.segments() == [(0, 2 * RATE), (2 * RATE, 4 * RATE)]
    eng = TileEngine(dep, nfft=NFFT, hop=HOP, disk_cache=None)
    per_segment = (2 * RATE - NFFT) // HOP + 1
    # one frame per segment fewer than framing the 4 s as one run: the frame over the gap
    assert eng.n_frames == 2 * per_segment == 1970
    assert (4 * RATE - NFFT) // HOP + 1 == 1985


@pytest.mark.parametrize(("n_cols", "reduce"), [(700, "mean"), (90, "mean"), (90, "max"),
                                                (5, "max")])
def test_each_column_equals_the_stft_of_its_segment_alone(deployment, n_cols, reduce):
    dep, samples = deployment
    eng = TileEngine(dep, nfft=NFFT, hop=HOP, disk_cache=None, spill_bytes=0)
    power, centres = _reference(samples)
    res = eng.render(0.0, 4.0, n_cols, reduce)
    assert res.level == (0 if n_cols == 700 else eng.level_for(res.frames_per_column))
    for j in range(n_cols):
        inside = (centres >= res.column_edges[j]) & (centres < res.column_edges[j + 1])
        if not inside.any():  # zoomed past a frame per column: the nearest frame repeats
            assert res.level == 0
            continue
        want = power[inside].max(axis=0) if reduce == "max" else power[inside].mean(axis=0)
        # float32 cells against a float64 reference: 1e-4 relative, 1e-12 of the peak
        np.testing.assert_allclose(res.image[:, j], want, rtol=1e-4,
                                   atol=1e-12 * float(power.max()), err_msg=f"column {j}")


def test_no_frame_reads_across_the_gap_but_contiguous_files_are_crossed(deployment):
    dep, _ = deployment
    spy = _Spy(dep)
    dep.read = spy
    eng = TileEngine(dep, nfft=NFFT, hop=HOP, disk_cache=None, spill_bytes=0)
    eng.render(0.0, 4.0, 300, "mean")
    eng.preview(0.0, 4.0, 300)
    gap = 2 * RATE
    assert spy.reads
    assert not [r for r in spy.reads if r[0] < gap < r[1]]
    # the boundary of the contiguous files 0|1 (and 2|3) is read across
    assert [r for r in spy.reads if r[0] < RATE < r[1]]
    assert [r for r in spy.reads if r[0] < 3 * RATE < r[1]]


def test_a_filters_history_stops_at_the_gap(deployment):
    dep, _ = deployment
    spy = _Spy(dep)
    dep.read = spy
    eng = TileEngine(dep, nfft=NFFT, hop=HOP, disk_cache=None, spill_bytes=0,
                     pipeline=lambda x, fs: x, pipeline_context=(500, 500))
    eng.render(0.0, 4.0, 200, "mean")
    assert not [r for r in spy.reads if r[0] < 2 * RATE < r[1]]


def test_the_grid_of_one_segment_is_the_plain_grid():
    grid = FrameGrid([(0, 10000)], 256, 64)
    k = np.arange(-3, 200)
    np.testing.assert_array_equal(grid.centre(k), k * 64 + 128.0)
    x = np.linspace(-500, 11000, 97)
    np.testing.assert_array_equal(grid.position(x), (x - 128) / 64)


def test_positions_between_segments_count_the_frames_before(tmp_path):
    grid = FrameGrid([(0, 1000), (1000, 1100), (1100, 3000)], 256, 64)
    # 12 frames, none in the 100-sample segment, then 26
    assert list(grid.n) == [12, 0, 26] and grid.n_frames == 38
    centres = np.concatenate([np.arange(12) * 64 + 128.0, 1100 + np.arange(26) * 64 + 128.0])
    np.testing.assert_array_equal(grid.centre(np.arange(38)), centres)
    x = np.linspace(-10, 3010, 3021)
    counts = np.clip(np.ceil(grid.position(x)), 0, 38)
    np.testing.assert_array_equal(counts, np.searchsorted(centres, x, side="left"))
    assert grid.pieces(5, 20) == [(5, 12, 0, 1000), (12, 20, 1100, 3000)]


def _touch(path: Path) -> None:
    """Change a file in place: same size, other bytes, a later modification time."""
    data = bytearray(path.read_bytes())
    data[-200:] = bytes(200)
    path.write_bytes(bytes(data))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_the_disk_cache_is_kept_by_the_deployments_fingerprint(deployment, tmp_path):
    dep, _ = deployment
    disk = tmp_path / "tiles"
    eng = TileEngine(dep, nfft=NFFT, hop=HOP, disk_cache=disk, spill_bytes=0)
    assert eng.max_level >= 3
    first = eng.get_tile(3, 0)
    eng.close()
    again = TileEngine(open_deployment(tmp_path / "site"), nfft=NFFT, hop=HOP,
                       disk_cache=disk, spill_bytes=0)
    assert again.is_available(3, 0)
    np.testing.assert_array_equal(again.get_tile(3, 0).sums, first.sums)
    assert again.tiles_computed == 0
    again.close()
    _touch(tmp_path / "site" / "rec0000.wav")
    changed = open_deployment(tmp_path / "site")
    assert changed.fingerprint() != dep.fingerprint()
    fresh = TileEngine(changed, nfft=NFFT, hop=HOP, disk_cache=disk, spill_bytes=0)
    assert not fresh.is_available(3, 0)
    tile = fresh.get_tile(3, 0)
    assert fresh.tiles_computed >= 1
    assert not np.array_equal(tile.sums, first.sums)
    fresh.close()
    changed.close()
