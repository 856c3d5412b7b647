"""Detectors over many recordings: the batch's detect mode.

:func:`run_detect` runs a pipeline ending in a detector over every input and
writes an annotation table per input (:data:`TABLE_FORMATS`) and one
``summary.csv``; long inputs are split into parts
(:mod:`specscope.compute.batch.parts`).  Nothing here imports Qt.

A deployment (a folder of recordings, :mod:`specscope.compute.deployment`) is one
input, run per contiguous segment (no detector runs across a gap), its segments' parts
spread over the workers like a long file's.  Besides its table (times in seconds on its
sample axis, as for the concatenated signal) it gets ``<stem>.absolute.csv`` (absolute
UTC times and the file of each detection, :data:`ABSOLUTE_COLUMNS`) and a table per
file in ``<stem>/`` (times from that file's first sample).

See docs/explanation/rooms/batch.md.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from .. import extensions
from ..deployment import Deployment
from ..detect import Events
from ..errors import InputError, RecordingError, SpecscopeError
from ..files import atomic_write_text, os_error_cause
from ..io import open_recording, split_member
from ..io.remote import is_url
from ..pipeline import DEFAULT_CHUNK_SAMPLES, Pipeline
from ..types import Executor, TableFormat, WriteOn
from .cluster import plugin_copy, still_wanted
from .heap import roomy_heap
from .parts import DEFAULT_PART_SAMPLES, part_events, plan_parts
from .process import (
    RESUME_FOLDER,
    InputResult,
    Summary,
    check_run_args,
    plan_outputs,
    resume_key,
)
from .runner import run_tasks
from .tasks import Task, TaskFailure, TaskOutcome, TaskResult, one_line

__all__ = ["ABSOLUTE_COLUMNS", "DEFAULT_PART_SAMPLES", "SUMMARY_NAME", "TABLE_FORMATS",
           "DetectResult", "DetectSummary", "absolute_path", "detect_task", "run_detect",
           "table_path"]

#: the tables a detect run writes, by format name: the file name's ending
TABLE_FORMATS: dict[TableFormat, str] = {
    "raven": ".selections.txt", "audacity": ".labels.txt", "csv": ".csv",
    "sigmf": ".sigmf-meta", "hdf5": ".h5", "textgrid": ".TextGrid", "eaf": ".eaf"}
#: the run's summary, in the output folder
SUMMARY_NAME = "summary.csv"
#: the columns of a deployment's table of absolute times (``<stem>.absolute.csv``)
ABSOLUTE_COLUMNS = ("begin_utc", "end_utc", "file", "file_begin_s", "begin_s", "end_s",
                    "low_hz", "high_hz", "label", "channel", "score")


@dataclass
class DetectResult(InputResult):
    """What happened to one input of a detect run.

    Parameters
    ----------
    input, output, ok, error, seconds, n_samples, n_channels, parts, workers, retried
        As for :class:`~specscope.compute.batch.process.InputResult`; ``output`` is the
        table written.
    detections : int
        Events found.
    labels : dict of str to int
        Events per label.
    duration_s : float
        Duration of the range run, in seconds.
    """

    detections: int = 0
    #: detections per label
    labels: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(detections=self.detections, labels=dict(self.labels),
                 duration_s=round(self.duration_s, 6))
        return d


@dataclass
class DetectSummary(Summary):
    """The outcome of :func:`run_detect`.

    Parameters
    ----------
    results, seconds, workers, executor, threads, setup_seconds, cluster
        As for :class:`~specscope.compute.batch.process.Summary`; ``results`` holds a
        :class:`DetectResult` per input.
    summary_csv : str
        The path of the run's ``summary.csv``.
    """

    summary_csv: str = ""

    @property
    def detections(self) -> int:
        return sum(r.detections for r in self.results if isinstance(r, DetectResult))

    def text(self) -> str:
        lines = super().text().splitlines()
        lines[-1] = f"{self.detections} detection(s); {lines[-1]}"
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(detections=self.detections, summary_csv=self.summary_csv)
        return d


def table_path(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str],
               format: TableFormat = "raven") -> Path:
    """The table file of an input: ``OUTDIR/<stem><suffix>``.

    Parameters
    ----------
    input_path : path-like or str
        The input; ``FILE.h5:/dataset`` uses FILE's stem (when FILE exists).
    outdir : path-like or str
        The output folder.
    format : str
        A key of :data:`TABLE_FORMATS`, which gives the suffix.

    Returns
    -------
    Path
        ``outdir / "<stem><suffix>"``.

    Examples
    --------
    >>> table_path("rec/site1.wav", "out").as_posix()
    'out/site1.selections.txt'
    >>> table_path("rec/site1.wav", "out", "csv").as_posix()
    'out/site1.csv'
    """
    p, _ = split_member(input_path)
    return Path(outdir) / f"{p.stem}{TABLE_FORMATS[format]}"


def absolute_path(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str]) -> Path:
    """A deployment's table of absolute times: ``OUTDIR/<stem>.absolute.csv``."""
    return Path(outdir) / f"{Path(input_path).stem}.absolute.csv"


