"""Listening in the app: Space, the transport bar, the play cursor against the output's clock."""

import itertools

import numpy as np
import pytest
from _gui import TIMEOUT_MS, open_and_wait
from PyQt6.QtCore import QPoint, QPointF, Qt, QTimer
from PyQt6.QtWidgets import QApplication, QComboBox
from specscope.app.desktop.actions import shortcut_rows
from specscope.app.desktop.controllers.playback import POLL_MS
from specscope.compute.errors import SpecscopeError
from specscope.compute.io import ArrayRecording
from specscope.compute.playback import FakeOutput, Renderer
from specscope.compute.playback import player as player_module

LATENCY_S = 0.04


@pytest.fixture
def window(make_window, monkeypatch):
    """The shared window (closing it stops playback), active, with the default output."""
    monkeypatch.delenv("SPECSCOPE_AUDIO_OUTPUT", raising=False)
    return make_window(activate=True)


@pytest.fixture
def fake(window):
    out = FakeOutput(latency_s=LATENCY_S, rate=1.0, device_name="fake output")
    window.playback.output = out
    return out


def show_span(qtbot, w, t0, t1):
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "detail"):
        w.view.set_time_range(t0, t1)


def press_space(qtbot, w):
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Space)


def wait_playing(qtbot, w):
    qtbot.waitUntil(lambda: w.playback.player is not None, timeout=TIMEOUT_MS)


def click_view(qtbot, w, t, f):
    """A left click on the spectrogram at time t (s), frequency f (Hz)."""
    vb = w.view.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(t, f))
    pos = w.view.mapFromScene(scene)
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos.x(), pos.y()))


def test_space_plays_the_visible_span_and_the_cursor_follows_the_output_clock(
        qtbot, window, fake, example_path):
    open_and_wait(window, example_path)
    show_span(qtbot, window, 5.0, 8.0)
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    pb = window.playback
    assert pb.range.start_s == pytest.approx(5.0, abs=0.01)
    assert pb.range.stop_s == pytest.approx(8.0, abs=0.01)
    assert "fake output" in window.transport_bar.device_label.text()
    assert "40 ms" in window.transport_bar.device_label.text()
    assert window.transport_bar.play_button.text().endswith("Stop")
    errors, pixels = [], []
    vb = window.view.plot.getViewBox()

    def drawn(t):
        # at the moment the cursor is drawn: where the output's own clock says we are
        heard = fake.consumed - round(LATENCY_S * fake.sample_rate)
        expected = pb.renderer.position_of(max(0, heard))
        line = window.view.play_cursor
        assert line.isVisible() and window.overview.play_cursor.isVisible()
        assert window.overview.play_cursor.value() == line.value()
        errors.append(line.value() - expected)
        x_drawn = vb.mapViewToScene(QPointF(line.value(), 0)).x()
        x_expected = vb.mapViewToScene(QPointF(expected, 0)).x()
        pixels.append((x_drawn - x_expected, x_expected))
    # a second of sound on the output's clock (waited for, not timed), and beside the
    # cursor a reference timer of the same interval on the same thread: under load both
    # tick less often, alike
    ref = QTimer()
    ref.setInterval(POLL_MS)
    ticks: list = []
    ref.timeout.connect(lambda: ticks.append(True))
    start = fake.consumed
    pb.cursorMoved.connect(drawn)
    ref.start()
    qtbot.waitUntil(lambda: fake.consumed - start >= fake.sample_rate, timeout=TIMEOUT_MS)
    ref.stop()
    pb.cursorMoved.disconnect(drawn)
    assert len(errors) >= 0.5 * len(ticks) and len(errors) >= 5, (
        f"{len(errors)} cursor draws, {len(ticks)} reference ticks")  # ~60 Hz when idle
    # within 20 ms of the output's clock: counted, every tick but a few (a busy machine
    # may pause the output's thread between its player's count and its own, one block
    # or more; the median says where the cursor is drawn)
    near = [abs(e) < 0.020 for e in errors]
    assert sum(near) >= 0.8 * len(near) and abs(float(np.median(errors))) < 0.020, (
        f"{len(near) - sum(near)} of {len(near)} cursor draws off by 20 ms or more; "
        f"the worst by {max(abs(e) for e in errors) * 1000:.0f} ms")
    # the line moved across the plot with the sound
    assert pixels[-1][1] - pixels[0][1] > 0.2 * vb.width()
    px_per_s = vb.width() / 3.0
    assert sum(abs(dx) < 0.020 * px_per_s + 1 for dx, _ in pixels) >= 0.8 * len(pixels)
    press_space(qtbot, window)
    assert pb.player is None and not window.view.play_cursor.isVisible()
    assert not window.overview.play_cursor.isVisible()
    assert window.transport_bar.play_button.text().endswith("Play")


