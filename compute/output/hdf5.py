"""Crash-safe HDF5 files and the options of every dataset.

:func:`atomic_h5` writes an HDF5 file through :func:`specscope.compute.files.atomic_file`
(a temporary name in the destination folder, moved into place on success) and
reopens it to check its data before publishing it.

Every HDF5 dataset is chunked with gzip + shuffle (zstd through blosc when the
optional ``hdf5plugin`` package is importable) and fletcher32 checksums
(:func:`dataset_options`).  The layout is documented in ``docs/reference/hdf5-layout.md``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..files import atomic_file, h5_for_writing


def compression_options() -> dict[str, Any]:
    """Compression of every dataset: zstd (blosc) with ``hdf5plugin``, else gzip + shuffle.

    Returns
    -------
    dict
        ``create_dataset`` keywords: the blosc filter's, or ``compression="gzip"``,
        ``compression_opts=4`` and ``shuffle=True``.
    """
    try:
        import hdf5plugin
    except ImportError:
        return {"compression": "gzip", "compression_opts": 4, "shuffle": True}
    return dict(hdf5plugin.Blosc(cname="zstd", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))


def dataset_options(shape: tuple[int, ...], chunks: tuple[int, ...] | None = None
                    ) -> dict[str, Any]:
    """``create_dataset`` keywords: chunks, compression and fletcher32 checksums.

    Empty datasets cannot be chunked in HDF5 without a growable shape; they are
    stored contiguous, without filters.

    Parameters
    ----------
    shape : tuple of int
        The dataset's shape.
    chunks : tuple of int, optional
        The chunk shape; h5py picks one when omitted.

    Returns
    -------
    dict
        Keywords for ``h5py.Group.create_dataset``; empty for an empty shape.
    """
    if any(int(n) == 0 for n in shape):
        return {}
    opts: dict[str, Any] = {"chunks": tuple(int(c) for c in chunks) if chunks else True,
                            "fletcher32": True}
    opts.update(compression_options())
    return opts


def _check_dataset(name: str, obj: Any) -> None:
    """Read the first and last element of a dataset (checksums are verified on read)."""
    import h5py

    if isinstance(obj, h5py.Dataset) and obj.shape and obj.size:
        obj[(0,) * obj.ndim]
        obj[tuple(n - 1 for n in obj.shape)]


@contextmanager
def atomic_h5(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Open an HDF5 file for writing under a temporary name; publish it on success.

    The body writes into the yielded ``h5py.File``.  On success the file is
    flushed, closed, reopened read-only to check it, and renamed over ``path``.
    On any exception -- a failed write on a full disk included -- the temporary
    file is closed without writing more, removed, and ``path`` is untouched
    (:func:`~specscope.compute.files.atomic_file` names the file and the cause).

    Parameters
    ----------
    path : str or PathLike
        The destination file.

    Yields
    ------
    h5py.File
        The temporary file, open for writing.

    Raises
    ------
    RecordingError
        The destination is a folder, its folder is missing or not writable, or the
        data cannot be written or moved into place.
    """
    import h5py

    with atomic_file(path, what="file name ending in .h5") as tmp:
        with h5_for_writing(tmp, "w") as f:
            yield f
        with h5py.File(tmp, "r") as f:  # verify the file reopens and its data reads
            f.visititems(_check_dataset)
