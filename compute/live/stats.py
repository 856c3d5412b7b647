"""Counters of a live session: per-block latency histogram and the stats snapshot."""

from __future__ import annotations

import collections
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["LatencyStats", "LiveStats"]


class LatencyStats:
    """Per-block latencies in a fixed log histogram (2 % bins): flat memory for any run.

    Percentiles are the geometric centre of the bin holding them (within 1 %);
    the maximum and the mean are exact.

    Parameters
    ----------
    recent : int
        How many of the latest latencies ``recent`` keeps.
    """

    _LO, _RATIO, _BINS = 1e-7, 1.02, 1200  # 0.1 us .. ~2e3 s

    def __init__(self, recent: int = 4096) -> None:
        self._counts = np.zeros(self._BINS + 1, np.int64)
        self._log_ratio = math.log(self._RATIO)
        self.count = 0
        self.total = 0.0
        self.max = 0.0
        #: the last ``recent`` latencies in seconds (for a live readout)
        self.recent: collections.deque[float] = collections.deque(maxlen=recent)

    def add(self, seconds: float) -> None:
        """Count one latency of ``seconds``."""
        i = 0 if seconds <= self._LO else int(math.log(seconds / self._LO) / self._log_ratio) + 1
        self._counts[min(i, self._BINS)] += 1
        self.count += 1
        self.total += seconds
        self.max = max(self.max, seconds)
        self.recent.append(seconds)

    def percentile(self, q: float) -> float:
        """Seconds below which ``q`` % of the latencies are."""
        if self.count == 0:
            return 0.0
        counts = self._counts.copy()
        rank = q / 100.0 * counts.sum()
        i = int(np.searchsorted(np.cumsum(counts), max(rank, 1), side="left"))
        if i == 0:
            return self._LO
        centre = self._LO * self._RATIO ** (i - 0.5)
        return min(centre, self.max)


@dataclass
class LiveStats:
    """A snapshot of a session's counters (``to_dict`` gives JSON types).

    Attributes
    ----------
    blocks_processed : int
        Blocks taken from the ring and processed.
    blocks_dropped : int
        Blocks lost: refused by a full ring, or lost by the source itself.
    samples_processed : int
        Samples in the processed blocks.
    samples_dropped : int
        Samples in the blocks the ring refused.
    source_overflows : int
        Blocks the source lost (audio driver overflows).
    latency_ms_median, latency_ms_p99, latency_ms_max, latency_ms_mean : float
        Processing time per block in milliseconds.
    delay_ms_p99 : float
        99th percentile of the time from a block entering the ring to the end of
        its processing, in milliseconds.
    block : int
        Samples per block.
    block_ms : float
        Length of a block in milliseconds.
    sample_rate : float
        Samples per second (Hz).
    channels : int
        Channels of the source.
    frames : int
        Items (frames or samples) produced so far.
    history_first : int
        Index of the oldest item the history still holds.
    history_memory_bytes, history_disk_bytes : int
        Bytes of history held in memory and spilled to disk.
    ring_high_water : int
        Most blocks ever waiting in the ring at once.
    elapsed_s : float
        Seconds since the session started (until it stopped).
    running : bool
        Whether the session is still processing.
    error : str or None
        The error that stopped processing, spilling or recording, if any.
    """

    blocks_processed: int
    blocks_dropped: int
    samples_processed: int
    samples_dropped: int
    source_overflows: int
    latency_ms_median: float
    latency_ms_p99: float
    latency_ms_max: float
    latency_ms_mean: float
    delay_ms_p99: float
    block: int
    block_ms: float
    sample_rate: float
    channels: int
    frames: int
    history_first: int
    history_memory_bytes: int
    history_disk_bytes: int
    ring_high_water: int
    elapsed_s: float
    running: bool
    error: str | None

    def to_dict(self) -> dict[str, Any]:
        """The counters as JSON types, floats rounded to 4 decimals."""
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 4)
        return d
