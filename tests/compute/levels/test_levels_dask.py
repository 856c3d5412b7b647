"""Levels of a deployment on a real Dask cluster (a ``dask scheduler`` and two ``dask
worker`` processes, tests/_dask_cluster.py) equal the in-process run's, number for number."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _dask_cluster import Cluster
from _deployments import snapshot
from test_levels import FS, _deployment

pytest.importorskip("distributed", reason="dask.distributed is not installed")
xr = pytest.importorskip("xarray")

SPECSCOPE = [sys.executable, "-m", "specscope.app"]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*SPECSCOPE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def test_cli_levels_on_the_cluster_equals_the_in_process_run(tmp_path):
    _deployment(tmp_path / "site", [0, 60, 120, 400, 460])  # a gap after the third
    before = snapshot(tmp_path / "site")
    common = ["--bands", "decidecade", "--nfft", str(FS), "--no-cache", "-q"]
    r = _cli("levels", "site", "-o", "inproc.nc", *common, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with Cluster(2, root=tmp_path / "cluster") as c:
        r = _cli("levels", "site", "-o", "dask.nc", "--dask", c.address, *common, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with xr.open_dataset(tmp_path / "inproc.nc", engine="h5netcdf") as a, \
            xr.open_dataset(tmp_path / "dask.nc", engine="h5netcdf") as b:
        # 12:00-12:03, then 12:06:40-12:08:40 cut on the minutes: 3 + 3 rows
        assert a.psd.shape[0] == 6 and np.isfinite(a.psd.values).all()
        np.testing.assert_array_equal(a.effort.values, [60, 60, 60, 20, 60, 40])
        np.testing.assert_array_equal(a.psd.values, b.psd.values)
        np.testing.assert_array_equal(a.time.values, b.time.values)
        np.testing.assert_array_equal(a.effort.values, b.effort.values)
    assert snapshot(tmp_path / "site") == before
