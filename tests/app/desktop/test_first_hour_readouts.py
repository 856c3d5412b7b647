"""What a person reads in the first hour (issue 39, item 6): the readout and the spectrum
beside the image follow every change, frequencies read in Hz / kHz / MHz with the digits
a pixel tells, the playback channels are the file's, no stray auto-range button, Tab
visits only what is seen, and ``specscope open`` without a display writes a picture of
its own.  Driven through the real widgets (clicks, keys, pointer moves)."""

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from _gui import TIMEOUT_MS, idle, open_and_wait, settle, wait_until
from PyQt6.QtCore import QEvent, QPoint, QPointF, Qt
from PyQt6.QtWidgets import QApplication
from specscope.compute.freqfmt import format_frequency
from specscope.compute.io import ArrayRecording
from specscope.widgets.frequency_axis import forward
from specscope.widgets.spectrogram_view import SLICE_AT_CURSOR

LEFT = Qt.MouseButton.LeftButton
#: a level in the readout ("-43.2 dB", the first one: the cursor's)
LEVEL = re.compile(r"  (-?\d+\.\d) dB")


# -- the formatter --------------------------------------------------------------------
@pytest.mark.parametrize(("hz", "resolution", "sign", "text"), [
    (100.053e6, 2000.0, False, "100.053 MHz"),        # an IQ capture, a pixel of 2 kHz
    (99989923.9, None, False, "99.9899239 MHz"),      # as exactly as known
    (99989923.9, 100.0, False, "99.9899 MHz"),
    (1234.5, 46.875, False, "1.23 kHz"),              # audio, a bin of 46.9 Hz
    (850.3, 46.875, False, "850 Hz"),
    (49.9, 0.01, False, "49.90 Hz"),
    (48000.0, None, False, "48 kHz"),
    (44100.0, None, False, "44.1 kHz"),
    (100e6, None, False, "100 MHz"),
    (2.4e9 + 123.0, 1.0, False, "2.400000123 GHz"),
    (999.96, 0.1, False, "1.0000 kHz"),               # rounded up into the next unit
    (-53000.0, 100.0, True, "-53.0 kHz"),
    (500.0, 50.0, True, "+500 Hz"),
    (-0.01, 10.0, True, "0 Hz"),                      # no "-0", no "+0"
    (0.5, 0.05, False, "0.50 Hz"),
    (6.283e11, None, False, "628.3 GHz"),
    (float("nan"), 1.0, False, "—"),
    (float("inf"), None, False, "—"),
])
def test_frequencies_read_in_units_with_the_digits_the_resolution_tells(hz, resolution, sign,
                                                                        text):
    assert format_frequency(hz, resolution, sign=sign) == text


def test_no_frequency_is_written_with_an_exponent():
    for hz in np.geomspace(1e-3, 9e11, 200):
        for res in (None, hz * 1e-9, hz * 1e-4, hz):
            out = format_frequency(float(hz), res)
            assert "e" not in out.split()[0], (hz, res, out)
            assert len(out.split()[0].replace("-", "").replace(".", "")) <= 12, out


# -- helpers -------------------------------------------------------------------------------
def pixel(w, t: float, f: float) -> QPoint:
    """The view's viewport pixel of ``t`` s and ``f`` Hz."""
    vb = w.view.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(t, float(forward(w.view.freq_scale, f))))
    p = w.view.mapFromScene(scene)
    return QPoint(p.x(), p.y())


def under(w, p: QPoint) -> tuple[float, float]:
    """Time (s) and frequency (Hz) under the viewport pixel ``p``."""
    q = w.view.plot.getViewBox().mapSceneToView(w.view.mapToScene(p))
    from specscope.widgets.frequency_axis import inverse

    return q.x(), float(inverse(w.view.freq_scale, q.y()))


def hover(qtbot, w, t: float, f: float) -> QPoint:
    """Move the pointer over the plot to ``t`` s, ``f`` Hz (from a pixel beside it)."""
    p = pixel(w, t, f)
    qtbot.mouseMove(w.view.viewport(), p + QPoint(3, 2))
    qtbot.mouseMove(w.view.viewport(), p)
    # the crosshair where the pointer came to rest (moves closer than 10 ms apart are
    # followed once the pointer rests)
    wait_until(lambda: w.view.slice_caption == SLICE_AT_CURSOR and w.view._vline.isVisible()
               and abs(w.view._vline.value() - under(w, p)[0])
               <= 0.5 * w.view.seconds_per_pixel(), what="the crosshair at the pointer")
    return p


