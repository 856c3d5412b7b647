"""Exports from the app: File › Export range… through its dialog; File › Recent files."""

import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS, idle, settle
from _gui import open_and_wait as open_first
from PyQt6.QtCore import QPoint, Qt
from PyQt6.QtWidgets import QDialogButtonBox
from specscope.app.session import recent_files

FS = 16000


@pytest.fixture
def three_channels(tmp_path):
    """4 s, three channels of different noise below full scale; float32 WAV."""
    rng = np.random.default_rng(7)
    x = np.clip(0.2 * rng.standard_normal((FS * 4, 3)) * [1.0, 0.5, 0.25], -0.9, 0.9)
    x = x.astype(np.float32)                         # within FLAC's full scale
    path = tmp_path / "three.wav"
    soundfile.write(str(path), x, FS, subtype="FLOAT")
    return path, x


#: the windows of these tests: STFT 512/128, 1200 x 800
OPTIONS = {"nfft": 512, "hop": 128, "size": (1200, 800)}


@pytest.fixture
def window(make_window):
    return make_window(**OPTIONS)


def open_and_wait(w, path):
    """Open ``path``; wait for its first image and the end of its jobs."""
    open_first(w, path)
    idle(w)


def _type(qtbot, field, text):
    """Replace a field's text the way a person does: select all, type."""
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)


