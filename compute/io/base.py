"""The Recording model and the reader registry.

A :class:`Recording` is an opened file, read lazily: its metadata is known at
open time and :meth:`Recording.read` returns only the samples asked for.
Readers register themselves per format with :func:`register_reader`;
:func:`open_recording` asks each reader, in order of priority, whether it
accepts a path, and opens it with the first that does.
"""

from __future__ import annotations

import errno
import importlib
import inspect
import os
import stat
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np

from ..annotations import Annotation
from ..errors import InputError, RecordingError, SpecscopeError, shown
from ..files import note_inputs, recording_files
from .remote import UrlPath, as_path, is_url


class Recording(ABC):
    """An opened recording.

    Subclasses implement :meth:`_read` and set the metadata attributes.  Reading
    is thread-safe: the compute thread reads while the GUI thread looks at the
    metadata.

    Parameters
    ----------
    path : str or PathLike
        The file, or an ``http(s)://`` URL, which stays a URL and is read by range.
    """

    #: short name of the file format, e.g. ``"WAV"``
    format: str = ""
    #: samples per second (per channel)
    sample_rate: float = 0.0
    #: number of samples per channel
    n_samples: int = 0
    #: number of channels
    n_channels: int = 1
    #: whether samples are complex (IQ)
    is_complex: bool = False
    #: centre frequency in Hz for RF captures, else ``None``
    center_frequency: float | None = None
    #: physical unit of a sample value
    units: str = "FS"
    #: time of the first sample, ISO 8601 (e.g. ``"2024-05-01T12:00:00Z"``), else ``None``
    start_time: str | None = None
    #: SHA-512 (hex) of the data file as its metadata states it (SigMF ``core:sha512``),
    #: else ``None``; exports check it while hashing the source
    sha512: str | None = None

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # a URL stays one (read by range); a path becomes a Path
        self.path: Any = as_path(path)
        self.metadata: dict[str, Any] = {}
        #: regions of interest the file carries, times in seconds from the first sample
        self.annotations: list[Annotation] = []
        #: problems found in the file that did not stop it from opening
        self.warnings: list[str] = []
        self._lock = threading.Lock()

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.n_samples / self.sample_rate if self.sample_rate else 0.0

    @property
    def dtype(self) -> np.dtype:
        """Sample type returned by :meth:`read`."""
        return np.dtype(np.complex64 if self.is_complex else np.float32)

    def read(self, start: int = 0, stop: int | None = None,
             channels: int | list[int] | None = None) -> np.ndarray:
        """Read samples ``start:stop``.

        Parameters
        ----------
        start, stop : int
            Sample indices, clipped to the recording like a slice.
        channels : int or list of int, optional
            Channel index or indices; all channels when omitted.

        Returns
        -------
        numpy.ndarray
            float32 (complex64 for IQ) array shaped ``(samples, channels)``.
        """
        start, stop, _ = slice(start, stop).indices(self.n_samples)
        stop = max(stop, start)
        chans = self.channel_list(channels)
        with self._lock:
            data = self._read(start, stop)
        data = np.asarray(data, dtype=self.dtype)
        if data.ndim == 1:
            data = data[:, None]
        if data.shape[0] != stop - start:
            raise RecordingError(
                f"{self.path}: expected {stop - start} samples at {start}, "
                f"the file gave {data.shape[0]} (truncated file?)")
        if chans == list(range(data.shape[1])) and data.flags.owndata \
                and data.flags.c_contiguous:
            return data  # a fresh array of every channel: no copy
        return np.ascontiguousarray(data[:, chans])

    def channel_list(self, channels: int | list[int] | None) -> list[int]:
        """Channel numbers as a list: all for None, one for an int; checked against the file.

        Raises
        ------
        InputError
            A channel is out of range.
        """
        if channels is None:
            return list(range(self.n_channels))
        chans = [channels] if isinstance(channels, (int, np.integer)) else list(channels)
        for c in chans:
            if not 0 <= int(c) < self.n_channels:
                raise InputError(
                    f"channel={c} is out of range; {self.path.name} has "
                    f"{self.n_channels} channel(s), numbered 0..{self.n_channels - 1}")
        return [int(c) for c in chans]

    @abstractmethod
    def _read(self, start: int, stop: int) -> np.ndarray:
        """Return samples ``start:stop`` of all channels, shaped (samples, channels)."""

    def close(self) -> None:  # noqa: B027 - optional: readers without handles keep this one
        """Release the file handle."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> dict[str, Any]:
        """Metadata as a JSON-ready dict (what ``specscope info`` prints)."""
        return {
            "path": str(self.path),
            "format": self.format,
            "sample_rate": float(self.sample_rate),
            "n_samples": int(self.n_samples),
            "n_channels": int(self.n_channels),
            "duration_s": float(self.duration),
            "is_complex": bool(self.is_complex),
            "center_frequency": self.center_frequency,
            "start_time": self.start_time,
            "units": self.units,
            "annotations": [a.to_dict() for a in self.annotations],
            "warnings": self.warnings,
            "metadata": self.metadata,
        }

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.path.name!r} {self.format} "
                f"{self.sample_rate:g} Hz, {self.n_channels} ch, {self.n_samples} samples>")


@dataclass(frozen=True)
class ReaderSpec:
    """A registered reader: which paths it accepts and how it opens them.

    Parameters
    ----------
    name : str
        Format name, e.g. ``"audio"``.
    extensions : tuple of str
        Lower-case suffixes with the dot.
    opener : callable
        ``opener(path, **options) -> Recording``.
    sniff : callable, optional
        ``sniff(path) -> bool`` looking at the file's content.
    priority : int
        Higher is asked first.
    description : str
        One line for menus and ``--help``; not compared.
    options : frozenset of str, optional
        Option names the opener takes; ``None`` when it takes any.
    """

    name: str
    extensions: tuple[str, ...]
    opener: Callable[..., Recording]
    sniff: Callable[[Path], bool] | None = None
    priority: int = 0
    description: str = field(default="", compare=False)
    #: option names the opener takes; ``None``: any (the opener takes ``**options``)
    options: frozenset[str] | None = None

    def accepts(self, path: Path) -> bool:
        """Whether this reader takes ``path``: its content (``sniff``) or its suffix."""
        if self.sniff is not None:
            try:
                if self.sniff(path):
                    return True
            except OSError:
                return False
        return path.suffix.lower() in self.extensions


_READERS: list[ReaderSpec] = []


def register_reader(name: str, extensions: list[str] | tuple[str, ...],
                    opener: Callable[..., Recording], *,
                    sniff: Callable[[Path], bool] | None = None,
                    priority: int = 0, description: str = "",
                    options: list[str] | tuple[str, ...] | None = None) -> ReaderSpec:
    """Register a reader for a format.

    Parameters
    ----------
    name : str
        Format name, e.g. ``"audio"``.
    extensions : sequence of str
        Lower-case suffixes with the dot, e.g. ``(".wav", ".flac")``.
    opener : callable
        ``opener(path, **options) -> Recording``.
    sniff : callable, optional
        ``sniff(path) -> bool`` looking at the file's content; tried before the
        extension so a mislabelled file still opens with the right reader.
    priority : int
        Higher is asked first.
    description : str
        One line for menus and ``--help``.
    options : sequence of str, optional
        The option names the opener takes.  By default they are read from the
        opener's signature (its keyword parameters after the path; any name when
        it takes ``**options``).  :func:`open_recording` rejects other names.

    Returns
    -------
    ReaderSpec
        The registered reader; it replaces any earlier one of the same name.
    """
    accepted = frozenset(options) if options is not None else _signature_options(opener)
    spec = ReaderSpec(name, tuple(e.lower() for e in extensions), opener, sniff,
                      priority, description, accepted)
    _READERS[:] = [r for r in _READERS if r.name != name] + [spec]
    _READERS.sort(key=lambda r: -r.priority)
    return spec


def _signature_options(opener: Callable[..., Recording]) -> frozenset[str] | None:
    try:
        params = list(inspect.signature(opener).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    # the first positional parameter is the path
    if named and named[0].kind is named[0].POSITIONAL_OR_KEYWORD:
        named = named[1:]
    return frozenset(p.name for p in named if not p.name.startswith("_"))


def readers() -> list[ReaderSpec]:
    """The registered readers, highest priority first.

    Returns
    -------
    list of ReaderSpec
        A copy of the registry.
    """
    return list(_READERS)


def split_member(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """Split ``FILE.h5:/path/to/dataset`` into the file and the member.

    A path that exists is returned whole; otherwise the first ``:`` whose left
    side is an existing file splits it.  ``C:\\x`` style drive letters are left
    alone because ``C`` is not a file.

    Parameters
    ----------
    path : str or PathLike
        A file path, possibly followed by ``:member``.

    Returns
    -------
    path : pathlib.Path
        The file.
    member : str or None
        The member inside it, ``None`` when the path names no member.
    """
    text = os.fspath(path)
    p = Path(text)
    if p.exists():
        return p, None
    i = text.find(":")
    while i != -1:
        head, tail = text[:i], text[i + 1:]
        if head and tail and Path(head).is_file():
            return Path(head), tail
        i = text.find(":", i + 1)
    return p, None


def file_problem(path: Path, what: str = "a file") -> str | None:
    """Why ``path`` cannot be opened for reading, in words; ``None`` when it can.

    Tells apart a missing file, a dangling symbolic link, a loop of symbolic
    links, a folder and a file without read permission.
    """
    try:
        path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            return f"is a symbolic link to {shown(os.readlink(path))}, which does not exist"
        return "no such file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop (the links point at each other)"
        if exc.errno == errno.ENAMETOOLONG:
            return "the name is too long for the file system"
        if exc.errno == errno.ENOTDIR:
            return "no such file (a part of the path is not a folder)"
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    except ValueError:  # a NUL byte in the name
        return "the name holds a NUL character, which no file name can"
    if path.is_dir():
        return f"is a folder, not {what}"
    if not path.is_file():  # opening a FIFO would block; a device or socket is no file
        return _special_kind(path) + f", not {what}"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def _special_kind(path: Path) -> str:
    mode = path.stat().st_mode
    for test, kind in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"is {kind}"
    return "is not a regular file"


def _format_label(spec: ReaderSpec, path: Path) -> str:
    suffix = path.suffix.lstrip(".")
    if suffix.isalnum():
        return f"{suffix.upper()} files"
    # e.g. ".sigmf-meta": the first word of the description reads better
    words = spec.description.split()
    return f"{words[0] if words else spec.name} files"


def _open_with(spec: ReaderSpec, path: Path, options: dict[str, Any]) -> Recording:
    if spec.options is not None:
        for name in options:
            if name not in spec.options:
                takes = (f"takes: {', '.join(sorted(spec.options))}" if spec.options
                         else "takes no options")
                raise InputError(f"{name} does not apply to {_format_label(spec, path)} "
                                 f"({path.name}; the {spec.name} reader {takes})")
    try:
        rec = spec.opener(path, **options)
    except SpecscopeError:
        raise
    except (OSError, ValueError, KeyError, IndexError, TypeError, RuntimeError,
            EOFError, UnicodeError) as exc:
        # a malformed file can trip a parser anywhere: one line, not a traceback
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise RecordingError(f"{path}: cannot open as {spec.name} "
                             f"({type(exc).__name__}{': ' + first if first else ''})") from exc
    note_inputs(*recording_files(rec))  # a command never writes over what it reads
    return rec


def open_recording(path: str | os.PathLike[str], *, format: str | None = None,
                   **options: Any) -> Recording:
    """Open a recording lazily.

    Parameters
    ----------
    path : str or PathLike
        The file.  ``FILE.h5:/group/dataset`` (or ``FILE.mat:variable``) names a
        dataset inside a container, like the ``dataset`` option.  A folder opens as a
        deployment, its recordings as one (``specscope.compute.deployment``).
    format : str, optional
        Reader name to use instead of detecting it (``"raw"``, ``"sigmf"``,
        ``"hdf5"``, ``"npy"``, ``"mat"``, ``"audio"``).
    **options
        Passed to the reader, e.g. ``sample_rate``, ``center_frequency``,
        ``dtype``, ``offset`` for raw samples, ``dataset`` for HDF5.  Options
        left as ``None`` count as not given.

    Returns
    -------
    Recording
        The opened recording; samples are read on demand.

    Raises
    ------
    RecordingError
        The file is missing, unreadable, or no reader accepts it.
    InputError
        An option is invalid or does not apply to the file's format.
    """
    options = {k: v for k, v in options.items() if v is not None}
    if isinstance(path, (str, bytes)) and not path.strip():
        # an empty name is no file: it would open the working folder as a deployment
        raise InputError(f"path={path!r} is empty; give a recording's file, folder or URL")
    if is_url(path):
        p: Any = path if isinstance(path, UrlPath) else UrlPath(str(path))
        problem = p.problem()
        if problem is not None:
            raise RecordingError(f"{p}: {problem}")
        return _open_found(p, format, options)
    p, member = split_member(path)
    if member is not None:
        given = options.get("dataset")
        if given is not None and str(given) != member:
            raise InputError(f"{p.name}: the path names dataset {member!r} and "
                             f"dataset={given!r} names another; give one of them")
        options["dataset"] = member
    if member is None and p.is_dir():
        return _open_folder(p, format, options)
    problem = file_problem(p, "a recording")
    if problem is not None:
        raise RecordingError(f"{p}: {problem}")
    return _open_found(p, format, options)


#: opens a folder of recordings as one (a deployment); see register_folder_opener
_FOLDER_OPENER: list[Callable[..., Recording]] = []


def register_folder_opener(opener: Callable[..., Recording]) -> None:
    """Make ``opener(folder, **options)`` what :func:`open_recording` does with a folder.

    ``specscope.compute.deployment`` registers itself; :func:`open_recording` imports it
    on the first folder (it sits above this room).
    """
    _FOLDER_OPENER[:] = [opener]


def _open_folder(p: Path, format: str | None, options: dict[str, Any]) -> Recording:
    if format is not None:
        raise InputError(f"format={format!r} does not apply to a folder ({p}); a folder "
                         "opens as a deployment of the recordings in it")
    if not _FOLDER_OPENER:
        importlib.import_module(__name__.rsplit(".", 2)[0] + ".deployment")
    return _FOLDER_OPENER[0](p, **options)


def _open_found(p: Any, format: str | None, options: dict[str, Any]) -> Recording:
    """Open an existing file (Path or UrlPath): the named reader, or the first that accepts it."""
    if format is not None:
        for spec in _READERS:
            if spec.name == str(format).lower():
                return _open_with(spec, p, options)
        known = ", ".join(r.name for r in _READERS)
        raise InputError(f"format={format!r} is unknown; expected one of: {known}")
    for spec in _READERS:
        if spec.accepts(p):
            return _open_with(spec, p, options)
    known = ", ".join(sorted({e for r in _READERS for e in r.extensions}))
    raise RecordingError(f"{p}: not a recording specscope can read (known: {known}); "
                         "for raw samples give format='raw' and a dtype=")




def time_axis(shape: tuple[int, ...]) -> int:
    """Axis holding time in a 1-D or 2-D array: 0, unless axis 1 is longer.

    Time-first ``(samples, channels)`` is the house layout; a 2-D array that is
    wider than tall (e.g. ``(4, 1_000_000)``, or MATLAB data stored transposed
    in HDF5) is read as ``(channels, samples)``.
    """
    return 1 if len(shape) == 2 and shape[1] > shape[0] else 0


# -- files read by offset ----------------------------------------------------------------


def size_text(n_bytes: int) -> str:
    """A file size for a message: ``"4.0 GB"``, ``"419.4 MB"``, ``"1000 B"``.

    Parameters
    ----------
    n_bytes : int
        The size in bytes.

    Returns
    -------
    str
        Whole bytes below 10 kB, else one decimal in the largest unit of 1000 that fits.

    Examples
    --------
    >>> size_text(4_000_000_000), size_text(1000), size_text(15_000)
    ('4.0 GB', '1000 B', '15.0 kB')
    """
    if n_bytes < 10**4:
        return f"{int(n_bytes)} B"
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes / 10**3:.1f} kB"


class FileChangedError(RecordingError):
    """A file shrank, or was removed or replaced, while it was being read.

    Attributes
    ----------
    path : str
        The file.
    size_at_open : int
        Its size in bytes when it was opened (what is read of it).
    size_now : int or None
        Its size when the change was found; ``None`` when it was removed or replaced.
    """

    def __init__(self, path: str | os.PathLike[str], size_at_open: int,
                 size_now: int | None) -> None:
        self.path, self.size_at_open, self.size_now = str(path), int(size_at_open), size_now
        if size_now is None:
            text = (f"{path} was removed or replaced while being read "
                    f"({size_text(size_at_open)} at open)")
        else:
            was, now = size_text(size_at_open), size_text(size_now)
            if was == now:  # a few bytes: the rounded sizes would read the same
                was, now = f"{size_at_open} B", f"{size_now} B"
            text = f"{path} shrank from {was} to {now} while being read"
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        # errors of batch tasks cross processes
        return (type(self), (self.path, self.size_at_open, self.size_now))


class SteadyFile:
    """One read-only descriptor on a local file, read by offset up to its size at open.

    Reads go through the descriptor (``preadv`` where the system has it), never
    through a memory map, so a file that another process truncates gives
    :class:`FileChangedError` (one line) where a mapped page would kill the process
    with ``SIGBUS``.  A file that grows is read only up to its size at open; one that
    is removed or renamed over keeps its data behind the descriptor, and a read then
    raises :class:`FileChangedError` too (what it holds is no longer the file named).

    Parameters
    ----------
    path : str or PathLike
        The file.

    Raises
    ------
    OSError
        The file cannot be opened.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fh = open(self.path, "rb", buffering=0)  # closed by close()
        st = os.fstat(self._fh.fileno())
        #: size in bytes at open: nothing past it is read
        self.size = int(st.st_size)
        # some file systems report no links at all; then a removal cannot be seen
        self._linked = st.st_nlink > 0
        self._lock = threading.Lock()  # for the seek-and-read fallback

    def fileno(self) -> int:
        """The descriptor."""
        return self._fh.fileno()

    def check(self) -> None:
        """Raise :class:`FileChangedError` when the file is shorter than at open or removed."""
        try:
            st = os.fstat(self._fh.fileno())
        except (OSError, ValueError):  # closed, or a share that went away
            raise FileChangedError(self.path, self.size, None) from None
        if self._linked and st.st_nlink == 0:
            raise FileChangedError(self.path, self.size, None)
        if st.st_size < self.size:
            raise FileChangedError(self.path, self.size, int(st.st_size))

    def read_into(self, buf: Any, offset: int) -> None:
        """Fill ``buf`` (a writable C-contiguous buffer) with the bytes at ``offset``.

        Raises
        ------
        FileChangedError
            The file shrank below the bytes asked for, or was removed, since the open.
        RecordingError
            The bytes asked for lie past the size at open, or the system failed to read.
        """
        view = memoryview(buf).cast("B")
        want = len(view)
        if offset < 0 or offset + want > self.size:
            raise RecordingError(f"{self.path}: bytes {offset}:{offset + want} lie past the "
                                 f"end ({self.size} bytes at open)")
        got = 0
        try:
            while got < want:
                n = self._pread(view[got:], offset + got)
                if n <= 0:
                    break
                got += n
        except OSError as exc:
            self.check()  # a removed file on a share reads as ESTALE: say what happened
            raise RecordingError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        self.check()
        if got < want:  # shrank and grew back between the read and the check
            raise FileChangedError(self.path, self.size, offset + got)

    def read_bytes(self, offset: int, count: int) -> bytes:
        """``count`` bytes at ``offset`` (see :meth:`read_into`)."""
        buf = bytearray(count)
        self.read_into(buf, offset)
        return bytes(buf)

    if hasattr(os, "preadv"):
        def _pread(self, view: memoryview, offset: int) -> int:
            return os.preadv(self._fh.fileno(), [view], offset)
    else:  # pragma: no cover - systems without preadv (Windows)
        def _pread(self, view: memoryview, offset: int) -> int:
            with self._lock:
                self._fh.seek(offset)
                return self._fh.readinto(view) or 0

    def close(self) -> None:
        """Close the descriptor."""
        self._fh.close()
