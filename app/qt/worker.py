"""The compute thread: one background thread runs every heavy job.

Jobs are submitted from the GUI thread with a *kind*; a newer job of the same
kind supersedes the older one (a pending one is dropped, a running one is
asked to cancel).  A job is a callable taking a :class:`TaskControl`, through
which it reports progress (throttled) and checks for cancellation between
chunks.  Results, errors and progress come back as Qt signals, delivered on
the GUI thread, and to the :class:`JobCallbacks` given with the job; the job
itself never touches a Qt object.  A failure comes back as a :class:`JobError`:
the exception itself (the GUI chooses what to do from its type and fields, e.g.
a :class:`~specscope.compute.errors.MissingOption` opens a chooser) and the
one line a person reads.

Every submitted job ends with exactly one of ``finished``, ``failed`` or
``cancelled``.  The worker counts the jobs that have not ended on the GUI
thread, from those signals, so :meth:`ComputeWorker.active` and the ``idle``
signal say exactly what the person should see: a progress bar while a job is
queued or running, none once the last one has ended.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
import traceback
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from PyQt6.QtCore import QObject, QThread, pyqtSignal
from specscope.compute.errors import Cancelled, SpecscopeError
from specscope.compute.operators import Profile, profile, watch

PROGRESS_INTERVAL_S = 0.05


class TaskControl:
    """Handed to a running job: progress reporting and cancellation."""

    def __init__(self, job: Job, emit_progress: Callable[[int, str, float], None],
                 emit_partial: Callable[[int, str, object], None] | None = None) -> None:
        self._job = job
        self._event = threading.Event()
        self._emit = emit_progress
        self._emit_partial = emit_partial
        self._last = 0.0

    def cancel(self) -> None:
        self._event.set()

    def cancelled(self) -> bool:
        """True once a newer job of the same kind, or the user, asked to stop."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when cancellation was asked for."""
        if self._event.is_set():
            raise Cancelled()

    def partial(self, value: object) -> None:
        """Hand an intermediate result (e.g. a coarse preview) to the GUI."""
        if self._emit_partial is not None and not self._event.is_set():
            self._emit_partial(self._job.id, self._job.kind, value)

    def progress(self, fraction: float) -> None:
        """Report progress in [0, 1]; throttled to a few signals per second."""
        now = time.monotonic()
        if fraction >= 1.0 or now - self._last >= PROGRESS_INTERVAL_S:
            self._last = now
            self._emit(self._job.id, self._job.kind, float(min(max(fraction, 0.0), 1.0)))


@dataclass(frozen=True)
class Job:
    """An immutable request: what to run, of which kind, under which id."""

    id: int
    kind: str
    fn: Callable[[TaskControl], Any] = field(repr=False)
    label: str = ""


@dataclass(frozen=True)
class JobCallbacks:
    """What to call on the GUI thread when a job ends or hands over a partial result.

    Each is optional: ``done(JobResult)``, ``partial(value)``, ``failed(JobError)``,
    ``cancelled()``.
    """

    done: Callable[[JobResult], None] | None = None
    partial: Callable[[object], None] | None = None
    failed: Callable[[JobError], None] | None = None
    cancelled: Callable[[], None] | None = None


@dataclass(frozen=True)
class JobResult:
    """What a finished job returned, and where and how long it ran."""

    value: Any
    thread_id: int
    thread_name: str
    seconds: float
    #: operator calls the job made (name, backend, count, time)
    profile: Profile | None = None


@dataclass(frozen=True)
class JobError:
    """Why a job failed: the exception raised and the one line a person reads.

    ``exception`` is a :class:`~specscope.compute.errors.SpecscopeError` for bad
    input (branch on its type and fields, never on ``message``), a
    :class:`MemoryError`, or another exception: a bug, whose traceback went to
    stderr.  Its traceback is dropped, so the frames of the job are not kept.
    """

    message: str
    exception: BaseException

    def __str__(self) -> str:
        return self.message

    @property
    def is_bug(self) -> bool:
        """Whether the job failed on a bug rather than on its input or memory."""
        return not isinstance(self.exception, (SpecscopeError, MemoryError))


