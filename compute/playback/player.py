"""Playing a rendered range on an audio output, with the position for a play cursor.

:class:`Player` renders on a feeder thread into a :class:`SampleRing`; the
output's callback copies from the ring into the device buffer and never
allocates arrays, waits, or touches anything but the ring and two counters.
The output is injectable: a backend is a callable
``backend(sample_rate, blocksize, callback) -> OutputStream`` whose stream
calls ``callback(outdata, frames)`` with a float32 ``(frames, 1)`` buffer to
fill.  :class:`SoundDeviceOutput` is PortAudio through ``sounddevice`` (the
``audio`` extra); :class:`FakeOutput` consumes samples on its own clock, for
tests and headless runs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, Self

import numpy as np

from .. import sound
from ..errors import InputError, SpecscopeError

__all__ = ["AUDIO_DEVICE_ENV", "AUDIO_OUTPUT_ENV", "FakeOutput", "OutputStream", "Player", "SampleRing",
           "SoundDeviceOutput", "default_output", "load_sounddevice"]

#: environment variable naming the output device (a name, part of one, or an index)
AUDIO_DEVICE_ENV = "SPECSCOPE_AUDIO_DEVICE"
#: environment variable choosing the default backend: "fake" plays on a FakeOutput
#: (real time, nothing heard; for headless runs and tests), anything else the sound card
AUDIO_OUTPUT_ENV = "SPECSCOPE_AUDIO_OUTPUT"
#: fade applied when playback is stopped before its end (s)
STOP_FADE_S = 0.01

Callback = Callable[[np.ndarray, int], None]


class OutputStream(Protocol):
    """What a backend returns: a started/stopped stream that calls the callback."""

    latency: float
    device_name: str

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def close(self) -> None: ...


class SampleRing:
    """A single-producer, single-consumer ring of float32 samples.

    Each index is written by one side only (``_head`` by the producer,
    ``_tail`` by the consumer), so no lock is needed and :meth:`read_into`
    never waits.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise InputError(f"capacity={capacity} must be >= 1 sample")
        self.capacity = int(capacity)
        self._buf = np.zeros(self.capacity, np.float32)
        self._head = 0  # samples written (producer only)
        self._tail = 0  # samples read (consumer only)
        self.closed = False  # set by the producer after its last write

    def __len__(self) -> int:
        return self._head - self._tail

    def write(self, x: np.ndarray) -> int:
        """Write as many samples of ``x`` as fit; returns how many."""
        n = min(x.size, self.capacity - (self._head - self._tail))
        i = self._head % self.capacity
        first = min(n, self.capacity - i)
        self._buf[i:i + first] = x[:first]
        self._buf[:n - first] = x[first:n]
        self._head += n
        return n

    def read_into(self, out: np.ndarray) -> int:
        """Copy up to ``out.size`` samples into ``out``; returns how many."""
        n = min(out.size, self._head - self._tail)
        i = self._tail % self.capacity
        first = min(n, self.capacity - i)
        out[:first] = self._buf[i:i + first]
        out[first:n] = self._buf[:n - first]
        self._tail += n
        return n


