"""Band-limited energy detection: sounds in a band above an adaptive noise floor; IQ bursts.

:class:`EnergyDetector` (``detect.energy``, Raven's band-limited energy detector,
by default whitened: each bin over its own noise floor) finds events where the band
power stands ``snr_db`` over the floor, each with its own band (:func:`event_band`);
:class:`BurstDetector` (``detect.bursts``) does the same for IQ captures and measures
each burst's centre frequency and bandwidth (:func:`occupied_band`).

See docs/explanation/rooms/detect.md.
"""

from __future__ import annotations

import functools
import math
from collections import deque

import numpy as np

from .. import spectral
from ..errors import InputError
from ..operators import Param
from .core import BlockFloor, Detector, FrameStream, Segment, Segmenter, band_bins, register
from .events import Events

__all__ = ["BurstDetector", "EnergyDetector", "event_band", "noise_floor_scale",
           "occupied_band"]

_TINY = np.finfo(np.float64).tiny
#: noise floors drawn for :func:`noise_floor_scale` (its relative error is about 0.2 %)
_DRAWS = 8000
#: runs of bins not standing out of their noise that an event's band bridges (see
#: :func:`event_band`): a short click's spectrum has nulls several bins wide
BAND_GAP = 8


def _params(nfft: int, hop: int, snr: float, min_dur: float, gap: float, block: float,
            window: float, label: str) -> tuple[Param, ...]:
    return (
        Param("band_low_hz", float, None, unit="Hz",
              help="lower edge of the band (absolute Hz; default: the lowest bin)"),
        Param("band_high_hz", float, None, unit="Hz",
              help="upper edge of the band (absolute Hz; default: the highest bin)"),
        Param("snr_db", float, snr, min=0.0, unit="dB",
              help="band power over the noise floor that makes a frame part of an event"),
        Param("min_duration_s", float, min_dur, min=0.0, unit="s",
              help="shorter events are dropped"),
        Param("max_duration_s", float, None, min=0.0, unit="s",
              help="longer events are dropped (default: no limit)"),
        Param("min_gap_s", float, gap, min=0.0, unit="s",
              help="events closer than this are merged into one"),
        Param("noise_block_s", float, block, min=0.0, unit="s",
              help="block of frames whose percentile estimates the noise"),
        Param("noise_window_s", float, window, min=0.0, unit="s",
              help="span of blocks whose median is the floor (centred on the block)"),
        Param("noise_percentile", float, 20.0, min=0.0, max=100.0, unit="%",
              help="the percentile of a block's band power taken as its noise"),
        Param("nfft", int, nfft, min=8, unit="samples", help="STFT frame length"),
        Param("hop", int, hop, min=1, unit="samples", help="samples between frames"),
        Param("window", "window", "hann", help="STFT window"),
        Param("label", str, label, help="label of the events"),
    )


#: the energy detector's own parameters (after the shared ones)
_EVENT_BAND = Param("event_band_db", float, 10.0, min=0.0, unit="dB",
                    help="an event's band: the bins whose mean power over the noise is "
                         "within this of the event's largest")
_WHITEN = Param("whiten", bool, True,
                help="weigh each bin by its own noise floor: a frame's level is the mean over "
                     "the band of each bin's power over that bin's floor, so a few loud or "
                     "fluctuating tonal bins (hum) cannot dominate; off: the band's total "
                     "power over the floor of the total")


