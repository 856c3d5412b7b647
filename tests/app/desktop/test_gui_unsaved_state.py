"""One modified state: asked about exactly when something would be lost, and shown in the title.

Driven through the real widgets (drags, keys, menu entries, the designer's Add menu, the
Detect panel); the question box and the file dialogs are answered through their seams
(``window.unsaved.ask_save``, ``QFileDialog``).  Each wrong case of the first hour is here:
asked right after Ctrl+S saved, after importing files unchanged, on a restored session with
no edits; a filter chain and review decisions lost without a question.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile
from _gui import idle, open_and_wait, wait_until
from PyQt6.QtCore import QPointF, Qt
from PyQt6.QtWidgets import QApplication, QFileDialog
from specscope.app.desktop.unsaved import autosave_path
from specscope.app.review import REJECTED
from specscope.compute.annotations import Annotation, write_annotations
from specscope.compute.detect import synth
from specscope.widgets.export_dialog import FormatFileDialog
from specscope.widgets.frequency_axis import forward

CTRL = Qt.KeyboardModifier.ControlModifier
LEFT = Qt.MouseButton.LeftButton
FS = 32000.0
SIZE = (1300, 900)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """Two 12 s recordings, 6 calls each in noise (the Detect panel finds them)."""
    folder = tmp_path_factory.mktemp("unsaved")
    paths = []
    for seed, name in ((5, "calls.wav"), (6, "other.wav")):
        plan = synth.plan_calls(12.0, FS, 6, snr_db=(12.0, 20.0), seed=seed)
        path = folder / name
        soundfile.write(str(path), synth.render_all(plan).astype(np.float32), int(FS),
                        subtype="FLOAT")
        paths.append(path)
    return paths


@pytest.fixture
def window(make_window, recordings):
    """An interactive window (it asks), shown and active, the first recording open."""
    w = make_window(size=SIZE, interactive=True, activate=True)
    open_and_wait(w, recordings[0])
    idle(w)
    return w


class Asker:
    """Answers the Save / Discard / Cancel question; keeps what it was asked."""

    def __init__(self, window, answer: str) -> None:
        self.answer, self.asked = answer, []
        window.unsaved.ask_save = self

    def __call__(self, parent, name, lost, action) -> str:
        self.asked.append((name, str(lost), action))
        return self.answer


def title(w) -> str:
    """The title as the window system shows it ("[*]" resolved)."""
    return w.windowHandle().title()


def save_to(monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))


def open_from(monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def focus_view(qtbot, w) -> None:
    w.activateWindow()
    w.view.setFocus()
    wait_until(lambda: QApplication.focusWidget() is w.view, what="the focus in the view")


def annotate(qtbot, w, label, t0, f0, t1, f1) -> Annotation:
    """The whole recording shown, Ctrl+drag a box, Return, type its label, Return: one
    annotation."""
    w.view.set_time_range(0.0, w.document.recording.duration)
    w.view.set_frequency_range(0.0, FS / 2)
    vb = w.view.plot.getViewBox()

    def px(t, f):
        return w.view.mapFromScene(vb.mapViewToScene(
            QPointF(t, float(forward(w.view.freq_scale, f)))))

    a, b = px(t0, f1), px(t1, f0)
    vp = w.view.viewport()
    qtbot.mousePress(vp, LEFT, CTRL, a)
    for k in range(1, 7):
        qtbot.mouseMove(vp, a + (b - a) * (k / 6))
    qtbot.mouseRelease(vp, LEFT, CTRL, b)
    idle(w)
    focus_view(qtbot, w)
    qtbot.keyClick(w.view, Qt.Key.Key_Return)
    field = QApplication.focusWidget()
    qtbot.keyClicks(field, label)
    qtbot.keyClick(field, Qt.Key.Key_Return)
    wait_until(lambda: any(a.label == label for a in w.annotations.annotations),
               what=f"the annotation '{label}'")
    return next(a for a in w.annotations.annotations if a.label == label)


def add_low_pass(w) -> None:
    """The designer's Add menu: Low-pass (one undoable change of the chain)."""
    w.designer_dock.setVisible(True)
    menu = w.designer_panel.chain.add.menu()
    n = len(w.settings.filters)
    next(a for a in menu.actions() if a.text() == "Low-pass").trigger()
    wait_until(lambda: len(w.settings.filters) == n + 1, what="the low-pass in the chain")


