"""Live sources: where samples come from, and the options each source takes.

A :class:`Source` delivers blocks into a :class:`~specscope.compute.live.ring.BlockRing`.
:class:`ThreadedSource` computes blocks on its own thread, paced like hardware;
:class:`GeneratorSource` (synthetic signals) and :class:`FileSource` (a recording
played as if live) build on it; :class:`DeviceSource` is audio input through the
optional ``sounddevice`` package.

Each source declares its options as :class:`~specscope.compute.params.Param`
(:attr:`GeneratorSource.OPTIONS`, :attr:`DeviceSource.OPTIONS`); option text
``key=value,...`` is split by :func:`split_options` and checked by
:func:`option_values`, which reads numbers like ``48k``.
"""

from __future__ import annotations

import difflib
import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.signal as ss

from ..errors import InputError, RecordingError, SpecscopeError
from ..io import Recording, open_recording
from ..params import Param, parse_number
from .ring import BlockRing

__all__ = [
    "DEFAULT_BLOCK",
    "DeviceSource",
    "FileSource",
    "GeneratorSource",
    "Source",
    "ThreadedSource",
    "check_block",
    "check_rate",
    "option_values",
    "split_options",
]

#: default samples per block
DEFAULT_BLOCK = 1024
#: the largest block a source may deliver
MAX_BLOCK = 1 << 22


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
        """Rate, channels, block and pacing as a JSON-ready dict."""
        return {"source": self.name, "sample_rate": self.sample_rate,
                "channels": self.n_channels, "complex": self.is_complex, "block": self.block,
                "realtime": self.realtime}


def check_rate(rate: float | None) -> float:
    """The pace of a source: 0 for unpaced (None, 0 or inf), else the speed factor."""
    if rate is None:
        return 0.0
    r = float(rate)
    if math.isnan(r) or r < 0:
        raise InputError(f"rate={rate!r} must be >= 0 (1: real time, 0: as fast as possible)")
    return 0.0 if math.isinf(r) else r


def check_block(block: int) -> int:
    """``block`` as an int, or :class:`InputError` unless it is a whole number in [1, 2**22]."""
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise InputError(f"block={block!r} must be a whole number of samples >= 1")
    if block > MAX_BLOCK:
        raise InputError(f"block={block} is too large (at most {MAX_BLOCK} samples)")
    return int(block)


def split_options(text: str, where: str) -> dict[str, str]:
    """``key=value,key=value`` -> ``{key: value}`` with the values still text.

    ``where`` (the source, e.g. ``"generator:tone"``) starts every error message.
    """
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise InputError(f"{where}: {part!r} must be key=value")
        k, v = (s.strip() for s in part.split("=", 1))
        if k in out:
            raise InputError(f"{where}: {k!r} is given twice")
        out[k] = v
    return out


def option_values(given: Mapping[str, Any], options: Sequence[Param], where: str, *,
                  positive: Collection[str] = ()) -> dict[str, Any]:
    """The values of the declared ``options``, checked; defaults for those not given.

    Parameters
    ----------
    given : mapping
        Option values: text (from a spec such as ``"frequency=1k"``) or Python values.
    options : sequence of Param
        The options the source takes, in the order they are checked and listed.
    where : str
        The source, named first in every error message.
    positive : collection of str
        Names of numeric options that must be > 0 (a bound a Param cannot state).

    Returns
    -------
    dict
        Name -> value for every option in ``options``.

    Raises
    ------
    InputError
        For a value that is not valid, naming the source and the option, or for a
        name not among ``options``.
    """
    left = dict(given)
    values: dict[str, Any] = {}
    for p in options:
        if p.name not in left:
            values[p.name] = p.default
            continue
        value = left.pop(p.name)
        if value is None and p.default is None:
            values[p.name] = None
            continue
        if p.type in (int, float):  # numbers may be text such as "48k" or "2.5"
            value = parse_number(value, p.name, positive=p.name in positive, where=where)
            if p.type is int and value.is_integer():
                value = int(value)  # an error message then shows 0, not 0.0
        values[p.name] = p.validate(value, where)
    if left:
        raise InputError(f"{where}: unknown parameter {next(iter(left))!r} (parameters: "
                         f"{', '.join(p.name for p in options)})")
    return values


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
        self.block = check_block(block)
        self.rate = check_rate(rate)
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


# pink noise: first-order pole/zero pairs at geometrically spaced corner
# frequencies; a zero a quarter-step above each pole makes every step half
# -20 dB/decade, half flat, so the average slope is -10 dB/decade (1/f power)
_PINK_STEP = 10 ** 0.5


