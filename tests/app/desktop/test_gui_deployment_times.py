"""Times on a deployment in the annotation list and the Export range dialog, and the type and
name of Detect › Export detections… (issue 40), through the real widgets.

The deployment is the one of ``test_gui_deployment``: 21 one-second files in three
contiguous stretches (gaps of 2 h 13 min and 1 d 2 h) from 2024-05-01 12:00:00 UTC.  The
list and the dialog write each time as the readout does (date, time, zone); the dialog's
fields take a typed date and time as well as seconds and give back what they show (in the
hour a clock shows twice when summer time ends too).  A single recording without a start
time keeps its seconds.  Detect › Export detections… writes the type chosen in its Save
dialog under a name with that type's extension, whatever the order they were chosen in.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
import soundfile
from _deployments import stamped
from _gui import TIMEOUT_MS, idle, open_and_wait, wait_until
from PyQt6.QtCore import QPoint, Qt
from PyQt6.QtWidgets import QDialogButtonBox
from specscope.app.review import Review
from specscope.compute.annotations import Annotation, read_annotations
from specscope.compute.deployment.timeline import Stretch, Timeline, offset_text
from specscope.compute.detect import Events
from specscope.widgets.annotation_list import COLUMNS
from specscope.widgets.export_dialog import ExportRangeDialog
from test_first_hour_exports import (
    _click,
    _file_dialog_parts,
    _pick,
    _save_button,
    _type,
)
from test_gui_deployment import GAP1, GAP2, RATE, STARTS, open_site, utc


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The deployment of ``test_gui_deployment`` (its index cached under ``tmp_path``)."""
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    stamped(tmp_path / "site", STARTS, n=RATE, rate=RATE)
    return tmp_path / "site"

#: annotations on the deployment's axis: in file 2, across files 9|10 (after the first gap),
#: in the third stretch (the next day)
MARKS = [Annotation(start_s=2.25, stop_s=2.75, label="one"),
         Annotation(start_s=9.5, stop_s=10.125, label="two"),
         Annotation(start_s=16.0625, stop_s=17.5, label="three")]


def _date(window, t: float) -> str:
    tl = window.deployment.timeline
    return tl.format(tl.to_time(t))


def _row_rect_center(lst, uuid: str, column: int) -> QPoint:
    index = lst.proxy.index(lst.row_of(uuid), column)
    return lst.table.visualRect(index).center()


def test_the_annotation_list_shows_dates_and_files_on_a_deployment(window, site, monkeypatch,
                                                                   qtbot):
    open_site(window, site, monkeypatch)
    window.annotations.set_annotations(MARKS)
    idle(window)
    lst = window.annotations.list
    header = [lst.model.headerData(c, Qt.Orientation.Horizontal) for c in range(2)]
    assert header == ["Start", "Stop"]
    # by hand: 2.25 s is 12:00:02.250; 9.5 s is 1.5 s after the first gap (14:13:09.500);
    # 16.0625 s is 1.0625 s into the third stretch, the next day
    want = {"one": ("2024-05-01 12:00:02.250 UTC", "2024-05-01 12:00:02.750 UTC"),
            "two": ("2024-05-01 14:13:09.500 UTC", "2024-05-01 14:13:10.125 UTC"),
            "three": ("2024-05-02 16:13:16.062 UTC", "2024-05-02 16:13:17.500 UTC")}
    for a in MARKS:
        got = (lst.cell(a.uuid, 0), lst.cell(a.uuid, 1))
        assert got == want[a.label] == (_date(window, a.start_s), _date(window, a.stop_s))
        assert (utc(GAP1 + 9.5).strftime("%H:%M:%S") == "14:13:09"
                and utc(GAP1 + GAP2 + 16.0625).strftime("%d %H:%M:%S") == "02 16:13:16")
    # the whole date and time is shown in the column, not elided
    fm = lst.table.fontMetrics()
    assert lst.table.columnWidth(0) >= fm.horizontalAdvance(want["three"][0])
    # the start's tooltip names the file it falls in and the time into it
    two = MARKS[1]
    tip = lst.proxy.index(lst.row_of(two.uuid), 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == f"rec0009.wav {offset_text(0.5)}"
    # a click on the row still jumps to the annotation
    lst.show()
    qtbot.mouseClick(lst.table.viewport(), Qt.MouseButton.LeftButton,
                     pos=_row_rect_center(lst, two.uuid, 4))
    wait_until(lambda: window.annotations.current == two.uuid, what="the row's annotation")
    t0, t1, _, _ = window.view.visible_range()
    assert t0 <= two.start_s and two.stop_s <= t1
    # sorted by the start in time (a click on the header sorts by the axis, not the text)
    assert lst.ordered() == [a.uuid for a in MARKS]


def test_the_annotation_list_keeps_seconds_for_a_single_recording(window, example_path):
    open_and_wait(window, example_path)
    a = Annotation(start_s=0.1, stop_s=0.25, label="x")
    window.annotations.set_annotations([a])
    lst = window.annotations.list
    assert window.deployment.timeline is None
    assert [lst.model.headerData(c, Qt.Orientation.Horizontal) for c in range(2)] == \
        list(COLUMNS[:2])
    assert (lst.cell(a.uuid, 0), lst.cell(a.uuid, 1)) == ("0.1000", "0.2500")
    assert lst.proxy.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) is None


