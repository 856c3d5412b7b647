"""Frequency scales of a display: which exist, and which a recording can be shown on.

A log or mel frequency axis spaces the positive frequencies of a one-sided
spectrum: a complex (IQ) recording has negative frequencies too, and stacked
channels share the axis as linear bands.  :func:`freq_scale_problem` says so in
one wording for every front-end (the desktop window, the notebook explorer and
the tile engine); :func:`check_freq_scale` raises it as a
:class:`FrequencyScaleError`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..spectral import hz_to_mel, mel_to_hz
from ..types import FreqScale, choices

__all__ = ["FREQ_SCALES", "FrequencyScaleError", "check_freq_scale", "freq_scale_problem",
           "rescale_rows", "usable_freq_scale"]

#: the frequency axes a display offers: rows uniform in Hz, in log10(Hz) or in mel
FREQ_SCALES = choices(FreqScale)


class FrequencyScaleError(InputError):
    """A frequency scale that does not exist, or that this recording cannot be shown on.

    Parameters
    ----------
    message : str
        The message, as :func:`freq_scale_problem` words it.
    scale : str
        The scale asked for (kept as ``scale``).
    reason : {"unknown", "complex", "stacked"}
        Why it cannot be used (kept as ``reason``).
    """

    def __init__(self, message: str, scale: str, reason: str) -> None:
        super().__init__(message)
        self.scale = scale
        self.reason = reason


def _reason(scale: str, two_sided: bool, stacked: bool) -> str:
    if scale not in FREQ_SCALES:
        return "unknown"
    if scale == "linear":
        return ""
    if two_sided:
        return "complex"
    return "stacked" if stacked else ""


def freq_scale_problem(scale: str, *, two_sided: bool = False, stacked: bool = False) -> str:
    """Why ``scale`` cannot be the frequency axis ("" when it can).

    Parameters
    ----------
    scale : str
        One of :data:`FREQ_SCALES` (anything else is named as unknown).
    two_sided : bool
        The recording is complex (IQ): its spectrum has negative frequencies.
    stacked : bool
        Every channel is shown, stacked as linear bands on one axis.

    Returns
    -------
    str
        The reason in one sentence, or ``""`` when the scale can be used.

    Examples
    --------
    >>> freq_scale_problem("log")
    ''
    >>> freq_scale_problem("log", two_sided=True)
    'log and mel frequency axes need a real recording and one channel; this one is complex (IQ)'
    """
    reason = _reason(scale, two_sided, stacked)
    if reason == "unknown":
        return f"freq_scale={scale!r} must be one of {', '.join(FREQ_SCALES)}"
    if not reason:
        return ""
    why = "this one is complex (IQ)" if reason == "complex" else "channels are stacked"
    return f"log and mel frequency axes need a real recording and one channel; {why}"


def check_freq_scale(scale: str, *, two_sided: bool = False, stacked: bool = False) -> str:
    """``scale`` when it can be the frequency axis (see :func:`freq_scale_problem`).

    Parameters
    ----------
    scale : str
        One of :data:`FREQ_SCALES`.
    two_sided : bool
        The recording is complex (IQ).
    stacked : bool
        Every channel is shown, stacked on one axis.

    Returns
    -------
    str
        ``scale``.

    Raises
    ------
    FrequencyScaleError
        With the message of :func:`freq_scale_problem`.
    """
    problem = freq_scale_problem(scale, two_sided=two_sided, stacked=stacked)
    if problem:
        raise FrequencyScaleError(problem, scale, _reason(scale, two_sided, stacked))
    return scale


def usable_freq_scale(scale: str, *, two_sided: bool = False, stacked: bool = False) -> str:
    """``scale`` when it can be the frequency axis here, else ``"linear"`` (always can).

    Parameters
    ----------
    scale : str
        The scale wanted, one of :data:`FREQ_SCALES`.
    two_sided : bool
        The recording is complex (IQ).
    stacked : bool
        Every channel is shown, stacked on one axis.

    Returns
    -------
    str
        The scale the view takes.

    Examples
    --------
    >>> usable_freq_scale("log", two_sided=True), usable_freq_scale("mel")
    ('linear', 'mel')
    """
    return scale if not _reason(scale, two_sided, stacked) else "linear"


def rescale_rows(image: np.ndarray, f: np.ndarray, df: float, scale: str, n_rows: int,
                 reduce: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A linear-frequency image resampled onto rows spaced on a log or mel scale.

    Each row is the mean (or, with ``reduce="max"``, the maximum) of the bins
    whose centres fall in it; a row holding no bin centre repeats the nearest bin.
    A log axis starts at ``df / 2``, above the DC bin; a mel axis at 0 Hz.

    Parameters
    ----------
    image : numpy.ndarray
        Power shaped (bins, columns), rows at the bin centres ``f``.
    f : numpy.ndarray
        Bin centres in Hz, ascending, ``df`` apart.
    df : float
        Bin width in Hz.
    scale : {"log", "mel"}
        The frequency axis of the result.
    n_rows : int
        Rows of the result.
    reduce : {"mean", "max"}
        How a row aggregates its bins.

    Returns
    -------
    image : numpy.ndarray
        float32, shaped (n_rows, columns).
    centres : numpy.ndarray
        Row centres in Hz.
    edges : numpy.ndarray
        ``n_rows + 1`` row edges in Hz.
    """
    fmax = f[-1] + df / 2
    if scale == "log":  # from the first bin above DC
        edges = np.geomspace(df / 2, fmax, n_rows + 1)
        centres = np.sqrt(edges[:-1] * edges[1:])
    else:
        m = np.linspace(hz_to_mel(0.0), hz_to_mel(fmax), n_rows + 1)
        edges = mel_to_hz(m)
        centres = mel_to_hz((m[:-1] + m[1:]) / 2)
    i0 = np.searchsorted(f, edges[:-1], side="left")
    i1 = np.searchsorted(f, edges[1:], side="left")
    nearest = np.clip(np.rint((centres - f[0]) / df).astype(np.int64), 0, f.size - 1)
    empty = i1 <= i0
    i0 = np.where(empty, nearest, i0)
    i1 = np.where(empty, nearest + 1, i1)
    if reduce == "max":
        out = np.stack([image[s:e].max(axis=0) for s, e in zip(i0, i1)])
    else:
        cum = np.concatenate([np.zeros((1, image.shape[1])),
                              np.cumsum(image, axis=0, dtype=np.float64)])
        out = (cum[i1] - cum[i0]) / (i1 - i0)[:, None]
    return np.ascontiguousarray(out.astype(np.float32)), centres, edges
