"""Spectral shape over time, as librosa defines it: centroid, bandwidth, roll-off,
flatness; and spectral flux (the positive spectral difference)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import InputError
from ..spectral import get_window
from .frames import BLOCK_FRAMES, as_recording, check_count, check_positive, read_padded
from .model import Track

__all__ = ["SPECTRAL_KINDS", "magnitude_blocks", "spectral_bandwidth", "spectral_centroid",
           "spectral_flatness", "spectral_flux", "spectral_rolloff"]


def _frame_plan(rec: Any, n_fft: int, hop_length: int, center: bool
                ) -> tuple[int, int]:
    """(number of frames, sample index where frame 0 starts)."""
    pad = n_fft // 2 if center else 0
    n = rec.n_samples + 2 * pad
    if n < n_fft:
        raise InputError(f"n_fft={n_fft} is longer than the recording ({rec.n_samples} "
                         "samples)" + ("" if center else " with center=False"))
    return 1 + (n - n_fft) // hop_length, -pad


def _window(window: str, n_fft: int, win_length: int | None) -> np.ndarray:
    wl = n_fft if win_length is None else check_count("win_length", win_length)
    if not 0 < wl <= n_fft:
        raise InputError(f"win_length={win_length} must be in 1..n_fft ({n_fft})")
    w = get_window(window, wl)
    full = np.zeros(n_fft)
    lpad = (n_fft - wl) // 2
    full[lpad:lpad + wl] = w
    return full


def magnitude_blocks(source: Any, channel: int = 0, *, sr: float | None = None,
                     n_fft: int = 2048, hop_length: int = 512,
                     win_length: int | None = None, window: str = "hann",
                     center: bool = True, power: float = 1.0,
                     block_frames: int = BLOCK_FRAMES
                     ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The |STFT|**power of a channel, block by block, as librosa.stft frames it.

    Frames are centred on ``t * hop_length`` with zeros outside the recording when
    ``center`` (librosa's ``pad_mode="constant"``).

    Yields
    ------
    times : numpy.ndarray
        Frame centres (s) of the block.
    S : numpy.ndarray
        Shape (frames, 1 + n_fft // 2).
    """
    rec = as_recording(source, sr)
    n_fft, hop_length = check_count("n_fft", n_fft, 2), check_count("hop_length", hop_length)
    power = check_positive("power", power)
    w = _window(window, n_fft, win_length)
    n_frames, first = _frame_plan(rec, n_fft, hop_length, center)
    centre = first + n_fft / 2
    block = max(1, int(block_frames))
    for f0 in range(0, n_frames, block):
        f1 = min(n_frames, f0 + block)
        lo = first + f0 * hop_length
        x = read_padded(rec, lo, first + (f1 - 1) * hop_length + n_fft, channel)
        frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop_length]
        mag = np.abs(np.fft.rfft(frames * w, axis=1))
        if power != 1.0:
            with np.errstate(over="ignore"):
                mag = mag ** power
        yield (centre + np.arange(f0, f1) * hop_length) / rec.sample_rate, mag


def _run(kind: str, columns: tuple[str, ...], units: tuple[str, ...], source: Any,
         channel: int, sr: float | None, stft: dict[str, Any], params: dict[str, Any],
         per_block: Any) -> Track:
    rec = as_recording(source, sr)
    freq = np.fft.rfftfreq(check_count("n_fft", stft["n_fft"], 2), 1.0 / rec.sample_rate)
    times, values = [], []
    for t, S in magnitude_blocks(rec, channel, **stft):
        times.append(t)
        values.append(per_block(S, freq))
    return Track(kind, np.concatenate(times), np.concatenate(values), columns, units,
                 {**{k: v for k, v in stft.items() if k != "block_frames"}, **params})


def _stft(n_fft: int, hop_length: int, win_length: int | None, window: str, center: bool,
          block_frames: int) -> dict[str, Any]:
    return {"n_fft": n_fft, "hop_length": hop_length, "win_length": win_length,
            "window": window, "center": center, "block_frames": block_frames}


def _normalized(S: np.ndarray) -> np.ndarray:
    total = S.sum(axis=1, keepdims=True)
    return S / np.where(total < np.finfo(S.dtype).tiny, 1.0, total)


def _centroid(S: np.ndarray, freq: np.ndarray) -> np.ndarray:
    return (_normalized(S) * freq).sum(axis=1)


def spectral_centroid(source: Any, channel: int = 0, *, sr: float | None = None,
                      n_fft: int = 2048, hop_length: int = 512,
                      win_length: int | None = None, window: str = "hann",
                      center: bool = True, block_frames: int = BLOCK_FRAMES) -> Track:
    """Spectral centroid (Hz) per frame, equal to librosa.feature.spectral_centroid.

    Parameters
    ----------
    source : Recording or array_like
    channel : int
    sr : float, optional
        Sample rate of an array source.
    n_fft, hop_length, win_length, window, center
        The STFT, under librosa's names and defaults (zero padding when centred).
    block_frames : int
        Frames computed per block read.

    Returns
    -------
    Track
        Kind ``"centroid"``, column ``"centroid"`` in Hz.
    """
    stft = _stft(n_fft, hop_length, win_length, window, center, block_frames)
    return _run("centroid", ("centroid",), ("Hz",), source, channel, sr, stft, {},
                _centroid)


