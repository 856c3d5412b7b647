"""Wavelets: PyWavelets on the CPU (its names and signatures); CWT also written against xp."""

from __future__ import annotations

import numpy as np
import pywt
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators.registry import REQUIRED, Param, operator

FAMILY = "wavelets"

_DISCRETE = tuple(pywt.wavelist(kind="discrete"))
_CONT = tuple(pywt.wavelist(kind="continuous"))
WAVELET = Param("wavelet", str, "db4", help=f"discrete wavelet ({', '.join(_DISCRETE[:6])}, ...)")
MODE = Param("mode", str, "symmetric", choices=tuple(pywt.Modes.modes))
LEVEL = Param("level", int, None, min=0, help="decomposition level (maximum when omitted)")
AXIS = Param("axis", int, -1)


def _wavelet(name):
    if name not in _DISCRETE:
        raise InputError(f"wavelet={name!r} must be a discrete wavelet PyWavelets knows, e.g. "
                         "db4, sym8, coif3, haar, bior2.2")
    return name


@operator("cwt", family=FAMILY,
          summary="Continuous wavelet transform: (coefficients (scales, ...), frequencies Hz)",
          params=[Param("scales", "array", REQUIRED, min=0.0),
                  Param("wavelet", str, "morl", help="continuous wavelet: morl, mexh, "
                        "cmor1.5-1.0, gaus1, cgau1, shan1.5-1.0, fbsp1-1.5-1.0"),
                  Param("method", str, "conv", choices=("conv", "fft")), AXIS],
          reference="pywt.cwt", history=None)
def cwt(x, *, scales, wavelet, method, axis, fs):
    family = wavelet.split("-")[0].rstrip("0123456789.")
    if wavelet not in _CONT and family not in ("cmor", "shan", "fbsp"):
        raise InputError(f"wavelet={wavelet!r} must be a continuous wavelet: "
                         f"{', '.join(_CONT[:8])}, ...")
    if np.asarray(x).shape[axis] == 0:
        raise operator_error(InputError, "cwt", "the signal is empty")
    return pywt.cwt(x, scales, wavelet, sampling_period=1.0 / fs, method=method, axis=axis)


@operator("dwt", family=FAMILY, summary="Single-level discrete wavelet transform: (cA, cD)",
          params=[WAVELET, MODE, AXIS], reference="pywt.dwt", history=None)
def dwt(x, *, wavelet, mode, axis):
    return pywt.dwt(x, _wavelet(wavelet), mode=mode, axis=axis)


@operator("idwt", family=FAMILY, summary="Single-level inverse DWT of cA (input) and cD",
          params=[Param("cD", "array", REQUIRED), WAVELET, MODE, AXIS],
          reference="pywt.idwt", history=None)
def idwt(x, *, cD, wavelet, mode, axis):
    return pywt.idwt(x, cD, _wavelet(wavelet), mode=mode, axis=axis)


@operator("wavedec", family=FAMILY, summary="Multilevel DWT: [cA_n, cD_n, ..., cD_1]",
          params=[WAVELET, MODE, LEVEL, AXIS], reference="pywt.wavedec", history=None)
def wavedec(x, *, wavelet, mode, level, axis):
    return pywt.wavedec(x, _wavelet(wavelet), mode=mode, level=level, axis=axis)


@operator("waverec", family=FAMILY, summary="Multilevel inverse DWT of a wavedec list",
          params=[WAVELET, MODE, AXIS], reference="pywt.waverec", history=None,
          input_kind="sequence")
def waverec(x, *, wavelet, mode, axis):
    return pywt.waverec(x, _wavelet(wavelet), mode=mode, axis=axis)


@operator("swt", family=FAMILY, summary="Stationary (undecimated) wavelet transform",
          params=[WAVELET, LEVEL, Param("trim_approx", bool, True), Param("norm", bool, False),
                  AXIS], reference="pywt.swt", history=None)
def swt(x, *, wavelet, level, trim_approx, norm, axis):
    return pywt.swt(x, _wavelet(wavelet), level=level, trim_approx=trim_approx, norm=norm,
                    axis=axis)


@operator("iswt", family=FAMILY, summary="Inverse stationary wavelet transform of a swt list",
          params=[WAVELET, Param("norm", bool, False), AXIS], reference="pywt.iswt",
          history=None, input_kind="sequence")
def iswt(x, *, wavelet, norm, axis):
    return pywt.iswt(x, _wavelet(wavelet), norm=norm, axis=axis)


@operator("dwt2", family=FAMILY, summary="2-D single-level DWT: (cA, (cH, cV, cD))",
          params=[WAVELET, MODE], reference="pywt.dwt2", history=None)
def dwt2(x, *, wavelet, mode):
    return pywt.dwt2(x, _wavelet(wavelet), mode=mode)


@operator("wavedec2", family=FAMILY, summary="2-D multilevel DWT",
          params=[WAVELET, MODE, LEVEL], reference="pywt.wavedec2", history=None)
