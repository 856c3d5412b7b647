"""Raven selection tables: tab-separated text, one row per selection and view.

:func:`read_raven` collapses the views of a selection into one annotation;
:func:`write_raven` writes one ``Spectrogram 1`` row per annotation, with numbers
that round-trip exactly.  A Raven box always has frequencies, so time-only
annotations are written as the whole band.

See docs/explanation/rooms/annotations.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, shown
from ..files import atomic_write_text
from .common import (
    Timebase,
    cell_number,
    clean_cell,
    read_text,
    text_lines,
)
from .model import Annotation, stable_uuid

__all__ = ["COLUMNS", "read_raven", "write_raven"]

#: the columns a written table has, in order
COLUMNS = ("Selection", "View", "Channel", "Begin Time (s)", "End Time (s)", "Low Freq (Hz)",
           "High Freq (Hz)", "Annotation", "Comment", "Generator", "UUID")
REQUIRED = ("Selection", "Begin Time (s)", "End Time (s)")
LABEL_COLUMNS = ("Annotation", "Label")
COMMENT_COLUMNS = ("Comment", "Comments", "Notes")
_KNOWN = set(COLUMNS) | set(LABEL_COLUMNS) | set(COMMENT_COLUMNS)


def is_raven_header(line: str) -> bool:
    """True when ``line`` looks like the header row of a Raven selection table."""
    cells = [c.strip() for c in line.split("\t")]
    return "Selection" in cells and "Begin Time (s)" in cells


def _first(columns: dict[str, int], names: Sequence[str]) -> int | None:
    for name in names:
        if name in columns:
            return columns[name]
    return None


def read_raven(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The selections of a Raven table, one annotation per selection and channel.

    Parameters
    ----------
    path : str or Path
        The selection table.
    timebase : Timebase, optional
        With a sample rate, a box covering the whole band reads as time-only.

    Returns
    -------
    list of Annotation
        In the order the selections first appear; channels 0-based.

    Raises
    ------
    InputError
        A required column is missing or a cell is not a number; the message
        names the file, the line and the column.
    RecordingError
        The file is missing, unreadable or too large.
    """
    path = Path(path)
    band = (timebase or Timebase()).band()
    lines = text_lines(read_text(path))
    head = next((i for i, line in enumerate(lines) if line.strip()), None)
    if head is None:
        return []
    header = [c.strip() for c in lines[head].split("\t")]
    columns: dict[str, int] = {}
    for j, name in enumerate(header):
        columns.setdefault(name, j)
    for name in REQUIRED:
        if name not in columns:
            raise InputError(f"{path}: line {head + 1}: the header has no {shown(name)} column "
                             "(not a Raven selection table?)")
    if ("Low Freq (Hz)" in columns) != ("High Freq (Hz)" in columns):
        missing = "Low Freq (Hz)" if "High Freq (Hz)" in columns else "High Freq (Hz)"
        raise InputError(f"{path}: line {head + 1}: the header has no {shown(missing)} column "
                         "(a table gives both frequency columns or neither)")
    label_col = _first(columns, LABEL_COLUMNS)
    comment_col = _first(columns, COMMENT_COLUMNS)

    # (selection, channel) -> (is spectrogram row, annotation); first-seen order kept
    found: dict[tuple[float, int], tuple[bool, Annotation]] = {}
    for n, line in enumerate(lines[head + 1:], start=head + 2):
        if not line.strip():
            continue
        cells = line.split("\t")
        where = f"{path}: line {n}"
        if len(cells) < len(header):
            cells += [""] * (len(header) - len(cells))

        def cell(name: str, row: list[str] = cells) -> str:
            # the row is bound now: this helper belongs to this line only
            return row[columns[name]].strip() if name in columns else ""

        selection = cell_number(cell("Selection"), where, "Selection")
        channel = 0
        if cell("Channel"):
            ch = cell_number(cell("Channel"), where, "Channel")
            if ch < 1 or not ch.is_integer():
                raise InputError(f"{where}: Channel: {shown(cell('Channel'))} must be a whole "
                                 "number >= 1 (Raven counts channels from 1)")
            channel = int(ch) - 1
        begin = cell_number(cell("Begin Time (s)"), where, "Begin Time (s)")
        end = cell_number(cell("End Time (s)"), where, "End Time (s)")
        if end < begin:
            raise InputError(f"{where}: End Time (s) {end:g} is before Begin Time (s) {begin:g}")
        lo = hi = None
        if cell("Low Freq (Hz)") or cell("High Freq (Hz)"):
            lo = cell_number(cell("Low Freq (Hz)"), where, "Low Freq (Hz)")
            hi = cell_number(cell("High Freq (Hz)"), where, "High Freq (Hz)")
            if hi < lo:
                raise InputError(f"{where}: High Freq (Hz) {hi:g} is below Low Freq (Hz) "
                                 f"{lo:g}")
            if band is not None and lo <= band[0] and hi >= band[1]:
                lo = hi = None  # the whole band: what a time-only annotation is written as
        # texts as written: a round trip keeps leading and trailing spaces
        label = cells[label_col] if label_col is not None else ""
        comment = cells[comment_col] if comment_col is not None else ""
        generator = cells[columns["Generator"]] if "Generator" in columns else ""
        extra = {name: cells[j].strip() for j, name in enumerate(header)
                 if name and name not in _KNOWN and columns.get(name) == j}
        uid = cell("UUID") or stable_uuid("raven", selection, channel, begin, end, lo, hi, label)
        try:
            annotation = Annotation(begin, end, lo, hi, label=label, comment=comment, uuid=uid,
                                    generator=generator, channel=channel, extra=extra)
        except InputError as exc:
            raise InputError(f"{where}: {str(exc).removeprefix('Annotation: ')}") from None
        spectrogram = cell("View").lower().startswith("spectrogram")
        key = (selection, channel)
        if key not in found or (spectrogram and not found[key][0]):
            found[key] = (spectrogram, annotation)
    return [a for _, a in found.values()]


