"""Journey 9: detect, review by keys, export the Raven table, reopen it.

A person opens a 40 s recording with 25 generated calls (chirps and whistles
at 10-20 dB in pink noise with hum), shows the Detect panel (Ctrl+Shift+D),
types the band of the energy detector into its form and clicks Run.  Ctrl+R
starts review: each detection is shown zoomed with its score; the person
decides 20 of them with single keys (A accept, R reject, 1-3 a label of the
label list), takes one back with Ctrl+Z and decides it again, plays one with
Space, then writes the table with Detect › Export detections….  Read back,
the Raven table has every detection, the accepted ones with the labels given
and "accepted" in its Review column, the rejected ones "rejected".
"""

from __future__ import annotations

import re

import numpy as np
import soundfile
from specscope.compute.annotations import read_annotations
from specscope.compute.detect import synth

FS = 32000
N_CALLS = 25
#: the keys of the 20 decisions (1, 2, 3: the label list "call, noise, other")
KEYS = ["a", "r", "1", "2", "a", "3", "r", "a", "1", "a",
        "2", "r", "a", "a", "3", "1", "r", "a", "2", "a"]
LABELS = {"1": "call", "2": "noise", "3": "other"}


def _recording(path):
    plan = synth.plan_calls(40.0, float(FS), N_CALLS, snr_db=(10.0, 20.0), seed=11,
                            hum_amplitude=0.05)
    soundfile.write(str(path), synth.render_all(plan).astype(np.float32), FS, subtype="FLOAT")
    return plan


def _at(app, name, what):
    def shown(q):
        rect = q["widgets"].get(name)
        return rect is not None and rect[0] >= 0 and rect[1] >= 0

    r = app.wait_report(shown, what)
    x, y, w, h = r["widgets"][name]
    return x + w // 2, y + h // 2


def _type_into(app, name, text):
    app.click(*_at(app, name, f"the Detect panel's {name} field"))
    app.key("ctrl+a")
    app.type(text)
    app.key("Tab")


def _showing(app, k, n):
    return app.wait_report(lambda q: f"detection {k} of {n}" in q["status"],
                           f"review to show detection {k} of {n}")


def test_detect_review_export(launch, tmp_path):
    path = tmp_path / "calls.wav"
    plan = _recording(path)
    app = launch(path, env={"SPECSCOPE_AUDIO_OUTPUT": "fake"})
    app.wait_window(r"^calls\.wav — specscope$")
    app.wait_image()
    app.settle()
    app.key("ctrl+shift+d")                              # the Detect panel
    _type_into(app, "detect_band_low", "2500")
    _type_into(app, "detect_band_high", "12500")
    app.click(*_at(app, "detect_run", "the Run button"))
    r = app.wait_report(lambda q: any("detections by detect.energy" in s
                                      for s in [q["status"], *q["status_seen"]]),
                        "the detections")
    seen = " ".join([r["status"], *r["status_seen"]])
    n = int(re.search(r"(\d+) detections by detect\.energy", seen).group(1))
    print(f"energy detector: {n} detections of {N_CALLS} calls")
    assert N_CALLS - 2 <= n <= N_CALLS + 3
    app.settle()
    app.screenshot("detections")

    app.key("ctrl+r")                                    # review
    _showing(app, 1, n)
    app.settle()
    app.screenshot("review-first")
    decided: dict[int, str] = {}
    for k, key in enumerate(KEYS):
        app.key(key)
        decided[k] = key
        _showing(app, min(k + 2, n), n)
        if k == 4:                                       # take the fifth back ...
            app.key("ctrl+z")
            r = _showing(app, 5, n)
            assert "to review" in r["status"]
            app.key("3")                                 # ... and label it 'other'
            decided[k] = "3"
            _showing(app, 6, n)
        if k == 9:
            app.settle()
            app.screenshot("review-mode")
    app.key("space")                                     # play detection 21 in its band
    app.wait_report(lambda q: any(s.startswith("Playing") for s in
                                  [q["status"], *q["status_seen"]]), "the playback to start")
    app.key("space")

    out = tmp_path / "calls.detections.selections.txt"
    app.menu("d", "e")                                   # Detect › Export detections…
    dlg = app.wait_window(r"^Export detections")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(out))
    app.key("Return")
    app.wait_no_window(r"^Export detections")
    app.wait_file(out)
    app.wait_report(lambda q: any("written to" in s for s in [q["status"], *q["status_seen"]]),
                    "the export to finish")
    app.screenshot("exported")

    rows = read_annotations(out, sample_rate=FS)
    assert len(rows) == n
    rows.sort(key=lambda a: a.start_s)
    for k, key in decided.items():
        row = rows[k]
        if key == "r":
            assert row.extra["Review"] == "rejected", k
        else:
            assert row.extra["Review"] == "accepted", k
            assert row.label == LABELS.get(key, "energy"), k
    assert all(row.extra["Review"] == "pending" for row in rows[len(decided):])
    accepted = [row for row in rows if row.extra["Review"] == "accepted"]
    assert len(accepted) == sum(1 for key in decided.values() if key != "r")
    # the accepted ones are calls of the recording
    starts = np.array([c.start_s(FS) for c in plan.calls])
    for a in accepted:
        assert np.min(np.abs(starts - a.start_s)) < 0.05
