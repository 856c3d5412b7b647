"""An edit of a region: analysis, a gain per cell, synthesis, added to the signal as a change.

The signal is analysed on one frame grid anchored at sample 0 of the recording
(periodic Hann frames of ``nfft`` samples every ``nfft // 4``), each cell is
multiplied by a gain ``G`` and the frames are overlap-added with the dual window
``w / 1.5`` (for this window and hop the squared windows sum to 1.5 everywhere), so an
unchanged spectrum gives the signal back.  What is added to the signal is only the
synthesis of ``(G - 1) X``: zero wherever ``G`` is 1, so a sample that no edited frame
touches is returned bit for bit, and a 0 dB edit is the identity.

Operations (:data:`EDIT_OPERATIONS`): ``attenuate`` by ``db``; ``gain`` by ``db``;
``remove``, which lowers each cell to the level of the region's surroundings, keeping
the cell's own phase, so the background's texture stays: the level of its frequency in
the frames just before and after the region (``context_ms``; ``fill="time"``), or of
its frame in the bins just below and above it (``context_hz``; ``fill="frequency"``),
interpolated across it; ``fill="auto"`` takes the side along which the region is
longer (a whistle: its frames; a click: the frequencies around it); and ``isolate``, which keeps the
region only: the synthesis of the region's cells, zero wherever its frames do not
reach; and ``filter``, which takes the region's cells from the signal run through
``steps`` (a filter of the designer or any signal operator), so only the region
changes.  The region's edge is feathered: outside it the change fades out over
``feather_ms`` in time and ``feather_hz`` in frequency (a raised cosine of the
distance to the region).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..types import EditOperation, RemoveFill, choices
from .regions import Region, region_from_dict

__all__ = ["EDIT_OPERATIONS", "REMOVE_FILLS", "RegionEdit", "apply_edit"]

#: what an edit does to its region
EDIT_OPERATIONS = choices(EditOperation)
#: where ``remove`` takes its level from
REMOVE_FILLS = choices(RemoveFill)
#: the sum of the squared periodic Hann window over shifts of a quarter of its length
_WSUM = 1.5


@dataclass(frozen=True)
class RegionEdit:
    """One edit: an operation on a region, with feathered edges.

    Parameters
    ----------
    region : Region
        Where, in seconds from the recording's start and Hz.
    operation : {"attenuate", "gain", "remove", "isolate"}
    db : float
        How many dB ``attenuate`` lowers or ``gain`` raises (ignored by the others).
    feather_ms, feather_hz : float
        How far outside the region the change fades out.
    nfft : int
        Frame length of the analysis (a power of two >= 16; the hop is a quarter).
    context_ms, context_hz : float
        How much signal before and after the region, or below and above it, ``remove``
        takes the level from.
    fill : {"auto", "time", "frequency"}
        Where ``remove`` takes the level from (see the module's description).
    steps : tuple of dict
        ``filter``: the pipeline steps (``{"op": ..., "params": ...}``) whose output the
        region takes; the pipeline checks them.
    """

    region: Region
    operation: EditOperation = "attenuate"
    db: float = 20.0
    feather_ms: float = 10.0
    feather_hz: float = 50.0
    nfft: int = 1024
    context_ms: float = 250.0
    steps: tuple[dict[str, Any], ...] = field(default=(), hash=False)
    context_hz: float = 200.0
    fill: RemoveFill = "auto"

    def __post_init__(self) -> None:
        if self.operation not in EDIT_OPERATIONS:
            raise InputError(f"operation={shown(self.operation)} must be one of "
                             f"{', '.join(EDIT_OPERATIONS)}")
        if self.fill not in REMOVE_FILLS:
            raise InputError(f"fill={shown(self.fill)} must be one of {', '.join(REMOVE_FILLS)}")
        for name in ("db", "feather_ms", "feather_hz", "context_ms", "context_hz"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(f"{name}={shown(v)} must be a finite number")
            if name != "db" and v < 0:
                raise InputError(f"{name}={v:g} must be >= 0")
        n = self.nfft
        if isinstance(n, bool) or not isinstance(n, int) or n < 16 or n & (n - 1):
            raise InputError(f"nfft={shown(n)} must be a power of two >= 16")
        if not isinstance(self.steps, (tuple, list)) or not all(
                isinstance(s, dict) for s in self.steps):
            raise InputError("steps must be a list of pipeline steps ({\"op\": ..., "
                             "\"params\": {...}})")
        object.__setattr__(self, "steps", tuple(self.steps))
        if (self.operation == "filter") != bool(self.steps):
            raise InputError("steps (the processing the region takes) go with "
                             "operation='filter', and it needs them" if self.steps else
                             "operation='filter' needs steps: the processing the region "
                             "takes")

    @property
    def hop(self) -> int:
        return self.nfft // 4

    # -- the JSON form ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The edit as a pipeline step's parameters."""
        d = {"region": self.region.to_dict(), "operation": self.operation, "db": self.db,
             "feather_ms": self.feather_ms, "feather_hz": self.feather_hz, "nfft": self.nfft,
             "context_ms": self.context_ms, "context_hz": self.context_hz, "fill": self.fill}
        if self.steps:
            d["steps"] = [dict(s) for s in self.steps]
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "edit") -> RegionEdit:
        """An edit from :meth:`to_dict`'s form; :class:`InputError` naming a bad field."""
        if not isinstance(d, dict):
            raise InputError(f"{where}: must be an object, got {type(d).__name__}")
        known = {"region", "operation", "db", "feather_ms", "feather_hz", "nfft",
                 "context_ms", "steps", "context_hz", "fill"}
        extra = sorted(set(d) - known)
        if extra:
            raise InputError(f"{where}: unknown parameter {extra[0]!r} (an edit takes "
                             f"{', '.join(sorted(known))})")
        if "region" not in d:
            raise InputError(f"{where}: missing region")
        region = region_from_dict(d["region"], f"{where}: region")
        try:
            return cls(region, **{k: v for k, v in d.items() if k != "region"})
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        except TypeError as exc:
            raise InputError(f"{where}: {exc}") from None

    # -- where it acts ------------------------------------------------------------------
    def check(self, fs: float, center_frequency: float = 0.0, two_sided: bool = False,
              n_samples: int | None = None) -> None:
        """Refuse a region above Nyquist or outside the recording, naming it."""
        t0, t1, f0, f1 = self.region.bounds()
        lo, hi = (center_frequency - fs / 2, center_frequency + fs / 2) if two_sided \
            else (0.0, fs / 2)
        if f0 >= hi or f1 <= lo:
            raise InputError(f"the region's frequencies {f0:g} to {f1:g} Hz lie outside "
                             f"{lo:g} to {hi:g} Hz (the Nyquist range at {fs:g} Hz)")
        if n_samples is not None and (t1 <= 0 or t0 >= n_samples / fs):
            raise InputError(f"the region's times {t0:g} to {t1:g} s lie outside the "
                             f"recording (0 to {n_samples / fs:g} s)")

    def near(self, fs: float) -> tuple[int, int]:
        """Frames ``k0 .. k1 - 1`` (frame ``k`` starts at sample ``k * hop``; its place is
        its centre) that the region and its feather reach."""
        t0, t1, _, _ = self.region.bounds()
        pad = self.feather_ms / 1000.0
        k0 = math.floor(((t0 - pad) * fs - self.nfft / 2) / self.hop)
        k1 = math.ceil(((t1 + pad) * fs - self.nfft / 2) / self.hop) + 1
        return k0, k1

    def fills_along(self, fs: float) -> str:
        """``"time"`` or ``"frequency"``: where ``remove`` takes its level from here."""
        if self.fill != "auto":
            return self.fill
        t0, t1, f0, f1 = self.region.bounds()
        frames = (t1 - t0) * fs / self.hop
        bins = (f1 - f0) / (fs / self.nfft)
        return "frequency" if frames > bins else "time"

    def context_frames(self, fs: float) -> int:
        """Frames before and after the region whose level ``remove`` takes."""
        if self.operation != "remove" or self.fills_along(fs) != "time":
            return 0
        return max(1, math.ceil(self.context_ms / 1000.0 * fs / self.hop))

    def context_bins(self, fs: float) -> int:
        """Bins below and above the region (and its feather) whose level ``remove`` takes."""
        if self.operation != "remove" or self.fills_along(fs) != "frequency":
            return 0
        return max(1, math.ceil(self.context_hz / (fs / self.nfft)))

    def span(self, fs: float) -> tuple[int, int, int, int]:
        """``(s0, s1, r0, r1)``: the samples it changes (``isolate``: it keeps; every other
        sample it makes zero), and the samples it reads."""
        k0, k1 = self.near(fs)
        c = self.context_frames(fs)
        s0, s1 = k0 * self.hop, (k1 - 1) * self.hop + self.nfft
        return s0, s1, (k0 - c) * self.hop, (k1 - 1 + c) * self.hop + self.nfft

    # -- the gain of each cell ----------------------------------------------------------
    def weight(self, t: np.ndarray, f: np.ndarray, dt: float, df: float) -> np.ndarray:
        """How much of the edit each cell takes: 1 inside the region, fading to 0 over the
        feather outside it; shaped ``(len(f), len(t))``, ``f`` ascending."""
        from scipy import ndimage

        inside = self.region.contains(t, f)
        if not inside.any():
            return inside.astype(float)
        ft = self.feather_ms / 1000.0
        fh = self.feather_hz
        if ft == 0 and fh == 0:
            return inside.astype(float)
        # distance to the region, in feathers (an axis without a feather: one cell is far)
        sampling = (df / fh if fh > 0 else 1e9, dt / ft if ft > 0 else 1e9)
        d = ndimage.distance_transform_edt(~inside, sampling=sampling)
        return np.where(d < 1.0, 0.5 * (1.0 + np.cos(np.pi * np.minimum(d, 1.0))), 0.0)

    def gains(self, spectra: np.ndarray, w: np.ndarray, before: np.ndarray | None = None,
              after: np.ndarray | None = None, where: np.ndarray | None = None,
              below: np.ndarray | None = None, above: np.ndarray | None = None
              ) -> np.ndarray:
        """``G`` for each cell of ``spectra`` (shaped ``(..., bins, frames)``) whose weights
        (:meth:`weight`) are ``w``.  ``remove`` takes its level from ``before`` and
        ``after`` (the spectra of the frames around it; ``where``: each frame's place
        between them, 0 to 1), or from ``below`` and ``above`` (the spectra of the bins
        around it, in the same frames)."""
        if self.operation in ("isolate", "filter"):  # of the region's own cells
            return np.broadcast_to(w, spectra.shape)
        if self.operation in ("attenuate", "gain"):
            g = 10.0 ** ((-self.db if self.operation == "attenuate" else self.db) / 20.0)
            return 1.0 + w * (g - 1.0)
        if below is not None or above is not None:  # along frequency, frame by frame
            m = spectra.shape[-2]
            sides = [np.median(np.abs(s), axis=-2) for s in (below, above)
                     if s is not None and s.shape[-2]]
            if not sides:
                raise InputError("remove needs bins below or above the region to take the "
                                 "level from; the region covers every frequency")
            x = ((np.arange(m) + 1.0) / (m + 1.0))[:, None]
            est = sides[0][..., None, :] if len(sides) == 1 else \
                sides[0][..., None, :] * (1 - x) + sides[1][..., None, :] * x
        else:
            n = spectra.shape[-1]
            if where is None:
                where = (np.arange(n) + 1.0) / (n + 1.0)
            levels = [np.median(np.abs(s), axis=-1) for s in (before, after)
                      if s is not None and s.shape[-1]]
            if not levels:
                raise InputError("remove needs signal before or after the region to take "
                                 "the level from; the region covers the whole recording")
            if len(levels) == 1:
                est = np.repeat(levels[0][..., None], n, axis=-1)
            else:
                est = levels[0][..., None] * (1 - where) + levels[1][..., None] * where
        mag = np.abs(spectra)
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(mag > est, est / mag, 1.0)
        return 1.0 + w * (factor - 1.0)


