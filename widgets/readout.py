"""The readout of the cursor: time, frequency and level, the Δ to a reference, and the
width its label keeps."""

from __future__ import annotations

import math

from PyQt6.QtWidgets import QLabel
from specscope.compute.deployment.timeline import offset_text
from specscope.compute.freqfmt import format_frequency
from specscope.compute.timefmt import format_time

__all__ = ["READOUT_REFERENCE", "READOUT_TEMPLATE", "readout", "reserve_readout"]


def readout(t: float, f: float, level: float, *, channel: int | None = None,
            visible: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
            timeline=None, reference: tuple[float, float, float] | None = None,
            hz_per_pixel: float = math.nan, seconds_per_pixel: float = 0.0,
            unit: str = "dB") -> str:
    """The readout of a point at ``t`` s, ``f`` Hz with ``level`` dB.

    Times read as the time axis does: h:mm:ss.fff where the view reaches a minute or
    more from the start, else seconds; on a timeline, the date and time and the file
    under the point with its offset.  Frequencies as
    :func:`~specscope.compute.freqfmt.format_frequency` writes them, with the decimals
    one pixel tells apart.  Δt in ms up to 10 s, in s above; two points less than a
    pixel apart in time have no 1/Δt.

    Parameters
    ----------
    t, f, level : float
        The point (s, Hz) and its level in dB (NaN: none).
    channel : int, optional
        The channel under the point, for stacked channels.
    visible : tuple of float
        The view's ``(t0, t1, f0, f1)``.
    timeline : Timeline, optional
        Absolute times of the axis (a deployment, a file's start time).
    reference : tuple of float, optional
        The reference point ``(t, f, level)``.
    hz_per_pixel, seconds_per_pixel : float
        What one screen pixel spans.
    unit : str
        The level's unit (``"dB re 1 µPa²/Hz"`` when calibrated); a difference of
        levels stays in dB.

    Returns
    -------
    str
        The readout on one line.

    Examples
    --------
    >>> readout(1.5, 1000.0, -20.0, hz_per_pixel=10.0)
    't = 1.5000 s  f = 1.00 kHz  -20.0 dB'
    >>> readout(1.5, 1000.0, 62.0, hz_per_pixel=10.0, unit="dB re 1 µPa²/Hz")
    't = 1.5000 s  f = 1.00 kHz  62.0 dB re 1 µPa²/Hz'
    """
    lvl = "" if math.isnan(level) else f"  {level:.1f} {unit}"
    ch = f"ch {channel}  " if channel is not None else ""
    t0, t1 = visible[0], visible[1]
    when = format_time(t, 1e-3, "clock") if max(abs(t0), abs(t1)) >= 60.0 else f"{t:.4f} s"
    if timeline is not None:  # the time, and the file under the point with the offset
        when = timeline.format(timeline.to_time(t))
        at = timeline.file_at(t)
        if at is not None:
            when += f"  {at[0]} {offset_text(at[1])}"
    text = f"{ch}t = {when}  f = {format_frequency(f, hz_per_pixel)}{lvl}"
    if reference is not None:
        dt, df = t - reference[0], f - reference[1]
        dl = level - reference[2]
        span = f"{dt:+.3f} s" if abs(dt) > 10.0 else f"{dt * 1000:+.1f} ms"
        text += f"  |  Δt = {span}  Δf = {format_frequency(df, hz_per_pixel, sign=True)}"
        if not math.isnan(dl):
            text += f"  ΔL = {dl:+.1f} dB"
        if abs(dt) >= seconds_per_pixel > 0:  # a pixel or more apart: 1/Δt means something
            text += f"  (1/Δt = {format_frequency(1 / abs(dt), seconds_per_pixel / dt ** 2)})"
    return text


#: the longest readout of the cursor alone, and what a reference cursor adds to it (an IQ
#: capture's frequencies to the Hz a pixel tells at a deep zoom: ``-100.053000 MHz``)
READOUT_TEMPLATE = "ch 00  t = 00:00:00.000  f = -000.000000 MHz  -000.0 dB"
READOUT_REFERENCE = ("  |  Δt = -0000.000 s  Δf = -000.000000 MHz  ΔL = -000.0 dB"
                     "  (1/Δt = 0.0001234 Hz)")


def reserve_readout(label: QLabel, reference: bool) -> None:
    """Keep ``label`` as wide as the longest readout of its kind (the cursor alone, or
    with the Δ to a reference): never cut, never jumping with the text."""
    text = READOUT_TEMPLATE + (READOUT_REFERENCE if reference else "")
    width = label.fontMetrics().horizontalAdvance(text) + 8
    if label.minimumWidth() != width:
        label.setMinimumWidth(width)
