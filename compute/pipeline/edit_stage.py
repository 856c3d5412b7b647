"""The stage of an ``edit`` step: a region edit in a stream of chunks.

Samples before the region pass at once; the samples the edit changes are held until
every sample it reads has come (or the stream ends), then computed in one piece with
:func:`~specscope.compute.edit.apply_edit`, so a chunked run equals a whole run bit
for bit, whatever the chunks.  The stage is placed on the recording's sample axis
(:meth:`EditStage.placed`): a run of a range or a part of a long recording starts
where its first sample is.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from typing import Any

import numpy as np

from ..edit import RegionEdit, apply_edit
from .stages import Stage
from .step import Step

__all__ = ["EditStage"]


class EditStage(Stage):
    """A region edit (``{"op": "edit", "params": RegionEdit.to_dict()}``).

    Parameters
    ----------
    step : Step
        The pipeline step.
    edit : RegionEdit
        The edit; its region in seconds from the recording's start and Hz (an IQ
        capture's in Hz from its centre frequency).
    fs : float
        Sample rate.
    inner : BoundPipeline, optional
        ``filter``: the edit's steps, bound; the region takes their output.
    """

    def __init__(self, step: Step, edit: RegionEdit, fs: float, inner: Any = None) -> None:
        super().__init__(step)
        self.edit, self.fs, self.inner = edit, float(fs), inner
        self.s0, self.s1, self.r0, self.r1 = edit.span(self.fs)
        # what the steps of a filter edit need around the span: their history
        self.reach = (0, 0) if inner is None else (int(inner.lookback), int(inner.lookahead))
        self.r0 -= self.reach[0]
        self.r1 += self.reach[1]
        if inner is not None:
            self.exact_split = bool(inner.exact_split)
        reach = self.r1 - self.r0
        self.lookback = self.lookahead = self.latency = reach
        self.origin = 0
        self._lock = threading.Lock()
        self._last: tuple[bytes, Any] | None = None  # a block's read span and its edit
        self.reset()

    def placed(self, origin: int) -> EditStage:
        """A fresh stage whose first input sample is the recording's sample ``origin``."""
        new = copy.copy(self)
        new.origin = int(origin)
        new.reset()
        return new

    def reset(self) -> None:
        self._buf: Any = None
        self._b0 = self.origin  # the recording's sample at the buffer's start
        self._emitted = self.origin
        self._edited: Any = None  # the changed samples, from self._e0
        self._e0 = self.s0

    def block(self, x: np.ndarray, fs: float, start: int) -> np.ndarray:
        """``x`` (samples ``start ..`` of one channel) edited, as a view's block needs it.

        A block that reaches the changed samples holds the whole read span (its context
        is the stage's history); the span's edit is kept, so the next block of the same
        view takes it instead of computing it again.
        """
        n = x.shape[-1]
        isolate = self.edit.operation == "isolate"
        if start >= self.s1 or start + n <= self.s0:
            return np.zeros_like(x) if isolate else x
        lo, hi = max(self.r0, start), min(self.r1, start + n)
        span = np.ascontiguousarray(x[..., lo - start:hi - start])
        key = hashlib.blake2b(span.tobytes(), digest_size=16,
                              person=f"{lo}:{span.dtype.str}".encode()[:16]).digest()
        with self._lock:
            last = self._last
        if last is not None and last[0] == key:
            edited = last[1]
        else:
            edited = self._call(lambda: self._apply(span, lo))
            with self._lock:
                self._last = (key, edited)
        out = np.zeros_like(x) if isolate else x.copy()
        a, b = max(self.s0, start), min(self.s1, start + n)
        out[..., a - start:b - start] = edited[..., a - lo:b - lo]
        return out

    def for_channels(self, channels: int) -> EditStage:
        return self.spawn()  # rows are edited together, each as on its own

    def _transform(self, rows: np.ndarray) -> np.ndarray:
        """The edit's steps over ``rows`` (channels, samples), from rest."""
        chain = self.inner.chain(rows.shape[0])
        return chain.push(rows, True)

    def _apply(self, x: Any, start: int) -> Any:
        return apply_edit(x, self.fs, self.edit, start,
                          transform=None if self.inner is None else self._transform,
                          reach=self.reach)

    def whole(self, x):
        return self._call(lambda: self._apply(x, self.origin))

    def _piece(self, buf: Any, a: int, b: int) -> Any:
        """Output samples ``a .. b`` (absolute)."""
        piece = buf[..., a - self._b0:b - self._b0]
        piece = np.zeros_like(piece) if self.edit.operation == "isolate" else piece.copy()
        if self._edited is not None:
            lo, hi = max(a, self._e0), min(b, self._e0 + self._edited.shape[-1])
            if hi > lo:
                piece[..., lo - a:hi - a] = self._edited[..., lo - self._e0:hi - self._e0]
        return piece

    def push(self, x, final):
        buf = x if self._buf is None else np.concatenate([self._buf, x], axis=-1)
        end = self._b0 + buf.shape[-1]
        touches = end > self.s0 and self._b0 < self.s1
        if self._edited is None and touches and (end >= self.r1 or final):
            y = self._call(lambda: self._apply(buf, self._b0))
            lo, hi = max(self.s0, self._b0), min(self.s1, end)
            self._edited, self._e0 = y[..., lo - self._b0:hi - self._b0], lo
        ready = self._edited is not None or final or not touches or end <= self.s0
        limit = end if ready else min(end, self.s0)
        out = self._piece(buf, self._emitted, max(self._emitted, limit))
        self._emitted = max(self._emitted, limit)
        # keep what the edit still reads (from r0) and what is not yet emitted
        keep = self._emitted if self._edited is not None else min(self._emitted,
                                                                  max(self.r0, self._b0))
        self._buf = buf[..., keep - self._b0:]
        self._b0 = keep
        return out
