"""Crash-safe publication of files: write under a temporary name, then move into place.

Every file specscope writes (HDF5 exports, audio and SigMF exports, annotation
tables, SigMF metadata, filter coefficients, sessions) goes through
:func:`atomic_file`: the body writes a temporary file in the destination
folder, which is flushed to disk and moved over the destination with
``os.replace`` only when the body succeeds.  A failed, cancelled or killed write
never leaves a partial file under the requested name and never damages a file
already there; a write that fails for a cause of the file system (no space,
quota, read-only, permission) ends in one :class:`RecordingError` naming the
file and the cause.

The temporary file is named ``.<name>.<pid>@<host>.<random>.partial``.  The
next write to the same folder removes those of processes that are no longer
alive on this host, whatever their age; temporary files of other hosts (a
shared folder) and of older versions are removed once they are older than
:data:`STALE_PARTIAL_S` seconds (environment variable
``SPECSCOPE_STALE_PARTIAL_S``).

:func:`refuse_overwriting_inputs` is the one rule of every writer: an output
that resolves to one of its inputs (same path, a symbolic link, a hard link) is
refused before anything is read (:class:`OutputIsInputError`).  An input counts with
every file reading it touches (:func:`input_files`: a SigMF pair, an HDF5 file's
external links).  Within :func:`input_scope` (a command of the command line), every
input a reader notes (:func:`note_inputs`) is refused to every :func:`atomic_file`
of the scope too, so a writer cannot forget an input it did not name.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .errors import Cancelled, InputError, RecordingError, SpecscopeError

__all__ = ["STALE_PARTIAL_S", "OutputIsInputError", "atomic_file", "atomic_write_bytes",
           "atomic_write_text", "check_writes", "clean_stale_partials", "fsync_folder",
           "h5_for_writing",
           "input_files", "input_scope", "note_inputs", "os_error_cause",
           "owner_tag", "recording_files", "refuse_overwriting_inputs", "write_failure"]

#: temporary files of other hosts (and of unknown writers) older than this (seconds) are
#: removed by the next write to the same destination
STALE_PARTIAL_S = 15 * 60
# the process umask, read once (os.umask can only be read by setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)
# ".<anything>.<pid>@<host>.<anything>partial<anything>": a tagged temporary file
_TAGGED = re.compile(r"^\..*\.(\d+)@([A-Za-z0-9_-]+)\..*partial")
class OutputIsInputError(InputError):
    """An output path resolves to one of the writer's inputs (it would destroy it)."""


def _host() -> str:
    """The host name, made safe for a file name, and the process-id namespace.

    Containers that share a host name (host networking) have their own process
    ids: the namespace's inode tells their temporary files apart.
    """
    name = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname() or "host")[:64] or "host"
    try:
        return f"{name}-n{os.stat('/proc/self/ns/pid').st_ino:x}"
    except OSError:
        return name


def owner_tag() -> str:
    """``<pid>@<host>`` of this process, the owner part of temporary file names.

    Returns
    -------
    str
        The process id, ``@``, the host name made safe for a file name and, where
        the system has one, the process-id namespace (``-n<inode>``).
    """
    return f"{os.getpid()}@{_host()}"


def _strip_member(p: Path) -> Path:
    """``FILE.h5:/dataset`` -> ``FILE.h5`` when only the file part exists."""
    text = os.fsdecode(os.fspath(p))
    if not os.path.lexists(p) and ":" in text:
        head = text.rsplit(":", 1)[0]
        if head and os.path.lexists(head):
            return Path(head)
    return p


def _identity(p: Path) -> tuple[str, tuple[int, int] | None]:
    real = os.path.realpath(p)
    try:
        st = os.stat(p)
        return real, (st.st_dev, st.st_ino)
    except OSError:
        return real, None


#: external links followed in one HDF5 input (a file with more names its first ones)
MAX_LINKED_FILES = 64
#: objects of one HDF5 input looked at for external datasets
MAX_VISITED = 10_000
# SigMF: a recording is a pair of files, either naming the other
_SIGMF_PAIR = {".sigmf-meta": ".sigmf-data", ".sigmf-data": ".sigmf-meta"}


