"""The notebook explorer on a folder of recordings: ``explore(FOLDER)`` opens it as one
deployment and renders it, the calls of each file in their places."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb")

import soundfile
from specscope.app.notebook.explorer import explore

RATE = 8000
T0 = datetime(2024, 5, 1, 12, 0, 0)
#: six two-second files, an hour's gap after the third; a tone in file 1 and in file 4
TONES = {1: 1000.0, 4: 3000.0}


def _start(k: int) -> datetime:
    return T0 + timedelta(seconds=2 * k + (3600 if k >= 3 else 0))


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "site"
    folder.mkdir()
    rng = np.random.default_rng(5)
    t = np.arange(2 * RATE) / RATE
    for k in range(6):
        x = 0.001 * rng.standard_normal(2 * RATE)
        if k in TONES:
            x += 0.5 * np.sin(2 * np.pi * TONES[k] * t)
        soundfile.write(str(folder / _start(k).strftime("%Y%m%d_%H%M%S.wav")),
                        x.astype(np.float32), RATE, subtype="FLOAT")
    return folder


def _brightness(w, img, t: float, f: float) -> int:
    x, y = w.to_pixel(t, f)
    return int(img[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2, :3].astype(int).sum(axis=2)
               .mean())


def test_explore_opens_a_folder_as_one_deployment_and_renders_it(site):
    before = {p.name: p.stat().st_mtime_ns for p in site.iterdir()}
    w = explore(site)
    try:
        rec = w.recording
        assert rec.format == "deployment" and len(rec.files) == 6
        assert rec.n_samples == 12 * RATE and rec.gaps == [(6 * RATE, 3600.0)]
        img = w.snapshot()
        assert img.dtype == np.uint8 and img[..., :3].std() > 20
        assert w.visible_range[:2] == pytest.approx((0.0, 12.0))
        # each tone is bright in its file's place on the axis, dark in the others
        assert _brightness(w, img, 3.0, 1000.0) > _brightness(w, img, 1.0, 1000.0) + 150
        assert _brightness(w, img, 9.0, 3000.0) > _brightness(w, img, 3.0, 3000.0) + 150
        assert _brightness(w, img, 9.0, 3000.0) > _brightness(w, img, 11.0, 3000.0) + 150
        # zoomed into file 4 (after the gap): its tone fills the view at 3 kHz
        w.set_view(8.2, 9.8, 0.0, 4000.0)
        zoom = w.snapshot()
        assert _brightness(w, zoom, 9.0, 3000.0) > _brightness(w, zoom, 9.0, 1000.0) + 150
    finally:
        w.close()
    assert {p.name: p.stat().st_mtime_ns for p in site.iterdir()} == before
