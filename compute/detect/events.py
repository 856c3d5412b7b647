"""The events table: what a detector found, as columns, and its conversions.

:class:`Events` holds one row per detection: the edges in samples
(``start_sample``, ``stop_sample``, exact integers, so a chunked run can be
compared with a whole run edge for edge) and in seconds, the band
(``low_hz``, ``high_hz``; NaN for a time-only event), the ``score`` (what
the detector ranks by: SNR in dB, a correlation), the ``label`` and the
``channel``, with the detector's operator name and parameters for the table.

It becomes annotations (:meth:`Events.to_annotations`, ``generator`` = the
detector) and annotation files through the annotation writers of
:mod:`specscope.compute.annotations` (:meth:`Events.write`,
:func:`read_events`): the score travels in the comment (``score=12.5``), and
in the label for Audacity labels, which carry no comment.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..annotations import Annotation, read_annotations, write_annotations
from ..annotations.model import stable_uuid
from ..errors import InputError
from ..params import json_types
from ..types import TableFormat

__all__ = ["COLUMNS", "Event", "Events", "read_events"]

#: the table's columns, in the order of :meth:`Events.to_rows`
COLUMNS = ("start_sample", "stop_sample", "start_s", "stop_s", "low_hz", "high_hz", "score",
           "label", "channel", "detector")

_SCORE = re.compile(r"(?:^|[\s;(\[])score=([-+0-9.eEinfa]+)")


@dataclass(frozen=True)
class Event:
    """One row of :class:`Events` (plain Python values).

    Parameters
    ----------
    start_sample, stop_sample : int
        Edges in samples.
    start_s, stop_s : float
        Edges in seconds.
    low_hz, high_hz : float or None
        The band (Hz); None for a time-only event.
    score : float
        The detector's score (NaN when unknown).
    label : str
        The label.
    channel : int or None
        The channel, or None when not set.
    detector : str
        The detector's operator name.
    """

    start_sample: int
    stop_sample: int
    start_s: float
    stop_s: float
    low_hz: float | None
    high_hz: float | None
    score: float
    label: str
    channel: int | None
    detector: str

    @property
    def duration_s(self) -> float:
        return self.stop_s - self.start_s

    @property
    def centre_hz(self) -> float | None:
        """Middle of the band, or None for a time-only event."""
        return None if self.low_hz is None else 0.5 * (self.low_hz + self.high_hz)

    @property
    def bandwidth_hz(self) -> float | None:
        return None if self.low_hz is None else self.high_hz - self.low_hz


def _col(values: Any, dtype: Any, n: int | None = None) -> np.ndarray:
    a = np.asarray(values, dtype=dtype).reshape(-1)
    if n is not None and a.size != n:
        raise InputError(f"Events: a column has {a.size} values for {n} events")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Events:
    """A table of detections (columns of equal length, read-only).

    Parameters
    ----------
    start_sample, stop_sample : array of int
        Edges in samples from the recording's first sample (``stop`` exclusive).
    fs : float
        Sample rate of the recording: ``start_s = start_sample / fs``.
    low_hz, high_hz : array of float, optional
        Band in absolute Hz (RF for IQ); NaN where an event has none.
    score : array of float
    label : sequence of str, optional
        One label per event (``""`` by default).
    channel : array of int, optional
        0-based channel, -1 for "all channels".
    detector : str
        The operator name of the detector (``"detect.energy"``).
    params : mapping
        The detector's validated parameters (JSON types).
    """

    start_sample: np.ndarray
    stop_sample: np.ndarray
    fs: float
    low_hz: np.ndarray | None = None
    high_hz: np.ndarray | None = None
    score: np.ndarray | None = None
    label: tuple[str, ...] | None = None
    channel: np.ndarray | None = None
    detector: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.fs, (int, float, np.number)) and math.isfinite(self.fs)
                and self.fs > 0):
            raise InputError(f"Events: fs={self.fs!r} must be a sample rate > 0")
        start = _col(self.start_sample, np.int64)
        n = start.size
        stop = _col(self.stop_sample, np.int64, n)
        if np.any(stop < start):
            raise InputError("Events: stop_sample must be >= start_sample")
        nan = np.full(n, np.nan)
        low = _col(nan if self.low_hz is None else self.low_hz, np.float64, n)
        high = _col(nan if self.high_hz is None else self.high_hz, np.float64, n)
        score = _col(nan if self.score is None else self.score, np.float64, n)
        label = ("",) * n if self.label is None else tuple(str(v) for v in self.label)
        if len(label) != n:
            raise InputError(f"Events: {len(label)} labels for {n} events")
        chan = _col(np.full(n, -1) if self.channel is None else self.channel, np.int64, n)
        for name, value in (("start_sample", start), ("stop_sample", stop), ("low_hz", low),
                            ("high_hz", high), ("score", score), ("label", label),
                            ("channel", chan), ("fs", float(self.fs)),
                            ("params", dict(json_types(dict(self.params))))):
            object.__setattr__(self, name, value)

    # -- construction ---------------------------------------------------------------

    @classmethod
    def empty(cls, fs: float, detector: str = "", params: Mapping[str, Any] | None = None
              ) -> Events:
        z = np.zeros(0, np.int64)
        return cls(z, z, fs, detector=detector, params=params or {})

    @classmethod
    def concat(cls, parts: Iterable[Events], fs: float | None = None, detector: str = "",
               params: Mapping[str, Any] | None = None) -> Events:
        """The rows of ``parts`` one after another (the first part's detector and fs)."""
        parts = list(parts)
        if not parts:
            if fs is None:
                raise InputError("Events.concat: no parts and no fs")
            return cls.empty(fs, detector, params)
        first = parts[0]
        return cls(np.concatenate([p.start_sample for p in parts]),
                   np.concatenate([p.stop_sample for p in parts]), first.fs,
                   np.concatenate([p.low_hz for p in parts]),
                   np.concatenate([p.high_hz for p in parts]),
                   np.concatenate([p.score for p in parts]),
                   tuple(v for p in parts for v in p.label),
                   np.concatenate([p.channel for p in parts]),
                   detector or first.detector, first.params if params is None else params)

    def take(self, index: Any) -> Events:
        """The rows at ``index`` (an integer array or a boolean mask)."""
        idx = np.arange(len(self))[np.asarray(index)] if len(self) else np.zeros(0, int)
        return Events(self.start_sample[idx], self.stop_sample[idx], self.fs,
                      self.low_hz[idx], self.high_hz[idx], self.score[idx],
                      tuple(self.label[i] for i in idx), self.channel[idx],
                      self.detector, self.params)

    def sorted(self) -> Events:
        """Rows in order of start, then channel, then stop."""
        return self.take(np.lexsort((self.stop_sample, self.channel, self.start_sample)))

    def shifted(self, samples: int) -> Events:
        """The same events ``samples`` later (a detector's offsets to recording offsets)."""
        return Events(self.start_sample + int(samples), self.stop_sample + int(samples),
                      self.fs, self.low_hz, self.high_hz, self.score, self.label,
                      self.channel, self.detector, self.params)

    def with_channel(self, channel: int | None) -> Events:
        c = -1 if channel is None else int(channel)
        return Events(self.start_sample, self.stop_sample, self.fs, self.low_hz,
                      self.high_hz, self.score, self.label, np.full(len(self), c),
                      self.detector, self.params)

    # -- reading ----------------------------------------------------------------------

    @property
    def start_s(self) -> np.ndarray:
        return self.start_sample / self.fs

    @property
    def stop_s(self) -> np.ndarray:
        return self.stop_sample / self.fs

    @property
    def duration_s(self) -> np.ndarray:
        return (self.stop_sample - self.start_sample) / self.fs

    @property
    def centre_hz(self) -> np.ndarray:
        return 0.5 * (self.low_hz + self.high_hz)

    @property
    def bandwidth_hz(self) -> np.ndarray:
        return self.high_hz - self.low_hz

    def __len__(self) -> int:
        return int(self.start_sample.size)

    def __getitem__(self, i: int) -> Event:
        i = range(len(self))[i]
        low, high = float(self.low_hz[i]), float(self.high_hz[i])
        band = not (math.isnan(low) or math.isnan(high))
        chan = int(self.channel[i])
        return Event(int(self.start_sample[i]), int(self.stop_sample[i]),
                     float(self.start_sample[i]) / self.fs, float(self.stop_sample[i]) / self.fs,
                     low if band else None, high if band else None, float(self.score[i]),
                     self.label[i], None if chan < 0 else chan, self.detector)

    def __iter__(self) -> Iterator[Event]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"Events({len(self)} from {self.detector or 'a detector'!r} at {self.fs:g} Hz)"

    # -- conversions ------------------------------------------------------------------

    def to_rows(self) -> list[dict[str, Any]]:
        """One dict per event with the keys :data:`COLUMNS` (None for no band/channel)."""
        out = []
        for e in self:
            out.append({"start_sample": e.start_sample, "stop_sample": e.stop_sample,
                        "start_s": e.start_s, "stop_s": e.stop_s, "low_hz": e.low_hz,
                        "high_hz": e.high_hz, "score": e.score, "label": e.label,
                        "channel": e.channel, "detector": e.detector})
        return out

    def to_dataframe(self) -> Any:
        """A pandas DataFrame of :meth:`to_rows` (pandas must be installed)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise InputError("Events.to_dataframe needs pandas; install it or use "
                             "to_rows()") from None
        frame = pd.DataFrame(self.to_rows(), columns=list(COLUMNS))
        frame.attrs.update({"detector": self.detector, "params": dict(self.params),
                            "fs": self.fs})
        return frame

    def to_result(self) -> dict[str, np.ndarray]:
        """The ``events`` kind of operator result (``times``, ``sample`` and columns)."""
        return {"times": self.start_s, "sample": self.start_sample.copy(),
                "stop_sample": self.stop_sample.copy(), "stop_s": self.stop_s,
                "low_hz": self.low_hz.copy(), "high_hz": self.high_hz.copy(),
                "score": self.score.copy()}

    @classmethod
    def from_result(cls, result: Mapping[str, Any], fs: float, *, detector: str = "",
                    params: Mapping[str, Any] | None = None, label: str = "") -> Events:
        """Events from an ``events`` result (a plugin's: ``sample``, ``strength``, ...).

        ``stop_sample`` defaults to ``sample`` (a point event); ``score`` to
        ``strength`` when the result has one; ``low_hz``/``high_hz`` to none.
        """
        sample = np.asarray(result["sample"], dtype=np.int64)
        stop = np.asarray(result.get("stop_sample", sample), dtype=np.int64)
        score = result.get("score", result.get("strength"))
        return cls(np.maximum(sample, 0), np.maximum(stop, np.maximum(sample, 0)), fs,
                   result.get("low_hz"), result.get("high_hz"), score,
                   (label,) * sample.size, None, detector, params or {})

    def to_annotations(self, *, with_params: bool = False) -> list[Annotation]:
        """One annotation per event, ``generator`` = the detector's name.

        The comment is ``score=<value>`` (with ``params=<json>`` appended when
        ``with_params``); the annotation's ``extra`` holds the sample edges and
        the score.  Uuids are derived from the detector and the event, so the
        same detection gives the same uuid in every run.  Bands are absolute
        Hz already (RF for IQ), as annotations keep them.
        """
        params = json.dumps(self.params, sort_keys=True, separators=(",", ":"))
        out = []
        for e in self:
            comment = f"score={e.score!r}"
            if with_params:
                comment += f"; params={params}"
            uid = stable_uuid("detect", self.detector, e.channel, e.start_sample,
                              e.stop_sample, e.label)
            out.append(Annotation(e.start_s, e.stop_s, e.low_hz, e.high_hz, label=e.label,
                                  comment=comment, uuid=uid, generator=self.detector,
                                  channel=e.channel,
                                  extra={"start_sample": e.start_sample,
                                         "stop_sample": e.stop_sample, "score": e.score}))
        return out

    @classmethod
    def from_annotations(cls, annotations: Sequence[Annotation], fs: float, *,
                         detector: str | None = None,
                         params: Mapping[str, Any] | None = None) -> Events:
        """Events from annotations (what :meth:`to_annotations` or a table gave).

        Edges are the annotations' times rounded to samples; the score is
        read from ``score=`` in the comment or label (NaN when absent); the
        detector is ``detector`` or the first annotation's generator.  A
        label written as ``name (score=...)`` (Audacity) gives ``name``.
        """
        starts, stops, lows, highs, scores, labels, chans = [], [], [], [], [], [], []
        for a in annotations:
            if not isinstance(a, Annotation):
                raise InputError(f"expected Annotation objects, got {type(a).__name__}")
            extra = dict(a.extra or {})
            starts.append(int(extra.get("start_sample", round(a.start_s * fs))))
            stops.append(int(extra.get("stop_sample", round(a.stop_s * fs))))
            lows.append(np.nan if a.freq_low_hz is None else a.freq_low_hz)
            highs.append(np.nan if a.freq_high_hz is None else a.freq_high_hz)
            found = _SCORE.search(a.comment) or _SCORE.search(a.label)
            scores.append(float(found.group(1)) if found else np.nan)
            labels.append(re.sub(r"\s*\(score=[^)]*\)$", "", a.label))
            chans.append(-1 if a.channel is None else a.channel)
        name = detector if detector is not None else next(
            (a.generator for a in annotations), "")
        return cls(np.asarray(starts, np.int64), np.asarray(stops, np.int64), fs, lows, highs,
                   scores, tuple(labels), np.asarray(chans, np.int64), name, params or {})

    def write(self, path: str | os.PathLike[str], *, format: TableFormat | None = None,
              recording: Any = None, with_params: bool = False) -> Path:
        """Write the events as an annotation file (Raven, Audacity, CSV, SigMF, HDF5).

        Through :func:`specscope.compute.annotations.write_annotations`; the
        format is found from the name when omitted.  Audacity labels, TextGrids
        and ELAN files carry no comment, so there the label is written as
        ``label (score=...)``.
        """
        from ..annotations import detect_format

        notes = self.to_annotations(with_params=with_params)
        name = format or detect_format(path, reading=False)
        if str(name).lower() in ("audacity", "textgrid", "eaf"):
            notes = [a.replace(label=f"{a.label} (score={a.extra['score']!r})".lstrip())
                     for a in notes]
        sample_rate = None if recording is not None else self.fs
        return write_annotations(path, notes, format=format, recording=recording,
                                 sample_rate=sample_rate)


def read_events(path: str | os.PathLike[str], fs: float | None = None, *,
                format: TableFormat | None = None, recording: Any = None,
                detector: str | None = None) -> Events:
    """Read an annotation file written by :meth:`Events.write` back as events.

    Parameters
    ----------
    path : str or os.PathLike
        The annotation file.
    fs : float, optional
        Sample rate (Hz) converting times to samples; default: the recording's.
    format : {"sigmf", "raven", "audacity", "csv", "hdf5", "textgrid", "eaf"}, optional
        Found from the file name and content when omitted.
    recording : Recording, optional
        The annotated recording (its sample rate and band).
    detector : str, optional
        The detector's name; default: the first annotation's generator.

    Returns
    -------
    Events
        The events, scores read from ``score=`` (NaN when absent).

    Raises
    ------
    InputError
        If neither ``fs`` nor ``recording`` is given, or the file's content is malformed.
    RecordingError
        If the file is missing or unreadable, or is not of the format.
    """
    if fs is None:
        if recording is None:
            raise InputError(f"{path}: give fs= or recording= to read events (times are "
                             "converted to samples)")
        fs = float(recording.sample_rate)
    notes = read_annotations(path, format=format, recording=recording,
                             sample_rate=None if recording is not None else fs)
    return Events.from_annotations(notes, fs, detector=detector)
