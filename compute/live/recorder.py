"""Crash-safe HDF5 recording of a live stream, and recovery of a killed recording."""

from __future__ import annotations

import contextlib
import io
import os
import queue
import struct
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import RecordingError
from ..files import clean_stale_partials, fsync_folder, os_error_cause, owner_tag
from ..output import atomic_h5

__all__ = ["RECORDING_FORMAT", "LiveRecorder", "clear_write_flags", "recover_recording"]

#: format tag of a live recording (not a spectrogram export: it opens as a recording)
RECORDING_FORMAT = "specscope/live/1"

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_M32 = 0xFFFFFFFF


# the process umask, read once (os.umask can only be read by setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def _lookup3(data: bytes) -> int:
    """Bob Jenkins' lookup3 hash (``hashlittle``, seed 0): HDF5's metadata checksum."""
    n = len(data)
    a = b = c = (0xDEADBEEF + n) & _M32
    i = 0
    while n > 12:
        a = (a + int.from_bytes(data[i:i + 4], "little")) & _M32
        b = (b + int.from_bytes(data[i + 4:i + 8], "little")) & _M32
        c = (c + int.from_bytes(data[i + 8:i + 12], "little")) & _M32
        a = (a - c) & _M32 ^ _rot(c, 4)
        c = (c + b) & _M32
        b = (b - a) & _M32 ^ _rot(a, 6)
        a = (a + c) & _M32
        c = (c - b) & _M32 ^ _rot(b, 8)
        b = (b + a) & _M32
        a = (a - c) & _M32 ^ _rot(c, 16)
        c = (c + b) & _M32
        b = (b - a) & _M32 ^ _rot(a, 19)
        a = (a + c) & _M32
        c = (c - b) & _M32 ^ _rot(b, 4)
        b = (b + a) & _M32
        n -= 12
        i += 12
    if n == 0:
        return c
    tail = data[i:] + bytes(12 - n)
    a = (a + int.from_bytes(tail[0:4], "little")) & _M32
    b = (b + int.from_bytes(tail[4:8], "little")) & _M32
    c = (c + int.from_bytes(tail[8:12], "little")) & _M32
    for x, y, k in (("c", "b", 14), ("a", "c", 11), ("b", "a", 25), ("c", "b", 16),
                    ("a", "c", 4), ("b", "a", 14), ("c", "b", 24)):
        v = {"a": a, "b": b, "c": c}
        r = ((v[x] ^ v[y]) - _rot(v[y], k)) & _M32
        a, b, c = (r if x == "a" else a), (r if x == "b" else b), (r if x == "c" else c)
    return c


def clear_write_flags(path: str | os.PathLike[str]) -> bool:
    """Mark an HDF5 file as closed, as ``h5clear -s`` does.

    A writer that uses the latest file format (SWMR needs it) sets status
    flags in the superblock while the file is open; when it is killed they
    stay, and every HDF5 tool refuses the file ("file is already open for
    write").  This clears them and rewrites the superblock checksum.  Use it
    only on files whose writer is gone.

    Parameters
    ----------
    path : str or PathLike
        The HDF5 file.

    Returns
    -------
    bool
        True when flags were cleared, False when none were set (or the
        superblock version has none).

    Raises
    ------
    RecordingError
        Not an HDF5 file, or its superblock checksum does not match.
    """
    p = Path(path)
    fd = os.open(p, os.O_RDWR)
    try:
        return _clear_flags(fd, p)
    finally:
        os.close(fd)


def _clear_flags(fd: int, path: Path) -> bool:
    head = os.pread(fd, 64, 0)
    if head[:8] != _HDF5_SIGNATURE or len(head) < 12:
        # a user block moves the superblock; specscope writes none
        raise RecordingError(f"{path}: not an HDF5 file with its superblock at the start")
    version, offsets = head[8], head[9]
    if version < 2:
        return False  # superblocks 0 and 1 carry no status flags
    end = 12 + 4 * offsets  # base, extension, end-of-file and root addresses
    if len(head) < end + 4:
        raise RecordingError(f"{path}: truncated HDF5 superblock")
    body = bytearray(head[:end])
    if struct.unpack("<I", head[end:end + 4])[0] != _lookup3(bytes(body)):
        raise RecordingError(f"{path}: the HDF5 superblock checksum does not match; "
                             "not clearing its flags")
    if body[11] == 0:
        return False
    body[11] = 0
    os.pwrite(fd, bytes(body) + struct.pack("<I", _lookup3(bytes(body))), 0)
    return True


