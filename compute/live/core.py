"""Live mode: sources, a block ring, and a session that streams a Pipeline.

The pieces, from the microphone to the screen::

    Source (its own thread or the audio callback)
        --put--> BlockRing (bounded; never blocks a real-time source, counts drops)
        --get--> LiveSession processing thread: the Pipeline's stages with carried
                 state (the same stage objects as Pipeline.run), per-block latency
        --append--> History (frames or samples; memory budget, spills to disk)
                 and optionally LiveRecorder (HDF5, SWMR, flushed per chunk)
    GUI thread (a timer): session.frames_since(n) / session.view(width) -- reads only.

Nothing here calls back into the GUI: a GUI polls.  Every read method of
:class:`LiveSession` is safe from any thread.

Sources
-------
A source is opened from a spec string by :func:`open_source`; the part before
the first ``:`` is the scheme, looked up in a registry that plugins extend with
:func:`register_source` (a scheme nobody registered is tried as the name of a
plugin, which is loaded and may register it):

``generator:KIND[,key=value...]``
    ``tone`` (frequency, amplitude, phase), ``chirp`` (f0, f1, period, method,
    amplitude: a periodic :func:`scipy.signal.chirp`), ``noise`` (color
    white|pink, amplitude, seed) with the aliases ``white`` and ``pink``,
    ``clicks`` (interval, amplitude); all take ``sample_rate`` (48000) and
    ``channels`` (1).
``file:PATH``
    Any recording :func:`~specscope.compute.io.open_recording` opens, played
    at ``rate`` times real time, looped when ``loop`` is true.
``device`` or ``device:NAME``
    Audio input through the optional ``sounddevice`` package (``pip install
    'specscope[audio]'``); ``device:NAME,sample_rate=44100,channels=2``.

``rate`` is the pacing: 1 is real time, 10 ten times faster, ``0`` (or
``inf``) as fast as the processing goes.  Paced sources behave like hardware:
a full ring drops the block (counted).  Unpaced sources wait for room instead,
so nothing is lost.

Backend
-------
A session runs on NumPy from start to stop: filter state is not
interchangeable between scipy and cupyx, so a stream never changes backend.
"""

from __future__ import annotations

import collections
import math
import os
import queue
import shutil
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import numpy as np

from .._version import __version__
from ..errors import InputError, RecordingError, SpecscopeError

__all__ = [
    "BlockRing",
    "DeviceSource",
    "FileSource",
    "GeneratorSource",
    "History",
    "LatencyStats",
    "LiveRecorder",
    "LiveSession",
    "LiveStats",
    "Source",
    "open_source",
    "recover_recording",
    "register_source",
    "source_schemes",
]

#: default samples per block
DEFAULT_BLOCK = 1024
#: default blocks the ring between source and processing holds
DEFAULT_RING_BLOCKS = 64
#: default bytes of history kept in memory before spilling to disk
DEFAULT_HISTORY_BYTES = 256 << 20
#: default bytes of spilled history kept on disk (older history is forgotten)
DEFAULT_DISK_BYTES = 4 << 30
#: format tag of a live recording (not a spectrogram export: it opens as a recording)
RECORDING_FORMAT = "specscope/live/1"


# -- the ring between source and processing ----------------------------------------------


class BlockRing:
    """A bounded single-producer, single-consumer ring of sample blocks.

    :meth:`put` never blocks: when the ring is full the block is dropped and
    counted (a real-time source must not wait).  The indices are only written
    by one side each (``_head`` by the producer, ``_tail`` by the consumer), so
    no lock guards the slots; an :class:`threading.Event` wakes a waiting
    consumer.

    Parameters
    ----------
    capacity : int
        Blocks held at most.
    """

    def __init__(self, capacity: int = DEFAULT_RING_BLOCKS) -> None:
        if capacity < 1:
            raise InputError(f"capacity={capacity} must be >= 1 block")
        self.capacity = int(capacity)
        self._slots: list[Any] = [None] * self.capacity
        self._head = 0  # blocks accepted (producer only)
        self._tail = 0  # blocks taken (consumer only)
        self._ready = threading.Event()
        self._space = threading.Event()
        self._closed = False
        #: blocks refused because the ring was full
        self.dropped_blocks = 0
        #: samples in those blocks
        self.dropped_samples = 0
        #: most blocks ever waiting at once
        self.high_water = 0

    def __len__(self) -> int:
        return self._head - self._tail

    @property
    def closed(self) -> bool:
        """True once the producer said no more blocks will come."""
        return self._closed

    def put(self, block: np.ndarray) -> bool:
        """Add a block (the ring keeps the reference); False, counted, when full."""
        used = self._head - self._tail
        if used >= self.capacity:
            self.dropped_blocks += 1
            self.dropped_samples += int(block.shape[0])
            return False
        self._slots[self._head % self.capacity] = (block, time.perf_counter())
        self._head += 1
        self.high_water = max(self.high_water, used + 1)
        self._ready.set()
        return True

    def put_wait(self, block: np.ndarray, stop: threading.Event | None = None) -> bool:
        """Add a block, waiting for room (for unpaced sources); False when ``stop`` is set."""
        while self._head - self._tail >= self.capacity:
            if stop is not None and stop.is_set():
                return False
            self._space.clear()
            if self._head - self._tail >= self.capacity:
                self._space.wait(0.05)
        return self.put(block)

    def get(self, timeout: float | None = None) -> tuple[np.ndarray, float] | None:
        """The oldest ``(block, put time)``, or None after ``timeout`` s (or when closed)."""
        if self._head == self._tail:
            self._ready.clear()
            if self._head == self._tail:
                if self._closed:
                    return None
                self._ready.wait(timeout)
                if self._head == self._tail:
                    return None
        i = self._tail % self.capacity
        item = self._slots[i]
        self._slots[i] = None
        self._tail += 1
        self._space.set()
        return item

    def close(self) -> None:
        """Producer side: no more blocks; wakes the consumer."""
        self._closed = True
        self._ready.set()


# -- sources ------------------------------------------------------------------------------


class Source(ABC):
    """Where live samples come from.

    A source delivers blocks shaped (samples, channels), float32 or complex64,
    into a :class:`BlockRing` from its own thread or callback, and closes the
    ring when it has no more.  Subclasses set the attributes in ``__init__`` and
    implement :meth:`start` and :meth:`stop`.
    """

    #: samples per second
    sample_rate: float = 0.0
    #: channels per block
    n_channels: int = 1
    #: complex (IQ) samples
    is_complex: bool = False
    #: samples per block
    block: int = DEFAULT_BLOCK
    #: centre frequency of an RF source, else None
    center_frequency: float | None = None
    #: True when blocks arrive at the pace of time (a full ring drops them)
    realtime: bool = True
    #: the spec it was opened from, or a description
    name: str = ""
    #: blocks the source itself lost (audio driver overflows)
    overflows: int = 0

    @abstractmethod
    def start(self, ring: BlockRing) -> None:
        """Begin delivering blocks into ``ring``; return at once."""

    @abstractmethod
    def stop(self) -> None:
        """Stop delivering and close the ring; safe to call twice."""

    def describe(self) -> dict[str, Any]:
        return {"source": self.name, "sample_rate": self.sample_rate,
                "channels": self.n_channels, "complex": self.is_complex, "block": self.block,
                "realtime": self.realtime}


