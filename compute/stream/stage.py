"""The stage: one step over a stream of chunks, carrying its own state.

A :class:`Stage` is pushed chunks in order, ``y = stage.push(x, final)``, and
returns the outputs those chunks complete; over a whole stream the outputs
joined are what one push of everything with ``final=True`` returns, whatever
the chunking (bit for bit, or to float rounding where a stage says so with
``exact_split = False``).  Time runs along the last axis.

A stage made by its constructor is at rest and ready to be pushed.
:meth:`Stage.spawn` gives a fresh, independent copy (same configuration, state
at rest) and :meth:`Stage.for_channels` one that takes chunks shaped
``(channels, samples)``, each row equal to what a spawned stage gives for that
channel alone.  :class:`Chain` pushes through stages in turn.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from .. import backend as _backend

__all__ = ["Chain", "Map", "PerChannel", "Stage"]


class Stage:
    """One step of a stream: ``push(x, final) -> y`` with state carried from chunk to chunk.

    Subclasses put their carried state at rest in :meth:`reset` (called by
    their constructor and by :meth:`spawn` on a shallow copy, so state must be
    assigned there, never shared with the template) and implement :meth:`push`.
    """

    #: input samples before an output sample that it depends on (IIR: settling length)
    lookback = 0
    #: input samples after an output sample that it depends on
    lookahead = 0
    #: input samples whose outputs a push may hold back until later pushes (or ``final``)
    latency = 0
    #: leading input samples a whole run does not emit outputs for ("valid" operators)
    drop = 0
    #: True when a cold start ``lookback`` samples early gives exactly the same output
    exact_split = True
    #: False when the stage needs the whole signal at once (it emits only on ``final``)
    streams = True

    def reset(self) -> None:
        """Put the carried state at rest."""

    def push(self, x: Any, final: bool) -> Any:
        """The outputs completed by the next chunk ``x`` (all the rest when ``final``)."""
        raise NotImplementedError

    def spawn(self) -> Stage:
        """A fresh stage of the same configuration, independent of this one, at rest."""
        new = copy.copy(self)
        new.reset()
        return new

    def for_channels(self, channels: int) -> Stage:
        """A fresh stage taking chunks shaped ``(channels, samples)``.

        Each output row equals, bit for bit, what :meth:`spawn` gives for that
        channel alone.  By default one spawned stage per channel
        (:class:`PerChannel`); stages that can do all rows in one call override it.
        """
        return PerChannel(self, channels)

    def whole(self, x: Any) -> Any:
        """The stage over a whole signal (1-D, or rows) from rest."""
        fresh = self.spawn() if x.ndim == 1 else self.for_channels(x.shape[0])
        return fresh.push(x, True)


class PerChannel(Stage):
    """``channels`` spawned copies of a stage, one per row of a ``(channels, n)`` chunk.

    It takes the history attributes of ``stage``.

    Parameters
    ----------
    stage : Stage
        The template; each row gets a :meth:`Stage.spawn` of it.
    channels : int
        Rows of the chunks.
    """

    def __init__(self, stage: Stage, channels: int) -> None:
        self.stage = stage
        self.channels = int(channels)
        for name in ("lookback", "lookahead", "latency", "drop", "exact_split", "streams"):
            setattr(self, name, getattr(stage, name))
        self.reset()

    def reset(self) -> None:
        self.rows = [self.stage.spawn() for _ in range(self.channels)]

    def push(self, x: Any, final: bool) -> Any:
        if not self.rows:
            return x[:, :0]
        ys = [s.push(x[c], final) for c, s in enumerate(self.rows)]
        return _backend.get_xp(_backend.backend_of(ys[0])).stack(ys)

    def for_channels(self, channels: int) -> Stage:
        return PerChannel(self.stage, channels)


class Map(Stage):
    """A sample-wise function ``fn(x) -> y`` as a stage (no state, no history).

    Parameters
    ----------
    fn : callable
        Applied to each chunk; its output has one sample per input sample.
    """

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def push(self, x: Any, final: bool) -> Any:
        return self.fn(x)

    def for_channels(self, channels: int) -> Stage:
        return self


class Chain(Stage):
    """Stages in turn: each chunk is pushed through all of them.

    Its history is the sum of theirs (``lookback``, ``lookahead``, ``latency``,
    ``drop``); it is exact and streams when all of them do.

    Parameters
    ----------
    stages : iterable of Stage
        The stages, in order.

    Examples
    --------
    >>> import numpy as np
    >>> chain = Chain([Map(lambda x: 2 * x), Map(lambda x: x + 1)])
    >>> chain.push(np.array([0.0, 1.0]), True)
    array([1., 3.])
    """

    def __init__(self, stages: Iterable[Stage]) -> None:
        self.stages = list(stages)

    @property
    def lookback(self) -> int:  # type: ignore[override]
        return sum(s.lookback for s in self.stages)

    @property
    def lookahead(self) -> int:  # type: ignore[override]
        return sum(s.lookahead for s in self.stages)

    @property
    def latency(self) -> int:  # type: ignore[override]
        return sum(s.latency for s in self.stages)

    @property
    def drop(self) -> int:  # type: ignore[override]
        return sum(s.drop for s in self.stages)

    @property
    def exact_split(self) -> bool:  # type: ignore[override]
        return all(s.exact_split for s in self.stages)

    @property
    def streams(self) -> bool:  # type: ignore[override]
        return all(s.streams for s in self.stages)

    def push(self, x: Any, final: bool) -> Any:
        for s in self.stages:
            x = s.push(x, final)
        return x

    def spawn(self) -> Chain:
        return Chain(s.spawn() for s in self.stages)

    def for_channels(self, channels: int) -> Chain:
        return Chain(s.for_channels(channels) for s in self.stages)
