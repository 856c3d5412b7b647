"""A detect or run over a deployment killed (SIGKILL) after some parts goes on where it
stopped: the parts it finished were published in the output folder's resume folder, the
next run with the same pipeline and inputs computes only the rest and writes the same
bytes as a run never stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from _deployments import snapshot
from specscope.compute.batch import detect as detect_mod
from specscope.compute.batch import process as process_mod
from specscope.compute.batch import run_batch, run_detect
from specscope.compute.pipeline import Pipeline
from test_deployment_batch import ENERGY, FILE_S, RATE, _deploy, _signal

ROOT = Path(__file__).resolve().parents[3]
#: eight files, a gap after every second one: four segments
STARTS = [0, 5, 60, 65, 120, 125, 180, 185]
DETECT = [{"op": "detect.energy", "params": ENERGY}]
RUN = [{"op": "filter", "params": {"design": "firwin", "btype": "highpass", "numtaps": 31,
                                   "cutoff": 500.0}},
       {"op": "spectrogram", "params": {"nfft": 256, "hop": 128}}]
#: the child: runs, and once ``STOP_AFTER`` parts are published says so and waits to be killed
CHILD = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from specscope.compute.batch import detect as detect_mod, process as process_mod
from specscope.compute.batch import run_batch, run_detect
from specscope.compute.pipeline import Pipeline

marker = Path({marker!r})
done = []

def hold():
    marker.write_text("held")
    while True:  # killed here
        time.sleep(0.05)

if {mode!r} == "detect":
    publish = detect_mod._publish_part
    def counted(*args):
        publish(*args)
        done.append(1)
        if len(done) >= {stop_after}:
            hold()
    detect_mod._publish_part = counted
    run_detect(Pipeline.from_steps({steps!r}), [{site!r}], {out!r}, format="csv",
               part_samples={part!r})
else:
    write = process_mod._write_part
    def counted(*args):
        write(*args)
        done.append(1)
        if len(done) >= {stop_after}:
            hold()
    process_mod._write_part = counted
    run_batch(Pipeline.from_steps({steps!r}), [{site!r}], {out!r}, task_samples={part!r})
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))


def _site(tmp_path: Path) -> Path:
    x = _signal(len(STARTS) * FILE_S, [(4.6, 5.4), (12.0, 12.5), (22.0, 23.0), (34.0, 36.0)])
    _deploy(tmp_path / "site", x, STARTS)
    return tmp_path / "site"


def _kill_after(tmp_path: Path, mode: str, site: Path, out: Path, stop_after: int,
                part: int) -> None:
    """Run in a child process that is SIGKILLed once ``stop_after`` parts are published."""
    marker = tmp_path / f"{mode}.held"
    steps = DETECT if mode == "detect" else RUN
    code = CHILD.format(tests=str(ROOT / "tests"), marker=str(marker), mode=mode,
                        stop_after=stop_after, steps=steps, site=str(site), out=str(out),
                        part=part)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tests"))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            if child.poll() is not None:
                pytest.fail(f"the child ended first: {child.stderr.read().decode()}")
            if time.monotonic() > deadline:
                pytest.fail("the child published no parts in time")
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        child.stdout.close()
        child.stderr.close()


def _counting(monkeypatch, module, name: str) -> list[dict]:
    calls: list[dict] = []
    real = getattr(module, name)

    def counted(spec):
        calls.append(spec)
        return real(spec)

    monkeypatch.setattr(module, name, counted)
    return calls


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "summary.csv"}


def test_a_killed_detect_goes_on_from_its_finished_parts(tmp_path, monkeypatch):
    site = _site(tmp_path)
    before = snapshot(site)
    part = 4 * RATE  # each 10 s segment in three parts: twelve in all
    full = run_detect(Pipeline.from_steps(DETECT), [str(site)], tmp_path / "full",
                      format="csv", part_samples=part)
    assert full.ok and full.results[0].parts == 12, full.text()
    out = tmp_path / "out"
    _kill_after(tmp_path, "detect", site, out, 5, part)
    kept = sorted((out / ".specscope-resume").rglob("part*.json"))
    assert len(kept) == 5
    assert not (out / "site.csv").exists()  # killed before the table
    calls = _counting(monkeypatch, detect_mod, "detect_task")
    again = run_detect(Pipeline.from_steps(DETECT), [str(site)], out, format="csv",
                       part_samples=part)
    assert again.ok, again.text()
    assert len(calls) == 12 - 5  # only the rest was computed
    assert again.results[0].reused == 5
    assert again.results[0].detections == full.results[0].detections >= 4
    assert _files(out) == _files(tmp_path / "full")  # the same bytes, no resume folder left
    assert snapshot(site) == before


def test_another_pipeline_reuses_nothing(tmp_path, monkeypatch):
    site = _site(tmp_path)
    out = tmp_path / "out"
    _kill_after(tmp_path, "detect", site, out, 3, 4 * RATE)
    other = [{"op": "detect.energy", "params": {**ENERGY, "snr_db": 9.0}}]
    calls = _counting(monkeypatch, detect_mod, "detect_task")
    s = run_detect(Pipeline.from_steps(other), [str(site)], out, format="csv",
                   part_samples=4 * RATE)
    assert s.ok and s.results[0].reused == 0 and len(calls) == 12
    assert not (out / ".specscope-resume").exists()  # the old parts went with it


def test_a_killed_run_goes_on_from_its_finished_parts(tmp_path, monkeypatch):
    site = _site(tmp_path)
    part = 3 * RATE
    full = run_batch(Pipeline.from_steps(RUN), [str(site)], tmp_path / "full",
                     task_samples=part)
    assert full.ok, full.text()
    n_parts = full.results[0].parts
    assert n_parts >= 8
    out = tmp_path / "out"
    _kill_after(tmp_path, "run", site, out, 3, part)
    kept = sorted((out / ".specscope-resume").rglob("part*.h5"))
    assert len(kept) == 3
    calls = _counting(monkeypatch, process_mod, "_task")
    again = run_batch(Pipeline.from_steps(RUN), [str(site)], out, task_samples=part)
    assert again.ok, again.text()
    assert (len(calls), again.results[0].reused) == (n_parts - 3, 3)
    assert _h5_numbers(out / "site.h5") == _h5_numbers(tmp_path / "full" / "site.h5")
    assert [p.name for p in out.iterdir()] == ["site.h5"]  # no part or temporary left


def _h5_numbers(path: Path) -> str:
    """Every dataset's bytes and every attribute but the creation time, as one text."""
    import hashlib

    import h5py

    lines = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                v = obj[()]
                raw = v.tobytes() if obj.dtype.kind != "O" else repr(np.asarray(v).tolist()).encode()
                lines.append(f"{name} {hashlib.sha256(raw).hexdigest()}")
            for k, v in obj.attrs.items():
                if "created" not in k:
                    lines.append(f"{name}@{k} {v!r}")
        visit("/", f)
        f.visititems(visit)
    return json.dumps(sorted(lines))
