"""The executors of the batch: this process, a local pool, or a Dask cluster.

:func:`make_pool` gives the one executor both batch modes run on: the
pipeline runs of :func:`specscope.compute.batch.process.run_batch` (one HDF5 file per
input) and the detector runs of
:func:`specscope.compute.batch.detect.run_detect` (one table of detections per
input).  A pool has ``submit(spec)``, ``results(handles)`` (``(spec, result)``
as tasks end), ``close()`` and ``name``; the Dask pool
(:class:`~specscope.compute.batch.cluster.DaskPool`) also ``cancel()``,
``retried()``, ``info()``, ``n_workers`` and ``n_threads``.  Tasks are
module-level functions ``task(spec) -> dict`` so that they pickle.

Nothing here imports Qt.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..types import Executor
from .cluster import DaskPool

__all__ = ["Futures", "Inline", "make_pool"]

Task = Callable[[dict[str, Any]], dict[str, Any]]


class Inline:
    """Tasks run one after another in this process, as their results are asked for.

    Parameters
    ----------
    task : callable
        ``task(spec) -> dict``, run for each submitted spec.
    """

    name = "inline"

    def __init__(self, task: Task) -> None:
        self._task = task

    def submit(self, spec: dict[str, Any]) -> Any:
        return spec

    def results(self, handles: list[Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
        for spec in handles:
            yield spec, self._task(spec)

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


class Futures:
    """A pool of ``workers`` processes (spawned) or threads.

    Parameters
    ----------
    workers : int
        Processes or threads in the pool.
    kind : {"processes", "threads"}
        The pool's kind; worker processes are spawned, never forked.
    task : callable
        The module-level function ``task(spec) -> dict`` (it pickles).
    one_line : callable
        ``one_line(exc) -> str``: words the failure of a worker that died.
    """

    def __init__(self, workers: int, kind: str, task: Task,
                 one_line: Callable[[BaseException], str]) -> None:
        import concurrent.futures as cf

        self._cf = cf
        self._task = task
        self._one_line = one_line
        if kind == "threads":
            self.pool: Any = cf.ThreadPoolExecutor(workers)
        else:
            import multiprocessing

            self.pool = cf.ProcessPoolExecutor(workers,
                                               mp_context=multiprocessing.get_context("spawn"))
        self.name = f"{workers} {kind}"
        self._processes = kind != "threads"
        self._specs: dict[Any, dict[str, Any]] = {}

    def submit(self, spec: dict[str, Any]) -> Any:
        with _sigint_ignored(self._processes):
            fut = self.pool.submit(self._task, spec)  # a worker process may start here
        self._specs[fut] = spec
        return fut

    def results(self, handles: list[Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
        for fut in self._cf.as_completed(handles):
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker fails its task only
                res = {"ok": False, "error": f"worker failed: {self._one_line(exc)}",
                       "seconds": 0.0}
            yield self._specs.pop(fut), res  # the future and its result are let go

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def make_pool(workers: int, executor: Executor, dask: str | None,
              dask_options: dict[str, Any] | None, task: Task,
              one_line: Callable[[BaseException], str]) -> Any:
    """The executor for ``task``: Dask when ``dask`` is given, else this process
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
    task : callable
        The module-level function ``task(spec) -> dict`` each task runs.
    one_line : callable
        ``one_line(exc) -> str``: words a failure that happened outside the task
        (a dead worker).

    Returns
    -------
    Inline, Futures or DaskPool
        An object with ``submit(spec)``, ``results(handles)``, ``close()`` and
        ``name``.

    Raises
    ------
    BadOption
        A Dask cluster cannot be used (see :class:`~specscope.compute.batch.cluster.DaskPool`).
    """
    if dask is not None:
        return DaskPool(dask, workers, dict(dask_options or {}), task, one_line)
    if workers == 1:
        return Inline(task)
    return Futures(workers, executor, task, one_line)
