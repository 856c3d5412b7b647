"""pYIN against librosa.pyin on real speech (male and female voices); a run in blocks
equals a whole run."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from specscope.compute.errors import InputError
from specscope.compute.io import open_recording
from specscope.compute.tracks import pyin

librosa = pytest.importorskip("librosa", reason="librosa (the reference) is not installed")


@pytest.mark.parametrize("params", [{"fmin": 65.0, "fmax": 1000.0},
                                    {"fmin": 80.0, "fmax": 600.0, "hop_length": 256,
                                     "switch_prob": 0.05}])
def test_equals_librosa_on_speech(speech_file, params) -> None:
    x, fs = sf.read(speech_file, dtype="float32")
    ours = pyin(open_recording(speech_file), **params)
    f0, voiced, prob = librosa.pyin(x.astype(np.float64), sr=fs, **params)
    assert ours.values.shape == (f0.size, 2)
    np.testing.assert_allclose(ours.times, librosa.times_like(
        f0, sr=fs, hop_length=params.get("hop_length", 512)), rtol=0, atol=1e-12)
    ours_voiced = ~np.isnan(ours.column("f0"))
    assert np.mean(ours_voiced == voiced) >= 0.95
    both = ours_voiced & voiced
    assert both.sum() >= 10
    err = np.abs(ours.column("f0")[both] - f0[both]) / f0[both]
    assert np.median(err) <= 0.01 and np.percentile(err, 95) <= 0.03
    np.testing.assert_allclose(ours.column("voiced_probability"), prob, atol=1e-9)


def test_blocks_equal_a_whole_run(speech_file) -> None:
    rec = open_recording(speech_file)
    whole = pyin(rec, fmin=65.0, fmax=1000.0, block_frames=10**9)
    for block in (1, 17):
        part = pyin(rec, fmin=65.0, fmax=1000.0, block_frames=block)
        np.testing.assert_array_equal(part.times, whole.times)
        np.testing.assert_array_equal(part.values, whole.values)


def test_a_tone_is_voiced_at_its_pitch_and_silence_is_not() -> None:
    fs = 16000
    t = np.arange(fs) / fs
    tone = pyin(0.5 * np.sin(2 * np.pi * 220.0 * t), sr=fs, fmin=80.0, fmax=800.0)
    f0 = tone.column("f0")[4:-4]
    assert np.all(np.abs(f0 - 220.0) / 220.0 < 0.01)
    silent = pyin(np.zeros(fs), sr=fs, fmin=80.0, fmax=800.0)
    assert np.all(np.isnan(silent.column("f0")))


def test_bad_parameters_are_named() -> None:
    x = np.zeros(8000)
    for bad, name in [({"fmax": 5000.0}, "fmax"), ({"fmin": 900.0, "fmax": 800.0}, "fmin"),
                      ({"fmin": 3.0}, "fmin"), ({"switch_prob": 2.0}, "switch_prob"),
                      ({"resolution": 0.0}, "resolution"),
                      ({"n_thresholds": 0}, "n_thresholds"),
                      ({"frame_length": 10**30}, "frame_length"),
                      ({"hop_length": 10**30}, "hop_length"),
                      ({"resolution": 1e-6}, "resolution")]:
        with pytest.raises(InputError, match=name):
            pyin(x, sr=8000, **{"fmin": 80.0, "fmax": 800.0, **bad})
