"""Averaged power spectra per time interval: the input of every long-term product.

An interval's spectrum is Welch's: the mean of the periodograms (one-sided PSD)
of the whole frames inside it, frames of ``nfft`` samples every ``hop``.  Frames
never cross an interval's edges or a gap.  Intervals start on multiples of the
interval from the epoch (UTC) where the recording's start time is known (so a
minute interval starts on the minute), else from its first sample; the first and
last intervals of a contiguous stretch may be partial and say so in their effort.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..errors import BadOption
from ..operators.dispatch import call
from ..types import Statistic, choices

__all__ = ["STATISTICS", "Interval", "SpectrumParams", "interval_spectrum", "median_bias",
           "plan_intervals", "recording_start"]

STATISTICS: tuple[str, ...] = choices(Statistic)
#: frames read and transformed at a time inside one interval
_FRAMES_PER_READ = 64


@dataclass(frozen=True)
class SpectrumParams:
    """How an interval's spectrum is computed.

    Parameters
    ----------
    interval : float
        Interval length in seconds (60: minute levels; 5: a Triton-like LTSA).
    nfft : int or None
        Frame and FFT length in samples; None: the sample rate (1 Hz bins).
    overlap : float
        Fraction of a frame shared with the next, 0 <= overlap < 1.
    window : str
        Window name.
    statistic : {"mean", "median"}
        How the frames' periodograms are combined per bin (Welch's mean, or the median).
    """

    interval: float = 60.0
    nfft: int | None = None
    overlap: float = 0.5
    window: str = "hann"
    statistic: Statistic = "mean"

    def __post_init__(self) -> None:
        if not (isinstance(self.interval, int | float) and math.isfinite(self.interval)
                and self.interval >= 1e-6):
            raise BadOption("interval", self.interval,
                            "must be a number of seconds, a microsecond or more")
        if self.nfft is not None and (isinstance(self.nfft, bool) or not isinstance(
                self.nfft, int) or self.nfft < 16):
            raise BadOption("nfft", self.nfft, "must be a whole number of samples, 16 or more")
        if not (isinstance(self.overlap, int | float) and 0 <= self.overlap < 1):
            raise BadOption("overlap", self.overlap, "must be a fraction, 0 <= overlap < 1")
        if self.statistic not in STATISTICS:
            raise BadOption("statistic", self.statistic, "is not a statistic",
                            expected=" or ".join(STATISTICS))

    def frame(self, fs: float) -> tuple[int, int]:
        """``(nfft, hop)`` in samples at sample rate ``fs``."""
        nfft = self.nfft or round(fs)
        return nfft, max(1, nfft - int(nfft * self.overlap))

    def to_dict(self) -> dict[str, Any]:
        return {"interval": self.interval, "nfft": self.nfft, "overlap": self.overlap,
                "window": self.window, "statistic": self.statistic}


@dataclass(frozen=True)
class Interval:
    """Samples ``start:stop`` of a recording, the interval beginning at ``time`` (s)."""

    start: int
    stop: int
    time: float


def recording_start(rec: Any) -> datetime | None:
    """The absolute start of ``rec`` (UTC), or None where it is not known."""
    time_at = getattr(rec, "time_at", None)
    if callable(time_at):
        return time_at(0)
    text = getattr(rec, "start_time", None)
    if not text:
        return None
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _stretches(rec: Any, start: int, stop: int) -> list[tuple[int, int]]:
    segments = getattr(rec, "segments", None)
    runs = segments() if callable(segments) else [(0, rec.n_samples)]
    return [(max(a, start), min(b, stop)) for a, b in runs if min(b, stop) > max(a, start)]


def plan_intervals(rec: Any, params: SpectrumParams, start: int = 0,
                   stop: int | None = None) -> list[Interval]:
    """The intervals of samples ``start:stop`` that hold one frame or more, in time order.

    Times are seconds since the epoch (UTC) where :func:`recording_start` knows the
    start, else seconds from sample 0.
    """
    fs = float(rec.sample_rate)
    stop = rec.n_samples if stop is None else min(int(stop), rec.n_samples)
    nfft, _ = params.frame(fs)
    began = recording_start(rec)
    time_at = getattr(rec, "time_at", None)
    step = round(params.interval * 1e6)  # edges in whole microseconds
    out: list[Interval] = []
    for a, b in _stretches(rec, int(start), stop):
        if callable(time_at):
            t0 = time_at(a).timestamp()
        else:
            t0 = (began.timestamp() if began is not None else 0.0) + a / fs
        t0_us = round(t0 * 1e6)
        edge = (t0_us // step + 1) * step  # the first edge after the stretch's start
        s, t = a, t0
        while s < b:
            e = min(b, a + round((edge - t0_us) / 1e6 * fs))
            if e - s >= nfft:
                out.append(Interval(s, e, t))
            s, t, edge = e, edge / 1e6, edge + step
    return out


def interval_spectrum(rec: Any, iv: Interval, params: SpectrumParams,
                      channel: int = 0) -> tuple[np.ndarray, int]:
    """The combined one-sided PSD of the frames of ``iv`` and how many frames it holds.

    Returns
    -------
    psd : ndarray of float64, shape (nfft // 2 + 1,)
        In the recording's unit squared per Hz (FS²/Hz).
    n_frames : int
    """
    fs = float(rec.sample_rate)
    nfft, hop = params.frame(fs)
    n = iv.stop - iv.start
    count = (n - nfft) // hop + 1
    op = {"nfft": nfft, "hop": hop, "window": params.window, "scaling": "psd"}
    total = np.zeros(nfft // 2 + 1)
    keep: list[np.ndarray] = []
    for f0 in range(0, count, _FRAMES_PER_READ):
        f1 = min(count, f0 + _FRAMES_PER_READ)
        a = iv.start + f0 * hop
        x = rec.read(a, a + (f1 - f0 - 1) * hop + nfft, channels=[channel])[:, 0]
        p = call("stft_power", np.ascontiguousarray(x), fs=fs, **op)
        if params.statistic == "mean":
            total += p.sum(axis=0, dtype=np.float64)
        else:
            keep.append(p)
    if params.statistic == "mean":
        return total / count, count
    # the median of exponentially distributed periodogram values is below their mean:
    # divided by the bias of a median of ``count`` of them (as scipy's Welch median)
    med = np.median(np.concatenate(keep), axis=0).astype(np.float64)
    return med / median_bias(count), count


def median_bias(n: int) -> float:
    """The ratio of the median of ``n`` periodogram values of noise to their mean.

    ``1 + sum over k = 1 .. (n - 1) // 2 of (1 / (2k + 1) - 1 / (2k))``: the expected
    median of ``n`` exponential values (n odd; even ``n`` takes the odd one below).
    """
    k = 2.0 * np.arange(1, (n - 1) // 2 + 1)
    return float(1.0 + np.sum(1.0 / (k + 1.0) - 1.0 / k))
