"""What the built-in detectors share: the streaming protocol, STFT frames, the noise floor.

A detector is a :class:`~specscope.compute.stream.Stage`: :meth:`Detector.push`
takes the next samples of one channel (``final=True`` with the last) and
returns the events it has finished (an :class:`Events` table), and
:meth:`Detector.for_channels` gives a :class:`ChannelStreams` stage taking
``(channels, samples)`` chunks.  Chunked runs equal whole runs because
nothing depends on where the chunks end:

- :class:`FrameStream` keeps the last ``nfft - hop`` samples and makes the
  STFT frames at absolute positions ``k * hop`` through the ``stft_power``
  operator; a frame's power does not depend on the other frames of the call;
- :class:`BlockFloor` cuts the frames into blocks of a fixed number of frames
  counted from the first one, takes a low percentile per block and, per
  block, the median of those percentiles over the blocks around it (an
  adaptive noise floor, as Raven's band-limited energy detector estimates
  it); it releases a block once the blocks after it that the median needs are
  complete, always one block at a time;
- :class:`Segmenter` turns the frames above the threshold into events (gaps
  shorter than the minimum gap merged, the duration limits applied) and
  emits an event once no later frame can join it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import backend as _backend
from .. import spectral
from ..errors import InputError
from ..operators import dispatch, registry
from ..stream import Stage
from .events import Events

__all__ = ["BlockFloor", "ChannelStreams", "Detector", "FrameStream", "Segment", "Segmenter",
           "band_bins", "pinned_backend"]


def pinned_backend(backend: str) -> str:
    """One backend for a whole run: ``auto`` is the preference, else NumPy.

    A run never switches backend between chunks, so every frame is computed
    by the same implementation (the numbers of a chunked run are those of a
    whole run).

    Parameters
    ----------
    backend : str
        ``"auto"`` (or None), ``"numpy"``, ``"cupy"``, or ``"cupy:N"`` for a device.

    Returns
    -------
    str
        For ``"auto"``: ``"cupy"`` when it is preferred and available, else ``"numpy"``;
        otherwise ``backend`` as given.

    Raises
    ------
    InputError
        If the backend is unknown or not usable here.

    Examples
    --------
    >>> pinned_backend("numpy")
    'numpy'
    """
    if backend in (None, "auto"):
        pref = _backend.preference()
        if pref == "cupy" and "cupy" in _backend.available_backends():
            return "cupy"
        return "numpy"
    return _backend.check_backend(str(backend).partition(":")[0]) and str(backend)


def band_bins(freqs: np.ndarray, low: float | None, high: float | None, what: str
              ) -> tuple[int, int]:
    """``(i0, i1)``: the bins whose centres lie in ``[low, high]`` (None: that end of ``freqs``).

    Parameters
    ----------
    freqs : numpy.ndarray
        Bin centre frequencies (Hz), increasing.
    low, high : float or None
        The band (Hz); None leaves that end open.
    what : str
        The name starting error messages (the detector).

    Returns
    -------
    tuple of int
        ``(i0, i1)``: the slice ``freqs[i0:i1]`` of the bins in the band.

    Raises
    ------
    InputError
        If ``high < low`` or no bin lies in the band.

    Examples
    --------
    >>> import numpy as np
    >>> band_bins(np.arange(0.0, 1000.0, 100.0), 250.0, 500.0, "detect.energy")
    (3, 6)
    """
    lo = -math.inf if low is None else float(low)
    hi = math.inf if high is None else float(high)
    if hi < lo:
        raise InputError(f"{what}: band_high_hz={high!r} must be >= band_low_hz={low!r}")
    inside = np.flatnonzero((freqs >= lo) & (freqs <= hi))
    if inside.size == 0:
        raise InputError(f"{what}: the band {low!r}..{high!r} Hz holds no frequency bin of "
                         f"the spectrum ({freqs[0]:g}..{freqs[-1]:g} Hz); widen it or "
                         "use a larger nfft")
    return int(inside[0]), int(inside[-1]) + 1


class FrameStream:
    """STFT power frames of a stream, at absolute positions ``k * hop``.

    ``push(x)`` returns ``(k0, P)``: the index of the first new frame and the
    new frames' power, shaped ``(frames, bins)`` (two-sided and centred for
    complex input), float32 or float64 as the ``stft_power`` operator gives.

    Parameters
    ----------
    stft : StftParams
        Frame length, hop, window and scaling.
    fs : float
        Sample rate (Hz).
    backend : str
        Backend of the ``stft_power`` calls (one for the whole stream).
    """

    def __init__(self, stft: spectral.StftParams, fs: float, backend: str = "numpy") -> None:
        self.stft = stft
        self.fs = float(fs)
        self.backend = backend
        self.tail: np.ndarray | None = None
        self.frames_done = 0

    def push(self, x: np.ndarray) -> tuple[int, np.ndarray | None]:
        x = np.asarray(x)
        buf = x if self.tail is None or self.tail.size == 0 else np.concatenate([self.tail, x])
        nfft, hop = self.stft.nfft, self.stft.hop
        n = self.stft.n_frames(buf.size)
        k0 = self.frames_done
        if n == 0:
            self.tail = buf
            return k0, None
        power = dispatch.call("stft_power", buf[:(n - 1) * hop + nfft], backend=self.backend,
                              fs=self.fs, two_sided=buf.dtype.kind == "c", layout="frames",
                              **self.stft.operator_params())
        self.tail = buf[n * hop:].copy()
        self.frames_done += n
        return k0, _backend.to_host(power)


def sorted_percentile(values: np.ndarray, percentile: float, axis: int) -> np.ndarray:
    """``np.percentile(values, percentile, axis=axis)`` (linear), bit for bit, by a sort.

    A noise floor takes percentiles of many short rows (24 frames of a block,
    for each of a hundred bins); numpy's percentile partitions each row on its
    own and costs four times a sort of them all along the axis.  The two
    neighbours are interpolated as numpy does (from the upper one where the
    fraction is at least a half), so the values are the same.  NaNs sort last
    rather than spreading.
    """
    v = np.sort(values, axis=axis)
    n = v.shape[axis]
    index = (n - 1) * np.true_divide(percentile, 100)
    below = math.floor(index)
    gamma = index - below
    a = np.take(v, below, axis=axis)
    b = np.take(v, min(below + 1, n - 1), axis=axis)
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def odd_median(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """``np.median`` over an odd count along ``axis`` (its middle value), by a sort."""
    n = values.shape[axis]
    if n % 2 == 0:
        raise ValueError(f"odd_median needs an odd count along the axis, got {n}")
    return np.take(np.sort(values, axis=axis), n // 2, axis=axis)


class BlockFloor:
    """An adaptive noise floor per block of frames (see the module doc).

    Parameters
    ----------
    block : int
        Frames per block.
    half : int
        Blocks on each side whose percentiles the floor's median takes.
    percentile : float
        The percentile of a block's values (0-100) that stands for its noise.
    stride : int
        The percentile takes every ``stride``-th frame of a block (from its
        first): fewer values to partition where there are many per frame (a
        floor per bin), and frames that do not overlap say as much about the
        noise as all of them.

    Notes
    -----
    ``feed(values)`` takes the next frames' values, shaped ``(frames, d)``;
    it and ``finish()`` return the released blocks as ``(k0, values,
    floor)`` with ``floor`` shaped ``(d,)``.
    """

    def __init__(self, block: int, half: int, percentile: float, stride: int = 1) -> None:
        self.block, self.half, self.percentile = int(block), int(half), float(percentile)
        self.stride = max(1, int(stride))
        self.partial: list[np.ndarray] = []
        self.n_partial = 0
        self.blocks: deque[np.ndarray] = deque()  # complete blocks not yet released
        #: percentiles of the blocks from ``stats_base`` on, shaped (blocks, d)
        self.stats: np.ndarray | None = None
        self.stats_base = 0
        self.released = 0

    def _close(self, values: np.ndarray) -> None:
        """Close the blocks in ``values``: whole blocks, or one shorter last block."""
        n = values.shape[0]
        if n == 0:
            return
        if n % self.block == 0:
            blocks = values.reshape(n // self.block, self.block, values.shape[1])
            stats = sorted_percentile(blocks[:, ::self.stride], self.percentile, axis=1)
            self.blocks.extend(blocks)
        else:
            stats = sorted_percentile(values[::self.stride], self.percentile, axis=0)[None]
            self.blocks.append(values)
        self.stats = stats if self.stats is None else np.concatenate([self.stats, stats])

    def feed(self, values: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        values = np.asarray(values, dtype=np.float64)
        if values.shape[0] == 0:
            return []
        if self.n_partial:  # complete the open block first (copying only that block)
            need = self.block - self.n_partial
            if values.shape[0] < need:
                self.partial.append(values)
                self.n_partial += values.shape[0]
                return self._release(final=False)
            self._close(np.concatenate([*self.partial, values[:need]]))
            self.partial, self.n_partial = [], 0
            values = values[need:]
        whole = values.shape[0] // self.block * self.block
        if whole:
            self._close(values[:whole])
        if values.shape[0] > whole:
            self.partial, self.n_partial = [values[whole:]], values.shape[0] - whole
        return self._release(final=False)

    def finish(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        if self.n_partial:
            self._close(np.concatenate(self.partial))
            self.partial, self.n_partial = [], 0
        return self._release(final=True)

    def _release(self, final: bool) -> list[tuple[int, np.ndarray, np.ndarray]]:
        if self.stats is None:
            return []
        base, h = self.stats_base, self.half
        stats = self.stats
        n = base + stats.shape[0]  # blocks closed so far
        stop = n if final else n - h  # blocks whose floor is known
        first = self.released
        if stop <= first:
            return []
        floors = np.empty((stop - first, stats.shape[1]))
        # blocks with all 2*half+1 neighbours: one vectorised median
        lo, hi = max(first, h), min(stop, n - h)
        if hi > lo:
            win = np.lib.stride_tricks.sliding_window_view(
                stats[lo - h - base:hi + h - base], 2 * h + 1, axis=0)
            floors[lo - first:hi - first] = odd_median(win, axis=-1)
        for j in range(first, stop):
            if not lo <= j < hi:
                floors[j - first] = np.median(stats[max(0, j - h) - base:j + h + 1 - base],
                                              axis=0)
        out = [(j * self.block, self.blocks.popleft(), floors[j - first])
               for j in range(first, stop)]
        self.released = stop
        # later floors look back `half` blocks at most
        drop = max(0, stop - h - base)
        if drop:
            self.stats, self.stats_base = stats[drop:], base + drop
        return out


@dataclass
class Segment:
    """Frames ``first .. last`` (inclusive) above the threshold, merged across short gaps.

    Parameters
    ----------
    first, last : int
        The first and last frame (inclusive).
    peak : float
        The highest score of its frames.
    peak_frame : int
        The frame of that score.
    payload : numpy.ndarray, optional
        Sum of the payload rows of the frames above the threshold (None without payload).
    count : int
        Number of frames above the threshold.
    """

    first: int
    last: int
    peak: float
    peak_frame: int
    #: sum of the payload rows of the frames above the threshold (None without payload)
    payload: np.ndarray | None = None
    count: int = 0


class Segmenter:
    """Frames above a threshold as segments (the event logic of the energy detectors).

    Parameters
    ----------
    threshold : float
        A frame is "on" when its score is ``>= threshold``.
    hop : int
        Samples between frames.
    min_gap : float
        Samples: two runs of "on" frames closer than this (from the end of one
        frame run's last hop to the start of the next) are one segment.
    """

    def __init__(self, threshold: float, hop: int, min_gap: float) -> None:
        self.threshold, self.hop, self.min_gap = float(threshold), int(hop), float(min_gap)
        self.open: Segment | None = None

    def _joins(self, last: int, k: int) -> bool:
        return (k - last - 1) * self.hop < self.min_gap

    def feed(self, k0: int, score: np.ndarray, payload: np.ndarray | None = None
             ) -> list[Segment]:
        """The segments finished by frames ``k0 .. k0+len(score)-1``."""
        out: list[Segment] = []
        on = np.flatnonzero(score >= self.threshold)
        if on.size:
            # groups of "on" frames no gap of which is long enough to separate them
            gaps = np.flatnonzero((np.diff(on) - 1) * self.hop >= self.min_gap) + 1
            for g in np.split(on, gaps):
                first, last = int(g[0]) + k0, int(g[-1]) + k0
                i = int(g[np.argmax(score[g])])
                peak = float(score[i])
                pay = None if payload is None else payload[g].sum(axis=0)
                seg = self.open
                if seg is not None and self._joins(seg.last, first):
                    seg.last = last
                    if peak > seg.peak:
                        seg.peak, seg.peak_frame = peak, i + k0
                    if pay is not None:
                        seg.payload = seg.payload + pay
                    seg.count += g.size
                else:
                    if seg is not None:
                        out.append(seg)
                    self.open = Segment(first, last, peak, i + k0, pay, int(g.size))
        end = k0 + score.shape[0]  # the next frame to come
        if self.open is not None and not self._joins(self.open.last, end):
            out.append(self.open)
            self.open = None
        return out

    def finish(self) -> list[Segment]:
        out = [] if self.open is None else [self.open]
        self.open = None
        return out


class Detector(Stage):
    """A detector running on one channel as a stream stage (see the module doc).

    Subclasses declare :attr:`name` (their operator's name), :attr:`PARAMS`
    and :attr:`REFERENCE`, and implement :meth:`_setup` (the state at rest)
    and :meth:`_push`.  Events come back with sample edges counted from the
    first sample pushed.  Blocks are counted from the first sample, so a
    stream started elsewhere frames differently (``exact_split`` is False); an
    event is held back until it has ended, beyond :attr:`latency`.

    Parameters
    ----------
    params : mapping, optional
        The detector operator's parameters (validated against its schema).
    fs : float
        Sample rate.
    center_frequency : float, optional
        RF of 0 Hz for IQ streams: bands are absolute Hz, as annotations are.
    backend : str
        Where the kernels run (``auto``, ``numpy``, ``cupy``); one backend for
        the whole run.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    REFERENCE: ClassVar[str] = ""
    PARAMS: ClassVar[tuple] = ()
    exact_split = False

    def __init__(self, params: Mapping[str, Any] | None = None, *, fs: float,
                 center_frequency: float | None = None, backend: str = "auto") -> None:
        if isinstance(fs, bool) or not isinstance(fs, (int, float, np.number)) or not (
                math.isfinite(fs) and fs > 0):
            raise InputError(f"{self.name}: fs={fs!r} must be a positive sample rate in Hz")
        self.fs = float(fs)
        self.center_frequency = float(center_frequency or 0.0)
        self.backend = pinned_backend(backend)
        self.params = dispatch.get(self.name).validate(dict(params or {}))
        self.samples_in = 0
        self.closed = False
        self._setup()

    # -- what subclasses provide ----------------------------------------------------

    def _setup(self) -> None:
        """Build the per-stream state from :attr:`params`."""

    def _push(self, x: np.ndarray, final: bool) -> Events:
        raise NotImplementedError

    @property
    def lookback(self) -> int:  # type: ignore[override]
        """Input samples before an event's frames that its detection depends on."""
        return 0

    @property
    def lookahead(self) -> int:  # type: ignore[override]
        """Input samples after an event's frames that its detection depends on."""
        return 0

    @property
    def latency(self) -> int:  # type: ignore[override]
        """Samples a push may hold back beyond the end of an event (frames, floor, gaps)."""
        return self.lookahead

    # -- splitting a long input into parts (see specscope.compute.batch.detect) -------

    @property
    def grid(self) -> int | None:
        """Samples a stream's start must be a multiple of to frame, block and score as a
        stream from the first sample does; None when the detector cannot be split (it
        needs the whole signal, or declares nothing)."""
        return None

    @property
    def part_lookback(self) -> int:
        """Samples before an owned range a part's stream must start at (before rounding
        down to :attr:`grid`) for every event starting in the range to come out as in a
        stream from the first sample: the frames, the noise floor, the neighbours a
        decision compares with and the gap that separates an event from an earlier one."""
        return self.lookback + self.latency

    @property
    def settled(self) -> int:
        """Stream samples before which every event start has been returned: no later
        push returns an event starting before it.  A part stops reading once this
        passes the end of its owned range, so an event is never cut at a part's end,
        however long it is."""
        return self.samples_in if self.closed else 0

    def prepare(self, recording: Any, channel: int | None = None) -> None:
        """Read what the detector needs from the recording before streaming (a template)."""

    # -- the protocol ---------------------------------------------------------------

    def push(self, x: Any, final: bool = False) -> Events:
        """Feed the next samples (1-D); returns the events finished so far.

        After ``final=True`` the stream is closed; :meth:`reset` starts a new one.
        """
        if self.closed:
            raise InputError(f"{self.name}: the stream is finished (final=True was pushed); "
                             "call reset() to start another")
        x = np.asarray(_backend.to_host(x))
        if x.ndim != 1:
            raise InputError(f"{self.name}: push one channel (1-D samples), got shape "
                             f"{x.shape}")
        if x.dtype.kind not in "biufc":
            raise InputError(f"{self.name}: samples must be numeric, got dtype {x.dtype}")
        if x.dtype.kind in "biu" or x.dtype == np.float16:
            x = x.astype(np.float32)
        if x.size and not np.isfinite(x).all():
            bad = int(np.flatnonzero(~np.isfinite(x))[0]) + self.samples_in
            raise InputError(f"{self.name}: sample {bad} of the stream is NaN or infinite; "
                             "remove or interpolate such samples first")
        self.samples_in += x.size
        events = self._push(x, bool(final))
        if final:
            self.closed = True
        return events

    def reset(self) -> None:
        """Forget the stream: the next push starts at sample 0."""
        self.samples_in = 0
        self.closed = False
        self._setup()

    def run(self, x: Any) -> Events:
        """The events of a whole signal (a new stream)."""
        self.reset()
        return self.push(x, final=True)

    def whole(self, x: Any) -> Events:
        """The events of a whole signal (1-D, or rows of channels), from rest."""
        x = np.asarray(_backend.to_host(x))
        fresh = self.spawn() if x.ndim == 1 else self.for_channels(x.shape[0])
        return fresh.push(x, True)

    def for_channels(self, channels: Any, recording: Any = None) -> ChannelStreams:
        """A stage taking ``(channels, samples)`` chunks: one fresh stream per row.

        ``channels`` is a count (rows are channels 0, 1, ...) or the channel
        numbers of the rows; with ``recording``, each row's stream is prepared
        from its channel (:meth:`prepare`).
        """
        return ChannelStreams(self, channels, recording)

    def empty(self) -> Events:
        return Events.empty(self.fs, self.name, self.params)


class ChannelStreams(Stage):
    """One detector stream per channel: ``(channels, samples)`` chunks in, events out.

    What a pipeline's event step or a live monitor holds: ``push(x, final)``
    takes the next chunk of every channel (row ``i`` is channel
    ``channels[i]``) and returns the events finished so far, ``channel`` set,
    sample edges counted from the first sample pushed.  Made by
    :meth:`Detector.for_channels`.

    Parameters
    ----------
    detector : Detector
        The detector each row's stream is spawned from.
    channels : int or sequence of int
        A count (rows are channels 0, 1, ...) or the channel numbers of the rows.
    recording : Recording, optional
        Each row's stream is prepared from its channel (:meth:`Detector.prepare`).

    Raises
    ------
    InputError
        If there is no channel.
    """

    exact_split = False

    def __init__(self, detector: Detector, channels: Any, recording: Any = None) -> None:
        self.detector = detector
        if isinstance(channels, (int, np.integer)):
            channels = range(int(channels))
        self.channels = [int(c) for c in channels]
        if not self.channels:
            raise InputError(f"{detector.name}: no channel to search")
        self.recording = recording
        for name in ("lookback", "lookahead", "latency", "streams"):
            setattr(self, name, getattr(detector, name))
        self.name, self.params, self.fs = detector.name, detector.params, detector.fs
        self.reset()

    def reset(self) -> None:
        self.rows = [self.detector.spawn() for _ in self.channels]
        if self.recording is not None:
            for det, c in zip(self.rows, self.channels, strict=True):
                det.prepare(self.recording, c)

    def push(self, x: Any, final: bool = False) -> Events:
        x = np.asarray(_backend.to_host(x))
        if x.ndim == 1 and len(self.rows) == 1:
            x = x[None]
        if x.ndim != 2 or x.shape[0] != len(self.rows):
            raise InputError(f"{self.name}: push chunks shaped ({len(self.rows)}, samples) "
                             f"for channels {self.channels}, got shape {x.shape}")
        parts = [det.push(x[i], final=final).with_channel(c)
                 for i, (det, c) in enumerate(zip(self.rows, self.channels, strict=True))]
        return Events.concat(parts, fs=self.fs, detector=self.name, params=self.params)

    def for_channels(self, channels: Any, recording: Any = None) -> ChannelStreams:
        return ChannelStreams(self.detector, channels, recording)

    @property
    def grid(self) -> int | None:
        """:attr:`Detector.grid` of the (prepared) channel streams; None if one has none."""
        grids = {det.grid for det in self.rows}
        return grids.pop() if len(grids) == 1 else None

    @property
    def part_lookback(self) -> int:
        return max(det.part_lookback for det in self.rows)

    @property
    def settled(self) -> int:
        """The earliest :attr:`Detector.settled` of the channels."""
        return min(det.settled for det in self.rows)


#: detector classes by operator name (filled by :func:`register`)
DETECTORS: dict[str, type[Detector]] = {}


def register(cls: type[Detector]) -> type[Detector]:
    """Declare ``cls`` as the operator :attr:`Detector.name` and remember the class.

    The operator runs the detector on a whole signal and returns an
    ``events`` result (:meth:`Events.to_result`); its parameter schema is the
    class's :attr:`PARAMS`, so forms and listings are generated as for every
    operator.
    """
    def run_whole(x, *, fs, **params):
        return cls(params, fs=fs, backend="numpy").run(x).to_result()

    run_whole.__doc__ = cls.__doc__
    run_whole.__name__ = cls.name.replace(".", "_")
    with registry.namespace(None):
        registry.operator(cls.name, family="detect", summary=cls.summary,
                          params=cls.PARAMS, reference=cls.REFERENCE, history=None,
                          streamable=True, nan_policy="reject")(run_whole)
    DETECTORS[cls.name] = cls
    return cls


Factory = Callable[..., Detector]
