"""Crash-safe publication of files: write under a temporary name, then move into place.

Every file specscope writes (HDF5 exports, audio and SigMF exports, annotation
tables, SigMF metadata) goes through :func:`atomic_file`: the body writes a
temporary file in the destination folder, which is flushed to disk and moved
over the destination with ``os.replace`` only when the body succeeds.  A failed,
cancelled or killed write never leaves a partial file under the requested name
and never damages a file already there.  A killed writer leaves its temporary
file (``.<name>.<random>.partial``) behind; the next write to the same
destination removes those older than :data:`STALE_PARTIAL_S` seconds
(environment variable ``SPECSCOPE_STALE_PARTIAL_S``).
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import RecordingError

__all__ = ["STALE_PARTIAL_S", "atomic_file", "atomic_write_bytes", "atomic_write_text",
           "clean_stale_partials"]

#: temporary files of killed writers older than this (seconds) are removed by the next
#: write to the same destination
STALE_PARTIAL_S = 15 * 60
# the process umask, read once (os.umask can only be read by setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def clean_stale_partials(dest: str | os.PathLike[str],
                         max_age_s: float | None = None) -> list[Path]:
    """Remove temporary files of killed writes to ``dest`` older than ``max_age_s``.

    Only names made by :func:`atomic_file` for this destination
    (``.<name>.<random>.partial`` in its folder) are considered.

    Returns
    -------
    list of Path
        The removed files.
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


def _remove(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[Path]:
    """A temporary path in ``path``'s folder, moved over ``path`` when the body succeeds.

    The body writes the yielded path (and may raise to abandon it); on success the
    data is fsynced and ``os.replace`` publishes it.  A file that is replaced keeps
    its permission bits; a new file gets those ``open()`` would give.  Stale
    temporary files of killed writes to the same destination are removed first.

    Parameters
    ----------
    path : path-like
        The destination.
    what : str
        What the destination should be, for the error when it is a folder
        (``"file name ending in .h5"``).

    Raises
    ------
    RecordingError
        The destination is a folder, its folder is missing or not writable, or
        the file cannot be moved into place (the destination is then unchanged).
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
        try:
            mode = stat.S_IMODE(os.stat(dest).st_mode)
        except OSError:
            mode = 0o666 & ~_UMASK  # mkstemp makes 0600; give what open() would
        os.chmod(tmp, mode)
        try:
            os.replace(tmp, dest)
        except OSError as exc:
            raise RecordingError(f"{dest}: cannot replace the file "
                                 f"({exc.strerror or exc})") from None
        _fsync_folder(folder)
    except BaseException:
        _remove(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *,
                       what: str = "file") -> None:
    """Write ``data`` to ``path`` through :func:`atomic_file`."""
    with atomic_file(path, what=what) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
                      what: str = "file") -> None:
    """Write ``text`` to ``path`` through :func:`atomic_file` (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), what=what)
