"""Where a tile engine keeps tiles beyond its memory cache: the disk cache and the spill.

:class:`EngineStores` holds the two :class:`~specscope.compute.view.store.TileStore`
of one :class:`~specscope.compute.view.tiles.TileEngine`:

- the *disk cache*, across sessions, in a folder named by the recording's
  identity and the analysis parameters (:func:`recording_identity`), for levels
  :data:`DISK_MIN_LEVEL` and up, written as tiles are computed;
- the *spill* of this session, for the tiles the memory cache drops (unless the
  disk cache has them), within a bound of bytes, removed when the engine goes.

Both write on threads of their own (see :mod:`specscope.compute.view.store`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .store import TileStore
from .tile_cache import Tile

#: levels at or above this are kept in the disk cache (each cell >= 8 frames: the
#: whole hour's level 3 is a third of a GB, and every view of 100-200 s reads it)
DISK_MIN_LEVEL = 3
#: bound of a session's spill of tiles the memory cache drops (the finer levels)
DEFAULT_SPILL_BYTES = 4 << 30


def recording_identity(path: Path, fingerprint: str | None = None, **params: object) -> str:
    """The disk cache's folder name for the recording at ``path`` analysed with
    ``params``: changes with the file's path, size or modification time.

    ``fingerprint`` stands for the size and time of a recording made of many files (a
    deployment's ``fingerprint()``: it changes when any of its files does)."""
    if fingerprint is not None:
        key = json.dumps({"path": str(path), "files": fingerprint, **params, "v": 2},
                         sort_keys=True)
        return hashlib.sha256(key.encode()).hexdigest()[:32]
    st = path.stat()
    key = json.dumps({"path": str(path.resolve()), "size": st.st_size,
                      "mtime": st.st_mtime_ns, **params, "v": 2}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class EngineStores:
    """The disk cache (``identity`` given) and the spill (``spill_bytes > 0``) of one
    engine in ``folder``, tiles of ``n_freq`` rows and ``tile_cells`` cells; neither
    without a folder."""

    def __init__(self, folder: str | os.PathLike[str] | None, identity: str | None,
                 n_freq: int, tile_cells: int, spill_bytes: int) -> None:
        self.disk = self.spill = None
        if not folder:
            return
        folder = Path(folder)
        if identity is not None:
            self.disk = TileStore(folder / identity, n_freq, tile_cells, background=True)
        if spill_bytes > 0:
            self.spill = TileStore(folder / "session", n_freq, tile_cells,
                                   max_bytes=spill_bytes, temporary=True, background=True)

    def _for(self, level: int) -> list[TileStore]:
        found = [self.disk] if self.disk is not None and level >= DISK_MIN_LEVEL else []
        return found + ([self.spill] if self.spill is not None else [])

    def has(self, level: int, index: int) -> bool:
        """Whether the tile is in the disk cache or the spill (or queued for one)."""
        return any(store.has(level, index) for store in self._for(level))

    def get(self, level: int, index: int) -> Tile | None:
        """The stored tile, or None."""
        for store in self._for(level):
            got = store.get(level, index)
            if got is not None:
                return Tile(level, index, *got)
        return None

    def save(self, tile: Tile) -> None:
        """Into the disk cache when its level is kept there and its cells are on the host
        (cells on the device stay there: saving them would bring every cell over)."""
        if self.disk is None or tile.level < DISK_MIN_LEVEL:
            return
        if tile.device is not None and not (tile.sums_on_host and tile.maxs_on_host):
            return
        self.disk.put(tile.level, tile.index, tile.sums, tile.maxs, tile.counts)

    def spill_tile(self, tile: Tile) -> None:
        """A tile the memory cache dropped: into the spill, unless the disk cache has it
        (or its cells are on the device, which would bring them over the bus)."""
        if self.spill is None or tile.device is not None:
            return
        if self.disk is not None and tile.level >= DISK_MIN_LEVEL \
                and self.disk.has(tile.level, tile.index):
            return
        self.spill.put(tile.level, tile.index, tile.sums, tile.maxs, tile.counts)

    def close(self) -> None:
        """Close both: the disk cache writes what is queued, the spill is removed."""
        for store in (self.disk, self.spill):
            if store is not None:
                store.close()
