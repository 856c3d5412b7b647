"""The pipeline runner: local pools, Dask, split recordings, HDF5 outputs, rerun, CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.signal as ss
import soundfile
from specscope.compute import InputError, RecordingError, open_recording, read_spectrogram
from specscope.compute.batch import rerun, run_batch
from specscope.compute.pipeline import SETTLE_TOL, Pipeline

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "assets" / "pipelines" / "hum_bandpass.json"
FS = 16000


@pytest.fixture
def wavs(tmp_path):
    """Three recordings (one stereo) and a broken file among them."""
    rng = np.random.default_rng(0)
    paths = []
    for i, (n, ch) in enumerate([(3 * FS, 1), (2 * FS, 2), (FS, 1)]):
        t = np.arange(n) / FS
        x = 0.3 * np.sin(2 * np.pi * 50 * t)[:, None] + 0.1 * rng.standard_normal((n, ch))
        p = tmp_path / "in" / f"rec{i}.wav"
        p.parent.mkdir(exist_ok=True)
        soundfile.write(p, x.astype(np.float32), FS, subtype="FLOAT")
        paths.append(p)
    bad = tmp_path / "in" / "broken.wav"
    bad.write_bytes(b"RIFF\x00\x00 this is not audio")
    return paths, bad


def _spectrogram(path):
    with h5py.File(path, "r") as f:
        return f["spectrogram"][...]


def test_outputs_equal_pipeline_run_in_the_export_layout(wavs, tmp_path):
    paths, _ = wavs
    p = Pipeline.load(EXAMPLE)
    s = run_batch(p, paths, tmp_path / "out")
    assert s.ok and len(s.done) == 3
    for path in paths:
        out = tmp_path / "out" / f"{path.stem}.h5"
        rec = open_recording(path)
        ref = p.run(rec)
        got = read_spectrogram(out)  # the export reader reads runner outputs
        S = got["spectrogram"]
        if rec.n_channels == 1:
            np.testing.assert_array_equal(S, ref.data[0].T.astype(np.float32))
        else:
            np.testing.assert_array_equal(S, np.transpose(ref.data, (0, 2, 1)).astype(np.float32))
        np.testing.assert_allclose(got["time"], ref.times, rtol=1e-12)
        np.testing.assert_allclose(got["frequency"], ref.frequencies)
        a = got["attrs"]
        assert a["format"] == "specscope/spectrogram/1"
        assert a["nfft"] == 1024 and a["hop"] == 256 and a["scaling"] == "psd"
        assert Pipeline.from_json(a["pipeline"]) == p
        assert a["source_path"] == str(path.resolve()) and len(a["source_sha256"]) == 64
        with h5py.File(out, "r") as f:
            c = f["pipeline/coefficients"]
            b, aa = ss.iircomb(50.0, 30, ftype="notch", fs=FS)
            np.testing.assert_array_equal(c["step_0/b"][...], b)
            np.testing.assert_array_equal(c["step_0/a"][...], aa)
            np.testing.assert_array_equal(
                c["step_1/sos"][...],
                ss.butter(4, [300.0, 3000.0], btype="bandpass", fs=FS, output="sos"))
            assert c["step_1"].attrs["form"] == "sos"


def test_pools_and_dask_give_identical_files(wavs, tmp_path):
    paths, _ = wavs
    p = Pipeline.load(EXAMPLE)
    run_batch(p, paths, tmp_path / "inline")
    run_batch(p, paths, tmp_path / "threads", workers=2, executor="threads")
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    s = run_batch(p, paths, tmp_path / "dask", workers=2, dask="local",
                  dask_options={"processes": False})
    assert s.ok and "LocalCluster" in s.executor
    for path in paths:
        ref = _spectrogram(tmp_path / "inline" / f"{path.stem}.h5")
        for other in ("threads", "dask"):
            np.testing.assert_array_equal(_spectrogram(tmp_path / other / f"{path.stem}.h5"), ref)


def test_signal_outputs_open_as_recordings(wavs, tmp_path):
    paths, _ = wavs
    p = Pipeline.from_steps([{"op": "filter", "params": {"design": "butter", "order": 4,
                                                         "cutoff": 1000.0}}])
    s = run_batch(p, [paths[1]], tmp_path / "out")
    assert s.ok
    out = tmp_path / "out" / "rec1.h5"
    x = open_recording(paths[1]).read()
    ref = ss.sosfilt(ss.butter(4, 1000.0, fs=FS, output="sos"), x.astype(np.float64), axis=0)
    with h5py.File(out, "r") as f:
        assert f.attrs["format"] == "specscope/signal/1"
        assert f["signal"].attrs["sample_rate"] == FS
        np.testing.assert_allclose(f["signal"][...], ref, rtol=0, atol=1e-12)
    rec = open_recording(out)
    assert rec.sample_rate == FS and rec.n_channels == 2 and rec.n_samples == x.shape[0]


@pytest.mark.parametrize("steps,exact", [
    ([{"op": "filter", "params": {"design": "firwin", "numtaps": 129, "cutoff": 2000.0}},
      {"op": "spectrogram", "params": {"nfft": 500, "hop": 123}}], True),
    ([{"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": 2000.0}}], False),
])
def test_split_recordings_match_unsplit_runs(wavs, tmp_path, steps, exact):
    """Part tasks with overlap: exact for FIR + STFT, within SETTLE_TOL for IIR."""
    paths, _ = wavs
    p = Pipeline.from_steps(steps)
    whole = run_batch(p, [paths[0]], tmp_path / "whole", task_samples=0)
    split = run_batch(p, [paths[0]], tmp_path / "split", workers=2, executor="threads",
                      task_samples=7001)
    assert whole.ok and split.ok and split.results[0].parts > 4
    name = "spectrogram" if exact else "signal"
    with h5py.File(tmp_path / "whole" / "rec0.h5") as a, \
            h5py.File(tmp_path / "split" / "rec0.h5") as b:
        if exact:
            np.testing.assert_array_equal(b[name][...], a[name][...])
        else:
            err = np.max(np.abs(b[name][...] - a[name][...]))
            assert err <= 10 * SETTLE_TOL * np.abs(a[name][...]).max()
    assert not [q for q in (tmp_path / "split").iterdir() if q.name.startswith(".")]


def test_a_failing_input_is_reported_and_the_others_go_on(wavs, tmp_path):
    paths, bad = wavs
    s = run_batch(Pipeline.load(EXAMPLE), [paths[0], bad, paths[2]], tmp_path / "out",
                  workers=2, executor="threads")
    assert [r.ok for r in s.results] == [True, False, True]
    assert "broken.wav" in s.results[1].error
    assert "1 failed" in s.text() and "broken.wav" in s.text()
    assert sorted(q.name for q in (tmp_path / "out").iterdir()) == ["rec0.h5", "rec2.h5"]


def test_inputs_with_the_same_stem_are_refused(wavs, tmp_path):
    paths, _ = wavs
    other = tmp_path / "rec0.wav"
    other.write_bytes(paths[0].read_bytes())
    with pytest.raises(InputError, match=r"would both write rec0.h5"):
        run_batch(Pipeline.load(EXAMPLE), [paths[0], other], tmp_path / "out")


def test_rerun_verifies_and_detects_changes(wavs, tmp_path):
    paths, _ = wavs
    run_batch(Pipeline.load(EXAMPLE), [paths[2]], tmp_path / "out", task_samples=5000)
    out = tmp_path / "out" / "rec2.h5"
    r = rerun(out, verify=True)
    assert r.identical and r.max_abs_diff == 0.0
    with h5py.File(out, "r+") as f:
        f["spectrogram"][3, 7] += 1.0
    r = rerun(out, verify=True)
    assert r.identical is False and r.differences == ["spectrogram: values differ"]
    assert r.max_abs_diff == pytest.approx(1.0, rel=1e-3)
    rerun(out)  # rewrites the output
    assert rerun(out, verify=True).identical
    x, fs = soundfile.read(paths[2], dtype="float32")
    soundfile.write(paths[2], x * 2, fs, subtype="FLOAT")
    with pytest.raises(RecordingError, match=r"changed since the run"):
        rerun(out, verify=True)


def _cli(*args):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)],
                          check=False, capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.slow
def test_cli_run_and_rerun_end_to_end(wavs, tmp_path):
    paths, bad = wavs
    out = tmp_path / "out"
    r = _cli("run", EXAMPLE, paths[0], bad, paths[1], "-o", out, "--workers", 2,
             "--chunk-samples", 10007)
    assert r.returncode == 1, r.stderr
    assert "failed: " in r.stderr and "broken.wav" in r.stderr
    assert r.stdout.split() == [str(out / "rec0.h5"), str(out / "rec1.h5")]
    p = Pipeline.load(EXAMPLE)
    ref = p.run(open_recording(paths[0]))
    np.testing.assert_array_equal(_spectrogram(out / "rec0.h5"),
                                  ref.data[0].T.astype(np.float32))
    r = _cli("rerun", out / "rec1.h5", "--verify")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{out / 'rec1.h5'}: identical"


@pytest.mark.slow
def test_cli_bad_pipeline_exits_2_with_one_line(wavs, tmp_path):
    paths, _ = wavs
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"specscope": "pipeline/1", "steps": [
        {"op": "filter", "params": {"design": "butter", "order": 99, "cutoff": 100.0}}]}))
    r = _cli("run", bad, paths[0], "-o", tmp_path / "out")
    assert r.returncode == 2
    assert r.stderr.strip() == ("specscope: error: bad.json: steps[0] (filter butter): "
                                "order=99 must be an integer in [1, 64]")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_runner_and_cli_do_not_import_qt(wavs, tmp_path):
    paths, _ = wavs
    code = f"""
import sys
from specscope.compute.batch import run_batch
from specscope.compute.pipeline import Pipeline
s = run_batch(Pipeline.load({str(EXAMPLE)!r}), [{str(paths[2])!r}], {str(tmp_path / "o")!r})
assert s.ok
from specscope.app import cli
assert cli.main(["run", {str(EXAMPLE)!r}, {str(paths[2])!r}, "-o", {str(tmp_path / "c")!r},
                 "-q"]) == 0
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("PyQt6", "pyqtgraph")
             or m.startswith(("specscope.widgets", "specscope.app.desktop.main_window")))
print("qt:", bad)
"""
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "qt: []"
