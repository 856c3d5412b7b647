"""The processing of one live block: a bound pipeline's stages with carried state."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["BlockProcessor"]


class BlockProcessor:
    """Runs a bound pipeline's stages block by block, all channels at once.

    The same stage objects and the same calls as ``BoundPipeline.stream`` (which
    needs a known end), so the numbers equal :meth:`Pipeline.run`.  Each stage
    takes the block shaped (channels, samples) with its state carrying a
    channel axis (``push_rows``): one filter call and one STFT per block, not
    one per channel.

    Parameters
    ----------
    bound : BoundPipeline
        The pipeline bound to the source's sample rate; every stage streams.
    n_channels : int
        Channels of each block.
    """

    def __init__(self, bound: Any, n_channels: int) -> None:
        self.bound = bound
        self.steps = [(s.push_rows, s.new_rows_state(n_channels)) for s in bound.stages]
        spec = bound.spectrogram
        self.spec = spec.push_rows if spec is not None else None
        self.spec_state = spec.new_rows_state(n_channels) if spec is not None else None
        self.two_sided = bound.complex_output
        #: the time-domain output of the last block, (channels, samples): what a monitor hears
        self.signal: np.ndarray | None = None

    def push(self, block: np.ndarray, final: bool) -> np.ndarray:
        """Input (samples, channels) -> frames (frames, channels, freq) or samples (n, ch)."""
        y = block.T
        for push, st in self.steps:
            y = push(st, y, final)
        self.signal = y
        if self.spec is None:
            return y.T
        # (channels, frames, freq) -> (frames, channels, freq): a view; History copies
        return self.spec(self.spec_state, y, final, self.two_sided).transpose(1, 0, 2)
