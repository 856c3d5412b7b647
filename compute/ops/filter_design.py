"""Filter design and conversions: scipy.signal names, signatures and defaults.

IIR designs return ``(b, a)`` unless ``output`` says otherwise, as scipy does;
``output="sos"`` is the form to filter with (the filter designer asks for it).

Design runs on the host (it is tiny work); with ``backend="cupy"`` the
coefficients are returned as CuPy arrays.  ``fs`` given to :func:`call` means
frequencies in Hz; without it they are normalised (1 is Nyquist), as in scipy.
"""

from __future__ import annotations

import numpy as np
from specscope.compute.operators.registry import REQUIRED, Param, operator
from specscope.compute.types import BesselNorm, Btype, CombKind, IirDesign, choices

FAMILY = "filter_design"

ORDER = Param("N", int, REQUIRED, min=1, max=64, help="filter order")
WN = Param("Wn", "array", REQUIRED, min=0.0, unit="Hz or x Nyquist",
           help="critical frequency, or [low, high] for band filters")
BTYPE = Param("btype", str, "lowpass",
              choices=choices(Btype) + ("low", "high", "band", "pass", "stop"))
ANALOG = Param("analog", bool, False, help="analog (s-plane) design")
OUTPUT = Param("output", str, "ba", choices=("ba", "sos", "zpk"),
               help="numerator/denominator (scipy's default), second-order sections (the "
                    "form to filter with) or zpk")
ANALOG_CONV = Param("analog", bool, False, help="analog (s-plane) zeros and poles")
RP = Param("rp", float, REQUIRED, min=0.0, unit="dB", help="passband ripple")
RS = Param("rs", float, REQUIRED, min=0.0, unit="dB", help="stopband attenuation")
WP = Param("wp", "array", REQUIRED, min=0.0, unit="Hz or x Nyquist", help="passband edge(s)")
WS = Param("ws", "array", REQUIRED, min=0.0, unit="Hz or x Nyquist", help="stopband edge(s)")
GPASS = Param("gpass", float, REQUIRED, min=0.0, unit="dB", help="max passband loss")
GSTOP = Param("gstop", float, REQUIRED, min=0.0, unit="dB", help="min stopband attenuation")
NUMTAPS = Param("numtaps", int, REQUIRED, min=1, max=1 << 20, help="filter length")


def _f(v):
    """A frequency parameter as scipy wants it: a float or a list."""
    v = np.asarray(v, dtype=float)
    return float(v) if v.ndim == 0 else v.tolist()


def _iir(name: str, summary: str, extra: list[Param]) -> None:
    names = [p.name for p in extra]

    def impl(*, N, Wn, btype, analog, output, fs=None, **kw):
        import scipy.signal as ss
        args = [kw[n] for n in names]
        return getattr(ss, name)(N, *args, _f(Wn), btype=btype, analog=analog, output=output,
                                 fs=fs)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.signal.{name}",
             params=[ORDER, *extra, WN, BTYPE, ANALOG, OUTPUT], takes_input=False)(impl)


_iir("butter", "Butterworth IIR filter", [])
_iir("cheby1", "Chebyshev type I IIR filter", [RP])
_iir("cheby2", "Chebyshev type II IIR filter", [RS])
_iir("ellip", "Elliptic (Cauer) IIR filter", [RP, RS])


@operator("bessel", family=FAMILY, summary="Bessel/Thomson IIR filter",
          params=[ORDER, WN, BTYPE, ANALOG, OUTPUT,
                  Param("norm", str, "phase", choices=choices(BesselNorm))],
          reference="scipy.signal.bessel", takes_input=False)
def bessel(*, N, Wn, btype, analog, output, norm, fs=None):
    import scipy.signal as ss
    return ss.bessel(N, _f(Wn), btype=btype, analog=analog, output=output, norm=norm, fs=fs)


