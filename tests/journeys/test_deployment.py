"""Journey: a folder of 200 recordings as one timeline.

A person opens a deployment (200 one-second WAVs named by their start times, two gaps:
2 h 13 min and 1 d 2 h) with File › Open folder (Ctrl+Shift+O, the path typed into the
dialog), sees the whole span with the gaps marked, finds a click that crosses the boundary
of two files in the whole-span image, zooms into it with the wheel (it stays in view,
bright, at every zoom), reads the two files' names at it in the readout, and goes to a date
on the next day with Go to date/time (Ctrl+G).  At 1600x1000 and at 1280x800.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np
import soundfile
from harness import App

RATE = 8000
N_FILES = 200
GAP1 = 2 * 3600 + 13 * 60            # after file 49
GAP2 = 26 * 3600                     # after file 149
T0 = datetime(2024, 5, 1, 12, 0, 0)
BOUNDARY = 121                       # the click crosses the start of file 121 (axis 121 s)
CLICK_S = 0.004                      # of it on either side of the boundary


def _start(k: int) -> datetime:
    return T0 + timedelta(seconds=k + (GAP1 if k >= 50 else 0) + (GAP2 if k >= 150 else 0))


def _site(folder):
    folder.mkdir()
    rng = np.random.default_rng(7)
    half = int(CLICK_S * RATE)
    for k in range(N_FILES):
        x = 0.001 * rng.standard_normal(RATE)
        if k == BOUNDARY - 1:
            x[-half:] = 0.9 * rng.standard_normal(half)   # the click's first half...
        if k == BOUNDARY:
            x[:half] = 0.9 * rng.standard_normal(half)    # ...and its second
        name = _start(k).strftime("%Y%m%d_%H%M%S.wav")
        soundfile.write(str(folder / name), x.astype(np.float32), RATE, subtype="FLOAT")
    return folder


def _bright_at(app: App, shot, r: dict, t: float) -> tuple[float, float]:
    """Mean brightness of the plot's columns within 3 px of ``t``, and the median of its
    columns' means."""
    x, y, w, h = r["plot"]
    plot = shot.rgb[y + 4:y + h - 4, x:x + w].astype(float).mean(axis=2)
    cols = plot.mean(axis=0)
    px = round((t - r["t"][0]) / (r["t"][1] - r["t"][0]) * w)
    return float(cols[max(px - 3, 0):px + 4].max()), float(np.median(cols))


def _journey(app: App, site, tag: str) -> None:
    app.wait_window(r"^specscope$")
    app.activate()
    app.key("ctrl+shift+o")
    dlg = app.wait_window(r"^Open folder of recordings$")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(site))
    app.key("Return")
    app.wait_no_window(r"^Open folder of recordings$")
    app.wait_window(r"^site — specscope$")
    app.wait_image()
    r = app.settle()
    assert abs(r["t"][0]) < 1e-6 and abs(r["t"][1] - N_FILES) < 1e-6, r["t"]
    assert re.search(r"site: 200 files, 2024-05-01 12:00:00 UTC to 2024-05-02 16:16:20 UTC, "
                     r"2 gap\(s\)", " ".join(r["status_seen"])), r["status_seen"]
    shot = app.screenshot(f"{tag}-whole-span")
    # the click (8 ms in 200 s) counts in the column that holds it: bright at 121 s
    peak, median = _bright_at(app, shot, r, BOUNDARY)
    assert peak > median + 60, (peak, median)
    # zoom in on it with the wheel, a few pixels off where it is drawn
    spans = []
    for _ in range(4):
        x, y = app.to_px(BOUNDARY, 2000.0, r)
        n = r["images"]
        app.wheel(x + 2, y, 4)
        r = app.wait_report(lambda q, s=r["t"][1] - r["t"][0]: q["t"][1] - q["t"][0] < 0.5 * s,
                            "the view to zoom in")
        app.wait_image(after=n)
        r = app.settle()
        spans.append(r["t"][1] - r["t"][0])
        assert r["t"][0] <= BOUNDARY <= r["t"][1], r["t"]
        peak, median = _bright_at(app, app.screenshot(f"{tag}-zoom-{len(spans)}"), r, BOUNDARY)
        assert peak > median + 60, (spans, peak, median)
    assert spans[-1] < 2.0, spans
    # the readout names the file on each side of the boundary
    names = {BOUNDARY - 1: _start(BOUNDARY - 1).strftime("%Y%m%d_%H%M%S.wav"),
             BOUNDARY: _start(BOUNDARY).strftime("%Y%m%d_%H%M%S.wav")}
    for k, t in ((BOUNDARY - 1, BOUNDARY - 0.01), (BOUNDARY, BOUNDARY + 0.01)):
        x, y = app.to_px(t, 2000.0, r)
        app.move(x - 3, y)
        app.move(x, y)
        q = app.wait_report(lambda q, k=k: names[k] in q["readout"],
                            f"the readout to name {names[k]}")
        assert re.search(rf"{names[k]} \+00:00\.(98|99|00|01)\d", q["readout"]), q["readout"]
    app.screenshot(f"{tag}-readout-at-the-boundary")
    # Go to date/time: 25 s into the third stretch (axis 175 s), the next day
    width = r["t"][1] - r["t"][0]
    app.key("ctrl+g")
    dlg = app.wait_window(r"^Go to date/time$")
    app.activate(dlg)
    app.type("2024-05-02T16:15:55Z")
    app.key("Return")
    app.wait_no_window(r"^Go to date/time$")
    r = app.wait_report(lambda q: abs((q["t"][0] + q["t"][1]) / 2 - 175.0) < 0.01 * width,
                        "the view centred on 2024-05-02 16:15:55")
    assert abs((r["t"][1] - r["t"][0]) - width) < 0.01 * width
    app.wait_image()
    app.screenshot(f"{tag}-went-to-a-date")


def test_deployment_journey(launch, tmp_path):
    site = _site(tmp_path / "site")
    _journey(launch(), site, "1600x1000")


def test_deployment_journey_small_screen(launch, display_small, tmp_path):
    site = _site(tmp_path / "site")
    _journey(launch(display=display_small), site, "1280x800")