def test_play_starts_at_the_cursor_inside_the_span(qtbot, window, fake, example_path):
    open_and_wait(window, example_path)
    show_span(qtbot, window, 2.0, 4.0)
    click_view(qtbot, window, 3.0, 5000.0)
    t_ref = window.view.reference[0]
    assert 2.9 < t_ref < 3.1
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    assert window.playback.range.start_s == pytest.approx(t_ref, abs=1e-9)
    qtbot.waitUntil(lambda: window.playback.position is not None, timeout=TIMEOUT_MS)
    # playback starts on the sample at (or just before) the cursor: within one sample period
    assert window.playback.position >= t_ref - 1.0 / window.document.recording.sample_rate
    window.playback.stop()
    # a cursor outside the span: from the span's start
    show_span(qtbot, window, 10.0, 11.0)
    qtbot.mouseClick(window.transport_bar.play_button, Qt.MouseButton.LeftButton)
    wait_playing(qtbot, window)
    assert window.playback.range.start_s == pytest.approx(10.0, abs=0.01)


def test_loop_restarts_the_cursor_and_l_ends_the_loop(qtbot, window, fake, example_path):
    open_and_wait(window, example_path)
    show_span(qtbot, window, 1.0, 1.3)
    qtbot.mouseClick(window.transport_bar.loop_box, Qt.MouseButton.LeftButton)
    assert window.menu_actions["loop"].isChecked()
    seen = []
    window.playback.cursorMoved.connect(seen.append)
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    qtbot.wait(900)
    assert window.playback.player is not None  # still playing after three passes' time
    # the cursor goes back to the range's start at each pass and never leaves the range
    # (how far back each jump looks depends on when the GUI's timer got to draw it)
    drops = [a - b for a, b in itertools.pairwise(seen) if b < a - 0.1]
    assert len(drops) >= 2 and all(d <= 0.3 + 0.01 for d in drops)
    assert min(seen) >= 1.0 - 0.01 and max(seen) <= 1.3 + 0.01
    qtbot.keyClick(window.view, Qt.Key.Key_L)  # loop off: this pass is the last
    assert not window.transport_bar.loop_box.isChecked()
    qtbot.waitUntil(lambda: window.playback.player is None, timeout=TIMEOUT_MS)
    assert not window.view.play_cursor.isVisible()


