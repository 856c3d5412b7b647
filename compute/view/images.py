"""Rendered images: power from the tile engine, dB for a view.

:class:`RenderResult` is what :meth:`~specscope.compute.view.TileEngine.render`
returns (power, with its time and frequency axes); :class:`DisplayImage` is the
same image in dB, the form a view draws and an export writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spectral import to_db


@dataclass(frozen=True)
class RenderResult:
    """What :meth:`~specscope.compute.view.TileEngine.render` returns.

    It unpacks as ``(image, column_edges, frequencies)``.

    Parameters
    ----------
    image : numpy.ndarray
        float32 power (amplitude squared for magnitude scaling) shaped
        (n_rows, n_cols), row 0 the lowest frequency, NaN where a column lies
        outside the recording.
    column_edges : numpy.ndarray
        ``n_cols + 1`` column edges in seconds.
    frequencies : numpy.ndarray
        Row centres in Hz.
    frequency_edges : numpy.ndarray
        ``n_rows + 1`` row edges in Hz.
    level : int
        The pyramid level the columns were reduced from.
    frames_per_column : float
        Mean number of STFT frames in a column inside the recording.
    reduce : {"mean", "max"}
        How a column aggregates its frames.
    preview : bool
        True for a quick, approximate image (one frame per column).
    """

    image: np.ndarray
    column_edges: np.ndarray
    frequencies: np.ndarray
    frequency_edges: np.ndarray
    level: int
    frames_per_column: float
    reduce: str
    preview: bool = False

    def __iter__(self):  # unpacks as (image, column_edges, frequencies)
        return iter((self.image, self.column_edges, self.frequencies))


@dataclass(frozen=True)
class DisplayImage:
    """A rendered image in dB, ready for a view.

    Parameters
    ----------
    db : numpy.ndarray
        float32 levels in dB shaped (n_rows, n_cols), NaN where there is no data.
    column_edges : numpy.ndarray
        ``n_cols + 1`` column edges in seconds.
    frequency_edges : numpy.ndarray
        ``n_rows + 1`` row edges in Hz.
    level : int
        The pyramid level the columns were reduced from.
    frames_per_column : float
        Mean number of STFT frames in a column.
    reduce : {"mean", "max"}
        How a column aggregates its frames.
    preview : bool
        True for a quick, approximate image.
    """

    db: np.ndarray              # float32 (n_rows, n_cols), NaN where there is no data
    column_edges: np.ndarray
    frequency_edges: np.ndarray
    level: int
    frames_per_column: float
    reduce: str
    preview: bool

    @classmethod
    def from_render(cls, r: RenderResult) -> DisplayImage:
        """The dB image of a power :class:`RenderResult`, with the same axes."""
        return cls(to_db(r.image), r.column_edges, r.frequency_edges, r.level,
                   r.frames_per_column, r.reduce, r.preview)
