"""The designer's filter chain: several filters, each enabled or not, in order, undoable
step by step; filter steps of the Processing panel as forms; the chain kept in sessions."""

import json

import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS, open_and_wait, settle
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtWidgets import QLineEdit, QPlainTextEdit, QTextEdit
from specscope.app.desktop.actions import plain
from specscope.app.session import ViewSettings
from specscope.widgets.frequency_axis import forward

CTRL = Qt.KeyboardModifier.ControlModifier
FS = 48000
HUM = 49.93


@pytest.fixture(scope="module")
def hum_wav(tmp_path_factory):
    """Noise, mains hum at 49.93 Hz with 5 harmonics, and a 1 kHz tone."""
    rng = np.random.default_rng(3)
    t = np.arange(FS * 12) / FS
    x = 0.05 * rng.standard_normal(t.size)
    for k in range(1, 6):
        x += 0.2 / k * np.sin(2 * np.pi * k * HUM * t)
    x += 0.1 * np.sin(2 * np.pi * 1000.0 * t)
    path = tmp_path_factory.mktemp("chain") / "hum.wav"
    soundfile.write(str(path), x.astype(np.float32), FS, subtype="FLOAT")
    return path


@pytest.fixture
def window(make_window, hum_wav):
    """STFT 4096/1024, the hum open, the designer docked."""
    w = make_window(nfft=4096, hop=1024, size=(1400, 1000), activate=True)
    open_and_wait(w, hum_wav)
    w.designer_dock.setVisible(True)
    return w


def undo_text(w) -> str:
    return plain(w.menu_actions["undo"].text())


def filter_steps(w) -> list[dict]:
    """The processing's filter steps, as the view and the export apply them."""
    return [s["params"] for s in w.current_pipeline().to_dict()["steps"] if s["op"] == "filter"]


def type_into(qtbot, field, text):
    """Click a field, replace its text by typing, press Enter."""
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    qtbot.keyClick(field, Qt.Key.Key_A, CTRL)
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def click_row(qtbot, chain, row, *, checkbox=False):
    """A real click on a row of the chain: on its text, or on its check box."""
    lst = chain.list
    rect = lst.visualItemRect(lst.item(row))
    x = rect.left() + 10 if checkbox else rect.center().x()
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, rect.center().y()))


def click_hum(qtbot, w, f=HUM, t=6.0):
    """Notch mode, then a real click on the line drawn at ``f`` Hz."""
    qtbot.mouseClick(w.designer_panel.notch_mode, Qt.MouseButton.LeftButton)
    assert w.view.click_mode == "notch"
    vb = w.view.plot.getViewBox()
    p = w.view.mapFromScene(vb.mapViewToScene(QPointF(t, float(forward(w.view.freq_scale, f)))))
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(round(p.x()), round(p.y())))


def test_band_pass_then_a_clicked_notch_make_a_chain(qtbot, window):
    w, chain = window, window.designer_panel.chain
    assert chain.rows() == []
    # a band-pass designed through the form: the chain's first filter
    type_into(qtbot, w.designer.field("cutoff"), "[200, 4000]")
    settle(w)
    assert chain.rows() == [("band-pass 200–4000 Hz", True)]
    assert undo_text(w) == "Undo add band-pass 200–4000 Hz"
    # a click on the hum adds a notch, the band-pass stays; the chain filters the view
    click_hum(qtbot, w)
    qtbot.waitUntil(lambda: len(chain.rows()) == 2, timeout=TIMEOUT_MS)
    settle(w)
    assert chain.rows() == [("band-pass 200–4000 Hz", True), ("notch 49.93 Hz", True)]
    assert undo_text(w) == "Undo add notch 49.93 Hz"
    steps = filter_steps(w)
    assert [s["design"] for s in steps] == ["butter", "notches"]
    assert steps[0]["cutoff"] == [200.0, 4000.0]
    assert steps[1]["frequency"] == pytest.approx(HUM, abs=0.05)
    assert w.designer_panel.apply_box.isChecked()
    # the designer shows the notch, and the whole chain's response as a second curve
    assert w.designer.spec.design == "notches" and chain.current() == 1
    curve = w.designer.chain_curve
    assert curve.isVisible()
    f, db = curve.getData()
    assert db[np.argmin(np.abs(f - 100.0))] < -20        # below the band and notched
    assert abs(db[np.argmin(np.abs(f - 1000.0))]) < 1.0  # in the band, between harmonics

    # a real click on the band-pass's check box leaves it out
    click_row(qtbot, chain, 0, checkbox=True)
    settle(w)
    assert chain.rows()[0] == ("band-pass 200–4000 Hz", False)
    assert undo_text(w) == "Undo disable band-pass"
    assert [s["design"] for s in filter_steps(w)] == ["notches"]

    # the notch moved up: the processing's order follows
    click_row(qtbot, chain, 1)
    assert chain.current() == 1
    qtbot.mouseClick(chain.up, Qt.MouseButton.LeftButton)
    settle(w)
    assert [name for name, _ in chain.rows()] == ["notch 49.93 Hz", "band-pass 200–4000 Hz"]
    assert undo_text(w) == "Undo move notch up"
    click_row(qtbot, chain, 1, checkbox=True)  # enabled again: notch first, then band-pass
    settle(w)
    assert [s["design"] for s in filter_steps(w)] == ["notches", "butter"]

    # Ctrl+Z walks back one step at a time
    expected = [
        ([("notch 49.93 Hz", True), ("band-pass 200–4000 Hz", False)], ["notches"]),
        ([("band-pass 200–4000 Hz", False), ("notch 49.93 Hz", True)], ["notches"]),
        ([("band-pass 200–4000 Hz", True), ("notch 49.93 Hz", True)], ["butter", "notches"]),
        ([("band-pass 200–4000 Hz", True)], []),
        ([], []),
    ]
    for rows, designs in expected:
        w.view.setFocus()
        qtbot.keyClick(w, Qt.Key.Key_Z, CTRL)
        settle(w)
        assert chain.rows() == rows
        assert [s["design"] for s in filter_steps(w)] == designs
    assert not w.designer_panel.apply_box.isChecked()


