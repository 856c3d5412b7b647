"""A folder of recordings in the app: open it, read dates, gaps and files, go to a date, count
detections per hour.

A generated deployment of 21 one-second files in three contiguous stretches (two gaps: 2 h
13 min and 1 d 2 h), opened through File › Open folder with the folder dialog answered.
"""

from __future__ import annotations

import csv
import math
import re
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from _deployments import T0, stamped
from _gui import TIMEOUT_MS, idle, wait_until
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtWidgets import QFileDialog
from specscope.app.review import Review
from specscope.compute.deployment.timeline import (
    Stretch,
    Timeline,
    diel_counts,
    duration_text,
    offset_text,
)
from specscope.compute.detect import Events
from specscope.widgets.frequency_axis import forward

RATE = 8000
GAP1 = 2 * 3600 + 13 * 60           # "gap 2 h 13 min"
GAP2 = 26 * 3600                    # "gap 1 d 2 h"
# files 0-7 contiguous, 8-14 after the first gap, 15-20 after the second
STARTS = ([float(k) for k in range(8)] + [8.0 + GAP1 + k for k in range(7)]
          + [15.0 + GAP1 + GAP2 + k for k in range(6)])


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    stamped(tmp_path / "site", STARTS, n=RATE, rate=RATE)
    return tmp_path / "site"


def utc(seconds: float) -> datetime:
    """The time ``seconds`` after T0 (the first file's start), UTC."""
    return T0.replace(tzinfo=UTC) + timedelta(seconds=seconds)


def open_site(window, site, monkeypatch) -> None:
    """File › Open folder, the dialog answered with ``site``; until the first image."""
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(site)))
    shown: list[bool] = []
    window.imageShown.connect(lambda: shown.append(True))
    window.menu_actions["open_folder"].trigger()
    wait_until(lambda: shown and window.document is not None, TIMEOUT_MS,
               "the first image of the deployment")


def pixel(window, t: float, f: float) -> QPoint:
    vb = window.view.plot.getViewBox()
    p = window.view.mapFromScene(vb.mapViewToScene(QPointF(t, float(forward(
        window.view.freq_scale, f)))))
    return QPoint(p.x(), p.y())


def test_open_folder_shows_dates_gaps_and_files(window, site, monkeypatch, qtbot):
    assert window.menu_actions["open_folder"].shortcut().toString() == "Ctrl+Shift+O"
    open_site(window, site, monkeypatch)
    rec = window.document.recording
    assert rec.format == "deployment" and len(rec.files) == 21
    assert rec.n_samples == 21 * RATE
    # the gap marks at the first sample after each gap, with their lengths
    assert window.view.gap_labels() == [(8.0, "gap 2 h 13 min"), (15.0, "gap 1 d 2 h")]
    assert len(window.overview.gap_marks) == 2
    assert [m.value() for m in window.overview.gap_marks] == [8.0, 15.0]
    # the whole span: the axis names the date and zone; its ticks read as a clock, the
    # ticks after a gap as the time recording starts again
    window.view.reset_view()
    idle(window)
    axis = window.view.plot.getAxis("bottom")
    window.view.grab()  # the axis draws its ticks
    assert "2024-05-01 – 2024-05-02 (UTC)" in axis.labelText  # the span reaches the next day
    labels = dict(axis.tick_labels())
    assert labels[0.0] == "12:00:00"
    assert labels[8.0] == (utc(8 + GAP1)).strftime("%H:%M:%S") == "14:13:08"
    assert labels[15.0] == (utc(15 + GAP1 + GAP2)).strftime("%H:%M:%S")
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d", v) for v in labels.values()), labels
    # zoomed in as far as the view goes (a few hops): fractions of a second
    window.view.set_time_range(2.99, 3.01)
    idle(window)
    window.view.grab()
    assert axis.step_kind in ("subsecond", "ms")
    labels = dict(axis.tick_labels())
    assert labels[3.0] == "12:00:03"
    assert any(re.fullmatch(r"12:00:0[23]\.\d+|\d{3} ms", v) for v in labels.values()), labels
    # in the third stretch: the next day, on the axis' title too
    window.view.set_time_range(16.0, 18.0)
    idle(window)
    window.view.grab()
    assert "2024-05-02 (UTC)" in axis.labelText
    # the readout under the pointer in the 3rd file (rec0002.wav, 0.5 s into it)
    window.view.set_time_range(0.0, 8.0)
    idle(window)
    p = pixel(window, 2.5, 1000.0)
    qtbot.mouseMove(window.view.viewport(), p + QPoint(3, 2))
    qtbot.mouseMove(window.view.viewport(), p)
    view = window.view
    wait_until(lambda: view._vline.isVisible()
               and abs(view._vline.value() - 2.5) <= view.seconds_per_pixel()
               and "rec0002.wav" in window.cursor_label.text(), what="the readout at 2.5 s")
    t = view._vline.value()
    into = t - 2.0
    text = window.cursor_label.text()
    assert f"rec0002.wav {offset_text(into)}" in text, text
    assert abs(into - 0.5) < 0.05
    assert window.deployment.timeline.format(utc(t)) in text