def _hdf5_links(path: Path) -> list[Path]:
    """The files an HDF5 file's external links and external datasets name."""
    try:
        with open(path, "rb") as fh:
            if fh.read(8) != b"\x89HDF\r\n\x1a\n":
                return []
        import h5py
    except (OSError, ImportError):
        return []
    found: list[Path] = []
    seen = 0

    def link(name: str, info: Any) -> bool | None:
        if isinstance(info, h5py.ExternalLink):
            found.append(path.parent / info.filename)
        return True if len(found) >= MAX_LINKED_FILES else None

    def dataset(name: str, obj: Any) -> bool | None:
        nonlocal seen
        seen += 1
        if isinstance(obj, h5py.Dataset):
            plist = obj.id.get_create_plist()
            found.extend(path.parent / os.fsdecode(plist.get_external(i)[0])
                         for i in range(plist.get_external_count()))
        return True if len(found) >= MAX_LINKED_FILES or seen >= MAX_VISITED else None

    try:
        with h5py.File(path, "r") as f:
            f.visititems_links(link)
            f.visititems(dataset)  # external links are not followed: visititems stays inside
    except Exception:  # noqa: BLE001 - a file h5py cannot read names no other file
        pass
    return found[:MAX_LINKED_FILES]


def input_files(path: str | os.PathLike[str]) -> list[Path]:
    """Every local file that reading ``path`` touches: the file and its companions.

    Parameters
    ----------
    path : path-like or str
        An input as a command names it (``FILE.h5:/dataset`` counts as ``FILE.h5``).

    Returns
    -------
    list of Path
        ``path`` itself, the other half of a SigMF pair, and the files an HDF5
        file's external links or external datasets name; none for a URL.

    Examples
    --------
    >>> [p.name for p in input_files("rec.sigmf-meta")]
    ['rec.sigmf-meta', 'rec.sigmf-data']
    """
    if "://" in os.fsdecode(os.fspath(path)):
        return []
    first = _strip_member(Path(path))
    files = [first]
    pair = _SIGMF_PAIR.get(first.suffix.lower())
    if pair is not None:
        files.append(first.with_suffix(pair))
    if first.suffix.lower() in (".h5", ".hdf5", ".he5", ".hdf", ".nc", ".mat") and first.is_file():
        files += _hdf5_links(first)
    return files


class _Scope:
    """The inputs noted within one :func:`input_scope`."""

    def __init__(self) -> None:
        self.paths: list[Path] = []


_SCOPES: list[_Scope] = []
_SCOPES_LOCK = threading.Lock()


@contextmanager
def input_scope() -> Iterator[None]:
    """Within the body, every noted input is one that no :func:`atomic_file` replaces.

    A command of the command line runs in one scope: the recordings, pipelines,
    coefficient files and sessions it reads note themselves, and every writer of the
    command refuses them, whether or not it names them.

    Yields
    ------
    None
    """
    scope = _Scope()
    with _SCOPES_LOCK:
        _SCOPES.append(scope)
    try:
        yield
    finally:
        with _SCOPES_LOCK:
            _SCOPES.remove(scope)


def note_inputs(*paths: str | os.PathLike[str] | None) -> None:
    """Note files as read by the current :func:`input_scope` (nothing outside one).

    Parameters
    ----------
    *paths : path-like, str or None
        Files read; each counts with its companions (:func:`input_files`).
    """
    with _SCOPES_LOCK:
        if not _SCOPES:
            return
        scope = _SCOPES[-1]
    for p in paths:
        if p is not None:
            scope.paths += input_files(p)


def _scope_inputs() -> list[Path]:
    with _SCOPES_LOCK:
        return [p for scope in _SCOPES for p in scope.paths]