@operator("iirfilter", family=FAMILY, summary="IIR filter of a given order and type",
          params=[ORDER, WN, Param("rp", float, None, min=0.0, unit="dB"),
                  Param("rs", float, None, min=0.0, unit="dB"), BTYPE, ANALOG,
                  Param("ftype", str, "butter",
                        choices=choices(IirDesign)), OUTPUT],
          reference="scipy.signal.iirfilter", takes_input=False)
def iirfilter(*, N, Wn, rp, rs, btype, analog, ftype, output, fs=None):
    import scipy.signal as ss
    return ss.iirfilter(N, _f(Wn), rp=rp, rs=rs, btype=btype, analog=analog, ftype=ftype,
                        output=output, fs=fs)


@operator("iirdesign", family=FAMILY, summary="Minimum-order IIR filter from a specification",
          params=[WP, WS, GPASS, GSTOP, ANALOG,
                  Param("ftype", str, "ellip", choices=("butter", "cheby1", "cheby2", "ellip")),
                  OUTPUT], reference="scipy.signal.iirdesign", takes_input=False)
def iirdesign(*, wp, ws, gpass, gstop, analog, ftype, output, fs=None):
    import scipy.signal as ss
    return ss.iirdesign(_f(wp), _f(ws), gpass, gstop, analog=analog, ftype=ftype,
                        output=output, fs=fs)


def _ord(name: str, summary: str) -> None:
    def impl(*, wp, ws, gpass, gstop, analog, fs=None):
        import scipy.signal as ss
        return getattr(ss, name)(_f(wp), _f(ws), gpass, gstop, analog=analog, fs=fs)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.signal.{name}",
             params=[WP, WS, GPASS, GSTOP, ANALOG], takes_input=False)(impl)


_ord("buttord", "Lowest Butterworth order meeting a specification: (N, Wn)")
_ord("cheb1ord", "Lowest Chebyshev I order meeting a specification: (N, Wn)")
_ord("cheb2ord", "Lowest Chebyshev II order meeting a specification: (N, Wn)")
_ord("ellipord", "Lowest elliptic order meeting a specification: (N, Wn)")


def _convert_ba(ba, output):
    import scipy.signal as ss
    b, a = ba
    if output == "ba":
        return b, a
    if output == "zpk":
        return ss.tf2zpk(b, a)
    return ss.tf2sos(b, a)


W0 = Param("w0", float, REQUIRED, min=0.0, unit="Hz or x Nyquist", help="centre frequency")
Q = Param("Q", float, REQUIRED, min=0.0, help="quality factor")


@operator("iirnotch", family=FAMILY, summary="Second-order IIR notch filter",
          params=[W0, Q, OUTPUT], reference="scipy.signal.iirnotch", takes_input=False)
def iirnotch(*, w0, Q, output, fs=2.0):
    import scipy.signal as ss
    return _convert_ba(ss.iirnotch(w0, Q, fs=fs), output)


@operator("iirpeak", family=FAMILY, summary="Second-order IIR peak (resonator) filter",
          params=[W0, Q, OUTPUT], reference="scipy.signal.iirpeak", takes_input=False)
def iirpeak(*, w0, Q, output, fs=2.0):
    import scipy.signal as ss
    return _convert_ba(ss.iirpeak(w0, Q, fs=fs), output)


@operator("iircomb", family=FAMILY, summary="IIR notching or peaking comb filter",
          params=[W0, Q, Param("ftype", str, "notch", choices=choices(CombKind)),
                  Param("pass_zero", bool, False), OUTPUT],
          reference="scipy.signal.iircomb", takes_input=False)
def iircomb(*, w0, Q, ftype, pass_zero, output, fs=2.0):
    import scipy.signal as ss
    return _convert_ba(ss.iircomb(w0, Q, ftype=ftype, fs=fs, pass_zero=pass_zero), output)


@operator("gammatone", family=FAMILY, summary="Gammatone filter (auditory model)",
          params=[Param("freq", float, REQUIRED, min=0.0, unit="Hz", help="centre frequency"),
                  Param("ftype", str, "iir", choices=("fir", "iir")),
                  Param("order", int, None, min=1, max=24),
                  Param("numtaps", int, None, min=1), OUTPUT],
          reference="scipy.signal.gammatone", takes_input=False)
