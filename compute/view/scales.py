"""Frequency scales of a display: which exist, and which a recording can be shown on.

A log or mel frequency axis spaces the positive frequencies of a one-sided
spectrum: a complex (IQ) recording has negative frequencies too, and stacked
channels share the axis as linear bands.  :func:`freq_scale_problem` says so in
one wording for every front-end (the desktop window, the notebook explorer and
the tile engine); :func:`check_freq_scale` raises it as a
:class:`FrequencyScaleError`.
"""

from __future__ import annotations

from ..errors import InputError

__all__ = ["FREQ_SCALES", "FrequencyScaleError", "check_freq_scale", "freq_scale_problem"]

#: the frequency axes a display offers: rows uniform in Hz, in log10(Hz) or in mel
FREQ_SCALES = ("linear", "log", "mel")


class FrequencyScaleError(InputError):
    """A frequency scale that does not exist, or that this recording cannot be shown on.

    ``scale`` is the scale asked for; ``reason`` is ``"unknown"``, ``"complex"`` or
    ``"stacked"``.
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

    Raises
    ------
    FrequencyScaleError
        With the message of :func:`freq_scale_problem`.
    """
    problem = freq_scale_problem(scale, two_sided=two_sided, stacked=stacked)
    if problem:
        raise FrequencyScaleError(problem, scale, _reason(scale, two_sided, stacked))
    return scale
