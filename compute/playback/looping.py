"""A rendered range played once or over and over, without a gap between passes.

:class:`Looping` wraps a :class:`~specscope.compute.playback.Renderer` for a
:class:`~specscope.compute.playback.Player`: its blocks are the renderer's,
pass after pass while :attr:`Looping.loop` is on (it may change while
playing: the pass being played ends the loop), and :meth:`Looping.position_of`
maps every output sample back to recording time, so a play cursor jumps back
to the start of the range with the sound.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["Looping"]

#: the output length a looping stream reports (it has no end of its own)
ENDLESS = 1 << 62


class Looping:
    """Play ``renderer`` once, or again and again while :attr:`loop` is on.

    Parameters
    ----------
    renderer : Renderer
        The range to play.
    loop : bool
        Start again at the end of each pass.

    Attributes
    ----------
    loop : bool
        Read by the feeding thread at the end of each pass.
    sample_rate : float
        The renderer's device rate.
    channels : int
        The renderer's output channels.
    length : int
        A very large number: the end is known only once :attr:`loop` is off.
    """

    def __init__(self, renderer: Any, loop: bool = False) -> None:
        self.renderer = renderer
        self.loop = bool(loop)
        self.sample_rate = float(renderer.sample_rate)
        self.channels = int(getattr(renderer, "channels", 1))
        self.length = ENDLESS
        self._passes = 0  # passes begun (feeding thread only)

    def blocks(self, block: int = 4096) -> Iterator[np.ndarray]:
        """The renderer's blocks, pass after pass while :attr:`loop` is on."""
        while True:
            self._passes += 1
            yield from self.renderer.blocks(block)
            if not self.loop:
                return

    @property
    def block_gain(self) -> float:
        """The renderer's limiter gain over the block yielded last."""
        return float(getattr(self.renderer, "block_gain", 1.0))

    @property
    def passes(self) -> int:
        """How many passes were begun."""
        return self._passes

    def position_of(self, output_sample: int) -> float:
        """Recording seconds heard at ``output_sample`` (counted over all passes)."""
        n = int(self.renderer.length)
        k = int(output_sample)
        if k >= self._passes * n:  # past the last pass begun: its end
            return float(self.renderer.position_of(n))
        return float(self.renderer.position_of(k % n))
