"""The one streaming protocol: stages pushed chunk by chunk, carrying their own state.

A :class:`Stage` takes ``push(x, final) -> y``: the outputs the next chunk
completes, every chunking giving the outputs of one push of the whole signal.
It declares its history in samples (``lookback``, ``lookahead``, ``latency``,
``drop``), and spawns fresh copies: :meth:`Stage.spawn` (one channel, 1-D
chunks) and :meth:`Stage.for_channels` (chunks shaped ``(channels, samples)``).
:class:`Chain` pushes through stages in turn; :class:`Map` makes a sample-wise
function a stage.  :mod:`.buffer` holds the buffering every stream needs
(:class:`Tail`, :class:`Trim`, :class:`Rebuffer`) and :func:`run`, the one loop
reading a range in chunks through a stage.

Filters (:mod:`specscope.compute.filters.apply`), pipeline stages (the
spectrogram included), the playback chain and the live block processor are
all stages; exports, batch runs, playback and live sessions stream through
:func:`run` or :meth:`Chain.push`.
"""

from .buffer import Rebuffer, Tail, Trim, run
from .stage import Chain, Map, PerChannel, Stage

__all__ = ["Chain", "Map", "PerChannel", "Rebuffer", "Stage", "Tail", "Trim", "run"]
