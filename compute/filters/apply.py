"""Filter application: the one way a designed filter runs over samples.

A :class:`StreamFilter` is a :class:`~specscope.compute.stream.Stage` applying
second-order sections (:class:`SosFilter`), FIR taps (:class:`FirFilter`,
:class:`FftFirFilter`) or scipy's sparse comb (:class:`CombFilter`) to a stream
of chunks, ``push(x, final)``, with the state carried from chunk to chunk, so
that any chunking gives the numbers of one call over the whole signal.  A chunk
is 1-D (one channel), or shaped ``(channels, samples)`` for a stage from
``for_channels`` (every channel in one call, each row equal, bit for bit, to
that channel alone), on NumPy or CuPy.  Pipeline stages (and through them exports, batch runs and live
sessions) and the block function of the tile engine (:class:`BlockFilter`)
all filter through these classes.

Zero-phase filtering needs the whole signal (the backward pass starts at the
end); :func:`zero_phase_function` gives it as one call.

FIR methods
-----------
Below :data:`FFT_MIN_TAPS` taps, a direct convolution over the carried last
``numtaps - 1`` inputs: every output is the same dot product however the
signal is chunked.  Longer FIRs are faster by FFT (overlap-save, every output
leaving with its chunk); their outputs agree with the direct convolution, and
across chunkings, to float rounding.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.fft

from .. import backend as _backend
from .. import operators
from ..errors import InputError
from ..operators import autotune
from ..stream import Stage, Tail
from .design import design
from .designed import Design
from .spec import FilterSpec

__all__ = [
    "FFT_MIN_TAPS",
    "VIEW_SETTLE_TOL",
    "BlockFilter",
    "CombFilter",
    "FftFirFilter",
    "FirFilter",
    "SosFilter",
    "StreamFilter",
    "block_filter",
    "sos_kernel",
    "stream_filter",
    "zero_phase_function",
]

#: FIRs with at least this many taps are applied by FFT blocks (faster beyond it)
FFT_MIN_TAPS = 256
#: bytes of transform input one group of FFT blocks covers on the CPU (stays in cache)
FFT_GROUP_BYTES = 1 << 19
_local = threading.local()

try:  # pocketfft into a caller's buffer (the engine behind scipy.fft)
    from scipy.fft._pocketfft import pypocketfft as _pocketfft
except ImportError:  # pragma: no cover - another scipy layout
    _pocketfft = None


def _workspace(key: tuple, make: Callable[[], tuple]) -> tuple:
    """This thread's buffers for ``key``, made once (the last few keys kept)."""
    cache = getattr(_local, "spaces", None)
    if cache is None:
        cache = _local.spaces = {}
    ws = cache.get(key)
    if ws is None:
        if len(cache) >= 4:
            cache.pop(next(iter(cache)))
        ws = cache[key] = make()
    return ws
#: impulse-response tail (relative L1) a block of the tile engine may miss at its start
VIEW_SETTLE_TOL = 1e-7


def _timed(name: str, fn: Callable[[], Any]) -> Any:
    """Run a host filter call, recorded for the operator profile under ``name``."""
    t0 = time.perf_counter()
    try:
        out = fn()
    except (ValueError, TypeError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"{name}: {msg}") from exc
    autotune.record(name, "numpy", time.perf_counter() - t0)
    return out


class StreamFilter(Stage):
    """One designed filter as a :class:`~specscope.compute.stream.Stage`.

    ``push(x, final)`` takes 1-D chunks; a stage from :meth:`for_channels`
    takes chunks shaped ``(channels, samples)``, each row equal, bit for bit,
    to that channel filtered alone.  The result has the chunk's shape.
    """

    #: True when a cold start ``lookback`` samples early gives exactly the same output
    exact_split = True


_SOS_KERNEL: list[Any] = []


