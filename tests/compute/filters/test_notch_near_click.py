"""A click a few pixels off mains hum at the default zoom (0–24 kHz) finds the hum, not the
voice beside it (issue 39, item 1).

At the default zoom one pixel of the spectrogram spans 45–90 Hz, so the hum at 49.9 Hz and
its harmonics up to 350 Hz are one bright line a few pixels high at the bottom, and a
voice's harmonics at 110–330 Hz sit inside it.  A hand clicks 2–10 pixels above the line.
``find_line`` given the click's uncertainty (±6 pixels, as the designer passes it) must
take the most prominent line family there (the hum: seven harmonics) and name the voice
(its pitch, or the harmonic of it in the window) as also near.  The recording,
:func:`talk_with_hum` (tests/_hum_and_voice.py), is shared with the journey
tests/journeys/test_notch_click.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from _hum_and_voice import FS, HUM_HZ, VOICE_HZ, is_voice, talk_with_hum
from specscope.app.desktop.controllers.designer import MAX_LINE_SAMPLES
from specscope.compute.errors import InputError
from specscope.compute.filters import find_line

#: the default view spans -23.4–24023.4 Hz (half a 1024-point bin below 0 Hz)
VIEW_HZ = FS / 2 + FS / 1024
#: plot heights (px) of the spectrogram at the default layout, measured with the journey
#: harness's geometry report: 1600x1000 with the filter designer open (where N is its key),
#: 1280x800 with it open, and 1600x1000 without it
PLOT_HEIGHTS = (374, 274, 524)
NFFT = 1024
#: a hand's click lands this far (px, each side) from the line it means (the designer's
#: CLICK_PIXELS)
CLICK_PIXELS = 6


def click(x: np.ndarray, plot_px: int, pixels_above: float, line_hz: float = HUM_HZ):
    """``find_line`` as the designer calls it for a click ``pixels_above`` the line."""
    hz_per_px = VIEW_HZ / plot_px
    near = line_hz + pixels_above * hz_per_px
    bin_hz = FS / NFFT
    return near, find_line(x, FS, near, view_resolution_hz=max(hz_per_px, bin_hz),
                           uncertainty_hz=CLICK_PIXELS * hz_per_px + bin_hz / 2)


@pytest.fixture(scope="module")
def recordings() -> dict[str, np.ndarray]:
    """A 20 s recording, and of a 10 min one what the designer measures: the middle
    MAX_LINE_SAMPLES (87 s)."""
    span = MAX_LINE_SAMPLES / FS
    return {"20 s": talk_with_hum(20.0),
            "10 min": talk_with_hum(span, start_s=300.0 - span / 2, seed=2)}


@pytest.mark.parametrize("plot_px", PLOT_HEIGHTS)
@pytest.mark.parametrize("which", ["20 s", "10 min"])
def test_a_click_above_the_hum_line_finds_the_hum_and_names_the_voice(recordings, which,
                                                                      plot_px):
    x = recordings[which]
    for pixels in (2, 5, 8):
        near, fit = click(x, plot_px, pixels)
        text = fit.describe()
        where = f"{which}, {plot_px} px plot, click {pixels} px above the hum at {near:.1f} Hz"
        assert fit.frequency_hz == pytest.approx(HUM_HZ, abs=0.05), (where, text)
        assert set(range(1, 8)) <= set(fit.harmonics), (where, text)
        assert text.startswith(f"{HUM_HZ:.2f} Hz, harmonics 1–7"), (where, text)
        m = re.search(r"; also near: ([\d.]+) Hz \(", text)
        assert m, (where, text)
        assert is_voice(float(m.group(1))), (where, text)
        assert is_voice(fit.also_near[0].frequency_hz), (where, text)
        assert fit.also_near[0].prominence_db < sum(
            lv - fl for lv, fl in zip(fit.levels_db, fit.floor_db, strict=True))
        assert "\n" not in text and fit.window_hz[0] <= near <= fit.window_hz[1]


def test_without_hum_the_voice_is_the_line_there():
    x = talk_with_hum(20.0, hum=False)
    _, fit = click(x, PLOT_HEIGHTS[0], 3, line_hz=VOICE_HZ)
    assert fit.frequency_hz == pytest.approx(VOICE_HZ, rel=0.03), fit.describe()
    assert fit.harmonics[0] == 1, fit.describe()
    # what else is near is not the voice again (a sliver of its wavering pitch)
    assert all(abs(n.frequency_hz / VOICE_HZ - round(n.frequency_hz / VOICE_HZ)) > 0.06
               for n in fit.also_near), fit.describe()


def test_the_cli_window_is_unchanged_by_the_click_search(recordings):
    """Without an uncertainty (a typed --near) the most prominent peak in the window is the
    fundamental, as the CLI always took it: near 149 Hz, the hum's third harmonic."""
    fit = find_line(recordings["20 s"], FS, 149.0)
    assert fit.frequency_hz == pytest.approx(3 * HUM_HZ, abs=0.05), fit.describe()
    assert fit.harmonics[0] == 1 and fit.also_near == ()
    assert "also near" not in fit.describe()


def test_a_click_where_no_line_stands_names_the_window():
    x = 0.003 * np.random.default_rng(4).standard_normal(10 * FS)
    with pytest.raises(InputError, match=r"^no spectral line stands 10 dB above the noise "
                                         r"floor within 0–[\d.]+ Hz"):
        click(x, PLOT_HEIGHTS[0], 5)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), True, "6 px"])
def test_a_bad_uncertainty_is_refused_in_one_line(bad):
    x = talk_with_hum(4.0)
    with pytest.raises(InputError, match=r"^uncertainty_hz=.* must be a number of Hz >= 0$"):
        find_line(x, FS, 100.0, uncertainty_hz=bad)
