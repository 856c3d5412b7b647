"""The filter designer in the app: click a hum line, drag band edges, compare, export."""

import json

import h5py
import numpy as np
import pytest
import scipy.signal
from _gui import TIMEOUT_MS, open_designer, settle
from PyQt6.QtCore import QPoint, QPointF, Qt
from specscope.compute.filters import read_coefficients
from specscope.widgets.frequency_axis import forward


@pytest.fixture
def window(make_window, example_path):
    return open_designer(make_window, example_path)


def designed(qtbot, window):
    """Wait until the designer shows the newest design asked for (designs are jobs)."""
    qtbot.waitUntil(lambda: not window.designer.busy(), timeout=TIMEOUT_MS)


def click_spectrogram(qtbot, view, t, f):
    """A real left click on the spectrogram at time ``t`` s and frequency ``f`` Hz."""
    vb = view.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(t, float(forward(view.freq_scale, f))))
    p = view.mapFromScene(scene)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(p.x(), p.y()))


def test_click_on_the_hum_line_notches_it_and_its_harmonics(qtbot, window):
    t = 5.0
    before = [window.view.value_at(t, k * 50.0) for k in (1, 2, 3)]
    hz_per_pixel = window.view.plot.getViewBox().viewPixelSize()[1]
    assert hz_per_pixel > 10  # normal zoom: the click cannot say where the line is exactly
    window.designer_panel.notch_mode.setChecked(True)
    assert window.view.click_mode == "notch"
    click_spectrogram(qtbot, window.view, t, 50.0 + 0.4 * hz_per_pixel)  # off the line
    qtbot.waitUntil(lambda: window.settings.designer != "", timeout=TIMEOUT_MS)
    designed(qtbot, window)
    settle(window)
    assert window.view.click_mode == "reference"
    spec = json.loads(window.settings.designer)
    # scene.wav: hum at exactly 50 Hz, harmonics 1-8 above the noise floor: 8 notches
    assert spec["design"] == "notches" and spec["harmonics"] == 8
    assert spec["frequency"] == pytest.approx(50.0, abs=0.05)
    assert window.designer_panel.line_info.text() == "50.00 Hz, harmonics 1–8 above the floor"
    d = window.designer.design
    assert d.sections == 8
    after = [window.view.value_at(t, k * 50.0) for k in (1, 2, 3)]
    for k, (x, y) in enumerate(zip(before, after, strict=True), start=1):
        assert y < x - 20, f"harmonic {k}: {x:.1f} dB -> {y:.1f} dB"
    window.undo_stack.undo()
    assert window.settings.designer == ""


def test_dragging_band_edges_designs_what_scipy_designs(qtbot, window):
    chirp_before = window.view.value_at(4.4, 4600.0)
    noise_before = window.view.value_at(4.4, 1000.0)
    window.designer.set_spec({"design": "butter", "btype": "bandpass", "order": 4,
                              "cutoff": [300.0, 3000.0]}, emit=False)
    window.designer_panel.apply_box.setChecked(True)
    settle(window)
    # drag the upper edge on the spectrogram: a live preview, then the commit on release
    window.view.filterLineMoved.emit("cutoff", 1, 2500.0, False)
    qtbot.waitUntil(lambda: window.views.preview_engine is not None, timeout=TIMEOUT_MS)
    window.view.filterLineMoved.emit("cutoff", 1, 2000.0, True)
    qtbot.waitUntil(lambda: window.views.preview_engine is None, timeout=TIMEOUT_MS)
    designed(qtbot, window)
    settle(window)
    assert json.loads(window.settings.designer)["cutoff"] == [300.0, 2000.0]
    sos = scipy.signal.butter(4, [300.0, 2000.0], btype="bandpass", fs=48000.0, output="sos")
    np.testing.assert_allclose(window.designer.design.sos, sos, rtol=1e-10, atol=1e-14)
    # the lines over the spectrogram follow the design
    pos = [lines[0].value() for _, _, lines in window.view._filter_lines]
    assert pos == pytest.approx([300.0, 2000.0])
    # the same edges can be dragged on the spectrum slice beside the spectrogram
    slice_line = window.view._filter_lines[0][2][1]
    assert slice_line.value() == pytest.approx(300.0)
    slice_line.setValue(350.0)
    window.view._filter_line_released(slice_line)
    designed(qtbot, window)
    settle(window)
    assert json.loads(window.settings.designer)["cutoff"] == [350.0, 2000.0]
    # band-passed: a chirp at 4-5 kHz (t = 4.4 s) is strongly attenuated, 1 kHz is not
    assert window.view.value_at(4.4, 4600.0) < chirp_before - 25
    assert abs(window.view.value_at(4.4, 1000.0) - noise_before) < 3