def leave(w) -> None:
    """The pointer leaves the view (for the controls of a dock)."""
    QApplication.sendEvent(w.view, QEvent(QEvent.Type.Leave))


def readout_time(text: str) -> float:
    m = re.search(r"t = (-?\d+\.\d+) s", text)
    return float(m.group(1)) if m else math.nan


def readout_level(text: str) -> float:
    m = LEVEL.search(text)
    return float(m.group(1)) if m else math.nan


def slice_data(w) -> np.ndarray | None:
    x, _ = w.view._slice_curve.getData()
    return None if x is None or len(x) == 0 else np.asarray(x)


# -- 1. the readout follows a change without the pointer moving ----------------------------
def test_a_zoom_under_a_still_pointer_gives_the_readout_of_the_new_point(qtbot, window,
                                                                          example_path):
    w = window
    open_and_wait(w, example_path)
    settle(w)
    p = hover(qtbot, w, 10.0, 5000.0)
    wait_until(lambda: abs(readout_time(w.cursor_label.text()) - under(w, p)[0])
               <= 2 * w.view.seconds_per_pixel(), what="the readout at 10 s")
    w.view.set_time_range(9.0, 17.0)  # the keyboard's or the overview's zoom: no move
    settle(w)
    t_now, _ = under(w, p)
    assert abs(t_now - 13.0) < 0.1
    dt = w.view.seconds_per_pixel()
    wait_until(lambda: abs(readout_time(w.cursor_label.text()) - t_now) <= 2 * dt,
               what=lambda: f"the readout at {t_now:.4f} s: {w.cursor_label.text()!r}")
    # and the spectrum beside the image is the column now under the pointer
    wait_until(lambda: shows_column(w, w.view._vline.value()), what="the column under it")
    assert abs(w.view._vline.value() - t_now) <= dt


def test_another_channel_gives_the_readout_of_the_same_point_on_it(qtbot, window, tmp_path):
    """Left: noise, right: the same noise 40 dB lower.  The pointer read the left channel,
    then went to the Channel box: the readout says the right channel's level there."""
    import soundfile

    rng = np.random.default_rng(5)
    left = 0.3 * rng.standard_normal(16000 * 2)
    path = tmp_path / "loud-left.wav"
    soundfile.write(str(path), np.stack([left, 0.01 * left], 1).astype(np.float32), 16000,
                    subtype="FLOAT")
    w = window
    open_and_wait(w, path)
    settle(w)
    hover(qtbot, w, 1.0, 3000.0)
    wait_until(lambda: LEVEL.search(w.cursor_label.text()), what="the readout")
    on_left = readout_level(w.cursor_label.text())
    leave(w)
    box = w.controls.channel
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Up)  # channel 1
    settle(w)
    assert w.settings.channel == 1
    wait_until(lambda: abs(readout_level(w.cursor_label.text()) - (on_left - 40.0)) < 3.0,
               what=lambda: f"the right channel's level, 40 dB below the left's {on_left} dB: "
                            f"{w.cursor_label.text()!r}")
    assert abs(readout_time(w.cursor_label.text()) - 1.0) < 0.05


def test_a_new_recording_gives_its_readout_where_the_pointer_is(qtbot, window, example_path,
                                                                stereo_wav):
    w = window
    open_and_wait(w, stereo_wav[0])  # 2 s
    settle(w)
    p = hover(qtbot, w, 1.5, 3000.0)
    wait_until(lambda: "t = " in w.cursor_label.text()
               and abs(readout_time(w.cursor_label.text()) - 1.5) < 0.05,
               what="the readout at 1.5 s")
    open_and_wait(w, example_path)  # 20 s: the pointer is over another time now
    settle(w)
    t_now, _ = under(w, p)
    assert t_now > 5.0
    wait_until(lambda: abs(readout_time(w.cursor_label.text()) - t_now)
               <= 2 * w.view.seconds_per_pixel(),
               what=lambda: f"the readout at {t_now:.3f} s: {w.cursor_label.text()!r}")


# -- 2. the spectrum beside the image ----------------------------------------------------
def shows_column(w, t: float) -> bool:
    """Whether the spectrum beside the image is the column of the image at ``t`` s."""
    x, col = slice_data(w), w.view.column_at(t)
    return x is not None and col is not None and np.array_equal(x, col[0])


