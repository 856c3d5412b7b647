"""View › Calibration…: typed or loaded, bad values as one line, the view's levels offset
per row without recomputing, the readout and colour bar in the unit, Ctrl+Z, the session
and its sidecar, the HDF5 exports' attribute and the Levels panel's default."""

from __future__ import annotations

import hashlib
import json

import h5py
import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS, idle, open_and_wait, settle, wait_until
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication
from specscope.compute.levels import Calibration, SpectrumParams, compute_levels, load_calibration
from specscope.compute.pipeline import Pipeline

CTRL = Qt.KeyboardModifier.ControlModifier
FS = 8000
#: 20 log10(2 V) + 170 dB - 20 dB: what -170 dB re 1 V/µPa, 20 dB of gain and 2 V add
OFFSET = 20 * np.log10(2.0) + 170.0 - 20.0


@pytest.fixture
def window(make_window, example_path):
    w = make_window(activate=True)
    open_and_wait(w, example_path)
    return w


@pytest.fixture
def tone(tmp_path):
    """Forty seconds at 8 kHz: a 1 kHz tone in noise."""
    t = np.arange(FS * 40) / FS
    x = 0.3 * np.sin(2 * np.pi * 1000 * t) + 0.01 * np.random.default_rng(0).standard_normal(
        t.size)
    path = tmp_path / "tone.wav"
    soundfile.write(str(path), x.astype(np.float32), FS, subtype="FLOAT")
    return path


def _dialog(qtbot, window):
    window.menu_actions["calibration"].trigger()
    dlg = window.calibration.dialog_widget
    assert dlg is not None
    qtbot.waitUntil(dlg.isVisible, timeout=TIMEOUT_MS)
    return dlg


def _back_to(qtbot, window) -> None:
    """A desktop gives the window back its focus when a dialog closes; offscreen, ask."""
    window.activateWindow()
    window.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.view, timeout=TIMEOUT_MS)


def _type(qtbot, field, text: str) -> None:
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def _type_values(qtbot, dlg, sensitivity="-170", gain="20", full_scale="2") -> None:
    _type(qtbot, dlg.sensitivity, sensitivity)
    _type(qtbot, dlg.gain, gain)
    _type(qtbot, dlg.full_scale, full_scale)


def _jobs(window) -> list[str]:
    kinds: list[str] = []
    window.worker.started.connect(lambda job, kind, label: kinds.append(kind))
    return kinds


def _bar(window) -> str:
    return window.view.colorbar.getAxis("left").labelText


def test_typed_calibration_offsets_the_view_without_recomputing_and_undoes(qtbot, window):
    view = window.view
    raw, bg_raw = view.image_data.copy(), view._bg[0].copy()
    lo, hi = view.levels()
    assert _bar(window) == "Level (dB re 1 FS²/Hz)"
    jobs = _jobs(window)
    dlg = _dialog(qtbot, window)
    assert dlg.kind.currentText() == "hydrophone"
    _type_values(qtbot, dlg)
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dlg.isVisible(), timeout=TIMEOUT_MS)
    assert window.settings.calibration_obj == Calibration("hydrophone", -170.0, 20.0, 2.0)
    # every cell offset by the calibration, the colour range with it: the same picture
    np.testing.assert_allclose(view.image_data, raw + OFFSET, atol=1e-3)
    np.testing.assert_allclose(view._bg[0], bg_raw + OFFSET, atol=1e-3)
    assert view.levels() == pytest.approx((lo + OFFSET, hi + OFFSET), abs=0.01)
    assert (window.controls.db_low.value(), window.controls.db_high.value()) == \
        pytest.approx((lo + OFFSET, hi + OFFSET), abs=0.5)  # whole dB
    assert _bar(window) == "Level (dB re 1 µPa²/Hz)"
    # the readout gives the calibrated level with its unit
    edges_t, edges_f = window.last_image.column_edges, window.last_image.frequency_edges
    j, i = 100, 40
    t, f = (edges_t[j] + edges_t[j + 1]) / 2, (edges_f[i] + edges_f[i + 1]) / 2
    window.show_cursor(t, f, view.value_at(t, f))
    assert f"{raw[i, j] + OFFSET:.1f} dB re 1 µPa²/Hz" in window.cursor_label.text()
    idle(window)
    assert not {"detail", "overview", "open"} & set(jobs), jobs  # nothing recomputed
    # Ctrl+Z: the previous calibration (none) and its levels come back
    assert window.menu_actions["undo"].text().endswith("calibration")
    _back_to(qtbot, window)
    qtbot.keyClick(view, Qt.Key.Key_Z, CTRL)
    assert window.settings.calibration == ""
    np.testing.assert_array_equal(view.image_data, raw)
    assert view.levels() == pytest.approx((lo, hi), abs=0.01)
    assert _bar(window) == "Level (dB re 1 FS²/Hz)"
    window.show_cursor(t, f, view.value_at(t, f))
    assert window.cursor_label.text().endswith(f"{raw[i, j]:.1f} dB")


