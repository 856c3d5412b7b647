"""Shared parameter declarations and helpers of the built-in operators."""

from __future__ import annotations

from typing import Any

import numpy as np
from specscope.compute.backend import scipy_fn, xp_name
from specscope.compute.operators.registry import Param

__all__ = [
    "AXES",
    "AXIS",
    "DTYPE",
    "NORM",
    "as_float",
    "float_dtype",
    "frames",
    "scipy_fn",
    "xp_name",
]

AXIS = Param("axis", int, -1, help="axis along which to operate")
AXES = Param("axes", "array", None, help="axes to transform (all when omitted)")
NORM = Param("norm", str, "backward", choices=("backward", "ortho", "forward"),
             help="FFT normalisation, as scipy.fft")
DTYPE = Param("dtype", str, "float64", choices=("float32", "float64"),
              help="output sample type")


def float_dtype(x: Any) -> Any:
    """float32 for float32/complex64/small int input, else float64."""
    return np.float32 if np.dtype(x.dtype) in (np.float32, np.complex64, np.float16,
                                                np.int8, np.uint8, np.int16, np.uint16) \
        else np.float64


def as_float(x: Any, xp: Any) -> Any:
    """Integer/bool input as float (float32 for small ints), floats unchanged."""
    if x.dtype.kind in "biu":
        return x.astype(float_dtype(x))
    return x


def frames(x: Any, nfft: int, hop: int, xp: Any) -> Any:
    """Frames ``(..., n_frames, nfft)`` of the last axis, frame ``k`` at ``k*hop``."""
    n = x.shape[-1]
    n_frames = 0 if n < nfft else (n - nfft) // hop + 1
    idx = (xp.arange(n_frames)[:, None] * hop + xp.arange(nfft)[None, :])
    return x[..., idx]


def axes_tuple(axes: Any) -> tuple[int, ...] | None:
    """An ``"array"`` parameter of axes as a tuple of ints (None stays None)."""
    if axes is None:
        return None
    return tuple(int(a) for a in np.atleast_1d(np.asarray(axes)).tolist())


def shape_tuple(s: Any) -> tuple[int, ...] | None:
    return axes_tuple(s)
