"""Synthetic live signals: tones, chirps, white and pink noise, clicks."""

from __future__ import annotations

import difflib
import math
from typing import Any, ClassVar

import numpy as np
import scipy.signal as ss

from ..errors import InputError
from ..params import Param
from ..types import ChirpMethod, GeneratorKind, NoiseColor, choices
from .sources import DEFAULT_BLOCK, ThreadedSource, option_values

__all__ = ["GeneratorSource"]


# pink noise: first-order pole/zero pairs at geometrically spaced corner
# frequencies; a zero a quarter-step above each pole makes every step half
# -20 dB/decade, half flat, so the average slope is -10 dB/decade (1/f power)
_PINK_STEP = 10 ** 0.5


def _pink_sos(fs: float) -> tuple[np.ndarray, float]:
    """The pink-noise filter (second-order sections) and its output std for unit white input."""
    poles, zeros = [], []
    f = 2.0
    while f < fs / 2:
        poles.append(math.exp(-2 * math.pi * f / fs))
        zeros.append(math.exp(-2 * math.pi * f * _PINK_STEP ** 0.5 / fs))
        f *= _PINK_STEP
    sos = ss.zpk2sos(np.array(zeros), np.array(poles), 1.0)
    imp = np.zeros(1 << 20)
    imp[0] = 1.0
    gain = float(np.sqrt(np.sum(ss.sosfilt(sos, imp) ** 2)))  # std for unit white input
    return sos, gain