def test_chain_filters_the_view_in_order(qtbot, window):
    w, chain = window, window.designer_panel.chain
    hum_before = w.view.value_at(6.0, 2 * HUM)
    tone_before = w.view.value_at(6.0, 1000.0)
    click_hum(qtbot, w)
    qtbot.waitUntil(lambda: len(chain.rows()) == 1, timeout=TIMEOUT_MS)
    settle(w)
    assert w.view.value_at(6.0, 2 * HUM) < hum_before - 15
    # a low-pass added from the menu, below the tone: the tone goes too
    menu = chain.add.menu()
    act = next(a for a in menu.actions() if a.text() == "Low-pass")
    act.trigger()
    type_into(qtbot, w.designer.field("cutoff"), "500")
    settle(w)
    assert [name for name, _ in chain.rows()] == ["notch 49.93 Hz", "low-pass 500 Hz"]
    assert w.view.value_at(6.0, 1000.0) < tone_before - 20
    # before/after/difference compare the recording with and without the whole chain
    w.designer_panel.compare.setCurrentText("before")
    settle(w)
    assert w.view.value_at(6.0, 1000.0) == pytest.approx(tone_before, abs=1.0)
    # removing the selected low-pass
    w.designer_panel.compare.setCurrentText("after")
    qtbot.mouseClick(chain.remove, Qt.MouseButton.LeftButton)
    settle(w)
    assert undo_text(w) == "Undo remove low-pass 500 Hz"
    assert [s["design"] for s in filter_steps(w)] == ["notches"]


def test_processing_panel_edits_a_filter_step_with_a_form(qtbot, window):
    w = window
    editor = w.processing.editor
    w.processing_dock.show()
    w.processing_dock.raise_()
    qtbot.waitUntil(lambda: editor.add.menu() is not None, timeout=TIMEOUT_MS)
    act = next(a for a in editor.add.menu().actions() if a.text().startswith("filter"))
    act.trigger()
    qtbot.mouseClick(editor.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: json.loads(w.settings.processing) != [], timeout=TIMEOUT_MS)
    # the step's form: a method and fields, no JSON text
    assert not editor.findChildren(QPlainTextEdit) and not editor.findChildren(QTextEdit)
    assert not [e.text() for e in editor.findChildren(QLineEdit) if "{" in e.text()]
    form = editor.form
    assert form.method.currentData() == "butter"
    cutoff = form.field("cutoff")
    assert cutoff is not None and form.field("order") is not None
    type_into(qtbot, cutoff, "[500, 2500]")
    qtbot.waitUntil(lambda: json.loads(w.settings.processing)[0]["params"].get("cutoff")
                    == [500.0, 2500.0], timeout=TIMEOUT_MS)
    settle(w)
    assert filter_steps(w)[0]["cutoff"] == [500.0, 2500.0]
    assert undo_text(w) == "Undo processing steps"
    assert editor.form is form and form.field("cutoff") is cutoff  # not rebuilt
    # another method from the form's combo box: a notch step
    form.method.setCurrentIndex(form.method.findData("iirnotch"))
    qtbot.waitUntil(lambda: json.loads(w.settings.processing)[0]["params"]["design"]
                    == "iirnotch", timeout=TIMEOUT_MS)
    assert editor.form.field("frequency") is not None


def test_session_keeps_the_chain_and_the_representation(qtbot, window, make_window, hum_wav,
                                                        tmp_path):
    w, chain = window, window.designer_panel.chain
    click_hum(qtbot, w)
    qtbot.waitUntil(lambda: len(chain.rows()) == 1, timeout=TIMEOUT_MS)
    settle(w)
    next(a for a in chain.add.menu().actions() if a.text() == "Band-pass").trigger()
    settle(w)
    click_row(qtbot, chain, 1, checkbox=True)
    settle(w)
    view = "scalogram.morlet"
    qtbot.waitUntil(lambda: any(a.data() == view for a in w.representation_menu.actions()),
                    timeout=TIMEOUT_MS)
    next(a for a in w.representation_menu.actions() if a.data() == view).trigger()
    assert w.settings.representation == view
    rows = chain.rows()
    assert rows == [("notch 49.93 Hz", True), ("band-pass 300–3000 Hz", False)]
    path = tmp_path / "s.specscope.json"
    assert w.save_session(path)

    w2 = make_window(ViewSettings())
    assert w2.open_session(path)
    qtbot.waitUntil(lambda: w2.document is not None, timeout=TIMEOUT_MS)
    s = w2.settings
    assert s.filters == w.settings.filters and s.chain_on
    assert s.representation == view
    assert w2.designer_panel.chain.rows() == rows
    assert w2.designer_panel.apply_box.isChecked()
    assert [st["design"] for st in filter_steps(w2)] == ["notches"]
    qtbot.waitUntil(lambda: any(a.isChecked() and a.data() == view
                                for a in w2.representation_menu.actions()),
                    timeout=TIMEOUT_MS)