def test_go_to_a_date_and_into_a_gap(window, site, monkeypatch, qtbot):
    open_site(window, site, monkeypatch)
    window.view.set_time_range(0.0, 2.0)
    idle(window)
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    wait_until(lambda: window.deployment.go_dialog is not None
               and window.deployment.go_dialog.isVisible(), what="the Go to dialog")
    dlg = window.deployment.go_dialog
    # 3.25 s into the second stretch (axis 8 s on): 14:13:11.25 UTC
    qtbot.keyClicks(dlg.field, "2024-05-01T14:13:11.25Z")
    qtbot.keyClick(dlg.field, Qt.Key.Key_Return)
    wait_until(lambda: not dlg.isVisible(), what="the dialog closed")
    t0, t1, _, _ = window.view.visible_range()
    assert math.isclose((t0 + t1) / 2, 11.25, abs_tol=1e-6)
    assert math.isclose(t1 - t0, 2.0, rel_tol=1e-6)
    # into the first gap: one line naming it, the dialog stays, the view too
    window.deployment.go_to_dialog()
    dlg = window.deployment.go_dialog
    wait_until(dlg.isVisible, what="the Go to dialog again")
    qtbot.keyClicks(dlg.field, "2024-05-01 13:00")
    qtbot.keyClick(dlg.field, Qt.Key.Key_Return)
    wait_until(dlg.error.isVisible, what="the error in the dialog")
    message = dlg.error.text()
    assert "\n" not in message
    assert "lies in a gap 2 h 13 min between rec0007.wav and rec0008.wav" in message
    assert "2024-05-01 12:00:08 UTC to 2024-05-01 14:13:08 UTC" in message
    assert window.last_error == message
    assert dlg.isVisible()
    assert window.view.visible_range()[:2] == (t0, t1)
    # outside the recorded span
    assert "lies outside the recording" in window.deployment.go_to("2024-06-01T00:00:00")
    dlg.reject()


def hand_count(times: list[datetime], labels: list[str]) -> dict[tuple[str, int, str], int]:
    out: dict[tuple[str, int, str], int] = {}
    for t, label in zip(times, labels, strict=True):
        key = (t.date().isoformat(), t.hour, label)
        out[key] = out.get(key, 0) + 1
    return out


def test_detections_per_hour_panel_counts_and_exports(window, site, monkeypatch, tmp_path):
    open_site(window, site, monkeypatch)
    # detections in each stretch: axis seconds and their labels
    axis = [0.5, 1.5, 7.9, 9.0, 9.5, 14.2, 16.0, 16.5, 20.9]
    labels = ["bird", "bat", "bird", "bird", "bird", "bat", "bat", "bird", "bird"]
    starts = np.array([round(a * RATE) for a in axis], np.int64)
    events = Events(starts, starts + 400, float(RATE), np.full(9, 500.0), np.full(9, 900.0),
                    np.ones(9), labels, np.full(9, -1), "detect.energy", {})
    window.detection.set_review(Review(events))
    panel = window.deployment.panel
    wait_until(lambda: panel.counts is not None, what="the counts")
    tl = window.deployment.timeline
    expected = hand_count([tl.to_time(a) for a in axis], labels)
    # by hand: stretch 1 at 12:00, stretch 2 at 14:13, stretch 3 next day 16:13
    assert expected == {("2024-05-01", 12, "bird"): 2, ("2024-05-01", 12, "bat"): 1,
                        ("2024-05-01", 14, "bird"): 2, ("2024-05-01", 14, "bat"): 1,
                        ("2024-05-02", 16, "bat"): 1, ("2024-05-02", 16, "bird"): 2}
    c = panel.counts
    got = {(r[0], r[1], r[2]): r[3] for r in c.rows() if r[3]}
    assert got == expected
    grid = panel.shown()  # all labels: dates x hours
    assert grid.shape == (2, 24) and grid[0, 12] == 3 and grid[0, 14] == 3 and grid[1, 16] == 3
    assert grid.sum() == 9
    panel.label_box.setCurrentText("bat")
    assert panel.shown().sum() == 3
    # hours recorded: 8 s at 12:00, 7 s at 14:00, 6 s at 16:00 the next day
    assert c.recorded_s[0, 12] == 8.0 and c.recorded_s[0, 14] == 7.0
    assert c.recorded_s[1, 16] == 6.0 and c.recorded_s[0, 3] == 0.0
    out = tmp_path / "diel" / "per_hour.csv"
    out.parent.mkdir()
    window.deployment.export_to(out)
    wait_until(lambda: out.with_suffix(".png").exists(), what="the CSV and PNG written")
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 24 * 2
    back = {(r["date"], int(r["hour"]), r["label"]): int(r["count"])
            for r in rows if int(r["count"])}
    assert back == expected
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the Qt-free parts -------------------------------------------------------------------


