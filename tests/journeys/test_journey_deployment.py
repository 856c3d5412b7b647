"""Journey: a folder of 200 recordings as one timeline.

A person opens a deployment (200 one-second WAVs named by their start times, two gaps:
2 h 13 min and 1 d 2 h) with File › Open folder (Ctrl+Shift+O, the path typed into the
dialog), sees the whole span with the gaps marked, finds a click that crosses the boundary
of two files in the whole-span image, zooms into it with the wheel (it stays in view,
bright, at every zoom), reads the two files' names at it in the readout, and goes to a date
on the next day with Go to date/time (Ctrl+G).  Then, on a folder of 40 files, runs a
detector and reviews its detections across files and a gap, reading each one's date and
time, file and time into it whole in the banner over the plot.  Both at 1600x1000 and at
1280x800.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np
import pytest
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


# -- detect on a deployment, review across files -------------------------------------------
CALLS = {10: 0.4, 11: 0.6, 30: 0.5}  # file: start of a 0.2 s 2 kHz call in it (s)
GAP = 3600                             # after file 19


def _calls_site(folder):
    """40 one-second files, an hour's gap after the 20th, three calls: in two contiguous
    files and after the gap."""
    folder.mkdir()
    rng = np.random.default_rng(3)
    n = int(0.2 * RATE)
    call = 0.2 * np.sin(2 * np.pi * 2000.0 * np.arange(n) / RATE) * np.hanning(n)
    names = []
    for k in range(40):
        x = 0.003 * rng.standard_normal(RATE)
        if k in CALLS:
            i = int(CALLS[k] * RATE)
            x[i:i + n] += call
        names.append((T0 + timedelta(seconds=k + (GAP if k >= 20 else 0)))
                     .strftime("%Y%m%d_%H%M%S.wav"))
        soundfile.write(str(folder / names[-1]), x.astype(np.float32), RATE, subtype="FLOAT")
    return names


def _at(app: App, name: str, what: str) -> tuple[int, int]:
    def shown(q):
        rect = q["widgets"].get(name)
        return rect is not None and rect[0] >= 0 and rect[1] >= 0

    x, y, w, h = app.wait_report(shown, what)["widgets"][name]
    return x + w // 2, y + h // 2


def _type_into(app: App, name: str, text: str) -> None:
    app.click(*_at(app, name, f"the Detect panel's {name} field"))
    app.key("ctrl+a")
    app.type(text)
    app.key("Tab")


@pytest.mark.parametrize("screen", ["1600x1000", "1280x800"])
def test_detect_and_review_across_files(launch, request, tmp_path, screen):
    site = tmp_path / "site"
    names = _calls_site(site)
    display = request.getfixturevalue("display_small") if screen == "1280x800" else None
    app = launch(site, env={"SPECSCOPE_AUDIO_OUTPUT": "fake"}, display=display)
    app.wait_window(r"^site — specscope$")
    app.wait_image()
    app.settle()
    app.key("ctrl+shift+d")                              # the Detect panel
    _type_into(app, "detect_band_low", "1500")
    _type_into(app, "detect_band_high", "2500")
    app.click(*_at(app, "detect_run", "the Run button"))
    r = app.wait_report(lambda q: any("detections by detect.energy" in s
                                      for s in [q["status"], *q["status_seen"]]),
                        "the detections")
    seen = " ".join([r["status"], *r["status_seen"]])
    assert re.search(r"\b3 detections by detect\.energy", seen), seen
    app.settle()
    app.screenshot("detections")
    main = set(app.windows())
    app.key("ctrl+r")                                    # review, in time order
    # each detection's file: the readout names it with the pointer on the call
    for k, (file, at) in enumerate(CALLS.items(), start=1):
        if k > 1:
            app.key("n")
        r = app.wait_report(lambda q, k=k: _banner(q).startswith(f"Review {k} / 3"),
                            f"review to show detection {k} of 3")
        axis = file + at + 0.1                           # the call's middle on the axis
        r = app.wait_report(lambda q, a=axis: q["t"][0] < a < q["t"][1],
                            f"the view around detection {k}")
        app.wait_image()
        r = app.settle()
        # the banner over the plot names the detection's date and time, the file it is in
        # and the time into it, whole
        into = _banner_times(r, names[file], file + (GAP if file >= 20 else 0))
        assert abs(into - at) < 0.05, r["review_banner"]
        banner = r["review_banner"]
        assert banner["text_px"] <= banner["room_px"], banner
        bx, by, bw, bh = banner["rect"]
        plot_x, plot_y, plot_w, plot_h = r["plot"]
        assert plot_x <= bx and bx + bw <= plot_x + plot_w, (banner, r["plot"])
        assert plot_y <= by and by + bh <= plot_y + plot_h, (banner, r["plot"])
        # the status line is short: the keys
        assert r["status"] == "A accept, R reject, 1–3, N/P, Esc", r["status"]
        x, y = app.to_px(axis, 2000.0, r)
        app.move(x - 3, y)
        app.move(x, y + 1)
        q = app.wait_report(lambda q, f=names[file]: f in q["readout"],
                            f"the readout to name {names[file]}")
        assert re.search(rf"{names[file]} \+00:00\.[5-8]\d\d", q["readout"]), q["readout"]
        # read whole beside the readout's date and file (once the bar is laid out again)
        q = app.wait_report(lambda q: q["status_text_px"] <= q["status_rect"][2],
                            "the status line whole beside the readout")
        assert q["status"] == r["status"] and names[file] in q["readout"], q
        # no dialog at the file change: the app shows the same windows as before review
        assert set(app.windows()) == main, app.windows()
        shot = app.screenshot(f"review-{k}-{names[file]}")
        # the call is drawn: its 2 kHz row is bright at the pointer
        px = shot.rgb[y - 2:y + 3, x - 2:x + 3].astype(float).mean()
        plot = shot.crop(r["plot"]).astype(float).mean()
        assert px > plot + 40, (px, plot)


def _banner(report: dict) -> str:
    """The review banner's text in the app's report ("" while it is hidden)."""
    return (report.get("review_banner") or {}).get("text", "")


def _banner_times(report: dict, name: str, start_s: float) -> float:
    """The time into its file (s) that the review banner gives, with the file it names
    (``name``, recorded from ``start_s`` after T0, UTC) and its date and time checked
    against it."""
    text = _banner(report)
    m = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC(?:  ·  |\n)(\S+) "
                  r"\+00:(\d\d\.\d{3})", text)
    assert m and m.group(2) == name, text
    when = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f")
    into = float(m.group(3))
    assert abs((when - T0).total_seconds() - (start_s + into)) < 0.0015, text
    return into
