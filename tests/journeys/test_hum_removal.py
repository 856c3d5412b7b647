"""Journey 1: remove mains hum from a speech recording by clicking the line.

A person opens a recording of talk with hum at 49.93 Hz and harmonics 2–7 (each
fluctuating ±20 %), zooms to 0–350 Hz at FFT size 1024 (one bin is 46.9 Hz
wide at 48 kHz), opens the filter designer, presses N and clicks at 47.6 Hz;
undoes that and clicks at 56.1 Hz instead.  Both clicks must fit the line as
``specscope filter notch --near`` does (one function, same defaults), and the
exported WAV has every detected harmonic at least 40 dB down (Welch, 0.1 Hz
bins, in the pause after the talk) and the talk's 300–3000 Hz band within
0.1 dB.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import soundfile
from harness import SPECSCOPE, wait_for
from scipy import signal
from signals import HUM_HZ, hummy_speech

FS = 48000
SPEECH_S = 14.0


def _cli_fit(path: Path, near: float, out: Path) -> tuple[float, str]:
    """`specscope filter notch --near`: the fitted frequency and its harmonics text."""
    res = subprocess.run([SPECSCOPE, "filter", "notch", str(path), "--near", str(near),
                          "-o", str(out)], capture_output=True, text=True, check=False,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    m = re.search(r"line: ([\d.]+) Hz, (.*?) above the floor", res.stderr)
    assert m, res.stderr
    return json.loads(out.read_text())["frequency"], m.group(2)


def _notch_steps(pipeline: Path) -> list[dict]:
    """The notch steps of a saved pipeline (the designer's chain, applied)."""
    data = json.loads(pipeline.read_text())
    found = []

    def walk(obj):
        if isinstance(obj, dict):
            if obj.get("design") in ("notches", "iircomb", "iirnotch"):
                found.append(obj)
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)
    walk(data)
    return found


def _save_pipeline(app, path: Path) -> list[dict]:
    path.unlink(missing_ok=True)
    app.menu("f", "n")                                  # File › Save pipeline…
    dlg = app.wait_window(r"[Pp]ipeline")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(path))
    app.key("Return")
    app.wait_file(path)
    app.wait_no_window(r"[Pp]ipeline")
    return _notch_steps(path)


def _click_line(app, near_hz: float, t: float, before_msg: str) -> None:
    r = app.report()
    app.key("n")                                         # the designer's "click a line" key
    x, y = app.to_px(t, near_hz, r)
    app.click(x, y)


