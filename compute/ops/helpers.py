"""Array helpers of the built-in operators that plugins may use too.

Each is written against an array namespace ``xp`` (NumPy or CuPy), so a
plugin's ``xp`` body can build on them and run on every backend::

    from specscope.compute.ops import frame_magnitudes, frames

Re-exported from :mod:`specscope.compute.ops`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import spectral
from ..errors import InputError

__all__ = ["as_float", "float_dtype", "frame_magnitudes", "frames"]


def float_dtype(x: Any) -> Any:
    """The float type for ``x``: float32 for float32/complex64/small int input, else float64."""
    return np.float32 if np.dtype(x.dtype) in (np.float32, np.complex64, np.float16,
                                                np.int8, np.uint8, np.int16, np.uint16) \
        else np.float64


def as_float(x: Any, xp: Any) -> Any:
    """Integer/bool input as float (float32 for small ints), floats unchanged."""
    if x.dtype.kind in "biu":
        return x.astype(float_dtype(x))
    return x


def frames(x: Any, nfft: int, hop: int, xp: Any) -> Any:
    """Frames ``(..., n_frames, nfft)`` of the last axis, frame ``k`` at ``k*hop``.

    Parameters
    ----------
    x : array
        Signal(s), time on the last axis.
    nfft : int
        Frame length in samples.
    hop : int
        Samples between frame starts.
    xp : module
        The array namespace of ``x``.

    Returns
    -------
    array
        A copy of the frames; no padding, so a partial last frame is dropped
        and a signal shorter than ``nfft`` gives no frames.
    """
    n = x.shape[-1]
    n_frames = 0 if n < nfft else (n - nfft) // hop + 1
    idx = (xp.arange(n_frames)[:, None] * hop + xp.arange(nfft)[None, :])
    return x[..., idx]


def frame_magnitudes(x: Any, nfft: int, hop: int, window: Any, xp: Any,
                     name: str) -> tuple[Any, Any]:
    """Magnitude spectra ``|rfft(frame * window)|`` of the frames of a real signal.

    Parameters
    ----------
    x : array
        Real signal(s), time on the last axis; integers are taken as floats.
    nfft : int
        Frame and FFT length.
    hop : int
        Samples between frames.
    window : str or tuple
        Window name or ``(name, parameter)``, as :func:`specscope.compute.get_window`.
    xp : module
        The array namespace of ``x``.
    name : str
        The operator named in error messages.

    Returns
    -------
    dtype, array
        The float dtype of the computation and the magnitudes, shaped
        ``(..., n_frames, nfft // 2 + 1)``.

    Raises
    ------
    InputError
        For complex input or a signal shorter than one frame.
    """
    x = as_float(x, xp)
    if x.dtype.kind == "c":
        raise InputError(f"{name}: input must be real")
    if x.shape[-1] < nfft:
        raise InputError(f"{name}: nfft={nfft} is larger than the signal ({x.shape[-1]} "
                         f"samples); choose nfft <= {x.shape[-1]}")
    win = xp.asarray(spectral.get_window(window, nfft).astype(x.dtype))
    return x.dtype, xp.abs(xp.fft.rfft(frames(x, nfft, hop, xp) * win, axis=-1))
