"""Publish the files of one output together: a reader sees all old or all new, never halves.

Why a lock and a journal: the files keep their names (a SigMF pair stays ``NAME.sigmf-meta``
+ ``NAME.sigmf-data`` for every SigMF tool), and a kill between two moves is finished later.

How:

* The body writes every file under a staged name in the destination folder
  (``.NAME.<pid>@<host>.<random>.staged``).
* With the folder's lock held exclusively (``fcntl.flock`` on the folder itself), a
  journal naming the staged files and their destinations is written atomically
  (:data:`JOURNAL`), the files are moved with ``os.replace`` one by one, and the
  journal is removed.
* Readers hold the lock shared while they open the files of a unit
  (:func:`reading_together`), so no move happens between their opens.
* A writer killed between two moves leaves its journal: whoever takes the lock next,
  writer or reader, finishes the moves first (:func:`settle`).  After a kill at any
  moment the folder holds the old unit (no journal yet) or the new one.

Staged files of writers that died before their journal go at the next publication
to the folder (this host's dead processes at once, other hosts' after
:data:`~.files.STALE_PARTIAL_S`).  Where ``fcntl`` is missing (Windows) or the file
system has no ``flock`` (some network shares), the journal still makes a
publication crash-safe, and concurrent writers may interleave.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .errors import RecordingError
from .files import (
    STALE_PARTIAL_S,
    atomic_write_text,
    fsync_folder,
    os_error_cause,
    owner_tag,
    refuse_overwriting_inputs,
    write_failure,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["JOURNAL", "LOCK_WAIT_S", "publish_together", "reading_together", "settle",
           "updating_together"]

#: the journal of a publication in progress, in the destination folder
JOURNAL = ".specscope-publish.journal"
#: most seconds a writer waits for the folder's lock (a reader then reads without it)
LOCK_WAIT_S = 60.0
_STAGED = re.compile(r"^\..+\.(\d+)@([A-Za-z0-9_-]+)\.[0-9a-f]+\.staged$")
# the process umask, read once (os.umask can only be read by setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def _folder(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


#: what taking a lock came to
LOCKED, BUSY, UNLOCKABLE = "locked", "busy", "unlockable"


@contextmanager
def _locked(folder: Path, exclusive: bool, wait_s: float) -> Iterator[tuple[int | None, str]]:
    """Hold ``folder``'s lock: yields its descriptor and :data:`LOCKED`, or ``None`` and
    :data:`BUSY` (still held by another after ``wait_s``) or :data:`UNLOCKABLE` (no lock
    on this system or file system)."""
    if fcntl is None:
        yield None, UNLOCKABLE
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield None, UNLOCKABLE
        return
    try:
        state = _lock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, wait_s)
        yield (fd if state == LOCKED else None), state
    finally:
        os.close(fd)  # releases the lock


def _lock(fd: int, how: int, wait_s: float) -> str:
    """Take (or convert) the lock on ``fd``, polling up to ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return LOCKED
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return BUSY
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        except OSError:  # a file system without flock (some network shares)
            return UNLOCKABLE


def settle(folder: str | os.PathLike[str]) -> bool:
    """Finish a publication a killed writer left half done in ``folder`` (its journal).

    Call it with the folder's lock held exclusively.

    Parameters
    ----------
    folder : path-like
        The destination folder.

    Returns
    -------
    bool
        True when there was a journal to finish.

    Raises
    ------
    OSError
        A move failed; the journal stays for the next try.
    """
    folder = Path(folder)
    journal = folder / JOURNAL
    try:
        text = journal.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    try:
        moves = [(str(a), str(b)) for a, b in json.loads(text)["moves"]]
    except (ValueError, KeyError, TypeError):
        moves = []  # not one of ours (journals are written whole): nothing to finish
    for staged, final in moves:
        if not all(n and n == Path(n).name and n not in (".", "..") for n in (staged, final)) \
                or not _STAGED.match(staged):
            continue  # a journal names files of its own folder only
        if os.path.lexists(folder / staged):
            os.replace(folder / staged, folder / final)
    fsync_folder(folder)
    journal.unlink()
    fsync_folder(folder)
    return True


@contextmanager
def reading_together(folder: str | os.PathLike[str], wait_s: float = LOCK_WAIT_S
                     ) -> Iterator[None]:
    """Hold ``folder``'s lock shared while the files of one unit are opened.

    A publication a killed writer left half done is finished first when the
    folder can be written and locked.  Hold it only for the opens: descriptors keep
    reading what they opened after it is released.

    Parameters
    ----------
    folder : path-like
        The folder of the unit's files.
    wait_s : float
        Most seconds to wait for a writer; then the files are opened without the lock.

    Yields
    ------
    None
        While the lock is held.
    """
    folder = Path(folder)
    with _locked(folder, False, wait_s) as (fd, _state):
        # while a writer holds the lock its journal is its own: only a dead writer's is
        # seen here, and finished with the lock held exclusively (never without the lock)
        if fd is not None and os.path.lexists(folder / JOURNAL) \
                and _lock(fd, fcntl.LOCK_EX, wait_s) == LOCKED:
            with contextlib.suppress(OSError):  # read-only: read what is there
                settle(folder)
            _lock(fd, fcntl.LOCK_SH, wait_s)
        yield