class GeneratorSource(ThreadedSource):
    """Synthetic signals, sample-accurate whatever the block size.

    Kinds and their parameters (``sample_rate`` and ``channels`` for all):

    ``tone``
        ``amplitude * cos(2 pi frequency n / fs + phase)``; frequency 1000 Hz,
        amplitude 0.5, phase 0 rad.
    ``chirp``
        ``amplitude * scipy.signal.chirp(t mod period, f0, period, f1, method)``
        with ``t mod period`` counted in whole samples; f0 100 Hz, f1
        0.45 fs, period 2 s, method linear, amplitude 0.5.
    ``noise`` (``white``, ``pink``)
        Gaussian, ``amplitude`` standard deviation (0.1), independent per
        channel; white is ``default_rng(seed).standard_normal((n, channels))``;
        pink is white noise through a -10 dB/decade IIR filter (2 Hz up),
        normalised to the same standard deviation.  ``seed`` 0.
    ``clicks``
        ``amplitude`` (1.0) at every multiple of ``interval`` seconds (0.5),
        rounded to samples, else 0.

    Parameters
    ----------
    kind : {"tone", "chirp", "noise", "white", "pink", "clicks"}
        The signal; ``white`` and ``pink`` are ``noise`` of that colour.
    sample_rate : float
        Samples per second (Hz).
    channels : int
        Channels, each with the same signal (independent noise).
    block : int
        Samples per block.
    rate : float or None
        Pacing: 1 is real time, 0 or None as fast as the consumer takes blocks.
    duration : float, optional
        Seconds delivered at most; endless when omitted.
    **params
        The kind's options listed above (numbers may be text such as ``"1k"``).

    Raises
    ------
    InputError
        An unknown kind or option, or an invalid value.

    Examples
    --------
    >>> src = GeneratorSource("clicks", sample_rate=8000.0, interval=0.001)
    >>> src.blocks(10)[:, 0].tolist()
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    """

    KINDS = choices(GeneratorKind)
    #: the options of every kind
    COMMON_OPTIONS: ClassVar[tuple[Param, ...]] = (
        Param("sample_rate", float, 48000.0, min=0, unit="Hz", help="samples per second"),
        Param("channels", int, 1, min=1, help="channels, each with the same signal "
              "(independent noise)"),
    )
    #: the options of each kind (``white`` and ``pink`` are ``noise``)
    OPTIONS: ClassVar[dict[str, tuple[Param, ...]]] = {
        "tone": (
            Param("frequency", float, 1000.0, unit="Hz", help="frequency"),
            Param("amplitude", float, 0.5, help="peak amplitude"),
            Param("phase", float, 0.0, unit="rad", help="phase at sample 0"),
        ),
        "chirp": (
            Param("f0", float, 100.0, min=0, unit="Hz", help="frequency at the period start"),
            Param("f1", float, None, min=0, unit="Hz",
                  help="frequency at the period end (0.45 sample_rate when omitted)"),
            Param("period", float, 2.0, min=0, unit="s", help="length of one sweep"),
            Param("amplitude", float, 0.5, help="peak amplitude"),
            Param("method", str, "linear", choices=choices(ChirpMethod),
                  help="frequency sweep of scipy.signal.chirp"),
        ),
        "noise": (
            Param("color", str, "white", choices=choices(NoiseColor), help="spectrum"),
            Param("amplitude", float, 0.1, min=0, help="standard deviation"),
            Param("seed", int, 0, min=0, help="random seed"),
        ),
        "clicks": (
            Param("interval", float, 0.5, min=0, unit="s", help="time between clicks"),
            Param("amplitude", float, 1.0, help="click height"),
        ),
    }
    #: options that must be > 0
    POSITIVE: ClassVar[tuple[str, ...]] = ("sample_rate", "period", "interval")

    def __init__(self, kind: GeneratorKind, *, sample_rate: float = 48000.0, channels: int = 1,
                 block: int = DEFAULT_BLOCK, rate: float | None = 1.0,
                 duration: float | None = None, **params: Any) -> None:
        where = f"generator:{kind}"
        if kind not in self.KINDS:
            close = difflib.get_close_matches(kind, self.KINDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{where}: unknown generator{hint} (generators: "
                             f"{', '.join(self.KINDS)})")
        given = dict(params)
        if kind in choices(NoiseColor):
            given.setdefault("color", kind)
            kind = "noise"
        options = self.OPTIONS[kind]
        values = option_values({**given, "sample_rate": sample_rate, "channels": channels},
                               options + self.COMMON_OPTIONS, where, positive=self.POSITIVE)
        fs, n_ch = values.pop("sample_rate"), values.pop("channels")
        super().__init__(sample_rate=fs, n_channels=n_ch, block=block, rate=rate,
                         duration=duration, name=where)
        self.kind = kind
        #: the kind's option values
        self.params: dict[str, Any] = values
        if kind == "chirp":
            if values["f1"] is None:
                values["f1"] = 0.45 * fs
            self._period = max(1, round(values["period"] * fs))
        elif kind == "noise":
            self._rng = np.random.default_rng(values["seed"])
            self._next = 0
            if values["color"] == "pink":
                self._sos, self._gain = _pink_sos(fs)
                self._zi = np.zeros((self._sos.shape[0], 2, n_ch))
        elif kind == "clicks":
            self._period = max(1, round(values["interval"] * fs))

    def read_block(self, start: int, n: int) -> np.ndarray:
        fs, p = self.sample_rate, self.params
        idx = np.arange(start, start + n, dtype=np.int64)
        if self.kind == "tone":
            y = p["amplitude"] * np.cos(2 * np.pi * p["frequency"] * (idx / fs) + p["phase"])
        elif self.kind == "chirp":
            t = (idx % self._period) / fs
            y = p["amplitude"] * ss.chirp(t, p["f0"], p["period"], p["f1"], method=p["method"])
        elif self.kind == "clicks":
            y = np.where(idx % self._period == 0, p["amplitude"], 0.0)
        else:
            if start != self._next:  # noise is a stream: only sequential reads
                raise InputError(f"{self.name}: noise is read in order (asked for sample "
                                 f"{start}, next is {self._next})")
            self._next = start + n
            w = self._rng.standard_normal((n, self.n_channels))
            if p["color"] == "pink":
                w, self._zi = ss.sosfilt(self._sos, w, axis=0, zi=self._zi)
                w /= self._gain
            return (p["amplitude"] * w).astype(np.float32)
        y = y.astype(np.float32)
        return np.repeat(y[:, None], self.n_channels, axis=1)
