"""Recordings given as URLs (``http://``, ``s3://``, ...), read by range through fsspec.

:class:`UrlPath` stands where the readers take a :class:`pathlib.Path`: it has
the parts of ``Path`` they use (``name``, ``suffix``, ``stem``, ``parent``,
``with_name``, ``stat().st_size``, ``is_file()``, ``open("rb")``) and nothing
that would let a local ``open()`` or ``np.memmap`` take the URL for a file
name.  Bytes come from the server a block at a time (``BLOCK_BYTES``, ranged
requests); every file object opened on one URL shares that URL's cache of
blocks, so the readers' sniffing and header checks fetch the first block
once.  :class:`RangeArray` replaces a memory map for raw, SigMF and ``.npy``
samples: a slice reads the bytes of those samples only.

Any scheme fsspec knows works when its package is installed (``http://`` and
``https://`` need ``aiohttp``; ``s3://`` needs ``s3fs``).  ``file://`` URLs
are local paths.

Nothing here imports Qt.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import stat
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import numpy as np

from ..errors import RecordingError

__all__ = ["BLOCK_BYTES", "RangeArray", "UrlPath", "is_url", "open_binary"]

#: bytes fetched per ranged request (and kept, up to ``MAX_BLOCKS`` per URL)
BLOCK_BYTES = 1 << 20
MAX_BLOCKS = 64

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(path: object) -> bool:
    """Whether ``path`` is a URL other than ``file://`` (``scheme://...``).

    Parameters
    ----------
    path : object
        A string, a :class:`UrlPath` or anything else (which is not a URL).

    Returns
    -------
    bool
        True for a :class:`UrlPath` or a ``scheme://`` string whose scheme is not ``file``.

    Examples
    --------
    >>> is_url("https://example.org/a.wav"), is_url("file:///tmp/a.wav"), is_url("a.wav")
    (True, False, False)
    """
    if isinstance(path, UrlPath):
        return True
    if not isinstance(path, str):
        return False
    m = _SCHEME.match(path)
    return m is not None and m.group(1).lower() != "file"


def local_path(path: str) -> str:
    """A ``file://`` URL as a local path; anything else unchanged."""
    if path[:7].lower() == "file://":
        return unquote(urlsplit(path).path)
    return path


class _Shared:
    """One URL's file system, size and cached file object (shared by its openers)."""

    def __init__(self, url: str) -> None:
        try:
            import fsspec
        except ImportError:
            raise RecordingError(f"{url}: reading URLs needs fsspec: pip install "
                                 "'specscope[urls]'") from None
        try:
            self.fs, self.fs_path = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{url}: cannot read this kind of URL ({first})") from None
        self.url = url
        self.lock = threading.Lock()
        self.info: dict[str, Any] | None = None
        self.file: Any = None

    def stat(self) -> dict[str, Any]:
        if self.info is None:
            self.info = dict(self.fs.info(self.fs_path))
        return self.info

    def handle(self) -> Any:
        if self.file is None:
            self.file = self.fs.open(self.fs_path, "rb", block_size=BLOCK_BYTES,
                                     cache_type="blockcache",
                                     cache_options={"maxblocks": MAX_BLOCKS},
                                     size=self.stat().get("size"))
        return self.file

    def close(self) -> None:
        with self.lock:
            if self.file is not None:
                self.file.close()
                self.file = None


class RemoteFile(io.RawIOBase):
    """A seekable, read-only file object over a URL: its own position, the URL's cache."""

    def __init__(self, shared: _Shared, size: int) -> None:
        super().__init__()
        self._shared = shared
        self._size = size
        self._pos = 0
        self.name = shared.url

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        pos = base + int(offset)
        if pos < 0:
            raise OSError(f"{self.name}: seek to {pos}, before the start")
        self._pos = pos
        return pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = min(len(view), max(0, self._size - self._pos))
        if n == 0:
            return 0
        with self._shared.lock:
            f = self._shared.handle()
            f.seek(self._pos)
            data = f.read(n)
        view[:len(data)] = data
        self._pos += len(data)
        return len(data)

    def fileno(self) -> int:
        raise OSError(f"{self.name}: a URL has no file descriptor")


