"""Frequency bands of the long-term products and band levels from a PSD.

Hybrid millidecade bands follow Martin et al. (2021, JASA 149, 2549): FFT-bin
wide bands (centred on the bins) up to the frequency where a millidecade band
becomes as wide as a bin, millidecade bands above (edges at ``10**(k/1000)`` Hz).
Decidecade and octave bands are the base-10 bands of IEC 61260-1 (mid-band
frequencies ``1000 * 10**(k/10)`` and ``1000 * 10**(3k/10)`` Hz).

A band's power is the integral of the PSD over the band, each FFT bin ``k`` taken
as constant over ``[(k - 1/2) df, (k + 1/2) df]`` and split between the bands it
straddles in proportion to the overlap.  A band level is a mean spectral density
(the power divided by the band's width), as these products are reported.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import BadOption
from ..types import BandKind, choices

__all__ = ["BAND_KINDS", "BandKind", "Bands", "band_power", "make_bands"]

BAND_KINDS: tuple[str, ...] = choices(BandKind)


@dataclass(frozen=True)
class Bands:
    """Contiguous frequency bands: ``edges[i]``–``edges[i + 1]`` around ``centres[i]`` (Hz)."""

    kind: str
    edges: np.ndarray
    centres: np.ndarray

    @property
    def lower(self) -> np.ndarray:
        return self.edges[:-1]

    @property
    def upper(self) -> np.ndarray:
        return self.edges[1:]

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)

    def __len__(self) -> int:
        return int(self.centres.size)


def _millidecade_centre(k: int) -> float:
    # band k spans 10**((k-1)/1000 + 1) .. 10**(k/1000 + 1) Hz
    return 10.0 ** (1.0 + (k - 0.5) / 1000.0)


def _hybrid(fs: float, nfft: int, low: float, high: float) -> Bands:
    df = fs / nfft
    lo_mul, hi_mul = 10.0 ** -0.0005, 10.0 ** 0.0005
    # the first millidecade band at least one bin wide ...
    k = 1
    while _millidecade_centre(k) * (hi_mul - lo_mul) < df:
        k += 1
    # ... then onward while the bin nearest the band's centre keeps getting nearer
    n_lin = round(_millidecade_centre(k) / df)
    gap = abs(n_lin * df - _millidecade_centre(k))
    while abs((n_lin + 1) * df - _millidecade_centre(k + 1)) < gap:
        k += 1
        n_lin += 1
        gap = abs(n_lin * df - _millidecade_centre(k))
    top = _millidecade_centre(k) * lo_mul
    if n_lin * df > high:  # bins alone up to the top
        n_lin, top = int(high / df) + 1, high
    centres = [i * df for i in range(n_lin) if i * df >= low]
    edges = [c - df / 2 for c in centres]
    while top < high:
        c = _millidecade_centre(k)
        top = c * hi_mul
        if c >= low:
            centres.append(c)
            edges.append(c * lo_mul)
        k += 1
    if centres and centres[-1] > high:
        centres[-1] = high
    edges.append(min(top, high))
    return Bands("hmd", np.asarray(edges), np.asarray(centres))


def _fractional(kind: str, per_decade: int, step: int, low: float, high: float) -> Bands:
    # mid-band frequencies 1000 * 10**(step * k / per_decade), edges a half step either side
    half = 10.0 ** (step / (2 * per_decade))
    k0 = math.ceil(per_decade / step * math.log10(max(low, 1e-3) / 1000.0) - 0.5)
    centres = []
    k = k0
    while True:
        c = 1000.0 * 10.0 ** (step * k / per_decade)
        if c * half > high:
            break
        if c >= low * (1 - 1e-12):
            centres.append(c)
        k += 1
    c = np.asarray(centres)
    return Bands(kind, np.concatenate([c / half, c[-1:] * half]) if c.size else c, c)


def make_bands(kind: BandKind, fs: float, nfft: int, low: float = 0.0,
               high: float | None = None) -> Bands:
    """The bands of ``kind`` between ``low`` and ``high`` Hz for an ``nfft``-point PSD.

    Parameters
    ----------
    kind : {"hmd", "decidecade", "octave"}
        Hybrid millidecade, decidecade (one-third octave, base 10) or octave bands.
    fs : float
        Sample rate in Hz.
    nfft : int
        FFT length of the PSD (sets the bin width ``fs / nfft`` of the hybrid bands).
    low, high : float
        Band range in Hz; ``high`` defaults to ``fs / 2``.  Decidecade and octave
        bands are those with a mid-band frequency at or above ``low`` and an upper
        edge at or below ``high``, from the first bin above 0 Hz.

    Returns
    -------
    Bands
        Its arrays are read-only: the same bands serve every call with the same values.
    """
    return _made(str(kind), float(fs), int(nfft), float(low),
                 None if high is None else float(high))


@functools.lru_cache(maxsize=64)
def _made(kind: str, fs: float, nfft: int, low: float, high: float | None) -> Bands:
    bands = _make(kind, fs, nfft, low, high)
    for a in (bands.edges, bands.centres):
        a.flags.writeable = False
    return bands


def _make(kind: str, fs: float, nfft: int, low: float, high: float | None) -> Bands:
    nyquist = fs / 2
    high = nyquist if high is None else float(high)
    if kind not in BAND_KINDS:
        raise BadOption("bands", kind, "is not a kind of band",
                        expected=" or ".join(BAND_KINDS))
    if not (0 <= low < high <= nyquist):
        raise BadOption("band", (low, high), f"must satisfy 0 <= low < high <= {nyquist:g} Hz "
                        "(half the sample rate)")
    if kind == "hmd":
        return _hybrid(fs, nfft, low, high)
    # a band below the first bin above 0 Hz is not resolved
    bands = _fractional(kind, 10, 1 if kind == "decidecade" else 3, max(low, fs / nfft), high)
    if len(bands) == 0:
        raise BadOption("band", (low, high), f"holds no whole {kind} band")
    return bands


def band_power(psd: np.ndarray, df: float, bands: Bands) -> np.ndarray:
    """Mean spectral density of each band from a one-sided PSD, frequency along the last axis.

    Bin ``k`` (at ``k * df``) counts as constant over ``[(k - 1/2) df, (k + 1/2) df]``;
    a band takes the part of each bin it overlaps.

    Parameters
    ----------
    psd : ndarray, shape (..., n_bins)
        Power spectral density, bins from 0 Hz.
    df : float
        Bin width in Hz.
    bands : Bands

    Returns
    -------
    ndarray of float64, shape (..., n_bands)
        Band power divided by band width (the PSD's unit).
    """
    p = np.asarray(psd, dtype=np.float64)
    n = p.shape[-1]
    cum = np.zeros((*p.shape[:-1], n + 1))
    np.cumsum(p * df, axis=-1, out=cum[..., 1:])
    # the integral up to each edge: whole bins below it, the straddled bin in part
    pos = np.clip(np.asarray(bands.edges) / df + 0.5, 0.0, float(n))
    k = np.minimum(np.floor(pos).astype(np.int64), n - 1)
    frac = pos - k
    at = cum[..., k] + frac * (cum[..., k + 1] - cum[..., k])
    return np.diff(at, axis=-1) / bands.widths
