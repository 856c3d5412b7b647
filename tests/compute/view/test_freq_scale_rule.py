"""One frequency-scale rule (compute/view/scales.py), the same words in every front-end."""

from __future__ import annotations

import numpy as np
import pytest
from specscope.compute.errors import InputError
from specscope.compute.io import ArrayRecording
from specscope.compute.view import (
    FREQ_SCALES,
    FrequencyScaleError,
    TileEngine,
    check_freq_scale,
    freq_scale_problem,
)

COMPLEX = freq_scale_problem("log", two_sided=True)
STACKED = freq_scale_problem("mel", stacked=True)


def _iq(fs: float = 8000.0, seconds: float = 1.0) -> ArrayRecording:
    t = np.arange(int(fs * seconds)) / fs
    return ArrayRecording((np.exp(2j * np.pi * 1000.0 * t)).astype(np.complex64), fs, name="iq")


def test_the_rule_names_why_and_what_is_allowed():
    assert FREQ_SCALES == ("linear", "log", "mel")
    for scale in FREQ_SCALES:
        assert freq_scale_problem(scale) == ""
        assert check_freq_scale(scale) == scale
        assert freq_scale_problem("linear", two_sided=True, stacked=True) == ""
    assert COMPLEX.startswith("log and mel frequency axes need a real recording and one channel")
    assert COMPLEX.endswith("this one is complex (IQ)")
    assert STACKED.endswith("channels are stacked")
    assert freq_scale_problem("log", two_sided=True) == freq_scale_problem("mel", two_sided=True)
    with pytest.raises(FrequencyScaleError, match="one of linear, log, mel") as info:
        check_freq_scale("bark")
    assert (info.value.scale, info.value.reason) == ("bark", "unknown")
    with pytest.raises(FrequencyScaleError) as info:
        check_freq_scale("mel", two_sided=True, stacked=True)
    assert str(info.value) == COMPLEX
    assert isinstance(info.value, InputError) and info.value.reason == "complex"


def test_the_tile_engine_refuses_with_the_rule():
    engine = TileEngine(_iq(), nfft=256, hop=64)
    assert engine.two_sided
    with pytest.raises(FrequencyScaleError) as info:
        engine.render(0.0, 1.0, 64, freq_scale="log")
    assert str(info.value) == COMPLEX
    with pytest.raises(FrequencyScaleError) as info:
        engine.render(0.0, 1.0, 64, freq_scale="bark")
    assert str(info.value) == freq_scale_problem("bark")


def test_the_notebook_refuses_with_the_rule():
    pytest.importorskip("jupyter_rfb")
    from specscope.app.notebook.explorer import explore

    w = explore(_iq())
    try:
        with pytest.raises(FrequencyScaleError) as info:
            w.freq_scale = "log"
        assert str(info.value) == COMPLEX
        assert w.freq_scale == "linear"
    finally:
        w.close()


def test_the_desktop_window_shows_the_rule(qtbot, make_window):
    from _gui import TIMEOUT_MS

    w = make_window(nfft=256, hop=64, show=False)
    with qtbot.waitSignal(w.imageShown, timeout=TIMEOUT_MS):
        w.open_recording(_iq())
    with qtbot.waitSignal(w.errorShown, timeout=TIMEOUT_MS) as shown:
        w.set_frequency_scale("mel")
    assert shown.args == [COMPLEX]
    assert w.settings.freq_scale == "linear"
