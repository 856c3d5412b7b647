"""A bare GPU machine is enough: ``scripts/gpu_wheels`` + ``scripts/gpu_check --wheels``.

A fresh virtual environment with only numpy, scipy, h5py and the CuPy wheel (what
a GPU machine may have) gets the wheels ``scripts/gpu_wheels`` downloads, and
``scripts/gpu_check --wheels DIR`` must find everything the device tests import
(no Qt among them) and reach its no-GPU line: ``"gpu": false``, exit 3, nothing
missing.  The downloaded wheels are cached in the temporary folder across runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE = ["numpy", "scipy", "h5py", "cupy-cuda12x"]
CACHE = Path(tempfile.gettempdir()) / f"specscope-bare-gpu-py{sys.version_info[0]}{sys.version_info[1]}"


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900, **kw)


def _pins() -> list[str]:
    pins = []
    for name in BASE:
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pytest.skip(f"{name} is not installed here, so its wheel is not at hand")
    return pins


def _cached(folder: Path, fill: list[str]) -> Path:
    stamp = folder / ".complete"
    if not stamp.exists():
        folder.mkdir(parents=True, exist_ok=True)
        proc = _run(fill)
        if proc.returncode:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            pytest.skip(f"cannot download the wheels (no network?): {last}")
        stamp.touch()
    return folder


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CuPy wheels are for Linux")
def test_gpu_check_runs_in_a_bare_venv_from_downloaded_wheels(tmp_path) -> None:
    base = _cached(CACHE / "base", [sys.executable, "-m", "pip", "download", "--quiet",
                                    "--dest", str(CACHE / "base"), *_pins()])
    wheels = _cached(CACHE / "gpu", [sys.executable, str(ROOT / "scripts" / "gpu_wheels"),
                                     str(CACHE / "gpu")])
    names = (wheels / "gpu-wheels.txt").read_text().split()
    assert any(n.startswith("pytest-") for n in names)
    assert not any(n.lower().startswith(("numpy-", "scipy-", "pyqt")) for n in names)

    venv = tmp_path / "bare"
    assert _run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    py = venv / "bin" / "python"
    proc = _run([str(py), "-m", "pip", "install", "--quiet", "--no-index",
                 "--find-links", str(base), *_pins()])
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed = _run([str(py), "-m", "pip", "list", "--format=json"]).stdout
    have = {p["name"].lower() for p in json.loads(listed)}
    assert not have & {"pytest", "soundfile", "platformdirs", "pywavelets", "pyqt6"}, have

    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = _run([str(py), str(ROOT / "scripts" / "gpu_check"), "--wheels", str(wheels),
                 "--json", str(report)], cwd=tmp_path, env=env)
    assert proc.returncode == 3, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.strip().startswith("gpu_check: no GPU here: "), proc.stdout
    got = json.loads(report.read_text())
    assert got["gpu"] is False and got["missing"] == [] and got["qt_imported"] == []
    # the machine's environment is left as it was
    after = {p["name"].lower() for p in json.loads(
        _run([str(py), "-m", "pip", "list", "--format=json"]).stdout)}
    assert after == have


def test_gpu_check_refuses_a_folder_without_wheels(tmp_path) -> None:
    """A wrong ``--wheels`` folder is named in one line (exit 2)."""
    empty = tmp_path / "wheels"
    empty.mkdir()
    proc = _run([sys.executable, str(ROOT / "scripts" / "gpu_check"), "--wheels", str(empty)])
    assert proc.returncode == 2 and "no .whl files" in proc.stderr