def _check_rate(rate: float | None) -> float:
    """0 for unpaced, else the speed factor."""
    if rate is None:
        return 0.0
    r = float(rate)
    if math.isnan(r) or r < 0:
        raise InputError(f"rate={rate!r} must be >= 0 (1: real time, 0: as fast as possible)")
    return 0.0 if math.isinf(r) else r


def _check_block(block: int) -> int:
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise InputError(f"block={block!r} must be a whole number of samples >= 1")
    if block > 1 << 22:
        raise InputError(f"block={block} is too large (at most {1 << 22} samples)")
    return int(block)


class ThreadedSource(Source):
    """A source computed block by block on its own thread, paced by ``rate``.

    Subclasses implement :meth:`read_block` for absolute sample positions.  A
    block is delivered when its last sample would have arrived had the
    signal been captured at ``rate`` times real time; ``rate=0`` delivers as
    fast as the consumer takes them (waiting for room, never dropping).
    """

    def __init__(self, *, sample_rate: float, n_channels: int, block: int = DEFAULT_BLOCK,
                 rate: float | None = 1.0, duration: float | None = None,
                 name: str = "") -> None:
        self.sample_rate = float(sample_rate)
        self.n_channels = int(n_channels)
        self.block = _check_block(block)
        self.rate = _check_rate(rate)
        self.realtime = self.rate > 0
        if duration is not None and not (duration >= 0 and math.isfinite(duration)):
            raise InputError(f"duration={duration!r} must be a number of seconds >= 0")
        #: samples delivered at most (None: until the source ends or is stopped)
        self.limit = None if duration is None else round(duration * self.sample_rate)
        self.name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: samples delivered so far (or offered to a full ring)
        self.position = 0
        #: when the first block was due (time.perf_counter), set by start
        self.started_at: float | None = None

    @abstractmethod
    def read_block(self, start: int, n: int) -> np.ndarray | None:
        """Samples ``start:start+n`` shaped (n, channels); fewer at the end; None past it."""

    def blocks(self, n_samples: int | None = None) -> np.ndarray:
        """Samples ``0:n_samples`` read block by block without pacing (for tests, notebooks)."""
        out, pos = [], 0
        limit = self.limit if n_samples is None else n_samples
        while limit is None or pos < limit:
            n = self.block if limit is None else min(self.block, limit - pos)
            b = self.read_block(pos, n)
            if b is None or b.shape[0] == 0:
                break
            out.append(b)
            pos += b.shape[0]
        return np.concatenate(out) if out else np.zeros((0, self.n_channels), np.float32)

    def start(self, ring: BlockRing) -> None:
        if self._thread is not None:
            raise InputError(f"{self.name}: a source can be started once")
        self._thread = threading.Thread(target=self._run, args=(ring,),
                                        name=f"specscope-live-source {self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)

    def _run(self, ring: BlockRing) -> None:
        try:
            t0 = time.perf_counter()
            self.started_at = t0
            pos = 0
            while not self._stop.is_set():
                n = self.block if self.limit is None else min(self.block, self.limit - pos)
                if n <= 0:
                    break
                blk = self.read_block(pos, n)
                if blk is None or blk.shape[0] == 0:
                    break
                pos += blk.shape[0]
                if self.rate:
                    due = t0 + pos / (self.sample_rate * self.rate)
                    wait = due - time.perf_counter()
                    if wait > 0 and self._stop.wait(wait):
                        break
                    ring.put(blk)
                elif not ring.put_wait(blk, self._stop):
                    break
                self.position = pos
        finally:
            ring.close()


def _parse_options(text: str, where: str) -> dict[str, str]:
    """``key=value,key=value`` -> dict (values still text)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise InputError(f"{where}: {part!r} must be key=value")
        k, v = (s.strip() for s in part.split("=", 1))
        if k in out:
            raise InputError(f"{where}: {k!r} is given twice")
        out[k] = v
    return out


def _number(options: dict[str, Any], key: str, default: Any, where: str, *,
            minimum: float | None = None, integer: bool = False,
            positive: bool = False) -> Any:
    if key not in options:
        return default
    raw = options.pop(key)
    try:
        value = float(raw)
        if integer:
            if value != int(value):
                raise ValueError
            value = int(value)
    except (TypeError, ValueError):
        kind = "a whole number" if integer else "a number"
        raise InputError(f"{where}: {key}={raw!r} must be {kind}") from None
    if not math.isfinite(value) or (minimum is not None and value < minimum) or (
            positive and value <= 0):
        bound = "> 0" if positive else f">= {minimum:g}"
        raise InputError(f"{where}: {key}={raw!r} must be {bound}")
    return value


# pink noise: first-order pole/zero pairs at geometrically spaced corner
# frequencies; a zero a quarter-step above each pole makes every step half
# -20 dB/decade, half flat, so the average slope is -10 dB/decade (1/f power)
_PINK_STEP = 10 ** 0.5


def _pink_sos(fs: float) -> tuple[np.ndarray, float]:
    import scipy.signal as ss

    poles, zeros = [], []
    f = 2.0
    while f < fs / 2:
        poles.append(math.exp(-2 * math.pi * f / fs))
        zeros.append(math.exp(-2 * math.pi * f * _PINK_STEP ** 0.5 / fs))
        f *= _PINK_STEP
    sos = ss.zpk2sos(np.array(zeros), np.array(poles), 1.0)
    imp = np.zeros(1 << 20)
    imp[0] = 1.0
    gain = float(np.sqrt(np.sum(ss.sosfilt(sos, imp) ** 2)))  # std for unit white input
    return sos, gain


class GeneratorSource(ThreadedSource):
    """Synthetic signals, sample-accurate whatever the block size.

    Kinds and their parameters (``sample_rate`` and ``channels`` for all):

    ``tone``
        ``amplitude * cos(2 pi frequency n / fs + phase)``; frequency 1000 Hz,
        amplitude 0.5, phase 0 rad.
    ``chirp``
        ``amplitude * scipy.signal.chirp(t mod period, f0, period, f1, method)``
        with ``t mod period`` counted in whole samples; f0 100 Hz, f1
        0.45 fs, period 2 s, method linear, amplitude 0.5.
    ``noise`` (``white``, ``pink``)
        Gaussian, ``amplitude`` standard deviation (0.1), independent per
        channel; white is ``default_rng(seed).standard_normal((n, channels))``;
        pink is white noise through a -10 dB/decade IIR filter (2 Hz up),
        normalised to the same standard deviation.  ``seed`` 0.
    ``clicks``
        ``amplitude`` (1.0) at every multiple of ``interval`` seconds (0.5),
        rounded to samples, else 0.
    """

    KINDS = ("tone", "chirp", "noise", "white", "pink", "clicks")

    def __init__(self, kind: str, *, sample_rate: float = 48000.0, channels: int = 1,
                 block: int = DEFAULT_BLOCK, rate: float | None = 1.0,
                 duration: float | None = None, **params: Any) -> None:
        where = f"generator:{kind}"
        if kind not in self.KINDS:
            import difflib
            close = difflib.get_close_matches(kind, self.KINDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{where}: unknown generator{hint} (generators: "
                             f"{', '.join(self.KINDS)})")
        opts = dict(params)
        fs = _number({"sample_rate": sample_rate}, "sample_rate", 48000.0, where, positive=True)
        n_ch = _number({"channels": channels}, "channels", 1, where, integer=True, minimum=1)
        super().__init__(sample_rate=fs, n_channels=n_ch, block=block, rate=rate,
                         duration=duration, name=f"generator:{kind}")
        if kind in ("white", "pink"):
            opts.setdefault("color", kind)
            kind = "noise"
        self.kind = kind
        self.params: dict[str, Any] = {}
        if kind == "tone":
            self.params["frequency"] = _number(opts, "frequency", 1000.0, where)
            self.params["amplitude"] = _number(opts, "amplitude", 0.5, where)
            self.params["phase"] = _number(opts, "phase", 0.0, where)
        elif kind == "chirp":
            self.params["f0"] = _number(opts, "f0", 100.0, where, minimum=0)
            self.params["f1"] = _number(opts, "f1", 0.45 * fs, where, minimum=0)
            self.params["period"] = _number(opts, "period", 2.0, where, positive=True)
            self.params["amplitude"] = _number(opts, "amplitude", 0.5, where)
            method = str(opts.pop("method", "linear"))
            methods = ("linear", "quadratic", "logarithmic", "hyperbolic")
            if method not in methods:
                raise InputError(f"{where}: method={method!r} must be one of {', '.join(methods)}")
            self.params["method"] = method
            self._period = max(1, round(self.params["period"] * fs))
        elif kind == "noise":
            color = str(opts.pop("color", "white"))
            if color not in ("white", "pink"):
                raise InputError(f"{where}: color={color!r} must be white or pink")
            self.params["color"] = color
            self.params["amplitude"] = _number(opts, "amplitude", 0.1, where, minimum=0)
            self.params["seed"] = _number(opts, "seed", 0, where, integer=True, minimum=0)
            self._rng = np.random.default_rng(self.params["seed"])
            self._next = 0
            if color == "pink":
                self._sos, self._gain = _pink_sos(fs)
                self._zi = np.zeros((self._sos.shape[0], 2, n_ch))
        elif kind == "clicks":
            self.params["interval"] = _number(opts, "interval", 0.5, where, positive=True)
            self.params["amplitude"] = _number(opts, "amplitude", 1.0, where)
            self._period = max(1, round(self.params["interval"] * fs))
        if opts:
            raise InputError(f"{where}: unknown parameter {next(iter(opts))!r} (parameters: "
                             f"{', '.join([*self.params, 'sample_rate', 'channels'])})")

    def read_block(self, start: int, n: int) -> np.ndarray:
        fs, p = self.sample_rate, self.params
        idx = np.arange(start, start + n, dtype=np.int64)
        if self.kind == "tone":
            y = p["amplitude"] * np.cos(2 * np.pi * p["frequency"] * (idx / fs) + p["phase"])
        elif self.kind == "chirp":
            import scipy.signal as ss
            t = (idx % self._period) / fs
            y = p["amplitude"] * ss.chirp(t, p["f0"], p["period"], p["f1"], method=p["method"])
        elif self.kind == "clicks":
            y = np.where(idx % self._period == 0, p["amplitude"], 0.0)
        else:
            if start != self._next:  # noise is a stream: only sequential reads
                raise InputError(f"{self.name}: noise is read in order (asked for sample "
                                 f"{start}, next is {self._next})")
            self._next = start + n
            w = self._rng.standard_normal((n, self.n_channels))
            if p["color"] == "pink":
                import scipy.signal as ss
                w, self._zi = ss.sosfilt(self._sos, w, axis=0, zi=self._zi)
                w /= self._gain
            return (p["amplitude"] * w).astype(np.float32)
        y = y.astype(np.float32)
        return np.repeat(y[:, None], self.n_channels, axis=1)


class FileSource(ThreadedSource):
    """A recording played as if it were live: ``rate`` times real time, optionally looped.

    Parameters
    ----------
    recording : Recording or path
        Anything :func:`~specscope.compute.io.open_recording` opens, or an open
        :class:`~specscope.compute.io.base.Recording` (e.g. an ``ArrayRecording``).
    channels : list of int, optional
        Channels to play (all by default).
    """

    def __init__(self, recording: Any, *, block: int = DEFAULT_BLOCK,
                 rate: float | None = 1.0, loop: bool = False,
                 duration: float | None = None, channels: list[int] | None = None,
                 **open_options: Any) -> None:
        from ..io.base import Recording, open_recording

        self._owned = not isinstance(recording, Recording)
        rec = open_recording(recording, **open_options) if self._owned else recording
        self.recording = rec
        self._channels = rec._channel_list(channels)
        if rec.n_samples == 0:
            raise RecordingError(f"{rec.path.name}: has no samples to play")
        super().__init__(sample_rate=rec.sample_rate, n_channels=len(self._channels),
                         block=block, rate=rate, duration=duration,
                         name=f"file:{rec.path}")
        self.is_complex = rec.is_complex
        self.center_frequency = rec.center_frequency
        self.loop = bool(loop)

    def read_block(self, start: int, n: int) -> np.ndarray | None:
        total = self.recording.n_samples
        if not self.loop:
            if start >= total:
                return None
            return self.recording.read(start, min(total, start + n), self._channels)
        parts, pos, left = [], start % total, n
        while left > 0:
            stop = min(total, pos + left)
            parts.append(self.recording.read(pos, stop, self._channels))
            left -= stop - pos
            pos = 0
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def stop(self) -> None:
        super().stop()
        if self._owned:
            self.recording.close()


class DeviceSource(Source):
    """Audio input through ``sounddevice`` (PortAudio); its callback feeds the ring.

    Parameters
    ----------
    device : str or int, optional
        Name (or part of it) or index of an input device; the default input
        when omitted.
    sample_rate : float, optional
        The device's default rate when omitted.
    channels : int
        Input channels (1).
    """

    def __init__(self, device: str | int | None = None, *, sample_rate: float | None = None,
                 channels: int = 1, block: int = DEFAULT_BLOCK,
                 duration: float | None = None) -> None:
        sd = _sounddevice()
        where = f"device:{device}" if device not in (None, "") else "device"
        try:
            info = sd.query_devices(device if device not in (None, "") else None, "input")
        except (ValueError, sd.PortAudioError) as exc:
            raise RecordingError(f"{where}: no such audio input device "
                                 f"({str(exc).splitlines()[0]}); list them with "
                                 "python -m sounddevice") from None
        if int(info.get("max_input_channels", 0)) < 1:
            raise RecordingError(f"{where}: {info.get('name')!r} has no input channels")
        self._sd = sd
        self.device = info.get("name")
        self.sample_rate = float(sample_rate or info.get("default_samplerate") or 48000.0)
        self.n_channels = int(channels)
        if self.n_channels > int(info["max_input_channels"]):
            raise InputError(f"{where}: channels={channels} but {self.device!r} has "
                             f"{info['max_input_channels']} input channels")
        self.block = _check_block(block)
        self.realtime = True
        self.name = f"device:{self.device}"
        self.limit = None if duration is None else round(duration * self.sample_rate)
        self.position = 0
        self._stream: Any = None
        self._ring: BlockRing | None = None

    def start(self, ring: BlockRing) -> None:
        self._ring = ring

        def callback(indata: np.ndarray, frames: int, _time: Any, status: Any) -> None:
            if status and status.input_overflow:
                self.overflows += 1
            if self.limit is not None:
                frames = min(frames, self.limit - self.position)
                if frames <= 0:
                    ring.close()
                    raise self._sd.CallbackStop()
            ring.put(indata[:frames].copy())  # PortAudio reuses indata
            self.position += frames

        try:
            self._stream = self._sd.InputStream(
                device=self.device, samplerate=self.sample_rate, channels=self.n_channels,
                blocksize=self.block, dtype="float32", callback=callback,
                finished_callback=ring.close)
            self._stream.start()
        except self._sd.PortAudioError as exc:
            raise RecordingError(f"{self.name}: cannot open the audio input "
                                 f"({str(exc).splitlines()[0]})") from None

    def stop(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            finally:
                self._stream = None
        if self._ring is not None:
            self._ring.close()


def _sounddevice() -> Any:
    try:
        import sounddevice
    except ImportError:
        raise SpecscopeError("audio input needs the sounddevice package: pip install "
                             "'specscope[audio]'") from None
    except OSError as exc:  # the package is there but PortAudio is not
        raise SpecscopeError(f"audio input is unavailable: {exc} (install PortAudio, "
                             "e.g. apt install libportaudio2)") from None
    return sounddevice


# -- the source registry --------------------------------------------------------------------

#: factory(target, *, block, rate, loop, duration) -> Source
SourceFactory = Callable[..., Source]


@dataclass(frozen=True)
class _SourceSpec:
    scheme: str
    factory: SourceFactory
    summary: str


_SOURCES: dict[str, _SourceSpec] = {}
_SOURCES_LOCK = threading.Lock()


def register_source(scheme: str, factory: SourceFactory, *, summary: str = "",
                    replace: bool = False) -> None:
    """Make ``scheme:TARGET`` specs open with ``factory``.

    ``factory(target, *, block, rate, loop, duration)`` returns a
    :class:`Source`; ``target`` is the text after ``scheme:`` ("" without it).
    A plugin registers its sources when imported; :func:`open_source` loads
    the plugin named like an unknown scheme.
    """
    if not scheme or not scheme.replace("_", "").replace("-", "").isalnum() or (
            scheme != scheme.lower()):
        raise InputError(f"scheme={scheme!r} must be lower-case letters, digits, '-' or '_'")
    with _SOURCES_LOCK:
        if scheme in _SOURCES and not replace:
            raise InputError(f"source scheme {scheme!r} is already registered")
        _SOURCES[scheme] = _SourceSpec(scheme, factory, summary)


def source_schemes() -> dict[str, str]:
    """Registered schemes and their one-line summaries."""
    with _SOURCES_LOCK:
        return {k: v.summary for k, v in sorted(_SOURCES.items())}


def open_source(spec: str, *, block: int = DEFAULT_BLOCK, rate: float | None = 1.0,
                loop: bool = False, duration: float | None = None) -> Source:
    """Open a source from ``scheme:target`` (see the module documentation)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("source must be generator:KIND, file:PATH or device[:NAME]")
    scheme, _, target = spec.strip().partition(":")
    scheme = scheme.lower()
    with _SOURCES_LOCK:
        entry = _SOURCES.get(scheme)
    if entry is None:
        entry = _plugin_source(scheme)
    if entry is None:
        known = ", ".join(f"{s}:" for s in source_schemes())
        raise InputError(f"source {spec!r}: unknown scheme {scheme!r} (known: {known})")
    return entry.factory(target, block=_check_block(block), rate=_check_rate(rate),
                         loop=bool(loop), duration=duration)


def _plugin_source(scheme: str) -> _SourceSpec | None:
    from ..extensions import plugins

    try:
        if scheme not in plugins.discover():
            return None
        plugins.load(scheme)
    except InputError:
        return None
    with _SOURCES_LOCK:
        return _SOURCES.get(scheme)


def _generator_factory(target: str, *, block: int, rate: float, loop: bool,
                       duration: float | None) -> Source:
    kind, _, rest = target.partition(",")
    opts: dict[str, Any] = _parse_options(rest, f"generator:{kind}")
    return GeneratorSource(kind.strip() or "chirp", block=block, rate=rate, duration=duration,
                           sample_rate=opts.pop("sample_rate", 48000.0),
                           channels=opts.pop("channels", 1), **opts)


def _file_factory(target: str, *, block: int, rate: float, loop: bool,
                  duration: float | None) -> Source:
    if not target:
        raise InputError("file: needs a path, e.g. file:recording.wav")
    return FileSource(target, block=block, rate=rate, loop=loop, duration=duration)


def _device_factory(target: str, *, block: int, rate: float, loop: bool,
                    duration: float | None) -> Source:
    name, _, rest = target.partition(",")
    if "=" in name:  # device:channels=2 (no name)
        name, rest = "", target
    where = f"device:{name}" if name else "device"
    opts: dict[str, Any] = _parse_options(rest, where)
    fs = _number(opts, "sample_rate", None, where, positive=True)
    channels = _number(opts, "channels", 1, where, integer=True, minimum=1)
    if opts:
        raise InputError(f"{where}: unknown parameter {next(iter(opts))!r} "
                         "(parameters: sample_rate, channels)")
    device: str | int | None = name or None
    if name.isdigit():
        device = int(name)
    return DeviceSource(device, sample_rate=fs, channels=channels, block=block,
                        duration=duration)


register_source("generator", _generator_factory,
                summary="synthetic: tone, chirp, noise (white, pink), clicks")
register_source("file", _file_factory, summary="a recording played in real time or faster")
register_source("device", _device_factory, summary="audio input (needs sounddevice)")


# -- the processing: the pipeline's stages with carried state ----------------------------


class _BlockProcessor:
    """Runs a bound pipeline's stages block by block, all channels at once.

    The same stage objects and the same calls as ``BoundPipeline.stream`` (which
    needs a known end), so the numbers equal :meth:`Pipeline.run`.  Each stage
    takes the block shaped (channels, samples) with its state carrying a
    channel axis (``push_rows``): one filter call and one STFT per block, not
    one per channel.
    """

    def __init__(self, bound: Any, n_channels: int) -> None:
        self.bound = bound
        self.steps = [(s.push_rows, s.new_rows_state(n_channels)) for s in bound.stages]
        spec = bound.spectrogram
        self.spec = spec.push_rows if spec is not None else None
        self.spec_state = spec.new_rows_state(n_channels) if spec is not None else None
        self.two_sided = bound.complex_output

    def push(self, block: np.ndarray, final: bool) -> np.ndarray:
        """Input (samples, channels) -> frames (frames, channels, freq) or samples (n, ch)."""
        y = block.T
        for push, st in self.steps:
            y = push(st, y, final)
        if self.spec is None:
            return y.T
        # (channels, frames, freq) -> (frames, channels, freq): a view; History copies
        return self.spec(self.spec_state, y, final, self.two_sided).transpose(1, 0, 2)


# -- latency statistics ------------------------------------------------------------------------


class LatencyStats:
    """Per-block latencies in a fixed log histogram (2 % bins): flat memory for any run.

    Percentiles are the geometric centre of the bin holding them (within 1 %);
    the maximum and the mean are exact.
    """

    _LO, _RATIO, _BINS = 1e-7, 1.02, 1200  # 0.1 us .. ~2e3 s

    def __init__(self, recent: int = 4096) -> None:
        self._counts = np.zeros(self._BINS + 1, np.int64)
        self._log_ratio = math.log(self._RATIO)
        self.count = 0
        self.total = 0.0
        self.max = 0.0
        #: the last ``recent`` latencies in seconds (for a live readout)
        self.recent: collections.deque[float] = collections.deque(maxlen=recent)

    def add(self, seconds: float) -> None:
        i = 0 if seconds <= self._LO else int(math.log(seconds / self._LO) / self._log_ratio) + 1
        self._counts[min(i, self._BINS)] += 1
        self.count += 1
        self.total += seconds
        self.max = max(self.max, seconds)
        self.recent.append(seconds)

    def percentile(self, q: float) -> float:
        """Seconds below which ``q`` % of the latencies are."""
        if self.count == 0:
            return 0.0
        counts = self._counts.copy()
        rank = q / 100.0 * counts.sum()
        i = int(np.searchsorted(np.cumsum(counts), max(rank, 1), side="left"))
        if i == 0:
            return self._LO
        centre = self._LO * self._RATIO ** (i - 0.5)
        return min(centre, self.max)


@dataclass
class LiveStats:
    """A snapshot of a session's counters (``to_dict`` gives JSON types)."""

    blocks_processed: int
    blocks_dropped: int
    samples_processed: int
    samples_dropped: int
    source_overflows: int
    latency_ms_median: float
    latency_ms_p99: float
    latency_ms_max: float
    latency_ms_mean: float
    delay_ms_p99: float
    block: int
    block_ms: float
    sample_rate: float
    channels: int
    frames: int
    history_first: int
    history_memory_bytes: int
    history_disk_bytes: int
    ring_high_water: int
    elapsed_s: float
    running: bool
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 4)
        return d


