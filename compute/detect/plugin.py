"""Operators declaring an ``events`` output (the shipped onset detector) as detectors.

:class:`OperatorDetector` runs any operator whose plugin declares
``events`` for it through the same stream as the built-in detectors.  An
operator that needs the whole signal (``history=None``, like
``onsets.detect``, whose threshold is relative to the strongest onset) is
given the whole stream at ``final``; one with a finite history ``h`` runs on
blocks of :data:`BLOCK` samples counted from the first sample, each with
``h`` samples before and after it, and keeps the events whose sample falls
in the block, so chunked runs equal whole runs for it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import extensions
from ..errors import InputError
from ..operators import Operator, dispatch
from ..params import check_bytes
from .core import Detector, pinned_backend
from .events import Events

__all__ = ["BLOCK", "OperatorDetector"]

#: samples per block for event operators with a finite history
BLOCK = 1 << 18


class OperatorDetector(Detector):
    """An ``events`` operator (a plugin's) as a streaming detector.

    Parameters
    ----------
    operator : str or Operator
        The operator (``"onsets.detect"``).
    params : mapping, optional
        Its parameters.
    label : str
        The label of its events (default: the operator's short name).
    """

    def __init__(self, operator: str | Operator, params: Mapping[str, Any] | None = None, *,
                 fs: float, center_frequency: float | None = None, backend: str = "auto",
                 label: str | None = None) -> None:
        self.op = dispatch.get(operator)
        kind = extensions.output_kind(self.op.name)
        if kind != "events":
            raise InputError(f"{self.op.name} gives {kind!r} results, not events; a detector "
                             "is a built-in detect.* operator or a plugin operator declaring "
                             "'events'")
        self.name = self.op.name  # type: ignore[misc] - per instance for plugin operators
        self.summary = self.op.summary  # type: ignore[misc]
        short = self.op.name.rsplit(".", 1)[-1]
        self.label = label if label is not None else (
            "onset" if self.op.name == "onsets.detect" else short)
        Detector.__init__(self, params, fs=fs, center_frequency=center_frequency,
                          backend=backend)
        self.backend = pinned_backend(backend)

    def _setup(self) -> None:
        self.history = self.op.history_for(self.params)
        #: an operator needing the whole signal emits only on ``final``
        self.streams = self.history is not None
        self.pending: list[np.ndarray] = []
        self.n_pending = 0
        self.base = 0  # absolute sample of pending[0]

    @property
    def lookback(self) -> int:  # type: ignore[override]
        return 0 if self.history is None else int(self.history)

    @property
    def lookahead(self) -> int:  # type: ignore[override]
        return self.lookback

    @property
    def latency(self) -> int:  # type: ignore[override]
        return BLOCK + self.lookback

    @property
    def grid(self) -> int | None:  # type: ignore[override]
        """Blocks of :data:`BLOCK` samples from the first; None for a whole-signal operator."""
        return None if self.history is None else BLOCK

    @property
    def part_lookback(self) -> int:  # type: ignore[override]
        """A part's first block has no history before it: one block and the history."""
        return BLOCK + self.lookback

    @property
    def settled(self) -> int:  # type: ignore[override]
        if self.closed:
            return self.samples_in
        return 0 if self.history is None else self.base

    def _call(self, x: np.ndarray) -> Events:
        result = dispatch.call(self.op.name, x, backend=self.backend, fs=self.fs,
                               **self.params)
        problem = extensions.check_result("events", result)
        if problem:
            raise InputError(f"{self.op.name}: its result is not events ({problem})")
        return Events.from_result(result, self.fs, detector=self.op.name,
                                  params=self.params, label=self.label)

    def _push(self, x: np.ndarray, final: bool) -> Events:
        self.pending.append(x)
        self.n_pending += x.size
        if self.history is None:
            check_bytes(self.n_pending * x.itemsize, "the whole signal it needs", self.op.name)
            if not final:
                return self.empty()
            whole = np.concatenate(self.pending) if self.pending else x
            self.pending, self.n_pending = [], 0
            if whole.size == 0:
                return self.empty()
            return self._call(whole)
        h = int(self.history)
        buf = np.concatenate(self.pending)
        out = []
        # buf[0] is absolute sample self.base - (history kept before the next block)
        start = self.base  # absolute start of the next block
        lead = self.samples_in - buf.size  # absolute sample of buf[0]
        while True:
            avail = lead + buf.size - start
            # a block is run with its history before it and as much after it (the
            # operator may look ahead as far as back: a centred frame or filter)
            take = BLOCK if avail >= BLOCK + h else (min(avail, BLOCK) if final else 0)
            if take <= 0:
                break
            lo = max(0, start - h)
            seg = buf[lo - lead:start + take + h - lead]
            ev = self._call(seg).shifted(lo)
            keep = (ev.start_sample >= start) & (ev.start_sample < start + take)
            out.append(ev.take(keep))
            start += take
        self.base = start
        keep_from = max(0, start - h) - lead
        rest = buf[keep_from:]
        self.pending, self.n_pending = [rest], rest.size
        return Events.concat(out, fs=self.fs, detector=self.op.name, params=self.params)
