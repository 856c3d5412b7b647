"""What the GUI tests share: one timeout, waiting for a condition, a real main window that is
opened, settled, and closed with a check that it left nothing behind.

The fixtures built on these (``make_window``, ``window``, ``opened``) are in conftest.py.
Every wait here waits for a condition and fails naming it; ``TIMEOUT_MS`` only bounds how
long a failing test takes.  ``SPECSCOPE_TEST_TIMEOUT_SCALE`` (a factor, default 1)
stretches it on a slow or busy machine.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self


def timeout_scale() -> float:
    """``$SPECSCOPE_TEST_TIMEOUT_SCALE`` as a factor (1 when unset)."""
    text = os.environ.get("SPECSCOPE_TEST_TIMEOUT_SCALE", "").strip()
    try:
        scale = float(text) if text else 1.0
    except ValueError:
        raise ValueError(f"SPECSCOPE_TEST_TIMEOUT_SCALE={text!r}: expected a number "
                         "(a factor for the GUI tests' timeouts, e.g. 2)") from None
    if not scale > 0:
        raise ValueError(f"SPECSCOPE_TEST_TIMEOUT_SCALE={text!r}: expected a factor above 0")
    return scale


#: the longest any GUI test waits for one condition (ms), stretched by the scale
TIMEOUT_SCALE = timeout_scale()
TIMEOUT_MS = int(60000 * TIMEOUT_SCALE)


def wait_until(condition: Callable[[], object], timeout_ms: int = TIMEOUT_MS,
               what: str | Callable[[], str] = "", *, passes: int = 1) -> None:
    """Process Qt events until ``condition()`` is true; fail naming it (``what``, a text or
    a callable giving one) after ``timeout_ms``.

    Events are processed before each look, so what a click or key posted (a zero timer, a
    queued signal) has run first; ``passes`` > 1 asks the condition to hold on that many
    looks in a row, each after another pass of the event loop (what those events posted
    in turn has run too).
    """
    from PyQt6.QtTest import QTest

    deadline = time.monotonic() + timeout_ms / 1000
    held = 0
    while True:
        QTest.qWait(5)
        held = held + 1 if condition() else 0
        if held >= passes:
            return
        if time.monotonic() > deadline:
            text = what() if callable(what) else what
            raise AssertionError(f"not within {timeout_ms} ms: {text or condition}")


def open_and_wait(window, path, timeout_ms: int = TIMEOUT_MS) -> None:
    """Open ``path`` in ``window`` and wait until the first spectrogram image of it is drawn."""
    shown: list[bool] = []

    def on_shown() -> None:
        shown.append(True)

    window.imageShown.connect(on_shown)
    try:
        window.open_path(path)
        wait_until(lambda: shown and window.last_image is not None, timeout_ms,
                   f"the first image of {Path(path).name}")
    finally:
        window.imageShown.disconnect(on_shown)


def idle(window, timeout_ms: int = TIMEOUT_MS) -> None:
    """Until no job is queued or running and every job's end has reached the GUI thread
    (and what the results posted has run: three passes of the event loop in a row)."""
    wait_until(lambda: not window.worker.is_busy() and window.worker.active() == 0,
               timeout_ms, "the compute thread idle", passes=3)


def settle(window, timeout_ms: int = TIMEOUT_MS) -> None:
    """Until the view shows the current settings and designs, computed to the end (three
    passes of the event loop in a row: a click's posted work has run and ended too)."""
    wait_until(lambda: window.views.up_to_date() and not window.designer.busy()
               and not window.worker.is_busy() and window.worker.active() == 0,
               timeout_ms, "the view up to date and the compute thread idle", passes=3)


def open_designer(make_window, path):
    """A window of STFT 4096/1024, 1400 x 1000, ``path`` open, the filter designer docked."""
    w = make_window(nfft=4096, hop=1024, size=(1400, 1000))
    open_and_wait(w, path)
    w.designer_dock.setVisible(True)
    return w


# -- stalls of the GUI thread -----------------------------------------------------------
#: a gap below this passes at once; a longer one is weighed against a reference (below)
MAX_STALL_S = 0.100
#: how many full redraws of the window a stall may last: one result's handler redraws the
#: designer's plots and the view (a few redraws; up to 7 seen on two cores kept busy); a
#: design or analysis on the GUI thread stalls it for seconds, 25 redraws or more
STALL_FACTOR = 10.0


class StallMeter:
    """The largest gap between ticks of a 5 ms timer on the GUI thread, and how the GUI
    thread spent it (where ``/proc/thread-self/schedstat`` tells: Linux).

    ``worst_split`` is ``(running, waiting for a core, asleep past the timer's interval)``
    in seconds over the worst gap, or None where it is not known.  Waiting for a core is the machine's doing (the
    thread was ready and other work had the cores); asleep with nothing to wait for is the
    interpreter's lock held by another thread (or a blocking call); running is work done on
    the GUI thread.
    """

    def __init__(self) -> None:
        from PyQt6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.worst = 0.0
        self.last: float | None = None
        self.worst_split: tuple[float, float, float] | None = None
        self._fd: int | None = None
        self._sched: tuple[int, int] | None = None

    def _schedstat(self) -> tuple[int, int] | None:
        """The GUI thread's time on a core and waiting for one so far (ns)."""
        if self._fd is None:
            return None
        try:
            run, wait = os.pread(self._fd, 128, 0).split()[:2]
            return int(run), int(wait)
        except (OSError, ValueError):
            return None

    def _tick(self) -> None:
        now = time.perf_counter()
        sched = self._schedstat()
        if self.last is not None and now - self.last > self.worst:
            self.worst = now - self.last
            if sched is not None and self._sched is not None:
                run = (sched[0] - self._sched[0]) / 1e9
                wait = (sched[1] - self._sched[1]) / 1e9
                # asleep beyond the timer's own interval
                rest = self.worst - run - wait - self.timer.interval() / 1000
                self.worst_split = (run, wait, max(0.0, rest))
            else:
                self.worst_split = None
        self.last = now
        self._sched = sched

    def describe_worst(self) -> str:
        """How the GUI thread spent the worst gap, in words ("" where not known)."""
        if self.worst_split is None:
            return ""
        run, wait, asleep = (round(v * 1000) for v in self.worst_split)
        return (f"of it the GUI thread ran {run} ms, was ready but waited {wait} ms for a "
                f"core, slept {asleep} ms past the timer's interval (the interpreter lock held "
                "elsewhere, or a wait)")

    def __enter__(self) -> Self:
        try:
            self._fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None
        self._sched = self._schedstat()
        self.last = time.perf_counter()
        self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._tick()
        self.timer.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def redraw_seconds(window, times: int = 5) -> float:
    """The median time of a full redraw of ``window`` on the GUI thread while its compute
    thread runs a job (FFTs and a filter over blocks, as the app's jobs do): what drawing
    costs on this machine under its load now."""
    import numpy as np
    import scipy.signal
    from specscope.app.qt.worker import JobCallbacks

    sos = scipy.signal.butter(8, 0.2, output="sos")
    x = np.random.default_rng(0).standard_normal(48000)
    stop: list = []

    def job(control) -> int:
        blocks = 0
        while not stop and blocks < 100000:
            control.check()
            np.abs(np.fft.rfft(x.reshape(-1, 1000), axis=1)) ** 2
            scipy.signal.sosfilt(sos, x)
            blocks += 1
        return blocks

    done: list = []
    window.worker.submit("redraw-reference", job, "reference", JobCallbacks(done=done.append))
    seconds = []
    try:
        for _ in range(times):
            t = time.perf_counter()
            window.grab()
            seconds.append(time.perf_counter() - t)
    finally:
        stop.append(True)
        wait_until(lambda: done, what="the reference job to end")
    return float(np.median(seconds))


def assert_no_stall(window, meter: StallMeter, what: str) -> None:
    """The GUI thread did not stall during ``what``: its longest gap was under
    :data:`MAX_STALL_S`, or under :data:`STALL_FACTOR` full redraws of the window timed
    right after, under the same load (a loaded machine stretches both alike)."""
    split = meter.describe_worst()
    print(f"{what}: longest GUI stall {meter.worst * 1000:.1f} ms" + (f"; {split}" if split else ""))
    if meter.worst < MAX_STALL_S:
        return
    redraw = redraw_seconds(window)
    print(f"{what}: a full redraw of the window takes {redraw * 1000:.1f} ms")
    assert meter.worst < STALL_FACTOR * redraw, (
        f"{what}: the GUI thread stalled {meter.worst * 1000:.0f} ms, {meter.worst / redraw:.1f} "
        f"full redraws of the window ({redraw * 1000:.0f} ms each here now); at most "
        f"{STALL_FACTOR:g} pass" + (f" ({split})" if split else ""))


# -- the window's life ------------------------------------------------------------------
def _native_app_threads() -> set[int]:
    """Threads of this process (kernel ids) named like the app's compute thread that are no
    Python thread: a thread inherits its creator's name, so pool threads started from the
    compute thread carry it too."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return set()
    python = {t.native_id for t in threading.enumerate()
              if not isinstance(t, threading._DummyThread)}
    found = set()
    for task in tasks.iterdir():
        try:
            name = (task / "comm").read_text()
        except OSError:
            continue  # the thread ended while we looked
        if name.startswith("specscope") and int(task.name) not in python:
            found.add(int(task.name))
    return found


def _python_threads() -> set[threading.Thread]:
    """Python threads but those of thread pools (the kernel's pool lives with the process)."""
    def pooled(t: threading.Thread) -> bool:
        target = getattr(t, "_target", None)
        return getattr(target, "__module__", "") == "concurrent.futures.thread"

    return {t for t in threading.enumerate()
            if not isinstance(t, threading._DummyThread) and not pooled(t)}


def _open_fds_to(path: Path) -> list[str]:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        return []
    found = []
    for fd in fds.iterdir():
        try:
            if Path(os.readlink(fd)) == path:
                found.append(fd.name)
        except OSError:
            pass
    return found


class WindowLife:
    """What was running before a window was made, to check after it closed."""

    def __init__(self) -> None:
        self.os_threads = _native_app_threads()
        self.threads = _python_threads()
        self.paths: set[Path] = set()

    def note_recording(self, window) -> None:
        doc = window.document
        path = getattr(doc.recording, "path", None) if doc is not None else None
        if path is not None:
            self.paths.add(Path(path).resolve())

    def close(self, window) -> None:
        """Close ``window`` as a person does (unsaved annotations discarded, unasked)."""
        from PyQt6 import sip

        if sip.isdeleted(window):
            return
        self.note_recording(window)
        if window.unsaved.interactive:
            window.unsaved.ask_save = lambda *a: "discard"  # no modal question at the end
        window.close()
        assert not window.isVisible(), "the window refused to close"

    def check(self, window, grace_ms: int = int(10000 * TIMEOUT_SCALE)) -> None:
        """After :meth:`close` (of every window of the test): the window left no compute
        thread, no thread of its own and no open recording behind, and is deleted."""
        from PyQt6 import sip
        from PyQt6.QtCore import QCoreApplication, QEvent

        if sip.isdeleted(window):
            return
        wait_until(lambda: not _native_app_threads() - self.os_threads,
                   grace_ms,
                   lambda: "the window's compute thread to end after close (threads "
                   f"{sorted(_native_app_threads() - self.os_threads)} are left)")

        def left() -> list[str]:
            return sorted(t.name for t in _python_threads() - self.threads if t.is_alive())

        wait_until(lambda: not left(), grace_ms,
                   lambda: f"threads started with the window to end after close: {left()}")
        for path in self.paths:
            assert not _open_fds_to(path), f"{path.name} still open after the window closed"
        window.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        assert sip.isdeleted(window), "the closed window was not deleted"


def make_main_window(settings=None, *, nfft: int = 1024, hop: int = 256,
                     size: tuple[int, int] | None = None, interactive: bool = False,
                     show: bool = True, activate: bool = False):
    """A real MainWindow: STFT ``nfft``/``hop`` unless ``settings`` are given."""
    from specscope.app.desktop.main_window import MainWindow
    from specscope.app.session import ViewSettings
    from specscope.compute import StftParams

    w = MainWindow(settings or ViewSettings(stft=StftParams(nfft, hop)),
                   interactive=interactive)
    if size is not None:
        w.resize(*size)
    if show:
        w.show()
    if activate:
        w.activateWindow()
    return w
