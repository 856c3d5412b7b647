"""The main window, offscreen: open, compute in the background, draw, export, errors."""

import threading

import h5py
import numpy as np
import pytest
from _gui import TIMEOUT_MS, open_and_wait, settle
from PyQt6.QtCore import Qt
from specscope.app.session import ViewSettings
from specscope.compute import open_recording
from specscope.compute.errors import InputError
from specscope.compute.spectral import to_db
from specscope.compute.view import TileEngine


def test_opens_example_and_draws_off_the_gui_thread(qtbot, window, example_path):
    gui_thread = threading.get_ident()
    threads = []
    window.worker.finished.connect(lambda i, kind, r: threads.append((kind, r.thread_id)))
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_path(example_path)
    # each queued connection is its own event: let ours arrive too
    qtbot.waitUntil(lambda: {"open", "overview", "detail"} <= {k for k, _ in threads},
                    timeout=TIMEOUT_MS)
    assert all(tid != gui_thread for _, tid in threads), "computed on the GUI thread"
    img = window.view.image_data
    r = window.last_request
    t0, t1, width, reduce = r.t0, r.t1, r.width, r.reduce
    assert img is not None and img.dtype == np.float32
    assert img.shape == (513, width)
    assert width == window.view.plot_size_px()[0] > 100
    # what is drawn is the tile engine's image of the visible span
    with open_recording(example_path) as rec:
        ref = TileEngine(rec, nfft=1024, hop=256).render(t0, t1, width, reduce)
    np.testing.assert_array_equal(img, to_db(ref.image))
    assert "scene.wav" in window.file_label.text() and "48 kHz" in window.file_label.text()
    assert "numpy" in window.backend_label.text()
    lo, hi = window.view.levels()
    assert hi > lo


def test_zoom_renders_the_new_span(qtbot, window, example_path):
    open_and_wait(window, example_path)
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "detail"):
        window.view.set_time_range(5.0, 6.0)
    r = window.last_request
    t0, t1 = r.t0, r.t1
    assert (t0, t1) == pytest.approx((5.0, 6.0), abs=0.01)
    edges = window.last_image.column_edges
    assert edges[0] == pytest.approx(5.0, abs=0.01) and edges[-1] == pytest.approx(6.0, abs=0.01)
    # zoomed in past one frame per column: frames are repeated, level 0
    assert window.last_image.level == 0
    region = window.overview.region.getRegion()
    assert region == pytest.approx((5.0, 6.0), abs=0.01)


def test_overview_drag_moves_the_view(qtbot, window, example_path):
    open_and_wait(window, example_path)
    window.view.set_time_range(1.0, 3.0)
    # the view's span reached the overview (through the view's debounce)
    qtbot.waitUntil(lambda: window.overview.region.getRegion() == pytest.approx(
        (1.0, 3.0), abs=0.02), timeout=TIMEOUT_MS)
    window.overview.region.setRegion((10.0, 12.0))  # as a drag would
    qtbot.waitUntil(lambda: window.view.visible_range()[:2] == pytest.approx(
        (10.0, 12.0), abs=0.02), timeout=TIMEOUT_MS)
    settle(window)  # and it stays there once everything the drag posted has run
    t0, t1, _, _ = window.view.visible_range()
    assert (t0, t1) == pytest.approx((10.0, 12.0), abs=0.02)


def test_parameter_change_recomputes(qtbot, window, example_path):
    open_and_wait(window, example_path)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.controls.nfft.setCurrentText("256")
    qtbot.waitUntil(lambda: window.view.image_data.shape[0] == 129, timeout=TIMEOUT_MS)


