"""The notebook widgets' Qt thread: the QApplication, its event pump, and calls handed to it.

No Qt event loop runs in a kernel.  Qt's posted events (layouts, queued results
of the compute thread) and due timers (the view's debounce) are processed on the
kernel's asyncio loop for a short while after each interaction and whenever the
compute thread finishes a job (:class:`Pump`).

Qt objects belong to the thread that made them: the kernel's main thread, which
runs the cells.  ipykernel may deliver widget messages on another thread (a
*subshell*: JupyterLab 4.6 sends comms over one by default), so every entry
from ipywidgets or jupyter_rfb into the widgets is wrapped in :func:`qt_thread`:
called on the Qt thread it runs in place, called anywhere else it is queued and
run by the pump on the Qt thread, in order, and the caller returns at once.
Touching a Qt object from the wrong thread makes Qt warn ("Cannot create
children for a parent that is in a different thread", "QPainter ... not
active") and then crash the kernel.

On Linux without ``DISPLAY`` or ``WAYLAND_DISPLAY`` this module sets
``QT_QPA_PLATFORM=offscreen`` before Qt starts, so a kernel on a remote server or
a JupyterHub needs no display.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from PyQt6.QtWidgets import QApplication

__all__ = ["ACTIVE_S", "PUMP", "TICK_S", "Pump", "on_qt_thread", "process_qt_events", "qt_app",
           "qt_thread", "run_on_qt"]

#: how long Qt's events keep being processed after an interaction (s): the view's
#: debounce timers fire in that time
ACTIVE_S = 0.4
#: interval of that processing (s)
TICK_S = 0.025

#: calls made off the Qt thread, waiting for it: (function, args, kwargs)
_CALLS: queue.SimpleQueue[tuple[Callable[..., Any], tuple, dict]] = queue.SimpleQueue()
_QT_THREAD: list[int] = []
_APP: list[QApplication] = []


def _headless() -> None:
    """Qt's offscreen platform where there is no display (before the QApplication exists)."""
    if "QT_QPA_PLATFORM" in os.environ:
        return
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def qt_app() -> QApplication:
    """The QApplication of the kernel (created offscreen when there is no display).

    The thread calling this first (the kernel's main thread) is the Qt thread.

    Returns
    -------
    QApplication
        The running application, made on the first call and kept alive.

    Raises
    ------
    TypeError
        When a Qt application without widgets (QCoreApplication) already runs.
    """
    app = QApplication.instance()
    if app is None:
        _headless()
        app = QApplication(["specscope"])
        _APP.append(app)  # alive while the kernel runs: the callers keep no reference
        if not _QT_THREAD:
            _QT_THREAD.append(threading.get_ident())
    if not isinstance(app, QApplication):
        raise TypeError("a QCoreApplication without widgets is running; the notebook "
                        "widgets need a QApplication")
    if not _QT_THREAD:  # made elsewhere: Qt's GUI thread is the main thread
        _QT_THREAD.append(threading.main_thread().ident or threading.get_ident())
    return app


def on_qt_thread() -> bool:
    """Whether the calling thread owns the notebook widgets' Qt objects.

    Returns
    -------
    bool
        True on the Qt thread (the one that made the QApplication, else the main
        thread).
    """
    owner = _QT_THREAD[0] if _QT_THREAD else threading.main_thread().ident
    return threading.get_ident() == owner


def run_on_qt(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` now on the Qt thread, or queue it for the Qt thread (returning None).

    A queued call runs in order when the pump next processes Qt's events.

    Parameters
    ----------
    fn : callable
        The function to call.
    *args, **kwargs
        Its arguments.

    Returns
    -------
    object
        ``fn``'s result when called in place; None when queued.
    """
    if on_qt_thread():
        return fn(*args, **kwargs)
    _CALLS.put((fn, args, kwargs))
    PUMP.wake()
    return None


def qt_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a callback so that it always runs on the Qt thread (see the module docs).

    Parameters
    ----------
    fn : callable
        The callback.

    Returns
    -------
    callable
        A wrapper with ``fn``'s name and docstring that calls it through
        :func:`run_on_qt`.
    """

    @functools.wraps(fn)
    def on_qt(*args: Any, **kwargs: Any) -> Any:
        return run_on_qt(fn, *args, **kwargs)

    return on_qt


def run_queued_calls() -> int:
    """Run the calls queued by other threads, in order (on the Qt thread); how many ran.

    An exception of one call is printed and does not stop the others: nobody waits
    for its result.
    """
    n = 0
    while True:
        try:
            fn, args, kwargs = _CALLS.get_nowait()
        except queue.Empty:
            return n
        n += 1
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - reported, the pump goes on
            traceback.print_exc()


def process_qt_events() -> None:
    """Run queued calls, deliver Qt's posted events and its due timers, once (Qt thread)."""
    run_queued_calls()
    QApplication.sendPostedEvents()
    QApplication.processEvents()


class Pump:
    """Processes Qt's events on the kernel's asyncio loop while something is going on.

    ``wake`` may be called from any thread (the compute thread calls it when a job
    ends, a subshell when it queues a call); the loop then processes Qt's events
    every ``TICK_S`` for ``ACTIVE_S`` (and while a shell is busy) and has each canvas
    send a new frame when its widget changed.
    Without a running loop (a script) it does nothing: ``settle`` of a shell, which
    calls :func:`process_qt_events`, does the work instead.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        #: objects with ``draw_if_changed()`` (the frame canvases)
        self.canvases: weakref.WeakSet[Any] = weakref.WeakSet()
        #: objects with ``sync_viewport()`` and ``busy()`` (the explorers' shells)
        self.shells: weakref.WeakSet[Any] = weakref.WeakSet()
        self._until = 0.0
        self._scheduled = False

    def attach(self) -> None:
        """Use the running loop of the calling (kernel) thread, if there is one."""
        if not on_qt_thread():
            return
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            pass

    def wake(self, *_: object) -> None:
        """Process Qt's events for a while from now (thread-safe)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._extend)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn`` on the Qt thread at the loop's next turn (thread-safe), without
        processing Qt's events for a while as :meth:`wake` does; without a running loop
        it is queued for the Qt thread (:func:`process_qt_events` runs it)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(fn, *args)
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        _CALLS.put((fn, args, {}))

    def _extend(self) -> None:
        self._until = max(self._until, time.monotonic() + ACTIVE_S)
        if not self._scheduled:
            self._scheduled = True
            self.loop.call_soon(self._tick)

    def _tick(self) -> None:
        self._scheduled = False
        process_qt_events()
        for shell in list(self.shells):
            shell.sync_viewport()
        for canvas in list(self.canvases):
            canvas.draw_if_changed()  # a frame only when something on it changed
        busy = any(shell.busy() for shell in list(self.shells))
        if busy or time.monotonic() < self._until:
            self._scheduled = True
            self.loop.call_later(TICK_S, self._tick)


#: the one pump of the kernel
PUMP = Pump()