@contextmanager
def updating_together(folder: str | os.PathLike[str], wait_s: float = LOCK_WAIT_S
                      ) -> Iterator[None]:
    """Hold ``folder``'s lock exclusively while one file of a unit is read and rewritten.

    A file updated in place (a SigMF meta's annotations) is read and replaced with
    no publication of its unit in between; a publication a killed writer left
    half done is finished first, so the update starts from the unit's last state.

    Parameters
    ----------
    folder : path-like
        The folder of the unit's files.
    wait_s : float
        Most seconds to wait for another writer.

    Yields
    ------
    None
        While the lock is held (or, on a system without locks, at once).

    Raises
    ------
    RecordingError
        Another writer held the folder for ``wait_s`` seconds; nothing was written.
    """
    folder = Path(folder)
    with _locked(folder, True, wait_s) as (_fd, state):
        if state == BUSY:
            raise RecordingError(f"{folder}: another writer held the folder for "
                                 f"{wait_s:g} s; nothing was written")
        try:
            settle(folder)
        except OSError as exc:
            raise RecordingError(f"{folder}: cannot finish an earlier publication "
                                 f"({os_error_cause(exc)})") from None
        yield


def _check_destination(dest: Path, what: str) -> None:
    if dest.is_dir():
        raise RecordingError(f"{dest}: is a folder; give a {what}")
    folder = _folder(dest)
    if not folder.is_dir():
        raise RecordingError(f"{dest}: the folder {folder} does not exist")
    if os.path.lexists(dest) and not (dest.is_file() or not dest.exists()):
        raise RecordingError(f"{dest}: is not a regular file (a device, FIFO or socket); "
                             f"give a {what}")


def _stage(dest: Path) -> Path:
    folder = _folder(dest)
    for _ in range(100):
        name = f".{dest.name}.{owner_tag()}.{secrets.token_hex(4)}.staged"
        try:
            fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise RecordingError(f"{dest}: cannot write in {folder} "
                                 f"({os_error_cause(exc)})") from None
        os.close(fd)
        return folder / name
    raise RecordingError(f"{dest}: cannot make a temporary file in {folder}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    try:  # a zombie writes nothing any more
        line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return line[line.rfind(")") + 2:][:1] not in ("Z", "X")


def _remove_dead_staged(folder: Path) -> None:
    """Staged files in ``folder`` whose writers died before publishing (lock held, settled).

    Any destination's: a killed export's pair goes at the next publication to the folder.
    """
    host = owner_tag().split("@", 1)[1]
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    now = time.time()
    for e in entries:
        m = _STAGED.match(e.name)
        if m is None:
            continue
        with contextlib.suppress(OSError):
            if m.group(2) == host:
                if _pid_alive(int(m.group(1))):
                    continue
            elif now - e.stat(follow_symlinks=False).st_mtime < STALE_PARTIAL_S:
                continue
            if e.is_file(follow_symlinks=False):
                os.unlink(e.path)


def _seal(staged: Path, dest: Path) -> None:
    """Flush a staged file to disk and give it the mode the destination has (or would get)."""
    with open(staged, "rb+") as fh:
        os.fsync(fh.fileno())
    try:
        mode = stat.S_IMODE(os.stat(dest).st_mode)
    except OSError:
        mode = 0o666 & ~_UMASK  # what open() would give a new file
    os.chmod(staged, mode)


@contextmanager
def publish_together(paths: Sequence[str | os.PathLike[str]], *,
                     what: Sequence[str] = ()) -> Iterator[list[Path]]:
    """Staged files for ``paths``, moved into place together when the body succeeds.

    Parameters
    ----------
    paths : sequence of path-like
        The destinations, all in one folder; moved in this order.
    what : sequence of str, optional
        What each destination should be, for the error when it is a folder
        (``"file name ending in .sigmf-meta"``).

    Yields
    ------
    list of Path
        One staged file per destination, in the destination's folder, to write.

    Raises
    ------
    OutputIsInputError
        A destination is a file read in the current ``files.input_scope``.
    RecordingError
        A destination is a folder or special file, the folder is missing or not
        writable, the file system refused the data, or the folder stayed locked
        for :data:`LOCK_WAIT_S` seconds.  Nothing was published then; a failure
        during the moves leaves the journal, and the next look at the folder
        finishes them.
    """
    dests = [Path(p) for p in paths]
    if not dests:
        raise ValueError("publish_together needs at least one path")
    folder = _folder(dests[0])
    if any(_folder(d) != folder for d in dests):
        raise ValueError("the files of one publication must share a folder")
    refuse_overwriting_inputs(dests, [])  # nothing the command read (files.input_scope)
    for i, d in enumerate(dests):
        _check_destination(d, what[i] if i < len(what) else "file name")
    staged: list[Path] = []
    journaled = False
    try:
        for d in dests:
            staged.append(_stage(d))
        yield list(staged)
        try:
            for s, d in zip(staged, dests, strict=True):
                _seal(s, d)
        except OSError as exc:
            raise RecordingError(f"{dests[0]}: cannot write ({os_error_cause(exc)})") from None
        with _locked(folder, True, LOCK_WAIT_S) as (_fd, state):
            if state == BUSY:
                raise RecordingError(f"{folder}: another writer held the folder for "
                                     f"{LOCK_WAIT_S:g} s; nothing was written")
            try:
                settle(folder)
                _remove_dead_staged(folder)
                moves = [[s.name, d.name] for s, d in zip(staged, dests, strict=True)]
                atomic_write_text(folder / JOURNAL, json.dumps({"moves": moves}))
                journaled = True
                for s, d in zip(staged, dests, strict=True):
                    os.replace(s, d)
                fsync_folder(folder)
                (folder / JOURNAL).unlink()
                fsync_folder(folder)
            except OSError as exc:
                if isinstance(exc, RecordingError):
                    raise
                raise RecordingError(f"{dests[0]}: cannot replace the file "
                                     f"({os_error_cause(exc)})") from None
    except BaseException as exc:
        if not journaled:  # nothing is published: the staged files go
            failure = write_failure(dests[0], exc, staged[0] if staged else None)
            for s in staged:
                with contextlib.suppress(OSError):
                    os.unlink(s)
            if failure is not None and failure is not exc:
                raise failure from None
        raise

