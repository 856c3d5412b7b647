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


def axes_tuple(axes: Any) -> tuple[int, ...] | None:
    """An ``"array"`` parameter of axes as a tuple of ints (None stays None)."""
    if axes is None:
        return None
    try:
        return tuple(int(a) for a in np.atleast_1d(np.asarray(axes)).tolist())
    except (TypeError, ValueError):
        return axes  # not integers: scipy's own check names the problem


def on_host(xp: Any, path: str, *args: Any, **kwargs: Any) -> Any:
    """``scipy.<path>(*args, **kwargs)`` on the host, the result in ``xp``'s namespace.

    For the options a cupyx function lacks (a DCT type, a keyword): the
    common case stays on the device, the rare one takes a round trip.
    """
    result = scipy_fn(np, path)(*to_host(list(args)), **to_host(dict(kwargs)))
    return to_device(result, xp_name(xp))
