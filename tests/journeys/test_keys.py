"""Journey 3: keys go where a person expects.

After a speed is chosen in the transport bar's combo, Space plays (it does not
type into the combo); after N jumps to an annotation, F2 opens its label and
what is typed (letters that are shortcuts, a space) becomes the label, firing
nothing; typing into the annotation search field fires no single-key shortcut;
with the filter designer open, N is its notch key and never lands in a form field.
"""

from __future__ import annotations

import csv

import numpy as np
import soundfile
from harness import App

#: messages single-key shortcuts show (S, H, Space, L, N in the designer)
SHORTCUT_MESSAGES = ("Select:", "Drag pans", "Playing", "Playback:", "Loop", "Click a spectral")


def _fired(before: list[str], after: list[str]) -> list[str]:
    new = after[len(before):] if after[:len(before)] == before else after
    return [m for m in new if any(k in m for k in SHORTCUT_MESSAGES)]


def _box(app: App, r: dict, t0: float, t1: float, f0: float, f1: float, label: str) -> None:
    before = app.grab()
    app.drag(app.to_px(t0, f1, r), app.to_px(t1, f0, r), modifiers=("ctrl",))
    app.key("a")
    app.type(label)
    app.key("Return")
    g = app.window_geometry()
    app.wait_change(g, before[g[1]:g[1] + g[3], g[0]:g[0] + g[2]], f"the box {label!r}")
    app.settle()


def _centre(rect):
    x, y, w, h = rect
    return x + w / 2, y + h / 2


def test_keys_go_where_a_person_expects(launch, tmp_path):
    fs = 16000
    x = 0.05 * np.random.default_rng(5).standard_normal(fs * 10)
    wav = tmp_path / "keys.wav"
    soundfile.write(str(wav), x.astype(np.float32), fs, subtype="FLOAT")
    app = launch(wav)
    app.wait_window(r"^keys\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    _box(app, r, 1.0, 2.0, 1000.0, 2000.0, "first")
    _box(app, r, 5.0, 6.0, 3000.0, 4000.0, "second")

    # N on the spectrogram jumps to an annotation; F2 opens its label; the typed text, with
    # letters that are shortcuts (l, s, h, z) and a space, is the label and fires nothing
    app.click(*app.to_px(8.0, 6000.0, r))          # the view has the keys
    app.key("Home")
    app.key("n")
    app.key("F2")
    seen = app.report()["status_seen"]
    app.type("loud hiss zone")
    app.key("Return")
    q = app.settle()
    assert not _fired(seen, q["status_seen"]), q["status_seen"]
    app.screenshot("renamed-with-F2")

    # typing into the annotation search field fires no single-key shortcut
    app.click(*_centre(q["widgets"]["annotation_search"]))
    seen = q["status_seen"]
    app.type("shl z")
    q = app.settle()
    assert not _fired(seen, q["status_seen"]), q["status_seen"]
    app.screenshot("typed-into-search")
    app.key("ctrl+a", "BackSpace")

    # a speed chosen from the combo's list: then Space plays (or says why it cannot)
    sx, sy, sw, sh = q["widgets"]["speed"]
    app.click(sx + sw - 6, sy + sh / 2)            # the combo's arrow: its list opens
    app.key("Down", "Return")                      # the next speed, chosen
    app.settle()
    seen = app.report()["status_seen"]
    app.key("space")
    # (without a sound device it says why it cannot: "Error: Playback: …")
    q = app.wait_report(lambda q: any(m.startswith("Playing") or "Playback:" in m
                                      for m in q["status_seen"][len(seen):]),
                        "Space to start playback after choosing a speed")
    app.screenshot("space-after-speed")
    app.key("space")                               # and stops it again

    # the filter designer open: N is its notch key, nothing is typed into its form
    app.click(*app.to_px(8.0, 6000.0, r))
    app.key("ctrl+f")
    form_before = app.settle()
    app.key("n")
    q = app.wait_report(lambda q: any(m.startswith("Click a spectral")
                                      for m in q["status_seen"]), "N to start notch mode")
    app.screenshot("designer-N")
    app.key("n")                                   # off again
    assert form_before["status_seen"] != q["status_seen"]

    # the labels as written (N from the view's middle, 5 s, went to the second box):
    # "first" and "loud hiss zone", nothing else typed anywhere
    out = tmp_path / "labels.csv"
    app.key("ctrl+q")
    app.activate(app.wait_window(r"^Unsaved annotations$"))
    app.key("Return")
    app.activate(app.wait_window(r"^Export annotations$"))
    app.key("ctrl+a")
    app.type(str(out))
    app.key("Return")
    app.wait_file(out)
    assert app.wait_exit() == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    labels = sorted(next(v for k, v in row.items() if k.lower() == "label") for row in rows)
    assert labels == ["first", "loud hiss zone"], rows