def spectral_bandwidth(source: Any, channel: int = 0, *, sr: float | None = None,
                       n_fft: int = 2048, hop_length: int = 512,
                       win_length: int | None = None, window: str = "hann",
                       center: bool = True, p: float = 2.0,
                       block_frames: int = BLOCK_FRAMES) -> Track:
    """Spectral bandwidth of order ``p`` (Hz), equal to librosa.feature.spectral_bandwidth.

    Parameters are those of :func:`spectral_centroid`, and ``p``, the order of the
    deviation around the centroid.

    Returns
    -------
    Track
        Kind ``"bandwidth"``, column ``"bandwidth"`` in Hz.
    """
    p = check_positive("p", p)

    def per_block(S: np.ndarray, freq: np.ndarray) -> np.ndarray:
        c = _centroid(S, freq)
        dev = np.abs(freq[None, :] - c[:, None])
        with np.errstate(over="ignore", invalid="ignore"):
            return ((_normalized(S) * dev ** p).sum(axis=1)) ** (1.0 / p)

    stft = _stft(n_fft, hop_length, win_length, window, center, block_frames)
    return _run("bandwidth", ("bandwidth",), ("Hz",), source, channel, sr, stft, {"p": p},
                per_block)


def spectral_rolloff(source: Any, channel: int = 0, *, sr: float | None = None,
                     n_fft: int = 2048, hop_length: int = 512,
                     win_length: int | None = None, window: str = "hann",
                     center: bool = True, roll_percent: float = 0.85,
                     block_frames: int = BLOCK_FRAMES) -> Track:
    """Roll-off frequency (Hz), equal to librosa.feature.spectral_rolloff.

    The lowest bin frequency below which ``roll_percent`` of the magnitude lies.

    Returns
    -------
    Track
        Kind ``"rolloff"``, column ``"rolloff"`` in Hz.
    """
    roll_percent = float(roll_percent)
    if not 0.0 < roll_percent < 1.0:
        raise InputError(f"roll_percent={roll_percent!r} must be between 0 and 1")

    def per_block(S: np.ndarray, freq: np.ndarray) -> np.ndarray:
        total = np.cumsum(S, axis=1)
        reached = total >= roll_percent * total[:, -1:]
        return freq[np.argmax(reached, axis=1)]

    stft = _stft(n_fft, hop_length, win_length, window, center, block_frames)
    return _run("rolloff", ("rolloff",), ("Hz",), source, channel, sr, stft,
                {"roll_percent": roll_percent}, per_block)


def spectral_flatness(source: Any, channel: int = 0, *, sr: float | None = None,
                      n_fft: int = 2048, hop_length: int = 512,
                      win_length: int | None = None, window: str = "hann",
                      center: bool = True, amin: float = 1e-10, power: float = 2.0,
                      block_frames: int = BLOCK_FRAMES) -> Track:
    """Spectral flatness (geometric over arithmetic mean of |STFT|**power, floored at
    ``amin``), equal to librosa.feature.spectral_flatness.

    Returns
    -------
    Track
        Kind ``"flatness"``, column ``"flatness"`` (a ratio, 0..1).
    """
    amin = check_positive("amin", amin)

    def per_block(S: np.ndarray, freq: np.ndarray) -> np.ndarray:
        S = np.maximum(amin, S)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.exp(np.mean(np.log(S), axis=1)) / np.mean(S, axis=1)

    stft = {**_stft(n_fft, hop_length, win_length, window, center, block_frames),
            "power": power}
    return _run("flatness", ("flatness",), ("ratio",), source, channel, sr, stft,
                {"amin": amin}, per_block)


def spectral_flux(source: Any, channel: int = 0, *, sr: float | None = None,
                  n_fft: int = 2048, hop_length: int = 512,
                  win_length: int | None = None, window: str = "hann",
                  center: bool = True, block_frames: int = BLOCK_FRAMES) -> Track:
    """Spectral flux: the sum over bins of the magnitude's rise since the frame before.

    ``flux[t] = sum_k max(0, |X[t, k]| - |X[t-1, k]|)``, 0 at the first frame, on the
    STFT of :func:`spectral_centroid` (see docs/guide/tracks.md).

    Returns
    -------
    Track
        Kind ``"flux"``, column ``"flux"`` (magnitude units of the recording).
    """
    previous: list[np.ndarray] = []

    def per_block(S: np.ndarray, freq: np.ndarray) -> np.ndarray:
        before = np.concatenate([previous[-1][None, :] if previous else S[:1], S[:-1]])
        previous[:] = [S[-1]]
        return np.maximum(0.0, S - before).sum(axis=1)

    stft = _stft(n_fft, hop_length, win_length, window, center, block_frames)
    return _run("flux", ("flux",), ("FS",), source, channel, sr, stft, {}, per_block)


#: the spectral-shape track of each kind
SPECTRAL_KINDS = {"centroid": spectral_centroid, "bandwidth": spectral_bandwidth,
                  "rolloff": spectral_rolloff, "flatness": spectral_flatness,
                  "flux": spectral_flux}
