"""Every registered operator against its reference (scipy, numpy, pywt, or a definition).

Table-driven: one :class:`Case` per operator.  Collection fails when a
registered operator has no case, so adding an operator means adding its test.

Each input-taking case runs on lengths 0, 1, shorter than the window, odd,
prime and non-power-of-two, in float32 and float64 (complex too where it makes
sense), and on a batch of three channels along the first axis (compared with
the reference applied channel by channel).  When the reference raises, the
operator must raise a one-line :class:`SpecscopeError`.  Tolerances: float64
rtol 1e-7, float32 rtol 2e-3, absolute part relative to the largest reference
value (1e-9 / 2e-4); cases with ill-conditioned references state their own.

Each body runs on every backend; ``cupy`` is skipped when no GPU is present.
"""

# ruff: noqa: PLC3002 - the table builds small references from lambdas called in place

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import pywt
import scipy.fft as sf
import scipy.signal as ss
import scipy.signal.windows as sw
from specscope.compute import backend
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.operators import registry

LENGTHS = (0, 1, 5, 31, 97, 250)  # empty, single, < window (16), odd, prime, non-power-of-two
FS = 1000.0
SOS = ss.butter(4, 0.2, output="sos")
SOS_BP = ss.cheby1(3, 1.0, [0.1, 0.3], btype="bandpass", output="sos")
B, A = ss.butter(3, 0.25)
FIR = ss.firwin(9, 0.3)
KERN = np.array([0.5, -1.0, 2.0, 0.25])


def rng_signal(n: int, dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed + n)
    x = rng.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(n)
    return x.astype(dtype)


def positive(n: int, dtype: Any) -> np.ndarray:
    return (np.abs(rng_signal(n, dtype)) + 0.1).astype(dtype)


def time_axis(n: int, dtype: Any) -> np.ndarray:
    return (np.arange(n) / FS).astype(dtype)


def phase_axis(n: int, dtype: Any) -> np.ndarray:
    return np.linspace(0, 6 * np.pi, n).astype(dtype)


def image(n: int, dtype: Any) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, 7)).astype(dtype)


def fixed(value: Any) -> Callable[[int, Any], Any]:
    return lambda n, dtype: np.array(value)


@dataclass
class Case:
    op: str
    ref: Callable[..., Any]
    params: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    make: Callable[[int, Any], Any] = rng_signal
    lengths: tuple = LENGTHS
    batch: bool = True
    complex: bool = False
    fs: float | None = None
    rtol32: float = 2e-3
    rtol64: float = 1e-7
    atol32: float = 2e-4
    atol64: float = 1e-9
    #: ours may refuse (InputError) where the reference answers: documented
    may_reject: Callable[[int, dict], bool] = lambda n, p: False
    #: float32 runs? (False for coefficient/time inputs where only float64 makes sense)
    float32: bool = True
    #: why NaN may legitimately vanish from the output (e.g. imag of real input)
    nan_vanishes: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.params, dict):
            self.params = [self.params]


