"""The bounded ring of sample blocks between a live source and the processing thread."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["DEFAULT_RING_BLOCKS", "DEFAULT_RING_SECONDS", "BlockRing", "ring_blocks_for"]

#: default blocks the ring between source and processing holds (at least)
DEFAULT_RING_BLOCKS = 64
#: default seconds of signal the ring holds: a stall of the processing thread shorter
#: than this (the machine busy, a garbage collection, a slow disk) loses nothing
DEFAULT_RING_SECONDS = 2.0


def ring_blocks_for(sample_rate: float, block: int,
                    seconds: float = DEFAULT_RING_SECONDS) -> int:
    """Blocks a ring needs to hold ``seconds`` of signal (at least :data:`DEFAULT_RING_BLOCKS`).

    Parameters
    ----------
    sample_rate : float
        Samples per second (Hz).
    block : int
        Samples per block.
    seconds : float
        Signal the ring should hold, in seconds.

    Returns
    -------
    int
        The ring's capacity in blocks.

    Examples
    --------
    >>> ring_blocks_for(48000.0, 256), ring_blocks_for(48000.0, 4096)
    (375, 64)
    """
    per_block = max(1, int(block)) / max(float(sample_rate), 1e-9)
    return max(DEFAULT_RING_BLOCKS, math.ceil(seconds / per_block))


class BlockRing:
    """A bounded single-producer, single-consumer ring of sample blocks.

    :meth:`put` never blocks: when the ring is full the block is dropped and
    counted (a real-time source must not wait).  The indices are only written
    by one side each (``_head`` by the producer, ``_tail`` by the consumer), so
    no lock guards the slots; an :class:`threading.Event` wakes a waiting
    consumer.

    Parameters
    ----------
    capacity : int
        Blocks held at most.
    """

    def __init__(self, capacity: int = DEFAULT_RING_BLOCKS) -> None:
        if capacity < 1:
            raise InputError(f"capacity={capacity} must be >= 1 block")
        self.capacity = int(capacity)
        self._slots: list[Any] = [None] * self.capacity
        self._head = 0  # blocks accepted (producer only)
        self._tail = 0  # blocks taken (consumer only)
        self._ready = threading.Event()
        self._space = threading.Event()
        self._closed = False
        #: blocks refused because the ring was full
        self.dropped_blocks = 0
        #: samples in those blocks
        self.dropped_samples = 0
        #: most blocks ever waiting at once
        self.high_water = 0

    def __len__(self) -> int:
        return self._head - self._tail

    @property
    def closed(self) -> bool:
        """True once the producer said no more blocks will come."""
        return self._closed

    def put(self, block: np.ndarray) -> bool:
        """Add a block (the ring keeps the reference); False, counted, when full."""
        used = self._head - self._tail
        if used >= self.capacity:
            self.dropped_blocks += 1
            self.dropped_samples += int(block.shape[0])
            return False
        self._slots[self._head % self.capacity] = (block, time.perf_counter())
        self._head += 1
        self.high_water = max(self.high_water, used + 1)
        self._ready.set()
        return True

    def put_wait(self, block: np.ndarray, stop: threading.Event | None = None) -> bool:
        """Add a block, waiting for room (for unpaced sources); False when ``stop`` is set."""
        while self._head - self._tail >= self.capacity:
            if stop is not None and stop.is_set():
                return False
            self._space.clear()
            if self._head - self._tail >= self.capacity:
                self._space.wait(0.05)
        return self.put(block)

    def get(self, timeout: float | None = None) -> tuple[np.ndarray, float] | None:
        """The oldest ``(block, put time)``, or None after ``timeout`` s (or when closed)."""
        if self._head == self._tail:
            self._ready.clear()
            if self._head == self._tail:
                if self._closed:
                    return None
                self._ready.wait(timeout)
                if self._head == self._tail:
                    return None
        i = self._tail % self.capacity
        item = self._slots[i]
        self._slots[i] = None
        self._tail += 1
        self._space.set()
        return item

    def close(self) -> None:
        """Producer side: no more blocks; wakes the consumer."""
        self._closed = True
        self._ready.set()
