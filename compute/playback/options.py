"""What to listen to: the playback options, declared as :class:`~specscope.compute.params.Param`.

:class:`PlaybackOptions` holds them, validated on construction; every option
a person can set (speed, band, heterodyne, tuning and demodulation of IQ
recordings, gain) is one :data:`OPTIONS` entry, so a form or the command line
can be built from the table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..params import Param
from ..types import Deemphasis, Demod, choices

__all__ = ["DEMODS", "DEVICE_RATES", "OPTIONS", "PlaybackOptions"]

#: demodulators of IQ recordings
DEMODS = choices(Demod)
#: the standard rates a sound card is fed at
DEVICE_RATES = (44100.0, 48000.0, 88200.0, 96000.0, 192000.0)
#: channel bandwidth by demodulator when none is given (Hz)
DEFAULT_BANDWIDTH = {"am": 10e3, "fm": 200e3, "usb": 3e3, "lsb": 3e3}

#: the options, in the order forms show them
OPTIONS: tuple[Param, ...] = (
    Param("speed", float, 1.0, min=0.05, max=4.0,
          help="playback speed (0.1: ten times slower, pitch down by ten)"),
    Param("band", "array", None, min=0.0, unit="Hz",
          help="[low, high]: only this band of the recording (causal band-pass)"),
    Param("heterodyne", float, None, min=0.0, unit="Hz",
          help="local oscillator: ultrasound near it is heard as its difference"),
    Param("heterodyne_bandwidth", float, 5000.0, min=100.0, unit="Hz",
          help="audio bandwidth kept after heterodyning"),
    Param("pipeline", "any", None, help="processing applied first (a Pipeline)"),
    Param("tune", float, None, unit="Hz",
          help="IQ: absolute frequency to listen to (the recording's centre when omitted)"),
    Param("demod", str, None, choices=DEMODS, help="IQ: demodulator"),
    Param("bandwidth", float, None, min=0.0, unit="Hz",
          help="IQ: channel bandwidth (am 10 kHz, fm 200 kHz, usb/lsb 3 kHz when omitted)"),
    Param("deemphasis", str, "none", choices=choices(Deemphasis),
          help="FM de-emphasis time constant"),
    Param("gain_db", float, 0.0, min=-60.0, max=60.0, unit="dB",
          help="gain before the limiter (the output never exceeds +-1)"),
    Param("fade_s", float, 0.01, min=0.0, max=1.0, unit="s",
          help="fade in and out at start and stop (no clicks)"),
    Param("device_rate", float, 48000.0, choices=DEVICE_RATES, unit="Hz",
          help="sample rate the sound card is fed at"),
)
_BY_NAME = {p.name: p for p in OPTIONS}


@dataclass(frozen=True)
class PlaybackOptions:
    """How a range is rendered for listening (immutable, validated by :data:`OPTIONS`).

    Change one with ``dataclasses.replace``.  See :data:`OPTIONS` for each
    field's range.

    Parameters
    ----------
    speed : float
        Playback speed, 0.05 to 4 (0.1: ten times slower, pitch down by ten).
    band : tuple of float, optional
        ``(low, high)``: only this band of the recording (Hz, causal band-pass).
    heterodyne : float, optional
        Local oscillator (Hz): ultrasound near it is heard as its difference.
    heterodyne_bandwidth : float
        Audio bandwidth kept after heterodyning (Hz, at least 100).
    pipeline : Pipeline, optional
        Processing applied first.
    tune : float, optional
        IQ: absolute frequency to listen to (Hz; the recording's centre when None).
    demod : {"am", "fm", "usb", "lsb"}, optional
        IQ: demodulator.
    bandwidth : float, optional
        IQ: channel bandwidth (Hz; am 10 kHz, fm 200 kHz, usb/lsb 3 kHz when None).
    deemphasis : {"none", "50us", "75us"}
        FM de-emphasis time constant.
    gain_db : float
        Gain before the limiter, -60 to 60 dB (the output never exceeds +-1).
    fade_s : float
        Fade in and out at start and stop, 0 to 1 s (no clicks).
    device_rate : float
        Sample rate the sound card is fed at (Hz), one of :data:`DEVICE_RATES`.

    Raises
    ------
    InputError
        If a value is out of range or of the wrong type, ``band`` is not ``[low, high]``
        with ``low < high``, or ``pipeline`` is not a Pipeline.
    """

    speed: float = 1.0
    band: tuple[float, float] | None = None
    heterodyne: float | None = None
    heterodyne_bandwidth: float = 5000.0
    pipeline: Any = None
    tune: float | None = None
    demod: Demod | None = None
    bandwidth: float | None = None
    deemphasis: Deemphasis = "none"
    gain_db: float = 0.0
    fade_s: float = 0.01
    device_rate: float = 48000.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (int, np.integer)) and _BY_NAME[f.name].type is float \
                    and not isinstance(value, bool):
                value = float(value)  # 48000 is a rate as much as 48000.0 is
            value = _BY_NAME[f.name].validate(value, "playback")
            if f.name == "band" and value is not None:
                value = _band(value)
            object.__setattr__(self, f.name, value)
        if self.pipeline is not None and not hasattr(self.pipeline, "signal_part"):
            raise InputError(f"playback: pipeline={type(self.pipeline).__name__} must be a "
                             "Pipeline")

    @classmethod
    def of(cls, options: PlaybackOptions | dict[str, Any] | None = None,
           **overrides: Any) -> PlaybackOptions:
        """Options from an instance, a dict of fields, or keywords (which win)."""
        if options is None:
            base: dict[str, Any] = {}
        elif isinstance(options, PlaybackOptions):
            base = {f.name: getattr(options, f.name) for f in dataclasses.fields(cls)}
        elif isinstance(options, dict):
            base = dict(options)
        else:
            raise InputError(f"options={type(options).__name__} must be PlaybackOptions, "
                             "a dict or None")
        base.update(overrides)
        unknown = sorted(set(base) - set(_BY_NAME))
        if unknown:
            raise InputError(f"playback: unknown option {unknown[0]!r}; known: "
                             + ", ".join(_BY_NAME))
        return cls(**base)


def _band(value: np.ndarray) -> tuple[float, float]:
    b = np.asarray(value, dtype=float).ravel()
    if b.size != 2 or not b[0] < b[1]:
        raise InputError(f"playback: band={b.tolist()} must be [low, high] with low < high, "
                         "in Hz")
    return float(b[0]), float(b[1])
