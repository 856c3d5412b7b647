"""Fused CUDA kernels for spectrogram tiles, and streaming with copies behind compute.

The kernels are source strings compiled on first use, and every function takes
the ``cupy`` module it runs with (nothing here imports CuPy).  A block of
frames becomes a tile in three launches (window and pack, cuFFT, power and
reduce); :class:`DeviceStream` and :class:`CellStream` feed blocks from host
memory with copies overlapping compute.

See docs/explanation/rooms/ops.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from .. import spectral
from ..errors import InputError
from ..types import Layout, Reduction, choices

__all__ = [
    "CELLS_SOURCE",
    "PACK_SOURCE",
    "REDUCE_SOURCE",
    "Block",
    "CellStream",
    "DeviceStream",
    "TransferStats",
    "block_bytes",
    "buffer_samples",
    "frames_per_block",
    "kernel_sources",
    "pack_frames",
    "plan_blocks",
    "reduce_cells",
    "stft_cells",
    "stft_power_cupy",
    "stft_power_fused",
]

#: device memory one block may use when the caller gives no budget
DEFAULT_BUDGET = 256 * 2**20

# -- block planning (pure Python) ---------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """Frames ``frame0:frame1`` of a signal, read as samples ``sample0:sample1``,
    giving output columns ``col0:col1`` (``group`` frames per column)."""

    frame0: int
    frame1: int
    sample0: int
    sample1: int
    col0: int
    col1: int

    @property
    def n_frames(self) -> int:
        return self.frame1 - self.frame0

    @property
    def n_samples(self) -> int:
        return self.sample1 - self.sample0


def block_bytes(frames: int, nfft: int, itemsize: int, two_sided: bool = False,
                hop: int | None = None) -> int:
    """Device bytes one block of ``frames`` frames needs.

    The samples (two buffers, for double buffering), the packed frames, the
    spectrum cuFFT writes (complex, ``nfft // 2 + 1`` bins one-sided) and
    cuFFT's work area (taken as one more spectrum).  ``itemsize`` is the real
    sample size (4 for float32 / complex64 parts, 8 for float64).
    """
    hop = nfft if hop is None else hop
    lanes = 2 if two_sided else 1  # complex samples carry two reals
    samples = ((frames - 1) * hop + nfft) * itemsize * lanes
    packed = frames * nfft * itemsize * lanes
    bins = nfft if two_sided else nfft // 2 + 1
    spectrum = frames * bins * 2 * itemsize
    return 2 * samples + packed + 2 * spectrum


def frames_per_block(nfft: int, hop: int, itemsize: int, *, group: int = 1,
                     budget: int = DEFAULT_BUDGET, two_sided: bool = False) -> int:
    """The most frames per block that fit ``budget`` bytes, a multiple of ``group``.

    At least one column (``group`` frames) even when that exceeds the budget:
    a column is never split between blocks.
    """
    if nfft < 1 or hop < 1 or group < 1 or itemsize < 1:
        raise ValueError("nfft, hop, group and itemsize must be positive")
    per_frame = block_bytes(2, nfft, itemsize, two_sided, hop) - block_bytes(
        1, nfft, itemsize, two_sided, hop)
    fixed = block_bytes(1, nfft, itemsize, two_sided, hop) - per_frame
    frames = max(1, (budget - fixed) // per_frame)
    return max(group, frames // group * group)


def plan_blocks(n_samples: int, nfft: int, hop: int, *, group: int = 1,
                frames: int | None = None, budget: int = DEFAULT_BUDGET, itemsize: int = 4,
                two_sided: bool = False) -> list[Block]:
    """Cut the whole frames of ``n_samples`` samples into blocks aligned to columns.

    Every frame is in exactly one block, every block but the last holds a
    multiple of ``group`` frames, and the last column may hold fewer frames
    (the tile engine's partial last column).  ``frames`` (per block)
    defaults to :func:`frames_per_block` for ``budget``.
    """
    n_frames = 0 if n_samples < nfft else (n_samples - nfft) // hop + 1
    if frames is None:
        frames = frames_per_block(nfft, hop, itemsize, group=group, budget=budget,
                                  two_sided=two_sided)
    frames = max(group, frames // group * group)
    out = []
    for f0 in range(0, n_frames, frames):
        f1 = min(f0 + frames, n_frames)
        out.append(Block(f0, f1, f0 * hop, (f1 - 1) * hop + nfft, f0 // group,
                         math.ceil(f1 / group)))
    return out


def buffer_samples(blocks: list[Block]) -> int:
    """Samples the largest block reads: the size of each host and device buffer."""
    return max((b.n_samples for b in blocks), default=0)


# -- the kernels (source; compiled on first use) -------------------------------------------

#: window and pack: y[k, j] = x[(first + k) * hop + j] * w[j]
PACK_SOURCE = (
    "long long k = i / nfft; long long j = i - k * nfft; "
    "y = x[(first + k) * hop + j] * w[j];")

#: |X|**2 (or |X|) reduced over the frames of each column; the scaling is in the window
#: (spectral.kernel_window), so one-sided power only halves DC and Nyquist.  One
#: thread per (bin, column), bins fastest so the reads of a warp are contiguous.
REDUCE_SOURCE = r"""
extern "C" __global__ void power_reduce_{name}(
        const {real}2* spec, {real}* out, long long n_frames, long long n_bin,
        long long group, long long n_cols, int halve_edges, int nyquist_even, int shift,
        int magnitude, int use_max) {{
    long long idx = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (idx >= n_bin * n_cols) return;
    long long b = idx % n_bin;
    long long c = idx / n_bin;
    long long src = shift ? (b + shift) % n_bin : b;
    long long f0 = c * group;
    long long f1 = f0 + group < n_frames ? f0 + group : n_frames;
    {real} acc = use_max ? ({real})(-1.0) : ({real})0.0;
    for (long long f = f0; f < f1; ++f) {{
        {real}2 v = spec[f * n_bin + src];
        {real} p = v.x * v.x + v.y * v.y;
        if (magnitude) p = sqrt(p);
        acc = use_max ? (p > acc ? p : acc) : acc + p;
    }}
    if (!use_max && f1 - f0 > 1) acc = acc / ({real})(f1 - f0);
    if (halve_edges && (b == 0 || (nyquist_even && b == n_bin - 1))) acc = acc * ({real})0.5;
    out[b * n_cols + c] = acc;
}}
"""


#: sums and maxima of power over the cells of ``cell`` frames (the tile engine's pyramid
#: cells, :class:`specscope.compute.view.tiles.Tile`): one thread per (bin, cell), bins
#: fastest.  Power is ``|X|**2`` with the scaling in the window; one-sided power halves
#: DC and Nyquist (``halve_edges``); ``shift`` is the fftshift of two-sided spectra.
CELLS_SOURCE = r"""
extern "C" __global__ void cell_reduce_{name}(
        const {real}2* spec, {real}* sums, {real}* maxs, long long n_frames, long long n_bin,
        long long cell, long long n_cells, int halve_edges, int nyquist_even, int shift) {{
    long long idx = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (idx >= n_bin * n_cells) return;
    long long b = idx % n_bin;
    long long c = idx / n_bin;
    long long src = shift ? (b + shift) % n_bin : b;
    long long f0 = c * cell;
    long long f1 = f0 + cell < n_frames ? f0 + cell : n_frames;
    {real} total = ({real})0.0;
    {real} peak = ({real})0.0;
    for (long long f = f0; f < f1; ++f) {{
        {real}2 v = spec[f * n_bin + src];
        {real} p = v.x * v.x + v.y * v.y;
        total += p;
        peak = p > peak ? p : peak;
    }}
    if (halve_edges && (b == 0 || (nyquist_even && b == n_bin - 1))) {{
        total = total * ({real})0.5;
        peak = peak * ({real})0.5;
    }}
    sums[b * n_cells + c] = total;
    maxs[b * n_cells + c] = peak;
}}
"""

#: the C types of the elementwise kernels' ``T`` / ``W`` parameters, as CuPy names them
PACK_TYPES = (("float", "float"), ("double", "double"),
              ("complex<float>", "float"), ("complex<double>", "double"))


def kernel_sources() -> list[tuple[str, str]]:
    """``(name, full CUDA source)`` of every kernel this module compiles, for each type.

    Raw kernels as they are compiled; the elementwise kernel's body inside the
    equivalent of the loop CuPy wraps it in (one thread per output element,
    ``i`` its index, raw parameters as pointers, the output a reference), so a
    compiler without a device (NVRTC) checks every source the device would build.

    Returns
    -------
    list of (str, str)
        The kernel's name and its CUDA C++ source: the power and cell reductions
        for float and double, and the window-and-pack kernel for float, double,
        complex<float> and complex<double> samples.
    """
    out = []
    for real in ("float", "double"):
        name = {"float": "f32", "double": "f64"}[real]
        out.append((f"power_reduce_{name}", REDUCE_SOURCE.format(name=name, real=real)))
        out.append((f"cell_reduce_{name}", CELLS_SOURCE.format(name=name, real=real)))
    for t, w in PACK_TYPES:
        tag = t.replace("complex<", "c").replace(">", "").replace("float", "f32") \
            .replace("double", "f64")
        src = ("#include <cupy/complex.cuh>\n"
               f"typedef {t} T;\ntypedef {w} W;\n"
               f'extern "C" __global__ void specscope_window_pack_{tag}(\n'
               "        const T* x, const W* w, long long hop, long long nfft,\n"
               "        long long first, T* y_, long long n_out) {\n"
               "    for (long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;\n"
               "         i < n_out; i += (long long)blockDim.x * gridDim.x) {\n"
               "        T& y = y_[i];\n"
               f"        {PACK_SOURCE}\n"
               "    }\n}\n")
        out.append((f"specscope_window_pack_{tag}", src))
    return out


@lru_cache(maxsize=4)
def _pack_kernel(cp: ModuleType) -> Any:
    return cp.ElementwiseKernel(
        "raw T x, raw W w, int64 hop, int64 nfft, int64 first", "T y", PACK_SOURCE,
        "specscope_window_pack")


@lru_cache(maxsize=8)
def _reduce_kernel(cp: ModuleType, real: str) -> Any:
    name = {"float": "f32", "double": "f64"}[real]
    src = REDUCE_SOURCE.format(name=name, real=real)
    return cp.RawKernel(src, f"power_reduce_{name}")


@lru_cache(maxsize=8)
def _cells_kernel(cp: ModuleType, real: str) -> Any:
    name = {"float": "f32", "double": "f64"}[real]
    return cp.RawKernel(CELLS_SOURCE.format(name=name, real=real), f"cell_reduce_{name}")


def _launch_reduce(cp: ModuleType, spec: Any, out: Any, *, n_frames: int, group: int,
                   one_sided: bool, nfft: int, magnitude: bool, use_max: bool) -> None:
    n_bin = spec.shape[-1]
    n_cols = out.shape[-1]
    real = "float" if out.dtype == np.float32 else "double"
    shift = 0 if one_sided else n_bin - n_bin // 2  # fftshift of the two-sided spectrum
    threads = 256
    total = n_bin * n_cols
    _reduce_kernel(cp, real)(
        ((total + threads - 1) // threads,), (threads,),
        (spec, out, np.int64(n_frames), np.int64(n_bin), np.int64(group), np.int64(n_cols),
         np.int32(one_sided and not magnitude), np.int32(nfft % 2 == 0), np.int32(shift),
         np.int32(magnitude), np.int32(use_max)))


def stft_power_cupy(x: Any, params: spectral.StftParams, fs: float, *, first: int = 0,
                    last: int | None = None, two_sided: bool | None = None, group: int = 1,
                    reduce: Reduction = "mean", cp: ModuleType | None = None) -> Any:
    """:func:`specscope.compute.spectral.stft_kernel` on the device, fused and reduced.

    Parameters
    ----------
    x : cupy.ndarray
        The signal, time on the last axis (leading axes are channels).
    params : StftParams
        FFT size, hop, window and scaling.
    fs : float
        Sample rate in Hz.
    first, last : int
        Frames ``first:last`` (all whole frames when ``last`` is None).
    two_sided : bool, optional
        Two-sided, centred spectrum (the default for complex input).
    group : int
        Frames reduced into one output column (1: the plain spectrogram).
    reduce : {"mean", "max"}
        How a column aggregates its frames.
    cp : module, optional
        The cupy module (taken from the backend when omitted).

    Returns
    -------
    cupy.ndarray
        ``(..., n_freq, n_columns)``, float64 for float64/complex128 input,
        else float32; with ``group=1`` the numbers of
        :func:`~specscope.compute.spectral.stft_kernel` with ``layout="freq"``.
    """
    if cp is None:
        from .. import backend
        cp = backend.get_xp("cupy")
    if reduce not in choices(Reduction):
        raise ValueError(f"reduce={reduce!r} must be 'mean' or 'max'")
    x = cp.asarray(x)
    if x.dtype.kind in "iub" or x.dtype == np.float16:
        x = x.astype(np.float32)
    complex_in = x.dtype.kind == "c"
    two_sided = complex_in if two_sided is None else bool(two_sided)
    ftype = spectral.kernel_dtype(x.dtype)
    nfft, hop = params.nfft, params.hop
    n_total = params.n_frames(x.shape[-1])
    last = n_total if last is None else min(last, n_total)
    n_frames = max(0, last - first)
    n_bin = nfft if two_sided else nfft // 2 + 1
    n_cols = math.ceil(n_frames / group)
    out = cp.empty((*x.shape[:-1], n_bin, n_cols), dtype=ftype)
    if n_frames == 0:
        return out
    win = cp.asarray(spectral.kernel_window(params, float(fs), ftype, two_sided))
    ctype = np.complex64 if ftype == np.float32 else np.complex128
    rows = x.reshape(-1, x.shape[-1])
    flat = out.reshape(-1, n_bin, n_cols)
    pack = _pack_kernel(cp)
    for r in range(rows.shape[0]):
        sig = rows[r]
        sig = sig.astype(ctype if two_sided else ftype, copy=False)
        packed = cp.empty((n_frames, nfft), dtype=sig.dtype)
        pack(sig, win, np.int64(hop), np.int64(nfft), np.int64(first), packed)
        spec = cp.fft.fft(packed, axis=-1) if two_sided else cp.fft.rfft(packed, axis=-1)
        spec = cp.ascontiguousarray(spec.astype(ctype, copy=False))
        _launch_reduce(cp, spec, flat[r], n_frames=n_frames, group=group,
                       one_sided=not two_sided, nfft=nfft,
                       magnitude=params.scaling == "magnitude", use_max=reduce == "max")
    return out


def stft_power_fused(x: Any, params: spectral.StftParams, fs: float, *,
                     two_sided: bool | None = None, layout: Layout = "frames",
                     cp: ModuleType | None = None) -> Any:
    """The ``stft_power`` kernel on the device: every whole frame, no reduction.

    Same arguments and numbers as :func:`specscope.compute.spectral.stft_kernel`
    (``layout="frames"``: ``(..., frames, freq)``; ``"freq"``: ``(..., freq,
    frames)``), computed by :func:`stft_power_cupy` with ``group=1``.
    """
    if layout not in spectral.LAYOUTS:
        raise InputError(f"layout={layout!r} must be one of {', '.join(spectral.LAYOUTS)}")
    if getattr(x, "dtype", np.dtype(float)).kind == "c" and two_sided is False:
        raise InputError("two_sided=False needs real input; complex signals have "
                         "two-sided spectra")
    if cp is None:
        from .. import backend
        cp = backend.get_xp("cupy")
    out = stft_power_cupy(x, params, fs, two_sided=two_sided, cp=cp)
    if layout == "frames":
        out = cp.ascontiguousarray(cp.swapaxes(out, -1, -2))
    return out


# -- streaming from host memory ------------------------------------------------------------


class DeviceStream:
    """Blocks of host samples through the GPU, copies overlapping compute.

    Two pinned host buffers and two device buffers: block ``i + 1`` is copied
    to the device on the copy stream while block ``i`` is computed on the
    compute stream; events keep a buffer from being refilled while a copy or
    a kernel still reads it.  Only what ``compute`` returns (display-sized)
    stays on the device, and :meth:`run` brings it back in one copy.

    Parameters
    ----------
    cp : module
        The cupy module.
    n_samples : int
        Capacity of each buffer (:func:`buffer_samples` of the plan).
    dtype : numpy dtype
        Sample type on the device.
    """

    def __init__(self, cp: ModuleType, n_samples: int, dtype: Any) -> None:
        self.cp = cp
        self.dtype = np.dtype(dtype)
        self.n_samples = int(n_samples)
        nbytes = max(1, self.n_samples * self.dtype.itemsize)
        # pinned memory makes the host-to-device copies asynchronous
        self._host = [np.frombuffer(cp.cuda.alloc_pinned_memory(nbytes), self.dtype,
                                    self.n_samples) for _ in range(2)]

        self._dev = [cp.empty(self.n_samples, self.dtype) for _ in range(2)]
        self._copy_stream = cp.cuda.Stream(non_blocking=True)
        self._compute_stream = cp.cuda.Stream(non_blocking=True)
        self._copied = [cp.cuda.Event(), cp.cuda.Event()]
        self._computed = [cp.cuda.Event(), cp.cuda.Event()]
        self._used = [False, False]
        #: bytes copied each way and the timed spans of the last :meth:`run`
        self.stats = TransferStats()

    def run(self, blocks: list[Block], read: Callable[[int, int], np.ndarray],
            compute: Callable[[Any, Block], Any], axis: int = -1, *,
            to_host: bool = True) -> Any:
        """Run ``compute(device_samples, block)`` over ``blocks``; the results joined.

        ``read(start, stop)`` returns host samples ``start:stop`` (1-D).  The
        results (device arrays) are concatenated along ``axis`` on the device
        and copied back once (``to_host=False``: left on the device, the joined
        device array returned).
        """
        cp = self.cp
        results = []
        spans: list[tuple[Any, Any, Any, Any]] = []
        self.stats = stats = TransferStats()
        wall0 = cp.cuda.Event()
        wall0.record(self._copy_stream)
        for i, block in enumerate(blocks):
            slot = i % 2
            n = block.n_samples
            if n > self.n_samples:
                raise ValueError(f"block of {n} samples exceeds the buffers ({self.n_samples})")
            if self._used[slot]:
                # the host buffer is free once its last copy ended
                self._copied[slot].synchronize()
            self._host[slot][:n] = read(block.sample0, block.sample1)
            copy0, copy1 = cp.cuda.Event(), cp.cuda.Event()
            compute0, compute1 = cp.cuda.Event(), cp.cuda.Event()
            with self._copy_stream:
                if self._used[slot]:
                    # the device buffer is free once the kernels reading it ended
                    self._copy_stream.wait_event(self._computed[slot])
                copy0.record(self._copy_stream)
                _to_device(self._dev[slot][:n], self._host[slot][:n], self._copy_stream)
                copy1.record(self._copy_stream)
                self._copied[slot].record(self._copy_stream)
            stats.h2d_bytes += n * self.dtype.itemsize
            with self._compute_stream:
                self._compute_stream.wait_event(self._copied[slot])
                compute0.record(self._compute_stream)
                results.append(compute(self._dev[slot][:n], block))
                compute1.record(self._compute_stream)
                self._computed[slot].record(self._compute_stream)
            spans.append((copy0, copy1, compute0, compute1))
            self._used[slot] = True
        self._compute_stream.synchronize()
        for span in spans:
            stats.add_spans(cp, span)
        if not results:
            return np.zeros((0,), self.dtype)
        with self._compute_stream:
            joined = results[0] if len(results) == 1 else cp.concatenate(results, axis=axis)
        if not to_host:
            self._compute_stream.synchronize()
            return joined
        out = _to_host(joined, self._compute_stream)
        self._compute_stream.synchronize()
        wall1 = cp.cuda.Event()
        wall1.record(self._compute_stream)
        wall1.synchronize()
        stats.d2h_bytes += int(out.nbytes)
        stats.wall_ms += _elapsed(cp, wall0, wall1)
        return out


@dataclass
class TransferStats:
    """What crossed the bus in a :meth:`DeviceStream.run`, and how copies overlapped.

    ``copy_ms`` and ``compute_ms`` add up the host-to-device copies and the
    kernels of each block; ``wall_ms`` is the whole run.  ``overlap`` is the
    share of the shorter of the two that ran at the same time as the other
    (1: the copies are hidden behind compute; 0: one after the other).

    Parameters
    ----------
    h2d_bytes : int
        Bytes copied from host to device.
    d2h_bytes : int
        Bytes copied from device to host.
    copy_ms : float
        Milliseconds of host-to-device copies, added over the blocks.
    compute_ms : float
        Milliseconds of kernels, added over the blocks.
    wall_ms : float
        Milliseconds of the whole run.
    """

    h2d_bytes: int = 0
    d2h_bytes: int = 0
    copy_ms: float = 0.0
    compute_ms: float = 0.0
    wall_ms: float = 0.0

    def add_spans(self, cp: ModuleType, span: tuple[Any, Any, Any, Any]) -> None:
        copy0, copy1, compute0, compute1 = span
        copy1.synchronize()
        compute1.synchronize()
        self.copy_ms += _elapsed(cp, copy0, copy1)
        self.compute_ms += _elapsed(cp, compute0, compute1)

    def merge(self, other: TransferStats) -> None:
        for f in ("h2d_bytes", "d2h_bytes", "copy_ms", "compute_ms", "wall_ms"):
            setattr(self, f, getattr(self, f) + getattr(other, f))

    @property
    def overlap(self) -> float:
        shorter = min(self.copy_ms, self.compute_ms)
        if shorter <= 0:
            return 0.0
        hidden = self.copy_ms + self.compute_ms - self.wall_ms
        return float(min(1.0, max(0.0, hidden / shorter)))

    @property
    def d2h_per_h2d(self) -> float:
        """Bytes brought back per byte sent."""
        return self.d2h_bytes / self.h2d_bytes if self.h2d_bytes else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"h2d_bytes": self.h2d_bytes, "d2h_bytes": self.d2h_bytes,
                "d2h_per_h2d": round(self.d2h_per_h2d, 5), "copy_ms": round(self.copy_ms, 3),
                "compute_ms": round(self.compute_ms, 3), "wall_ms": round(self.wall_ms, 3),
                "overlap": round(self.overlap, 3)}


def _elapsed(cp: ModuleType, a: Any, b: Any) -> float:
    try:
        return float(cp.cuda.get_elapsed_time(a, b))
    except Exception:  # noqa: BLE001 - an event without timing: no figure
        return 0.0


def _to_device(dev: Any, host: np.ndarray, stream: Any) -> None:
    if hasattr(dev, "set"):
        dev.set(host, stream=stream)
    else:  # numpy standing in for the device (tests)
        dev[...] = host


def _to_host(dev: Any, stream: Any) -> np.ndarray:
    return dev.get(stream=stream) if hasattr(dev, "get") else np.array(dev)


# -- pyramid cells on the device (the tile engine) ------------------------------------------


def _has_kernels(cp: ModuleType) -> bool:
    """Whether ``cp`` compiles CUDA kernels (CuPy); numpy stands in for tests otherwise."""
    return hasattr(cp, "RawKernel") and hasattr(cp, "ElementwiseKernel")


def pack_frames(cp: ModuleType, sig: Any, win: Any, hop: int, n_frames: int) -> Any:
    """Frames ``0:n_frames`` of ``sig`` times the window, packed ``(n_frames, nfft)``."""
    nfft = int(win.shape[-1])
    packed = cp.empty((n_frames, nfft), dtype=sig.dtype)
    if _has_kernels(cp):
        _pack_kernel(cp)(sig, win, np.int64(hop), np.int64(nfft), np.int64(0), packed)
        return packed
    idx = np.arange(n_frames)[:, None] * hop + np.arange(nfft)[None, :]
    cp.multiply(sig[idx], win, out=packed)  # what PACK_SOURCE computes, element by element
    return packed


def reduce_cells(cp: ModuleType, spec: Any, cell: int, *, one_sided: bool, power: bool,
                 nfft: int) -> tuple[Any, Any]:
    """Sums and maxima of ``|spec|**2`` over cells of ``cell`` frames: ``(bins, cells)`` each.

    ``spec`` is ``(frames, bins)`` complex; two-sided spectra come out centred
    (fftshift); one-sided power halves DC and (even ``nfft``) Nyquist, the
    bins the doubling folded into the window must not double.  On CuPy the
    :data:`CELLS_SOURCE` kernel, one thread per (bin, cell); the same
    arithmetic written with array operations otherwise.
    """
    n_frames, n_bin = spec.shape
    n_cells = -(-n_frames // cell)
    real = np.float32 if spec.dtype == np.complex64 else np.float64
    shift = 0 if one_sided else n_bin - n_bin // 2
    halve = one_sided and power
    if _has_kernels(cp):
        sums = cp.empty((n_bin, n_cells), real)
        maxs = cp.empty((n_bin, n_cells), real)
        threads = 256
        total = n_bin * n_cells
        _cells_kernel(cp, "float" if real == np.float32 else "double")(
            ((total + threads - 1) // threads,), (threads,),
            (spec, sums, maxs, np.int64(n_frames), np.int64(n_bin), np.int64(cell),
             np.int64(n_cells), np.int32(halve), np.int32(nfft % 2 == 0), np.int32(shift)))
        return sums, maxs
    pairs = spec.view(real).reshape(n_frames, n_bin, 2)
    p = pairs[..., 0] * pairs[..., 0] + pairs[..., 1] * pairs[..., 1]
    if shift:
        p = cp.roll(p, -shift, axis=1)
    full = n_frames // cell * cell
    parts_s, parts_m = [], []
    if full:
        g = p[:full].reshape(full // cell, cell, n_bin)
        parts_s.append(g.sum(axis=1))
        parts_m.append(g.max(axis=1))
    if full < n_frames:
        parts_s.append(p[full:].sum(axis=0, keepdims=True))
        parts_m.append(p[full:].max(axis=0, keepdims=True))
    sums = cp.ascontiguousarray(cp.concatenate(parts_s).T)
    maxs = cp.ascontiguousarray(cp.concatenate(parts_m).T)
    if halve:
        edges = [0, n_bin - 1] if nfft % 2 == 0 else [0]
        sums[edges] *= 0.5
        maxs[edges] *= 0.5
    return sums, maxs


def stft_cells(cp: ModuleType, x: Any, params: spectral.StftParams, fs: float, cell: int,
               *, two_sided: bool = False, want_max: bool = True) -> Any:
    """Pyramid cells of every whole frame of the 1-D device signal ``x``.

    Returns ``(2, n_freq, n_cells)`` (sums, then maxima) or, with
    ``want_max=False``, ``(1, n_freq, n_cells)`` of sums, in the kernel's
    real dtype, on ``cp``: the numbers of the tile engine's CPU cells
    (power; for ``magnitude`` scaling the square of the magnitude).
    """
    ftype = spectral.kernel_dtype(x.dtype)
    ctype = np.complex64 if ftype == np.float32 else np.complex128
    nfft, hop = params.nfft, params.hop
    n_frames = params.n_frames(int(x.shape[-1]))
    sig = x.astype(ctype if two_sided else ftype, copy=False)
    win = cp.asarray(spectral.kernel_window(params, float(fs), ftype, two_sided))
    packed = pack_frames(cp, sig, win, hop, n_frames)
    spec = cp.fft.fft(packed, axis=-1) if two_sided else cp.fft.rfft(packed, axis=-1)
    spec = cp.ascontiguousarray(spec.astype(ctype, copy=False))
    sums, maxs = reduce_cells(cp, spec, cell, one_sided=not two_sided,
                              power=params.is_power, nfft=nfft)
    return cp.stack([sums, maxs] if want_max else [sums])


class CellStream:
    """Pyramid cells of host samples, streamed through the device; only cells come back.

    The tile engine's device path: the samples of a tile go to the device in
    blocks of whole cells (:func:`plan_blocks` with ``group=cell``) on a
    :class:`DeviceStream` (copies overlapping compute), each block becomes its
    cells' sums and maxima (:func:`stft_cells`), and the tile's cells cross
    the bus once.  :attr:`stats` adds up what every run moved.

    Parameters
    ----------
    cp : module
        The cupy module.
    params : StftParams
        The short-time Fourier configuration.
    fs : float
        Sample rate in Hz.
    two_sided : bool
        Complex samples and two-sided spectra (complex64 on the device), else real
        float32 samples and one-sided spectra.
    budget : int
        Device bytes one block may use (:data:`DEFAULT_BUDGET`: 256 MiB).
    """

    def __init__(self, cp: ModuleType, params: spectral.StftParams, fs: float, *,
                 two_sided: bool = False, budget: int = DEFAULT_BUDGET) -> None:
        self.cp, self.params, self.fs = cp, params, float(fs)
        self.two_sided = bool(two_sided)
        self.budget = int(budget)
        self.dtype = np.dtype(np.complex64 if two_sided else np.float32)
        self._streams: dict[int, DeviceStream] = {}
        self.stats = TransferStats()

    def cells(self, read: Callable[[int, int], np.ndarray], n_frames: int, cell: int,
              *, want_max: bool = True, lazy: bool = False) -> tuple[np.ndarray, Any]:
        """Sums and maxima ``(n_freq, n_cells)`` (float32, host) of frames ``0:n_frames``.

        ``read(start, stop)`` gives the samples ``start:stop`` (relative to
        frame 0).  With ``want_max=False`` (single-frame cells) the maxima are
        the sums, and only those cross.  With ``lazy=True`` the maxima stay on
        the device and the second value is a function that brings them over
        (counted in :attr:`stats` when called).
        """
        p = self.params
        n_samples = (n_frames - 1) * p.hop + p.nfft
        blocks = plan_blocks(n_samples, p.nfft, p.hop, group=cell, budget=self.budget,
                             itemsize=4, two_sided=self.two_sided)
        size = buffer_samples(blocks)
        stream = self._streams.get(size)
        if stream is None:
            self._streams.clear()  # one pair of buffers per engine
            stream = self._streams[size] = DeviceStream(self.cp, size, self.dtype)
        kept: list[Any] = []  # the maxima of each block, left on the device

        def compute(samples: Any, block: Block) -> Any:
            out = stft_cells(self.cp, samples, p, self.fs, cell, two_sided=self.two_sided,
                             want_max=want_max).astype(np.float32, copy=False)
            if lazy and want_max:
                kept.append(out[1])
                return out[:1]
            return out

        got = stream.run(blocks, lambda a, b: np.asarray(read(a, b), self.dtype), compute)
        self.stats.merge(stream.stats)
        sums = np.ascontiguousarray(got[0])
        if not want_max:
            return sums, ((lambda: sums) if lazy else sums)
        if not lazy:
            return sums, np.ascontiguousarray(got[1])

        def fetch() -> np.ndarray:
            joined = kept[0] if len(kept) == 1 else self.cp.concatenate(kept, axis=-1)
            host = np.ascontiguousarray(_to_host(joined, None))
            self.stats.d2h_bytes += int(host.nbytes)
            kept.clear()
            return host
        return sums, fetch

    def resident(self, read: Callable[[int, int], np.ndarray], n_frames: int, cell: int,
                 *, want_max: bool = True) -> tuple[Any, Any]:
        """Sums and maxima ``(n_freq, n_cells)`` float32 of frames ``0:n_frames``, left on
        the device (nothing comes back): ``(sums, maxs)``, ``maxs`` None without
        ``want_max`` (single-frame cells).  :meth:`columns` reduces them to a view's
        columns and brings those over; :meth:`fetch` brings a whole array."""
        p = self.params
        n_samples = (n_frames - 1) * p.hop + p.nfft
        blocks = plan_blocks(n_samples, p.nfft, p.hop, group=cell, budget=self.budget,
                             itemsize=4, two_sided=self.two_sided)
        size = buffer_samples(blocks)
        stream = self._streams.get(size)
        if stream is None:
            self._streams.clear()  # one pair of buffers per engine
            stream = self._streams[size] = DeviceStream(self.cp, size, self.dtype)

        def compute(samples: Any, block: Block) -> Any:
            return stft_cells(self.cp, samples, p, self.fs, cell, two_sided=self.two_sided,
                              want_max=want_max).astype(np.float32, copy=False)

        got = stream.run(blocks, lambda a, b: np.asarray(read(a, b), self.dtype), compute,
                         to_host=False)
        self.stats.merge(stream.stats)
        sums = self.cp.ascontiguousarray(got[0])
        return sums, (self.cp.ascontiguousarray(got[1]) if want_max else None)

    def fetch(self, dev: Any) -> np.ndarray:
        """A device array on the host (counted in :attr:`stats`)."""
        host = np.ascontiguousarray(_to_host(dev, None))
        self.stats.d2h_bytes += int(host.nbytes)
        return host

    def columns(self, parts: list[Any], counts: np.ndarray, first: np.ndarray,
                last: np.ndarray, reduce: str) -> np.ndarray:
        """A view's columns from cells on the device; only the columns come back.

        ``parts`` are device arrays ``(n_freq, n)`` of consecutive cells (sums for
        ``reduce="mean"``, maxima for ``"max"``), ``counts`` the frames of each
        cell (host), and column ``j`` covers cells ``first[j] .. last[j]`` of the
        joined parts.  Means are the sums of a column's cells over their frames
        (float64 running sums, as the host computes them); maxima the largest
        cell.  Returns ``(n_freq, n_columns)`` float32 on the host.
        """
        cp = self.cp
        cells = parts[0] if len(parts) == 1 else cp.concatenate(parts, axis=1)
        fl, ll = cp.asarray(first), cp.asarray(last)
        if reduce == "max":
            out = cells[:, fl]
            for d in range(1, int(np.max(last - first)) + 1 if len(first) else 1):
                cp.maximum(out, cells[:, cp.minimum(fl + d, ll)], out=out)
        else:
            cum = cp.concatenate([cp.zeros((cells.shape[0], 1), np.float64),
                                  cp.cumsum(cells, axis=1, dtype=np.float64)], axis=1)
            ccount = np.concatenate([[0], np.cumsum(counts)])
            frames = cp.asarray((ccount[last + 1] - ccount[first]).astype(np.float64))
            out = ((cum[:, ll + 1] - cum[:, fl]) / frames).astype(np.float32)
        return self.fetch(cp.ascontiguousarray(out))
