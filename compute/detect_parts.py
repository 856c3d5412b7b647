"""One long input of a detect run as part tasks whose merged events equal a whole run's.

A detect run (:mod:`specscope.compute.batch_detect`) cuts an input longer
than ``part_samples`` into parts, so several workers share one long
recording.  :func:`plan_parts` gives each part the range of event starts it
owns: consecutive ranges of equal length, a multiple of the detector's
:attr:`~specscope.compute.detect.Detector.grid` (its noise block, its block
of correlation lags, its operator block) counted from the first signal
sample.  :func:`part_events` runs one part:

- its stream starts on that grid, at least the detector's
  :attr:`~specscope.compute.detect.Detector.part_lookback` before the owned
  range (the noise floor's blocks before, the minimum gap, the neighbours a
  template match must top), so from the owned range on every frame, block,
  floor and score is the one a stream from the first sample computes, bit for
  bit;
- it reads on past the owned range until the detector's
  :attr:`~specscope.compute.detect.Detector.settled` passes its end: every
  event starting in the range has then been returned, however long it is
  (no event length is capped: a long event only makes its part read further;
  an input's last part reads to the end and finishes the stream as a whole
  run does);
- it keeps the events that start in its range; each event starts in exactly
  one range, so the parts' events joined in order are the whole run's rows,
  edges and scores.

The signal steps before the detector start cold their ``lookback`` before
the part's stream; a pipeline is split only when that is exact
(``exact_split``: FIR filters, sample-wise steps; an IIR filter never
settles exactly, so an input through one runs as one task), when every step
streams and when the detector has a grid (an operator needing the whole
signal, such as ``onsets.detect``, has none).  The split depends only on
``part_samples`` and the detector, never on the executor.

Nothing here imports Qt.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .detect import Events, make_detector
from .errors import InputError, operator_detail
from .pipeline import Pipeline
from .pipeline.events import EventStream, ProcessedView

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

    None when the range is at most ``part_samples`` long (or ``part_samples``
    is 0 or None), or the pipeline cannot be split exactly (see the module
    doc).  The first range starts at ``start``, the last ends at ``stop``; the
    others are a multiple of the detector's grid long.
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

    ``last`` says that ``own`` is the input's last range (its stream runs to
    the end).  Returns the events (recording sample edges, sorted) and the
    range of signal samples the part pushed into the detector.
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