def _is_deployment(rec: Any) -> bool:
    return isinstance(rec, Deployment)


def _open_spec(spec: dict[str, Any]) -> Any:
    """The task's recording: its own copy of a deployment sent along (files opened when
    read), else the path opened."""
    rec = spec.get("recording")
    return copy.copy(rec) if rec is not None else open_recording(spec["path"],
                                                                 **spec["options"])


# -- the task (runs in a worker: module level, a picklable spec) --------------------------


def detect_task(spec: dict[str, Any]) -> dict[str, Any]:
    """One input: its detections into its table; a small dict (never the events).

    A part task (``spec["part"]``) writes nothing and returns the events it owns.

    Parameters
    ----------
    spec : dict
        The task's spec, as :func:`run_detect` prepares it: the pipeline as a dict,
        the path, the range, the channels, the table and its format.

    Returns
    -------
    dict
        ``detections`` and ``labels`` (a part: ``events`` and ``pushed``).

    Raises
    ------
    Cancelled
        The run stopped the task.
    """
    with roomy_heap():  # a Dask worker's lean heap maps and faults every block otherwise
        return _detect_body(spec)


def _detect_body(spec: dict[str, Any]) -> dict[str, Any]:
    known = {str(p) for p in extensions.search_paths()}
    missing = [c for c in (plugin_copy(p) for p in spec.get("plugin_paths", ()))
               if c not in known]
    if missing:
        extensions.add_search_path(*missing)
    pipeline = Pipeline.from_dict(spec["pipeline"])
    part = spec.get("part")
    with _open_spec(spec) as rec:
        if part is not None and part.get("whole"):  # a deployment's segment, whole
            events = pipeline.detect(rec, spec["start"], spec["stop"],
                                     chunk_samples=spec["chunk_samples"],
                                     channels=spec["channels"],
                                     cancelled=lambda: not still_wanted())
            return {"events": events, "pushed": [spec["start"], spec["stop"]]}
        if part is not None:
            events, pushed = part_events(
                pipeline, rec, spec["start"], spec["stop"], spec["channels"],
                tuple(part["own"]), chunk_samples=spec["chunk_samples"],
                last=part.get("last", part["index"] == part["count"] - 1),
                cancelled=lambda: not still_wanted())
            return {"events": events, "pushed": list(pushed)}
        events = pipeline.detect(rec, spec["start"], spec["stop"],
                                 chunk_samples=spec["chunk_samples"],
                                 channels=spec["channels"],
                                 cancelled=lambda: not still_wanted())
        events.write(spec["out"], format=spec["format"], recording=rec)
    return {"detections": len(events), "labels": dict(sorted(Counter(events.label).items()))}


# -- the run ------------------------------------------------------------------------------


