"""Batch runs on a real Dask cluster: a ``dask scheduler`` and ``dask worker`` processes apart.

The workers run in their own folders with their own ``HOME`` and without the
test's ``SPECSCOPE_*`` variables (tests/_dask_cluster.py); outputs must equal
the in-process run exactly, the summary must give the cluster's real size, and
a worker killed (SIGKILL) mid-run or a scheduler that goes away must lose
nothing and leave no partial file.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile

pytest.importorskip("distributed", reason="dask.distributed is not installed")

from _dask_cluster import Cluster
from specscope.compute.batch import clean_abandoned_parts, run_batch
from specscope.compute.files import clean_stale_partials
from specscope.compute.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "assets" / "pipelines" / "hum_bandpass.json"
FS = 16000
SPECSCOPE = [sys.executable, "-m", "specscope.app"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with Cluster(2, root=tmp_path_factory.mktemp("cluster")) as c:
        yield c


def _wavs(folder: Path, n: int, seconds: float) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        rng = np.random.default_rng(i)
        t = np.arange(int(seconds * FS)) / FS
        x = 0.3 * np.sin(2 * np.pi * 50 * t) + 0.1 * rng.standard_normal(t.size)
        p = folder / f"rec{i}.wav"
        soundfile.write(p, x.astype(np.float32), FS, subtype="FLOAT")
        paths.append(p)
    return paths


def _data(path: Path) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f["spectrogram"][...]


def _no_partials(folder: Path) -> None:
    left = [p.name for p in folder.iterdir() if "partial" in p.name or p.name.startswith(".")]
    assert left == [], f"left in {folder}: {left}"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SPECSCOPE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_fixture_registered_two_separate_workers(cluster):
    assert cluster.n_registered() == 2
    assert len({p.pid for p in cluster.workers}) == 2
    assert all(p.poll() is None for p in cluster.workers)


def test_cli_on_the_cluster_equals_the_in_process_run(cluster, tmp_path):
    paths = _wavs(tmp_path, 2, 3.0)
    names = [p.name for p in paths]
    # relative inputs and output: the workers' working directories are elsewhere
    r = _cli("run", str(EXAMPLE), *names, "-o", "inproc", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("run", str(EXAMPLE), *names, "-o", "out", "--dask", cluster.address, "--json",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["workers"] == 2 and info["threads"] == 2, info
    assert info["cluster"]["workers"] == ["w0", "w1"] and info["cluster"]["threads"] == 2
    names_seen = {w for item in info["inputs"] for w in item["workers"]}
    assert names_seen <= {"w0", "w1"} and names_seen, info
    for item in info["inputs"]:
        assert item["ok"] and item["seconds"] > 0 and item["msamples_per_s"] > 0
    for p in paths:
        a, b = _data(tmp_path / "inproc" / f"{p.stem}.h5"), _data(tmp_path / "out" / f"{p.stem}.h5")
        assert np.max(np.abs(a - b)) == 0
        v = _cli("rerun", "--verify", str(tmp_path / "out" / f"{p.stem}.h5"), cwd=tmp_path)
        assert v.returncode == 0 and v.stdout.strip().endswith("identical"), v.stdout + v.stderr
    _no_partials(tmp_path / "out")
    # the text summary names the cluster's real size too
    r = _cli("run", str(EXAMPLE), *names, "-o", "out2", "--dask", cluster.address, cwd=tmp_path)
    assert r.returncode == 0 and "2 worker(s), 2 thread(s)" in r.stderr, r.stderr


def test_split_recordings_on_the_cluster_equal_the_in_process_run(cluster, tmp_path):
    paths = _wavs(tmp_path / "in", 2, 4.0)
    p = Pipeline.load(EXAMPLE)
    ref = run_batch(p, paths, tmp_path / "ref", task_samples=FS)
    s = run_batch(p, paths, tmp_path / "out", task_samples=FS, dask=cluster.address)
    assert ref.ok and s.ok, s.text()
    assert all(r.parts > 1 for r in s.results)
    for path in paths:
        np.testing.assert_array_equal(_data(tmp_path / "out" / f"{path.stem}.h5"),
                                      _data(tmp_path / "ref" / f"{path.stem}.h5"))
    _no_partials(tmp_path / "out")


def test_outputs_fetched_by_the_client_equal_the_in_process_run(cluster, tmp_path):
    """--write-on client where unshare is not allowed (tests below hide the folder too)."""
    paths = _wavs(tmp_path / "in", 2, 4.0)
    p = Pipeline.load(EXAMPLE)
    ref = run_batch(p, paths, tmp_path / "ref", task_samples=FS)
    auto = run_batch(p, paths, tmp_path / "auto", task_samples=0, dask=cluster.address)
    assert auto.ok and auto.cluster["writes"] == "workers"  # they see this folder
    s = run_batch(p, paths, tmp_path / "out", task_samples=FS, dask=cluster.address,
                  write_on="client")
    assert ref.ok and s.ok and s.cluster["writes"] == "client", s.text()
    for path in paths:
        np.testing.assert_array_equal(_data(tmp_path / "out" / f"{path.stem}.h5"),
                                      _data(tmp_path / "ref" / f"{path.stem}.h5"))
    _no_partials(tmp_path / "out")
    # each worker dropped its private copies once they were fetched
    assert any(q.is_dir() for d in cluster.worker_dirs for q in (d / "dask").rglob(
        "specscope-out"))
    left = [q for d in cluster.worker_dirs for q in (d / "dask").rglob("specscope-out/*/*")]
    assert left == [], left


def test_a_worker_killed_mid_run_loses_nothing(cluster, tmp_path):
    paths = _wavs(tmp_path / "in", 8, 6.0)
    p = Pipeline.load(EXAMPLE)
    ref = run_batch(p, paths, tmp_path / "ref", task_samples=FS)
    killed = threading.Event()

    def progress(done, total, result):
        if done >= 1 and not killed.is_set():
            killed.set()
            cluster.kill_worker(0)  # SIGKILL, while the cluster holds the other tasks

    try:
        s = run_batch(p, paths, tmp_path / "out", task_samples=FS, dask=cluster.address,
                      progress=progress)
    finally:
        cluster.add_worker()
        cluster.wait_for_workers(2)
    assert killed.is_set()
    assert s.ok, s.text()
    for path in paths:
        np.testing.assert_array_equal(_data(tmp_path / "out" / f"{path.stem}.h5"),
                                      _data(tmp_path / "ref" / f"{path.stem}.h5"))
    _no_partials(tmp_path / "out")
    retried = [r for r in s.results if r.retried]
    assert retried, "the killed worker's tasks were not reported as retried: " + s.text()
    assert "retried after a worker was lost: " in s.text()
    assert ref.ok


def test_a_scheduler_that_goes_away_ends_the_run(tmp_path):
    paths = _wavs(tmp_path / "in", 6, 6.0)
    p = Pipeline.load(EXAMPLE)
    with Cluster(1, root=tmp_path / "cluster") as c:
        gone = threading.Event()

        def progress(done, total, result):
            if done >= 1 and not gone.is_set():
                gone.set()
                c.kill_scheduler()
                gone.at = time.monotonic()

        s = run_batch(p, paths, tmp_path / "out", task_samples=FS, dask=c.address,
                      progress=progress)
        took = time.monotonic() - gone.at
        print(f"killed scheduler: the run ended {took:.2f} s after SIGKILL")
        assert took < 15, took  # generous; the connection's close is seen at once
        assert gone.is_set()
        assert not s.ok
        bad = s.failed
        assert bad and all((r.error or "").startswith(
            f"unfinished: the connection to the scheduler {c.address} was lost") for r in bad), \
            s.text()
        lines = s.text().splitlines()
        assert sum(line.startswith("failed: ") for line in lines) == len(bad)
        for r in s.done:  # what was reported done is complete
            assert _data(Path(r.output)).size > 0
        for r in bad:
            assert not (tmp_path / "out" / f"{Path(r.input).stem}.h5").exists()
        # the workers of a gone scheduler may still be writing a part: their temporaries
        # carry their pid; once those workers have ended, the next run's clean-up takes
        # them, and nothing else stays
        for w in c.workers:  # the worker and the process it runs tasks in
            os.killpg(w.pid, signal.SIGKILL)
            w.wait(timeout=60)
        def temporaries():  # what the next run cleans up first
            clean_stale_partials(tmp_path / "out" / "next.h5")
            clean_abandoned_parts()
            return [p for p in (tmp_path / "out").iterdir()
                    if "partial" in p.name or p.name.startswith(".")]

        deadline = time.monotonic() + 30  # until the killed processes are gone
        while temporaries() and time.monotonic() < deadline:
            time.sleep(0.2)
        _no_partials(tmp_path / "out")


def test_a_frozen_scheduler_ends_the_cli_run_in_seconds(tmp_path):
    """A scheduler that stops answering (SIGSTOP: its connections stay open, so only the
    client's watchdog can tell) ends the run: exit 1, one line per unfinished input."""
    paths = _wavs(tmp_path / "in", 6, 8.0)
    out = tmp_path / "out"
    with Cluster(1, root=tmp_path / "cluster") as c:
        proc = subprocess.Popen([*SPECSCOPE, "run", str(EXAMPLE), *map(str, paths), "-o",
                                 str(out), "--dask", c.address, "--task-samples", str(FS),
                                 "--chunk-samples", "4096"], cwd=tmp_path, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and proc.poll() is None:
                if out.is_dir() and any(p.suffix == ".h5" and not p.name.startswith(".")
                                        for p in out.iterdir()):
                    break
                time.sleep(0.02)
            assert proc.poll() is None, "the run ended before the scheduler was frozen"
            os.kill(c.scheduler.pid, signal.SIGSTOP)
            t0 = time.monotonic()
            _stdout, stderr = proc.communicate(timeout=120)
            took = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            c.kill_scheduler()
    print(f"frozen scheduler: the run ended {took:.2f} s after SIGSTOP")
    assert proc.returncode == 1, stderr
    assert took < 15, took  # generous: the watchdog gives up after about 3 s
    lines = [ln for ln in stderr.splitlines() if ln.startswith("specscope: failed: ")]
    assert lines, stderr
    assert all(f"unfinished: the connection to the scheduler {c.address} was lost" in ln
               for ln in lines), stderr
    assert "Traceback" not in stderr, stderr
    done = [p for p in out.iterdir() if p.suffix == ".h5" and not p.name.startswith(".")]
    assert len(lines) + len(done) == len(paths), (lines, done)
    for p in done:  # what was published is complete
        assert _data(p).size > 0
    _no_partials(out)


def test_cli_names_an_unreachable_scheduler_in_one_line(tmp_path):
    pytest.importorskip("distributed")
    env = dict(os.environ.items())
    r = subprocess.run([*SPECSCOPE, "run", str(EXAMPLE), "x.wav", "-o", "out", "--dask",
                        "tcp://127.0.0.1:9"], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=120, check=False)
    assert r.returncode == 2 and "cannot reach the scheduler" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_ctrl_c_cancels_the_cluster_tasks_and_leaves_no_partial_file(cluster, tmp_path):
    from distributed import Client

    paths = _wavs(tmp_path / "in", 4, 60.0)
    out = tmp_path / "out"
    proc = subprocess.Popen([*SPECSCOPE, "run", str(EXAMPLE), *map(str, paths), "-o", str(out),
                             "--dask", cluster.address, "--task-samples", str(5 * FS),
                             "--chunk-samples", "4096"], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.is_dir() and any("partial" in p.name for p in out.iterdir()):
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    with Client(cluster.address, timeout=10) as c:  # the cluster has dropped the run's tasks
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(c.processing().values()):
            time.sleep(0.05)
        assert not any(c.processing().values())
    _no_partials(out)
    for p in out.iterdir():  # what was published before Ctrl+C is complete
        with h5py.File(p, "r") as f:
            assert f["spectrogram"].shape[0] > 0


SHIPPED = '''
"""A folder plugin for the cluster tests: records where it was loaded from."""
import os
from specscope.compute.operators import operator

SPECSCOPE_PLUGIN = {"version": "1.0", "outputs": {"double": "same"}}
with open(os.path.join(os.getcwd(), "loaded-from.txt"), "a") as f:
    f.write(__file__ + "\\n")


@operator("double", family="basic", summary="Twice the signal", reference="2 x")
def double(x, *, xp):
    return 2 * x
'''


def test_a_folder_plugin_reaches_the_workers_through_dask(cluster, tmp_path, monkeypatch):
    from specscope.compute import extensions

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "shipped.py").write_text(SHIPPED)
    paths = _wavs(tmp_path / "in", 2, 2.0)
    # a relative folder: the workers, in their own folders, cannot see it by that path
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPECSCOPE_PLUGINS", "plugins")
    extensions.rescan()
    try:
        p = Pipeline.from_steps([{"op": "shipped.double", "params": {}}])
        ref = run_batch(p, paths, tmp_path / "ref")
        s = run_batch(p, paths, tmp_path / "out", dask=cluster.address)
    finally:
        # unloaded, not only forgotten: later tests (the operator reference) see no shipped.*
        extensions.reset()
        monkeypatch.delenv("SPECSCOPE_PLUGINS")
    assert ref.ok and s.ok, s.text()
    for path in paths:
        with h5py.File(tmp_path / "ref" / f"{path.stem}.h5") as a, \
                h5py.File(tmp_path / "out" / f"{path.stem}.h5") as b:
            x = soundfile.read(path, dtype="float32")[0]
            np.testing.assert_array_equal(a["signal"][:, 0], 2 * x)
            np.testing.assert_array_equal(b["signal"][...], a["signal"][...])
    ran = {w for r in s.results for w in r.workers}
    for name in ran:
        home = cluster.worker_dirs[int(name[1:])]
        loaded = (home / "loaded-from.txt").read_text().split()
        assert loaded and all(Path(f).is_relative_to(home / "dask") for f in loaded), loaded
    digest = s.cluster["plugin_folders"]["plugins"]
    assert len(digest) == 64


# -- a cluster that sees neither the inputs' folder nor the output folder ----------------


@pytest.fixture(scope="module")
def apart(tmp_path_factory):
    """(cluster, private folder, HTTP server of private/in): the workers see none of it.

    An empty file system is mounted over the private folder in the workers' own
    mount namespace, as if they ran on another machine; the recordings reach
    them as http:// URLs and the outputs come back to this process.
    """
    from _dask_cluster import can_hide
    from _http_range import RangeServer

    if not can_hide():
        pytest.skip("unshare --mount is not allowed here")
    pytest.importorskip("aiohttp")
    private = tmp_path_factory.mktemp("private")
    _wavs(private / "in", 3, 4.0)
    with Cluster(2, root=tmp_path_factory.mktemp("apart"), hide=(private,)) as c, \
            RangeServer(private / "in") as srv:
        yield c, private, srv


def test_workers_apart_see_an_empty_folder_where_the_private_one_is(apart):
    from distributed import Client

    c, private, _ = apart
    assert sorted(p.name for p in (private / "in").iterdir()) == ["rec0.wav", "rec1.wav",
                                                                  "rec2.wav"]
    with Client(c.address, timeout=30) as client:
        seen = client.run(os.listdir, str(private))
    assert len(seen) == 2 and all(v == [] for v in seen.values()), seen


def test_urls_in_and_outputs_written_by_the_client_equal_the_in_process_run(apart):
    c, private, srv = apart
    p = Pipeline.load(EXAMPLE)
    names = ["rec0.wav", "rec1.wav", "rec2.wav"]
    ref = run_batch(p, [private / "in" / n for n in names], private / "ref", task_samples=FS)
    # auto: the workers cannot see the output folder, so this process writes it; split
    # inputs come back part by part and are joined here
    s = run_batch(p, [srv.url(n) for n in names], private / "out", task_samples=FS,
                  dask=c.address)
    assert ref.ok and s.ok, s.text()
    assert s.cluster["writes"] == "client"
    assert all(r.parts > 1 for r in s.results)
    assert {w for r in s.results for w in r.workers} <= {"w0", "w1"}
    for n in names:
        stem = Path(n).stem
        np.testing.assert_array_equal(_data(private / "out" / f"{stem}.h5"),
                                      _data(private / "ref" / f"{stem}.h5"))
        with h5py.File(private / "out" / f"{stem}.h5", "r") as f, \
                h5py.File(private / "ref" / f"{stem}.h5", "r") as g:
            assert f.attrs["source_sha256"] == g.attrs["source_sha256"]
            assert f.attrs["source_path"] == srv.url(n)
    _no_partials(private / "out")
    # unsplit inputs come back whole, through the CLI
    r = _cli("run", str(EXAMPLE), *[srv.url(n) for n in names], "-o", str(private / "cli"),
             "--dask", c.address, "--task-samples", "0", "--json", cwd=private)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["cluster"]["writes"] == "client" and info["ok"], info
    for n in names:
        stem = Path(n).stem
        np.testing.assert_array_equal(_data(private / "cli" / f"{stem}.h5"),
                                      _data(private / "ref" / f"{stem}.h5"))
    _no_partials(private / "cli")


def test_workers_told_to_write_a_folder_they_cannot_see_fail_each_input(apart):
    c, private, srv = apart
    s = run_batch(Pipeline.load(EXAMPLE), [srv.url("rec0.wav")], private / "nope",
                  dask=c.address, write_on="workers", task_samples=0)
    assert not s.ok and s.cluster["writes"] == "workers"
    assert "rec0.h5" in (s.failed[0].error or ""), s.text()
    assert not (private / "nope" / "rec0.h5").exists()


def test_detect_tables_written_by_the_client_equal_the_in_process_tables(apart):
    from specscope.compute.batch import run_detect

    c, private, srv = apart
    steps = [{"op": "detect.energy", "params": {"band_low_hz": 30.0, "band_high_hz": 90.0,
                                                "snr_db": 3.0}}]
    pipe = Pipeline.from_steps(steps, name="hum")
    urls = [srv.url(n) for n in ("rec0.wav", "rec1.wav", "rec2.wav")]
    for fmt in ("csv", "sigmf", "hdf5"):
        ref = run_detect(pipe, urls, private / f"det-ref-{fmt}", format=fmt)
        s = run_detect(pipe, urls, private / f"det-{fmt}", format=fmt, dask=c.address)
        assert ref.ok and s.ok, s.text()
        assert s.cluster["writes"] == "client"
        want = {p.name: p.read_bytes() for p in (private / f"det-ref-{fmt}").iterdir()
                if p.name != "summary.csv"}
        got = {p.name: p.read_bytes() for p in (private / f"det-{fmt}").iterdir()
               if p.name != "summary.csv"}
        assert len(want) == 3 and got == want, sorted(got)
        assert [r.detections for r in s.results] == [r.detections for r in ref.results]
        _no_partials(private / f"det-{fmt}")


def test_a_failure_on_a_worker_comes_back_as_its_own_type(cluster, tmp_path):
    """A task's error crosses the cluster as itself: type, message and fields."""
    from specscope.compute.batch.runner import run_tasks
    from specscope.compute.batch.tasks import Task
    from specscope.compute.errors import MissingOption
    from specscope.compute.levels.run import levels_task

    raw = tmp_path / "rec.raw"
    np.zeros(1000, np.float32).tofile(raw)
    outcomes = []
    info = run_tasks(levels_task, [Task(str(raw), {"path": str(raw),
                                                   "options": {"dtype": "float32"}})],
                     lambda t, o: outcomes.append(o), dask=cluster.address)
    assert info.executor.startswith("dask") and info.workers == 2
    (failure,) = outcomes
    assert type(failure.error) is MissingOption
    assert failure.error.option == "sample_rate" and failure.error.path == str(raw)
    assert failure.worker and failure.traceback is None
