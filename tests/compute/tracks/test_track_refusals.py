"""Praat's tracks refuse parameters Praat refuses, in one line naming the value."""

from __future__ import annotations

import numpy as np
import pytest
from specscope.compute.errors import InputError
from specscope.compute.tracks import compute_track

FS = 16000.0
X = np.random.default_rng(0).standard_normal(int(FS))


@pytest.mark.parametrize(("kind", "params", "words"), [
    ("pitch", {"pitch_floor": 700.0}, "pitch_floor=700 must be below pitch_ceiling=600"),
    ("pitch", {"pitch_floor": 0.0}, "pitch_floor=0.0 must be a finite number above 0"),
    ("pitch", {"time_step": -0.01}, "time_step=-0.01 must be >= 0"),
    ("pitch", {"max_number_of_candidates": 1}, "max_number_of_candidates=1"),
    ("formants", {"formant_ceiling": 9000.0}, "formant_ceiling=9000 Hz lies above the "
                                             "Nyquist frequency, 8000 Hz"),
    ("formants", {"window_length": 0.0}, "window_length=0.0 must be a finite number above 0"),
])
def test_a_bad_parameter_is_one_line_naming_it(kind, params, words):
    with pytest.raises(InputError) as info:
        compute_track(kind, X, sr=FS, **params)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_the_kinds_take_every_praat_default():
    pitch = compute_track("pitch", X, sr=FS)
    formants = compute_track("formants", X, sr=FS)
    assert pitch.columns == ("f0",) and pitch.params["pitch_floor"] == 75.0
    assert formants.columns[:3] == ("F1", "F2", "F3")
