"""Fourier transforms: scipy.fft names and signatures, cupy.fft / cupyx.scipy.fft on the GPU."""

from __future__ import annotations

import numpy as np
from specscope.compute.errors import InputError
from specscope.compute.operators.registry import REQUIRED, Operator, Param, operator

from ..backend import scipy_fn
from ._common import AXES, AXIS, NORM, axes_tuple, on_host

FAMILY = "fft"
N = Param("n", int, None, min=1, unit="samples", help="transform length (input length)")
S = Param("s", "array", None, help="output shape over the axes")
AXES2 = Param("axes", "array", (-2, -1), help="the two axes to transform")
DCT_TYPE = Param("type", int, 2, choices=(1, 2, 3, 4), help="DCT/DST type")
DCT_NORM = Param("norm", str, None, choices=("backward", "ortho", "forward"),
                 help="normalisation")
ORTHO = Param("orthogonalize", bool, None, help="orthogonalise the type 2/3 transform")


def _one_d(name: str, summary: str) -> Operator:
    def impl(x, *, n, axis, norm, xp):
        return scipy_fn(xp, f"fft.{name}")(x, n=n, axis=axis, norm=norm)
    impl.__doc__ = summary
    return operator(name, family=FAMILY, summary=summary, reference=f"scipy.fft.{name}",
             params=[N, AXIS, NORM], history=None)(impl)


ONE_D = {_name: _one_d(_name, _summary) for _name, _summary in [
    ("fft", "Discrete Fourier transform"),
    ("ifft", "Inverse discrete Fourier transform"),
    ("rfft", "Discrete Fourier transform of real input (one-sided)"),
    ("irfft", "Inverse of rfft: real output"),
    ("hfft", "FFT of a Hermitian-symmetric signal (real spectrum)"),
    ("ihfft", "Inverse of hfft")]}


def _n_d(name: str, summary: str, two_d: bool) -> None:
    def impl(x, *, s, axes, norm, xp):
        return scipy_fn(xp, f"fft.{name}")(x, s=axes_tuple(s), axes=axes_tuple(axes),
                                          norm=norm)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.fft.{name}",
             params=[S, AXES2 if two_d else AXES, NORM], history=None)(impl)


for _name, _summary, _two in [("fft2", "2-D discrete Fourier transform", True),
                              ("ifft2", "2-D inverse discrete Fourier transform", True),
                              ("rfft2", "2-D Fourier transform of real input", True),
                              ("irfft2", "Inverse of rfft2", True),
                              ("fftn", "N-D discrete Fourier transform", False),
                              ("ifftn", "N-D inverse discrete Fourier transform", False),
                              ("rfftn", "N-D Fourier transform of real input", False),
                              ("irfftn", "Inverse of rfftn", False)]:
    _n_d(_name, _summary, _two)


@operator("fftshift", family=FAMILY, summary="Move the zero-frequency bin to the centre",
          params=[AXES], reference="scipy.fft.fftshift", history=None)
def fftshift(x, *, axes, xp):
    return xp.fft.fftshift(x, axes=axes_tuple(axes))


@operator("ifftshift", family=FAMILY, summary="Inverse of fftshift",
          params=[AXES], reference="scipy.fft.ifftshift", history=None)
def ifftshift(x, *, axes, xp):
    return xp.fft.ifftshift(x, axes=axes_tuple(axes))


@operator("fftfreq", family=FAMILY, summary="Bin frequencies of an n-point FFT",
          params=[Param("n", int, REQUIRED, min=1, unit="samples"),
                  Param("d", float, 1.0, min=0.0, unit="s", help="sample spacing")],
          reference="scipy.fft.fftfreq", takes_input=False)
def fftfreq(*, n, d, xp):
    return xp.fft.fftfreq(n, d)


@operator("rfftfreq", family=FAMILY, summary="Bin frequencies of an n-point rfft",
          params=[Param("n", int, REQUIRED, min=1, unit="samples"),
                  Param("d", float, 1.0, min=0.0, unit="s", help="sample spacing")],
          reference="scipy.fft.rfftfreq", takes_input=False)
def rfftfreq(*, n, d, xp):
    return xp.fft.rfftfreq(n, d)


@operator("next_fast_len", family=FAMILY, summary="Smallest fast FFT length >= target",
          params=[Param("target", int, REQUIRED, min=1),
                  Param("real", bool, False, help="for a real transform")],
          reference="scipy.fft.next_fast_len", takes_input=False)
def next_fast_len(*, target, real):
    import scipy.fft
    return scipy.fft.next_fast_len(target, real)


@operator("prev_fast_len", family=FAMILY, summary="Largest fast FFT length <= target",
          params=[Param("target", int, REQUIRED, min=1),
                  Param("real", bool, False, help="for a real transform")],
          reference="scipy.fft.prev_fast_len", takes_input=False)
def prev_fast_len(*, target, real):
    import scipy.fft
    return scipy.fft.prev_fast_len(target, real)


def _dct_on_device(xp, type, norm, orthogonalize) -> bool:
    """Whether cupyx.scipy.fft computes this DCT/DST: types 2 and 3, and only the
    orthogonalisation scipy applies by default (cupyx has no ``orthogonalize``)."""
    if xp is np:
        return False
    return type in (2, 3) and (orthogonalize is None or orthogonalize == (norm == "ortho"))


