"""Display levels of dB images: the colour range a person sees first.

:func:`auto_levels` fits the range of a level image (a spectrogram in dB) from
percentiles of its finite values, leaving out digital silence (the cells at
the image's floor, e.g. the -200 dB of :func:`~specscope.compute.spectral.to_db`
for zero power), so a recording that is half silence still shows its noise
floor.  :func:`difference_levels` gives the symmetric range of a difference
image (after minus before, in dB).  Both ignore NaN and infinite cells.
:func:`level_unit`, :func:`row_offsets` and :func:`calibrated` show a level image
calibrated: an offset in dB per frequency row added to the image as computed, so a
new calibration never recomputes a spectrum.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["DIFFERENCE_SPAN_DB", "LEVEL_SPAN_DB", "auto_levels", "calibrated",
           "difference_levels", "level_unit", "level_values", "row_offsets"]

#: the dynamic range auto levels choose is clipped to this span (dB)
LEVEL_SPAN_DB = (40.0, 120.0)
#: half the range of a difference image is clipped to this span (dB)
DIFFERENCE_SPAN_DB = (3.0, 120.0)
#: cells within this many dB of the image's minimum count as the floor (silence)
FLOOR_TOLERANCE_DB = 0.5
#: at most this many cells are looked at (a regular subsample of larger images)
MAX_CELLS = 1 << 20


def _finite(db: np.ndarray) -> np.ndarray:
    v = np.asarray(db, dtype=np.float64).ravel()
    if v.size > MAX_CELLS:  # percentiles of a regular subsample are as good and cheaper
        v = v[:: v.size // MAX_CELLS + 1]
    return v[np.isfinite(v)]


def level_values(db: np.ndarray) -> np.ndarray:
    """The cells of a dB image that carry a level: finite, and above the floor.

    The floor is the image's minimum when it is shared by many cells (digital
    silence, floored by the dB conversion); a handful of cells at the minimum
    are dropped too, which changes no percentile that matters.

    Parameters
    ----------
    db : array
        A dB image (any shape).

    Returns
    -------
    ndarray
        The remaining values, 1-D (empty when nothing is left).
    """
    v = _finite(db)
    if v.size == 0:
        return v
    above = v[v > v.min() + FLOOR_TOLERANCE_DB]
    return above if above.size else v[:0]


def auto_levels(db: np.ndarray, *, top_percentile: float = 99.9, margin_db: float = 5.0,
                span_db: tuple[float, float] = LEVEL_SPAN_DB,
                default: tuple[float, float] = (-120.0, 0.0)) -> tuple[float, float]:
    """The dB range that shows the noise floor dark and the strongest lines bright.

    The top is the ``top_percentile`` of the levels plus ``margin_db``; the bottom
    sits below the noise floor by as much as the noise spreads: ``p5 - (p50 - p5)``,
    with the 5th percentile and the median of the levels.  The range is then
    clipped to ``span_db``.  NaN, infinite and floor cells (digital silence) are
    left out (:func:`level_values`).

    Parameters
    ----------
    db : array
        A dB image.
    top_percentile : float
        Percentile of the levels the top is placed above.
    margin_db : float
        Head room above that percentile.
    span_db : (float, float)
        The smallest and largest dynamic range returned.
    default : (float, float)
        Returned when the image has no level at all (all NaN or all silence).

    Returns
    -------
    (low, high) : tuple of float
        Rounded to whole dB; ``high - low`` lies in ``span_db``.
    """
    v = level_values(db)
    if v.size == 0:
        return float(default[0]), float(default[1])
    p5, p50, top = np.percentile(v, [5.0, 50.0, top_percentile])
    high = math.ceil(float(top) + margin_db)
    low = math.floor(float(p5) - (float(p50) - float(p5)))
    smallest, largest = span_db
    low = min(max(low, high - largest), high - smallest)
    return float(low), float(high)


def difference_levels(db: np.ndarray, *, percentile: float = 99.5,
                      span_db: tuple[float, float] = DIFFERENCE_SPAN_DB,
                      ) -> tuple[float, float]:
    """A range centred on 0 dB for a difference image (after minus before).

    Parameters
    ----------
    db : array
        A difference image in dB.
    percentile : float
        Percentile of the absolute differences that sets the half range.
    span_db : (float, float)
        Bounds of the half range.

    Returns
    -------
    (low, high) : tuple of float
        ``(-h, h)``, ``h`` rounded up to whole dB.
    """
    v = _finite(db)
    half = float(np.percentile(np.abs(v), percentile)) if v.size else span_db[0]
    half = min(max(math.ceil(half), span_db[0]), span_db[1])
    return -float(half), float(half)


def level_unit(scaling: str, calibration: Any = None) -> str:
    """The unit of a level image of ``scaling`` (``"psd"``, ``"spectrum"``, ``"magnitude"``).

    Parameters
    ----------
    scaling : str
        The STFT's scaling: a PSD is a density, the others are levels.
    calibration : Calibration, optional
        :class:`~specscope.compute.levels.Calibration`; None: full-scale units.

    Returns
    -------
    str
        ``"dB re 1 µPa²/Hz"``, ``"dB re 20 µPa"``... calibrated; ``"dB re 1 FS²/Hz"`` or
        ``"dBFS"`` without.

    Examples
    --------
    >>> level_unit("psd"), level_unit("magnitude")
    ('dB re 1 FS²/Hz', 'dBFS')
    """
    if calibration is None:
        return "dB re 1 FS²/Hz" if scaling == "psd" else "dBFS"
    return calibration.density_unit if scaling == "psd" else calibration.level_unit


def row_offsets(calibration: Any, freq_edges: np.ndarray,
                to_hz: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray | None:
    """The dB a calibration adds to each row of a level image.

    Parameters
    ----------
    calibration : Calibration or None
        Its ``offset_db(frequencies)`` is taken at each row's centre.
    freq_edges : array
        The rows' edges (Hz, or the image's row coordinate when ``to_hz`` is given).
    to_hz : callable, optional
        Row coordinates to Hz (stacked channels' bands).

    Returns
    -------
    ndarray of float32 or None
        One offset per row; None without a calibration.
    """
    if calibration is None:
        return None
    edges = np.asarray(freq_edges, dtype=np.float64)
    centres = (edges[:-1] + edges[1:]) / 2
    if to_hz is not None:
        centres = np.asarray(to_hz(centres), dtype=np.float64)
    return np.asarray(calibration.offset_db(centres), dtype=np.float32)


def calibrated(db: np.ndarray, offsets: np.ndarray | None) -> np.ndarray:
    """A level image with ``offsets`` (dB, one per row) added; the image itself when None.

    Parameters
    ----------
    db : array
        A dB image shaped (rows, columns).
    offsets : array or None
        :func:`row_offsets`.

    Returns
    -------
    ndarray of float32
        A new array (the input is never changed).

    Examples
    --------
    >>> calibrated(np.zeros((2, 3), np.float32), np.array([1.0, 2.0]))[:, 0]
    array([1., 2.], dtype=float32)
    """
    if offsets is None:
        return db
    return (np.asarray(db, dtype=np.float32)
            + np.asarray(offsets, dtype=np.float32)[:, None]).astype(np.float32, copy=False)
