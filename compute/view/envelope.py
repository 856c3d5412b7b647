"""The min/max envelope of a recording's waveform, every sample looked at, in blocks."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import Cancelled
from ..io import Recording


def waveform_envelope(recording: Recording, channel: int, n_points: int, *,
                      cancelled: Callable[[], bool] | None = None, block: int = 1 << 20,
                      progress: Callable[[float], None] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Min/max of ``channel`` in ``n_points`` buckets (real part for IQ).

    Returns bucket edge times (s), minima and maxima; ``progress(fraction)``
    hears after each block of ``block`` samples, ``cancelled()`` is checked
    before each.
    """
    fs = float(recording.sample_rate)
    n = recording.n_samples
    n_points = max(1, min(int(n_points), n))
    bounds = np.round(np.linspace(0, n, n_points + 1)).astype(np.int64)
    mins = np.full(n_points, np.inf, np.float32)
    maxs = np.full(n_points, -np.inf, np.float32)
    for s0 in range(0, n, block):
        if cancelled is not None and cancelled():
            raise Cancelled()
        s1 = min(s0 + block, n)
        x = recording.read(s0, s1, channel)[:, 0]
        if np.iscomplexobj(x):
            x = x.real
        j0 = int(np.searchsorted(bounds, s0, side="right")) - 1
        j1 = int(np.searchsorted(bounds, s1 - 1, side="right")) - 1
        starts = np.clip(bounds[j0:j1 + 1] - s0, 0, None)
        mins[j0:j1 + 1] = np.minimum(mins[j0:j1 + 1], np.minimum.reduceat(x, starts))
        maxs[j0:j1 + 1] = np.maximum(maxs[j0:j1 + 1], np.maximum.reduceat(x, starts))
        if progress is not None:
            progress(s1 / n)
    return bounds / fs, mins, maxs