def gammatone(*, freq, ftype, order, numtaps, output, fs=None):
    import scipy.signal as ss
    ba = ss.gammatone(freq, ftype, order=order, numtaps=numtaps, fs=fs)
    return ba if ftype == "fir" else _convert_ba(ba, output)


@operator("firwin", family=FAMILY, summary="FIR filter by the window method",
          params=[NUMTAPS, Param("cutoff", "array", REQUIRED, min=0.0, unit="Hz or x Nyquist"),
                  Param("width", float, None, min=0.0, help="transition width (Kaiser)"),
                  Param("window", "window", "hamming"),
                  Param("pass_zero", (bool, str), True,
                        choices=(True, False, "bandpass", "lowpass", "highpass", "bandstop")),
                  Param("scale", bool, True)],
          reference="scipy.signal.firwin", takes_input=False)
def firwin(*, numtaps, cutoff, width, window, pass_zero, scale, fs=None):
    import scipy.signal as ss
    from specscope.compute.spectral import parse_window
    return ss.firwin(numtaps, _f(cutoff), width=width, window=parse_window(window),
                     pass_zero=pass_zero, scale=scale, fs=fs)


@operator("firwin2", family=FAMILY, summary="FIR filter from a frequency/gain table",
          params=[NUMTAPS, Param("freq", "array", REQUIRED, min=0.0),
                  Param("gain", "array", REQUIRED), Param("nfreqs", int, None, min=1),
                  Param("window", "window", "hamming"), Param("antisymmetric", bool, False)],
          reference="scipy.signal.firwin2", takes_input=False)
def firwin2(*, numtaps, freq, gain, nfreqs, window, antisymmetric, fs=None):
    import scipy.signal as ss
    from specscope.compute.spectral import parse_window
    return ss.firwin2(numtaps, freq, gain, nfreqs=nfreqs, window=parse_window(window),
                      antisymmetric=antisymmetric, fs=fs)


@operator("remez", family=FAMILY, summary="Equiripple FIR filter (Parks-McClellan)",
          params=[NUMTAPS, Param("bands", "array", REQUIRED, min=0.0),
                  Param("desired", "array", REQUIRED), Param("weight", "array", None),
                  Param("type", str, "bandpass",
                        choices=("bandpass", "differentiator", "hilbert")),
                  Param("maxiter", int, 25, min=1), Param("grid_density", int, 16, min=1)],
          reference="scipy.signal.remez", takes_input=False)
def remez(*, numtaps, bands, desired, weight, type, maxiter, grid_density, fs=1.0):
    import scipy.signal as ss
    return ss.remez(numtaps, bands, desired, weight=weight, type=type, maxiter=maxiter,
                    grid_density=grid_density, fs=fs)


@operator("firls", family=FAMILY, summary="Least-squares FIR filter",
          params=[NUMTAPS, Param("bands", "array", REQUIRED, min=0.0),
                  Param("desired", "array", REQUIRED), Param("weight", "array", None)],
          reference="scipy.signal.firls", takes_input=False)
def firls(*, numtaps, bands, desired, weight, fs=None):
    import scipy.signal as ss
    return ss.firls(numtaps, bands, desired, weight=weight, fs=fs)


@operator("kaiserord", family=FAMILY, summary="Kaiser window FIR parameters: (numtaps, beta)",
          params=[Param("ripple", float, REQUIRED, min=0.0, unit="dB"),
                  Param("width", float, REQUIRED, min=0.0, unit="x Nyquist")],
          reference="scipy.signal.kaiserord", takes_input=False)
def kaiserord(*, ripple, width):
    import scipy.signal as ss
    return ss.kaiserord(ripple, width)


@operator("kaiser_beta", family=FAMILY, summary="Kaiser beta for an attenuation",
          params=[Param("a", float, REQUIRED, min=0.0, unit="dB")],
          reference="scipy.signal.kaiser_beta", takes_input=False)