class _FlaglessFile(io.RawIOBase):
    """The recording's file as HDF5 sees it, with the superblock's status flags kept clear.

    HDF5 writes through this object (h5py's file-object driver).  Every write
    that carries the superblock has its "open for write" / SWMR flags cleared
    and its checksum redone before it reaches the disk, so the file on disk
    never says it is open: a killed writer leaves a file every HDF5 tool opens,
    and SWMR's write ordering keeps what is on disk consistent at any moment.

    A write or truncation the disk refuses (no space, quota, a read-only
    remount) is not reported to HDF5: its metadata cache does not survive a
    failed flush (the next flush or close fails again, and freeing its objects
    then crashes the process).  The error is kept in :attr:`failure` for the
    recorder to report, and the file is *abandoned*: the disk is not written
    again, and what HDF5 writes from then on (the rest of that flush, the
    flush of its caches at close) is kept in memory and read back from there.
    The disk keeps what was written before, in SWMR order.  :meth:`abandon`
    does the same on request; :meth:`detach` also forgets the descriptor
    (which the recorder then closes), so a late call from HDF5 can never reach
    a closed descriptor, or a new file that reused its number.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd: int | None = fd
        self._pos = 0
        #: after abandon(): the writes since then, in order, and the file's length
        self._overlay: list[tuple[int, bytes]] | None = None
        self._size = 0
        #: the first write or truncation the disk refused
        self.failure: OSError | None = None

    def abandon(self) -> None:
        """Stop writing to the disk; later writes and truncations are kept in memory."""
        if self._overlay is None:
            self._size = self._disk_size()
            self._overlay = []

    def detach(self) -> None:
        """:meth:`abandon`, and stop reading the disk: the descriptor is about to close."""
        self.abandon()
        self.fd = None

    def _disk_size(self) -> int:
        if self.fd is None:
            return 0
        try:
            return os.fstat(self.fd).st_size
        except OSError:
            return 0

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            self._pos = offset
        elif whence == io.SEEK_CUR:
            self._pos += offset
        else:
            if self._overlay is not None:
                end = self._size
            else:
                assert self.fd is not None
                end = os.fstat(self.fd).st_size
            self._pos = end + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buf: Any) -> int:
        view = memoryview(buf).cast("B")
        if self._overlay is None:
            assert self.fd is not None
            data = os.pread(self.fd, len(view), self._pos)
            n = len(data)
            view[:n] = data
            self._pos += n
            return n
        pos, n = self._pos, max(0, min(len(view), self._size - self._pos))
        data = bytearray(n)
        if self.fd is not None and n:
            with contextlib.suppress(OSError):
                disk = os.pread(self.fd, n, pos)
                data[:len(disk)] = disk
        for off, chunk in self._overlay:  # later writes win
            lo, hi = max(off, pos), min(off + len(chunk), pos + n)
            if lo < hi:
                data[lo - pos:hi - pos] = chunk[lo - off:hi - off]
        view[:n] = data
        self._pos += n
        return n

    def write(self, buf: Any) -> int:
        data = bytes(buf)
        n = len(data)
        if self._overlay is None:
            assert self.fd is not None
            disk = _flagless_superblock(data) if self._pos == 0 else data
            done = 0
            try:
                while done < n:
                    done += os.pwrite(self.fd, disk[done:], self._pos + done)
            except OSError as exc:
                self._fail(exc)
            else:
                self._pos += n
                return n
        assert self._overlay is not None
        self._overlay.append((self._pos, data))
        self._size = max(self._size, self._pos + n)
        self._pos += n
        return n

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        if self._overlay is None:
            assert self.fd is not None
            try:
                os.ftruncate(self.fd, size)
                return size
            except OSError as exc:
                self._fail(exc)
        self._size = size
        return size

    def _fail(self, exc: OSError) -> None:
        if self.failure is None:
            self.failure = exc
        self.abandon()

    def flush(self) -> None:
        pass

    def close(self) -> None:  # the recorder owns the descriptor
        super().close()


def _cause(exc: BaseException) -> str:
    """An exception's cause in a few words, on one line."""
    if isinstance(exc, OSError):
        return os_error_cause(exc)
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _flagless_superblock(data: bytes) -> bytes:
    """``data`` (written at offset 0) with the superblock's status flags cleared."""
    if len(data) < 12 or data[:8] != _HDF5_SIGNATURE or data[8] < 2 or data[11] == 0:
        return data
    end = 12 + 4 * data[9]
    if len(data) < end + 4:
        return data
    body = bytearray(data[:end])
    body[11] = 0
    return bytes(body) + struct.pack("<I", _lookup3(bytes(body))) + data[end + 4:]


