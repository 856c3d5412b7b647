"""Parity of the time-frequency, feature and wavelet operators with their references.

The machinery and the rules of the table are in :mod:`_parity`.
"""



from __future__ import annotations

import math

import numpy as np
import pytest
import pywt
import scipy.signal as ss
import scipy.signal.windows as sw
from _parity import (
    BACKENDS,
    FS,
    Case,
    case_params,
    check_nan_policy,
    check_parity,
    check_table,
    frames_ref,
    image,
    nan_params,
    positive,
    rng_signal,
)


def mag_frames(x, nfft, hop, window="hann"):
    """|rfft(frame * periodic window)| via scipy.signal.spectrogram (independent path)."""
    if x.shape[-1] < nfft:
        raise ValueError("shorter than nfft")
    w = ss.get_window(window, nfft)
    _, _, s = ss.spectrogram(x.astype(np.float64), 1.0, window=w, nperseg=nfft,
                             noverlap=nfft - hop, detrend=False, mode="magnitude",
                             scaling="spectrum")
    return np.swapaxes(s, -1, -2) * w.sum()


def mel_ref(fs, nfft, n_mels, fmin, fmax, htk, norm):
    """Mel triangles evaluated point by point (the textbook definition)."""
    def h2m(f):
        if htk:
            return 2595 * math.log10(1 + f / 700)
        return f / (200 / 3) if f < 1000 else 15 + math.log(f / 1000) / (math.log(6.4) / 27)

    def m2h(m):
        if htk:
            return 700 * (10 ** (m / 2595) - 1)
        return m * (200 / 3) if m < 15 else 1000 * math.exp((m - 15) * math.log(6.4) / 27)
    fmax = fs / 2 if fmax is None else fmax
    lo, hi = h2m(fmin), h2m(fmax)
    edges = [m2h(lo + (hi - lo) * i / (n_mels + 1)) for i in range(n_mels + 2)]
    freqs = np.fft.rfftfreq(nfft, 1 / fs)
    w = np.zeros((n_mels, freqs.size))
    for i in range(n_mels):
        a, c, b = edges[i], edges[i + 1], edges[i + 2]
        for j, f in enumerate(freqs):
            if a < f <= c:
                w[i, j] = (f - a) / (c - a)
            elif c < f < b:
                w[i, j] = (b - f) / (b - c)
        if norm == "slaney":
            w[i] *= 2 / (b - a)
    return w


def octave_ref(fraction, fmin, fmax):
    g = 10 ** 0.3
    out = []
    for i in range(-200, 200):
        fc = 1000 * g ** (i / fraction) if fraction % 2 else \
            1000 * g ** ((2 * i + 1) / (2 * fraction))
        if fmin <= fc <= fmax:
            out.append((fc / g ** (1 / (2 * fraction)), fc, fc * g ** (1 / (2 * fraction))))
    return np.array(out).reshape(-1, 3)