def sos_kernel() -> Callable[..., Any] | None:
    """scipy's in-place sosfilt loop ``(sos, x (signals, n), zi (signals, sections, 2))``.

    None when it is not there or does not give exactly what
    ``scipy.signal.sosfilt`` gives (checked once, on a probe).

    Returns
    -------
    callable or None
        The kernel, filtering ``x`` in place and updating ``zi``; None when unusable.
    """
    import scipy.signal as ss
    if not _SOS_KERNEL:
        kernel = None
        try:
            from scipy.signal._sosfilt import _sosfilt as k

            rng = np.random.default_rng(0)
            sos = ss.butter(4, [0.05, 0.3], "bandpass", output="sos")
            x = rng.standard_normal((2, 300)).astype(np.float32)
            zi = np.zeros((sos.shape[0], 2, 2))
            zk = np.zeros((2, sos.shape[0], 2))
            ok = True
            for part in (x[:, :123], x[:, 123:]):
                want, zi = ss.sosfilt(sos, part, axis=-1, zi=zi)
                got = np.array(part, np.float64, order="C")
                k(sos, got, zk)
                ok = ok and np.array_equal(want, got) and np.array_equal(
                    zi, zk.transpose(1, 0, 2))
            kernel = k if ok else None
        except Exception:  # noqa: BLE001 -- not there or not the same: use the wrapper
            kernel = None
        _SOS_KERNEL.append(kernel)
    return _SOS_KERNEL[0]


class SosFilter(StreamFilter):
    """IIR in second-order sections with carried ``zi`` (scipy's ``sosfilt``).

    Parameters
    ----------
    sos : array_like
        Second-order sections, shape ``(sections, 6)``.
    settle : int
        Settling length in samples (the stage's ``lookback``).
    """

    exact_split = False

    def __init__(self, sos: Any, settle: int = 0) -> None:
        self.sos, self.lookback = sos, int(settle)
        self._sos_k = np.ascontiguousarray(sos, np.float64) if np.isrealobj(sos) else sos
        #: True for a stage taking (channels, samples) chunks (see :meth:`for_channels`)
        self.rows = False
        self.reset()

    def reset(self) -> None:
        self._zi: Any = None  # scipy's layout: (sections, [channels,] 2)
        self._zk: Any = None  # the kernel's layout: (channels, sections, 2)

    def for_channels(self, channels: int) -> SosFilter:
        new = self.spawn()
        new.rows = True
        return new

    def push(self, x: Any, final: bool) -> Any:
        if x.shape[-1] == 0:  # nothing to filter (scipy's wrapper refuses an empty row)
            xp = _backend.get_xp(_backend.backend_of(x))
            return xp.zeros(x.shape, np.result_type(self.sos, x.dtype))
        if not self.rows:
            if _backend.backend_of(x) == "cupy" and self._zi is None and final:
                return operators.call("sosfilt", x, backend="cupy", sos=self.sos)
            return self._filter(x, (self.sos.shape[0], 2))
        # all channels in one call: scipy's sosfilt over the last axis, zi shaped
        # (sections, channels, 2), or straight into its kernel (the same loop, without
        # the wrapper's reshaping: most of the time of a small real-time block)
        kernel = sos_kernel()
        if (kernel is not None and self._zi is None and type(x) is np.ndarray
                and x.ndim == 2 and np.result_type(self.sos, x.dtype) == self._sos_k.dtype):
            y = np.array(x, self._sos_k.dtype, order="C")  # a copy, filtered in place
            if self._zk is None:
                self._zk = np.zeros((x.shape[0], self.sos.shape[0], 2), y.dtype)
            zk = self._zk
            if y.size:
                _timed("sosfilt", lambda: kernel(self._sos_k, y, zk))
            return y
        if self._zk is not None:  # switch to the wrapper's layout, carrying the state on
            self._zi, self._zk = np.ascontiguousarray(self._zk.transpose(1, 0, 2)), None
        return self._filter(x, (self.sos.shape[0], x.shape[0], 2))

    def _filter(self, x: Any, zi_shape: tuple[int, ...]) -> Any:
        import scipy.signal as ss
        if self._zi is None:
            self._zi = np.zeros(zi_shape, np.result_type(self.sos, x.dtype))
        zi = self._zi
        if _backend.backend_of(x) == "numpy":
            y, self._zi = _timed("sosfilt", lambda: ss.sosfilt(
                self.sos, np.asarray(x), axis=-1, zi=zi))
        else:
            y, self._zi = operators.call("sosfilt", x, backend=_backend.backend_of(x),
                                         sos=self.sos, zi=zi)
        return y