class Player:
    """Play a :class:`~specscope.compute.playback.Renderer` on an audio output.

    Parameters
    ----------
    renderer : Renderer
        What to play.
    output : callable, optional
        The backend (see the module); :func:`default_output` when omitted:
        :class:`SoundDeviceOutput` for the device named by
        ``SPECSCOPE_AUDIO_DEVICE`` (or the default output).  Raises :class:`SpecscopeError` in one line when there
        is no sounddevice, no PortAudio or no such device.
    block : int
        Samples per device callback.
    buffer_s : float
        Seconds rendered ahead into the ring.

    Attributes
    ----------
    underruns : int
        Callbacks that found the ring short before the end (heard as a gap).
    """

    def __init__(self, renderer: Any, *, output: Callable[..., OutputStream] | None = None,
                 block: int = 1024, buffer_s: float = 0.5) -> None:
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise InputError(f"block={block!r} must be a whole number >= 1")
        if not buffer_s > 0:
            raise InputError(f"buffer_s={buffer_s!r} must be > 0")
        self.renderer = renderer
        self.block = int(block)
        self.sample_rate = float(renderer.sample_rate)
        self._output = output if output is not None else default_output()
        self._ring = SampleRing(max(2 * self.block, round(buffer_s * self.sample_rate)))
        n_fade = max(1, round(STOP_FADE_S * self.sample_rate))
        self._fade = np.linspace(1.0, 0.0, n_fade, dtype=np.float32)
        self._fade_pos = 0
        self._stopping = False
        self._consumed = 0  # samples handed to the output (callback only)
        self._done = threading.Event()
        self._halt = threading.Event()
        self._stream: OutputStream | None = None
        self._feeder: threading.Thread | None = None
        self._error: BaseException | None = None
        self.underruns = 0

    # -- the device side ------------------------------------------------------------------
    def _callback(self, outdata: np.ndarray, frames: int) -> None:
        col = outdata[:, 0]
        n = self._ring.read_into(col)
        if n < frames:
            col[n:] = 0.0
            if not self._ring.closed and not self._stopping:
                self.underruns += 1
        if self._stopping:  # fade out what is left, then silence
            k = min(n, self._fade.size - self._fade_pos)
            col[:k] *= self._fade[self._fade_pos:self._fade_pos + k]
            col[k:n] = 0.0
            self._fade_pos += k
            if self._fade_pos >= self._fade.size:
                self._done.set()
        self._consumed += n
        if self._ring.closed and len(self._ring) == 0:
            self._done.set()

    # -- the feeder side ------------------------------------------------------------------
    def _feed_block(self, b: np.ndarray) -> bool:
        """Write one block, waiting for room; False when halted."""
        off = 0
        wait = self.block / self.sample_rate / 2
        while off < b.size:
            if self._halt.is_set():
                return False
            off += self._ring.write(b[off:])
            if off < b.size:
                time.sleep(wait)
        return True

    def _feed(self, blocks: Any) -> None:
        try:
            for b in blocks:
                if not self._feed_block(b):
                    break
        except BaseException as exc:  # noqa: BLE001 -- reported by wait()
            self._error = exc
        finally:
            self._ring.closed = True

    # -- control --------------------------------------------------------------------------
    def start(self) -> None:
        """Open the output and start playing (returns at once)."""
        if self._stream is not None:
            return
        blocks = self.renderer.blocks(self.block)
        # a head start in the ring, so the first callbacks find samples
        for b in blocks:
            self._ring.write(b)
            if len(self._ring) + self.block > self._ring.capacity // 2:
                break
        else:
            self._ring.closed = True
        self._stream = self._output(self.sample_rate, self.block, self._callback)
        self._feeder = threading.Thread(target=self._feed, args=(blocks,),
                                        name="specscope-playback", daemon=True)
        self._feeder.start()
        self._stream.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until everything was handed to the output; True when it was."""
        done = self._done.wait(timeout)
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        return done

    @property
    def finished(self) -> bool:
        """Whether playback reached its end (or a stop finished fading)."""
        return self._done.is_set()

    def stop(self) -> None:
        """Stop with a short fade (no click) and close the output."""
        if self._stream is None:
            return
        if not self._done.is_set():
            self._stopping = True
            self._done.wait(STOP_FADE_S * 4 + 4 * self.block / self.sample_rate)
        self._halt.set()
        try:
            self._stream.stop()
        finally:
            self._stream.close()
        if self._feeder is not None:
            self._feeder.join(2.0)

    close = stop

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- where we are ---------------------------------------------------------------------
    @property
    def latency_s(self) -> float:
        """The output's latency: from a sample handed over to it being heard."""
        return float(self._stream.latency) if self._stream is not None else 0.0

    @property
    def device_name(self) -> str:
        """The output device's name (empty before :meth:`start`)."""
        return str(self._stream.device_name) if self._stream is not None else ""

    @property
    def position(self) -> int:
        """Output samples heard so far: handed to the output, less its latency."""
        heard = self._consumed - round(self.latency_s * self.sample_rate)
        return min(max(heard, 0), self.renderer.length)

    @property
    def position_s(self) -> float:
        """Recording seconds being heard now (for a play cursor)."""
        return self.renderer.position_of(self.position)


# -- backends --------------------------------------------------------------------------------


