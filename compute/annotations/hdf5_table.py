"""Annotations in HDF5: the ``/annotations`` table of every specscope HDF5 export.

The table is a group of 1-D datasets of equal length, one per field of
:class:`Annotation` (:data:`COLUMNS`); :func:`write_table` and :func:`read_table`
work on an open ``h5py`` file or group, and :func:`read_hdf5` / :func:`write_hdf5`
are the ``hdf5`` annotation format.  The round trip is exact.

See docs/explanation/rooms/annotations.md.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, RecordingError
from ..files import atomic_file, h5_for_writing
from .common import Timebase
from .model import FIELDS, Annotation

__all__ = ["COLUMNS", "GROUP", "TABLE_FORMAT", "has_table", "is_hdf5", "read_hdf5",
           "read_table", "write_hdf5", "write_table"]

#: the value of the table group's ``format`` attribute
TABLE_FORMAT = "specscope/annotations/1"
#: the group's name in an export
GROUP = "annotations"
#: the datasets of the table, one per :data:`FIELDS`, in that order
COLUMNS = FIELDS
_SCALE = "annotation"
_TEXT = ("label", "comment", "uuid", "generator", "tier")
_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_DESCRIPTIONS = {
    "start_s": ("s", "start, seconds from the output's first sample"),
    "stop_s": ("s", "end, seconds from the output's first sample"),
    "freq_low_hz": ("Hz", "lower frequency edge; NaN: time-only annotation"),
    "freq_high_hz": ("Hz", "upper frequency edge; NaN: time-only annotation"),
    "label": (None, "label"),
    "comment": (None, "comment"),
    "uuid": (None, "identity of the annotation"),
    "generator": (None, "who made it: person or a detector's name"),
    "channel": (None, "0-based channel; -1: all channels"),
    "tier": (None, "the tier (layer) it belongs to; empty: none"),
}


def is_hdf5(path: Path) -> bool:
    """Whether a file starts with the HDF5 signature.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    bool
        False too when the file cannot be read.
    """
    try:
        with open(path, "rb") as fh:
            return fh.read(len(_SIGNATURE)) == _SIGNATURE
    except OSError:
        return False


def has_table(path: str | Path) -> bool:
    """Whether a file is HDF5 with an ``/annotations`` group (False when unreadable).

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    bool
        True when the file opens and its root holds the group.
    """
    import h5py

    p = Path(path)
    if not is_hdf5(p):
        return False
    try:
        with h5py.File(p, "r") as f:
            return isinstance(f.get(GROUP), h5py.Group)
    except OSError:
        return False


def write_table(parent: Any, annotations: Sequence[Annotation], *, time_offset: float = 0.0,
                name: str = GROUP) -> Any:
    """Write the annotation table as group ``name`` of an open ``h5py`` file or group.

    Parameters
    ----------
    parent : h5py.File or h5py.Group
        Where the group is created (it must not exist).
    annotations : sequence of Annotation
        Times already relative to the output's time 0.
    time_offset : float
        Source time of the output's time 0, in seconds (group attribute).
    name : str
        The group's name.

    Returns
    -------
    h5py.Group
        The table.

    Raises
    ------
    InputError
        An item is not an :class:`Annotation`.
    """
    import h5py

    items = list(annotations)
    for a in items:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
    g = parent.create_group(name)
    g.attrs["format"] = TABLE_FORMAT
    g.attrs["time_offset"] = float(time_offset)
    n = len(items)
    scale = g.create_dataset(_SCALE, data=np.arange(n, dtype=np.int64))
    scale.attrs["long_name"] = "annotation number"
    scale.make_scale(_SCALE)
    text = h5py.string_dtype("utf-8")
    for field in COLUMNS:
        values = [getattr(a, field) for a in items]
        if field in _TEXT:
            ds = g.create_dataset(field, shape=(n,), dtype=text)
            if n:
                ds[...] = np.array(["" if v is None else v for v in values], dtype=object)
        elif field == "channel":
            ds = g.create_dataset(field, data=np.array(
                [-1 if v is None else v for v in values], dtype=np.int64).reshape(n))
        else:
            ds = g.create_dataset(field, data=np.array(
                [math.nan if v is None else v for v in values], dtype=np.float64).reshape(n))
        units, long_name = _DESCRIPTIONS[field]
        if units:
            ds.attrs["units"] = units
        ds.attrs["long_name"] = long_name
        ds.dims[0].attach_scale(scale)
        ds.dims[0].label = _SCALE
    return g


def _column(g: Any, field: str, n: int | None, where: str) -> np.ndarray | None:
    import h5py

    if field not in g:
        return None
    ds = g[field]
    if not isinstance(ds, h5py.Dataset) or ds.ndim != 1:
        raise RecordingError(f"{where}/{field}: must be a 1-D dataset")
    if n is not None and ds.shape[0] != n:
        raise RecordingError(f"{where}/{field}: {ds.shape[0]} rows, the table has {n}")
    if field in _TEXT:
        if not h5py.check_string_dtype(ds.dtype):
            raise RecordingError(f"{where}/{field}: must hold strings")
        return np.asarray(ds.asstr()[...], dtype=object)
    kind = ds.dtype.kind
    if kind not in ("iu" if field == "channel" else "iuf"):
        raise RecordingError(f"{where}/{field}: {ds.dtype} is not "
                             f"{'a whole' if field == 'channel' else 'a'} number type")
    return ds[...]


def read_table(g: Any, where: str = GROUP) -> list[Annotation]:
    """The annotations of a table group, in row order.

    ``start_s`` and ``stop_s`` are required; a missing column takes the
    field's default (a missing ``uuid`` a new one).

    Parameters
    ----------
    g : h5py.Group
        The table group.
    where : str
        The group's name in error messages (e.g. ``"FILE.h5:/annotations"``).

    Returns
    -------
    list of Annotation
        One per row; times in seconds from the output's time 0.

    Raises
    ------
    RecordingError
        A column is missing, of the wrong type or length.
    InputError
        A row is not a valid annotation; the message names the row.
    """
    starts = _column(g, "start_s", None, where)
    if starts is None or "stop_s" not in g:
        raise RecordingError(f"{where}: not an annotation table (start_s and stop_s "
                             "datasets are required)")
    n = starts.shape[0]
    columns = {f: _column(g, f, n, where) for f in COLUMNS}
    out = []
    for i in range(n):
        values: dict[str, Any] = {}
        for field, col in columns.items():
            if col is None:
                continue
            v = col[i]
            if field in _TEXT:
                values[field] = str(v)
            elif field == "channel":
                values[field] = None if int(v) == -1 else int(v)
            elif field in ("freq_low_hz", "freq_high_hz"):
                values[field] = None if math.isnan(v) else float(v)
            else:
                values[field] = float(v)
        if not values.get("uuid"):
            values.pop("uuid", None)
        try:
            out.append(Annotation(**values))
        except InputError as exc:
            raise InputError(f"{where}: row {i}: {str(exc).removeprefix('Annotation: ')}"
                             ) from None
    return out


def read_hdf5(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The ``/annotations`` table of an HDF5 file (the ``hdf5`` annotation format).

    Times are seconds from the file's first sample (the table's own); the
    timebase is not needed.

    Parameters
    ----------
    path : str or Path
        The HDF5 file.
    timebase : Timebase, optional
        Not needed by this format; accepted like the other readers.

    Returns
    -------
    list of Annotation
        One per row of the table.

    Raises
    ------
    RecordingError
        The file is not HDF5 or holds no annotation table.
    """
    import h5py

    p = Path(path)
    if not is_hdf5(p):
        raise RecordingError(f"{p}: not an HDF5 file")
    with h5py.File(p, "r") as f:
        g = f.get(GROUP)
        if not isinstance(g, h5py.Group):
            raise RecordingError(f"{p}: has no /{GROUP} table")
        return read_table(g, f"{p}:/{GROUP}")


