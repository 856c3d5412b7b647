"""Times of a recording as people write and read them: one rule for every front-end.

:func:`parse_time` reads what a person types (the export dialog, the command
line's seconds options): plain seconds ``12.5``, ``12.5 s``, milliseconds
``250 ms``, ``m:ss`` (``1:05``) and ``h:mm:ss`` (``0:39:04.25``).

:func:`format_time` writes a time the way the time axis labels it: ``h:mm:ss``
(with as many decimals as the precision asks: ``0:39:04.25``) once the time is a
minute or more into the recording, seconds with the unit (``12.500 s``) below
that, milliseconds (``20 ms``) within the first second when the precision is
finer than a second (:func:`time_style`).  File information, the cursor readout
and the export dialog use the same rule, so a duration of 2000 s reads
``0:33:20.000`` everywhere, as the axis writes ``0:33:20``.

:func:`time_to_sample` turns such a time into a sample number, the one place
where seconds become samples for a command: a time that is not finite, negative,
past the end of the recording or beyond any sample count is refused, naming the
parameter.
"""

from __future__ import annotations

import math
import re

from .errors import InputError, shown

__all__ = ["CLOCK_FROM_S", "MAX_DECIMALS", "MAX_SAMPLE", "TIME_FORMS", "TimeFormatError",
           "format_time", "parse_time", "time_style", "time_to_sample"]

#: times this far (s) or further into a recording read as a clock
CLOCK_FROM_S = 60.0
#: the most decimals a time shows (microseconds)
MAX_DECIMALS = 6
#: the largest sample number a time may stand for (sample positions are int64)
MAX_SAMPLE = 1 << 62
#: what :func:`parse_time` accepts, as its errors say it
TIME_FORMS = "seconds (12.5), milliseconds (250 ms), m:ss (1:05) or h:mm:ss (0:39:04.25)"

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?"
_PLAIN = re.compile(rf"(?P<value>[+-]?{_NUMBER})\s*(?P<unit>ms|s)?")
_CLOCK = re.compile(r"(?P<sign>[+-]?)(?:(?P<h>\d+):(?P<m2>\d{1,2})|(?P<m>\d+)):"
                    r"(?P<s>\d{1,2}(?:\.\d*)?)")


class TimeFormatError(InputError):
    """Text that is no time.

    Parameters
    ----------
    message : str
        The one-line message.
    text : str
        What was given, kept as the ``text`` attribute.
    """

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


def parse_time(text: str | float, name: str | None = None) -> float:
    """A time typed by a person, in seconds (see the module documentation).

    Parameters
    ----------
    text : str or float
        ``"12.5"``, ``"12.5 s"``, ``"250 ms"``, ``"1:05"``, ``"0:39:04.25"``; a
        number is taken as seconds.
    name : str, optional
        What the time is for (``start``), named at the front of an error.

    Returns
    -------
    float
        The time in seconds (negative when written with a ``-``).

    Raises
    ------
    TimeFormatError
        The text is no finite time; the message lists the forms accepted
        (:data:`TIME_FORMS`).  Minutes and seconds of a clock are below 60.

    Examples
    --------
    >>> parse_time("1:05"), parse_time("250 ms"), parse_time("0:39:04.25")
    (65.0, 0.25, 2344.25)
    """
    prefix = f"{name}=" if name else ""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
        if not math.isfinite(value):
            raise TimeFormatError(f"{prefix}{text!r} is not a finite time", str(text))
        return value
    if not isinstance(text, str):
        raise TimeFormatError(f"{prefix}{shown(text)} is not a time: write {TIME_FORMS}",
                              shown(text))
    t = text.strip().lower()
    value = _plain(t)
    if value is None:
        value = _clock(t)
    if value is None:
        raise TimeFormatError(f"{prefix}{shown(text)} is not a time: write {TIME_FORMS}", text)
    if not math.isfinite(value):
        raise TimeFormatError(f"{prefix}{shown(text)} is not a finite time", text)
    return value


