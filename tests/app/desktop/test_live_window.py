"""The live window: the waterfall shows what the session computed; pause and scroll back."""

import numpy as np
import pytest
from _gui import TIMEOUT_MS
from specscope.app.desktop.live_window import LiveWindow
from specscope.compute.live import LiveSession, open_source
from specscope.compute.pipeline import Pipeline
from specscope.compute.spectral import to_db

STEPS = [{"op": "spectrogram", "params": {"nfft": 512, "hop": 128}}]


@pytest.fixture
def window(qtbot):
    src = open_source("generator:tone", block=512, rate=4.0, duration=30.0)
    session = LiveSession(src, Pipeline.from_steps(STEPS))
    w = LiveWindow(session, width_frames=300)
    qtbot.addWidget(w)
    w.show()
    w.start()
    yield w
    w.close()
    session.history.close()


def test_waterfall_shows_the_session_frames(qtbot, window):
    qtbot.waitUntil(lambda: window.last_frames is not None and len(window.last_frames) >= 300,
                    timeout=TIMEOUT_MS)
    window.set_paused(True)
    window.refresh()
    _first, frames = window.session.view(300, 0)
    np.testing.assert_array_equal(window.view.image_data, to_db(np.ascontiguousarray(frames.T)))
    f = window.session.frequencies
    peak = f[np.argmax(window.view.image_data.mean(axis=1))]
    assert peak == pytest.approx(1000.0, abs=48000 / 512)  # the generator's default tone
    assert "dropped" in window.stats_label.text() and "PAUSED" in window.stats_label.text()


def test_pause_freezes_and_scroll_goes_back(qtbot, window):
    qtbot.waitUntil(lambda: window.session.history_range[1] > 700, timeout=TIMEOUT_MS)
    window.set_paused(True)
    end = window.session.view_end
    # capture goes on (waited for, not timed) while the view stays frozen
    qtbot.waitUntil(lambda: window.session.history_range[1] > end + 20, timeout=TIMEOUT_MS)
    assert window.session.view_end == end
    window.scroll_by(-200)
    assert window.session.view_end == end - 200
    window.refresh()
    assert window.last_first == end - 200 - 300
    window.set_paused(False)
    qtbot.waitUntil(lambda: window.session.view_end > end, timeout=TIMEOUT_MS)


def test_colour_controls_relevel_only(qtbot, window):
    qtbot.waitUntil(lambda: window.last_frames is not None, timeout=TIMEOUT_MS)
    window.colormap.setCurrentText("viridis")
    window.gamma.setValue(1.5)
    assert window.view.colormap_name == "viridis" and window.view.gamma == 1.5


def test_left_right_keys_scroll_whatever_has_the_focus(qtbot, window):
    from PyQt6.QtCore import Qt

    qtbot.waitUntil(lambda: window.session.history_range[1] > 700, timeout=TIMEOUT_MS)
    window.activateWindow()
    for target in (window.scroll, window.pause_button, window.view):
        target.setFocus()
        qtbot.waitUntil(lambda t=target: t.hasFocus() or not window.isActiveWindow(),
                        timeout=TIMEOUT_MS)
        window.set_paused(True)
        end = window.session.view_end
        qtbot.keyClick(target, Qt.Key.Key_Left)
        assert window.session.view_end == end - 75, target   # a quarter of 300 frames
        qtbot.keyClick(target, Qt.Key.Key_Left)
        qtbot.keyClick(target, Qt.Key.Key_Right)
        assert window.session.view_end == end - 75
        assert window.session.paused
        qtbot.keyClick(target, Qt.Key.Key_End)
        assert not window.session.paused
    # Left while live pauses there and goes back
    live_end = window.session.history_range[1]
    qtbot.keyClick(window.scroll, Qt.Key.Key_Left)
    assert window.session.paused and window.session.view_end <= live_end