def write_hdf5(path: str | Path, annotations: Sequence[Annotation],
               timebase: Timebase | None = None) -> Path:
    """Write the ``/annotations`` table into an HDF5 file, atomically.

    An existing HDF5 file keeps everything but its table (and the table's
    ``time_offset``); a new file holds only the table.  The file is written
    under a temporary name and moved into place, so a failed write leaves it
    as it was.

    Parameters
    ----------
    path : str or Path
        The HDF5 file.
    annotations : sequence of Annotation
        The rows, times in seconds from the file's time 0.
    timebase : Timebase, optional
        Not needed by this format; accepted like the other writers.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    RecordingError
        The file exists and is not HDF5, or cannot be written.
    InputError
        An item is not an :class:`Annotation`.
    """
    p = Path(path)
    exists = p.is_file()
    if exists and not is_hdf5(p):
        raise RecordingError(f"{p}: exists and is not an HDF5 file; not replaced")
    # an existing file keeps all but its annotations: an update on purpose, even of the
    # recording being read
    with atomic_file(p, what="file name ending in .h5", updates_input=exists) as tmp:
        offset = 0.0
        if exists:
            shutil.copyfile(p, tmp)
        with h5_for_writing(tmp, "r+" if exists else "w") as f:
            old = f.get(GROUP)
            if old is not None:
                offset = float(old.attrs.get("time_offset", 0.0))
                del f[GROUP]
            write_table(f, annotations, time_offset=offset)
    return p
