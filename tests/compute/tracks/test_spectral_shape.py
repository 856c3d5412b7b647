"""Spectral centroid, bandwidth, roll-off and flatness against librosa's on real speech;
spectral flux against its definition on librosa's STFT; runs in blocks equal whole runs."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from specscope.compute.errors import InputError
from specscope.compute.io import open_recording
from specscope.compute.tracks import (
    TRACKS,
    spectral_bandwidth,
    spectral_centroid,
    spectral_flatness,
    spectral_flux,
    spectral_rolloff,
)

librosa = pytest.importorskip("librosa", reason="librosa (the reference) is not installed")
RTOL = 1e-5
STFTS = [{}, {"n_fft": 1024, "hop_length": 256},
         {"n_fft": 2048, "hop_length": 300, "win_length": 1500, "window": "hamming"}]


def _close(ours: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-12)))


@pytest.mark.parametrize("stft", STFTS)
def test_equal_librosa_on_speech(speech_file, stft) -> None:
    x, fs = sf.read(speech_file, dtype="float32")
    y = x.astype(np.float64)
    rec = open_recording(speech_file)
    cases = [
        (spectral_centroid(rec, **stft), librosa.feature.spectral_centroid(y=y, sr=fs, **stft)),
        (spectral_bandwidth(rec, **stft),
         librosa.feature.spectral_bandwidth(y=y, sr=fs, **stft)),
        (spectral_bandwidth(rec, p=3, **stft),
         librosa.feature.spectral_bandwidth(y=y, sr=fs, p=3, **stft)),
        (spectral_rolloff(rec, **stft), librosa.feature.spectral_rolloff(y=y, sr=fs, **stft)),
        (spectral_rolloff(rec, roll_percent=0.5, **stft),
         librosa.feature.spectral_rolloff(y=y, sr=fs, roll_percent=0.5, **stft)),
        (spectral_flatness(rec, **stft), librosa.feature.spectral_flatness(y=y, **stft)),
    ]
    times = librosa.times_like(cases[0][1], sr=fs, hop_length=stft.get("hop_length", 512))
    for ours, ref in cases:
        assert ours.values.shape == (ref.shape[1], 1)
        np.testing.assert_allclose(ours.times, times, rtol=0, atol=1e-12)
        assert _close(ours.values[:, 0], ref[0]) <= RTOL, ours.kind
    S = np.abs(librosa.stft(y, **stft))
    flux = np.concatenate([[0.0], np.maximum(0.0, np.diff(S, axis=1)).sum(axis=0)])
    assert _close(spectral_flux(rec, **stft).column("flux"), flux) <= RTOL


def test_uncentred_frames_are_timed_at_their_centres(speech_file) -> None:
    x, fs = sf.read(speech_file, dtype="float32")
    ours = spectral_centroid(open_recording(speech_file), center=False, hop_length=300)
    ref = librosa.feature.spectral_centroid(y=x.astype(np.float64), sr=fs, center=False,
                                            hop_length=300)
    assert _close(ours.values[:, 0], ref[0]) <= RTOL
    np.testing.assert_allclose(ours.times, (np.arange(ref.shape[1]) * 300 + 1024) / fs)


@pytest.mark.parametrize("kind", ["centroid", "bandwidth", "rolloff", "flatness", "flux"])
def test_blocks_equal_a_whole_run(speech_file, kind) -> None:
    rec = open_recording(speech_file)
    whole = TRACKS[kind](rec, block_frames=10**9)
    for block in (1, 5, 33):
        part = TRACKS[kind](rec, block_frames=block)
        np.testing.assert_array_equal(part.times, whole.times)
        np.testing.assert_allclose(part.values, whole.values, rtol=1e-12, atol=0)


def test_silence_and_bad_parameters() -> None:
    z = np.zeros(8000)
    assert np.all(spectral_centroid(z, sr=8000).column("centroid") == 0)
    assert np.all(spectral_rolloff(z, sr=8000).column("rolloff") == 0)
    assert np.allclose(spectral_flatness(z, sr=8000).column("flatness"), 1.0)
    with pytest.raises(InputError, match="roll_percent"):
        spectral_rolloff(z, sr=8000, roll_percent=1.5)
    with pytest.raises(InputError, match="win_length"):
        spectral_centroid(z, sr=8000, win_length=4096)
    with pytest.raises(InputError, match="window"):
        spectral_centroid(z, sr=8000, window="nonesuch")
    with pytest.raises(InputError, match="n_fft"):
        spectral_centroid(np.zeros(100), sr=8000, center=False)
    with pytest.raises(InputError, match="p="):
        spectral_bandwidth(z, sr=8000, p=0)
    for bad in (0, 10**30, 2.5):
        with pytest.raises(InputError, match="n_fft"):
            spectral_flux(z, sr=8000, n_fft=bad)
    with pytest.raises(InputError, match="hop_length"):
        spectral_centroid(z, sr=8000, hop_length=10**30)


def test_a_channel_of_a_recording_equals_that_channel_alone(speech_file) -> None:
    from specscope.compute.io import ArrayRecording
    from specscope.compute.tracks import compute_track

    x, fs = sf.read(speech_file, dtype="float32")
    stereo = ArrayRecording(np.stack([x[::-1], x], axis=1), fs)
    for kind in TRACKS:
        params = {"fmin": 80.0, "fmax": 800.0} if kind == "pyin" else {}
        one = compute_track(kind, stereo, 1, **params)
        alone = compute_track(kind, x, sr=fs, **params)
        np.testing.assert_array_equal(one.values, alone.values)
