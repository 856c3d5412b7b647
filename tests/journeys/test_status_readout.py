"""Journey 7: the status bar and the readout tell the truth.

While a file loads the status says "Opening NAME…"; the readout's times read as
the time axis does (h:mm:ss on a 2000 s recording), Δt in s above 10 s; a new
file clears the readout and the Δ reference; the readout is never cut, at
1600x1000 or at 1280x800.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import soundfile
from harness import App, JourneyTimeout


def _wav(path, seconds, fs, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * fs)) / fs
    x = 0.3 * np.sin(2 * np.pi * 0.2 * fs * t) + 0.01 * rng.standard_normal(t.size)
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


def _clock(text: str) -> float:
    m = re.search(r"t = (\d+):(\d\d):(\d\d\.\d{3})\b", text)
    assert m, f"the readout's time is not h:mm:ss.fff: {text!r}"
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))


def _hover(app: App, t: float, f: float, what: str) -> dict:
    x, y = app.to_px(t, f)
    app.move(x - 3, y)
    app.move(x, y)
    return app.wait_report(lambda q: q["readout"].startswith("t = ") and
                           abs(app.from_px(x, y, q)[0] - t) < 1e9, what)


def _not_cut(app: App, r: dict) -> None:
    x, _, w, _ = r["readout_rect"]
    wx, _, ww, _ = app.window_geometry()
    assert r["readout_text_px"] <= w, (r["readout"], r["readout_text_px"], w)
    assert wx <= x and x + w <= wx + ww, (r["readout_rect"], app.window_geometry())


def _journey(app: App, long_wav, short_wav, tag: str) -> dict:
    app.wait_window(rf"^{long_wav.name.replace('.', '[.]')} — specscope$")
    app.wait_image()
    r = app.settle()
    seen = r["status_seen"]
    opening = f"Opening {long_wav.name}…"
    assert opening in seen, seen
    assert r["status"] != opening  # gone once the image is drawn
    # the axis reads h:mm:ss on 2000 s; so does the readout
    sec_per_px = (r["t"][1] - r["t"][0]) / r["plot"][2]
    x, y = app.to_px(1500.0, 100.0, r)
    app.move(x - 2, y)
    app.move(x, y)
    q = app.wait_report(lambda q: "t = " in q["readout"] and "|" not in q["readout"],
                        "the readout at 1500 s")
    t_shown = _clock(q["readout"])
    t_px = app.from_px(x, y, q)[0]
    assert abs(t_shown - t_px) <= 2 * sec_per_px, (q["readout"], t_px)
    # a click sets the reference at 1000 s; at 1500 s Δt reads in seconds
    x0, _ = app.to_px(1000.0, 100.0, r)
    app.click(x0, y)
    app.move(x - 2, y)
    app.move(x, y)
    q = app.wait_report(lambda q: "Δt = " in q["readout"], "the Δ readout")
    m = re.search(r"Δt = ([+-]\d+\.\d{3}) s\b", q["readout"])
    assert m, q["readout"]
    expect = app.from_px(x, y, q)[0] - app.from_px(x0, y, q)[0]
    assert abs(float(m.group(1)) - expect) <= 3 * sec_per_px, (q["readout"], expect)
    _not_cut(app, q)
    app.screenshot(f"{tag}-readout-with-reference")
    # another file: "Opening NAME…", and nothing of the first file stays in the readout
    app.key("ctrl+o")
    dlg = app.wait_window(r"^Open recording$")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(short_wav))
    app.key("Return")
    app.wait_window(rf"^{short_wav.name.replace('.', '[.]')} — specscope$")
    q = app.wait_report(lambda q: f"Opening {short_wav.name}…" in q["status_seen"],
                        "the status to say what opens")
    q = app.wait_report(lambda q: "Δt" not in q["readout"] and "0:25" not in q["readout"],
                        "the readout of the first file to go")
    r2 = app.settle()
    assert r2["t"][1] <= 6.0, r2["t"]
    # the waveform row under a short file's spectrogram may still be growing in (it
    # shrinks the plot), so a hover that missed is aimed again from a fresh report
    for attempt in range(4):
        x, y = app.to_px(2.5, 500.0, app.settle())
        app.move(x - 2, y)
        app.move(x, y)
        try:
            q = app.wait_report(lambda q: q["readout"].startswith("t = 2."),
                                "the readout at 2.5 s", timeout=15 if attempt < 3 else None)
            break
        except JourneyTimeout:
            if attempt == 3:
                raise
    assert "Δt" not in q["readout"] and re.match(r"t = 2\.\d{4} s\b", q["readout"]), q["readout"]
    app.screenshot(f"{tag}-second-file")
    return q


@pytest.fixture
def recordings(tmp_path):
    return (_wav(tmp_path / "a-long-night-recording-of-the-garden.wav", 2000.0, 1000),
            _wav(tmp_path / "short.wav", 5.0, 8000, seed=1))


def test_status_and_readout_tell_the_truth(launch, recordings):
    long_wav, short_wav = recordings
    _journey(launch(long_wav), long_wav, short_wav, "1600x1000")


def test_the_readout_is_never_cut_at_1280x800(launch, display_small, recordings):
    long_wav, short_wav = recordings
    _journey(launch(long_wav, display=display_small), long_wav, short_wav, "1280x800")
