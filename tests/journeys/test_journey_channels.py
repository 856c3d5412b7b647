"""Journey 6: stacked channels.

A person opens a stereo recording with its channels stacked (``--channel -1``),
Ctrl+drags a box that starts on channel 1's band and ends on channel 0's, annotates
it and exports the annotations as a Raven table.  The box must stay on channel 1,
clamped at the bottom of its band (before, it became a 21757–22050 Hz strip on the
other channel): the table says Channel 2 (Raven counts from 1), a low edge at 0 Hz
and the high edge where the drag began.  Then a Raven table with a selection on
channel 2 is imported and exported again: it stays on channel 2.
"""

from __future__ import annotations

import csv

import numpy as np
import soundfile

FS = 16000
NFFT = 1024


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _save_dialog(app, pattern, path):
    dlg = app.wait_window(pattern)
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(path))
    app.key("Return")
    app.wait_no_window(pattern)


def test_a_box_stays_on_its_channel(launch, tmp_path):
    t = np.arange(3 * FS) / FS
    x = np.stack([0.5 * np.sin(2 * np.pi * 1000 * t), 0.25 * np.sin(2 * np.pi * 3000 * t)], 1)
    path = tmp_path / "stereo.wav"
    soundfile.write(str(path), x.astype(np.float32), FS, subtype="FLOAT")
    app = launch(path, "--channel", "-1", "--nfft", str(NFFT))
    app.wait_window(r"^stereo\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    # the stacked axis: channel 0's band below, a gap, channel 1's band above; each band
    # covers the bins' edges, -df/2 .. fs/2 + df/2
    y0, y1 = r["y"]
    df = FS / NFFT
    span = FS / 2 + df
    band = span + (y1 - y0 - 2 * span)          # a band and the gap above it
    top_hz = 0.6 * FS / 2                       # where the drag starts, in channel 1's band
    start = app.to_px(0.5, band + top_hz + df / 2, r)
    end = app.to_px(1.5, 0.3 * FS / 2, r)       # ends on channel 0's band
    app.drag(start, end, modifiers=["ctrl"])
    app.screenshot("box-dragged")
    app.key("Return")                           # annotate the selection
    app.type("call")
    app.key("Return")
    app.screenshot("annotated")
    out = tmp_path / "marks.selections.txt"
    app.menu("f", "a")                          # File › Export annotations…
    _save_dialog(app, r"[Ee]xport annotations", out)
    app.wait_file(out)
    rows = [row for row in _rows(out) if row.get("View", "").startswith("Spectrogram")]
    assert len(rows) == 1, rows
    row = rows[0]
    low, high = float(row["Low Freq (Hz)"]), float(row["High Freq (Hz)"])
    print(f"box: channel {row['Channel']}, {low:.1f}–{high:.1f} Hz "
          f"(drag began at {top_hz:.0f} Hz of channel 1)")
    assert row["Channel"] == "2" and row["Annotation"] == "call"
    assert low == 0.0
    px_hz = (y1 - y0) / r["plot"][3]
    assert abs(high - top_hz) <= 3 * px_hz
    # a Raven selection on channel 2 lands on channel 2
    table = tmp_path / "in.selections.txt"
    table.write_text("Selection\tView\tChannel\tBegin Time (s)\tEnd Time (s)\tLow Freq (Hz)"
                     "\tHigh Freq (Hz)\tAnnotation\n"
                     "7\tSpectrogram 1\t2\t2.0\t2.5\t2500\t3500\tright\n")
    app.menu("f", "t")                          # File › Import annotations…
    dlg = app.wait_window(r"[Ii]mport annotations")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(table))
    app.key("Return")
    app.wait_no_window(r"[Ii]mport annotations")
    app.screenshot("imported")
    out.unlink()
    app.menu("f", "a")
    _save_dialog(app, r"[Ee]xport annotations", out)
    app.wait_file(out)
    rows = {row["Annotation"]: row for row in _rows(out)
            if row.get("View", "").startswith("Spectrogram")}
    assert rows["right"]["Channel"] == "2" and rows["call"]["Channel"] == "2"
