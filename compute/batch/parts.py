"""One long input of a detect run as part tasks whose merged events equal a whole run's.

:func:`plan_parts` gives each part the range of event starts it owns, on the
detector's grid; :func:`part_events` runs one part and keeps the events that
start in its range.  Nothing here imports Qt.

See docs/explanation/rooms/batch.md.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..detect import Events, make_detector
from ..errors import InputError, operator_detail
from ..pipeline import Pipeline
from ..pipeline.events import EventStream, ProcessedView

__all__ = ["DEFAULT_PART_SAMPLES", "part_events", "plan_parts"]

#: inputs longer than this (samples) are split into parts (an hour at 48 kHz: 6 parts)
DEFAULT_PART_SAMPLES = 1 << 25


def _streams(pipeline: Pipeline, recording: Any, channels: list[int] | None,
             prepare: bool) -> tuple[Any, Any]:
    bound = pipeline.bind(recording.sample_rate, recording.is_complex)
    step = bound.event_step
    try:
        det = make_detector(step.op, step.params, fs=bound.sample_rate,
                            center_frequency=recording.center_frequency)
        if not prepare:
            return bound, det
        source = ProcessedView(bound, recording) if bound.stages else recording
        return bound, det.for_channels(channels, recording=source)
    except InputError as exc:
        raise step.error(operator_detail(exc, step.op)) from None


def plan_parts(pipeline: Pipeline, recording: Any, start: int, stop: int,
               part_samples: int | None) -> list[tuple[int, int]] | None:
    """The owned ranges ``(first, end)`` of event starts (recording samples), or None.

    The first range starts at ``start``, the last ends at ``stop``; the others
    are a multiple of the detector's grid long.

    Parameters
    ----------
    pipeline : Pipeline
        A pipeline ending in a detector.
    recording : Recording
        The open input (its sample rate, type and centre frequency bind the
        pipeline).
    start, stop : int
        The range run, in samples.
    part_samples : int or None
        The longest range run as one task.

    Returns
    -------
    list of (int, int) or None
        The ranges of at least two parts; None when the range is at most
        ``part_samples`` long (or ``part_samples`` is 0 or None), or the pipeline
        cannot be split exactly (a step that does not stream or is not exact
        when split, or a detector without a grid).

    Raises
    ------
    InputError
        The detector's parameters are invalid (named by the pipeline step).
    """
    n = stop - start
    if not part_samples or n <= part_samples:
        return None
    bound, det = _streams(pipeline, recording, None, prepare=False)
    grid = det.grid
    if grid is None or not bound.streams or not bound.exact_split:
        return None
    count = math.ceil(n / part_samples)
    length = math.ceil(math.ceil(n / count) / grid) * grid
    g0 = start + bound.drop  # the first signal sample: where the grid starts
    edges = [g0 + i * length for i in range(count)]
    edges = [e for e in edges if e < stop] + [stop]
    edges[0] = start
    if len(edges) < 3:
        return None
    return list(itertools.pairwise(edges))


def part_events(pipeline: Pipeline, recording: Any, start: int, stop: int,
                channels: list[int], own: tuple[int, int], *, chunk_samples: int,
                last: bool, cancelled: Callable[[], bool] | None = None
                ) -> tuple[Events, tuple[int, int]]:
    """The events starting in ``own`` of samples ``start:stop``, as a whole run finds them.

    Parameters
    ----------
    pipeline : Pipeline
        A pipeline ending in a detector.
    recording : Recording
        The open input.
    start, stop : int
        The whole range of the run, in samples.
    channels : list of int
        The channels run.
    own : (int, int)
        The range of event starts this part owns (from :func:`plan_parts`).
    chunk_samples : int
        Samples read at a time.
    last : bool
        Whether ``own`` is the input's last range (its stream runs to the end).
    cancelled : callable, optional
        Asked between chunks; True stops the part
        (:class:`~specscope.compute.errors.Cancelled`).

    Returns
    -------
    events : Events
        The events starting in ``own``, with recording sample edges, sorted.
    pushed : (int, int)
        The range of signal samples the part pushed into the detector.

    Raises
    ------
    InputError
        The detector cannot be split into parts, or its parameters are invalid.
    """
    bound, streams = _streams(pipeline, recording, channels, prepare=True)
    step = bound.event_step
    grid = streams.grid
    if grid is None:
        raise InputError(f"{step.label}: the detector cannot be split into parts")
    g0 = start + bound.drop
    p0, p1 = own
    if p0 <= g0:
        s = g0
    else:
        s = g0 + max(0, p0 - g0 - streams.part_lookback) // grid * grid
    r0 = max(start, s - bound.lookback - bound.drop)
    skip = s - (r0 + bound.drop)
    stream = EventStream(step, streams, s)
    found: list[Events] = []
    pos = s  # the recording sample of the next signal sample pushed
    done = False
    dtype = np.complex64 if bound.complex_output else np.float32
    blocks = bound.stream(lambda i, j: recording.read(i, j, channels), r0, stop,
                          chunk_samples=chunk_samples, skip=skip, cancelled=cancelled)
    try:
        for block in blocks:
            dtype = block.dtype
            i, n = 0, block.shape[-1]
            while i < n and not done:
                # past the owned range, a grid step at a time: read little beyond `settled`
                j = n if last else min(n, i + max(p1 - pos, grid))
                found.append(stream.push(block[:, i:j], False))
                pos += j - i
                i = j
                done = not last and s + streams.settled >= p1
            if done:
                break
    finally:
        blocks.close()
    if not done:
        found.append(stream.push(np.zeros((len(channels), 0), dtype), True))
    events = Events.concat(found, fs=bound.sample_rate, detector=streams.name,
                           params=streams.params)
    keep = ((events.start_sample >= p0) | (p0 <= start)) & ((events.start_sample < p1) | last)
    return events.take(keep).sorted(), (s, pos)
