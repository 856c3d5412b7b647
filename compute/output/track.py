"""A measured track to CSV or HDF5, published atomically, with where it came from."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..files import atomic_file
from ..tracks import Track
from .hdf5 import atomic_h5, dataset_options
from .provenance import provenance, write_provenance

__all__ = ["TRACK_FORMAT_TAG", "TRACK_SUFFIXES", "write_track"]

#: format tag of a track written to HDF5
TRACK_FORMAT_TAG = "specscope/track/1"
#: the file kinds a track is written to, by suffix
TRACK_SUFFIXES = {".csv": "csv", ".h5": "hdf5", ".hdf5": "hdf5"}


def track_format(path: str | os.PathLike[str]) -> str:
    """``"csv"`` or ``"hdf5"`` from a file name, else an InputError."""
    suffix = Path(path).suffix.lower()
    if suffix not in TRACK_SUFFIXES:
        raise InputError(f"output {os.fspath(path)!r} must end in "
                         f"{', '.join(TRACK_SUFFIXES)}")
    return TRACK_SUFFIXES[suffix]


def _text(v: float) -> str:
    return "" if math.isnan(v) else repr(float(v))


def write_track(track: Track, path: str | os.PathLike[str], *, source: Any = None,
                channel: int = 0) -> Path:
    """Write a track to ``path`` (``.csv`` or ``.h5``), replacing it only on success.

    CSV: a header ``time (s)`` and ``NAME (UNIT)`` per column, a row per frame, empty
    where there is no value.  HDF5: ``time`` (n,) and ``values`` (n, k) with
    ``columns`` and ``units`` attributes, ``kind``, ``channel`` and ``params`` (JSON)
    on the root, and the ``provenance`` group of every export.

    Parameters
    ----------
    track : Track
    path : path-like
    source : str or path-like, optional
        The recording measured, recorded (and hashed) in an HDF5 file's provenance.
    channel : int
        The channel measured.

    Returns
    -------
    Path
    """
    kind = track_format(path)
    if kind == "csv":
        with atomic_file(path, what="file name ending in .csv") as tmp, \
                open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["time (s)", *(f"{c} ({u})" for c, u in zip(track.columns,
                                                                  track.units, strict=True))])
            for t, row in zip(track.times, track.values, strict=True):
                w.writerow([repr(float(t)), *(_text(v) for v in row)])
        return Path(path)
    import h5py

    prov = provenance(os.fspath(source) if source is not None else "array")
    with atomic_h5(path) as f:
        f.attrs["format"] = TRACK_FORMAT_TAG
        f.attrs["kind"] = track.kind
        f.attrs["channel"] = int(channel)
        f.attrs["params"] = json.dumps(track.params, default=str)
        n, k = track.values.shape
        f.create_dataset("time", data=track.times, **dataset_options((n,)))
        d = f.create_dataset("values", data=track.values, **dataset_options((n, k)))
        text = h5py.string_dtype("utf-8")
        d.attrs.create("columns", np.array(track.columns, dtype=object), dtype=text)
        d.attrs.create("units", np.array(track.units, dtype=object), dtype=text)
        f["time"].attrs["units"] = "s"
        write_provenance(f, prov)
    return Path(path)