def test_bad_values_and_files_are_one_line_and_change_nothing(qtbot, window, tmp_path):
    view = window.view
    raw, levels = view.image_data.copy(), view.levels()
    dlg = _dialog(qtbot, window)
    _type_values(qtbot, dlg, sensitivity="-17o")
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible()
    assert dlg.error.text() == "calibration sensitivity_db='-17o': must be a finite number"
    _type_values(qtbot, dlg, full_scale="0")
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    assert dlg.error.text() == "calibration full_scale_v=0.0: must be above 0 V"
    # a file in a unit no sensor has: the line names the file and the value
    bad = tmp_path / "cal.json"
    bad.write_text(json.dumps({"unit": "dB re 1 V/mPa", "sensitivity_db": -170}))
    before = hashlib.sha256(bad.read_bytes()).hexdigest()
    _type(qtbot, dlg.file, str(bad))
    qtbot.mouseClick(dlg.load, Qt.MouseButton.LeftButton)
    assert dlg.error.text().startswith(f"{bad}: calibration unit='dB re 1 V/mPa'")
    assert "\n" not in dlg.error.text()
    # a response table whose frequencies go back
    table = tmp_path / "response.csv"
    table.write_text("frequency,db\n10,0\n1000,1\n500,2\n")
    _type(qtbot, dlg.full_scale, "2")
    _type(qtbot, dlg.file, str(table))
    qtbot.keyClick(dlg.file, Qt.Key.Key_Return)
    assert "frequencies must increase (row 3 after 1000 Hz)" in dlg.error.text()
    assert dlg.isVisible()
    qtbot.mouseClick(dlg.cancel, Qt.MouseButton.LeftButton)
    # nothing changed: settings, view, undo stack, the file
    assert window.settings.calibration == ""
    np.testing.assert_array_equal(view.image_data, raw)
    assert view.levels() == levels
    assert window.undo_stack.count() == 0
    assert hashlib.sha256(bad.read_bytes()).hexdigest() == before


def test_a_response_table_offsets_each_row_at_its_frequency(qtbot, window, tmp_path):
    view = window.view
    raw = view.image_data.copy()
    table = tmp_path / "response.csv"
    table.write_text("frequency,db\n0,-6\n5000,0\n24000,6\n")
    dlg = _dialog(qtbot, window)
    _type_values(qtbot, dlg, gain="0", full_scale="1")
    _type(qtbot, dlg.file, str(table))
    qtbot.mouseClick(dlg.load, Qt.MouseButton.LeftButton)
    assert dlg.error.text() == "" and dlg.response_label.text() == "3 points, 0 to 24000 Hz"
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    cal = window.settings.calibration_obj
    assert cal.response == ((0.0, 5000.0, 24000.0), (-6.0, 0.0, 6.0))
    fe = window.last_image.frequency_edges
    centres = (fe[:-1] + fe[1:]) / 2
    expected = 170.0 - np.interp(centres, [0, 5000, 24000], [-6, 0, 6])
    np.testing.assert_allclose(view.image_data - raw, np.repeat(
        expected[:, None], raw.shape[1], 1), atol=1e-3)
    # Clear: no calibration, in one undoable step
    dlg = _dialog(qtbot, window)
    assert dlg.response_label.text() == "3 points, 0 to 24000 Hz"
    qtbot.mouseClick(dlg.clear, Qt.MouseButton.LeftButton)
    assert window.settings.calibration == ""
    np.testing.assert_array_equal(view.image_data, raw)
    _back_to(qtbot, window)
    qtbot.keyClick(view, Qt.Key.Key_Z, CTRL)
    assert window.settings.calibration_obj == cal


def test_session_keeps_the_calibration_with_a_sidecar(qtbot, window, make_window, tmp_path):
    dlg = _dialog(qtbot, window)
    _type_values(qtbot, dlg)
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    levels = window.view.levels()
    session = tmp_path / "site.specscope.json"
    assert window.save_session(session)
    state = json.loads(session.read_text())
    assert state["calibration"] == {"kind": "hydrophone", "unit": "dB re 1 V/uPa",
                                    "sensitivity_db": -170.0, "gain_db": 20.0,
                                    "full_scale_v": 2.0}
    sidecar = tmp_path / "site.specscope.calibration.json"
    assert load_calibration(sidecar) == window.settings.calibration_obj
    # saved again unchanged: the sidecar is left as it is
    stamp = sidecar.stat().st_mtime_ns
    assert window.save_session(session)
    assert sidecar.stat().st_mtime_ns == stamp
    # reopened in a new window: the calibration, its unit and the levels as saved
    other = make_window()
    shown = []
    other.imageShown.connect(lambda: shown.append(True))
    assert other.open_session(session)
    wait_until(lambda: shown, TIMEOUT_MS, "the session's first image")
    idle(other)
    assert other.settings.calibration_obj == window.settings.calibration_obj
    assert _bar(other) == "Level (dB re 1 µPa²/Hz)"
    assert other.view.levels() == pytest.approx(levels, abs=0.01)
    np.testing.assert_allclose(other.view.image_data, other.last_image.db + OFFSET,
                               atol=1e-3)