def test_the_spectrum_beside_the_image_is_the_view_centre_until_the_pointer_comes(
        qtbot, window, example_path):
    w = window
    open_and_wait(w, example_path)
    settle(w)
    wait_until(lambda: shows_column(w, 10.0), what="the spectrum at the centre, 10 s")
    assert w.view.slice_caption == "at 10 s (view centre)"  # to a twentieth of the view
    w.view.set_time_range(2.0, 6.0)
    settle(w)
    wait_until(lambda: shows_column(w, 4.0) and w.view.slice_caption == "at 4.0 s (view centre)",
               what=lambda: f"the spectrum at the centre, 4 s: {w.view.slice_caption!r}")
    p = hover(qtbot, w, 5.0, 2000.0)
    wait_until(lambda: shows_column(w, under(w, p)[0]), what="the spectrum under the pointer")
    assert w.view.slice_caption == SLICE_AT_CURSOR
    leave(w)
    assert w.view.slice_caption == "at 4.0 s (view centre)"
    assert shows_column(w, 4.0) and not w.view._vline.isVisible()


# -- 3. 1/Δt of two points at the same time --------------------------------------------------
def test_two_points_at_the_same_time_have_no_inverse_time(qtbot, window, example_path):
    w = window
    open_and_wait(w, example_path)
    settle(w)
    p = pixel(w, 8.0, 3000.0)
    qtbot.mouseClick(w.view.viewport(), LEFT, pos=p)  # the reference
    assert w.view.reference is not None
    t_ref, f_ref, _ = w.view.reference
    # the same time to a hair (another mapping of the same pixel): no 1/Δt, no huge number
    w.show_cursor(t_ref + 1.59e-12, f_ref + 500.0, w.view.value_at(t_ref, f_ref + 500.0))
    text = w.cursor_label.text()
    assert "Δt = +0.0 ms" in text and "1/Δt" not in text, text
    assert not re.search(r"\de[+-]\d", text), text
    # half a second on: 1/Δt = 2 Hz, to the digits a pixel of time tells
    w.show_cursor(t_ref + 0.5, f_ref, w.view.value_at(t_ref + 0.5, f_ref))
    m = re.search(r"\(1/Δt = (\d+\.\d+) Hz\)", w.cursor_label.text())
    assert m and float(m.group(1)) == pytest.approx(2.0), w.cursor_label.text()


# -- 4. an IQ capture at 100 MHz reads in MHz ----------------------------------------------
@pytest.fixture
def iq_at_100mhz():
    fs, fc = 200e3, 100e6
    t = np.arange(int(fs * 2)) / fs
    noise = np.random.default_rng(3).standard_normal((t.size, 2)) @ [1.0, 1j]
    x = (0.5 * np.exp(2j * np.pi * 30e3 * t) + 0.003 * noise).astype(np.complex64)
    return ArrayRecording(x, fs, center_frequency=fc, name="fm-capture"), fs, fc