class UrlPath:
    """A recording's address as a URL, standing in for a :class:`pathlib.Path`.

    Parameters
    ----------
    url : str
        The URL (``https://...``, ``s3://...``); nothing is fetched until needed.
    _shared : optional
        The URL's shared file system and block cache; made on first use when omitted.
    """

    def __init__(self, url: str, _shared: _Shared | None = None) -> None:
        self.url = str(url)
        self._shared = _shared
        parts = urlsplit(self.url)
        self._parts = parts
        self.name = posixpath.basename(unquote(parts.path))
        self.suffix = posixpath.splitext(self.name)[1] if "." in self.name.lstrip(".") else ""
        self.stem = self.name[:len(self.name) - len(self.suffix)] if self.suffix else self.name
        self.suffixes = ["." + s for s in self.name.lstrip(".").split(".")[1:]]

    @property
    def shared(self) -> _Shared:
        if self._shared is None:
            self._shared = _Shared(self.url)
        return self._shared

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"UrlPath({self.url!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UrlPath) and other.url == self.url

    def __hash__(self) -> int:
        return hash(("url", self.url))

    def __reduce__(self) -> tuple[Any, ...]:
        return (UrlPath, (self.url,))

    @property
    def parent(self) -> UrlPath:
        head = posixpath.dirname(self._parts.path.rstrip("/")) or "/"
        return UrlPath(urlunsplit((self._parts.scheme, self._parts.netloc, head, "", "")))

    def __truediv__(self, name: str) -> UrlPath:
        base = self._parts.path.rstrip("/")
        return UrlPath(urlunsplit((self._parts.scheme, self._parts.netloc,
                                   f"{base}/{quote(str(name))}", "", "")))

    def with_name(self, name: str) -> UrlPath:
        return self.parent / name

    def resolve(self) -> UrlPath:
        return self

    def problem(self) -> str | None:
        """Why the URL cannot be read as a file, in words; ``None`` when it can."""
        try:
            info = self.shared.stat()
        except RecordingError as exc:
            return str(exc).split(": ", 1)[-1]
        except FileNotFoundError as exc:
            # fsspec's http says "not found" for any failure; the cause tells them apart
            cause = exc.__cause__
            status = getattr(cause, "status", None)
            if cause is None or status in (404, 410):
                return "no such file at this URL"
            if status is not None:
                return f"cannot be read (the server answered {status} " \
                       f"{getattr(cause, 'message', '')})".replace(" )", ")")
            first = str(getattr(cause, "os_error", None) or cause).splitlines()[0]
            return f"cannot be read ({type(cause).__name__}: {first})"
        except Exception as exc:  # noqa: BLE001 - fsspec back ends raise their own types
            first = str(exc).splitlines()[0] if str(exc) else ""
            return f"cannot be read ({type(exc).__name__}{': ' + first if first else ''})"
        if info.get("type") == "directory":
            return "is a folder, not a file"
        if info.get("size") is None:
            return "the server does not say its size, so it cannot be read by range"
        return None

    def exists(self) -> bool:
        return self.problem() is None or self.is_dir()

    def is_file(self) -> bool:
        return self.problem() is None

    def is_dir(self) -> bool:
        try:
            return self.shared.stat().get("type") == "directory"
        except Exception:  # noqa: BLE001
            return False

    def is_symlink(self) -> bool:
        return False

    def stat(self) -> Any:
        """``st_size`` (and a regular file's ``st_mode``) of the URL's object."""
        try:
            size = self.shared.stat().get("size")
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.url}: no such file at this URL") from None
        return SimpleNamespace(st_size=int(size or 0), st_mode=stat.S_IFREG | 0o444)

    def open(self, mode: str = "rb") -> RemoteFile:
        """A file object reading by range (``mode`` must be ``"rb"``)."""
        if mode != "rb":
            raise OSError(f"{self.url}: a URL is read only (mode {mode!r})")
        return RemoteFile(self.shared, self.stat().st_size)

    def close(self) -> None:
        """Drop the cached blocks and the connection's file object."""
        if self._shared is not None:
            self._shared.close()


