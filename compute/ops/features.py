"""Frame-wise audio/spectral features, written once against ``xp``.

Spectral features use the magnitude spectrogram ``|rfft(frame * window)|`` of
frames ``k*hop .. k*hop+nfft-1`` (no centring, no padding); signals shorter
than one frame are rejected.  Outputs are shaped ``(..., n_frames)``.
"""

from __future__ import annotations

import numpy as np
from specscope.compute.errors import InputError, operator_error
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
        raise operator_error(InputError, "rms", f"frame_length={frame_length} is larger than the signal "
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
        raise operator_error(InputError, "zero_crossing_rate", "input must be real")
    if x.shape[-1] < frame_length:
        raise operator_error(InputError, "zero_crossing_rate", f"frame_length={frame_length} is larger than the "
                         f"signal ({x.shape[-1]} samples)")
    s = xp.signbit(frames(x, frame_length, hop, xp))
    return xp.mean(s[..., 1:] != s[..., :-1], -1)


@operator("zero_crossings", family=FAMILY, summary="Indices i where sign(x[i]) != sign(x[i+1])",
          reference="numpy.nonzero(signbit(x[1:]) != signbit(x[:-1]))", history=1,
          nan_policy="reject")
def zero_crossings(x, *, xp):
    if x.ndim != 1:
        raise operator_error(InputError, "zero_crossings", f"input must be 1-D, got shape {x.shape}")
    s = xp.signbit(x)
    return xp.nonzero(s[1:] != s[:-1])[0]


@operator("onset_strength", family=FAMILY,
          summary="Onset strength envelope: mean positive rise of the mel spectrum in dB",
          params=[Param("nfft", int, 2048, min=2, unit="samples", help="frame length"),
                  Param("hop", int, 512, min=1, unit="samples", help="samples between frames"),
                  WINDOW, Param("n_mels", int, 128, min=1, help="mel bands"),
                  Param("fmin", float, 0.0, min=0.0, unit="Hz"),
                  Param("fmax", float, None, min=0.0, unit="Hz", help="upper edge (fs/2)"),
                  Param("lag", int, 1, min=1, unit="frames", help="frames between compared "
                        "spectra"),
                  Param("max_size", int, 1, min=1, unit="bands",
                        help="local maximum over this many bands as the reference"),
                  Param("center", bool, True, help="align frame k with sample k*hop: "
                        "nfft//(2*hop) zeros in front, cut to the spectrogram's frames"),
                  Param("detrend", bool, False, help="remove the DC of the envelope")],
          reference="librosa.onset.onset_strength", history=None)
def onset_strength(x, *, nfft, hop, window, n_mels, fmin, fmax, lag, max_size, center,
                   detrend, fs=22050.0, xp):
    """``librosa.onset.onset_strength(y, sr=fs)`` with librosa's defaults (fs 22050 Hz when
    not given, as librosa's sr): the power mel spectrogram in dB (``power_to_db``: floor
    1e-10, 80 dB below the maximum), its rise over ``lag`` frames above the reference
    (the spectrum itself, or its maximum over ``max_size`` bands), kept where positive and
    averaged over bands.  The spectrogram's frames are centred on k*hop (as librosa's);
    ``center`` puts ``lag + nfft//(2*hop)`` zeros in front and cuts the envelope to the
    spectrogram's length, without it only ``lag`` zeros go in front."""
    from .timefreq import mel_spectrogram
    s = mel_spectrogram.function(x, nfft=nfft, hop=hop, window=window, n_mels=n_mels,
                                 fmin=fmin, fmax=fmax, htk=False, norm="slaney", power=2.0,
                                 center=True, fs=fs, xp=xp)
    db = 10.0 * xp.log10(xp.maximum(s, 1e-10))
    db = xp.maximum(db, db.max() - 80.0)
    if max_size == 1:
        ref = db
    else:
        import scipy.ndimage

        from ..backend import to_device, to_host, xp_name
        ref = to_device(scipy.ndimage.maximum_filter1d(to_host(db), max_size, axis=-2),
                        xp_name(xp))
    env = xp.maximum(0.0, db[..., lag:] - ref[..., :-lag]).mean(axis=-2)
    pad = lag + (nfft // (2 * hop) if center else 0)
    env = xp.pad(env, [(0, 0)] * (env.ndim - 1) + [(pad, 0)])
    if detrend:
        import scipy.signal

        from ..backend import to_device, to_host, xp_name
        env = to_device(scipy.signal.lfilter([1.0, -1.0], [1.0, -0.99], to_host(env), axis=-1),
                        xp_name(xp))
    if center:
        env = env[..., :s.shape[-1]]
    return env


def _pick_peaks(env, pre_max, post_max, pre_avg, post_avg, delta, wait):
    """Greedy peak picking: frame n is a peak when it is the maximum of
    ``env[n - pre_max : n + post_max]``, at least ``delta`` above the mean of
    ``env[n - pre_avg : n + post_avg]`` (windows cut at the ends), and more than
    ``wait`` frames after the previous peak."""
    n = env.shape[0]
    out = []
    i = 0
    while i < n:
        if env[i] >= env[max(0, i - pre_max):min(n, i + post_max)].max() and (
                env[i] >= env[max(0, i - pre_avg):min(n, i + post_avg)].mean() + delta):
            out.append(i)
            i += wait + 1
        else:
            i += 1
    return np.array(out, dtype=np.int64)


@operator("onset_detect", family=FAMILY,
          summary="Onset frames: peaks of the onset strength envelope",
          params=[Param("nfft", int, 2048, min=2, unit="samples", help="frame length"),
                  Param("hop", int, 512, min=1, unit="samples", help="samples between frames"),
                  Param("delta", float, 0.07, min=0.0,
                        help="rise above the local mean of the normalised envelope"),
                  Param("units", str, "frames", choices=("frames", "samples", "time"))],
          reference="librosa.onset.onset_detect", history=None, nan_policy="reject")
def onset_detect(x, *, nfft, hop, delta, units, fs=22050.0):
    """``librosa.onset.onset_detect(y=x, sr=fs, hop_length=hop)`` with its defaults: the
    envelope of :func:`onset_strength` scaled to [0, 1], peaks picked with windows of
    30 ms before the maximum, 100 ms before and after the mean and 30 ms between onsets
    (each ``floor(seconds * fs / hop)`` frames).  ``units``: frame indices, their first
    samples (frame * hop) or times in seconds."""
    env = onset_strength.function(np.asarray(x, dtype=np.float64), nfft=nfft, hop=hop,
                                  window="hann", n_mels=128, fmin=0.0, fmax=None, lag=1,
                                  max_size=1, center=True, detrend=False, fs=fs, xp=np)
    if env.ndim != 1:
        raise operator_error(InputError, "onset_detect", f"input must be one channel, got shape {env.shape[:-1]}"
                         " of envelopes")
    env = env - env.min()
    env = env / (env.max() + np.finfo(env.dtype).tiny)
    if not env.any() or not np.all(np.isfinite(env)):
        onsets = np.zeros(0, dtype=np.int64)
    else:
        frames_of = [int(s * fs // hop) for s in (0.03, 0.0, 0.10, 0.10, 0.03)]
        pre_max, post_max, pre_avg, post_avg, wait = frames_of
        onsets = _pick_peaks(env, pre_max, post_max + 1, pre_avg, post_avg + 1, delta, wait)
    if units == "samples":
        return onsets * hop
    if units == "time":
        return onsets * hop / fs
    return onsets
