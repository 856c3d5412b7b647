"""Reading and writing annotation files: one entry point, the format found from the file.

:data:`FORMATS` names the formats (``sigmf``, ``raven``, ``audacity``, ``csv``,
``hdf5``, ``textgrid``, ``eaf``);
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
hdf5       ``.h5`` ``.hdf5`` ``.he5`` ``.nc``       the HDF5 signature; the
                                                ``/annotations`` table of exports
textgrid   ``.TextGrid``                        ``File type = "ooTextFile"`` and
                                                ``"TextGrid"`` (UTF-8 or UTF-16)
eaf        ``.eaf``                             an ``ANNOTATION_DOCUMENT`` element
========== ==================================== =====================================

A ``.txt`` file is read as Raven when its first line is a Raven header, else as
Audacity labels.  Each format's module documents what it carries and how exact
its round trip is.  :func:`annotations_of_recording` gives the annotations of a
recording (:attr:`Recording.annotations`, which readers fill with annotations).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError, RecordingError
from ..types import TableFormat
from .audacity import is_audacity_line, read_audacity, write_audacity
from .common import Timebase, read_head
from .csv_table import is_csv_header, read_csv, write_csv
from .elan import is_eaf, read_eaf, write_eaf
from .hdf5_table import is_hdf5, read_hdf5, write_hdf5
from .model import Annotation
from .raven import is_raven_header, read_raven, write_raven
from .sigmf_meta import meta_path, read_sigmf, write_sigmf
from .textgrid import is_textgrid, read_textgrid, write_textgrid

__all__ = ["FORMATS", "AnnotationFormat", "annotations_of_recording", "detect_format",
           "read_annotations", "write_annotations"]


@dataclass(frozen=True)
class AnnotationFormat:
    """An annotation file format: its name, file name endings, reader and writer.

    Parameters
    ----------
    name : str
        The format's name, as ``format=`` takes it.
    description : str
        One line for menus and help.
    suffixes : tuple of str
        Lower-case file name endings, the preferred one first.
    read : callable
        ``read(path, timebase) -> list of Annotation``.
    write : callable
        ``write(path, annotations, timebase) -> Path``.
    """

    name: str
    description: str
    suffixes: tuple[str, ...]
    read: Callable[[Path, Timebase], list[Annotation]] = field(repr=False)
    write: Callable[[Path, Sequence[Annotation], Timebase], Path] = field(repr=False)


#: the annotation formats by name
FORMATS: MappingProxyType[TableFormat, AnnotationFormat] = MappingProxyType({
    "sigmf": AnnotationFormat("sigmf", "SigMF metadata (the annotations array)",
                              (".sigmf-meta", ".sigmf-data"), read_sigmf, write_sigmf),
    "raven": AnnotationFormat("raven", "Raven selection table (tab-separated)",
                              (".selections.txt", ".tsv"), read_raven, write_raven),
    "audacity": AnnotationFormat("audacity", "Audacity label track text",
                                 (".labels.txt", ".txt"), read_audacity, write_audacity),
    "csv": AnnotationFormat("csv", "CSV with the model's field names", (".csv",),
                            read_csv, write_csv),
    "hdf5": AnnotationFormat("hdf5", "the /annotations table of a specscope HDF5 export",
                             (".h5", ".hdf5", ".he5", ".nc"), read_hdf5, write_hdf5),
    "textgrid": AnnotationFormat("textgrid", "Praat TextGrid (interval and point tiers)",
                                 (".textgrid",), read_textgrid, write_textgrid),
    "eaf": AnnotationFormat("eaf", "ELAN annotation file (time-aligned tiers)", (".eaf",),
                            read_eaf, write_eaf),
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
    if is_hdf5(path):
        return "hdf5"
    if is_textgrid(path):
        return "textgrid"
    head = read_head(path)
    if is_eaf(head):
        return "eaf"
    first = next((line for line in head.splitlines() if line.strip()), None)
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

    Parameters
    ----------
    path : str or PathLike
        The file.
    reading : bool
        Whether the file is to be read: then an existing file's content is looked
        at too (a ``.txt`` file is Raven or Audacity by its first line).

    Returns
    -------
    str
        A key of :data:`FORMATS`.

    Raises
    ------
    InputError
        The format cannot be told; the message lists the formats.
    """
    p = Path(path)
    by_name = _by_suffix(p)
    if reading and p.is_file() and by_name in (None, "audacity", "raven", "hdf5"):
        # ".txt" is shared by Audacity and Raven; the header tells them apart
        found = _by_content(p)
        if found is not None and (by_name is None or found in ("audacity", "raven")
                                  or found == by_name):
            return found
    if by_name is not None:
        return by_name
    hint = ", ".join(f"{f.name} ({' '.join(f.suffixes)})" for f in FORMATS.values())
    raise InputError(f"{p}: cannot tell the annotation format from the name"
                     f"{' or the content' if reading else ''}; give format= one of: {hint}")


def read_annotations(path: str | os.PathLike[str], *, format: TableFormat | None = None,
                     recording: Any = None, sample_rate: float | None = None
                     ) -> list[Annotation]:
    """Read annotations from a file.

    Parameters
    ----------
    path : str or PathLike
        The annotation file (for SigMF the ``.sigmf-meta`` or ``.sigmf-data``).
    format : {"sigmf", "raven", "audacity", "csv", "hdf5", "textgrid", "eaf"}, optional
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
                      format: TableFormat | None = None, recording: Any = None,
                      sample_rate: float | None = None) -> Path:
    """Write annotations to a file, atomically.

    Parameters
    ----------
    path : str or PathLike
        Destination.  An existing ``.sigmf-meta`` keeps everything but its
        ``annotations`` array; other formats replace the file.
    annotations : sequence of Annotation
    format : {"sigmf", "raven", "audacity", "csv", "hdf5", "textgrid", "eaf"}, optional
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
    """The annotations a reader found in a recording (:attr:`Recording.annotations`).

    Readers give :class:`Annotation` objects with times in seconds from the
    recording's first sample; this checks them and returns a new list.

    Parameters
    ----------
    recording : Recording
        An open recording (anything without ``annotations`` has none).

    Returns
    -------
    list of Annotation
        A new list, in the reader's order.

    Raises
    ------
    InputError
        The recording holds something else than annotations.
    """
    out = list(getattr(recording, "annotations", None) or [])
    for a in out:
        if not isinstance(a, Annotation):
            raise InputError(f"{getattr(recording, 'path', 'recording')}: annotations must "
                             f"be Annotation objects, got {type(a).__name__}")
    return out
