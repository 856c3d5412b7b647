"""Short-time spectra: the configuration, the windows, the NumPy STFT kernel, dB, mel.

:class:`StftParams` holds a validated configuration with the derived axes a
view needs (``frequencies``, ``frame_times``), in the spirit of
``scipy.signal.ShortTimeFFT``.  :func:`stft_kernel` is the NumPy
implementation of the ``stft_power`` operator (frames -> window -> FFT ->
power), the one kernel behind every spectrogram: the public
:func:`specscope.compute.spectrogram` (in :mod:`specscope.compute.ops.timefreq`),
the tile engine, the exports, the pipeline's spectrogram stage, live blocks and
batch runs call it through the operator core, so a backend choice and
:func:`specscope.compute.operators.profile` see all of them.  Its numbers are
``scipy.signal.spectrogram``'s (``detrend=False``, no padding, periodic window).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.fft

from .errors import InputError, shown
from .params import MAX_HOP, check_frame
from .types import Layout, Scaling, choices

SCALINGS = choices(Scaling)
#: window names offered in menus; any name scipy.signal.get_window knows works
COMMON_WINDOWS = ("hann", "hamming", "blackman", "blackmanharris", "nuttall",
                  "flattop", "bartlett", "boxcar", "cosine", "tukey", "kaiser,8")
#: the most a window parameter that counts work may be (taylor's nbar: time grows with
#: its square)
MAX_WINDOW_COUNTS = 1000
#: window name -> position of a counting parameter -> (its name, its largest value)
_WINDOW_COUNTS = {"taylor": {0: ("nbar", MAX_WINDOW_COUNTS)}}
#: frames transformed per block: bounds memory and gives cancellation points
FRAMES_PER_BLOCK = 2048


@lru_cache(maxsize=64)
def get_window(window: str | tuple, nfft: int) -> np.ndarray:
    """A periodic (DFT-even) window as float64, with a clear error for bad names.

    ``window`` is a scipy window name, or a tuple such as ``("kaiser", 8.0)``;
    a string ``"kaiser,8"`` is read as that tuple.  Results are cached.

    Parameters
    ----------
    window : str or tuple
        A name ``scipy.signal.get_window`` knows, with parameters after commas
        (``"kaiser,8"``) or in a tuple.
    nfft : int
        The window length in samples.

    Returns
    -------
    ndarray
        Read-only float64 array of ``nfft`` values.

    Raises
    ------
    InputError
        An unknown name, parameters scipy refuses or that are not finite numbers,
        or a window of only zeros or non-finite values.

    Examples
    --------
    >>> get_window("hann", 4)
    array([0. , 0.5, 1. , 0.5])
    """
    import scipy.signal
    spec = parse_window(window)
    _check_window_counts(window, spec)
    try:
        with np.errstate(all="ignore"):  # nonsense parameters are refused below
            w = scipy.signal.get_window(spec, nfft, fftbins=True)
    except ArithmeticError:  # 10**(at/20) of chebwin,1e9; taylor's sll=1e300
        raise InputError(f"window={shown(window)}: a parameter is out of the range the window "
                         "can be computed for (e.g. 'chebwin,100', 'taylor,4,30')") from None
    except (ValueError, TypeError) as exc:
        # a window scipy has, with parameters it refused: its words say which
        name = spec[0] if isinstance(spec, tuple) and spec else spec
        known = isinstance(name, str) and name.lower() in _scipy_windows()
        first = str(exc).splitlines()[0] if str(exc) else ""
        detail = f" ({first})" if known and first else ""
        raise InputError(
            f"window={window!r} is not a window scipy.signal.get_window knows{detail}; "
            f"try one of: {', '.join(COMMON_WINDOWS)}") from None
    w = np.asarray(w, dtype=np.float64)
    if not np.all(np.isfinite(w)) or not np.any(w):
        bad = "values that are not finite" if not np.all(np.isfinite(w)) else "only zeros"
        raise InputError(f"window={shown(window)} gives {bad} at nfft={nfft}; check its "
                         "parameters (e.g. 'kaiser,8')")
    w.setflags(write=False)
    return w


@lru_cache(maxsize=1)
def _scipy_windows() -> frozenset[str]:
    """The window functions of scipy.signal.windows, by name (get_window knows some
    aliases too)."""
    import scipy.signal

    return frozenset(n.lower() for n in scipy.signal.windows.__all__) - {"get_window"}


def _check_window_counts(window: str | tuple, spec: str | tuple) -> None:
    """Refuse a parameter that counts loop passes beyond :data:`MAX_WINDOW_COUNTS`."""
    if not isinstance(spec, tuple) or not spec or not isinstance(spec[0], str):
        return
    for at, (param, most) in _WINDOW_COUNTS.get(spec[0].lower(), {}).items():
        if len(spec) > at + 1:
            value = spec[at + 1]
            if isinstance(value, (int, float, np.integer, np.floating)) and not value <= most:
                raise InputError(f"window={shown(window)}: {param}={value:g} must be at most "
                                 f"{most}")


def parse_window(window: str | tuple) -> str | tuple:
    """``"kaiser,8"`` -> ``("kaiser", 8.0)``; other names are returned as they are."""
    if isinstance(window, str) and "," in window:
        name, *args = (s.strip() for s in window.split(","))
        try:
            values = tuple(float(a) for a in args)
        except ValueError:
            raise InputError(f"window={shown(window)}: parameters after the name must be "
                             "numbers, e.g. 'kaiser,8'") from None
        if not all(math.isfinite(v) for v in values):
            raise InputError(f"window={shown(window)}: parameters after the name must be "
                             "finite numbers, e.g. 'kaiser,8'")
        return (name, *values)
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
    scaling: Scaling = "psd"

    def __post_init__(self) -> None:
        # sizes first: the window is allocated below
        nfft = check_frame(self.nfft, "nfft", minimum=2)
        check_frame(self.hop, "hop", maximum=MAX_HOP)
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

    def operator_params(self) -> dict[str, Any]:
        """The parameters of the ``stft_power`` operator: ``call("stft_power", x, **these)``."""
        return {"nfft": int(self.nfft), "hop": int(self.hop), "window": self.window,
                "scaling": self.scaling}


# -- the STFT kernel on NumPy ---------------------------------------------------------
#
# Implementation notes.  Every spectrogram of the app (tiles, exports, pipeline
# stages, live blocks, batch) runs the ``stft_power`` operator of
# :mod:`specscope.compute.ops.timefreq`, whose NumPy implementation is
# :func:`stft_kernel`.  It lives here, in a base room, so that code below the
# operator core (annotation measurements) computes the same numbers.
#
# - Frames are a strided view of the signal: no copy before the window multiply.
# - The scaling is folded into the window: psd/spectrum power ``|X w|**2 * s`` is
#   ``|X (w sqrt(s))|**2``, the one-sided doubling too (``sqrt(2 s)``), and the DC
#   and Nyquist bins, which are not doubled, are halved afterwards (two columns).
# - Work is split into blocks of :data:`KERNEL_FRAMES` frames, whose window product
#   and spectra stay in cache, and a thread pool runs tasks of :data:`TASK_BLOCKS`
#   blocks: scipy.fft and NumPy's ufuncs release the GIL, so the tasks run in
#   parallel.  The pool's threads take the tasks from one queue as they finish the
#   last (65536 frames are 64 tasks of about 2 ms), so a thread descheduled on a
#   busy machine holds the call back by one task at most.  A task of one block
#   cost a sixth more on two threads (the queue's hand-offs and wake-ups).
# - |X|**2 is computed in place on the spectra viewed as (re, im) float pairs:
#   one square and one add, no complex temporaries, the add writing straight
#   into the destination (the two halves of the fftshift for two-sided spectra).
#   In the ``freq`` layout the FFT writes its spectra transposed, frequency by
#   frame, into the workspace (pocketfft transforms several frames at once, so
#   adjacent frames' bins are written side by side), and the power rows go
#   straight into the destination's rows: no transposed copy (a ufunc writing a
#   transposed view is far slower, and a copy through a buffer cost a fifth of
#   the call).  The arithmetic is the same in both layouts.  The ``frames``
#   layout is still the faster (a fifth, on two threads: the power rows of a
#   block are one contiguous run), so the public ``spectrogram`` computes it and
#   returns its ``(freq, frames)`` view, the memory order of librosa's and
#   torch's spectrograms.
# - Nothing is allocated per task: each pool thread keeps a workspace (the
#   windowed frames and their spectra, :data:`KERNEL_FRAMES` rows) per
#   ``(nfft, dtype, sides)`` and reuses it.  Temporaries of ~1 MiB are above
#   glibc's initial mmap threshold, so allocating them per task would map,
#   fault in and unmap them on every task of a fresh process.  The FFTs write
#   into the workspace through pocketfft's ``out=`` (the engine behind
#   ``scipy.fft``, whose public functions always return a new array;
#   ``numpy.fft``'s ``out=`` transforms one row at a time, several times
#   slower); the complex FFT runs in place in the ``frames`` layout.

#: frames per workspace block of :func:`stft_kernel` (1024-sample frames: 1 MiB of float32 input)
KERNEL_FRAMES = 256
#: workspace blocks one pool task computes, one after the other (at most: a call
#: keeps :data:`TASKS_PER_THREAD` tasks per thread where it has that many blocks)
TASK_BLOCKS = 4
TASKS_PER_THREAD = 4
LAYOUTS = choices(Layout)
#: workspaces one thread keeps (one per recent ``(nfft, dtype, sides)``)
WORKSPACES_PER_THREAD = 4
_pool_state: dict[str, Any] = {"pool": None, "pid": None}
_pool_lock = threading.Lock()
_local = threading.local()

try:  # pocketfft's transforms into a caller's buffer (scipy.fft's own engine)
    from scipy.fft._pocketfft import pypocketfft as _pocketfft
except ImportError:  # pragma: no cover - another scipy layout
    _pocketfft = None


def kernel_threads() -> int:
    """Threads :func:`stft_kernel` uses: ``$SPECSCOPE_THREADS``, else the usable cores."""
    env = os.environ.get("SPECSCOPE_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor:
    # one pool per process: a pool inherited through fork has no threads
    with _pool_lock:
        if _pool_state["pool"] is None or _pool_state["pid"] != os.getpid():
            _pool_state["pool"] = ThreadPoolExecutor(kernel_threads(),
                                                     thread_name_prefix="specscope-stft")
            _pool_state["pid"] = os.getpid()
        return _pool_state["pool"]


def kernel_dtype(dtype: np.dtype) -> type:
    """The real type the kernel computes in: float32 unless the input is float64/complex128."""
    return np.float64 if np.dtype(dtype) in (np.float64, np.complex128) else np.float32


def workspace(nfft: int, ftype: type, two_sided: bool
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """This thread's buffers for one task: ``(frames, spectra, spectra_t)``.

    ``frames`` is ``(KERNEL_FRAMES, nfft)`` real (complex when two-sided),
    ``spectra`` ``(KERNEL_FRAMES, n_freq)`` complex (the frames buffer itself
    when two-sided: that transform runs in place), ``spectra_t`` ``(n_freq,
    KERNEL_FRAMES)`` complex (the ``freq`` layout's spectra, frequency by
    frame).  Allocated once per thread and ``(nfft, ftype, two_sided)``, the
    few most recent kept.
    """
    cache = getattr(_local, "workspaces", None)
    if cache is None:
        cache = _local.workspaces = OrderedDict()
    key = (int(nfft), np.dtype(ftype).char, bool(two_sided))
    ws = cache.get(key)
    if ws is None:
        ctype = np.complex64 if np.dtype(ftype) == np.float32 else np.complex128
        n_freq = nfft if two_sided else nfft // 2 + 1
        spec_t = np.empty((n_freq, KERNEL_FRAMES), ctype)
        if two_sided:
            seg = np.empty((KERNEL_FRAMES, nfft), ctype)
            ws = (seg, seg, spec_t)
        else:
            ws = (np.empty((KERNEL_FRAMES, nfft), ftype),
                  np.empty((KERNEL_FRAMES, n_freq), ctype), spec_t)
        cache[key] = ws
        while len(cache) > WORKSPACES_PER_THREAD:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return ws


@lru_cache(maxsize=64)
def kernel_window(params: StftParams, fs: float, ftype: type, two_sided: bool
                  ) -> np.ndarray:
    """The window with the scaling folded in (read-only; see the notes above)."""
    w = get_window(params.window, params.nfft)
    s = params.scale(fs)
    if params.scaling == "magnitude":
        w = w * s
    else:
        w = w * math.sqrt(s if two_sided else 2.0 * s)
    w = w.astype(ftype)
    w.setflags(write=False)
    return w


def _transform(seg: np.ndarray, spec: np.ndarray, two_sided: bool) -> np.ndarray:
    """The FFT of the rows of ``seg`` into ``spec``, any strides (in place when ``spec``
    is ``seg``)."""
    if _pocketfft is not None:
        if two_sided:
            return _pocketfft.c2c(seg, axes=(1,), forward=True, inorm=0, out=spec, nthreads=1)
        return _pocketfft.r2c(seg, axes=(1,), forward=True, inorm=0, out=spec, nthreads=1)
    # pragma: no cover - a scipy without pocketfft's module: the public API (a copy)
    spec[...] = (scipy.fft.fft if two_sided else scipy.fft.rfft)(seg, axis=-1, workers=1)
    return spec


def _power_into(spec: np.ndarray, dest: np.ndarray, ftype: type, power: bool) -> None:
    """``|spec|**2`` (or ``|spec|``) into ``dest`` of the same shape; squares ``spec`` in
    place (its last axis contiguous)."""
    if power:
        pairs = spec.view(ftype).reshape(*dest.shape, 2)
        np.square(pairs, out=pairs)
        np.add(pairs[..., 0], pairs[..., 1], out=dest)
    else:
        np.abs(spec, out=dest)


def stft_kernel(x: np.ndarray, params: StftParams, fs: float, *,
                two_sided: bool | None = None, layout: Layout = "frames",
                out: np.ndarray | None = None) -> np.ndarray:
    """Scaled spectra of every whole frame of ``x``: frames -> window -> FFT -> power.

    Frame ``k`` covers samples ``k*hop : k*hop + nfft`` of the last axis.  Power
    for ``psd``/``spectrum`` scaling, amplitude for ``magnitude`` (see
    :class:`StftParams`); real input gives the one-sided spectrum (with the
    PSD doubling), complex input (or ``two_sided=True``) the two-sided
    spectrum, centred (``fftshift``).  The numbers are
    ``scipy.signal.spectrogram``'s (``detrend=False``) in float32 for
    float32/integer input, float64 for float64 input.

    Parameters
    ----------
    x : ndarray, shape (..., n)
        Signal; leading axes (channels) are transformed independently.
    params : StftParams
    fs : float
        Sample rate in Hz (for the PSD scaling).
    two_sided : bool, optional
        Two-sided, centred spectra; default: whether ``x`` is complex.
    layout : {"frames", "freq"}
        ``frames``: shaped ``(..., n_frames, n_freq)`` (one spectrum per row, as
        a stream appends them); ``freq``: ``(..., n_freq, n_frames)``, the layout
        of :func:`specscope.compute.spectrogram`.
    out : ndarray, optional
        Where to write the result: C-contiguous, of the returned shape and dtype.

    Returns
    -------
    ndarray
        C-contiguous, float32 or float64 (``out`` when given).
    """
    x = np.asarray(x)
    if x.ndim < 1:
        raise InputError(f"expected a signal, got shape {x.shape}")
    if layout not in LAYOUTS:
        raise InputError(f"layout={layout!r} must be one of {', '.join(LAYOUTS)}")
    if x.dtype.kind in "iub" or x.dtype == np.float16:
        x = x.astype(np.float32)
    complex_in = x.dtype.kind == "c"
    two_sided = complex_in if two_sided is None else bool(two_sided)
    if complex_in and not two_sided:
        raise InputError("two_sided=False needs real input; complex signals have "
                         "two-sided spectra")
    ftype = kernel_dtype(x.dtype)
    nfft, hop = params.nfft, params.hop
    n_freq = nfft if two_sided else nfft // 2 + 1
    n = x.shape[-1]
    k = params.n_frames(n)
    lead = x.shape[:-1]
    shape = (*lead, k, n_freq) if layout == "frames" else (*lead, n_freq, k)
    if out is None:
        out = np.empty(shape, dtype=ftype)
    elif out.shape != shape or out.dtype != ftype or not out.flags.c_contiguous:
        raise InputError(f"out= must be a C-contiguous {np.dtype(ftype).name} array of "
                         f"shape {shape}, got {out.dtype.name} {out.shape}")
    if k == 0 or out.size == 0:
        return out
    flat = x.reshape(-1, n)
    dest = out.reshape(-1, *shape[-2:])
    win = kernel_window(params, float(fs), ftype, two_sided)
    power = params.is_power
    # bins that the one-sided doubling (folded into the window) must not double
    edges = [] if two_sided or not power else ([0, -1] if nfft % 2 == 0 else [0])
    half = nfft // 2
    lo, hi = slice(nfft - half, None), slice(None, nfft - half)  # fftshift: hi bins first

    def block(row: int, a: int, b: int) -> None:
        sig = flat[row]
        step = sig.strides[-1]
        frames = np.lib.stride_tricks.as_strided(
            sig[a * hop:], shape=(b - a, nfft), strides=(hop * step, step), writeable=False)
        seg_ws, spec_ws, spec_t_ws = workspace(nfft, ftype, two_sided)
        seg = seg_ws[:b - a]
        np.multiply(frames, win, out=seg)
        if layout == "frames":  # spectra frame by frame, power into the destination's rows
            spec = _transform(seg, spec_ws[:b - a], two_sided)
            pw = dest[row, a:b]
            parts = [(spec[:, lo], pw[:, :half]), (spec[:, hi], pw[:, half:])] \
                if two_sided else [(spec, pw)]  # two-sided: fftshift while writing
        else:  # spectra frequency by frame, power into the destination's rows
            spec = _transform(seg, spec_t_ws[:, :b - a].T, two_sided).T
            pw = dest[row, :, a:b]
            parts = [(spec[lo], pw[:half]), (spec[hi], pw[half:])] \
                if two_sided else [(spec, pw)]
        for part, into in parts:
            _power_into(part, into, ftype, power)
        for e in edges:  # the bins the one-sided doubling must not double
            line = pw[:, e] if layout == "frames" else pw[e]
            np.multiply(line, 0.5, out=line)

    def task(row: int, a: int, b: int) -> None:
        for s in range(a, b, KERNEL_FRAMES):
            block(row, s, min(s + KERNEL_FRAMES, b))

    threads = kernel_threads()
    blocks = flat.shape[0] * -(-k // KERNEL_FRAMES)
    # a few tasks per thread at least (a short call keeps one-block tasks)
    step = KERNEL_FRAMES * max(1, min(TASK_BLOCKS, blocks // (threads * TASKS_PER_THREAD)))
    tasks = [(r, a, min(a + step, k)) for r in range(flat.shape[0])
             for a in range(0, k, step)]
    if len(tasks) == 1 or threads == 1:
        for t in tasks:
            task(*t)
    else:
        for f in [_pool().submit(task, *t) for t in tasks]:
            f.result()  # re-raises a task's error here
    return out


def _frame_range(x: np.ndarray, params: StftParams, first: int, last: int | None
                 ) -> np.ndarray:
    """The samples of frames ``first:last`` of ``x`` (last axis)."""
    if x.ndim < 1:
        raise InputError(f"expected a signal, got shape {x.shape}")
    total = params.n_frames(x.shape[-1])
    last = max(first, total if last is None else min(last, total))
    if last == first:
        return x[..., :0]
    return x[..., first * params.hop:(last - 1) * params.hop + params.nfft]


def stft_frame_rows(x: np.ndarray, params: StftParams, fs: float, *, first: int = 0,
                    last: int | None = None, two_sided: bool | None = None) -> np.ndarray:
    """:func:`stft_kernel` of frames ``first:last``, shaped ``(..., n, n_freq)``.

    For code below the operator core (annotation measurements); everything
    above it calls the ``stft_power`` operator.
    """
    piece = _frame_range(np.asarray(x), params, first, last)
    return stft_kernel(piece, params, fs, two_sided=two_sided, layout="frames")


def stft_frames(x: np.ndarray, params: StftParams, fs: float, *, first: int = 0,
                last: int | None = None, two_sided: bool | None = None) -> np.ndarray:
    """:func:`stft_frame_rows` with time along the last axis: ``(..., n_freq, n)``."""
    piece = _frame_range(np.asarray(x), params, first, last)
    return stft_kernel(piece, params, fs, two_sided=two_sided, layout="freq")


def iter_frame_blocks(n_frames: int, block: int = FRAMES_PER_BLOCK) -> Iterator[tuple[int, int]]:
    """``(first, last)`` frame ranges of at most ``block`` frames."""
    for k0 in range(0, n_frames, block):
        yield k0, min(k0 + block, n_frames)


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
    """Decibels: ``10 log10`` of power or ``20 log10`` of amplitude, floored.

    Parameters
    ----------
    values : ndarray
        Power (or amplitude) values.
    power : bool
        True for power (``10 log10``), False for amplitude (``20 log10``).
    floor : float
        The smallest power taken (amplitude: its square root), so zeros give
        ``10 log10(floor)`` dB (-200 dB by default) rather than ``-inf``.

    Returns
    -------
    ndarray
        float32 decibels, the shape of ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> to_db(np.array([1.0, 100.0, 0.0])).round(3)
    array([   0.,   20., -200.], dtype=float32)
    >>> to_db(np.array([10.0]), power=False)
    array([20.], dtype=float32)
    """
    v = np.maximum(values, floor if power else np.sqrt(floor))
    db = np.log10(v, dtype=np.float32)
    db *= 10.0 if power else 20.0
    return db