def _prepare(pipeline: Pipeline, path: str, out: Path, fmt: str, options: dict[str, Any],
             chunk_samples: int, start: int | None, stop: int | None,
             channels: list[int] | None, part_samples: int | None
             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The task spec of one input and its part tasks (opens the file for its metadata)."""
    with open_recording(path, **options) as rec:
        deployment = _is_deployment(rec)
        fs = float(rec.sample_rate)
        bound = pipeline.bind(fs, rec.is_complex)
        a, b, _ = slice(start, stop).indices(rec.n_samples)
        b = max(a, b)
        chans = rec.channel_list(channels)
        if not bound.streams and b - a > chunk_samples:
            bad = next(s for s in bound.stages if not s.streams)
            raise bad.step.error(f"needs the whole signal at once; {Path(path).name} has "
                                 f"{b - a} samples, more than chunk_samples={chunk_samples}")
        if deployment:
            runs = _segment_runs(pipeline, rec, a, b, part_samples)
        else:
            owned = plan_parts(pipeline, rec, a, b, part_samples) or []
    spec = {"mode": "detect", "pipeline": pipeline.to_dict(), "path": str(path),
            "options": dict(options), "out": str(out), "format": fmt, "start": a, "stop": b,
            "channels": chans, "chunk_samples": int(chunk_samples),
            "duration_s": (b - a) / fs, "n_samples": b - a,
            "plugin_paths": [str(p) for p in extensions.search_paths()]}
    if deployment:
        spec.update(recording=rec, deployment=True, part_samples=part_samples or 0,
                    mode="detect")
        key = resume_key(rec, pipeline, spec)
        state = Path(out).parent / RESUME_FOLDER / f"{Path(out).name}.{key}"
        _drop_other_states(Path(out), state)
        try:
            state.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordingError(f"{state}: cannot create the folder of finished parts "
                                 f"({os_error_cause(exc)})") from None
        spec["state"] = str(state)
        parts = [dict(spec, start=s0, stop=s1, part={**part, "index": i, "count": len(runs)})
                 for i, (s0, s1, part) in enumerate(runs)]
        return spec, parts
    parts = [dict(spec, part={"index": i, "count": len(owned), "own": [int(p0), int(p1)]})
             for i, (p0, p1) in enumerate(owned)]
    return spec, parts


def _drop_other_states(out: Path, keep: Path) -> None:
    """Remove the finished parts of earlier runs of this table under another key."""
    if keep.parent.is_dir():
        for old in keep.parent.glob(f"{out.name}.*"):
            if old != keep and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)


def _part_file(spec: dict[str, Any], index: int) -> Path:
    return Path(spec["state"]) / f"part{index:05d}.json"


def _publish_part(spec: dict[str, Any], index: int, events: Events) -> None:
    """A finished part's events, kept for a run that goes on after this one was stopped
    (JSON: floats as their shortest exact text, so they read back the same)."""
    doc = {"fs": events.fs, "detector": events.detector, "params": dict(events.params),
           "start_sample": events.start_sample.tolist(),
           "stop_sample": events.stop_sample.tolist(), "low_hz": events.low_hz.tolist(),
           "high_hz": events.high_hz.tolist(), "score": events.score.tolist(),
           "label": list(events.label), "channel": events.channel.tolist()}
    atomic_write_text(_part_file(spec, index), json.dumps(doc), what="part file name")


def _finished_part(spec: dict[str, Any], index: int) -> Events | None:
    """The events a stopped run published for this part, or None."""
    path = _part_file(spec, index)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return Events(np.asarray(doc["start_sample"], np.int64),
                      np.asarray(doc["stop_sample"], np.int64), float(doc["fs"]),
                      np.asarray(doc["low_hz"], np.float64),
                      np.asarray(doc["high_hz"], np.float64),
                      np.asarray(doc["score"], np.float64), tuple(doc["label"]),
                      np.asarray(doc["channel"], np.int64), str(doc["detector"]),
                      doc["params"])
    except (OSError, ValueError, KeyError, TypeError, SpecscopeError):
        return None  # none, or not one of ours: computed again


def _segment_runs(pipeline: Pipeline, rec: Any, a: int, b: int, part_samples: int | None
                  ) -> list[tuple[int, int, dict[str, Any]]]:
    """A deployment's tasks: per contiguous segment within ``a:b``, its parts (a long
    segment's, as a long file's) or the segment whole; ``(start, stop, part)`` each."""
    runs: list[tuple[int, int, dict[str, Any]]] = []
    for s0, s1 in rec.segments():
        s0, s1 = max(a, s0), min(b, s1)
        if s1 <= s0:
            continue
        owned = plan_parts(pipeline, rec, s0, s1, part_samples)
        if not owned:
            runs.append((s0, s1, {"own": [s0, s1], "last": True, "whole": True}))
            continue
        runs += [(s0, s1, {"own": [int(p0), int(p1)], "last": i == len(owned) - 1})
                 for i, (p0, p1) in enumerate(owned)]
    if not runs:
        raise InputError(f"{rec.path}: the range {a}..{b} holds no samples")
    return runs


def _write_merged(spec: dict[str, Any], parts: list[Events]) -> Events:
    """The parts' events joined in order, written as the input's table (here)."""
    first = parts[0]
    events = Events.concat(parts, fs=first.fs, detector=first.detector,
                           params=first.params).sorted()
    with _open_spec(spec) as rec:
        events.write(spec["out"], format=spec["format"], recording=rec)
        if spec.get("deployment"):
            _write_deployment_tables(spec, events, rec)
    return events


def _write_deployment_tables(spec: dict[str, Any], events: Events, dep: Any) -> None:
    """A deployment's table of absolute times and its table per file."""
    out = Path(spec["out"])
    offsets = dep.file_offsets()
    files = dep.files
    fs = float(dep.sample_rate)
    which = np.searchsorted(offsets, events.start_sample, side="right") - 1
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(ABSOLUTE_COLUMNS)
    for e, k in zip(events, which, strict=True):
        begin = dep.time_at(e.start_sample)
        end = dep.time_at(max(e.start_sample, e.stop_sample - 1)) + timedelta(seconds=1 / fs)
        w.writerow([_utc(begin), _utc(end), str(files[k].path),
                    repr((e.start_sample - offsets[k]) / fs), repr(e.start_s), repr(e.stop_s),
                    "" if e.low_hz is None else repr(e.low_hz),
                    "" if e.high_hz is None else repr(e.high_hz), e.label,
                    "" if e.channel is None else e.channel, repr(e.score)])
    atomic_write_text(absolute_path(spec["path"], out.parent), buf.getvalue(),
                      what="table file name")
    folder = out.parent / Path(spec["path"]).stem
    folder.mkdir(exist_ok=True)
    suffix = TABLE_FORMATS[spec["format"]]
    used: set[str] = set()
    for k, entry in enumerate(files):
        name = _file_table_name(entry.path, dep.path, suffix, used)
        mine = events.take(which == k).shifted(-offsets[k])
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        mine.write(target, format=spec["format"], recording=dep.file_recording(k))