def test_an_iq_capture_at_100_mhz_reads_in_mhz_everywhere(qtbot, window, iq_at_100mhz):
    rec, fs, fc = iq_at_100mhz
    w = window
    with qtbot.waitSignal(w.imageShown, timeout=TIMEOUT_MS):
        w.open_recording(rec)
    settle(w)
    carrier = fc + 30e3
    # the readout: "f = 100.0300 MHz", to the digits a pixel tells
    p = hover(qtbot, w, 1.0, carrier)
    wait_until(lambda: "MHz" in w.cursor_label.text(), what=lambda: w.cursor_label.text())
    text = w.cursor_label.text()
    m = re.search(r"f = (\d+\.(\d+)) MHz", text)
    assert m, text
    hz_px = w.view.hz_per_pixel()
    assert abs(float(m.group(1)) * 1e6 - under(w, p)[1]) <= hz_px, (text, hz_px)
    assert 10 ** -len(m.group(2)) * 1e6 <= hz_px < 10 ** -(len(m.group(2)) - 1) * 1e6
    assert not re.search(r"\de[+-]\d|\d{7}", text), text
    # a reference on the carrier, the pointer 20 kHz above a second later: Δf in kHz
    qtbot.mouseClick(w.view.viewport(), LEFT, pos=p)
    hover(qtbot, w, 1.5, carrier + 20e3)
    wait_until(lambda: "Δf" in w.cursor_label.text(), what="the Δ readout")
    text = w.cursor_label.text()
    m = re.search(r"Δf = \+(\d+\.\d+) kHz", text)
    assert m and abs(float(m.group(1)) * 1e3 - 20e3) <= 2 * hz_px, text
    assert not re.search(r"\de[+-]\d|\d{7}", text), text
    # tuning by a click on the carrier: "Tuned to 100.0300 MHz"
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_T)
    qtbot.mouseClick(w.view.viewport(), LEFT, pos=pixel(w, 1.0, carrier))
    wait_until(lambda: w.message_label.text().startswith("Tuned to"),
               what=lambda: w.message_label.text())
    m = re.match(r"Tuned to (\d+\.\d+) MHz; Space plays it$", w.message_label.text())
    assert m and abs(float(m.group(1)) * 1e6 - carrier) <= 2 * hz_px, w.message_label.text()
    # the selection's numbers: MHz, to the bin width
    from specscope.app.desktop.controllers.annotations import Selection

    w.annotations.select(Selection(0.5, 1.5, carrier - 10e3, carrier + 10e3))
    idle(w)
    wait_until(lambda: w.annotations.measurement is not None, what="the measurement")
    panel = w.annotations.panel
    peak = panel.text("peak_frequency_hz")
    m = re.fullmatch(r"(\d+\.\d+) MHz", peak)
    bin_hz = fs / w.settings.stft.nfft
    assert m and abs(float(m.group(1)) * 1e6 - carrier) <= bin_hz, peak
    assert panel.text("bandwidth_hz") == "20.0 kHz"
    assert re.fullmatch(r"100\.0200 MHz", panel.text("freq_low_hz")), panel.text("freq_low_hz")


# -- 5. the playback channels are the file's ------------------------------------------------
def test_the_channel_chooser_offers_what_the_file_has(qtbot, window, example_path, stereo_wav,
                                                      tmp_path):
    import soundfile

    w = window
    box = w.transport_bar.channels

    def offered():
        return [box.itemText(i) for i in range(box.count())]

    open_and_wait(w, example_path)  # one channel
    assert offered() == ["Mono"] and not box.isEnabled()
    open_and_wait(w, stereo_wav[0])
    assert offered() == ["Stereo", "Left", "Right", "Mix to mono", "Shown channel"]
    assert box.isEnabled() and box.currentData() == "all"
    three = tmp_path / "three.wav"
    soundfile.write(str(three), np.zeros((8000, 3), np.float32), 8000, subtype="FLOAT")
    open_and_wait(w, three)
    assert offered()[:3] == ["Ch 0 + 1 (stereo)", "Ch 0", "Ch 1"]


# -- 6. no auto-range button ------------------------------------------------------------
def _plot_items(w):
    for gv in w.findChildren(pg.GraphicsView):
        for item in gv.scene().items():
            if isinstance(item, pg.PlotItem):
                yield gv, item


def test_the_spectrogram_shows_no_auto_range_button(qtbot, window, example_path):
    w = window
    open_and_wait(w, example_path)
    w.view.set_time_range(3.0, 7.0)  # zoomed in: pyqtgraph would offer "A" on hover
    settle(w)
    hover(qtbot, w, 5.0, 4000.0)
    plots = [item for gv, item in _plot_items(w) if gv is w.view]
    assert len(plots) >= 4  # the image, the spectrum, the waveform, the overview (+ bar)
    assert all(item.buttonsHidden for item in plots)
    assert not w.view.plot.autoBtn.isVisible()


def test_no_plot_of_the_main_window_shows_the_auto_range_button(qtbot, window, example_path):
    w = window
    open_and_wait(w, example_path)
    w.designer_dock.setVisible(True)
    settle(w)
    def owner(gv):
        while gv is not None and not type(gv).__module__.startswith("specscope"):
            gv = gv.parentWidget()
        return type(gv).__name__

    shown = [f"a plot of the {owner(gv)}" for gv, item in _plot_items(w)
             if not item.buttonsHidden]
    assert not shown, f"plots offering pyqtgraph's auto-range button: {shown}"


# -- 7. Tab visits only what is seen -------------------------------------------------------
def _shows_its_focus(w, widget) -> bool:
    """Whether ``widget`` looks different with the keyboard focus than without it."""
    focused = widget.grab().toImage()
    w.view.setFocus(Qt.FocusReason.TabFocusReason)
    wait_until(lambda: not widget.hasFocus(), what="the focus away")
    plain = widget.grab().toImage()
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    wait_until(widget.hasFocus, what="the focus back")
    return focused != plain