def _grid(n_bins: int, nfft: int, fs: float, two_sided: bool,
          center_frequency: float) -> tuple[np.ndarray, np.ndarray]:
    """Bin frequencies in Hz, ascending, and the order that sorts the FFT's bins so."""
    if not two_sided:
        return np.arange(n_bins) * fs / nfft, np.arange(n_bins)
    order = np.fft.fftshift(np.arange(nfft))
    return np.fft.fftfreq(nfft, 1.0 / fs)[order] + center_frequency, order


#: frames analysed at a time (bounds the memory of a long edit)
BLOCK_FRAMES = 2048


class _Frames:
    """The analysis of samples ``a .. b`` of a recording held by ``x`` (zeros elsewhere)."""

    def __init__(self, x: np.ndarray, start: int, end: int, edit: RegionEdit, fs: float,
                 center_frequency: float) -> None:
        self.x, self.start, self.end = x, start, end
        self.nfft, self.hop = edit.nfft, edit.hop
        self.two_sided = x.dtype.kind == "c"
        self.win = np.hanning(self.nfft + 1)[:-1]
        n_bins = self.nfft if self.two_sided else self.nfft // 2 + 1
        self.freqs, self.order = _grid(n_bins, self.nfft, fs, self.two_sided,
                                       center_frequency)

    def spectra(self, k0: int, k1: int) -> np.ndarray:
        """Spectra of frames ``k0 .. k1 - 1``, shaped (channels, bins ascending, frames)."""
        nfft, hop = self.nfft, self.hop
        a, b = k0 * hop, (k1 - 1) * hop + nfft
        seg = np.zeros((self.x.shape[0], max(0, b - a)),
                       np.complex128 if self.two_sided else np.float64)
        lo = max(a, self.start, 0)
        hi = min(b, self.start + self.x.shape[-1], self.end)
        if hi > lo:
            seg[:, lo - a:hi - a] = self.x[:, lo - self.start:hi - self.start]
        idx = np.arange(k1 - k0)[:, None] * hop + np.arange(nfft)[None, :]
        frames = seg[:, idx] * self.win
        spec = np.fft.fft(frames, axis=-1) if self.two_sided else np.fft.rfft(frames, axis=-1)
        return np.swapaxes(spec, -1, -2)[:, self.order, :]

    def synthesis(self, change: np.ndarray) -> np.ndarray:
        """The frames of ``change`` (as :meth:`spectra` gives them) overlap-added:
        samples from the first frame's start to the last frame's end."""
        unsorted = np.empty_like(change)
        unsorted[:, self.order, :] = change
        unsorted = np.swapaxes(unsorted, -1, -2)
        parts = np.fft.ifft(unsorted, axis=-1) if self.two_sided else \
            np.fft.irfft(unsorted, self.nfft, axis=-1)
        parts *= self.win / _WSUM
        n_fr, hop, nfft = parts.shape[1], self.hop, self.nfft
        out = np.zeros((parts.shape[0], (n_fr - 1) * hop + nfft), parts.dtype)
        for p in range(nfft // hop):  # frames p, p + 4, ... do not overlap: added as one run
            run = parts[:, p::nfft // hop]
            m = run.shape[1]
            out[:, p * hop:p * hop + m * nfft] += run.reshape(parts.shape[0], m * nfft)
        return out


def apply_edit(x: np.ndarray, fs: float, edit: RegionEdit, start: int = 0, *,
               center_frequency: float = 0.0, n_total: int | None = None,
               transform: Callable[[np.ndarray], np.ndarray] | None = None,
               reach: tuple[int, int] = (0, 0)) -> np.ndarray:
    """``x`` (samples ``start .. start + n`` of a recording) with ``edit`` applied.

    Samples of the recording outside ``x`` count as zeros; so that the result equals
    the whole recording's, ``x`` must hold the edit's read span (:meth:`RegionEdit.span`)
    where the recording has it.

    Parameters
    ----------
    x : numpy.ndarray
        Samples shaped ``(n,)`` or ``(channels, n)``, real or complex.
    fs : float
        Sample rate.
    edit : RegionEdit
    start : int
        The recording's sample at ``x[..., 0]``.
    center_frequency : float
        Added to an IQ capture's frequencies (the region's Hz include it).
    n_total : int, optional
        Samples in the recording (default: up to the end of ``x``); frames past it read
        zeros.
    transform : callable, optional
        ``filter``: ``transform(rows) -> rows`` (same shape), the steps run from rest over
        the samples from ``reach[0]`` before the edit's read span to ``reach[1]`` after it
        (the steps' history), so the result does not depend on where ``x`` starts.
    reach : tuple of int
        ``(before, after)``: the history of ``transform``.

    Returns
    -------
    numpy.ndarray
        A new array shaped as ``x``; bit for bit ``x`` where no changed frame reaches.
    """
    x = np.asarray(x)
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    end = start + n if n_total is None else int(n_total)
    out = rows.copy()
    an = _Frames(rows, start, end, edit, fs, center_frequency)
    taken = None
    if edit.operation == "filter":
        if transform is None:
            raise InputError("operation='filter' needs the steps' transform")
        _, _, r0, r1 = edit.span(fs)
        lo, hi = max(start, r0 - reach[0], 0), min(start + n, r1 + reach[1], end)
        if hi > lo:
            seg = np.ascontiguousarray(rows[:, lo - start:hi - start])
            y = np.asarray(transform(seg))
            if y.shape != seg.shape:
                raise InputError(f"the steps of a filter edit gave {y.shape[-1]} samples for "
                                 f"{seg.shape[-1]}; they must keep the length")
            if y.dtype.kind == "c" and seg.dtype.kind != "c":
                raise InputError("the steps of a filter edit made the real signal complex; "
                                 "they must keep it real")
            whole = np.zeros(rows.shape, y.dtype if y.dtype.kind == "c" else np.float64)
            whole[:, lo - start:hi - start] = y
            taken = _Frames(whole, start, end, edit, fs, center_frequency)
    nfft, hop = edit.nfft, edit.hop
    isolate = edit.operation == "isolate"
    if isolate:
        out[:] = 0
    k0, k1 = edit.near(fs)
    k0, k1 = max(k0, -(nfft // hop) + 1), min(k1, -(-end // hop))
    # only frames that reach into x change it
    k0 = max(k0, math.floor((start - nfft) / hop) + 1)
    k1 = min(k1, -(-(start + n) // hop))
    if k1 <= k0:
        return out.reshape(x.shape)
    c = edit.context_frames(fs)
    n0, n1 = edit.near(fs)
    # the bins the region and its feather reach (every other cell keeps G = 1)
    _, _, f_lo, f_hi = edit.region.bounds()
    reach = edit.feather_hz + 2 * fs / nfft
    rows_in = np.flatnonzero((an.freqs >= f_lo - reach) & (an.freqs <= f_hi + reach))
    if not rows_in.size:
        return out.reshape(x.shape)
    rows_of = slice(int(rows_in[0]), int(rows_in[-1]) + 1)
    times = (np.arange(n0, n1) * hop + nfft / 2) / fs
    near_w = edit.weight(times, an.freqs[rows_of], hop / fs, fs / nfft)
    nb = edit.context_bins(fs)
    below_rows = slice(max(0, rows_of.start - nb), rows_of.start)
    above_rows = slice(rows_of.stop, min(len(an.freqs), rows_of.stop + nb))
    before = after = None
    if c:
        lo_k, hi_k = -(nfft // hop) + 1, -(-end // hop)  # frames holding any sample
        before = an.spectra(max(n0 - c, lo_k), max(n0, lo_k))[:, rows_of]
        after = an.spectra(min(n1, hi_k), min(n1 + c, hi_k))[:, rows_of]
    for b0 in range(k0, k1, BLOCK_FRAMES):
        b1 = min(k1, b0 + BLOCK_FRAMES)
        spec = an.spectra(b0, b1)
        sub = spec[:, rows_of]
        w = np.zeros(sub.shape[-2:])
        lo, hi = max(b0, n0), min(b1, n1)
        if hi > lo:
            w[:, lo - b0:hi - b0] = near_w[:, lo - n0:hi - n0]
        where = (np.arange(b0, b1) - n0 + 1.0) / (n1 - n0 + 1.0)
        if nb:
            g = edit.gains(sub, w, below=spec[:, below_rows], above=spec[:, above_rows])
        else:
            g = edit.gains(sub, w, before, after, where)
        change = np.zeros_like(spec)
        if taken is not None:  # the steps' output inside the region, weighted
            change[:, rows_of] = g * (taken.spectra(b0, b1)[:, rows_of] - sub)
        else:
            change[:, rows_of] = g * sub if isolate else (g - 1.0) * sub
        delta = an.synthesis(change)
        a = b0 * hop
        lo, hi = max(a, start), min(a + delta.shape[-1], start + n)
        if hi > lo:
            out[:, lo - start:hi - start] += delta[:, lo - a:hi - a].astype(out.dtype)
    return out.reshape(x.shape)
