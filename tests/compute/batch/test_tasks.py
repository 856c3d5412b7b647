"""Tasks, outcomes and the one runner loop of the batch room.

A task's error crosses back from a worker process as its own type with its own
fields; every batch kind runs through :func:`run_tasks`; the executors share one
protocol.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest
import soundfile
from specscope.compute.batch import run_batch, run_detect
from specscope.compute.batch.cluster import DaskPool
from specscope.compute.batch.pool import Futures, Inline, TaskPool
from specscope.compute.batch.runner import run_tasks
from specscope.compute.batch.tasks import (
    Task,
    TaskCrashed,
    TaskFailure,
    TaskLost,
    TaskResult,
    execute,
    portable,
)
from specscope.compute.errors import BadOption, Cancelled, InputError, MissingOption, operator_error
from specscope.compute.levels.run import levels_task
from specscope.compute.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[3]
FS = 8000


class _Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}/{b}")
        self.callback = lambda: None  # a field that does not pickle, however it is reduced


def _raises(spec):
    raise spec["error"]


def _value(spec):
    return {"twice": 2 * spec["x"]}


@pytest.mark.parametrize("error", [
    MissingOption("sample_rate", "raw samples carry no sample rate", path="/x/rec.raw",
                  example="48000"),
    BadOption("dask", "tcp://nowhere:1", "cannot reach the scheduler"),
    operator_error(InputError, "fft", "n=0 must be >= 1"),
    TaskLost("worker failed: killed", "worker"),
], ids=["missing-option", "bad-option", "operator-error", "task-lost"])
def test_a_specscope_error_crosses_as_its_own_type_with_its_fields(error):
    back = pickle.loads(pickle.dumps(execute(_raises, Task("in", {"error": error}))))
    assert isinstance(back, TaskFailure) and not back.ok
    assert type(back.error) is type(error)
    assert str(back.error) == str(error)
    assert vars(back.error) == vars(error)
    assert back.traceback is None  # a person's error, not a defect


def test_an_error_that_does_not_pickle_is_named_by_its_type():
    failure = execute(_raises, Task("in", {"error": _Unpicklable(1, 2)}))
    assert isinstance(failure.error, TaskCrashed)
    assert failure.error.type_name.endswith("_Unpicklable")
    assert "1/2" in failure.message
    assert "Traceback" in failure.traceback  # a defect carries where it happened
    assert portable(ValueError("v")).__class__ is ValueError


def test_a_cancelled_task_says_so():
    failure = execute(_raises, Task("in", {"error": Cancelled()}))
    assert failure.cancelled and failure.message == "cancelled"
    assert TaskFailure(TaskLost("unfinished", "cancelled")).cancelled
    assert not TaskFailure(TaskLost("worker failed", "worker")).cancelled


def test_a_result_carries_the_value_and_where_it_ran():
    res = execute(_value, Task("in", {"x": 21}), lambda: "here")
    assert isinstance(res, TaskResult) and res.ok
    assert res.value == {"twice": 42} and res.worker == "here" and res.seconds >= 0


def test_every_executor_follows_the_protocol():
    members = [m for m in dir(TaskPool) if not m.startswith("_")] + \
        list(TaskPool.__annotations__)
    for cls in (Inline, Futures, DaskPool):
        missing = [m for m in members if not hasattr(cls, m) and m not in ("name", "n_workers",
                                                                             "n_threads")]
        assert missing == [], f"{cls.__name__} lacks {missing}"
    pool = Futures(1, "threads", _value)
    try:
        assert pool.n_workers == 1 and pool.retried() == {} and pool.info() == {}
    finally:
        pool.close()


def test_the_runner_bounds_the_tasks_in_flight_and_stops_when_cancelled():
    taken = []
    tasks = [Task(str(i), {"x": i}, i) for i in range(10)]
    info = run_tasks(_value, tasks, lambda t, o: taken.append((t.part, o.value["twice"])),
                     in_flight=3)
    assert taken == [(i, 2 * i) for i in range(10)]
    assert info.executor == "in process" and info.workers == 1
    seen = []
    with pytest.raises(Cancelled):
        run_tasks(_value, tasks, lambda t, o: seen.append(t.part), in_flight=2,
                  cancelled=lambda: len(seen) >= 3)
    assert seen == [0, 1, 2]


@pytest.fixture
def raw_and_wav(tmp_path):
    x = 0.1 * np.random.default_rng(1).standard_normal(FS).astype(np.float32)
    wav = tmp_path / "ok.wav"
    soundfile.write(wav, x, FS, subtype="FLOAT")
    raw = tmp_path / "rec.raw"
    x.tofile(raw)
    return wav, raw


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failure_in_a_worker_process_comes_back_typed(raw_and_wav, workers):
    _, raw = raw_and_wav
    outcomes = []
    spec = {"path": str(raw), "options": {"dtype": "float32"}}
    info = run_tasks(levels_task, [Task(str(raw), spec)], lambda t, o: outcomes.append(o),
                     workers=workers)
    assert info.executor == ("in process" if workers == 1 else "2 processes")
    (failure,) = outcomes
    assert isinstance(failure.error, MissingOption)
    assert failure.error.option == "sample_rate" and failure.error.path == str(raw)
    assert failure.worker and failure.traceback is None


def test_runs_keep_each_failure_typed(tmp_path, raw_and_wav):
    wav, raw = raw_and_wav
    summary = run_batch(_pipeline(), [wav, raw], tmp_path / "out")
    ok, bad = summary.results
    assert ok.ok and ok.failure is None
    assert isinstance(bad.failure, MissingOption) and bad.failure.option == "dtype"
    assert bad.error == str(bad.failure)
    pipe = Pipeline.from_dict({"specscope": "pipeline/1",
                               "steps": [{"op": "detect.energy", "params": {}}]})
    found = run_detect(pipe, [wav, raw], tmp_path / "det", format="csv")
    assert found.results[0].ok
    assert isinstance(found.results[1].failure, MissingOption)


def _pipeline():
    return Pipeline.load(ROOT / "assets" / "pipelines" / "hum_bandpass.json")


def _calls(path: Path, names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return found


def test_one_runner_serves_every_batch_kind():
    """Only the runner makes a pool and submits to it; every batch kind calls the runner."""
    outside = []
    for path in sorted((ROOT / "compute").rglob("*.py")):
        if path.name in ("runner.py", "pool.py"):
            continue
        outside += _calls(path, {"make_pool", "submit", "results"}) if "batch" in path.parts \
            or "levels" in path.parts else []
    # the Dask pool resubmits a task whose worker was lost with its files
    assert [c for c in outside if "cluster.py" not in c] == []
    users = {p.relative_to(ROOT).as_posix() for p in (ROOT / "compute").rglob("*.py")
             if _calls(p, {"run_tasks"})}
    assert {"compute/batch/process.py", "compute/batch/detect.py",
            "compute/levels/run.py"} <= users
