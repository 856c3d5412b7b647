"""HDF5 export: layout any HDF5 client reads, numbers equal to a whole-file run, crash-safe."""

import hashlib
from datetime import datetime

import h5py
import numpy as np
import pytest
import specscope.compute.output.spectrogram as export_mod
from specscope.compute import (
    Cancelled,
    RecordingError,
    StftParams,
    __version__,
    export_spectrogram,
    open_recording,
    read_spectrogram,
    spectrogram,
)


def test_layout_and_values(stereo_wav, tmp_path, monkeypatch):
    path, x, fs = stereo_wav
    monkeypatch.setattr(export_mod, "FRAMES_PER_BLOCK", 17)  # many blocks
    out = tmp_path / "out.h5"
    p = StftParams(512, 200, "hamming", "psd")
    with open_recording(path) as rec:
        export_spectrogram(rec, out, p, channel=1)
    f, t, s = spectrogram(x[:, 1], fs, nfft=512, hop=200, window="hamming")
    with h5py.File(out, "r") as h:
        ds = h["spectrogram"]
        assert ds.dtype == np.float32
        assert ds.shape == (t.size, f.size)  # (time, frequency)
        assert ds.compression == "gzip" and ds.shuffle
        assert ds.chunks[1] == f.size
        np.testing.assert_array_equal(ds[...], s.T)
        assert ds.dims[0][0].name == "/time" and ds.dims[1][0].name == "/frequency"
        assert h["time"].attrs["CLASS"] == b"DIMENSION_SCALE"
        np.testing.assert_allclose(ds.dims[0][0][...], t)
        np.testing.assert_allclose(ds.dims[1][0][...], f)
        a = dict(ds.attrs)
        assert (a["sample_rate"], a["nfft"], a["hop"], a["window"], a["scaling"]) == \
            (fs, 512, 200, "hamming", "psd")
        assert a["units"] == "FS**2/Hz"
        fa = dict(h.attrs)
    assert fa["source_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert fa["source_path"] == str(path.resolve())
    assert fa["specscope_version"] == __version__
    assert datetime.fromisoformat(fa["created_utc"]).utcoffset().total_seconds() == 0


def test_read_back_helper(stereo_wav, tmp_path):
    path, x, fs = stereo_wav
    out = tmp_path / "o.h5"
    with open_recording(path) as rec:
        export_spectrogram(rec, out, StftParams(256, 256, "hann", "magnitude"))
    d = read_spectrogram(out)
    _, _, s = spectrogram(x[:, 0], fs, nfft=256, hop=256, scaling="magnitude")
    np.testing.assert_array_equal(d["spectrogram"], s.T)
    assert d["dataset_attrs"]["units"] == "FS"


def test_cancelled_export_leaves_nothing_and_keeps_old_file(stereo_wav, tmp_path, monkeypatch):
    path, _, _ = stereo_wav
    monkeypatch.setattr(export_mod, "FRAMES_PER_BLOCK", 100)
    out = tmp_path / "keep.h5"
    out.write_bytes(b"precious")
    calls = []

    def cancel_after_first_block():
        calls.append(1)
        return len(calls) > 3

    with open_recording(path) as rec, pytest.raises(Cancelled):
        export_spectrogram(rec, out, StftParams(64, 8), cancelled=cancel_after_first_block)
    assert out.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.h5", "stereo.wav"]


def test_failure_midway_leaves_no_partial_file(stereo_wav, tmp_path, monkeypatch):
    path, _, _ = stereo_wav
    out = tmp_path / "new.h5"

    def broken(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(export_mod.operators, "call", broken)
    with open_recording(path) as rec, pytest.raises(OSError, match="disk full"):
        export_spectrogram(rec, out, StftParams(256, 128))
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["stereo.wav"]


def test_missing_destination_folder(stereo_wav, tmp_path):
    with open_recording(stereo_wav[0]) as rec, pytest.raises(RecordingError, match="does not exist"):
        export_spectrogram(rec, tmp_path / "no" / "such" / "x.h5", StftParams())
