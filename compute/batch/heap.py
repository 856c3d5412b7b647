"""A heap that keeps its blocks while a batch task runs, where the environment fixed it lean.

glibc serves an allocation above its mmap threshold (128 KiB at start) with
a mapping of its own, faulted in page by page and unmapped when freed.  It
normally raises that threshold itself when such a block is freed, so a
process that allocates and frees the same mid-size arrays soon keeps them in
its heap.  Setting ``MALLOC_TRIM_THRESHOLD_`` or ``MALLOC_MMAP_THRESHOLD_``
in the environment turns that adjustment off, and Dask's nanny sets
``MALLOC_TRIM_THRESHOLD_=65536`` for every worker it starts
(``distributed.nanny.pre-spawn-environ``).  There, every block of a
streamed task (a chunk's frames, spectrum, power: about 1 MB each) is mapped
and unmapped each time: a detector over an hour of audio took twice its CPU
time, half of it in page faults (575,000 of them against 4,000).

:func:`roomy_heap` raises both thresholds (mmap 32 MiB, the most glibc
allows; trim 256 MiB) while a task runs, and only in a process whose
environment fixed them; when the last task of the process leaves, it puts
back the environment's values and trims the heap, so the memory goes back to
the system as the environment asked.  Elsewhere (another C library, a
process whose heap tunes itself) it does nothing.

Nothing here imports Qt.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import threading
from collections.abc import Iterator

__all__ = ["roomy_heap"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: glibc's mmap threshold at start, and the most it accepts on 64-bit systems
_MMAP_DEFAULT = 128 * 1024
_MMAP_ROOMY = 32 * 1024 * 1024
_TRIM_ROOMY = 256 * 1024 * 1024

_lock = threading.Lock()
_depth = 0


def _libc() -> ctypes.CDLL | None:
    """glibc (with ``mallopt`` and ``malloc_trim``), or None."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        lib.gnu_get_libc_version  # noqa: B018 - glibc only
        lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.malloc_trim.argtypes = [ctypes.c_size_t]
        return lib
    except (OSError, AttributeError):
        return None


_LIBC = _libc() if os.name == "posix" else None


def _env_bytes(name: str) -> int | None:
    value = os.environ.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _fixed() -> tuple[int, int] | None:
    """The environment's (trim, mmap) thresholds, or None when the heap tunes itself."""
    trim = _env_bytes("MALLOC_TRIM_THRESHOLD_")
    mmap = _env_bytes("MALLOC_MMAP_THRESHOLD_")
    if _LIBC is None or (trim is None and mmap is None):
        return None
    return (trim if trim is not None else _MMAP_DEFAULT,
            mmap if mmap is not None else _MMAP_DEFAULT)


@contextlib.contextmanager
def roomy_heap() -> Iterator[bool]:
    """Run the body with the heap keeping mid-size blocks.

    Nests and may be entered from several threads: the thresholds go back
    when the last body leaves.

    Yields
    ------
    bool
        True where the thresholds were raised (glibc, with thresholds fixed by the
        environment); False where nothing changed.
    """
    global _depth
    fixed = _fixed()
    if fixed is None:
        yield False
        return
    with _lock:
        if _depth == 0:
            _LIBC.mallopt(_M_MMAP_THRESHOLD, _MMAP_ROOMY)
            _LIBC.mallopt(_M_TRIM_THRESHOLD, _TRIM_ROOMY)
        _depth += 1
    try:
        yield True
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                trim, mmap = fixed
                _LIBC.mallopt(_M_TRIM_THRESHOLD, trim)
                _LIBC.mallopt(_M_MMAP_THRESHOLD, mmap)
                _LIBC.malloc_trim(0)
