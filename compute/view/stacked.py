"""Several channels of a recording drawn as bands one above the other."""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..types import FreqScale, Reduction
from .images import RenderResult
from .tiles import TileEngine


class StackedEngine:
    """Several channels' engines drawn as bands one above the other.

    ``render`` returns the channels' images stacked along the rows, channel 0
    at the bottom, separated by a gap row of NaN.  The row axis is a
    synthetic coordinate: channel ``c`` occupies ``[c * band, c * band +
    span)`` where ``span`` is the frequency range of one channel and ``band =
    span * (1 + GAP)``; :meth:`split` turns a coordinate back into
    ``(channel, frequency)``.  Linear frequency rows only.

    Parameters
    ----------
    engines : list of TileEngine
        One engine per channel, bottom band first; they share the recording and
        the STFT parameters of the first.

    Raises
    ------
    InputError
        ``engines`` is empty.
    """

    GAP = 0.04

    def __init__(self, engines: list[TileEngine]) -> None:
        if not engines:
            raise InputError("a stacked view needs at least one channel")
        self.engines = list(engines)
        first = self.engines[0]
        self.fs, self.params, self.n_frames = first.fs, first.params, first.n_frames
        self.recording, self.channel, self.pipeline = first.recording, first.channel, \
            first.pipeline
        self.two_sided, self.max_level = first.two_sided, first.max_level
        # the waveform and plugin views of stacked channels show the first one
        self.read_processed, self.envelope = first.read_processed, first.envelope
        f_edges = first.freq_axis()[1]
        self.f0 = float(f_edges[0])
        self.span = float(f_edges[-1] - f_edges[0])
        # a whole number of empty rows between bands: the image's rows stay uniform
        self.df = self.fs / self.params.nfft
        self.gap_rows = max(1, round(self.GAP * (f_edges.size - 1)))
        self.band = self.span + self.gap_rows * self.df

    @property
    def duration(self) -> float:
        """Length of the recording in seconds."""
        return self.engines[0].duration

    @property
    def n_channels(self) -> int:
        """Number of stacked channels."""
        return len(self.engines)

    def split(self, y: float) -> tuple[int, float]:
        """Synthetic row coordinate -> (channel, frequency in Hz)."""
        c = int(min(max(math.floor(y / self.band), 0), self.n_channels - 1))
        return c, self.f0 + (y - c * self.band)

    def freq_axis(self) -> tuple[np.ndarray, np.ndarray]:
        """Centre and edges of the synthetic row axis that holds every band."""
        edges = np.array([0.0, self.n_channels * self.band - self.gap_rows * self.df])
        return (edges[:-1] + edges[1:]) / 2, edges

    def column_frames(self, *args: object, **kwargs: object):
        """:meth:`TileEngine.column_frames` (every channel shares the frame grid)."""
        return self.engines[0].column_frames(*args, **kwargs)

    def _stack(self, results: list[RenderResult]) -> RenderResult:
        rows, edges = [], []
        for c, r in enumerate(results):
            fe = r.frequency_edges - self.f0 + c * self.band
            rows.append(r.image)
            edges.append(fe)
            if c < len(results) - 1:  # the gap between two bands, bin-high rows
                rows.append(np.full((self.gap_rows, r.image.shape[1]), np.nan, np.float32))
                edges.append(fe[-1] + self.df * np.arange(1, self.gap_rows))
        f_edges = np.concatenate(edges)
        r0 = results[0]
        return RenderResult(np.ascontiguousarray(np.vstack(rows)), r0.column_edges,
                            (f_edges[:-1] + f_edges[1:]) / 2, f_edges, r0.level,
                            r0.frames_per_column, r0.reduce, r0.preview)

    def render(self, t0: float, t1: float, n_cols: int, reduce: Reduction = "mean", *,
               freq_scale: FreqScale = "linear", **kwargs: object) -> RenderResult | None:
        """The channels' images stacked (see :meth:`TileEngine.render` for the arguments).

        None when ``cached_only`` is given and some channel's tiles are not cached.
        """
        if freq_scale != "linear":
            raise InputError("stacked channels are drawn on a linear frequency axis")
        progress = kwargs.pop("progress", None)
        n = len(self.engines)
        # each channel is 1/n of the work: progress runs once from 0 to 1 over all of them
        results = [e.render(t0, t1, n_cols, reduce, **kwargs, progress=None if progress is None
                            else (lambda f, k=k: progress((k + f) / n)))
                   for k, e in enumerate(self.engines)]
        if any(r is None for r in results):
            return None
        return self._stack(results)

    def preview(self, t0: float, t1: float, n_cols: int, **kwargs: object) -> RenderResult:
        """The channels' quick previews stacked (:meth:`TileEngine.preview`)."""
        return self._stack([e.preview(t0, t1, n_cols, **kwargs) for e in self.engines])
