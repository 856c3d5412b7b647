"""Pitch by autocorrelation (Boersma 1993), as Praat's "Sound: To Pitch (ac)..."
describes it: candidates per frame, then the cheapest path through them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .frames import check_count, check_positive
from .model import Track

__all__ = ["PitchCandidates", "frame_times", "pitch_ac", "pitch_candidates", "pitch_path",
           "pitch_track"]


def frame_times(n_samples: int, fs: float, window: float,
                step: float) -> np.ndarray:
    """Frame centres of a short-term analysis centred in the signal.

    Parameters
    ----------
    n_samples : int
        Samples in the signal (sample ``k`` lies at ``(k + 0.5) / fs`` seconds).
    fs : float
        Samples per second.
    window, step : float
        The analysis window's duration and the frame step, seconds.

    Returns
    -------
    numpy.ndarray
        Frame times in seconds; empty when the window is longer than the signal.
    """
    duration = n_samples / fs
    if window > duration or n_samples == 0:
        return np.zeros(0)
    n = math.floor((duration - window) / step) + 1
    first = 0.5 * duration - 0.5 * n * step + 0.5 * step
    return first + step * np.arange(n)


def _sinc_interp(y: np.ndarray, rows: np.ndarray, x: np.ndarray, depth: int) -> np.ndarray:
    """``y[rows]`` at fractional indices ``x`` by a raised-cosine windowed sinc of at
    most ``depth`` samples each side (0-based indices inside each row)."""
    n = y.shape[1]
    left = np.floor(x).astype(np.int64)
    frac = x - left
    d_eff = np.minimum(np.minimum(depth, left + 1), n - 1 - left)
    k = np.arange(1 - depth, depth + 1)
    idx = left[:, None] + k[None, :]
    use = (k[None, :] >= 1 - d_eff[:, None]) & (k[None, :] <= d_eff[:, None])
    d = frac[:, None] - k[None, :]  # x - idx
    # the window's half-width: left of x reaches lo, right of x reaches hi
    span = np.where(k[None, :] <= 0, (frac + d_eff)[:, None], (d_eff + 1 - frac)[:, None])
    w = 0.5 + 0.5 * np.cos(np.pi * d / span)
    sign = np.where(k % 2 == 0, 1.0, -1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sinc = np.where(d == 0, 1.0, (np.sin(np.pi * frac)[:, None] * sign[None, :])
                        / (np.pi * d))
    vals = np.where(use, y[rows[:, None], np.clip(idx, 0, n - 1)], 0.0)
    return np.sum(vals * sinc * w, axis=1)


def _refine(y: np.ndarray, rows: np.ndarray, centre: np.ndarray,
            depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The maxima of the sinc-interpolated rows of ``y`` within one sample of
    ``centre`` (golden-section search to 1e-10): (positions, values)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a = centre - 1.0
    b = centre + 1.0
    c = b - g * (b - a)
    e = a + g * (b - a)
    fc = _sinc_interp(y, rows, c, depth)
    fe = _sinc_interp(y, rows, e, depth)
    while np.max(b - a) > 1e-10:
        up = fc < fe  # the maximum lies in [c, b]
        a = np.where(up, c, a)
        b = np.where(up, b, e)
        nxt = np.where(up, a + g * (b - a), b - g * (b - a))
        fn = _sinc_interp(y, rows, nxt, depth)
        c, e, fc, fe = (np.where(up, e, nxt), np.where(up, nxt, c),
                        np.where(up, fe, fn), np.where(up, fn, fc))
    x = 0.5 * (a + b)
    v = _sinc_interp(y, rows, x, depth)
    at = y[rows, centre.astype(np.int64)]
    worse = v < at  # never worse than the sample itself
    return np.where(worse, centre, x), np.where(worse, at, v)


@dataclass(frozen=True)
class PitchCandidates:
    """Candidates per frame before the path: frequency 0 is the unvoiced candidate.

    Parameters
    ----------
    times : numpy.ndarray
        Frame times, seconds, shape (n,).
    frequency, strength : numpy.ndarray
        Shape (n, m): candidate 0 is unvoiced; unused places hold NaN.
    intensity : numpy.ndarray
        Local peak over the global peak, at most 1, shape (n,).
    """

    times: np.ndarray
    frequency: np.ndarray
    strength: np.ndarray
    intensity: np.ndarray


def _as_signal(x: Any, fs: float | None, channel: int) -> tuple[np.ndarray, float]:
    if hasattr(x, "read") and hasattr(x, "sample_rate"):
        return np.asarray(x.read(0, None, channel)[:, 0], float), float(x.sample_rate)
    if fs is None:
        raise ValueError("a sample array needs its sample rate fs")
    a = np.asarray(x, float)
    if a.ndim == 2:
        a = a[:, channel]
    return a, float(fs)


def _windows(n: int, very_accurate: bool) -> np.ndarray:
    i = np.arange(1, n + 1)
    if very_accurate:
        mid = 0.5 * (n + 1)
        edge = math.exp(-12.0)
        return (np.exp(-48.0 * (i - mid) ** 2 / (n + 1) ** 2) - edge) / (1 - edge)
    return 0.5 - 0.5 * np.cos(2 * np.pi * i / (n + 1))


def pitch_candidates(x: Any, fs: float | None = None, *, time_step: float = 0.0,
                     pitch_floor: float = 75.0, max_number_of_candidates: int = 15,
                     very_accurate: bool = False, voicing_threshold: float = 0.45,
                     octave_cost: float = 0.01, pitch_ceiling: float = 600.0,
                     channel: int = 0, block_frames: int = 4096) -> PitchCandidates:
    """Autocorrelation candidates of every frame (the first stage of :func:`pitch_ac`).

    Parameters
    ----------
    x : array_like or Recording
        Samples, or a recording (read in blocks of ``block_frames`` frames).
    fs : float
        Samples per second (taken from a recording).
    block_frames : int
        Frames analysed per block; any value gives the same candidates.

    Returns
    -------
    PitchCandidates
    """
    rec = x if hasattr(x, "read") and hasattr(x, "sample_rate") else None
    if rec is not None:
        fs = float(rec.sample_rate)
        n_total = int(rec.n_samples)

        def read(a: int, b: int) -> np.ndarray:
            a0, b0 = max(a, 0), min(b, n_total)
            out = np.zeros(b - a)
            if b0 > a0:
                out[a0 - a:b0 - a] = rec.read(a0, b0, channel)[:, 0]
            return out
    else:
        sig, fs = _as_signal(x, fs, channel)
        n_total = sig.size

        def read(a: int, b: int) -> np.ndarray:
            a0, b0 = max(a, 0), min(b, n_total)
            out = np.zeros(b - a)
            out[a0 - a:b0 - a] = sig[a0:b0]
            return out

    assert fs is not None
    dx = 1.0 / fs
    periods = 6.0 if very_accurate else 3.0
    dt = time_step if time_step > 0 else 0.75 / pitch_floor
    max_cand = max(int(max_number_of_candidates), 2)
    n_period = math.floor(fs / pitch_floor)
    half_period = n_period // 2 + 1
    win_dur = periods / pitch_floor
    half_win = math.floor(win_dur / dx) // 2 - 1
    if half_win < 2:
        raise ValueError("the analysis window is too short for the sample rate")
    n_win = 2 * half_win
    max_lag = min(math.floor(n_win / periods) + 2, n_win)
    times = frame_times(n_total, fs, win_dur, dt)
    n_frames = times.size

    window = _windows(n_win, very_accurate)
    n_fft = 1
    while n_fft < n_win * 1.5:
        n_fft *= 2
    wr = np.fft.irfft(np.abs(np.fft.rfft(window, n_fft)) ** 2, n_fft)
    brent_max = int(n_win * 0.5)
    wr = wr[:brent_max + 1] / wr[0]

    # the global peak: the largest deviation from the signal's mean
    step_read = 1 << 20
    total = 0.0
    for a in range(0, n_total, step_read):
        total += float(np.sum(read(a, min(a + step_read, n_total))))
    mean = total / n_total if n_total else 0.0
    global_peak = 0.0
    for a in range(0, n_total, step_read):
        seg = read(a, min(a + step_read, n_total))
        global_peak = max(global_peak, float(np.max(np.abs(seg - mean))) if seg.size else 0.0)

    freq = np.full((n_frames, max_cand), np.nan)
    strength = np.full((n_frames, max_cand), np.nan)
    freq[:, 0] = 0.0
    strength[:, 0] = 0.0
    intensity = np.zeros(n_frames)
    if global_peak == 0 or n_frames == 0:
        return PitchCandidates(times, freq, strength, intensity)

    # 0-based sample left of (or at) each frame's time; samples lie at (k + 0.5) dx
    left = np.floor((times - 0.5 * dx) * fs + 1e-9).astype(np.int64)
    reach = max(half_win, n_period)
    for b0 in range(0, n_frames, block_frames):
        b1 = min(b0 + block_frames, n_frames)
        s0 = int(left[b0]) + 1 - reach
        s1 = int(left[b1 - 1]) + reach + 1
        seg = read(s0, s1)
        csum = np.concatenate([[0.0], np.cumsum(seg)])
        lb = left[b0:b1] - s0
        # local mean over one longest period to each side
        m0 = np.clip(lb + 1 - n_period, 0, None)
        m1 = np.clip(lb + n_period + 1, None, seg.size)
        local_mean = (csum[m1] - csum[m0]) / (2 * n_period)
        idx = (lb + 1 - half_win)[:, None] + np.arange(n_win)[None, :]
        frames = (seg[idx] - local_mean[:, None]) * window[None, :]
        mid0 = max(half_win - half_period, 0)
        mid1 = min(half_win + half_period, n_win)
        local_peak = np.max(np.abs(frames[:, mid0:mid1]), axis=1)
        intensity[b0:b1] = np.minimum(local_peak / global_peak, 1.0)
        ac = np.fft.irfft(np.abs(np.fft.rfft(frames, n_fft, axis=1)) ** 2, n_fft, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            r_all = ac[:, :brent_max + 1] / (ac[:, :1] * wr[None, :])
        found: list[tuple[int, int, int]] = []  # (frame in block, place, lag)
        for j in range(b1 - b0):
            if local_peak[j] == 0 or ac[j, 0] <= 0:
                continue
            lags = _frame_candidates(r_all[j], fs, max_lag, brent_max, voicing_threshold,
                                     octave_cost, pitch_floor, max_cand,
                                     freq[b0 + j], strength[b0 + j])
            found += [(j, p, k) for p, k in enumerate(lags) if p > 0]
        if not found:
            continue
        # a finer maximum: sinc interpolation of the autocorrelation, both sides of lag 0
        rows, places, lag = (np.array(v, dtype=np.int64) for v in zip(*found))
        rr = np.concatenate([r_all[:, :0:-1], r_all], axis=1)
        high = freq[b0 + rows, places] > 0.3 * fs
        for depth, sel in ((70, ~high), (700, high)):
            if sel.any():
                xm, ym = _refine(rr, rows[sel], (lag[sel] + brent_max).astype(float), depth)
                freq[b0 + rows[sel], places[sel]] = fs / (xm - brent_max)
                strength[b0 + rows[sel], places[sel]] = np.where(ym > 1.0, 1.0 / ym, ym)
    return PitchCandidates(times, freq, strength, intensity)


def _frame_candidates(r: np.ndarray, fs: float, max_lag: int, brent_max: int,
                      voicing_threshold: float, octave_cost: float, floor: float,
                      max_cand: int, freq: np.ndarray, strength: np.ndarray) -> list[int]:
    """Fill one frame's voiced candidates (places 1..) from its normalised
    autocorrelation ``r`` (lags 0..brent_max), parabolic maxima; the lag of each
    place."""
    top = min(max_lag, brent_max)
    i = np.arange(2, top)
    ri = r[i]
    peaks = i[(ri > 0.5 * voicing_threshold) & (ri > r[i - 1]) & (ri >= r[i + 1])]
    n = 1
    lags: list[int] = [0]
    for k in peaks:
        k = int(k)
        dr = 0.5 * (r[k + 1] - r[k - 1])
        d2r = 2.0 * r[k] - r[k - 1] - r[k + 1]
        f = fs / (k + dr / d2r)
        s = r[k] + 0.5 * dr * dr / d2r
        if s > 1.0:
            s = 1.0 / s
        if n < max_cand:
            place = n
            n += 1
            lags.append(k)
        else:
            local = strength[1:] - octave_cost * np.log2(floor / freq[1:])
            w = int(np.argmin(local))
            if s - octave_cost * math.log2(floor / f) <= local[w]:
                continue
            place = w + 1
            lags[place] = k
        freq[place] = f
        strength[place] = s
    return lags


def pitch_path(c: PitchCandidates, *, silence_threshold: float = 0.03,
               voicing_threshold: float = 0.45, octave_cost: float = 0.01,
               octave_jump_cost: float = 0.35, voiced_unvoiced_cost: float = 0.14,
               pitch_ceiling: float = 600.0, time_step: float) -> np.ndarray:
    """The cheapest path through the candidates (Viterbi): f0 per frame, NaN unvoiced.

    Parameters
    ----------
    c : PitchCandidates
    time_step : float
        Seconds between frames (the jump costs are per 10 ms).

    Returns
    -------
    numpy.ndarray
        Hz per frame, NaN where unvoiced.
    """
    f, s = c.frequency, c.strength
    n = f.shape[0]
    if n == 0:
        return np.zeros(0)
    valid = ~np.isnan(f)
    voiced = valid & (f > 0) & (f < pitch_ceiling)
    unv = (2.0 - c.intensity / (silence_threshold / (1.0 + voicing_threshold))
           if silence_threshold > 0 else np.zeros(n))
    unv = voicing_threshold + np.maximum(unv, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        local = np.where(voiced, s - octave_cost * np.log2(pitch_ceiling / f),
                         unv[:, None])
        logf = np.where(voiced, np.log2(f), 0.0)
    local = np.where(valid, local, -np.inf)
    corr = 0.01 / time_step
    jump, vuv = octave_jump_cost * corr, voiced_unvoiced_cost * corr
    delta = local[0].copy()
    psi = np.zeros(f.shape, dtype=np.int64)
    for t in range(1, n):
        v1, v2 = voiced[t - 1][:, None], voiced[t][None, :]
        cost = np.where(v1 & v2, jump * np.abs(logf[t - 1][:, None] - logf[t][None, :]),
                        np.where(v1 == v2, 0.0, vuv))
        tot = delta[:, None] - cost
        best = np.argmax(tot, axis=0)  # first maximum, as a strict ">" scan finds it
        psi[t] = best
        delta = tot[best, np.arange(tot.shape[1])] + local[t]
    place = int(np.argmax(delta))
    out = np.full(n, np.nan)
    for t in range(n - 1, -1, -1):
        if voiced[t, place]:
            out[t] = f[t, place]
        place = int(psi[t, place])
    return out


def pitch_ac(x: Any, fs: float | None = None, *, time_step: float = 0.0,
             pitch_floor: float = 75.0, max_number_of_candidates: int = 15,
             very_accurate: bool = False, silence_threshold: float = 0.03,
             voicing_threshold: float = 0.45, octave_cost: float = 0.01,
             octave_jump_cost: float = 0.35, voiced_unvoiced_cost: float = 0.14,
             pitch_ceiling: float = 600.0, channel: int = 0,
             block_frames: int = 4096) -> Track:
    """Pitch by autocorrelation, Praat's "To Pitch (ac)" method.

    Parameters
    ----------
    x : array_like or Recording
        Samples, or a recording (read in blocks).
    fs : float
        Samples per second (taken from a recording).
    time_step : float
        Seconds between frames; 0 takes ``0.75 / pitch_floor``.
    pitch_floor, pitch_ceiling : float
        Hz.  Other parameters are Praat's, under its names.
    channel : int
        The channel analysed.
    block_frames : int
        Frames analysed per block (the result does not depend on it).

    Returns
    -------
    Track
        Kind ``"pitch"``, column ``f0`` in Hz, NaN unvoiced.
    """
    pitch_floor = check_positive("pitch_floor", pitch_floor)
    pitch_ceiling = check_positive("pitch_ceiling", pitch_ceiling)
    if pitch_floor >= pitch_ceiling:
        raise InputError(f"pitch_floor={pitch_floor:g} must be below pitch_ceiling="
                         f"{pitch_ceiling:g} Hz")
    check_count("max_number_of_candidates", max_number_of_candidates, 2)
    if time_step < 0:
        raise InputError(f"time_step={time_step:g} must be >= 0 (0: 0.75 / pitch_floor)")
    dt = time_step if time_step > 0 else 0.75 / pitch_floor
    c = pitch_candidates(x, fs, time_step=dt, pitch_floor=pitch_floor,
                         max_number_of_candidates=max_number_of_candidates,
                         very_accurate=very_accurate,
                         voicing_threshold=voicing_threshold, octave_cost=octave_cost,
                         pitch_ceiling=pitch_ceiling, channel=channel,
                         block_frames=block_frames)
    f0 = pitch_path(c, silence_threshold=silence_threshold,
                    voicing_threshold=voicing_threshold, octave_cost=octave_cost,
                    octave_jump_cost=octave_jump_cost,
                    voiced_unvoiced_cost=voiced_unvoiced_cost,
                    pitch_ceiling=pitch_ceiling, time_step=dt)
    params = {"time_step": dt, "pitch_floor": pitch_floor,
                  "max_number_of_candidates": max_number_of_candidates,
                  "very_accurate": very_accurate, "silence_threshold": silence_threshold,
                  "voicing_threshold": voicing_threshold, "octave_cost": octave_cost,
                  "octave_jump_cost": octave_jump_cost,
                  "voiced_unvoiced_cost": voiced_unvoiced_cost, "pitch_ceiling": pitch_ceiling,
                  "method": "ac"}
    return Track("pitch", c.times, f0[:, None], ("f0",), ("Hz",), params)


def pitch_track(source: Any, channel: int = 0, *, sr: float | None = None,
                time_step: float = 0.0, pitch_floor: float = 75.0,
                max_number_of_candidates: int = 15, very_accurate: bool = False,
                silence_threshold: float = 0.03, voicing_threshold: float = 0.45,
                octave_cost: float = 0.01, octave_jump_cost: float = 0.35,
                voiced_unvoiced_cost: float = 0.14, pitch_ceiling: float = 600.0,
                block_frames: int = 4096) -> Track:
    """:func:`pitch_ac` in the form of the kind table: ``(source, channel, *, sr=...)``.

    Parameters
    ----------
    source : Recording or array_like
        With ``sr`` for an array.
    channel : int
    sr : float, optional
        Samples per second of an array.

    Returns
    -------
    Track
    """
    return pitch_ac(source, sr, time_step=time_step, pitch_floor=pitch_floor,
                    max_number_of_candidates=max_number_of_candidates,
                    very_accurate=very_accurate, silence_threshold=silence_threshold,
                    voicing_threshold=voicing_threshold, octave_cost=octave_cost,
                    octave_jump_cost=octave_jump_cost,
                    voiced_unvoiced_cost=voiced_unvoiced_cost, pitch_ceiling=pitch_ceiling,
                    channel=channel, block_frames=block_frames)
