"""A command's watch over long operator calls, and a Ctrl+C that always ends it.

:func:`command_guard` surrounds a headless subcommand (``run_command`` uses it):

* a :class:`~specscope.compute.operators.watch.Watchdog` reports every plugin
  operator call running longer than the threshold (``SPECSCOPE_SLOW_OP_S``,
  5 s): on the progress bar's line when one is drawn, else as a line on
  stderr (``specscope: plugin op x.y running for 10 s…``) at 1, 2, 4, 8...
  times the threshold;
* Ctrl+C (SIGINT) asks every call to stop
  (:func:`~specscope.compute.operators.watch.cancel_all`: a plugin that checks
  :func:`~specscope.compute.operators.cancelled` stops) and interrupts the
  main thread.  When the command has not ended ``GRACE_S`` seconds later
  because an operator call does not stop (it does not check, or it runs in a
  worker thread that the interrupt does not reach), the process says so in
  one line and exits with status 130; worker processes still running then
  are terminated, so that their pool lets the command end.  A second Ctrl+C
  exits at once.

Nothing here imports Qt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from specscope.compute.operators import watch

__all__ = ["GRACE_S", "bar_closed", "bar_drawn", "command_guard"]

#: seconds a Ctrl+C waits for the command to end before the process exits anyway
GRACE_S = 1.0
#: seconds it waits when no operator call or worker process is known to hold it up
PATIENCE_S = 10.0
EXIT_INTERRUPTED = 130


# the progress bar on the terminal now (cli_common.ProgressBar), which shows the notes
_bar: Any = None


def bar_drawn(bar: Any) -> None:
    """A progress bar was drawn: long calls are noted on its line (``bar.note(text)``).

    Parameters
    ----------
    bar : ProgressBar
        The bar now on the terminal (:class:`~specscope.app.cli.common.ProgressBar`).
    """
    global _bar
    _bar = bar


def bar_closed(bar: Any) -> None:
    """The progress bar's line ended: long calls are reported as lines again.

    Parameters
    ----------
    bar : ProgressBar
        The bar that closed; another bar drawn since stays in place.
    """
    global _bar
    if _bar is bar:
        _bar = None


def _grace() -> float:
    try:
        return max(0.1, float(os.environ.get("SPECSCOPE_INTERRUPT_GRACE_S", GRACE_S)))
    except ValueError:
        return GRACE_S


class _Reporter:
    """Where long calls are shown: the progress bar's line, or lines on stderr."""

    def __init__(self, threshold: float) -> None:
        self._lines = watch.LineReport(threshold)

    def __call__(self, calls: list[watch.LongCall]) -> None:
        bar = _bar
        if bar is not None:
            bar.note(calls[0].text if calls else "")
        else:
            self._lines(calls)


class _Interrupt:
    """The SIGINT handler of a command and the exit it forces when the command hangs."""

    def __init__(self) -> None:
        self.count = 0
        self.returned = False
        #: the command's exit status once it returned (what a forced exit keeps)
        self.code = EXIT_INTERRUPTED
        self._timer: threading.Thread | None = None

    def handler(self, signum: int, frame: Any) -> None:
        self.count += 1
        watch.cancel_all()
        if self.count > 1:
            self._exit("specscope: interrupted")
        if self._timer is None:
            self._timer = threading.Thread(target=self._wait, daemon=True,
                                           name="specscope-interrupt")
            self._timer.start()
        raise KeyboardInterrupt

    def _wait(self) -> None:
        t0 = time.monotonic()
        stopped_workers = False
        grace = _grace()
        time.sleep(grace)
        while True:
            if self.returned:  # the command ended; only the interpreter's exit waits
                self._exit(None, self.code)
            calls = watch.running_calls()
            children = _children()
            waited = time.monotonic() - t0
            if calls:
                self._exit(f"specscope: interrupted; {calls[0].kind} {calls[0].name} did not "
                           f"stop after {waited:.0f} s (it does not check for cancellation)")
            if children and not stopped_workers:
                # worker processes run calls this process cannot see: end them, and
                # the command ends the ordinary way (their pool reports them gone)
                stopped_workers = True
                for p in children:
                    with contextlib.suppress(Exception):
                        p.terminate()
            if waited >= PATIENCE_S:
                self._exit("specscope: interrupted; the command did not stop")
            time.sleep(0.1)

    @staticmethod
    def _exit(line: str | None, code: int = EXIT_INTERRUPTED) -> None:
        for p in _children():
            with contextlib.suppress(Exception):  # exiting anyway
                p.terminate()
        try:
            if line:
                if _bar is not None:
                    _bar.close()
                print(line, file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _children() -> list[Any]:
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return []
    try:
        return list(mp.active_children())
    except Exception:  # noqa: BLE001
        return []


@contextmanager
def command_guard() -> Iterator[_Interrupt]:
    """Watch long operator calls and handle Ctrl+C for the block (see the module doc).

    The SIGINT handler is installed only on the main thread; the previous one comes
    back when the block ends.

    Yields
    ------
    object
        The interrupt state; set its ``code`` to the command's exit status, which a
        process exit forced after the block ends keeps.
    """
    state = _Interrupt()
    main = threading.current_thread() is threading.main_thread()
    old = signal.getsignal(signal.SIGINT) if main else None
    if main:
        signal.signal(signal.SIGINT, state.handler)
    dog = watch.Watchdog(_Reporter(watch.threshold_s())).start()
    watch.report_from_workers()
    try:
        yield state
    finally:
        state.returned = True
        dog.stop()
        if main:
            signal.signal(signal.SIGINT, old)
        if state.count:
            watch.reset_cancel()