def test_levels_relevel_without_recomputing(qtbot, window, example_path):
    open_and_wait(window, example_path)
    jobs = []
    window.worker.started.connect(lambda *a: jobs.append(a))
    window.controls.db_low.setValue(-100.0)
    window.controls.db_high.setValue(-20.0)
    window.controls.colormap.setCurrentText("viridis")
    lut_before = window.view.image.lut.copy() if window.view.image.lut is not None else None
    window.controls.gamma.setValue(2.0)
    # a recomputation would be scheduled by now (the controls emit at once): settle waits
    # for it and its jobs, which ``jobs`` would then hold
    settle(window)
    assert window.view.levels() == (-100.0, -20.0)
    assert window.view.colormap_name == "viridis"
    assert window.view.gamma == 2.0
    lut = window.view.image.lut
    assert lut is not None and (lut_before is None or not np.array_equal(lut, lut_before))
    # gamma 2: the colour at a quarter of the range is the map's colour at a sixteenth
    import pyqtgraph as pg

    ref = pg.colormap.get("viridis").getLookupTable(nPts=len(lut))
    q = len(lut) // 4
    np.testing.assert_allclose(lut[q][:3], ref[len(lut) // 16][:3], atol=6)
    assert jobs == []


def test_cursor_readout(qtbot, window, example_path):
    open_and_wait(window, example_path)
    img = window.view.image_data
    t_edges = window.last_image.column_edges
    f_edges = window.last_image.frequency_edges
    j, i = 100, 40
    t = (t_edges[j] + t_edges[j + 1]) / 2
    f = (f_edges[i] + f_edges[i + 1]) / 2
    assert window.view.value_at(t, f) == pytest.approx(img[i, j])
    window.show_cursor(t, f, window.view.value_at(t, f))
    assert f"{img[i, j]:.1f} dB" in window.cursor_label.text()


def test_bad_file_shows_error_and_keeps_working(qtbot, window, example_path, tmp_path):
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF\x00\x00garbage" * 10)
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as blocker:
        window.open_path(bad)
    assert "broken.wav" in blocker.args[0]
    assert "broken.wav" in window.message_label.text()
    open_and_wait(window, example_path)  # still works
    assert window.view.image_data is not None


def test_bad_parameter_shows_error_without_computing(qtbot, window, example_path):
    open_and_wait(window, example_path)
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as blocker:
        window.controls.window.setCurrentText("nope")
    assert "window='nope'" in blocker.args[0]


def test_export_from_gui(qtbot, window, example_path, tmp_path):
    open_and_wait(window, example_path)
    out = tmp_path / "gui.h5"
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        window.export_to(out)
    with h5py.File(out, "r") as h:
        assert h["spectrogram"].shape == ((960000 - 1024) // 256 + 1, 513)
        assert h.attrs["source_path"].endswith("scene.wav")
    assert "Exported" in window.message_label.text()


def test_log_frequency_axis(qtbot, window, example_path):
    open_and_wait(window, example_path)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.controls.freq_scale.setCurrentText("log")
    qtbot.waitUntil(lambda: window.last_image is not None
                    and window.last_image.frequency_edges[0] > 0, timeout=TIMEOUT_MS)
    fe = window.last_image.frequency_edges
    # rows are uniform in log10(f), and the axis is in log10 coordinates
    np.testing.assert_allclose(np.diff(np.log10(fe)), np.log10(fe[1] / fe[0]), rtol=1e-9)
    t0, t1, f0, f1 = window.view.visible_range()
    assert f0 == pytest.approx(fe[0], rel=1e-6) and f1 == pytest.approx(fe[-1], rel=1e-6)
    rect = window.view.image.mapRectToParent(window.view.image.boundingRect())
    assert rect.top() == pytest.approx(np.log10(fe[0]), rel=1e-6)
    # the readout converts back to Hz: 50 Hz hum reads as 50 Hz
    level = window.view.value_at((t0 + t1) / 2, 50.0)
    assert np.isfinite(level) and level > window.view.image_data.mean()


def test_frequency_axis_ticks_are_round_hz():
    from specscope.widgets.frequency_axis import FrequencyAxis, forward, inverse

    ax = FrequencyAxis()
    for scale in ("log", "mel"):
        ax.set_scale(scale)
        lo, hi = forward(scale, [20.0, 20000.0])
        major = ax.tickValues(float(lo), float(hi), 600)[0][1]
        labels = ax.tickStrings(major, 1.0, 1.0)
        assert "100" in labels and "1k" in labels and "10k" in labels
        np.testing.assert_allclose(inverse(scale, forward(scale, [50.0, 7000.0])), [50, 7000])


def test_undo_redo_parameter_changes(qtbot, window, example_path):
    open_and_wait(window, example_path)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.controls.nfft.setCurrentText("512")
    qtbot.waitUntil(lambda: window.view.image_data.shape[0] == 257, timeout=TIMEOUT_MS)
    window.controls.peak_hold.setChecked(True)
    assert window.settings.reduce == "max"
    window.undo_stack.undo()
    assert window.settings.reduce == "mean" and not window.controls.peak_hold.isChecked()
    window.undo_stack.undo()
    assert window.settings.stft.nfft == 1024
    assert window.controls.nfft.currentText() == "1024"
    qtbot.waitUntil(lambda: window.view.image_data.shape[0] == 513, timeout=TIMEOUT_MS)
    window.undo_stack.redo()
    assert window.settings.stft.nfft == 512
    assert window.undo_stack.text(0) == "FFT size 512"


@pytest.mark.slow
def test_session_round_trip(qtbot, window, make_window, example_path, tmp_path):
    open_and_wait(window, example_path)
    window.controls.window.setCurrentText("kaiser,8")
    window.controls.hop.setValue(128)
    window.controls.colormap.setCurrentText("viridis")
    window.view.set_time_range(4.0, 9.0)
    window.view.set_levels(-100.0, -40.0)
    # the typed window is taken after a pause in typing: wait for it to be the setting
    qtbot.waitUntil(lambda: (window.settings.stft.window, window.settings.stft.hop)
                    == (("kaiser", 8.0), 128), timeout=TIMEOUT_MS)
    settle(window)
    path = tmp_path / "s.json"
    window.save_session(path)

    other = make_window(ViewSettings())
    with qtbot.waitSignal(other.imageShown, timeout=TIMEOUT_MS):
        assert other.open_session(path)
    s = other.settings
    assert (s.stft.window, s.stft.hop) == (("kaiser", 8.0), 128)
    assert other.view.colormap_name == "viridis"
    assert other.view.levels() == (-100.0, -40.0)
    t0, t1, _, _ = other.view.visible_range()
    assert (t0, t1) == pytest.approx((4.0, 9.0), abs=0.01)


def test_bad_session_file_is_reported(qtbot, window, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"specscope": "something else"}')
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as b:
        assert not window.open_session(bad)
    assert "not a specscope session" in b.args[0]


def test_export_view_values(qtbot, window, example_path, tmp_path):
    open_and_wait(window, example_path)
    out = tmp_path / "view.h5"
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        window.exports.export_view(out)
    img = window.last_image
    with h5py.File(out, "r") as h:
        np.testing.assert_array_equal(h["level_db"][...], img.db.T)
        np.testing.assert_allclose(h["time_edges"][...], img.column_edges)
        assert h["level_db"].attrs["reduce"] == "mean"
        assert h.attrs["source_path"].endswith("scene.wav")


def test_export_png(qtbot, window, example_path, tmp_path):
    from PyQt6.QtGui import QImage

    open_and_wait(window, example_path)
    out = tmp_path / "v.png"
    window.exports.export_png(out)
    img = QImage(str(out))
    assert img.width() == window.view.width() and img.height() == window.view.height()


def test_keyboard_pans_and_zooms(qtbot, window, example_path):
    open_and_wait(window, example_path)
    window.view.set_time_range(4.0, 8.0)
    qtbot.keyClick(window.view, Qt.Key.Key_Right)
    assert window.view.visible_range()[:2] == pytest.approx((4.4, 8.4), abs=1e-6)
    qtbot.keyClick(window.view, Qt.Key.Key_Minus)
    assert window.view.visible_range()[:2] == pytest.approx((2.4, 10.4), abs=1e-6)
    qtbot.keyClick(window.view, Qt.Key.Key_Plus)
    assert window.view.visible_range()[:2] == pytest.approx((4.4, 8.4), abs=1e-6)


def test_measurement_reference_and_harmonics(qtbot, window, example_path):
    open_and_wait(window, example_path)
    window.view.set_reference(1.0, 1000.0)
    window.show_cursor(1.5, 1500.0, window.view.value_at(1.5, 1500.0))
    text = window.cursor_label.text()
    assert "Δt = +500.0 ms" in text and "Δf = +500 Hz" in text and "ΔL =" in text
    window.menu_actions["harmonics"].trigger()
    window.view._update_harmonics(440.0)
    pos = [line.value() for line in window.view._harmonics]
    assert pos[:3] == pytest.approx([880.0, 1320.0, 1760.0])
    window.view.clear_reference()
    assert window.view.reference is None


def test_waveform_appears_when_zoomed_to_samples(qtbot, window, example_path):
    open_and_wait(window, example_path)
    assert not window.view.waveform.isVisible()
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "detail"):
        window.view.set_time_range(3.2, 3.21)
    assert window.view.waveform.isVisible()
    x, y = window.view._wave_curve.getData()
    with open_recording(example_path) as rec:
        ref = rec.read(int(x[0] * 48000 + 0.5), int(x[0] * 48000 + 0.5) + len(y))[:, 0]
    np.testing.assert_array_equal(y, ref)


def test_spectrum_slice_is_the_column_under_the_cursor(qtbot, window, example_path):
    open_and_wait(window, example_path)
    img = window.last_image
    j = 200
    t = (img.column_edges[j] + img.column_edges[j + 1]) / 2
    window.view._update_slice(t)
    x, _y = window.view._slice_curve.getData()
    np.testing.assert_array_equal(x, img.db[:, j])


@pytest.mark.parametrize("error", [RuntimeError("tile store unreadable"),
                                   InputError("scene.wav: read failed at sample 96000")])
def test_a_failed_view_job_says_so_on_the_status_line(qtbot, window, example_path,
                                                      monkeypatch, error):
    open_and_wait(window, example_path)
    settle(window)
    shown = window.view.image_data.copy()

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(window.views.engine, "render", broken)
    with qtbot.waitSignal(window.worker.failed, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, e: kind == "detail"):
        window.view.set_time_range(5.0, 6.0)
    qtbot.waitUntil(lambda: str(error) in window.message_label.text(), timeout=TIMEOUT_MS)
    text = window.message_label.text()
    assert "\n" not in text and text.startswith("Error: Computing view")
    if isinstance(error, RuntimeError):  # a bug: its type named too
        assert "RuntimeError: tile store unreadable" in text
    np.testing.assert_array_equal(window.view.image_data, shown)  # the image stays
    # the engine works again: the next view job is drawn
    monkeypatch.undo()
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "detail"):
        window.view.set_time_range(6.0, 7.0)
    assert window.last_image.column_edges[0] == pytest.approx(6.0, abs=0.01)


def test_no_tile_is_computed_on_the_gui_thread(qtbot, window, example_path, monkeypatch):
    gui = threading.get_ident()
    seen = []
    original = TileEngine.spectra  # every tile's frames go through it, one or a run

    def spy(self, *args, **kwargs):
        seen.append(threading.get_ident())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TileEngine, "spectra", spy)
    open_and_wait(window, example_path)
    for span in ((2.0, 4.0), (0.5, 0.6), (10.0, 19.0)):
        with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                              check_params_cb=lambda i, kind, r: kind == "detail"):
            window.view.set_time_range(*span)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.controls.peak_hold.setChecked(True)
    assert seen, "no tile was computed at all"
    assert gui not in seen


