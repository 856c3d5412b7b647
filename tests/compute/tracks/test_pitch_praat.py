"""Pitch by autocorrelation against Praat (through parselmouth) on real speech."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile
from specscope.compute.io.memory import ArrayRecording
from specscope.compute.tracks.pitch_praat import pitch_ac, pitch_candidates, pitch_track

parselmouth = pytest.importorskip("parselmouth", reason="Praat reference (parselmouth) absent")

ALSA = Path("/usr/share/sounds/alsa")
VOICES = ("Front_Center.wav", "Front_Left.wav", "Rear_Right.wav")
SENTENCES = {"male": ("en", "The quick brown fox jumps over the lazy dog while seven "
                      "wise men sing softly."),
             "female": ("en+f3", "She sells sea shells by the sea shore, and the shells "
                        "she sells are surely seashells.")}


def _read(path: Path) -> tuple[np.ndarray, int]:
    fs, x = wavfile.read(path)
    x = x.astype(float)
    if x.ndim == 2:
        x = x[:, 0]
    return x / 32768.0, int(fs)


@pytest.fixture(scope="module", params=[*VOICES, *SENTENCES])
def speech(request, tmp_path_factory) -> tuple[np.ndarray, int]:
    name = request.param
    if name in SENTENCES:
        if shutil.which("espeak-ng") is None:
            pytest.skip("espeak-ng is not installed")
        voice, text = SENTENCES[name]
        out = tmp_path_factory.mktemp("speech") / f"{name}.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(out), text], check=True,
                       capture_output=True)
        return _read(out)
    if not (ALSA / name).exists():
        pytest.skip(f"{ALSA / name} absent (Debian's alsa-utils)")
    return _read(ALSA / name)


def _compare(x, fs, **kw):
    ref = parselmouth.Sound(x, fs).to_pitch_ac(**kw)
    ours = pitch_ac(x, fs, **kw)
    f_ref = ref.selected_array["frequency"].astype(float)
    f_ref[f_ref == 0] = np.nan
    return ref, ours, f_ref, ours.column("f0")


@pytest.mark.parametrize("kw", [{"pitch_floor": 75.0, "pitch_ceiling": 600.0},
                                {"time_step": 0.005, "pitch_floor": 100.0,
                                     "pitch_ceiling": 400.0, "very_accurate": True}])
def test_pitch_matches_praat(speech, kw):
    x, fs = speech
    ref, ours, f_ref, f = _compare(x, fs, **kw)
    assert ours.times.shape == ref.xs().shape
    np.testing.assert_allclose(ours.times, ref.xs(), rtol=0, atol=1e-9)
    both = ~np.isnan(f_ref) & ~np.isnan(f)
    assert both.sum() > 20
    rel = np.abs(f[both] - f_ref[both]) / f_ref[both]
    assert np.median(rel) <= 0.01
    assert np.percentile(rel, 95) <= 0.03
    assert np.mean(np.isnan(f) == np.isnan(f_ref)) >= 0.95
    # measured: median 1e-9 .. 4e-6, 95th percentile at most 1.1e-4, every decision equal
    assert np.median(rel) <= 1e-4
    assert np.percentile(rel, 95) <= 1e-3
    assert np.mean(np.isnan(f) == np.isnan(f_ref)) >= 0.99
    assert ours.kind == "pitch" and ours.columns == ("f0",) and ours.units == ("Hz",)


def test_candidates_hold_praats_choice(speech):
    """Every voiced frame of Praat's path is one of the frame's candidates."""
    x, fs = speech
    ref = parselmouth.Sound(x, fs).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    f_ref = ref.selected_array["frequency"]
    c = pitch_candidates(x, fs, pitch_floor=75.0, pitch_ceiling=600.0)
    voiced = f_ref > 0
    rel = np.nanmin(np.abs(c.frequency[voiced] - f_ref[voiced, None]), axis=1) / \
        f_ref[voiced]
    assert np.median(rel) <= 1e-3


def test_chunked_equals_whole():
    """A long recording read in blocks of frames gives the track of the whole array."""
    parts = [_read(ALSA / n)[0] for n in VOICES if (ALSA / n).exists()]
    if not parts:
        pytest.skip("Debian's alsa-utils voices absent")
    x = np.concatenate(parts).astype(np.float32)
    whole = pitch_ac(x, 48000)
    for block in (23, 160):
        chunked = pitch_ac(ArrayRecording(x, 48000), block_frames=block)
        np.testing.assert_array_equal(chunked.times, whole.times)
        np.testing.assert_allclose(chunked.values, whole.values, rtol=1e-12)
    assert np.sum(~np.isnan(whole.values)) > 100


def test_silence_and_short_input():
    assert np.isnan(pitch_ac(np.zeros(48000), 48000).values).all()
    assert pitch_ac(np.zeros(100), 48000).times.size == 0


def test_the_kind_table_form():
    """``pitch_track(source, channel, sr=...)`` is ``pitch_ac`` of that channel."""
    path = ALSA / VOICES[0]
    if not path.exists():
        pytest.skip(f"{path} absent (Debian's alsa-utils)")
    x, fs = _read(path)
    stereo = np.stack([np.zeros_like(x), x], axis=1)
    a = pitch_ac(x, fs, pitch_floor=100.0)
    b = pitch_track(stereo, 1, sr=fs, pitch_floor=100.0)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.params == b.params
