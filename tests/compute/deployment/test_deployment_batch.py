"""A deployment through the batch room: pickled to workers, detected per segment, its
tables of absolute times and per file, run and exported as one input."""

from __future__ import annotations

import csv
import json
import pickle
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hostile_corpus
import numpy as np
import pytest
from _deployments import T0, bext, snapshot, write_wav
from specscope.compute.batch import run_detect
from specscope.compute.deployment import open_deployment
from specscope.compute.errors import InputError
from specscope.compute.io import open_recording
from specscope.compute.pipeline import Pipeline

RATE = 16000
FILE_S = 5
ENERGY = {"band_low_hz": 2000.0, "band_high_hz": 4000.0, "snr_db": 6.0}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _signal(seconds: float, tones: list[tuple[float, float]], seed: int = 5) -> np.ndarray:
    """Quiet noise with 3 kHz tones at ``tones`` (start, stop) seconds, as int16."""
    n = int(seconds * RATE)
    x = np.random.default_rng(seed).normal(0, 300, n)
    t = np.arange(n) / RATE
    for a, b in tones:
        on = (t >= a) & (t < b)
        x[on] += 12000 * np.sin(2 * np.pi * 3000 * t[on])
    return np.clip(np.rint(x), -32768, 32767).astype(np.int16)


def _deploy(folder: Path, x: np.ndarray, starts: list[float]) -> None:
    """``x`` cut into files of FILE_S seconds, the k-th stamped T0 + starts[k]."""
    folder.mkdir(parents=True)
    n = FILE_S * RATE
    for k, s in enumerate(starts):
        write_wav(folder / f"rec{k:03d}.wav", x[k * n:(k + 1) * n], RATE,
                  [(b"bext", bext(T0 + timedelta(seconds=s)))])


def _pipe() -> Pipeline:
    return Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}])


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# -- pickling ------------------------------------------------------------------------------


def test_a_deployment_pickles_and_reopens_lazily(tmp_path):
    x = _signal(4 * FILE_S, [])
    _deploy(tmp_path / "site", x, [0, 5, 10, 15])
    dep = open_deployment(tmp_path / "site")
    blob = pickle.dumps(dep)
    assert len(blob) < 2000  # its source and options, not its samples or index
    back = pickle.loads(blob)
    assert not back._open  # no file opened yet
    assert (back.n_samples, back.segments(), back.fingerprint()) == (
        dep.n_samples, dep.segments(), dep.fingerprint())
    np.testing.assert_array_equal(back.read(RATE * 4, RATE * 11), dep.read(RATE * 4, RATE * 11))
    assert sorted(back._open) == [0, 1, 2]  # just the files read


# -- detect --------------------------------------------------------------------------------


@pytest.mark.parametrize(("workers", "part_samples"), [(1, None), (2, 6 * RATE)])
def test_detections_equal_those_of_the_concatenated_signal(tmp_path, workers, part_samples):
    # tones that cross the file boundaries at 5 s and 10 s, and one inside a file
    x = _signal(4 * FILE_S, [(4.6, 5.4), (9.9, 10.3), (12.0, 12.5), (17.0, 19.0)])
    _deploy(tmp_path / "site", x, [0, 5, 10, 15])
    write_wav(tmp_path / "site.wav", x, RATE)  # the concatenation, outside the folder
    before = snapshot(tmp_path / "site")
    kw = {"format": "raven", "workers": workers, "part_samples": part_samples}
    a = run_detect(_pipe(), [str(tmp_path / "site")], tmp_path / "dep", **kw)
    b = run_detect(_pipe(), [str(tmp_path / "site.wav")], tmp_path / "cat", **kw)
    assert a.ok and b.ok, (a.text(), b.text())
    assert a.results[0].detections == b.results[0].detections >= 4
    table = (tmp_path / "dep" / "site.selections.txt").read_bytes()
    assert table == (tmp_path / "cat" / "site.selections.txt").read_bytes()
    assert snapshot(tmp_path / "site") == before  # nothing written into the folder
    # the table of absolute times: one row per detection, UTC, the file it starts in
    rows = _rows(tmp_path / "dep" / "site.absolute.csv")
    assert len(rows) == a.results[0].detections
    first = rows[0]
    begin = datetime.fromisoformat(first["begin_utc"])
    want = T0.replace(tzinfo=UTC) + timedelta(seconds=float(first["begin_s"]))
    assert abs((begin - want).total_seconds()) < 1e-6
    assert Path(first["file"]).name == "rec000.wav"
    crossing = [r for r in rows if 4.5 < float(r["begin_s"]) < 5.0]
    assert crossing and Path(crossing[0]["file"]).name == "rec000.wav"
    assert float(crossing[0]["end_s"]) > 5.0  # it runs on into the next file
    # a table per file, its times from the file's first sample
    per_file = sorted((tmp_path / "dep" / "site").glob("*.selections.txt"))
    assert [p.name for p in per_file] == [f"rec{k:03d}.selections.txt" for k in range(4)]
    counts = [len(p.read_text().splitlines()) - 1 for p in per_file]
    assert sum(counts) == len(rows)
    in_third = [r for r in rows if Path(r["file"]).name == "rec002.wav"]
    lines = per_file[2].read_text().splitlines()
    head = lines[0].split("\t")
    begin_col = head.index("Begin Time (s)")
    got = sorted(float(line.split("\t")[begin_col]) for line in lines[1:])
    want_s = sorted(float(r["file_begin_s"]) for r in in_third)
    np.testing.assert_allclose(got, want_s, atol=1e-3)
    assert all(0 <= s < FILE_S for s in got)


