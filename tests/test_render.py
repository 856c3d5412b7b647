"""Display images: columns aggregate every frame (mean or max), never skip one."""

import numpy as np
import pytest
import soundfile

from specscope.compute import StftParams, open_recording, render_spectrogram, spectrogram
from specscope.compute.render import column_bounds


@pytest.fixture
def clicky(tmp_path):
    """Noise with one 2 ms click: a short event a sampling viewer would miss."""
    fs = 8000
    rng = np.random.default_rng(7)
    x = 0.001 * rng.standard_normal(fs * 30)
    click_at = 123457
    x[click_at:click_at + 16] += 0.9
    path = tmp_path / "clicky.wav"
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path, x.astype(np.float32), fs, click_at


def test_full_resolution_equals_spectrogram(clicky):
    path, x, fs, _ = clicky
    p = StftParams(256, 128)
    with open_recording(path) as rec:
        img = render_spectrogram(rec, p, max_columns=10**6)
    f, t, s = spectrogram(x, fs, nfft=256, hop=128)
    assert img.db.shape == s.shape
    assert img.db.dtype == np.float32 and img.db.flags.c_contiguous
    np.testing.assert_allclose(img.db, 10 * np.log10(s), atol=1e-3)
    np.testing.assert_allclose(img.frequencies, f)
    # column edges lie half a hop either side of the frame centres
    np.testing.assert_allclose((img.column_edges[:-1] + img.column_edges[1:]) / 2, t)


@pytest.mark.parametrize("reduce", ["mean", "max"])
def test_columns_aggregate_every_frame(clicky, reduce):
    path, x, fs, _ = clicky
    p = StftParams(256, 100)
    _, _, s = spectrogram(x, fs, nfft=256, hop=100)
    with open_recording(path) as rec:
        img = render_spectrogram(rec, p, max_columns=333, reduce=reduce)
    bounds = column_bounds(s.shape[1], 333)
    agg = np.add.reduceat(s, bounds[:-1], axis=1) / np.diff(bounds) if reduce == "mean" \
        else np.maximum.reduceat(s, bounds[:-1], axis=1)
    assert img.db.shape == (129, 333)
    np.testing.assert_allclose(img.db, 10 * np.log10(agg), atol=1e-3)


def test_short_event_is_never_hidden(clicky):
    path, x, fs, click_at = clicky
    p = StftParams(256, 64)
    with open_recording(path) as rec:
        peak = render_spectrogram(rec, p, max_columns=50, reduce="max")
        mean = render_spectrogram(rec, p, max_columns=50, reduce="mean")
    click_col = np.searchsorted(peak.column_edges, click_at / fs) - 1
    # the click column stands out above the noise floor in both reductions
    for img, margin in ((peak, 30.0), (mean, 10.0)):
        band = img.db[10:100]
        others = np.delete(band, click_col, axis=1)
        assert band[:, click_col].mean() > others.mean() + margin


def test_column_bounds_cover_all_frames():
    for n, m in [(10, 3), (1000, 999), (5, 100), (7, 7)]:
        b = column_bounds(n, m)
        assert b[0] == 0 and b[-1] == n
        assert np.all(np.diff(b) >= 1)
        assert len(b) - 1 == min(n, m)