def kaiser_beta(*, a):
    import scipy.signal as ss
    return float(ss.kaiser_beta(a))


@operator("kaiser_atten", family=FAMILY, summary="Attenuation of a Kaiser FIR filter",
          params=[NUMTAPS, Param("width", float, REQUIRED, min=0.0, unit="x Nyquist")],
          reference="scipy.signal.kaiser_atten", takes_input=False)
def kaiser_atten(*, numtaps, width):
    import scipy.signal as ss
    return float(ss.kaiser_atten(numtaps, width))


@operator("minimum_phase", family=FAMILY, summary="Minimum-phase version of a linear-phase FIR",
          params=[Param("method", str, "homomorphic", choices=("homomorphic", "hilbert")),
                  Param("n_fft", int, None, min=1),
                  Param("half", bool, True, help="half the length (homomorphic)")],
          reference="scipy.signal.minimum_phase", history=None, nan_policy="reject")
def minimum_phase(x, *, method, n_fft, half):
    import scipy.signal as ss
    return ss.minimum_phase(x, method=method, n_fft=n_fft, half=half)


# -- conversions: the input is the first coefficient array ---------------------------

A = Param("a", "array", REQUIRED, help="denominator coefficients")
P = Param("p", "array", REQUIRED, help="poles")
K = Param("k", float, REQUIRED, help="gain")
PAIRING = Param("pairing", str, None, choices=("nearest", "keep_odd", "minimal"))


@operator("tf2sos", family=FAMILY, summary="Numerator/denominator (input: b) to SOS",
          params=[A, PAIRING, ANALOG_CONV], reference="scipy.signal.tf2sos", history=None,
          nan_policy="reject")
def tf2sos(x, *, a, pairing, analog):
    import scipy.signal as ss
    return ss.tf2sos(x, a, pairing=pairing, analog=analog)


@operator("sos2tf", family=FAMILY, summary="SOS to numerator/denominator: (b, a)",
          reference="scipy.signal.sos2tf", history=None)
def sos2tf(x):
    import scipy.signal as ss
    return ss.sos2tf(x)


@operator("zpk2sos", family=FAMILY, summary="Zeros (input), poles and gain to SOS",
          params=[P, K, PAIRING, ANALOG_CONV], reference="scipy.signal.zpk2sos", history=None)
def zpk2sos(x, *, p, k, pairing, analog):
    import scipy.signal as ss
    return ss.zpk2sos(x, p, k, pairing=pairing, analog=analog)


@operator("sos2zpk", family=FAMILY, summary="SOS to zeros, poles and gain",
          reference="scipy.signal.sos2zpk", history=None, nan_policy="reject")
def sos2zpk(x):
    import scipy.signal as ss
    return ss.sos2zpk(x)


@operator("tf2zpk", family=FAMILY, summary="Numerator (input) and denominator to zpk",
          params=[A], reference="scipy.signal.tf2zpk", history=None, nan_policy="reject")
def tf2zpk(x, *, a):
    import scipy.signal as ss
    return ss.tf2zpk(x, a)


@operator("zpk2tf", family=FAMILY, summary="Zeros (input), poles and gain to (b, a)",
          params=[P, K], reference="scipy.signal.zpk2tf", history=None)
def zpk2tf(x, *, p, k):
    import scipy.signal as ss
    return ss.zpk2tf(x, p, k)


@operator("normalize", family=FAMILY, summary="Normalise (b, a) so a[0] == 1: (b, a)",
          params=[A], reference="scipy.signal.normalize", history=None)
def normalize(x, *, a):
    import scipy.signal as ss
    return ss.normalize(x, a)


@operator("bilinear", family=FAMILY, summary="Analog (b input, a) to digital by the bilinear map",
          params=[A], reference="scipy.signal.bilinear", history=None)
def bilinear(x, *, a, fs=1.0):
    import scipy.signal as ss
    return ss.bilinear(x, a, fs=fs)