def time_to_sample(seconds: str | float, sample_rate: float, name: str, *,
                   n_samples: int | None = None) -> int:
    """The sample at ``seconds`` from the start of a recording (rounded), within bounds.

    Parameters
    ----------
    seconds : str or float
        The time, as :func:`parse_time` reads it.
    sample_rate : float
        Samples per second (> 0).
    name : str
        The parameter the time was given as (``start``), named in errors.
    n_samples : int, optional
        The recording's length in samples: a time past its end is refused.

    Returns
    -------
    int
        ``round(seconds * sample_rate)``, in ``[0, n_samples]`` (or
        ``[0, MAX_SAMPLE]`` without ``n_samples``).

    Raises
    ------
    InputError
        The time is not a finite number of seconds, is negative, lies past the end
        of the recording, or stands for more than :data:`MAX_SAMPLE` samples.

    Examples
    --------
    >>> time_to_sample("1.5", 48000.0, "start")
    72000
    >>> time_to_sample(30, 48000.0, "stop", n_samples=960000)
    Traceback (most recent call last):
    ...
    specscope.compute.errors.InputError: stop=30 s is past the end of the recording (20.000 s)
    """
    value = parse_time(seconds, name)
    if value < 0:
        raise InputError(f"{name}={value:g} s must be >= 0 s")
    rate = float(sample_rate)
    if not (math.isfinite(rate) and rate > 0):
        raise InputError(f"sample_rate={shown(sample_rate)} must be a finite number > 0")
    sample = value * rate
    if n_samples is not None and not sample < int(n_samples) + 0.5:
        raise InputError(f"{name}={value:g} s is past the end of the recording "
                         f"({format_time(int(n_samples) / rate)})")
    if not sample <= MAX_SAMPLE:
        raise InputError(f"{name}={value:g} s is beyond any recording at {rate:g} Hz "
                         f"(more than {MAX_SAMPLE} samples)")
    return round(sample)


def _plain(t: str) -> float | None:
    m = _PLAIN.fullmatch(t)
    if m is None:
        return None
    value = float(m["value"])
    return value / 1000.0 if m["unit"] == "ms" else value


def _clock(t: str) -> float | None:
    m = _CLOCK.fullmatch(t)
    if m is None:
        return None
    s = float(m["s"])
    if m["h"] is not None:
        minutes = int(m["m2"])
        if minutes >= 60:
            return None
        whole = int(m["h"]) * 3600.0 + minutes * 60.0
    else:
        whole = int(m["m"]) * 60.0
    if s >= 60.0:
        return None
    value = whole + s
    return -value if m["sign"] == "-" else value


def _decimals(spacing: float) -> int:
    """Decimals that tell times ``spacing`` apart (0 for whole units)."""
    if not spacing > 0 or spacing >= 1:
        return 0
    return min(MAX_DECIMALS, math.ceil(-math.log10(spacing) - 1e-9))


def time_style(far: float, spacing: float) -> str:
    """How times as far as ``far`` s into a recording, ``spacing`` s apart, are written.

    ``"clock"`` from :data:`CLOCK_FROM_S` on, ``"ms"`` within the first second when
    ``spacing`` is below a second, else ``"s"``.

    Parameters
    ----------
    far : float
        The largest time written, in seconds (its sign is ignored).
    spacing : float
        The precision, in seconds.

    Returns
    -------
    str
        ``"clock"``, ``"ms"`` or ``"s"``.

    Examples
    --------
    >>> time_style(2000.0, 1.0), time_style(0.5, 1e-3), time_style(5.0, 1e-3)
    ('clock', 'ms', 's')
    """
    far = abs(far)
    if far >= CLOCK_FROM_S:
        return "clock"
    if far < 1.0 and spacing < 1.0:
        return "ms"
    return "s"


def format_time(seconds: float, spacing: float = 1e-3, style: str | None = None) -> str:
    """A time as the time axis writes it.

    Parameters
    ----------
    seconds : float
        The time from the start of the recording (or a duration).
    spacing : float
        The precision (s): how many decimals are shown (1e-3: milliseconds).
    style : {"clock", "s", "ms"}, optional
        ``h:mm:ss(.fff)``, seconds with the unit, or milliseconds with the unit;
        by default :func:`time_style` of ``seconds``.

    Returns
    -------
    str
        The time as text.

    Raises
    ------
    InputError
        ``style`` is not one of the three.

    Examples
    --------
    >>> format_time(2000.0), format_time(12.5), format_time(0.02)
    ('0:33:20.000', '12.500 s', '20 ms')
    """
    if style is None:
        style = time_style(seconds, spacing)
    if style == "ms":
        return f"{seconds * 1000.0:.{_decimals(spacing * 1000.0)}f} ms"
    places = _decimals(spacing)
    if style == "s":
        return f"{seconds:.{places}f} s"
    if style != "clock":
        raise InputError(f"style={style!r} must be one of clock, s, ms")
    sign = "-" if seconds < 0 else ""
    # round once at the shown precision, so 59.9996 s becomes 0:01:00.000, not 0:00:60.000
    ticks = round(abs(seconds) * 10 ** places)
    whole, frac = divmod(ticks, 10 ** places)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    text = f"{sign}{h}:{m:02d}:{s:02d}"
    return text + (f".{frac:0{places}d}" if places else "")