def add_processing_step(qtbot, w) -> None:
    """The Processing panel: Add › filter, Apply (one undoable change of the steps)."""
    editor = w.processing.editor
    w.processing_dock.show()
    w.processing_dock.raise_()
    wait_until(lambda: editor.add.menu() is not None, what="the operator catalogue")
    next(a for a in editor.add.menu().actions() if a.text().startswith("filter")).trigger()
    qtbot.mouseClick(editor.apply, LEFT)
    wait_until(lambda: json.loads(w.settings.processing) != [], what="the processing step")
    idle(w)


def review_and_reject(qtbot, w) -> None:
    """Run the energy detector from the Detect panel, review (Ctrl+R), R rejects the first."""
    panel = w.detection.panel
    w.detect_dock.setVisible(True)
    for name, text in (("band_low_hz", "2500"), ("band_high_hz", "12500")):
        field = panel.form.field(name)
        qtbot.mouseClick(field, LEFT)
        field.selectAll()
        qtbot.keyClicks(field, text)
        qtbot.keyClick(field, Qt.Key.Key_Tab)
    qtbot.mouseClick(panel.run_button, LEFT)
    wait_until(lambda: w.detection.review is not None, what="the detections")
    idle(w)
    assert len(w.detection.review) >= 3
    focus_view(qtbot, w)
    qtbot.keyClick(w.view, Qt.Key.Key_R, CTRL)
    wait_until(lambda: w.detection.mode.active, what="review mode")
    qtbot.keyClick(w.view, Qt.Key.Key_R)
    wait_until(lambda: w.detection.review.states[0] == REJECTED, what="the first rejected")
    w.detection.mode.stop()


def test_ctrl_s_saves_everything_and_the_next_edit_asks(qtbot, window, monkeypatch, tmp_path):
    w = window
    assert title(w) == "calls.wav — specscope" and not w.isWindowModified()
    annotate(qtbot, w, "first", 2.0, 3000.0, 3.0, 9000.0)
    assert title(w) == "calls.wav* — specscope"
    wait_until(lambda: autosave_path(w.document.path).exists(), what="the autosave")
    session = tmp_path / "kept.specscope.json"
    save_to(monkeypatch, session)
    qtbot.keyClick(w.view, Qt.Key.Key_S, CTRL)                  # File › Save session
    wait_until(session.is_file, what="the session file")
    # the session holds the annotations: nothing unsaved, no *, no autosave left
    assert not w.unsaved.dirty() and title(w) == "calls.wav — specscope"
    assert not autosave_path(w.document.path).exists()
    # an edit after the save is unsaved again, and asked about
    annotate(qtbot, w, "second", 5.0, 3000.0, 6.0, 9000.0)
    assert title(w) == "calls.wav* — specscope"
    ask = Asker(w, "cancel")
    assert not w.close()
    assert ask.asked == [("calls.wav", "1 annotation", "quitting")]
    # undone back to what Ctrl+S saved: nothing to ask
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    wait_until(lambda: not w.unsaved.dirty(), what="the undo back to the saved state")
    assert title(w) == "calls.wav — specscope"
    assert w.close() and len(ask.asked) == 1