def open_binary(path: str | os.PathLike[str] | UrlPath) -> Any:
    """``open(path, "rb")`` for a local path, a ranged file object for a URL.

    Parameters
    ----------
    path : str, PathLike or UrlPath
        A local file or a URL.

    Returns
    -------
    file object
        Binary, read-only and seekable; a :class:`RemoteFile` for a URL.

    Raises
    ------
    OSError
        The local file cannot be opened.
    RecordingError
        The URL needs fsspec (or a back end) that is not installed.
    """
    if isinstance(path, UrlPath):
        return path.open("rb")
    if isinstance(path, str) and is_url(path):
        return UrlPath(path).open("rb")
    return open(path, "rb")


def as_path(path: str | os.PathLike[str] | UrlPath) -> Path | UrlPath:
    """A :class:`UrlPath` for a URL, a :class:`pathlib.Path` for anything else."""
    if isinstance(path, UrlPath):
        return path
    if isinstance(path, str) and is_url(path):
        return UrlPath(path)
    if isinstance(path, str):
        return Path(local_path(path))
    return Path(path)


class RangeArray:
    """Samples stored in a file, read by byte range; sliced like a ``(samples, width)`` array.

    Parameters
    ----------
    fh : file object
        Seekable, read-only (a :class:`RemoteFile`).
    offset : int
        Byte offset of the first element.
    dtype : numpy dtype
        Stored element type.
    shape : tuple
        Stored shape, 1-D or 2-D.
    time_axis : int
        The stored axis that is time (0 or 1).
    fortran : bool
        Whether the stored array is in Fortran order.
    """

    ndim = 2

    def __init__(self, fh: Any, offset: int, dtype: Any, shape: tuple[int, ...],
                 time_axis: int = 0, fortran: bool = False) -> None:
        self._fh = fh
        self._lock = threading.Lock()
        self.offset = int(offset)
        self.dtype = np.dtype(dtype)
        stored = tuple(int(n) for n in shape) if len(shape) == 2 else (int(shape[0]), 1)
        #: the shape as stored (1-D or 2-D)
        self.stored_shape = tuple(int(n) for n in shape)
        self._time = time_axis
        n = stored[time_axis]
        width = stored[1 - time_axis]
        self.shape = (n, width)
        # C order (n, w) or Fortran (w, n): a sample's channels lie side by side
        self._interleaved = (time_axis == 0) != bool(fortran) or width == 1

    def __len__(self) -> int:
        return self.shape[0]

    def _bytes(self, at: int, count: int) -> np.ndarray:
        size = self.dtype.itemsize
        with self._lock:
            self._fh.seek(self.offset + at * size)
            data = self._fh.read(count * size)
        if len(data) != count * size:
            raise RecordingError(f"{getattr(self._fh, 'name', 'file')}: expected "
                                 f"{count * size} bytes at {self.offset + at * size}, "
                                 f"got {len(data)} (truncated file?)")
        return np.frombuffer(data, dtype=self.dtype)

    def __getitem__(self, key: Any) -> np.ndarray:
        if not isinstance(key, slice):
            raise TypeError("a RangeArray is sliced along time only")
        a, b, step = key.indices(self.shape[0])
        b = max(a, b)
        n, w = self.shape
        if self._interleaved:
            out = self._bytes(a * w, (b - a) * w).reshape(b - a, w)
        else:
            out = np.empty((b - a, w), self.dtype)
            for c in range(w):
                out[:, c] = self._bytes(c * n + a, b - a)
        return out[::step] if step != 1 else out
