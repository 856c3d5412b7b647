"""Crash-safe files: atomic publication, HDF5 dataset options, stale partials.

A file is written to a temporary name in the destination folder, checked,
then moved into place with ``os.replace``: a failed, cancelled or killed
export never leaves a partial file under the requested name and never damages
a file already there.  A killed export leaves its temporary file
(``.<name>.<random>.partial``) behind; the next export to the same
destination removes those older than :data:`STALE_PARTIAL_S` seconds
(environment variable ``SPECSCOPE_STALE_PARTIAL_S``).

Every HDF5 dataset is chunked with gzip + shuffle (zstd through blosc when the
optional ``hdf5plugin`` package is importable) and fletcher32 checksums
(:func:`dataset_options`).  The layout is documented in ``docs/hdf5-layout.md``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import RecordingError

#: temporary files of killed exports older than this (seconds) are removed by the next
#: export to the same destination
STALE_PARTIAL_S = 15 * 60
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def compression_options() -> dict[str, Any]:
    """Compression of every dataset: zstd (blosc) with ``hdf5plugin``, else gzip + shuffle."""
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
    """
    if any(int(n) == 0 for n in shape):
        return {}
    opts: dict[str, Any] = {"chunks": tuple(int(c) for c in chunks) if chunks else True,
                            "fletcher32": True}
    opts.update(compression_options())
    return opts


def clean_stale_partials(dest: str | os.PathLike[str],
                         max_age_s: float | None = None) -> list[Path]:
    """Remove temporary files of killed exports to ``dest`` older than ``max_age_s``.

    Only names made by this module for this destination (``.<name>.*.partial`` in
    its folder) are considered.  Returns the removed paths.
    """
    dest = Path(dest)
    if max_age_s is None:
        try:
            max_age_s = float(os.environ.get("SPECSCOPE_STALE_PARTIAL_S", STALE_PARTIAL_S))
        except ValueError:
            max_age_s = STALE_PARTIAL_S
    folder = dest.parent if str(dest.parent) else Path(".")
    prefix = f".{dest.name}."
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        if not (e.name.startswith(prefix) and e.name.endswith(".partial")):
            continue
        middle = e.name[len(prefix):-len(".partial")]
        if not middle or "." in middle:  # mkstemp's random part only
            continue
        try:
            if e.is_file(follow_symlinks=False) and \
                    now - e.stat(follow_symlinks=False).st_mtime >= max_age_s:
                os.unlink(e.path)
                removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (best effort; not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[Path]:
    """A temporary path in ``path``'s folder, moved over ``path`` when the body succeeds.

    The body writes the yielded path (and may raise to abandon it); on success
    the data is fsynced and ``os.replace`` publishes it.  Stale temporary files
    of killed runs to the same destination are removed first.
    """
    dest = Path(path)
    if dest.is_dir():
        raise RecordingError(f"{dest}: is a folder; give a {what} name")
    folder = dest.parent if str(dest.parent) else Path(".")
    if not folder.is_dir():
        raise RecordingError(f"{dest}: the folder {folder} does not exist")
    clean_stale_partials(dest)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{dest.name}.", suffix=".partial")
    except OSError as exc:
        raise RecordingError(f"{dest}: cannot write in {folder} "
                             f"({exc.strerror or exc})") from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give what open() would
        os.replace(tmp, dest)
        _fsync_folder(folder)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


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
    closed, reopened read-only to check it, and renamed over ``path``.  On any
    exception the temporary file is removed and ``path`` is untouched.
    """
    import h5py

    with atomic_file(path, what="file name ending in .h5") as tmp:
        with h5py.File(tmp, "w") as f:
            yield f
        with h5py.File(tmp, "r") as f:  # verify the file reopens and its data reads
            f.visititems(_check_dataset)
