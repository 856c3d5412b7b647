"""The Dask executor of :mod:`specscope.compute.batch.process`: a LocalCluster or a running scheduler.

Tasks carry absolute paths (a worker's working directory is its own) and small
specs; a task's result is a small dict, never the data: each worker writes its
output (or part file) atomically on the shared filesystem.  Before the first
task every worker imports the library and loads the operators once
(:func:`warm`, through ``Client.run``), so no task pays for it; workers started
with ``--preload specscope.compute.batch.cluster`` do that as they start
(:func:`dask_setup`), before any run.

The cluster is described from the scheduler: :attr:`DaskPool.n_workers` and
:attr:`DaskPool.n_threads` are what it has registered, not what was asked for.
When a worker dies, the scheduler runs its tasks again on another worker;
:meth:`DaskPool.retried` names the tasks that were re-run.  When the scheduler
goes away, the unfinished tasks fail with one line each.

Nothing here imports Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import io
import operator
import os
import pickle
import shutil
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

from ..errors import BadOption, InputError, RecordingError
from ..types import WriteOn
from .fetch import WorkerLost, check_write_on, fetch_outputs, workers_see, write_here
from .tasks import (
    Task,
    TaskFailure,
    TaskFunction,
    TaskLost,
    TaskOutcome,
    TaskResult,
    execute,
    one_line,
)

__all__ = ["DaskPool", "bundle_folder", "dask_setup", "install_plugin_folders", "plugin_copy",
           "still_wanted", "warm", "worker_name"]

_PATH_KEYS = ("path", "out", "part_path")


def warm(module: str) -> dict[str, Any]:
    """Import ``module`` (the tasks') and load the operators in this (worker) process.

    Parameters
    ----------
    module : str
        The module of the tasks, e.g. ``"specscope.compute.batch.process"``.

    Returns
    -------
    dict
        ``pid``, ``import_s`` and ``operators_s`` (seconds spent importing and
        loading the operators) and ``operators`` (how many were loaded).
    """
    import importlib

    t0 = time.perf_counter()
    importlib.import_module(module)
    for lazy in ("h5py", "soundfile", "scipy.signal", "scipy.fft"):  # imported by a first task
        importlib.import_module(lazy)
    from ..operators import dispatch

    t1 = time.perf_counter()
    n_ops = len(dispatch.list_operators())  # built-ins and discovered plugins, once
    return {"pid": os.getpid(), "import_s": t1 - t0,
            "operators_s": time.perf_counter() - t1, "operators": n_ops}


# -- plugin folders through Dask --------------------------------------------------------

#: on a worker: plugin folder of the submitting machine -> its unpacked copy here
_copies: dict[str, str] = {}


def _digest_files(folder: Path) -> tuple[str, list[tuple[str, bytes]]]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and not p.name.endswith(".pyc"))
    h = hashlib.sha256()
    out = []
    for p in files:
        rel = p.relative_to(folder).as_posix()
        data = p.read_bytes()
        h.update(rel.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
        out.append((rel, data))
    return h.hexdigest(), out


def bundle_folder(folder: str | os.PathLike[str]) -> tuple[str, bytes]:
    """A plugin folder packed to be shipped to Dask workers.

    Parameters
    ----------
    folder : path-like or str
        The plugin folder.

    Returns
    -------
    digest : str
        SHA-256 (hex) of its files' relative names and contents.
    data : bytes
        The files as a zip archive (``__pycache__`` and ``.pyc`` files left out).
    """
    digest, files = _digest_files(Path(folder))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in files:
            z.writestr(rel, data)
    return digest, buf.getvalue()


def install_plugin_folders(bundles: list[tuple[str, str, bytes]], root: str) -> dict[str, str]:
    """(On a worker) unpack each ``(original path, digest, zip)`` under ``root/<digest>``.

    A folder already unpacked is kept when its files still hash to the digest;
    a new one is unpacked beside it and renamed into place (whole or not at
    all), and checked against the digest.  Tasks then use the copy in place of
    the submitting machine's path (:func:`plugin_copy`).

    Parameters
    ----------
    bundles : list of (str, str, bytes)
        The original folder path, the digest and the zip of :func:`bundle_folder`.
    root : str
        The folder the copies are unpacked under.

    Returns
    -------
    dict of str to str
        Every original folder known to this worker -> its unpacked copy.

    Raises
    ------
    InputError
        An archive names a file outside its folder, or its copy does not match its
        SHA-256.
    """
    for original, digest, data in bundles:
        dest = Path(root) / digest / (Path(original).name or "plugins")
        if not (dest.is_dir() and _digest_files(dest)[0] == digest):
            Path(root).mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".{digest[:12]}.", suffix=".partial"))
            try:
                unpacked = tmp / dest.name
                with zipfile.ZipFile(io.BytesIO(data)) as z:
                    for name in z.namelist():
                        target = (unpacked / name).resolve()
                        if not target.is_relative_to(unpacked.resolve()):
                            raise InputError(f"plugin folder {original}: a file outside it "
                                             f"({name})")
                    z.extractall(unpacked)
                if _digest_files(unpacked)[0] != digest:
                    raise InputError(f"plugin folder {original}: its copy does not match "
                                     "its SHA-256")
                dest.parent.mkdir(parents=True, exist_ok=True)
                if dest.is_dir():
                    shutil.rmtree(dest)
                os.replace(unpacked, dest)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        _copies[original] = str(dest)
    return dict(_copies)


def plugin_copy(path: str) -> str:
    """The copy of a shipped plugin folder on this worker, or ``path`` itself.

    Parameters
    ----------
    path : str
        A plugin folder of the submitting machine.

    Returns
    -------
    str
        Its unpacked copy here (:func:`install_plugin_folders`), else ``path``.
    """
    return _copies.get(str(path), str(path))


def _plugin_class() -> type:
    from distributed.diagnostics.plugin import WorkerPlugin

    class PluginFolders(WorkerPlugin):
        """Unpacks the run's plugin folders on every worker, those joining later too."""

        def __init__(self, bundles: list[tuple[str, str, bytes]]) -> None:
            self.bundles = bundles

        def setup(self, worker: Any) -> None:
            install_plugin_folders(self.bundles, str(Path(worker.local_directory) /
                                                     "specscope-plugins"))

    return PluginFolders


def dask_setup(worker: Any = None) -> None:
    """Warm a worker as it starts: ``dask worker ADDRESS --preload specscope.compute.batch.cluster``.

    Dask calls this hook of a ``--preload`` module when the worker starts, so
    the imports (seconds on a cold worker) are paid before the first run
    rather than inside it.

    Parameters
    ----------
    worker : distributed.Worker, optional
        The starting worker, as Dask passes it (not used).
    """
    warm(__package__ + ".process")


def worker_name() -> str:
    """Where the calling code runs, for a task's result.

    Returns
    -------
    str
        The Dask worker's name (its address when it has none), or ``pid N@host``
        outside a Dask worker.
    """
    import sys

    if "distributed" in sys.modules:
        try:
            from distributed import get_worker

            w = get_worker()
            return str(w.name if w.name is not None else w.address)
        except ValueError:
            pass
    from ..files import owner_tag

    return f"pid {owner_tag()}"


def _absolute(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    for k in _PATH_KEYS:
        if k in out and out[k] is not None and "://" not in str(out[k]):
            out[k] = os.path.abspath(out[k])
    return out


def _runs(story: list[tuple]) -> int:
    """How many times the scheduler sent a task to a worker, from ``Client.story``."""
    return sum(1 for e in story if len(e) > 3 and e[0] == "scheduler" and e[3] == "processing")


def still_wanted() -> bool:
    """Whether the task this Dask worker thread runs is still wanted.

    Returns
    -------
    bool
        False once the client cancelled the task (or the worker released it);
        True outside a Dask task.
    """
    import sys

    if "distributed" not in sys.modules:
        return True
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        w = get_worker()
        key = getattr(thread_state, "key", None)
    except (ValueError, ImportError):
        return True
    if key is None:
        return True
    ts = w.state.tasks.get(key)
    return ts is not None and ts.state not in ("cancelled", "released", "forgotten")


def _executing() -> int:
    """(On a worker) how many specscope tasks it is running."""
    from distributed import get_worker

    return sum(1 for ts in get_worker().state.executing
               if str(ts.key).startswith("specscope-"))


#: how often :meth:`DaskPool.results` looks for finished futures (s)
POLL_S = 0.05
#: how often the watchdog asks the scheduler for a sign of life, and how long it waits (s)
HEARTBEAT_S = 1.0
SCHEDULER_TIMEOUT_S = 2.0


class _SchedulerLost(Exception):
    """The scheduler stopped answering while a call to it was waiting."""


class _Watchdog:
    """A thread that asks the scheduler for its identity every ``HEARTBEAT_S``.

    ``silent`` becomes the seconds without an answer once a request fails or
    takes longer than ``SCHEDULER_TIMEOUT_S`` (a scheduler killed, its machine
    gone, the network cut: the kernel's TCP timeouts would take minutes).
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self._stop = threading.Event()
        self.silent: float | None = None
        self._thread = threading.Thread(target=self._run, name="specscope-dask-watchdog",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self._client.sync(self._client.scheduler.identity, n_workers=0,
                                  callback_timeout=SCHEDULER_TIMEOUT_S)
                last = time.monotonic()
            except Exception:  # noqa: BLE001 - any failure to answer counts
                if not self._stop.is_set():
                    self.silent = time.monotonic() - last
                return


def _wait_any(pending: list[Any]) -> None:
    """Return when one of ``pending`` is done, or after ``POLL_S`` at most.

    Woken by the future itself (a sleep between polls let a finished task wait up
    to a poll, the run's last one too); bounded, so a lost scheduler is noticed.
    """
    from distributed import wait

    with contextlib.suppress(Exception):  # nothing done within POLL_S, or a lost client
        wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")


class DaskPool:
    """Submit batch tasks to Dask: a ``LocalCluster`` or a running scheduler.

    Connects, counts the workers the scheduler has registered, ships the plugin
    folders and warms every worker (:func:`warm`) before the first task.

    Parameters
    ----------
    address : str
        ``"local"`` to start a ``distributed.LocalCluster``, or a scheduler address
        such as ``"tcp://host:8786"``.
    workers : int
        Workers of a local cluster (one thread each); ignored for a scheduler.
    options : dict
        Extra ``LocalCluster`` arguments; ``timeout`` (seconds, default 10) is the
        time allowed to reach a scheduler.
    function : callable
        The module-level function ``function(spec) -> dict`` each task runs.

    Raises
    ------
    BadOption
        dask.distributed is not installed, the scheduler is out of reach, or it has
        no workers.
    """

    def __init__(self, address: str, workers: int, options: dict[str, Any],
                 function: TaskFunction) -> None:
        try:
            import distributed
        except ImportError:
            raise BadOption("dask", address, "needs dask.distributed: pip install "
                            "'specscope[dask]'") from None
        self._distributed = distributed
        self._function = function
        self._task_bytes = pickle.dumps(functools.partial(execute, function, worker=worker_name))
        self.cluster = None
        options = dict(options)
        timeout = options.pop("timeout", 10)
        if address == "local":
            import logging

            kw = {"n_workers": workers, "threads_per_worker": 1, "processes": True,
                  "dashboard_address": None, "silence_logs": logging.ERROR}
            kw.update(options)
            self.cluster = distributed.LocalCluster(**kw)
            self.client = distributed.Client(self.cluster)
            where = "dask LocalCluster"
        else:
            try:
                self.client = distributed.Client(address, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise BadOption("dask", address, "cannot reach the scheduler "
                                f"({one_line(exc)})") from None
            where = f"dask {address}"
        self.address = str(self.client.scheduler.address)
        self.timings: dict[str, float] = {}
        t0 = time.perf_counter()
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        if not info:
            self.close()
            raise BadOption("dask", address, "the scheduler has no workers")
        self.n_workers = len(info)
        self.n_threads = sum(int(w.get("nthreads", 1)) for w in info.values())
        self.timings["scheduler_info_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.plugin_folders = self._ship_plugins()
        self.timings["plugins_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.warmup = self.client.run(warm, function.__module__)
        self.timings["warm_s"] = time.perf_counter() - t0
        self.name = where
        self._tasks: dict[str, Task] = {}
        self._futures: list[Any] = []
        self._retried: dict[str, int] = {}
        self._names = sorted(str(w.get("name", a)) for a, w in info.items())
        self._spec_bytes = self._result_bytes = 0
        #: who writes the outputs: "workers" (in place) or "client" (fetched back)
        self.write_on = "workers"
        self._again: set[str] = set()
        #: set when the run stops (Ctrl+C, a lost scheduler): a fetch still going discards
        #: its file rather than publish it after the run has ended
        self._stopping = threading.Event()

    def prepare_outputs(self, folder: Path, write_on: WriteOn = "auto") -> str:
        """Choose who writes into ``folder`` (``auto``: the workers when they all see it).

        With ``"client"`` each task writes into a private folder of its worker
        and the client fetches the files (:mod:`~specscope.compute.batch.fetch`).
        """
        check_write_on(write_on)
        t0 = time.perf_counter()
        if write_on == "auto":
            write_on = "workers" if workers_see(self.client, Path(folder)) else "client"
        self.timings["probe_s"] = time.perf_counter() - t0
        self.write_on = write_on
        return write_on

    def _ship_plugins(self) -> dict[str, str]:
        """Send this machine's plugin folders to the workers (a worker plugin); digests."""
        from ..extensions import search_paths

        bundles = []
        for folder in search_paths():
            if folder.is_dir():
                digest, data = bundle_folder(folder)
                bundles.append((str(folder), digest, data))
        if bundles:
            name = "specscope-plugins-" + hashlib.sha256(
                "".join(d for _, d, _ in bundles).encode()).hexdigest()[:16]
            self.client.register_plugin(_plugin_class()(bundles), name=name)
        return {o: d for o, d, _ in bundles}

    def info(self) -> dict[str, Any]:
        """The cluster and what a run cost on it (``specscope run --json``: ``cluster``)."""
        return {"scheduler": self.address, "workers": self._names,
                "threads": self.n_threads, "warm_s": round(self.timings["warm_s"], 4),
                "worker_import_s": round(max((w["import_s"] for w in self.warmup.values()),
                                             default=0.0), 4),
                "plugin_folders": self.plugin_folders,
                "writes": self.write_on,
                "largest_task_bytes": self._spec_bytes,
                "largest_result_bytes": self._result_bytes}

    def submit(self, task: Task) -> Any:
        spec = task.spec
        sent = _absolute(spec)
        named = spec.get("part_path") or spec.get("out") or spec.get("file") or "task"
        key = (f"specscope-{Path(named).name}"
               f"-{len(self._futures)}-{os.getpid()}-{id(self)}")
        function = self._task_bytes
        if self.write_on == "client":  # written in the worker's own folder, fetched back
            sent["fetch_key"] = key
            function = pickle.dumps(functools.partial(
                execute, functools.partial(write_here, self._function), worker=worker_name))
        shipped = pickle.dumps(Task(task.input, sent, task.part))
        self._spec_bytes = max(self._spec_bytes, len(shipped))
        # the function and its task travel as bytes, unpickled on the worker only: the
        # scheduler never imports this library (it need not have it; a cold import there
        # cost seconds in the first run)
        graph = {key: (operator.call, (pickle.loads, function), (pickle.loads, shipped))}
        fut = self.client.get(graph, [key], sync=False)[0]
        self._tasks[fut.key] = task
        self._futures.append(fut)
        return fut

    def _lost(self, watchdog: _Watchdog) -> TaskLost | None:
        """Why the scheduler counts as gone, or None while it answers."""
        if self.client.status in ("connecting", "closing", "closed", "failed"):
            return TaskLost(f"unfinished: the connection to the scheduler {self.address} "
                            "was lost", "scheduler")
        if watchdog.silent is not None:
            return TaskLost(f"unfinished: the connection to the scheduler {self.address} was "
                            f"lost (no answer for {watchdog.silent:.1f} s)", "scheduler")
        return None

    def _outcome(self, fut: Any) -> TaskOutcome:
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - a lost worker or scheduler fails the task
            # distributed's cancellation says why in a field (``reason``), a code
            reason = str(getattr(exc, "reason", "") or "")
            if reason == "scheduler-connection-lost" or self.client.status != "running":
                error = TaskLost(f"unfinished: the connection to the scheduler {self.address} "
                                 "was lost", "scheduler")
            elif fut.status == "cancelled" or isinstance(exc, (asyncio.CancelledError,
                                                               futures.CancelledError)):
                error = TaskLost("unfinished: cancelled on the cluster "
                                 f"({reason or 'no reason given'})", "cancelled")
            else:
                error = TaskLost(f"worker failed: {one_line(exc)}", "worker")
            return TaskFailure(error)

    def results(self, handles: list[Any]) -> Iterator[tuple[Task, TaskOutcome]]:
        """``(task, outcome)`` as tasks end; every unfinished task at once when the scheduler goes.

        Futures are polled (every ``POLL_S``) rather than awaited, and a watchdog
        thread asks the scheduler for a sign of life every ``HEARTBEAT_S``: a
        scheduler that stops answering for ``SCHEDULER_TIMEOUT_S`` (or whose
        connection closes) ends the run within about 3 s, each unfinished task
        with one line.
        """
        pending = list(handles)
        watchdog = _Watchdog(self.client)
        watchdog.start()
        try:
            while pending:
                lost = self._lost(watchdog)
                if lost is not None:
                    for fut in pending:
                        yield self._tasks[fut.key], TaskFailure(lost)
                    return
                done = [f for f in pending if f.done()]
                if not done:
                    _wait_any(pending)
                    continue
                for fut in done:
                    try:
                        res, again = self._bounded(watchdog, lambda f=fut: self._use(
                            f, self._outcome(f)))
                    except _SchedulerLost:
                        break  # the next pass reports every pending task
                    pending.remove(fut)
                    if again is not None:
                        pending.append(again)
                        continue
                    yield self._tasks[fut.key], res
        finally:
            watchdog.stop()

    def _bounded(self, watchdog: _Watchdog, call: Callable[[], Any]) -> Any:
        """``call()`` in a thread of its own, given up once the scheduler counts as lost.

        A call to a scheduler that stopped answering (a result, a task's story, a
        piece of an output) would otherwise wait without end.
        """
        box: dict[str, Any] = {}
        finished = threading.Event()

        def run() -> None:
            try:
                box["value"] = call()
            except BaseException as exc:  # noqa: BLE001 - raised again below
                box["error"] = exc
            finally:
                finished.set()

        threading.Thread(target=run, name="specscope-dask-call", daemon=True).start()
        try:
            while not finished.wait(POLL_S):
                if self._lost(watchdog) is not None:
                    raise _SchedulerLost
        except BaseException:
            self._stopping.set()
            raise
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _use(self, fut: Any, res: TaskOutcome) -> tuple[TaskOutcome, Any]:
        """The outcome, its files fetched from the worker; or a resubmitted future for it."""
        task = self._tasks[fut.key]
        spec = task.spec
        self._result_bytes = max(self._result_bytes, len(pickle.dumps(res)))
        fetch = res.value.pop("fetch", None) if isinstance(res, TaskResult) else None
        if fetch is not None:
            try:
                fetch_outputs(self.client, spec, fetch, stop=self._stopping.is_set)
            except RecordingError as exc:
                key = spec.get("part_path") or spec["out"]
                if (isinstance(exc, WorkerLost) and key not in self._again
                        and self.client.status == "running"):
                    # the worker went away with the files: the task runs once more
                    self._again.add(key)
                    self._retried[task.input] = self._retried.get(task.input, 0) + 1
                    fut.release()
                    return res, self.submit(task)
                res = TaskFailure(exc, res.seconds, res.worker)
        if self.client.status == "running":
            with contextlib.suppress(Exception):  # the scheduler may be gone
                # the scheduler's own log of the task (no code of ours runs there)
                if _runs(self.client.story(fut.key, on_error="ignore")) > 1:
                    self._retried[task.input] = self._retried.get(task.input, 0) + 1
        # released at once: a result the scheduler no longer holds is never computed
        # again (a lost worker held it), so nothing is rewritten after it was used
        fut.release()
        return res, None

    def retried(self) -> dict[str, int]:
        """Per input path: its tasks the scheduler sent to a worker again (one was lost)."""
        return dict(self._retried)

    def cancel(self, wait_s: float = 30.0) -> None:
        """Cancel every task of this run; wait until the running ones have stopped.

        A running task checks :func:`still_wanted` at each block and stops (its
        atomic writer removes its temporary file), so nothing is published after
        the run has ended.
        """
        self._stopping.set()
        with contextlib.suppress(Exception):  # the scheduler may be gone already
            self.client.cancel(self._futures, force=True)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if not any(self.client.run(_executing, wait=True).values()):
                    break
                time.sleep(0.05)

    def close(self) -> None:
        import logging

        self._stopping.set()

        # a client still trying to reconnect to a lost scheduler logs the cancelled attempt
        # as an error with a traceback; the run has already said, one line per input
        quiet = self.client.status != "running"
        loggers = [logging.getLogger(n) for n in ("distributed.client", "distributed.utils",
                                                  "distributed.core")]
        levels = [lg.level for lg in loggers]
        if quiet:
            for lg in loggers:
                lg.setLevel(logging.CRITICAL)
        try:
            with contextlib.suppress(Exception):  # the scheduler may be gone already
                self.client.close(timeout=1 if quiet else 5)
        finally:
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)
        if self.cluster is not None:
            self.cluster.close()
