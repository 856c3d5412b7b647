"""The journey harness itself: the app starts on the X display, its window and axes are found,
and keys and clicks reach it."""

from __future__ import annotations

import numpy as np
import soundfile


def test_window_axes_and_pixels(launch, tmp_path):
    """A 1 kHz tone shows as a bright row exactly where the report says 1 kHz is."""
    fs = 16000
    t = np.arange(fs * 4) / fs
    path = tmp_path / "tone.wav"
    soundfile.write(str(path), 0.5 * np.sin(2 * np.pi * 1000 * t)
                    + 1e-3 * np.random.default_rng(0).standard_normal(t.size), fs)
    app = launch(path)
    app.wait_window(r"^tone\.wav — specscope$")
    r = app.wait_image()
    x, y, w, h = r["plot"]
    x0, y0, ww, wh = app.window_geometry()
    assert x0 <= x and x + w <= x0 + ww and y0 <= y and y + h <= y0 + wh
    assert r["f"][1] > 7000 and abs(r["t"][1] - r["t"][0]) > 3
    shot = app.screenshot("tone")
    px, py = app.to_px(2.0, 1000.0, r)
    col = shot.rgb[y:y + h, px].astype(float).sum(axis=1)
    row = int(np.argmax(col)) + y
    # the brightest row of the column is the tone's, within a bin (16 kHz / 1024 = 15.6 Hz)
    hz_per_px = (r["f"][1] - r["f"][0]) / h
    assert abs(row - py) * hz_per_px <= 16 + 2 * hz_per_px, (row, py)
    # Home key after a wheel zoom: the report follows what the view shows
    app.wheel(px, py, 3)
    zoomed = app.wait_report(lambda q: q["t"][1] - q["t"][0] < 0.9 * (r["t"][1] - r["t"][0]),
                             "the wheel to zoom time")
    assert zoomed["seq"] > r["seq"]
