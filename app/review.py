"""Reviewing detections, without Qt: which detections were accepted or rejected, with labels.

:class:`Review` holds a detector's :class:`~specscope.compute.detect.Events` and,
per detection, the decision (:data:`PENDING`, :data:`ACCEPTED` or
:data:`REJECTED`) and the label the person gave it (the detector's own label
until then), the detection under review and the label list the number keys
choose from.  It is what a session file keeps (:meth:`Review.to_dict`,
:meth:`Review.from_dict`, which names what is wrong in one line) and what the
review table is written from (:meth:`Review.write_table`): every detection as
an annotation (label, box, ``generator`` = the detector, comment
``score=...; review=...``) in any annotation format, and for Raven selection
tables and CSV two more columns, ``Score`` and ``Review``, so a spreadsheet
can sort and filter by them.  Accepted detections become annotations
(:meth:`Review.annotation`) whose uuid is derived from the detection, so
accepting, undoing and accepting again gives the same annotation.  A review
builds a detection's annotation only when it is asked for (accepting it), so
making one for a large table is cheap on the GUI thread; the tables
(:meth:`Review.write_table`) build them all, on the compute thread.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from specscope.compute.annotations import Annotation, detect_format, write_annotations
from specscope.compute.detect import Events
from specscope.compute.errors import InputError
from specscope.compute.files import atomic_write_text

__all__ = ["ACCEPTED", "DEFAULT_LABELS", "PENDING", "REJECTED", "REVIEW_COLUMNS", "STATES",
           "Review"]

PENDING, ACCEPTED, REJECTED = "", "accepted", "rejected"
STATES = (PENDING, ACCEPTED, REJECTED)
#: the labels keys 1, 2, 3 ... give until the person writes a list of their own
DEFAULT_LABELS = ("call", "noise", "other")
#: the columns a Raven or CSV review table has beyond the annotation columns
REVIEW_COLUMNS = ("Score", "Review")


def _nan_none(a: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in a.tolist()]


def _num(v: Any, what: str) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"{what}={v!r} must be a number or null")
    return float(v)


class Review:
    """Decisions about the detections of one run.

    Parameters
    ----------
    events : Events
        The detections, in the order they are reviewed (by start).
    states, labels : sequences, optional
        Per detection: the decision (one of :data:`STATES`) and the label;
        all pending with the detector's labels by default.
    index : int
        The detection under review.
    label_list : sequence of str
        What keys 1..9 label with.
    """

    def __init__(self, events: Events, states: Sequence[str] | None = None,
                 labels: Sequence[str] | None = None, index: int = 0,
                 label_list: Sequence[str] = DEFAULT_LABELS) -> None:
        n = len(events)
        self.events = events
        self.states = [PENDING] * n if states is None else [str(s) for s in states]
        self.labels = list(events.label) if labels is None else [str(v) for v in labels]
        if len(self.states) != n or len(self.labels) != n:
            raise InputError(f"review: {len(self.states)} decisions and {len(self.labels)} "
                             f"labels for {n} detections")
        bad = [s for s in self.states if s not in STATES]
        if bad:
            raise InputError(f"review: decision {bad[0]!r} must be 'accepted', 'rejected' "
                             "or '' (pending)")
        self.index = min(max(int(index), 0), max(n - 1, 0))
        self.label_list = [str(v) for v in label_list]
        #: the annotations of the detections asked for so far: built one by one when
        #: needed, so a table of 100 000 detections costs the GUI thread nothing up front
        self._base: dict[int, Annotation] = {}

    def __len__(self) -> int:
        return len(self.events)

    # -- decisions ------------------------------------------------------------------------
    def decide(self, i: int, state: str, label: str | None = None) -> None:
        """Set detection ``i``'s decision (and label, when given)."""
        if state not in STATES:
            raise InputError(f"review: decision {state!r} must be one of {STATES}")
        self.states[i] = state
        if label is not None:
            self.labels[i] = str(label)

    def counts(self) -> dict[str, int]:
        """How many detections are accepted, rejected and pending."""
        return {"accepted": self.states.count(ACCEPTED),
                "rejected": self.states.count(REJECTED),
                "pending": self.states.count(PENDING)}

    def next_pending(self, after: int) -> int | None:
        """The first pending detection after ``after`` (wrapping), None when none is."""
        n = len(self)
        for k in range(1, n + 1):
            j = (after + k) % n
            if self.states[j] == PENDING:
                return j
        return None

    def annotation(self, i: int) -> Annotation:
        """Detection ``i`` as the annotation accepting it makes (a stable uuid)."""
        base = self._base.get(i)
        if base is None:
            base = self._base[i] = self.events.take([i]).to_annotations()[0]
        return base.replace(label=self.labels[i])

    def accepted_annotations(self) -> list[Annotation]:
        return [self.annotation(i) for i, s in enumerate(self.states) if s == ACCEPTED]

    # -- session files --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The review as JSON types (what a session file keeps)."""
        e = self.events
        return {"detector": e.detector, "params": dict(e.params), "fs": e.fs,
                "start_sample": e.start_sample.tolist(), "stop_sample": e.stop_sample.tolist(),
                "low_hz": _nan_none(e.low_hz), "high_hz": _nan_none(e.high_hz),
                "score": _nan_none(e.score), "label": list(e.label),
                "channel": e.channel.tolist(), "review": list(self.states),
                "review_label": list(self.labels), "index": self.index,
                "label_list": list(self.label_list)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "detections") -> Review:
        """:meth:`to_dict` backwards; :class:`InputError` names the field that is wrong."""
        if not isinstance(d, Mapping):
            raise InputError(f"{where} must be an object")
        try:
            n = len(d["start_sample"])
            cols = {}
            for name in ("start_sample", "stop_sample", "low_hz", "high_hz", "score",
                         "label", "channel", "review", "review_label"):
                v = d[name]
                if not isinstance(v, list) or len(v) != n:
                    raise InputError(f"{where}.{name} must be a list of {n} values")
                cols[name] = v
            for name in ("start_sample", "stop_sample", "channel"):
                if any(isinstance(x, bool) or not isinstance(x, int) for x in cols[name]):
                    raise InputError(f"{where}.{name} must hold whole numbers")
            nums = {name: [_num(x, f"{where}.{name}") for x in cols[name]]
                    for name in ("low_hz", "high_hz", "score")}
            params = d.get("params", {})
            if not isinstance(params, Mapping):
                raise InputError(f"{where}.params must be an object")
            fs = _num(d["fs"], f"{where}.fs")
            try:  # the table's own checks (edges, sizes): their words under where
                events = Events(np.asarray(cols["start_sample"], np.int64),
                                np.asarray(cols["stop_sample"], np.int64), fs,
                                nums["low_hz"], nums["high_hz"], nums["score"],
                                tuple(str(x) for x in cols["label"]),
                                np.asarray(cols["channel"], np.int64),
                                str(d.get("detector", "")), params)
            except InputError as exc:
                raise InputError(f"{where}: {exc}") from None
            labels = d.get("label_list", list(DEFAULT_LABELS))
            if not isinstance(labels, list):
                raise InputError(f"{where}.label_list must be a list of labels")
            index = d.get("index", 0)
            if isinstance(index, bool) or not isinstance(index, int):
                raise InputError(f"{where}.index must be a whole number")
            try:  # the decisions' own checks, under where
                return cls(events, cols["review"], cols["review_label"], index, labels)
            except InputError as exc:
                raise InputError(f"{where}: {exc}") from None
        except KeyError as exc:
            raise InputError(f"{where}: {exc.args[0]!r} is missing") from None

    # -- tables ---------------------------------------------------------------------------
    def table_annotations(self) -> list[Annotation]:
        """Every detection as an annotation: its label, ``score=...; review=...``
        (all of them built: for the compute thread, as the export job does)."""
        out = []
        for i, a in enumerate(self.events.to_annotations()):
            state = self.states[i] or "pending"
            out.append(a.replace(label=self.labels[i],
                                 comment=f"score={float(self.events.score[i])!r}; "
                                         f"review={state}"))
        return out

    def write_table(self, path: str | os.PathLike[str], *, format: str | None = None,
                    recording: Any = None) -> Path:
        """Write every detection with its decision (see the module notes).

        The format comes from the name when omitted (Raven ``.selections.txt``
        / ``.tsv``, Audacity, CSV, SigMF, HDF5); Raven tables and CSV get the
        ``Score`` and ``Review`` columns.
        """
        notes = self.table_annotations()
        fmt = (format or detect_format(path, reading=False)).lower()
        sample_rate = None if recording is not None else self.events.fs
        out = write_annotations(path, notes, format=fmt, recording=recording,
                                sample_rate=sample_rate)
        if fmt in ("raven", "csv"):
            extra = {a.uuid: (repr(float(self.events.score[i])), self.states[i] or "pending")
                     for i, a in enumerate(notes)}
            _add_columns(out, fmt, extra)
        return out


def _add_columns(path: Path, fmt: str, extra: Mapping[str, tuple[str, str]]) -> None:
    """Append :data:`REVIEW_COLUMNS` to a written Raven or CSV table, row by uuid."""
    text = path.read_text(encoding="utf-8")
    if fmt == "raven":
        lines = text.splitlines()
        head = lines[0].split("\t")
        at = head.index("UUID")
        rows = ["\t".join([*head, *REVIEW_COLUMNS])]
        rows += ["\t".join([*cells, *extra.get(cells[at], ("", ""))])
                 for cells in (line.split("\t") for line in lines[1:] if line)]
        atomic_write_text(path, "\n".join(rows) + "\n")
        return
    table = list(csv.reader(io.StringIO(text, newline="")))
    at = table[0].index("uuid")
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow([*table[0], "score", "review"])
    for row in table[1:]:
        if row:
            writer.writerow([*row, *extra.get(row[at], ("", ""))])
    atomic_write_text(path, buf.getvalue())
