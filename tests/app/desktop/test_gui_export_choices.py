"""Export dialogs remember this session's choices; WAV sample formats; the PNG of the view
has no cursor in it; a click on the overview moves the view there."""

import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtWidgets import QDialogButtonBox
from test_gui_exports import FS, OPTIONS, _type, open_and_wait


def show_span(qtbot, window, t0, t1):
    """Show ``t0 .. t1`` s; wait until that span reached the overview (the view's viewport
    signal, after its debounce, was handled)."""
    window.view.set_time_range(t0, t1)
    qtbot.waitUntil(lambda: window.view.overview.region.getRegion() == pytest.approx(
        (t0, t1), abs=1e-3 * (t1 - t0)), timeout=TIMEOUT_MS)


@pytest.fixture
def window(make_window):
    return make_window(**OPTIONS)


@pytest.fixture
def three_channels(tmp_path):
    """4 s, three channels of different noise below full scale; float32 WAV."""
    rng = np.random.default_rng(8)
    x = np.clip(0.2 * rng.standard_normal((FS * 4, 3)) * [1.0, 0.5, 0.25], -0.9, 0.9)
    x = x.astype(np.float32)
    path = tmp_path / "three.wav"
    soundfile.write(str(path), x, FS, subtype="FLOAT")
    return path, x


def test_the_range_dialog_remembers_folder_format_channels_range_and_samples(
        qtbot, window, three_channels, tmp_path):
    path, x = three_channels
    open_and_wait(window, path)
    window.menu_actions["export_range"].trigger()
    dlg = window.exports.range_dialog
    assert [dlg.sample_format.itemText(i) for i in range(dlg.sample_format.count())] == []
    folder = tmp_path / "out"
    folder.mkdir()
    _type(qtbot, dlg.path, str(folder / "a.wav"))
    assert dlg.format.currentText() == "WAV"
    assert [dlg.sample_format.itemText(i) for i in range(dlg.sample_format.count())] == [
        "32-bit float", "24-bit PCM", "16-bit PCM"]
    dlg.sample_format.setCurrentText("24-bit PCM")
    dlg.range.setCurrentText("Whole recording")
    assert float(dlg.stop.text().rstrip(" s")) == pytest.approx(len(x) / FS, abs=1e-3)
    for c in (0, 2):  # keep channel 1 only
        qtbot.mouseClick(dlg.channel_boxes[c], Qt.MouseButton.LeftButton,
                         pos=QPoint(4, dlg.channel_boxes[c].height() // 2))
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        qtbot.mouseClick(dlg.buttons.button(QDialogButtonBox.StandardButton.Ok),
                         Qt.MouseButton.LeftButton)
    info = soundfile.info(str(folder / "a.wav"))
    assert (info.subtype, info.channels, info.frames) == ("PCM_24", 1, len(x))
    back, _ = soundfile.read(str(folder / "a.wav"), dtype="float64")
    np.testing.assert_allclose(back, x[:, 1], atol=2.0 ** -23 + 1e-9)
    # the next dialog of this session starts where this one ended
    show_span(qtbot, window, 0.5, 1.0)
    window.menu_actions["export_range"].trigger()
    dlg = window.exports.range_dialog
    assert dlg.path.text().startswith(str(folder))
    assert dlg.path.text().endswith(".wav") and dlg.format.currentText() == "WAV"
    assert dlg.sample_format.currentText() == "24-bit PCM"
    assert [b.isChecked() for b in dlg.channel_boxes] == [False, True, False]
    assert dlg.range.currentText() == "Whole recording"
    assert float(dlg.start.text().rstrip(" s")) == 0.0
    dlg.reject()


def test_flac_offers_16_and_24_bit_only(qtbot, window, three_channels, tmp_path):
    open_and_wait(window, three_channels[0])
    window.menu_actions["export_range"].trigger()
    dlg = window.exports.range_dialog
    dlg.format.setCurrentText("FLAC")
    assert [dlg.sample_format.itemData(i) for i in range(dlg.sample_format.count())] == [
        "PCM_24", "PCM_16"]
    assert dlg.choice().subtype == "PCM_24"
    dlg.format.setCurrentText("HDF5")
    assert not dlg.sample_format.isEnabled() and dlg.choice().subtype is None
    dlg.reject()


def test_the_png_of_the_view_has_no_cursor(qtbot, window, three_channels, tmp_path):
    open_and_wait(window, three_channels[0])
    view = window.view
    vb = view.plot.getViewBox()
    p = view.mapFromScene(vb.mapViewToScene(QPointF(1.0, 2000.0)))
    qtbot.mouseMove(view.viewport(), QPoint(p.x(), p.y()))
    qtbot.waitUntil(lambda: view._vline.isVisible(), timeout=TIMEOUT_MS)
    with_cursor = view.grab().toImage()
    out = tmp_path / "view.png"
    assert window.exports.export_png(out)
    assert view._vline.isVisible()  # the cursor is back on screen
    from PyQt6.QtGui import QImage
    png = QImage(str(out))
    for line in (view._vline, view._hline):
        line.setVisible(False)
    view._slice_curve.setData([], [])
    clean = view.grab().toImage()
    assert png.size() == clean.size()
    assert png.convertToFormat(clean.format()) == clean
    assert with_cursor != clean  # the cursor was there to leave out


def test_a_click_on_the_overview_moves_the_view_there(qtbot, window, three_channels):
    open_and_wait(window, three_channels[0])
    view = window.view
    show_span(qtbot, window, 0.2, 0.7)
    ovb = view.overview.getViewBox()
    target = 2.2
    p = view.mapFromScene(ovb.mapViewToScene(QPointF(target, 0.0)))
    p = QPoint(p.x(), view.mapFromScene(ovb.sceneBoundingRect().center()).y())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=p)
    qtbot.waitUntil(lambda: abs(sum(view.visible_range()[:2]) / 2 - target) < 0.05,
                    timeout=TIMEOUT_MS)
    t0, t1, _, _ = view.visible_range()
    assert t1 - t0 == pytest.approx(0.5, rel=0.02)  # the same zoom