def _number(x: float) -> str:
    return repr(float(x))


def write_raven(path: str | Path, annotations: Sequence[Annotation],
                timebase: Timebase | None = None) -> Path:
    """Write a Raven selection table, one ``Spectrogram 1`` row per annotation.

    Rows are numbered in time order; how time-only annotations and the band's
    edges are written is described in docs/explanation/rooms/annotations.md.

    Parameters
    ----------
    path : str or Path
        The table, written atomically.
    annotations : sequence of Annotation
        The selections.
    timebase : Timebase, optional
        Gives the band (0 to Nyquist, or ``fc ± fs/2`` for IQ) that time-only
        annotations are written as and that High Freq is clipped to.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        A time-only annotation without a known sample rate, a box that lies
        above Nyquist, or an item that is not an :class:`Annotation`.
    RecordingError
        The file cannot be written.
    """
    path = Path(path)
    band = (timebase or Timebase()).band()
    rows = ["\t".join(COLUMNS)]
    for a in annotations:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
    ordered = sorted(annotations, key=lambda a: (a.start_s, a.stop_s))
    for i, a in enumerate(ordered, start=1):
        lo, hi = a.freq_low_hz, a.freq_high_hz
        if lo is None or hi is None:
            if band is None:
                raise InputError(f"{path}: annotation {shown(a.label or a.uuid)} has no frequencies "
                                 "and a Raven table needs them; give the recording (or its "
                                 "sample rate) to write it as the whole band")
            lo, hi = band
        elif band is not None:
            if lo > band[1]:
                raise InputError(f"{path}: annotation {shown(a.label or a.uuid)} lies above "
                                 f"Nyquist ({lo:g} Hz > {band[1]:g} Hz)")
            hi = min(hi, band[1])
        cells = [str(i), "Spectrogram 1", str((a.channel or 0) + 1), _number(a.start_s),
                 _number(a.stop_s), _number(lo), _number(hi), clean_cell(a.label),
                 clean_cell(a.comment), clean_cell(a.generator), clean_cell(a.uuid)]
        rows.append("\t".join(cells))
    atomic_write_text(path, "\n".join(rows) + "\n")
    return path
