"""Formants by Burg's linear prediction against Praat (through parselmouth)."""

from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile
from specscope.compute.io.memory import ArrayRecording
from specscope.compute.tracks.formants import (
    burg_lpc,
    formant_track,
    formants_burg,
    resample_sinc,
)

parselmouth = pytest.importorskip("parselmouth", reason="Praat reference (parselmouth) absent")


def _read(path):
    fs, x = wavfile.read(path)
    x = x.astype(float)
    if x.ndim == 2:
        x = x[:, 0]
    return x / 32768.0, int(fs)


def test_formants_match_praat_on_vowels(speech_file):
    x, fs = _read(speech_file)
    snd = parselmouth.Sound(x, fs)
    ref = snd.to_formant_burg()
    ours = formants_burg(x, fs)
    xs = np.asarray(ref.xs())
    np.testing.assert_allclose(ours.times, xs, rtol=0, atol=1e-9)
    pitch = snd.to_pitch_ac()
    vowel = ~np.isnan([pitch.get_value_at_time(t) for t in xs])
    assert vowel.sum() > 30
    for i in (1, 2, 3):
        f_ref = np.array([ref.get_value_at_time(i, t) for t in xs])
        f = ours.column(f"F{i}")
        ok = vowel & ~np.isnan(f_ref) & ~np.isnan(f)
        assert ok.sum() >= 0.9 * vowel.sum()
        rel = np.abs(f[ok] - f_ref[ok]) / f_ref[ok]
        assert np.median(rel) <= 0.03
        assert np.median(rel) <= 0.002  # measured: 1e-5 .. 4e-4
        b_ref = np.array([ref.get_bandwidth_at_time(i, t) for t in xs])
        b = ours.column(f"B{i}")
        assert np.median(np.abs(b[ok] - b_ref[ok]) / b_ref[ok]) <= 0.03
    assert ours.columns == ("F1", "F2", "F3", "F4", "F5", "B1", "B2", "B3", "B4", "B5")
    assert ours.kind == "formants" and set(ours.units) == {"Hz"}


def test_a_recording_gives_the_array_track(speech_file):
    x, fs = _read(speech_file)
    a = formants_burg(x.astype(np.float32), fs)
    b = formants_burg(ArrayRecording(x.astype(np.float32), fs))
    np.testing.assert_array_equal(a.values, b.values)


def test_blocks_of_a_long_recording():
    """Blocks of frames, each low-passed with its context, give the whole track to a
    stated tolerance; a recording within one block is the whole one exactly."""
    paths = [Path(f"/usr/share/sounds/alsa/{n}.wav")
             for n in ("Front_Center", "Front_Left", "Rear_Right")]
    if not all(p.exists() for p in paths):
        pytest.skip("Debian's alsa-utils voices absent")
    parts = [_read(p) for p in paths]
    x = np.concatenate([p for p, _ in parts]).astype(np.float32)
    whole = formants_burg(x, 48000, block_frames=0)
    one = formants_burg(ArrayRecording(x, 48000))
    np.testing.assert_array_equal(one.values, whole.values)
    blocks = formants_burg(ArrayRecording(x, 48000), block_frames=40)
    np.testing.assert_array_equal(blocks.times, whole.times)
    a, b = whole.values[:, :3], blocks.values[:, :3]
    assert np.mean(np.isnan(a) == np.isnan(b)) >= 0.99
    ok = ~np.isnan(a) & ~np.isnan(b)
    assert np.median(np.abs(a[ok] - b[ok]) / a[ok]) <= 1e-3  # measured 1.1e-4


def test_burg_recovers_an_autoregressive_process():
    rng = np.random.default_rng(1)
    coeffs = np.array([1.3, -0.8, 0.2])
    n = 20000
    x = np.zeros(n)
    e = rng.standard_normal(n)
    for t in range(3, n):
        x[t] = coeffs @ x[t - 3:t][::-1] + e[t]
    np.testing.assert_allclose(burg_lpc(x[None, :], 3)[0], coeffs, atol=0.02)


def test_resampling_keeps_a_tone():
    fs, new = 44100.0, 11000.0
    t = (np.arange(44100) + 0.5) / fs
    y = resample_sinc(np.sin(2 * np.pi * 440 * t), fs, new)
    tn = 0.5 * (1.0 - (y.size - 1) / new) + np.arange(y.size) / new
    mid = slice(200, -200)
    np.testing.assert_allclose(y[mid], np.sin(2 * np.pi * 440 * tn)[mid], atol=2e-3)


def test_silence_has_no_formants():
    tr = formants_burg(np.zeros(16000), 16000)
    assert tr.times.size > 0 and np.isnan(tr.values).all()


def test_the_kind_table_form(speech_file):
    """``formant_track(source, channel, sr=...)`` is ``formants_burg`` of that channel."""
    x, fs = _read(speech_file)
    stereo = np.stack([np.zeros_like(x), x], axis=1)
    a = formants_burg(x, fs, formant_ceiling=5000.0)
    b = formant_track(stereo, 1, sr=fs, formant_ceiling=5000.0)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.params == b.params
