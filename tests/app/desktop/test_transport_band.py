"""A band typed into the transport bar is the band heard, whatever the order (issue 39, item 2).

A person types 300 and 1000 into the bar's Hz fields and ticks Band, or ticks Band and
then types, or edits the fields after ticking, and presses Space: the render is asked
for 300–1000 Hz and the fields still say so.  Clicks and typing go to the real widgets.
With a private PulseAudio server (tests/sound_server.py) the sound on its null sink is
recorded too: outside the band it is at least 40 dB below inside.
"""

from __future__ import annotations

import numpy as np
import pytest
import sound_server
import soundfile
from _gui import TIMEOUT_MS, open_and_wait
from PyQt6.QtCore import Qt
from scipy import signal
from specscope.compute.playback import FakeOutput

BAND = (300.0, 1000.0)


@pytest.fixture
def window(make_window, monkeypatch):
    """The window, active (Space is a shortcut of the window), with a fake output."""
    monkeypatch.delenv("SPECSCOPE_AUDIO_OUTPUT", raising=False)
    w = make_window(activate=True)
    w.playback.output = FakeOutput(latency_s=0.02, rate=1.0, device_name="fake output")
    return w


@pytest.fixture
def opened(qtbot, window, example_path):
    open_and_wait(window, example_path)
    return window


def _type(qtbot, field, text: str) -> None:
    """Click into ``field``, select what is there and type ``text`` over it."""
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    field.selectAll()
    qtbot.keyClicks(field, text)


def _type_band(qtbot, bar, lo: str = "300", hi: str = "1000") -> None:
    _type(qtbot, bar.band_lo, lo)
    _type(qtbot, bar.band_hi, hi)


def _tick(qtbot, bar) -> None:
    qtbot.mouseClick(bar.band_box, Qt.MouseButton.LeftButton)


def _space_from(qtbot, w, widget) -> None:
    """Space with ``widget`` focused (the Band box just clicked, or the view)."""
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=TIMEOUT_MS)
    qtbot.keyClick(widget, Qt.Key.Key_Space)


def _heard_band(qtbot, w) -> tuple[float, float] | None:
    """The band the render playing was asked for (then stops it)."""
    qtbot.waitUntil(lambda: w.playback.player is not None, timeout=TIMEOUT_MS)
    band = w.playback.renderer.options.band
    w.playback.stop()
    return band


def _fields(bar) -> tuple[float, float]:
    return float(bar.band_lo.text()), float(bar.band_hi.text())


def test_typed_then_ticked_plays_the_typed_band(qtbot, opened):
    bar = opened.transport_bar
    _type_band(qtbot, bar)
    _tick(qtbot, bar)
    assert bar.band_box.isChecked()
    _space_from(qtbot, opened, bar.band_box)       # the focus is where the click left it
    assert bar.band_box.isChecked()                # Space played; it did not untick Band
    assert _heard_band(qtbot, opened) == BAND
    assert _fields(bar) == BAND


def test_ticked_then_typed_plays_the_typed_band(qtbot, opened):
    bar = opened.transport_bar
    _tick(qtbot, bar)
    _type_band(qtbot, bar)
    _space_from(qtbot, opened, opened.view)
    assert _heard_band(qtbot, opened) == BAND
    assert _fields(bar) == BAND


def test_edits_after_ticking_and_playing_are_what_plays_next(qtbot, opened):
    bar = opened.transport_bar
    _tick(qtbot, bar)
    _space_from(qtbot, opened, opened.view)        # nothing typed: the view's band, shown
    shown = _heard_band(qtbot, opened)
    assert shown is not None and _fields(bar) == pytest.approx(shown, rel=1e-5)
    _type(qtbot, bar.band_lo, "300")               # one edge edited, the other as shown
    _space_from(qtbot, opened, opened.view)
    assert _heard_band(qtbot, opened) == pytest.approx((300.0, shown[1]), rel=1e-5)
    _type(qtbot, bar.band_hi, "1000")
    _space_from(qtbot, opened, opened.view)
    assert _heard_band(qtbot, opened) == BAND
    # Band off and on again: the fields still say 300–1000, so that is what plays
    _tick(qtbot, bar)
    _tick(qtbot, bar)
    _space_from(qtbot, opened, bar.band_box)
    assert _heard_band(qtbot, opened) == BAND
    assert _fields(bar) == BAND
    # Band off: the whole band, the typed fields kept for later
    _tick(qtbot, bar)
    _space_from(qtbot, opened, opened.view)
    assert _heard_band(qtbot, opened) is None
    assert _fields(bar) == BAND