def whiten_stride(nfft: int, hop: int, block: int) -> int:
    """Every how many frames a block's per-bin percentile takes (whitening).

    Twice the frames' overlap factor (every other frame of those that do not
    overlap), keeping at least 16 frames of a block: every 4th frame, 24 of a
    0.5 s block, for the defaults.
    """
    return max(1, min(2 * math.ceil(nfft / hop), block // 16))


@functools.lru_cache(maxsize=32)
def noise_floor_scale(percentile: float, frames: int, blocks: int) -> float:
    """The mean of ``mu / floor`` for one bin of Gaussian noise of mean power ``mu``.

    A bin's power is then exponentially distributed; its floor is the median
    over ``blocks`` blocks of the ``percentile``-th percentile (as
    ``numpy.percentile`` takes it) of ``frames`` values each.  The whitened
    level divides each bin's power by its floor, so its mean in noise is
    this; dividing by it puts noise at 0 dB.  For a large sample it tends to
    ``-1 / ln(1 - percentile/100)`` (4.48 for 20 %); for the defaults at 48 kHz
    (24 frames, 9 blocks) it is about 4.2.  Computed from a fixed draw of
    exponential values (seeded, the same in every process and run); results are cached.

    Parameters
    ----------
    percentile : float
        The percentile of a block's values taken as its noise, strictly between 0 and 100.
    frames : int
        Values per block that the percentile takes.
    blocks : int
        Blocks whose percentiles the median takes.

    Returns
    -------
    float
        The mean of ``mu / floor`` (a ratio of powers, not dB).

    Raises
    ------
    ValueError
        If ``percentile`` is not strictly between 0 and 100.
    """
    q = float(percentile)
    if not 0.0 < q < 100.0:
        raise ValueError(f"percentile={percentile!r} must be strictly between 0 and 100")
    draws = np.random.default_rng(20261202).standard_exponential((_DRAWS, blocks, frames))
    floor = np.median(np.percentile(draws, q, axis=2), axis=1)
    return float(np.mean(1.0 / np.maximum(floor, _TINY)))


@register
class EnergyDetector(Detector):
    """Band-limited energy detector: band power over an adaptive noise floor (Raven's BLED)."""

    name = "detect.energy"
    summary = "Band-limited energy detector: events where the band power exceeds the noise floor"
    REFERENCE = ("Raven Pro band-limited energy detector: STFT band power against a "
                 "percentile noise floor per block, SNR threshold, duration and gap limits")
    PARAMS = (*_params(512, 256, 5.0, 0.01, 0.05, 0.5, 5.0, "energy"), _EVENT_BAND, _WHITEN)
    per_bin = False

    def _setup(self) -> None:
        p = self.params
        if p["hop"] > p["nfft"]:
            raise InputError(f"{self.name}: hop={p['hop']} must be <= nfft={p['nfft']}")
        self.stft = spectral.StftParams(p["nfft"], p["hop"], p["window"], "spectrum")
        self.frames = FrameStream(self.stft, self.fs, self.backend)
        hop = p["hop"]
        block = max(1, round(p["noise_block_s"] * self.fs / hop))
        half = max(0, round((p["noise_window_s"] / max(p["noise_block_s"], 1e-12) - 1) / 2))
        #: per-bin floors (whitening); the bursts detector has no such parameter
        self.whiten = bool(p.get("whiten", False))
        stride = 1
        if self.whiten:
            if not 0.0 < p["noise_percentile"] < 100.0:
                raise InputError(f"{self.name}: noise_percentile={p['noise_percentile']!r} "
                                 "must be strictly between 0 and 100 with whiten=true")
            stride = whiten_stride(p["nfft"], hop, block)
            taken = -(-block // stride)  # frames of a block its percentile takes
            self.ratio = noise_floor_scale(p["noise_percentile"], taken, 2 * int(half) + 1)
        self.floor = BlockFloor(block, int(half), p["noise_percentile"], stride)
        self.segments = Segmenter(p["snr_db"], hop, p["min_gap_s"] * self.fs)
        self.bins: tuple[int, int] | None = None
        self.freqs: np.ndarray | None = None
        #: (first frame, band power rows) of the frames the floor has not released yet
        self.rows: deque[tuple[int, np.ndarray]] = deque()
        #: the last frame above the threshold that a later one may still join, and the
        #: excess of the frames after it (see :meth:`_excess`)
        self.last_on: int | None = None
        self.carry: np.ndarray | float = 0.0

    @property
    def lookback(self) -> int:  # type: ignore[override]
        """A frame's samples, and the blocks before its own that its floor takes."""
        hop = self.params["hop"]
        return self.params["nfft"] - hop + self.floor.half * self.floor.block * hop

    @property
    def lookahead(self) -> int:  # type: ignore[override]
        """The rest of a frame's block and the blocks after it that its floor takes."""
        hop = self.params["hop"]
        return self.params["nfft"] + (self.floor.half + 1) * self.floor.block * hop

    @property
    def latency(self) -> int:  # type: ignore[override]
        return self.lookahead + math.ceil(self.params["min_gap_s"] * self.fs)

    @property
    def grid(self) -> int:  # type: ignore[override]
        """One noise block: blocks are counted from a stream's first frame."""
        return self.floor.block * self.params["hop"]

    @property
    def part_lookback(self) -> int:  # type: ignore[override]
        """The blocks a floor's median looks back over, the minimum gap (in whole hops)
        before an event's first frame, and one frame."""
        hop = self.params["hop"]
        gap_frames = math.ceil(self.params["min_gap_s"] * self.fs / hop)
        return self.floor.half * self.grid + gap_frames * hop + self.params["nfft"]

    @property
    def settled(self) -> int:  # type: ignore[override]
        """The first frame of the open event, or else the first frame whose floor is not
        known yet, as an event's start (no event is capped: a long one holds this)."""
        if self.closed:
            return self.samples_in
        first = self.floor.released * self.floor.block
        if self.segments.open is not None:
            first = min(first, self.segments.open.first)
        nfft, hop = self.params["nfft"], self.params["hop"]
        return first * hop + (nfft - hop) // 2

    def _band(self, complex_in: bool) -> None:
        p = self.params
        f = self.stft.frequencies(self.fs, two_sided=complex_in)
        if complex_in:
            f = f + self.center_frequency
        self.freqs = f
        self.bins = band_bins(f, p["band_low_hz"], p["band_high_hz"], self.name)

    def _push(self, x: np.ndarray, final: bool) -> Events:
        if self.bins is None:
            self._band(x.dtype.kind == "c")
        k0, power = self.frames.push(x)
        released = []
        if power is not None:
            i0, i1 = self.bins
            band = np.ascontiguousarray(power[:, i0:i1], dtype=np.float64)
            values = band if self.whiten else band.sum(axis=1)[:, None]
            if self.per_bin:
                values = np.concatenate([values, band], axis=1)
            else:
                self.rows.append((k0, band))
            released += self.floor.feed(values)
        if final:
            released += self.floor.finish()
        segs: list[Segment] = []
        thr = self.segments.threshold
        for kb, values, floor in released:
            if self.whiten:
                # each bin over its own floor, normalised so that noise gives 1 (0 dB)
                level = (values / np.maximum(floor, _TINY)).mean(axis=1) / self.ratio
                snr = 10.0 * np.log10(np.maximum(level, _TINY))
            else:
                snr = 10.0 * np.log10(np.maximum(values[:, 0], _TINY) / max(floor[0], _TINY))
            if self.per_bin:
                payload = values[:, 1:] - floor[1:]
            elif self.last_on is None and not snr.max() >= thr:
                payload = None  # nothing an event takes (the common case)
            else:
                payload = self._excess(kb, snr, floor)
            segs += self.segments.feed(kb, snr, payload)
        if released and not self.per_bin:  # the released frames' rows are done with
            end = released[-1][0] + released[-1][1].shape[0]
            while self.rows and self.rows[0][0] + self.rows[0][1].shape[0] <= end:
                self.rows.popleft()
        if final:
            segs += self.segments.finish()
        return self._events(segs)

    def _excess(self, kb: int, snr: np.ndarray, floor: np.ndarray) -> np.ndarray | None:
        """Payload rows of the block at frame ``kb`` for the segmenter (None: not needed).

        A frame's excess is its band power per bin over the block's noise (the
        mean of its frames below the threshold).  Each frame above the
        threshold carries its own excess plus that of the frames since the
        previous one when the segmenter joins the two (the gap is shorter than
        the minimum gap), so a segment's payload sums the excess of every frame
        from its first to its last.  ``floor`` is the block's floor: of the band
        power, or per bin when whitening.
        """
        n = snr.shape[0]
        on = np.flatnonzero(snr >= self.segments.threshold)
        hop, gap = self.segments.hop, self.segments.min_gap
        pending = self.last_on is not None
        if not (on.size or pending):
            return None
        parts = []
        for a, arr in self.rows:
            if a >= kb + n:
                break
            lo, hi = max(kb, a) - a, min(kb + n, a + arr.shape[0]) - a
            if hi > lo:
                parts.append(arr[lo:hi])
        rows = parts[0] if len(parts) == 1 else np.concatenate(parts)
        off = np.ones(n, bool)
        off[on] = False
        if off.any():
            noise = rows[off].mean(axis=0)
        elif self.whiten:  # every frame of the block is loud: the bins' mean noise
            noise = floor * self.ratio
        else:  # every frame of the block is loud: its floor, spread evenly
            noise = np.full(rows.shape[1], floor[0] / rows.shape[1])
        # a frame's row: its excess per bin, then its block's noise per bin (the segment's
        # sum of these over its frames gives the event's mean noise, for its per-bin SNR)
        nb = rows.shape[1]
        excess = np.empty((n, 2 * nb))
        np.subtract(rows, noise, out=excess[:, :nb])
        excess[:, nb:] = noise
        # cum[j]: the excess of the block's frames before frame j
        cum = np.zeros((n + 1, 2 * nb))
        np.cumsum(excess, axis=0, out=cum[1:])
        payload = excess.copy() if on.size else None
        prev = self.last_on  # absolute frame of the previous frame above the threshold
        for i in on:
            k = kb + int(i)
            if prev is not None and (k - prev - 1) * hop < gap:
                start = max(prev + 1 - kb, 0)
                payload[i] += cum[i] - cum[start]
                if prev < kb:
                    payload[i] += self.carry
            prev = k
        if prev is not None and (kb + n - prev - 1) * hop < gap:
            # a later frame may still join: carry the excess of the frames after it
            self.carry = (self.carry if prev < kb else 0.0) + cum[n] - cum[max(prev + 1 - kb, 0)]
            self.last_on = prev
        else:
            self.carry, self.last_on = 0.0, None
        return payload

    def _keep(self, seg: Segment) -> bool:
        p = self.params
        dur = (seg.last - seg.first + 1) * p["hop"] / self.fs
        if dur < p["min_duration_s"]:
            return False
        return p["max_duration_s"] is None or dur <= p["max_duration_s"]

    def _search_band(self) -> tuple[float, float]:
        p, f = self.params, self.freqs
        lo = f[self.bins[0]] if p["band_low_hz"] is None else p["band_low_hz"]
        hi = f[self.bins[1] - 1] if p["band_high_hz"] is None else p["band_high_hz"]
        return float(lo), float(hi)

    def _band_of(self, seg: Segment) -> tuple[float, float]:
        """The event's own band (:func:`event_band`), inside the search band."""
        lo, hi = self._search_band()
        if seg.payload is None or seg.count == 0:
            return lo, hi
        mean = seg.payload / (seg.last - seg.first + 1)
        nb = mean.size // 2
        excess, noise = mean[:nb], mean[nb:]
        if not float(np.max(excess)) > 0.0:
            return lo, hi
        a, b = event_band(excess, self.params["event_band_db"], BAND_GAP, noise=noise,
                          min_snr_db=self.params["snr_db"])
        f = self.freqs[self.bins[0]:self.bins[1]]
        df = self.fs / self.params["nfft"]
        return max(lo, float(f[a] - df / 2)), min(hi, float(f[b] + df / 2))

    def _events(self, segs: list[Segment]) -> Events:
        segs = [s for s in segs if self._keep(s)]
        if not segs:
            return self.empty()
        nfft, hop = self.params["nfft"], self.params["hop"]
        first = np.array([s.first for s in segs], np.int64)
        last = np.array([s.last for s in segs], np.int64)
        bands = np.array([self._band_of(s) for s in segs], np.float64).reshape(-1, 2)
        return Events(first * hop + (nfft - hop) // 2, last * hop + (nfft + hop) // 2,
                      self.fs, bands[:, 0], bands[:, 1], [s.peak for s in segs],
                      (self.params["label"],) * len(segs), None, self.name, self.params)


def _reach(ok: np.ndarray, peak: int, gap: int) -> tuple[int, int]:
    """The run of ``ok`` bins around ``peak``, over runs of up to ``gap`` others."""
    lo = hi = peak
    while True:
        nxt = [j for j in range(lo - 1, max(-1, lo - 2 - gap), -1) if ok[j]]
        if not nxt:
            break
        lo = nxt[0]
    while True:
        nxt = [j for j in range(hi + 1, min(ok.size, hi + 2 + gap)) if ok[j]]
        if not nxt:
            break
        hi = nxt[0]
    return lo, hi


def _grow(s: np.ndarray, peak: int, level: float, gap: int) -> tuple[int, int]:
    """The bins around ``peak`` at no less than ``level``, over dips of up to ``gap`` bins."""
    return _reach(s >= level, peak, gap)


def event_band(excess: np.ndarray, level_db: float, gap: int = 2,
               noise: np.ndarray | None = None, min_snr_db: float = 0.0) -> tuple[int, int]:
    """``(first, last)`` bins of an event's band, from its mean excess power per bin.

    With ``noise`` (the mean noise power per bin) each bin counts by its own
    SNR, ``excess / noise``.  The peak is the bin of the largest SNR (where
    the event stands out most); the event reaches over the bins around it
    that stand out of their noise, their mean power at least ``min_snr_db``
    over it (``excess >= (10**(min_snr_db/10) - 1) * noise``), bridging runs
    of up to ``gap`` bins that do not; the band is the first to the last bin
    of that reach that stands out and whose excess power is no more than
    ``level_db`` below the largest of the bins whose SNR is no more than
    ``level_db`` below the peak's (the event's strongest bins where it is
    seen best, never a bin of loud noise).  A tone's band is then its window's
    main lobe (its side lobes stand out but are 30 dB down); a click's is
    the bins it stands out in, over the nulls of its own spectrum; the bins
    of loud fluctuating noise (hum), whose chance excess power is larger
    than an event's, do not stand out of their own noise and stay out.

    Without ``noise`` the band holds the bins around the largest ``excess``
    at no more than ``level_db`` below it, bridging dips of up to ``gap``
    bins (a sweep's or a vibrato's uneven spread).

    Parameters
    ----------
    excess : numpy.ndarray
        Mean power over the noise per bin during the event (1-D).
    level_db : float
        How far below the strongest bins a bin of the band may be (dB).
    gap : int
        Longest run of bins not standing out that the band bridges.
    noise : numpy.ndarray, optional
        Mean noise power per bin; None to use ``excess`` alone.
    min_snr_db : float
        Mean power over the noise at which a bin stands out (dB).

    Returns
    -------
    tuple of int
        ``(first, last)``: indices of the band's first and last bins (inclusive).

    Examples
    --------
    >>> import numpy as np
    >>> event_band(np.array([0.0, 0.1, 5.0, 10.0, 4.0, 0.05, 0.0]), 10.0)
    (2, 4)
    """
    e = np.asarray(excess, dtype=np.float64)
    if noise is None:
        peak = int(np.argmax(e))
        return _grow(e, peak, float(e[peak]) * 10.0 ** (-level_db / 10.0), gap)
    snr = e / np.maximum(np.asarray(noise, dtype=np.float64), _TINY)
    peak = int(np.argmax(snr))
    out = snr >= 10.0 ** (min_snr_db / 10.0) - 1.0
    out[peak] = True  # a weak event's best bin, though no bin stands out of its noise
    lo, hi = _reach(out, peak, gap)
    down = 10.0 ** (-level_db / 10.0)
    out, e, snr = out[lo:hi + 1], e[lo:hi + 1], snr[lo:hi + 1]
    top = float(np.max(e[out & (snr >= snr[peak - lo] * down)]))
    inside = np.flatnonzero(out & (e >= top * down))
    return lo + int(inside[0]), lo + int(inside[-1])


def occupied_band(excess: np.ndarray, level_db: float, gap: int = 2) -> tuple[int, int]:
    """``(first, last)`` bins of the band around the peak of ``excess``.

    ``excess`` is the mean power over the floor per bin.  It is smoothed over
    three bins (a symmetric kernel keeps a step's half-power point where it
    was); its level is the median of the smoothed bins at no less than half
    the peak (robust against the peak's own noise), and the band grows from
    the peak over the bins at no more than ``level_db`` below that level,
    bridging dips of up to ``gap`` bins.

    Parameters
    ----------
    excess : numpy.ndarray
        Mean power over the floor per bin (1-D).
    level_db : float
        How far below the band's level a bin of the band may be (dB).
    gap : int
        Longest dip, in bins, that the band bridges.

    Returns
    -------
    tuple of int
        ``(first, last)``: indices of the band's first and last bins (inclusive).

    Examples
    --------
    >>> import numpy as np
    >>> occupied_band(np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]), 3.0)
    (2, 5)
    """
    e = np.asarray(excess, dtype=np.float64)
    if e.size >= 3:
        s = np.convolve(e, np.ones(3) / 3.0, mode="same")
        s[0], s[-1] = (e[0] + e[1]) / 2.0, (e[-1] + e[-2]) / 2.0
    else:
        s = e
    peak = int(np.argmax(s))
    top = float(np.median(s[s >= 0.5 * s[peak]]))
    return _grow(s, peak, top * 10.0 ** (-level_db / 10.0), gap)


@register
class BurstDetector(EnergyDetector):
    """Power bursts in IQ captures, with each burst's centre frequency and bandwidth."""

    name = "detect.bursts"
    summary = "Power bursts (IQ): events above the floor in a band, with centre and bandwidth"
    REFERENCE = ("band power against a percentile noise floor per block (as detect.energy); "
                 "band = contiguous bins of the mean excess power within bandwidth_db of "
                 "its peak")
    PARAMS = (*_params(1024, 512, 6.0, 0.001, 0.001, 0.1, 1.0, "burst"),
              Param("bandwidth_db", float, 3.0, min=0.0, unit="dB",
                    help="a burst's band: the bins within this of its peak power over the floor"))
    per_bin = True

    def _band_of(self, seg: Segment) -> tuple[float, float]:
        excess = seg.payload / max(seg.count, 1)
        lo, hi = occupied_band(excess, self.params["bandwidth_db"])
        f = self.freqs[self.bins[0]:self.bins[1]]
        df = self.fs / self.params["nfft"]
        return float(f[lo] - df / 2), float(f[hi] + df / 2)
