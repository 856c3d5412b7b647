"""Annotations as CSV: a header row with the model's field names, one row per annotation.

The columns are :data:`~specscope.compute.annotations.model.FIELDS`
(``start_s, stop_s, freq_low_hz, freq_high_hz, label, comment, uuid,
generator, channel, tier``).  Numbers are written in Python's shortest round-trip
form and texts are quoted as the :mod:`csv` module does, so a CSV round trip
is exact, field for field.  An empty frequency, channel or tier cell is ``None``.

Reading needs ``start_s`` and ``stop_s``; missing optional columns take the
model's defaults (a missing uuid one derived from the row); other columns are
kept in :attr:`Annotation.extra` as text and not written back.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, shown
from ..files import atomic_write_text
from .common import Timebase, cell_number, read_text
from .model import FIELDS, Annotation, stable_uuid

__all__ = ["read_csv", "write_csv"]

REQUIRED = ("start_s", "stop_s")


def is_csv_header(line: str) -> bool:
    """True when ``line`` looks like the header of an annotation CSV."""
    cells = [c.strip().strip('"') for c in line.split(",")]
    return all(name in cells for name in REQUIRED)


def read_csv(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The annotations of a CSV table written by :func:`write_csv` (or by hand).

    Parameters
    ----------
    path : str or Path
        The CSV file.
    timebase : Timebase, optional
        Not needed by this format; accepted like the other readers.

    Returns
    -------
    list of Annotation
        One per data row, in file order.

    Raises
    ------
    InputError
        A required column is missing, or a cell is not a number, or the box is
        invalid; the message names the file, the line and the column.
    RecordingError
        The file is missing, unreadable or too large.
    """
    path = Path(path)
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    header_line = 0
    out = []
    try:
        for row in reader:
            n = reader.line_num
            if header is None:
                if not any(c.strip() for c in row):
                    continue
                header = [c.strip() for c in row]
                header_line = n
                for name in REQUIRED:
                    if name not in header:
                        raise InputError(f"{path}: line {n}: the header has no {shown(name)} column "
                                         f"(expected {', '.join(FIELDS)})")
                continue
            if not any(c.strip() for c in row):
                continue
            where = f"{path}: line {n}"
            if len(row) > len(header):
                raise InputError(f"{where}: {len(row)} cells, the header on line "
                                 f"{header_line} names {len(header)}")
            cells = dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))
            out.append(_annotation(cells, where, len(out)))
    except csv.Error as exc:
        raise InputError(f"{path}: line {reader.line_num}: {exc}") from None
    return out


def _annotation(cells: dict[str, str], where: str, index: int) -> Annotation:
    def number(name: str) -> float | None:
        text = cells.get(name, "").strip()
        return None if not text else cell_number(text, where, name)

    start = cell_number(cells["start_s"], where, "start_s")
    stop = cell_number(cells["stop_s"], where, "stop_s")
    lo, hi = number("freq_low_hz"), number("freq_high_hz")
    channel = number("channel")
    if channel is not None and (not channel.is_integer() or channel < 0):
        raise InputError(f"{where}: channel: {shown(cells['channel'])} must be a whole number >= 0")
    label = cells.get("label", "")
    uid = cells.get("uuid", "").strip() or stable_uuid("csv", index, start, stop, lo, hi, label)
    extra = {k: v for k, v in cells.items() if k not in FIELDS}
    try:
        return Annotation(start, stop, lo, hi, label=label, comment=cells.get("comment", ""),
                          uuid=uid, generator=cells.get("generator", "person"),
                          channel=None if channel is None else int(channel),
                          tier=cells.get("tier", "") or None, extra=extra)
    except InputError as exc:
        raise InputError(f"{where}: {str(exc).removeprefix('Annotation: ')}") from None


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_csv(path: str | Path, annotations: Sequence[Annotation],
              timebase: Timebase | None = None) -> Path:
    """Write annotations as CSV, in the order given (``timebase`` is not needed).

    Parameters
    ----------
    path : str or Path
        The CSV file, written atomically.
    annotations : sequence of Annotation
        The rows.
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
    buf = io.StringIO(newline="")
    # CRLF as RFC 4180 has it; it also makes the writer quote texts holding a lone CR
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(FIELDS)
    for a in annotations:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
        writer.writerow([_cell(getattr(a, name)) for name in FIELDS])
    atomic_write_text(path, buf.getvalue())
    return path
