"""Journey 2: annotations are never lost.

A person draws three boxes (Ctrl+drag, A, a label, Enter), then tries Ctrl+Q,
File › Open of another file and File › Open of the same file: each asks Save /
Discard / Cancel, and Cancel keeps everything.  Killed (SIGKILL) once the
autosave is written, the app offers the annotations back on the next open of
that recording; Save then writes them and the app quits.  Discard quits
without asking again and leaves no autosave behind.
"""

from __future__ import annotations

import csv
import json
import signal

import numpy as np
import soundfile

BOXES = [((1.0, 2.0), (1000.0, 2000.0), "one"), ((3.5, 4.5), (2500.0, 3500.0), "two"),
         ((6.0, 7.5), (500.0, 1500.0), "three")]


def _wav(path, seed):
    fs = 16000
    rng = np.random.default_rng(seed)
    x = 0.05 * rng.standard_normal(fs * 10)
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


def _draw_box(app, r, span, band, label):
    (t0, t1), (f0, f1) = span, band
    a, b = app.to_px(t0, f1, r), app.to_px(t1, f0, r)
    before = app.grab()
    app.drag(a, b, modifiers=("ctrl",))
    app.key("a")                                    # Annotate selection: the label opens
    app.type(label)
    app.key("Return")
    box = app.window_geometry()
    app.wait_change(box, before[box[1]:box[1] + box[3], box[0]:box[0] + box[2]],
                    f"the box '{label}' to be drawn and listed")
    app.settle()


def _ask_and_cancel(app, shots_name):
    dlg = app.wait_window(r"^Unsaved annotations$")
    app.activate(dlg)
    app.screenshot(shots_name)
    app.key("Escape")
    app.wait_no_window(r"^Unsaved annotations$")
    assert app.alive()


def _open_file(app, path):
    app.key("ctrl+o")
    dlg = app.wait_window(r"^Open recording$")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(path))
    app.key("Return")


def _autosaves(app):
    return sorted((app.config_dir / "specscope" / "autosave").glob("*.json"))


def test_annotations_are_never_lost(launch, tmp_path):
    a_wav, b_wav = _wav(tmp_path / "first.wav", 1), _wav(tmp_path / "second.wav", 2)
    app = launch(a_wav)
    app.wait_window(r"^first\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    for span, band, label in BOXES:
        _draw_box(app, r, span, band, label)
    app.screenshot("three-boxes")

    # Ctrl+Q asks; Cancel keeps the app and the annotations
    app.key("ctrl+q")
    _ask_and_cancel(app, "asked-on-quit")
    # File › Open of another file asks; Cancel keeps this one
    _open_file(app, b_wav)
    _ask_and_cancel(app, "asked-on-open-another")
    assert app.title() == "first.wav* — specscope"
    # reopening the same file asks too
    _open_file(app, a_wav)
    _ask_and_cancel(app, "asked-on-reopen")
    assert app.title() == "first.wav* — specscope"

    # the autosave beside the user config, a few seconds after the last edit
    saved = app.wait_for(lambda: _autosaves(app), "the autosave of the unsaved annotations")
    data = json.loads(saved[0].read_text())
    assert sorted(x["label"] for x in data["annotations"]) == ["one", "three", "two"]

    # killed: the next open of that recording offers them back
    app.kill(signal.SIGKILL)
    app.start(a_wav)
    dlg = app.wait_window(r"^Recover annotations$")
    app.activate(dlg)
    app.screenshot("recover-offered")
    app.key("Return")                               # Recover (the default)
    app.wait_no_window(r"^Recover annotations$")
    app.settle()
    app.screenshot("recovered")
    # Ctrl+Q asks again (recovered is not saved); Save writes them, then the app quits
    out = tmp_path / "kept.csv"
    app.key("ctrl+q")
    dlg = app.wait_window(r"^Unsaved annotations$")
    app.activate(dlg)
    app.key("Return")                               # Save… (the default)
    dlg = app.wait_window(r"^Export annotations$")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(out))
    app.key("Return")
    app.wait_file(out)
    assert app.wait_exit() == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3, rows
    assert not _autosaves(app)
    text = out.read_text()
    for (t0, t1), (f0, f1), label in BOXES:
        assert label in text
    # each box where it was drawn: within two pixels of the view it was drawn on
    px_s = (r["t"][1] - r["t"][0]) / r["plot"][2]
    px_hz = (r["f"][1] - r["f"][0]) / r["plot"][3]
    starts = sorted(float(next(v for k, v in row.items() if k.lower().startswith("start")))
                    for row in rows)
    assert np.allclose(starts, [b[0][0] for b in BOXES], atol=2 * px_s), starts
    assert px_hz > 0

    # Discard: quits at once, no autosave left behind, nothing asked on the next open
    app.start(a_wav)
    app.wait_image()
    r = app.settle()
    _draw_box(app, r, (2.0, 3.0), (1000.0, 3000.0), "gone")
    app.key("ctrl+q")
    dlg = app.wait_window(r"^Unsaved annotations$")
    app.activate(dlg)
    app.key("alt+d")                                # Discard
    assert app.wait_exit() == 0
    assert not _autosaves(app)
