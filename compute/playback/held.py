"""A sound-card output opened ahead of the first Play and kept open between playbacks.

Opening the sound card is slow the first time in a process (the audio library
loads and enumerates the devices) and takes a little each time after (the
stream connects to the sound server).  :class:`HeldOutput` does both ahead —
:meth:`HeldOutput.prepare`, called on a background thread when a recording is
opened — and lends the open stream to each :class:`~.player.Player` in turn, so
Play only starts rendering into a stream that is already open.

It is a backend like any other (``backend(sample_rate, blocksize, callback,
channels)``): what it returns is a lease on the held stream whose ``stop``
discards what the device still buffers (the player has faded out or played
its end out by then) and whose ``close`` gives the stream back for the next
playback.  A stream whose device went away is closed and opened afresh next
time; a second player asking while the stream is still lent gets a stream of
its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .player import Callback, OutputStream, SoundDeviceOutput
from .system import quiet_stderr

__all__ = ["HeldOutput"]

#: output channels the held stream opens with (a mono player fills both)
HELD_CHANNELS = 2
#: how long a player waits for the previous one to give the stream back (s)
HANDOVER_S = 1.0


class HeldOutput:
    """A sound-card stream opened ahead and lent to one player at a time.

    Parameters
    ----------
    backend : callable, optional
        What opens streams (a backend as :class:`~.player.Player` takes them);
        a :class:`~.player.SoundDeviceOutput` made on first use (on the thread
        that prepares) when omitted.

    Attributes
    ----------
    opens : int
        Streams opened so far (a playback on the held stream opens none).
    """

    def __init__(self, backend: Callable[..., OutputStream] | None = None) -> None:
        self._backend = backend
        self._lock = threading.Lock()
        self._returned = threading.Condition(self._lock)
        self._stream: OutputStream | None = None
        self._key: tuple[float, int] | None = None
        self._lent = False
        self._target: Callback | None = None
        self.opens = 0

    @property
    def backend(self) -> Callable[..., OutputStream]:
        """The backend that opens the streams (made on first use)."""
        if self._backend is None:
            self._backend = SoundDeviceOutput()
        return self._backend

    @property
    def sound_card(self) -> bool:
        """Whether the streams are a sound card's (see ``Player``'s lead-in silence)."""
        return bool(getattr(self.backend, "sound_card", False))

    @property
    def is_open(self) -> bool:
        """Whether a stream is open and waiting (or lent)."""
        return self._stream is not None

    @property
    def lent(self) -> bool:
        """Whether a player has the stream now."""
        return self._lent

    def prepare(self, sample_rate: float, channels: int = HELD_CHANNELS) -> None:
        """Open the stream now (on a background thread: this may take a while).

        Raises what the backend raises (no device: a one-line ``SpecscopeError``).
        """
        with self._lock:
            if not self._lent:
                self._ensure(float(sample_rate), max(int(channels), HELD_CHANNELS))

    def _ensure(self, sample_rate: float, channels: int) -> OutputStream:
        key = (sample_rate, channels)
        if self._stream is not None and self._key == key:
            return self._stream
        self._discard()
        self._stream = self.backend(sample_rate, 0, self._relay, channels=channels)
        self._key = key
        self.opens += 1
        return self._stream

    def _discard(self) -> None:
        stream, self._stream, self._key = self._stream, None, None
        if stream is not None:
            # a device gone away: nothing to close (PortAudio says why: to the log)
            with quiet_stderr, contextlib.suppress(Exception):
                stream.close()

    def _relay(self, outdata: np.ndarray, frames: int, *args: Any) -> None:
        target = self._target
        if target is None:
            outdata.fill(0.0)
        else:
            target(outdata, frames, *args)

    def __call__(self, sample_rate: float, blocksize: int, callback: Callback,
                 channels: int = 1) -> OutputStream:
        with self._lock:
            if self._lent:
                self._returned.wait(HANDOVER_S)
            if self._lent:  # still playing: a stream of its own
                return self.backend(sample_rate, blocksize, callback, channels=channels)
            stream = self._ensure(float(sample_rate), max(int(channels), HELD_CHANNELS))
            self._lent = True
            return _Lease(self, stream, callback)

    def _give_back(self, lease: _Lease, broken: bool) -> None:
        with self._lock:
            if self._target is lease.callback:
                self._target = None
            if broken and self._stream is lease.stream:
                self._discard()
            self._lent = False
            self._returned.notify_all()

    def close(self, timeout: float = HANDOVER_S) -> None:
        """Close the held stream once the player using it gave it back (waiting up to
        ``timeout`` s); a later playback opens one again."""
        with self._lock:
            if self._lent:
                self._returned.wait(timeout)
            if not self._lent:
                self._discard()


class _Lease:
    """One player's use of the held stream (see :class:`HeldOutput`)."""

    def __init__(self, held: HeldOutput, stream: OutputStream, callback: Callback) -> None:
        self._held, self.stream, self.callback = held, stream, callback
        self.latency = float(getattr(stream, "latency", 0.0))
        self.device_name = str(getattr(stream, "device_name", ""))
        self._started = self._returned = self._lost = False

    @property
    def active(self) -> bool:
        return bool(getattr(self.stream, "active", True))

    def start(self) -> None:
        self._held._target = self.callback
        self.stream.start()
        self._started = True

    def stop(self) -> None:
        self._held._target = None
        # stopped by itself while playing: the device went away
        self._lost = self._lost or (self._started and not self.active)
        (getattr(self.stream, "abort", None) or self.stream.stop)()

    abort = stop

    def close(self) -> None:
        if self._returned:
            return
        self._returned = True
        # a stream whose device went away is closed; the next playback opens afresh
        self._held._give_back(self, self._lost)