@pytest.mark.parametrize("window", [{"size": (1600, 1000), "activate": True},
                                    {"size": (1280, 800), "activate": True}],
                         indirect=True, ids=["1600x1000", "1280x800"])
def test_tab_visits_only_controls_that_are_seen_and_show_their_focus(qtbot, window,
                                                                      example_path):
    w = window
    open_and_wait(w, example_path)
    settle(w)
    wait_until(lambda: QApplication.focusWidget() is w.view, what="the view focused")
    seen = []
    for key in [Qt.Key.Key_Tab] * 30 + [Qt.Key.Key_Backtab] * 6:
        qtbot.keyClick(QApplication.focusWidget(), key)
        f = QApplication.focusWidget()
        assert f is not None and f.window() is w
        where = (f"press {len(seen) + 1}: {type(f).__name__} {f.accessibleName()!r} in "
                 f"{type(f.parentWidget()).__name__}")
        assert f.isVisible(), where
        top_left = f.mapTo(w, QPoint(0, 0))
        on_window = w.rect().contains(top_left) and not f.visibleRegion().isEmpty()
        assert f is w.view or on_window, f"{where} is off the window at {top_left}"
        assert f is w.view or _shows_its_focus(w, f), f"{where} shows no focus"
        seen.append(f)
    # the chain came round to the view and went on: every stop was a visible one
    assert w.view in seen and len(set(map(id, seen))) >= 10


# -- 8. open without a display --------------------------------------------------------------
def test_open_without_a_display_writes_a_picture_of_its_own(example_path, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    other = tmp / "specscope-screenshot.png"  # another user's, from before
    other.write_bytes(b"not yours")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(QT_QPA_PLATFORM="offscreen", TMPDIR=str(tmp))
    printed = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-m", "specscope.app", "open", str(example_path),
                            "--no-restore"], capture_output=True, text=True, env=env,
                           timeout=240, check=False)
        assert r.returncode == 0, r.stderr
        assert other.read_bytes() == b"not yours"  # the picture already there is left alone
        path = Path(r.stdout.strip().splitlines()[-1])
        assert f"writing a screenshot of the window to {path}" in r.stderr, r.stderr
        assert path.parent == tmp.resolve() and path.name.startswith("specscope-screenshot-")
        assert path.suffix == ".png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_mode & 0o077 == 0  # this user's alone
        printed.append(path)
    assert printed[0] != printed[1]  # two runs, two pictures


# -- 9. an IQ file at 100 MHz: its information, its annotations and a notch in MHz ----------
#: a frequency written in exponent notation, or with seven digits or more before its point
NOT_READABLE = re.compile(r"\de[+-]?\d|(?<![\d.])\d{7}")
CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def iq_file_at_100mhz(tmp_path):
    """Two seconds of IQ at 200 kHz centred on 99989923.9 Hz (as a receiver tunes): a
    carrier 40 kHz above the centre, hum-like lines at 1 kHz offsets below it, noise."""
    import json

    fs, fc = 200e3, 99989923.9
    t = np.arange(int(fs * 2)) / fs
    rng = np.random.default_rng(11)
    x = 0.5 * np.exp(2j * np.pi * 40e3 * t) + 0.003 * (rng.standard_normal(t.size)
                                                        + 1j * rng.standard_normal(t.size))
    for k in range(1, 6):
        x += 0.05 / k * np.exp(2j * np.pi * 1000.0 * k * t)
    data = tmp_path / "fm-capture.sigmf-data"
    data.write_bytes(x.astype(np.complex64).tobytes())
    meta = tmp_path / "fm-capture.sigmf-meta"
    meta.write_text(json.dumps({
        "global": {"core:version": "1.0.0", "core:datatype": "cf32_le",
                   "core:sample_rate": fs},
        "captures": [{"core:sample_start": 0, "core:frequency": fc}], "annotations": []}))
    return meta, fs, fc


def test_an_iq_file_at_100_mhz_shows_mhz_in_its_information(qtbot, window, iq_file_at_100mhz):
    meta, _, _ = iq_file_at_100mhz
    w = window
    open_and_wait(w, meta)
    text = w.file_label.text()
    assert "200 kHz" in text and "centre 99.9899239 MHz" in text, text
    assert not NOT_READABLE.search(text), text


