"""Tiles kept in files: the disk cache across sessions and the spill of one session.

A :class:`TileStore` keeps one file per pyramid level, with a fixed slot per tile
(a 64-byte header written after the cells, then raw float32 sums and maxima), and
writes on a background thread so the thread that renders never waits for the disk.

See docs/explanation/rooms/view.md.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import logging
import os
import re
import shutil
import struct
import tempfile
import threading
import weakref
from pathlib import Path

import numpy as np

MAGIC = b"SPSTILE1"
HEADER = struct.Struct("<8sqqqqq")
HEADER_BYTES = 64
#: prefix of a session's spill folder; the rest is the process id and a random part
SPILL_PREFIX = "spill-"
#: a folder of the earlier format: a recording's identity (32 hex digits) ...
NPZ_FOLDER = re.compile(r"[0-9a-f]{32}")
#: ... holding a file per tile (or the temporary of one being written)
NPZ_TILE = re.compile(r"L\d{2}_\d{8}(\.tmp)?\.npz")
#: most bytes of cells a store's writer thread has waiting
DEFAULT_QUEUE_BYTES = 64 << 20
#: seconds a writer thread with nothing to write waits before it ends
WRITER_IDLE_S = 0.5
log = logging.getLogger(__name__)
#: set when the process exits (before the stores' finalizers run): they wait for their writers
_exiting = threading.Event()
_exit_hooked: list[bool] = []
_npz_checked: set[Path] = set()
_npz_lock = threading.Lock()


class TileStore:
    """Tiles of one engine in files, a slot per tile.

    Parameters
    ----------
    folder : str or Path
        Where the level files are (created when missing).  With ``temporary``,
        a new folder is made inside it and removed by :meth:`close` (or when
        the store is collected, or at exit).
    n_freq, tile_cells : int
        Rows of every tile, and cells of a full tile.
    max_bytes : int or None
        Bound of the bytes written (None: unbounded); a tile beyond it is not written.
    temporary : bool
        A session's spill rather than a persistent cache.
    background : bool
        Write on a thread of the store's own (see the module's notes), with at
        most ``queue_bytes`` of cells waiting.
    """

    def __init__(self, folder: str | os.PathLike[str], n_freq: int, tile_cells: int, *,
                 max_bytes: int | None = None, temporary: bool = False,
                 background: bool = False, queue_bytes: int = DEFAULT_QUEUE_BYTES) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if temporary:
            _remove_dead_spills(folder)
            folder = Path(tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-", dir=folder))
        else:
            remove_npz_tiles(folder.parent)
        self.folder = folder
        self.n_freq, self.tile_cells = int(n_freq), int(tile_cells)
        self.max_bytes = None if max_bytes is None else int(max_bytes)
        self.temporary = temporary
        self._files = _Slots(folder, self.n_freq, self.tile_cells, temporary)
        self._queue = _Queue(int(queue_bytes)) if background else None
        self._finalizer = weakref.finalize(self, _shutdown, self._files, self._queue,
                                           folder if temporary else None)
        _note_exit_once()  # registered after the finalizer's own exit hook: runs before it

    @property
    def nbytes(self) -> int:
        """Bytes of cells written or queued."""
        return self._files.nbytes

    @property
    def writing(self) -> bool:
        """Whether tiles are still written (False once the disk refused one, or closed)."""
        return self._finalizer.alive and not self._files.failed

    def slot_bytes(self, level: int) -> int:
        """Bytes of one slot of ``level`` (header and a full tile's cells)."""
        return self._files.slot_bytes(level)

    def has(self, level: int, index: int) -> bool:
        """Whether tile ``index`` of ``level`` is stored (or queued to be)."""
        if self._queue is not None and self._queue.holds((level, index)):
            return True
        return self._files.has(level, index) if self._finalizer.alive else False

    def get(self, level: int, index: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The cells of stored tile ``(level, index)``: ``(sums, maxs, counts)`` (the
        same array twice at level 0), or None (not stored, or its slot damaged).

        A tile still queued is served from the queue (the arrays handed to
        :meth:`put`; treat them as read-only)."""
        if self._queue is not None:
            item = self._queue.item((level, index))
            if item is not None:
                sums, maxs, counts = item
                return sums, (sums if level == 0 else maxs), counts
        return self._files.get(level, index) if self._finalizer.alive else None

    def put(self, level: int, index: int, sums: np.ndarray, maxs: np.ndarray,
            counts: np.ndarray) -> bool:
        """Store a tile's cells (``(n_freq, n_cells)`` float32 each, ``maxs`` unused at
        level 0) in its slot; False when over the budget, closed or no longer writing.

        In the background the arrays are kept, not copied, until written: the
        caller must not change them afterwards."""
        files = self._files
        size = (1 if level == 0 else 2) * self.n_freq * int(counts.size) * 4
        if not self._finalizer.alive:
            return False
        if self._queue is not None and self._queue.holds((level, index)):
            return True
        with files.lock:
            if files.failed or files.closed:
                return False
            files.fd(level)
            if index in files.known[level]:
                return True
            if self.max_bytes is not None and files.nbytes + size > self.max_bytes:
                return False
            files.nbytes += size
        if self._queue is None:
            return files.write(level, index, sums, maxs, counts, size)
        queued = self._queue.add((level, index), (sums, maxs, counts), size, files)
        if not queued:
            with files.lock:
                files.nbytes -= size
        return queued is not False

    def flush(self) -> None:
        """Wait until every queued tile is written (or dropped after a refused write)."""
        if self._queue is not None:
            self._queue.drain()

    def close(self) -> None:
        """Write what is queued (a spill drops it), close the files, and remove a
        temporary store's folder; returns when that is done."""
        if self._queue is not None:
            self._queue.wait_on_close = True
        self._finalizer()


class _Slots:
    """The level files of a store and what they hold (shared with its writer thread,
    which holds no reference to the store itself)."""

    def __init__(self, folder: Path, n_freq: int, tile_cells: int, temporary: bool) -> None:
        self.folder, self.n_freq, self.tile_cells = folder, n_freq, tile_cells
        self.temporary = temporary
        self.fds: dict[int, int] = {}
        self.known: dict[int, set[int]] = {}  # level -> indices with a complete slot
        self.lock = threading.RLock()
        self.idle = threading.Condition(self.lock)  # no read or write in flight
        self.busy = 0
        self.nbytes = 0
        self.failed = False
        self.closed = False

    def slot_bytes(self, level: int) -> int:
        arrays = 1 if level == 0 else 2
        return HEADER_BYTES + arrays * self.n_freq * self.tile_cells * 4

    def fd(self, level: int) -> int:
        """The file of ``level`` (opened and, when persistent, scanned on first use);
        called with the lock held."""
        fd = self.fds.get(level)
        if fd is None:
            fd = os.open(self.folder / f"L{level:02d}.tiles", os.O_RDWR | os.O_CREAT, 0o644)
            self.fds[level] = fd
            self.known[level] = set() if self.temporary else self._scan(level, fd)
        return fd

    def _scan(self, level: int, fd: int) -> set[int]:
        """Indices of the slots of a persistent level file whose headers are complete."""
        size, slot = os.fstat(fd).st_size, self.slot_bytes(level)
        found = set()
        for index in range(size // slot + 1):
            head = os.pread(fd, HEADER.size, index * slot)
            if len(head) == HEADER.size:
                magic, lv, ix, n_cells, _, rows = HEADER.unpack(head)
                if (magic == MAGIC and lv == level and ix == index and rows == self.n_freq
                        and 0 < n_cells <= self.tile_cells):
                    found.add(index)
        return found

    def has(self, level: int, index: int) -> bool:
        with self.lock:
            if self.closed:
                return False
            self.fd(level)
            return index in self.known[level]

    def get(self, level: int, index: int):
        with self.lock:
            if self.closed:
                return None
            fd = self.fd(level)
            if index not in self.known[level]:
                return None
            self.busy += 1
        try:
            offset = index * self.slot_bytes(level)
            head = os.pread(fd, HEADER.size, offset)
            if len(head) != HEADER.size:
                return None
            magic, lv, ix, n_cells, last, rows = HEADER.unpack(head)
            if magic != MAGIC or (lv, ix, rows) != (level, index, self.n_freq) \
                    or not 0 < n_cells <= self.tile_cells:
                with self.lock:
                    self.known[level].discard(index)
                return None
            arrays = 1 if level == 0 else 2
            cells = np.empty((arrays, self.n_freq, n_cells), np.float32)
            if os.preadv(fd, [cells], offset + HEADER_BYTES) != cells.nbytes:
                return None
        finally:
            self._done()
        counts = np.full(n_cells, 1 << level, np.int64)
        counts[-1] = last
        return cells[0], cells[-1], counts

    def _done(self) -> None:
        with self.lock:
            self.busy -= 1
            if not self.busy:
                self.idle.notify_all()

    def write(self, level: int, index: int, sums: np.ndarray, maxs: np.ndarray,
              counts: np.ndarray, size: int) -> bool:
        """Write one slot (its bytes already counted in ``nbytes``); a refused write
        turns the writing off (one log line) and returns False."""
        parts = [np.ascontiguousarray(sums, np.float32)]
        if level > 0:
            parts.append(np.ascontiguousarray(maxs, np.float32))
        header = HEADER.pack(MAGIC, level, index, int(counts.size), int(counts[-1]),
                             self.n_freq)
        with self.lock:
            if self.closed or self.failed:
                self.nbytes -= size
                return False
            fd = self.fd(level)
            self.busy += 1
        try:
            write_slot(fd, index * self.slot_bytes(level), parts, header)
        except OSError as e:
            self.fail(e, size)
            return False
        finally:
            self._done()
        with self.lock:
            self.known[level].add(index)
        return True

    def fail(self, error: BaseException, size: int = 0) -> None:
        """Writing turned off after ``error`` (logged once)."""
        with self.lock:
            self.nbytes -= size
            first, self.failed = not self.failed, True
        if first:
            what = "spill" if self.temporary else "disk cache"
            log.warning("tile %s in %s: writing turned off (%s); tiles not stored are "
                        "computed again when needed", what, self.folder, error)

    def close(self) -> None:
        """Close the files once no read or write uses them."""
        with self.lock:
            self.closed = True
            while self.busy:
                self.idle.wait()
            for fd in self.fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.fds.clear()


def write_slot(fd: int, offset: int, parts: list[np.ndarray], header: bytes) -> None:
    """Write a tile's cells to its slot at ``offset``, then its header (so a slot whose
    header is complete holds its cells); raises OSError when the disk refuses."""
    n = sum(p.nbytes for p in parts)
    if os.pwritev(fd, parts, offset + HEADER_BYTES) != n:
        raise OSError(errno.ENOSPC, "short write")
    if os.pwrite(fd, header, offset) != len(header):
        raise OSError(errno.ENOSPC, "short write")


class _Queue:
    """Tiles waiting to be written, bounded in bytes, and the thread writing them.

    A tile stays readable here until its slot is written and known to the files."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.items: dict[tuple[int, int], tuple] = {}  # insertion order: oldest first
        self.sizes: dict[tuple[int, int], int] = {}
        self.bytes = 0
        self.cond = threading.Condition()
        self.stopped = False
        self.thread: threading.Thread | None = None
        self.pid = os.getpid()  # a forked child has no writer thread: it writes nothing
        self.cleanup = None  # what the writer does last, when the store did not wait for it
        self.finished = False  # the writer thread has left its loop
        self.wait_on_close = False  # an explicit close waits for the writer

    def holds(self, key: tuple[int, int]) -> bool:
        with self.cond:
            return key in self.items

    def item(self, key: tuple[int, int]) -> tuple | None:
        with self.cond:
            return self.items.get(key)

    def add(self, key: tuple[int, int], item: tuple, size: int, files: _Slots) -> bool | None:
        """Queue a tile: True; None when it is queued already; False when the writing
        stopped (closed, or the disk refused a tile)."""
        with self.cond:
            if key in self.items:
                return None
            while (self.items and self.bytes + size > self.max_bytes and not self.stopped
                   and not files.failed and self.thread is not threading.current_thread()):
                self.cond.wait()
            if self.stopped or files.failed or os.getpid() != self.pid:
                return False
            self.items[key] = item
            self.sizes[key] = size
            self.bytes += size
            if self.thread is None:
                self.thread = threading.Thread(target=_write_queued, args=(self, files),
                                               name="specscope-tile-writer", daemon=True)
                self.thread.start()
            self.cond.notify_all()
        return True

    def drain(self) -> None:
        with self.cond:
            while self.items and self.thread is not None and self.thread.is_alive():
                self.cond.wait(0.5)

    def stop(self, discard: bool) -> threading.Thread | None:
        """No more tiles taken; the queued ones dropped (``discard``) or still written."""
        with self.cond:
            self.stopped = True
            if discard:
                self.items.clear()
                self.sizes.clear()
                self.bytes = 0
            self.cond.notify_all()
            return self.thread


def _write_queued(queue: _Queue, files: _Slots) -> None:
    """The writer thread: the oldest queued tile to its slot, until stopped and empty.

    A writer with nothing to write for ``WRITER_IDLE_S`` ends (the next tile queued
    starts another), so a store nobody closes holds no thread while it is idle."""
    while True:
        with queue.cond:
            if not queue.items and not queue.stopped:
                queue.cond.wait(WRITER_IDLE_S)
                if not queue.items and not queue.stopped:
                    queue.thread = None  # (under the lock: add() starts a new one)
                    return
            if not queue.items:
                break
            key, item = next(iter(queue.items.items()))
            size = queue.sizes[key]
        try:
            ok = files.write(*key, *item, size)
        except Exception as e:  # noqa: BLE001 - never leave the queue waiting on a dead thread
            files.fail(e, size)
            ok = False
        with queue.cond:
            if queue.items.pop(key, None) is not None:  # (not dropped by a close meanwhile)
                queue.bytes -= queue.sizes.pop(key)
            if not ok and files.failed:  # the disk refused: drop the rest
                for k in queue.items:
                    with files.lock:
                        files.nbytes -= queue.sizes[k]
                queue.items.clear()
                queue.sizes.clear()
                queue.bytes = 0
            queue.cond.notify_all()
    with queue.cond:
        queue.finished = True
        cleanup = queue.cleanup
    if cleanup is not None:
        cleanup()


def _shutdown(files: _Slots, queue: _Queue | None, folder: Path | None) -> None:
    """Stop the writer (writing what is queued unless the store is temporary), close the
    files and remove a temporary store's folder.

    :meth:`TileStore.close` and the exit of the process wait for the writer; a
    persistent store that is merely collected leaves its writer to finish the
    queue and close the files, so whoever dropped the engine does not wait."""
    def finish() -> None:
        files.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    writer = None if queue is None else queue.stop(discard=folder is not None)
    if writer is not None:
        mine = writer is threading.current_thread()
        later = folder is None and not queue.wait_on_close and not _exiting.is_set()
        with queue.cond:
            if not queue.finished and (mine or later):
                queue.cleanup = finish  # the writer finishes when its queue is empty
                return
        writer.join()
    finish()



def _note_exit_once() -> None:
    with _npz_lock:
        if not _exit_hooked:
            atexit.register(_exiting.set)  # atexit runs its hooks last registered first
            _exit_hooked.append(True)


def remove_npz_tiles(parent: Path) -> int:
    """Remove tiles of the earlier ``.npz`` format from the cache folder ``parent``, once
    per process and folder; returns the files removed.

    Only regular files named as that format named them (``L03_00000012.npz``, or
    ``L03_00000012.tmp.npz`` left by a write cut short) inside sub-folders named
    by a recording's identity (32 hex digits) are removed, and such a folder
    only when it is left empty: nothing else in the folder is touched, and no
    link is followed.  A file that cannot be removed is left (it is never read).
    """
    parent = Path(parent)
    key = parent.absolute()
    with _npz_lock:
        if key in _npz_checked:
            return 0
        _npz_checked.add(key)
    removed = 0
    try:
        subs = [e for e in os.scandir(parent)
                if NPZ_FOLDER.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for sub in subs:
        try:
            with os.scandir(sub.path) as entries:
                old = [e.path for e in entries
                       if NPZ_TILE.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
        except OSError:
            continue
        for path in old:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed += 1
        if old:
            with contextlib.suppress(OSError):
                os.rmdir(sub.path)  # only when nothing else is left in it
    return removed


def _remove_dead_spills(parent: Path) -> None:
    """Remove spill folders left by processes that no longer run."""
    for sub in parent.glob(f"{SPILL_PREFIX}*"):
        try:
            pid = int(sub.name[len(SPILL_PREFIX):].split("-", 1)[0])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(sub, ignore_errors=True)
        except OSError:
            pass  # alive, owned by someone else
