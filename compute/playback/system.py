"""What playback asks of the operating system: priority, and a quiet standard error.

**Priority.**  The device's callback and the feeder are Python threads: each
needs the interpreter's lock (the GIL) to run.  On a machine kept busy by
other processes, a thread of the same process that holds the lock (the GUI
thread painting, the compute thread) may be preempted while holding it, and
the device's thread then waits for as long as that thread waits for a core:
hundreds of milliseconds under a load of eight, longer than the device's
buffer.  Raising only the sound's threads does not help them to the lock, so
:class:`SoundPriority` raises *every* thread of the process to
:data:`SOUND_NICE` while something plays (priority inheritance by hand) and
puts each back afterwards.  Lowering a nice value needs the privilege
(``CAP_SYS_NICE`` or ``RLIMIT_NICE``); without it nothing changes.

**Standard error.**  PortAudio's ALSA host prints "Expression '...' failed in
'src/hostapi/alsa/pa_linux_alsa.c'" to file descriptor 2 from its own thread
when the device goes away, and from the call when a stream cannot open.  The
player counts and reports these conditions itself, so :class:`QuietStderr`
routes descriptor 2 through a pipe while a sound-card stream is in use: those
lines (and ALSA's) go to the ``specscope.playback`` log, everything else is
copied to the real standard error as it arrives.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Self

__all__ = ["SOUND_NICE", "QuietStderr", "SoundPriority", "raise_priority", "sound_priority"]

log = logging.getLogger("specscope.playback")

#: how much nicer than ordinary work the process's threads ask to be while it plays
SOUND_NICE = -11
#: lines of the audio libraries kept off standard error (into the log)
LIBRARY_LINE = re.compile(rb"^(Expression '.*' failed in '.*'|ALSA lib |PaAlsa|"
                          rb"Cannot connect to server|jack server is not running)")


def raise_priority() -> None:
    """Ask the calling thread to run at :data:`SOUND_NICE` (where permitted)."""
    try:
        if os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) > SOUND_NICE:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SOUND_NICE)
    except (OSError, AttributeError):
        pass


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [threading.get_native_id()]


class SoundPriority:
    """Every thread of the process at :data:`SOUND_NICE` while held (see the module).

    Held by each playing :class:`~.player.Player` (:meth:`acquire` /
    :meth:`release`, counted): the first raises the threads there are and the
    calling one (threads started later inherit the value of the thread that
    starts them), the last puts every thread back to the nice value it had,
    threads started meanwhile to the process's own.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: dict[int, int] = {}
        self._base = 0

    @property
    def held(self) -> bool:
        return self._holders > 0

    def acquire(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders > 1:
                self._raise_new()
                return
            try:
                self._base = os.getpriority(os.PRIO_PROCESS, os.getpid())
            except OSError:
                self._base = 0
            self._saved = {}
            self._raise_new()

    def _raise_new(self) -> None:
        for tid in _threads():
            if tid in self._saved:
                continue
            try:
                nice = os.getpriority(os.PRIO_PROCESS, tid)
                if nice > SOUND_NICE:
                    os.setpriority(os.PRIO_PROCESS, tid, SOUND_NICE)
                self._saved[tid] = nice
            except OSError:  # not permitted, or the thread has ended
                continue

    def release(self) -> None:
        with self._lock:
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders:
                return
            for tid in _threads():
                want = self._saved.get(tid, self._base)
                try:
                    if os.getpriority(os.PRIO_PROCESS, tid) != want:
                        os.setpriority(os.PRIO_PROCESS, tid, want)
                except OSError:
                    continue
            self._saved = {}

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


#: the process's one :class:`SoundPriority`
sound_priority = SoundPriority()


class QuietStderr:
    """Descriptor 2 through a filter while held (counted; see the module).

    Lines matching :data:`LIBRARY_LINE` go to the log at debug level; all
    other bytes reach the real standard error unchanged and in order, as
    soon as they arrive (a line without its end after 50 ms is copied as it is).
    """

    def __init__(self, fd: int = 2) -> None:
        self.fd = fd
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        #: library lines kept off standard error so far
        self.kept: list[str] = []

    def acquire(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders > 1:
                return
            try:
                read, write = os.pipe()
                saved = os.dup(self.fd)
            except OSError:
                self._holders -= 1
                return
            try:
                os.dup2(write, self.fd)
            except OSError:
                for f in (read, write, saved):
                    os.close(f)
                self._holders -= 1
                return
            os.close(write)
            self._saved = saved
            self._stop = threading.Event()
            # the pump writes to a descriptor of its own: it may outlive release()
            self._thread = threading.Thread(target=self._pump,
                                            args=(read, os.dup(saved), self._stop),
                                            name="specscope-stderr", daemon=True)
            self._thread.start()

    def release(self) -> None:
        with self._lock:
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders or self._saved is None:
                return
            saved, self._saved = self._saved, None
            thread, self._thread = self._thread, None
            os.dup2(saved, self.fd)
            os.close(saved)
            # the pump copies what is in the pipe, then ends (a child process started
            # meanwhile may hold the pipe open: the pump does not wait for its end)
            self._stop.set()
        if thread is not None:
            thread.join(2.0)

    def _pump(self, read: int, out: int, stop: threading.Event) -> None:
        import select

        pending = b""
        try:
            while True:
                ready, _, _ = select.select([read], [], [], 0.05)
                if not ready and stop.is_set():
                    break
                if not ready:
                    if pending:  # a partial line: let it through now
                        _write(out, pending)
                        pending = b""
                    continue
                chunk = os.read(read, 65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                passed = []
                for line in lines:
                    if LIBRARY_LINE.match(line):
                        text = line.decode(errors="replace")
                        self.kept.append(text)
                        log.debug("audio library: %s", text)
                    else:
                        passed.append(line + b"\n")
                if passed:
                    _write(out, b"".join(passed))
            if pending:
                _write(out, pending)
        finally:
            os.close(read)
            os.close(out)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _write(fd: int, data: bytes) -> None:
    while data:
        try:
            n = os.write(fd, data)
        except OSError:
            return
        data = data[n:]


#: the process's one :class:`QuietStderr` (descriptor 2)
quiet_stderr = QuietStderr()