def _menu_shortcuts(menu, path):
    """(keys, text, menu path) of every entry of ``menu`` that has a shortcut."""
    from PyQt6.QtGui import QKeySequence

    found = set()
    for act in menu.actions():
        if act.isSeparator():
            continue
        if act.menu() is not None:
            found |= _menu_shortcuts(act.menu(), f"{path} › {act.text().replace('&', '')}")
            continue
        keys = " / ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                          for k in act.shortcuts() if not k.isEmpty())
        if keys:
            found.add((keys, act.text().replace("&", ""), path))
    return found


def test_f1_lists_exactly_the_menu_shortcuts(qtbot, window):
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: window.shortcuts_dialog is not None
                    and window.shortcuts_dialog.isVisible(), timeout=TIMEOUT_MS)
    table = window.shortcuts_dialog.table
    rows = {tuple(table.item(i, j).text() for j in range(3)) for i in range(table.rowCount())}
    expected = set()
    for top in window.menuBar().actions():
        expected |= _menu_shortcuts(top.menu(), top.text().replace("&", ""))
    listed = {r for r in rows
              if r[2].split(" › ")[0] in ("File", "Edit", "View", "Detect", "Help")}
    assert listed == expected  # every menu shortcut, and nothing that is not one
    keys = {k for k, _, _ in listed}
    assert {"F1", "Ctrl+O", "Ctrl+E", "Ctrl+F", "Esc", "Home / Ctrl+0", "Z", "H"} <= keys
    assert ("Ctrl+F", "Filter designer", "View") in listed
    gestures = rows - listed
    assert {r[0] for r in gestures} >= {"Left / Right", "Mouse drag / wheel", "N"}
