"""``specscope detect``: an event pipeline (or one detector) over recordings.

The tables reopen (read_events) with the events of Pipeline.detect on each
input; every executor (this process, a pool of processes, a real Dask
scheduler with separate workers) writes the same bytes; a broken input fails
alone; bad arguments end with exit status 2 and one line.
"""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from specscope.app.cli import main
from specscope.compute.batch import TABLE_FORMATS, run_detect
from specscope.compute.detect import read_events, synth
from specscope.compute.io import open_recording
from specscope.compute.pipeline import Pipeline

FS = 48000
SPECSCOPE = [sys.executable, "-m", "specscope.app"]
ENERGY = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 6.0}
STEPS = [{"op": "filter", "params": {"design": "butter", "btype": "highpass", "order": 4,
                                     "cutoff": 1000.0}},
         {"op": "detect.energy", "params": ENERGY}]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    paths = []
    for i in range(3):
        plan = synth.plan_calls(12.0, float(FS), 6, n_template=0, seed=20 + i,
                                snr_db=(8.0, 20.0))
        p = root / f"rec{i}.wav"
        soundfile.write(p, synth.render_all(plan).astype(np.float32), FS, subtype="FLOAT")
        paths.append(p)
    pipe = Pipeline.from_steps(STEPS, name="calls").save(root / "calls.json")
    bad = root / "broken.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEnot really")
    return root, paths, pipe, bad


def _summary(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SPECSCOPE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def test_tables_reopen_with_the_events_of_the_pipeline(corpus, tmp_path, capsys):
    _root, paths, pipe, _ = corpus
    out = tmp_path / "out"
    assert main(["detect", str(pipe), *map(str, paths), "-o", str(out), "-q"]) == 0
    rows = _summary(out / "summary.csv")
    assert [r["input"] for r in rows] == [str(p) for p in paths]
    pipeline = Pipeline.load(pipe)
    for p, row in zip(paths, rows, strict=True):
        table = out / f"{p.stem}.selections.txt"
        with open_recording(p) as rec:
            ref = pipeline.detect(rec)
            got = read_events(table, recording=rec)
        assert len(ref) >= 4 and len(got) == len(ref)
        np.testing.assert_array_equal(got.start_sample, ref.start_sample)
        np.testing.assert_array_equal(got.stop_sample, ref.stop_sample)
        np.testing.assert_array_equal(got.score, ref.score)  # written in full (repr)
        np.testing.assert_array_equal(got.low_hz, ref.low_hz)
        assert got.detector == "detect.energy" and set(got.label) == {"energy"}
        assert row["status"] == "ok" and row["output"] == str(table)
        assert int(row["detections"]) == len(ref) == int(row["count:energy"])
        assert float(row["duration_s"]) == pytest.approx(12.0)


def test_every_format_reopens(corpus, tmp_path):
    _root, paths, pipe, _ = corpus
    with open_recording(paths[0]) as rec:
        ref = Pipeline.load(pipe).detect(rec)
        for fmt, suffix in TABLE_FORMATS.items():
            out = tmp_path / fmt
            assert main(["detect", str(pipe), str(paths[0]), "-o", str(out), "--format", fmt,
                         "-q"]) == 0
            table = out / f"{paths[0].stem}{suffix}"
            got = read_events(table, recording=rec, format=fmt)
            assert len(got) == len(ref), fmt
            atol = 0.5e-3 if fmt == "eaf" else 1e-9  # ELAN counts whole milliseconds
            np.testing.assert_allclose(got.start_s, ref.start_s, rtol=0, atol=atol)
            np.testing.assert_allclose(got.stop_s, ref.stop_s, rtol=0, atol=atol)
            np.testing.assert_allclose(got.score, ref.score, rtol=1e-12)


def test_a_broken_input_fails_alone(corpus, tmp_path, capsys):
    _root, paths, pipe, bad = corpus
    out = tmp_path / "out"
    code = main(["detect", str(pipe), str(paths[0]), str(bad), str(paths[1]), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    failed = [line for line in err.splitlines() if line.startswith("specscope: failed:")]
    assert len(failed) == 1 and "broken.wav" in failed[0], err
    assert (out / "rec0.selections.txt").is_file() and (out / "rec1.selections.txt").is_file()
    assert not (out / "broken.selections.txt").exists()
    rows = {r["input"]: r for r in _summary(out / "summary.csv")}
    assert rows[str(bad)]["status"] == "failed" and "broken.wav" in rows[str(bad)]["error"]
    assert rows[str(paths[1])]["status"] == "ok"


def test_one_detector_without_a_pipeline_file(corpus, tmp_path):
    _root, paths, _, _ = corpus
    alone = Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}]).save(
        tmp_path / "energy.json")
    assert main(["detect", str(alone), str(paths[0]), "-o", str(tmp_path / "a"), "-q"]) == 0
    params = [a for k, v in ENERGY.items() for a in ("--param", f"{k}={v}")]
    assert main(["detect", "--detector", "energy", *params, str(paths[0]),
                 "-o", str(tmp_path / "b"), "-q"]) == 0
    a = (tmp_path / "a" / "rec0.selections.txt").read_bytes()
    assert a == (tmp_path / "b" / "rec0.selections.txt").read_bytes() and a.count(b"\n") > 3