class LiveRecorder:
    """Appends live samples (and frames) to an HDF5 file, readable after a crash.

    The file is written in SWMR mode (single writer, multiple readers): each
    chunk (``flush_seconds`` of input) is appended and flushed in an order that
    keeps the file consistent on disk, so a killed process leaves a file with
    everything up to the last flushed chunk.  The superblock's "open for
    write" flags never reach the disk (HDF5 writes through
    :class:`_FlaglessFile`), so at any moment the file opens in any HDF5 tool
    (``h5py.File(path, "r")``, ``h5dump``, HDF5 1.10 and later: the file
    format is held to 1.10's).

    The recording is written under a temporary name in the destination folder
    (``.<name>.<pid>@<host>.<random>.partial``) and moved over ``path`` with
    ``os.replace`` at the first flush that holds samples: until then a file
    already at ``path`` is left as it was, and a recording killed before it
    holds anything leaves only its temporary file (removed by the next write
    to that folder).  :meth:`close` finalises the file: it opens like any
    recording (``open_recording``) and its attribute ``complete`` is true.
    A recording that got no samples at all is not published (the old file
    stays) and :meth:`close` says so.

    When the disk refuses a write (no space, quota, read-only, permission)
    nothing more is written to it, the live view goes on, and :meth:`close`
    raises one line naming the file and the cause: a recording not yet
    published is removed (the old file stays as it was); a published one
    keeps what its last complete flush wrote, and opens in any HDF5 tool.
    The process never crashes on it: HDF5 never sees the failed write
    (:class:`_FlaglessFile` keeps it, and what follows, in memory).

    Layout: ``samples`` (samples, channels) float32 or complex64 with
    ``sample_rate``; for a spectrogram pipeline also ``spectrogram``
    (channels, frames, frequencies) float32 and ``frequency`` (Hz); the
    pipeline JSON, the source and the STFT parameters as attributes.

    Parameters
    ----------
    path : str or PathLike
        The HDF5 file to publish.
    sample_rate : float
        Samples per second (Hz) of the input.
    n_channels : int
        Channels of the input.
    is_complex : bool
        Whether samples are complex (IQ): stored as complex64, else float32.
    frequencies : numpy.ndarray, optional
        Bin frequencies in Hz of a spectrogram pipeline; its frames are recorded too.
    attrs : dict, optional
        Attributes for the file root (the pipeline, the source, STFT parameters).
    flush_seconds : float
        Seconds of input per flushed chunk.

    Raises
    ------
    RecordingError
        ``path`` is a folder, its folder is missing, or the file cannot be written.
    """

    def __init__(self, path: str | os.PathLike[str], *, sample_rate: float, n_channels: int,
                 is_complex: bool = False, frequencies: np.ndarray | None = None,
                 attrs: dict[str, Any] | None = None, flush_seconds: float = 0.5) -> None:
        import h5py

        self.path = Path(path)
        if self.path.is_dir():
            raise RecordingError(f"{self.path}: is a folder; give a file name ending in .h5")
        if os.path.lexists(self.path) and not (self.path.is_file() or not self.path.exists()):
            raise RecordingError(f"{self.path}: is not a regular file (a device, FIFO or "
                                 "socket); give a file name ending in .h5")
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            raise RecordingError(f"{self.path}: the folder {folder} does not exist")
        self.sample_rate = float(sample_rate)
        self.flush_samples = max(1, int(flush_seconds * self.sample_rate))
        clean_stale_partials(self.path)
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.{owner_tag()}.",
                                       suffix=".partial")
        except OSError as exc:
            raise RecordingError(f"{self.path}: cannot write in {folder} "
                                 f"({os_error_cause(exc)})") from None
        self._tmp: Path | None = Path(tmp)
        self._fd: int | None = fd
        try:  # the mode a plain open() would give, not mkstemp's private 0600
            os.fchmod(fd, 0o666 & ~_UMASK)
        except OSError:
            pass
        self._file = _FlaglessFile(fd)
        try:
            f = h5py.File(self._file, "w", libver=("v110", "v110"))
            self._f = f
            self._create(f, n_channels, is_complex, frequencies, attrs)
            self._check_disk()
        except (OSError, ValueError, RuntimeError) as exc:
            self._discard()
            raise RecordingError(f"{self.path}: cannot write ({_cause(exc)})") from None
        self.published = False
        self.samples_written = 0
        self._samples_flushed = 0
        self.frames_written = 0
        self._pend_s: list[np.ndarray] = []
        self._pend_f: list[np.ndarray] = []
        self._pending = 0
        self._q: queue.Queue[tuple[np.ndarray, np.ndarray | None] | None] = queue.Queue()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name="specscope-live-record")
        self._thread.start()

    def _create(self, f: Any, n_channels: int, is_complex: bool,
                frequencies: np.ndarray | None, attrs: dict[str, Any] | None) -> None:
        dtype = np.complex64 if is_complex else np.float32
        rows = max(1024, min(self.flush_samples, 1 << 16))
        self._samples = f.create_dataset("samples", shape=(0, n_channels),
                                         maxshape=(None, n_channels), dtype=dtype,
                                         chunks=(rows, n_channels))
        self._samples.attrs["sample_rate"] = self.sample_rate
        self._samples.attrs["units"] = "FS"
        self._spec = None
        if frequencies is not None:
            nf = int(np.size(frequencies))
            fds = f.create_dataset("frequency", data=np.asarray(frequencies, np.float64))
            fds.attrs["units"] = "Hz"
            self._spec = f.create_dataset("spectrogram", shape=(n_channels, 0, nf),
                                          maxshape=(n_channels, None, nf), dtype=np.float32,
                                          chunks=(1, max(1, min(1024, (1 << 18) // nf)), nf))
        f.attrs["format"] = RECORDING_FORMAT
        f.attrs["specscope_version"] = __version__
        f.attrs["created_utc"] = datetime.now(UTC).isoformat(timespec="seconds")
        f.attrs["sample_rate"] = self.sample_rate
        for k, v in (attrs or {}).items():
            f.attrs[k] = v
        # attributes cannot be added under SWMR: reserve the ones close() sets
        f.attrs["complete"] = False
        f.attrs["blocks_dropped"] = np.int64(0)
        f.swmr_mode = True

    def append(self, samples: np.ndarray, frames: np.ndarray | None = None) -> None:
        """Queue input samples (n, channels) and frames (k, channels, freq); returns at once."""
        self._q.put((samples, frames))

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                break
            if self.error is not None:
                continue
            s, fr = item
            self._pend_s.append(s)
            if fr is not None and fr.shape[0]:
                self._pend_f.append(fr)
            self._pending += s.shape[0]
            if self._pending >= self.flush_samples:
                self._write()
        if self.error is None:
            self._write()

    def _write(self) -> None:
        try:
            if self._pend_s:
                s = np.concatenate(self._pend_s)
                n0 = self.samples_written
                self._samples.resize((n0 + s.shape[0], s.shape[1]))
                self._samples[n0:] = s
                self.samples_written += s.shape[0]
            if self._spec is not None and self._pend_f:
                fr = np.concatenate(self._pend_f).transpose(1, 0, 2)
                k0 = self.frames_written
                self._spec.resize((fr.shape[0], k0 + fr.shape[1], fr.shape[2]))
                self._spec[:, k0:, :] = fr
                self.frames_written += fr.shape[1]
            self._f.flush()
            self._check_disk()
            self._samples_flushed = self.samples_written
            if self._fd is not None:
                # a superblock HDF5 wrote in pieces has not been seen whole by the
                # file object: what is flushed is consistent, so say it is closed
                _clear_flags(self._fd, self.path)
                if not self.published and self.samples_written:
                    self._publish()
        except Exception as exc:  # noqa: BLE001 -- keep the live view running; report it
            # nothing more reaches the disk: a published file keeps what its last
            # flush wrote, an unpublished one is removed at close()
            self._file.abandon()
            self.error = f"{self.path}: cannot write ({_cause(exc)})"
        self._pend_s, self._pend_f, self._pending = [], [], 0

    def _check_disk(self) -> None:
        """Raise the error of a write the disk refused since the file was opened."""
        if self._file.failure is not None:
            raise self._file.failure

    def _publish(self) -> None:
        """Move the temporary file over ``path``: it now holds samples."""
        assert self._fd is not None and self._tmp is not None
        os.fsync(self._fd)
        os.replace(self._tmp, self.path)
        self._tmp = None
        self.published = True
        fsync_folder(self.path.parent if str(self.path.parent) else Path("."))

    def _discard(self) -> None:
        """Close and remove the unpublished temporary file."""
        self._file.abandon()  # thrown away: HDF5's last flush goes to memory
        self._close_file()
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None

    def _close_file(self) -> None:
        """Close the HDF5 file, then its descriptor (never the other way round).

        After :meth:`_FlaglessFile.abandon` the close cannot fail on the disk;
        a close that fails anyway leaves the file object detached, so whatever
        HDF5 still writes when its objects are freed stays in memory.
        """
        f = getattr(self, "_f", None)
        try:
            if f is not None and f.id.valid:
                f.close()
        finally:
            self._file.detach()
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def close(self, *, blocks_dropped: int = 0) -> Path:
        """Write what is pending, mark the file complete and close it.

        Raises
        ------
        RecordingError
            When writing failed, or when nothing was recorded (``path`` is
            then left as it was).
        """
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()
        if not self.published:
            self._discard()
            raise RecordingError(self.error or f"{self.path}: nothing was recorded (no "
                                 "samples arrived); the file was not written")
        try:
            if self.error is None and self._f.id.valid:
                # the attributes were reserved before SWMR: modified in place, then
                # closed; the file on disk is consistent at every step
                self._f.attrs.modify("complete", True)
                self._f.attrs.modify("blocks_dropped", np.int64(blocks_dropped))
                self._f.flush()
                self._check_disk()
        except Exception as exc:  # noqa: BLE001
            self._file.abandon()
            self.error = f"{self.path}: cannot write ({_cause(exc)})"
        try:
            self._close_file()
            self._check_disk()
        except Exception as exc:  # noqa: BLE001
            self.error = self.error or f"{self.path}: cannot write ({_cause(exc)})"
        if self.error:
            seconds = self._samples_flushed / self.sample_rate
            raise RecordingError(f"{self.error}; the recording stopped there and keeps the "
                                 f"first {seconds:.1f} s")
        return self.path


def recover_recording(path: str | os.PathLike[str],
                      out: str | os.PathLike[str] | None = None) -> Path:
    """Copy what a killed live recording holds into a plain, complete HDF5 file.

    The copy opens everywhere (``h5py.File(out)``, ``open_recording``); its
    ``complete`` attribute stays false and ``recovered`` is true.

    Parameters
    ----------
    path : str or PathLike
        The killed recording.
    out : str or PathLike, optional
        The copy; ``path`` itself by default (replaced atomically).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    RecordingError
        ``path`` is not a readable live recording, or the copy cannot be written.
    """
    import h5py

    src = Path(path)
    try:
        f = h5py.File(src, "r", swmr=True)
    except OSError as exc:
        raise RecordingError(f"{src}: not a readable live recording ({exc})") from None
    with f, atomic_h5(out or src) as g:
        for k, v in f.attrs.items():
            g.attrs[k] = v
        g.attrs["recovered"] = True
        for name, ds in f.items():
            new = g.create_dataset(name, data=ds[...])
            for k, v in ds.attrs.items():
                new.attrs[k] = v
    return Path(out or src)