def test_a_bad_calibration_in_a_session_is_one_line(qtbot, window, tmp_path):
    session = tmp_path / "s.json"
    assert window.save_session(session)
    state = json.loads(session.read_text())
    state["calibration"] = {"kind": "hydrophone", "sensitivity_db": "loud"}
    session.write_text(json.dumps(state))
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as blocker:
        window.open_session(session)
    assert blocker.args[0] == f"{session}: calibration sensitivity_db='loud': must be a " \
                              "finite number"
    assert window.settings.calibration == ""


def test_hdf5_exports_carry_the_calibration(qtbot, window, tmp_path):
    def export(call, out):
        with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                              check_params_cb=lambda i, kind, r: kind == "export"):
            call(out)
        with h5py.File(out, "r") as f:
            return dict(f.attrs)

    assert "calibration" not in export(window.export_to, tmp_path / "none.h5")
    dlg = _dialog(qtbot, window)
    _type_values(qtbot, dlg)
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    cal = window.settings.calibration_obj
    for name, call in (("spec.h5", window.export_to),
                       ("range.h5", lambda out: window.exports.export_range_to(out, 1.0, 2.0)),
                       ("view.h5", window.exports.export_view)):
        attrs = export(call, tmp_path / name)
        assert Calibration.from_dict(json.loads(attrs["calibration"])) == cal, name
    # with processing: the same writer as a range, the attribute with it
    window.open_pipeline(Pipeline.from_dict({"specscope": "pipeline/1", "steps": [
        {"op": "filter", "params": {"design": "butter", "btype": "highpass", "cutoff": 100,
                                    "order": 4}},
        {"op": "spectrogram", "params": {"nfft": 1024, "hop": 256}}]}))
    idle(window)
    attrs = export(window.export_to, tmp_path / "processed.h5")
    assert Calibration.from_dict(json.loads(attrs["calibration"])) == cal


def test_levels_panel_computes_with_the_recordings_calibration(qtbot, window, tone, tmp_path):
    open_and_wait(window, tone)
    dlg = _dialog(qtbot, window)
    _type_values(qtbot, dlg, gain="10", full_scale="1")
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    panel = window.levels.panel
    assert panel.calibration_field.placeholderText().startswith(
        "the recording's: hydrophone, -170 dB")
    panel.bands_box.setCurrentIndex(panel.bands_box.findData("octave"))
    panel.interval_box.setValue(20.0)
    window.menu_actions["compute_levels"].trigger()
    qtbot.mouseClick(panel.compute_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: panel.plots is not None or panel.status.styleSheet(), TIMEOUT_MS,
               "the levels computed")
    assert panel.plots is not None, panel.status.text()
    ref = compute_levels(tone, bands="octave", params=SpectrumParams(interval=20.0),
                         cache=False)
    np.testing.assert_allclose(panel.plots.db, ref.db() + 160.0, rtol=1e-12)
    assert panel.plots.unit == "dB re 1 µPa²/Hz"
    # its own field still wins: a microphone file
    mic = tmp_path / "mic.json"
    mic.write_text(json.dumps({"unit": "dB re 1 V/Pa", "sensitivity_db": -40}))
    panel.calibration_field.setText(str(mic))
    qtbot.mouseClick(panel.compute_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: panel.plots is not None and panel.plots.unit == "dB re 20 µPa²/Hz",
               TIMEOUT_MS, "the levels with the panel's file")
    idle(window)


def test_a_difference_image_takes_no_calibration(qtbot, window):
    window.designer_dock.setVisible(True)
    window.designer.set_spec({"design": "butter", "btype": "highpass", "order": 6,
                              "cutoff": 1000.0}, emit=False)
    window.designer_panel.apply_box.setChecked(True)
    settle(window)
    dlg = _dialog(qtbot, window)
    _type_values(qtbot, dlg)
    qtbot.mouseClick(dlg.ok, Qt.MouseButton.LeftButton)
    window.designer_panel.compare.setCurrentText("difference")
    settle(window)
    view = window.view
    # after minus before, in dB: as computed, on its own symmetric scale
    np.testing.assert_array_equal(view.image_data, window.last_image.db)
    assert _bar(window) == "Difference (dB)"
    lo, hi = view.levels()
    assert lo == -hi
    window.designer_panel.compare.setCurrentText("after")
    settle(window)
    np.testing.assert_allclose(view.image_data, window.last_image.db + OFFSET, atol=1e-3)
    assert _bar(window) == "Level (dB re 1 µPa²/Hz)"