@pytest.mark.parametrize(("args", "words"), [
    (["--detector", "energy", "--param", "band_low=3"], ["steps[0] (detect.energy)",
                                                          "band_low_hz"]),
    (["--detector", "energy", "--param", "snr_db"], ["--param", "NAME=VALUE"]),
    (["--detector", "nothing.like.this"], ["nothing.like.this"]),
    (["--format", "wav"], ["--format", "raven"]),
])
def test_bad_arguments_end_with_one_line(corpus, tmp_path, capsys, args, words):
    _root, paths, _, _ = corpus
    try:
        code = main(["detect", *args, str(paths[0]), "-o", str(tmp_path / "o")])
    except SystemExit as exc:  # argparse's own check of --format's choices
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert all(w in err[-1] for w in words), err
    assert "Traceback" not in "\n".join(err)
    assert not (tmp_path / "o" / "summary.csv").exists()


def test_a_pipeline_without_a_detector_is_refused(corpus, tmp_path, capsys):
    _root, paths, _, _ = corpus
    plain = Pipeline.from_steps(STEPS[:1]).save(tmp_path / "plain.json")
    assert main(["detect", str(plain), str(paths[0]), "-o", str(tmp_path / "o")]) == 2
    assert "does not end in a detector" in capsys.readouterr().err
    # and an event pipeline is no 'specscope run' pipeline
    pipe = corpus[2]
    assert main(["run", str(pipe), str(paths[0]), "-o", str(tmp_path / "r")]) == 2
    assert "steps[1] (detect.energy)" in capsys.readouterr().err


def test_progress_reaches_every_input(corpus, tmp_path):
    _root, paths, pipe, bad = corpus
    seen = []
    summary = run_detect(pipe, [*paths, bad], tmp_path / "o",
                         progress=lambda d, t, r: seen.append((d, t, r.ok)))
    assert [d for d, _, _ in seen] == [1, 2, 3, 4] and {t for _, t, _ in seen} == {4}
    assert sum(not ok for *_, ok in seen) == 1
    assert summary.detections == sum(r.detections for r in summary.done) > 0
    d = summary.to_dict()
    assert d["detections"] == summary.detections and d["failed"] == 1


def _tables(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.selections.txt"))}


def _rows(folder: Path) -> list[tuple]:
    keep = ("input", "status", "detections", "count:energy", "duration_s")
    return [tuple(r[k] for k in keep) for r in _summary(folder / "summary.csv")]


@pytest.mark.real
def test_every_executor_writes_the_same_detections(corpus, tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from _dask_cluster import Cluster

    _root, paths, pipe, _ = corpus
    names = [str(p) for p in paths]
    r = _cli("detect", str(pipe), *names, "-o", "inproc", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("detect", str(pipe), *names, "-o", "pool", "--workers", "2", "--json",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["executor"] == "2 processes"
    assert len({w for item in info["inputs"] for w in item["workers"]}) >= 1
    with Cluster(2, root=tmp_path / "cluster") as cluster:
        r = _cli("detect", str(pipe), *names, "-o", "dask", "--dask", cluster.address,
                 "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["workers"] == 2 and info["executor"].startswith("dask tcp://")
    assert {w for item in info["inputs"] for w in item["workers"]} <= {"w0", "w1"}
    ref = _tables(tmp_path / "inproc")
    assert len(ref) == 3 and all(v.count(b"\n") > 3 for v in ref.values())
    for name in ("pool", "dask"):
        assert _tables(tmp_path / name) == ref, name
        assert _rows(tmp_path / name) == _rows(tmp_path / "inproc"), name


def test_a_detector_failing_inside_a_worker_fails_its_input_alone(corpus, tmp_path, capsys):
    _root, paths, _, _ = corpus
    # at 16 kHz the band 9-12.5 kHz holds no bin: the detector fails in the worker's task
    low = tmp_path / "low.wav"
    soundfile.write(low, np.zeros(16000 * 2, np.float32), 16000, subtype="FLOAT")
    steps = [STEPS[0], {"op": "detect.energy",
                        "params": {"band_low_hz": 9000.0, "band_high_hz": 12500.0}}]
    pipe = Pipeline.from_steps(steps).save(tmp_path / "high.json")
    out = tmp_path / "out"
    code = main(["detect", str(pipe), str(paths[0]), str(low), str(paths[1]), "-o", str(out),
                 "--workers", "2"])
    err = capsys.readouterr().err
    assert code == 1
    rows = {r["input"]: r for r in _summary(out / "summary.csv")}
    assert rows[str(low)]["status"] == "failed"
    assert "steps[1] (detect.energy)" in rows[str(low)]["error"]
    assert "band" in rows[str(low)]["error"] and str(low) in err
    for p in paths[:2]:
        assert rows[str(p)]["status"] == "ok" and (out / f"{p.stem}.selections.txt").is_file()


def test_the_chunk_size_changes_no_byte(corpus, tmp_path):
    _root, paths, pipe, _ = corpus
    for name, extra in (("whole", ["--chunk-samples", str(1 << 24)]),
                        ("small", ["--chunk-samples", "997"])):
        assert main(["detect", str(pipe), str(paths[2]), "-o", str(tmp_path / name),
                     "--channels", "0", "-q", *extra]) == 0
    assert _tables(tmp_path / "whole") == _tables(tmp_path / "small")


def test_an_output_folder_with_an_undecodable_name_gets_its_summary(tmp_path, example_path):
    """The summary names the output folder; a name the system cannot decode is written back
    as its bytes (it raised UnicodeEncodeError)."""
    import os

    out = os.fsdecode(bytes(tmp_path) + b"/bad_\xff\xfe")
    assert main(["detect", "--detector=energy", "-q", f"--output={out}",
                 str(example_path)]) == 0
    summary = (Path(out) / "summary.csv").read_bytes()
    assert b"bad_\xff\xfe" in summary