# -- Export range on a deployment ------------------------------------------------------------


def _range_dialog(window, qtbot, span):
    window.exports.export_range_dialog(span)
    dlg = window.exports.range_dialog
    wait_until(lambda: dlg.isVisible(), what="the Export range dialog")
    return dlg


def test_the_export_dialog_shows_and_takes_dates_on_a_deployment(window, site, monkeypatch,
                                                                 qtbot, tmp_path):
    open_site(window, site, monkeypatch)
    dlg = _range_dialog(window, qtbot, (9.25, 16.125))
    # shown as the readout writes them
    assert dlg.start.text() == "2024-05-01 14:13:09.250 UTC" == _date(window, 9.25)
    assert dlg.stop.text() == "2024-05-02 16:13:16.125 UTC" == _date(window, 16.125)
    assert dlg.length.text().startswith("6.875 s of ")
    # what is shown is what is exported (round trip to the microsecond)
    c = dlg.choice()
    assert (c.start, c.stop) == pytest.approx((9.25, 16.125), abs=1e-6)
    # Whole recording: every sample, the fields read back as the first and last point
    dlg.range.setCurrentText("Whole recording")
    assert dlg.start.text() == "2024-05-01 12:00:00.000 UTC"
    assert dlg.stop.text() == _date(window, 21.0)
    c = dlg.choice()
    assert (c.start, c.stop) == (0.0, 21.0)
    # typed: a date and time (ISO 8601 with a space, no zone: the deployment's) and seconds
    out = tmp_path / "out" / "part.wav"
    out.parent.mkdir()
    _type(qtbot, dlg.path, str(out))
    _type(qtbot, dlg.start, "2024-05-01 14:13:09")            # axis 9 s
    _type(qtbot, dlg.stop, "17.5")                             # seconds into the recording
    assert dlg.range.currentText() == "Custom"
    assert dlg.length.text().startswith("8.500 s of ")
    # into a gap: one line naming it, the dialog stays, nothing written
    _type(qtbot, dlg.start, "2024-05-01 13:00")
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible()
    message = dlg.error.text()
    assert "\n" not in message and message.startswith("start: ")
    assert "lies in a gap 2 h 13 min between rec0007.wav and rec0008.wav" in message
    # not a time at all: both forms named
    _type(qtbot, dlg.start, "soon")
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible() and "no date and time" in dlg.error.text()
    assert "12.5" in dlg.error.text()
    assert not out.exists()
    # an ISO date and time with T and Z, then the export
    _type(qtbot, dlg.start, "2024-05-01T14:13:09Z")
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert window.exports.range_dialog is None
    back, fs = soundfile.read(str(out), dtype="float64", always_2d=True)
    assert fs == RATE
    rec = window.document.recording
    want = np.asarray(rec.read(9 * RATE, int(17.5 * RATE)), np.float64).reshape(back.shape)
    assert back.shape == (int(8.5 * RATE), 1)
    np.testing.assert_allclose(back, want, atol=1e-6)
    # remembered as the axis seconds; shown again as dates
    window.exports.export_range_dialog()
    dlg = window.exports.range_dialog
    wait_until(dlg.isVisible, what="the dialog again")
    assert dlg.range.currentText() == "Custom"
    assert (dlg.start.text(), dlg.stop.text()) == (_date(window, 9.0), _date(window, 17.5))
    dlg.reject()


# -- Detect › Export detections…: the type chosen and the name agree ------------------------


TYPE_TEXT = {"raven": "Raven selection table (*.selections.txt *.tsv)",
             "audacity": "Audacity labels (*.txt *.labels.txt)",
             "csv": "CSV (*.csv)"}