def test_an_annotation_on_an_iq_file_lists_its_band_in_mhz(qtbot, window, iq_file_at_100mhz):
    meta, fs, fc = iq_file_at_100mhz
    w = window
    open_and_wait(w, meta)
    settle(w)
    # Ctrl+drag a box around the carrier, Return, type a label
    carrier = fc + 40e3
    a, b = pixel(w, 0.5, carrier - 10e3), pixel(w, 1.5, carrier + 10e3)
    vp = w.view.viewport()
    qtbot.mousePress(vp, LEFT, CTRL, a)
    for k in range(1, 7):
        qtbot.mouseMove(vp, a + (b - a) * (k / 6))
    qtbot.mouseRelease(vp, LEFT, CTRL, b)
    idle(w)
    sel = w.annotations.selection
    assert sel is not None and sel.freq_low_hz < carrier < sel.freq_high_hz
    w.view.setFocus()
    wait_until(lambda: QApplication.focusWidget() is w.view, what="the view focused")
    qtbot.keyClick(w.view, Qt.Key.Key_Return)
    field = QApplication.focusWidget()
    qtbot.keyClicks(field, "carrier")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    wait_until(lambda: "'carrier'" in w.menu_actions["undo"].text(), what="the annotation")
    ann = next(x for x in w.annotations.annotations if x.label == "carrier")
    lst = w.annotations.list
    headers = [lst.model.headerData(c, Qt.Orientation.Horizontal) for c in (2, 3)]
    assert headers == ["Low", "High"]  # the unit is in each cell
    lst.set_frequency_resolution(None)  # without a bin: the edges to 0.1 Hz
    for col, hz in ((2, ann.freq_low_hz), (3, ann.freq_high_hz)):
        cell = lst.cell(ann.uuid, col)
        m = re.fullmatch(r"(\d+\.\d+) MHz", cell)
        assert m and abs(float(m.group(1)) * 1e6 - hz) <= 0.1, (cell, hz)
        assert not NOT_READABLE.search(cell), cell
    # the window tells the list the analysis' frequency bin: the digits a bin tells
    bin_hz = fs / w.settings.stft.nfft
    w.annotations.show_resolution()
    assert lst.model.resolution_hz == pytest.approx(bin_hz)
    cell = lst.cell(ann.uuid, 2)
    m = re.fullmatch(r"(\d+\.(\d+)) MHz", cell)
    assert m and len(m.group(2)) == 4 and abs(float(m.group(1)) * 1e6
                                              - ann.freq_low_hz) <= bin_hz, (cell, bin_hz)
    # a second, lower annotation: the list still sorts by the number, not the text
    w.annotations.select(type(sel)(0.2, 0.4, fc - 90e3, fc - 80e3))
    idle(w)
    w.annotations.annotate_selection()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    wait_until(lambda: lst.row_count() == 2, what="two annotations")
    lst.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
    assert lst.ordered()[0] == ann.uuid


def test_a_notch_on_an_iq_file_says_its_frequencies_in_units(qtbot, window,
                                                              iq_file_at_100mhz):
    meta, _, fc = iq_file_at_100mhz
    w = window
    open_and_wait(w, meta)
    settle(w)
    w.designer_dock.setVisible(True)
    settle(w)
    panel = w.designer_panel
    line = fc + 1000.0  # the hum-like line 1 kHz above the centre
    before = w.view.value_at(1.0, line)
    seen: list[str] = []
    original = panel.line_info.setText

    def record(text):
        seen.append(text)
        original(text)

    panel.line_info.setText = record
    qtbot.mouseClick(panel.notch_mode, LEFT)
    assert w.view.click_mode == "notch"
    qtbot.mouseClick(w.view.viewport(), LEFT, pos=pixel(w, 1.0, line) + QPoint(0, -3))
    wait_until(lambda: len(seen) >= 2, what=lambda: f"the line measured: {seen}")
    idle(w)
    assert seen[0].startswith("Measuring the line near "), seen
    m = re.fullmatch(r"Measuring the line near (\d+\.\d+) MHz…", seen[0])
    assert m and abs(float(m.group(1)) * 1e6 - line) <= 4 * w.view.hz_per_pixel(), seen
    said = [t for t in w.message_log.texts() if "notch" in t]  # View › Messages
    for text in (*seen, *said):
        assert not NOT_READABLE.search(text), (text, seen)
    # measured at its offset from the centre, and notched there
    m = re.match(r"(\d+\.\d+) kHz, harmonics 1–5 above the floor \(offsets from the centre, "
                 r"99\.9899239 MHz\)$", seen[1])
    assert m and abs(float(m.group(1)) * 1e3 - 1000.0) <= 0.05, seen
    assert w.designer.spec.frequency == pytest.approx(1000.0, abs=0.05)
    assert re.fullmatch(r"5 notches for " + re.escape(seen[1]), said[-1]), said
    # and the view shows the line gone (the chain filters it)
    wait_until(lambda: w.view.value_at(1.0, line) < before - 30.0,
               what=lambda: f"the line at {before:.1f} dB notched: "
                            f"{w.view.value_at(1.0, line):.1f} dB")
    # a line below the centre: said in one line, in units
    qtbot.mouseClick(panel.notch_mode, LEFT)
    qtbot.mouseClick(w.view.viewport(), LEFT, pos=pixel(w, 1.0, fc - 30e3))
    wait_until(lambda: len(seen) >= 3, what=lambda: f"the click below the centre: {seen}")
    assert re.fullmatch(r"the line near 99\.9\d+ MHz is not above the centre frequency "
                        r"99\.9899239 MHz: a notch is measured above it and takes its mirror "
                        r"below with it", seen[2]), seen[2]


