"""Spectral lines: find the exact frequency of a line (mains hum) and its harmonics.

:func:`find_line` refines a rough click from the samples: a Welch spectrum with a
Gaussian window (:func:`line_spectrum`), parabolic peaks, the harmonics standing
:data:`THRESHOLD_DB` above their local noise floor, and a weighted fit of the
fundamental across them; :func:`notch_for_line` (:mod:`.design`) makes it a filter.
A click on a view carries a few pixels' uncertainty (``uncertainty_hz``): then the
line chosen is the most prominent family with a harmonic within it, the others
named (:attr:`LineFit.also_near`).

See docs/explanation/rooms/filters.md.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..freqfmt import format_frequency

__all__ = ["MAX_GAP", "THRESHOLD_DB", "LineFit", "NearLine", "find_line", "line_spectrum",
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
#: bins each side of a peak that are its own (a Gaussian main lobe, about ±4 bins, and a margin)
GUARD_BINS = 6
#: a line near a click may be up to this harmonic of the family chosen
MAX_SUBHARMONIC = 16
#: fundamentals this close (a fraction of the lower) or whole multiples of each other to
#: this much are one family's lines
SAME_LINE_FRACTION = 0.02
#: a line spans the bins around its peak within this many dB of it (a wavering voice's
#: harmonic is one broad line, not a family of its own in each ripple)
LINE_EXTENT_DB = 20.0
#: and falls at least this many dB on both sides before anything higher
LINE_DROP_DB = 6.0
#: other families near a click kept in :attr:`LineFit.also_near`, at most, and how far
#: above the floor their strongest harmonic stands at least (dB: a line a person sees)
MAX_ALSO_NEAR = 3
ALSO_NEAR_DB = 20.0
#: the digits a measured line is written with (Hz): a hundredth of a Hz (what a notch is
#: designed to), fewer when its standard error is coarser; the lines also near, a tenth
LINE_DIGITS_HZ = 0.01
NEAR_DIGITS_HZ = 0.1


@dataclass(frozen=True)
class NearLine:
    """A line family near a click other than the one measured (see :func:`find_line`).

    Attributes
    ----------
    frequency_hz : float
        Its fundamental.
    harmonics : tuple of int
        Its harmonics above the noise floor.
    prominence_db : float
        The sum over them of the dB above the floor (what chose between families).
    """

    frequency_hz: float
    harmonics: tuple[int, ...]
    prominence_db: float

    def describe(self) -> str:
        """E.g. ``"110.0 Hz (harmonics 1–3)"`` or ``"12.3450 kHz (one line)"``."""
        what = "one line" if self.harmonics == (1,) else _harmonics_text(self.harmonics)
        return f"{format_frequency(self.frequency_hz, NEAR_DIGITS_HZ)} ({what})"


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
    also_near : tuple of NearLine
        Other, less prominent line families with a harmonic in the window
        searched (only for a click with an uncertainty), most prominent first.
    window_hz : tuple of float, optional
        The frequencies searched, (low, high) Hz.
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
    also_near: tuple[NearLine, ...] = ()
    window_hz: tuple[float, float] | None = None

    @property
    def top_harmonic(self) -> int:
        """The highest harmonic above the floor."""
        return max(self.harmonics)

    def describe(self) -> str:
        """One line, e.g. ``"49.93 Hz, harmonics 1–7 above the floor"``, and the most
        prominent other family near a click: ``"…; also near: 110.0 Hz (harmonics 1–3)"``.

        Frequencies are written in Hz, kHz or MHz (``"1.23456 kHz"``), the line's to
        :data:`LINE_DIGITS_HZ` or its standard error if coarser.
        """
        err = self.stderr_hz if math.isfinite(self.stderr_hz) else 0.0
        hz = format_frequency(self.frequency_hz, max(err, LINE_DIGITS_HZ))
        text = f"{hz}, {_harmonics_text(self.harmonics)} above the floor"
        if self.also_near:
            text += f"; also near: {self.also_near[0].describe()}"
        return text


def _band_text(lo: float, hi: float, resolution: float) -> str:
    """``lo``–``hi`` Hz in one unit where they share one (``"0–330.5 Hz"``)."""
    a, b = format_frequency(lo, resolution), format_frequency(hi, resolution)
    number, unit = a.split(" ")
    if float(number) == 0:
        return f"0–{b}"  # the bottom of the spectrum, in any unit
    return f"{number}–{b}" if b.endswith(f" {unit}") else f"{a}–{b}"


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


@dataclass(frozen=True)
class _Family:
    """A fundamental and its harmonics above the floor (what :class:`LineFit` reports)."""

    f0: float
    stderr: float
    ks: tuple[int, ...]
    peaks: tuple[float, ...]
    levels: tuple[float, ...]
    floors: tuple[float, ...]

    @property
    def prominence_db(self) -> float:
        """The sum over the harmonics of the dB above the floor."""
        return float(sum(lv - fl for lv, fl in zip(self.levels, self.floors, strict=True)))

    @property
    def strongest_db(self) -> float:
        """How far above the floor the strongest harmonic stands (dB)."""
        return float(max(lv - fl for lv, fl in zip(self.levels, self.floors, strict=True)))

    def related(self, other: _Family, tol_hz: float, extent) -> bool:
        """Whether the two are the same lines: one fundamental a whole multiple of the
        other (to :data:`SAME_LINE_FRACTION` of the lower or ``tol_hz``), or on the line
        where the other has a harmonic (``extent(f)``: the (low, high) Hz the line at
        ``f`` spans; a broad line's harmonics may have been missed by the fit)."""
        lo, hi = sorted((self.f0, other.f0))
        m = max(1, round(hi / lo))
        if abs(hi - m * lo) <= max(tol_hz, SAME_LINE_FRACTION * lo):
            return True
        return any(a <= g.f0 <= b for f, g in ((self, other), (other, self))
                   for a, b in (extent(k * f.f0) for k in range(1, max(f.ks) + 1)))


def _fit_harmonics(p: np.ndarray, p_db: np.ndarray, df: float, i0: int, top_hz: float,
                   max_harmonics: int | None, threshold_db: float, floor_at) -> _Family | None:
    """The harmonics of the line peaking at bin ``i0`` standing above the floor, fitted."""
    b0, _ = _refine(p_db, i0)
    f0 = b0 * df
    top = math.floor((top_hz - df) / f0)
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
        return None
    return _Family(f0, stderr, tuple(ks), tuple(peaks), tuple(levels), tuple(floors))


def _families_near(p: np.ndarray, p_db: np.ndarray, df: float, lo: int, hi: int,
                   top_hz: float, max_harmonics: int | None, threshold_db: float,
                   floor_at, min_bin: int) -> list[_Family]:
    """Every line family with a member standing above the floor in bins ``lo..hi``.

    A family's fundamental is a peak above the floor at a window peak's
    frequency divided by 1 to :data:`MAX_SUBHARMONIC`; families are returned
    most prominent first (the sum over their harmonics of the dB above the floor).
    """
    def isolated(i: int) -> bool:
        # a line's peak falls LINE_DROP_DB on both sides before anything rises above it (a
        # ripple on a broad line's flank does not)
        reach = max(3 * GUARD_BINS, round(SAME_LINE_FRACTION * i))
        for step in (-1, 1):
            j = i + step
            while 0 < j < p.size - 1 and abs(j - i) <= reach:
                if p_db[j] > p_db[i]:
                    return False
                if p_db[j] <= p_db[i] - LINE_DROP_DB:
                    break
                j += step
        return True

    def standing(i: int) -> bool:
        return (p[i] >= p[i - 1] and p[i] >= p[i + 1]
                and p_db[i] - floor_at(i, max(i * df, 4 * GUARD_BINS * df)) >= threshold_db
                and isolated(i))

    peaks = [i for i in range(lo, hi + 1) if standing(i)]
    fundamentals: set[int] = set()
    for i in peaks:
        b, _ = _refine(p_db, i)
        for k in range(1, MAX_SUBHARMONIC + 1):
            c = round(b / k)
            if k > 1 and c < min_bin:
                break
            a = max(1, c - 2)
            j = a + int(np.argmax(p[a:c + 3]))
            if j in fundamentals or (1 <= j < p.size - 1 and standing(j)):
                fundamentals.add(j)
    found = []
    for j in sorted(fundamentals):
        fam = _fit_harmonics(p, p_db, df, j, top_hz, max_harmonics, threshold_db, floor_at)
        # a family counts when one of its harmonics is in the window
        if fam is not None and any(lo * df <= f <= hi * df for f in fam.peaks):
            found.append(fam)
    found.sort(key=lambda fam: -fam.prominence_db)
    return found


def find_line(x: np.ndarray, fs: float, near: float, *, tolerance_hz: float | None = None,
              max_harmonics: int | None = None, threshold_db: float = THRESHOLD_DB,
              resolution_hz: float = TARGET_RESOLUTION_HZ,
              view_resolution_hz: float | None = None,
              uncertainty_hz: float | None = None) -> LineFit:
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
    uncertainty_hz : float, optional
        How far (Hz) the click may be from the line meant, e.g. a few screen
        pixels at the view's zoom.  Given, the window covers at least
        ``near ± uncertainty_hz`` and the line chosen is the most prominent
        *family* with a harmonic there (the sum over its harmonics of the dB
        above the floor), not the nearest peak; the others with a harmonic
        there are :attr:`LineFit.also_near`.

    Returns
    -------
    LineFit

    Raises
    ------
    InputError
        When ``near`` is outside (0, Nyquist), ``uncertainty_hz`` is not a
        number >= 0, or no line stands above the floor there.
    """
    nyq = fs / 2.0
    if isinstance(near, bool) or not isinstance(near, numbers.Real) or not (
            math.isfinite(near) and 0 < near < nyq):
        where = (format_frequency(near) if isinstance(near, numbers.Real)
                 and not isinstance(near, bool) else f"{near!r} Hz")
        raise InputError(f"near={where} must be between 0 Hz and the Nyquist frequency "
                         f"{format_frequency(nyq)}")
    if uncertainty_hz is not None and (
            isinstance(uncertainty_hz, bool) or not isinstance(uncertainty_hz, numbers.Real)
            or not (math.isfinite(uncertainty_hz) and uncertainty_hz >= 0)):
        raise InputError(f"uncertainty_hz={uncertainty_hz!r} must be a number of Hz >= 0")
    if tolerance_hz is None:
        tol = search_tolerance(near, view_resolution_hz)
        windows = sorted({search_tolerance(near), tol})
    else:
        tol = float(tolerance_hz)
        windows = [tol]
    if uncertainty_hz is not None:
        tol = max(tol, float(uncertainty_hz))
        windows = [tol]
    f, p = line_spectrum(x, fs, resolution_hz=resolution_hz)
    df = float(f[1])
    p_db = 10 * np.log10(p + 1e-300)
    guard = GUARD_BINS

    floors: dict[tuple[int, int], float] = {}

    def floor_at(i: int, f0: float) -> float:
        key = (i, max(3 * guard, int(0.5 * f0 / df)))
        if key not in floors:
            floors[key] = _floor_db(p, i, key[1], guard)
        return floors[key]

    def window(win: float) -> tuple[int, int]:
        return (max(1, math.floor((near - win) / df)),
                min(p.size - 2, math.ceil((near + win) / df)))

    # 1. the most prominent local maximum within the tolerance of the click (the
    # inner window first: a click nearer one line than another means that one)
    best, i0 = -math.inf, 0
    for win in windows:
        lo, hi = window(win)
        cand = [i for i in range(lo, hi + 1) if p[i] >= p[i - 1] and p[i] >= p[i + 1]]
        if cand:
            best, i0 = max((p_db[i] - floor_at(i, max(i * df, 4 * guard * df)), i)
                           for i in cand)
        if best >= threshold_db:
            break
    if best == -math.inf:
        raise InputError(f"no spectral line near {format_frequency(near, df)}")
    if best < threshold_db:
        raise InputError(f"no spectral line stands {threshold_db:g} dB above the noise floor "
                         f"within {_band_text(max(0.0, near - tol), near + tol, df)} "
                         f"(strongest: {best:.1f} dB above it at "
                         f"{format_frequency(i0 * df, df)})")
    also: tuple[NearLine, ...] = ()
    if uncertainty_hz is None:
        fam = _fit_harmonics(p, p_db, df, i0, nyq, max_harmonics, threshold_db, floor_at)
    else:
        # 2. a click's pixels: the most prominent family with a harmonic in the window
        def extent(f: float) -> tuple[float, float]:
            # the line at f: from the highest bin within SAME_LINE_FRACTION (or the guard
            # bins) of f, where it stands above the floor, to LINE_EXTENT_DB below it (at
            # most three times that far); nothing where no line stands
            w = max(guard, round(SAME_LINE_FRACTION * f / df))
            c = round(f / df)
            a, b = min(max(c - w, 1), p.size - 2), min(max(c + w, 1), p.size - 2)
            i = a + int(np.argmax(p_db[a:b + 1]))
            if p_db[i] - floor_at(i, max(f, 4 * guard * df)) < threshold_db:
                return math.inf, -math.inf
            a = b = i
            while a > max(1, i - 3 * w) and p_db[a - 1] >= p_db[i] - LINE_EXTENT_DB:
                a -= 1
            while b < min(p.size - 2, i + 3 * w) and p_db[b + 1] >= p_db[i] - LINE_EXTENT_DB:
                b += 1
            return (a - 0.5) * df, (b + 0.5) * df

        families = _families_near(p, p_db, df, *window(tol), nyq, max_harmonics,
                                  threshold_db, floor_at, min_bin=2 * guard)
        kept: list[_Family] = []
        for cand_fam in families:
            if not any(cand_fam.related(k, guard * df, extent) for k in kept):
                kept.append(cand_fam)
        fam = kept[0] if kept else _fit_harmonics(p, p_db, df, i0, nyq, max_harmonics,
                                                  threshold_db, floor_at)
        seen = [k for k in kept[1:] if k.strongest_db >= ALSO_NEAR_DB]
        also = tuple(NearLine(k.f0, k.ks, k.prominence_db) for k in seen[:MAX_ALSO_NEAR])
    if fam is None:
        raise InputError(f"no spectral line stands {threshold_db:g} dB above the noise floor "
                         f"near {format_frequency(near, df)}")
    return LineFit(frequency_hz=fam.f0, stderr_hz=fam.stderr, harmonics=fam.ks,
                   peaks_hz=fam.peaks, levels_db=fam.levels, floor_db=fam.floors,
                   resolution_hz=df, near_hz=float(near), threshold_db=threshold_db,
                   also_near=also, window_hz=(max(0.0, near - tol), near + tol))