class FirFilter(StreamFilter):
    """FIR taps: a direct convolution over the carried last ``numtaps - 1`` inputs.

    The whole run takes the same path (zeros before the first sample), so every
    output is the same dot product, bit for bit, however the signal is chunked.
    Rows (channels) share the carried tail's leading axis.

    Parameters
    ----------
    b : numpy.ndarray
        The taps (1-D).
    """

    def __init__(self, b: np.ndarray) -> None:
        self.b, self.lookback = b, b.size - 1
        self.reset()

    def reset(self) -> None:
        self._tail = Tail(self.lookback, zeros=True)

    def for_channels(self, channels: int) -> FirFilter:
        return self.spawn()

    def push(self, x: Any, final: bool) -> Any:
        xp = _backend.get_xp(_backend.backend_of(x))
        z = self._tail.join(x)
        if x.shape[-1] == 0 or (x.ndim == 2 and x.shape[0] == 0):
            return x
        if x.ndim == 1:
            return self._convolve(z)
        # the same 1-D direct convolution per row (a 2-D one would sum in another order)
        return xp.stack([self._convolve(row) for row in z])

    def _convolve(self, z):
        import scipy.signal as ss
        if _backend.backend_of(z) == "numpy":
            return _timed("convolve", lambda: ss.convolve(z, self.b, mode="valid",
                                                          method="direct"))
        return operators.call("convolve", z, backend="cupy", in2=self.b, mode="valid",
                             method="direct")