@operator("bilinear_zpk", family=FAMILY, summary="Analog zpk (zeros input) to digital zpk",
          params=[P, K], reference="scipy.signal.bilinear_zpk", history=None)
def bilinear_zpk(x, *, p, k, fs=1.0):
    import scipy.signal as ss
    return ss.bilinear_zpk(x, p, k, fs)


WO = Param("wo", float, 1.0, min=0.0, unit="rad/s", help="new cutoff or centre frequency")
BW = Param("bw", float, 1.0, min=0.0, unit="rad/s", help="bandwidth")


def _lp2(name: str, summary: str, band: bool, zpk: bool) -> None:
    if zpk:
        def impl(x, *, p, k, wo, **kw):
            import scipy.signal as ss
            extra = [kw["bw"]] if band else []
            return getattr(ss, name)(x, p, k, wo, *extra)
        params = [P, K, WO] + ([BW] if band else [])
    else:
        def impl(x, *, a, wo, **kw):
            import scipy.signal as ss
            extra = [kw["bw"]] if band else []
            return getattr(ss, name)(x, a, wo, *extra)
        params = [A, WO] + ([BW] if band else [])
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.signal.{name}",
             params=params, history=None)(impl)


for _kind, _what, _band in [("lp", "low-pass", False), ("hp", "high-pass", False),
                            ("bp", "band-pass", True), ("bs", "band-stop", True)]:
    _lp2(f"lp2{_kind}", f"Analog low-pass prototype (b input, a) to {_what}", _band, False)
    _lp2(f"lp2{_kind}_zpk", f"Analog low-pass prototype zpk (zeros input) to {_what}", _band,
         True)


@operator("buttap", family=FAMILY, summary="Analog Butterworth prototype: (z, p, k)",
          params=[ORDER], reference="scipy.signal.buttap", takes_input=False)
def buttap(*, N):
    import scipy.signal as ss
    return ss.buttap(N)


@operator("cheb1ap", family=FAMILY, summary="Analog Chebyshev I prototype: (z, p, k)",
          params=[ORDER, RP], reference="scipy.signal.cheb1ap", takes_input=False)
def cheb1ap(*, N, rp):
    import scipy.signal as ss
    return ss.cheb1ap(N, rp)


@operator("cheb2ap", family=FAMILY, summary="Analog Chebyshev II prototype: (z, p, k)",
          params=[ORDER, RS], reference="scipy.signal.cheb2ap", takes_input=False)
def cheb2ap(*, N, rs):
    import scipy.signal as ss
    return ss.cheb2ap(N, rs)


@operator("ellipap", family=FAMILY, summary="Analog elliptic prototype: (z, p, k)",
          params=[ORDER, RP, RS], reference="scipy.signal.ellipap", takes_input=False)
def ellipap(*, N, rp, rs):
    import scipy.signal as ss
    return ss.ellipap(N, rp, rs)


@operator("besselap", family=FAMILY, summary="Analog Bessel prototype: (z, p, k)",
          params=[ORDER, Param("norm", str, "phase", choices=choices(BesselNorm))],
          reference="scipy.signal.besselap", takes_input=False)
def besselap(*, N, norm):
    import scipy.signal as ss
    return ss.besselap(N, norm=norm)


@operator("savgol_coeffs", family=FAMILY, summary="Savitzky-Golay FIR coefficients",
          params=[Param("window_length", int, REQUIRED, min=1),
                  Param("polyorder", int, REQUIRED, min=0), Param("deriv", int, 0, min=0),
                  Param("delta", float, 1.0, min=0.0), Param("pos", int, None, min=0),
                  Param("use", str, "conv", choices=("conv", "dot"))],
          reference="scipy.signal.savgol_coeffs", takes_input=False)
def savgol_coeffs(*, window_length, polyorder, deriv, delta, pos, use):
    import scipy.signal as ss
    return ss.savgol_coeffs(window_length, polyorder, deriv=deriv, delta=delta, pos=pos,
                            use=use)