class ComputeWorker(QObject):
    """Owner of the compute thread.

    Signals (all delivered on the GUI thread)
    -------
    started(int, str, str)       job id, kind, label
    progress(int, str, float)    job id, kind, fraction done
    partial(int, str, object)    job id, kind, an intermediate result
    finished(int, str, object)   job id, kind, :class:`JobResult`
    failed(int, str, object)     job id, kind, :class:`JobError`
    cancelled(int, str)          job id, kind
    idle()                       the last job that had not ended has ended
    slow(int, str, str)          job id, kind, "plugin op x.y running for 30 s…" while
                                 an operator call of the job runs past the threshold
                                 (``SPECSCOPE_SLOW_OP_S``), every second; "" when it ended

    A job's plugin calls see its Cancel through
    :func:`specscope.compute.operators.cancelled`.
    """

    started = pyqtSignal(int, str, str)
    progress = pyqtSignal(int, str, float)
    partial = pyqtSignal(int, str, object)
    finished = pyqtSignal(int, str, object)
    failed = pyqtSignal(int, str, object)
    cancelled = pyqtSignal(int, str)
    idle = pyqtSignal()
    slow = pyqtSignal(int, str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ids = itertools.count(1)
        self._cond = threading.Condition()
        self._pending: dict[str, Job] = {}
        self._running: tuple[Job, TaskControl] | None = None
        self._stopping = False
        self._callbacks: dict[int, JobCallbacks] = {}  # GUI thread only
        self._active: set[int] = set()  # GUI thread only: submitted, not yet ended
        # connected first, so a job's own callbacks run before other listeners
        self.finished.connect(self._call_done)
        self.failed.connect(self._call_failed)
        self.cancelled.connect(self._call_cancelled)
        self.partial.connect(self._call_partial)
        # after the callbacks: a job they submit keeps the worker from going idle
        for signal in (self.finished, self.failed, self.cancelled):
            signal.connect(self._ended)
        self._thread = _Loop(self)
        self._thread.setObjectName("specscope-compute")
        self._compute_tid: int | None = None
        self._dog = watch.Watchdog(self._report_slow).start()
        self._thread.start()

    def _report_slow(self, calls: list[watch.LongCall]) -> None:
        """Watchdog thread: the long call of the running job, as the ``slow`` signal."""
        running = self._running
        if running is None:
            return
        job, control = running
        mine = [c for c in calls if c.thread_id == self._compute_tid]
        text = mine[0].text if mine else ""
        if text and control.cancelled():
            text += " (cancelled; waiting for it to stop)"
        self.slow.emit(job.id, job.kind, text)

    # -- GUI-thread API ------------------------------------------------------
    def submit(self, kind: str, fn: Callable[[TaskControl], Any], label: str = "",
               callbacks: JobCallbacks | None = None) -> int:
        """Queue a job; returns its id.  Supersedes earlier jobs of the same kind.

        Parameters
        ----------
        kind : str
            Jobs of one kind supersede each other.
        fn : callable
            The job, run in the compute thread with a :class:`TaskControl`.
        label : str
            What the progress bar says.
        callbacks : JobCallbacks, optional
            Called on the GUI thread for this job's result, partial results,
            failure or cancellation.
        """
        job = Job(next(self._ids), kind, fn, label)
        self._active.add(job.id)
        if callbacks is not None:
            self._callbacks[job.id] = callbacks
        with self._cond:
            old = self._pending.pop(kind, None)
            if self._running is not None and self._running[0].kind == kind:
                self._running[1].cancel()
            self._pending[kind] = job
            self._cond.notify()
        if old is not None:
            self.cancelled.emit(old.id, old.kind)
        return job.id

    def cancel(self, kind: str | None = None) -> None:
        """Cancel pending and running jobs of ``kind`` (all kinds when None)."""
        with self._cond:
            dropped = [j for k, j in self._pending.items() if kind is None or k == kind]
            for j in dropped:
                del self._pending[j.kind]
            if self._running is not None and (kind is None or self._running[0].kind == kind):
                self._running[1].cancel()
        for j in dropped:
            self.cancelled.emit(j.id, j.kind)

    def is_busy(self, ignore: Collection[str] = ()) -> bool:
        """Whether a job is queued or running, as the compute thread sees it now; jobs of
        the kinds in ``ignore`` (idle-time work) do not count."""
        with self._cond:
            running = self._running is not None and self._running[0].kind not in ignore
            return running or any(kind not in ignore for kind in self._pending)

    def active(self) -> int:
        """Jobs submitted whose end has not reached the GUI thread yet (GUI thread).

        Unlike :meth:`is_busy`, this agrees with the signals already delivered:
        it is 0 exactly when every job's ``finished``, ``failed`` or
        ``cancelled`` has been handled, and ``idle`` is emitted when it drops to 0.
        """
        return len(self._active)

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Cancel everything and wait for the thread to end (call on quit)."""
        with self._cond:
            self._stopping = True
            self._pending.clear()
            if self._running is not None:
                self._running[1].cancel()
            self._cond.notify()
        self._dog.stop()
        self._thread.wait(int(timeout_s * 1000))
        # results still queued for the GUI thread reach no callback of a closed window
        self._callbacks.clear()
        self._active.clear()

    def _ended(self, job_id: int, kind: str, *_: object) -> None:
        if job_id in self._active:
            self._active.discard(job_id)
            if not self._active:
                self.idle.emit()

    def _call_done(self, job_id: int, kind: str, result: object) -> None:
        cb = self._callbacks.pop(job_id, None)
        if cb is not None and cb.done is not None:
            cb.done(result)

    def _call_failed(self, job_id: int, kind: str, error: JobError) -> None:
        cb = self._callbacks.pop(job_id, None)
        if cb is not None and cb.failed is not None:
            cb.failed(error)

    def _call_cancelled(self, job_id: int, kind: str) -> None:
        cb = self._callbacks.pop(job_id, None)
        if cb is not None and cb.cancelled is not None:
            cb.cancelled()

    def _call_partial(self, job_id: int, kind: str, value: object) -> None:
        cb = self._callbacks.get(job_id)
        if cb is not None and cb.partial is not None:
            cb.partial(value)

    # -- compute-thread side -----------------------------------------------
    def _next_job(self) -> tuple[Job, TaskControl] | None:
        with self._cond:
            while not self._pending and not self._stopping:
                self._cond.wait()
            if self._stopping:
                return None
            # oldest pending kind first, so one busy kind cannot starve another
            job = min(self._pending.values(), key=lambda j: j.id)
            del self._pending[job.kind]
            control = TaskControl(job, self.progress.emit, self.partial.emit)
            self._running = (job, control)
            return job, control

    def _run_one(self, job: Job, control: TaskControl) -> None:
        self.started.emit(job.id, job.kind, job.label)
        t0 = time.perf_counter()
        prof = None
        self._compute_tid = threading.get_ident()
        try:
            # what the profiler panel shows; the job's Cancel reaches plugin calls
            with profile() as prof, watch.cancel_scope(control.cancelled):
                value = job.fn(control)
            control.check()
        except Cancelled:
            self.cancelled.emit(job.id, job.kind)
        except SpecscopeError as exc:
            self.failed.emit(job.id, job.kind, JobError(str(exc), exc.with_traceback(None)))
        except MemoryError as exc:
            self.failed.emit(job.id, job.kind, JobError(f"{job.label or job.kind}: out of memory",
                                                        exc.with_traceback(None)))
        except Exception as exc:  # noqa: BLE001 - a bug: report it, keep the thread alive
            traceback.print_exc(file=sys.stderr)
            first = str(exc).splitlines()[0] if str(exc) else ""
            self.failed.emit(job.id, job.kind, JobError(
                f"{job.label or job.kind} failed: {type(exc).__name__}: {first}",
                exc.with_traceback(None)))
        else:
            self.finished.emit(job.id, job.kind, JobResult(
                value, threading.get_ident(), threading.current_thread().name,
                time.perf_counter() - t0, prof.copy() if prof is not None else None))
        finally:
            with self._cond:
                self._running = None


class _Loop(QThread):
    def __init__(self, worker: ComputeWorker) -> None:
        super().__init__()
        self._worker = worker

    def run(self) -> None:
        single_threaded_blas()
        while (item := self._worker._next_job()) is not None:
            self._worker._run_one(*item)


def single_threaded_blas() -> None:
    """Matrix products of the app's jobs on one thread (the compute thread).

    A threaded BLAS spins its threads on every core while it waits for work;
    on a machine with few cores that takes the GUI thread's core for hundreds
    of milliseconds at a time (switching to the Constant-Q view stalled the GUI
    1.6 s on two busy cores), and makes the products slower, not faster.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an install without it: BLAS as it comes
        return
    threadpool_limits(limits=1, user_api="blas")