def test_diel_counts_by_hand_in_a_zone():
    times = [datetime(2024, 5, 1, 21, 30, tzinfo=UTC), datetime(2024, 5, 1, 22, 10, tzinfo=UTC),
             datetime(2024, 5, 1, 22, 50, tzinfo=UTC), datetime(2024, 5, 3, 1, 0, tzinfo=UTC)]
    c = diel_counts(times, ["a", "b", "a", ""], tz="+02:00")
    # at +02:00: 23:30 on the 1st, 00:10 and 00:50 on the 2nd, 03:00 on the 3rd
    assert [d.isoformat() for d in c.dates] == ["2024-05-01", "2024-05-02", "2024-05-03"]
    assert c.labels == ["(none)", "a", "b"]
    assert {(r[0], r[1], r[2]): r[3] for r in c.rows() if r[3]} == {
        ("2024-05-01", 23, "a"): 1, ("2024-05-02", 0, "a"): 1, ("2024-05-02", 0, "b"): 1,
        ("2024-05-03", 3, "(none)"): 1}
    assert np.isnan(c.recorded_s).all()  # no timeline: not known


def test_timeline_ticks_from_months_to_milliseconds():
    tl = Timeline([Stretch(0.0, 400 * 86400.0, datetime(2024, 1, 15, tzinfo=UTC))], "UTC")
    kind, ticks = tl.ticks(0.0, 400 * 86400.0, 8)
    assert kind == "month" and ticks[0][1] == "2024-03"
    assert tl.ticks(0.0, 3 * 86400.0, 8)[1][0][1] == "2024-01-15"
    kind, ticks = tl.ticks(3600.0, 3600.0 + 600, 6)
    assert kind == "minute" and [v for _, v in ticks][:2] == ["01:00", "01:02"]
    kind, ticks = tl.ticks(10.0, 10.5, 6)
    assert kind == "subsecond" and ticks[1] == (10.1, "00:00:10.1")
    kind, ticks = tl.ticks(10.0, 10.01, 6)
    assert kind == "ms" and ticks[1][1] == "002 ms"
    assert duration_text(GAP1) == "2 h 13 min" and duration_text(GAP2) == "1 d 2 h"


def test_files_left_out_are_one_line_each_and_a_dropped_folder_opens(window, site, qtbot):
    import soundfile

    # another sample rate, and a file that is no WAV: each one line, the rest opens
    soundfile.write(str(site / "other_rate.wav"), np.zeros(4000, np.float32), 4000)
    (site / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    before = {p.name: p.stat().st_mtime_ns for p in site.iterdir()}

    class Drop:  # what a folder dropped from a file manager brings
        def mimeData(self):
            from PyQt6.QtCore import QMimeData, QUrl

            data = QMimeData()
            data.setUrls([QUrl.fromLocalFile(str(site))])
            self.data = data
            return data

        def acceptProposedAction(self):
            self.accepted = True

    shown: list[bool] = []
    window.imageShown.connect(lambda: shown.append(True))
    drop = Drop()
    window.dropEvent(drop)
    wait_until(lambda: shown and window.document is not None, TIMEOUT_MS, "the deployment")
    assert drop.accepted and window.document.recording.format == "deployment"
    texts = window.message_log.texts()
    problems = [t for t in texts if "other_rate.wav" in t or "broken.wav" in t]
    assert len(problems) == 2 and all("\n" not in t for t in problems), texts
    status = next(t for t in texts if t.startswith("site: 21 files"))  # the status bar said
    assert "2 file(s) left out" in status and "View › Messages" in status, status
    # nothing in the folder was written
    assert {p.name: p.stat().st_mtime_ns for p in site.iterdir()} == before


def test_the_time_axis_title_names_each_day_a_view_spans():
    tl = Timeline([Stretch(0.0, 3600.0, datetime(2024, 5, 1, 23, 30, tzinfo=UTC)),
                   Stretch(3600.0, 7200.0, datetime(2024, 5, 3, 1, 0, tzinfo=UTC))], "UTC")
    assert tl.caption(0.0) == "2024-05-01 (UTC)"
    assert tl.caption(0.0, 600.0) == "2024-05-01 (UTC)"
    assert tl.caption(0.0, 3000.0) == "2024-05-01 – 2024-05-02 (UTC)"
    assert tl.caption(600.0, 7000.0) == "2024-05-01 – 2024-05-03 (UTC)"
