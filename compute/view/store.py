"""Tiles kept in files: the disk cache across sessions and the spill of one session.

A :class:`TileStore` keeps one file per pyramid level in its folder, with a
fixed slot per tile (``index * slot_bytes``): a 64-byte header, then the sums
and (above level 0) the maxima as raw float32.  Writing a tile is one
``pwrite`` of its cells, reading it one ``preadv`` into a new array, with no
archive and no checksum to compute (an ``.npz`` took eight times as long), so
a tile that was computed once is read back in a fraction of a millisecond
instead of being transformed again.

The header (magic, level, index, cells, frames in the last cell, rows) is
written after the cells, so a slot whose header reads back complete holds its
cells; a slot with any other header is treated as missing and the tile is
computed again.  Slots of tiles never written are holes of a sparse file.

Two uses, by the tile engine:

- the *disk cache* (persistent, keyed by the recording's identity and the
  analysis parameters): coarse levels are written as they are computed, so
  reopening a file shows them without reading the recording;
- the *spill* (``temporary=True``, deleted when the engine goes): tiles the
  memory cache drops are written here, within ``max_bytes``, and read back when
  a view needs them again.

Tiles of the earlier on-disk format (one ``.npz`` file per tile, in a folder per
recording named by its 32-hex-digit identity) are never read; opening a
persistent store removes them from its cache folder, once per process
(:func:`remove_npz_tiles`).
"""

from __future__ import annotations

import contextlib
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
    """

    def __init__(self, folder: str | os.PathLike[str], n_freq: int, tile_cells: int, *,
                 max_bytes: int | None = None, temporary: bool = False) -> None:
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
        self.nbytes = 0
        self._fds: dict[int, int] = {}
        self._known: dict[int, set[int]] = {}  # level -> indices with a complete slot
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _close, self._fds,
                                           folder if temporary else None)

    def slot_bytes(self, level: int) -> int:
        """Bytes of one slot of ``level`` (header and a full tile's cells)."""
        arrays = 1 if level == 0 else 2
        return HEADER_BYTES + arrays * self.n_freq * self.tile_cells * 4

    def _fd(self, level: int) -> int:
        fd = self._fds.get(level)
        if fd is None:
            fd = os.open(self.folder / f"L{level:02d}.tiles", os.O_RDWR | os.O_CREAT, 0o644)
            self._fds[level] = fd
            self._known[level] = set() if self.temporary else self._scan(level, fd)
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
        """Whether tile ``index`` of ``level`` is stored."""
        with self._lock:
            if self._finalizer.alive:
                self._fd(level)
                return index in self._known[level]
            return False

    def get(self, level: int, index: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The cells of stored tile ``(level, index)``: ``(sums, maxs, counts)`` (the
        same array twice at level 0), or None (not stored, or its slot damaged)."""
        with self._lock:
            if not self._finalizer.alive:
                return None
            fd = self._fd(level)
            if index not in self._known[level]:
                return None
        offset = index * self.slot_bytes(level)
        head = os.pread(fd, HEADER.size, offset)
        if len(head) != HEADER.size:
            return None
        magic, lv, ix, n_cells, last, rows = HEADER.unpack(head)
        if magic != MAGIC or (lv, ix, rows) != (level, index, self.n_freq) \
                or not 0 < n_cells <= self.tile_cells:
            with self._lock:
                self._known[level].discard(index)
            return None
        arrays = 1 if level == 0 else 2
        cells = np.empty((arrays, self.n_freq, n_cells), np.float32)
        if os.preadv(fd, [cells], offset + HEADER_BYTES) != cells.nbytes:
            return None
        counts = np.full(n_cells, 1 << level, np.int64)
        counts[-1] = last
        return cells[0], cells[-1], counts

    def put(self, level: int, index: int, sums: np.ndarray, maxs: np.ndarray,
            counts: np.ndarray) -> bool:
        """Write a tile's cells (``(n_freq, n_cells)`` float32 each, ``maxs`` unused at
        level 0) to its slot; False when over the budget or the disk refuses."""
        n_cells = int(counts.size)
        arrays = 1 if level == 0 else 2
        size = arrays * self.n_freq * n_cells * 4
        with self._lock:
            if not self._finalizer.alive:
                return False
            fd = self._fd(level)
            if index in self._known[level]:
                return True
            if self.max_bytes is not None and self.nbytes + size > self.max_bytes:
                return False
            self.nbytes += size
        offset = index * self.slot_bytes(level)
        try:
            parts = [np.ascontiguousarray(sums, np.float32)]
            if level > 0:
                parts.append(np.ascontiguousarray(maxs, np.float32))
            os.pwritev(fd, parts, offset + HEADER_BYTES)
            os.pwrite(fd, HEADER.pack(MAGIC, level, index, n_cells, int(counts[-1]),
                                      self.n_freq), offset)
        except OSError:
            with self._lock:
                self.nbytes -= size
            return False  # a full disk loses only the speed-up
        with self._lock:
            self._known[level].add(index)
        return True

    def close(self) -> None:
        """Close the files (and remove a temporary store's folder)."""
        with self._lock:
            self._finalizer()


def _close(fds: dict[int, int], folder: Path | None) -> None:
    for fd in fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


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
