"""Reading a channel of a recording for a track: blocks of frames, zeros outside it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["BLOCK_FRAMES", "MAX_COUNT", "SampleArray", "as_recording", "check_count",
           "check_positive", "read_padded"]

#: frames computed per block read: bounds memory on recordings of any length
BLOCK_FRAMES = 512
#: the largest frame length, step or count a track takes
MAX_COUNT = 2**31 - 1


class SampleArray:
    """An array of samples read like a Recording (``read``, ``sample_rate``,
    ``n_samples``, ``n_channels``).

    Parameters
    ----------
    data : array_like
        Real samples shaped (n,) or (n, channels).
    sample_rate : float
    """

    path = "array"

    def __init__(self, data: Any, sample_rate: float) -> None:
        arr = np.asarray(data, dtype=np.float64)
        arr = arr[:, None] if arr.ndim == 1 else arr
        if arr.ndim != 2:
            raise InputError(f"samples shaped {arr.shape} must be (n,) or (n, channels)")
        self.data = arr
        self.sample_rate = check_positive("sr", sample_rate)
        self.n_samples, self.n_channels = arr.shape

    def read(self, start: int, stop: int, channels: int) -> np.ndarray:
        """Samples ``start:stop`` of a channel, shaped (n, 1)."""
        return self.data[start:stop, [channels]]


def as_recording(source: Any, sr: float | None = None) -> Any:
    """A Recording as it is, or an array of samples with its sample rate as one.

    Parameters
    ----------
    source : Recording or array_like
        Anything with ``read(start, stop, channels)``, ``sample_rate``, ``n_samples``
        and ``n_channels`` (a :class:`~specscope.compute.io.Recording`); else samples
        shaped (n,) or (n, channels).
    sr : float, optional
        Samples per second of an array (required then).

    Returns
    -------
    Recording or SampleArray
    """
    if hasattr(source, "read") and hasattr(source, "n_samples"):
        return source
    if sr is None:
        raise InputError("sr= (the sample rate) is required with an array of samples")
    return SampleArray(source, sr)


def check_positive(name: str, value: float) -> float:
    """``value`` as a finite float above zero, else an InputError naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}={value!r} must be a number") from None
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"{name}={value!r} must be a finite number above 0")
    return v


def check_count(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int in ``minimum..MAX_COUNT``, else an InputError naming ``name``."""
    try:
        v = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name}={value!r} must be a whole number") from None
    if v != value or not minimum <= v <= MAX_COUNT:
        raise InputError(f"{name}={value!r} must be a whole number in {minimum}..{MAX_COUNT}")
    return v


def read_padded(rec: Any, start: int, stop: int, channel: int) -> np.ndarray:
    """Samples ``start:stop`` of one channel as float64, zeros outside the recording.

    Parameters
    ----------
    rec : Recording
    start, stop : int
        Sample indices; either may lie outside ``[0, rec.n_samples]``.
    channel : int

    Returns
    -------
    numpy.ndarray
        Shape ``(stop - start,)``.
    """
    if not 0 <= int(channel) < rec.n_channels:
        raise InputError(f"channel={channel} must be in 0..{rec.n_channels - 1}")
    out = np.zeros(max(0, stop - start))
    a, b = max(start, 0), min(stop, rec.n_samples)
    if b > a:
        data = rec.read(a, b, int(channel))[:, 0]
        if np.iscomplexobj(data):
            raise InputError(f"{rec.path}: a track needs real samples, not complex (IQ)")
        out[a - start:b - start] = data
    return out