def _drive_file_dialog(qtbot, steps, done):
    """Drive the modal file dialog that opens next: ``steps`` (("type", format) or
    ("name", text)) in order, then Save."""
    from PyQt6.QtCore import QTimer
    from PyQt6.QtWidgets import QApplication, QFileDialog

    def drive():
        wait_until(lambda: isinstance(QApplication.activeModalWidget(), QFileDialog),
                   TIMEOUT_MS, "the file dialog")
        dlg = QApplication.activeModalWidget()
        combo, field = _file_dialog_parts(dlg)
        done.append(dlg.windowTitle())
        for what, value in steps:
            if what == "type":
                _pick(qtbot, combo, TYPE_TEXT[value])
            else:
                _type(qtbot, field, value)
        _click(qtbot, _save_button(dlg))
    QTimer.singleShot(0, drive)


def _first_line(path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize(("steps", "name", "fmt"), [
    # the type first, then a name with another type's extension: the type decides
    ([("type", "audacity"), ("name", "calls.selections.txt")], "calls.labels.txt",
     "audacity"),
    # a name first, then the type: the name takes the type's extension
    ([("name", "calls.csv"), ("type", "raven")], "calls.selections.txt", "raven"),
])
def test_export_detections_writes_the_type_chosen_under_its_name(window, site, monkeypatch,
                                                                  qtbot, tmp_path, steps,
                                                                  name, fmt):
    open_site(window, site, monkeypatch)
    starts = np.array([round(a * RATE) for a in (2.5, 9.5, 16.0)], np.int64)
    events = Events(starts, starts + 400, float(RATE), np.full(3, 500.0), np.full(3, 900.0),
                    np.ones(3), ["a", "b", "c"], np.full(3, -1), "detect.energy", {})
    window.detection.set_review(Review(events))
    done: list = []
    _drive_file_dialog(qtbot, steps, done)
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "detect-export"):
        window.menu_actions["export_detections"].trigger()
    assert done == ["Export detections"]
    written = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert written == [name], written
    out = tmp_path / name
    head = _first_line(out)
    if fmt == "raven":
        assert head.startswith("Selection\t") and head.endswith("\tScore\tReview"), head
    else:  # Audacity labels: start, stop, label per line, no header
        assert head.split("\t")[2] == "a" and float(head.split("\t")[0]) == 2.5, head
    back = read_annotations(out, format=fmt, sample_rate=RATE)
    assert sorted(a.start_s for a in back) == pytest.approx([2.5, 9.5, 16.0], abs=1e-6)


def test_the_hour_repeated_when_summer_time_ends_reads_back_as_shown(qtbot):
    # Europe/Berlin turns 03:00 CEST back to 02:00 CET at 01:00 UTC on 2024-10-27: every
    # clock time from 02:00 to 03:00 that night happened twice
    both = Timeline([Stretch(0.0, 7200.0, datetime(2024, 10, 27, 0, 0, tzinfo=UTC))],
                    "Europe/Berlin")                       # 02:00 CEST to 03:00 CET
    dlg = ExportRangeDialog(duration=7200.0, n_channels=1, start=4500.0, stop=7000.0,
                            path="x.wav", timeline=both)
    qtbot.addWidget(dlg)
    # 4500 s is 01:15 UTC, the second 02:15: shown so, and read back as that one
    assert dlg.start.text() == "2024-10-27 02:15:00.000 Europe/Berlin"
    assert dlg.choice().start == 4500.0
    # typed, the first 02:15 (both were recorded): 00:15 UTC
    _type(qtbot, dlg.start, "2024-10-27 02:15")
    assert dlg.choice().start == 900.0
    # only the second 02:15 was recorded (from 01:00 UTC on): the typed time is that one
    later = Timeline([Stretch(0.0, 3600.0, datetime(2024, 10, 27, 1, 0, tzinfo=UTC))],
                     "Europe/Berlin")                      # 02:00 CET to 03:00 CET
    dlg = ExportRangeDialog(duration=3600.0, n_channels=1, start=0.0, stop=3600.0,
                            path="x.wav", timeline=later)
    qtbot.addWidget(dlg)
    _type(qtbot, dlg.start, "2024-10-27 02:15:00")
    assert dlg.choice().start == 900.0
    _type(qtbot, dlg.start, "2024-10-27 01:59:59")         # CEST's last second: before
    with pytest.raises(ValueError, match="lies outside the recording"):
        dlg.choice()
    # a time naming its zone is that time: 00:15 UTC (the first 02:15) was not recorded
    _type(qtbot, dlg.start, "2024-10-27T00:15:00Z")
    with pytest.raises(ValueError, match="lies outside the recording"):
        dlg.choice()
