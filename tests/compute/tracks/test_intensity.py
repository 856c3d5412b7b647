"""Intensity against Praat's "To Intensity" (through parselmouth) on real speech; a run in
blocks equals a whole run."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from specscope.compute.errors import InputError
from specscope.compute.io import ArrayRecording, open_recording
from specscope.compute.tracks import intensity

parselmouth = pytest.importorskip("parselmouth", reason="praat-parselmouth (the reference) "
                                  "is not installed")
TOL_DB = 0.2


@pytest.mark.parametrize("minimum_pitch,time_step,subtract_mean",
                         [(100.0, 0.0, True), (75.0, 0.01, False), (200.0, 0.005, True)])
def test_equals_praat_on_speech(speech_file, minimum_pitch, time_step, subtract_mean) -> None:
    x, fs = sf.read(speech_file, dtype="float32")
    ours = intensity(open_recording(speech_file), minimum_pitch=minimum_pitch,
                     time_step=time_step, subtract_mean=subtract_mean)
    ref = parselmouth.Sound(x.astype(np.float64), fs).to_intensity(
        minimum_pitch=minimum_pitch, time_step=time_step or None, subtract_mean=subtract_mean)
    assert ours.times.shape == ref.xs().shape
    np.testing.assert_allclose(ours.times, ref.xs(), rtol=0, atol=1e-12)
    err = np.abs(ours.column("intensity") - ref.values[0])
    assert err.max() <= TOL_DB, err.max()


def test_blocks_equal_a_whole_run(speech_file) -> None:
    rec = open_recording(speech_file)
    whole = intensity(rec, block_frames=10**9)
    for block in (1, 7, 64):
        part = intensity(rec, block_frames=block)
        np.testing.assert_array_equal(part.times, whole.times)
        np.testing.assert_array_equal(part.values, whole.values)


def test_a_tone_of_known_level_and_silence() -> None:
    fs = 16000
    t = np.arange(fs) / fs
    amp = 2e-5 * np.sqrt(2) * 10 ** (60 / 20)  # 60 dB SPL rms
    tr = intensity(ArrayRecording(amp * np.sin(2 * np.pi * 440 * t), fs))
    assert np.allclose(tr.column("intensity"), 60.0, atol=0.01)
    assert np.all(intensity(np.zeros(fs), sr=fs).column("intensity") == -300.0)
    assert tr.params == {"minimum_pitch": 100.0, "time_step": 0.0, "subtract_mean": True}


def test_bad_parameters_are_named() -> None:
    x = np.zeros(1000)
    with pytest.raises(InputError, match="minimum_pitch"):
        intensity(x, sr=8000, minimum_pitch=0)
    with pytest.raises(InputError, match="minimum_pitch"):
        intensity(x, sr=8000, minimum_pitch=10)  # window longer than the sound
    with pytest.raises(InputError, match="time_step"):
        intensity(x, sr=8000, time_step=-1)
    with pytest.raises(InputError, match="channel"):
        intensity(x, 1, sr=8000, minimum_pitch=100)
    with pytest.raises(InputError, match="sr="):
        intensity(x)