def refuse_overwriting_inputs(outputs: Iterable[str | os.PathLike[str] | None],
                              inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """Raise :class:`OutputIsInputError` when an output resolves to an input.

    Each input counts with the files reading it touches (:func:`input_files`: the
    other half of a SigMF pair, an HDF5 file's external links) and is noted in the
    current :func:`input_scope`, whose other inputs are refused too.  Compares the resolved paths (symbolic links
    followed) and, for files that exist, the device and inode (hard links).
    ``None`` entries are skipped; URLs are no local files and are skipped.

    Parameters
    ----------
    outputs : iterable of path-like, str or None
        The files a writer is about to write.
    inputs : iterable of path-like, str or None
        The files it reads.

    Raises
    ------
    OutputIsInputError
        One line naming the output and the input it would overwrite.
    """
    named = [i for i in inputs if i is not None]
    note_inputs(*named)
    _refuse([o for o in outputs if o is not None],
            [f for i in named for f in input_files(i)] + _scope_inputs())


def _refuse(outputs: list[str | os.PathLike[str]], inputs: list[Path]) -> None:
    ins = [(path, _identity(path)) for path in inputs]
    for o in outputs:
        out = Path(o)
        real, ident = _identity(out)
        for path, (in_real, in_ident) in ins:
            if real == in_real or (ident is not None and ident == in_ident):
                how = "is" if os.path.abspath(out) == os.path.abspath(path) else "resolves to"
                raise OutputIsInputError(f"{out}: {how} the input {path}; writing it would "
                                         "destroy the input, give another output")


def recording_files(rec: Any) -> list[Path]:
    """The files an open recording reads: its path and a companion (SigMF meta).

    Parameters
    ----------
    rec : Recording
        An open recording.

    Returns
    -------
    list of Path
        Its ``path`` and ``meta_path`` where they are local paths (a URL's
        recording gives none).
    """
    # a URL's object (read through fsspec) is no local file
    return [Path(p) for p in (rec.path, getattr(rec, "meta_path", None))
            if isinstance(p, (str, os.PathLike))]


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    # a killed process whose parent died too stays a zombie until an init that may
    # never reap it does: it answers signals but writes nothing any more
    try:
        line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return line[line.rfind(")") + 2:][:1] not in ("Z", "X")


def clean_stale_partials(dest: str | os.PathLike[str],
                         max_age_s: float | None = None) -> list[Path]:
    """Remove temporary files of killed writes in ``dest``'s folder.

    Tagged temporary files and folders (``.<name>.<pid>@<host>.<random>.partial``)
    of processes of this host that are no longer alive go whatever their age;
    those of other hosts, and untagged ones of ``dest``
    (``.<name>.<random>.partial``), once older than ``max_age_s``.

    Parameters
    ----------
    dest : path-like or str
        A destination file; its folder is cleaned.
    max_age_s : float, optional
        Age in seconds; by default ``SPECSCOPE_STALE_PARTIAL_S`` or
        :data:`STALE_PARTIAL_S`.

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
    host = _host()
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        name = e.name
        m = _TAGGED.match(name)
        if m is not None:
            if m.group(2) == host:
                if _pid_alive(int(m.group(1))):
                    continue
                old_enough = True
            else:
                old_enough = False
        elif name.startswith(prefix) and name.endswith(".partial"):
            middle = name[len(prefix):-len(".partial")]
            if not middle or "." in middle:  # mkstemp's random part only
                continue
            old_enough = False
        else:
            continue
        try:
            folder_made = m is not None and e.is_dir(follow_symlinks=False)
            if not (folder_made or e.is_file(follow_symlinks=False)):
                continue
            if not old_enough and now - e.stat(follow_symlinks=False).st_mtime < max_age_s:
                continue
            if folder_made:
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable by syncing the folder.

    Best effort: a platform that cannot open a folder, or a failed sync, is
    ignored.

    Parameters
    ----------
    folder : Path
        The folder whose entries are synced to disk.
    """
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
    except OSError:
        pass


def os_error_cause(exc: OSError) -> str:
    """What an ``OSError`` means, in the system's words ("No space left on device").

    HDF5's errors carry the errno but a multi-line story; the errno's text is used.

    Parameters
    ----------
    exc : OSError
        The error.

    Returns
    -------
    str
        ``os.strerror`` of its errno, else its text on one line (at most 200
        characters), else its type's name.

    Examples
    --------
    >>> import errno
    >>> os_error_cause(OSError(errno.ENOENT, "HDF5 says a lot"))
    'No such file or directory'
    """
    if exc.errno:
        try:
            return os.strerror(exc.errno)
        except ValueError:
            pass
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def write_failure(dest: str | os.PathLike[str], exc: BaseException,
                  tmp: str | os.PathLike[str] | None = None) -> RecordingError | None:
    """The one-line error of a write to ``dest`` that failed with ``exc``, or None.

    An ``OSError`` carries its cause; another library's error (libsndfile's
    "System error"), or a specscope error raised while handling one, is probed by
    appending to the temporary file ``tmp``, which is about to be removed: the file
    system's refusal, when there is one, is the cause named.  None when the failure
    is not one of the file system.

    Parameters
    ----------
    dest : path-like or str
        The destination, named in the message.
    exc : BaseException
        What the write raised.
    tmp : path-like or str, optional
        The temporary file being written, used to probe the file system.

    Returns
    -------
    RecordingError or None
        ``exc`` itself when it is a :class:`RecordingError`; a new one naming
        ``dest`` and the cause; or None.
    """
    if isinstance(exc, OSError) and exc.errno is not None:
        return RecordingError(f"{dest}: cannot write ({os_error_cause(exc)})")
    if tmp is None or not _library_error(exc):
        return exc if isinstance(exc, RecordingError) else None
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"\0" * (1 << 16))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as probe:
        if probe.errno is not None:
            return RecordingError(f"{dest}: cannot write ({os_error_cause(probe)})")
    return exc if isinstance(exc, RecordingError) else None


