"""Audio recordings: lazy reads, pieces equal the whole, clear errors."""

import itertools

import numpy as np
import pytest
import soundfile
from specscope.compute import InputError, RecordingError, open_recording


def test_example_metadata(example_path):
    with open_recording(example_path) as rec:
        assert rec.sample_rate == 48000
        assert rec.n_channels == 1
        assert rec.duration == pytest.approx(20.0)
        assert not rec.is_complex
        info = rec.info()
    assert info["format"] == "WAV"
    assert info["n_samples"] == 960000


def test_read_returns_what_was_written(stereo_wav):
    path, x, fs = stereo_wav
    with open_recording(path) as rec:
        assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (x.shape[0], 2, fs)
        np.testing.assert_array_equal(rec.read(), x)
        np.testing.assert_array_equal(rec.read(100, 200, channels=1), x[100:200, 1:2])
        assert rec.read(0, 10).dtype == np.float32
        assert rec.read(0, 10).shape == (10, 2)


def test_pieces_equal_whole(stereo_wav):
    path, _x, _fs = stereo_wav
    with open_recording(path) as rec:
        whole = rec.read()
        bounds = [0, 1, 1000, 1001, 7777, 20000, rec.n_samples]
        pieces = [rec.read(a, b) for a, b in itertools.pairwise(bounds)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)


def test_reads_are_clipped_like_slices(stereo_wav):
    path, _x, _fs = stereo_wav
    with open_recording(path) as rec:
        assert rec.read(rec.n_samples - 5, rec.n_samples + 100).shape == (5, 2)
        assert rec.read(50, 10).shape == (0, 2)


def test_pcm16_is_scaled_to_full_scale(tmp_path):
    path = tmp_path / "pcm.wav"
    ints = np.array([0, 16384, -32768, 32767], dtype=np.int16)
    soundfile.write(str(path), ints, 8000, subtype="PCM_16")
    with open_recording(path) as rec:
        np.testing.assert_allclose(rec.read()[:, 0], ints / 32768.0)


def test_flac_and_ogg_open(tmp_path, stereo_wav):
    _, x, fs = stereo_wav
    for name, fmt, tol in [("a.flac", "FLAC", 1e-4), ("a.ogg", "OGG", 0.1)]:
        path = tmp_path / name
        soundfile.write(str(path), x, fs, format=fmt)
        with open_recording(path) as rec:
            assert rec.n_channels == 2 and rec.sample_rate == fs
            y = rec.read()
        n = min(len(y), len(x))
        assert np.max(np.abs(y[:n] - x[:n])) < tol


def test_missing_file(tmp_path):
    with pytest.raises(RecordingError, match=r"missing\.wav: no such file"):
        open_recording(tmp_path / "missing.wav")


def test_not_a_recording(tmp_path):
    p = tmp_path / "notes.wav"
    p.write_text("hello, I am text\n" * 20)
    with pytest.raises(RecordingError, match=r"notes\.wav: not a WAV file \(no RIFF/RIFX/RF64 header\)"):
        open_recording(p)


def test_unknown_extension(tmp_path):
    p = tmp_path / "thing.xyz"
    p.write_bytes(b"\x00" * 100)
    with pytest.raises(RecordingError, match=r"thing\.xyz: not a recording specscope can read"):
        open_recording(p)


def test_a_folder_without_recordings_says_so(tmp_path):
    """A folder opens as a deployment; one holding no recording is one line naming it."""
    (tmp_path / "notes.txt").write_text("field notes")
    with pytest.raises(RecordingError, match=r"no recordings \(1 other file"):
        open_recording(tmp_path)


def test_bad_channel(stereo_wav):
    with open_recording(stereo_wav[0]) as rec, pytest.raises(InputError, match=r"channel=2"):
        rec.read(0, 10, channels=2)
