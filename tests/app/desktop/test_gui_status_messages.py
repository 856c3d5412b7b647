"""The status bar read at 1280 px: a running job's text sits beside its bar, which shows
the percentage; a message longer than its room is whole in its tool tip; View › Messages
(Ctrl+M) lists the messages whole, with their times."""

from __future__ import annotations

import re
import threading

from _gui import TIMEOUT_MS, idle, open_and_wait, settle, wait_until
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication
from specscope.app.desktop import main_window
from specscope.widgets.messages import MessageLog

CTRL = Qt.KeyboardModifier.ControlModifier
#: what the issue saw cut: the text of an export squeezed into the bar ("Exporting /
#: long10-"), and messages ending "no…" and "not fou…"
JOB = "Exporting long10-minute-stereo-field-recording-2024-06-01-take-03.flac"
MESSAGES = ("Export cancelled; nothing was written and the file that was there is left "
            "as it was: /home/someone/recordings/long10-minute-stereo-field-take-03.flac",
            "PortAudio library not found: install libportaudio2 (Debian) or portaudio "
            "(Fedora) to play sound; everything else works without it")


def _whole_or_tipped(label, text: str) -> bool:
    """The label's text is drawn whole, or it is elided and its tool tip holds it whole."""
    room = label.contentsRect().width()
    whole = label.fontMetrics().horizontalAdvance(text) <= room
    return label.text() == text and (whole or label.toolTip() == text)


def _look_while_it_runs(w) -> None:
    bar, label = w.progress_bar, w.progress_label
    wait_until(lambda: bar.isVisible() and bar.value() == 370, what="the export at 37 %",
               passes=3)
    # the bar shows the percentage only; the job's text is beside it, whole
    assert bar.text() == "37%"
    assert label.isVisible() and label.text() == JOB and label.toolTip() == JOB
    assert label.contentsRect().width() >= label.fontMetrics().horizontalAdvance(JOB), (
        label.contentsRect().width(), label.fontMetrics().horizontalAdvance(JOB))
    assert label.geometry().right() < bar.geometry().left()
    assert w.width() == 1280  # the window did not grow for it
    for text in MESSAGES:
        w.show_message(text, 0)
        wait_until(lambda t=text: w.message_label.text() == t, what="the message", passes=3)
        assert _whole_or_tipped(w.message_label, text)
        assert _whole_or_tipped(label, JOB)  # the job's text kept its room
        assert w.cursor_label.isVisible() and w.width() == 1280


def test_job_text_and_long_messages_are_readable_at_1280(qtbot, make_window, example_path,
                                                         monkeypatch):
    monkeypatch.setattr(main_window, "LOGGED_JOB_S", 0.0)  # every job shown goes in the log
    w = make_window(size=(1280, 800), activate=True)
    open_and_wait(w, example_path)
    settle(w)
    go = threading.Event()

    def export(control):
        control.progress(0.37)
        go.wait(TIMEOUT_MS / 1000)  # held while the test looks at the status bar
        return None

    w.worker.submit("export", export, label=JOB)
    try:
        _look_while_it_runs(w)
    finally:
        go.set()  # the job ends whatever the checks found
    idle(w)
    assert not w.progress_label.isVisible() and not w.progress_bar.isVisible()

    # View › Messages by its keys: each message whole with its time, the job too
    qtbot.keyClick(w, Qt.Key.Key_M, CTRL)
    wait_until(lambda: w.messages_dialog is not None and w.messages_dialog.isVisible(),
               what="the Messages list")
    lines = w.messages_dialog.lines()
    for text in MESSAGES:
        assert any(re.fullmatch(rf"\d\d:\d\d:\d\d  {re.escape(text)}", line)
                   for line in lines), (text, lines)
    assert any(re.fullmatch(rf"\d\d:\d\d:\d\d  {re.escape(JOB)} \(\d+\.\d s\)", line)
               for line in lines), lines
    # a message shown while the list is open is added to it
    w.show_message("Session saved to /tmp/x.json")
    wait_until(lambda: w.messages_dialog.lines()[-1].endswith("Session saved to /tmp/x.json"),
               what="the new message listed")
    w.messages_dialog.copy()
    assert QApplication.clipboard().text().splitlines() == w.messages_dialog.lines()


def test_an_error_is_listed_red_and_its_text_whole(qtbot, make_window):
    w = make_window(size=(1280, 800))
    message = "could not save the session: " + "/a/very/long/folder" * 12 + " (no space)"
    w.show_error(message, dialog=False)
    w.show_messages()
    item = w.messages_dialog.list.item(w.messages_dialog.list.count() - 1)
    assert item.text().endswith(f"Error: {message}") and item.toolTip() == f"Error: {message}"
    assert item.foreground().color().name() == "#c00000"


def test_a_report_that_changes_every_second_is_one_line():
    log = MessageLog()
    for s in range(30, 40):
        log.add(f"plugin op x.y running for {s} s…", when=1000.0 + s)
    log.add("Exported a.wav", when=1041.0)
    log.add("Exported a.wav", when=1042.0)
    log.add("plugin op x.y running for 3 s…", when=1100.0)  # later: a line of its own
    assert [(m.text, m.count) for m in log.messages] == [
        ("plugin op x.y running for 39 s…", 10), ("Exported a.wav", 2),
        ("plugin op x.y running for 3 s…", 1)]
    assert log.messages[0].line().endswith("running for 39 s…  (×10)")


def test_lines_of_a_list_naming_files_each_stay_whole():
    """Problems of a deployment's files differ only in their numbers: kept one a line."""
    log = MessageLog()
    names = [f"20240501_12{m:02d}00.wav: no start time" for m in range(5)]
    for k, text in enumerate(names):
        log.add(text, when=1000.0 + k * 0.01, merge=False)
    assert [m.text for m in log.messages] == names
    log.add(names[0], when=1001.0)  # merged as before when not asked otherwise
    log.add(names[1], when=1001.1)
    assert len(log.messages) == 5 and log.messages[-1].count == 3
