"""A deployment on a real Dask cluster (a ``dask scheduler`` and two ``dask worker``
processes apart, tests/_dask_cluster.py): ``specscope detect P.json FOLDER --dask ADDRESS``
writes the bytes of the in-process run, and so does ``specscope run``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

pytest.importorskip("distributed", reason="dask.distributed is not installed")

from _dask_cluster import Cluster
from _deployments import snapshot
from test_deployment_batch import ENERGY, FILE_S, RATE, _deploy, _signal

SPECSCOPE = [sys.executable, "-m", "specscope.app"]
#: six files, gaps after the second and the fourth: three segments
STARTS = [0, 5, 60, 65, 120, 125]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with Cluster(2, root=tmp_path_factory.mktemp("cluster")) as c:
        yield c


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SPECSCOPE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def _tables(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "summary.csv"}


def _pipeline(tmp_path: Path, steps: list[dict]) -> Path:
    p = tmp_path / f"p{len(list(tmp_path.glob('p*.json')))}.json"
    p.write_text(json.dumps({"specscope": "pipeline/1", "steps": steps}))
    return p


def test_cli_detect_on_the_cluster_equals_the_in_process_run(cluster, tmp_path):
    x = _signal(len(STARTS) * FILE_S, [(4.6, 5.4), (9.8, 10.4), (17.0, 18.5), (26.0, 26.5)])
    _deploy(tmp_path / "site", x, STARTS)
    before = snapshot(tmp_path / "site")
    pipe = _pipeline(tmp_path, [{"op": "detect.energy", "params": ENERGY}])
    common = ["--part-samples", str(4 * RATE), "--format", "csv", "-q"]
    r = _cli("detect", str(pipe), "site", "-o", "inproc", *common, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("detect", str(pipe), "site", "-o", "dask", "--dask", cluster.address, "--json",
             *common[:-1], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["workers"] == 2 and info["detections"] >= 4, info
    assert {w for item in info["inputs"] for w in item["workers"]} == {"w0", "w1"}
    ref, got = _tables(tmp_path / "inproc"), _tables(tmp_path / "dask")
    assert "site.csv" in got and "site.absolute.csv" in got
    assert len([k for k in got if k.startswith("site/")]) == len(STARTS)  # a table per file
    assert got == ref  # every table, byte for byte
    assert not (tmp_path / "dask" / ".specscope-resume").exists()
    assert snapshot(tmp_path / "site") == before


def test_cli_run_on_the_cluster_equals_the_in_process_run(cluster, tmp_path):
    x = _signal(len(STARTS) * FILE_S, [(9.8, 10.4)])
    _deploy(tmp_path / "site", x, STARTS)
    pipe = _pipeline(tmp_path, [
        {"op": "filter", "params": {"design": "firwin", "btype": "highpass", "numtaps": 31,
                                    "cutoff": 500.0}},
        {"op": "spectrogram", "params": {"nfft": 512, "hop": 256}}])
    for out, extra in (("inproc", []), ("dask", ["--dask", cluster.address])):
        r = _cli("run", str(pipe), "site", "-o", out, "--task-samples", str(3 * RATE), "-q",
                 *extra, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "inproc" / "site.h5", "r") as a, \
            h5py.File(tmp_path / "dask" / "site.h5", "r") as b:
        for name in ("spectrogram", "time", "deployment/segment_samples",
                     "deployment/segment_outputs"):
            np.testing.assert_array_equal(a[name][...], b[name][...])
        assert b["deployment/segment_samples"].shape == (3, 2)
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == ["site.h5"]