def test_fields_take_typing_and_set_what_is_heard(qtbot, window, fake, example_path):
    open_and_wait(window, example_path)
    show_span(qtbot, window, 4.0, 6.0)
    bar = window.transport_bar
    speed = bar.speed.lineEdit()
    qtbot.mouseClick(speed, Qt.MouseButton.LeftButton)
    speed.selectAll()
    qtbot.keyClicks(speed, "x0.1")
    # the speed box is a setting, not a text field: Space plays at the speed typed
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)
    wait_playing(qtbot, window)
    assert speed.text() == "x0.1"
    assert window.playback.renderer.speed == pytest.approx(0.1, rel=1e-6)
    window.playback.stop()
    qtbot.mouseClick(bar.het_box, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.het_freq, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(bar.het_freq, "10k")
    qtbot.mouseClick(bar.band_box, Qt.MouseButton.LeftButton)
    window.view.set_frequency_range(2000.0, 12000.0)
    qtbot.mouseClick(bar.processed_box, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    wait_playing(qtbot, window)
    o = window.playback.renderer.options
    assert window.playback.renderer.speed == pytest.approx(0.1, rel=1e-6)
    assert o.heterodyne == 10000.0 and o.pipeline is None
    assert o.band == pytest.approx((2000.0, 12000.0), rel=1e-3)
    assert float(bar.band_lo.text()) == pytest.approx(2000.0, rel=1e-3)
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    assert window.playback.player is None
    # a typed band wins over the view's
    bar.band_lo.clear()
    qtbot.mouseClick(bar.band_lo, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(bar.band_lo, "3k")
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    wait_playing(qtbot, window)
    assert window.playback.renderer.options.band[0] == 3000.0
    window.playback.stop()
    # a bad value: one line in the status bar, nothing plays
    bar.het_freq.clear()
    qtbot.keyClicks(bar.het_freq, "fast")
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    assert window.playback.player is None and "heterodyne" in window.last_error
    assert "\n" not in window.last_error


def test_no_audio_device_is_one_status_line(qtbot, window, monkeypatch, example_path):
    def missing():
        raise SpecscopeError("audio output is unavailable: PortAudio library not found")
    monkeypatch.setattr(player_module, "load_sounddevice", missing)
    open_and_wait(window, example_path)
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS):
        press_space(qtbot, window)
    assert window.last_error.startswith("Playback: audio output is unavailable")
    assert "\n" not in window.last_error
    assert window.playback.player is None and not window.playback.playing
    assert window.transport_bar.play_button.text().endswith("Play")


def test_iq_tune_by_clicking_a_carrier_and_demodulate(qtbot, window, fake):
    fs, fc = 200e3, 100e6
    t = np.arange(int(fs * 2)) / fs
    x = 0.5 * np.exp(2j * np.pi * 30e3 * t).astype(np.complex64)
    rec = ArrayRecording(x, fs, center_frequency=fc, name="iq")
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_recording(rec)
    bar = window.transport_bar
    assert bar.tune_freq.isVisibleTo(bar) and not bar.band_box.isVisibleTo(bar)
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_T)
    assert window.view.click_mode == "tune" and bar.tune_pick.isChecked()
    click_view(qtbot, window, 1.0, fc + 30e3)
    assert float(bar.tune_freq.text()) == pytest.approx(fc + 30e3, abs=fs / 500)
    assert window.view.click_mode == "reference" and not bar.tune_pick.isChecked()
    bar.demod.setCurrentText("USB")
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    o = window.playback.renderer.options
    assert o.demod == "usb" and o.tune == pytest.approx(fc + 30e3, abs=fs / 500)


def test_f1_lists_the_play_keys(window):
    rows = shortcut_rows(window.menuBar())
    assert any(r.keys == "Space" and "Play" in r.text and r.where == "View" for r in rows)
    keys = {r.keys for r in rows}
    assert "L" in keys and "T" in keys


def test_space_plays_the_selection_in_its_band(qtbot, window, fake, example_path):
    from specscope.app.desktop.controllers.annotations import Selection

    open_and_wait(window, example_path)
    show_span(qtbot, window, 0.0, 10.0)
    window.annotations.select(Selection(3.0, 3.5, 1000.0, 4000.0))
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    r = window.playback.range
    assert (r.start_s, r.stop_s) == (3.0, 3.5)
    assert r.options.band == (1000.0, 4000.0)
    assert window.transport_bar.band_lo.text() == "1000"


def test_a_stereo_recording_plays_in_stereo_and_the_volume_acts_at_once(
        qtbot, window, fake, stereo_wav):
    path = stereo_wav[0]
    open_and_wait(window, path)
    bar = window.transport_bar
    assert bar.channels.currentData() == "all"
    bar.volume.setValue(50)  # a level taper: 0.25
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    player = window.playback.player
    assert player.channels == 2 and player.volume == pytest.approx(0.25)
    qtbot.waitUntil(lambda: fake.consumed > 0.3 * 48000, timeout=TIMEOUT_MS)
    bar.mute.click()
    assert player.volume == 0.0
    at = fake.consumed
    qtbot.waitUntil(lambda: fake.consumed > at + 4096, timeout=TIMEOUT_MS)
    window.playback.stop()
    y = fake.samples()
    assert y.shape[1] == 2
    early = y[2048:8192]
    # left: the 1 kHz tone at 0.5, right: 3 kHz at 0.25, both at a quarter of the level
    assert np.abs(early[:, 0]).max() == pytest.approx(0.125, rel=0.05)
    assert np.abs(early[:, 1]).max() == pytest.approx(0.0625, rel=0.05)
    assert np.abs(y[at + 2048:at + 4096]).max() == 0.0  # muted


class CountingOutput:
    """A backend that counts the streams it opens (each a FakeOutput) and their starts."""

    sound_card = False

    def __init__(self):
        self.opened: list[FakeOutput] = []
        self.starts = 0

    def __call__(self, sample_rate, blocksize, callback, channels=1):
        out = FakeOutput(latency_s=LATENCY_S, rate=1.0, device_name="held output")
        stream = out(sample_rate, blocksize or BLOCK_FOR_FAKE, callback, channels=channels)
        start = stream.start

        def counted_start():
            self.starts += 1
            start()
        stream.start = counted_start
        self.opened.append(stream)
        return stream


BLOCK_FOR_FAKE = 512


def test_the_output_is_opened_when_a_recording_opens_and_space_only_starts_it(
        qtbot, window, example_path):
    from specscope.compute.playback.held import HeldOutput

    backend = CountingOutput()
    held = HeldOutput(backend)
    window.playback.output = held
    open_and_wait(window, example_path)
    # opened ahead, on a thread of its own, before any Space: the stream waits, stopped
    qtbot.waitUntil(lambda: held.opens == 1, timeout=TIMEOUT_MS)
    assert held.is_open and backend.starts == 0
    assert backend.opened[0].sample_rate == 48000.0 and backend.opened[0].channels == 2
    show_span(qtbot, window, 5.0, 6.0)
    for n in (1, 2):  # the first playback and a later one: started, never opened again
        press_space(qtbot, window)
        wait_playing(qtbot, window)
        assert len(backend.opened) == 1 and held.opens == 1 and backend.starts == n
        stream = backend.opened[0]
        qtbot.waitUntil(lambda s=stream: s.consumed > 4096, timeout=TIMEOUT_MS)
        press_space(qtbot, window)  # stop: the stream goes back to the held output
        qtbot.waitUntil(lambda: not held.lent, timeout=TIMEOUT_MS)
    # a mono recording on the stereo stream: the sound on both channels
    y = backend.opened[0].samples()
    assert y.ndim == 2 and y.shape[1] == 2 and np.abs(y).max() > 0
    np.testing.assert_array_equal(y[:, 0], y[:, 1])
    window.close()  # the held stream is closed with the window
    assert not held.is_open


def _kinds_in(window):
    """One focusable, visible widget of each kind in the window: {kind: widget}."""
    from PyQt6.QtWidgets import (
        QAbstractButton,
        QAbstractItemView,
        QAbstractSlider,
        QAbstractSpinBox,
        QLineEdit,
        QPlainTextEdit,
        QTabBar,
        QTextEdit,
        QWidget,
    )
    kinds = {}
    for wdg in window.findChildren(QWidget):
        if not wdg.isVisible() or wdg.focusPolicy() == Qt.FocusPolicy.NoFocus \
                or not wdg.isEnabled() or wdg.window() is not window:
            continue
        parent = wdg.parentWidget()
        if isinstance(wdg, QLineEdit) and isinstance(parent, (QAbstractSpinBox, QComboBox)):
            continue  # the editor inside: its spin or combo box is the widget
        if isinstance(wdg, QComboBox):
            kind = "editable combo" if wdg.isEditable() else "combo"
        elif isinstance(wdg, (QLineEdit, QTextEdit, QPlainTextEdit)):
            if getattr(wdg, "isReadOnly", lambda: False)():
                continue
            kind = "text field"
        else:
            kind = next((k.__name__ for k in (QAbstractSpinBox, QAbstractButton,
                                              QAbstractSlider, QAbstractItemView, QTabBar)
                         if isinstance(wdg, k)), type(wdg).__name__)
        kinds.setdefault(kind, wdg)
    return kinds


def test_space_plays_wherever_the_focus_is_except_in_a_text_field(
        qtbot, window, fake, example_path):
    open_and_wait(window, example_path)
    kinds = _kinds_in(window)
    # what a person finds in the window: the view, the transport's and the panels' controls
    for kind in ("text field", "editable combo", "combo", "QAbstractSpinBox",
                 "QAbstractButton", "QAbstractSlider"):
        assert kind in kinds, sorted(kinds)
    print(sorted(kinds))
    pb = window.playback
    for kind, wdg in sorted(kinds.items()):
        wdg.setFocus()
        qtbot.waitUntil(lambda w=wdg: QApplication.focusWidget() in (w, w.focusProxy()),
                        timeout=TIMEOUT_MS)
        before = wdg.lineEdit().text() if isinstance(wdg, QComboBox) and wdg.isEditable() \
            else None
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)
        if kind == "text field":
            assert not pb.playing, f"Space in a {kind} ({wdg.objectName() or wdg}) played"
        else:
            assert pb.playing, f"Space in a {kind} ({type(wdg).__name__}) did not play"
            if before is not None:
                assert wdg.lineEdit().text() == before  # nothing typed into the combo
            pb.stop()