# -- 10. a panel's scroll areas give the focus to their controls ----------------------------
def test_tab_in_the_floating_detect_panel_goes_from_control_to_control(qtbot, window,
                                                                        example_path):
    """Floated, the Detect panel is a window of its own (the main window's Tab rule is not
    asked): Tab visits its controls, never the scroll areas around them, which show no
    focus; a click on the area's margin leaves the focus where it was."""
    from specscope.widgets.detect_panel import FittingScroll

    w = window
    open_and_wait(w, example_path)
    dock = w.detect_dock
    dock.setVisible(True)
    dock.setFloating(True)
    dock.raise_()
    settle(w)
    panel = w.detection.panel
    panel.detector.setFocus(Qt.FocusReason.TabFocusReason)
    wait_until(panel.detector.hasFocus, what="the detector box focused")
    stops, visited = [], []
    for _ in range(8):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        f = QApplication.focusWidget()
        visited.append(f)
        stops.append(type(f).__name__)
        assert not isinstance(f, FittingScroll), f"Tab stopped on a scroll area: {stops}"
    # from the form in the scroll area to the buttons below it
    assert panel.scope in visited and panel.run_button in visited, stops
    # a click on the scroll area's own margin keeps the focus on the control
    panel.labels.setFocus(Qt.FocusReason.TabFocusReason)
    wait_until(panel.labels.hasFocus, what="the labels field focused")
    area = panel.controls
    qtbot.mouseClick(area, LEFT, pos=QPoint(area.width() - 2, area.height() - 2))
    assert panel.labels.hasFocus(), type(QApplication.focusWidget()).__name__
    assert all(s.focusPolicy() == Qt.FocusPolicy.NoFocus
               for s in w.findChildren(FittingScroll))


# -- 11. the live window and the notebook read frequencies as the main window does ---------
def test_the_live_window_reads_frequencies_in_units(qtbot):
    from specscope.app.desktop.live_window import LiveWindow
    from specscope.compute.live import LiveSession, open_source
    from specscope.compute.pipeline import Pipeline

    src = open_source("generator:tone", block=512, rate=4.0, duration=30.0)
    session = LiveSession(src, Pipeline.from_steps(
        [{"op": "spectrogram", "params": {"nfft": 512, "hop": 128}}]))
    w = LiveWindow(session, width_frames=300)
    qtbot.addWidget(w)
    w.show()
    w.start()
    try:
        wait_until(lambda: w.last_frames is not None and len(w.last_frames) >= 300,
                   what="the waterfall filled")
        w.set_paused(True)
        w.refresh()
        t0, t1, _, _ = w.view.visible_range()
        vb = w.view.plot.getViewBox()
        scene = vb.mapViewToScene(QPointF(0.5 * (t0 + t1), 5000.0))
        p = w.view.mapFromScene(scene)
        qtbot.mouseMove(w.view.viewport(), QPoint(p.x() + 3, p.y() + 2))
        qtbot.mouseMove(w.view.viewport(), QPoint(p.x(), p.y()))
        wait_until(lambda: "f = " in w.cursor_label.text(), what="the live readout")
        text = w.cursor_label.text()
        f_at = vb.mapSceneToView(w.view.mapToScene(QPoint(p.x(), p.y()))).y()
        m = re.search(r"f = (\d\.(\d+)) kHz", text)
        hz_px = w.view.hz_per_pixel()
        assert m and abs(float(m.group(1)) * 1e3 - f_at) <= 2 * hz_px, (text, f_at, hz_px)
        step = 10 ** -len(m.group(2)) * 1e3
        assert step <= hz_px < 10 * step, (text, hz_px)  # the digits a pixel tells
        assert re.search(r"  -?\d+\.\d dB$", text), text
    finally:
        w.close()
        session.history.close()


