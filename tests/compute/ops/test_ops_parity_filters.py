"""Parity of the filter design, filtering and analysis operators with their references.

The machinery and the rules of the table are in :mod:`_parity`.
"""



from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss
from _parity import (
    BACKENDS,
    FS,
    Case,
    case_params,
    check_nan_policy,
    check_parity,
    check_table,
    image,
    nan_params,
    rng_signal,
)

SOS = ss.butter(4, 0.2, output="sos")
SOS_BP = ss.cheby1(3, 1.0, [0.1, 0.3], btype="bandpass", output="sos")
B, A = ss.butter(3, 0.25)
FIR = ss.firwin(9, 0.3)
KERN = np.array([0.5, -1.0, 2.0, 0.25])


def iirs():
    out = []
    for name, extra in [("butter", []), ("cheby1", [1.0]), ("cheby2", [40.0]),
                        ("ellip", [1.0, 40.0])]:
        keys = {"cheby1": ["rp"], "cheby2": ["rs"], "ellip": ["rp", "rs"]}.get(name, [])
        base = dict(zip(keys, extra))
        ps = [{"N": 4, "Wn": 0.3, **base},
              {"N": 3, "Wn": [0.1, 0.4], "btype": "bandpass", "output": "sos", **base},
              {"N": 5, "Wn": 100.0, "btype": "highpass", "output": "ba", **base},
              {"N": 2, "Wn": [1.0, 2.0], "btype": "bandstop", "analog": True, "output": "zpk",
               **base},
              {"N": 3, "Wn": 1.5, **base}]  # Wn above Nyquist: both raise

        def ref(_n=name, _k=keys, fs=None, **p):
            p = dict(p)
            args = [p.pop(k) for k in _k]
            p.setdefault("output", "ba")  # scipy's default
            if p.get("analog"):
                fs = None
            return getattr(ss, _n)(p.pop("N"), *args, p.pop("Wn"), fs=fs, **p)
        out.append(Case(name, ref, ps))
    return out


