"""Intensity in dB over time, as Praat's "Sound: To Intensity..." defines it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import i0

from ..errors import InputError
from .frames import BLOCK_FRAMES, as_recording, check_positive, read_padded
from .model import Track

__all__ = ["intensity"]

#: reference pressure (Pa): 0 dB is 2e-5 Pa, the sound's samples taken as pascals
P_REF = 2e-5


def intensity(source: Any, channel: int = 0, *, sr: float | None = None,
              minimum_pitch: float = 100.0, time_step: float = 0.0,
              subtract_mean: bool = True, block_frames: int = BLOCK_FRAMES) -> Track:
    """Intensity contour in dB re 2e-5 Pa, equal to Praat's "To Intensity".

    Parameters
    ----------
    source : Recording or array_like
        The sound, its samples taken as pressure in Pa.
    channel : int
        The channel measured.
    sr : float, optional
        Sample rate of an array source.
    minimum_pitch : float
        Lowest periodicity smoothed out (Hz): the window is 6.4 / minimum_pitch s long.
    time_step : float
        Seconds between frames; 0 means 0.8 / minimum_pitch.
    subtract_mean : bool
        Subtract each window's mean pressure (DC) first.
    block_frames : int
        Frames computed per block read.

    Returns
    -------
    Track
        Kind ``"intensity"``, one column ``"intensity"`` in dB; -300 dB for silence.
    """
    rec = as_recording(source, sr)
    minimum_pitch = check_positive("minimum_pitch", minimum_pitch)
    step = float(time_step)
    if not math.isfinite(step) or step < 0:
        raise InputError(f"time_step={time_step!r} must be 0 (automatic) or above 0")
    if step == 0:
        step = 0.8 / minimum_pitch
    dx = 1.0 / rec.sample_rate
    if step < dx:
        name = f"time_step={time_step!r}" if time_step else \
            f"minimum_pitch={minimum_pitch:g} (time step 0.8 / minimum_pitch)"
        raise InputError(f"{name}: frames closer than one sample ({dx:g} s)")
    n = rec.n_samples
    window_duration = 6.4 / minimum_pitch
    half = math.floor(0.5 * window_duration / dx)
    duration = dx * n
    params = {"minimum_pitch": minimum_pitch, "time_step": float(time_step),
              "subtract_mean": bool(subtract_mean)}
    if window_duration > duration:
        raise InputError(f"minimum_pitch={minimum_pitch:g}: the sound ({duration:g} s) is "
                         f"shorter than the window (6.4 / minimum_pitch = "
                         f"{window_duration:g} s)")
    n_frames = math.floor((duration - window_duration) / step) + 1
    x1 = 0.5 * dx
    t1 = (x1 - 0.5 * dx + 0.5 * duration) - 0.5 * n_frames * step + 0.5 * step
    times = t1 + np.arange(n_frames) * step
    offsets = np.arange(-half, half + 1)
    u = offsets * dx / (0.5 * window_duration)
    root = 1.0 - u * u
    window = np.where(root <= 0, 0.0, i0((2 * np.pi * np.pi + 0.5) * np.sqrt(np.abs(root))))
    values = np.empty(n_frames)
    block = max(1, int(block_frames))
    for f0 in range(0, n_frames, block):
        t = times[f0:f0 + block]
        mids = np.floor((t - x1) / dx + 0.5).astype(np.int64)
        lo, hi = int(mids[0]) - half, int(mids[-1]) + half + 1
        x = read_padded(rec, lo, hi, channel)
        idx = mids[:, None] - lo + offsets
        absolute = mids[:, None] + offsets
        valid = (absolute >= 0) & (absolute < n)
        frames = x[idx]
        if subtract_mean:
            mean = frames.sum(axis=1) / valid.sum(axis=1)
            frames = np.where(valid, frames - mean[:, None], 0.0)
        sumxw = (frames * frames * window).sum(axis=1)
        sumw = np.where(valid, window, 0.0).sum(axis=1)
        power = sumxw / sumw / (P_REF * P_REF)
        with np.errstate(divide="ignore"):
            values[f0:f0 + block] = np.where(power < 1e-30, -300.0,
                                              10 * np.log10(np.maximum(power, 1e-300)))
    return Track("intensity", times, values, ("intensity",), ("dB",), params)