def _library_error(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised while handling, another library's error.

    Such errors (libsndfile's "System error", HDF5's) may hide the file system's cause.
    """
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, Cancelled) or not isinstance(exc, Exception):
            return False
        if not isinstance(exc, (SpecscopeError, OSError)):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class _GuardedIO:
    """The file object HDF5 writes through (h5py's ``fileobj`` driver); it never fails.

    HDF5 cannot recover from a failed write (no space, quota): it keeps half-closed
    objects that crash the process when they are freed.  So the first failed write
    is kept in :attr:`error` and reported to HDF5 as done; that write and the later
    ones go to a sparse memory file at the same offsets (up to :attr:`SPILL_MAX`
    bytes, the rest is dropped), where later reads find them.  HDF5 then flushes
    and closes cleanly and the caller raises :attr:`error` instead.
    """

    SPILL_MAX = 64 << 20

    def __init__(self, path: str | os.PathLike[str], mode: str) -> None:
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
        if mode in ("w", "w-", "x"):
            flags |= os.O_CREAT | os.O_TRUNC | (os.O_EXCL if mode != "w" else 0)
        elif mode == "a":
            flags |= os.O_CREAT
        self._fd = os.open(path, flags, 0o666)
        self._pos = 0
        self._size = os.fstat(self._fd).st_size
        self.error: OSError | None = None
        self._spill: int | None = None
        self._spilled: list[list[int]] = []  # sorted, disjoint [start, end) in the spill
        self._kept = 0

    # -- what the fileobj driver calls
    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = pos + (self._pos if whence == 1 else self._size if whence == 2 else 0)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def write(self, data: Any) -> int:
        mv = memoryview(data).cast("B")
        n, done = len(mv), 0
        while self.error is None and done < n:
            try:
                done += os.pwrite(self._fd, mv[done:], self._pos + done)
            except OSError as exc:
                self.error = exc
        if done < n:
            self._keep(mv[done:], self._pos + done)
        self._pos += n
        self._size = max(self._size, self._pos)
        return n

    def readinto(self, buf: Any) -> int:
        mv = memoryview(buf).cast("B")
        n = max(0, min(len(mv), self._size - self._pos))
        got = os.preadv(self._fd, [mv[:n]], self._pos) if n else 0
        mv[got:n] = bytes(n - got)  # past the file's end: a spilled or dropped range
        for start, end in self._spilled:
            lo, hi = max(start, self._pos), min(end, self._pos + n)
            if lo < hi:
                os.preadv(self._spill, [mv[lo - self._pos:hi - self._pos]], lo)
        self._pos += n
        return n

    def read(self, size: int = -1) -> bytes:
        buf = bytearray(max(0, self._size - self._pos) if size < 0 else size)
        return bytes(buf[:self.readinto(buf)])

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        if self.error is None:
            try:
                os.ftruncate(self._fd, size)
            except OSError as exc:
                self.error = exc
        self._size = size
        self._spilled = [[a, min(b, size)] for a, b in self._spilled if a < size]
        return size

    def flush(self) -> None:
        pass

    # -- the rest
    def _keep(self, mv: memoryview, at: int) -> None:
        """Keep a write that the file refused in the spill (or drop it past SPILL_MAX)."""
        if self._kept + len(mv) > self.SPILL_MAX:
            return
        if self._spill is None:
            self._spill = os.memfd_create("specscope-spill") if hasattr(os, "memfd_create") \
                else os.open(tempfile.mkstemp()[1], os.O_RDWR)  # pragma: no cover - Linux
        try:
            os.pwrite(self._spill, mv, at)
        except OSError:  # no memory either: dropped, reads find zeros
            return
        self._kept += len(mv)
        spans = sorted([*self._spilled, [at, at + len(mv)]])
        merged: list[list[int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self._spilled = merged

    def discard(self) -> None:
        """Empty the file before it is closed and removed: the data it held goes without
        being written back (closing and unlinking hundreds of MB took 0.1-0.3 s on ext4)."""
        with suppress(OSError):
            os.ftruncate(self._fd, 0)

    def close(self) -> None:
        for fd in (self._fd, self._spill):
            if fd is not None:
                with suppress(OSError):
                    os.close(fd)
        self._spill = None


_GUARDS: dict[int, _GuardedIO] = {}


def check_writes(f: Any) -> None:
    """Raise the first failed write of an HDF5 file opened by :func:`h5_for_writing`.

    Long writers call it after each block, to stop soon after the disk fills.

    Parameters
    ----------
    f : h5py.File
        The file.

    Raises
    ------
    OSError
        The write that failed (no space, quota, ...).
    """
    guard = _GUARDS.get(id(f))
    if guard is not None and guard.error is not None:
        raise guard.error


@contextmanager
def h5_for_writing(path: str | os.PathLike[str], mode: str = "w",
                   **options: Any) -> Iterator[Any]:
    """``h5py.File(path, mode)`` for a temporary file that is abandoned on any error.

    HDF5 writes through a file object that takes the file system's refusals
    itself (:func:`check_writes`), so a full disk never reaches the library.  On
    success the file is flushed and closed; a write that failed meanwhile then
    raises.  On an exception in the body the file is closed and the exception
    propagates; the caller removes the file.

    Parameters
    ----------
    path : path-like or str
        The temporary file.
    mode : str
        The ``h5py.File`` mode.
    **options
        Further ``h5py.File`` options (``track_order=True`` for a NetCDF file).

    Yields
    ------
    h5py.File
        The open file.

    Raises
    ------
    OSError
        A write to the file failed.
    """
    import h5py

    guard = _GuardedIO(path, mode)
    try:
        f = h5py.File(guard, mode, **options)
    except BaseException:
        guard.close()
        raise
    _GUARDS[id(f)] = guard
    kept = False
    try:
        try:
            yield f
            f.flush()
            kept = True
        finally:
            _GUARDS.pop(id(f), None)
            try:
                f.close()
            finally:
                if not kept:  # abandoned (an error, Cancel): the caller removes it
                    guard.discard()
                guard.close()
    except BaseException as exc:
        if guard.error is not None and isinstance(exc, Exception) \
                and not isinstance(exc, (OSError, Cancelled)):
            raise guard.error from exc  # what the body met came from the full disk
        raise
    if guard.error is not None:
        raise guard.error


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, what: str = "file name",
                updates_input: bool = False) -> Iterator[Path]:
    """A temporary path in ``path``'s folder, moved over ``path`` when the body succeeds.

    The body writes the yielded path (and may raise to abandon it); on success the
    data is fsynced and ``os.replace`` publishes it.  A file that is replaced keeps
    its permission bits; a new file gets those ``open()`` would give.  Stale
    temporary files of killed writes in the same folder are removed first.

    Parameters
    ----------
    path : path-like
        The destination.
    what : str
        What the destination should be, for the error when it is a folder
        (``"file name ending in .h5"``).
    updates_input : bool
        The destination is an input the writer updates on purpose (annotations
        saved into their recording's SigMF metadata); it is then not refused as an
        input of the current :func:`input_scope`.

    Yields
    ------
    Path
        The temporary file to write, in the destination's folder.

    Raises
    ------
    OutputIsInputError
        The destination is a file read in the current :func:`input_scope`.
    RecordingError
        The destination is a folder, its folder is missing or not writable, the
        file system refused the data (no space, quota, read-only), or the file
        cannot be moved into place.  The destination is then unchanged and no
        temporary file is left.
    """
    dest = Path(path)
    if not updates_input:
        _refuse([dest], _scope_inputs())
    if dest.is_dir():
        raise RecordingError(f"{dest}: is a folder; give a {what}")
    folder = dest.parent if str(dest.parent) else Path(".")
    if not folder.is_dir():
        raise RecordingError(f"{dest}: the folder {folder} does not exist")
    if os.path.lexists(dest) and not (dest.is_file() or not dest.exists()):
        raise RecordingError(f"{dest}: is not a regular file (a device, FIFO or socket); "
                             f"give a {what}")
    clean_stale_partials(dest)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{dest.name}.{owner_tag()}.",
                                   suffix=".partial")
    except OSError as exc:
        raise RecordingError(f"{dest}: cannot write in {folder} ({os_error_cause(exc)})") from None
    os.close(fd)
    try:
        yield Path(tmp)
        try:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            try:
                mode = stat.S_IMODE(os.stat(dest).st_mode)
            except OSError:
                mode = 0o666 & ~_UMASK  # mkstemp makes 0600; give what open() would
            os.chmod(tmp, mode)
        except OSError as exc:
            raise RecordingError(f"{dest}: cannot write ({os_error_cause(exc)})") from None
        try:
            os.replace(tmp, dest)
        except OSError as exc:
            raise RecordingError(f"{dest}: cannot replace the file ({os_error_cause(exc)})") from None
        fsync_folder(folder)
    except BaseException as exc:
        failure = write_failure(dest, exc, tmp)
        with suppress(OSError):  # emptied first, its blocks are freed at once
            os.truncate(tmp, 0)
        _remove(tmp)
        if failure is not None and failure is not exc:
            raise failure from None
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *,
                       what: str = "file name", updates_input: bool = False) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_file`.

    Parameters
    ----------
    path : path-like or str
        The destination.
    data : bytes
        The file's content.
    what : str
        What the destination should be, for the error when it is a folder.
    updates_input : bool
        The destination is an input updated on purpose (see :func:`atomic_file`).

    Raises
    ------
    RecordingError
        As :func:`atomic_file`; the destination is then unchanged.
    """
    with atomic_file(path, what=what, updates_input=updates_input) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
                      what: str = "file name", updates_input: bool = False) -> None:
    """Write ``text`` to ``path`` through :func:`atomic_file` (no newline translation).

    File names the system could not decode (``os.fsdecode``'s escapes) are written back as
    the bytes they came from.

    Parameters
    ----------
    path : path-like or str
        The destination.
    text : str
        The file's content.
    encoding : str
        The text encoding.
    what : str
        What the destination should be, for the error when it is a folder.
    updates_input : bool
        The destination is an input updated on purpose (see :func:`atomic_file`).

    Raises
    ------
    RecordingError
        As :func:`atomic_file`; the destination is then unchanged.
    """
    atomic_write_bytes(path, text.encode(encoding, "surrogateescape"), what=what,
                       updates_input=updates_input)