def test_the_notebook_explorer_reads_frequencies_in_units(example_path):
    pytest.importorskip("jupyter_rfb")
    from specscope.app.notebook.explorer import explore

    w = explore(example_path)
    try:
        w.snapshot()
        t0, t1, _, _ = w.visible_range
        x, y = w.to_pixel(0.5 * (t0 + t1), 5000.0)
        w.canvas.handle_event({"event_type": "pointer_move", "type": "pointer_move", "x": x,
                               "y": y, "button": 0, "buttons": (), "modifiers": ()})
        text = w.readout.value
        m = re.search(r"f = (\d\.\d+) kHz", text)
        assert m and abs(float(m.group(1)) * 1e3 - 5000.0) <= 2 * w.view.hz_per_pixel(), text
        assert text.startswith("<code>t = ") and "Hz" in text and " dB" in text, text
    finally:
        w.close()


# -- 12. the readout's room holds an IQ capture's frequencies ------------------------------
def test_the_readout_keeps_room_for_an_iq_capture_at_a_deep_zoom(qtbot):
    """The widest readout of a 100 MHz capture at 1 Hz a pixel, alone and with the Δ to a
    reference, fits the width the status bar keeps for the readout."""
    from PyQt6.QtWidgets import QLabel
    from specscope.widgets.readout import reserve_readout

    f = format_frequency(-100.053e6, 1.0)
    df = format_frequency(-100.053e6, 1.0, sign=True)
    assert f == df == "-100.053000 MHz"
    alone = f"ch 15  t = 1:02:03.456  f = {f}  -123.4 dB"
    ref = f"  |  Δt = -1234.567 s  Δf = {df}  ΔL = -123.4 dB  (1/Δt = 0.0008100 Hz)"
    label = QLabel()
    qtbot.addWidget(label)
    for text, reference in ((alone, False), (alone + ref, True)):
        reserve_readout(label, reference)
        need = label.fontMetrics().horizontalAdvance(text)
        assert need <= label.minimumWidth(), (text, need, label.minimumWidth())


def test_the_detections_table_gives_the_band_in_units(qtbot):
    from specscope.widgets.detect_panel import DetectionTable

    model = DetectionTable()
    model.set_rows([[0.5, 0.75, 100.0195e6, 100.0405e6], [1.0, 1.5, 850.4, 1234.6],
                    [2.0, 2.5, float("nan"), float("nan")]],
                   [0.9, 0.8, 0.7], ["", "", ""], ["", "", ""])

    def row(r):
        return [model.data(model.index(r, c)) for c in range(model.columnCount())]

    heads = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(3, 5)]
    assert heads == ["Low", "High"]
    assert row(0)[1:5] == ["0.500", "250.0", "100.0195 MHz", "100.0405 MHz"]
    assert row(1)[3:5] == ["850 Hz", "1.235 kHz"]
    assert row(2)[3:5] == ["", ""]


def test_the_annotation_list_shows_edges_to_a_bin_of_the_analysis(qtbot, window, tmp_path):
    """The list's Low/High cells carry the digits a frequency bin tells, and follow the FFT."""
    import soundfile
    from specscope.compute.annotations import Annotation

    w = window
    path = tmp_path / "tone.wav"
    soundfile.write(str(path), np.zeros(48000, np.float32), 48000, subtype="FLOAT")
    open_and_wait(w, path)
    w.annotations.set_annotations([Annotation(start_s=0.1, stop_s=0.2, freq_low_hz=1234.5678,
                                              freq_high_hz=2345.6789, label="x")])
    nfft = w.settings.stft.nfft
    assert w.annotations.list.model.resolution_hz == pytest.approx(48000 / nfft)
    w.controls.nfft.setCurrentText(str(nfft * 4))  # the Spectrogram panel's FFT size
    wait_until(lambda: w.settings.stft.nfft == nfft * 4, what="the new FFT size")
    assert w.annotations.list.model.resolution_hz == pytest.approx(48000 / (nfft * 4))
