"""Buffering for streams: carried tails, trimming, fixed-size blocks and the one chunk loop.

* :class:`Tail` -- the last ``k`` samples carried in front of the next chunk
  (FIR history, "valid" operators, resamplers);
* :class:`Trim` -- a stage dropping the first ``skip`` samples, cutting after
  ``take`` and optionally padding with zeros to ``take`` at the end;
* :class:`Rebuffer` -- outputs of any size regrouped into blocks of a fixed size;
* :func:`run` -- the loop: read a range in chunks, push them through a stage,
  yield what comes out, with progress and cancellation between chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import backend as _backend
from ..errors import Cancelled, InputError
from .stage import Stage

__all__ = ["Rebuffer", "Tail", "Trim", "run"]


class Tail:
    """The last ``size`` samples (last axis) carried from chunk to chunk.

    ``join(x)`` returns the carried samples followed by ``x`` and keeps the
    last ``size`` of that for the next call.  ``zeros=True`` starts from
    ``size`` zeros (a filter at rest), otherwise from nothing.

    Parameters
    ----------
    size : int
        Samples carried.
    zeros : bool
        Start from ``size`` zeros rather than from nothing.

    Examples
    --------
    >>> import numpy as np
    >>> tail = Tail(2)
    >>> tail.join(np.array([0.0, 1.0, 2.0])), tail.join(np.array([3.0, 4.0]))
    (array([0., 1., 2.]), array([1., 2., 3., 4.]))
    """

    def __init__(self, size: int, zeros: bool = False) -> None:
        self.size = int(size)
        self.zeros = bool(zeros)
        self.held: Any = None

    def join(self, x: Any) -> Any:
        xp = _backend.get_xp(_backend.backend_of(x))
        if self.held is None:
            z = (xp.concatenate([xp.zeros(x.shape[:-1] + (self.size,), x.dtype), x], axis=-1)
                 if self.zeros else x)
        else:
            z = xp.concatenate([self.held, x], axis=-1)
        self.held = z[..., max(0, z.shape[-1] - self.size):]
        return z


class Trim(Stage):
    """Drop the first ``skip`` samples, cut after ``take`` (last axis).

    With ``pad``, a stream shorter than ``take`` is completed with zeros on
    ``final``.  :attr:`done` turns True once ``take`` samples have left.

    Parameters
    ----------
    skip : int
        Leading samples dropped.
    take : int, optional
        Samples passed after those (all when None).
    pad : bool
        Complete a shorter stream with zeros to ``take`` samples on ``final``.

    Raises
    ------
    InputError
        ``pad`` without ``take``.

    Examples
    --------
    >>> import numpy as np
    >>> trim = Trim(skip=1, take=3)
    >>> trim.push(np.array([0.0, 1.0]), False), trim.push(np.array([2.0, 3.0, 4.0]), True)
    (array([1.]), array([2., 3.]))
    """

    def __init__(self, skip: int = 0, take: int | None = None, pad: bool = False) -> None:
        if pad and take is None:
            raise InputError("Trim(pad=True) needs take")
        self.skip, self.take, self.pad = int(skip), take, bool(pad)
        self.reset()

    def reset(self) -> None:
        self.skipped = 0
        self.passed = 0

    @property
    def done(self) -> bool:
        return self.take is not None and self.passed >= self.take

    def push(self, x: Any, final: bool) -> Any:
        if self.skipped < self.skip:
            k = min(self.skip - self.skipped, x.shape[-1])
            x = x[..., k:]
            self.skipped += k
        if self.take is not None:
            x = x[..., :max(0, self.take - self.passed)]
            if final and self.pad and self.passed + x.shape[-1] < self.take:
                xp = _backend.get_xp(_backend.backend_of(x))
                fill = xp.zeros(x.shape[:-1] + (self.take - self.passed - x.shape[-1],))
                x = xp.concatenate([x, fill], axis=-1)
        self.passed += x.shape[-1]
        return x

    def for_channels(self, channels: int) -> Stage:
        return self.spawn()


class Rebuffer:
    """Arrays of any length (first axis) regrouped into blocks of ``block`` samples.

    Parameters
    ----------
    block : int
        Samples per block (>= 1).

    Raises
    ------
    InputError
        ``block`` is not a whole number >= 1.

    Examples
    --------
    >>> import numpy as np
    >>> rb = Rebuffer(4)
    >>> [b.tolist() for b in rb.push(np.arange(6))], [b.tolist() for b in rb.flush()]
    ([[0, 1, 2, 3]], [[4, 5]])
    """

    def __init__(self, block: int) -> None:
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise InputError(f"block={block!r} must be a whole number >= 1")
        self.block = int(block)
        self._pending: list[np.ndarray] = []
        self._held = 0

    def push(self, y: np.ndarray) -> Iterator[np.ndarray]:
        """The full blocks that ``y`` completes."""
        if y.shape[0]:
            self._pending.append(y)
            self._held += y.shape[0]
        while self._held >= self.block:
            yield self._cut()

    def flush(self) -> Iterator[np.ndarray]:
        """The rest: full blocks, then a last shorter one."""
        while self._held:
            yield self._cut()

    def _cut(self) -> np.ndarray:
        joined = np.concatenate(self._pending) if len(self._pending) > 1 else self._pending[0]
        out, rest = joined[:self.block], joined[self.block:]
        self._pending, self._held = ([rest] if rest.shape[0] else []), rest.shape[0]
        return out


def run(stage: Stage | Callable[[Any], Stage], read: Callable[[int, int], Any],
        start: int, stop: int, *, chunk: int,
        progress: Callable[[float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        until: Callable[[], bool] | None = None) -> Iterator[Any]:
    """Push ``read(a, b)`` for chunks of ``start:stop`` through a stage; yield each output.

    Parameters
    ----------
    stage : Stage or callable
        The stage, or ``make(first_chunk) -> Stage`` for a stage that depends
        on what is read (its number of channels).
    read : callable
        ``read(a, b)``: the input samples ``a:b``.
    chunk : int
        Samples read at a time (at least one read, ``final``, for an empty range).
    progress : callable, optional
        Called after each chunk with the fraction read.
    cancelled : callable, optional
        Asked before each chunk; True raises :class:`~specscope.compute.errors.Cancelled`.
    until : callable, optional
        Asked after each chunk; True ends the stream there (nothing more is wanted).

    Yields
    ------
    array
        What the stage returns for each chunk (possibly empty); the last chunk is
        pushed with ``final=True``.

    Raises
    ------
    InputError
        ``chunk`` < 1.
    Cancelled
        ``cancelled()`` was true before a chunk.

    Examples
    --------
    >>> import numpy as np
    >>> read = lambda a, b: np.arange(a, b, dtype=float)
    >>> list(run(Trim(skip=1), read, 0, 5, chunk=2))
    [array([1.]), array([2., 3.]), array([4.])]
    """
    if chunk < 1:
        raise InputError(f"chunk_samples={chunk} must be >= 1")
    n = stop - start
    pos = start
    current = stage if isinstance(stage, Stage) else None
    while True:
        if cancelled is not None and cancelled():
            raise Cancelled()
        end = min(stop, pos + chunk)
        final = end >= stop
        x = read(pos, end)
        if current is None:
            current = stage(x)  # type: ignore[operator]
        yield current.push(x, final)
        pos = end
        if progress is not None and n:
            progress((pos - start) / n)
        if final or (until is not None and until()):
            return