def test_no_detection_runs_across_a_gap(tmp_path):
    # a tone from 9.5 s to 10.5 s on the sample axis: the gap (30 s long) lies at 10 s
    x = _signal(4 * FILE_S, [(9.5, 10.5)])
    _deploy(tmp_path / "site", x, [0, 5, 40, 45])
    dep = open_deployment(tmp_path / "site")
    assert dep.segments() == [(0, 10 * RATE), (10 * RATE, 20 * RATE)]
    # each segment alone, as its own file
    write_wav(tmp_path / "seg_a.wav", x[:10 * RATE], RATE)
    write_wav(tmp_path / "seg_b.wav", x[10 * RATE:], RATE)
    ea = _pipe().detect(open_recording(tmp_path / "seg_a.wav"))
    eb = _pipe().detect(open_recording(tmp_path / "seg_b.wav"))
    s = run_detect(_pipe(), [str(tmp_path / "site")], tmp_path / "out", format="csv",
                   workers=2)
    assert s.ok, s.text()
    table = _rows(tmp_path / "out" / "site.csv")  # seconds on the deployment's sample axis
    starts = sorted(round(float(r["start_s"]) * RATE) for r in table)
    want = sorted([*ea.start_sample.tolist(), *(eb.start_sample + 10 * RATE).tolist()])
    assert starts == want
    assert any(abs(float(r["stop_s"]) - 10.0) < 0.05 for r in table)
    rows = _rows(tmp_path / "out" / "site.absolute.csv")
    # the tone's halves are two detections, one ending at the gap, one starting after it
    assert any(abs(float(r["end_s"]) - 10.0) < 0.05 for r in rows)
    after = [r for r in rows if abs(float(r["begin_s"]) - 10.0) < 0.05]
    assert after
    begin = datetime.fromisoformat(after[0]["begin_utc"])
    # absolute time: 40 s after T0 (the gap counted), not 10 s
    assert abs((begin - T0.replace(tzinfo=UTC)).total_seconds() - 40.0) < 0.05


def test_an_output_folder_inside_the_deployment_is_one_line(tmp_path):
    _deploy(tmp_path / "site", _signal(2 * FILE_S, []), [0, 5])
    before = snapshot(tmp_path / "site")
    with pytest.raises(InputError, match="nothing is written into it"):
        run_detect(_pipe(), [str(tmp_path / "site")], tmp_path / "site" / "out")
    assert snapshot(tmp_path / "site") == before


# -- annotations of the files ------------------------------------------------------------------


def _sigmf(folder: Path, name: str, when: str, n: int, notes: list[dict]) -> None:
    meta = hostile_corpus._sigmf_meta(
        glob={"core:sample_rate": 1000.0},
        captures=[{"core:sample_start": 0, "core:datetime": when}], annotations=notes)
    (folder / f"{name}.sigmf-meta").write_text(json.dumps(meta))
    (folder / f"{name}.sigmf-data").write_bytes(np.zeros(n, np.complex64).tobytes())


def test_the_files_annotations_join_the_deployments_shifted(tmp_path):
    d = tmp_path / "caps"
    d.mkdir()
    _sigmf(d, "a", "2024-05-01T12:00:00Z", 2000,
           [{"core:sample_start": 100, "core:sample_count": 50, "core:label": "one"}])
    _sigmf(d, "b", "2024-05-01T12:00:02Z", 2000,
           [{"core:sample_start": 500, "core:sample_count": 200, "core:label": "two"}])
    dep = open_deployment(d)
    notes = sorted(dep.annotations, key=lambda a: a.start_s)
    assert [a.label for a in notes] == ["one", "two"]
    assert notes[0].start_s == pytest.approx(0.1)
    assert notes[1].start_s == pytest.approx(2.5)  # 2000 samples of "a", then 500
    assert notes[1].stop_s == pytest.approx(2.7)
    assert Path(notes[1].extra["file"]).name == "b.sigmf-meta"
    assert notes[1].extra["file_start_s"] == pytest.approx(0.5)
    # set ones stay, the files' follow; a copy (a worker's) keeps both
    assert [a.label for a in pickle.loads(pickle.dumps(dep)).annotations] == ["one", "two"]