def _dct(name: str, summary: str) -> None:
    def impl(x, *, type, n, axis, norm, orthogonalize, xp):
        if (n if n is not None else x.shape[axis]) == 0:
            raise InputError(f"{name}: the transform length is 0; it needs at least 1 sample")
        if type == 1 and name.endswith("dct") and (n if n is not None else x.shape[axis]) < 2:
            raise InputError(f"{name}: type=1 needs a transform length of at least 2")
        if _dct_on_device(xp, type, norm, orthogonalize):
            return scipy_fn(xp, f"fft.{name}")(x, type=type, n=n, axis=axis, norm=norm)
        if xp is not np:
            return on_host(xp, f"fft.{name}", x, type=type, n=n, axis=axis, norm=norm,
                           orthogonalize=orthogonalize)
        return scipy_fn(np, f"fft.{name}")(x, type=type, n=n, axis=axis, norm=norm,
                                          orthogonalize=orthogonalize)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.fft.{name}",
             params=[DCT_TYPE, N, AXIS, DCT_NORM, ORTHO], history=None)(impl)


def _dctn(name: str, summary: str) -> None:
    def impl(x, *, type, s, axes, norm, orthogonalize, xp):
        if _dct_on_device(xp, type, norm, orthogonalize):
            return scipy_fn(xp, f"fft.{name}")(x, type=type, s=axes_tuple(s),
                                              axes=axes_tuple(axes), norm=norm)
        if xp is not np:
            return on_host(xp, f"fft.{name}", x, type=type, s=axes_tuple(s),
                           axes=axes_tuple(axes), norm=norm, orthogonalize=orthogonalize)
        return scipy_fn(np, f"fft.{name}")(x, type=type, s=axes_tuple(s), axes=axes_tuple(axes),
                                          norm=norm, orthogonalize=orthogonalize)
    impl.__doc__ = summary
    operator(name, family=FAMILY, summary=summary, reference=f"scipy.fft.{name}",
             params=[DCT_TYPE, S, AXES, DCT_NORM, ORTHO], history=None)(impl)


for _name, _summary in [("dct", "Discrete cosine transform"),
                        ("idct", "Inverse discrete cosine transform"),
                        ("dst", "Discrete sine transform"),
                        ("idst", "Inverse discrete sine transform")]:
    _dct(_name, _summary)
    _dctn(_name + "n", "N-D " + _summary[0].lower() + _summary[1:])


@operator("czt", family=FAMILY, summary="Chirp z-transform",
          params=[Param("m", int, None, min=1, help="output points (input length)"),
                  Param("w", complex, None, help="ratio between points (default: DFT)"),
                  Param("a", complex, 1 + 0j, help="starting point on the z-plane"), AXIS],
          reference="scipy.signal.czt", history=None)
def czt(x, *, m, w, a, axis, xp):
    return scipy_fn(xp, "signal.czt")(x, m=m, w=w, a=a, axis=axis)


@operator("zoom_fft", family=FAMILY, summary="DFT of a frequency range (via the chirp z-transform)",
          params=[Param("fn", "array", REQUIRED, help="f_stop, or [f_start, f_stop], in Hz"),
                  Param("m", int, None, min=1, help="output points (input length)"),
                  Param("endpoint", bool, False, help="include f_stop"), AXIS],
          reference="scipy.signal.zoom_fft", history=None)
def zoom_fft(x, *, fn, m, endpoint, axis, fs=2.0, xp):
    """Without ``fs`` frequencies are normalised as scipy's (fs=2: 1 is Nyquist)."""
    fn_ = np.asarray(fn if not hasattr(fn, "get") else fn.get(), dtype=float)
    f = float(fn_) if fn_.ndim == 0 else tuple(float(v) for v in fn_)
    return scipy_fn(xp, "signal.zoom_fft")(x, f, m=m, fs=fs, endpoint=endpoint, axis=axis)


@operator("czt_points", family=FAMILY, summary="The z-plane points of a chirp z-transform",
          params=[Param("m", int, REQUIRED, min=1),
                  Param("w", complex, None, help="ratio between points (default: DFT)"),
                  Param("a", complex, 1 + 0j, help="starting point")],
          reference="scipy.signal.czt_points", takes_input=False)
def czt_points(*, m, w, a):
    import scipy.signal
    return scipy.signal.czt_points(m, w, a)


@operator("fht", family=FAMILY, summary="Fast Hankel transform of log-spaced samples",
          params=[Param("dln", float, REQUIRED, help="log spacing of the input"),
                  Param("mu", float, REQUIRED, help="order of the Hankel transform"),
                  Param("offset", float, 0.0), Param("bias", float, 0.0)],
          reference="scipy.fft.fht", history=None)
def fht(x, *, dln, mu, offset, bias, xp):
    return scipy_fn(xp, "fft.fht")(x, dln, mu, offset=offset, bias=bias)


@operator("ifht", family=FAMILY, summary="Inverse fast Hankel transform",
          params=[Param("dln", float, REQUIRED, help="log spacing of the input"),
                  Param("mu", float, REQUIRED, help="order of the Hankel transform"),
                  Param("offset", float, 0.0), Param("bias", float, 0.0)],
          reference="scipy.fft.ifht", history=None)
def ifht(x, *, dln, mu, offset, bias, xp):
    return scipy_fn(xp, "fft.ifht")(x, dln, mu, offset=offset, bias=bias)


# numpy.fft as a second CPU implementation of fft/rfft: autotune times both
def _fft_variant(x, *, n, axis, norm, xp):
    return xp.fft.fft(x, n=n, axis=axis, norm=norm)


def _rfft_variant(x, *, n, axis, norm, xp):
    return xp.fft.rfft(x, n=n, axis=axis, norm=norm)


ONE_D["fft"].implementation("numpy", "numpy_fft")(_fft_variant)
ONE_D["rfft"].implementation("numpy", "numpy_fft")(_rfft_variant)
