"""Formants by linear prediction (Burg's method), as Praat's "Sound: To Formant
(burg)..." describes it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from .frames import check_positive
from .model import Track
from .pitch_praat import frame_times

__all__ = ["burg_lpc", "formant_track", "formants_burg", "resample_sinc"]


def burg_lpc(frames: np.ndarray, order: int) -> np.ndarray:
    """Linear-prediction coefficients by Burg's method, frame by frame.

    Parameters
    ----------
    frames : numpy.ndarray
        Shape (n, samples).
    order : int
        Number of coefficients.

    Returns
    -------
    numpy.ndarray
        Shape (n, order): ``x[t] ~ sum_i a[i] x[t - 1 - i]``.
    """
    x = np.asarray(frames, float)
    n, _m = x.shape
    f = x[:, 1:].copy()   # forward errors
    b = x[:, :-1].copy()  # backward errors
    a = np.zeros((n, order))
    for k in range(order):
        num = np.sum(f * b, axis=1)
        den = np.sum(f * f + b * b, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            refl = np.where(den > 0, 2.0 * num / den, 0.0)
        prev = a[:, :k].copy()
        a[:, k] = refl
        a[:, :k] = prev - refl[:, None] * prev[:, ::-1]
        f, b = f[:, 1:] - refl[:, None] * b[:, 1:], b[:, :-1] - refl[:, None] * f[:, :-1]
    return a


def resample_sinc(x: np.ndarray, fs: float, new_fs: float, depth: int = 50) -> np.ndarray:
    """Resampled samples: low-pass by FFT below the new Nyquist when going down, then
    raised-cosine windowed sinc interpolation; the new samples centred on the same span.

    Parameters
    ----------
    x : numpy.ndarray
        Samples at ``fs``.
    fs, new_fs : float
        Old and new samples per second.
    depth : int
        Samples each side of the interpolation.

    Returns
    -------
    numpy.ndarray
    """
    x = np.asarray(x, float)
    n = x.size
    if new_fs < fs:
        x = _lowpass(x, fs, new_fs)
    n_new = round(n / fs * new_fs)
    return _interp(x, 0, n, _new_positions(n, fs, new_fs, 0, n_new), depth)


def _new_positions(n: int, fs: float, new_fs: float, j0: int, j1: int) -> np.ndarray:
    """Positions in old samples of new samples ``j0:j1``: sample k of a signal lies at
    ``(k + 0.5) / fs``, and the new samples are centred on the same span."""
    n_new = round(n / fs * new_fs)
    t_new = 0.5 * (n / fs - (n_new - 1) / new_fs) + np.arange(j0, j1) / new_fs
    return t_new * fs - 0.5


def _lowpass(x: np.ndarray, fs: float, new_fs: float) -> np.ndarray:
    """``x`` without the frequencies at and above ``new_fs / 2`` (FFT, zero-padded)."""
    n = x.size
    n_fft = 1 << math.ceil(math.log2(n + 2 * 1000))
    spec = np.fft.rfft(x, n_fft)
    spec[np.fft.rfftfreq(n_fft, 1.0 / fs) >= 0.5 * new_fs] = 0.0
    return np.fft.irfft(spec, n_fft)[:n]


def _interp(x: np.ndarray, offset: int, n: int, pos: np.ndarray, depth: int) -> np.ndarray:
    """Windowed-sinc values at positions ``pos`` of a signal of ``n`` samples of which
    ``x`` holds samples ``offset:offset + x.size`` (the depth shrinks at its ends)."""
    out = np.empty(pos.size)
    k = np.arange(1 - depth, depth + 1)
    for c0 in range(0, pos.size, 1 << 14):  # bounded memory: 16384 new samples at a time
        p = pos[c0:c0 + (1 << 14)]
        left = np.floor(p).astype(np.int64)
        frac = p - left
        idx = left[:, None] + k[None, :]
        d_eff = np.minimum(np.minimum(depth, left + 1), n - 1 - left)
        use = (k[None, :] >= 1 - d_eff[:, None]) & (k[None, :] <= d_eff[:, None]) & \
            (idx >= 0) & (idx < n)
        d = frac[:, None] - k[None, :]
        span = np.where(k[None, :] <= 0, (frac + d_eff)[:, None],
                        (d_eff + 1 - frac)[:, None])
        with np.errstate(divide="ignore", invalid="ignore"):
            w = 0.5 + 0.5 * np.cos(np.pi * d / span)
        vals = x[np.clip(idx - offset, 0, x.size - 1)]
        o = np.sum(np.where(use, vals * np.sinc(d) * w, 0.0), axis=1)
        exact = frac == 0
        o[exact] = x[np.clip(left[exact] - offset, 0, x.size - 1)]
        out[c0:c0 + p.size] = o
    return out


def formants_burg(x: Any, fs: float | None = None, *, time_step: float = 0.0,
                  max_number_of_formants: float = 5.0, formant_ceiling: float = 5500.0,
                  window_length: float = 0.025, pre_emphasis_from: float = 50.0,
                  channel: int = 0, resampler: str = "sinc",
                  block_frames: int = 2000) -> Track:
    """Formants per frame by Burg's linear prediction, Praat's "To Formant (burg)".

    Parameters
    ----------
    x : array_like or Recording
        Samples, or a recording.
    fs : float
        Samples per second (taken from a recording).
    time_step : float
        Seconds between frames; 0 takes a quarter of ``window_length``.
    max_number_of_formants : float
        Formants sought; twice it is the prediction order.
    formant_ceiling : float
        Hz: the signal is resampled to twice it.
    window_length : float
        Effective duration, seconds; the Gaussian window is twice as long.
    pre_emphasis_from : float
        Hz above which the signal is raised 6 dB per octave.
    channel : int
        The channel analysed.
    resampler : str
        ``"sinc"`` (FFT low-pass and windowed sinc, as Praat) or ``"poly"``
        (``scipy.signal.resample_poly``).
    block_frames : int
        Frames per block read (sinc resampler), each block low-passed with 32768
        samples of context each side; a signal within one block and its context is
        low-passed whole, as Praat does; 0 reads any signal whole.

    Returns
    -------
    Track
        Kind ``"formants"``, columns ``F1..Fn`` then ``B1..Bn`` in Hz, NaN where a frame
        has fewer formants.
    """
    check_positive("formant_ceiling", formant_ceiling)
    check_positive("window_length", window_length)
    check_positive("max_number_of_formants", max_number_of_formants)
    if time_step < 0:
        raise InputError(f"time_step={time_step:g} must be >= 0 (0: a quarter of "
                         "window_length)")
    if hasattr(x, "read") and hasattr(x, "sample_rate"):
        rec = x
        fs = float(rec.sample_rate)
        n = int(rec.n_samples)

        def read(a: int, b: int) -> np.ndarray:
            out = np.zeros(b - a)
            a0, b0 = max(a, 0), min(b, n)
            if b0 > a0:
                out[a0 - a:b0 - a] = rec.read(a0, b0, channel)[:, 0]
            return out
    else:
        if fs is None:
            raise ValueError("a sample array needs its sample rate fs")
        sig = np.asarray(x, float)
        if sig.ndim == 2:
            sig = sig[:, channel]
        n = sig.size

        def read(a: int, b: int) -> np.ndarray:
            out = np.zeros(b - a)
            a0, b0 = max(a, 0), min(b, n)
            out[a0 - a:b0 - a] = sig[a0:b0]
            return out
    fs = float(fs)
    if formant_ceiling > fs / 2 * (1 + 1e-9):
        raise InputError(f"formant_ceiling={formant_ceiling:g} Hz lies above the Nyquist "
                         f"frequency, {fs / 2:g} Hz at {fs:g} Hz")
    n_formants = math.floor(max_number_of_formants)
    order = round(2 * max_number_of_formants)
    dt = time_step if time_step > 0 else window_length / 4.0
    new_fs = 2.0 * formant_ceiling
    same_rate = abs(fs - new_fs) <= 1e-6 * fs
    if same_rate:
        new_fs = fs
    n_new = n if same_rate else round(n / fs * new_fs)
    dx = 1.0 / new_fs
    win_dur = 2.0 * window_length
    half = math.floor(win_dur / dx) // 2
    n_win = 2 * half
    offset = 0.5 * (n / fs - n_new * dx)  # the new samples' span is centred on the old
    times = frame_times(n_new, new_fs, win_dur, dt) + offset
    cols = [f"F{i + 1}" for i in range(n_formants)] + [f"B{i + 1}" for i in range(n_formants)]
    values = np.full((times.size, 2 * n_formants), np.nan)
    params = {"time_step": dt, "max_number_of_formants": max_number_of_formants,
              "formant_ceiling": formant_ceiling, "window_length": window_length,
              "pre_emphasis_from": pre_emphasis_from, "method": "burg"}
    if not times.size or n_win <= order:
        return Track("formants", times, values, tuple(cols), tuple("Hz" for _ in cols),
                     params)
    emphasis = math.exp(-2.0 * math.pi * pre_emphasis_from * dx)
    i = np.arange(1, n_win + 1)
    mid = 0.5 * (n_win + 1)
    edge = math.exp(-12.0)
    window = (np.exp(-48.0 * (i - mid) ** 2 / (n_win + 1) ** 2) - edge) / (1 - edge)
    left = np.floor((times - offset) * new_fs - 0.5 + 1e-9).astype(np.int64)
    start = left + 1 - half

    def resampled(j0: int, j1: int) -> np.ndarray:
        """New samples ``j0:j1`` (inside the signal), before pre-emphasis."""
        if same_rate:
            return read(j0, j1)
        if resampler == "poly":
            from scipy.signal import resample_poly  # only this resampler needs it

            return resample_poly(read(0, n), *_ratio(new_fs, fs))[j0:j1]
        pos = _new_positions(n, fs, new_fs, j0, j1)
        reach = 50 + (_CONTEXT if new_fs < fs else 0)
        a = max(math.floor(pos[0]) - reach, 0)
        b = min(math.floor(pos[-1]) + reach + 2, n)
        seg = read(a, b)
        if new_fs < fs:
            seg = _lowpass(seg, fs, new_fs)
        return _interp(seg, a, n, pos, 50)

    whole = block_frames <= 0 or resampler == "poly"
    step = times.size if whole else block_frames
    for b0 in range(0, times.size, step):
        b1 = min(b0 + step, times.size)
        j0 = 0 if whole else max(int(start[b0]) - 1, 0)
        j1 = n_new if whole else min(int(start[b1 - 1]) + n_win, n_new)
        y = resampled(j0, j1)
        pre = y.copy()
        pre[1:] = y[1:] - emphasis * y[:-1]  # the first sample of the signal stays
        if j0 > 0:
            pre = pre[1:]
            j0 += 1
        padded = np.concatenate([np.zeros(n_win), pre, np.zeros(n_win)])
        idx = (start[b0:b1] - j0)[:, None] + np.arange(n_win)[None, :]
        frames = padded[idx + n_win] * window[None, :]
        values[b0:b1] = _frame_formants(frames, order, n_formants, new_fs)
    return Track("formants", times, values, tuple(cols), tuple("Hz" for _ in cols),
                 params)


#: old samples of context each side of a block for its FFT low-pass
_CONTEXT = 1 << 15


def _frame_formants(frames: np.ndarray, order: int, n_formants: int,
                    fs: float) -> np.ndarray:
    """F1..Fn then B1..Bn of each windowed frame (NaN where fewer)."""
    out = np.full((frames.shape[0], 2 * n_formants), np.nan)
    coeffs = burg_lpc(frames, order)
    for j in np.nonzero(np.any(frames != 0, axis=1))[0]:
        roots = np.roots(np.concatenate([[1.0], -coeffs[j]]))
        roots = roots[roots.imag >= 0]
        f = np.abs(np.angle(roots)) * fs / (2 * np.pi)
        bw = -np.log(np.abs(roots)) * fs / np.pi
        keep = (f >= 50.0) & (f <= 0.5 * fs - 50.0)
        by_f = np.argsort(f[keep])[:n_formants]
        ff, bb = f[keep][by_f], bw[keep][by_f]
        out[j, :ff.size] = ff
        out[j, n_formants:n_formants + bb.size] = bb
    return out


def _ratio(new_fs: float, fs: float) -> tuple[int, int]:
    from fractions import Fraction
    r = Fraction(new_fs / fs).limit_denominator(1000)
    return r.numerator, r.denominator


def formant_track(source: Any, channel: int = 0, *, sr: float | None = None,
                  time_step: float = 0.0, max_number_of_formants: float = 5.0,
                  formant_ceiling: float = 5500.0, window_length: float = 0.025,
                  pre_emphasis_from: float = 50.0, block_frames: int = 2000) -> Track:
    """:func:`formants_burg` in the form of the kind table: ``(source, channel, *,
    sr=...)``.

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
    return formants_burg(source, sr, time_step=time_step,
                         max_number_of_formants=max_number_of_formants,
                         formant_ceiling=formant_ceiling, window_length=window_length,
                         pre_emphasis_from=pre_emphasis_from, channel=channel,
                         block_frames=block_frames)