CASES: list[Case] = [
    # ---------------------------------------------------------------- filter design
    *iirs(),
    Case("bessel", lambda N, Wn, btype="lowpass", analog=False, output="ba", norm="phase",
         fs=None: ss.bessel(N, Wn, btype, analog, output, norm, fs=None if analog else fs),
         [{"N": 4, "Wn": 0.3, "norm": "phase"}, {"N": 3, "Wn": [50.0, 120.0], "output": "sos",
                                                  "btype": "bandpass", "norm": "mag"}]),
    Case("iirfilter", lambda N, Wn, rp=None, rs=None, btype="lowpass", analog=False,
         ftype="butter", output="ba", fs=None: ss.iirfilter(
             N, Wn, rp, rs, btype, analog, ftype, output, fs),
         [{"N": 4, "Wn": 0.3, "ftype": "butter"},
          {"N": 4, "Wn": [0.2, 0.5], "rp": 1.0, "rs": 50.0, "ftype": "ellip",
           "btype": "bandstop", "output": "sos"}]),
    Case("iirdesign", lambda wp, ws, gpass, gstop, analog=False, ftype="ellip", output="ba",
         fs=None: ss.iirdesign(wp, ws, gpass, gstop, analog, ftype, output, fs),
         [{"wp": 0.2, "ws": 0.3, "gpass": 1.0, "gstop": 40.0},
          {"wp": [0.2, 0.5], "ws": [0.1, 0.6], "gpass": 1.0, "gstop": 40.0,
           "ftype": "cheby2", "output": "sos"}]),
    *[Case(n, (lambda _n: lambda wp, ws, gpass, gstop, analog=False, fs=None: getattr(ss, _n)(
        wp, ws, gpass, gstop, analog, fs))(n),
           [{"wp": 0.2, "ws": 0.3, "gpass": 1.0, "gstop": 40.0},
            {"wp": [0.2, 0.5], "ws": [0.1, 0.6], "gpass": 3.0, "gstop": 30.0}])
      for n in ("buttord", "cheb1ord", "cheb2ord", "ellipord")],
    *[Case(n, (lambda _n: lambda w0, Q, output="ba", fs=None: (lambda ba: ss.tf2sos(*ba)
          if output == "sos" else ba)(getattr(ss, _n)(w0, Q, fs=fs or 2.0)))(n),
           [{"w0": 0.2, "Q": 30.0, "output": "sos"}, {"w0": 0.4, "Q": 5.0}])
      for n in ("iirnotch", "iirpeak")],
    Case("iircomb", lambda w0, Q, ftype="notch", pass_zero=False, output="ba", fs=None: (
        lambda ba: ss.tf2sos(*ba) if output == "sos" else ba)(
            ss.iircomb(w0, Q, ftype, fs or 2.0, pass_zero=pass_zero)),
         [{"w0": 100.0, "Q": 30.0}, {"w0": 250.0, "Q": 10.0, "ftype": "peak",
                                    "output": "ba"}], fs=FS),
    Case("gammatone", lambda freq, ftype="iir", order=None, numtaps=None, output="ba",
         fs=None: (lambda ba: ba if ftype == "fir" else (ss.tf2sos(*ba) if output == "sos"
                                                         else ba))(
        ss.gammatone(freq, ftype, order=order, numtaps=numtaps, fs=fs)),
         [{"freq": 440.0, "ftype": "iir", "output": "sos"}, {"freq": 440.0, "ftype": "iir"},
          {"freq": 200.0, "ftype": "fir"}],
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
    Case("convolve", lambda x, in2, mode, method: ss.convolve(x, in2, mode, method),
         [{"in2": KERN, "mode": m, "method": "auto"} for m in ("full", "same", "valid")],
         complex=True, batch=False),
    Case("fftconvolve", lambda x, in2, mode, axes: ss.fftconvolve(x, in2, mode, axes),
         [{"in2": KERN, "mode": m, "axes": None} for m in ("full", "same", "valid")],
         complex=True, batch=False, atol32=5e-4),
    Case("oaconvolve", lambda x, in2, mode, axes: ss.oaconvolve(x, in2, mode, axes),
         [{"in2": KERN, "mode": m, "axes": None} for m in ("full", "same", "valid")],
         complex=True, batch=False, atol32=5e-4),
    Case("correlate", lambda x, in2, mode, method: ss.correlate(x, in2, mode, method),
         [{"in2": KERN, "mode": m, "method": "direct"} for m in ("full", "same", "valid")],
         complex=True, batch=False),
    Case("correlation_lags", lambda in1_len, in2_len, mode: ss.correlation_lags(
        in1_len, in2_len, mode), [{"in1_len": a, "in2_len": b, "mode": m}
                                  for a, b in ((5, 3), (3, 5), (97, 4))
                                  for m in ("full", "same", "valid")]),
    Case("convolve2d", lambda x, in2, mode, boundary, fillvalue: ss.convolve2d(
        x, in2, mode, boundary, fillvalue),
         [{"in2": np.ones((2, 3)), "mode": "full", "boundary": "fill", "fillvalue": 0.0},
          {"in2": np.ones((2, 3)), "mode": "same", "boundary": "wrap", "fillvalue": 0.0}],
         make=image, batch=False),
    Case("correlate2d", lambda x, in2, mode, boundary, fillvalue: ss.correlate2d(
        x, in2, mode, boundary, fillvalue),
         [{"in2": np.arange(6.0).reshape(2, 3), "mode": "valid", "boundary": "fill",
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
]

check_table(CASES, "filters")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")


@pytest.mark.parametrize("bk", BACKENDS)
@pytest.mark.parametrize("case,dtype", case_params(CASES))
def test_parity(case: Case, dtype, bk: str) -> None:
    check_parity(case, dtype, bk)


@pytest.mark.parametrize("case", nan_params(CASES))
def test_nan_policy(case: Case) -> None:
    check_nan_policy(case)
