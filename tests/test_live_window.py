"""The live window: the waterfall shows what the session computed; pause and scroll back."""

import numpy as np
import pytest
from specscope.app.live_window import LiveWindow
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
                    timeout=20000)
    window.set_paused(True)
    window.refresh()
    first, frames = window.session.view(300, 0)
    np.testing.assert_array_equal(window.view.image_data, to_db(np.ascontiguousarray(frames.T)))
    f = window.session.frequencies
    peak = f[np.argmax(window.view.image_data.mean(axis=1))]
    assert peak == pytest.approx(1000.0, abs=48000 / 512)  # the generator's default tone
    assert "dropped" in window.stats_label.text() and "PAUSED" in window.stats_label.text()


def test_pause_freezes_and_scroll_goes_back(qtbot, window):
    qtbot.waitUntil(lambda: window.session.history_range[1] > 700, timeout=20000)
    window.set_paused(True)
    end = window.session.view_end
    qtbot.wait(300)
    assert window.session.view_end == end          # frozen while capture goes on
    assert window.session.history_range[1] > end
    window.scroll_by(-200)
    assert window.session.view_end == end - 200
    window.refresh()
    assert window.last_first == end - 200 - 300
    window.set_paused(False)
    qtbot.wait(300)
    assert window.session.view_end > end


def test_colour_controls_relevel_only(qtbot, window):
    qtbot.waitUntil(lambda: window.last_frames is not None, timeout=20000)
    window.colormap.setCurrentText("viridis")
    window.gamma.setValue(1.5)
    assert window.view.colormap_name == "viridis" and window.view.gamma == 1.5
