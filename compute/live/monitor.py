"""Listening to a live session: its processed signal, resampled for an audio output.

:class:`LiveRenderer` takes the processed blocks of a
:class:`~specscope.compute.live.LiveSession` from a tap (``session.tap()``),
keeps one channel (the real part of a complex signal), resamples it to the
device rate with the playback chain's polyphase resampler and shapes it
(gain, limiter, a fade-in) like a recording's playback.  It has the
renderer interface a :class:`~specscope.compute.playback.Player` feeds from,
so a monitor plays through the same outputs (a sound card, or
:class:`~specscope.compute.playback.FakeOutput`).  :class:`LiveMonitor` ties
the three together: ``LiveMonitor(session, output=...).start()``.

The monitor's latency is the output's plus :attr:`LiveRenderer.prefill`
samples of silence it starts with (room for the source's blocks to arrive
before the output asks) and the resampler's half-length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Self

import numpy as np

from ..errors import InputError
from ..playback import DEVICE_RATES, Player
from ..playback.stages import Resampler, Shaper, rational
from .ring import BlockRing

__all__ = ["LiveMonitor", "LiveRenderer"]

#: how long the renderer waits for a block before looking whether the stream ended (s)
POLL_S = 0.05
#: the output length a live stream reports (it has no end known in advance)
ENDLESS = 1 << 62


class LiveRenderer:
    """The processed live signal of one channel, at the device rate.

    Parameters
    ----------
    tap : BlockRing
        Where the session puts processed blocks (``session.tap()``), each
        ``(samples (n, channels), time)``.
    source_rate : float
        Sample rate of those blocks.
    channel : int
        The channel heard.
    device_rate : float
        The rate the output is fed at.
    gain_db : float
        Gain before the limiter (the output never leaves [-1, 1]).
    prefill : int
        Samples of silence the stream starts with.

    Attributes
    ----------
    sample_rate : float
        The device rate.
    length : int
        A very large number: a live stream ends when its tap is closed.
    received : int
        Source samples taken from the tap so far.
    """

    def __init__(self, tap: BlockRing, source_rate: float, *, channel: int = 0,
                 device_rate: float = 48000.0, gain_db: float = 0.0,
                 prefill: int = 0) -> None:
        if float(device_rate) not in DEVICE_RATES:
            raise InputError(f"device_rate={device_rate!r} must be one of "
                             + ", ".join(f"{r:g}" for r in DEVICE_RATES))
        if not source_rate > 0:
            raise InputError(f"source_rate={source_rate!r} must be a positive rate in Hz")
        self.tap = tap
        self.source_rate = float(source_rate)
        self.channel = int(channel)
        self.sample_rate = float(device_rate)
        self.length = ENDLESS
        self.prefill = max(0, int(prefill))
        self.received = 0
        up, down = rational(self.sample_rate / self.source_rate)
        self._resampler = Resampler(self.source_rate, up, down)
        # a fade-in only: the stream's end is not known in advance
        self._shaper = Shaper(gain_db, ENDLESS, round(0.01 * self.sample_rate),
                              self.sample_rate)

    def blocks(self, block: int = 4096) -> Iterator[np.ndarray]:
        """The output as it arrives (blocks of any size), float32; ends with the tap."""
        if self.prefill:
            yield np.zeros(self.prefill, np.float32)
        while True:
            item = self.tap.get(POLL_S)
            if item is None:
                if self.tap.closed and len(self.tap) == 0:
                    return
                continue
            samples = np.asarray(item[0])
            if not 0 <= self.channel < samples.shape[1]:
                raise InputError(f"channel={self.channel} must be in "
                                 f"[0, {samples.shape[1] - 1}]")
            x = np.real(samples[:, self.channel]).astype(np.float64)
            self.received += x.size
            y = self._resampler.push(x, False)
            y = self._shaper.push(y, False)
            if y.size:
                yield y.astype(np.float32)

    def position_of(self, output_sample: Any) -> Any:
        """Seconds of the monitored stream heard at ``output_sample`` (since the start)."""
        k = np.maximum(np.asarray(output_sample, dtype=float) - self.prefill, 0.0)
        return k / self.sample_rate if np.ndim(k) else float(k) / self.sample_rate


class LiveMonitor:
    """Hear a live session's processed signal on an audio output.

    Parameters
    ----------
    session : LiveSession
        The session (started or not; the monitor hears blocks processed from
        :meth:`start` on).
    channel : int
        The channel heard.
    output : callable, optional
        The audio backend (see :class:`~specscope.compute.playback.Player`):
        the sound card chosen by ``SPECSCOPE_AUDIO_DEVICE`` when omitted,
        :class:`~specscope.compute.playback.FakeOutput` in tests.
    device_rate : float
        The rate the output is fed at.
    gain_db : float
        Gain before the limiter.
    block : int
        Samples per output callback.
    buffer_s : float
        Seconds the player's ring holds; half of it is the silence the
        stream starts with.

    Raises
    ------
    SpecscopeError
        From :meth:`start`, in one line, when there is no audio output.
    """

    def __init__(self, session: Any, *, channel: int = 0,
                 output: Callable[..., Any] | None = None, device_rate: float = 48000.0,
                 gain_db: float = 0.0, block: int = 512, buffer_s: float = 0.1) -> None:
        if not 0 <= int(channel) < session.n_channels:
            raise InputError(f"channel={channel} must be in [0, {session.n_channels - 1}]")
        self.session = session
        self.channel = int(channel)
        self.output = output
        self.device_rate = float(device_rate)
        self.gain_db = float(gain_db)
        self.block = int(block)
        self.buffer_s = float(buffer_s)
        self.player: Player | None = None
        self.renderer: LiveRenderer | None = None
        self._tap: BlockRing | None = None

    def start(self) -> Self:
        """Tap the session and start playing (returns at once)."""
        if self.player is not None:
            return self
        capacity = max(2 * self.block, round(self.buffer_s * self.device_rate))
        tap = self.session.tap()
        try:
            # the player's head start ends after this silence: start() never waits for data
            renderer = LiveRenderer(tap, self.session.sample_rate, channel=self.channel,
                                    device_rate=self.device_rate, gain_db=self.gain_db,
                                    prefill=capacity // 2)
            player = Player(renderer, output=self.output, block=self.block,
                            buffer_s=self.buffer_s)
            player.start()
        except BaseException:
            self.session.untap(tap)
            raise
        self._tap, self.renderer, self.player = tap, renderer, player
        return self

    def stop(self) -> None:
        """Stop playing and release the tap."""
        tap, self._tap = self._tap, None
        if tap is not None:
            self.session.untap(tap)  # ends the renderer's stream
        player, self.player = self.player, None
        if player is not None:
            player.stop()

    close = stop

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the monitor is playing."""
        return self.player is not None and not self.player.finished

    @property
    def device_name(self) -> str:
        """The output device's name (empty when stopped)."""
        return self.player.device_name if self.player is not None else ""

    @property
    def latency_s(self) -> float:
        """From a processed sample to hearing it: output latency and the start's silence."""
        if self.player is None:
            return 0.0
        return self.player.latency_s + self.renderer.prefill / self.device_rate

    @property
    def underruns(self) -> int:
        """Output callbacks that found no sound ready (the source was late)."""
        return self.player.underruns if self.player is not None else 0
