"""Dates and files in review, the Detect panel and the Selection panel on a deployment (issue
40), through the real widgets at 1280x800 and 1600x1000.

The deployment is the one of ``test_gui_deployment``: 21 one-second files in three
contiguous stretches (gaps of 2 h 13 min and 1 d 2 h) from 2024-05-01 12:00:00 UTC.  In
review the banner over the plot gives each detection's date and time, its file and the
time into it, whole; the status line keeps to the keys and fits beside the readout.  The
Detect panel's table shows the starts as dates (their file as the tooltip), rows in time
order, the Label column in view in the narrow dock; the Selection panel shows a box's
start, stop and peak time as dates.  A single recording without a start time keeps its
seconds, exactly as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from _deployments import stamped
from _gui import idle, open_and_wait, wait_until
from PyQt6.QtCore import QPoint, QRect, Qt
from specscope.app.review import ACCEPTED, Review
from specscope.compute.deployment.timeline import offset_text
from specscope.compute.detect import Events
from test_gui_annotations import select_box, show_span
from test_gui_deployment import RATE, STARTS, open_site

LEFT = Qt.MouseButton.LeftButton
SIZES = [(1280, 800), (1600, 1000)]
#: detections on the deployment's axis (s): in file 2, after the first gap (file 9), in
#: the third stretch the next day (file 16)
AXIS = [2.25, 9.5, 16.0625]
#: by hand: their dates and times, files and times into them
WHEN = ["2024-05-01 12:00:02.250 UTC", "2024-05-01 14:13:09.500 UTC",
        "2024-05-02 16:13:16.062 UTC"]
WHERE = ["rec0002.wav +00:00.250", "rec0009.wav +00:00.500", "rec0016.wav +00:00.062"]
SCORES = [12.5, 30.0, 8.25]
LABEL_COLUMN, REVIEW_COLUMN = 6, 7


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The deployment of ``test_gui_deployment`` (its index cached under ``tmp_path``)."""
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    stamped(tmp_path / "site", STARTS, n=RATE, rate=RATE)
    return tmp_path / "site"


def _detections(window) -> None:
    """Three detections of 0.1 s, 500-900 Hz, as a detector gives them."""
    starts = np.array([round(a * RATE) for a in AXIS], np.int64)
    events = Events(starts, starts + RATE // 10, float(RATE), np.full(3, 500.0),
                    np.full(3, 900.0), np.array(SCORES), ["call"] * 3, np.full(3, -1),
                    "detect.energy", {})
    window.detection.set_review(Review(events, label_list=["call", "noise", "other"]))
    window.menu_actions["detect_dock"].trigger()     # Detect › Detect panel
    idle(window)


def _readout_on_plot(qtbot, window) -> None:
    """The pointer over the plot: the readout shows its date, file and offset (at its
    widest, the status line has the least room)."""
    vb = window.view.plot.getViewBox()
    centre = window.view.mapFromScene(vb.sceneBoundingRect().center())
    qtbot.mouseMove(window.view.viewport(), centre + QPoint(3, 0))
    qtbot.mouseMove(window.view.viewport(), centre)
    wait_until(lambda: ".wav +" in window.cursor_label.text(),
               what="the readout to name the file under the pointer")


def _plot_rect(window) -> QRect:
    vb = window.view.plot.getViewBox()
    return window.view.mapFromScene(vb.sceneBoundingRect()).boundingRect()


@pytest.mark.parametrize("size", SIZES, ids=["1280x800", "1600x1000"])
def test_review_banner_gives_date_file_and_offset_whole(make_window, site, monkeypatch, qtbot,
                                                        size):
    w = make_window(size=size)
    open_site(w, site, monkeypatch)
    _detections(w)
    det = w.detection
    qtbot.mouseClick(det.panel.review_button, LEFT)          # the Detect panel's Review
    wait_until(lambda: det.mode.active, what="review mode")
    banner = det.layer.banner
    for k in range(3):
        if k:
            qtbot.keyClick(w.view, Qt.Key.Key_N)
        wait_until(lambda k=k: banner.text().startswith(f"Review {k + 1} / 3"),
                   what=f"the banner of detection {k + 1}")
        idle(w)
        _readout_on_plot(qtbot, w)
        lines = banner.text().split("\n")
        assert lines[0] == f"Review {k + 1} / 3  ·  score {SCORES[k]:.3g} dB  ·  to review"
        # its date and time, its file and the time into it, on one line where it fits
        assert lines[1:] in ([f"{WHEN[k]}  ·  {WHERE[k]}"], [WHEN[k], WHERE[k]]), lines
        # read whole: shown, inside the plot, every line within the banner's width
        assert banner.isVisible()
        assert _plot_rect(w).contains(banner.geometry()), (banner.geometry(), _plot_rect(w))
        fm = banner.fontMetrics()
        assert max(fm.horizontalAdvance(s) for s in lines) <= banner.contentsRect().width()
        # the status line is short: the keys, whole beside the readout's date and file
        status = w.message_label
        assert status.text() == "A accept, R reject, 1–3, N/P, Esc"
        assert status.fontMetrics().horizontalAdvance(status.text()) <= \
            status.contentsRect().width(), (status.width(), w.cursor_label.text())
    # a decision keeps the date and file in the banner
    qtbot.keyClick(w.view, Qt.Key.Key_A)
    wait_until(lambda: det.review.states[2] == ACCEPTED, what="detection 3 accepted")
    lines = banner.text().split("\n")
    assert lines[0] == "Review 3 / 3  ·  score 8.25 dB  ·  accepted 'call'"
    assert WHEN[2] in banner.text() and WHERE[2] in banner.text()
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    wait_until(lambda: not banner.isVisible(), what="the banner hidden after review")