def test_the_volume_and_mute_are_kept_in_the_session(qtbot, window, fake, example_path,
                                                     tmp_path):
    import json

    from specscope.app.session import Listening

    open_and_wait(window, example_path)
    bar = window.transport_bar
    bar.volume.setValue(40)
    bar.mute.setChecked(True)
    path = tmp_path / "s.specscope.json"
    assert window.save_session(path)
    assert json.loads(path.read_text())["listening"] == {"volume": 40, "muted": True}
    bar.volume.setValue(100)
    bar.mute.setChecked(False)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        assert window.open_session(path)
    assert bar.volume.value() == 40 and bar.mute.isChecked() and bar.gain() == 0.0
    assert window.playback.listening() == Listening(40, True)
    # a session written before volume was kept: the defaults; a bad one: one line
    state = json.loads(path.read_text())
    del state["listening"]
    path.write_text(json.dumps(state))
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        assert window.open_session(path)
    assert bar.volume.value() == 100 and not bar.mute.isChecked()
    state["listening"] = {"volume": 140, "muted": False}
    path.write_text(json.dumps(state))
    assert not window.open_session(path)
    assert "listening.volume=140 must be a number from 0 to 100" in window.last_error
    assert "\n" not in window.last_error


def test_the_transport_says_when_the_limiter_acts(qtbot, window, fake):
    fs = 48000
    t = np.arange(3 * fs) / fs
    # one second quiet, one second too loud for the output (2.0 before the limiter), quiet
    amp = np.where((t >= 1.0) & (t < 2.0), 2.0, 0.3)
    rec = ArrayRecording((amp * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32), fs,
                         name="loud")
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_recording(rec)
    label = window.transport_bar.limiter_label
    shown = []
    pb = window.playback
    pb.cursorMoved.connect(lambda pos: shown.append((pos, label.text())))
    press_space(qtbot, window)
    wait_playing(qtbot, window)
    pb_range = pb.range
    qtbot.waitUntil(lambda: pb.player is None, timeout=TIMEOUT_MS)
    assert label.text() == ""  # stopped: nothing said
    # quiet: before the loud part, and once the limiter's gain is back up (its release,
    # 0.05 s time constant: within 0.05 dB of 1 after 0.23 s) and the hold (0.3 s) is over
    quiet = [text for pos, text in shown if pos < 0.9 or pos > 2.6]
    loud = [text for pos, text in shown if 1.05 < pos < 1.95]
    assert quiet and all(text == "" for text in quiet)
    # the gain the limiter applied, from the rendered output against its input (the same range)
    r = Renderer(rec, pb_range.start_s, pb_range.stop_s, options=pb_range.options)
    y = r.render().astype(float)
    a, b = round(1.2 * fs), round(1.8 * fs)
    x = (amp * np.sin(2 * np.pi * 440.0 * t))[a:b]
    heard = y[a - r.start_sample:b - r.start_sample]
    applied_db = 20 * np.log10(np.sqrt(np.mean(heard ** 2)) / np.sqrt(np.mean(x ** 2)))
    assert applied_db == pytest.approx(20 * np.log10(0.98 / 2.0), abs=0.1)
    assert loud and all(text.startswith("Limiting −") and text.endswith(" dB") for text in loud)
    shown_db = [-float(text.removeprefix("Limiting −").removesuffix(" dB")) for text in loud]
    np.testing.assert_allclose(shown_db, applied_db, atol=0.5)
