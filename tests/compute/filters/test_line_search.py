"""The search window of find_line around a click: the CLI's default, widened to the view's
resolution for a click on a coarse spectrogram (the designer), inner peaks first."""

from __future__ import annotations

import numpy as np
import pytest
from specscope.compute.errors import InputError
from specscope.compute.filters import find_line, search_tolerance

FS = 48000
HUM = 49.93


def _hum(seconds: float = 20.0, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(FS * seconds)) / FS
    x = 0.01 * rng.standard_normal(t.size)
    for k, a in ((1, 0.02), (2, 0.05), (3, 0.02), (4, 0.01)):  # the 2nd harmonic strongest
        x += a * np.sin(2 * np.pi * k * HUM * t + k)
    return x


def test_search_tolerance_is_the_cli_default_widened_by_the_view():
    assert search_tolerance(47.6) == pytest.approx(47.6 / 4)
    assert search_tolerance(4.0) == 2.0
    # FFT size 1024 at 48 kHz: one bin is 46.875 Hz, the window 1.5 bins each side
    assert search_tolerance(47.6, FS / 1024) == pytest.approx(1.5 * FS / 1024)
    assert search_tolerance(400.0, 0.5) == 100.0  # a fine view never narrows the CLI's


@pytest.mark.parametrize("near", [47.6, 56.1, 40.0])
def test_a_coarse_click_fits_what_the_cli_fits(near):
    x = _hum()
    cli = find_line(x, FS, 47.0)
    gui = find_line(x, FS, near, view_resolution_hz=FS / 1024)
    assert cli.frequency_hz == pytest.approx(HUM, abs=0.005)
    assert gui.frequency_hz == pytest.approx(cli.frequency_hz, abs=1e-9)
    assert gui.harmonics == cli.harmonics and gui.harmonics[:4] == (1, 2, 3, 4)


def test_the_inner_window_wins_over_a_stronger_line_only_the_view_reaches():
    """At 56 Hz the stronger 2nd harmonic (99.86 Hz) is inside 1.5 bins but the fundamental is
    inside the CLI's window: the click means the fundamental."""
    x = _hum()
    fit = find_line(x, FS, 56.1, view_resolution_hz=FS / 1024)
    assert fit.frequency_hz == pytest.approx(HUM, abs=0.005)


def test_a_click_beyond_the_cli_window_needs_the_view_resolution():
    x = _hum()
    with pytest.raises(InputError, match="no spectral line"):
        find_line(x, FS, 22.0)  # the CLI's window: 16.5–27.5 Hz, no line there
    fit = find_line(x, FS, 22.0, view_resolution_hz=FS / 1024)  # one bin spans 0–46.9 Hz
    assert fit.frequency_hz == pytest.approx(HUM, abs=0.005)