# -- the command line ------------------------------------------------------------------------


def _pipeline_file(tmp_path: Path, steps: list[dict]) -> Path:
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"specscope": "pipeline/1", "steps": steps}))
    return p


def test_cli_detect_a_folder_on_two_processes(tmp_path, capsys):
    from specscope.app.cli import main

    x = _signal(4 * FILE_S, [(4.6, 5.4), (12.0, 12.5)])
    _deploy(tmp_path / "site", x, [0, 5, 10, 15])
    write_wav(tmp_path / "site.wav", x, RATE)
    pipe = _pipeline_file(tmp_path, [{"op": "detect.energy", "params": ENERGY}])
    assert main(["detect", str(pipe), str(tmp_path / "site"), "-o", str(tmp_path / "dep"),
                 "--workers", "2", "--part-samples", str(7 * RATE), "-q"]) == 0
    assert main(["detect", str(pipe), str(tmp_path / "site.wav"), "-o",
                 str(tmp_path / "cat"), "-q"]) == 0
    assert (tmp_path / "dep" / "site.selections.txt").read_bytes() == \
        (tmp_path / "cat" / "site.selections.txt").read_bytes()
    assert len(_rows(tmp_path / "dep" / "site.absolute.csv")) == 2
    assert len(list((tmp_path / "dep" / "site").glob("*.selections.txt"))) == 4


def test_cli_run_processes_the_deployment_as_one_input(tmp_path):
    import h5py
    from specscope.app.cli import main

    x = _signal(3 * FILE_S, [(4.0, 6.0)])
    _deploy(tmp_path / "site", x, [0, 5, 10])
    pipe = _pipeline_file(tmp_path, [{"op": "gain", "params": {"factor": 1.0}}])
    assert main(["run", str(pipe), str(tmp_path / "site"), "-o", str(tmp_path / "out"),
                 "-q"]) == 0
    with h5py.File(tmp_path / "out" / "site.h5", "r") as f:
        y = np.asarray(f["signal"])[:, 0]
        assert f["provenance"].attrs["source_path"] == str(tmp_path / "site")
    np.testing.assert_allclose(y, x.astype(np.float32) / 32768, atol=1e-6)


def test_cli_export_a_date_range_across_files(tmp_path, capsys):
    import soundfile
    from specscope.app.cli import main

    x = _signal(4 * FILE_S, [(4.0, 6.0)])
    _deploy(tmp_path / "site", x, [0, 5, 40, 45])  # a gap of 30 s after 10 s
    out = tmp_path / "cut.wav"
    assert main(["export", str(tmp_path / "site"), "--start", "2024-05-01T12:00:03Z",
                 "--stop", "2024-05-01T12:00:07.5Z", "-o", str(out), "-q"]) == 0
    y, fs = soundfile.read(out, dtype="float32")
    assert fs == RATE
    np.testing.assert_array_equal(y, x[3 * RATE:int(7.5 * RATE)].astype(np.float32) / 32768)
    # across the gap: 12:00:08 .. 12:00:42 is 2 s before it and 2 s after it
    out2 = tmp_path / "gap.wav"
    assert main(["export", str(tmp_path / "site"), "--start", "2024-05-01T12:00:08",
                 "--stop", "2024-05-01T12:00:42", "-o", str(out2)]) == 0
    assert "crosses 1 gap(s)" in capsys.readouterr().err
    y2, _ = soundfile.read(out2, dtype="float32")
    np.testing.assert_array_equal(y2, x[8 * RATE:12 * RATE].astype(np.float32) / 32768)


def test_cli_export_a_date_outside_is_one_line(tmp_path, capsys):
    from specscope.app.cli import main

    _deploy(tmp_path / "site", _signal(2 * FILE_S, []), [0, 5])
    assert main(["export", str(tmp_path / "site"), "--start", "2024-05-02T00:00:00Z",
                 "-o", str(tmp_path / "x.wav")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--start" in err[0] and "lies outside the deployment" in err[0]
    assert not (tmp_path / "x.wav").exists()


def test_cli_bad_zone_names_its_flag(tmp_path, capsys):
    from specscope.app.cli import main

    _deploy(tmp_path / "site", _signal(2 * FILE_S, []), [0, 5])
    assert main(["info", str(tmp_path / "site"), "--tz", "Mars/Olympus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--tz" in err[0] and "Mars/Olympus" in err[0]
