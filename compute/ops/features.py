"""Frame-wise audio/spectral features, written once against ``xp``.

Spectral features use the magnitude spectrogram ``|rfft(frame * window)|`` of
frames ``k*hop .. k*hop+nfft-1`` (no centring, no padding); signals shorter
than one frame are rejected.  Outputs are shaped ``(..., n_frames)``.
"""

from __future__ import annotations

import numpy as np
from specscope.compute.errors import InputError
from specscope.compute.operators.registry import Param, operator

from .helpers import as_float, frame_magnitudes, frames

FAMILY = "features"
NFFT = Param("nfft", int, 512, min=2, unit="samples", help="frame length")
HOP = Param("hop", int, 256, min=1, unit="samples", help="samples between frames")
WINDOW = Param("window", "window", "hann")


def _freqs(nfft, fs, dtype, xp):
    return xp.asarray(np.fft.rfftfreq(nfft, 1.0 / fs).astype(dtype))


def _safe(v, xp):
    return xp.where(v > 0, v, 1)


def _hist(p):
    return p["nfft"] - p["hop"]


@operator("spectral_centroid", family=FAMILY, summary="Magnitude-weighted mean frequency (Hz)",
          params=[NFFT, HOP, WINDOW], reference="sum(f*|X|)/sum(|X|) per frame", history=_hist)
def spectral_centroid(x, *, nfft, hop, window, fs, xp):
    dt, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_centroid")
    f = _freqs(nfft, fs, dt, xp)
    return (m @ f) / _safe(m.sum(-1), xp)


@operator("spectral_bandwidth", family=FAMILY,
          summary="Magnitude-weighted p-th order spread around the centroid (Hz)",
          params=[NFFT, HOP, WINDOW, Param("p", float, 2.0, min=1.0)],
          reference="(sum(|X| |f-c|^p)/sum(|X|))^(1/p) per frame", history=_hist)
def spectral_bandwidth(x, *, nfft, hop, window, p, fs, xp):
    dt, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_bandwidth")
    f = _freqs(nfft, fs, dt, xp)
    tot = _safe(m.sum(-1), xp)
    c = (m @ f) / tot
    return ((m * xp.abs(f - c[..., None]) ** p).sum(-1) / tot) ** (1.0 / p)


@operator("spectral_flatness", family=FAMILY,
          summary="Geometric over arithmetic mean of the power spectrum (0..1)",
          params=[NFFT, HOP, WINDOW, Param("amin", float, 1e-10, min=0.0, help="power floor")],
          reference="exp(mean(log(P)))/mean(P) per frame", history=_hist)
def spectral_flatness(x, *, nfft, hop, window, amin, xp):
    _, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_flatness")
    pw = xp.maximum(m * m, amin)
    return xp.exp(xp.mean(xp.log(pw), -1)) / xp.mean(pw, -1)


@operator("spectral_rolloff", family=FAMILY,
          summary="Frequency below which roll_percent of the magnitude lies (Hz)",
          params=[NFFT, HOP, WINDOW, Param("roll_percent", float, 0.85, min=0.0, max=1.0)],
          reference="smallest f with cumsum(|X|) >= roll_percent*sum(|X|)", history=_hist,
          nan_policy="reject")
def spectral_rolloff(x, *, nfft, hop, window, roll_percent, fs, xp):
    dt, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_rolloff")
    f = _freqs(nfft, fs, dt, xp)
    c = xp.cumsum(m, -1)
    thr = roll_percent * c[..., -1:]
    idx = xp.argmax(c >= thr, axis=-1)
    return f[idx]


@operator("spectral_flux", family=FAMILY,
          summary="L2 norm of the positive magnitude change between frames (first frame 0)",
          params=[NFFT, HOP, WINDOW], reference="sqrt(sum(max(|X_k|-|X_k-1|, 0)^2))",
          history=lambda p: 2 * p["nfft"] - p["hop"])
