"""The roomy heap of batch tasks: where the environment fixed glibc's thresholds low
(Dask's nanny sets ``MALLOC_TRIM_THRESHOLD_=65536``), a task's mid-size blocks stay in
the heap instead of being mapped and faulted in each time; after the task the
environment's thresholds are back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from specscope.compute.batch import heap

PROBE = r"""
import json, resource, threading
import numpy as np
from specscope.compute.batch.heap import roomy_heap

def faults(n=200):
    # what a streamed task does per chunk: a few 1 MiB temporaries, freed again
    r0 = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range(n):
        a = np.ones(1 << 18, np.float32)
        b = a * 2.0
        del a, b
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - r0

out = {}
def run():  # in a thread, as a Dask worker runs its tasks
    out["before"] = faults()
    with roomy_heap() as changed:
        out["changed"] = changed
        faults(5)  # the first blocks enter the heap
        with roomy_heap():  # nested (or a second task thread): still roomy
            out["inside"] = faults()
        out["inner_left"] = faults()
    out["after"] = faults()
t = threading.Thread(target=run); t.start(); t.join()
print(json.dumps(out))
"""


def _probe(env_extra: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(env_extra)
    res = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, check=False,
                         text=True, timeout=120 * float(os.environ.get(
                             "SPECSCOPE_TEST_TIMEOUT_SCALE", "1")))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.splitlines()[-1])


needs_glibc = pytest.mark.skipif(heap._LIBC is None, reason="glibc's mallopt is not here")


@needs_glibc
def test_a_lean_environment_faults_every_block_and_a_task_keeps_them():
    out = _probe({"MALLOC_TRIM_THRESHOLD_": "65536"})
    # 200 rounds of two 1 MiB blocks: each mapped block faults in its 256 pages
    assert out["before"] > 200 * 256, out
    assert out["changed"] is True
    assert out["inside"] < out["before"] / 20, out
    assert out["inner_left"] < out["before"] / 20, out  # the outer task still runs
    # the last task out puts the environment's threshold back
    assert out["after"] > out["before"] / 2, out


@needs_glibc
def test_a_heap_that_tunes_itself_is_left_alone():
    out = _probe({})
    assert out["changed"] is False
    # glibc raised its own threshold after the first freed block: no faults per round
    assert out["before"] < 200 * 256 / 20, out
    assert out["after"] < 200 * 256 / 20, out


def test_without_glibc_or_a_fixed_threshold_it_does_nothing(monkeypatch):
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    with heap.roomy_heap() as changed:
        assert changed is False
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setattr(heap, "_LIBC", None)
    with heap.roomy_heap() as changed:
        assert changed is False
