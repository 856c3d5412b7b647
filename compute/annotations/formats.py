"""Reading and writing annotation files: one entry point, the format found from the file.

:data:`FORMATS` names the formats (``sigmf``, ``raven``, ``audacity``, ``csv``);
:func:`read_annotations` and :func:`write_annotations` pick one from the
``format`` argument, else from the file name, else (reading) from the content:

========== ==================================== =====================================
format     file names                           content
========== ==================================== =====================================
sigmf      ``.sigmf-meta`` (``.sigmf-data``)    a JSON object
raven      ``.selections.txt``, ``.tsv``        a header with ``Selection`` and
                                                ``Begin Time (s)``
audacity   ``.txt`` (``.labels.txt``)           ``start<TAB>end...`` lines
csv        ``.csv``                             a header with ``start_s,stop_s``
========== ==================================== =====================================

A ``.txt`` file is read as Raven when its first line is a Raven header, else as
Audacity labels.  Each format's module documents what it carries and how exact
its round trip is.  :func:`annotations_of_recording` turns the regions a
reader found in a recording (:attr:`Recording.annotations`) into annotations.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError, RecordingError
from .audacity import is_audacity_line, read_audacity, write_audacity
from .common import Timebase, read_head
from .csv_table import is_csv_header, read_csv, write_csv
from .model import Annotation, stable_uuid
from .raven import is_raven_header, read_raven, write_raven
from .sigmf_meta import meta_path, read_sigmf, write_sigmf

__all__ = ["FORMATS", "AnnotationFormat", "annotations_of_recording", "detect_format",
           "read_annotations", "write_annotations"]


@dataclass(frozen=True)
class AnnotationFormat:
    """An annotation file format: its name, file name endings, reader and writer."""

    name: str
    description: str
    suffixes: tuple[str, ...]
    read: Callable[[Path, Timebase], list[Annotation]] = field(repr=False)
    write: Callable[[Path, Sequence[Annotation], Timebase], Path] = field(repr=False)


#: the annotation formats by name
FORMATS: MappingProxyType[str, AnnotationFormat] = MappingProxyType({
    "sigmf": AnnotationFormat("sigmf", "SigMF metadata (the annotations array)",
                              (".sigmf-meta", ".sigmf-data"), read_sigmf, write_sigmf),
    "raven": AnnotationFormat("raven", "Raven selection table (tab-separated)",
                              (".selections.txt", ".tsv"), read_raven, write_raven),
    "audacity": AnnotationFormat("audacity", "Audacity label track text",
                                 (".labels.txt", ".txt"), read_audacity, write_audacity),
    "csv": AnnotationFormat("csv", "CSV with the model's field names", (".csv",),
                            read_csv, write_csv),
})


def _check_name(format: str) -> str:
    name = str(format).lower()
    if name not in FORMATS:
        raise InputError(f"format={format!r} is not an annotation format; expected one of: "
                         f"{', '.join(FORMATS)}")
    return name


def _by_suffix(path: Path) -> str | None:
    lower = path.name.lower()
    # longest ending first: ".selections.txt" before ".txt"
    pairs = sorted(((s, f.name) for f in FORMATS.values() for s in f.suffixes),
                   key=lambda p: -len(p[0]))
    for suffix, name in pairs:
        if lower.endswith(suffix):
            return name
    return None


def _by_content(path: Path) -> str | None:
    first = next((line for line in read_head(path).splitlines() if line.strip()), None)
    if first is None:
        return None
    if first.lstrip().startswith("{"):
        return "sigmf"
    if is_raven_header(first):
        return "raven"
    if is_csv_header(first):
        return "csv"
    if is_audacity_line(first):
        return "audacity"
    return None


def detect_format(path: str | os.PathLike[str], *, reading: bool = True) -> str:
    """The format of an annotation file, from its name and (reading) its content.

    Raises
    ------
    InputError
        The format cannot be told; the message lists the formats.
    """
    p = Path(path)
    by_name = _by_suffix(p)
    if reading and p.is_file() and by_name in (None, "audacity", "raven"):
        # ".txt" is shared by Audacity and Raven; the header tells them apart
        found = _by_content(p)
        if found is not None and (by_name is None or found in ("audacity", "raven")):
            return found
    if by_name is not None:
        return by_name
    hint = ", ".join(f"{f.name} ({' '.join(f.suffixes)})" for f in FORMATS.values())
    raise InputError(f"{p}: cannot tell the annotation format from the name"
                     f"{' or the content' if reading else ''}; give format= one of: {hint}")


def read_annotations(path: str | os.PathLike[str], *, format: str | None = None,
                     recording: Any = None, sample_rate: float | None = None
                     ) -> list[Annotation]:
    """Read annotations from a file.

    Parameters
    ----------
    path : str or PathLike
        The annotation file (for SigMF the ``.sigmf-meta`` or ``.sigmf-data``).
    format : {"sigmf", "raven", "audacity", "csv"}, optional
        Found from the file name and content when omitted.
    recording : Recording, optional
        The annotated recording: its sample rate converts SigMF samples to
        seconds and its band tells a whole-band Raven box or an undefined
        Audacity edge.
    sample_rate : float, optional
        Used when no recording is given.

    Returns
    -------
    list of Annotation
        In file order.

    Raises
    ------
    RecordingError
        The file is missing or unreadable, or is not of the format.
    InputError
        The content is malformed; one line naming the file, the line or item
        and the field.
    """
    p = Path(path)
    if not p.exists() and not meta_path(p).exists():
        raise RecordingError(f"{p}: no such file")
    name = _check_name(format) if format is not None else detect_format(p, reading=True)
    return FORMATS[name].read(p, Timebase.of(recording, sample_rate))


def write_annotations(path: str | os.PathLike[str], annotations: Sequence[Annotation], *,
                      format: str | None = None, recording: Any = None,
                      sample_rate: float | None = None) -> Path:
    """Write annotations to a file, atomically.

    Parameters
    ----------
    path : str or PathLike
        Destination.  An existing ``.sigmf-meta`` keeps everything but its
        ``annotations`` array; other formats replace the file.
    annotations : sequence of Annotation
    format : {"sigmf", "raven", "audacity", "csv"}, optional
        Found from the file name when omitted.
    recording : Recording, optional
        Needed for a new SigMF meta (sample rate, sample type) and for time-only
        annotations in a Raven table; Raven frequencies are clipped to its
        Nyquist frequency.
    sample_rate : float, optional
        Used when no recording is given.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    InputError
        Something the format cannot hold; the file is then left as it was.
    RecordingError
        The destination cannot be written.
    """
    annotations = list(annotations)
    for a in annotations:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
    name = _check_name(format) if format is not None else detect_format(path, reading=False)
    return FORMATS[name].write(Path(path), annotations, Timebase.of(recording, sample_rate))


def annotations_of_recording(recording: Any) -> list[Annotation]:
    """The regions a reader found in a recording, as annotations.

    Converts :attr:`Recording.annotations` (dicts with ``sample_start``,
    ``sample_count``, ``freq_lower``, ``freq_upper``, ``label``, ``comment``)
    with the recording's sample rate; a ``sample_count`` of ``None`` runs to
    the end.  For a SigMF recording prefer :func:`read_annotations` on its meta,
    which also gives uuids, generators and channels.
    """
    fs = float(recording.sample_rate)
    out = []
    for i, region in enumerate(recording.annotations):
        start = int(region.get("sample_start", 0))
        count = region.get("sample_count")
        stop = recording.n_samples if count is None else start + int(count)
        lo, hi = region.get("freq_lower"), region.get("freq_upper")
        if lo is None or hi is None:
            lo = hi = None
        label = region.get("label") or ""
        out.append(Annotation(start / fs, stop / fs, lo, hi, label=label,
                              comment=region.get("comment") or "",
                              uuid=stable_uuid("recording", i, start, stop, lo, hi, label),
                              generator=""))
    return out