def spectral_flux(x, *, nfft, hop, window, xp):
    _, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_flux")
    d = xp.maximum(xp.diff(m, axis=-2), 0)
    flux = xp.sqrt((d * d).sum(-1))
    zero = xp.zeros(flux.shape[:-1] + (1,), dtype=flux.dtype)
    return xp.concatenate([zero, flux], axis=-1)


@operator("spectral_entropy", family=FAMILY,
          summary="Shannon entropy of the normalised power spectrum (bits)",
          params=[NFFT, HOP, WINDOW], reference="-sum(p log2 p), p = P/sum(P)", history=_hist,
          nan_policy="reject")
def spectral_entropy(x, *, nfft, hop, window, xp):
    _, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_entropy")
    pw = m * m
    p = pw / _safe(pw.sum(-1, keepdims=True), xp)
    return -(xp.where(p > 0, p * xp.log2(xp.where(p > 0, p, 1)), 0)).sum(-1)


@operator("spectral_crest", family=FAMILY, summary="Max over mean of the magnitude spectrum",
          params=[NFFT, HOP, WINDOW], reference="max(|X|)/mean(|X|) per frame", history=_hist)
def spectral_crest(x, *, nfft, hop, window, xp):
    _, m = frame_magnitudes(x, nfft, hop, window, xp, "spectral_crest")
    return m.max(-1) / _safe(m.mean(-1), xp)


@operator("peak_frequency", family=FAMILY, summary="Frequency of the largest bin per frame (Hz)",
          params=[NFFT, HOP, WINDOW], reference="f[argmax(|X|)] per frame", history=_hist,
          nan_policy="reject")
def peak_frequency(x, *, nfft, hop, window, fs, xp):
    dt, m = frame_magnitudes(x, nfft, hop, window, xp, "peak_frequency")
    return _freqs(nfft, fs, dt, xp)[xp.argmax(m, -1)]


@operator("rms", family=FAMILY, summary="Root mean square per frame",
          params=[Param("frame_length", int, 2048, min=1), Param("hop", int, 512, min=1)],
          reference="sqrt(mean(frame**2)) per frame",
          history=lambda p: p["frame_length"] - p["hop"])
def rms(x, *, frame_length, hop, xp):
    x = as_float(x, xp)
    if x.shape[-1] < frame_length:
        raise InputError(f"rms: frame_length={frame_length} is larger than the signal "
                         f"({x.shape[-1]} samples)")
    fr = frames(x, frame_length, hop, xp)
    return xp.sqrt(xp.mean(xp.abs(fr) ** 2, -1))


@operator("zero_crossing_rate", family=FAMILY,
          summary="Fraction of sign changes between neighbours per frame",
          params=[Param("frame_length", int, 2048, min=2), Param("hop", int, 512, min=1)],
          reference="mean(signbit(f[1:]) != signbit(f[:-1])) per frame",
          history=lambda p: p["frame_length"] - p["hop"], nan_policy="reject")
def zero_crossing_rate(x, *, frame_length, hop, xp):
    x = as_float(x, xp)
    if x.dtype.kind == "c":
        raise InputError("zero_crossing_rate: input must be real")
    if x.shape[-1] < frame_length:
        raise InputError(f"zero_crossing_rate: frame_length={frame_length} is larger than the "
                         f"signal ({x.shape[-1]} samples)")
    s = xp.signbit(frames(x, frame_length, hop, xp))
    return xp.mean(s[..., 1:] != s[..., :-1], -1)


@operator("zero_crossings", family=FAMILY, summary="Indices i where sign(x[i]) != sign(x[i+1])",
          reference="numpy.nonzero(signbit(x[1:]) != signbit(x[:-1]))", history=1,
          nan_policy="reject")
def zero_crossings(x, *, xp):
    if x.ndim != 1:
        raise InputError(f"zero_crossings: input must be 1-D, got shape {x.shape}")
    s = xp.signbit(x)
    return xp.nonzero(s[1:] != s[:-1])[0]