def _pink_sos(fs: float) -> tuple[np.ndarray, float]:
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
    #: the options of every kind
    COMMON_OPTIONS: ClassVar[tuple[Param, ...]] = (
        Param("sample_rate", float, 48000.0, min=0, unit="Hz", help="samples per second"),
        Param("channels", int, 1, min=1, help="channels, each with the same signal "
              "(independent noise)"),
    )
    #: the options of each kind (``white`` and ``pink`` are ``noise``)
    OPTIONS: ClassVar[dict[str, tuple[Param, ...]]] = {
        "tone": (
            Param("frequency", float, 1000.0, unit="Hz", help="frequency"),
            Param("amplitude", float, 0.5, help="peak amplitude"),
            Param("phase", float, 0.0, unit="rad", help="phase at sample 0"),
        ),
        "chirp": (
            Param("f0", float, 100.0, min=0, unit="Hz", help="frequency at the period start"),
            Param("f1", float, None, min=0, unit="Hz",
                  help="frequency at the period end (0.45 sample_rate when omitted)"),
            Param("period", float, 2.0, min=0, unit="s", help="length of one sweep"),
            Param("amplitude", float, 0.5, help="peak amplitude"),
            Param("method", str, "linear",
                  choices=("linear", "quadratic", "logarithmic", "hyperbolic"),
                  help="frequency sweep of scipy.signal.chirp"),
        ),
        "noise": (
            Param("color", str, "white", choices=("white", "pink"), help="spectrum"),
            Param("amplitude", float, 0.1, min=0, help="standard deviation"),
            Param("seed", int, 0, min=0, help="random seed"),
        ),
        "clicks": (
            Param("interval", float, 0.5, min=0, unit="s", help="time between clicks"),
            Param("amplitude", float, 1.0, help="click height"),
        ),
    }
    #: options that must be > 0
    POSITIVE: ClassVar[tuple[str, ...]] = ("sample_rate", "period", "interval")

    def __init__(self, kind: str, *, sample_rate: float = 48000.0, channels: int = 1,
                 block: int = DEFAULT_BLOCK, rate: float | None = 1.0,
                 duration: float | None = None, **params: Any) -> None:
        where = f"generator:{kind}"
        if kind not in self.KINDS:
            close = difflib.get_close_matches(kind, self.KINDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{where}: unknown generator{hint} (generators: "
                             f"{', '.join(self.KINDS)})")
        given = dict(params)
        if kind in ("white", "pink"):
            given.setdefault("color", kind)
            kind = "noise"
        options = self.OPTIONS[kind]
        values = option_values({**given, "sample_rate": sample_rate, "channels": channels},
                               options + self.COMMON_OPTIONS, where, positive=self.POSITIVE)
        fs, n_ch = values.pop("sample_rate"), values.pop("channels")
        super().__init__(sample_rate=fs, n_channels=n_ch, block=block, rate=rate,
                         duration=duration, name=where)
        self.kind = kind
        #: the kind's option values
        self.params: dict[str, Any] = values
        if kind == "chirp":
            if values["f1"] is None:
                values["f1"] = 0.45 * fs
            self._period = max(1, round(values["period"] * fs))
        elif kind == "noise":
            self._rng = np.random.default_rng(values["seed"])
            self._next = 0
            if values["color"] == "pink":
                self._sos, self._gain = _pink_sos(fs)
                self._zi = np.zeros((self._sos.shape[0], 2, n_ch))
        elif kind == "clicks":
            self._period = max(1, round(values["interval"] * fs))

    def read_block(self, start: int, n: int) -> np.ndarray:
        fs, p = self.sample_rate, self.params
        idx = np.arange(start, start + n, dtype=np.int64)
        if self.kind == "tone":
            y = p["amplitude"] * np.cos(2 * np.pi * p["frequency"] * (idx / fs) + p["phase"])
        elif self.kind == "chirp":
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
        :class:`~specscope.compute.io.Recording` (e.g. an ``ArrayRecording``).
    channels : int or list of int, optional
        Channels to play (all by default).
    """

    def __init__(self, recording: Any, *, block: int = DEFAULT_BLOCK,
                 rate: float | None = 1.0, loop: bool = False,
                 duration: float | None = None, channels: int | list[int] | None = None,
                 **open_options: Any) -> None:
        self._owned = not isinstance(recording, Recording)
        rec = open_recording(recording, **open_options) if self._owned else recording
        self.recording = rec
        self._channels = rec.channel_list(channels)
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

    #: the options of ``device:NAME,key=value...``
    OPTIONS: ClassVar[tuple[Param, ...]] = (
        Param("sample_rate", float, None, min=0, unit="Hz",
              help="samples per second (the device's default when omitted)"),
        Param("channels", int, 1, min=1, help="input channels"),
    )
    #: options that must be > 0
    POSITIVE: ClassVar[tuple[str, ...]] = ("sample_rate",)

    def __init__(self, device: str | int | None = None, *, sample_rate: float | None = None,
                 channels: int = 1, block: int = DEFAULT_BLOCK,
                 duration: float | None = None) -> None:
        where = f"device:{device}" if device not in (None, "") else "device"
        values = option_values({"sample_rate": sample_rate, "channels": channels},
                               self.OPTIONS, where, positive=self.POSITIVE)
        sample_rate, channels = values["sample_rate"], values["channels"]
        sd = _sounddevice()
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
        self.block = check_block(block)
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
    """The ``sounddevice`` module, or a one-line error saying what to install."""
    try:
        import sounddevice
    except ImportError:
        raise SpecscopeError("audio input needs the sounddevice package: pip install "
                             "'specscope[audio]'") from None
    except OSError as exc:  # the package is there but PortAudio is not
        raise SpecscopeError(f"audio input is unavailable: {exc} (install PortAudio, "
                             "e.g. apt install libportaudio2)") from None
    return sounddevice