def default_output() -> Callable[..., OutputStream]:
    """The backend a :class:`Player` uses when given none.

    :class:`FakeOutput` (real time) when ``SPECSCOPE_AUDIO_OUTPUT=fake``, else
    :class:`SoundDeviceOutput` (which raises a one-line :class:`SpecscopeError`
    when there is no device).
    """
    if os.environ.get(AUDIO_OUTPUT_ENV, "").strip().lower() == "fake":
        return FakeOutput(latency_s=0.05, rate=1.0, device_name="fake output")
    return SoundDeviceOutput()


def load_sounddevice() -> Any:
    """The ``sounddevice`` module for playback, or a one-line error saying what to install."""
    return sound.load_sounddevice("playback", "audio output")


class SoundDeviceOutput:
    """PortAudio output through ``sounddevice``, for :class:`Player`.

    Parameters
    ----------
    device : str or int, optional
        Name (or part of it) or index; ``$SPECSCOPE_AUDIO_DEVICE``, else the
        default output, when omitted.

    Raises
    ------
    SpecscopeError
        No sounddevice, no PortAudio, or no such output device (one line).
    """

    def __init__(self, device: str | int | None = None) -> None:
        sd = load_sounddevice()
        if device in (None, ""):
            device = os.environ.get(AUDIO_DEVICE_ENV) or None
        if isinstance(device, str) and device.strip().isdigit():
            device = int(device)
        where = f"audio output {device!r}" if device is not None else "the default audio output"
        try:
            info = sd.query_devices(device, "output")
        except (ValueError, sd.PortAudioError) as exc:
            raise SpecscopeError(f"no audio output device: {where} is not available "
                                 f"({str(exc).splitlines()[0]}); list them with "
                                 f"python -m sounddevice, choose with {AUDIO_DEVICE_ENV}"
                                 ) from None
        if int(info.get("max_output_channels", 0)) < 1:
            raise SpecscopeError(f"no audio output device: {info.get('name')!r} has no "
                                 "output channels")
        self._sd = sd
        self.device = info.get("index", device)
        self.device_name = str(info.get("name"))

    def __call__(self, sample_rate: float, blocksize: int, callback: Callback) -> OutputStream:
        sd = self._sd

        def cb(outdata: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
            callback(outdata, frames)

        try:
            stream = sd.OutputStream(device=self.device, samplerate=sample_rate, channels=1,
                                     dtype="float32", blocksize=blocksize, latency="low",
                                     callback=cb)
        except (ValueError, sd.PortAudioError) as exc:
            raise SpecscopeError(f"{self.device_name}: cannot open the audio output at "
                                 f"{sample_rate:g} Hz ({str(exc).splitlines()[0]})") from None
        stream.device_name = self.device_name
        return stream


class FakeOutput:
    """An output that consumes samples on its own clock and keeps them.

    Parameters
    ----------
    latency_s : float
        The latency it reports (samples consumed are "heard" this much later).
    rate : float
        Its clock in multiples of real time (0: as fast as it can).
    device_name : str
        The name it reports.

    Attributes
    ----------
    consumed : int
        Samples taken so far.
    """

    def __init__(self, latency_s: float = 0.05, rate: float = 1.0,
                 device_name: str = "fake output") -> None:
        self.latency = float(latency_s)
        self.rate = float(rate)
        self.device_name = device_name
        self.consumed = 0
        self._blocks: list[np.ndarray] = []
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, sample_rate: float, blocksize: int, callback: Callback) -> FakeOutput:
        self.sample_rate, self.blocksize, self._callback = sample_rate, blocksize, callback
        return self

    def _run(self) -> None:
        buf = np.zeros((self.blocksize, 1), np.float32)
        period = self.blocksize / self.sample_rate / self.rate if self.rate > 0 else 0.0
        t_next = time.monotonic()
        while not self._halt.is_set():
            self._callback(buf, self.blocksize)
            self._blocks.append(buf[:, 0].copy())
            self.consumed += self.blocksize
            t_next += period
            self._halt.wait(max(0.0, t_next - time.monotonic()))

    def start(self) -> None:
        self._halt.clear()
        self._thread = threading.Thread(target=self._run, name="fake-output", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(2.0)

    def close(self) -> None:
        self.stop()

    def samples(self) -> np.ndarray:
        """Everything consumed so far, in order."""
        return np.concatenate(self._blocks) if self._blocks else np.zeros(0, np.float32)
