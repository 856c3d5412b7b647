"""Short-time spectra.

:func:`spectrogram` matches ``scipy.signal.spectrogram`` (``detrend=False``,
no padding, periodic window) and is faster: frames are strided views, the
window and the scaling are applied once per block, and float32 input stays
float32.  :class:`StftParams` holds a validated configuration with the derived
axes a view needs (``frequencies``, ``frame_times``), in the spirit of
``scipy.signal.ShortTimeFFT``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.fft
import scipy.signal

from .errors import Cancelled, InputError

SCALINGS = ("psd", "spectrum", "magnitude")
#: window names offered in menus; any name scipy.signal.get_window knows works
COMMON_WINDOWS = ("hann", "hamming", "blackman", "blackmanharris", "nuttall",
                  "flattop", "bartlett", "boxcar", "cosine", "tukey", "kaiser,8")
#: frames transformed per block: bounds memory and gives cancellation points
FRAMES_PER_BLOCK = 2048


@lru_cache(maxsize=64)
def get_window(window: str | tuple, nfft: int) -> np.ndarray:
    """A periodic (DFT-even) window as float64, with a clear error for bad names.

    ``window`` is a scipy window name, or a tuple such as ``("kaiser", 8.0)``;
    a string ``"kaiser,8"`` is read as that tuple.
    """
    spec = parse_window(window)
    try:
        w = scipy.signal.get_window(spec, nfft, fftbins=True)
    except (ValueError, TypeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else ""
        detail = "" if "window name" in detail or "window type" in detail else f" ({detail})"
        raise InputError(
            f"window={window!r} is not a window scipy.signal.get_window knows{detail}; "
            f"try one of: {', '.join(COMMON_WINDOWS)}") from None
    w = np.asarray(w, dtype=np.float64)
    w.setflags(write=False)
    return w


def parse_window(window: str | tuple) -> str | tuple:
    """``"kaiser,8"`` -> ``("kaiser", 8.0)``; other names are returned as they are."""
    if isinstance(window, str) and "," in window:
        name, *args = (s.strip() for s in window.split(","))
        try:
            return (name, *(float(a) for a in args))
        except ValueError:
            raise InputError(f"window={window!r}: parameters after the name must be "
                             "numbers, e.g. 'kaiser,8'") from None
    return window


def window_text(window: str | tuple) -> str:
    """The text form of a window: ``("kaiser", 8.0)`` -> ``"kaiser,8"``."""
    if isinstance(window, (tuple, list)):
        return ",".join(f"{w:g}" if isinstance(w, float) else str(w) for w in window)
    return str(window)


@dataclass(frozen=True)
class StftParams:
    """A validated short-time Fourier configuration.

    Parameters
    ----------
    nfft : int
        Frame length in samples (also the FFT length).
    hop : int
        Samples between frame starts.
    window : str or tuple
        Window name for ``scipy.signal.get_window``.
    scaling : {"psd", "spectrum", "magnitude"}
        ``psd``: power spectral density (unit**2/Hz, one-sided doubled),
        like scipy's ``scaling="density", mode="psd"``.
        ``spectrum``: power spectrum (unit**2, one-sided doubled), scipy's
        ``scaling="spectrum", mode="psd"``.
        ``magnitude``: amplitude spectrum ``|X| / sum(w)`` (unit), scipy's
        ``scaling="spectrum", mode="magnitude"``.
    """

    nfft: int = 1024
    hop: int = 256
    window: str | tuple = "hann"
    scaling: str = "psd"

    def __post_init__(self) -> None:
        nfft, hop = self.nfft, self.hop
        if isinstance(nfft, bool) or not isinstance(nfft, (int, np.integer)) or nfft < 2:
            raise InputError(f"nfft={nfft!r} must be an integer >= 2")
        if isinstance(hop, bool) or not isinstance(hop, (int, np.integer)) or hop < 1:
            raise InputError(f"hop={hop!r} must be an integer >= 1")
        if self.scaling not in SCALINGS:
            raise InputError(f"scaling={self.scaling!r} must be one of {', '.join(SCALINGS)}")
        window = parse_window(self.window)
        if isinstance(window, list):
            window = tuple(window)
        object.__setattr__(self, "window", window)  # "kaiser,8" -> ("kaiser", 8.0)
        get_window(self.window, int(nfft))  # validates the name

    @property
    def win(self) -> np.ndarray:
        """The periodic window of length ``nfft``."""
        return get_window(self.window, self.nfft)

    def n_frames(self, n_samples: int) -> int:
        """Number of whole frames in ``n_samples`` samples."""
        return 0 if n_samples < self.nfft else (n_samples - self.nfft) // self.hop + 1

    def check_length(self, n_samples: int, what: str = "the recording") -> None:
        """Raise :class:`InputError` when ``n_samples`` cannot hold one frame."""
        if n_samples < self.nfft:
            raise InputError(f"nfft={self.nfft} is larger than {what} "
                             f"({n_samples} samples); choose nfft <= {n_samples}")

    def frequencies(self, fs: float, two_sided: bool = False) -> np.ndarray:
        """Bin frequencies in Hz: ``rfftfreq`` or, two-sided, ``fftshift(fftfreq)``."""
        if two_sided:
            return np.fft.fftshift(np.fft.fftfreq(self.nfft, 1.0 / fs))
        return np.fft.rfftfreq(self.nfft, 1.0 / fs)

    def frame_times(self, n_samples: int, fs: float, first: int = 0) -> np.ndarray:
        """Centre time in seconds of each frame ``first, first+1, ...``."""
        k = np.arange(first, self.n_frames(n_samples), dtype=np.float64)
        return (k * self.hop + self.nfft / 2) / fs

    def scale(self, fs: float) -> float:
        """Factor applied to the squared (or, for magnitude, plain) FFT values."""
        w = self.win
        if self.scaling == "psd":
            return 1.0 / (fs * float(np.sum(w * w)))
        if self.scaling == "spectrum":
            return 1.0 / float(np.sum(w)) ** 2
        return 1.0 / float(np.sum(w))

    @property
    def is_power(self) -> bool:
        """True when values are power (dB = 10 log10), False for amplitude (20 log10)."""
        return self.scaling != "magnitude"

    @property
    def units_suffix(self) -> str:
        """What the scaling appends to the sample units (``"**2/Hz"`` for a PSD)."""
        return {"psd": "**2/Hz", "spectrum": "**2", "magnitude": ""}[self.scaling]


@lru_cache(maxsize=64)
def _cast_window(window: str | tuple, nfft: int, ftype: type) -> np.ndarray:
    """The periodic window in the compute type (cached; read-only)."""
    w = get_window(window, nfft).astype(ftype)
    w.setflags(write=False)
    return w


@lru_cache(maxsize=256)
def _scale(params: StftParams, fs: float) -> float:
    """:meth:`StftParams.scale`, cached: the window sum is not recomputed per block."""
    return params.scale(fs)


def stft_frames(x: np.ndarray, params: StftParams, fs: float, *, first: int = 0,
                last: int | None = None, two_sided: bool | None = None) -> np.ndarray:
    """Scaled spectra of frames ``first:last`` of a signal, time along the last axis.

    Frame ``k`` covers samples ``k*hop : k*hop + nfft`` of ``x``.  A 1-D signal
    gives an array shaped ``(n_freq, n)``; a signal shaped ``(..., samples)``
    (e.g. channels first) gives ``(..., n_freq, n)``, each row equal, bit for
    bit, to the 1-D result for that row.  Power for ``psd``/``spectrum``
    scaling, amplitude for ``magnitude``.  Real input gives the one-sided
    spectrum (with the PSD doubling), complex input the two-sided spectrum,
    centred (``fftshift``).
    """
    out = stft_frame_rows(x, params, fs, first=first, last=last, two_sided=two_sided)
    return np.ascontiguousarray(np.swapaxes(out, -1, -2))


def stft_frame_rows(x: np.ndarray, params: StftParams, fs: float, *, first: int = 0,
                    last: int | None = None, two_sided: bool | None = None) -> np.ndarray:
    """:func:`stft_frames` with the frames before the frequencies: ``(..., n, n_freq)``.

    The same numbers, laid out one spectrum per row (C-contiguous), as a live
    view appends them; time runs along the last axis of ``x``.
    """
    x = np.asarray(x)
    if x.ndim < 1:
        raise InputError(f"expected a signal, got shape {x.shape}")
    n_total = params.n_frames(x.shape[-1])
    last = n_total if last is None else min(last, n_total)
    complex_in = np.iscomplexobj(x)
    if two_sided is None:
        two_sided = complex_in
    ftype = np.float32 if x.dtype in (np.float32, np.complex64) else np.float64
    n_freq = params.nfft if two_sided else params.nfft // 2 + 1
    if last <= first:
        return np.zeros((*x.shape[:-1], 0, n_freq), dtype=ftype)
    # frames k = first..last-1 as a strided view: (..., frames, nfft)
    step = x.strides[-1]
    frames = np.lib.stride_tricks.as_strided(
        x[..., first * params.hop:], shape=(*x.shape[:-1], last - first, params.nfft),
        strides=(*x.strides[:-1], params.hop * step, step), writeable=False)
    seg = frames * _cast_window(params.window, params.nfft, ftype)
    if two_sided:
        spec = scipy.fft.fft(seg, axis=-1)
        spec = np.fft.fftshift(spec, axes=-1)
    else:
        spec = scipy.fft.rfft(seg, axis=-1)
    scale = _scale(params, fs)
    if params.scaling == "magnitude":
        out = np.abs(spec)
        out *= ftype(scale)
    else:
        out = spec.real * spec.real
        out += spec.imag * spec.imag
        out *= ftype(scale)
        if not two_sided:
            # one-sided power: energy of the negative frequencies folded in
            if params.nfft % 2:
                out[..., 1:] *= 2
            else:
                out[..., 1:-1] *= 2
    return np.ascontiguousarray(out.astype(ftype, copy=False))


def iter_frame_blocks(n_frames: int, block: int = FRAMES_PER_BLOCK) -> Iterator[tuple[int, int]]:
    """``(first, last)`` frame ranges of at most ``block`` frames."""
    for k0 in range(0, n_frames, block):
        yield k0, min(k0 + block, n_frames)


def spectrogram(x: np.ndarray, fs: float, *, nfft: int = 1024, hop: int = 256,
                window: str | tuple = "hann", scaling: str = "psd", axis: int = -1,
                progress: Callable[[float], None] | None = None,
                cancelled: Callable[[], bool] | None = None,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spectrogram of a signal.

    Parameters
    ----------
    x : array_like
        Signal; time runs along ``axis``.  Real input gives one-sided spectra,
        complex input two-sided spectra centred on 0 Hz.
    fs : float
        Sample rate in Hz.
    nfft, hop : int
        Frame length and frame step in samples.
    window : str or tuple
        Window name (``scipy.signal.get_window``).
    scaling : {"psd", "spectrum", "magnitude"}
        See :class:`StftParams`.
    axis : int
        Time axis of ``x``.
    progress, cancelled : callable, optional
        ``progress(fraction)`` is called after each block of frames;
        ``cancelled()`` returning True stops the work with :class:`Cancelled`.

    Returns
    -------
    frequencies : ndarray, shape (n_freq,)
    times : ndarray, shape (n_frames,)
        Frame centres in seconds.
    S : ndarray, shape (..., n_freq, n_frames)
        float32 for float32/int input, float64 for float64 input; the other
        axes of ``x`` lead.
    """
    params = StftParams(nfft, hop, window, scaling)
    if not fs or fs <= 0:
        raise InputError(f"fs={fs!r} must be a positive sample rate in Hz")
    x = np.asarray(x)
    if x.dtype.kind in "iub":
        x = x.astype(np.float32)
    if x.ndim == 0:
        raise InputError("expected a signal, got a scalar")
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    params.check_length(n, "the signal")
    n_frames = params.n_frames(n)
    two_sided = np.iscomplexobj(x)
    freqs = params.frequencies(fs, two_sided)
    times = params.frame_times(n, fs)
    lead = x.shape[:-1]
    flat = x.reshape(-1, n)
    ftype = np.float32 if x.dtype in (np.float32, np.complex64, np.float16) else np.float64
    out = np.empty((flat.shape[0], freqs.size, n_frames), dtype=ftype)
    blocks = list(iter_frame_blocks(n_frames))
    total = len(blocks) * flat.shape[0]
    done = 0
    for i, row in enumerate(flat):
        for k0, k1 in blocks:
            if cancelled is not None and cancelled():
                raise Cancelled()
            out[i, :, k0:k1] = stft_frames(row, params, fs, first=k0, last=k1,
                                           two_sided=two_sided)
            done += 1
            if progress is not None:
                progress(done / total)
    return freqs, times, out.reshape(*lead, freqs.size, n_frames)


