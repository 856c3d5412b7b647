"""The executors of the batch: this process, a local pool, or a Dask cluster.

Every batch kind (pipeline runs, detector runs, long-term levels) runs its
:class:`~specscope.compute.batch.tasks.Task` objects on a :class:`TaskPool`,
through the one loop of :mod:`~specscope.compute.batch.runner`.  A pool runs a
module-level task function on each task in a worker and hands back
:class:`~specscope.compute.batch.tasks.TaskResult` or
:class:`~specscope.compute.batch.tasks.TaskFailure` objects as tasks end.

Nothing here imports Qt.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from ..types import Executor, WriteOn
from .cluster import DaskPool, worker_name
from .tasks import Task, TaskFailure, TaskFunction, TaskLost, TaskOutcome, execute, one_line

__all__ = ["Futures", "Inline", "TaskPool", "make_pool"]


class TaskPool(Protocol):
    """Where the tasks of a batch run run.

    Attributes
    ----------
    name : str
        How a summary names it ("inline", "2 processes", "dask tcp://...").
    n_workers, n_threads : int
        Workers and threads over all of them.
    """

    name: str
    n_workers: int
    n_threads: int

    def prepare_outputs(self, folder: Path, write_on: WriteOn = "auto") -> str:
        """Choose who writes into ``folder``; ``"workers"`` or ``"client"``."""
        ...

    def submit(self, task: Task) -> Any:
        """Start ``task``; a handle for :meth:`results`."""
        ...

    def results(self, handles: list[Any]) -> Iterator[tuple[Task, TaskOutcome]]:
        """``(task, outcome)`` for each handle, as tasks end."""
        ...

    def retried(self) -> dict[str, int]:
        """Per input: its tasks that ran again because their worker was lost."""
        ...

    def info(self) -> dict[str, Any]:
        """A description of the workers and what the run cost on them (empty locally)."""
        ...

    def cancel(self) -> None:
        """Stop every task of the run still running."""
        ...

    def close(self) -> None:
        """Let the workers go."""
        ...


class _Local:
    """What the local pools share: they write in place and retry nothing."""

    name = "in process"
    n_workers = n_threads = 1

    def prepare_outputs(self, folder: Path, write_on: WriteOn = "auto") -> str:
        return "workers"

    def retried(self) -> dict[str, int]:
        return {}

    def info(self) -> dict[str, Any]:
        return {}

    def cancel(self) -> None:
        pass


class Inline(_Local):
    """Tasks run one after another in this process, as their results are asked for.

    Parameters
    ----------
    function : callable
        ``function(spec) -> dict``, run for each submitted task.
    """

    def __init__(self, function: TaskFunction) -> None:
        self._function = function

    def submit(self, task: Task) -> Any:
        return task

    def results(self, handles: list[Any]) -> Iterator[tuple[Task, TaskOutcome]]:
        for task in handles:
            yield task, execute(self._function, task, worker_name)

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _sigint_ignored(active: bool) -> Iterator[None]:
    """Ignore Ctrl+C while worker processes start, so that they ignore it for life.

    A terminal sends Ctrl+C to every process of the command; the submitting
    process alone handles it (it cancels, then ends its workers), so a worker
    never prints a KeyboardInterrupt traceback of its own.
    """
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class Futures(_Local):
    """A pool of ``workers`` processes (spawned) or threads.

    Parameters
    ----------
    workers : int
        Processes or threads in the pool.
    kind : {"processes", "threads"}
        The pool's kind; worker processes are spawned, never forked.
    function : callable
        The module-level function ``function(spec) -> dict`` (it pickles).
    """

    def __init__(self, workers: int, kind: Executor, function: TaskFunction) -> None:
        import concurrent.futures as cf

        self._cf = cf
        self._run = functools.partial(execute, function, worker=worker_name)
        if kind == "threads":
            self.pool: Any = cf.ThreadPoolExecutor(workers)
        else:
            import multiprocessing

            self.pool = cf.ProcessPoolExecutor(workers,
                                               mp_context=multiprocessing.get_context("spawn"))
        self.name = f"{workers} {kind}"
        self.n_workers = self.n_threads = workers
        self._processes = kind != "threads"
        self._tasks: dict[Any, Task] = {}

    def submit(self, task: Task) -> Any:
        with _sigint_ignored(self._processes):
            fut = self.pool.submit(self._run, task)  # a worker process may start here
        self._tasks[fut] = task
        return fut

    def results(self, handles: list[Any]) -> Iterator[tuple[Task, TaskOutcome]]:
        for fut in self._cf.as_completed(handles):
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker fails its task only
                outcome = TaskFailure(TaskLost(f"worker failed: {one_line(exc)}", "worker"))
            yield self._tasks.pop(fut), outcome  # the future and its result are let go

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def make_pool(workers: int, executor: Executor, dask: str | None,
              dask_options: dict[str, Any] | None, function: TaskFunction) -> TaskPool:
    """The executor for ``function``: Dask when ``dask`` is given, else this process
    (``workers == 1``) or a pool of ``workers`` ``executor`` ("processes", "threads").

    Parameters
    ----------
    workers : int
        Workers wanted (the local cluster's size with ``dask="local"``).
    executor : {"processes", "threads"}
        The local pool's kind.
    dask : str or None
        ``"local"`` or a scheduler address; None for a local executor.
    dask_options : dict or None
        Extra ``LocalCluster`` arguments.
    function : callable
        The module-level function ``function(spec) -> dict`` each task runs.

    Returns
    -------
    TaskPool

    Raises
    ------
    BadOption
        A Dask cluster cannot be used (see :class:`~specscope.compute.batch.cluster.DaskPool`).
    """
    if dask is not None:
        return DaskPool(dask, workers, dict(dask_options or {}), function)
    if workers == 1:
        return Inline(function)
    return Futures(workers, executor, function)
