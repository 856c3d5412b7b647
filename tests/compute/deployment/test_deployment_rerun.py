"""Outputs of a deployment: ``rerun`` opens the same folder again and reproduces them; a
date-range export runs each contiguous stretch on its own (no frame or filter crosses a
gap) and a chunked export equals the whole one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile
from _deployments import snapshot, stamped, write_wav
from specscope.app.cli import main
from specscope.compute.deployment import open_deployment
from specscope.compute.output import export_range
from specscope.compute.pipeline import Pipeline

RATE = 1000
FILTER = {"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": 200,
                                     "btype": "lowpass"}}
SPECTRO = {"op": "spectrogram", "params": {"nfft": 64, "hop": 32}}
# five 1 s files of 2 channels: 0..3 s, a gap of 7 s, then 10..12 s (samples 0:3000, 3000:5000)
STARTS = [0, 1, 2, 10, 11]
CUT = 3000


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _site(tmp_path: Path) -> tuple[Path, np.ndarray]:
    xs = stamped(tmp_path / "site", STARTS, n=RATE, rate=RATE, ch=2)
    return tmp_path / "site", np.concatenate(xs)


def _pipeline_file(tmp_path: Path, steps: list[dict]) -> Path:
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"specscope": "pipeline/1", "steps": steps}))
    return p


def _datasets(path: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, np.asarray(o[()]).tobytes())
                     if isinstance(o, h5py.Dataset) and o.dtype.kind in "biufc" else None)
    return out


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# -- rerun ---------------------------------------------------------------------------------


def test_rerun_of_a_run_over_a_deployment_with_a_gap(tmp_path, capsys):
    site, _ = _site(tmp_path)
    pipe = _pipeline_file(tmp_path, [FILTER, SPECTRO])
    assert main(["run", str(pipe), str(site), "-o", str(tmp_path / "out"), "-q"]) == 0
    out = tmp_path / "out" / "site.h5"
    before, folder = _datasets(out), snapshot(site)
    capsys.readouterr()
    assert main(["rerun", str(out), "--verify"]) == 0
    assert capsys.readouterr().out.strip() == f"{out}: identical"
    assert main(["rerun", str(out)]) == 0  # replaced by the same numbers
    assert _datasets(out) == before
    assert snapshot(site) == folder  # nothing written into the deployment
    assert sorted(p.name for p in out.parent.iterdir()) == ["site.h5"]
    # a file of the deployment modified: refused, the output kept
    os.utime(site / "rec0003.wav", ns=(1, 1))
    capsys.readouterr()
    assert main(["rerun", str(out), "--verify"]) == 2
    line = _one_error(capsys)
    assert "site.h5" in line and "changed since the run" in line
    assert _datasets(out) == before
    site.rename(tmp_path / "moved")  # the folder gone
    assert main(["rerun", str(out), "--verify"]) == 2
    assert f"its source folder {site} is missing" in _one_error(capsys)


def test_rerun_of_a_date_range_export_of_a_deployment(tmp_path, capsys):
    site, _ = _site(tmp_path)
    pipe = _pipeline_file(tmp_path, [FILTER])
    cut = tmp_path / "cut.h5"
    assert main(["export", str(site), "--start", "2024-05-01T12:00:01.5Z", "--stop",
                 "2024-05-01T12:00:11.5Z", "--pipeline", str(pipe), "-o", str(cut),
                 "--tz", "+00:00", "-q"]) == 0
    with h5py.File(cut, "r") as f:
        assert json.loads(f.attrs["source_options"])["tz"] == "+00:00"
        assert f["signal"].shape == (3000, 2)  # 1.5 s before the gap, 1.5 s after it
    capsys.readouterr()
    assert main(["rerun", str(cut), "--verify"]) == 0
    assert capsys.readouterr().out.strip() == f"{cut}: identical"
    # an output moved into the deployment's folder is refused: nothing is written there
    inside = site / "cut.h5"
    shutil.copyfile(cut, inside)
    folder = snapshot(site)
    assert main(["rerun", str(inside)]) == 2
    assert "lies inside the folder of its source" in _one_error(capsys)
    assert snapshot(site) == folder


# -- a range across a gap ------------------------------------------------------------------


def _pieces(tmp_path: Path, x: np.ndarray) -> tuple[Path, Path]:
    """The two contiguous stretches of the site, each a recording of its own."""
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    write_wav(a, np.rint(x[:CUT] * 32768), RATE)
    write_wav(b, np.rint(x[CUT:] * 32768), RATE)
    return a, b


@pytest.mark.parametrize("steps, key, axis", [([FILTER], "signal", 0),
                                              ([FILTER, SPECTRO], "spectrogram", 1)])
def test_a_range_across_a_gap_equals_its_pieces_exported_on_their_own(tmp_path, steps, key,
                                                                      axis):
    site, x = _site(tmp_path)
    a, b = _pieces(tmp_path, x)
    pipe = Pipeline.from_steps(steps)
    dep = open_deployment(site)
    whole = export_range(dep, tmp_path / "whole.h5", pipeline=pipe, start=500, stop=4500)
    chunked = export_range(dep, tmp_path / "chunked.h5", pipeline=pipe, start=500,
                           stop=4500, chunk_samples=97)
    export_range(a, tmp_path / "pa.h5", pipeline=pipe, start=500)
    export_range(b, tmp_path / "pb.h5", pipeline=pipe, stop=1500)
    with h5py.File(whole, "r") as w, h5py.File(chunked, "r") as c, \
            h5py.File(tmp_path / "pa.h5", "r") as fa, h5py.File(tmp_path / "pb.h5", "r") as fb:
        joined = np.concatenate([fa[key][()], fb[key][()]], axis=axis)
        assert w[key].shape == joined.shape  # a spectrogram: 76 + 45 frames, none across
        np.testing.assert_array_equal(w[key][()], joined)
        np.testing.assert_array_equal(c[key][()], joined)
        # each output's time is its place on the deployment's axis (the gap takes none)
        np.testing.assert_allclose(w["time"][()], np.concatenate(
            [fa["time"][()], fb["time"][()] + CUT / RATE]), rtol=0, atol=1e-12)
        g = w["deployment"]
        assert g["segment_samples"][()].tolist() == [[500, 3000], [3000, 4500]]
        assert g["segment_outputs"][()].tolist() == [[0, fa[key].shape[axis]],
                                                     [fa[key].shape[axis], joined.shape[axis]]]
        assert g.attrs["fingerprint"] == dep.fingerprint()


def test_a_whole_range_export_equals_the_run_of_the_deployment(tmp_path):
    site, _ = _site(tmp_path)
    pipe = _pipeline_file(tmp_path, [FILTER, SPECTRO])
    assert main(["run", str(pipe), str(site), "-o", str(tmp_path / "out"), "-q"]) == 0
    export_range(site, tmp_path / "all.h5", pipeline=pipe, chunk_samples=211)
    with h5py.File(tmp_path / "out" / "site.h5", "r") as r, \
            h5py.File(tmp_path / "all.h5", "r") as e:
        for name in ("spectrogram", "time", "deployment/segment_outputs",
                     "deployment/segment_samples"):
            np.testing.assert_array_equal(e[name][()], r[name][()])


def test_an_audio_export_across_a_gap_filters_each_stretch_afresh(tmp_path):
    site, x = _site(tmp_path)
    a, b = _pieces(tmp_path, x)
    pipe = Pipeline.from_steps([FILTER])
    export_range(site, tmp_path / "cut.wav", pipeline=pipe, start=2000, stop=4000,
                 chunk_samples=128)
    export_range(a, tmp_path / "pa.wav", pipeline=pipe, start=2000)
    export_range(b, tmp_path / "pb.wav", pipeline=pipe, stop=1000)
    y, fs = soundfile.read(tmp_path / "cut.wav", dtype="float32", always_2d=True)
    ya, _ = soundfile.read(tmp_path / "pa.wav", dtype="float32", always_2d=True)
    yb, _ = soundfile.read(tmp_path / "pb.wav", dtype="float32", always_2d=True)
    assert fs == RATE and y.shape == (2000, 2)
    np.testing.assert_array_equal(y, np.concatenate([ya, yb]))


def test_a_range_in_one_stretch_keeps_that_stretchs_frame_grid(tmp_path):
    site, x = _site(tmp_path)
    _, b = _pieces(tmp_path, x)
    pipe = Pipeline.from_steps([FILTER, SPECTRO])
    # 3000 + 50: off the grid of sample 0 (a multiple of the hop), on none of the stretch's
    export_range(site, tmp_path / "in.h5", pipeline=pipe, start=3050, stop=4700)
    export_range(b, tmp_path / "pb.h5", pipeline=pipe, start=50, stop=1700)
    with h5py.File(tmp_path / "in.h5", "r") as f, h5py.File(tmp_path / "pb.h5", "r") as g:
        np.testing.assert_array_equal(f["spectrogram"][()], g["spectrogram"][()])
        assert f.attrs["range_first"] == CUT + g.attrs["range_first"]
        assert f.attrs["range_read_start"] >= CUT  # its warm-up never reads before the gap


def test_a_stretch_too_short_for_a_frame_gives_none_and_is_listed(tmp_path, capsys):
    site, x = _site(tmp_path)
    _, b = _pieces(tmp_path, x)
    pipe = _pipeline_file(tmp_path, [FILTER, SPECTRO])
    cut = tmp_path / "cut.h5"
    # 10 samples before the gap (no frame of 64), then 1.5 s after it
    assert main(["export", str(site), "--start", "2024-05-01T12:00:02.99Z", "--stop",
                 "2024-05-01T12:00:11.5Z", "--pipeline", str(pipe), "-o", str(cut),
                 "-q"]) == 0
    export_range(b, tmp_path / "pb.h5", pipeline=Pipeline.load(pipe), stop=1500)
    with h5py.File(cut, "r") as f, h5py.File(tmp_path / "pb.h5", "r") as g:
        np.testing.assert_array_equal(f["spectrogram"][()], g["spectrogram"][()])
        n = g["spectrogram"].shape[1]
        assert f["deployment/segment_outputs"][()].tolist() == [[0, 0], [0, n]]
        assert f["deployment/segment_samples"][()].tolist() == [[2990, 3000], [3000, 4500]]
        assert (f.attrs["start_sample"], f.attrs["stop_sample"]) == (2990, 4500)
    assert main(["rerun", str(cut), "--verify"]) == 0
    # nothing at all between the gaps: one line naming the range
    capsys.readouterr()
    assert main(["export", str(site), "--start", "2024-05-01T12:00:02.99Z", "--stop",
                 "2024-05-01T12:00:10.02Z", "--pipeline", str(pipe), "-o",
                 str(tmp_path / "none.h5"), "-q"]) == 2
    line = _one_error(capsys)
    assert "2990:3020 has no output" in line and "nfft=64" in line
    assert not (tmp_path / "none.h5").exists()