# -- the mel scale --------------------------------------------------------------------

_MEL_F_SP = 200.0 / 3          # Slaney: Hz per mel below the break
_MEL_LOGSTEP = math.log(6.4) / 27.0
_MEL_BREAK_HZ = 1000.0
_MEL_BREAK = _MEL_BREAK_HZ / _MEL_F_SP


def hz_to_mel(f: Any, *, htk: bool = True, xp: Any = np) -> Any:
    """Frequency in Hz to mel.

    ``htk=True``: O'Shaughnessy / HTK, ``2595 log10(1 + f/700)`` (the display's
    mel axis); ``htk=False``: Slaney's (Auditory Toolbox, librosa's default),
    linear below 1 kHz and logarithmic above.  ``xp`` is the array namespace.
    """
    f = xp.asarray(f, dtype=xp.float64)
    if htk:
        return 2595.0 * xp.log10(1.0 + f / 700.0)
    log_part = _MEL_BREAK + xp.log(xp.maximum(f, 1e-30) / _MEL_BREAK_HZ) / _MEL_LOGSTEP
    return xp.where(f >= _MEL_BREAK_HZ, log_part, f / _MEL_F_SP)


def mel_to_hz(m: Any, *, htk: bool = True, xp: Any = np) -> Any:
    """Mel to frequency in Hz: the inverse of :func:`hz_to_mel` (same ``htk``)."""
    m = xp.asarray(m, dtype=xp.float64)
    if htk:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    return xp.where(m >= _MEL_BREAK, _MEL_BREAK_HZ * xp.exp(_MEL_LOGSTEP * (m - _MEL_BREAK)),
                    _MEL_F_SP * m)


def to_db(values: np.ndarray, *, power: bool = True, floor: float = 1e-20) -> np.ndarray:
    """Decibels: ``10 log10`` of power or ``20 log10`` of amplitude, floored."""
    v = np.maximum(values, floor if power else np.sqrt(floor))
    db = np.log10(v, dtype=np.float32)
    db *= 10.0 if power else 20.0
    return db