def test_scroll_thumb_stays_on_its_frame_while_history_grows(qtbot, window):
    qtbot.waitUntil(lambda: window.session.history_range[1] > 700, timeout=TIMEOUT_MS)
    window.scroll_by(-200)
    window.refresh()
    frame = window.session.view_end
    assert window.scroll.value() == frame
    grown = window.session.history_range[1]
    qtbot.waitUntil(lambda: window.session.history_range[1] > grown + 50, timeout=TIMEOUT_MS)
    window.refresh()
    assert window.scroll.value() == frame and window.scroll.maximum() > grown
    # while dragged, the thumb stays where the hand put it
    window.scroll.setSliderDown(True)
    window.scroll.setSliderPosition(frame - 100)
    assert window.session.view_end == frame - 100
    grown = window.session.history_range[1]
    qtbot.waitUntil(lambda: window.session.history_range[1] > grown + 50, timeout=TIMEOUT_MS)
    window.refresh()
    assert window.scroll.sliderPosition() == frame - 100
    window.scroll.setSliderDown(False)
    window.refresh()
    assert window.scroll.value() == window.session.view_end == frame - 100
    # a click on the track pages the view back, and the thumb stays there
    from PyQt6.QtWidgets import QScrollBar

    window.scroll.triggerAction(QScrollBar.SliderAction.SliderPageStepSub)
    paged = max(window.scroll.minimum(), frame - 100 - 300)
    assert paged < frame - 100 and window.session.view_end == paged
    window.refresh()
    assert window.scroll.value() == paged


def test_monitor_button_plays_the_processed_signal(qtbot):
    from PyQt6.QtCore import Qt
    from specscope.compute.playback import FakeOutput

    src = open_source("generator:tone,frequency=3000", block=480, rate=1.0, duration=30.0)
    session = LiveSession(src, Pipeline.from_steps(STEPS))
    w = LiveWindow(session, width_frames=300)
    qtbot.addWidget(w)
    out = FakeOutput(latency_s=0.03, rate=1.0)
    w.monitor_output = out
    w.show()
    w.start()
    try:
        qtbot.mouseClick(w.monitor_button, Qt.MouseButton.LeftButton)
        assert w.monitor is not None and w.monitor_button.isChecked()
        assert "Monitoring on fake output" in w.statusBar().currentMessage()
        qtbot.waitUntil(lambda: out.consumed > 48000, timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: "fake output" in w.stats_label.text(), timeout=TIMEOUT_MS)
        qtbot.mouseClick(w.monitor_button, Qt.MouseButton.LeftButton)
        assert w.monitor is None and not w.monitor_button.isChecked()
        y = out.samples()
        y = y[np.flatnonzero(np.abs(y) > 0.05)[0] + 4800:][:24000]
        spec = np.abs(np.fft.rfft(y * np.hanning(y.size)))
        assert np.fft.rfftfreq(y.size, 1 / 48000)[np.argmax(spec)] == pytest.approx(3000, abs=4)
    finally:
        w.close()
        session.history.close()


def test_monitor_without_a_device_says_so_in_the_status_bar(qtbot, monkeypatch):
    from PyQt6.QtCore import Qt
    from specscope.compute.errors import SpecscopeError
    from specscope.compute.playback import player as player_module

    def missing():
        raise SpecscopeError("audio output is unavailable: PortAudio library not found")
    monkeypatch.delenv("SPECSCOPE_AUDIO_OUTPUT", raising=False)
    monkeypatch.setattr(player_module, "load_sounddevice", missing)
    session = LiveSession(open_source("generator:tone", duration=5.0), Pipeline.from_steps(STEPS))
    w = LiveWindow(session, width_frames=300)
    qtbot.addWidget(w)
    w.show()
    w.start()
    try:
        qtbot.mouseClick(w.monitor_button, Qt.MouseButton.LeftButton)
        assert w.monitor is None and not w.monitor_button.isChecked()
        assert w.statusBar().currentMessage().startswith("Monitor: audio output is unavailable")
    finally:
        w.close()
        session.history.close()