def _utc(when: Any) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _file_table_name(path: Any, root: Any, suffix: str, used: set[str]) -> str:
    """A file's table, at its place under the deployment's root (``a/b.wav`` ->
    ``a/b<suffix>``); a name met before gets ``-2``, ``-3`` ..."""
    p = Path(str(path)) if not is_url(path) else Path(path.name)
    try:
        rel = p.relative_to(Path(root)) if not is_url(path) else Path(p.name)
    except ValueError:
        rel = Path(p.name)
    name = rel.name[:-len(".sigmf-meta")] if rel.name.lower().endswith(".sigmf-meta") \
        else rel.stem
    base = (rel.parent / name).as_posix()
    text, n = base + suffix, 1
    while text in used:
        n += 1
        text = f"{base}-{n}{suffix}"
    used.add(text)
    return text


def _result(spec: dict[str, Any], outcome: TaskOutcome, seconds: float, workers: list[str],
            parts: int = 1) -> DetectResult:
    if isinstance(outcome, TaskFailure):
        return DetectResult(spec["path"], None, False, outcome.message, seconds,
                            spec["n_samples"], len(spec["channels"]), parts, workers=workers,
                            duration_s=spec["duration_s"], failure=outcome.error)
    value = outcome.value
    return DetectResult(spec["path"], spec["out"], True, None, seconds, spec["n_samples"],
                        len(spec["channels"]), parts, workers=workers,
                        detections=int(value.get("detections") or 0),
                        labels=dict(value.get("labels") or {}), duration_s=spec["duration_s"])