def test_export_range_of_two_channels_as_flac_through_the_dialog(qtbot, window,
                                                                three_channels, tmp_path):
    path, x = three_channels
    open_and_wait(window, path)
    # the view takes the new span (its debounced viewport signal) and renders it to the end
    with qtbot.waitSignal(window.view.viewportChanged, timeout=TIMEOUT_MS):
        window.view.set_time_range(1.0, 2.5)
    settle(window)
    action = window.menu_actions["export_range"]
    assert action.isEnabled()
    action.trigger()
    dlg = window.exports.range_dialog
    assert dlg is not None and dlg.isVisible()
    # pre-filled from the visible span, every channel checked (though the view shows
    # channel 0)
    assert float(dlg.start.text().rstrip(" s")) == pytest.approx(1.0, abs=1e-3)
    assert float(dlg.stop.text().rstrip(" s")) == pytest.approx(2.5, abs=1e-3)
    assert [b.isChecked() for b in dlg.channel_boxes] == [True, True, True]
    assert not dlg.processed.isEnabled()             # no processing is on
    out = tmp_path / "part.flac"
    _type(qtbot, dlg.path, str(out))
    assert dlg.format.currentText() == "FLAC"
    _type(qtbot, dlg.start, "0.5")
    _type(qtbot, dlg.stop, "1250 ms")
    qtbot.mouseClick(dlg.channel_boxes[1], Qt.MouseButton.LeftButton,
                     pos=QPoint(4, dlg.channel_boxes[1].height() // 2))
    assert [b.isChecked() for b in dlg.channel_boxes] == [True, False, True]
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert window.exports.range_dialog is None        # closed
    back, fs = soundfile.read(str(out), dtype="float64", always_2d=True)
    assert fs == FS
    a, b = int(0.5 * FS), int(1.25 * FS)
    assert back.shape == (b - a, 2)
    # FLAC holds 24-bit samples: equal to the source within half a step
    np.testing.assert_allclose(back, x[a:b][:, [0, 2]], atol=2.0 ** -23 + 1e-9)
    qtbot.waitUntil(lambda: "Exported" in window.message_label.text(), timeout=TIMEOUT_MS)
    assert "samples/s" in window.message_label.text()


def test_export_dialog_says_what_is_wrong_and_stays_open(qtbot, window, three_channels,
                                                         tmp_path):
    path, _ = three_channels
    open_and_wait(window, path)
    window.menu_actions["export_range"].trigger()
    dlg = window.exports.range_dialog
    _type(qtbot, dlg.path, str(tmp_path / "out"))     # no extension: no format
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible() and "extension" in dlg.error.text()
    dlg.format.setCurrentText("WAV")                 # the format box rewrites the extension
    assert dlg.path.text().endswith("out.wav")
    _type(qtbot, dlg.start, "3")
    _type(qtbot, dlg.stop, "2")
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible() and "stop must be after start" in dlg.error.text()
    _type(qtbot, dlg.stop, "0:00:03.5")
    for box in dlg.channel_boxes:
        box.setChecked(False)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible() and "channel" in dlg.error.text()
    dlg.reject()
    assert not (tmp_path / "out.wav").exists()


def test_export_range_through_the_processing(qtbot, window, three_channels, tmp_path):
    path, _ = three_channels
    open_and_wait(window, path)
    window.designer_dock.setVisible(True)
    window.designer.set_spec({"design": "butter", "btype": "lowpass", "order": 4,
                              "cutoff": 1000.0})
    window.designer_panel.apply_box.setChecked(True)
    window.menu_actions["export_range"].trigger()
    dlg = window.exports.range_dialog
    assert dlg.processed.isEnabled() and dlg.processed.isChecked()
    out = tmp_path / "low.wav"
    _type(qtbot, dlg.path, str(out))
    _type(qtbot, dlg.start, "0")
    _type(qtbot, dlg.stop, "4")
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        qtbot.mouseClick(dlg.buttons.button(QDialogButtonBox.StandardButton.Ok),
                         Qt.MouseButton.LeftButton)
    back, _ = soundfile.read(str(out), always_2d=True)
    spec = np.abs(np.fft.rfft(back[:, 0]))
    f = np.fft.rfftfreq(back.shape[0], 1 / FS)
    assert spec[f > 4000].mean() < 0.01 * spec[f < 500].mean()   # filtered


def _open_recent(qtbot, w):
    """Open File › Recent files the way a person does; returns its entries."""
    menu = w.recent_menu
    menu.popup(w.mapToGlobal(QPoint(10, 10)))
    qtbot.waitUntil(menu.isVisible, timeout=TIMEOUT_MS)
    return [a for a in menu.actions() if a.isEnabled()]


def test_recent_files_survive_a_restart_and_drop_missing_ones(qtbot, make_window,
                                                              three_channels, tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CONFIG_DIR", str(tmp_path / "config"))
    path, x = three_channels
    other = tmp_path / "other.wav"
    soundfile.write(str(other), x[:FS, :1], FS, subtype="FLOAT")
    w = make_window(**OPTIONS)
    assert _open_recent(qtbot, w) == []
    w.recent_menu.hide()
    open_and_wait(w, path)
    open_and_wait(w, other)
    entries = _open_recent(qtbot, w)
    assert [a.text() for a in entries] == ["other.wav", "three.wav"]
    w.recent_menu.hide()
    assert w.close()
    assert (tmp_path / "config").is_dir()

    w2 = make_window(**OPTIONS)                      # a new window: the list is kept
    entries = _open_recent(qtbot, w2)
    assert [a.text() for a in entries] == ["other.wav", "three.wav"]
    # choosing an entry opens it
    with qtbot.waitSignal(w2.imageShown, timeout=TIMEOUT_MS):
        qtbot.mouseClick(w2.recent_menu, Qt.MouseButton.LeftButton,
                         pos=w2.recent_menu.actionGeometry(entries[1]).center())
    assert w2.document.path.name == "three.wav"
    idle(w2)
    assert [p.name for p in recent_files()[0]] == ["three.wav", "other.wav"]
    other.unlink()                               # a file that went away is dropped
    entries = _open_recent(qtbot, w2)
    assert [a.text() for a in entries] == ["three.wav"]
    assert "other.wav" in w2.message_label.text()
    w2.recent_menu.hide()


def test_a_long_export_shows_progress_and_cancel_leaves_nothing(qtbot, window, tmp_path):
    fs = 48000
    x = (0.1 * np.random.default_rng(9).standard_normal((fs * 90, 2))).astype(np.float32)
    path = tmp_path / "long.wav"
    soundfile.write(str(path), x, fs, subtype="FLOAT")
    open_and_wait(window, path)
    out = tmp_path / "long-range.h5"
    fractions = []
    window.worker.progress.connect(lambda i, kind, f: fractions.append(f) if kind == "export"
                                   else None)
    with qtbot.waitSignal(window.worker.cancelled, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind: kind == "export"):
        window.exports.export_range_to(out, 0.0, 90.0, [0, 1])
        qtbot.waitUntil(lambda: bool(fractions) and window.cancel_button.isVisible(),
                        timeout=TIMEOUT_MS)
        qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    assert 0.0 <= fractions[-1] < 1.0
    assert not out.exists() and not list(tmp_path.glob("*.partial"))
    qtbot.waitUntil(lambda: "cancelled" in window.message_label.text(), timeout=TIMEOUT_MS)
