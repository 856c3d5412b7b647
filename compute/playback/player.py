"""Playing a rendered range on an audio output, with the position for a play cursor.

:class:`Player` renders on a feeder thread into a :class:`SampleRing`; the
output's callback copies from the ring into the device buffer and never
allocates arrays, waits, or touches anything but the ring and two counters.
The output is injectable: a backend is a callable
``backend(sample_rate, blocksize, callback, channels=1) -> OutputStream`` whose
stream calls ``callback(outdata, frames)`` with a float32 ``(frames, channels)``
buffer to fill (and ``xrun=True`` when the device itself ran dry).

Continuity comes first: the ring holds :data:`AHEAD_S` seconds rendered ahead
(sized in time, whatever the block), the feeder tops it up on its own thread,
so a long job on the compute thread or a busy machine does not starve the
device; the stream's latency is :data:`OUTPUT_LATENCY_S`, chosen to ride out
scheduling delays of a loaded machine rather than to be as low as possible.
Playback starts after a short head start (the device's first buffer,
:data:`FIRST_BUFFER_SHARE` of its latency) so the first sound comes quickly: the
device asks for its whole fill at once when it starts, and a callback that finds
the ring short waits for the feeder for as long as the device still holds sound
to play (its buffer's time at the converter, less :data:`WAIT_MARGIN_S`).  :class:`SoundDeviceOutput` is PortAudio through ``sounddevice`` (the
``audio`` extra); :class:`FakeOutput` consumes samples on its own clock, for
tests and headless runs.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, Self

import numpy as np

from .. import sound
from ..errors import InputError, SpecscopeError
from .stages import Shaper
from .system import quiet_stderr, raise_priority, raise_to_realtime, realtime_children

__all__ = ["AUDIO_DEVICE_ENV", "AUDIO_OUTPUT_ENV", "FakeOutput", "OutputStream", "Player", "SampleRing",
           "SoundDeviceOutput", "default_output", "load_sounddevice", "quiet_alsa"]

#: environment variable naming the output device (a name, part of one, or an index)
AUDIO_DEVICE_ENV = "SPECSCOPE_AUDIO_DEVICE"
#: environment variable choosing the default backend: "fake" plays on a FakeOutput
#: (real time, nothing heard; for headless runs and tests), anything else the sound card
AUDIO_OUTPUT_ENV = "SPECSCOPE_AUDIO_OUTPUT"
#: fade applied when playback is stopped before its end (s)
STOP_FADE_S = 0.01
#: seconds of sound the feeder keeps rendered ahead of the device
AHEAD_S = 2.0
#: seconds rendered before the output starts (the rest follows on the feeder thread)
HEAD_START_S = 0.05
#: silence a sound-card stream starts with (s): servers may drop a stream's first milliseconds
LEAD_S = 0.02
#: the latency asked of the audio output (s): long enough for a loaded machine
OUTPUT_LATENCY_S = 0.2

#: the share of the output latency rendered before the output starts: the device's first
#: two buffers (periods: PortAudio asks the host for four or more); the first is heard at
#: once, the second's callback has one period to wait for the feeder, the later ones more
FIRST_BUFFER_SHARE = 0.55
#: a callback that finds the ring short waits for the feeder until this long (s) before its
#: buffer is due at the converter
WAIT_MARGIN_S = 0.01
#: ... and never longer than this (s)
MAX_WAIT_S = 0.5
#: how often a waiting callback looks at the ring again (s)
WAIT_STEP_S = 0.001
#: callbacks whose device times give the play cursor's clock (their median)
CLOCK_CALLBACKS = 16
#: a block whose peak reaches this was held down by the renderer's limiter
LIMITED_PEAK = Shaper.threshold - 1e-3
#: how long "limiting" stays shown after the last limited block was heard (s)
LIMITING_HOLD_S = 0.3
#: a gain reduction smaller than this (dB) is not shown as limiting
LIMITING_DB = 0.05
#: rendered blocks whose peaks are remembered (more than the ring holds)
PEAK_BLOCKS = 1024

Callback = Callable[[np.ndarray, int], None]


class OutputStream(Protocol):
    """What a backend returns: a started/stopped stream that calls the callback.

    Attributes
    ----------
    latency : float
        The output latency (s).
    device_name : str
        The name of the output device, for people.
    """

    latency: float
    device_name: str

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def close(self) -> None: ...


class SampleRing:
    """A single-producer, single-consumer ring of float32 frames (``channels`` wide).

    Each index is written by one side only (``_head`` by the producer,
    ``_tail`` by the consumer), so no lock is needed and :meth:`read_into`
    never waits.  A 1-D block written to a multichannel ring goes to every
    channel.

    Parameters
    ----------
    capacity : int
        Frames the ring holds, at least 1.
    channels : int
        Samples per frame, at least 1.

    Raises
    ------
    InputError
        If ``capacity`` or ``channels`` is below 1.
    """

    def __init__(self, capacity: int, channels: int = 1) -> None:
        if capacity < 1:
            raise InputError(f"capacity={capacity} must be >= 1 sample")
        if channels < 1:
            raise InputError(f"channels={channels} must be >= 1")
        self.capacity = int(capacity)
        self.channels = int(channels)
        self._buf = np.zeros((self.capacity, self.channels), np.float32)
        self._head = 0  # frames written (producer only)
        self._tail = 0  # frames read (consumer only)
        self.closed = False  # set by the producer after its last write

    def __len__(self) -> int:
        return self._head - self._tail

    def write(self, x: np.ndarray) -> int:
        """Write as many frames of ``x`` as fit; returns how many."""
        x = x[:, None] if x.ndim == 1 else x
        n = min(x.shape[0], self.capacity - (self._head - self._tail))
        i = self._head % self.capacity
        first = min(n, self.capacity - i)
        self._buf[i:i + first] = x[:first]
        self._buf[:n - first] = x[first:n]
        self._head += n
        return n

    def read_into(self, out: np.ndarray) -> int:
        """Copy up to ``len(out)`` frames into ``out`` (1-D: the first channel); returns how many."""
        buf = self._buf if out.ndim == 2 else self._buf[:, 0]
        n = min(out.shape[0], self._head - self._tail)
        i = self._tail % self.capacity
        first = min(n, self.capacity - i)
        out[:first] = buf[i:i + first]
        out[first:n] = buf[:n - first]
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
        Samples per rendered block (and per callback of outputs that take a size).
    buffer_s : float
        Seconds rendered ahead into the ring (:data:`AHEAD_S`).
    channels : int
        Output channels (the renderer's ``channels`` when it has them, else 1).
    volume : float
        Linear output gain (0: mute), applied at the device so a change is heard at once.

    Attributes
    ----------
    underruns : int
        Callbacks that found the ring short before the end (heard as a gap).
    xruns : int
        Times the device itself ran dry (the callback came too late).
    """

    def __init__(self, renderer: Any, *, output: Callable[..., OutputStream] | None = None,
                 block: int = 1024, buffer_s: float = AHEAD_S, channels: int | None = None,
                 volume: float = 1.0) -> None:
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise InputError(f"block={block!r} must be a whole number >= 1")
        if not buffer_s > 0:
            raise InputError(f"buffer_s={buffer_s!r} must be > 0")
        self.renderer = renderer
        self.block = int(block)
        self.sample_rate = float(renderer.sample_rate)
        self._output = output if output is not None else default_output()
        if channels is None:
            channels = int(getattr(renderer, "channels", 1))
        self.channels = int(channels)
        self.volume = float(volume)
        self._ring = SampleRing(max(2 * self.block, round(buffer_s * self.sample_rate)),
                                self.channels)
        self._head_start = min(self._ring.capacity // 2,
                               max(self.block, round(HEAD_START_S * self.sample_rate)))
        # silence the stream starts with (not counted in the position)
        self._lead = (round(LEAD_S * self.sample_rate)
                      if getattr(self._output, "sound_card", False) else 0)
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
        self._measured_latency: float | None = None
        self._drained = 0  # silent frames handed over after the end
        self._end: int | None = None  # frames to hand over in all, when cut short
        self._drain = 0  # ... needed before the end is heard (set at start)
        self._running = False  # the output was started (and not stopped by us)
        self._holding = self._quiet = False  # the quiet stderr taken by start()
        # peaks of the rendered blocks (feeder only): where each ends, in output samples
        self._peak_ends = np.zeros(PEAK_BLOCKS, np.int64)
        self._peaks = np.zeros(PEAK_BLOCKS, np.float32)
        # ... and the limiter's gain over each (the renderer's block_gain; NaN: not said)
        self._gains = np.full(PEAK_BLOCKS, np.nan, np.float32)
        self._n_peaks = 0
        self._rendered = 0
        # the device's clock: monotonic times at which output sample 0 would be heard,
        # one per callback (its buffer's DAC time less the samples before it)
        self._zeros = np.zeros(CLOCK_CALLBACKS)
        self._n_zeros = 0
        self.underruns = 0
        self.xruns = 0

    # -- the device side ------------------------------------------------------------------
    def _callback(self, outdata: np.ndarray, frames: int, xrun: bool = False,
                  latency: float | None = None) -> None:
        col = outdata if outdata.shape[1] == self.channels else outdata[:, 0]
        end = self._end
        allowed = frames if end is None else max(0, min(frames, end - self._consumed))
        n = self._ring.read_into(col[:allowed])
        if n < allowed and latency is not None and not self._stopping:
            n += self._wait_for(col, n, allowed, latency)
        ended = self._ring.closed or (end is not None and self._consumed + n >= end)
        if n < frames:
            outdata[n:] = 0.0
            if not ended and not self._stopping:
                self.underruns += 1
        if xrun and not self._stopping:
            self.xruns += 1
        if latency is not None:
            if self._measured_latency is None:
                raise_to_realtime()  # the device's thread, on its first callback
            self._measured_latency = latency
            # this buffer's first frame is heard `latency` from now: the clock of the cursor
            self._zeros[self._n_zeros % CLOCK_CALLBACKS] = (
                time.monotonic() + latency - self._consumed / self.sample_rate)
            self._n_zeros += 1
        if self._stopping:  # fade out what is left, then silence
            k = min(n, self._fade.size - self._fade_pos)
            fade = self._fade[self._fade_pos:self._fade_pos + k]
            outdata[:k] *= fade[:, None]
            outdata[k:n] = 0.0
            self._fade_pos += k
            if self._fade_pos >= self._fade.size:
                self._done.set()
        if self.volume != 1.0:
            outdata *= self.volume
        if col is not outdata:  # a mono stream on a wider device: the sound on every channel
            outdata[:, 1:] = outdata[:, :1]
        self._consumed += n
        if ended and (end is not None or len(self._ring) == 0) and not self._stopping:
            # the end was handed over: done once the device has played it out
            self._drained += frames - n
            if self._drained >= self._drain:
                self._done.set()

    def _wait_for(self, col: np.ndarray, n: int, allowed: int, latency: float) -> int:
        """Wait for the feeder to fill ``col[n:allowed]``, while the device still plays
        what it holds: this buffer is heard ``latency`` s from now, so a wait of up to
        that, less :data:`WAIT_MARGIN_S`, is not heard (at the start, when the device
        asks for its whole fill at once; on a machine that delayed the feeder).
        Returns the frames added."""
        deadline = time.monotonic() + min(latency - WAIT_MARGIN_S, MAX_WAIT_S)
        got = 0
        while (n + got < allowed and not self._ring.closed and not self._halt.is_set()
               and time.monotonic() < deadline):
            time.sleep(WAIT_STEP_S)
            got += self._ring.read_into(col[n + got:allowed])
        return got

    # -- the feeder side ------------------------------------------------------------------
    def _note_peak(self, b: np.ndarray) -> None:
        """Remember a rendered block's peak, for :attr:`limiting` (the feeder's thread)."""
        i = self._n_peaks % PEAK_BLOCKS
        self._rendered += b.shape[0]
        self._peak_ends[i] = self._rendered
        self._peaks[i] = float(np.max(np.abs(b))) if b.size else 0.0
        self._gains[i] = float(getattr(self.renderer, "block_gain", np.nan))
        self._n_peaks += 1

    def _feed_block(self, b: np.ndarray) -> bool:
        """Write one block, waiting for room; False when halted."""
        self._note_peak(b)
        off = 0
        wait = min(0.02, self.block / self.sample_rate / 2)
        while off < b.shape[0]:
            if self._halt.is_set():
                return False
            off += self._ring.write(b[off:])
            if off < b.shape[0]:
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
        """Open the output and start playing (returns once the output runs).

        The output is opened on the feeder's thread, after it asked for a higher
        priority, so the threads the audio library starts for the stream
        inherit it; errors opening it are raised here.
        """
        if self._stream is not None or self._feeder is not None:
            return
        blocks = self.renderer.blocks(self.block)
        self._quiet = bool(getattr(self._output, "sound_card", False))
        if self._quiet:  # PortAudio's lines on a device gone away go to the log
            quiet_stderr.acquire()
        self._holding = True
        opened = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            raise_priority()
            try:
                self._open(blocks)
            except BaseException as exc:  # noqa: BLE001 -- raised by start()
                failure.append(exc)
                return
            finally:
                opened.set()
            self._feed(blocks)

        self._feeder = threading.Thread(target=run, name="specscope-playback", daemon=True)
        self._feeder.start()
        opened.wait()
        if failure:
            self._feeder.join()
            self._feeder = None
            self._let_go()
            raise failure[0]

    def _let_go(self) -> None:
        """Give back the quiet standard error taken by :meth:`start`."""
        if self._holding:
            self._holding = False
            if self._quiet:
                quiet_stderr.release()

    def _open(self, blocks: Any) -> None:
        """Open the output, give the ring its head start and start the output."""
        if self.channels == 1:
            stream = self._output(self.sample_rate, self.block, self._callback)
        else:
            stream = self._output(self.sample_rate, self.block, self._callback,
                                  channels=self.channels)
        latency = float(getattr(stream, "latency", 0.0))
        # a short silence first: some servers drop the first milliseconds of a stream
        self._ring.write(np.zeros(self._lead, np.float32))
        if self._lead:  # a sound card plays its buffer out after the last sample
            self._drain = round(latency * 2 * self.sample_rate) + self.block
        # a head start in the ring covering the device's first buffers (periods: a
        # share of its latency), the first heard at once; the device asks for the rest
        # of its fill at once too, but those buffers are heard later and their callbacks
        # wait for the feeder, which renders faster than real time (see _callback)
        # (other outputs: half the ring, as a test's output may take samples at any pace)
        fill = round(FIRST_BUFFER_SHARE * latency * self.sample_rate)
        head = (min(self._ring.capacity // 2, max(self._head_start, fill) + self.block
                    + self._lead)
                if self._lead else self._ring.capacity // 2)
        for b in blocks:
            self._note_peak(b)
            self._ring.write(b)
            if len(self._ring) + self.block > head:
                break
        else:
            self._ring.closed = True
        self._stream = stream
        with realtime_children():  # the stream's callback thread starts here
            stream.start()
        self._running = True

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

    def end_after(self, period: int) -> None:
        """End at the next multiple of ``period`` output samples not yet handed over.

        For a loop switched off: the pass being heard is the last, whatever was
        rendered ahead of it.
        """
        k = self._consumed - self._lead
        self._end = self._lead + (k // int(period) + 1) * int(period)

    def stop(self) -> None:
        """Stop with a short fade (no click) and close the output."""
        if self._stream is None:
            return
        if not self._done.is_set():
            self._stopping = True
            self._done.wait(STOP_FADE_S * 4 + 4 * self.block / self.sample_rate)
        self._halt.set()
        self._running = False
        stream = self._stream
        # played out or faded already: no need to wait for the device's buffer; a device
        # gone away cannot be stopped or closed, and says so itself (Player.lost)
        with contextlib.suppress(Exception):
            (getattr(stream, "abort", None) or stream.stop)()
        with contextlib.suppress(Exception):
            stream.close()
        if self._feeder is not None:
            self._feeder.join(2.0)
        self._let_go()

    close = stop

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- where we are ---------------------------------------------------------------------
    @property
    def latency_s(self) -> float:
        """The output's latency: from a sample handed over to it being heard.

        Measured from the device's own clock (the time its callback's first
        sample reaches the converter) once playing, the stream's nominal latency
        before.
        """
        if self._measured_latency is not None:
            return self._measured_latency
        return float(self._stream.latency) if self._stream is not None else 0.0

    @property
    def lost(self) -> bool:
        """Whether the output stopped by itself before the end (its device went away)."""
        return (self._running and not self._done.is_set()
                and getattr(self._stream, "active", True) is False)

    def _heard_blocks(self) -> np.ndarray:
        """Which remembered blocks were heard in the last :data:`LIMITING_HOLD_S`."""
        n = min(self._n_peaks, PEAK_BLOCKS)
        pos = self.position
        ends = self._peak_ends[:n]
        return (ends > pos - round(LIMITING_HOLD_S * self.sample_rate)) \
            & (ends - self.block <= pos)

    @property
    def limiting(self) -> bool:
        """Whether the renderer's limiter held down what was heard in the last
        :data:`LIMITING_HOLD_S` (its gain went below 1; for a renderer that does not
        say its gain: a block reached the limiter's ceiling)."""
        if self.limiter_db < -LIMITING_DB:
            return True
        heard = self._heard_blocks()
        n = heard.size
        known = ~np.isnan(self._gains[:n])
        return bool(np.any(self._peaks[:n][heard & ~known] >= LIMITED_PEAK))

    @property
    def limiter_db(self) -> float:
        """The limiter's deepest gain reduction over what was heard in the last
        :data:`LIMITING_HOLD_S`, in dB (<= 0; 0: it did not act, or the renderer
        does not say)."""
        heard = self._heard_blocks()
        gains = self._gains[:heard.size][heard]
        gains = gains[~np.isnan(gains)]
        if not gains.size:
            return 0.0
        return float(min(0.0, 20.0 * np.log10(max(float(gains.min()), 1e-6))))

    @property
    def dropouts(self) -> int:
        """Gaps heard: callbacks the ring could not fill and device underruns."""
        return self.underruns + self.xruns

    @property
    def ahead_s(self) -> float:
        """Seconds rendered and waiting in the ring."""
        return len(self._ring) / self.sample_rate

    @property
    def device_name(self) -> str:
        """The output device's name (empty before :meth:`start`)."""
        return str(self._stream.device_name) if self._stream is not None else ""

    @property
    def position(self) -> int:
        """Output samples heard now.

        From the device's clock where the output has one: each callback says when
        its first frame reaches the converter, which gives the time output sample 0
        was heard (the median of the last :data:`CLOCK_CALLBACKS` callbacks, so one
        late callback does not move it); the position is interpolated from it to
        this moment, never past what was handed over.  Other outputs: handed to
        the output, less its latency.
        """
        handed = self._consumed - self._lead
        n = min(self._n_zeros, CLOCK_CALLBACKS)
        if n:
            zero = float(np.median(self._zeros[:n]))
            heard = min(round((time.monotonic() - zero) * self.sample_rate) - self._lead,
                        handed)
        else:
            heard = handed - round(self.latency_s * self.sample_rate)
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

    Returns
    -------
    callable
        The backend: ``backend(sample_rate, blocksize, callback, channels)`` returns
        an :class:`OutputStream`.
    """
    if os.environ.get(AUDIO_OUTPUT_ENV, "").strip().lower() == "fake":
        return FakeOutput(latency_s=0.05, rate=1.0, device_name="fake output")
    return SoundDeviceOutput()


_ALSA_QUIET: list[Any] = []


def quiet_alsa() -> None:
    """Keep ALSA's library messages ("underrun occurred") off stderr.

    Underruns are counted by the player and shown by the app instead.  Done
    once per process; without libasound (another host API) nothing happens.
    """
    if _ALSA_QUIET:
        return
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("asound")
    _ALSA_QUIET.append(None)
    if not name:
        return
    try:
        lib = ctypes.CDLL(name)
        handler_type = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                        ctypes.c_int, ctypes.c_char_p)
        handler = handler_type(lambda *_: None)
        lib.snd_lib_error_set_handler(handler)
    except (OSError, AttributeError):
        return
    _ALSA_QUIET.append(handler)  # kept alive as long as ALSA may call it


def load_sounddevice() -> Any:
    """The ``sounddevice`` module for playback, or a one-line error saying what to install.

    Returns
    -------
    module
        The imported ``sounddevice`` module.

    Raises
    ------
    SpecscopeError
        If ``sounddevice`` is not installed or PortAudio cannot be loaded.
    """
    return sound.load_sounddevice("playback", "audio output")


class SoundDeviceOutput:
    """PortAudio output through ``sounddevice``, for :class:`Player`.

    Parameters
    ----------
    device : str or int, optional
        Name (or part of it) or index; ``$SPECSCOPE_AUDIO_DEVICE``, else the
        default output, when omitted.
    latency : float
        The output latency asked for (s).

    Raises
    ------
    SpecscopeError
        No sounddevice, no PortAudio, or no such output device (one line).
    """

    #: a sound card: a player starts its stream with a short silence (:data:`LEAD_S`)
    sound_card = True

    def __init__(self, device: str | int | None = None,
                 latency: float = OUTPUT_LATENCY_S) -> None:
        sd = load_sounddevice()
        quiet_alsa()
        self.latency = float(latency)
        if device in (None, ""):
            device = os.environ.get(AUDIO_DEVICE_ENV) or None
        if isinstance(device, str) and device.strip().isdigit():
            device = int(device)
        where = f"audio output {device!r}" if device is not None else "the default audio output"
        try:
            with quiet_stderr:
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

    def __call__(self, sample_rate: float, blocksize: int, callback: Callback,
                 channels: int = 1) -> OutputStream:
        sd = self._sd

        def cb(outdata: np.ndarray, frames: int, when: Any, status: Any) -> None:
            # the device's clock: when this buffer's first frame reaches the converter
            lat = when.outputBufferDacTime - when.currentTime
            callback(outdata, frames, bool(status.output_underflow),
                     lat if 0.0 < lat < 5.0 else None)

        try:
            # blocksize 0: the host's own period, which keeps its buffer full
            # PortAudio prints why it could not open (said below); the sound server's
            # client thread starts here
            with quiet_stderr, realtime_children():
                stream = sd.OutputStream(device=self.device, samplerate=sample_rate,
                                         channels=channels, dtype="float32", blocksize=0,
                                         latency=self.latency, callback=cb)
        except (ValueError, sd.PortAudioError) as exc:
            raise SpecscopeError(f"{self.device_name}: cannot open the audio output at "
                                 f"{sample_rate:g} Hz, {channels} channel(s) "
                                 f"({str(exc).splitlines()[0]})") from None
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

    def __call__(self, sample_rate: float, blocksize: int, callback: Callback,
                 channels: int = 1) -> FakeOutput:
        self.sample_rate, self.blocksize, self._callback = sample_rate, blocksize, callback
        self.channels = int(channels)
        return self

    def _run(self) -> None:
        buf = np.zeros((self.blocksize, self.channels), np.float32)
        period = self.blocksize / self.sample_rate / self.rate if self.rate > 0 else 0.0
        t_next = time.monotonic()
        while not self._halt.is_set():
            self._callback(buf, self.blocksize)
            self._blocks.append(buf[:, 0].copy() if self.channels == 1 else buf.copy())
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
        """Everything consumed so far, in order (``(n, channels)`` when wider than one)."""
        return np.concatenate(self._blocks) if self._blocks else np.zeros(0, np.float32)
