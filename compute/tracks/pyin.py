"""Probabilistic YIN (Mauch & Dixon 2014) as librosa.pyin defines it: f0 and voicing by
Viterbi decoding over pitch x voicing states, computed in blocks of frames."""

from __future__ import annotations

import math
import tempfile
from typing import Any

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft
from scipy.special import betainc

from ..errors import InputError
from .frames import BLOCK_FRAMES, as_recording, check_count, check_positive, read_padded
from .model import Track

__all__ = ["C2_HZ", "C7_HZ", "MAX_STATES", "MAX_THRESHOLDS", "pyin", "pyin_observations", "pyin_transition"]

#: librosa's recommended pitch range: C2 and C7 (Hz)
C2_HZ = 440.0 * 2 ** ((36 - 69) / 12)
C7_HZ = 440.0 * 2 ** ((96 - 69) / 12)
_TINY = np.finfo(np.float64).tiny
#: the most pitch x voicing states decoded (the transition matrix is dense)
MAX_STATES = 4096
#: the most voicing thresholds
MAX_THRESHOLDS = 10_000


def _cmndf(frames: np.ndarray, min_period: int, max_period: int) -> np.ndarray:
    """Cumulative mean normalized difference for periods min_period..max_period."""
    n = frames.shape[1]
    size = next_fast_len(2 * n - 1, real=True)
    acf = irfft(np.abs(rfft(frames, size, axis=1)) ** 2, size, axis=1)[:, :max_period + 1]
    energy = np.cumsum(frames * frames, axis=1)
    # d(k) = 2 (r(0) - r(k)) - sum_{m<k} x(m)^2, k = 1..max_period
    d = 2 * (acf[:, :1] - acf[:, 1:]) - energy[:, :max_period]
    mean = np.cumsum(d, axis=1) / np.arange(1, max_period + 1)
    return d[:, min_period - 1:] / (mean[:, min_period - 1:] + _TINY)


def _parabolic_shifts(y: np.ndarray) -> np.ndarray:
    shifts = np.zeros_like(y)
    a = y[:, 2:] + y[:, :-2] - 2 * y[:, 1:-1]
    b = (y[:, 2:] - y[:, :-2]) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        shifts[:, 1:-1] = np.where(np.abs(b) >= np.abs(a), 0.0, -b / a)
    return shifts


