"""A measured track: values per frame over a recording's time axis (pitch, formants,
intensity, spectral shape)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Track"]


@dataclass(frozen=True)
class Track:
    """Values per frame of a recording, NaN where there is none (an unvoiced frame).

    Parameters
    ----------
    kind : str
        What it measures: ``"pitch"``, ``"formants"``, ``"intensity"``, ``"centroid"``...
    times : numpy.ndarray
        Seconds from the recording's start of each frame's centre, ascending, shape (n,).
    values : numpy.ndarray
        Shape (n, k): one column per quantity (F1..F5 and their bandwidths; one column for
        pitch or intensity).
    columns : tuple of str
        A name per column (``"f0"``, ``"F1"``, ``"B1"``...).
    units : tuple of str
        A unit per column (``"Hz"``, ``"dB"``).
    params : dict
        The parameters it was measured with, under the reference's names.
    """

    kind: str
    times: np.ndarray
    values: np.ndarray
    columns: tuple[str, ...]
    units: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t = np.asarray(self.times, float)
        v = np.asarray(self.values, float)
        if v.ndim == 1:
            v = v[:, None]
        if v.shape[0] != t.shape[0] or v.shape[1] != len(self.columns) or \
                len(self.units) != len(self.columns):
            raise ValueError(f"a {self.kind} track of {t.shape[0]} times has values shaped "
                             f"{v.shape} for columns {self.columns} and units {self.units}")
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "values", v)

    def column(self, name: str) -> np.ndarray:
        """The values of one column."""
        return self.values[:, self.columns.index(name)]

    def at(self, t: float) -> np.ndarray:
        """The values of the frame nearest ``t`` seconds (NaN when no frame is within one
        frame step)."""
        if not self.times.size:
            return np.full(len(self.columns), np.nan)
        i = int(np.clip(np.searchsorted(self.times, t), 1, self.times.size - 1))
        i = i - 1 if abs(self.times[i - 1] - t) <= abs(self.times[i] - t) else i
        step = float(np.median(np.diff(self.times))) if self.times.size > 1 else np.inf
        return self.values[i] if abs(self.times[i] - t) <= step else np.full(
            len(self.columns), np.nan)

    def between(self, t0: float, t1: float) -> Track:
        """The frames whose times lie in ``[t0, t1)``."""
        keep = (self.times >= t0) & (self.times < t1)
        return Track(self.kind, self.times[keep], self.values[keep], self.columns,
                     self.units, dict(self.params))
