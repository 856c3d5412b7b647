"""A pipeline bound to a sample rate: its stages, chunked streaming, the tile engine's function.

:class:`BoundPipeline` designs the filters of a pipeline for one sample rate,
builds its stages (:mod:`specscope.compute.stream` stages), gives fresh
chains of them (:meth:`BoundPipeline.chain`, what playback and live sessions
push blocks through) and streams a recording through them
(:meth:`BoundPipeline.stream`, by :func:`specscope.compute.stream.run`),
telling the chunked runs of exports and batch jobs what history they need
(``lookback``, ``lookahead``, ``exact_split``).
:class:`PipelineResult` is what :meth:`Pipeline.run` returns.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..edit import RegionEdit
from ..errors import InputError
from ..filters import block_filter
from ..spectral import StftParams
from ..stream import Chain, Map, Trim, run
from .edit_stage import EditStage
from .stages import (
    Designed,
    SamplewiseStage,
    SpectrogramStage,
    Stage,
    filter_stage,
    operator_stage,
)

__all__ = ["DEFAULT_CHUNK_SAMPLES", "BlockChain", "BoundPipeline", "PipelineResult"]

#: samples read per chunk by :meth:`Pipeline.run`
DEFAULT_CHUNK_SAMPLES = 1 << 20


@dataclass
class PipelineResult:
    """What :meth:`Pipeline.run` returns.

    Attributes
    ----------
    kind : {"signal", "spectrogram", "events"}
    data : ndarray
        ``signal``: shaped (channels, samples); ``spectrogram``: (channels,
        frequencies, frames), power (``psd``, ``spectrum``) or amplitude;
        ``events``: empty, shaped (channels, 0) (the table is ``events``).
    sample_rate : float
    first_sample : int
        Recording sample of the first output sample, or where frame 0 starts.
    times : ndarray
        Seconds from the start of the recording: of each sample, or of each
        frame centre.
    frequencies : ndarray or None
        Bin frequencies in Hz (plus the recording's centre frequency).
    coefficients : dict
        Designed filters by step index (see :meth:`BoundPipeline.coefficients`).
    """

    kind: str
    data: np.ndarray
    sample_rate: float
    first_sample: int
    times: np.ndarray
    frequencies: np.ndarray | None
    coefficients: dict[int, Designed]
    #: what the detector of an event pipeline found (kind ``events``), else None
    events: Any = None


class _Steps:
    """The steps of an edit's processing, as :class:`BoundPipeline` takes a pipeline."""

    event_step = None

    def __init__(self, steps: list[Any]) -> None:
        self.steps = steps


class BlockChain:
    """Functions applied in turn to a block; ``context`` samples needed around it.

    What :meth:`BoundPipeline.block_function` gives the tile engine.

    Parameters
    ----------
    fns : list of callable
        ``fn(x, fs)`` applied in order to a block.
    context : tuple of int
        ``(before, after)``: samples the block needs around it.
    placed : list of callable, optional
        ``fn(x, fs, start)``: functions that act at a place of the recording (an edit's
        region), given the recording's sample at ``x[0]``; run after ``fns``.
    """

    def __init__(self, fns: list[Callable[[np.ndarray, float], Any]],
                 context: tuple[int, int],
                 placed: list[Callable[[np.ndarray, float, int], Any]] | None = None) -> None:
        self.fns = fns
        self.context = context
        self.placed = list(placed or [])

    def __call__(self, x: np.ndarray, fs: float, start: int = 0) -> np.ndarray:
        for fn in self.fns:
            x = np.asarray(fn(x, fs))
        for fn in self.placed:
            x = np.asarray(fn(x, fs, start))
        return x


class BoundPipeline:
    """A pipeline designed for one sample rate: its stages and what chunking needs.

    Every filter is designed and every step checked at construction; no data is read.

    Parameters
    ----------
    pipeline : Pipeline
        The pipeline to bind.
    fs : float
        Sample rate (Hz).
    complex_input : bool
        Whether the recording's samples are complex (IQ).

    Raises
    ------
    InputError
        If ``fs`` is not a positive sample rate, or a step cannot run at it (naming the
        step).
    """

    def __init__(self, pipeline: Any, fs: float, complex_input: bool = False) -> None:
        if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not (
                math.isfinite(fs) and fs > 0):
            raise InputError(f"fs={fs!r} must be a positive sample rate in Hz")
        self.pipeline = pipeline
        self.sample_rate = float(fs)
        self.complex_input = bool(complex_input)
        self.stages: list[Stage] = []
        self.designed: dict[int, Designed] = {}
        self.spectrogram: SpectrogramStage | None = None
        spectrogram = None
        #: the detector ending an event pipeline (see :mod:`.events`), or None
        self.event_step = None
        for step in pipeline.steps:
            if getattr(pipeline, "event_step", None) is step:
                self.event_step = step
            elif step.op == "filter":
                stage, d = filter_stage(step, self.sample_rate)
                self.designed[step.index] = d
                self.stages.append(stage)
            elif step.op == "spectrogram":
                spectrogram = step
            elif step.op == "edit":
                edit = RegionEdit.from_dict(step.values, step.label)
                try:
                    edit.check(self.sample_rate, two_sided=complex_input)
                except InputError as exc:
                    raise step.error(str(exc)) from None
                inner = None
                if step.inner:
                    try:
                        inner = BoundPipeline(_Steps(list(step.inner)), self.sample_rate,
                                              complex_input)
                    except InputError as exc:
                        raise step.error(f"in its steps: {exc}") from None
                    if inner.drop or inner.complex_output != complex_input:
                        raise step.error("its steps must keep the length and the kind "
                                         "(real or complex) of the signal")
                self.stages.append(EditStage(step, edit, self.sample_rate, inner))
            else:
                self.stages.append(operator_stage(step, self.sample_rate, complex_input))
        #: whether the time-domain output is complex (two-sided spectra)
        self.complex_output = self.complex_input or any(s.makes_complex for s in self.stages)
        if spectrogram is not None:
            v = spectrogram.values
            self.spectrogram = SpectrogramStage(
                spectrogram, StftParams(v["nfft"], v["hop"], v["window"], v["scaling"]),
                self.sample_rate, self.complex_output)
        self._chain = Chain(self.stages)

    def chain(self, channels: int | None = None, origin: int = 0) -> Chain:
        """Fresh time-domain stages, at rest: for 1-D chunks, or ``(channels, n)`` ones,
        the first of them the recording's sample ``origin`` (where an ``edit`` step acts)."""
        if not any(isinstance(s, EditStage) for s in self.stages):
            return self._chain.spawn() if channels is None else \
                self._chain.for_channels(channels)
        stages: list[Stage] = []
        at = int(origin)
        for s in self.stages:
            fresh = s.placed(at) if isinstance(s, EditStage) else (
                s.spawn() if channels is None else s.for_channels(channels))
            stages.append(fresh)
            at += s.drop
        return Chain(stages)

    # -- what chunked runs need ---------------------------------------------------------
    @property
    def kind(self) -> str:
        """``signal``, ``spectrogram``, or ``events`` for a pipeline ending in a detector."""
        if self.event_step is not None:
            return "events"
        return "spectrogram" if self.spectrogram is not None else "signal"

    @property
    def stft(self) -> StftParams | None:
        return None if self.spectrogram is None else self.spectrogram.params

    @property
    def lookback(self) -> int:
        """Input samples before an output sample that it depends on (IIR: settling)."""
        return self._chain.lookback

    @property
    def lookahead(self) -> int:
        return self._chain.lookahead

    @property
    def drop(self) -> int:
        """Leading input samples without a time-domain output (valid-mode steps)."""
        return self._chain.drop

    @property
    def streams(self) -> bool:
        """Whether a chunked run is possible (no step needs the whole signal)."""
        return self._chain.streams

    @property
    def exact_split(self) -> bool:
        """Whether a range computed from a cold start ``lookback`` samples early is exact."""
        return self._chain.exact_split

    def signal_length(self, n_input: int) -> int:
        return max(0, n_input - self.drop)

    def output_length(self, n_input: int) -> int:
        n = self.signal_length(n_input)
        return n if self.stft is None else self.stft.n_frames(n)

    def frequencies(self, center_frequency: float | None = None) -> np.ndarray | None:
        if self.stft is None:
            return None
        return self.stft.frequencies(self.sample_rate, self.complex_output) + (
            center_frequency or 0.0)

    def coefficients(self) -> dict[int, Designed]:
        """Designed filters by step index."""
        return dict(self.designed)

    # -- the tile engine's block function -------------------------------------------------
    def block_function(self) -> BlockChain:
        """``f(x, fs)`` running the time-domain stages over an independent block.

        Sample-wise steps run as they are; ``filter`` steps through
        :func:`~specscope.compute.filters.block_filter`, the same
        :class:`~specscope.compute.filters.StreamFilter` as their stages,
        from rest, which needs ``f.context = (before, after)`` samples around
        each block (the tile engine reads and trims them).  Other steps with
        history are refused with an error naming the step.
        """
        fns: list[Callable[[np.ndarray, float], Any]] = []
        placed: list[Callable[[np.ndarray, float, int], Any]] = []
        before = after = 0
        for stage in self.stages:
            step = stage.step
            if isinstance(stage, SamplewiseStage) and not placed:
                fns.append(_whole_of(stage))
            elif step.op == "filter" and not placed:
                bf = block_filter(self.designed[step.index].design)
                fns.append(bf)
                before += bf.context[0]
                after += bf.context[1]
            elif isinstance(stage, EditStage):
                placed.append(stage.block)
                before += stage.lookback
                after += stage.lookahead
            else:
                raise step.error("needs history across blocks, which a block-wise view "
                                 "cannot give it (after an edit: the export applies it)"
                                 if not placed else "cannot follow an edit in a block-wise "
                                 "view; put the edits last (the export applies it)")
        return BlockChain(fns, (before, after), placed)

    # -- streaming ----------------------------------------------------------------------
    def stream(self, read: Callable[[int, int], np.ndarray], read_start: int, read_stop: int,
               *, chunk_samples: int = DEFAULT_CHUNK_SAMPLES, skip: int = 0,
               take: int | None = None,
               progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> Iterator[np.ndarray]:
        """Blocks of output for input ``read_start:read_stop``.

        ``read(a, b)`` returns samples ``a:b`` shaped (samples, channels).  The
        time-domain signal leaves the stages, loses its first ``skip`` samples
        and is cut after ``take`` samples; then it is yielded, shaped
        (channels, samples), or transformed into spectrogram frames, shaped
        (channels, frequencies, frames).  For an event pipeline the blocks are
        the signal its detector searches (:func:`.events.run_events` pushes
        them into the detectors).
        """
        if chunk_samples < 1:
            raise InputError(f"chunk_samples={chunk_samples} must be >= 1")
        n_in = read_stop - read_start
        if not self.streams and n_in > chunk_samples:
            bad = next(s for s in self.stages if not s.streams)
            raise bad.step.error(f"needs the whole signal at once; the range has {n_in} "
                                 f"samples, more than chunk_samples={chunk_samples} "
                                 "(raise it, or drop the step)")
        trim = Trim(skip, take)

        def rows(a: int, b: int) -> np.ndarray:
            # all channels at once, shaped (channels, samples)
            block = np.asarray(read(a, b))
            return (block[:, None] if block.ndim == 1 else block).T

        def make(first: np.ndarray) -> Chain:
            n = first.shape[0]
            stages = [self.chain(n, read_start) if n else Map(_no_channels), trim]
            if self.spectrogram is not None:
                stages.append(self.spectrogram.for_channels(n))
            return Chain(stages)

        for out in run(make, rows, read_start, read_stop, chunk=chunk_samples,
                       progress=progress, cancelled=cancelled, until=lambda: trim.done):
            if self.spectrogram is not None:
                # (channels, frames, frequencies) -> (channels, frequencies, frames)
                out = out.transpose(0, 2, 1)
            out = np.ascontiguousarray(out)
            if out.shape[-1]:
                yield out


def _no_channels(x: np.ndarray) -> np.ndarray:
    return np.zeros((0, 0))


def _whole_of(stage: Stage) -> Callable[[np.ndarray, float], Any]:
    def apply(x: np.ndarray, fs: float) -> Any:
        return stage.whole(x)
    return apply
