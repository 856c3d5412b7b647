"""Spectral lines: find the exact frequency of a line (mains hum) and its harmonics.

:func:`find_line` refines a rough click from the samples: a Welch spectrum with a
Gaussian window (:func:`line_spectrum`), parabolic peaks, the harmonics standing
:data:`THRESHOLD_DB` above their local noise floor, and a weighted fit of the
fundamental across them; :func:`notch_for_line` (:mod:`.design`) makes it a filter.

See docs/explanation/rooms/filters.md.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["MAX_GAP", "THRESHOLD_DB", "LineFit", "find_line", "line_spectrum",
           "search_tolerance"]

#: a harmonic counts when its peak stands this far above the local noise floor (dB)
THRESHOLD_DB = 10.0
#: harmonics below the floor in a row after which the search stops
MAX_GAP = 5
#: bins of the analysis aimed at (Hz); shorter recordings get coarser bins
TARGET_RESOLUTION_HZ = 0.2
#: the search window around a click is this many of the view's resolution wide (each side)
VIEW_RESOLUTIONS = 1.5
#: at most this many samples are analysed (the middle of a longer span)
MAX_SAMPLES = 1 << 23
#: Welch segments averaged at least (when the span allows)
MIN_SEGMENTS = 4


@dataclass(frozen=True)
class LineFit:
    """A spectral line measured from a recording (see :func:`find_line`).

    Attributes
    ----------
    frequency_hz : float
        The fundamental, fitted across the harmonics found.
    stderr_hz : float
        Its standard error (from the peaks' signal-to-noise ratios).
    harmonics : tuple of int
        The harmonics standing above the noise floor (1 = the fundamental).
    peaks_hz : tuple of float
        The refined peak of each of those harmonics.
    levels_db, floor_db : tuple of float
        Peak power and local noise floor of each harmonic (dB of the
        power spectrum's units).
    resolution_hz : float
        Bin width of the spectrum measured.
    near_hz : float
        Where the search started (the click).
    threshold_db : float
        The margin above the floor a harmonic needed.
    """

    frequency_hz: float
    stderr_hz: float
    harmonics: tuple[int, ...]
    peaks_hz: tuple[float, ...]
    levels_db: tuple[float, ...]
    floor_db: tuple[float, ...]
    resolution_hz: float
    near_hz: float
    threshold_db: float = THRESHOLD_DB

    @property
    def top_harmonic(self) -> int:
        """The highest harmonic above the floor."""
        return max(self.harmonics)

    def describe(self) -> str:
        """One line, e.g. ``"49.93 Hz, harmonics 1–7 above the floor"``."""
        return f"{self.frequency_hz:.2f} Hz, {_harmonics_text(self.harmonics)} above the floor"


def _harmonics_text(ks: tuple[int, ...]) -> str:
    if ks == (1,):
        return "no harmonics, the fundamental"
    runs: list[str] = []
    start = prev = ks[0]
    for k in (*ks[1:], None):
        if k is not None and k == prev + 1:
            prev = k
            continue
        runs.append(f"{start}" if start == prev else f"{start}–{prev}")
        if k is not None:
            start = prev = k
    return "harmonics " + ", ".join(runs)


def line_spectrum(x: np.ndarray, fs: float, *, resolution_hz: float = TARGET_RESOLUTION_HZ
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Welch power spectrum for line measurements: long segments, Gaussian window.

    Parameters
    ----------
    x : numpy.ndarray
        Samples, shaped ``(n,)`` or ``(n, channels)`` (channels are averaged);
        complex samples give the positive frequencies of the two-sided spectrum.
    fs : float
        Sample rate in Hz.
    resolution_hz : float
        Bin width aimed at; at least :data:`MIN_SEGMENTS` half-overlapping
        segments are kept, so short spans get wider bins.

    Returns
    -------
    f, p : numpy.ndarray
        Frequencies (Hz, from 0) and mean power per bin (unnormalised).
    """
    x = np.asarray(x)
    if x.ndim == 1:
        x = x[:, None]
    n = x.shape[0]
    if n < 64:
        raise InputError(f"{n} samples are too few to measure a spectral line (need 64)")
    if n > MAX_SAMPLES:
        mid = (n - MAX_SAMPLES) // 2
        x, n = x[mid:mid + MAX_SAMPLES], MAX_SAMPLES
    want = 1 << max(6, math.ceil(math.log2(fs / resolution_hz)))
    most = 1 << max(6, int(math.log2(2 * n / (MIN_SEGMENTS + 1))))
    nseg = min(want, most, 1 << int(math.log2(n)))
    hop = nseg // 2
    i = np.arange(nseg) - (nseg - 1) / 2.0
    win = np.exp(-0.5 * (i / (nseg / 8.0)) ** 2)
    cplx = np.iscomplexobj(x)
    acc = None
    count = 0
    for s in range(0, n - nseg + 1, hop):
        seg = x[s:s + nseg].astype(np.complex128 if cplx else np.float64)
        seg = (seg - seg.mean(axis=0)) * win[:, None]
        spec = np.fft.fft(seg, axis=0)[:nseg // 2 + 1] if cplx else np.fft.rfft(seg, axis=0)
        pw = np.mean(np.abs(spec) ** 2, axis=1)
        acc = pw if acc is None else acc + pw
        count += 1
    f = np.arange(nseg // 2 + 1) * (fs / nseg)
    return f, acc / count


def _refine(p_db: np.ndarray, i: int) -> tuple[float, float]:
    """Parabolic peak of log power around bin ``i``: (fractional bin, peak dB)."""
    a, b, c = p_db[i - 1], p_db[i], p_db[i + 1]
    den = a - 2 * b + c
    d = 0.0 if den >= 0 else 0.5 * (a - c) / den
    d = float(np.clip(d, -0.5, 0.5))
    return i + d, float(b - 0.25 * (a - c) * d)


def _floor_db(p: np.ndarray, i: int, half: int, guard: int) -> float:
    """Median power in ``i ± half`` bins, the ``± guard`` bins of the peak left out."""
    lo, hi = max(1, i - half), min(p.size, i + half + 1)
    idx = np.r_[lo:max(lo, i - guard), min(hi, i + guard + 1):hi]
    if idx.size < 4:
        idx = np.r_[lo:hi]
    return float(10 * np.log10(np.median(p[idx]) + 1e-300))


def search_tolerance(near: float, view_resolution_hz: float | None = None) -> float:
    """How far from ``near`` Hz :func:`find_line` looks for a line by default (Hz).

    ``max(2 Hz, near / 4)``: a rough guess of a low line (mains hum at 47 Hz
    finds 49.93 Hz).  A click on a view whose pixels or frequency bins are
    ``view_resolution_hz`` wide may land anywhere on the line's bin, so the
    window is at least :data:`VIEW_RESOLUTIONS` of that resolution.

    Parameters
    ----------
    near : float
        Where the search starts (Hz), e.g. a click.
    view_resolution_hz : float, optional
        Width of a pixel or frequency bin of the view clicked (Hz).

    Returns
    -------
    float
        The half-width of the search window (Hz).

    Examples
    --------
    >>> search_tolerance(47.0), search_tolerance(1000.0), search_tolerance(47.0, 10.0)
    (11.75, 250.0, 15.0)
    """
    tol = max(2.0, float(near) / 4.0)
    if view_resolution_hz is not None and math.isfinite(view_resolution_hz):
        tol = max(tol, VIEW_RESOLUTIONS * float(view_resolution_hz))
    return tol


def find_line(x: np.ndarray, fs: float, near: float, *, tolerance_hz: float | None = None,
              max_harmonics: int | None = None, threshold_db: float = THRESHOLD_DB,
              resolution_hz: float = TARGET_RESOLUTION_HZ,
              view_resolution_hz: float | None = None) -> LineFit:
    """Measure the spectral line near ``near`` Hz in samples ``x`` and its harmonics.

    Parameters
    ----------
    x : numpy.ndarray
        Samples ``(n,)`` or ``(n, channels)``; of complex (IQ) samples only the
        positive frequencies are searched.
    fs : float
        Sample rate in Hz.
    near : float
        Where the line roughly is (a click), in Hz.
    tolerance_hz : float, optional
        How far from ``near`` the line may be; default :func:`search_tolerance`
        of ``near`` and ``view_resolution_hz``.
    max_harmonics : int, optional
        Look no further than this harmonic (default: up to Nyquist).
    threshold_db : float
        Margin above the local noise floor a harmonic needs.
    resolution_hz : float
        Bin width aimed at (see :func:`line_spectrum`).
    view_resolution_hz : float, optional
        What one pixel or frequency bin of the view clicked spans near ``near``
        (the coarser of the two): the default window widens to cover it, and
        peaks within ``max(2 Hz, near / 4)`` of the click are preferred to
        those only the wider window reaches.

    Returns
    -------
    LineFit

    Raises
    ------
    InputError
        When ``near`` is outside (0, Nyquist) or no line stands above the floor there.
    """
    nyq = fs / 2.0
    if isinstance(near, bool) or not isinstance(near, numbers.Real) or not (
            math.isfinite(near) and 0 < near < nyq):
        raise InputError(f"near={near!r} Hz must be between 0 Hz and the Nyquist frequency "
                         f"{nyq:g} Hz")
    if tolerance_hz is None:
        tol = search_tolerance(near, view_resolution_hz)
        windows = sorted({search_tolerance(near), tol})
    else:
        tol = float(tolerance_hz)
        windows = [tol]
    f, p = line_spectrum(x, fs, resolution_hz=resolution_hz)
    df = float(f[1])
    p_db = 10 * np.log10(p + 1e-300)
    guard = 6  # bins of a Gaussian main lobe (std nseg/8: about ±4 bins) and a margin

    def floor_at(i: int, f0: float) -> float:
        return _floor_db(p, i, max(3 * guard, int(0.5 * f0 / df)), guard)

    # 1. the most prominent local maximum within the tolerance of the click (the
    # inner window first: a click nearer one line than another means that one)
    best, i0 = -math.inf, 0
    for win in windows:
        lo = max(1, math.floor((near - win) / df))
        hi = min(p.size - 2, math.ceil((near + win) / df))
        cand = [i for i in range(lo, hi + 1) if p[i] >= p[i - 1] and p[i] >= p[i + 1]]
        if cand:
            best, i0 = max((p_db[i] - floor_at(i, max(i * df, 4 * guard * df)), i)
                           for i in cand)
        if best >= threshold_db:
            break
    if best == -math.inf:
        raise InputError(f"no spectral line near {near:g} Hz")
    if best < threshold_db:
        raise InputError(f"no spectral line stands {threshold_db:g} dB above the noise floor "
                         f"within {near - tol:.4g}–{near + tol:.4g} Hz (strongest: "
                         f"{best:.1f} dB above it at {i0 * df:.2f} Hz)")
    b0, _ = _refine(p_db, i0)
    f0 = b0 * df
    top = math.floor((nyq - df) / f0)
    if max_harmonics is not None:
        top = min(top, int(max_harmonics))
    ks: list[int] = []
    peaks: list[float] = []
    levels: list[float] = []
    floors: list[float] = []
    weights: list[float] = []
    stderr = df
    gap = 0
    for k in range(1, top + 1):
        centre = k * f0 / df
        # search window: the estimate's uncertainty at this harmonic, at least 2 bins
        w = max(2, math.ceil(3 * k * stderr / df))
        a, b = round(centre) - w, round(centre) + w
        if a < 1 or b >= p.size - 1:
            break
        i = a + int(np.argmax(p[a:b + 1]))
        ok = a < i < b and p[i] >= p[i - 1] and p[i] >= p[i + 1]
        level = floor = 0.0
        if ok:
            frac, level = _refine(p_db, i)
            floor = floor_at(i, f0)
            ok = level - floor >= threshold_db and abs(frac - centre) <= w
        if not ok:
            gap += 1
            if ks and gap >= MAX_GAP:
                break
            continue
        gap = 0
        snr = 10 ** ((level - floor) / 10)
        ks.append(k)
        peaks.append(frac * df)
        levels.append(level)
        floors.append(floor)
        # a peak's frequency error scales as bin width / sqrt(SNR) (Cramer-Rao order)
        weights.append(snr / df ** 2)
        kk, pk, wk = np.array(ks, float), np.array(peaks), np.array(weights)
        f0 = float(np.sum(wk * kk * pk) / np.sum(wk * kk * kk))
        # parabolic interpolation leaves a bias of a few thousandths of a bin at least
        stderr = max(float(1.0 / np.sqrt(np.sum(wk * kk * kk))), 0.002 * df)
    if not ks:
        raise InputError(f"no spectral line stands {threshold_db:g} dB above the noise floor "
                         f"near {near:g} Hz")
    return LineFit(frequency_hz=f0, stderr_hz=stderr, harmonics=tuple(ks),
                   peaks_hz=tuple(peaks), levels_db=tuple(levels), floor_db=tuple(floors),
                   resolution_hz=df, near_hz=float(near), threshold_db=threshold_db)
