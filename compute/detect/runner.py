"""Running a detector over a recording in chunks: :func:`detect`.

The recording is read in chunks (all the channels asked for at once) and
each channel's samples are pushed into its own detector stream; detectors
keep the lookback they need themselves, so the events do not depend on the
chunk size: an event crossing a chunk boundary is found once, with the same
edges and score as in a whole run.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import Cancelled, InputError
from ..io import ArrayRecording, Recording, open_recording
from ..operators import Operator, dispatch
from .core import DETECTORS, Detector
from .events import Events
from .plugin import OperatorDetector

__all__ = ["ALIASES", "DEFAULT_CHUNK", "ChannelStreams", "detect", "detector_names",
           "make_detector"]

#: samples read per chunk by default (per channel)
DEFAULT_CHUNK = 1 << 20
#: short names people type for the detectors
ALIASES = {"energy": "detect.energy", "bled": "detect.energy", "template": "detect.template",
           "bursts": "detect.bursts", "burst": "detect.bursts", "onsets": "onsets.detect",
           "onset": "onsets.detect"}


def detector_names() -> list[str]:
    """The built-in detectors' operator names (plugins' ``events`` operators come on top)."""
    return sorted(DETECTORS)


def make_detector(detector: str | Operator | Detector, params: Mapping[str, Any] | None = None,
                  *, fs: float, center_frequency: float | None = None,
                  backend: str = "auto") -> Detector:
    """A detector stream for ``detector`` (a name, an alias, an operator or a Detector).

    Names are the built-in ``detect.*`` operators (:func:`detector_names`),
    their aliases (:data:`ALIASES`: ``energy``, ``template``, ``bursts``,
    ``onsets``) or any operator declaring ``events`` (a plugin's).  A
    :class:`Detector` is returned as it is (then ``params`` must be None).
    """
    if isinstance(detector, Detector):
        if params:
            raise InputError(f"{detector.name}: the detector has its parameters already; "
                             "give params=None with a Detector")
        return detector
    name = detector.name if isinstance(detector, Operator) else detector
    if not isinstance(name, str):
        raise InputError(f"detector={detector!r} must be a detector name, an operator or a "
                         "Detector")
    name = ALIASES.get(name, name)
    cls = DETECTORS.get(name)
    if cls is not None:
        return cls(params, fs=fs, center_frequency=center_frequency, backend=backend)
    try:
        dispatch.get(name)
    except InputError:
        raise InputError(f"detector={name!r} is not a detector; built-in: "
                         f"{', '.join(detector_names())}, or "
                         f"{', '.join(sorted(ALIASES))}, or a plugin operator declaring "
                         "'events' (see 'specscope ops')") from None
    return OperatorDetector(name, params, fs=fs, center_frequency=center_frequency,
                            backend=backend)


def _cancelled(cancel: Any) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    if hasattr(cancel, "is_set"):
        return cancel.is_set
    if callable(cancel):
        return cancel
    raise InputError(f"cancel={cancel!r} must be a callable or a threading.Event")


def _open(recording: Any, fs: float | None) -> Recording:
    if isinstance(recording, Recording):
        return recording
    if isinstance(recording, (str, os.PathLike)):
        return open_recording(recording)
    if fs is None:
        raise InputError("detect: an array needs fs= (its sample rate)")
    return ArrayRecording(np.asarray(recording), fs)


def detect(recording: Any, detector: str | Operator | Detector,
           params: Mapping[str, Any] | None = None, *,
           channels: int | Sequence[int] | None = None, start_s: float | None = None,
           stop_s: float | None = None, chunk: int | None = DEFAULT_CHUNK,
           progress: Callable[[float], Any] | None = None, cancel: Any = None,
           backend: str = "auto", fs: float | None = None) -> Events:
    """Run a detector over a recording, chunk by chunk, and return its events.

    Parameters
    ----------
    recording : Recording, path or array
        What to search (an array needs ``fs``).
    detector : str, Operator or Detector
        ``"detect.energy"``, ``"detect.template"``, ``"detect.bursts"``, an
        alias (``"energy"``), a plugin's ``events`` operator (``"onsets.detect"``)
        or a ready :class:`Detector`.
    params : mapping, optional
        The detector's parameters (its operator's schema).
    channels : int or sequence of int, optional
        Channels to search, each on its own; all when omitted.
    start_s, stop_s : float, optional
        Search only this range (events keep recording times).
    chunk : int or None
        Samples per read; None reads the range at once.  The events are the
        same for every chunk size.
    progress : callable, optional
        ``progress(fraction)`` after each chunk.
    cancel : callable or threading.Event, optional
        Checked before each chunk; when set, :class:`Cancelled` is raised.
    backend : str
        ``auto``, ``numpy`` or ``cupy``: where the kernels run (one for the run).

    Returns
    -------
    Events
        Sorted by start, then channel; sample edges from the recording's first
        sample; ``channel`` is the channel searched.
    """
    rec = _open(recording, fs)
    fs = float(rec.sample_rate)
    chans = rec.channel_list(channels)
    a = 0 if start_s is None else max(0, round(float(start_s) * fs))
    b = rec.n_samples if stop_s is None else min(rec.n_samples, round(float(stop_s) * fs))
    if b < a:
        raise InputError(f"detect: stop_s={stop_s!r} must be >= start_s={start_s!r}")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer))
                              or chunk < 1):
        raise InputError(f"detect: chunk={chunk!r} must be a whole number of samples >= 1 "
                         "or None")
    step = (b - a) if chunk is None else int(chunk)
    streams = ChannelStreams(detector, params, fs=fs, channels=chans,
                             center_frequency=rec.center_frequency, backend=backend,
                             recording=rec)
    stopped = _cancelled(cancel)
    found: list[Events] = []
    pos = a
    total = max(1, b - a)
    while True:
        if stopped():
            raise Cancelled(f"{streams.name}: cancelled at {pos / fs:.3f} s")
        end = min(b, pos + max(1, step))
        final = end >= b
        found.append(streams.push(rec.read(pos, end, channels=chans), final=final))
        pos = end
        if progress is not None:
            progress(min(1.0, (pos - a) / total))
        if final:
            break
    return Events.concat(found, fs=fs, detector=streams.name,
                         params=streams.params).shifted(a).sorted()


class ChannelStreams:
    """One detector stream per channel: blocks shaped ``(samples, channels)`` in, events out.

    What a pipeline's event step or a live monitor holds: ``push(x, final)``
    takes the next block of every channel (the columns are ``channels``, in
    order) and returns the events finished so far, ``channel`` set, sample
    edges counted from the first sample pushed.

    Parameters
    ----------
    detector, params, fs, center_frequency, backend
        As :func:`make_detector`.  A :class:`Detector` is copied per channel.
    channels : sequence of int
        The channel number of each column.
    recording : Recording, optional
        Given to :meth:`Detector.prepare` for each channel (a template's box).
    """

    def __init__(self, detector: str | Operator | Detector,
                 params: Mapping[str, Any] | None = None, *, fs: float,
                 channels: Sequence[int] = (0,), center_frequency: float | None = None,
                 backend: str = "auto", recording: Any = None) -> None:
        first = make_detector(detector, params, fs=fs, center_frequency=center_frequency,
                              backend=backend)
        self.channels = [int(c) for c in channels]
        if not self.channels:
            raise InputError(f"{first.name}: no channel to search")
        self.streams: list[Detector] = []
        for i, c in enumerate(self.channels):
            det = first if i == 0 else copy.deepcopy(first)
            det.reset()
            if recording is not None:
                det.prepare(recording, c)
            self.streams.append(det)
        self.name, self.params, self.fs = first.name, first.params, first.fs

    def push(self, x: Any, final: bool = False) -> Events:
        x = np.asarray(x)
        if x.ndim == 1 and len(self.streams) == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[1] != len(self.streams):
            raise InputError(f"{self.name}: push blocks shaped (samples, {len(self.streams)}) "
                             f"for channels {self.channels}, got shape {x.shape}")
        parts = [det.push(x[:, i], final=final).with_channel(c)
                 for i, (det, c) in enumerate(zip(self.streams, self.channels, strict=True))]
        return Events.concat(parts, fs=self.fs, detector=self.name, params=self.params)

    def reset(self) -> None:
        for det in self.streams:
            det.reset()
