"""The GUI thread only draws: no stall while typing, dragging or exporting.

A QTimer ticking every 5 ms on the GUI thread records the largest gap between
two ticks; every interaction below goes through real widgets (keys typed into
the real field, mouse events on the real plot).  A gap under 100 ms passes; a longer
one must stay under ten full redraws of the window, timed right after under the same
load (``_gui.assert_no_stall``).  A design or analysis on the GUI thread stalls it for
seconds, 25 redraws or more (one takes about 40 ms on an idle core), so a loaded machine
does not make these tests flaky while a regression still fails them.
"""

import json

import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS, StallMeter, assert_no_stall, open_designer, settle
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtWidgets import QFormLayout


def form_field(designer, name):
    """The designer's form field labelled ``name`` (as a person finds it)."""
    for lay in designer.findChildren(QFormLayout):
        for row in range(lay.rowCount()):
            label = lay.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = lay.itemAt(row, QFormLayout.ItemRole.FieldRole)
            if label is not None and field is not None and label.widget() is not None \
                    and label.widget().text().split(" ")[0] == name:
                return field.widget()
    raise LookupError(name)


@pytest.fixture
def window(make_window, example_path):
    return open_designer(make_window, example_path)


def test_typing_a_notch_frequency_does_not_stall(qtbot, window):
    d = window.designer
    d.method.setCurrentIndex(d.method.findData("notches"))
    window.designer_panel.apply_box.setChecked(True)
    settle(window)
    field = form_field(d, "frequency")
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    shown = []
    d.designed.connect(lambda: shown.append(d.spec.frequency))
    with StallMeter() as meter:
        qtbot.keyClicks(field, "49.93")
        qtbot.keyClick(field, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: d.spec.frequency == pytest.approx(49.93)
                        and d.design is not None and d.design.spec == d.spec,
                        timeout=TIMEOUT_MS)
        settle(window)
    assert_no_stall(window, meter, "typing")
    assert shown == [pytest.approx(49.93)]  # one design for the typed value, none per key
    # with a recording, "every harmonic" means those above the floor: scene.wav has 1-8
    assert d.spec.harmonics == 8 and d.design.sections == 8
    assert d.note.text() == "50.00 Hz, harmonics 1–8 above the floor: notches for harmonics 1–8"


def test_dragging_an_edge_does_not_stall(qtbot, window):
    # notches at every harmonic: dragging the frequency down from 1 kHz to 100 Hz asks
    # for ever more harmonics (239 below Nyquist at 100 Hz), each designed and analysed
    d = window.designer
    d.set_spec({"design": "notches", "frequency": 1000.0, "q": 30.0}, emit=False)
    window.designer_panel.apply_box.setChecked(True)
    qtbot.waitUntil(lambda: not d.busy(), timeout=TIMEOUT_MS)
    settle(window)
    d.tabs.setCurrentWidget(d.mag)
    vb = d.mag.getPlotItem().getViewBox()
    y = float(np.mean(vb.viewRange()[1]))

    def to_widget(f):
        p = d.mag.mapFromScene(vb.mapViewToScene(QPointF(f, y)))
        return QPoint(round(p.x()), round(p.y()))

    port = d.mag.viewport()
    start = to_widget(1000.0)
    with StallMeter() as meter:
        qtbot.mouseMove(port, start)
        qtbot.wait(20)
        qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
        for f in np.linspace(1000.0, 100.0, 19)[1:]:
            qtbot.mouseMove(port, to_widget(f))
            qtbot.wait(15)
        qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=to_widget(100.0))
        qtbot.waitUntil(lambda: not d.busy() and d.spec.frequency < 200, timeout=TIMEOUT_MS)
        settle(window)
    edge = d.spec.frequency
    print(f"dragging: frequency {edge!r} Hz, {d.design.sections} sections")
    assert_no_stall(window, meter, "dragging")
    # the dragged value is kept rounded to what a pixel resolves, not 104.661319662642
    hz_per_pixel = vb.viewPixelSize()[0]
    assert edge == pytest.approx(100.0, abs=3 * hz_per_pixel)
    assert edge == round(edge, -int(np.floor(np.log10(hz_per_pixel))))
    assert json.loads(window.settings.designer)["frequency"] == edge
    # harmonics of 100 Hz above the floor of scene.wav (its hum): never hundreds
    assert d.design.sections <= 40


def test_a_long_export_does_not_stall(qtbot, make_window, tmp_path):
    fs = 48000
    rng = np.random.default_rng(5)
    x = (0.1 * rng.standard_normal(fs * 240)).astype(np.float32)  # 4 minutes
    path = tmp_path / "long.wav"
    soundfile.write(str(path), x, fs, subtype="FLOAT")
    w = open_designer(make_window, path)
    w.designer.set_spec({"design": "butter", "btype": "lowpass", "order": 8,
                         "cutoff": 4000.0}, emit=False)
    w.designer_panel.apply_box.setChecked(True)
    settle(w)
    out = tmp_path / "long.h5"
    with StallMeter() as meter, qtbot.waitSignal(
            w.worker.finished, timeout=TIMEOUT_MS * 4,
            check_params_cb=lambda i, kind, r: kind == "export") as b:
        w.export_to(out)
    assert b.args[2].seconds > 0.5  # long enough to mean something
    assert_no_stall(w, meter, f"export ({b.args[2].seconds:.1f} s)")


def test_typing_an_fft_size_computes_once_without_errors(qtbot, window):
    errors, params = [], []
    window.errorShown.connect(errors.append)
    window.controls.paramsChanged.connect(params.append)
    box = window.controls.nfft
    qtbot.mouseClick(box.lineEdit(), Qt.MouseButton.LeftButton)
    box.lineEdit().selectAll()
    with StallMeter() as meter:
        qtbot.keyClicks(box.lineEdit(), "1024")  # "1", "10", "102": never taken
        qtbot.wait(50)
        # (on a busy machine the pause after "1024" may already have taken it)
        assert all(p["nfft"] == 1024 for p in params) and errors == []
        qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
        settle(window)
    assert [p["nfft"] for p in params] == [1024] and errors == []  # once
    assert window.settings.stft.nfft == 1024
    assert_no_stall(window, meter, "typing an FFT size")
    # a pause after a complete value takes it too, a pause after "1" does not
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "2048")
    qtbot.waitUntil(lambda: window.settings.stft.nfft == 2048, timeout=TIMEOUT_MS)
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "1")
    qtbot.wait(600)
    assert window.settings.stft.nfft == 2048 and errors == []
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)  # asked for: said once, clearly
    qtbot.waitUntil(lambda: len(errors) == 1, timeout=TIMEOUT_MS)
    assert "nfft" in errors[0].lower() or "fft" in errors[0].lower()
