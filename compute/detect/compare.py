"""Detections against annotations: matched by overlap, precision, recall and F1 per label.

A detection and an annotation (the truth) *match* when their time spans
overlap by at least ``min_overlap``, measured as the intersection over union
(IoU) of the spans, and their bands intersect when both have one (a
time-only box matches on time alone).  The bands only have to meet, not to
agree: a detected band is measured on STFT bins (the energy detector's is
within a bin or two of a call's at 6 dB SNR and more, and may be only the
part of a weak sweep it found).  Matching is one to one: the pairs are taken
in order of decreasing overlap (ties by position), each detection and each
annotation at most once.

Per label (the annotations' labels and the detections'), a matched pair whose
labels are equal is a true positive of that label; a detection of the label
left unmatched (or matched to an annotation of another label) is a false
positive, an annotation of the label left unmatched (or matched by a
detection of another label) a false negative.  The row ``"*"`` counts every
matched pair whatever the labels: how well the detector finds the calls.

    precision = tp / (tp + fp),  recall = tp / (tp + fn),
    F1 = 2 tp / (2 tp + fp + fn)

(NaN where a denominator is 0).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, operator_error

__all__ = ["ALL", "Box", "LabelScore", "compare", "match_boxes", "overlap"]

#: the label of the row that ignores labels
ALL = "*"


@dataclass(frozen=True)
class Box:
    """A time span (s), an optional band (Hz) and a label.

    Parameters
    ----------
    start_s, stop_s : float
        The time span (s).
    low_hz, high_hz : float, optional
        The band (Hz); None (or NaN) for a time-only box.
    label : str
        The label.
    """

    start_s: float
    stop_s: float
    low_hz: float | None = None
    high_hz: float | None = None
    label: str = ""

    @classmethod
    def of(cls, item: Any) -> Box:
        """A box from an Annotation, an Event or a Box."""
        if isinstance(item, Box):
            return item
        if hasattr(item, "freq_low_hz"):  # an Annotation
            return cls(float(item.start_s), float(item.stop_s), item.freq_low_hz,
                       item.freq_high_hz, str(item.label))
        if hasattr(item, "low_hz") and hasattr(item, "start_s"):  # an Event
            return cls(float(item.start_s), float(item.stop_s), item.low_hz, item.high_hz,
                       str(item.label))
        raise operator_error(InputError, "compare", f"expected annotations, events or boxes, got "
                         f"{type(item).__name__}")

    @property
    def has_band(self) -> bool:
        return not (self.low_hz is None or self.high_hz is None
                    or math.isnan(self.low_hz) or math.isnan(self.high_hz))


def _iou(a0: float, a1: float, b0: float, b1: float) -> float:
    inter = min(a1, b1) - max(a0, b0)
    union = max(a1, b1) - min(a0, b0)
    if union <= 0:  # two points at the same place
        return 1.0 if a0 == b0 and a1 == b1 else 0.0
    return max(inter, 0.0) / union


def overlap(a: Box, b: Box) -> float:
    """IoU of the time spans (0..1); 0 when both have bands and they do not meet.

    Parameters
    ----------
    a, b : Box
        The two boxes.

    Returns
    -------
    float
        Intersection over union of the time spans, from 0 to 1.

    Examples
    --------
    >>> overlap(Box(0.0, 2.0), Box(1.0, 3.0))
    0.3333333333333333
    >>> overlap(Box(0.0, 2.0, 100.0, 200.0), Box(1.0, 3.0, 300.0, 400.0))
    0.0
    """
    t = _iou(a.start_s, a.stop_s, b.start_s, b.stop_s)
    if t == 0.0 or not (a.has_band and b.has_band):
        return t
    meet = min(float(a.high_hz), float(b.high_hz)) - max(float(a.low_hz), float(b.low_hz))
    return t if meet > 0 else 0.0


def match_boxes(detected: Sequence[Box], truth: Sequence[Box], min_overlap: float = 0.3
                ) -> list[tuple[int, int, float]]:
    """One-to-one pairs ``(detection index, truth index, overlap)``, greedy by overlap.

    Pairs are taken in order of decreasing overlap (ties by position), each
    detection and each annotation at most once.

    Parameters
    ----------
    detected, truth : sequence of Box
        The detections and the annotations taken as the truth.
    min_overlap : float
        Least overlap (see :func:`overlap`) of a match, in (0, 1].

    Returns
    -------
    list of tuple of (int, int, float)
        The pairs, sorted by detection index.

    Raises
    ------
    InputError
        If ``min_overlap`` is not in (0, 1].

    Examples
    --------
    >>> match_boxes([Box(0.0, 1.0), Box(5.0, 6.0)], [Box(0.1, 1.0)])
    [(0, 0, 0.9)]
    """
    if not 0.0 < float(min_overlap) <= 1.0:
        raise operator_error(InputError, "compare", f"min_overlap={min_overlap!r} must be in (0, 1]")
    order = sorted(range(len(truth)), key=lambda j: truth[j].start_s)
    starts = [truth[j].start_s for j in order]
    candidates = []
    longest = max((b.stop_s - b.start_s for b in truth), default=0.0)
    for i, d in enumerate(detected):
        # only annotations that can overlap in time: start within [d.start - longest, d.stop]
        lo = bisect.bisect_left(starts, d.start_s - longest)
        hi = bisect.bisect_right(starts, d.stop_s)
        for j in order[lo:hi]:
            v = overlap(d, truth[j])
            if v >= min_overlap:
                candidates.append((-v, i, j))
    candidates.sort()
    used_d: set[int] = set()
    used_t: set[int] = set()
    pairs = []
    for v, i, j in candidates:
        if i in used_d or j in used_t:
            continue
        used_d.add(i)
        used_t.add(j)
        pairs.append((i, j, -v))
    return sorted(pairs)


@dataclass(frozen=True)
class LabelScore:
    """Counts and scores of one label (``"*"``: all labels together).

    ``precision``, ``recall`` and ``f1`` are NaN where their denominator is 0.

    Parameters
    ----------
    label : str
        The label, or ``"*"`` for every matched pair whatever the labels.
    tp, fp, fn : int
        True positives, false positives and false negatives.
    """

    label: str
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def f1(self) -> float:
        d = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / d if d else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "tp": self.tp, "fp": self.fp, "fn": self.fn,
                "precision": self.precision, "recall": self.recall, "f1": self.f1}


def compare(detected: Iterable[Any], truth: Iterable[Any], *, min_overlap: float = 0.3
            ) -> list[LabelScore]:
    """Precision, recall and F1 of ``detected`` against ``truth``, per label.

    Parameters
    ----------
    detected, truth : iterables of Annotation, Event or Box
        The detections (an :class:`~.events.Events` table iterates as events)
        and the annotations taken as the truth.
    min_overlap : float
        Least overlap (see :func:`overlap`) of a match, in (0, 1].

    Returns
    -------
    list of LabelScore
        The ``"*"`` row first (every match counts, labels ignored), then one
        row per label in alphabetical order.

    Raises
    ------
    InputError
        If an item is no annotation, event or box, or ``min_overlap`` is not in (0, 1].
    """
    det = [Box.of(x) for x in detected]
    tru = [Box.of(x) for x in truth]
    pairs = match_boxes(det, tru, min_overlap)
    rows = [LabelScore(ALL, len(pairs), len(det) - len(pairs), len(tru) - len(pairs))]
    labels = sorted({b.label for b in det} | {b.label for b in tru})
    hit_d = {i for i, j, _ in pairs if det[i].label == tru[j].label}
    hit_t = {j for i, j, _ in pairs if det[i].label == tru[j].label}
    for label in labels:
        tp = sum(1 for i in hit_d if det[i].label == label)
        fp = sum(1 for i, b in enumerate(det) if b.label == label and i not in hit_d)
        fn = sum(1 for j, b in enumerate(tru) if b.label == label and j not in hit_t)
        rows.append(LabelScore(label, tp, fp, fn))
    return rows