def test_impossible_edge_keeps_the_last_valid_design(qtbot, window):
    window.designer.set_spec({"design": "butter", "btype": "lowpass", "order": 4,
                              "cutoff": 3000.0}, emit=False)
    designed(qtbot, window)
    good = window.designer.design
    window.designer.move_edge("cutoff", 0, 30000.0)
    designed(qtbot, window)
    assert "cutoff" in window.designer.error.text()
    assert window.designer.design is good
    assert window.designer.params()["cutoff"] == 3000.0


def test_compare_before_after_difference(qtbot, window):
    window.designer.set_spec({"design": "butter", "btype": "highpass", "order": 6,
                              "cutoff": 1000.0}, emit=False)
    window.designer_panel.apply_box.setChecked(True)
    settle(window)
    after = window.last_image.db.copy()
    window.designer_panel.compare.setCurrentText("before")
    settle(window)
    before = window.last_image.db.copy()
    window.designer_panel.compare.setCurrentText("difference")
    settle(window)
    diff = window.last_image.db
    np.testing.assert_allclose(diff, after - before, atol=1e-3)
    f = (window.last_image.frequency_edges[:-1] + window.last_image.frequency_edges[1:]) / 2
    assert np.nanmean(diff[f < 200]) < -40          # stopband: removed
    assert abs(np.nanmean(diff[(f > 4000) & (f < 20000)])) < 1.0  # passband: untouched


def test_export_coefficients_and_the_filtered_recording(qtbot, window, tmp_path):
    window.designer.set_spec({"design": "cheby1", "btype": "lowpass", "order": 6, "rp": 1.0,
                              "cutoff": 4000.0}, emit=False)
    designed(qtbot, window)
    for suffix in ("json", "csv", "npz", "h", "py"):
        path = tmp_path / f"c.{suffix}"
        assert window.designer_panel.export_coefficients(path)
        back = read_coefficients(path, fs=48000.0)
        np.testing.assert_allclose(back.sos, window.designer.design.sos, rtol=1e-6)
    window.designer_panel.apply_box.setChecked(True)
    settle(window)
    out = tmp_path / "filtered.h5"
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        window.export_to(out)
    with h5py.File(out, "r") as h:
        pipe = json.loads(h.attrs["pipeline"])
        assert pipe["steps"][-2]["params"]["design"] == "cheby1"
        sos = scipy.signal.cheby1(6, 1.0, 4000.0, fs=48000.0, output="sos")
        np.testing.assert_allclose(h["pipeline/coefficients/step_0/sos"][...], sos,
                                   rtol=1e-10)


def test_designer_views_follow_the_design(qtbot):
    from specscope.widgets.filter_designer import FilterDesigner

    w = FilterDesigner(8000.0)
    qtbot.addWidget(w)
    w.set_spec({"design": "ellip", "btype": "lowpass", "passband": 1000.0, "stopband": 1300.0,
                "rp": 0.5, "rs": 60.0}, emit=False)
    n, wn = scipy.signal.ellipord(1000.0, 1300.0, 0.5, 60.0, fs=8000.0)
    assert w.design.order == n
    assert w.verdict.passed
    assert w.verdict_label.text().startswith("PASS")
    w.tabs.setCurrentWidget(w.gd)
    x, y = w._gd_curve.getData()
    _, gd = scipy.signal.group_delay(scipy.signal.ellip(n, 0.5, 60.0, wn, fs=8000.0),
                                     w=x[1:200], fs=8000.0)
    np.testing.assert_allclose(y[1:200], gd / 8000.0 * 1000.0, rtol=1e-4, atol=1e-6)
    # tighten the attenuation by dragging its limit line: a higher minimum order
    name, line = w._limits[1]
    assert name == "rs"
    line.setValue(-80.0)
    w._limit_dragged(line)
    assert w.spec.rs == pytest.approx(80.0)
    assert w.design.order > n
    w.tabs.setCurrentWidget(w.pz)
    _z, p, _ = w.design.zpk
    assert np.all(np.abs(p) < 1)
