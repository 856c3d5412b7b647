"""Parity of the basic, fft, window and generator operators with their references.

The machinery and the rules of the table are in :mod:`_parity`.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.fft as sf
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
    phase_axis,
    positive,
    rng_signal,
    same,
    time_axis,
)
from specscope.compute import backend, operators


def ola_ref(x, hop):
    """Overlap-add by an explicit loop."""
    n_frames, length = x.shape[-2], x.shape[-1]
    y = np.zeros(x.shape[:-2] + (0 if n_frames == 0 else (n_frames - 1) * hop + length,),
                 x.dtype)
    for k in range(n_frames):
        y[..., k * hop:k * hop + length] += x[..., k, :]
    return y


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
]

# -- statistical generators (no deterministic reference) --------------------------------

STATISTICAL = {"pink_noise": -1.0, "brown_noise": -2.0}

check_table(CASES, "basic", STATISTICAL)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")


@pytest.mark.parametrize("bk", BACKENDS)
@pytest.mark.parametrize("case,dtype", case_params(CASES))
def test_parity(case: Case, dtype, bk: str) -> None:
    check_parity(case, dtype, bk)


@pytest.mark.parametrize("case", nan_params(CASES))
def test_nan_policy(case: Case) -> None:
    check_nan_policy(case)


@pytest.mark.parametrize("bk", BACKENDS)
@pytest.mark.parametrize("name,slope", sorted(STATISTICAL.items()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_coloured_noise_slope(name: str, slope: float, dtype: str, bk: str) -> None:
    """Coloured noise: a least-squares fit of log PSD vs log f has the stated slope (±0.15),
    the samples have unit variance, the seed makes it repeatable, and n=0/1 work."""
    x = backend.to_host(operators.call(name, backend=bk, n=1 << 16, seed=1, dtype=dtype))
    assert x.dtype == np.dtype(dtype)
    assert abs(float(np.std(x)) - 1.0) < 1e-3
    f, p = ss.welch(x.astype(np.float64), nperseg=4096)
    band = (f > 0.002) & (f < 0.2)
    fit = np.polyfit(np.log(f[band]), np.log(p[band]), 1)[0]
    assert abs(fit - slope) < 0.15, f"slope {fit:.3f}, expected {slope}"
    again = backend.to_host(operators.call(name, backend=bk, n=1 << 16, seed=1, dtype=dtype))
    np.testing.assert_array_equal(x, again)
    assert backend.to_host(operators.call(name, n=0)).shape == (0,)
