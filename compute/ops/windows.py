"""Every scipy.signal window, as operators without input (cupyx.scipy.signal.windows on GPU)."""

from __future__ import annotations

import numpy as np
from specscope.compute.operators.registry import REQUIRED, Param, operator

from ..backend import scipy_fn
from ._common import DTYPE

FAMILY = "windows"
M = Param("M", int, REQUIRED, min=0, unit="samples", help="number of points")
SYM = Param("sym", bool, True, help="symmetric (filter design) or periodic (spectral analysis)")

#: name -> (summary, extra params between M and sym)
WINDOWS: dict[str, tuple[str, list[Param]]] = {
    "barthann": ("Modified Bartlett-Hann window", []),
    "bartlett": ("Bartlett (triangular, zero ends) window", []),
    "blackman": ("Blackman window", []),
    "blackmanharris": ("Minimum 4-term Blackman-Harris window", []),
    "bohman": ("Bohman window", []),
    "boxcar": ("Rectangular window", []),
    "chebwin": ("Dolph-Chebyshev window",
                [Param("at", float, 100.0, min=0.0, unit="dB", help="side-lobe attenuation")]),
    "cosine": ("Simple cosine (sine) window", []),
    "dpss": ("Discrete prolate spheroidal (Slepian) window(s)",
             [Param("NW", float, 2.5, min=0.0, help="time-half-bandwidth product"),
              Param("Kmax", int, None, min=1, help="number of tapers (one window if omitted)")]),
    "exponential": ("Exponential (Poisson) window",
                    [Param("center", float, None, help="centre (middle if omitted; periodic "
                                                     "windows need it omitted)"),
                     Param("tau", float, 1.0, min=0.0, help="decay parameter")]),
    "flattop": ("Flat-top window", []),
    "gaussian": ("Gaussian window",
                 [Param("std", float, 7.0, min=0.0, unit="samples", help="standard deviation")]),
    "general_cosine": ("Generic weighted sum of cosines window",
                       [Param("a", "array", REQUIRED, help="cosine weights")]),
    "general_gaussian": ("Generalised Gaussian window",
                         [Param("p", float, 1.0, min=0.0, help="shape (1 is Gaussian)"),
                          Param("sig", float, 7.0, min=0.0, help="standard deviation")]),
    "general_hamming": ("Generalised Hamming window",
                        [Param("alpha", float, 0.54, min=0.0, max=1.0, help="window coefficient")]),
    "hamming": ("Hamming window", []),
    "hann": ("Hann window", []),
    "kaiser": ("Kaiser window",
               [Param("beta", float, 8.6, min=0.0, help="shape: main lobe vs side lobes")]),
    "kaiser_bessel_derived": ("Kaiser-Bessel derived window (MDCT)",
                              [Param("beta", float, 8.6, min=0.0, help="shape")]),
    "lanczos": ("Lanczos (sinc) window", []),
    "nuttall": ("Minimum 4-term Blackman-Harris window (Nuttall)", []),
    "parzen": ("Parzen window", []),
    "taylor": ("Taylor window",
               [Param("nbar", int, 4, min=1, help="nearly constant side lobes next to the main"),
                Param("sll", float, 30.0, min=0.0, unit="dB", help="side-lobe suppression"),
                Param("norm", bool, True, help="unit gain at the centre")]),
    "triang": ("Triangular window", []),
    "tukey": ("Tukey (tapered cosine) window",
              [Param("alpha", float, 0.5, min=0.0, max=1.0, help="taper fraction")]),
}


#: windows cupyx.scipy.signal.windows does not have
HOST_ONLY = frozenset({"dpss"})


def _register(name: str, summary: str, extra: list[Param]) -> None:
    names = [p.name for p in extra]

    def impl(*, M, sym, dtype, xp, **kw):
        args = [kw[n] for n in names]
        w = scipy_fn(xp, f"signal.windows.{name}")(M, *args, sym=sym)
        return xp.asarray(w, dtype=dtype)

    def host_impl(*, M, sym, dtype, **kw):
        args = [kw[n] for n in names]
        w = scipy_fn(np, f"signal.windows.{name}")(M, *args, sym=sym)
        return np.asarray(w, dtype=dtype)

    # without xp in its signature the GPU path is declared a host round trip
    fn = host_impl if name in HOST_ONLY else impl
    fn.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.signal.windows.{name}",
             params=[M, *extra, SYM, DTYPE], takes_input=False)(fn)


for _name, (_summary, _extra) in WINDOWS.items():
    if _name != "dpss":
        _register(_name, _summary, _extra)


@operator("dpss", family=FAMILY, summary=WINDOWS["dpss"][0],
          params=[M, *WINDOWS["dpss"][1], SYM,
                  Param("norm", (int, str), None, help="2, 'approximate' or 'subsample' "
                        "(scipy's default when omitted)"),
                  Param("return_ratios", bool, False,
                        help="also return the concentration ratios: (windows, ratios)"), DTYPE],
          reference="scipy.signal.windows.dpss", takes_input=False)
def dpss(*, M, NW, Kmax, sym, norm, return_ratios, dtype):
    """Discrete prolate spheroidal (Slepian) window(s), on the host (cupyx has none)."""
    import scipy.signal.windows as sw
    out = sw.dpss(M, NW, Kmax, sym=sym, norm=norm, return_ratios=return_ratios)
    if return_ratios:
        return np.asarray(out[0], dtype=dtype), out[1]
    return np.asarray(out, dtype=dtype)


@operator("get_window", family=FAMILY, summary="A window by name or (name, parameter) tuple",
          params=[Param("window", "window", "hann", help="name, tuple, or 'kaiser,8'"),
                  Param("Nx", int, REQUIRED, min=0, unit="samples"),
                  Param("fftbins", bool, True, help="periodic (True) or symmetric"), DTYPE],
          reference="scipy.signal.get_window", takes_input=False)
def get_window(*, window, Nx, fftbins, dtype, xp):
    from specscope.compute.spectral import parse_window
    w = scipy_fn(xp, "signal.get_window")(parse_window(window), Nx, fftbins=fftbins)
    return xp.asarray(w, dtype=dtype)
