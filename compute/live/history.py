"""The history of a live session: items by absolute index, in memory and spilled to disk."""

from __future__ import annotations

import collections
import os
import queue
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["DEFAULT_DISK_BYTES", "DEFAULT_HISTORY_BYTES", "History"]

#: default bytes of history kept in memory before spilling to disk
DEFAULT_HISTORY_BYTES = 256 << 20
#: default bytes of spilled history kept on disk (older history is forgotten)
DEFAULT_DISK_BYTES = 4 << 30


class _Chunk:
    """Consecutive items from ``start``: in memory (``data``) or spilled (``path``)."""

    __slots__ = ("count", "data", "nbytes", "path", "start")

    def __init__(self, start: int, data: np.ndarray) -> None:
        self.start = start
        self.count = 0
        self.data: np.ndarray | None = data
        self.path: Path | None = None
        self.nbytes = int(data.nbytes)


class History:
    """Items (spectrogram frames or samples) by absolute index, with a memory budget.

    Items are kept in chunks of about 1 MiB.  When the chunks in memory exceed
    ``memory_bytes`` the oldest are written to ``spill_dir`` by a background
    thread (off the processing path) and read back from there on demand; when
    the spilled chunks exceed ``disk_bytes`` the oldest are deleted and their
    items forgotten.  Appending is for one thread (the processing thread);
    reading is safe from any thread.

    Parameters
    ----------
    item_shape : tuple of int
        Shape of one item: (channels, frequencies) for frames, (channels,) for samples.
    dtype : dtype
    memory_bytes, disk_bytes : int
        Budgets; ``disk_bytes=0`` forgets instead of spilling.
    spill_dir : path, optional
        Folder for spilled chunks (a new temporary folder, removed by :meth:`close`,
        when omitted).
    chunk_items : int, optional
        Items per chunk (about 1 MiB by default).
    """

    def __init__(self, item_shape: tuple[int, ...], dtype: Any = np.float32, *,
                 memory_bytes: int = DEFAULT_HISTORY_BYTES, disk_bytes: int = DEFAULT_DISK_BYTES,
                 spill_dir: str | os.PathLike[str] | None = None,
                 chunk_items: int | None = None) -> None:
        self.item_shape = tuple(int(s) for s in item_shape)
        self.dtype = np.dtype(dtype)
        item_bytes = max(1, int(np.prod(self.item_shape)) * self.dtype.itemsize)
        # about 1 MiB per chunk, smaller for small budgets so that they can spill
        chunk_bytes = min(1 << 20, max(1, int(memory_bytes) // 8))
        self.chunk_items = int(chunk_items or max(1, chunk_bytes // item_bytes))
        if memory_bytes < 0 or disk_bytes < 0:
            raise InputError("memory_bytes and disk_bytes must be >= 0")
        self.memory_bytes = int(memory_bytes)
        self.disk_bytes = int(disk_bytes)
        self._given_dir = None if spill_dir is None else Path(spill_dir)
        self._spill_dir: Path | None = None
        self._lock = threading.Lock()        # the chunk list and counters
        self._disk_lock = threading.Lock()   # reading vs deleting spilled files
        self._chunks: collections.deque[_Chunk] = collections.deque()
        self._end = 0
        self._start = 0
        self._mem = 0
        self._disk = 0
        self._spill_q: queue.Queue[_Chunk | None] | None = None
        self._spiller: threading.Thread | None = None
        self._spilling: list[_Chunk] = []
        self._doomed: list[Path] = []
        self.spill_error: str | None = None

    # -- counters ---------------------------------------------------------------------------
    @property
    def start(self) -> int:
        """Index of the oldest item still held."""
        return self._start

    @property
    def end(self) -> int:
        """Items appended so far (the index of the next one)."""
        return self._end

    @property
    def memory_in_use(self) -> int:
        """Bytes of items held in memory."""
        return self._mem

    @property
    def disk_in_use(self) -> int:
        """Bytes of spilled items on disk."""
        return self._disk

    @property
    def spill_dir(self) -> Path | None:
        """The folder of spilled chunks, once something was spilled."""
        return self._spill_dir

    # -- writing (one thread) --------------------------------------------------------------
    def append(self, items: np.ndarray) -> None:
        """Add items shaped (n, *item_shape)."""
        n = int(items.shape[0])
        i = 0
        while i < n:
            with self._lock:
                last = self._chunks[-1] if self._chunks else None
            if last is None or last.data is None or last.count >= self.chunk_items or (
                    last.path is not None) or last in self._spilling:
                last = self._new_chunk()
            k = min(n - i, self.chunk_items - last.count)
            assert last.data is not None
            last.data[last.count:last.count + k] = items[i:i + k]
            with self._lock:
                last.count += k
                self._end += k
            i += k

    def _new_chunk(self) -> _Chunk:
        data = np.empty((self.chunk_items, *self.item_shape), self.dtype)
        c = _Chunk(self._end, data)
        with self._lock:
            self._chunks.append(c)
            self._mem += c.nbytes
            # chunks already on their way to disk will free their memory soon
            over = self._mem - self.memory_bytes - sum(o.nbytes for o in self._spilling)
            victims = []
            for old in self._chunks:
                if over <= 0 or old is c:
                    break
                if old.data is not None and old.path is None and old not in self._spilling:
                    victims.append(old)
                    over -= old.nbytes
            if not self.disk_bytes:
                for old in victims:
                    self._forget(old)
                victims = []
            self._spilling.extend(victims)
        for old in victims:
            self._spill(old)
        return c

    def _forget(self, c: _Chunk) -> None:
        """Drop the oldest chunk ``c`` (lock held)."""
        assert self._chunks[0] is c
        self._chunks.popleft()
        if c.data is not None:
            self._mem -= c.nbytes
            c.data = None
        self._start = self._chunks[0].start if self._chunks else self._end

    def _spill(self, c: _Chunk) -> None:
        if self._spiller is None:
            if self._given_dir is not None:
                self._given_dir.mkdir(parents=True, exist_ok=True)
                self._spill_dir = Path(tempfile.mkdtemp(prefix="history-", dir=self._given_dir))
            else:
                self._spill_dir = Path(tempfile.mkdtemp(prefix="specscope-live-"))
            self._spill_q = queue.Queue()
            self._spiller = threading.Thread(target=self._spill_loop, daemon=True,
                                             name="specscope-live-spill")
            self._spiller.start()
        assert self._spill_q is not None
        self._spill_q.put(c)

    def _spill_loop(self) -> None:
        assert self._spill_q is not None and self._spill_dir is not None
        while True:
            c = self._spill_q.get()
            if c is None:
                return
            path = self._spill_dir / f"{c.start:014d}.npy"
            try:
                assert c.data is not None
                np.save(path, c.data[:c.count])
            except OSError as exc:  # disk full: forget rather than grow without bound
                self.spill_error = f"history spill to {self._spill_dir} failed: {exc}"
                path = None
            with self._lock:
                self._spilling.remove(c)
                if c.data is not None:
                    self._mem -= c.nbytes
                c.data = None
                if path is not None:
                    c.path = path
                    c.nbytes = int(path.stat().st_size)
                    self._disk += c.nbytes
                self._evict_locked()
            self._delete_evicted()

    def _evict_locked(self) -> None:
        """Forget the oldest spilled chunks beyond the disk budget, and any lost ones."""
        while self._chunks:
            c = self._chunks[0]
            lost = c.data is None and c.path is None and c not in self._spilling
            if not (lost or (c.path is not None and self._disk > self.disk_bytes)):
                break
            if c.path is not None:
                self._disk -= c.nbytes
                self._doomed.append(c.path)
            self._forget(c)

    def _delete_evicted(self) -> None:
        with self._lock:
            doomed, self._doomed = self._doomed, []
        if doomed:
            with self._disk_lock:
                for p in doomed:
                    p.unlink(missing_ok=True)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until queued spills are written (for tests and orderly shutdown)."""
        t = time.monotonic() + timeout
        while self._spilling and time.monotonic() < t:
            time.sleep(0.005)

    # -- reading (any thread) ------------------------------------------------------------------
    def read(self, start: int, stop: int) -> tuple[int, np.ndarray]:
        """Items ``start:stop`` still held: ``(first index returned, items)``.

        Indices before :attr:`start` (forgotten) and from :attr:`end` on
        (not yet produced) are cut off; the first index says where the
        returned items begin.
        """
        for _ in range(3):
            try:
                return self._read(start, stop)
            except FileNotFoundError:  # evicted while we read: the start moved on
                continue
        return self._read(start, stop)

    def _read(self, start: int, stop: int) -> tuple[int, np.ndarray]:
        with self._lock:
            a = max(int(start), self._start)
            b = min(int(stop), self._end)
            pieces = []
            if b > a:
                for c in self._chunks:
                    c_end = c.start + c.count
                    if c_end <= a:
                        continue
                    if c.start >= b:
                        break
                    pieces.append((c.start, max(a, c.start), min(b, c_end), c.data, c.path))
        out = np.empty((max(0, b - a), *self.item_shape), self.dtype)
        for c0, i, j, data, path in pieces:
            if data is not None:
                out[i - a:j - a] = data[i - c0:j - c0]
            else:
                with self._disk_lock:
                    disk = np.load(path, mmap_mode="r")
                    out[i - a:j - a] = disk[i - c0:j - c0]
                    del disk
        return a, out

    def close(self) -> None:
        """Stop the spill thread and delete spilled chunks."""
        if self._spiller is not None and self._spill_q is not None:
            self._spill_q.put(None)
            self._spiller.join(10.0)
            self._spiller = None
        with self._lock:
            self._chunks.clear()
            self._mem = self._disk = 0
            self._start = self._end
        if self._spill_dir is not None:
            with self._disk_lock:
                shutil.rmtree(self._spill_dir, ignore_errors=True)
