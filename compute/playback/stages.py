"""The streaming pieces of the playback chain, each a stream stage.

Every piece is a :class:`~specscope.compute.stream.Stage`: it takes chunks of any size,
``push(x, final)``, and gives, over a whole stream, the same samples as one push of
everything (to float rounding), and none shifts the signal in time: linear-phase
filters are compensated by their delay, so output sample ``k`` of a piece sits at input
time ``k * ratio``.

* :class:`Decimator` -- a linear-phase low-pass, designed by
  :func:`~specscope.compute.filters.design` and applied by
  :func:`~specscope.compute.filters.stream_filter`, keeping every ``D``-th
  sample (real or complex).
* :class:`Resampler` -- a rational ``up/down`` polyphase resampler whose
  anti-aliasing filter is designed by :func:`~specscope.compute.filters.design`.
* :class:`Oscillator` -- a local oscillator in phase with the recording's
  sample index; :class:`Mixer` multiplies a stream by one (heterodyning,
  tuning, sideband demodulation).
* :class:`FmDiscriminator` -- the phase step between samples, scaled, with an
  optional de-emphasis filter.
* :class:`Shaper` -- gain, a look-ahead peak limiter (the output never leaves
  [-1, 1]) and fades at both ends.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import InputError
from ..filters import FilterSpec, design, stream_filter
from ..stream import Stage

__all__ = ["Decimator", "FmDiscriminator", "Mixer", "Oscillator", "Resampler", "Shaper",
           "odd_lowpass", "rational"]

#: stopband attenuation of the anti-aliasing filters (dB)
ANTI_ALIAS_DB = 80.0
#: passband edge of the resampler as a share of the lower Nyquist frequency
PASS_SHARE = 0.86
#: largest interpolation factor of the resampler
MAX_UP = 512
#: outputs computed per vectorised step of the resampler (bounds its memory)
RESAMPLE_STEP = 8192


def odd_lowpass(fs: float, pass_hz: float, stop_hz: float, *, multiple: int = 1,
                rs: float = ANTI_ALIAS_DB) -> np.ndarray:
    """Taps of a Kaiser low-pass of odd length ``2 * k * multiple + 1``.

    The length and the Kaiser parameter come from a minimum-length design
    for the tolerance; the length is then raised to the next odd multiple so
    that the delay is a whole number of samples (of each phase, for a
    polyphase filter).

    Parameters
    ----------
    fs : float
        Sample rate the filter is designed for (Hz).
    pass_hz, stop_hz : float
        Passband and stopband edges (Hz).
    multiple : int
        The length is ``2 * k * multiple + 1`` (the polyphase resampler's factor).
    rs : float
        Stopband attenuation (dB).

    Returns
    -------
    numpy.ndarray
        The taps, of odd length.
    """
    first = design(FilterSpec("firwin", btype="lowpass", passband=pass_hz, stopband=stop_hz,
                              rs=rs), fs)
    call = first.calls[-1].kwargs
    beta = float(call["window"][1])
    half = max(1, math.ceil((first.b.size - 1) / (2 * multiple)))
    n = 2 * half * multiple + 1
    d = design(FilterSpec("firwin", numtaps=n, cutoff=float(np.ravel(call["cutoff"])[0]),
                          window=("kaiser", beta)), fs)
    return d.b


class Decimator(Stage):
    """Low-pass (linear phase, delay compensated) and keep every ``factor``-th sample.

    Parameters
    ----------
    fs : float
        Input sample rate.
    pass_hz, stop_hz : float
        Passband and stopband edges of the low-pass.
    factor : int
        Decimation factor ``D``: output ``k`` is filtered input ``k * D``.
    """

    def __init__(self, fs: float, pass_hz: float, stop_hz: float, factor: int) -> None:
        self.factor = int(factor)
        self.taps = odd_lowpass(fs, pass_hz, stop_hz)
        self._filter = stream_filter("fir", {"b": self.taps})
        self.delay = self.latency = (self.taps.size - 1) // 2
        self.reset()

    def reset(self) -> None:
        self._fir = self._filter.spawn()
        self._dropped = 0
        self._count = 0  # aligned samples seen

    def output_length(self, n_input: int) -> int:
        """Outputs for ``n_input`` inputs."""
        return -(-n_input // self.factor)

    def push(self, x: np.ndarray, final: bool) -> np.ndarray:
        """Outputs for the next chunk (the rest after ``final``)."""
        if final:  # the last inputs come out only after the filter's delay
            x = np.concatenate([x, np.zeros(self.delay, x.dtype)])
        y = self._fir.push(x, final)
        if self._dropped < self.delay:
            k = min(self.delay - self._dropped, y.size)
            y, self._dropped = y[k:], self._dropped + k
        first = (-self._count) % self.factor
        self._count += y.size
        return y[first::self.factor]


def rational(ratio: float, max_up: int = MAX_UP) -> tuple[int, int]:
    """``(up, down)`` with ``up / down`` within 1e-6 of ``ratio`` and ``up <= max_up``.

    When no pair is that close, the nearest fraction with ``up <= max_up`` within 1e-4.

    Parameters
    ----------
    ratio : float
        The rate ratio, output rate over input rate.
    max_up : int
        Largest interpolation factor.

    Returns
    -------
    tuple of int
        ``(up, down)``.

    Raises
    ------
    InputError
        When no pair within 1e-4 exists.

    Examples
    --------
    >>> rational(48000 / 44100)
    (160, 147)
    """
    best: tuple[int, int] | None = None
    for limit in (1 << 16, 1 << 14, 1 << 12, 1 << 10, 1 << 8):
        f = Fraction(ratio).limit_denominator(limit)
        if f.numerator <= max_up and abs(f.numerator / f.denominator / ratio - 1) <= 1e-6:
            best = (f.numerator, f.denominator)
    if best is None:  # the nearest fraction with a small numerator
        f = Fraction(1 / ratio).limit_denominator(max_up)
        up, down = f.denominator, f.numerator
        if up == 0 or down == 0 or abs(up / down / ratio - 1) > 1e-4:
            raise InputError(f"a rate ratio of {ratio:g} cannot be resampled (more than "
                             f"{max_up} times up)")
        best = (up, down)
    return best


class Resampler(Stage):
    """``fs_in`` to ``fs_in * up / down`` by a polyphase FIR centred on each output.

    Output ``m`` is at input time ``m * down / up``; its taps are one phase of
    a low-pass designed at ``fs_in * up`` whose passband ends at
    :data:`PASS_SHARE` of the lower Nyquist frequency and whose stopband
    (:data:`ANTI_ALIAS_DB`) starts at it.  Each output is the same dot
    product whatever the chunking.

    Parameters
    ----------
    fs_in : float
        Input sample rate (Hz).
    up, down : int
        Interpolation and decimation factors (reduced by their common divisor);
        ``up == down`` passes the stream through.
    """

    def __init__(self, fs_in: float, up: int, down: int) -> None:
        self.up, self.down = int(up), int(down)
        g = math.gcd(self.up, self.down)
        self.up, self.down = self.up // g, self.down // g
        nyq = min(fs_in, fs_in * self.up / self.down) / 2
        self.identity = self.up == self.down == 1
        if self.identity:
            return
        h = odd_lowpass(fs_in * self.up, PASS_SHARE * nyq, nyq, multiple=self.up)
        self.half = (h.size - 1) // (2 * self.up)
        width = 2 * self.half + 1
        h = np.concatenate([h, np.zeros(width * self.up - h.size)]) * self.up
        #: phase p, tap j: h[p + j * up]
        self.phases = np.ascontiguousarray(h.reshape(width, self.up).T)
        self._taps = np.arange(width)
        self.latency = self.half
        self.reset()

    def reset(self) -> None:
        if self.identity:
            return
        self._buf = np.zeros(self.half)  # inputs from index -half on (zeros before 0)
        self._buf0 = -self.half
        self._received = 0
        self._next = 0  # next output index

    def output_length(self, n_input: int) -> int:
        """Outputs for ``n_input`` inputs: those at input times before the end."""
        if self.identity:
            return n_input
        return -(-n_input * self.up // self.down)

    def push(self, x: np.ndarray, final: bool) -> np.ndarray:
        """Outputs for the next chunk (the rest after ``final``)."""
        if self.identity:
            return x
        self._received += x.size
        parts = [self._buf, x]
        if final:  # inputs after the end are zeros
            parts.append(np.zeros(self.half + 1))
        buf = np.concatenate(parts)
        # outputs whose last input (index n + half) has arrived
        if final:
            end = self.output_length(self._received)
        else:
            end = max(self._next, -(-(self._received - self.half) * self.up // self.down))
        outs = []
        for a in range(self._next, end, RESAMPLE_STEP):
            m = np.arange(a, min(end, a + RESAMPLE_STEP), dtype=np.int64)
            t = m * self.down
            n, p = t // self.up, t % self.up
            idx = (n + self.half - self._buf0)[:, None] - self._taps[None, :]
            outs.append((buf[idx] * self.phases[p]).sum(axis=1))
        self._next = end
        keep_from = (self._next * self.down) // self.up - self.half - self._buf0
        keep_from = max(0, min(keep_from, buf.size))
        self._buf = buf[keep_from:]
        self._buf0 += keep_from
        return np.concatenate(outs) if outs else np.zeros(0)


class Oscillator:
    """``exp(2j*pi*f*n/fs)`` for the next samples, ``n`` counted from ``first``.

    The phase is a function of the sample index alone, so any chunking gives
    the same values.

    Parameters
    ----------
    frequency : float
        The oscillator's frequency (Hz; negative tunes down).
    fs : float
        Sample rate (Hz).
    first : int
        Sample index of the first value.
    """

    def __init__(self, frequency: float, fs: float, first: int = 0) -> None:
        self.cycles = float(frequency) / float(fs)  # cycles per sample
        self.n = int(first)

    def next(self, count: int) -> np.ndarray:
        n = np.arange(self.n, self.n + count, dtype=np.int64)
        self.n += count
        # the fractional cycles of n * f / fs, exact for large n as well
        frac = np.mod(n * self.cycles, 1.0)
        return np.exp(2j * np.pi * frac)


class Mixer(Stage):
    """A stream times a local oscillator (:class:`Oscillator`) in phase with the sample index.

    ``real_out``: the real part of the product (a tuned signal heard, a
    sideband demodulated).  ``real_lo``: ``scale * x * cos`` (a heterodyne of a
    real signal; ``scale = 2`` keeps the difference tone's amplitude).

    Parameters
    ----------
    frequency : float
        The oscillator's frequency (Hz).
    fs : float
        Sample rate (Hz).
    first : int
        Sample index of the stream's first sample.
    real_out : bool
        Give the real part of the product.
    real_lo : bool
        Multiply by the oscillator's cosine only, times ``scale``.
    scale : float
        Factor of the ``real_lo`` product.
    """

    def __init__(self, frequency: float, fs: float, first: int = 0, *,
                 real_out: bool = False, real_lo: bool = False, scale: float = 1.0) -> None:
        self.frequency, self.fs, self.first = float(frequency), float(fs), int(first)
        self.real_out, self.real_lo, self.scale = bool(real_out), bool(real_lo), float(scale)
        self.reset()

    def reset(self) -> None:
        self._osc = Oscillator(self.frequency, self.fs, self.first)

    def push(self, x: np.ndarray, final: bool) -> np.ndarray:
        # the oscillator's samples are a temporary, which NumPy may multiply in place
        # (operand order, and so the last bit of a complex product, as it always was)
        if self.real_lo:
            return self.scale * x * self._osc.next(x.size).real
        y = x * self._osc.next(x.size)
        return y.real if self.real_out else y


class FmDiscriminator(Stage):
    """FM demodulation: the phase step from each sample to the next, times ``scale``.

    The phase step of sample 0 is taken from a zero before it.

    Parameters
    ----------
    scale : float
        Factor turning a phase step (rad per sample) into output amplitude.
    deemphasis : Stage, optional
        Applied to the result (e.g. a one-pole filter).
    """

    def __init__(self, scale: float, deemphasis: Stage | None = None) -> None:
        self.scale = scale
        self.deemphasis = deemphasis
        self.reset()

    def reset(self) -> None:
        self._prev = np.complex128(0)
        if self.deemphasis is not None:
            self.deemphasis = self.deemphasis.spawn()

    def push(self, z: np.ndarray, final: bool) -> np.ndarray:
        if not z.size:
            return np.zeros(0)
        before = np.concatenate([[self._prev], z[:-1]])
        self._prev = z[-1]
        y = np.angle(z * np.conj(before)) * self.scale
        return y if self.deemphasis is None else self.deemphasis.push(y, final)


class Shaper(Stage):
    """Gain, a look-ahead peak limiter and fades, over a stream of known length.

    The stream is cut into segments of :attr:`segment` samples (fixed by the
    sample index, not by the chunks).  Each segment's gain ramps linearly to a
    value no higher than what it and the next segment allow (``threshold /
    peak``), rising back towards 1 by :attr:`release_s`, so every sample stays
    within ``threshold``; a clip at +-1 guards against rounding.  The first
    and last ``fade`` samples follow a raised cosine.

    Parameters
    ----------
    gain_db : float
        Gain applied before the limiter (dB).
    length : int
        Samples in the whole stream (where the closing fade starts).
    fade : int
        Samples of each fade (at most half the length).
    fs : float
        Sample rate (Hz), for the release time.
    """

    segment = 256
    threshold = 0.98
    release_s = 0.05

    def __init__(self, gain_db: float, length: int, fade: int, fs: float) -> None:
        self.gain = 10.0 ** (gain_db / 20.0)
        self.length = int(length)
        self.fade = max(0, min(int(fade), self.length // 2))
        self.rise = 1.0 - math.exp(-self.segment / (self.release_s * fs))
        #: held back: at most two segments but one sample
        self.latency = 2 * self.segment - 1
        ramp = np.arange(1, self.fade + 1) / (self.fade + 1)
        self._ramp = 0.5 - 0.5 * np.cos(np.pi * ramp)
        self.reset()

    def reset(self) -> None:
        self._pending = np.zeros(0)  # samples of segments not yet released
        self._g: float | None = None  # gain at the end of the last released segment
        self._done = 0  # samples released
        #: the limiter's gain over each released segment: (end sample, lowest gain), appended
        #: by push and taken by the reader (see ``Renderer.block_gain``)
        self.marks: list[tuple[int, float]] = []

    def _allowed(self, seg: np.ndarray) -> float:
        peak = float(np.max(np.abs(seg))) if seg.size else 0.0
        return 1.0 if peak <= self.threshold else self.threshold / peak

    def push(self, x: np.ndarray, final: bool) -> np.ndarray:
        """Shaped samples for the next chunk (held back by up to two segments)."""
        buf = np.concatenate([self._pending, x * self.gain])
        s = self.segment
        n_seg = -(-buf.size // s) if final else buf.size // s - 1
        n_seg = max(0, n_seg)
        out = np.empty(min(buf.size, n_seg * s))
        for k in range(n_seg):
            seg = buf[k * s:(k + 1) * s]
            nxt = buf[(k + 1) * s:(k + 2) * s]
            if self._g is None:  # the first ramp starts within what the first segment allows
                self._g = self._allowed(seg)
            target = min(self._allowed(seg), self._allowed(nxt),
                         self._g + (1.0 - self._g) * self.rise)
            ramp = self._g + (target - self._g) * (np.arange(1, seg.size + 1) / s)
            out[k * s:k * s + seg.size] = seg * ramp
            self.marks.append((self._done + k * s + seg.size, float(min(ramp[0], ramp[-1]))))
            self._g = target
        self._pending = buf[out.size:]
        out = self._fades(out)
        self._done += out.size
        return np.clip(out, -1.0, 1.0)

    def _fades(self, y: np.ndarray) -> np.ndarray:
        if not self.fade or not y.size:
            return y
        idx = np.arange(self._done, self._done + y.size)
        head = idx < self.fade
        y[head] *= self._ramp[idx[head]]
        tail = idx >= self.length - self.fade
        y[tail] *= self._ramp[::-1][np.minimum(idx[tail] - (self.length - self.fade),
                                                 self.fade - 1)]
        return y


def as_float(x: Any) -> np.ndarray:
    """Samples as float64 (complex128 for IQ)."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64, copy=False)
