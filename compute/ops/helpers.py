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

__all__ = ["as_float", "float_dtype", "frame_magnitudes", "frames", "sums_at"]


def float_dtype(x: Any) -> Any:
    """The float type for ``x``: float32 for float32/complex64/small int input, else float64.

    Parameters
    ----------
    x : array
        Any array with a ``dtype`` (NumPy or CuPy).

    Returns
    -------
    type
        ``numpy.float32`` for float16, float32, complex64 and 8- or 16-bit integers;
        ``numpy.float64`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> float_dtype(np.zeros(2, np.int16)).__name__, float_dtype(np.zeros(2, np.int32)).__name__
    ('float32', 'float64')
    """
    return np.float32 if np.dtype(x.dtype) in (np.float32, np.complex64, np.float16,
                                                np.int8, np.uint8, np.int16, np.uint16) \
        else np.float64


def as_float(x: Any, xp: Any) -> Any:
    """Integer/bool input as float (float32 for small ints), floats unchanged.

    Parameters
    ----------
    x : array
        The input (NumPy or CuPy).
    xp : module
        The array namespace of ``x``.

    Returns
    -------
    array
        ``x`` itself when it is float or complex, else a copy of type
        :func:`float_dtype`.

    Examples
    --------
    >>> import numpy as np
    >>> as_float(np.arange(3, dtype=np.int16), np).dtype
    dtype('float32')
    """
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



def sums_at(x: Any, kernels: list[tuple[int, Any]], hop: int, n_out: int, xp: Any) -> Any:
    """Sliding dot products evaluated only where they are wanted.

    ``y[..., i, m] = sum_j x[..., first_i + m*hop + j] * kernel_i[j]`` for each
    ``(first_i, kernel_i)`` of ``kernels``, with ``x`` taken as zeros outside
    its samples: ``n_out`` sums per kernel, instead of a full convolution
    sampled every ``hop``.  Kernels of similar reach are stacked into one
    matrix product (each padded to the longest of its group, at most twice
    its length); frames are gathered in blocks of about four million samples.

    Parameters
    ----------
    x : array
        Signal(s), time on the last axis.
    kernels : list of (int, array)
        ``(first, kernel)``: the sample offset of each kernel's first tap and its
        taps (real or complex, 1-D).
    hop : int
        Samples between the evaluation points.
    n_out : int
        Sums per kernel.
    xp : module
        The array namespace of ``x``.

    Returns
    -------
    array
        Shaped ``(..., len(kernels), n_out)``; complex when a kernel is, at least
        float32.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(8.0)[None]
    >>> sums_at(x, [(0, np.array([1.0, 1.0])), (1, np.array([1.0]))], 2, 3, np)
    array([[[1., 5., 9.],
            [1., 3., 5.]]])
    """
    n = int(x.shape[-1])
    spans = [(int(f), int(f) + int(k.shape[-1])) for f, k in kernels]
    lo = min([0] + [a for a, _ in spans])
    hi = max([n] + [b + (n_out - 1) * hop for _, b in spans])
    if lo < 0 or hi > n:
        x = xp.pad(x, [(0, 0)] * (x.ndim - 1) + [(-lo, hi - n)])
    complex_k = any(xp.iscomplexobj(xp.asarray(k)) for _, k in kernels)
    out_type = xp.result_type(x.dtype, np.complex64 if complex_k else np.float32)
    out = xp.zeros(x.shape[:-1] + (len(kernels), n_out), dtype=out_type)
    order = sorted(range(len(kernels)), key=lambda i: spans[i][0] - spans[i][1])
    while order:
        longest = spans[order[0]][1] - spans[order[0]][0]
        group = [i for i in order if 2 * (spans[i][1] - spans[i][0]) >= longest]
        order = [i for i in order if i not in group]
        a = min(spans[i][0] for i in group)
        b = max(spans[i][1] for i in group)
        mat = np.zeros((b - a, len(group)), dtype=np.result_type(*[
            np.asarray(kernels[i][1]).dtype for i in group]))
        for c, i in enumerate(group):
            mat[spans[i][0] - a:spans[i][1] - a, c] = np.asarray(kernels[i][1])
        split = mat.dtype.kind == "c" and not xp.iscomplexobj(x)
        if split:  # a real signal: two real products
            mat = np.concatenate([mat.real, mat.imag], axis=1)
        mat = xp.asarray(mat.astype(out_type if xp.iscomplexobj(x) else float_dtype(x)))
        width = b - a
        block = max(1, (1 << 22) // width)
        for m0 in range(0, n_out, block):
            m1 = min(m0 + block, n_out)
            first = (a - lo) + m0 * hop
            seg = x[..., first:first + (m1 - m0 - 1) * hop + width]
            if xp is np:  # overlapping frames as a view, one contiguous copy per block
                seg = np.ascontiguousarray(
                    np.lib.stride_tricks.sliding_window_view(seg, width, axis=-1)[..., ::hop, :])
            else:
                seg = seg[..., xp.arange(m1 - m0)[:, None] * hop + xp.arange(width)[None, :]]
            r = seg @ mat  # (..., frames, columns)
            if split:
                r = r[..., :len(group)] + 1j * r[..., len(group):]
            out[..., group, m0:m1] = xp.swapaxes(r, -1, -2)
    return out