def wavedec2(x, *, wavelet, mode, level):
    return pywt.wavedec2(x, _wavelet(wavelet), mode=mode, level=level)


@operator("waverec2", family=FAMILY, summary="2-D multilevel inverse DWT of a wavedec2 list",
          params=[WAVELET, MODE], reference="pywt.waverec2", history=None,
          input_kind="sequence")
def waverec2(x, *, wavelet, mode):
    return pywt.waverec2(x, _wavelet(wavelet), mode=mode)


def _pywt_call(name, fn, *args, **kwargs):
    """PyWavelets reports some bad inputs as RuntimeError; make them InputError."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:
        raise InputError(f"{name}: {' '.join(str(exc).split())}") from exc


@operator("downcoef", family=FAMILY, summary="Approximation or detail coefficients at a level",
          params=[Param("part", str, "a", choices=("a", "d")), WAVELET, MODE,
                  Param("level", int, 1, min=1)], reference="pywt.downcoef", history=None)
def downcoef(x, *, part, wavelet, mode, level):
    return _pywt_call("downcoef", pywt.downcoef, part, x, _wavelet(wavelet), mode=mode,
                      level=level)


@operator("upcoef", family=FAMILY, summary="Reconstruct from coefficients of one part and level",
          params=[Param("part", str, "a", choices=("a", "d")), WAVELET,
                  Param("level", int, 1, min=1), Param("take", int, 0, min=0)],
          reference="pywt.upcoef", history=None)
def upcoef(x, *, part, wavelet, level, take):
    return _pywt_call("upcoef", pywt.upcoef, part, x, _wavelet(wavelet), level=level, take=take)


@operator("wavelet_threshold", family=FAMILY, summary="Wavelet-style thresholding of values",
          params=[Param("value", float, REQUIRED, min=0.0),
                  Param("mode", str, "soft", choices=("soft", "hard", "garrote", "greater",
                                                      "less")),
                  Param("substitute", float, 0.0)],
          reference="pywt.threshold", streamable=True)
def wavelet_threshold(x, *, value, mode, substitute, xp):
    if mode == "hard":
        return xp.where(xp.abs(x) < value, substitute, x)
    if mode == "soft":
        mag = xp.abs(x)
        shrink = xp.maximum(mag - value, 0)
        scale = xp.where(mag > 0, shrink / xp.where(mag > 0, mag, 1), 0)
        out = x * scale
        return xp.where(shrink > 0, out, substitute) if substitute else out
    if mode == "garrote":
        mag = xp.abs(x)
        safe = xp.where(mag > 0, mag, 1)
        out = x * (1 - value * value / (safe * safe))
        return xp.where(mag <= value, substitute, out)
    if mode == "greater":
        return xp.where(x < value, substitute, x)
    return xp.where(x > value, substitute, x)


@operator("dwt_max_level", family=FAMILY, summary="Deepest useful DWT level for a length",
          params=[Param("data_len", int, REQUIRED, min=0), WAVELET],
          reference="pywt.dwt_max_level", takes_input=False)
def dwt_max_level(*, data_len, wavelet):
    return pywt.dwt_max_level(data_len, _wavelet(wavelet))


@operator("dwt_coeff_len", family=FAMILY, summary="Length of DWT coefficients for a length",
          params=[Param("data_len", int, REQUIRED, min=1), WAVELET, MODE],
          reference="pywt.dwt_coeff_len", takes_input=False)
def dwt_coeff_len(*, data_len, wavelet, mode):
    return pywt.dwt_coeff_len(data_len, pywt.Wavelet(_wavelet(wavelet)), mode)


@operator("wavelet_filter_bank", family=FAMILY,
          summary="Decomposition and reconstruction filters (dec_lo, dec_hi, rec_lo, rec_hi)",
          params=[WAVELET], reference="pywt.Wavelet(w).filter_bank", takes_input=False)
def wavelet_filter_bank(*, wavelet):
    return tuple(np.asarray(f) for f in pywt.Wavelet(_wavelet(wavelet)).filter_bank)


@operator("scale2frequency", family=FAMILY, summary="Normalised frequency of CWT scales",
          params=[Param("wavelet", str, "morl")], reference="pywt.scale2frequency",
          history=None)
def scale2frequency(x, *, wavelet):
    return pywt.scale2frequency(wavelet, x)


@operator("wavelet_packet", family=FAMILY,
          summary="Wavelet packet leaves at maxlevel, frequency ordered: (n_leaves, n_coeffs)",
          params=[WAVELET, MODE, Param("maxlevel", int, 3, min=1, max=16)],
          reference="pywt.WaveletPacket(...).get_level(maxlevel, 'freq')", history=None)
def wavelet_packet(x, *, wavelet, mode, maxlevel):
    if np.ndim(x) != 1:
        raise operator_error(InputError, "wavelet_packet", f"input must be 1-D, got shape {np.shape(x)}")
    wp = pywt.WaveletPacket(x, _wavelet(wavelet), mode=mode, maxlevel=maxlevel)
    return np.stack([node.data for node in wp.get_level(maxlevel, "freq")])
