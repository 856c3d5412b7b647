"""What playback asks of the operating system: priority, and a quiet standard error.

**Priority.**  :func:`raise_priority` asks for the calling thread to run
before ordinary work (nice :data:`SOUND_NICE`); the feeder calls it.  The
device's threads (its callback, the sound server client's) go further, into
the real-time class (:func:`raise_to_realtime`, :func:`realtime_children`):
their work is short, and under a load of ten a nice value alone still left
them waiting longer than the device's buffer.  Only they: raising every thread
of the process (the GUI thread painting, the tile workers) was tried, and on
a loaded machine it starved the sound server instead, which then stopped
asking for sound for seconds.  Lowering a nice value needs the privilege
(``CAP_SYS_NICE`` or ``RLIMIT_NICE``); without it nothing changes.

**Standard error.**  PortAudio's ALSA host prints "Expression '...' failed in
'src/hostapi/alsa/pa_linux_alsa.c'" to file descriptor 2 from its own thread
when the device goes away, and from the call when a stream cannot open.  The
player counts and reports these conditions itself, so :class:`QuietStderr`
points descriptor 2 at a file while a sound-card stream is in use: those lines
(and ALSA's) go to the ``specscope.playback`` log, everything else is copied
to the real standard error when the stream is let go.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Self

__all__ = ["REALTIME_PRIORITY", "SOUND_NICE", "QuietStderr", "quiet_stderr", "raise_priority",
           "raise_to_realtime", "realtime_children"]

log = logging.getLogger("specscope.playback")

#: how much nicer than ordinary work the sound's threads ask to be
SOUND_NICE = -11
#: lines of the audio libraries kept off standard error (into the log)
LIBRARY_LINE = re.compile(rb"^(Expression '.*' failed in '.*'|ALSA lib |PaAlsa|"
                          rb"Cannot connect to server|jack server is not running)")


#: the real-time priority (SCHED_RR) of the device's threads where permitted: below a sound
#: server's own (PulseAudio and PipeWire ask for 5 and above through rtkit)
REALTIME_PRIORITY = 4


def raise_to_realtime() -> None:
    """Put the calling thread in the real-time round-robin class (:data:`REALTIME_PRIORITY`)
    where permitted, else :func:`raise_priority`.

    For the device's threads only: their work is a copy and a short wait, so running
    before all ordinary work costs the machine nothing and keeps them on time.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(REALTIME_PRIORITY))
    except (OSError, AttributeError):
        raise_priority()


@contextmanager
def realtime_children() -> Iterator[None]:
    """While inside, the calling thread is real time (:func:`raise_to_realtime`).

    The threads the audio library starts meanwhile (the stream's callback thread, the
    sound server client's) inherit it; afterwards the calling thread's scheduling
    policy is put back.  Where scheduling cannot be read, nothing changes.

    Yields
    ------
    None
        Control, while the calling thread is real time.
    """
    try:
        policy = os.sched_getscheduler(0)
        param = os.sched_getparam(0)
    except (OSError, AttributeError):
        yield
        return
    raise_to_realtime()
    try:
        yield
    finally:
        with suppress(OSError):
            os.sched_setscheduler(0, policy, param)


def raise_priority() -> None:
    """Ask the calling thread to run at :data:`SOUND_NICE` (where permitted)."""
    try:
        if os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) > SOUND_NICE:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SOUND_NICE)
    except (OSError, AttributeError):
        pass


class QuietStderr:
    """Descriptor 2 into a file while held (counted; see the module), sorted when let go.

    A file, not a pipe read by a thread: a writer never waits for a reader that
    the interpreter's lock or a busy machine holds up (a pipe's reader thread
    stalled the device's callback by seconds on a loaded machine).  When the
    last holder lets go, lines matching :data:`LIBRARY_LINE` go to the log at
    debug level (and to :attr:`kept`); everything else is copied to the real
    standard error, in order.  :meth:`flush` does the same for what has been
    written so far (the player does it when it stops; a long playback's other
    output waits for it).

    Parameters
    ----------
    fd : int
        The descriptor redirected (2: standard error).
    """

    def __init__(self, fd: int = 2) -> None:
        self.fd = fd
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: int | None = None
        self._file: int | None = None
        self._read = 0  # bytes of the file sorted so far
        #: library lines kept off standard error so far
        self.kept: list[str] = []

    def acquire(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders > 1:
                return
            try:
                import tempfile

                tmp, path = tempfile.mkstemp(prefix="specscope-stderr-")
                os.unlink(path)
                saved = os.dup(self.fd)
            except OSError:
                self._holders -= 1
                return
            try:
                os.dup2(tmp, self.fd)
            except OSError:
                os.close(tmp)
                os.close(saved)
                self._holders -= 1
                return
            self._saved, self._file, self._read = saved, tmp, 0

    def release(self) -> None:
        with self._lock:
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders or self._saved is None or self._file is None:
                return
            saved, tmp = self._saved, self._file
            self._saved = self._file = None
            os.dup2(saved, self.fd)
            self._sort(tmp, saved, final=True)
            os.close(tmp)
            os.close(saved)

    def flush(self) -> None:
        """Sort what was written so far (whole lines) while still held."""
        with self._lock:
            if self._saved is not None and self._file is not None:
                self._sort(self._file, self._saved, final=False)

    def _sort(self, tmp: int, out: int, final: bool) -> None:
        try:
            size = os.fstat(tmp).st_size
            data = os.pread(tmp, size - self._read, self._read) if size > self._read else b""
        except OSError:
            return
        if not final:
            data = data[:data.rfind(b"\n") + 1]  # whole lines only
        self._read += len(data)
        passed = []
        for line in data.splitlines(keepends=True):
            if LIBRARY_LINE.match(line):
                text = line.rstrip(b"\r\n").decode(errors="replace")
                self.kept.append(text)
                log.debug("audio library: %s", text)
            else:
                passed.append(line)
        if passed:
            _write(out, b"".join(passed))

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
