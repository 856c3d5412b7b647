"""Spectrogram images for display: power aggregated over frames into columns.

A view asks for at most ``max_columns`` columns.  When the recording has more
frames than that, each column holds the mean (or the maximum, for peak-hold)
of the power of all frames whose centres fall in it — frames are never
skipped, so a short event is never hidden.  The recording is read block by
block, so memory does not grow with its length, and the work can be cancelled
between blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import Cancelled, InputError
from .io.base import Recording
from .spectral import FRAMES_PER_BLOCK, StftParams, stft_frames, to_db

REDUCTIONS = ("mean", "max")


@dataclass(frozen=True)
class SpectrogramImage:
    """A display-ready spectrogram.

    Attributes
    ----------
    db : ndarray, float32, shape (n_freq, n_columns)
        Level in dB (10 log10 of power, 20 log10 of magnitude), row 0 is the
        lowest frequency; C-contiguous for pyqtgraph's fast path.
    column_edges : ndarray, shape (n_columns + 1,)
        Time in seconds of each column's edges.
    frequencies : ndarray, shape (n_freq,)
        Bin centres in Hz (absolute, i.e. including the centre frequency for IQ).
    frames_per_column : float
        Mean number of STFT frames aggregated in a column.
    """

    db: np.ndarray
    column_edges: np.ndarray
    frequencies: np.ndarray
    frames_per_column: float
    params: StftParams
    channel: int
    reduce: str

    @property
    def frequency_edges(self) -> np.ndarray:
        f = self.frequencies
        df = f[1] - f[0] if f.size > 1 else 1.0
        return np.concatenate([f - df / 2, [f[-1] + df / 2]])


def column_bounds(n_frames: int, max_columns: int) -> np.ndarray:
    """Frame index bounds of each column: ``n_cols + 1`` increasing integers."""
    n_cols = max(1, min(n_frames, max_columns))
    return np.round(np.linspace(0, n_frames, n_cols + 1)).astype(np.int64)


def render_spectrogram(recording: Recording, params: StftParams, *, channel: int = 0,
                       max_columns: int = 4096, reduce: str = "mean",
                       progress: Callable[[float], None] | None = None,
                       cancelled: Callable[[], bool] | None = None) -> SpectrogramImage:
    """Render the whole recording's spectrogram into at most ``max_columns`` columns."""
    if reduce not in REDUCTIONS:
        raise InputError(f"reduce={reduce!r} must be one of {', '.join(REDUCTIONS)}")
    if max_columns < 1:
        raise InputError(f"max_columns={max_columns} must be >= 1")
    recording._channel_list(channel)
    fs = recording.sample_rate
    params.check_length(recording.n_samples, f"{recording.path.name}")
    n_frames = params.n_frames(recording.n_samples)
    bounds = column_bounds(n_frames, max_columns)
    n_cols = bounds.size - 1
    col_of_frame = np.repeat(np.arange(n_cols), np.diff(bounds))
    two_sided = recording.is_complex
    n_freq = params.nfft if two_sided else params.nfft // 2 + 1
    acc = np.zeros((n_freq, n_cols), dtype=np.float64 if reduce == "mean" else np.float32)
    if reduce == "max":
        acc[:] = -np.inf
    for k0 in range(0, n_frames, FRAMES_PER_BLOCK):
        if cancelled is not None and cancelled():
            raise Cancelled()
        k1 = min(k0 + FRAMES_PER_BLOCK, n_frames)
        x = recording.read(k0 * params.hop, (k1 - 1) * params.hop + params.nfft, channel)[:, 0]
        spec = stft_frames(x, params, fs, two_sided=two_sided)
        if not params.is_power:
            spec = spec * spec  # aggregate amplitude as power, shown as amplitude again
        cols = col_of_frame[k0:k1]
        starts = np.flatnonzero(np.diff(cols, prepend=-1))
        ucols = cols[starts]
        if reduce == "mean":
            acc[:, ucols] += np.add.reduceat(spec, starts, axis=1)
        else:
            acc[:, ucols] = np.maximum(acc[:, ucols], np.maximum.reduceat(spec, starts, axis=1))
        if progress is not None:
            progress(k1 / n_frames)
    if reduce == "mean":
        acc /= np.diff(bounds)[None, :]
    power = acc.astype(np.float32)
    db = to_db(power, power=True)
    freqs = params.frequencies(fs, two_sided)
    if recording.center_frequency:
        freqs = freqs + recording.center_frequency
    centres = (bounds * params.hop + params.nfft / 2 - params.hop / 2) / fs
    return SpectrogramImage(
        db=np.ascontiguousarray(db), column_edges=centres, frequencies=freqs,
        frames_per_column=n_frames / n_cols, params=params, channel=int(channel),
        reduce=reduce)
