"""Parameter declarations shared by the built-in operator families."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import scipy_fn, to_device, to_host, xp_name
from ..params import Param

__all__ = ["AXES", "AXIS", "DTYPE", "NORM", "axes_tuple", "on_host"]

AXIS = Param("axis", int, -1, help="axis along which to operate")
AXES = Param("axes", "array", None, help="axes to transform (all when omitted)")
NORM = Param("norm", str, "backward", choices=("backward", "ortho", "forward"),
             help="FFT normalisation, as scipy.fft")
DTYPE = Param("dtype", str, "float64", choices=("float32", "float64"),
              help="output sample type")


def axes_tuple(axes: Any, scipy_checks: bool = False) -> tuple[int, ...] | Any:
    """An ``"array"`` parameter of axes as a tuple of ints (None stays None).

    With ``scipy_checks`` anything but a flat list of integers is returned as it
    is, for scipy's own check to name the problem (``axes=[1.0, 2.0]``).
    """
    if axes is None:
        return None
    arr = np.atleast_1d(np.asarray(axes))
    if scipy_checks and (arr.ndim != 1 or arr.dtype.kind not in "iu"):
        return axes
    return tuple(int(a) for a in arr.tolist())


def on_host(xp: Any, path: str, *args: Any, **kwargs: Any) -> Any:
    """``scipy.<path>(*args, **kwargs)`` on the host, the result in ``xp``'s namespace.

    For the options a cupyx function lacks (a DCT type, a keyword): the
    common case stays on the device, the rare one takes a round trip.
    """
    result = scipy_fn(np, path)(*to_host(list(args)), **to_host(dict(kwargs)))
    return to_device(result, xp_name(xp))