class _Parts:
    """The part results of one split input, until the last arrives."""

    def __init__(self, spec: dict[str, Any], n: int) -> None:
        self.spec = spec
        self.events: list[Events | None] = [None] * n
        self.errors: list[str] = []
        self.failure: BaseException | None = None
        self.seconds = 0.0
        self.workers: list[str] = []
        self.left = n
        self.reused = 0

    def add(self, part: dict[str, Any], outcome: TaskOutcome) -> DetectResult | None:
        """Take one part's outcome; the input's result once every part has come."""
        self.seconds += outcome.seconds
        if outcome.worker and outcome.worker not in self.workers:
            self.workers.append(outcome.worker)
        if isinstance(outcome, TaskResult):
            self.events[part["index"]] = outcome.value["events"]
            if outcome.reused:
                self.reused += 1
            elif self.spec.get("state"):
                try:
                    _publish_part(self.spec, part["index"], outcome.value["events"])
                except SpecscopeError:
                    pass  # not kept: a later run computes it again
        else:
            p0, p1 = part["own"]
            self.errors.append(f"{outcome.message} (the part of samples {p0}..{p1})")
            self.failure = self.failure or outcome.error
        self.left -= 1
        if self.left:
            return None
        n = len(self.events)
        if self.errors:
            failure = self.failure if self.failure is not None else RecordingError(
                self.errors[0])
            r = _result(self.spec, TaskFailure(failure), self.seconds, self.workers, n)
            r.error = self.errors[0]
            r.reused = self.reused
            return r
        t = time.perf_counter()
        try:
            events = _write_merged(self.spec, [e for e in self.events if e is not None])
        except Exception as exc:  # noqa: BLE001 - this input fails, the others go on
            r = _result(self.spec, TaskFailure(exc), self.seconds + time.perf_counter() - t,
                        self.workers, n)
            r.reused = self.reused
            return r
        if self.spec.get("state"):  # written: its parts are not needed again
            state = Path(self.spec["state"])
            shutil.rmtree(state, ignore_errors=True)
            try:
                state.parent.rmdir()
            except OSError:
                pass
        done = TaskResult({"detections": len(events),
                           "labels": dict(sorted(Counter(events.label).items()))})
        r = _result(self.spec, done, self.seconds + time.perf_counter() - t, self.workers, n)
        r.reused = self.reused
        return r


def _summary_text(results: Sequence[InputResult]) -> str:
    labels = sorted({k for r in results if isinstance(r, DetectResult) for k in r.labels})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["input", "output", "status", "detections",
                *[f"count:{k}" for k in labels], "seconds", "duration_s", "error"])
    for r in results:
        d = r if isinstance(r, DetectResult) else None
        w.writerow([r.input, r.output or "", "ok" if r.ok else "failed",
                    d.detections if d and r.ok else "",
                    *[(d.labels.get(k, 0) if d and r.ok else "") for k in labels],
                    f"{r.seconds:.3f}", f"{d.duration_s:.6f}" if d else "", r.error or ""])
    return buf.getvalue()


