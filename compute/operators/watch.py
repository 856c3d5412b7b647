"""Operator calls that run long: what runs for how long, and a cancellation a plugin can check.

A plugin operator that runs for minutes (or hangs) must not leave the person
looking at a silent command or a frozen status line.  Every plugin call runs
inside :func:`watching` (the plugin loader wraps it), which keeps a table of
the calls in progress, by thread; :func:`long_calls` lists those running
longer than a threshold (:func:`threshold_s`: 5 s, or the environment
variable ``SPECSCOPE_SLOW_OP_S``), each with a one-line :attr:`LongCall.text`
such as ``"plugin op x.y running for 30 s…"``.  A :class:`Watchdog` thread
hands that list to a reporter (the command line's progress line, the GUI
worker's ``slow`` signal) while such calls last; worker processes of a
command that asked for it (:func:`report_from_workers`) print their own as
lines on stderr (:class:`LineReport`).

Cancellation is cooperative: a long-running plugin calls :func:`cancelled` (or
:func:`check_cancelled`, which raises
:class:`~specscope.compute.errors.Cancelled`) between pieces of its work.  It
is true once the job running the call was asked to stop: the GUI worker's
Cancel (a check installed for the job's thread with :func:`cancel_scope`) or,
for the whole process, :func:`cancel_all` (the command line's Ctrl+C).
Nothing here imports Qt.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self

from ..errors import Cancelled

__all__ = [
    "DEFAULT_THRESHOLD_S",
    "REPORT_ENV",
    "LineReport",
    "LongCall",
    "Watchdog",
    "cancel_all",
    "cancel_scope",
    "cancelled",
    "check_cancelled",
    "long_calls",
    "report_from_workers",
    "reset_cancel",
    "running_calls",
    "threshold_s",
    "watching",
]

#: seconds after which an operator call reports itself
DEFAULT_THRESHOLD_S = 5.0

_lock = threading.Lock()
# thread id -> stack of (operator name, start time, kind) of the calls in progress
_calls: dict[int, list[tuple[str, float, str]]] = {}
_everything = threading.Event()  # cancel_all(): every call of the process
_scopes: dict[int, Callable[[], bool]] = {}  # thread id -> its job's cancellation check


def threshold_s() -> float:
    """Seconds after which a call reports itself (``SPECSCOPE_SLOW_OP_S``, default 5).

    Returns
    -------
    float
        The environment's value when it is a finite number >= 0, else
        :data:`DEFAULT_THRESHOLD_S`.
    """
    try:
        t = float(os.environ.get("SPECSCOPE_SLOW_OP_S", DEFAULT_THRESHOLD_S))
    except ValueError:
        return DEFAULT_THRESHOLD_S
    return t if math.isfinite(t) and t >= 0 else DEFAULT_THRESHOLD_S


@dataclass(frozen=True)
class LongCall:
    """An operator call in progress.

    Parameters
    ----------
    name : str
        The operator's name.
    seconds : float
        How long it has been running.
    thread_id : int
        The thread running it (``threading.get_ident``).
    kind : str
        What it is, at the front of :attr:`text`.
    """

    name: str
    seconds: float
    thread_id: int
    kind: str = "plugin op"

    @property
    def text(self) -> str:
        """One line: ``"plugin op x.y running for 30 s…"``."""
        return f"{self.kind} {self.name} running for {self.seconds:.0f} s\u2026"


@contextmanager
def watching(name: str, kind: str = "plugin op") -> Iterator[None]:
    """Count the block as a call of operator ``name`` in the table of running calls.

    A call of the same operator nested in it (a wrapper calling the
    implementation) is not counted twice.

    Parameters
    ----------
    name : str
        The operator's name.
    kind : str
        What the call is, for :attr:`LongCall.text`.

    Yields
    ------
    None
        The block runs as a watched call.
    """
    if _worker_dog is None and REPORT_ENV in os.environ:
        _start_worker_dog()
    tid = threading.get_ident()
    with _lock:
        stack = _calls.setdefault(tid, [])
        nested = bool(stack) and stack[-1][0] == name
        if not nested:
            stack.append((name, time.monotonic(), kind))
    try:
        yield
    finally:
        if not nested:
            with _lock:
                stack = _calls.get(tid)
                if stack:
                    stack.pop()
                    if not stack:
                        del _calls[tid]


def running_calls() -> list[LongCall]:
    """Every watched call in progress, the outermost of each thread, longest first.

    Returns
    -------
    list of LongCall
        With the seconds each has run so far.
    """
    now = time.monotonic()
    with _lock:
        out = [LongCall(s[0][0], now - s[0][1], tid, s[0][2]) for tid, s in _calls.items() if s]
    return sorted(out, key=lambda c: -c.seconds)


def long_calls(threshold: float | None = None) -> list[LongCall]:
    """The calls in progress for at least ``threshold`` s (default :func:`threshold_s`).

    Parameters
    ----------
    threshold : float, optional
        Seconds.

    Returns
    -------
    list of LongCall
        Longest first.
    """
    t = threshold_s() if threshold is None else float(threshold)
    return [c for c in running_calls() if c.seconds >= t]


# -- cancellation -----------------------------------------------------------------------


def cancelled() -> bool:
    """True once the job this thread runs (or the whole process) was asked to stop.

    A plugin operator that runs long calls it between pieces of its work and
    returns (or raises :class:`~specscope.compute.errors.Cancelled`) when it is true.

    Returns
    -------
    bool
        True after :func:`cancel_all`, or when the check of this thread's
        :func:`cancel_scope` says so.
    """
    if _everything.is_set():
        return True
    check = _scopes.get(threading.get_ident())
    return bool(check is not None and check())


def check_cancelled() -> None:
    """Raise :class:`~specscope.compute.errors.Cancelled` when :func:`cancelled` is true."""
    if cancelled():
        raise Cancelled()


@contextmanager
def cancel_scope(check: Callable[[], bool]) -> Iterator[None]:
    """Make :func:`cancelled` ask ``check`` in this thread for the block (a job's Cancel).

    Parameters
    ----------
    check : callable
        ``check() -> bool``: True once the job was asked to stop.

    Yields
    ------
    None
        The block runs with the check installed; the previous one comes back after.
    """
    tid = threading.get_ident()
    old = _scopes.get(tid)
    _scopes[tid] = check
    try:
        yield
    finally:
        if old is None:
            _scopes.pop(tid, None)
        else:
            _scopes[tid] = old


def cancel_all() -> None:
    """Ask every call of this process to stop (the command line's Ctrl+C)."""
    _everything.set()


def reset_cancel() -> None:
    """Forget :func:`cancel_all` (for a process that goes on, e.g. tests)."""
    _everything.clear()


# -- the watchdog -------------------------------------------------------------------------


class LineReport:
    """A reporter printing ``specscope: <text>`` lines at 1, 2, 4... times the threshold.

    Parameters
    ----------
    threshold : float
        The watchdog's threshold (the first line comes when a call passes it).
    stream : file, optional
        Where the lines go (stderr by default).
    """

    def __init__(self, threshold: float, stream: Any = None) -> None:
        self.threshold = max(float(threshold), 1e-3)
        self.stream = stream
        self._printed: dict[tuple[int, str], float] = {}

    def __call__(self, calls: list[LongCall]) -> None:
        out = self.stream if self.stream is not None else sys.stderr
        for c in calls:
            key = (c.thread_id, c.name)
            if c.seconds >= max(self.threshold, 2 * self._printed.get(key, 0.0)):
                self._printed[key] = c.seconds
                print(f"specscope: {c.text}", file=out, flush=True)
        if not calls:
            self._printed.clear()


#: environment variable naming the process whose command reports long calls; the
#: worker processes it starts (which inherit it) report theirs as lines on stderr
REPORT_ENV = "SPECSCOPE_WATCH_REPORTER"
_worker_dog: Watchdog | None = None


def report_from_workers() -> None:
    """Make worker processes started from now on report their long calls on stderr."""
    os.environ[REPORT_ENV] = str(os.getpid())


def _start_worker_dog() -> None:
    """In a worker process of a reporting command: a watchdog printing lines (once)."""
    global _worker_dog
    owner = os.environ.get(REPORT_ENV)
    if _worker_dog is not None or not owner or owner == str(os.getpid()):
        return
    with _lock:
        if _worker_dog is None:
            t = threshold_s()
            _worker_dog = Watchdog(LineReport(t), threshold=t).start()


class Watchdog:
    """A thread handing the calls over the threshold to ``report``, while they last.

    ``report(calls)`` is called from the watchdog's thread every ``interval``
    seconds while some call runs longer than ``threshold`` s, and once with an
    empty list when the last of them ended.  It must be quick and thread-safe
    (print a line, emit a Qt signal).

    Parameters
    ----------
    report : callable
        Receives a list of :class:`LongCall`, longest first.
    threshold : float, optional
        Seconds (default :func:`threshold_s`).
    interval : float
        Seconds between reports.
    """

    def __init__(self, report: Callable[[list[LongCall]], None], *,
                 threshold: float | None = None, interval: float = 1.0) -> None:
        self.report = report
        self.threshold = threshold_s() if threshold is None else float(threshold)
        self.interval = float(interval)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Start watching (returns at once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="specscope-op-watchdog")
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()
        t, self._thread = self._thread, None
        if t is not None and t is not threading.current_thread():
            t.join(2.0)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        shown = False
        tick = min(self.interval, max(0.05, self.threshold / 4))
        last = 0.0
        while not self._stop.wait(tick):
            calls = long_calls(self.threshold)
            now = time.monotonic()
            if calls and (not shown or now - last >= self.interval):
                shown, last = True, now
                self._call(calls)
            elif not calls and shown:
                shown = False
                self._call([])

    def _call(self, calls: list[LongCall]) -> None:
        with contextlib.suppress(Exception):  # a reporter's failure must not end the watch
            self.report(calls)
