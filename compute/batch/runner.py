"""The one loop of every batch kind: tasks onto an executor, outcomes back as they end.

Pipeline runs (:mod:`.process`), detector runs (:mod:`.detect`) and long-term
levels (:mod:`specscope.compute.levels.run`) each make their
:class:`~specscope.compute.batch.tasks.Task` objects and a function that takes an
outcome; :func:`run_tasks` does the rest the same way for all of them: the
executor, who writes a Dask run's outputs, a bounded number of tasks in flight,
cancellation, tasks a lost worker ran again, and closing the workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Cancelled
from ..types import Executor, WriteOn
from .pool import make_pool
from .tasks import Task, TaskFunction, TaskOutcome

__all__ = ["RunInfo", "run_tasks"]


@dataclass
class RunInfo:
    """Where a batch run ran and what it cost there.

    Parameters
    ----------
    executor : str
        ``"in process"``, ``"N processes"``, ``"N threads"`` or the Dask cluster's name.
    workers, threads : int
        Workers that ran it (as a scheduler counts them) and threads over all of them.
    setup_seconds : float
        Time before the first task (starting, connecting and warming workers).
    cluster : dict
        A Dask cluster's description; empty for local executors.
    retried : dict
        Per input: its tasks that ran again because their worker was lost.
    """

    executor: str
    workers: int
    threads: int
    setup_seconds: float
    cluster: dict[str, Any] = field(default_factory=dict)
    retried: dict[str, int] = field(default_factory=dict)


def run_tasks(function: TaskFunction, tasks: Sequence[Task],
              take: Callable[[Task, TaskOutcome], None], *, workers: int = 1,
              executor: Executor = "processes", dask: str | None = None,
              dask_options: dict[str, Any] | None = None,
              outputs: Path | None = None, write_on: WriteOn = "auto",
              finished: Sequence[tuple[Task, TaskOutcome]] = (),
              in_flight: int | None = None,
              cancelled: Callable[[], bool] | None = None) -> RunInfo:
    """Run ``function`` on every task; hand each ``(task, outcome)`` to ``take`` as it ends.

    Parameters
    ----------
    function : callable
        The module-level task function ``function(spec) -> dict`` (it pickles).
    tasks : sequence of Task
        The tasks to run.
    take : callable
        ``take(task, outcome)``, called in this thread for each task as it ends.
    workers, executor, dask, dask_options
        Where the tasks run (:func:`~specscope.compute.batch.pool.make_pool`).
    outputs, write_on : Path, {"auto", "client", "workers"}
        The output folder of a run that writes files, and who writes into it on Dask.
    finished : sequence of (Task, TaskOutcome)
        Outcomes a stopped run already made, handed to ``take`` first.
    in_flight : int, optional
        The most tasks submitted and not yet taken (all at once by default).
    cancelled : callable, optional
        Asked after each outcome; True stops the run with :class:`Cancelled`.

    Returns
    -------
    RunInfo

    Raises
    ------
    Cancelled
        ``cancelled()`` said so; the tasks still running were cancelled.
    """
    t0 = time.perf_counter()
    pool = make_pool(workers, executor, dask, dask_options, function)
    try:
        if outputs is not None:
            pool.prepare_outputs(outputs, write_on)
        setup = time.perf_counter() - t0
        for task, outcome in _outcomes(pool, tasks, finished, in_flight):
            take(task, outcome)
            if cancelled is not None and cancelled():
                raise Cancelled()
    except BaseException:
        # Ctrl+C, Cancel or a lost client: the cluster's tasks are cancelled and stop at
        # their next block; nothing half-written stays behind
        pool.cancel()
        raise
    finally:
        retried = pool.retried()
        pool.close()
    return RunInfo(pool.name, pool.n_workers, pool.n_threads, setup, pool.info(), retried)


def _outcomes(pool: Any, tasks: Sequence[Task], finished: Sequence[tuple[Task, TaskOutcome]],
              in_flight: int | None) -> Iterator[tuple[Task, TaskOutcome]]:
    yield from finished
    step = len(tasks) if in_flight is None else max(1, in_flight)
    for i in range(0, len(tasks), max(1, step)):
        handles = [pool.submit(t) for t in tasks[i:i + step]]
        yield from pool.results(handles)
        del handles  # finished results are let go before the next tasks start