def run_detect(pipeline: Pipeline | dict[str, Any] | str | os.PathLike[str],
               inputs: Sequence[str | os.PathLike[str]], outdir: str | os.PathLike[str], *,
               format: TableFormat = "raven", workers: int = 1,
               executor: Executor = "processes",
               dask: str | None = None, chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
               recording_options: dict[str, Any] | None = None,
               start: int | None = None, stop: int | None = None,
               channels: list[int] | None = None,
               progress: Callable[[int, int, InputResult | None], None] | None = None,
               dask_options: dict[str, Any] | None = None,
               write_on: WriteOn = "auto",
               part_samples: int | None = DEFAULT_PART_SAMPLES) -> DetectSummary:
    """Run an event pipeline over every input: a table per input and a summary CSV.

    Parameters
    ----------
    pipeline : Pipeline, dict or path
        A pipeline ending in a detector; validated before anything runs.
    inputs : sequence of paths
    outdir : path
        Created when missing; gets ``<stem><suffix>`` per input and ``summary.csv``.
    format : {"raven", "audacity", "csv", "sigmf", "hdf5"}
        The tables' format (:data:`TABLE_FORMATS`).
    workers, executor, dask, dask_options, write_on
        Where the tasks run and who writes the tables, as for
        :func:`specscope.compute.batch.process.run_batch`.
    chunk_samples : int
        Samples read at a time; the detections do not depend on it.
    recording_options : dict, optional
        Passed to :func:`open_recording` (raw files).
    start, stop, channels
        Range (samples) and channels of each recording (all by default).
    progress : callable, optional
        ``progress(done, total, result)`` after each task: ``total`` counts the
        parts of split inputs and the whole inputs; ``result`` is None for a part
        that does not finish its input.
    part_samples : int or None
        Inputs longer than this (samples) are split into parts that run as tasks
        of their own (:mod:`~specscope.compute.batch.parts`); the tables are
        the same bytes as unsplit ones.  None or 0: never split.

    Returns
    -------
    DetectSummary
        One :class:`DetectResult` per input, and the summary file's path.

    Raises
    ------
    InputError
        A bad argument, no inputs, a pipeline that does not end in a detector, an
        output folder that is a file, or two inputs writing the same table.
    OutputIsInputError
        A table or the summary would overwrite an input or the pipeline file.
    RecordingError
        The output folder cannot be created.
    """
    t0 = time.perf_counter()
    pipeline_path = pipeline if isinstance(pipeline, (str, os.PathLike)) else None
    if not isinstance(pipeline, Pipeline):
        pipeline = (Pipeline.from_dict(pipeline) if isinstance(pipeline, dict)
                    else Pipeline.load(pipeline))
    if pipeline.event_step is None:
        last = pipeline.steps[-1].label if pipeline.steps else "it has no steps"
        raise InputError(f"the pipeline does not end in a detector ({last}); its last step "
                         "must be an event step such as detect.energy")
    if format not in TABLE_FORMATS:
        raise InputError(f"format={format!r} must be one of {', '.join(TABLE_FORMATS)}")
    check_run_args(workers, chunk_samples, ("part_samples", part_samples), executor)
    options = {k: v for k, v in (recording_options or {}).items() if v is not None}
    out_dir = Path(outdir)
    summary_path = out_dir / SUMMARY_NAME
    outs = plan_outputs(inputs, out_dir, lambda i: table_path(i, out_dir, format),
                        [pipeline_path], {summary_path: "the summary"})
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordingError(f"{out_dir}: cannot create the output folder "
                             f"({os_error_cause(exc)})") from None

    order = [str(i) for i in inputs]
    results: dict[str, InputResult] = {}
    tasks: list[Task] = []
    split: dict[str, _Parts] = {}
    reused: list[tuple[Task, TaskOutcome]] = []
    for o, inp in outs.items():
        if o == summary_path:
            continue
        try:
            spec, parts = _prepare(pipeline, inp, o, format, options, chunk_samples, start,
                                   stop, channels, part_samples)
        except Exception as exc:  # noqa: BLE001 - this input fails, the others go on
            results[inp] = DetectResult(inp, None, False, one_line(exc), failure=exc)
            continue
        if parts:
            split[inp] = _Parts(spec, len(parts))
            if spec.get("state"):  # a deployment: the parts a stopped run finished
                for p in parts:
                    old = _finished_part(spec, p["part"]["index"])
                    if old is not None:
                        reused.append((Task(inp, p, p["part"]["index"]),
                                       TaskResult({"events": old}, reused=True)))
                mine = {id(t.spec) for t, _ in reused}
                parts = [p for p in parts if id(p) not in mine]
            tasks += [Task(inp, p, p["part"]["index"]) for p in parts]
        else:
            tasks.append(Task(inp, spec))
    # progress counts tasks: an input's parts one by one, the failed ones at once
    total, done = len(tasks) + len(reused) + len(results), 0
    for r in list(results.values()):
        done += 1
        if progress is not None:
            progress(done, total, r)

    def take(task: Task, outcome: TaskOutcome) -> None:
        nonlocal done
        if task.part is not None:
            r = split[task.input].add(task.spec["part"], outcome)
        else:
            r = _result(task.spec, outcome, outcome.seconds,
                        [outcome.worker] if outcome.worker else [])
        if r is not None:
            results[task.input] = r
        done += 1
        if progress is not None:
            progress(done, total, r)

    info = run_tasks(detect_task, tasks, take, workers=workers, executor=executor, dask=dask,
                     dask_options=dask_options, outputs=out_dir, write_on=write_on,
                     finished=reused)
    for inp, n_again in info.retried.items():
        if inp in results:
            results[inp].retried = n_again
    ordered = [results[i] for i in order]
    atomic_write_text(summary_path, _summary_text(ordered), what="summary file name")
    return DetectSummary(ordered, time.perf_counter() - t0, info.workers, info.executor,
                         info.threads, info.setup_seconds, info.cluster, str(summary_path))
