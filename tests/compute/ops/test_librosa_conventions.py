"""Operators that say they follow librosa match librosa (the dev extra installs it).

mel scale, mel filter bank, mel spectrogram (both framings), onset strength and onset
detection, each against librosa with a stated tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from specscope import compute

librosa = pytest.importorskip("librosa")


@pytest.fixture(scope="module")
def clip():
    """Clicks, noise and gated tones: onsets at known places, and between them."""
    sr = 22050
    rng = np.random.default_rng(0)
    y = librosa.clicks(times=[0.3, 0.55, 0.9, 1.4, 1.45, 2.0], sr=sr, length=int(2.5 * sr))
    t = np.arange(y.size) / sr
    y = y + 0.05 * rng.standard_normal(y.size) + np.sin(2 * np.pi * 300 * t) * ((t % 0.7) < 0.2)
    return y, sr


@pytest.mark.parametrize("htk", [False, True])
def test_mel_scale_and_filter_bank(htk):
    f = np.array([0.0, 100.0, 700.0, 1000.0, 5000.0, 20000.0])
    np.testing.assert_allclose(compute.call("hz_to_mel", f, htk=htk),
                               librosa.hz_to_mel(f, htk=htk), rtol=1e-12)
    m = librosa.hz_to_mel(f, htk=htk)
    np.testing.assert_allclose(compute.call("mel_to_hz", m, htk=htk),
                               librosa.mel_to_hz(m, htk=htk), rtol=1e-12)
    np.testing.assert_allclose(
        compute.call("mel_frequencies", n_mels=20, fmin=50.0, fmax=8000.0, htk=htk),
        librosa.mel_frequencies(n_mels=20, fmin=50.0, fmax=8000.0, htk=htk), rtol=1e-12)
    ours = compute.call("mel_filterbank", fs=16000.0, nfft=1024, n_mels=64, fmin=30.0,
                        htk=htk)
    ref = librosa.filters.mel(sr=16000, n_fft=1024, n_mels=64, fmin=30.0, htk=htk)
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9 * ref.max())


@pytest.mark.parametrize("center", [False, True])
def test_mel_spectrogram_with_and_without_centring(clip, center):
    y, sr = clip
    ours = compute.call("mel_spectrogram", y, fs=sr, nfft=2048, hop=512, n_mels=128,
                        center=center)
    ref = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=2048, hop_length=512,
                                         center=center)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9 * ref.max())


@pytest.mark.parametrize("kw", [{}, {"lag": 2, "max_size": 3}, {"center": False},
                                {"detrend": True}, {"hop": 256, "n_mels": 64}])
def test_onset_strength_is_librosas(clip, kw):
    y, sr = clip
    ours = compute.call("onset_strength", y, fs=sr, **kw)
    ref_kw = {("hop_length" if k == "hop" else k): v for k, v in kw.items()}
    ref = librosa.onset.onset_strength(y=y, sr=sr, **ref_kw)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_onset_strength_default_rate_is_librosas(clip):
    y, _ = clip  # librosa's sr and specscope's fs both default to 22050 Hz here
    np.testing.assert_allclose(compute.call("onset_strength", y),
                               librosa.onset.onset_strength(y=y), rtol=1e-4, atol=1e-6)


def _within_one_frame(ours, ref):
    assert len(ours) == len(ref), (ours, ref)
    assert np.all(np.abs(np.asarray(ours) - np.asarray(ref)) <= 1), (ours, ref)


@pytest.mark.parametrize("hop", [512, 256])
def test_onset_detect_within_one_frame_of_librosa(clip, hop):
    y, sr = clip
    ours = compute.call("onset_detect", y, fs=sr, hop=hop)
    ref = librosa.onset.onset_detect(y=y, sr=sr, hop_length=hop)
    assert len(ref) >= 6
    _within_one_frame(ours, ref)
    t = compute.call("onset_detect", y, fs=sr, hop=hop, units="time")
    np.testing.assert_allclose(t, librosa.frames_to_time(ours, sr=sr, hop_length=hop))


def test_onset_detect_on_the_example_recording(example_path):
    y, sr = soundfile.read(example_path, dtype="float64")
    y = y.mean(axis=1) if y.ndim > 1 else y
    _within_one_frame(compute.call("onset_detect", y, fs=sr),
                      librosa.onset.onset_detect(y=y, sr=sr))


def test_onset_detect_of_silence_is_empty():
    assert compute.call("onset_detect", np.zeros(22050)).size == 0
    assert librosa.onset.onset_detect(y=np.zeros(22050)).size == 0
