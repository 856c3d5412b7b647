"""Formants by linear prediction (Burg's method), as Praat's "Sound: To Formant
(burg)..." describes it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.signal import resample_poly

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
        n_fft = 1 << math.ceil(math.log2(n + 2 * 1000))
        spec = np.fft.rfft(x, n_fft)
        freqs = np.fft.rfftfreq(n_fft, 1.0 / fs)
        spec[freqs >= 0.5 * new_fs] = 0.0
        x = np.fft.irfft(spec, n_fft)[:n]
    n_new = round(n / fs * new_fs)
    # sample k of the old signal lies at (k + 0.5) / fs; new samples centred the same way
    t_new = 0.5 * (n / fs - (n_new - 1) / new_fs) + np.arange(n_new) / new_fs
    pos = t_new * fs - 0.5
    out = np.empty(n_new)
    k = np.arange(1 - depth, depth + 1)
    for c0 in range(0, n_new, 1 << 14):  # bounded memory: 16384 new samples at a time
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
        o = np.sum(np.where(use, x[np.clip(idx, 0, n - 1)] * np.sinc(d) * w, 0.0), axis=1)
        exact = frac == 0
        o[exact] = x[np.clip(left[exact], 0, n - 1)]
        out[c0:c0 + p.size] = o
    return out


def formants_burg(x: Any, fs: float | None = None, *, time_step: float = 0.0,
                  max_number_of_formants: float = 5.0, formant_ceiling: float = 5500.0,
                  window_length: float = 0.025, pre_emphasis_from: float = 50.0,
                  channel: int = 0, resampler: str = "sinc") -> Track:
    """Formants per frame by Burg's linear prediction, Praat's "To Formant (burg)".

    Parameters
    ----------
    x : array_like or Recording
        Samples, or a recording (read whole: the resampling is over the whole signal).
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

    Returns
    -------
    Track
        Kind ``"formants"``, columns ``F1..Fn`` then ``B1..Bn`` in Hz, NaN where a frame
        has fewer formants.
    """
    if hasattr(x, "read") and hasattr(x, "sample_rate"):
        fs = float(x.sample_rate)
        sig = np.asarray(x.read(0, None, channel)[:, 0], float)
    else:
        if fs is None:
            raise ValueError("a sample array needs its sample rate fs")
        sig = np.asarray(x, float)
        if sig.ndim == 2:
            sig = sig[:, channel]
    fs = float(fs)
    n_formants = math.floor(max_number_of_formants)
    order = round(2 * max_number_of_formants)
    dt = time_step if time_step > 0 else window_length / 4.0
    new_fs = 2.0 * formant_ceiling
    if abs(fs - new_fs) > 1e-6 * fs:
        if resampler == "poly":
            frac = _ratio(new_fs, fs)
            y = resample_poly(sig, *frac)
        else:
            y = resample_sinc(sig, fs, new_fs)
    else:
        y = sig.copy()
        new_fs = fs
    dx = 1.0 / new_fs
    # pre-emphasis: y[i] - a y[i-1], a = exp(-2 pi F dx)
    a = math.exp(-2.0 * math.pi * pre_emphasis_from * dx)
    y[1:] = y[1:] - a * y[:-1]
    win_dur = 2.0 * window_length
    half = math.floor(win_dur / dx) // 2
    n_win = 2 * half
    duration = y.size * dx
    times = frame_times(y.size, new_fs, win_dur, dt) + 0.5 * (sig.size / fs - duration)
    cols = [f"F{i + 1}" for i in range(n_formants)] + [f"B{i + 1}" for i in range(n_formants)]
    values = np.full((times.size, 2 * n_formants), np.nan)
    params = {"time_step": dt, "max_number_of_formants": max_number_of_formants,
              "formant_ceiling": formant_ceiling, "window_length": window_length,
              "pre_emphasis_from": pre_emphasis_from, "method": "burg"}
    if times.size and n_win > order:
        i = np.arange(1, n_win + 1)
        mid = 0.5 * (n_win + 1)
        edge = math.exp(-12.0)
        window = (np.exp(-48.0 * (i - mid) ** 2 / (n_win + 1) ** 2) - edge) / (1 - edge)
        left = np.floor((times - 0.5 * (sig.size / fs - duration)) * new_fs - 0.5 + 1e-9)
        start = left.astype(np.int64) + 1 - half
        idx = start[:, None] + np.arange(n_win)[None, :]
        padded = np.concatenate([np.zeros(n_win), y, np.zeros(n_win)])
        frames = padded[idx + n_win] * window[None, :]
        coeffs = burg_lpc(frames, order)
        live = np.any(frames != 0, axis=1)
        for j in np.nonzero(live)[0]:
            roots = np.roots(np.concatenate([[1.0], -coeffs[j]]))
            roots = roots[roots.imag >= 0]
            f = np.abs(np.angle(roots)) * new_fs / (2 * np.pi)
            bw = -np.log(np.abs(roots)) * new_fs / np.pi
            keep = (f >= 50.0) & (f <= 0.5 * new_fs - 50.0)
            order_f = np.argsort(f[keep])[:n_formants]
            ff, bb = f[keep][order_f], bw[keep][order_f]
            values[j, :ff.size] = ff
            values[j, n_formants:n_formants + bb.size] = bb
    return Track("formants", times, values, tuple(cols),
                 tuple("Hz" for _ in cols), params)


def _ratio(new_fs: float, fs: float) -> tuple[int, int]:
    from fractions import Fraction
    r = Fraction(new_fs / fs).limit_denominator(1000)
    return r.numerator, r.denominator


def formant_track(source: Any, channel: int = 0, *, sr: float | None = None,
                  time_step: float = 0.0, max_number_of_formants: float = 5.0,
                  formant_ceiling: float = 5500.0, window_length: float = 0.025,
                  pre_emphasis_from: float = 50.0, block_frames: int = 0) -> Track:
    """:func:`formants_burg` in the form of the kind table: ``(source, channel, *,
    sr=...)``; ``block_frames`` is accepted and unused (the signal is read whole).

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
    del block_frames
    return formants_burg(source, sr, time_step=time_step,
                         max_number_of_formants=max_number_of_formants,
                         formant_ceiling=formant_ceiling, window_length=window_length,
                         pre_emphasis_from=pre_emphasis_from, channel=channel)