def test_review_of_a_single_recording_says_where_in_seconds(window, example_path, qtbot):
    open_and_wait(window, example_path)
    assert window.deployment.timeline is None
    events = Events(np.array([800]), np.array([2400]), 8000.0, np.array([500.0]),
                    np.array([900.0]), np.array([20.0]), ["x"], np.array([-1]),
                    "detect.energy", {})
    window.detection.set_review(Review(events, label_list=["call"]))
    idle(window)
    qtbot.mouseClick(window.detection.panel.review_button, LEFT)
    wait_until(lambda: window.detection.mode.active, what="review mode")
    assert window.detection.layer.banner.text() == "Review 1 / 1  ·  score 20 dB  ·  to review"
    assert window.message_label.text() == (
        "Review: detection 1 of 1 at 0.100 s, score 20: to review 'x'  —  A accept, R reject, "
        "1 call, N/P, Space play, Esc")


def test_detect_panel_shows_dates_and_keeps_the_label_in_view(make_window, site, monkeypatch,
                                                              qtbot):
    w = make_window(size=(1280, 800))
    open_site(w, site, monkeypatch)
    _detections(w)
    panel = w.detection.panel
    model, table = panel.model, panel.table
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Start"
    # the rows in time order, each start as the readout writes it, its file as the tooltip
    assert [model.data(model.index(r, 1)) for r in range(3)] == WHEN
    assert [model.data(model.index(r, 1), Qt.ItemDataRole.ToolTipRole)
            for r in range(3)] == WHERE
    assert [model.data(model.index(r, 1), Qt.ItemDataRole.UserRole) for r in range(3)] == AXIS
    # the start whole in its column, the label and decision in view beside it
    fm = table.fontMetrics()
    assert table.columnWidth(1) >= fm.horizontalAdvance(WHEN[2])
    assert table.horizontalScrollBar().value() == 0
    port = table.viewport().width()
    for column in (1, LABEL_COLUMN, REVIEW_COLUMN):
        x = table.columnViewportPosition(column)
        assert 0 <= x and x + table.columnWidth(column) <= port, (column, x, port)
    # a click on a row's label reviews that detection
    row = 1
    rect = table.visualRect(model.index(row, LABEL_COLUMN))
    assert table.viewport().rect().contains(rect)
    assert model.data(model.index(row, LABEL_COLUMN)) == "call"
    qtbot.mouseClick(table.viewport(), LEFT, pos=rect.center())
    wait_until(lambda: w.detection.mode.active and w.detection.review.index == row,
               what="review of the row clicked")
    assert w.detection.layer.banner.text().split("\n")[1:] in (
        [f"{WHEN[row]}  ·  {WHERE[row]}"], [WHEN[row], WHERE[row]])


def test_detect_panel_keeps_seconds_for_a_single_recording(window, example_path):
    open_and_wait(window, example_path)
    events = Events(np.array([800]), np.array([2400]), 8000.0, np.array([500.0]),
                    np.array([900.0]), np.array([20.0]), ["x"], np.array([-1]),
                    "detect.energy", {})
    window.detection.set_review(Review(events))
    model = window.detection.panel.model
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Start (s)"
    assert model.data(model.index(0, 1)) == "0.100"
    assert model.data(model.index(0, 1), Qt.ItemDataRole.ToolTipRole) is None
    header = window.detection.panel.table.horizontalHeader()
    # #, start, label, review beside it, then score, duration and band
    assert [header.logicalIndex(v) for v in range(8)] == [0, 1, 6, 7, 5, 2, 3, 4]


def test_selection_panel_shows_dates_on_a_deployment(make_window, site, monkeypatch, qtbot):
    w = make_window(size=(1280, 800))
    open_site(w, site, monkeypatch)
    show_span(w, 9.0, 10.0, 0.0, 4000.0)
    select_box(qtbot, w, 9.2, 3000.0, 9.8, 1000.0)           # Ctrl+drag on the spectrogram
    wait_until(lambda: w.annotations.measurement is not None, what="the measurement")
    sel, m = w.annotations.selection, w.annotations.measurement
    tl = w.deployment.timeline
    panel = w.annotations.panel
    assert 9.15 < sel.start_s < 9.25 and 9.75 < sel.stop_s < 9.85, (sel.start_s, sel.stop_s)
    for field, t in (("start_s", sel.start_s), ("stop_s", sel.stop_s),
                     ("peak_time_s", m.peak_time_s)):
        text = panel.text(field)
        # by hand: axis 9 s is 14:13:09 (1 s after the first gap, which starts at 8 s)
        assert text.startswith("2024-05-01 14:13:09.") and text.endswith(" UTC"), text
        assert text == tl.format(tl.to_time(t))
        assert panel.values[field].toolTip() == f"rec0009.wav {offset_text(t - 9.0)}"
    # the duration stays in seconds
    assert panel.text("duration_s") == f"{sel.stop_s - sel.start_s:.4f} s"
    # the whole date and time is shown in the panel
    label = panel.values["start_s"]
    assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width()


def test_selection_panel_keeps_seconds_for_a_single_recording(window, example_path, qtbot):
    open_and_wait(window, example_path)
    idle(window)
    show_span(window, 0.0, 1.0)
    select_box(qtbot, window, 0.2, 3000.0, 0.6, 1000.0)
    wait_until(lambda: window.annotations.measurement is not None, what="the measurement")
    sel, m = window.annotations.selection, window.annotations.measurement
    panel = window.annotations.panel
    assert window.deployment.timeline is None
    assert panel.text("start_s") == f"{sel.start_s:.4f} s"
    assert panel.text("stop_s") == f"{sel.stop_s:.4f} s"
    assert panel.text("peak_time_s") == f"{m.peak_time_s:.4f} s"
    assert panel.values["start_s"].toolTip() == ""

