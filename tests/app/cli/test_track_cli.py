"""``specscope track``: each kind to CSV and HDF5, equal to the core; options of other kinds
and bad outputs refused with one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile
from specscope.app.cli import main
from specscope.compute.io import open_recording
from specscope.compute.output import TRACK_FORMAT_TAG
from specscope.compute.tracks import TRACKS, compute_track

FS = 16000


@pytest.fixture
def voice(tmp_path: Path) -> Path:
    """Two seconds of a gliding harmonic tone with a pause: voiced and unvoiced frames."""
    t = np.arange(2 * FS) / FS
    f0 = 140 + 40 * t
    phase = 2 * np.pi * np.cumsum(f0) / FS
    x = sum(0.3 / k * np.sin(k * phase) for k in range(1, 6)) * ((t < 0.8) | (t > 1.2))
    path = tmp_path / "voice.wav"
    soundfile.write(path, x.astype(np.float32), FS, subtype="FLOAT")
    return path


def _csv(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array([[float(v) if v else np.nan for v in r] for r in rows[1:]])


@pytest.mark.parametrize("kind", sorted(TRACKS))
def test_each_kind_to_csv_equals_the_core(kind, voice, tmp_path, capsys) -> None:
    out = tmp_path / f"{kind}.csv"
    extra = ["--fmin", "80", "--fmax", "800"] if kind == "pyin" else []
    assert main(["track", kind, str(voice), "-o", str(out), *extra]) == 0
    assert "wrote" in capsys.readouterr().out
    params = {"fmin": 80.0, "fmax": 800.0} if kind == "pyin" else {}
    ref = compute_track(kind, open_recording(voice), **params)
    header, table = _csv(out)
    assert header == ["time (s)", *(f"{c} ({u})" for c, u in zip(ref.columns, ref.units,
                                                                  strict=True))]
    np.testing.assert_array_equal(table[:, 0], ref.times)
    np.testing.assert_array_equal(table[:, 1:], ref.values)


def test_hdf5_holds_the_track_and_its_provenance(voice, tmp_path) -> None:
    out = tmp_path / "p.h5"
    assert main(["track", "pyin", str(voice), "-o", str(out), "--fmin", "80", "--fmax",
                 "800", "--hop-length", "256", "--no-center", "-q"]) == 0
    ref = compute_track("pyin", open_recording(voice), fmin=80.0, fmax=800.0,
                        hop_length=256, center=False)
    with h5py.File(out) as f:
        assert f.attrs["format"] == TRACK_FORMAT_TAG and f.attrs["kind"] == "pyin"
        assert json.loads(f.attrs["params"])["hop_length"] == 256
        np.testing.assert_array_equal(f["time"][:], ref.times)
        np.testing.assert_array_equal(f["values"][:], ref.values)
        assert list(f["values"].attrs["columns"]) == ["f0", "voiced_probability"]
        assert f["provenance"].attrs["source_sha256"]
    voiced = ~np.isnan(ref.column("f0"))
    assert 0.3 < voiced.mean() < 0.95


def test_intensity_options_reach_praats_parameters(voice, tmp_path) -> None:
    out = tmp_path / "i.csv"
    assert main(["track", "intensity", str(voice), "-o", str(out), "--minimum-pitch", "75",
                 "--time-step", "0.01", "--no-subtract-mean", "-q"]) == 0
    ref = compute_track("intensity", open_recording(voice), minimum_pitch=75.0,
                        time_step=0.01, subtract_mean=False)
    np.testing.assert_array_equal(_csv(out)[1][:, 1], ref.column("intensity"))


@pytest.mark.parametrize("argv,words", [
    (["centroid", "--minimum-pitch", "50"], "--minimum-pitch"),
    (["intensity", "--fmin", "50"], "--fmin"),
    (["rolloff", "--roll-percent", "2"], "roll_percent"),
    (["pyin", "--fmax", "9000"], "fmax"),
])
def test_bad_options_are_refused_in_one_line(argv, words, voice, tmp_path, capsys) -> None:
    out = tmp_path / "x.csv"
    assert main(["track", argv[0], str(voice), "-o", str(out), *argv[1:]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert not out.exists()


def test_an_unknown_output_suffix_is_refused(voice, tmp_path, capsys) -> None:
    assert main(["track", "flux", str(voice), "-o", str(tmp_path / "x.wav")]) == 2
    assert ".csv" in capsys.readouterr().err
