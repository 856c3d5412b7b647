"""Edit › Undo / Redo name the step and work wherever the focus is; single keys never type
into a field's neighbour, and a field never loses a typed character to a shortcut."""

import pytest
from _gui import TIMEOUT_MS, open_and_wait
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication
from specscope.app.desktop.actions import plain

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def window(make_window, example_path):
    w = make_window(activate=True)
    open_and_wait(w, example_path)
    return w


def pick(qtbot, combo, text: str) -> None:
    """Choose ``text`` from a combo box's list with the mouse, as a person does."""
    combo.setFocus()
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=TIMEOUT_MS)
    index = combo.model().index(combo.findText(text), 0)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.visualRect(index).center())
    qtbot.waitUntil(lambda: not view.isVisible(), timeout=TIMEOUT_MS)
    # a desktop gives the window back its focus when the popup closes; offscreen, ask
    combo.window().activateWindow()
    combo.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is combo, timeout=TIMEOUT_MS)


def edit_menu(window):
    return next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")


def rows_shown(window) -> int:
    return window.view.image_data.shape[0]


def test_ctrl_z_in_the_control_undoes_the_fft_size(qtbot, window):
    nfft = window.controls.nfft
    pick(qtbot, nfft, "2048")
    assert window.settings.stft.nfft == 2048
    qtbot.waitUntil(lambda: rows_shown(window) == 1025, timeout=TIMEOUT_MS)
    focus = QApplication.focusWidget()
    assert focus is nfft or nfft.isAncestorOf(focus)  # the person's focus stayed there
    qtbot.keyClick(focus, Qt.Key.Key_Z, CTRL)
    assert window.settings.stft.nfft == 1024
    assert nfft.currentText() == "1024"
    qtbot.waitUntil(lambda: rows_shown(window) == 513, timeout=TIMEOUT_MS)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL | SHIFT)
    assert window.settings.stft.nfft == 2048
    qtbot.waitUntil(lambda: rows_shown(window) == 1025, timeout=TIMEOUT_MS)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Y, CTRL)  # the other redo key
    assert window.settings.stft.nfft == 2048


def test_ctrl_z_on_the_window_undoes_and_the_view_returns(qtbot, window):
    before = window.view.image_data.copy()
    pick(qtbot, window.controls.nfft, "512")
    qtbot.waitUntil(lambda: rows_shown(window) == 257, timeout=TIMEOUT_MS)
    window.view.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert window.settings.stft.nfft == 1024
    qtbot.waitUntil(lambda: rows_shown(window) == 513 and window.views.up_to_date()
                    and window.worker.active() == 0, timeout=TIMEOUT_MS)
    assert window.view.image_data.shape == before.shape


def test_edit_menu_names_the_step(qtbot, window):
    undo, redo = window.menu_actions["undo"], window.menu_actions["redo"]
    assert not undo.isEnabled()
    pick(qtbot, window.controls.nfft, "2048")
    menu = edit_menu(window)
    texts = [plain(a.text()) for a in menu.actions() if not a.isSeparator()]
    assert texts[0] == "Undo FFT size 2048"
    assert undo.isEnabled() and not redo.isEnabled()
    undo.trigger()
    assert plain(redo.text()) == "Redo FFT size 2048"
    assert plain(undo.text()) == "Undo"
    redo.trigger()
    window.controls.peak_hold.click()
    assert plain(undo.text()) == "Undo peak hold on"
    window.processing.set_steps([{"op": "gain", "params": {"factor": 2.0}}])
    assert plain(undo.text()) == "Undo processing steps"


def test_typing_z_into_a_field_types_it(qtbot, window):
    zoom = window.menu_actions["zoom_box"]
    field = window.controls.window
    field.setFocus()
    field.lineEdit().end(False)
    qtbot.keyClicks(QApplication.focusWidget(), "z")
    assert field.currentText().endswith("z")
    assert not zoom.isChecked()
    harmonics = window.menu_actions["harmonics"]
    hop = window.controls.hop
    hop.setFocus()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_H)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backspace)
    assert not harmonics.isChecked()


def test_single_keys_act_with_focus_on_the_view(qtbot, window):
    zoom, harmonics = window.menu_actions["zoom_box"], window.menu_actions["harmonics"]
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Z)
    assert zoom.isChecked()
    qtbot.keyClick(window.view, Qt.Key.Key_H)
    assert harmonics.isChecked()
    qtbot.keyClick(window.view, Qt.Key.Key_Z)
    assert not zoom.isChecked()


def test_display_settings_are_undone_by_name(qtbot, window):
    """Colour map, gamma and the dB range re-level the image; each edit is one step."""
    c = window.controls
    first = (window.view.colormap_name, window.view.gamma, window.view.levels())
    pick(qtbot, c.colormap, "viridis")
    assert window.view.colormap_name == "viridis"
    assert plain(edit_menu(window).actions()[0].text()) == "Undo colour map viridis"
    # gamma stepped three times with the arrow key: one step
    c.gamma.setFocus()
    for _ in range(3):
        qtbot.keyClick(c.gamma, Qt.Key.Key_Up)
    assert window.view.gamma == pytest.approx(first[1] + 0.3)
    # the top of the dB range typed into its field
    c.db_high.setFocus()
    c.db_high.selectAll()
    qtbot.keyClicks(c.db_high, "-20")
    qtbot.keyClick(c.db_high, Qt.Key.Key_Return)
    assert window.view.levels()[1] == pytest.approx(-20.0)
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Z, CTRL)  # the dB range comes back
    assert window.view.levels() == pytest.approx(first[2])
    assert c.db_high.value() == pytest.approx(first[2][1])
    qtbot.keyClick(window.view, Qt.Key.Key_Z, CTRL)  # then gamma, in one step
    assert window.view.gamma == pytest.approx(first[1])
    assert c.gamma.value() == pytest.approx(first[1])
    qtbot.keyClick(window.view, Qt.Key.Key_Z, CTRL)  # then the colour map
    assert window.view.colormap_name == first[0]
    assert c.colormap.currentText() == first[0]
    qtbot.keyClick(window.view, Qt.Key.Key_Z, CTRL | SHIFT)  # and redo
    assert window.view.colormap_name == "viridis"
