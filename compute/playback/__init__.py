"""Listening: a range of a recording rendered for a sound card, and played.

:func:`render` / :class:`Renderer` turn (recording, range, channel,
:class:`PlaybackOptions`) into device-rate samples, block by block with
carried state; :meth:`Renderer.position_of` maps output samples back to
recording time for a play cursor.  :class:`Player` feeds a renderer to an
audio output (``sounddevice``, the optional ``audio`` extra, or any injected
backend such as :class:`FakeOutput`) from a ring buffer; :class:`Looping`
plays a renderer over and over without a gap.

Quick tour::

    r = Renderer(rec, 1.0, 3.0, channel=0, speed=0.1, band=(20e3, 60e3))
    y = r.render()                       # float32 at r.sample_rate, within +-1
    with Player(r) as p:                 # SPECSCOPE_AUDIO_DEVICE picks the device
        p.start()
        t = p.position_s                 # recording seconds heard now
"""

from .looping import Looping
from .options import DEMODS, DEVICE_RATES, OPTIONS, PlaybackOptions
from .player import (
    AUDIO_DEVICE_ENV,
    AUDIO_OUTPUT_ENV,
    FakeOutput,
    OutputStream,
    Player,
    SampleRing,
    SoundDeviceOutput,
    default_output,
)
from .renderer import DEFAULT_CHUNK, Renderer, render

__all__ = [
    "AUDIO_DEVICE_ENV",
    "AUDIO_OUTPUT_ENV",
    "DEFAULT_CHUNK",
    "DEMODS",
    "DEVICE_RATES",
    "OPTIONS",
    "FakeOutput",
    "Looping",
    "OutputStream",
    "PlaybackOptions",
    "Player",
    "Renderer",
    "SampleRing",
    "SoundDeviceOutput",
    "default_output",
    "render",
]
