"""Journey: what a person reads in the first hour (issue 39, item 6), on a real X display.

Every Tab press shows where the focus went (none goes into a panel behind another
dock's tab); an FM capture centred at 100 MHz reads in MHz; the spectrum beside the
image shows the view's centre before the pointer comes; a zoom under a still pointer
gives the readout of the point now under it.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import soundfile
from harness import App

#: the colour of the spectrum beside the image (widgets/spectrogram_view.py)
SLICE_RGB = (255, 200, 80)


def _window_box(app: App) -> tuple[int, int, int, int]:
    return app.report()["window_rect"]


@pytest.mark.parametrize("small", [False, True], ids=["1600x1000", "1280x800"])
def test_every_tab_press_shows_where_the_focus_went(launch, display_small, tmp_path, small):
    fs = 16000
    x = 0.05 * np.random.default_rng(2).standard_normal(fs * 20)
    wav = tmp_path / "tabs.wav"
    soundfile.write(str(wav), x.astype(np.float32), fs, subtype="FLOAT")
    app = launch(wav, display=display_small if small else None)
    app.wait_window(r"^tabs\.wav — specscope$")
    app.wait_image()
    app.settle()
    app.activate()
    box = _window_box(app)
    bx, by, bw, bh = box
    app.move(bx + bw - 5, by + bh - 5)  # the pointer rests on the status bar's corner
    app.settle()
    tag = "1280x800" if small else "1600x1000"
    for press in range(1, 27):
        before = app.grab()[by:by + bh, bx:bx + bw]
        app.key("Tab")
        # a focus frame, a caret or a highlighted tab: a few dozen pixels at least
        app.wait_change(box, before, f"Tab press {press} to show where the focus went",
                        timeout=10, min_fraction=30 / (bw * bh))
        if press <= 3 or press % 8 == 0:
            app.screenshot(f"{tag}-tab-{press}")
    for press in range(1, 4):
        before = app.grab()[by:by + bh, bx:bx + bw]
        app.key("shift+Tab")
        app.wait_change(box, before, f"Shift+Tab press {press} to show the focus",
                        timeout=10, min_fraction=30 / (bw * bh))


def _sigmf(path, fs: float, fc: float, seconds: float) -> None:
    """An FM-like carrier 30 kHz above the centre, in noise: a SigMF pair."""
    t = np.arange(int(fs * seconds)) / fs
    rng = np.random.default_rng(4)
    x = 0.5 * np.exp(2j * np.pi * (30e3 * t + 200 * np.sin(2 * np.pi * 3 * t)))
    x = x + 0.003 * (rng.standard_normal(t.size) + 1j * rng.standard_normal(t.size))
    x.astype(np.complex64).tofile(path.with_suffix(".sigmf-data"))
    meta = {"global": {"core:datatype": "cf32_le", "core:sample_rate": fs,
                       "core:version": "1.0.0"},
            "captures": [{"core:sample_start": 0, "core:frequency": fc}],
            "annotations": []}
    path.with_suffix(".sigmf-meta").write_text(json.dumps(meta))


def _slice_pixels(app: App, r: dict) -> int:
    """Pixels of the spectrum's colour in the column right of the colour bar (the last
    160 pixels before the docks: the spectrum is at most 170 wide, the bar left of it)."""
    x, y, w, h = r["plot"]
    shot = app.grab()
    right = r["window_rect"][0] + r["window_rect"][2]
    docks = [d["rect"][0] for d in r.get("docks", [])
             if d.get("shown") and not d.get("floating") and d["rect"][0] > x + w]
    stop = min([right, *docks])
    area = shot[y:y + h, max(x + w, stop - 160):stop - 4].astype(int)
    near = np.abs(area - np.array(SLICE_RGB)).max(axis=-1) <= 40
    return int(near.sum())


def _readout_t(text: str) -> float:
    m = re.search(r"t = (\d+\.\d+) s", text)
    return float(m.group(1)) if m else float("nan")


@pytest.mark.parametrize("small", [False, True], ids=["1600x1000", "1280x800"])
def test_an_fm_capture_reads_in_mhz_and_the_readout_follows_a_zoom(launch, display_small,
                                                                   tmp_path, small):
    fs, fc = 250e3, 100e6
    meta = tmp_path / "fm-capture.sigmf-meta"
    _sigmf(meta, fs, fc, 4.0)
    app = launch(meta, display=display_small if small else None)
    app.wait_window(r"^fm-capture.* — specscope$")
    app.wait_image()
    tag = "1280x800" if small else "1600x1000"
    r = app.settle()
    # before the pointer comes: the spectrum at the view's centre, not a black band
    bx, by, bw, bh = r["window_rect"]
    app.move(bx + bw - 12, by + bh - 8)  # the status bar (not where another journey left it)
    r = app.settle()
    assert _slice_pixels(app, r) > 50, "no spectrum beside the image before the pointer came"
    app.screenshot(f"{tag}-centre-spectrum")
    # the readout on the carrier: MHz with the digits a pixel tells, no exponent
    carrier = fc + 30e3
    x, y = app.to_px(3.0, carrier, r)
    app.move(x - 3, y)
    app.move(x, y)
    q = app.wait_report(lambda q: "MHz" in q["readout"] and abs(
        _readout_t(q["readout"]) - app.from_px(x, y, q)[0]) < 0.05, "the readout in MHz")
    m = re.search(r"f = (\d+\.\d+) MHz", q["readout"])
    hz_per_px = (q["f"][1] - q["f"][0]) / q["plot"][3]
    assert m and abs(float(m.group(1)) * 1e6 - app.from_px(x, y, q)[1]) <= 2 * hz_per_px, \
        q["readout"]
    assert not re.search(r"\de[+-]\d|\d{7}", q["readout"]), q["readout"]
    assert q["readout_text_px"] <= q["readout_rect"][2], "the readout is cut"
    app.screenshot(f"{tag}-readout-mhz")
    # a reference there; the view zooms in time about its centre (2 s) with its key, the
    # pointer still at 3 s: the readout is of the point now under it (2.5 s), 0.5 s on
    app.click(x, y)  # the reference, and the view has the keys
    app.key("equal")
    q = app.wait_report(lambda q: q["t"][1] - q["t"][0] < 0.6 * (r["t"][1] - r["t"][0]),
                        "the zoom")
    q = app.wait_report(lambda q: "Δt" in q["readout"] and abs(
        _readout_t(q["readout"]) - app.from_px(x, y, q)[0])
        <= 2 * (q["t"][1] - q["t"][0]) / q["plot"][2],
        "the readout of the point under the still pointer")
    assert abs(_readout_t(q["readout"]) - 2.5) < 0.05, q["readout"]
    m = re.search(r"Δt = -(\d+\.\d) ms", q["readout"])
    assert m and abs(float(m.group(1)) - 500.0) < 50.0, q["readout"]
    inverse = re.search(r"\(1/Δt = (\d+\.\d+) Hz\)", q["readout"])
    assert inverse and abs(float(inverse.group(1)) - 1e3 / float(m.group(1))) < 0.02, \
        q["readout"]
    assert not re.search(r"\de[+-]\d", q["readout"]), q["readout"]
    app.screenshot(f"{tag}-after-zoom")
