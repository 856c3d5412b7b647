"""Mel spectrogram and MFCC (Slaney or HTK mel scale)."""

from __future__ import annotations

import numpy as np
from specscope.compute.backend import scipy_fn
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators import Param, operator
from specscope.compute.ops import timefreq
from specscope.compute.spectral import hz_to_mel, mel_to_hz

from ._common import HOP, NFFT, WINDOW, frame_history, frame_times, real_signal

SPECSCOPE_PLUGIN = {
    "summary": "Mel spectrogram and MFCC",
    "outputs": {"spectrogram": "image", "mfcc": "image"},
    "titles": {"spectrogram": "Mel spectrogram", "mfcc": "MFCC"},
}

_MEL = [
    Param("n_mels", int, 64, min=1, max=512, help="number of mel bands"),
    Param("fmin", float, 0.0, min=0.0, unit="Hz", help="lower edge of the lowest band"),
    Param("fmax", float, None, min=0.0, unit="Hz", help="upper edge of the top band (fs/2)"),
    Param("htk", bool, False, help="HTK mel formula instead of Slaney's"),
    Param("norm", str, "slaney", choices=("slaney", "none"), help="area normalisation"),
]


def _mel_power(x, nfft, hop, window, n_mels, fmin, fmax, htk, norm, fs, xp, name):
    real_signal(x, name, nfft)
    s = timefreq.mel_spectrogram.function(
        x, nfft=nfft, hop=hop, window=window, n_mels=n_mels, fmin=fmin, fmax=fmax, htk=htk,
        norm=norm, power=2.0, fs=fs, xp=xp)
    top = fs / 2.0 if fmax is None else fmax
    lo, hi = hz_to_mel(fmin, htk=htk), hz_to_mel(top, htk=htk)
    centres = mel_to_hz(np.linspace(lo, hi, n_mels + 2), htk=htk)[1:-1]
    return xp.asarray(centres), frame_times(s.shape[-1], nfft, hop, fs, xp), s


@operator("spectrogram", family="timefreq",
          summary="Mel spectrogram: (band centres Hz, frame centres s, power)",
          params=[NFFT, HOP, WINDOW, *_MEL],
          reference="mel filter bank (triangles between mel-spaced edges) @ "
                    "|rfft(frame * window)|**2, frames at k*hop without padding",
          history=frame_history)
def spectrogram(x, *, nfft, hop, window, n_mels, fmin, fmax, htk, norm, fs, xp):
    return _mel_power(x, nfft, hop, window, n_mels, fmin, fmax, htk, norm, fs, xp,
                      "mel.spectrogram")


@operator("mfcc", family="features",
          summary="Mel-frequency cepstral coefficients: (coefficient index, frame centres s, "
                  "MFCC)",
          params=[Param("n_mfcc", int, 20, min=1, max=512, help="coefficients kept"),
                  NFFT, HOP, WINDOW, *_MEL,
                  Param("top_db", float, 80.0, min=0.0, unit="dB",
                        help="floor the log power this far below its maximum")],
          reference="dct(type 2, ortho, over bands) of 10*log10(max(mel power, 1e-10)) floored "
                    "at max - top_db; first n_mfcc rows",
          history=frame_history)
def mfcc(x, *, n_mfcc, nfft, hop, window, n_mels, fmin, fmax, htk, norm, top_db, fs, xp):
    if n_mfcc > n_mels:
        raise operator_error(InputError, "mel.mfcc", f"n_mfcc={n_mfcc} must be <= n_mels={n_mels}")
    _, t, s = _mel_power(x, nfft, hop, window, n_mels, fmin, fmax, htk, norm, fs, xp,
                         "mel.mfcc")
    db = 10.0 * xp.log10(xp.maximum(s, 1e-10))
    if db.size:
        db = xp.maximum(db, db.max(axis=(-2, -1), keepdims=True) - top_db)
    c = scipy_fn(xp, "fft.dct")(db, type=2, norm="ortho", axis=-2)[..., :n_mfcc, :]
    return xp.arange(n_mfcc, dtype=xp.float64), t, c