class FftFirFilter(StreamFilter):
    """FIR taps by FFT overlap-save over the carried last ``numtaps - 1`` inputs.

    Each chunk is cut into blocks of :attr:`block` outputs, each from one
    transform of its ``nfft`` inputs (the last block padded with zeros), so
    every output leaves with its chunk.  Outputs equal the direct convolution
    to float rounding, which depends on where blocks start: two chunkings
    agree to rounding, not bit for bit.

    Parameters
    ----------
    b : numpy.ndarray
        The taps (1-D).
    """

    exact_split = False

    def __init__(self, b: np.ndarray) -> None:
        self.b, self.lookback = b, b.size - 1
        #: transform length: about four times the taps (a small share of wasted outputs)
        self.nfft = scipy.fft.next_fast_len(4 * b.size, real=True)
        #: outputs per transform
        self.block = self.nfft - self.lookback
        self._spectra: dict[tuple[str, bool], Any] = {}
        self.reset()

    def reset(self) -> None:
        self._tail = Tail(self.lookback, zeros=True)

    def for_channels(self, channels: int) -> FftFirFilter:
        return self.spawn()

    def _spectrum(self, xp: Any, complex_: bool) -> Any:
        key = (xp.__name__, complex_)
        if key not in self._spectra:
            b = xp.asarray(self.b)
            self._spectra[key] = (xp.fft.fft(b, self.nfft) if complex_
                                  else xp.fft.rfft(b, self.nfft))
        return self._spectra[key]

    def push(self, x: Any, final: bool) -> Any:
        name = _backend.backend_of(x)
        xp = _backend.get_xp(name)
        h, blk, nfft = self.lookback, self.block, self.nfft
        z = self._tail.join(x)
        n_out = x.shape[-1]
        out_dtype = np.result_type(z.dtype, self.b.dtype)
        if n_out == 0:
            return xp.zeros(x.shape, out_dtype)
        k = -(-n_out // blk)
        pad = xp.zeros(z.shape[:-1] + (h + k * blk - z.shape[-1],), z.dtype)
        src = xp.concatenate([z, pad], axis=-1)
        complex_ = z.dtype.kind == "c"

        if name == "numpy" and _pocketfft is not None:
            return _timed("convolve", lambda: self._run_numpy(src, k, n_out, out_dtype))

        def run():
            idx = xp.arange(k)[:, None] * blk + xp.arange(nfft)[None, :]
            frames = src[..., idx].astype(out_dtype, copy=False)  # (..., k, nfft)
            spec = self._spectrum(xp, complex_)
            if complex_:
                blocks = xp.fft.ifft(xp.fft.fft(frames, axis=-1) * spec, axis=-1)
            else:
                blocks = xp.fft.irfft(xp.fft.rfft(frames, axis=-1) * spec, nfft, axis=-1)
            return blocks[..., h:].reshape(z.shape[:-1] + (k * blk,))[..., :n_out]
        return _timed("convolve", run) if name == "numpy" else run()


    def _run_numpy(self, src: np.ndarray, k: int, n_out: int, out_dtype: Any) -> np.ndarray:
        """Overlap-save on the CPU in groups of blocks through per-thread workspaces:
        no temporaries sized to the chunk (they would be mapped and unmapped on every
        call), each group's frames a strided view of the chunk."""
        h, blk, nfft = self.lookback, self.block, self.nfft
        out_dtype = np.dtype(out_dtype)
        complex_ = out_dtype.kind == "c"
        taps = self._spectrum(np, complex_)
        ctype = np.result_type(out_dtype, np.complex64)
        group = max(1, min(k, FFT_GROUP_BYTES // (nfft * out_dtype.itemsize)))
        frames_ws, spec_ws, out_ws = _workspace(
            ("fir", nfft, out_dtype.char, group),
            lambda: (np.empty((group, nfft), out_dtype),
                     np.empty((group, nfft if complex_ else nfft // 2 + 1), ctype),
                     np.empty((group, nfft), out_dtype)))
        taps = taps.astype(ctype, copy=False)
        rows = src.reshape(-1, src.shape[-1])
        out = np.empty((rows.shape[0], k * blk), out_dtype)
        for r in range(rows.shape[0]):
            row = rows[r]
            step = row.strides[-1]
            for g0 in range(0, k, group):
                m = min(group, k - g0)
                frames = np.lib.stride_tricks.as_strided(
                    row[g0 * blk:], shape=(m, nfft), strides=(blk * step, step),
                    writeable=False)
                dest = out[r, g0 * blk:(g0 + m) * blk].reshape(m, blk)
                if complex_:
                    spec = spec_ws[:m]
                    np.copyto(spec, frames)
                    _pocketfft.c2c(spec, axes=(1,), forward=True, inorm=0, out=spec)
                    np.multiply(spec, taps, out=spec)
                    _pocketfft.c2c(spec, axes=(1,), forward=False, inorm=2, out=spec)
                    np.copyto(dest, spec[:, h:])
                else:
                    seg, spec, res = frames_ws[:m], spec_ws[:m], out_ws[:m]
                    np.copyto(seg, frames)
                    _pocketfft.r2c(seg, axes=(1,), forward=True, inorm=0, out=spec)
                    np.multiply(spec, taps, out=spec)
                    _pocketfft.c2r(spec, axes=(1,), lastsize=nfft, forward=False, inorm=2,
                                   out=res)
                    np.copyto(dest, res[:, h:])
        return out.reshape(src.shape[:-1] + (k * blk,))[..., :n_out]


class CombFilter(StreamFilter):
    """``lfilter(b, a)`` for b, a non-zero only at 0 and N, as N first-order recursions.

    Sample ``n`` belongs to phase ``n % N``; each phase is the filter
    ``([b0, bN], [1, aN])`` in transposed direct form with one state value.
    Rows (channels) run one after the other, each with its own phases.

    Parameters
    ----------
    b, a : numpy.ndarray
        Numerator and denominator of length ``N + 1``, non-zero only at 0 and N.
    settle : int
        Settling length in samples (the stage's ``lookback``).
    """

    exact_split = False

    def __init__(self, b: np.ndarray, a: np.ndarray, settle: int = 0) -> None:
        self.n = b.size - 1
        self.b0, self.bn = float(b[0] / a[0]), float(b[-1] / a[0])
        self.an = float(a[-1] / a[0])
        self.lookback = int(settle)
        #: one state per channel for (channels, samples) chunks; None for 1-D chunks
        self.rows: list[CombFilter] | None = None
        self.reset()

    def reset(self) -> None:
        self._z: Any = None
        self._pos = 0
        if self.rows is not None:
            self.rows = [self.spawn_row() for _ in self.rows]

    def spawn_row(self) -> CombFilter:
        """A fresh stage for 1-D chunks."""
        new = copy.copy(self)
        new.rows = None
        new.reset()
        return new

    def for_channels(self, channels: int) -> CombFilter:
        new = self.spawn_row()
        new.rows = [self.spawn_row() for _ in range(channels)]
        return new

    def push(self, x: Any, final: bool) -> Any:
        if self.rows is None:
            return self._push(x)
        if not self.rows:
            return x[:, :0]
        ys = [r._push(x[c]) for c, r in enumerate(self.rows)]
        return _backend.get_xp(_backend.backend_of(ys[0])).stack(ys)

    def _push(self, x):
        import scipy.signal as ss
        xp = _backend.get_xp(_backend.backend_of(x))
        x = x.astype(np.result_type(x.dtype, np.float64), copy=False)
        if self._z is None:
            self._z = xp.zeros(self.n, x.dtype)
        z, n, L = self._z, self.n, x.shape[0]
        y = xp.empty_like(x)
        p = self._pos % n
        h = min(L, (n - p) % n)
        if h:
            y[:h] = self.b0 * x[:h] + z[p:p + h]
            z[p:p + h] = self.bn * x[:h] - self.an * y[:h]
        m = (L - h) // n
        if m:
            rows = x[h:h + m * n].reshape(m, n)
            if xp is np:
                out, zf = ss.lfilter([self.b0, self.bn], [1.0, self.an], rows, axis=0,
                                     zi=z[None, :])
                y[h:h + m * n] = out.reshape(-1)
                z[:] = zf[0]
            else:  # first-order recursion down the rows, vectorised over phases
                for r in range(m):
                    yr = self.b0 * rows[r] + z
                    z[:] = self.bn * rows[r] - self.an * yr
                    y[h + r * n:h + (r + 1) * n] = yr
        t = L - h - m * n
        if t:
            xt = x[L - t:]
            y[L - t:] = self.b0 * xt + z[:t]
            z[:t] = self.bn * xt - self.an * y[L - t:]
        self._pos += L
        return y


def stream_filter(form: str, coefficients: dict[str, np.ndarray], settle: int = 0
                  ) -> StreamFilter:
    """The stream filter for coefficients of one form (see :class:`Design`).

    Parameters
    ----------
    form : {"sos", "fir", "comb"}
        The form of the coefficients.
    coefficients : dict
        ``{"sos": ...}``, ``{"b": ...}`` or ``{"b": ..., "a": ...}``, as
        :attr:`Design.coefficients`.
    settle : int
        Settling length of an IIR filter in samples (its ``lookback``).

    Returns
    -------
    StreamFilter
        A :class:`SosFilter`; for FIR taps a :class:`FftFirFilter` from
        :data:`FFT_MIN_TAPS` taps on, else a :class:`FirFilter`; else a :class:`CombFilter`.
    """
    if form == "sos":
        return SosFilter(coefficients["sos"], settle)
    if form == "fir":
        b = coefficients["b"]
        return FftFirFilter(b) if b.size >= FFT_MIN_TAPS else FirFilter(b)
    return CombFilter(coefficients["b"], coefficients["a"], settle)


def zero_phase_function(form: str, coefficients: dict[str, np.ndarray]
                        ) -> Callable[[Any], Any]:
    """``f(x)``: forwards and backwards over a whole signal (``sosfiltfilt`` / ``filtfilt``).

    Parameters
    ----------
    form : {"sos", "fir", "comb"}
        The form of the coefficients.
    coefficients : dict
        ``{"sos": ...}``, ``{"b": ...}`` or ``{"b": ..., "a": ...}``, as
        :attr:`Design.coefficients`.

    Returns
    -------
    callable
        ``f(x)`` filtering a whole signal with zero phase, on the array's backend.
    """
    if form == "sos":
        sos = coefficients["sos"]

        def fn(x):
            return operators.call("sosfiltfilt", x, backend=_backend.backend_of(x), sos=sos)
        return fn
    b = coefficients["b"]
    a = coefficients.get("a", np.ones(1))

    def fn2(x):
        return operators.call("filtfilt", x, backend=_backend.backend_of(x), b=b, a=a)
    return fn2


class BlockFilter:
    """``f(x, fs)`` applying a design to an independent block (for the tile engine).

    ``context = (before, after)`` is how many samples the block needs around
    it so that the output in the block is settled (IIR: to ``tol`` of the
    impulse response's L1 norm; FIR: exact).  Pass it as the tile engine's
    ``pipeline_context``.  The block runs through the same
    :class:`StreamFilter` as a pipeline stage, from rest.

    Parameters
    ----------
    d : Design
        The designed filter.
    tol : float
        Impulse-response tail (relative L1) the block may miss at its start.
    """

    def __init__(self, d: Design, tol: float = VIEW_SETTLE_TOL) -> None:
        self.design = d
        reach = d.settle_length(tol)
        self.context = (reach, reach if d.zero_phase else 0)
        if d.zero_phase:
            self._run = zero_phase_function(d.form, d.coefficients)
        else:
            self._run = stream_filter(d.form, d.coefficients, reach).whole

    def __call__(self, x: np.ndarray, fs: float) -> np.ndarray:
        return self._run(x)


def block_filter(spec: FilterSpec | Design, fs: float | None = None,
                 tol: float = VIEW_SETTLE_TOL) -> BlockFilter:
    """A :class:`BlockFilter` for a design, or for a spec designed for ``fs``.

    Parameters
    ----------
    spec : FilterSpec or Design
        A designed filter, or a specification to design.
    fs : float, optional
        Sample rate (Hz); needed when ``spec`` is a :class:`FilterSpec`.
    tol : float
        Impulse-response tail (relative L1) a block may miss at its start.

    Returns
    -------
    BlockFilter
        The block function; its ``context`` is the samples needed around a block.
    """
    return BlockFilter(spec if isinstance(spec, Design) else design(spec, fs), tol)