def _welch_db(x: np.ndarray, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    f, p = signal.welch(x[int(a * FS):int(b * FS)], FS, nperseg=10 * FS)  # 0.1 Hz bins
    return f, p


def test_hum_removal_by_clicking_the_line(launch, tmp_path):
    x, _speech = hummy_speech(FS, 30.0, SPEECH_S)
    wav = tmp_path / "talk-hum.wav"
    soundfile.write(str(wav), x.astype(np.float32), FS, subtype="FLOAT")
    cli_f, cli_harmonics = _cli_fit(wav, 47.0, tmp_path / "cli.json")
    assert abs(cli_f - HUM_HZ) < 0.01, cli_f

    app = launch(wav)
    app.wait_window(r"^talk-hum\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    shot = app.screenshot("opened")
    # zoom to 0–350 Hz: zoom boxes (Z, then drag) over the whole time span, the first to
    # about 0–3 kHz (at 24 kHz on 500 pixels one pixel is ~50 Hz), the second to 0–350 Hz
    x0, _, w, _ = r["plot"]
    for goal in (3000.0, 350.0):
        app.key("z")
        top = app.to_px(0.0, goal, r)[1]
        bottom = app.to_px(0.0, 0.0, r)[1]
        app.drag((x0 + 2, top), (x0 + w - 2, bottom))
        app.wait_report(lambda q, g=goal: q["f"][1] < 1.5 * g, f"the zoom box to show 0–{goal:g} Hz")
        app.key("z")                                     # back to panning
        r = app.settle()
    # (the image starts half a bin, 23.4 Hz, below 0 Hz: the box stops there)
    assert 320 < r["f"][1] < 380 and -24 < r["f"][0] < 10, r["f"]
    shot = app.screenshot("zoomed-0-350Hz")
    # open the filter designer (Ctrl+F) so that N is its "click a line" key
    app.key("ctrl+f")
    r = app.wait_report(lambda q: q["seq"] > r["seq"], "the view to settle beside the designer")
    app.wait_still(r["plot"])
    t_mid = 0.5 * (r["t"][0] + r["t"][1])

    # click 1: at 47.6 Hz
    before = shot.crop(r["plot"])
    _click_line(app, 47.6, t_mid, "")
    app.wait_change(r["plot"], before, "the notch to change the view")
    steps = wait_for(lambda: _save_pipeline(app, tmp_path / "p1.json"),
                     "a notch in the saved pipeline")
    shot1 = app.screenshot("notched-at-47.6Hz")
    assert len(steps) == 1, steps
    gui1 = steps[0]

    # undo, then click 2: at 56.1 Hz
    app.key("ctrl+z")
    wait_for(lambda: not _save_pipeline(app, tmp_path / "p-undone.json"),
             "undo to take the notch away")
    before = app.screenshot("undone").crop(r["plot"])
    _click_line(app, 56.1, t_mid, "")
    app.wait_change(r["plot"], before, "the second notch to change the view")
    steps = wait_for(lambda: _save_pipeline(app, tmp_path / "p2.json"),
                     "a notch in the saved pipeline")
    assert len(steps) == 1, steps
    gui2 = steps[0]
    app.screenshot("notched-at-56.1Hz")

    cli = json.loads((tmp_path / "cli.json").read_text())
    for gui in (gui1, gui2):
        assert abs(gui["frequency"] - cli_f) <= 0.02, (gui, cli_f)
        assert gui["design"] == cli["design"] and gui.get("harmonics") == cli.get("harmonics"), \
            (gui, cli)

    # export the whole recording through the processing (File › Export range…)
    out = tmp_path / "dehummed.wav"
    app.menu("f", "r")
    dlg = app.wait_window(r"^Export range$")
    app.activate(dlg)
    app.screenshot("export-range-dialog")
    app.key("ctrl+a")
    app.type(str(out))
    app.key("Return")
    app.wait_file(out, timeout=120)
    app.wait_no_window(r"^Export range$")
    y, fs = soundfile.read(str(out), dtype="float64", always_2d=True)
    assert fs == FS and y.shape[0] == x.size, (fs, y.shape)
    y = y[:, 0]

    # every harmonic the fit found: at least 40 dB down, in the pause after the talk
    f, px = _welch_db(x, SPEECH_S + 1.0, 30.0)
    _, py = _welch_db(y, SPEECH_S + 1.0, 30.0)
    n_harm = int(cli.get("harmonics") or 1)
    down = {}
    for k in range(1, n_harm + 1):
        i = int(np.argmin(np.abs(f - k * cli_f)))
        sl = slice(i - 1, i + 2)
        down[k] = 10 * np.log10(px[sl].max() / py[sl].max())
    print("dB down per harmonic:", {k: round(v, 1) for k, v in down.items()})
    assert all(v >= 40.0 for v in down.values()), down
    # the talk's 300–3000 Hz band: within 0.1 dB
    f, px = _welch_db(x, 0.0, SPEECH_S)
    _, py = _welch_db(y, 0.0, SPEECH_S)
    band = (f >= 300) & (f <= 3000)
    change = 10 * np.log10(py[band].sum() / px[band].sum())
    print(f"GUI fits {gui1['frequency']:.4f} / {gui2['frequency']:.4f} Hz, CLI {cli_f:.4f} Hz "
          f"({cli_harmonics}); band change {change:+.3f} dB; shots {shot1.path.parent}")
    assert abs(change) <= 0.1, change