def same(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x, **p: fn(x, **p)


def frames_ref(x, nfft, hop):
    n = x.shape[-1]
    k = 0 if n < nfft else (n - nfft) // hop + 1
    return np.stack([x[..., i * hop:i * hop + nfft] for i in range(k)], -2) if k else \
        np.zeros(x.shape[:-1] + (0, nfft))


def mag_frames(x, nfft, hop, window="hann"):
    """|rfft(frame * periodic window)| via scipy.signal.spectrogram (independent path)."""
    if x.shape[-1] < nfft:
        raise ValueError("shorter than nfft")
    w = ss.get_window(window, nfft)
    _, _, s = ss.spectrogram(x.astype(np.float64), 1.0, window=w, nperseg=nfft,
                             noverlap=nfft - hop, detrend=False, mode="magnitude",
                             scaling="spectrum")
    return np.swapaxes(s, -1, -2) * w.sum()


def ola_ref(x, hop):
    """Overlap-add by an explicit loop."""
    n_frames, length = x.shape[-2], x.shape[-1]
    y = np.zeros(x.shape[:-2] + (0 if n_frames == 0 else (n_frames - 1) * hop + length,),
                 x.dtype)
    for k in range(n_frames):
        y[..., k * hop:k * hop + length] += x[..., k, :]
    return y


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


def sf_(name):
    return same(getattr(sf, name))


def wins():
    out = []
    extra = {"chebwin": {"at": 80.0}, "dpss": {"NW": 2.5}, "exponential": {"tau": 3.0},
             "gaussian": {"std": 2.5}, "general_cosine": {"a": [0.5, 0.5]},
             "general_gaussian": {"p": 1.5, "sig": 3.0}, "general_hamming": {"alpha": 0.6},
             "kaiser": {"beta": 6.0}, "kaiser_bessel_derived": {"beta": 6.0},
             "taylor": {"nbar": 4, "sll": 35.0}, "tukey": {"alpha": 0.3}}
    names = ["barthann", "bartlett", "blackman", "blackmanharris", "bohman", "boxcar",
             "chebwin", "cosine", "dpss", "exponential", "flattop", "gaussian",
             "general_cosine", "general_gaussian", "general_hamming", "hamming", "hann",
             "kaiser", "kaiser_bessel_derived", "lanczos", "nuttall", "parzen", "taylor",
             "triang", "tukey"]
    for name in names:
        ps = []
        for m in (0, 1, 2, 7, 16, 31):
            for sym in (True, False):
                ps.append({"M": m, "sym": sym, **extra.get(name, {})})
        if name == "dpss":
            ps += [{"M": 32, "NW": 3.0, "Kmax": 4, "sym": True}]
        fn = getattr(sw, name)

        def ref(_fn=fn, **p):
            p = dict(p)
            p.pop("dtype", None)
            m = p.pop("M")
            sym = p.pop("sym")
            return _fn(m, **p, sym=sym)
        out.append(Case(name, ref, ps, rtol32=1e-6, atol32=1e-6))
    return out


def iirs():
    out = []
    for name, extra in [("butter", []), ("cheby1", [1.0]), ("cheby2", [40.0]),
                        ("ellip", [1.0, 40.0])]:
        keys = {"cheby1": ["rp"], "cheby2": ["rs"], "ellip": ["rp", "rs"]}.get(name, [])
        base = dict(zip(keys, extra))
        ps = [{"N": 4, "Wn": 0.3, **base}, {"N": 3, "Wn": [0.1, 0.4], "btype": "bandpass", **base},
              {"N": 5, "Wn": 100.0, "btype": "highpass", "output": "ba", **base},
              {"N": 2, "Wn": [1.0, 2.0], "btype": "bandstop", "analog": True, "output": "zpk",
               **base},
              {"N": 3, "Wn": 1.5, **base}]  # Wn above Nyquist: both raise

        def ref(_n=name, _k=keys, fs=None, **p):
            p = dict(p)
            args = [p.pop(k) for k in _k]
            p.setdefault("output", "sos")
            if p.get("analog"):
                fs = None
            return getattr(ss, _n)(p.pop("N"), *args, p.pop("Wn"), fs=fs, **p)
        out.append(Case(name, ref, ps))
    return out


def with_fs(fn):
    """Reference that also takes fs (Case.fs given to both sides)."""
    return fn


CASES: list[Case] = [
    # ---------------------------------------------------------------- basic
    Case("gain", lambda x, factor: x * factor, {"factor": 2.5}, complex=True),
    Case("gain_db", lambda x, db: x * 10 ** (db / 20), {"db": -6.0}, complex=True),
    Case("offset", lambda x, value: x + value, {"value": 0.75}),
    Case("abs", lambda x: np.abs(x), complex=True),
    Case("real", lambda x: np.real(x), complex=True),
    Case("imag", lambda x: np.imag(x), complex=True,
         nan_vanishes="the imaginary part of real input is zero"),
    Case("conj", lambda x: np.conj(x), complex=True),
    Case("magnitude_squared", lambda x: np.abs(x) ** 2, complex=True),
    Case("sqrt", lambda x: np.sqrt(x), make=positive),
    Case("exp", lambda x: np.exp(x)),
    Case("log", lambda x: np.log(x), make=positive),
    Case("log10", lambda x: np.log10(x), make=positive),
    Case("sign", lambda x: np.sign(x)),
    Case("negate", lambda x: -x, complex=True),
    Case("am_demod", lambda x: np.abs(x), complex=True),
    Case("angle", lambda x, deg: np.angle(x, deg=deg), [{"deg": False}, {"deg": True}],
         complex=True),
    Case("unwrap", lambda x, discont, axis, period: np.unwrap(x, discont, axis, period=period),
         {"discont": None, "axis": -1, "period": 2 * np.pi},
         make=lambda n, d: np.cumsum(rng_signal(n, d)).astype(d) % (2 * np.pi),
         rtol32=1e-3, atol32=1e-3),
    Case("to_db", lambda x, power, ref, floor: (10 if power else 20) * np.log10(
        np.maximum(np.abs(x), floor if power else np.sqrt(floor)) / ref),
         [{"power": True, "ref": 1.0, "floor": 1e-20}, {"power": False, "ref": 2.0,
                                                        "floor": 1e-12}],
         make=positive, complex=True),
    Case("db_to_power", lambda x, ref: ref * 10 ** (x / 10), {"ref": 2.0}),
    Case("db_to_amplitude", lambda x, ref: ref * 10 ** (x / 20), {"ref": 2.0}),
    Case("clip", lambda x, lo, hi: np.clip(x, lo, hi), [{"lo": -0.5, "hi": 0.5},
                                                         {"lo": None, "hi": 0.1}]),
    Case("normalize_peak", lambda x, peak, axis: x * peak / np.max(np.abs(x), axis, keepdims=True)
         if x.size else x, {"peak": 0.9, "axis": -1}, complex=True, batch=False),
    Case("normalize_rms", lambda x, rms, axis: x * rms / np.sqrt(
        np.mean(np.abs(x) ** 2, axis, keepdims=True)) if x.size else x,
         {"rms": 0.5, "axis": -1}, complex=True, batch=False),
    Case("remove_dc", lambda x, axis: x - np.mean(x, axis, keepdims=True) if x.size else x,
         {"axis": -1}, complex=True),
    Case("cumsum", lambda x, axis: np.cumsum(x, axis), {"axis": -1}, rtol32=1e-3, atol32=1e-3),
    Case("diff", lambda x, n, axis: np.diff(x, n, axis), [{"n": 1, "axis": -1},
                                                          {"n": 2, "axis": -1}]),
    Case("gradient", lambda x, axis, edge_order, fs: np.gradient(x, 1 / fs, axis=axis,
                                                                 edge_order=edge_order),
         [{"axis": -1, "edge_order": 1}, {"axis": -1, "edge_order": 2}], fs=FS),
    Case("reverse", lambda x, axis: np.flip(x, axis), {"axis": -1}),
    Case("roll", lambda x, shift, axis: np.roll(x, shift, axis), {"shift": 3, "axis": -1}),
    Case("pad", lambda x, before, after, mode, value: np.pad(
        x, [(0, 0)] * (x.ndim - 1) + [(before, after)], mode=mode,
        **({"constant_values": value} if mode == "constant" else {})),
         [{"before": 2, "after": 3, "mode": "constant", "value": 1.5},
          {"before": 2, "after": 1, "mode": "reflect", "value": 0.0}]),
    Case("zero_pad", lambda x, n: np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
         if n >= x.shape[-1] else x[..., :n], [{"n": 64}, {"n": 3}]),
    Case("astype", lambda x, dtype: x.astype(dtype), [{"dtype": "float64"},
                                                      {"dtype": "complex64"}]),
    Case("quantize", lambda x, bits: np.clip(np.round(x * 2 ** (bits - 1)), -2 ** (bits - 1),
                                             2 ** (bits - 1) - 1) / 2 ** (bits - 1),
         {"bits": 8}, make=lambda n, d: (rng_signal(n, d) * 0.3).astype(d)),
    Case("sum", lambda x, axis: np.sum(x, axis), {"axis": -1}, complex=True,
         rtol32=1e-3, atol32=1e-3),
    Case("mean", lambda x, axis: np.mean(x, axis), {"axis": -1}, complex=True,
         atol32=1e-3),
    Case("var", lambda x, axis, ddof: np.var(x, axis, ddof=ddof), {"axis": -1, "ddof": 0}),
    Case("std", lambda x, axis, ddof: np.std(x, axis, ddof=ddof), {"axis": -1, "ddof": 1}),
    Case("min", lambda x, axis: np.min(x, axis), {"axis": -1}),
    Case("max", lambda x, axis: np.max(x, axis), {"axis": -1}),
    Case("ptp", lambda x, axis: np.ptp(x, axis), {"axis": -1}),
    Case("median", lambda x, axis: np.median(x, axis), {"axis": -1}),
    Case("percentile", lambda x, axis, q: np.percentile(x, q, axis), {"axis": -1, "q": 90.0}),
    Case("rms_total", lambda x, axis: np.sqrt(np.mean(np.abs(x) ** 2, axis)), {"axis": -1}),
    Case("energy", lambda x, axis: np.sum(np.abs(x) ** 2, axis), {"axis": -1}),
    Case("crest_factor", lambda x, axis: np.max(np.abs(x), axis)
         / np.sqrt(np.mean(np.abs(x) ** 2, axis)), {"axis": -1}),
    Case("mean_channels", lambda x: np.mean(x, 0), batch=False,
         make=lambda n, d: np.stack([rng_signal(n, d), rng_signal(n, d, 1)])),
    Case("frame", lambda x, frame_length, hop: frames_ref(x, frame_length, hop),
         {"frame_length": 16, "hop": 5}),
    Case("overlap_add", lambda x, hop: ola_ref(x, hop),
         {"hop": 3}, make=lambda n, d: rng_signal(n * 8, d).reshape(n, 8), batch=False),
    Case("downsample", lambda x, q, phase, axis: x[..., phase::q], {"q": 3, "phase": 1,
                                                                    "axis": -1}),
    Case("upsample", lambda x, factor: np.stack([x] + [np.zeros_like(x)] * (factor - 1),
                                                -1).reshape(x.shape[:-1] + (-1,)),
         {"factor": 3}),
    Case("frequency_shift", lambda x, shift, fs: x * np.exp(2j * np.pi * shift
                                                            * np.arange(x.shape[-1]) / fs),
         {"shift": 120.0}, fs=FS, complex=True),
    Case("fm_demod", lambda x, fs: np.angle(x[..., 1:] * np.conj(x[..., :-1])) * fs / (2 * np.pi),
         fs=FS, make=lambda n, d: np.exp(1j * np.cumsum(rng_signal(n, np.float64) * 0.3)).astype(
             np.complex64 if d == np.float32 else np.complex128)),
    Case("iq_to_complex", lambda x: x[..., 0] + 1j * x[..., 1],
         make=lambda n, d: rng_signal(2 * n, d).reshape(n, 2), batch=False),
    Case("complex_to_iq", lambda x: np.stack([x.real, x.imag if np.iscomplexobj(x)
                                              else np.zeros_like(x)], -1), complex=True),
    Case("apply_window", lambda x, window, sym: x * ss.get_window(window, x.shape[-1],
                                                                  fftbins=not sym),
         [{"window": "hann", "sym": True}, {"window": ("kaiser", 5.0), "sym": False}]),
    Case("polyval", lambda x, coefficients: np.polyval(coefficients, x),
         {"coefficients": [0.5, -1.0, 2.0]}),
    # ---------------------------------------------------------------- fft
    *[Case(n, sf_(n), [{"n": None, "axis": -1, "norm": "backward"},
                       {"n": 64, "axis": -1, "norm": "ortho"}],
           complex=n not in ("rfft", "ihfft"), rtol32=2e-3, atol32=5e-4)
      for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")],
    *[Case(n, sf_(n), [{"s": None, "axes": (-2, -1), "norm": "backward"},
                       {"s": (8, 6), "axes": (-2, -1), "norm": "forward"}], make=image,
           complex=not n.startswith("r"), batch=False, atol32=5e-4)
      for n in ("fft2", "ifft2", "rfft2", "irfft2")],
    *[Case(n, sf_(n), [{"s": None, "axes": None, "norm": "backward"}], make=image,
           complex=not n.startswith("r"), batch=False, atol32=5e-4)
      for n in ("fftn", "ifftn", "rfftn", "irfftn")],
    Case("fftshift", lambda x, axes: sf.fftshift(x, axes), [{"axes": None}, {"axes": -1}],
         complex=True, batch=False),
    Case("ifftshift", lambda x, axes: sf.ifftshift(x, axes), [{"axes": None}, {"axes": -1}],
         complex=True, batch=False),
    Case("fftfreq", lambda n, d: sf.fftfreq(n, d), [{"n": 1, "d": 1.0}, {"n": 97, "d": 0.5},
                                                    {"n": 250, "d": 1e-3}]),
    Case("rfftfreq", lambda n, d: sf.rfftfreq(n, d), [{"n": 1, "d": 1.0}, {"n": 97, "d": 0.5},
                                                      {"n": 250, "d": 1e-3}]),
    Case("next_fast_len", lambda target, real: sf.next_fast_len(target, real),
         [{"target": t, "real": r} for t in (1, 97, 1000, 1031) for r in (False, True)]),
    Case("prev_fast_len", lambda target, real: sf.prev_fast_len(target, real),
         [{"target": t, "real": r} for t in (1, 97, 1000, 1031) for r in (False, True)]),
    *[Case(n, sf_(n), [{"type": t, "n": None, "axis": -1, "norm": nm, "orthogonalize": None}
                       for t in (1, 2, 3, 4) for nm in (None, "ortho")], atol32=5e-4)
      for n in ("dct", "idct", "dst", "idst")],
    *[Case(n, sf_(n), [{"type": t, "s": None, "axes": None, "norm": "ortho",
                        "orthogonalize": None} for t in (2, 3)], make=image, batch=False,
           atol32=5e-4)
      for n in ("dctn", "idctn", "dstn", "idstn")],
    Case("czt", lambda x, m, w, a, axis: ss.czt(x, m, w, a, axis=axis),
         [{"m": None, "w": None, "a": 1 + 0j, "axis": -1},
          {"m": 20, "w": np.exp(-0.05j), "a": np.exp(0.3j), "axis": -1}],
         complex=True, lengths=(1, 5, 31, 97, 250), rtol32=5e-3, atol32=2e-3, rtol64=1e-6,
         atol64=1e-8),
    Case("zoom_fft", lambda x, fn, m, endpoint, axis, fs: ss.zoom_fft(
        x, fn if np.ndim(fn) == 0 else list(fn), m=m, fs=fs, endpoint=endpoint, axis=axis),
         [{"fn": [50.0, 150.0], "m": 32, "endpoint": False, "axis": -1},
          {"fn": 200.0, "m": None, "endpoint": True, "axis": -1}],
         fs=FS, complex=True, lengths=(1, 5, 31, 97, 250), rtol32=5e-3, atol32=2e-3,
         rtol64=1e-6, atol64=1e-8),
    Case("czt_points", lambda m, w, a: ss.czt_points(m, w, a),
         [{"m": 8, "w": None, "a": 1 + 0j}, {"m": 5, "w": np.exp(-0.1j), "a": 0.9 + 0j}]),
    Case("fht", lambda x, dln, mu, offset, bias: sf.fht(x, dln, mu, offset=offset, bias=bias),
         {"dln": 0.05, "mu": 0.5, "offset": 0.0, "bias": 0.0}, lengths=(1, 5, 31, 97, 250),
         atol32=1e-3),
    Case("ifht", lambda x, dln, mu, offset, bias: sf.ifht(x, dln, mu, offset=offset, bias=bias),
         {"dln": 0.05, "mu": 0.5, "offset": 0.0, "bias": 0.0}, lengths=(1, 5, 31, 97, 250),
         atol32=1e-3),
    # ---------------------------------------------------------------- windows
    *wins(),
    Case("get_window", lambda window, Nx, fftbins, dtype: ss.get_window(window, Nx,
                                                                        fftbins=fftbins),
         [{"window": w, "Nx": n, "fftbins": fb} for w in ("hann", ("kaiser", 8.0),
                                                         ("tukey", 0.25))
          for n in (1, 7, 16) for fb in (True, False)], rtol32=1e-6, atol32=1e-6),
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
    # ---------------------------------------------------------------- filter design
    *iirs(),
    Case("bessel", lambda N, Wn, btype="lowpass", analog=False, output="sos", norm="phase",
         fs=None: ss.bessel(N, Wn, btype, analog, output, norm, fs=None if analog else fs),
         [{"N": 4, "Wn": 0.3, "norm": "phase"}, {"N": 3, "Wn": [50.0, 120.0],
                                                  "btype": "bandpass", "norm": "mag"}]),
    Case("iirfilter", lambda N, Wn, rp=None, rs=None, btype="lowpass", analog=False,
         ftype="butter", output="sos", fs=None: ss.iirfilter(
             N, Wn, rp, rs, btype, analog, ftype, output, fs),
         [{"N": 4, "Wn": 0.3, "ftype": "butter"},
          {"N": 4, "Wn": [0.2, 0.5], "rp": 1.0, "rs": 50.0, "ftype": "ellip",
           "btype": "bandstop"}]),
    Case("iirdesign", lambda wp, ws, gpass, gstop, analog=False, ftype="ellip", output="sos",
         fs=None: ss.iirdesign(wp, ws, gpass, gstop, analog, ftype, output, fs),
         [{"wp": 0.2, "ws": 0.3, "gpass": 1.0, "gstop": 40.0},
          {"wp": [0.2, 0.5], "ws": [0.1, 0.6], "gpass": 1.0, "gstop": 40.0,
           "ftype": "cheby2"}]),
    *[Case(n, (lambda _n: lambda wp, ws, gpass, gstop, analog=False, fs=None: getattr(ss, _n)(
        wp, ws, gpass, gstop, analog, fs))(n),
           [{"wp": 0.2, "ws": 0.3, "gpass": 1.0, "gstop": 40.0},
            {"wp": [0.2, 0.5], "ws": [0.1, 0.6], "gpass": 3.0, "gstop": 30.0}])
      for n in ("buttord", "cheb1ord", "cheb2ord", "ellipord")],
    *[Case(n, (lambda _n: lambda w0, Q, output="sos", fs=None: (lambda ba: ss.tf2sos(*ba)
          if output == "sos" else ba)(getattr(ss, _n)(w0, Q, fs=fs if fs else 2.0)))(n),
           [{"w0": 0.2, "Q": 30.0}, {"w0": 0.4, "Q": 5.0, "output": "ba"}])
      for n in ("iirnotch", "iirpeak")],
    Case("iircomb", lambda w0, Q, ftype="notch", pass_zero=False, output="sos", fs=None: (
        lambda ba: ss.tf2sos(*ba) if output == "sos" else ba)(
            ss.iircomb(w0, Q, ftype, fs if fs else 2.0, pass_zero=pass_zero)),
         [{"w0": 100.0, "Q": 30.0, "output": "ba"}, {"w0": 250.0, "Q": 10.0, "ftype": "peak",
                                                     "output": "ba"}], fs=FS),
    Case("gammatone", lambda freq, ftype="iir", order=None, numtaps=None, output="sos",
         fs=None: (lambda ba: ba if ftype == "fir" else (ss.tf2sos(*ba) if output == "sos"
                                                         else ba))(
        ss.gammatone(freq, ftype, order=order, numtaps=numtaps, fs=fs)),
         [{"freq": 440.0, "ftype": "iir", "output": "ba"}, {"freq": 200.0, "ftype": "fir"}],
         fs=16000.0),
    Case("firwin", lambda numtaps, cutoff, width=None, window="hamming", pass_zero=True,
         scale=True, fs=None: ss.firwin(numtaps, cutoff, width=width, window=window,
                                        pass_zero=pass_zero, scale=scale, fs=fs),
         [{"numtaps": 31, "cutoff": 0.3}, {"numtaps": 30, "cutoff": [0.2, 0.4],
                                           "pass_zero": False},
          {"numtaps": 31, "cutoff": 0.3, "window": ("kaiser", 6.0)},
          {"numtaps": 30, "cutoff": 0.3, "pass_zero": False}]),  # even highpass: both raise
    Case("firwin2", lambda numtaps, freq, gain, nfreqs=None, window="hamming",
         antisymmetric=False, fs=None: ss.firwin2(numtaps, freq, gain, nfreqs=nfreqs,
                                                  window=window, antisymmetric=antisymmetric,
                                                  fs=fs),
         [{"numtaps": 31, "freq": [0, 0.5, 1], "gain": [1, 1, 0]}]),
    Case("remez", lambda numtaps, bands, desired, weight=None, type="bandpass", maxiter=25,
         grid_density=16, fs=None: ss.remez(numtaps, bands, desired, weight=weight, type=type,
                                            maxiter=maxiter, grid_density=grid_density,
                                            fs=fs or 1.0),
         [{"numtaps": 31, "bands": [0, 0.1, 0.2, 0.5], "desired": [1, 0]}], rtol64=1e-6,
         atol64=1e-9),
    Case("firls", lambda numtaps, bands, desired, weight=None, fs=None: ss.firls(
        numtaps, bands, desired, weight=weight, fs=fs),
         [{"numtaps": 31, "bands": [0, 0.2, 0.3, 1], "desired": [1, 1, 0, 0]}]),
    Case("kaiserord", lambda ripple, width: ss.kaiserord(ripple, width),
         [{"ripple": 60.0, "width": 0.05}, {"ripple": 20.0, "width": 0.2}]),
    Case("kaiser_beta", lambda a: ss.kaiser_beta(a), [{"a": 10.0}, {"a": 30.0}, {"a": 60.0}]),
    Case("kaiser_atten", lambda numtaps, width: ss.kaiser_atten(numtaps, width),
         [{"numtaps": 31, "width": 0.1}]),
    Case("minimum_phase", lambda x, method, n_fft, half: ss.minimum_phase(
        x, method=method, n_fft=n_fft, half=half),
         [{"method": "homomorphic", "n_fft": None, "half": True},
          {"method": "hilbert", "n_fft": None, "half": True}],
         make=lambda n, d: ss.remez(max(n, 3) | 1, [0, 0.1, 0.2, 0.5], [1, 0]),
         lengths=(5, 31), batch=False, float32=False, rtol64=1e-6, atol64=1e-9),
    Case("tf2sos", lambda x, a, pairing: ss.tf2sos(x, a, pairing=pairing),
         [{"a": A, "pairing": None}], make=lambda n, d: B, lengths=(None,), batch=False,
         float32=False),
    Case("sos2tf", lambda x: ss.sos2tf(x), make=lambda n, d: SOS_BP, lengths=(None,),
         batch=False, float32=False),
    Case("zpk2sos", lambda x, p, k, pairing: ss.zpk2sos(x, p, k, pairing=pairing),
         [{"p": ss.sos2zpk(SOS)[1], "k": float(ss.sos2zpk(SOS)[2]), "pairing": None}],
         make=lambda n, d: ss.sos2zpk(SOS)[0], lengths=(None,), batch=False, float32=False),
    Case("sos2zpk", lambda x: ss.sos2zpk(x), make=lambda n, d: SOS, lengths=(None,),
         batch=False, float32=False),
    Case("tf2zpk", lambda x, a: ss.tf2zpk(x, a), {"a": A}, make=lambda n, d: B, lengths=(None,),
         batch=False, float32=False, rtol64=1e-6),
    Case("zpk2tf", lambda x, p, k: ss.zpk2tf(x, p, k), {"p": [0.5, 0.2 + 0.1j, 0.2 - 0.1j],
                                                          "k": 2.0},
         make=lambda n, d: np.array([-1.0, 1.0]), lengths=(None,), batch=False, float32=False),
    Case("normalize", lambda x, a: ss.normalize(x, a), {"a": 2 * A}, make=lambda n, d: B,
         lengths=(None,), batch=False, float32=False),
    Case("bilinear", lambda x, a, fs: ss.bilinear(x, a, fs), {"a": [1.0, 1.4, 1.0]},
         make=lambda n, d: np.array([1.0]), lengths=(None,), batch=False, float32=False,
         fs=10.0),
    Case("bilinear_zpk", lambda x, p, k, fs: ss.bilinear_zpk(x, p, k, fs),
         {"p": [-1 + 1j, -1 - 1j], "k": 2.0}, make=lambda n, d: np.array([]), lengths=(None,),
         batch=False, float32=False, fs=10.0),
    *[Case(f"lp2{k}", (lambda _k: lambda x, a, wo, bw=None: getattr(ss, f"lp2{_k}")(
        x, a, wo, *([bw] if bw is not None else [])))(k),
           {"a": [1.0, 1.4, 1.0], "wo": 2.0, **({"bw": 0.5} if k in ("bp", "bs") else {})},
           make=lambda n, d: np.array([1.0]), lengths=(None,), batch=False, float32=False)
      for k in ("lp", "hp", "bp", "bs")],
    *[Case(f"lp2{k}_zpk", (lambda _k: lambda x, p, k, wo, bw=None: getattr(ss, f"lp2{_k}_zpk")(
        x, p, k, wo, *([bw] if bw is not None else [])))(k),
           {"p": [-1 + 1j, -1 - 1j], "k": 2.0, "wo": 2.0,
            **({"bw": 0.5} if k in ("bp", "bs") else {})},
           make=lambda n, d: np.array([]), lengths=(None,), batch=False, float32=False)
      for k in ("lp", "hp", "bp", "bs")],
    Case("buttap", lambda N: ss.buttap(N), [{"N": 1}, {"N": 5}]),
    Case("cheb1ap", lambda N, rp: ss.cheb1ap(N, rp), [{"N": 4, "rp": 1.0}]),
    Case("cheb2ap", lambda N, rs: ss.cheb2ap(N, rs), [{"N": 4, "rs": 40.0}]),
    Case("ellipap", lambda N, rp, rs: ss.ellipap(N, rp, rs), [{"N": 4, "rp": 1.0, "rs": 40.0}]),
    Case("besselap", lambda N, norm: ss.besselap(N, norm), [{"N": 4, "norm": "delay"}]),
    Case("savgol_coeffs", lambda **p: ss.savgol_coeffs(**p),
         [{"window_length": 7, "polyorder": 2, "deriv": 0, "delta": 1.0, "pos": None,
           "use": "conv"},
          {"window_length": 9, "polyorder": 3, "deriv": 1, "delta": 0.5, "pos": 2, "use": "dot"},
          {"window_length": 3, "polyorder": 4, "deriv": 0, "delta": 1.0, "pos": None,
           "use": "conv"}]),  # polyorder >= window_length: both raise
    # ---------------------------------------------------------------- filtering
    Case("sosfilt", lambda x, sos, axis, zi: ss.sosfilt(sos, x, axis=axis, zi=zi),
         [{"sos": SOS, "axis": -1, "zi": None}], complex=True, atol32=1e-3),
    Case("sosfiltfilt", lambda x, sos, axis, padtype, padlen: ss.sosfiltfilt(
        sos, x, axis=axis, padtype=padtype, padlen=padlen),
         [{"sos": SOS, "axis": -1, "padtype": "odd", "padlen": None},
          {"sos": SOS, "axis": -1, "padtype": "even", "padlen": 3}], atol32=1e-3),
    Case("lfilter", lambda x, b, a, axis, zi: ss.lfilter(b, a, x, axis=axis, zi=zi),
         [{"b": B, "a": A, "axis": -1, "zi": None}, {"b": FIR, "a": 1.0, "axis": -1,
                                                     "zi": None}],
         complex=True, atol32=1e-3),
    Case("filtfilt", lambda x, b, a, axis, padtype, padlen, method: ss.filtfilt(
        b, a, x, axis=axis, padtype=padtype, padlen=padlen, method=method),
         [{"b": B, "a": A, "axis": -1, "padtype": "odd", "padlen": None, "method": "pad"},
          {"b": B, "a": A, "axis": -1, "padtype": "odd", "padlen": None, "method": "gust"}],
         atol32=1e-3, batch=False),
    Case("lfilter_zi", lambda x, a: ss.lfilter_zi(x, a), {"a": A}, make=lambda n, d: B,
         lengths=(None,), batch=False, float32=False),
    Case("sosfilt_zi", lambda x: ss.sosfilt_zi(x), make=lambda n, d: SOS, lengths=(None,),
         batch=False, float32=False),
    Case("lfiltic", lambda x, a, y, past_x: ss.lfiltic(x, a, y, past_x),
         {"a": A, "y": [0.5, -0.2, 0.1], "past_x": [1.0, 0.3]}, make=lambda n, d: B,
         lengths=(None,), batch=False, float32=False),
    Case("convolve", lambda x, kernel, mode, method: ss.convolve(x, kernel, mode, method),
         [{"kernel": KERN, "mode": m, "method": "auto"} for m in ("full", "same", "valid")],
         complex=True, batch=False),
    Case("fftconvolve", lambda x, kernel, mode, axes: ss.fftconvolve(x, kernel, mode, axes),
         [{"kernel": KERN, "mode": m, "axes": None} for m in ("full", "same", "valid")],
         complex=True, batch=False, atol32=5e-4),
    Case("oaconvolve", lambda x, kernel, mode, axes: ss.oaconvolve(x, kernel, mode, axes),
         [{"kernel": KERN, "mode": m, "axes": None} for m in ("full", "same", "valid")],
         complex=True, batch=False, atol32=5e-4),
    Case("correlate", lambda x, kernel, mode, method: ss.correlate(x, kernel, mode, method),
         [{"kernel": KERN, "mode": m, "method": "direct"} for m in ("full", "same", "valid")],
         complex=True, batch=False),
    Case("correlation_lags", lambda in1_len, in2_len, mode: ss.correlation_lags(
        in1_len, in2_len, mode), [{"in1_len": a, "in2_len": b, "mode": m}
                                  for a, b in ((5, 3), (3, 5), (97, 4))
                                  for m in ("full", "same", "valid")]),
    Case("convolve2d", lambda x, kernel, mode, boundary, fillvalue: ss.convolve2d(
        x, kernel, mode, boundary, fillvalue),
         [{"kernel": np.ones((2, 3)), "mode": "full", "boundary": "fill", "fillvalue": 0.0},
          {"kernel": np.ones((2, 3)), "mode": "same", "boundary": "wrap", "fillvalue": 0.0}],
         make=image, batch=False),
    Case("correlate2d", lambda x, kernel, mode, boundary, fillvalue: ss.correlate2d(
        x, kernel, mode, boundary, fillvalue),
         [{"kernel": np.arange(6.0).reshape(2, 3), "mode": "valid", "boundary": "fill",
           "fillvalue": 0.0}], make=image, batch=False, lengths=(2, 5, 31)),
    Case("upfirdn", lambda x, h, up, down, axis, mode, cval: ss.upfirdn(
        h, x, up, down, axis, mode, cval),
         [{"h": FIR, "up": 3, "down": 2, "axis": -1, "mode": "constant", "cval": 0.0}],
         complex=True),
    Case("resample", lambda x, num, axis, window: ss.resample(x, num, axis=axis, window=window),
         [{"num": 40, "axis": -1, "window": None}, {"num": 17, "axis": -1, "window": "hann"}],
         complex=True, atol32=5e-4),
    Case("resample_poly", lambda x, up, down, axis, window, padtype: ss.resample_poly(
        x, up, down, axis=axis, window=window, padtype=padtype),
         [{"up": 3, "down": 2, "axis": -1, "window": ("kaiser", 5.0), "padtype": "constant"},
          {"up": 1, "down": 4, "axis": -1, "window": ("kaiser", 5.0), "padtype": "line"}]),
    Case("decimate", lambda x, q, n, ftype, axis, zero_phase: ss.decimate(
        x, q, n, ftype, axis, zero_phase),
         [{"q": 2, "n": None, "ftype": "iir", "axis": -1, "zero_phase": True},
          {"q": 3, "n": None, "ftype": "fir", "axis": -1, "zero_phase": False}], atol32=1e-3),
    Case("savgol_filter", lambda x, **p: ss.savgol_filter(x, **p),
         [{"window_length": 7, "polyorder": 2, "deriv": 0, "delta": 1.0, "axis": -1,
           "mode": "interp", "cval": 0.0},
          {"window_length": 5, "polyorder": 3, "deriv": 1, "delta": 0.5, "axis": -1,
           "mode": "mirror", "cval": 0.0}], atol32=1e-3),
    Case("medfilt", lambda x, kernel_size: ss.medfilt(x, kernel_size),
         [{"kernel_size": 3}, {"kernel_size": 7}], batch=False),
    Case("medfilt2d", lambda x, kernel_size: ss.medfilt2d(x, kernel_size),
         [{"kernel_size": 3}], make=image, batch=False, lengths=(1, 5, 31)),
    Case("order_filter", lambda x, size, rank: ss.order_filter(x, np.ones(size), rank),
         [{"size": 3, "rank": 0}, {"size": 5, "rank": 4}], batch=False),
    Case("wiener", lambda x, mysize, noise: ss.wiener(x, mysize, noise),
         [{"mysize": 5, "noise": None}, {"mysize": 3, "noise": 0.5}], batch=False,
         lengths=(5, 31, 97, 250), atol32=1e-3),
    Case("detrend", lambda x, axis, type: ss.detrend(x, axis=axis, type=type),
         [{"axis": -1, "type": "linear"}, {"axis": -1, "type": "constant"}], complex=True,
         atol32=1e-3),
    Case("hilbert", lambda x, N, axis: ss.hilbert(x, N, axis), [{"N": None, "axis": -1},
                                                                {"N": 128, "axis": -1}],
         atol32=5e-4),
    Case("hilbert2", lambda x: ss.hilbert2(x), make=image, batch=False, lengths=(1, 5, 31),
         atol32=5e-4),
    Case("envelope", lambda x, bp_in, n_out, squared, residual, axis: ss.envelope(
        x, tuple(bp_in), n_out=n_out, squared=squared, residual=residual, axis=axis),
         [{"bp_in": (1, None), "n_out": None, "squared": False, "residual": "lowpass",
           "axis": -1},
          {"bp_in": (2, 20), "n_out": 50, "squared": True, "residual": "all", "axis": -1}],
         lengths=(31, 97, 250), atol32=1e-3, batch=False),
    Case("deconvolve", lambda x, divisor: ss.deconvolve(x, divisor), {"divisor": [1.0, 0.5]},
         batch=False, lengths=(1, 5, 31), atol32=1e-3),
    Case("moving_average", lambda x, n, axis: np.apply_along_axis(
        lambda v: np.convolve(v, np.ones(n) / n, "valid"), -1, x) if x.shape[-1] >= n else
         (_ for _ in ()).throw(ValueError("short")),
         {"n": 4, "axis": -1}, atol32=5e-4),
    # ---------------------------------------------------------------- analysis
    Case("freqz", lambda x, a, worN, whole, include_nyquist, fs: ss.freqz(
        x, a, worN, whole, fs=fs, include_nyquist=include_nyquist),
         [{"a": A, "worN": 64, "whole": False, "include_nyquist": False},
          {"a": 1.0, "worN": 31, "whole": True, "include_nyquist": False}],
         make=lambda n, d: B, lengths=(None,), batch=False, float32=False, fs=FS),
    Case("sosfreqz", lambda x, worN, whole, fs: ss.freqz_sos(x, worN, whole, fs=fs),
         [{"worN": 64, "whole": False}], make=lambda n, d: SOS, lengths=(None,), batch=False,
         float32=False, fs=FS),
    Case("freqz_zpk", lambda x, p, k, worN, whole, fs: ss.freqz_zpk(x, p, k, worN, whole, fs=fs),
         [{"p": ss.sos2zpk(SOS)[1], "k": float(ss.sos2zpk(SOS)[2]), "worN": 50,
           "whole": False}],
         make=lambda n, d: ss.sos2zpk(SOS)[0], lengths=(None,), batch=False, float32=False,
         fs=FS, rtol64=1e-6, atol64=1e-9),
    Case("freqs", lambda x, a, worN: ss.freqs(x, a, worN), [{"a": [1.0, 1.4, 1.0], "worN": 50}],
         make=lambda n, d: np.array([1.0]), lengths=(None,), batch=False, float32=False),
    Case("freqs_zpk", lambda x, p, k, worN: ss.freqs_zpk(x, p, k, worN),
         [{"p": [-1 + 1j, -1 - 1j], "k": 2.0, "worN": 50}],
         make=lambda n, d: np.array([]), lengths=(None,), batch=False, float32=False),
    Case("group_delay", lambda x, worN, whole, fs: (
        np.linspace(0, 2 * np.pi if whole else np.pi, worN, endpoint=False) * fs / (2 * np.pi),
        sum(ss.group_delay((s[:3], s[3:]), np.linspace(0, 2 * np.pi if whole else np.pi, worN,
                                                       endpoint=False))[1] for s in x)),
         [{"worN": 64, "whole": False}, {"worN": 33, "whole": True}],
         # zeros on the unit circle off the frequency grid: the delay is defined everywhere
         make=lambda n, d: ss.ellip(4, 1.0, 40.0, 0.3, output="sos"), lengths=(None,),
         batch=False, float32=False, fs=FS, rtol64=1e-6, atol64=1e-8),
    Case("impulse_response", lambda x, n: ss.sosfilt(x, ss.unit_impulse(n)), {"n": 50},
         make=lambda n, d: SOS, lengths=(None,), batch=False, float32=False),
    Case("step_response", lambda x, n: ss.sosfilt(x, np.ones(n)), {"n": 50},
         make=lambda n, d: SOS, lengths=(None,), batch=False, float32=False),
    Case("find_peaks", lambda x, **p: ss.find_peaks(x, **p),
         [{"height": None, "threshold": None, "distance": None, "prominence": None,
           "width": None, "wlen": None, "rel_height": 0.5, "plateau_size": None},
          {"height": 0.2, "threshold": None, "distance": 3.0, "prominence": 0.1, "width": 1.0,
           "wlen": None, "rel_height": 0.5, "plateau_size": None}], batch=False),
    Case("peak_prominences", lambda x, peaks, wlen: ss.peak_prominences(x, peaks, wlen),
         [{"peaks": [3, 10, 20], "wlen": None}], batch=False, lengths=(31, 97, 250)),
    Case("peak_widths", lambda x, peaks, rel_height, wlen: ss.peak_widths(
        x, peaks, rel_height, wlen=wlen),
         [{"peaks": ss.find_peaks(rng_signal(97, np.float64))[0], "rel_height": 0.5,
           "wlen": None}], batch=False, lengths=(97,)),
    Case("argrelmax", lambda x, order, axis, mode: ss.argrelmax(x, order=order, axis=axis,
                                                                mode=mode),
         [{"order": 1, "axis": -1, "mode": "clip"}, {"order": 3, "axis": -1, "mode": "wrap"}],
         batch=False),
    Case("argrelmin", lambda x, order, axis, mode: ss.argrelmin(x, order=order, axis=axis,
                                                                mode=mode),
         [{"order": 1, "axis": -1, "mode": "clip"}], batch=False),
    Case("residue", lambda x, a, tol: ss.residue(x, a, tol), {"a": [1.0, 3.0, 2.0], "tol": 1e-3},
         make=lambda n, d: np.array([1.0, 2.0]), lengths=(None,), batch=False, float32=False),
    Case("residuez", lambda x, a, tol: ss.residuez(x, a, tol), {"a": [1.0, -0.5, 0.06],
                                                                 "tol": 1e-3},
         make=lambda n, d: np.array([1.0, 2.0]), lengths=(None,), batch=False, float32=False),
    Case("is_stable", lambda x: bool(np.all(np.abs(np.roots(ss.sos2tf(x)[1])) < 1)),
         make=lambda n, d: SOS if n else np.array([[1, 0, 0, 1, -2.5, 1.2]]), lengths=(0, 5),
         batch=False, float32=False),
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
    # ---------------------------------------------------------------- generators
    Case("chirp", lambda x, **p: ss.chirp(x, **p),
         [{"f0": 10.0, "t1": 0.2, "f1": 200.0, "method": m, "phi": 30.0, "vertex_zero": True,
           "complex": False} for m in ("linear", "quadratic", "logarithmic", "hyperbolic")]
         + [{"f0": 10.0, "t1": 0.2, "f1": 200.0, "method": "linear", "phi": 0.0,
             "vertex_zero": True, "complex": True}],
         make=time_axis, float32=False),
    Case("sweep_poly", lambda x, poly, phi: ss.sweep_poly(x, poly, phi),
         {"poly": [100.0, 0.0, 5.0], "phi": 10.0}, make=time_axis, float32=False),
    Case("gausspulse", lambda x, **p: ss.gausspulse(x, **p),
         {"fc": 50.0, "bw": 0.5, "bwr": -6.0, "tpr": -60.0},
         make=lambda n, d: (np.arange(n) / FS - n / FS / 2).astype(d), float32=False),
    Case("square", lambda x, duty: ss.square(x, duty), [{"duty": 0.5}, {"duty": 0.2}],
         nan_vanishes="scipy.signal.square maps a NaN phase to 0",
         make=lambda n, d: (phase_axis(n, np.float64) + 0.1).astype(d)),
    Case("sawtooth", lambda x, width: ss.sawtooth(x, width), [{"width": 1.0}, {"width": 0.5}],
         make=lambda n, d: (phase_axis(n, np.float64) + 0.1).astype(d)),
    Case("unit_impulse", lambda n, idx, mid, dtype: ss.unit_impulse(
        n, "mid" if mid else idx, dtype=dtype),
         [{"n": n, "idx": i, "mid": m} for n in (1, 7, 16) for i, m in
          ((None, False), (3, False), (None, True))] + [{"n": 3, "idx": 5, "mid": False}]),
    Case("white_noise", lambda n, std, seed, dtype: (np.random.default_rng(seed).standard_normal(
        n) * std).astype(dtype), [{"n": n, "std": 2.0, "seed": 4} for n in (0, 1, 97)]),
    Case("tone", lambda n, frequency, amplitude, phase, complex, dtype, fs: (
        amplitude * (np.exp(1j * (2 * np.pi * frequency * np.arange(n) / fs + phase)) if complex
                     else np.cos(2 * np.pi * frequency * np.arange(n) / fs + phase))),
         [{"n": n, "frequency": 50.0, "amplitude": 0.5, "phase": 0.3, "complex": c}
          for n in (0, 1, 97) for c in (False, True)], fs=FS),
    Case("time_axis", lambda n, start, dtype, fs: start + np.arange(n) / fs,
         [{"n": n, "start": 1.5} for n in (0, 1, 97)], fs=FS),
    Case("max_len_seq", lambda nbits, length: ss.max_len_seq(nbits, length=length),
         [{"nbits": 3, "length": None}, {"nbits": 8, "length": 100}]),
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


def _mel_edges(n_mels, fmin, fmax, htk):
    def h2m(f):
        return 2595 * math.log10(1 + f / 700) if htk else (
            f / (200 / 3) if f < 1000 else 15 + math.log(f / 1000) / (math.log(6.4) / 27))

    def m2h(m):
        return 700 * (10 ** (m / 2595) - 1) if htk else (
            m * 200 / 3 if m < 15 else 1000 * math.exp((m - 15) * math.log(6.4) / 27))
    lo, hi = h2m(fmin), h2m(fmax)
    return [(None, m2h(lo + (hi - lo) * i / (n_mels - 1))) for i in range(n_mels)]


# -- statistical generators (no deterministic reference) --------------------------------

STATISTICAL = {"pink_noise": -1.0, "brown_noise": -2.0}

BY_NAME = {c.op: c for c in CASES}
_dupes = {c.op for c in CASES if sum(d.op == c.op for d in CASES) > 1}
_registered = {o.name for o in registry.list_operators() if "." not in o.name}
_missing = sorted(_registered - set(BY_NAME) - set(STATISTICAL))
_unknown = sorted((set(BY_NAME) | set(STATISTICAL)) - _registered)
if _missing or _unknown or _dupes:
    # fail collection: every operator needs exactly one parity case
    raise RuntimeError(f"parity table out of date: no case for {_missing}; cases for "
                       f"unregistered operators {_unknown}; duplicate cases {sorted(_dupes)}")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")

BACKENDS = [pytest.param("numpy", id="numpy"),
            pytest.param("cupy", id="cupy", marks=[pytest.mark.gpu, pytest.mark.skipif(
                "cupy" not in backend.available_backends(),
                reason=f"no GPU: {backend.cupy_unavailable_reason()}")])]


def _ids():
    out = []
    for c in CASES:
        op = registry.get(c.op)
        has_dtype = any(p.name == "dtype" for p in op.params)
        if op.takes_input:
            out.append(pytest.param(c, np.float64, id=f"{c.op}-float64"))
            if c.float32:
                out.append(pytest.param(c, np.float32, id=f"{c.op}-float32"))
        else:
            out.append(pytest.param(c, np.float64, id=f"{c.op}-float64"))
            if has_dtype:
                out.append(pytest.param(c, np.float32, id=f"{c.op}-float32"))
    return out


def _compare(ours, ref, case: Case, dtype, where: str) -> None:
    ours = backend.to_host(ours)
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and set(ours) == set(ref), where
        for k in ref:
            _compare(ours[k], ref[k], case, dtype, f"{where}[{k}]")
        return
    if isinstance(ref, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(ref), \
            f"{where}: {type(ours).__name__} of {len(ours) if hasattr(ours, '__len__') else '?'}" \
            f" vs {len(ref)}"
        for i, (a, b) in enumerate(zip(ours, ref)):
            _compare(a, b, case, dtype, f"{where}[{i}]")
        return
    if isinstance(ref, (bool, np.bool_)):
        assert bool(ours) == bool(ref), where
        return
    ref_a, ours_a = np.asarray(ref), np.asarray(ours)
    assert ours_a.shape == ref_a.shape, f"{where}: shape {ours_a.shape} != {ref_a.shape}"
    if ref_a.dtype.kind in "iub":
        np.testing.assert_array_equal(ours_a, ref_a, err_msg=where)
        return
    single = np.dtype(dtype) == np.float32
    rtol = case.rtol32 if single else case.rtol64
    atol_rel = case.atol32 if single else case.atol64
    scale = float(np.nanmax(np.abs(ref_a))) if ref_a.size and np.isfinite(
        np.nanmax(np.abs(ref_a))) else 1.0
    np.testing.assert_allclose(ours_a.astype(ref_a.dtype if ref_a.dtype.kind in "fc"
                                              else float), ref_a, rtol=rtol,
                               atol=atol_rel * max(scale, 1e-30) + 1e-300, err_msg=where,
                               equal_nan=True)


def _inputs(case: Case, n, dtype):
    yield "real", case.make(n, dtype)
    if case.complex:
        ct = np.complex64 if dtype == np.float32 else np.complex128
        yield "complex", rng_signal(n, ct) if case.make is rng_signal else \
            case.make(n, dtype).astype(ct)


def _cast_input(x, dtype):
    if isinstance(x, (list, tuple)):
        return x
    return x


def _check_one(case: Case, op, x, params, dtype, bk, where):
    fs = case.fs
    ref_kwargs = dict(params)
    if fs is not None:
        ref_kwargs["fs"] = fs
    try:
        expected = case.ref(x, **ref_kwargs) if op.takes_input else case.ref(**ref_kwargs)
        ref_error = None
    except Exception as exc:  # noqa: BLE001 - the reference refused this input
        expected, ref_error = None, exc
    arg = backend.to_device(x, bk) if op.takes_input else None
    if ref_error is not None:
        with pytest.raises(SpecscopeError) as info:
            op(arg, backend=bk, fs=fs, **params) if op.takes_input else op(
                backend=bk, fs=fs, **params)
        assert "\n" not in str(info.value), f"{where}: message is not one line"
        return
    try:
        ours = op(arg, backend=bk, fs=fs, **params) if op.takes_input else op(
            backend=bk, fs=fs, **params)
    except InputError:
        n = None if not hasattr(x, "shape") or not x.shape else x.shape[-1]
        if case.may_reject(n, params):
            return
        raise
    _compare(ours, expected, case, dtype, where)


@pytest.mark.parametrize("bk", BACKENDS)
@pytest.mark.parametrize("case,dtype", _ids())
def test_parity(case: Case, dtype, bk: str) -> None:
    op = registry.get(case.op)
    for params in case.params:
        if not op.takes_input:
            p = dict(params)
            if any(q.name == "dtype" for q in op.params):
                p["dtype"] = np.dtype(dtype).name
            _check_one(case, op, None, p, dtype, bk, f"{case.op}{p}")
            continue
        for n in case.lengths:
            for kind, x in _inputs(case, n, dtype):
                where = f"{case.op} n={n} {kind} {params}"
                _check_one(case, op, x, params, dtype, bk, where)
                # batch: three channels along the first axis == reference per channel
                if case.batch and n and n > 1 and isinstance(x, np.ndarray) and x.ndim == 1:
                    try:
                        rows = [case.ref(r, **params, **({"fs": case.fs} if case.fs else {}))
                                for r in (x, 2 * x, x[::-1].copy())]
                    except Exception:  # noqa: BLE001, S112 - covered by the 1-D check above
                        continue
                    xb = np.stack([x, 2 * x, x[::-1]])
                    ours = op(backend.to_device(xb, bk), backend=bk, fs=case.fs, **params)
                    expected = _stack_rows(rows)
                    _compare(ours, expected, case, dtype, where + " batch")


def _stack_rows(rows):
    first = rows[0]
    if isinstance(first, tuple):
        # (axis values, data): axes shared, data stacked
        return tuple(_stack_rows([r[i] for r in rows]) if np.ndim(first[i]) and
                     not all(np.array_equal(r[i], first[i]) for r in rows) or i == len(first) - 1
                     else first[i] for i in range(len(first)))
    if isinstance(first, list):
        return [np.stack([r[i] for r in rows]) for i in range(len(first))]
    return np.stack(rows)


@pytest.mark.parametrize("bk", BACKENDS)
@pytest.mark.parametrize("name,slope", sorted(STATISTICAL.items()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_coloured_noise_slope(name: str, slope: float, dtype: str, bk: str) -> None:
    """Coloured noise: a least-squares fit of log PSD vs log f has the stated slope (±0.15),
    the samples have unit variance, the seed makes it repeatable, and n=0/1 work."""
    x = backend.to_host(registry.call(name, backend=bk, n=1 << 16, seed=1, dtype=dtype))
    assert x.dtype == np.dtype(dtype)
    assert abs(float(np.std(x)) - 1.0) < 1e-3
    f, p = ss.welch(x.astype(np.float64), nperseg=4096)
    band = (f > 0.002) & (f < 0.2)
    fit = np.polyfit(np.log(f[band]), np.log(p[band]), 1)[0]
    assert abs(fit - slope) < 0.15, f"slope {fit:.3f}, expected {slope}"
    again = backend.to_host(registry.call(name, backend=bk, n=1 << 16, seed=1, dtype=dtype))
    np.testing.assert_array_equal(x, again)
    assert backend.to_host(registry.call(name, n=0)).shape == (0,)


@pytest.mark.parametrize("name", sorted(o.name for o in registry.list_operators()
                                        if o.takes_input and "." not in o.name))
def test_nan_policy(name: str) -> None:
    """NaN input is passed through (a NaN in the output) or rejected, as documented."""
    op = registry.get(name)
    case = BY_NAME[name]
    n = next((v for v in (97, 250, 31) if v in case.lengths), case.lengths[-1])
    x = case.make(n, np.float64)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.size < 3:
        pytest.skip("input is not a float signal (coefficients, lists)")
    if case.nan_vanishes:
        pytest.skip(f"NaN may vanish: {case.nan_vanishes}")
    x = x.copy()
    x.flat[x.size // 2::7] = np.nan  # several, so decimating operators keep one
    params = case.params[0]
    if op.nan_policy == "reject":
        with pytest.raises(InputError, match="NaN"):
            op(x, fs=case.fs, **params)
        return
    try:
        out = op(x, fs=case.fs, **params)
    except SpecscopeError as exc:
        pytest.fail(f"{name} documents NaN as propagated but raised: {exc}")
    leaves = []

    def walk(v):
        if isinstance(v, (tuple, list)):
            for u in v:
                walk(u)
        elif isinstance(v, dict):
            for u in v.values():
                walk(u)
        else:
            leaves.append(np.asarray(v))
    walk(out)
    assert any(a.dtype.kind in "fc" and np.isnan(a).any() for a in leaves), \
        f"{name}: NaN input gave no NaN in the output; declare nan_policy='reject'"