def test_imported_files_unchanged_ask_nothing(qtbot, window, monkeypatch, tmp_path):
    w = window
    marks = [Annotation(1.0, 1.5, 3000.0, 6000.0, label="a"),
             Annotation(4.0, 4.4, 2500.0, 7000.0, label="b")]
    csv, raven = tmp_path / "marks.csv", tmp_path / "more.selections.txt"
    write_annotations(csv, marks[:1], format="csv")
    write_annotations(raven, marks[1:], format="raven", sample_rate=FS)
    for path, n in ((csv, 1), (raven, 2)):
        open_from(monkeypatch, path)
        w.menu_actions["import_annotations"].trigger()
        wait_until(lambda n=n: len(w.annotations.annotations) == n, what=f"{path.name} read")
        idle(w)
        assert not w.unsaved.dirty() and title(w) == "calls.wav — specscope"
    ask = Asker(w, "cancel")
    assert w.close()
    assert ask.asked == []
    assert not autosave_path(w.document.path).exists()


def test_restored_session_with_no_edits_asks_nothing(qtbot, window, make_window, recordings,
                                                     monkeypatch, tmp_path):
    w = window
    annotate(qtbot, w, "call", 2.0, 3000.0, 3.0, 9000.0)
    add_low_pass(w)
    add_processing_step(qtbot, w)
    review_and_reject(qtbot, w)
    assert str(w.unsaved.lost()) == ("1 annotation, the processing steps, the filter chain "
                                     "and 1 review decision")
    session = tmp_path / "s.specscope.json"
    save_to(monkeypatch, session)
    w.menu_actions["save_session"].trigger()
    assert session.is_file() and not w.unsaved.dirty()

    other = make_window(size=SIZE, interactive=True, activate=True)
    open_from(monkeypatch, session)
    with qtbot.waitSignal(other.imageShown):
        other.menu_actions["open_session"].trigger()
    wait_until(lambda: other.detection.review is not None and other.annotations.annotations,
               what="the session's annotations and detections")
    idle(other)
    assert [a.label for a in other.annotations.annotations] == ["call"]
    assert len(other.settings.filters) == 1
    assert other.settings.processing == w.settings.processing
    assert other.detection.review.states[0] == REJECTED
    # (the panels showing the session's steps and chain change nothing)
    wait_until(lambda: not other.unsaved.dirty(), what="nothing unsaved", passes=20)
    assert title(other) == "calls.wav — specscope"
    ask = Asker(other, "cancel")
    assert other.close()
    assert ask.asked == []
    Asker(w, "discard")


def test_a_designed_chain_is_asked_about_and_saved(qtbot, window, recordings, monkeypatch,
                                                   tmp_path):
    w = window
    add_low_pass(w)
    assert w.unsaved.dirty() and title(w) == "calls.wav* — specscope"
    ask = Asker(w, "cancel")
    # another recording keeps the chain: nothing is lost, nothing asked
    idle(w)
    w.open_path(recordings[1])
    wait_until(lambda: w.document.path == recordings[1], what="other.wav open")
    idle(w)
    assert ask.asked == [] and len(w.settings.filters) == 1
    assert title(w) == "other.wav* — specscope"
    # a pipeline file holds the chain only where it filters the recording
    pipeline = tmp_path / "p.json"
    save_to(monkeypatch, pipeline)
    w.menu_actions["save_pipeline"].trigger()
    assert pipeline.is_file() and w.unsaved.dirty()
    qtbot.mouseClick(w.designer_panel.apply_box, LEFT)
    wait_until(lambda: w.settings.chain_on, what="the chain applied")
    assert w.unsaved.dirty()
    w.menu_actions["save_pipeline"].trigger()
    assert not w.unsaved.dirty() and title(w) == "other.wav — specscope"
    steps = json.loads(pipeline.read_text())["steps"]
    assert [s["op"] for s in steps] == ["filter", "spectrogram"]
    # a changed chain asks on quit; Save writes a session holding it, then the window closes
    add_low_pass(w)
    assert not w.close()
    assert ask.asked == [("other.wav", "the filter chain", "quitting")]
    session = tmp_path / "chain.specscope.json"
    save_to(monkeypatch, session)
    ask.answer = "save"
    assert w.close()
    assert len(json.loads(session.read_text())["filters"]["chain"]) == 2


