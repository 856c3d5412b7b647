"""A pipeline that ends in an event step: its signal steps, then a detector, as a stream.

The last step of a pipeline may be a detector: a built-in ``detect.*``
operator (``detect.energy``, ``detect.template``, ``detect.bursts``) or an
operator whose plugin declares ``events`` (``onsets.detect``).  The steps
before it stream as in every pipeline (:meth:`BoundPipeline.stream` gives
the signal the detector takes); each channel's signal is pushed into its own
detector stream (:class:`specscope.compute.detect.Detector`), which keeps the
history it needs itself, so the events of a chunked run are those of a whole
run: an event crossing a chunk boundary is found once, with the same edges
and score.

A template box (``detect.template``) is cut from the signal the detector
searches: after the pipeline's steps, computed over the box and the
history the steps declare before it (``lookback``), so every run of the
pipeline (chunked, in a pool, on a cluster) correlates with the same
template.  Without steps before the detector that is the recording itself; a
box in another recording (``template_file``) is read from that file as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..detect import DETECTORS, ChannelStreams, Events, make_detector
from ..errors import InputError, operator_detail
from ..extensions import output_kind
from .step import Step

__all__ = ["EventStream", "ProcessedView", "is_event_operator", "run_events"]


def is_event_operator(name: str) -> bool:
    """Whether operator ``name`` gives events (a built-in detector or a plugin's).

    Parameters
    ----------
    name : str
        An operator name (``"detect.energy"``, ``"onsets.detect"``).

    Returns
    -------
    bool
        True for a built-in detector or an operator whose plugin declares ``events``.
    """
    return name in DETECTORS or output_kind(name) == "events"


class ProcessedView:
    """A recording as the event step sees it: samples after the pipeline's signal steps.

    ``read(a, b, channels)`` (recording sample numbers) runs the signal steps
    over ``a - lookback .. b + lookahead`` and returns samples ``a:b`` shaped
    ``(samples, channels)``, like :meth:`Recording.read`; samples before the
    first output of a valid-mode step are zeros.

    Parameters
    ----------
    bound : BoundPipeline
        The bound pipeline whose signal steps run.
    recording : Recording
        The recording read.
    """

    def __init__(self, bound: Any, recording: Any) -> None:
        self.bound = bound
        self.recording = recording
        self.sample_rate = recording.sample_rate
        self.n_samples = recording.n_samples
        self.center_frequency = recording.center_frequency
        self.is_complex = bound.complex_output

    def read(self, start: int = 0, stop: int | None = None,
             channels: list[int] | None = None) -> np.ndarray:
        rec = self.recording
        n = rec.n_samples
        a = max(0, int(start))
        b = n if stop is None else min(n, int(stop))
        b = max(a, b)
        chans = rec.channel_list(channels)
        # a deployment: each contiguous piece on its own, history from its segment only
        pieces = [self._piece(lo, hi, s0, s1, chans)
                  for lo, hi, s0, s1 in _pieces(rec, a, b)]
        if len(pieces) == 1:
            return pieces[0]
        dtype = np.complex128 if self.bound.complex_output else np.float64
        return (np.concatenate(pieces, axis=0) if pieces
                else np.zeros((0, len(chans)), dtype))

    def _piece(self, a: int, b: int, lo: int, hi: int, chans: list[int]) -> np.ndarray:
        """Samples ``a:b`` after the steps, read within ``lo:hi`` only."""
        rec, bound = self.recording, self.bound
        r0 = max(lo, a - bound.lookback - bound.drop)
        r1 = min(hi, b + bound.lookahead)
        first = r0 + bound.drop  # recording sample of the first signal sample
        pad = max(0, first - a)
        skip = max(0, a - first)
        blocks = list(bound.stream(lambda i, j: rec.read(i, j, chans), r0, r1,
                                   chunk_samples=max(1, r1 - r0), skip=skip,
                                   take=max(0, b - a - pad)))
        dtype = np.complex128 if bound.complex_output else np.float64
        y = (np.concatenate(blocks, axis=-1) if blocks
             else np.zeros((len(chans), 0), dtype))
        if pad:
            y = np.concatenate([np.zeros((len(chans), min(pad, b - a)), y.dtype), y],
                               axis=-1)
        return y.T


def _pieces(rec: Any, a: int, b: int) -> list[tuple[int, int, int, int]]:
    """``(a', b', seg_start, seg_stop)``: ``a:b`` cut where a deployment's gaps lie (the
    whole recording as one segment otherwise)."""
    segments = getattr(rec, "segments", None)
    if not callable(segments) or a >= b:
        return [(a, b, 0, rec.n_samples)]
    out = [(max(a, s0), min(b, s1), s0, s1) for s0, s1 in segments()]
    return [p for p in out if p[1] > p[0]] or [(a, b, 0, rec.n_samples)]


class EventStream:
    """The event step over chunks shaped ``(channels, n)``: one detector stream per channel.

    ``push(x, final)`` returns the events the chunk finished, with recording
    sample edges (``offset``: the recording sample of the first signal
    sample) and the recording's channel numbers; a detector's error names
    the step.

    Parameters
    ----------
    step : Step
        The event step (named in errors).
    streams : ChannelStreams
        One detector stream per channel.
    offset : int
        Recording sample of the first signal sample.
    """

    def __init__(self, step: Step, streams: ChannelStreams, offset: int) -> None:
        self.step = step
        self.streams = streams
        self.offset = int(offset)

    def push(self, x: np.ndarray, final: bool) -> Events:
        try:
            events = self.streams.push(x, final)
        except InputError as exc:
            raise self.step.error(operator_detail(exc, self.streams.name)) from None
        return events.shifted(self.offset)


def run_events(bound: Any, recording: Any, start: int, stop: int, channels: list[int], *,
               chunk_samples: int, progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None,
               backend: str = "auto") -> Events:
    """The events of samples ``start:stop`` of ``recording`` through a bound event pipeline.

    Parameters
    ----------
    bound : BoundPipeline
        A pipeline ending in a detector, bound to the recording's sample rate.
    recording : Recording
        The recording read.
    start, stop : int
        The range, in recording samples.
    channels : list of int
        The channels searched.
    chunk_samples : int
        Samples read per chunk.
    progress : callable, optional
        Called after each chunk with the fraction read.
    cancelled : callable, optional
        Asked before each chunk; True raises :class:`~specscope.compute.errors.Cancelled`.
    backend : str
        Array backend of the detector (``"auto"``, ``"numpy"``, ``"cupy"``).

    Returns
    -------
    Events
        Sorted by start, then channel; edges in recording samples; the same for
        every ``chunk_samples``.

    Raises
    ------
    InputError
        If the pipeline has no event step, or the detector refuses its parameters or
        the signal (naming the step).
    """
    step = bound.event_step
    if step is None:
        raise InputError("the pipeline has no event step (its last step is not a detector)")
    fs = bound.sample_rate
    source = ProcessedView(bound, recording) if bound.stages else recording
    try:
        first = make_detector(step.op, step.params, fs=fs,
                              center_frequency=recording.center_frequency, backend=backend)
        streams = first.for_channels(channels, recording=source)
    except InputError as exc:
        raise step.error(operator_detail(exc, step.op)) from None
    stream = EventStream(step, streams, start + bound.drop)
    found: list[Events] = []
    dtype = np.complex64 if bound.complex_output else np.float32
    for block in bound.stream(lambda i, j: recording.read(i, j, channels), start, stop,
                              chunk_samples=chunk_samples, progress=progress,
                              cancelled=cancelled):
        found.append(stream.push(block, False))
        dtype = block.dtype
    found.append(stream.push(np.zeros((len(channels), 0), dtype), True))
    return Events.concat(found, fs=fs, detector=streams.name, params=streams.params).sorted()