def pyin_observations(yin: np.ndarray, sr: float, fmin: float, min_period: int,
                      n_pitch_bins: int, bins_per_semitone: int, thresholds: np.ndarray,
                      beta_probs: np.ndarray, boltzmann_parameter: float,
                      no_trough_prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Observation probabilities of pitch x voicing states for frames of CMNDF values.

    Parameters
    ----------
    yin : numpy.ndarray
        Shape (frames, periods): the CMNDF from ``min_period`` on.

    Returns
    -------
    obs : numpy.ndarray
        Shape (frames, 2 * n_pitch_bins): voiced states, then unvoiced.
    voiced_prob : numpy.ndarray
        Shape (frames,).
    """
    shifts = _parabolic_shifts(yin)
    lam = float(boltzmann_parameter)
    obs = np.zeros((yin.shape[0], 2 * n_pitch_bins + 1))
    upper = thresholds[1:]
    for f, y in enumerate(yin):
        trough = np.zeros(y.size, bool)
        trough[1:] = y[1:] < y[:-1]
        trough[1:-1] &= y[1:-1] <= y[2:]
        trough[0] = y[0] < y[1]
        idx = np.flatnonzero(trough)
        if idx.size == 0:
            continue
        heights = y[idx]
        below = heights[:, None] < upper[None, :]
        rank = np.cumsum(below, axis=0) - 1
        count = below.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            norm = (1 - math.exp(-lam)) / (1 - np.exp(-lam * count))
            prior = np.where(below, norm * np.exp(-lam * rank), 0.0)
        probs = prior @ beta_probs
        lowest = int(np.argmin(heights))
        probs[lowest] += no_trough_prob * beta_probs[:int((~below[lowest]).sum())].sum()
        keep = probs != 0
        idx, probs = idx[keep], probs[keep]
        period = min_period + idx + shifts[f, idx]
        bins = 12 * bins_per_semitone * np.log2(sr / period / fmin)
        bins = np.clip(np.round(bins), 0, n_pitch_bins).astype(np.int64)
        obs[f, bins] = probs  # a bin two troughs reach keeps the longer period's
    voiced = np.clip(obs[:, :n_pitch_bins].sum(axis=1), 0, 1)
    obs = obs[:, :2 * n_pitch_bins]
    obs[:, n_pitch_bins:] = ((1 - voiced) / n_pitch_bins)[:, None]
    return obs, voiced


def pyin_transition(n_pitch_bins: int, width: int, switch_prob: float) -> np.ndarray:
    """Transitions between pitch x voicing states: a triangle of ``width`` bins around
    each pitch (rows normalized), staying voiced or unvoiced with ``1 - switch_prob``."""
    i = np.arange(n_pitch_bins)
    dist = np.abs(i[:, None] - i[None, :])
    half = width // 2
    local = np.where(dist <= half, 1.0 - dist / ((width + 1) / 2), 0.0)
    local /= local.sum(axis=1, keepdims=True)
    switch = np.array([[1 - switch_prob, switch_prob], [switch_prob, 1 - switch_prob]])
    return np.kron(switch, local)


def pyin(source: Any, channel: int = 0, *, sr: float | None = None, fmin: float = C2_HZ,
         fmax: float = C7_HZ, frame_length: int = 2048, hop_length: int | None = None,
         n_thresholds: int = 100, beta_parameters: tuple[float, float] = (2, 18),
         boltzmann_parameter: float = 2, resolution: float = 0.1,
         max_transition_rate: float = 35.92, switch_prob: float = 0.01,
         no_trough_prob: float = 0.01, center: bool = True,
         block_frames: int = BLOCK_FRAMES) -> Track:
    """Fundamental frequency by probabilistic YIN, equal to librosa.pyin.

    Parameters
    ----------
    source : Recording or array_like
    channel : int
    sr : float, optional
        Sample rate of an array source.
    fmin, fmax : float
        Pitch range (Hz); C2 and C7 by default.
    frame_length, hop_length : int
        Frame and step in samples (hop: frame_length // 4 by default).
    n_thresholds, beta_parameters, boltzmann_parameter, resolution, max_transition_rate,
    switch_prob, no_trough_prob, center
        librosa.pyin's, with its defaults (zero padding when centred).
    block_frames : int
        Frames computed per block read.

    Returns
    -------
    Track
        Kind ``"pyin"``: ``f0`` (Hz, NaN where unvoiced) and ``voiced_probability``.
    """
    rec = as_recording(source, sr)
    fs = rec.sample_rate
    fmin, fmax = check_positive("fmin", fmin), check_positive("fmax", fmax)
    if fmax > fs / 2:
        raise InputError(f"fmax={fmax:g} cannot exceed half the sample rate ({fs / 2:g})")
    if fmin >= fmax:
        raise InputError(f"fmin={fmin:g} must be below fmax={fmax:g}")
    frame_length = check_count("frame_length", frame_length, 4)
    hop = frame_length // 4 if hop_length is None else check_count("hop_length", hop_length)
    if fs / fmin >= frame_length - 1:
        raise InputError(f"fmin={fmin:g}: a period ({fs / fmin:g} samples) must fit in "
                         f"frame_length={frame_length}")
    for name, p in (("switch_prob", switch_prob), ("no_trough_prob", no_trough_prob)):
        if not 0 <= float(p) <= 1:
            raise InputError(f"{name}={p!r} must be between 0 and 1")
    n_thresholds = check_count("n_thresholds", n_thresholds)
    if n_thresholds > MAX_THRESHOLDS:
        raise InputError(f"n_thresholds={n_thresholds} must be in 1..{MAX_THRESHOLDS}")
    a, b = (check_positive("beta_parameters", v) for v in beta_parameters)
    resolution = check_positive("resolution", resolution)
    boltzmann_parameter = check_positive("boltzmann_parameter", boltzmann_parameter)
    max_transition_rate = check_positive("max_transition_rate", max_transition_rate)

    min_period = int(np.floor(fs / fmax))
    max_period = min(int(np.ceil(fs / fmin)), frame_length - 1)
    thresholds = np.linspace(0, 1, int(n_thresholds) + 1)
    beta_probs = np.diff(betainc(a, b, thresholds))
    per_semitone = int(np.ceil(1.0 / resolution))
    n_bins = int(np.floor(12 * per_semitone * np.log2(fmax / fmin))) + 1
    if 2 * n_bins > MAX_STATES:
        raise InputError(f"resolution={resolution:g} from fmin={fmin:g} to fmax={fmax:g} Hz "
                         f"makes {2 * n_bins} pitch x voicing states, more than "
                         f"{MAX_STATES}: a coarser resolution or a narrower range")
    semitones = max_transition_rate * 12 * hop / fs  # per frame
    width = (round(semitones) if semitones < n_bins else n_bins) * per_semitone + 1
    log_trans = np.log(pyin_transition(n_bins, width, float(switch_prob)) + _TINY)
    n_states = 2 * n_bins
    log_init = np.full(n_states, np.log(1.0 / n_states + _TINY))
    into, rows = np.ascontiguousarray(log_trans.T), np.arange(n_states)

    pad = frame_length // 2 if center else 0
    total = rec.n_samples + 2 * pad
    if total < frame_length:
        raise InputError(f"frame_length={frame_length} is longer than the recording")
    n_frames = 1 + (total - frame_length) // hop
    block = max(1, int(block_frames))
    ptr_type = np.uint16 if n_states < 2 ** 16 else np.uint32
    voiced_prob = np.empty(n_frames)
    value = log_init
    with tempfile.TemporaryFile() as pointers:
        for f0 in range(0, n_frames, block):
            f1 = min(n_frames, f0 + block)
            lo = f0 * hop - pad
            x = read_padded(rec, lo, (f1 - 1) * hop - pad + frame_length, channel)
            frames = np.lib.stride_tricks.sliding_window_view(x, frame_length)[::hop]
            yin = _cmndf(frames, min_period, max_period)
            obs, voiced_prob[f0:f1] = pyin_observations(
                yin, fs, fmin, min_period, n_bins, per_semitone, thresholds, beta_probs,
                boltzmann_parameter, float(no_trough_prob))
            log_obs = np.log(obs + _TINY)
            ptr = np.zeros((f1 - f0, n_states), ptr_type)
            for k in range(f1 - f0):
                if f0 + k == 0:
                    value = log_obs[0] + log_init
                    continue
                scores = value[None, :] + into  # [j, i]: from i into j
                best = np.argmax(scores, axis=1)
                ptr[k] = best
                value = log_obs[k] + scores[rows, best]
            pointers.write(ptr.tobytes())
        states = np.empty(n_frames, np.int64)
        states[-1] = int(np.argmax(value))
        row = n_states * np.dtype(ptr_type).itemsize
        for f0 in reversed(range(0, n_frames, block)):
            f1 = min(n_frames, f0 + block)
            pointers.seek(f0 * row)
            ptr = np.frombuffer(pointers.read((f1 - f0) * row), ptr_type).reshape(-1, n_states)
            for t in range(f1 - 1, max(f0, 1) - 1, -1):
                states[t - 1] = ptr[t - f0, states[t]]
    freqs = fmin * 2 ** (np.arange(n_bins) / (12 * per_semitone))
    f0_hz = np.where(states < n_bins, freqs[states % n_bins], np.nan)
    times = (np.arange(n_frames) * hop - pad + frame_length / 2) / fs
    params = {"fmin": fmin, "fmax": fmax, "frame_length": frame_length, "hop_length": hop,
              "n_thresholds": int(n_thresholds), "beta_parameters": [a, b],
              "boltzmann_parameter": boltzmann_parameter, "resolution": resolution,
              "max_transition_rate": max_transition_rate, "switch_prob": float(switch_prob),
              "no_trough_prob": float(no_trough_prob), "center": bool(center)}
    return Track("pyin", times, np.column_stack([f0_hz, voiced_prob]),
                 ("f0", "voiced_probability"), ("Hz", "probability"), params)