def test_review_decisions_are_asked_about(qtbot, window, recordings):
    w = window
    review_and_reject(qtbot, w)
    assert w.annotations.annotations == []  # a rejection makes no annotation
    assert w.unsaved.dirty() and title(w) == "calls.wav* — specscope"
    ask = Asker(w, "cancel")
    w.open_path(recordings[1])                  # a new recording has no detections: asked
    assert not w.close()
    assert ask.asked == [("calls.wav", "1 review decision", "opening other.wav"),
                         ("calls.wav", "1 review decision", "quitting")]
    assert w.document.path == recordings[0] and w.detection.review.states[0] == REJECTED
    # an annotation and the chain too: the question names each
    annotate(qtbot, w, "call", 2.0, 3000.0, 3.0, 9000.0)
    add_low_pass(w)
    assert not w.close()
    assert ask.asked[-1][1] == "1 annotation, the filter chain and 1 review decision"
    ask.answer = "discard"
    assert w.close()


def test_only_the_annotations_unsaved_save_exports_them(qtbot, window, monkeypatch, tmp_path):
    w = window
    annotate(qtbot, w, "kept", 2.0, 3000.0, 3.0, 9000.0)
    out = tmp_path / "kept.csv"
    monkeypatch.setattr(FormatFileDialog, "ask", lambda *a, **k: (out, "csv"))
    ask = Asker(w, "save")
    assert not w.close()                        # the export runs on the compute thread
    wait_until(lambda: not w.isVisible(), what="the window closed once the file was written")
    assert out.is_file() and "kept" in out.read_text()
    assert ask.asked == [("calls.wav", "1 annotation", "quitting")]


def test_the_question_says_what_is_lost(qtbot, window):
    from specscope.app.desktop.unsaved import ALL_PARTS, Lost

    w = window
    assert str(w.unsaved.lost()) == "" and w.unsaved.lost().parts == ()
    annotate(qtbot, w, "one", 2.0, 3000.0, 3.0, 9000.0)
    lost = w.unsaved.lost()
    assert (str(lost), lost.parts, lost.plural) == ("1 annotation", ("annotations",), False)
    annotate(qtbot, w, "two", 5.0, 3000.0, 6.0, 9000.0)
    add_low_pass(w)
    lost = w.unsaved.lost(ALL_PARTS)
    assert isinstance(lost, Lost) and lost.plural
    assert str(lost) == "2 annotations and the filter chain"
    Asker(w, "discard")


def test_no_question_box_pops_up_without_a_person(make_window, recordings):
    w = make_window(size=SIZE)                  # not interactive: tests, screenshots
    open_and_wait(w, recordings[0])
    w.annotations.recover([Annotation(1.0, 2.0, label="x")])
    assert w.unsaved.dirty() and w.isWindowModified()
    assert w.close()


def test_a_file_named_with_the_placeholder_keeps_its_name(make_window, tmp_path, recordings):
    path = tmp_path / "take[*].wav"
    path.write_bytes(recordings[0].read_bytes())
    w = make_window(size=SIZE)
    open_and_wait(w, path)
    assert title(w) == "take[*].wav — specscope"
    w.annotations.recover([Annotation(1.0, 2.0, label="x")])
    assert title(w) == "take[*].wav* — specscope"



def test_a_detections_table_written_saves_the_review_decisions(qtbot, window, tmp_path):
    w = window
    review_and_reject(qtbot, w)
    assert w.unsaved.unsaved_parts() == ["review"]
    table = tmp_path / "calls.selections.txt"
    w.detection.export_to(table, "raven")
    wait_until(lambda: table.exists() and not w.unsaved.dirty())
    assert title(w) == "calls.wav — specscope"
    before = list(w.detection.review.states)
    focus_view(qtbot, w)
    qtbot.keyClick(w.view, Qt.Key.Key_R, CTRL)
    wait_until(lambda: w.detection.mode.active, what="review mode")
    qtbot.keyClick(w.view, Qt.Key.Key_A)
    wait_until(lambda: w.detection.review.states != before, what="a new decision")
    assert "review" in w.unsaved.unsaved_parts()  # decided after the export: unsaved
    assert title(w) == "calls.wav* — specscope"
