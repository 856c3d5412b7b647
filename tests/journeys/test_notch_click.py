"""Journey: notch mains hum with a hand's click at the default zoom (issue 39, item 1).

A person opens 20 s of talk (a voice's harmonics at 110–330 Hz) with 49.9 Hz hum and its
harmonics, keeps the full view (0–24 kHz: one pixel is 64 Hz at 1600x1000 and 88 Hz at
1280x800 with the filter designer open, so the hum and its harmonics up to 350 Hz are one bright line a few pixels
high at the bottom), opens the filter designer, presses N and clicks 2, 5 and 8 pixels
above the hum's row, as a hand does.  Each click must notch the hum (49.9 Hz, harmonics
1–7) and name the voice as also near, not notch a voice harmonic as "the fundamental".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _hum_and_voice import FS, HUM_HZ, is_voice, talk_with_hum

READOUT = re.compile(r"f = (-?[\d.]+) (k?Hz)")
#: what a click in notch mode ends with: a line measured ("… 49.90 Hz, harmonics …"), or not
RESULT = re.compile(r"^(?:Error: |.*\d Hz, )")


def _results(seen: list[str]) -> list[str]:
    return [m for m in seen if RESULT.match(m)]


def _hover_hz(app, x: int, y: int) -> float:
    """The frequency the readout shows with the pointer at (x, y) (Hz); (x, y) must not be
    where the pointer is (the readout would not change)."""
    before = app.report()["readout"]
    app.move(x, y)
    q = app.wait_report(lambda q: q["readout"] != before and READOUT.search(q["readout"]),
                        f"the readout at row {y}")
    m = READOUT.search(q["readout"])
    return float(m.group(1)) * (1000.0 if m.group(2) == "kHz" else 1.0)


@pytest.mark.parametrize("small", [False, True], ids=["1600x1000", "1280x800"])
def test_clicks_a_few_pixels_above_the_hum_notch_the_hum(launch, display_small, tmp_path,
                                                         small):
    wav = tmp_path / "talk-hum.wav"
    soundfile.write(str(wav), talk_with_hum(20.0).astype(np.float32), FS, subtype="FLOAT")
    app = launch(wav, display=display_small if small else None)
    app.wait_window(r"^talk-hum\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    assert r["f"][0] < 0 and r["f"][1] > 0.99 * FS / 2, r["f"]       # the default zoom
    app.key("ctrl+f")                                  # the designer: N is its notch key
    r = app.wait_report(lambda q: q["seq"] > r["seq"], "the view to settle beside the designer")
    app.wait_still(r["plot"])
    r = app.report()
    x0, _, w, h = r["plot"]
    hz_per_px = (r["f"][1] - r["f"][0]) / h
    x = round(x0 + 0.5 * w)
    # the hum's row: where the readout under the pointer (the view's own axis mapping) is
    # nearest 49.9 Hz, among the rows the report's mapping puts around it
    _, y_guess = app.to_px(0.5 * (r["t"][0] + r["t"][1]), HUM_HZ, r)
    bottom = r["plot"][1] + h - 1
    # (each hover a column further right: the readout's time changes even on a row hovered
    # before)
    rows = {y: _hover_hz(app, x - 10 + i, y)
            for i, y in enumerate(range(min(y_guess + 2, bottom), y_guess - 4, -1))}
    y_hum = min(rows, key=lambda y: abs(rows[y] - HUM_HZ))
    assert abs(rows[y_hum] - HUM_HZ) <= 0.5 * hz_per_px, rows
    found = []
    for pixels in (2, 5, 8):
        at_hz = _hover_hz(app, x, y_hum - pixels)
        app.key("n")
        app.wait_report(lambda q: q["status_seen"][-1].startswith("Click a spectral line"),
                        "N to start notch mode")
        app.click(x, y_hum - pixels)
        # (after "Click a spectral line…", the next message is what the click found)
        q = app.wait_report(lambda q: RESULT.match(q["status_seen"][-1]),
                            f"the line under a click {pixels} px above the hum", timeout=120)
        message = q["status_seen"][-1]
        shot = app.screenshot(f"clicked-{pixels}px-above-the-hum")
        found.append((pixels, at_hz, message))
        m = re.match(r"^(?:A comb|\d+ notches) for ([\d.]+) Hz, harmonics 1–7 above the "
                     r"floor; also near: ([\d.]+) Hz", message)
        assert m, (pixels, at_hz, hz_per_px, message, shot.path)
        assert abs(float(m.group(1)) - HUM_HZ) <= 0.05, (pixels, message)
        assert is_voice(float(m.group(2))), (pixels, message)
    print(f"{hz_per_px:.1f} Hz per pixel; hum row y={y_hum} ({rows[y_hum]:g} Hz); " +
          "; ".join(f"+{p} px ({hz:g} Hz): {msg}" for p, hz, msg in found))
    assert len(_results(app.report()["status_seen"])) >= 3
