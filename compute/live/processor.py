"""The processing of one live block: a bound pipeline's stages with carried state."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..stream import Stage

__all__ = ["BlockProcessor"]


class BlockProcessor(Stage):
    """Pushes live blocks through a bound pipeline's stages, all channels at once.

    The same stages as ``BoundPipeline.stream`` (which needs a known end):
    a fresh :meth:`BoundPipeline.chain <specscope.compute.pipeline.BoundPipeline.chain>`
    for ``n_channels`` and the spectrogram's stage, so the numbers equal
    :meth:`Pipeline.run`.  Each stage takes the block shaped (channels,
    samples): one filter call and one STFT per block, not one per channel.

    Parameters
    ----------
    bound : BoundPipeline
        The pipeline bound to the source's sample rate; every stage streams.
    n_channels : int
        Channels of each block.
    """

    def __init__(self, bound: Any, n_channels: int) -> None:
        self.bound = bound
        self.n_channels = int(n_channels)
        self.reset()

    def reset(self) -> None:
        self.chain = self.bound.chain(self.n_channels)
        spec = self.bound.spectrogram
        self.spec = spec.for_channels(self.n_channels) if spec is not None else None
        #: the time-domain output of the last block, (channels, samples): what a monitor hears
        self.signal: np.ndarray | None = None

    @property
    def lookback(self) -> int:  # type: ignore[override]
        return self.chain.lookback

    @property
    def latency(self) -> int:  # type: ignore[override]
        return self.chain.latency + (0 if self.spec is None else self.spec.latency)

    def push(self, block: np.ndarray, final: bool) -> np.ndarray:
        """Input (samples, channels) -> frames (frames, channels, freq) or samples (n, ch)."""
        y = self.chain.push(block.T, final)
        self.signal = y
        if self.spec is None:
            return y.T
        # (channels, frames, freq) -> (frames, channels, freq): a view; History copies
        return self.spec.push(y, final).transpose(1, 0, 2)
