"""Frequencies as people read them: one rule for every front-end.

:func:`format_frequency` writes a frequency in Hz, kHz, MHz or GHz, whichever
keeps the number between 1 and 1000 (``850 Hz``, ``1.23 kHz``, ``100.053 MHz``),
never in exponent notation.  Given a *resolution* (the step that still means
something: a screen pixel, a frequency bin) it shows just the decimals that tell
two frequencies that far apart from each other; without one it shows the value
as exactly as it is known (up to 12 significant digits), so
:func:`specscope.compute.params.parse_number` reads it back.  The cursor readout,
the selection's measurements, playback's messages and the file information
follow it, so a capture centred at 100 MHz reads ``100.053 MHz`` everywhere.
"""

from __future__ import annotations

import math

__all__ = ["FREQUENCY_UNITS", "MAX_SIGNIFICANT", "format_frequency", "frequency_decimals",
           "frequency_unit"]

#: the units, smallest first: (name, Hz per unit)
FREQUENCY_UNITS = (("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9))
#: the most significant digits a frequency shows (what a float64 holds with room to spare)
MAX_SIGNIFICANT = 12


def frequency_unit(hz: float) -> tuple[str, float]:
    """The unit that writes ``hz`` with 1 to 3 digits before the point.

    Parameters
    ----------
    hz : float
        The frequency (Hz); its sign does not matter.

    Returns
    -------
    tuple of (str, float)
        The unit's name and its size in Hz (Hz below 1 kHz, GHz from 1 GHz up).

    Examples
    --------
    >>> frequency_unit(850.0), frequency_unit(-1.2e5), frequency_unit(2.4e9)
    (('Hz', 1.0), ('kHz', 1000.0), ('GHz', 1000000000.0))
    """
    size = abs(hz) if math.isfinite(hz) else 0.0
    chosen = FREQUENCY_UNITS[0]
    for unit in FREQUENCY_UNITS:
        if size >= unit[1]:
            chosen = unit
    return chosen


def frequency_decimals(resolution: float, scale: float = 1.0) -> int:
    """How many decimals, in a unit of ``scale`` Hz, tell frequencies ``resolution`` apart.

    Parameters
    ----------
    resolution : float
        The step that still means something (Hz), > 0.
    scale : float, optional
        The unit's size in Hz (1000 for kHz).

    Returns
    -------
    int
        The fewest decimals whose last digit steps by no more than ``resolution``
        (0 when whole units are fine enough).

    Examples
    --------
    >>> frequency_decimals(46.875, 1e3), frequency_decimals(0.01), frequency_decimals(200.0)
    (2, 2, 0)
    """
    if not (resolution > 0 and math.isfinite(resolution)):
        return 0
    return max(0, math.ceil(-math.log10(resolution / scale) - 1e-9))


def format_frequency(hz: float, resolution: float | None = None, *, sign: bool = False) -> str:
    """A frequency with its unit, as every front-end writes it.

    Parameters
    ----------
    hz : float
        The frequency (Hz).
    resolution : float, optional
        The step that still means something (Hz): a pixel of the view, a frequency
        bin.  The number shows the decimals that tell frequencies this far apart;
        None: the value as exactly as it is known (up to :data:`MAX_SIGNIFICANT`
        significant digits, trailing zeros left out).
    sign : bool, optional
        Write a ``+`` before a positive value (a difference).

    Returns
    -------
    str
        The number and unit (``"1.23 kHz"``); ``"—"`` for NaN or an infinity.

    Examples
    --------
    >>> format_frequency(100.053e6, 2000.0)
    '100.053 MHz'
    >>> format_frequency(99989923.9)
    '99.9899239 MHz'
    >>> format_frequency(850.3, 46.875), format_frequency(500.0, 50.0, sign=True)
    ('850 Hz', '+500 Hz')
    """
    if not math.isfinite(hz):
        return "—"
    name, scale = frequency_unit(hz)
    text = _number(hz, scale, resolution)
    i = next(k for k, (n, _) in enumerate(FREQUENCY_UNITS) if n == name)
    if abs(float(text)) >= 1000 and i + 1 < len(FREQUENCY_UNITS):
        name, scale = FREQUENCY_UNITS[i + 1]  # rounded up into the next unit (999.96 Hz)
        text = _number(hz, scale, resolution)
    if float(text) == 0:
        text = text.lstrip("-")
    elif sign and not text.startswith("-"):
        text = "+" + text
    return f"{text} {name}"


def _number(hz: float, scale: float, resolution: float | None) -> str:
    """``hz`` in units of ``scale``, with the decimals ``resolution`` asks for."""
    value = hz / scale
    whole = len(str(int(abs(value)))) if abs(value) >= 1 else 1
    most = max(0, MAX_SIGNIFICANT - whole)
    if resolution is None:
        text = f"{value:.{most}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.{min(frequency_decimals(resolution, scale), most)}f}"
