"""Audacity label tracks exported as text (File > Export > Export Labels).

Each label is one line ``start<TAB>end<TAB>label`` (seconds), optionally
followed by a spectral-selection line: a single backslash, a tab, the low
frequency, a tab and the high frequency (Hz).  Audacity writes the numbers with
6 decimals and marks an undefined frequency with ``-1``.

Reading: a label without a spectral line, or with both frequencies ``-1``
(or missing), is time-only.  With only the low edge undefined it starts at
0 Hz; with only the high edge undefined it ends at Nyquist when the sample
rate is known (an error otherwise).  A comma as decimal separator is accepted.
The format carries no comment, uuid, generator or channel: annotations read
get a uuid derived from their position and content, generator ``""`` and
channel ``None``.

Writing uses 6 decimals, like Audacity, so a round trip keeps times and
frequencies to within 0.5e-6 s and 0.5e-6 Hz (stated tolerance: 1e-6, or the
float64 resolution for values beyond about 1e9).  Tabs and line breaks in a
label become spaces.  A real frequency of exactly -1 Hz (possible for IQ at
baseband) cannot be told from "undefined" and reads back as no frequency.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..files import atomic_write_text
from .common import (
    Timebase,
    cell_number,
    clean_cell,
    read_text,
    text_lines,
)
from .model import Annotation, stable_uuid

__all__ = ["UNDEFINED", "is_audacity_line", "read_audacity", "write_audacity"]

#: Audacity's value of an undefined frequency edge
UNDEFINED = -1.0
_LABEL_LINE = re.compile(r"^\s*[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?\t"
                         r"\s*[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?(\t|$)")


def is_audacity_line(line: str) -> bool:
    """True when ``line`` looks like the first line of an Audacity label file.

    Parameters
    ----------
    line : str
        A line of text.

    Returns
    -------
    bool
        Whether it starts with two numbers separated by a tab.

    Examples
    --------
    >>> is_audacity_line("1.5\\t2.0\\tbird"), is_audacity_line("start,end,label")
    (True, False)
    """
    return bool(_LABEL_LINE.match(line))


def _num(text: str, where: str, name: str) -> float:
    return cell_number(text.replace(",", "."), where, name)


def read_audacity(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The labels of an Audacity label file.

    Parameters
    ----------
    path : str or Path
        The label file.
    timebase : Timebase, optional
        Gives Nyquist for a spectral line whose high edge is undefined.

    Returns
    -------
    list of Annotation
        One per label, in file order, times in seconds and frequencies in Hz.

    Raises
    ------
    InputError
        A line is not a label or spectral line, a number does not parse, or an
        end comes before its start; the message names the file and the line.
    RecordingError
        The file is missing, unreadable or too large.
    """
    path = Path(path)
    band = (timebase or Timebase()).band()
    # [start, end, label, lo, hi, line number]
    items: list[list] = []
    for n, line in enumerate(text_lines(read_text(path)), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {n}"
        cells = line.split("\t")
        if cells[0].strip() == "\\":
            if not items or items[-1][3] is not None:
                raise InputError(f"{where}: a spectral-selection line (\\) must follow a "
                                 "label line")
            lo = _num(cells[1], where, "low frequency") if len(cells) > 1 and cells[1].strip() \
                else UNDEFINED
            hi = _num(cells[2], where, "high frequency") if len(cells) > 2 and cells[2].strip() \
                else UNDEFINED
            items[-1][3:6] = [lo, hi, n]  # errors about the band name this line
            continue
        if len(cells) < 2:
            raise InputError(f"{where}: expected start<TAB>end<TAB>label, got {line[:40]!r}")
        start = _num(cells[0], where, "start")
        end = _num(cells[1], where, "end")
        if start < 0:
            raise InputError(f"{where}: start {start:g} s must be >= 0")
        if end < start:
            raise InputError(f"{where}: end {end:g} s is before start {start:g} s")
        items.append([start, end, "\t".join(cells[2:]), None, None, n])
    out = []
    for i, (start, end, label, lo, hi, n) in enumerate(items):
        where = f"{path}: line {n}"
        if lo == UNDEFINED and hi == UNDEFINED:
            lo = hi = None
        elif lo == UNDEFINED:
            lo = 0.0 if band is None else band[0]
        elif hi == UNDEFINED:
            if band is None:
                raise InputError(f"{where}: the high frequency is undefined (-1) and Nyquist "
                                 "is unknown; give the recording")
            hi = band[1]
        if lo is not None and hi is not None and hi < lo:
            raise InputError(f"{where}: high frequency {hi:g} Hz is below low frequency "
                             f"{lo:g} Hz")
        uid = stable_uuid("audacity", i, start, end, lo, hi, label)
        out.append(Annotation(start, end, lo, hi, label=label, uuid=uid, generator=""))
    return out


def write_audacity(path: str | Path, annotations: Sequence[Annotation],
                   timebase: Timebase | None = None) -> Path:
    """Write an Audacity label file (see the module notes), in time order.

    Parameters
    ----------
    path : str or Path
        The label file, written atomically.
    annotations : sequence of Annotation
        The labels; those with a frequency range get a spectral-selection line.
    timebase : Timebase, optional
        Not needed by this format; accepted like the other writers.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        An item is not an :class:`Annotation`.
    RecordingError
        The file cannot be written.
    """
    path = Path(path)
    for a in annotations:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
    lines = []
    for a in sorted(annotations, key=lambda a: (a.start_s, a.stop_s)):
        lines.append(f"{a.start_s:.6f}\t{a.stop_s:.6f}\t{clean_cell(a.label)}")
        if a.freq_low_hz is not None:
            lines.append(f"\\\t{a.freq_low_hz:.6f}\t{a.freq_high_hz:.6f}")
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return path
