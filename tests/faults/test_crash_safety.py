"""SIGKILL an exporting process at random moments: the destination is never damaged.

A helper process imports specscope once and, on each request, forks a child
that runs one export (the process that is killed); the test sleeps a random
time and SIGKILLs that child.  After every kill the destination must be the
old file byte for byte, or a complete new file with the expected numbers.
Temporary files of killed exports stay until a later export to the same
destination finds them stale (``SPECSCOPE_STALE_PARTIAL_S``) and removes them.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile
from specscope.compute.output import export_range
from specscope.compute.pipeline import Pipeline

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

FIR = {"op": "filter", "params": {"design": "firwin", "numtaps": 63, "cutoff": 3000.0,
                                  "btype": "lowpass"}}

HELPER = r"""
import os, sys
from specscope.compute.output import export_range
from specscope.compute.pipeline import Pipeline
src, dest, pipe = sys.argv[1:4]
pipeline = Pipeline.load(pipe)
print("ready", flush=True)
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            export_range(src, dest, pipeline=pipeline, chunk_samples=1 << 16)
        except BaseException:
            os._exit(3)
        os._exit(0)
    print(pid, flush=True)
    _, status = os.waitpid(pid, 0)
    print("killed" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}", flush=True)
"""


def _signal_of(path: Path) -> np.ndarray:
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: o[...] if isinstance(o, h5py.Dataset) else None)
        return f["signal"][...]


def test_sigkill_never_damages_the_destination(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    src = tmp_path / "in.wav"
    soundfile.write(str(src), (rng.standard_normal(1_200_000) * 0.1).astype(np.float32), 48000,
                    subtype="FLOAT")
    pipe = tmp_path / "p.json"
    pipeline = Pipeline.from_steps([FIR])
    pipeline.save(pipe)
    out = tmp_path / "out" / "o.h5"
    out.parent.mkdir()
    expected = _signal_of(export_range(src, tmp_path / "ref.h5", pipeline=pipeline,
                                       chunk_samples=1 << 16))
    export_range(src, out, stop=1000)  # the old file: something else
    old = out.read_bytes()

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    helper = subprocess.Popen([sys.executable, "-c", HELPER, str(src), str(out), str(pipe)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert helper.stdout.readline().strip() == "ready"

        def run(delay: float | None) -> str:
            helper.stdin.write("go\n")
            helper.stdin.flush()
            pid = int(helper.stdout.readline())
            if delay is not None:
                time.sleep(delay)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            return helper.stdout.readline().strip()

        t0 = time.perf_counter()
        assert run(None) == "exit 0"  # one complete export: how long it takes
        duration = time.perf_counter() - t0
        np.testing.assert_array_equal(_signal_of(out), expected)
        current = out.read_bytes()
        assert current != old
        outcomes = []
        deadline = time.perf_counter() + 15
        random.seed(11)
        for i in range(25):
            if time.perf_counter() > deadline and i >= 12:
                break
            outcome = run(random.uniform(0.0, 1.3 * duration))
            outcomes.append(outcome)
            assert outcome in ("killed", "exit 0")
            assert out.exists()  # never absent once it existed: os.replace is atomic
            now = out.read_bytes()
            if now != current:  # must be a complete, valid new file
                np.testing.assert_array_equal(_signal_of(out), expected)
                current = now
        assert outcomes.count("killed") >= 5, outcomes
    finally:
        helper.stdin.close()
        helper.wait(timeout=30)

    partials = sorted(p.name for p in out.parent.iterdir() if p.name.endswith(".partial"))
    assert all(p.startswith(".o.h5.") for p in partials)
    assert len(partials) <= outcomes.count("killed")
    assert {p.name for p in out.parent.iterdir()} - set(partials) == {"o.h5"}
    # a later export to the same destination removes the stale temporary files
    monkeypatch.setenv("SPECSCOPE_STALE_PARTIAL_S", "0")
    export_range(src, out, stop=1000)
    assert [p.name for p in out.parent.iterdir()] == ["o.h5"]
