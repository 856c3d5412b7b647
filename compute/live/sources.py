"""Live sources: where samples come from, and the options each source takes.

A :class:`Source` delivers blocks into a :class:`~specscope.compute.live.ring.BlockRing`.
:class:`ThreadedSource` computes blocks on its own thread, paced like hardware;
:class:`FileSource` (a recording played as if live) and the synthetic
:class:`~specscope.compute.live.generator.GeneratorSource` build on it;
:class:`DeviceSource` is audio input through the optional ``sounddevice`` package.

Each source declares its options as :class:`~specscope.compute.params.Param`
(``GeneratorSource.OPTIONS``, :attr:`DeviceSource.OPTIONS`); option text
``key=value,...`` is split by :func:`split_options` and checked by
:func:`option_values`, which reads numbers like ``48k``.
"""

from __future__ import annotations

import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError, RecordingError
from ..io import Recording, open_recording
from ..params import Param, parse_number
from ..sound import load_sounddevice
from ..timefmt import time_to_sample
from .ring import BlockRing

__all__ = [
    "DEFAULT_BLOCK",
    "DeviceSource",
    "FileSource",
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
    """The pace of a source: 0 for unpaced (None, 0 or inf), else the speed factor.

    Parameters
    ----------
    rate : float or None
        Times real time; None, 0 or inf for as fast as possible.

    Returns
    -------
    float
        The speed factor, 0.0 for unpaced.

    Raises
    ------
    InputError
        ``rate`` is negative or NaN.

    Examples
    --------
    >>> check_rate(None), check_rate(float("inf")), check_rate(2)
    (0.0, 0.0, 2.0)
    """
    if rate is None:
        return 0.0
    r = float(rate)
    if math.isnan(r) or r < 0:
        raise InputError(f"rate={rate!r} must be >= 0 (1: real time, 0: as fast as possible)")
    return 0.0 if math.isinf(r) else r


def check_block(block: int) -> int:
    """``block`` as an int, or :class:`InputError` unless it is a whole number in [1, 2**22].

    Parameters
    ----------
    block : int
        Samples per block.

    Returns
    -------
    int
        ``block``.

    Raises
    ------
    InputError
        ``block`` is not a whole number, or is below 1 or above 2**22.
    """
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise InputError(f"block={block!r} must be a whole number of samples >= 1")
    if block > MAX_BLOCK:
        raise InputError(f"block={block} is too large (at most {MAX_BLOCK} samples)")
    return int(block)


def split_options(text: str, where: str) -> dict[str, str]:
    """``key=value,key=value`` -> ``{key: value}`` with the values still text.

    Parameters
    ----------
    text : str
        The options; blank parts are skipped.
    where : str
        The source (e.g. ``"generator:tone"``), which starts every error message.

    Returns
    -------
    dict of str to str
        Option name to its text.

    Raises
    ------
    InputError
        A part is not ``key=value``, or a key is given twice.

    Examples
    --------
    >>> split_options("frequency=1k, amplitude=0.2", "generator:tone")
    {'frequency': '1k', 'amplitude': '0.2'}
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

    Parameters
    ----------
    sample_rate : float
        Samples per second (Hz).
    n_channels : int
        Channels per block.
    block : int
        Samples per block.
    rate : float or None
        Pacing: times real time; 0 or None for unpaced.
    duration : float, optional
        Seconds delivered at most; until the source ends when omitted.
    name : str
        The spec it was opened from, or a description.

    Raises
    ------
    InputError
        An invalid block, rate or duration.
    """

    def __init__(self, *, sample_rate: float, n_channels: int, block: int = DEFAULT_BLOCK,
                 rate: float | None = 1.0, duration: float | None = None,
                 name: str = "") -> None:
        self.sample_rate = float(sample_rate)
        self.n_channels = int(n_channels)
        self.block = check_block(block)
        self.rate = check_rate(rate)
        self.realtime = self.rate > 0
        #: samples delivered at most (None: until the source ends or is stopped)
        self.limit = None if duration is None else time_to_sample(duration, self.sample_rate,
                                                                   "duration")
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


class FileSource(ThreadedSource):
    """A recording played as if it were live: ``rate`` times real time, optionally looped.

    Parameters
    ----------
    recording : Recording or path
        Anything :func:`~specscope.compute.io.open_recording` opens, or an open
        :class:`~specscope.compute.io.Recording` (e.g. an ``ArrayRecording``).
    block : int
        Samples per block.
    rate : float or None
        Pacing: times real time; 0 or None for as fast as the consumer takes blocks.
    loop : bool
        Whether to start again at the end.
    duration : float, optional
        Seconds delivered at most.
    channels : int or list of int, optional
        Channels to play (all by default).
    **open_options
        Reader options for :func:`~specscope.compute.io.open_recording`.

    Raises
    ------
    RecordingError
        The recording cannot be opened or has no samples.
    InputError
        An invalid channel, option, block, rate or duration.
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
    block : int
        Samples per block.
    duration : float, optional
        Seconds recorded at most; until stopped when omitted.

    Raises
    ------
    RecordingError
        No such input device, or it has no input channels.
    InputError
        An invalid option, or more channels than the device has.
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
        sd = load_sounddevice("audio input", "audio input")
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
        self.limit = None if duration is None else time_to_sample(duration, self.sample_rate,
                                                                   "duration")
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