def test_emptied_fields_give_the_view_band_back(qtbot, opened):
    bar = opened.transport_bar
    _type_band(qtbot, bar)
    _tick(qtbot, bar)
    for field in (bar.band_lo, bar.band_hi):
        _type(qtbot, field, "")
        qtbot.keyClick(field, Qt.Key.Key_Backspace)
    _space_from(qtbot, opened, opened.view)
    band = _heard_band(qtbot, opened)
    _, _, f0, f1 = opened.view.visible_range()
    nyquist = opened.document.recording.sample_rate / 2
    assert band == pytest.approx((max(0.0, f0), min(f1, nyquist)), rel=1e-6)
    assert _fields(bar) == pytest.approx(band, rel=1e-5)


def test_a_typed_band_upside_down_is_one_line_and_nothing_plays(qtbot, opened):
    bar = opened.transport_bar
    _tick(qtbot, bar)
    _type_band(qtbot, bar, "1000", "300")
    _space_from(qtbot, opened, opened.view)
    assert opened.playback.player is None and not opened.playback.playing
    assert opened.last_error.startswith("band 1000..300 Hz: the low edge must be below")
    assert "\n" not in opened.last_error
    assert (bar.band_lo.text(), bar.band_hi.text()) == ("1000", "300")  # nothing lost


def _noise_wav(tmp_path, seconds: float = 3.0, fs: int = 48000):
    x = 0.1 * np.random.default_rng(9).standard_normal(int(seconds * fs))
    path = tmp_path / "noise.wav"
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


@pytest.mark.real
def test_the_typed_band_is_what_the_sound_card_hears(qtbot, make_window, monkeypatch,
                                                     tmp_path):
    """Type, tick, Space, on a real sound server's null sink: of white noise, the sound
    outside 300–1000 Hz is at least 40 dB below the sound inside (Welch, the monitor)."""
    if not sound_server.available():
        pytest.skip(sound_server.MISSING)
    server = sound_server.SoundServer(tmp_path / "pulse")
    try:
        server.apply(monkeypatch)
        w = make_window(activate=True)
        open_and_wait(w, _noise_wav(tmp_path))
        bar = w.transport_bar
        _type_band(qtbot, bar)
        _tick(qtbot, bar)
        with server.record(tmp_path / "heard.raw") as rec:
            _space_from(qtbot, w, bar.band_box)
            qtbot.waitUntil(lambda: w.playback.player is not None, timeout=TIMEOUT_MS)
            assert w.playback.renderer.options.band == BAND
            qtbot.waitUntil(lambda: w.playback.player is None, timeout=4 * TIMEOUT_MS)
            # the monitor lags the sink: wait for the tail to arrive
            rec.wait_for(rec.frames() + sound_server.RATE // 2)
            y = rec.samples().astype(float)
        w.playback.close()  # the sound card let go before the server stops
    finally:
        server.close()
    y = y[:, 0]
    a, b = sound_server.sound_span(y)
    assert b - a > sound_server.RATE, (a, b)        # seconds of sound were heard
    f, p = signal.welch(y[a:b], sound_server.RATE, nperseg=8192)
    inside = p[(f >= 400) & (f <= 900)].mean()
    outside = p[((f >= 50) & (f <= 150)) | ((f >= 2000) & (f <= 20000))].mean()
    down = 10 * np.log10(inside / outside)
    print(f"outside the band: {down:.1f} dB below inside")
    assert down >= 40.0, down