# -- history ------------------------------------------------------------------------------------


class _Chunk:
    __slots__ = ("count", "data", "nbytes", "path", "start")

    def __init__(self, start: int, data: np.ndarray) -> None:
        self.start = start
        self.count = 0
        self.data: np.ndarray | None = data
        self.path: Path | None = None
        self.nbytes = int(data.nbytes)


class History:
    """Items (spectrogram frames or samples) by absolute index, with a memory budget.

    Items are kept in chunks of about 1 MiB.  When the chunks in memory exceed
    ``memory_bytes`` the oldest are written to ``spill_dir`` by a background
    thread (off the processing path) and read back from there on demand; when
    the spilled chunks exceed ``disk_bytes`` the oldest are deleted and their
    items forgotten.  Appending is for one thread (the processing thread);
    reading is safe from any thread.

    Parameters
    ----------
    item_shape : tuple of int
        Shape of one item: (channels, frequencies) for frames, (channels,) for samples.
    dtype : dtype
    memory_bytes, disk_bytes : int
        Budgets; ``disk_bytes=0`` forgets instead of spilling.
    spill_dir : path, optional
        Folder for spilled chunks (a new temporary folder, removed by :meth:`close`,
        when omitted).
    chunk_items : int, optional
        Items per chunk (about 1 MiB by default).
    """

    def __init__(self, item_shape: tuple[int, ...], dtype: Any = np.float32, *,
                 memory_bytes: int = DEFAULT_HISTORY_BYTES, disk_bytes: int = DEFAULT_DISK_BYTES,
                 spill_dir: str | os.PathLike[str] | None = None,
                 chunk_items: int | None = None) -> None:
        self.item_shape = tuple(int(s) for s in item_shape)
        self.dtype = np.dtype(dtype)
        item_bytes = max(1, int(np.prod(self.item_shape)) * self.dtype.itemsize)
        # about 1 MiB per chunk, smaller for small budgets so that they can spill
        chunk_bytes = min(1 << 20, max(1, int(memory_bytes) // 8))
        self.chunk_items = int(chunk_items or max(1, chunk_bytes // item_bytes))
        if memory_bytes < 0 or disk_bytes < 0:
            raise InputError("memory_bytes and disk_bytes must be >= 0")
        self.memory_bytes = int(memory_bytes)
        self.disk_bytes = int(disk_bytes)
        self._given_dir = None if spill_dir is None else Path(spill_dir)
        self._spill_dir: Path | None = None
        self._lock = threading.Lock()        # the chunk list and counters
        self._disk_lock = threading.Lock()   # reading vs deleting spilled files
        self._chunks: collections.deque[_Chunk] = collections.deque()
        self._end = 0
        self._start = 0
        self._mem = 0
        self._disk = 0
        self._spill_q: queue.Queue[_Chunk | None] | None = None
        self._spiller: threading.Thread | None = None
        self._spilling: list[_Chunk] = []
        self._doomed: list[Path] = []
        self.spill_error: str | None = None

    # -- counters ---------------------------------------------------------------------------
    @property
    def start(self) -> int:
        """Index of the oldest item still held."""
        return self._start

    @property
    def end(self) -> int:
        """Items appended so far (the index of the next one)."""
        return self._end

    @property
    def memory_in_use(self) -> int:
        return self._mem

    @property
    def disk_in_use(self) -> int:
        return self._disk

    @property
    def spill_dir(self) -> Path | None:
        return self._spill_dir

    # -- writing (one thread) --------------------------------------------------------------
    def append(self, items: np.ndarray) -> None:
        """Add items shaped (n, *item_shape)."""
        n = int(items.shape[0])
        i = 0
        while i < n:
            with self._lock:
                last = self._chunks[-1] if self._chunks else None
            if last is None or last.data is None or last.count >= self.chunk_items or (
                    last.path is not None) or last in self._spilling:
                last = self._new_chunk()
            k = min(n - i, self.chunk_items - last.count)
            assert last.data is not None
            last.data[last.count:last.count + k] = items[i:i + k]
            with self._lock:
                last.count += k
                self._end += k
            i += k

    def _new_chunk(self) -> _Chunk:
        data = np.empty((self.chunk_items, *self.item_shape), self.dtype)
        c = _Chunk(self._end, data)
        with self._lock:
            self._chunks.append(c)
            self._mem += c.nbytes
            # chunks already on their way to disk will free their memory soon
            over = self._mem - self.memory_bytes - sum(o.nbytes for o in self._spilling)
            victims = []
            for old in self._chunks:
                if over <= 0 or old is c:
                    break
                if old.data is not None and old.path is None and old not in self._spilling:
                    victims.append(old)
                    over -= old.nbytes
            if not self.disk_bytes:
                for old in victims:
                    self._forget(old)
                victims = []
            self._spilling.extend(victims)
        for old in victims:
            self._spill(old)
        return c

    def _forget(self, c: _Chunk) -> None:
        """Drop the oldest chunk ``c`` (lock held)."""
        assert self._chunks[0] is c
        self._chunks.popleft()
        if c.data is not None:
            self._mem -= c.nbytes
            c.data = None
        self._start = self._chunks[0].start if self._chunks else self._end

    def _spill(self, c: _Chunk) -> None:
        if self._spiller is None:
            if self._given_dir is not None:
                self._given_dir.mkdir(parents=True, exist_ok=True)
                self._spill_dir = Path(tempfile.mkdtemp(prefix="history-", dir=self._given_dir))
            else:
                self._spill_dir = Path(tempfile.mkdtemp(prefix="specscope-live-"))
            self._spill_q = queue.Queue()
            self._spiller = threading.Thread(target=self._spill_loop, daemon=True,
                                             name="specscope-live-spill")
            self._spiller.start()
        assert self._spill_q is not None
        self._spill_q.put(c)

    def _spill_loop(self) -> None:
        assert self._spill_q is not None and self._spill_dir is not None
        while True:
            c = self._spill_q.get()
            if c is None:
                return
            path = self._spill_dir / f"{c.start:014d}.npy"
            try:
                assert c.data is not None
                np.save(path, c.data[:c.count])
            except OSError as exc:  # disk full: forget rather than grow without bound
                self.spill_error = f"history spill to {self._spill_dir} failed: {exc}"
                path = None
            with self._lock:
                self._spilling.remove(c)
                if c.data is not None:
                    self._mem -= c.nbytes
                c.data = None
                if path is not None:
                    c.path = path
                    c.nbytes = int(path.stat().st_size)
                    self._disk += c.nbytes
                self._evict_locked()
            self._delete_evicted()

    def _evict_locked(self) -> None:
        """Forget the oldest spilled chunks beyond the disk budget, and any lost ones."""
        while self._chunks:
            c = self._chunks[0]
            lost = c.data is None and c.path is None and c not in self._spilling
            if not (lost or (c.path is not None and self._disk > self.disk_bytes)):
                break
            if c.path is not None:
                self._disk -= c.nbytes
                self._doomed.append(c.path)
            self._forget(c)

    def _delete_evicted(self) -> None:
        with self._lock:
            doomed, self._doomed = self._doomed, []
        if doomed:
            with self._disk_lock:
                for p in doomed:
                    p.unlink(missing_ok=True)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until queued spills are written (for tests and orderly shutdown)."""
        t = time.monotonic() + timeout
        while self._spilling and time.monotonic() < t:
            time.sleep(0.005)

    # -- reading (any thread) ------------------------------------------------------------------
    def read(self, start: int, stop: int) -> tuple[int, np.ndarray]:
        """Items ``start:stop`` still held: ``(first index returned, items)``.

        Indices before :attr:`start` (forgotten) and from :attr:`end` on
        (not yet produced) are cut off; the first index says where the
        returned items begin.
        """
        for _ in range(3):
            try:
                return self._read(start, stop)
            except FileNotFoundError:  # evicted while we read: the start moved on
                continue
        return self._read(start, stop)

    def _read(self, start: int, stop: int) -> tuple[int, np.ndarray]:
        with self._lock:
            a = max(int(start), self._start)
            b = min(int(stop), self._end)
            pieces = []
            if b > a:
                for c in self._chunks:
                    c_end = c.start + c.count
                    if c_end <= a:
                        continue
                    if c.start >= b:
                        break
                    pieces.append((c.start, max(a, c.start), min(b, c_end), c.data, c.path))
        out = np.empty((max(0, b - a), *self.item_shape), self.dtype)
        for c0, i, j, data, path in pieces:
            if data is not None:
                out[i - a:j - a] = data[i - c0:j - c0]
            else:
                with self._disk_lock:
                    disk = np.load(path, mmap_mode="r")
                    out[i - a:j - a] = disk[i - c0:j - c0]
                    del disk
        return a, out

    def close(self) -> None:
        """Stop the spill thread and delete spilled chunks."""
        if self._spiller is not None and self._spill_q is not None:
            self._spill_q.put(None)
            self._spiller.join(10.0)
            self._spiller = None
        with self._lock:
            self._chunks.clear()
            self._mem = self._disk = 0
            self._start = self._end
        if self._spill_dir is not None:
            with self._disk_lock:
                shutil.rmtree(self._spill_dir, ignore_errors=True)


# -- recording ---------------------------------------------------------------------------------


class LiveRecorder:
    """Appends live samples (and frames) to an HDF5 file, readable after a crash.

    The file is written in SWMR mode (single writer, multiple readers): each
    chunk (``flush_seconds`` of input) is appended and flushed in an order that
    keeps the file consistent on disk, so a killed process leaves a file with
    everything up to the last flushed chunk.  Such a file opens with
    ``h5py.File(path, "r", swmr=True)``; :func:`recover_recording` turns it
    into a plain HDF5 file.  :meth:`close` finalises the file: it can then be
    opened like any recording (``open_recording``), and the attribute
    ``complete`` is true.

    Layout: ``samples`` (samples, channels) float32 or complex64 with
    ``sample_rate``; for a spectrogram pipeline also ``spectrogram``
    (channels, frames, frequencies) float32 and ``frequency`` (Hz); the
    pipeline JSON, the source and the STFT parameters as attributes.
    """

    def __init__(self, path: str | os.PathLike[str], *, sample_rate: float, n_channels: int,
                 is_complex: bool = False, frequencies: np.ndarray | None = None,
                 attrs: dict[str, Any] | None = None, flush_seconds: float = 0.5) -> None:
        import h5py

        self.path = Path(path)
        if self.path.is_dir():
            raise RecordingError(f"{self.path}: is a folder; give a file name ending in .h5")
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            raise RecordingError(f"{self.path}: the folder {folder} does not exist")
        self.sample_rate = float(sample_rate)
        self.flush_samples = max(1, int(flush_seconds * self.sample_rate))
        try:
            f = h5py.File(self.path, "w", libver="latest")
        except OSError as exc:
            raise RecordingError(f"{self.path}: cannot write ({exc})") from None
        self._f = f
        dtype = np.complex64 if is_complex else np.float32
        rows = max(1024, min(self.flush_samples, 1 << 16))
        self._samples = f.create_dataset("samples", shape=(0, n_channels),
                                         maxshape=(None, n_channels), dtype=dtype,
                                         chunks=(rows, n_channels))
        self._samples.attrs["sample_rate"] = self.sample_rate
        self._samples.attrs["units"] = "FS"
        self._spec = None
        if frequencies is not None:
            nf = int(np.size(frequencies))
            fds = f.create_dataset("frequency", data=np.asarray(frequencies, np.float64))
            fds.attrs["units"] = "Hz"
            self._spec = f.create_dataset("spectrogram", shape=(n_channels, 0, nf),
                                          maxshape=(n_channels, None, nf), dtype=np.float32,
                                          chunks=(1, max(1, min(1024, (1 << 18) // nf)), nf))
        f.attrs["format"] = RECORDING_FORMAT
        f.attrs["specscope_version"] = __version__
        f.attrs["created_utc"] = datetime.now(UTC).isoformat(timespec="seconds")
        f.attrs["sample_rate"] = self.sample_rate
        for k, v in (attrs or {}).items():
            f.attrs[k] = v
        # attributes cannot be added under SWMR: reserve the ones close() sets
        f.attrs["complete"] = False
        f.attrs["blocks_dropped"] = np.int64(0)
        f.swmr_mode = True
        self.samples_written = 0
        self.frames_written = 0
        self._pend_s: list[np.ndarray] = []
        self._pend_f: list[np.ndarray] = []
        self._pending = 0
        self._q: queue.Queue[tuple[np.ndarray, np.ndarray | None] | None] = queue.Queue()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name="specscope-live-record")
        self._thread.start()

    def append(self, samples: np.ndarray, frames: np.ndarray | None = None) -> None:
        """Queue input samples (n, channels) and frames (k, channels, freq); returns at once."""
        self._q.put((samples, frames))

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                break
            if self.error is not None:
                continue
            s, fr = item
            self._pend_s.append(s)
            if fr is not None and fr.shape[0]:
                self._pend_f.append(fr)
            self._pending += s.shape[0]
            if self._pending >= self.flush_samples:
                self._write()
        if self.error is None:
            self._write()

    def _write(self) -> None:
        try:
            if self._pend_s:
                s = np.concatenate(self._pend_s)
                n0 = self.samples_written
                self._samples.resize((n0 + s.shape[0], s.shape[1]))
                self._samples[n0:] = s
                self.samples_written += s.shape[0]
            if self._spec is not None and self._pend_f:
                fr = np.concatenate(self._pend_f).transpose(1, 0, 2)
                k0 = self.frames_written
                self._spec.resize((fr.shape[0], k0 + fr.shape[1], fr.shape[2]))
                self._spec[:, k0:, :] = fr
                self.frames_written += fr.shape[1]
            self._f.flush()
        except Exception as exc:  # noqa: BLE001 -- keep the live view running; report it
            self.error = f"{self.path}: recording failed: {exc}"
        self._pend_s, self._pend_f, self._pending = [], [], 0

    def close(self, *, blocks_dropped: int = 0) -> Path:
        """Write what is pending, close, and mark the file complete."""
        import h5py

        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()
        if self._f.id.valid:
            self._f.close()
            with h5py.File(self.path, "r+") as f:
                f.attrs["complete"] = True
                f.attrs["blocks_dropped"] = np.int64(blocks_dropped)
        if self.error:
            raise RecordingError(self.error)
        return self.path


def recover_recording(path: str | os.PathLike[str],
                      out: str | os.PathLike[str] | None = None) -> Path:
    """Copy what a killed live recording holds into a plain, complete HDF5 file.

    ``out`` defaults to ``path`` itself (replaced atomically).  The copy opens
    everywhere (``h5py.File(out)``, ``open_recording``); its ``complete``
    attribute stays false and ``recovered`` is true.
    """
    import h5py

    from ..output.spectrogram import atomic_h5

    src = Path(path)
    try:
        f = h5py.File(src, "r", swmr=True)
    except OSError as exc:
        raise RecordingError(f"{src}: not a readable live recording ({exc})") from None
    with f, atomic_h5(out or src) as g:
        for k, v in f.attrs.items():
            g.attrs[k] = v
        g.attrs["recovered"] = True
        for name, ds in f.items():
            new = g.create_dataset(name, data=ds[...])
            for k, v in ds.attrs.items():
                new.attrs[k] = v
    return Path(out or src)


# -- the session ----------------------------------------------------------------------------------


class LiveSession:
    """A source streamed through a pipeline on a processing thread, with history.

    Parameters
    ----------
    source : Source or str
        A source, or a spec for :func:`open_source`.
    pipeline : Pipeline, optional
        The processing; without one the output is the input signal.
    record : path, optional
        Record the input samples (and spectrogram frames) to this HDF5 file
        (see :class:`LiveRecorder`).
    history_bytes, disk_bytes, spill_dir
        The history's budgets (see :class:`History`).
    history_dtype
        float32 (default, the display path) or float64 (exact pipeline output).
    ring_blocks : int
        Capacity of the ring between source and processing.

    Thread model: the source delivers on its thread, the session processes on
    its own; every public method may be called from any thread (the GUI calls
    ``frames_since`` / ``view`` from a timer).  Nothing calls back into the
    caller.
    """

    def __init__(self, source: Source | str, pipeline: Any = None, *,
                 record: str | os.PathLike[str] | None = None,
                 history_bytes: int = DEFAULT_HISTORY_BYTES,
                 disk_bytes: int = DEFAULT_DISK_BYTES,
                 spill_dir: str | os.PathLike[str] | None = None,
                 history_dtype: Any = np.float32,
                 ring_blocks: int = DEFAULT_RING_BLOCKS,
                 record_flush_seconds: float = 0.5) -> None:
        self.source = open_source(source) if isinstance(source, str) else source
        src = self.source
        self.pipeline = pipeline
        self.bound = None
        if pipeline is not None:
            self.bound = pipeline.bind(src.sample_rate, src.is_complex)
            if not self.bound.streams:
                bad = next(s for s in self.bound.stages if not s.streams)
                raise bad.step.error("needs the whole signal at once, so it cannot run live")
        self._proc = _BlockProcessor(self.bound, src.n_channels) if self.bound else None
        #: "spectrogram" (frames) or "signal" (samples)
        self.kind = self.bound.kind if self.bound is not None else "signal"
        self.sample_rate = src.sample_rate
        self.n_channels = src.n_channels
        stft = self.bound.stft if self.bound is not None else None
        #: STFT parameters of the frames, or None
        self.stft = stft
        #: bin frequencies in Hz (spectrogram), else None
        self.frequencies = (self.bound.frequencies(src.center_frequency)
                            if stft is not None else None)
        if stft is not None:
            item_shape: tuple[int, ...] = (src.n_channels, int(self.frequencies.size))
            dtype = np.dtype(history_dtype)
        else:
            out_complex = src.is_complex or (self.bound is not None and self.bound.complex_output)
            item_shape = (src.n_channels,)
            dtype = np.result_type(np.dtype(history_dtype),
                                   np.complex64 if out_complex else np.float32)
        self.history = History(item_shape, dtype, memory_bytes=history_bytes,
                               disk_bytes=disk_bytes, spill_dir=spill_dir)
        self.ring = BlockRing(ring_blocks)
        self.latency = LatencyStats()
        self.delay = LatencyStats()
        self.blocks_processed = 0
        self.samples_processed = 0
        self.error: BaseException | None = None
        self._record_path = record
        self._record_flush = record_flush_seconds
        self.recorder: LiveRecorder | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._done = threading.Event()
        self._paused_at: int | None = None
        self._view_lock = threading.Lock()
        self._t_start: float | None = None
        self._t_end: float | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LiveSession:
        """Open the recording (if any), start processing, then the source."""
        if self._thread is not None:
            raise InputError("a live session can be started once")
        if self._record_path is not None:
            attrs: dict[str, Any] = {"source": self.source.name,
                                     "block": int(self.source.block)}
            if self.pipeline is not None:
                attrs["pipeline"] = self.pipeline.to_json(None)
            if self.stft is not None:
                attrs.update(nfft=int(self.stft.nfft), hop=int(self.stft.hop),
                             scaling=self.stft.scaling)
            self.recorder = LiveRecorder(self._record_path, sample_rate=self.sample_rate,
                                         n_channels=self.n_channels,
                                         is_complex=self.source.is_complex,
                                         frequencies=self.frequencies, attrs=attrs,
                                         flush_seconds=self._record_flush)
        self._t_start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="specscope-live-process")
        self._thread.start()
        try:
            self.source.start(self.ring)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> LiveStats:
        """Stop the source, process what is queued, finalise the recording; return stats."""
        self.source.stop()
        self.ring.close()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():  # processing stuck: give up on the queue
                self._stop.set()
                self._thread.join(timeout)
        self._finish_recording()
        return self.stats()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the source ended and everything is processed; False on timeout."""
        return self._done.wait(timeout)

    def close(self) -> None:
        """:meth:`stop`, then free the history (and its spill folder)."""
        self.stop()
        self.history.close()

    def __enter__(self) -> Self:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def _finish_recording(self) -> None:
        rec, self.recorder = self.recorder, None
        if rec is not None:
            try:
                rec.close(blocks_dropped=self.ring.dropped_blocks)
            except RecordingError as exc:
                if self.error is None:
                    self.error = exc

    def _run(self) -> None:
        try:
            proc, hist, lat, ring = self._proc, self.history, self.latency, self.ring
            while not self._stop.is_set():
                item = ring.get(0.1)
                if item is None:
                    if ring.closed and len(ring) == 0:
                        break
                    continue
                block, t_put = item
                t0 = time.perf_counter()
                out = proc.push(block, False) if proc is not None else block
                if out.shape[0]:
                    hist.append(out)
                t1 = time.perf_counter()
                lat.add(t1 - t0)
                self.delay.add(t1 - t_put)
                self.blocks_processed += 1
                self.samples_processed += block.shape[0]
                if self.recorder is not None:
                    self.recorder.append(block, out if self.stft is not None else None)
            if proc is not None and self.bound.lookahead and not self._stop.is_set():
                # the source ended: let centred (zero-phase) steps emit their tail
                empty = np.zeros((0, self.n_channels), np.result_type(
                    np.float32, np.complex64 if self.source.is_complex else np.float32))
                out = proc.push(empty, True)
                if out.shape[0]:
                    hist.append(out)
                    if self.recorder is not None:
                        self.recorder.append(empty, out if self.stft is not None else None)
        except BaseException as exc:  # noqa: BLE001 -- surfaced by stats(), raise_error()
            self.error = exc
            self.source.stop()
        finally:
            self._t_end = time.perf_counter()
            self._done.set()

    def raise_error(self) -> None:
        """Re-raise an error the processing thread met (it stops the session)."""
        if self.error is not None:
            raise self.error

    # -- view: pause, scroll, read -----------------------------------------------------------
    @property
    def frame_count(self) -> int:
        """Items (frames or samples) produced so far."""
        return self.history.end

    @property
    def history_range(self) -> tuple[int, int]:
        """``(first, end)`` indices still held (in memory or spilled)."""
        return self.history.start, self.history.end

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def pause(self) -> None:
        """Freeze the view at the current end; capture and processing go on."""
        with self._view_lock:
            if self._paused_at is None:
                self._paused_at = self.history.end

    def resume(self) -> None:
        """Follow the live end again."""
        with self._view_lock:
            self._paused_at = None

    def scroll(self, items: int) -> int:
        """Move the frozen view by ``items`` (negative: back in time); pauses; new view end."""
        with self._view_lock:
            end = self.history.end if self._paused_at is None else self._paused_at
            first, last = self.history.start, self.history.end
            self._paused_at = int(min(max(end + int(items), first), last))
            return self._paused_at

    def scroll_to(self, end: int) -> int:
        """Freeze the view so that it ends at item ``end`` (clamped); the new view end."""
        with self._view_lock:
            self._paused_at = int(min(max(int(end), self.history.start), self.history.end))
            return self._paused_at

    @property
    def view_end(self) -> int:
        """End of what the view shows: the live end, or where it was paused/scrolled."""
        p = self._paused_at
        return self.history.end if p is None else max(p, self.history.start)

    def read(self, start: int, stop: int, channel: int | None = None) -> tuple[int, np.ndarray]:
        """Items ``start:stop`` still held: ``(first, array)``.

        Frames are shaped (n, channels, frequencies), or with ``channel``
        (n, frequencies), C-contiguous; samples (n, channels) or (n,).
        """
        first, data = self.history.read(start, stop)
        if channel is not None:
            if not 0 <= channel < self.n_channels:
                raise InputError(f"channel={channel} must be in [0, {self.n_channels - 1}]")
            data = np.ascontiguousarray(data[:, channel])
        return first, data

    def frames_since(self, n: int, channel: int | None = None,
                     limit: int | None = None) -> tuple[int, np.ndarray]:
        """What the view gained since item ``n``: ``(first, array)``, up to :attr:`view_end`.

        The GUI keeps ``n = first + len(array)`` for its next call.  ``first``
        is larger than ``n`` when older items were forgotten or when
        ``limit`` (the most items wanted, e.g. the waterfall's height) cut
        the start.  While paused nothing new arrives.
        """
        end = self.view_end
        start = max(int(n), self.history.start)
        if limit is not None and end - start > limit:
            start = end - int(limit)
        return self.read(start, max(start, end), channel)

    def view(self, width: int, channel: int | None = None) -> tuple[int, np.ndarray]:
        """The last ``width`` items up to :attr:`view_end` (fewer at the start)."""
        end = self.view_end
        return self.read(max(0, end - int(width)), end, channel)

    def item_time(self, index: int | np.ndarray) -> Any:
        """Seconds since the stream started of item(s) ``index``: frame centres or samples.

        Dropped blocks are not counted, so after drops these times run early.
        """
        idx = np.asarray(index, dtype=np.float64)
        if self.stft is None:
            return idx / self.sample_rate
        return (idx * self.stft.hop + self.stft.nfft / 2) / self.sample_rate

    # -- statistics ---------------------------------------------------------------------------
    def stats(self) -> LiveStats:
        """A snapshot of the counters (cheap; call it from a GUI timer)."""
        lat = self.latency
        end = self._t_end if self._t_end is not None else time.perf_counter()
        elapsed = 0.0 if self._t_start is None else end - self._t_start
        err = self.error
        if err is None and self.history.spill_error:
            err = RecordingError(self.history.spill_error)
        if err is None and self.recorder is not None and self.recorder.error:
            err = RecordingError(self.recorder.error)
        return LiveStats(
            blocks_processed=self.blocks_processed,
            blocks_dropped=self.ring.dropped_blocks + self.source.overflows,
            samples_processed=self.samples_processed,
            samples_dropped=self.ring.dropped_samples,
            source_overflows=self.source.overflows,
            latency_ms_median=lat.percentile(50) * 1e3,
            latency_ms_p99=lat.percentile(99) * 1e3,
            latency_ms_max=lat.max * 1e3,
            latency_ms_mean=(lat.total / lat.count * 1e3) if lat.count else 0.0,
            delay_ms_p99=self.delay.percentile(99) * 1e3,
            block=int(self.source.block),
            block_ms=self.source.block / self.sample_rate * 1e3,
            sample_rate=self.sample_rate,
            channels=self.n_channels,
            frames=self.history.end,
            history_first=self.history.start,
            history_memory_bytes=self.history.memory_in_use,
            history_disk_bytes=self.history.disk_in_use,
            ring_high_water=self.ring.high_water,
            elapsed_s=elapsed,
            running=self.running,
            error=None if err is None else (str(err) or type(err).__name__),
        )