def reassigned_ref(x, nfft, hop, window, fs):
    """Reassignment by direct DFT sums (no FFT): Auger-Flandrin definitions."""
    if x.ndim != 1 or x.shape[-1] < nfft or x.dtype.kind == "c":
        raise ValueError("1-D real signal of at least nfft samples")
    h = ss.get_window(window, nfft, fftbins=False)
    c = (nfft - 1) / 2
    dh, th = np.gradient(h), (np.arange(nfft) - c) * h
    k = np.arange(nfft // 2 + 1)
    dft = np.exp(-2j * np.pi * np.outer(k, np.arange(nfft)) / nfft)
    fr = frames_ref(x.astype(np.float64), nfft, hop)
    xh, xdh, xth = (fr * h) @ dft.T, (fr * dh) @ dft.T, (fr * th) @ dft.T
    p = np.abs(xh) ** 2
    f_hat = k[None, :] * fs / nfft - np.imag(xdh * np.conj(xh)) / p * fs / (2 * np.pi)
    t_hat = (np.arange(fr.shape[0])[:, None] * hop + c) / fs + np.real(xth * np.conj(xh)) / p / fs
    return f_hat.T, t_hat.T, p.T


def cqt_ref(x, fmin, n_bins, bins_per_octave, hop, window, fs):
    if x.shape[-1] < 1:
        raise ValueError("empty")
    q = 1 / (2 ** (1 / bins_per_octave) - 1)
    n = x.shape[-1]
    n_frames = (n - 1) // hop + 1
    freqs, rows = [], []
    for k in range(n_bins):
        fk = fmin * 2 ** (k / bins_per_octave)
        nk = math.ceil(q * fs / fk)
        kern = ss.get_window(window, nk, fftbins=False) * np.exp(2j * np.pi * fk * np.arange(nk) / fs) / nk
        row = np.zeros(x.shape[:-1] + (n_frames,), complex)
        for m in range(n_frames):
            start = m * hop - nk // 2
            for j in range(nk):
                if 0 <= start + j < n:
                    row[..., m] += x[..., start + j] * np.conj(kern[j])
        rows.append(row)
        freqs.append(fk)
    return np.array(freqs), np.stack(rows, -2)


def mt_ref(x, NW, K, nfft, axis, fs):
    if x.shape[-1] < 2:
        raise ValueError("short")
    k = K or max(1, int(2 * NW) - 1)
    tapers = np.atleast_2d(sw.dpss(x.shape[-1], NW, k))
    ps = [ss.periodogram(x, fs, window=t, nfft=nfft, detrend=False,
                         return_onesided=x.dtype.kind != "c") for t in tapers]
    return ps[0][0], np.mean([p[1] for p in ps], axis=0)


def spec_ref(x, nfft, hop, window, mode, fs):
    scaling = "density" if mode == "psd" else "spectrum"
    m = "psd" if mode in ("psd", "spectrum") else mode
    f, t, s = ss.spectrogram(x, fs, window=window, nperseg=nfft, noverlap=nfft - hop,
                             detrend=False, scaling=scaling, mode=m)
    if np.iscomplexobj(x):
        f, s = np.fft.fftshift(f), np.fft.fftshift(s, axes=-2)
    return f, t, s


def stft_power_ref(x, nfft, hop, window, scaling, two_sided, layout, fs):
    scipy_scaling, mode = {"psd": ("density", "psd"), "spectrum": ("spectrum", "psd"),
                           "magnitude": ("spectrum", "magnitude")}[scaling]
    two = np.iscomplexobj(x) if two_sided is None else two_sided
    if x.shape[-1] < nfft:  # the kernel gives every whole frame: none (scipy refuses)
        n_freq = nfft if two else nfft // 2 + 1
        shape = (*x.shape[:-1], n_freq, 0) if layout == "freq" else (*x.shape[:-1], 0, n_freq)
        return np.zeros(shape, dtype=np.result_type(x.real.dtype, np.float32))
    _, _, s = ss.spectrogram(x, fs, window=window, nperseg=nfft, noverlap=nfft - hop,
                             detrend=False, scaling=scipy_scaling, mode=mode,
                             return_onesided=not two)
    if two:
        s = np.fft.fftshift(s, axes=-2)
    return s if layout == "freq" else np.swapaxes(s, -1, -2)


def stft_ref(x, window, nperseg, hop, fft_mode, mfft, scale_to, fs):
    sft = ss.ShortTimeFFT(ss.get_window(window, nperseg), hop, fs, fft_mode=fft_mode,
                          mfft=mfft, scale_to=scale_to)
    return sft.stft(x)


def istft_ref(x, window, nperseg, hop, fft_mode, mfft, scale_to, n, fs):
    sft = ss.ShortTimeFFT(ss.get_window(window, nperseg), hop, fs, fft_mode=fft_mode,
                          mfft=mfft, scale_to=scale_to)
    return sft.istft(x, k1=n)


def stft_input(n, dtype):
    if n < 1:
        return np.zeros((33, 0), complex)
    x = rng_signal(n, np.float64)
    return stft_ref(x, "hann", 64, 16, "onesided", None, None, FS).astype(
        np.complex64 if dtype == np.float32 else np.complex128)


def threshold_ref(x, value, mode, substitute):
    return pywt.threshold(x, value, mode=mode, substitute=substitute)


def _mel_edges(n_mels, fmin, fmax, htk):
    def h2m(f):
        return 2595 * math.log10(1 + f / 700) if htk else (
            f / (200 / 3) if f < 1000 else 15 + math.log(f / 1000) / (math.log(6.4) / 27))

    def m2h(m):
        return 700 * (10 ** (m / 2595) - 1) if htk else (
            m * 200 / 3 if m < 15 else 1000 * math.exp((m - 15) * math.log(6.4) / 27))
    lo, hi = h2m(fmin), h2m(fmax)
    return [(None, m2h(lo + (hi - lo) * i / (n_mels - 1))) for i in range(n_mels)]


CASES: list[Case] = [
    # ---------------------------------------------------------------- timefreq
    Case("stft", stft_ref,
         [{"window": "hann", "nperseg": 16, "hop": 4, "fft_mode": "onesided", "mfft": None,
           "scale_to": None},
          {"window": "hamming", "nperseg": 16, "hop": 5, "fft_mode": "onesided2X", "mfft": 20,
           "scale_to": "psd"},
          {"window": "hann", "nperseg": 15, "hop": 3, "fft_mode": "twosided", "mfft": None,
           "scale_to": "magnitude"}],
         fs=FS, atol32=1e-3),
    Case("istft", istft_ref,
         [{"window": "hann", "nperseg": 64, "hop": 16, "fft_mode": "onesided", "mfft": None,
           "scale_to": None, "n": 200}],
         fs=FS, make=stft_input, batch=False, lengths=(97, 250), atol32=1e-3),
    Case("stft_power", stft_power_ref,
         [{"nfft": 16, "hop": 4, "window": "hann", "scaling": "psd", "two_sided": None,
           "layout": "frames"},
          {"nfft": 16, "hop": 5, "window": "hamming", "scaling": "spectrum", "two_sided": None,
           "layout": "freq"},
          {"nfft": 15, "hop": 3, "window": "hann", "scaling": "magnitude", "two_sided": True,
           "layout": "frames"}],
         fs=FS, complex=True, may_reject=lambda n, p: n < p["nfft"], rtol32=3e-3, atol32=1e-3),
    Case("spectrogram", spec_ref,
         [{"nfft": 16, "hop": 4, "window": "hann", "mode": m}
          for m in ("psd", "spectrum", "magnitude", "angle", "complex")],
         fs=FS, complex=True, may_reject=lambda n, p: n < p["nfft"], rtol32=3e-3, atol32=1e-3),
    Case("welch", lambda x, fs, **p: ss.welch(x, fs, **p),
         [{"window": "hann", "nperseg": 16, "noverlap": None, "nfft": None, "detrend": "constant",
           "return_onesided": True, "scaling": "density", "axis": -1, "average": "mean"},
          {"window": "hamming", "nperseg": 32, "noverlap": 8, "nfft": 64, "detrend": "linear",
           "return_onesided": True, "scaling": "spectrum", "axis": -1, "average": "median"}],
         fs=FS, complex=True, atol32=1e-3),
    Case("periodogram", lambda x, fs, **p: ss.periodogram(x, fs, **p),
         [{"window": "boxcar", "nfft": None, "detrend": "constant", "return_onesided": True,
           "scaling": "density", "axis": -1},
          {"window": "hann", "nfft": 300, "detrend": False, "return_onesided": False,
           "scaling": "spectrum", "axis": -1}], fs=FS, complex=True, atol32=1e-3),
    Case("csd", lambda x, y, fs, **p: ss.csd(x, y, fs, **p),
         [{"y": rng_signal(250, np.float64, 7), "window": "hann", "nperseg": 16,
           "noverlap": None, "nfft": None, "detrend": "constant", "return_onesided": True,
           "scaling": "density", "axis": -1, "average": "mean"}],
         fs=FS, lengths=(250,), atol32=1e-3),
    Case("coherence", lambda x, y, fs, **p: ss.coherence(x, y, fs, **p),
         [{"y": rng_signal(250, np.float64, 7), "window": "hann", "nperseg": 32,
           "noverlap": None, "nfft": None, "detrend": "constant", "axis": -1}],
         fs=FS, lengths=(250,), atol32=1e-3, rtol32=5e-3),
    Case("lombscargle", lambda x, t, freqs, normalize, floating_mean: ss.lombscargle(
        t, x, freqs, normalize=normalize, floating_mean=floating_mean),
         [{"t": np.sort(np.random.default_rng(3).uniform(0, 10, 97)),
           "freqs": np.linspace(0.1, 5, 40), "normalize": False, "floating_mean": False},
          {"t": np.sort(np.random.default_rng(3).uniform(0, 10, 97)),
           "freqs": np.linspace(0.1, 5, 40), "normalize": True, "floating_mean": True}],
         lengths=(97,), batch=False, float32=False),
    Case("multitaper_psd", mt_ref, [{"NW": 2.5, "K": None, "nfft": None, "axis": -1},
                                    {"NW": 4.0, "K": 3, "nfft": 256, "axis": -1}],
         fs=FS, complex=True, rtol32=5e-3, atol32=1e-3, rtol64=1e-6, atol64=1e-10),
    Case("reassigned_spectrogram", reassigned_ref, {"nfft": 32, "hop": 8, "window": "hann"},
         fs=FS, batch=False, lengths=(0, 5, 33, 97, 250), rtol32=2e-2, atol32=2e-2,
         rtol64=1e-6, atol64=1e-7),
    Case("hz_to_mel", lambda x, htk: np.array([(
        2595 * math.log10(1 + f / 700) if htk else (f / (200 / 3) if f < 1000 else
                                                    15 + math.log(f / 1000) / (math.log(6.4) / 27)))
        for f in x.ravel()]).reshape(x.shape),
         [{"htk": False}, {"htk": True}], make=lambda n, d: np.linspace(0, 8000, n).astype(d)),
    Case("mel_to_hz", lambda x, htk: np.array([
        700 * (10 ** (m / 2595) - 1) if htk else (m * 200 / 3 if m < 15 else
                                                 1000 * math.exp((m - 15) * math.log(6.4) / 27))
        for m in x.ravel()]).reshape(x.shape),
         [{"htk": False}, {"htk": True}], make=lambda n, d: np.linspace(0, 40, n).astype(d)),
    Case("mel_frequencies", lambda n_mels, fmin, fmax, htk: np.array(
        [c[1] for c in _mel_edges(n_mels, fmin, fmax, htk)]),
         [{"n_mels": 10, "fmin": 0.0, "fmax": 8000.0, "htk": h} for h in (False, True)]),
    Case("mel_filterbank", lambda fs, **p: mel_ref(fs, **p),
         [{"nfft": 256, "n_mels": 12, "fmin": 0.0, "fmax": None, "htk": False, "norm": "slaney"},
          {"nfft": 255, "n_mels": 8, "fmin": 300.0, "fmax": 6000.0, "htk": True,
           "norm": "none"}], fs=16000.0),
    Case("mel_spectrogram", lambda x, nfft, hop, window, n_mels, fmin, fmax, htk, norm, power, fs:
         mel_ref(fs, nfft, n_mels, fmin, fmax, htk, norm)
         @ np.swapaxes(mag_frames(x, nfft, hop, window) ** power, -1, -2),
         [{"nfft": 32, "hop": 8, "window": "hann", "n_mels": 6, "fmin": 0.0, "fmax": None,
           "htk": False, "norm": "slaney", "power": 2.0}], fs=FS, rtol32=5e-3, atol32=1e-3),
    Case("octave_bands", lambda fraction, fmin, fmax: octave_ref(fraction, fmin, fmax),
         [{"fraction": b, "fmin": 20.0, "fmax": 20000.0} for b in (1, 2, 3, 6)]),
    Case("octave_filterbank", lambda x, fraction, fmin, fmax, order, fs: np.stack([
        ss.sosfilt(ss.butter(order, [lo, hi], "bandpass", fs=fs, output="sos"), x)
        for lo, _, hi in octave_ref(fraction, fmin, min(fmax, fs / 2))
        if hi < fs / 2]),
         {"fraction": 1, "fmin": 30.0, "fmax": 400.0, "order": 2}, fs=FS, batch=False,
         atol32=1e-3),
    Case("cqt", cqt_ref, {"fmin": 50.0, "n_bins": 10, "bins_per_octave": 12, "hop": 16,
                          "window": "hann"}, fs=FS, batch=False, complex=True,
         lengths=(0, 1, 5, 31, 97, 250), atol32=1e-3, rtol64=1e-6, atol64=1e-9),
    Case("check_cola", lambda window, nperseg, noverlap, tol: ss.check_COLA(
        window, nperseg, noverlap, tol),
         [{"window": w, "nperseg": 16, "noverlap": o, "tol": 1e-10}
          for w in ("hann", "boxcar", "hamming") for o in (0, 8, 12)]),
    Case("check_nola", lambda window, nperseg, noverlap, tol: ss.check_NOLA(
        window, nperseg, noverlap, tol),
         [{"window": w, "nperseg": 16, "noverlap": o, "tol": 1e-10}
          for w in ("hann", "boxcar") for o in (0, 8)]),
    Case("vectorstrength", lambda x, period: ss.vectorstrength(x, period),
         [{"period": 0.01}, {"period": [0.01, 0.02]}], make=lambda n, d: np.sort(
             positive(n, d)), batch=False),
    # ---------------------------------------------------------------- wavelets
    Case("cwt", lambda x, scales, wavelet, method, axis, fs: pywt.cwt(
        x, scales, wavelet, 1 / fs, method, axis),
         [{"scales": np.arange(1, 9), "wavelet": "morl", "method": "conv", "axis": -1},
          {"scales": np.arange(1, 6), "wavelet": "cmor1.5-1.0", "method": "fft", "axis": -1},
          {"scales": np.arange(1, 6), "wavelet": "mexh", "method": "conv", "axis": -1}],
         fs=FS, atol32=1e-3, batch=False, may_reject=lambda n, p: n == 0),
    Case("dwt", lambda x, wavelet, mode, axis: pywt.dwt(x, wavelet, mode, axis),
         [{"wavelet": "db4", "mode": "symmetric", "axis": -1},
          {"wavelet": "haar", "mode": "periodization", "axis": -1}], complex=True),
    Case("idwt", lambda x, cD, wavelet, mode, axis: pywt.idwt(x, cD, wavelet, mode, axis),
         [{"cD": rng_signal(31, np.float64, 3), "wavelet": "db2", "mode": "symmetric",
           "axis": -1}], lengths=(31,), batch=False),
    Case("wavedec", lambda x, wavelet, mode, level, axis: pywt.wavedec(x, wavelet, mode, level,
                                                                       axis),
         [{"wavelet": "db4", "mode": "symmetric", "level": None, "axis": -1},
          {"wavelet": "sym3", "mode": "zero", "level": 2, "axis": -1}]),
    Case("waverec", lambda x, wavelet, mode, axis: pywt.waverec(x, wavelet, mode, axis),
         [{"wavelet": "db4", "mode": "symmetric", "axis": -1}],
         make=lambda n, d: pywt.wavedec(rng_signal(n, d), "db4"), lengths=(5, 31, 97, 250),
         batch=False),
    Case("swt", lambda x, wavelet, level, trim_approx, norm, axis: pywt.swt(
        x, wavelet, level, trim_approx=trim_approx, norm=norm, axis=axis),
         [{"wavelet": "db2", "level": 2, "trim_approx": True, "norm": False, "axis": -1}],
         lengths=(0, 1, 5, 32, 96, 256)),
    Case("iswt", lambda x, wavelet, norm, axis: pywt.iswt(x, wavelet, norm=norm, axis=axis),
         [{"wavelet": "db2", "norm": False, "axis": -1}],
         make=lambda n, d: pywt.swt(rng_signal(n, d), "db2", 2, trim_approx=True),
         lengths=(32, 96), batch=False),
    Case("dwt2", lambda x, wavelet, mode: pywt.dwt2(x, wavelet, mode),
         [{"wavelet": "haar", "mode": "symmetric"}], make=image, batch=False,
         lengths=(1, 5, 31)),
    Case("wavedec2", lambda x, wavelet, mode, level: pywt.wavedec2(x, wavelet, mode, level),
         [{"wavelet": "haar", "mode": "symmetric", "level": 1}], make=image, batch=False,
         lengths=(5, 31)),
    Case("waverec2", lambda x, wavelet, mode: pywt.waverec2(x, wavelet, mode),
         [{"wavelet": "haar", "mode": "symmetric"}],
         make=lambda n, d: pywt.wavedec2(image(n, d), "haar", level=1), lengths=(5, 31),
         batch=False),
    Case("downcoef", lambda x, part, wavelet, mode, level: pywt.downcoef(part, x, wavelet,
                                                                         mode, level),
         [{"part": "a", "wavelet": "db2", "mode": "symmetric", "level": 1},
          {"part": "d", "wavelet": "db2", "mode": "symmetric", "level": 2}], batch=False),
    Case("upcoef", lambda x, part, wavelet, level, take: pywt.upcoef(part, x, wavelet, level,
                                                                     take),
         [{"part": "a", "wavelet": "db2", "level": 1, "take": 0},
          {"part": "d", "wavelet": "db2", "level": 2, "take": 20}], batch=False),
    Case("wavelet_threshold", threshold_ref,
         [{"value": 0.5, "mode": m, "substitute": s} for m in ("soft", "hard", "garrote",
                                                                 "greater", "less")
          for s in (0.0, 0.1)]),
    Case("dwt_max_level", lambda data_len, wavelet: pywt.dwt_max_level(data_len, wavelet),
         [{"data_len": n, "wavelet": w} for n in (0, 1, 97, 1000) for w in ("db4", "haar")]),
    Case("dwt_coeff_len", lambda data_len, wavelet, mode: pywt.dwt_coeff_len(
        data_len, pywt.Wavelet(wavelet), mode),
         [{"data_len": n, "wavelet": "db4", "mode": m} for n in (1, 97) for m in
          ("symmetric", "periodization")]),
    Case("wavelet_filter_bank", lambda wavelet: tuple(
        np.asarray(f) for f in pywt.Wavelet(wavelet).filter_bank),
         [{"wavelet": w} for w in ("haar", "db4", "bior2.2")]),
    Case("scale2frequency", lambda x, wavelet: pywt.scale2frequency(wavelet, x),
         [{"wavelet": "morl"}, {"wavelet": "mexh"}], make=positive, batch=False),
    Case("wavelet_packet", lambda x, wavelet, mode, maxlevel: np.stack([
        nd.data for nd in pywt.WaveletPacket(x, wavelet, mode, maxlevel).get_level(
            maxlevel, "freq")]),
         [{"wavelet": "db2", "mode": "symmetric", "maxlevel": 2}], batch=False,
         lengths=(5, 31, 97)),
    # ---------------------------------------------------------------- features
    Case("spectral_centroid", lambda x, nfft, hop, window, fs: (lambda m: (
        m @ np.fft.rfftfreq(nfft, 1 / fs)) / m.sum(-1))(mag_frames(x, nfft, hop, window)),
         {"nfft": 16, "hop": 4, "window": "hann"}, fs=FS),
    Case("spectral_bandwidth", lambda x, nfft, hop, window, p, fs: (lambda m, f: (
        (m * np.abs(f - ((m @ f) / m.sum(-1))[..., None]) ** p).sum(-1) / m.sum(-1)) ** (1 / p))(
        mag_frames(x, nfft, hop, window), np.fft.rfftfreq(nfft, 1 / fs)),
         [{"nfft": 16, "hop": 4, "window": "hann", "p": 2.0},
          {"nfft": 16, "hop": 4, "window": "hann", "p": 1.0}], fs=FS),
    Case("spectral_flatness", lambda x, nfft, hop, window, amin: (lambda pw: np.exp(
        np.mean(np.log(pw), -1)) / np.mean(pw, -1))(np.maximum(mag_frames(x, nfft, hop,
                                                                          window) ** 2, amin)),
         {"nfft": 16, "hop": 4, "window": "hann", "amin": 1e-10}),
    Case("spectral_rolloff", lambda x, nfft, hop, window, roll_percent, fs: np.array([
        np.fft.rfftfreq(nfft, 1 / fs)[np.nonzero(np.cumsum(r) >= roll_percent * r.sum())[0][0]]
        for r in mag_frames(x, nfft, hop, window).reshape(-1, nfft // 2 + 1)]).reshape(
            mag_frames(x, nfft, hop, window).shape[:-1]),
         {"nfft": 16, "hop": 4, "window": "hann", "roll_percent": 0.85}, fs=FS),
    # librosa's own (the dev extra): skipped where it is not installed
    Case("onset_strength", lambda x, nfft, hop, n_mels, fs: pytest.importorskip(
        "librosa").onset.onset_strength(y=x, sr=fs, n_fft=nfft, hop_length=hop, n_mels=n_mels),
         {"nfft": 64, "hop": 16, "n_mels": 16}, fs=22050.0, batch=False, lengths=(250, 1000),
         float32=False, rtol64=1e-6, atol64=1e-6),
    Case("onset_detect", lambda x, nfft, hop, fs: (lambda lr: lr.onset.onset_detect(
        onset_envelope=lr.onset.onset_strength(y=x, sr=fs, n_fft=nfft, hop_length=hop),
        sr=fs, hop_length=hop))(pytest.importorskip("librosa")),
         {"nfft": 256, "hop": 64}, fs=22050.0, batch=False, lengths=(4000, 22050),
         float32=False),
    Case("spectral_flux", lambda x, nfft, hop, window: (lambda m: np.concatenate([
        np.zeros(m.shape[:-2] + (1,)), np.sqrt((np.maximum(np.diff(m, axis=-2), 0) ** 2).sum(-1))],
        -1))(mag_frames(x, nfft, hop, window)), {"nfft": 16, "hop": 4, "window": "hann"}),
    Case("spectral_entropy", lambda x, nfft, hop, window: (lambda pw: (lambda p: -np.sum(
        np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0), -1))(
        pw / pw.sum(-1, keepdims=True)))(mag_frames(x, nfft, hop, window) ** 2),
         {"nfft": 16, "hop": 4, "window": "hann"}),
    Case("spectral_crest", lambda x, nfft, hop, window: (lambda m: m.max(-1) / m.mean(-1))(
        mag_frames(x, nfft, hop, window)), {"nfft": 16, "hop": 4, "window": "hann"}),
    Case("peak_frequency", lambda x, nfft, hop, window, fs: np.fft.rfftfreq(nfft, 1 / fs)[
        np.argmax(mag_frames(x, nfft, hop, window), -1)],
         {"nfft": 16, "hop": 4, "window": "hann"}, fs=FS),
    Case("rms", lambda x, frame_length, hop: np.sqrt(np.mean(frames_ref(x, frame_length, hop)
                                                             ** 2, -1))
         if x.shape[-1] >= frame_length else (_ for _ in ()).throw(ValueError("short")),
         {"frame_length": 16, "hop": 4}),
    Case("zero_crossing_rate", lambda x, frame_length, hop: np.mean(np.abs(np.diff(
        np.signbit(frames_ref(x, frame_length, hop)).astype(int), axis=-1)), -1)
         if x.shape[-1] >= frame_length else (_ for _ in ()).throw(ValueError("short")),
         {"frame_length": 16, "hop": 4}),
    Case("zero_crossings", lambda x: np.nonzero(np.diff(np.signbit(x).astype(int)))[0],
         batch=False),
]

check_table(CASES, "timefreq")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")


@pytest.mark.parametrize("bk", BACKENDS)
@pytest.mark.parametrize("case,dtype", case_params(CASES))
def test_parity(case: Case, dtype, bk: str) -> None:
    check_parity(case, dtype, bk)


@pytest.mark.parametrize("case", nan_params(CASES))
def test_nan_policy(case: Case) -> None:
    check_nan_policy(case)
