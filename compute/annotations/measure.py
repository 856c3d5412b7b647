"""Measurements of a box (time range and band) of a recording.

:func:`measure` reads only the samples the box needs, block by block, computes
its PSD frames in float64 and gives band power, peak, RMS and SNR in dB as a
:class:`Measurement`.  A deployment's frames are planned per contiguous segment: a
box across a gap measures the recorded samples of each side, no frame crosses it.

See docs/explanation/rooms/annotations.md.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..spectral import FRAMES_PER_BLOCK, StftParams, stft_frames

__all__ = ["MAX_NOISE_FRAMES", "Measurement", "measure", "measure_annotation"]

#: most frames outside the box that the noise estimate reads
MAX_NOISE_FRAMES = 1 << 16
_NOISE_RUN = 256
_RMS_CHUNK = 1 << 20
_FLOOR = 1e-30


def _db(power: float) -> float:
    # float64 throughout: to_db() gives float32 display values
    return 10.0 * math.log10(max(float(power), _FLOOR))


@dataclass(frozen=True)
class Measurement:
    """What :func:`measure` found in a box (definitions: docs/explanation/rooms/annotations.md).

    Attributes
    ----------
    start_s, stop_s : float
        The time range measured (``stop_s`` clipped to the recording's end).
    freq_low_hz, freq_high_hz : float
        The band measured, absolute Hz (the whole spectrum for a time-only box).
    channel : int
    duration_s : float
        ``stop_s - start_s``.
    bandwidth_hz : float
        ``freq_high_hz - freq_low_hz``.
    band_power_db : float
        Mean power in the band over the box's frames, dB re 1 unit**2.
    peak_frequency_hz, peak_time_s : float
        Where the largest PSD cell of the box is.
    rms_db : float
        RMS of the samples in the time range, dB re 1.
    snr_db : float or None
        ``band_power_db - noise_power_db``.
    noise_power_db : float or None
        Mean power in the band over the rest of the recording.
    n_frames, n_bins : int
        Frames and bins in the box.
    """

    start_s: float
    stop_s: float
    freq_low_hz: float
    freq_high_hz: float
    channel: int
    duration_s: float
    bandwidth_hz: float
    band_power_db: float
    peak_frequency_hz: float
    peak_time_s: float
    rms_db: float
    snr_db: float | None
    noise_power_db: float | None
    n_frames: int
    n_bins: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain JSON types (``None`` where not defined)."""
        return asdict(self)


def _check_number(name: str, value: Any, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{name}={value!r} must be a number ({unit})")
    x = float(value)
    if not math.isfinite(x):
        raise InputError(f"{name}={value!r} must be finite")
    return x


class _Frames:
    """The frames of a recording, per contiguous segment (a deployment's gaps are never
    crossed): frame ``first[s] + j`` starts at sample ``start[s] + j*hop``; one segment
    is the plain grid."""

    def __init__(self, recording: Any, params: StftParams) -> None:
        segments = getattr(recording, "segments", None)
        segs = segments() if callable(segments) else [(0, int(recording.n_samples))]
        self.start = [int(a) for a, _ in segs]
        self.n = [params.n_frames(b - a) if b - a >= params.nfft else 0 for a, b in segs]
        self.first = [0]
        for k in self.n[:-1]:
            self.first.append(self.first[-1] + k)
        self.total = self.first[-1] + self.n[-1]
        self.longest = max(b - a for a, b in segs)
        self.hop, self.nfft = params.hop, params.nfft

    def segment(self, k: int) -> int:
        """The segment holding frame ``k`` (empty segments skipped)."""
        s = bisect.bisect_right(self.first, k) - 1
        while s > 0 and self.n[s] == 0:
            s -= 1
        return max(s, 0)

    def sample(self, k: int) -> int:
        """First sample of frame ``k``."""
        s = self.segment(k)
        return self.start[s] + (k - self.first[s]) * self.hop

    def centre(self, k: int, fs: float) -> float:
        # the same expression as StftParams.frame_times, so the selection matches it
        s = self.segment(k)
        return (self.start[s] + (k - self.first[s]) * self.hop + self.nfft / 2) / fs

    def runs(self, k0: int, k1: int) -> Iterator[tuple[int, int]]:
        """Frames ``k0..k1-1`` cut where segments meet."""
        while k0 < k1:
            s = self.segment(k0)
            end = min(k1, self.first[s] + self.n[s])
            yield k0, end
            k0 = end


def _box_frames(start: float, stop: float, grid: _Frames, fs: float) -> tuple[int, int]:
    """First and last (inclusive) frame of the box."""
    n_frames = grid.total
    lo, hi = 0, n_frames  # the first frame centred at or after start
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if grid.centre(mid, fs) < start else (lo, mid)
    k0 = lo
    lo, hi = 0, n_frames  # the first frame centred after stop
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if grid.centre(mid, fs) <= stop else (lo, mid)
    k1 = lo - 1
    if k0 > k1:
        mid_t = (start + stop) / 2
        if len(grid.n) == 1:
            k = round((mid_t * fs - grid.nfft / 2) / grid.hop)
        else:  # the frame centred nearest to the box's middle
            k = k0 if k0 < n_frames else n_frames - 1
            if k > 0 and abs(grid.centre(k - 1, fs) - mid_t) <= abs(grid.centre(k, fs) - mid_t):
                k -= 1
        k0 = k1 = min(max(k, 0), n_frames - 1)
    return k0, k1


def _spectra(recording: Any, channel: int, params: StftParams, grid: _Frames, k0: int, k1: int,
             block: int = FRAMES_PER_BLOCK) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(first frame, bin frequencies, PSD (bins, frames))`` for frames ``k0..k1-1`` in blocks
    (no block crosses a gap)."""
    fs = float(recording.sample_rate)
    for r0, r1 in grid.runs(k0, k1):
        for a in range(r0, r1, block):
            b = min(a + block, r1)
            x = recording.read(grid.sample(a), grid.sample(b - 1) + params.nfft, channel)[:, 0]
            x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
            psd = StftParams(params.nfft, params.hop, params.window)
            yield a, psd.frequencies(fs, np.iscomplexobj(x)), stft_frames(x, psd, fs)


def _noise_runs(k0: int, k1: int, n_frames: int, cap: int) -> list[tuple[int, int]]:
    """Frame ranges outside ``[k0, k1]``: all of them, or evenly spaced runs up to ``cap``."""
    ranges = [(0, k0), (k1 + 1, n_frames)]
    ranges = [(a, b) for a, b in ranges if b > a]
    total = sum(b - a for a, b in ranges)
    if total <= cap:
        return ranges
    runs = [(a + i, min(a + i + _NOISE_RUN, b)) for a, b in ranges
            for i in range(0, b - a, _NOISE_RUN)]
    keep = max(1, cap // _NOISE_RUN)
    picks = np.unique(np.linspace(0, len(runs) - 1, keep).round().astype(int))
    return [runs[i] for i in picks]


def _band_mask(freqs: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    if lo is None or hi is None:
        return np.ones(freqs.size, dtype=bool)
    mask = (freqs >= lo) & (freqs <= hi)
    if not mask.any():
        df = freqs[1] - freqs[0] if freqs.size > 1 else 0.0
        if hi < freqs[0] - df / 2 or lo > freqs[-1] + df / 2:
            raise InputError(f"the band {lo:g}..{hi:g} Hz lies outside the spectrum "
                             f"({freqs[0]:g}..{freqs[-1]:g} Hz)")
        mask[int(np.argmin(np.abs(freqs - (lo + hi) / 2)))] = True
    return mask


def measure(recording: Any, start_s: float, stop_s: float, freq_low_hz: float | None = None,
            freq_high_hz: float | None = None, *, nfft: int = 1024, hop: int = 256,
            window: str | tuple = "hann", channel: int = 0,
            max_noise_frames: int = MAX_NOISE_FRAMES) -> Measurement:
    """Measure a box of a recording (definitions: docs/explanation/rooms/annotations.md).

    Parameters
    ----------
    recording : Recording
        Read with ``recording.read(start, stop, channel)`` only where needed.
    start_s, stop_s : float
        Time range in seconds from the first sample; ``stop_s`` beyond the end
        is clipped to it.
    freq_low_hz, freq_high_hz : float, optional
        Band in absolute Hz (RF for IQ recordings); both or neither.
    nfft, hop : int
        Frame length and step in samples.
    window : str or tuple
        Window name for ``scipy.signal.get_window``.
    channel : int
        Channel to measure.
    max_noise_frames : int
        Most frames outside the box read for the noise estimate.

    Returns
    -------
    Measurement
        Band power, peak, RMS and SNR of the box (dB), with its extent.

    Raises
    ------
    InputError
        A bad time range, band, channel or STFT parameter, or a recording
        shorter than ``nfft``; the message names the parameter.
    """
    params = StftParams(nfft, hop, window)
    fs = float(recording.sample_rate)
    n = int(recording.n_samples)
    duration = n / fs
    start = _check_number("start_s", start_s, "s")
    stop = _check_number("stop_s", stop_s, "s")
    if start < 0 or start >= duration:
        raise InputError(f"start_s={start_s!r} must be in [0, {duration:g}) s (the recording's "
                         "length)")
    if stop <= start:
        raise InputError(f"stop_s={stop_s!r} must be after start_s={start_s!r}")
    stop = min(stop, duration)
    if (freq_low_hz is None) != (freq_high_hz is None):
        raise InputError("give both freq_low_hz and freq_high_hz or neither")
    lo = hi = None
    if freq_low_hz is not None:
        lo = _check_number("freq_low_hz", freq_low_hz, "Hz")
        hi = _check_number("freq_high_hz", freq_high_hz, "Hz")
        if hi < lo:
            raise InputError(f"freq_high_hz={freq_high_hz!r} must be >= "
                             f"freq_low_hz={freq_low_hz!r}")
    if isinstance(channel, bool) or not isinstance(channel, (int, np.integer)) \
            or not 0 <= channel < recording.n_channels:
        raise InputError(f"channel={channel!r} is out of range; the recording has "
                         f"{recording.n_channels} channel(s), numbered from 0")
    if isinstance(max_noise_frames, bool) or not isinstance(max_noise_frames, int) \
            or max_noise_frames < 1:
        raise InputError(f"max_noise_frames={max_noise_frames!r} must be a whole number >= 1")
    channel = int(channel)
    grid = _Frames(recording, params)
    params.check_length(grid.longest)
    n_frames = grid.total
    k0, k1 = _box_frames(start, stop, grid, fs)
    df = fs / params.nfft
    offset = float(recording.center_frequency or 0.0) if recording.is_complex else 0.0

    # the box: band power per frame, the peak cell
    band_sum = 0.0
    peak = (-math.inf, 0.0, 0.0)
    mask = freqs = np.empty(0)
    for a, f, S in _spectra(recording, channel, params, grid, k0, k1 + 1):
        if a == k0:
            freqs = f + offset
            mask = _band_mask(freqs, lo, hi)
        cells = S[mask]
        band_sum += float(np.sum(cells.sum(axis=0) * df))
        i, j = np.unravel_index(int(np.argmax(cells)), cells.shape)
        if cells[i, j] > peak[0]:
            peak = (float(cells[i, j]), float(freqs[mask][i]), grid.centre(a + int(j), fs))
    n_box = k1 - k0 + 1
    band_power = band_sum / n_box

    # the rest: the same band's mean power
    noise_sum, noise_frames = 0.0, 0
    for a, b in _noise_runs(k0, k1, n_frames, max_noise_frames):
        for _, _, S in _spectra(recording, channel, params, grid, a, b):
            noise_sum += float(np.sum(S[mask].sum(axis=0) * df))
            noise_frames += S.shape[-1]
    noise_db = _db(noise_sum / noise_frames) if noise_frames else None

    # RMS of the samples in the time range
    i0 = min(round(start * fs), n - 1)
    i1 = min(max(round(stop * fs), i0 + 1), n)
    energy = 0.0
    for s in range(i0, i1, _RMS_CHUNK):
        x = recording.read(s, min(s + _RMS_CHUNK, i1), channel)[:, 0]
        energy += float(np.sum(np.abs(x.astype(np.complex128 if np.iscomplexobj(x)
                                                else np.float64)) ** 2))
    rms_db = _db(energy / (i1 - i0))

    if lo is None or hi is None:
        # the whole spectrum: 0..fs/2, or fc - fs/2 .. fc + fs/2 for IQ
        band_lo, band_hi = (offset - fs / 2, offset + fs / 2) if recording.is_complex \
            else (0.0, fs / 2)
    else:
        band_lo, band_hi = lo, hi
    band_power_db = _db(band_power)
    return Measurement(
        start_s=start, stop_s=stop, freq_low_hz=band_lo, freq_high_hz=band_hi, channel=channel,
        duration_s=stop - start, bandwidth_hz=band_hi - band_lo, band_power_db=band_power_db,
        peak_frequency_hz=peak[1], peak_time_s=peak[2], rms_db=rms_db,
        snr_db=None if noise_db is None else band_power_db - noise_db,
        noise_power_db=noise_db, n_frames=n_box, n_bins=int(mask.sum()))


def measure_annotation(recording: Any, annotation: Any, **options: Any) -> Measurement:
    """:func:`measure` of an :class:`~specscope.compute.annotations.Annotation`'s box.

    The annotation's channel is used unless ``channel=`` is given (channel 0
    when it has none).

    Parameters
    ----------
    recording : Recording
        The annotated recording.
    annotation : Annotation
        The box: its times (s), band (Hz, or none) and channel.
    **options
        Keyword arguments of :func:`measure` (``nfft``, ``hop``, ``window``,
        ``channel``, ``max_noise_frames``).

    Returns
    -------
    Measurement
        What :func:`measure` found in the box.

    Raises
    ------
    InputError
        As :func:`measure` raises.
    """
    options.setdefault("channel", annotation.channel if annotation.channel is not None else 0)
    return measure(recording, annotation.start_s, annotation.stop_s, annotation.freq_low_hz,
                   annotation.freq_high_hz, **options)
