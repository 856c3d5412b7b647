"""Run a pipeline over many recordings: a local pool or a Dask cluster.

:func:`run_batch` writes one crash-safe HDF5 file per input (``OUTDIR/<stem>.h5``)
in this process, a pool or on Dask; a long recording is split into part tasks
giving the same numbers.  :func:`rerun` runs an output's pipeline again.

See docs/explanation/rooms/batch.md.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import extensions
from ..deployment import DEPLOYMENT_FORMAT, Deployment, segments_in
from ..deployment.layout import utc_text, write_deployment_group
from ..errors import Cancelled, InputError, RecordingError, SpecscopeError
from ..files import (
    atomic_file,
    clean_stale_partials,
    h5_for_writing,
    os_error_cause,
    owner_tag,
    refuse_overwriting_inputs,
)
from ..io import open_recording, split_member
from ..io.remote import UrlPath, is_url
from ..output import (
    atomic_h5,
    recording_meta,
    recording_provenance,
    write_pipeline_output,
)
from ..pipeline import DEFAULT_CHUNK_SAMPLES, BoundPipeline, Pipeline
from ..types import Executor, WriteOn, choices
from .cluster import plugin_copy, still_wanted
from .compare import RerunResult
from .fetch import check_write_on
from .heap import roomy_heap
from .runner import run_tasks
from .tasks import Task, TaskFailure, TaskOutcome, TaskResult, one_line, renamed

__all__ = ["DEFAULT_TASK_SAMPLES", "DEPLOYMENT_FORMAT", "EXECUTORS", "RESUME_FOLDER",
           "InputResult", "RerunResult", "Summary", "check_run_args", "clean_abandoned_parts",
           "output_path", "plan_outputs", "process_file", "resume_key", "run_batch"]

#: recordings longer than this (samples) are split into part tasks
DEFAULT_TASK_SAMPLES = 1 << 26
EXECUTORS = choices(Executor)
#: the hidden folder of an output folder where a deployment's finished parts wait for the
#: next run of a run that was stopped (removed once its output is written)
RESUME_FOLDER = ".specscope-resume"


# -- results ------------------------------------------------------------------------------


@dataclass
class InputResult:
    """What happened to one input of a batch run.

    Parameters
    ----------
    input : str
        The input's path (or URL), as given.
    output : str or None
        The output file written, None when the input failed.
    ok : bool
        Whether the input succeeded.
    error : str or None
        One line saying why it failed.
    seconds : float
        Compute time of its tasks, in seconds (parts added up).
    n_samples, n_channels : int
        Samples per channel, and channels, it read.
    parts, retried : int
        Part tasks it was split into (1: one task); its tasks that ran again because
        their worker died while running them.
    workers : list of str
        Where it ran: Dask worker names, or ``pid N@host`` of pool processes.
    reused : int
        Parts a stopped run of the same pipeline over the same deployment had finished,
        taken as they were (not computed again).
    failure : BaseException or None
        The error itself, of its own type with its fields, when the input failed.
    """

    input: str
    output: str | None
    ok: bool
    error: str | None = None
    seconds: float = 0.0
    n_samples: int = 0
    n_channels: int = 0
    parts: int = 1
    workers: list[str] = field(default_factory=list)
    retried: int = 0
    reused: int = 0
    failure: BaseException | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (``specscope run --json``)."""
        rate = self.n_samples * max(1, self.n_channels) / self.seconds if self.seconds else 0.0
        return {"input": self.input, "output": self.output, "ok": self.ok,
                "error": self.error, "seconds": round(self.seconds, 6),
                "samples": self.n_samples, "channels": self.n_channels, "parts": self.parts,
                "msamples_per_s": round(rate / 1e6, 3), "workers": self.workers,
                "retried": self.retried, "reused": self.reused}


@dataclass
class Summary:
    """The outcome of :func:`run_batch`.

    Parameters
    ----------
    results : list of InputResult
        One per input, in the order given.
    seconds, setup_seconds : float
        Wall time of the whole run, and of what came before the first task
        (connecting, starting and warming workers), in seconds.
    workers, threads : int
        Workers that ran it (a Dask cluster's, as its scheduler counts them), and
        threads over all of them (0: as many as ``workers``).
    executor : str
        ``"in process"``, ``"N processes"``, ``"N threads"`` or the Dask cluster's.
    cluster : dict
        A Dask cluster's description (scheduler, workers, warm-up, task sizes).
    """

    results: list[InputResult]
    seconds: float
    workers: int
    executor: str
    threads: int = 0
    setup_seconds: float = 0.0
    cluster: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> list[InputResult]:
        """The inputs that succeeded."""
        return [r for r in self.results if r.ok]

    @property
    def failed(self) -> list[InputResult]:
        """The inputs that failed."""
        return [r for r in self.results if not r.ok]

    @property
    def ok(self) -> bool:
        """Whether every input succeeded."""
        return not self.failed

    @property
    def samples(self) -> int:
        """Samples processed, all channels counted."""
        return sum(r.n_samples * max(1, r.n_channels) for r in self.done)

    def text(self) -> str:
        """A human summary: one line per failure, then totals."""
        lines = [f"failed: {r.input}: {r.error}" for r in self.failed]
        retried = [r for r in self.results if r.retried]
        if retried:
            lines.append("retried after a worker was lost: " + ", ".join(
                f"{r.input} ({r.retried} task(s))" for r in retried))
        rate = self.samples / self.seconds / 1e6 if self.seconds > 0 else 0.0
        threads = self.threads or self.workers
        lines.append(f"{len(self.done)} done, {len(self.failed)} failed in {self.seconds:.2f} s "
                     f"({rate:.1f} Msamples/s, {self.workers} worker(s), {threads} thread(s), "
                     f"{self.executor})")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (``specscope run --json``)."""
        rate = self.samples / self.seconds if self.seconds > 0 else 0.0
        return {"ok": self.ok, "done": len(self.done), "failed": len(self.failed),
                "seconds": round(self.seconds, 6), "setup_seconds": round(self.setup_seconds, 6),
                "msamples_per_s": round(rate / 1e6, 3), "workers": self.workers,
                "threads": self.threads or self.workers, "executor": self.executor,
                "retried": [r.input for r in self.results if r.retried],
                "cluster": self.cluster, "inputs": [r.to_dict() for r in self.results]}


def refuse_writing_into_folders(out_dir: Path, inputs: Sequence[Any]) -> None:
    """Refuse an output folder inside an input that is a folder (a deployment): nothing is
    ever written into a deployment's folder.

    Raises
    ------
    InputError
        ``out_dir`` is such a folder or lies inside one.
    """
    target = Path(os.path.abspath(out_dir))
    for inp in inputs:
        if is_url(inp) or not Path(inp).is_dir():
            continue
        folder = Path(os.path.abspath(inp))
        if target == folder or folder in target.parents:
            raise InputError(f"{out_dir}: lies in the folder of recordings {inp}, and nothing "
                             "is written into it; give an output folder outside it")


def output_path(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str]) -> Path:
    """The output file of an input: ``OUTDIR/<stem>.h5``.

    Parameters
    ----------
    input_path, outdir : path-like or str
        The input (``FILE.h5:/dataset`` of an existing FILE uses FILE's stem, a URL
        the stem of its last path segment) and the output folder.

    Returns
    -------
    Path
    """
    if is_url(input_path):
        return Path(outdir) / f"{UrlPath(str(input_path)).stem}.h5"
    p, _ = split_member(input_path)
    return Path(outdir) / f"{p.stem}.h5"


# -- planning -----------------------------------------------------------------------------


def _open(path: str, options: dict[str, Any], recording: Any = None) -> Any:
    """The input: its own copy of a deployment sent along (files opened when read), else the
    path opened."""
    if recording is not None:
        return copy.copy(recording)
    return open_recording(path, **options)


def _is_deployment(rec: Any) -> bool:
    return isinstance(rec, Deployment)


def resume_key(recording: Any, pipeline: Pipeline, spec: dict[str, Any]) -> str:
    """What a deployment's finished parts are kept under: its fingerprint, the pipeline and
    the run's range, channels and part size (any change finds no old parts)."""
    what = json.dumps([recording.fingerprint(), pipeline.to_json(None), spec["start"],
                       spec["stop"], spec["channels"], spec.get("task_samples") or 0,
                       spec.get("part_samples") or 0, spec.get("mode", "run")])
    return hashlib.sha256(what.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def _resume_dir(out: Path, key: str) -> Path:
    return out.parent / RESUME_FOLDER / f"{out.stem}.{key}"


def _drop_other_states(out: Path, key: str) -> None:
    """Remove the finished parts of earlier runs of this output under another key."""
    folder = out.parent / RESUME_FOLDER
    if not folder.is_dir():
        return
    for old in folder.glob(f"{out.stem}.*"):
        if old.name != f"{out.stem}.{key}" and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _drop_state(folder: Path) -> None:
    """Remove a finished input's parts (and the resume folder once it is empty)."""
    shutil.rmtree(folder, ignore_errors=True)
    try:
        folder.parent.rmdir()
    except OSError:
        pass


def _plan(bound: BoundPipeline, start: int, stop: int,
          task_samples: int | None) -> list[dict[str, int]] | None:
    """Part tasks ``{read_start, read_stop, skip, take, count}`` or None (one task)."""
    n_in = stop - start
    if not task_samples or n_in <= task_samples or not bound.streams:
        return None
    g0 = start + bound.drop
    n_sig = bound.signal_length(n_in)
    lb, la = bound.lookback, bound.lookahead
    ranges: list[tuple[int, int, int]] = []  # (a, b) signal coords, output count
    if bound.stft is None:
        for a in range(0, n_sig, task_samples):
            b = min(n_sig, a + task_samples)
            ranges.append((g0 + a, g0 + b, b - a))
    else:
        p = bound.stft
        n_frames = p.n_frames(n_sig)
        per = max(1, task_samples // p.hop)
        for k0 in range(0, n_frames, per):
            k1 = min(n_frames, k0 + per)
            ranges.append((g0 + k0 * p.hop, g0 + (k1 - 1) * p.hop + p.nfft, k1 - k0))
    if len(ranges) < 2:
        return None
    parts = []
    for a, b, count in ranges:
        r0 = max(start, a - lb)
        r1 = min(stop, b + la)
        parts.append({"read_start": r0, "read_stop": r1, "skip": a - (r0 + bound.drop),
                      "take": b - a, "count": count})
    return parts


#: part files of inputs a run left unfinished: named after this process (so the clean-up of
#: dead writers' temporaries never takes them), but a worker that outlived the run (its
#: scheduler gone) may still move one into place after the run removed it
_ABANDONED: set[Path] = set()


def clean_abandoned_parts() -> list[Path]:
    """Remove the part files that runs of this process left to workers that outlived them.

    Returns
    -------
    list of Path
        The part files removed (each run does this first).
    """
    removed = []
    for p in list(_ABANDONED):
        try:
            p.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            continue
        _ABANDONED.discard(p)
        removed.append(p)
    return removed


def _part_path(out: Path, index: int) -> Path:
    # the owner tag lets the next write to the folder remove the parts of a killed run
    return out.with_name(f".{out.stem}.part{index:05d}.{owner_tag()}.partial.h5")


def _iter_part_blocks(paths: Sequence[Path], block: int = 4096) -> Iterator[np.ndarray]:
    import h5py

    for path in paths:
        with h5py.File(path, "r") as f:
            ds = f["data"]
            n = ds.shape[-1]
            for i in range(0, n, block):
                yield ds[..., i:i + block]


# -- tasks (run in workers: module-level, picklable arguments) ----------------------------


def _task(spec: dict[str, Any]) -> dict[str, Any]:
    """One task: a whole input into its output, or one part into a part file."""
    with roomy_heap():  # a Dask worker's lean heap maps and faults every block otherwise
        return _task_body(spec)


def _task_body(spec: dict[str, Any]) -> dict[str, Any]:
    _use_plugin_paths(spec.get("plugin_paths", ()))
    pipeline = Pipeline.from_dict(spec["pipeline"])
    with _open(spec["path"], spec["options"], spec.get("recording")) as rec:
        meta = recording_meta(rec)
        bound = pipeline.bind(meta["sample_rate"], meta["is_complex"])
        chans = spec["channels"]

        def read(a: int, b: int) -> np.ndarray:
            return rec.read(a, b, chans)

        part = spec.get("part")
        if part is None:
            if bound.stft is not None:
                bound.stft.check_length(bound.signal_length(spec["stop"] - spec["start"]),
                                        Path(spec["path"]).name)
            prov = recording_provenance(rec)
            blocks = _watched(bound.stream(read, spec["start"], spec["stop"],
                                           chunk_samples=spec["chunk_samples"]))
            write_pipeline_output(Path(spec["out"]), pipeline, bound, meta, spec, blocks,
                                  prov, annotations=rec.annotations)
        else:
            _write_part(Path(spec["part_path"]), bound, read, part, spec["chunk_samples"])
    return {"meta": meta}


def _watched(blocks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """The blocks, stopping (and so discarding the temporary file) once the task is cancelled."""
    for block in blocks:
        if not still_wanted():
            raise Cancelled()
        yield block


def _use_plugin_paths(paths: Sequence[str]) -> None:
    """Make the submitting process's plugin folders known here, before operators resolve.

    A worker knows ``SPECSCOPE_PLUGINS`` only when it inherited it; folders given with
    ``--plugins`` travel in the task spec (a Dask worker uses their shipped copies).
    """
    known = {str(p) for p in extensions.search_paths()}
    missing = [c for c in (plugin_copy(p) for p in paths) if c not in known]
    if missing:
        extensions.add_search_path(*missing)


def _write_part(path: Path, bound: BoundPipeline, read: Callable[[int, int], np.ndarray],
                part: dict[str, int], chunk_samples: int) -> None:
    pos = 0
    with atomic_h5(path) as f:
        ds = None
        for block in _watched(bound.stream(read, part["read_start"], part["read_stop"],
                                           chunk_samples=chunk_samples, skip=part["skip"],
                                           take=part["take"])):
            if ds is None:
                shape = block.shape[:-1] + (part["count"],)
                ds = f.create_dataset("data", shape=shape, dtype=block.dtype,
                                      chunks=block.shape[:-1] + (min(part["count"], 4096),))
            k = block.shape[-1]
            ds[..., pos:pos + k] = block
            pos += k
        if pos != part["count"]:
            raise RecordingError(f"{path.name}: part gave {pos} outputs, expected "
                                 f"{part['count']}")


def _assemble(spec: dict[str, Any], parts: Sequence[dict[str, Any]]) -> None:
    pipeline = Pipeline.from_dict(spec["pipeline"])
    paths = [Path(p["part_path"]) for p in parts]
    with _open(spec["path"], spec["options"], spec.get("recording")) as rec:
        meta = recording_meta(rec)
        bound = pipeline.bind(meta["sample_rate"], meta["is_complex"])
        prov = recording_provenance(rec)
        annotations = rec.annotations
        if not spec.get("deployment"):
            write_pipeline_output(Path(spec["out"]), pipeline, bound, meta, spec,
                                  _iter_part_blocks(paths), prov, annotations=annotations)
            return
        out = Path(spec["out"])
        # written under a hidden name, then given the deployment's datasets and published
        hidden = out.with_name(f".{out.name}.{owner_tag()}.{secrets.token_hex(4)}.partial")
        try:
            write_pipeline_output(hidden, pipeline, bound, meta, spec, _iter_part_blocks(paths),
                                  prov, first=parts[0]["part"]["first"],
                                  n_out=sum(p["part"]["count"] for p in parts),
                                  annotations=annotations,
                                  extra={"start_utc": utc_text(rec.time_at(spec["start"]))})
            with atomic_file(out, what="file name ending in .h5") as tmp:
                os.replace(hidden, tmp)
                with h5_for_writing(tmp, "r+") as f:
                    _write_deployment(f, rec, bound, spec)
        finally:
            hidden.unlink(missing_ok=True)


def _write_deployment(f: Any, dep: Any, bound: BoundPipeline, spec: dict[str, Any]) -> None:
    """The ``/deployment`` group of an output (docs/reference/hdf5-layout.md)."""
    write_deployment_group(f, dep, spec["segments"], spec["start"], bound.sample_rate,
                           bound.stft)


# -- the batch ----------------------------------------------------------------------------


def _prepare(pipeline: Pipeline, path: str, out: Path, options: dict[str, Any],
             chunk_samples: int, task_samples: int | None, start: int | None,
             stop: int | None, channels: list[int] | None) -> tuple[dict[str, Any], list]:
    """The task spec of one input and its parts (opens the file for its metadata only)."""
    with _open(path, options) as rec:
        meta = recording_meta(rec)
        bound = pipeline.bind(meta["sample_rate"], meta["is_complex"])
        a, b, _ = slice(start, stop).indices(meta["n_samples"])
        b = max(a, b)
        chans = rec.channel_list(channels)
        deployment = _is_deployment(rec)
        if bound.stft is not None and not deployment:
            bound.stft.check_length(bound.signal_length(b - a), Path(path).name)
        if not bound.streams and b - a > chunk_samples:
            bad = next(s for s in bound.stages if not s.streams)
            raise bad.step.error(f"needs the whole signal at once; {Path(path).name} has "
                                 f"{b - a} samples, more than chunk_samples={chunk_samples}")
    spec = {"pipeline": pipeline.to_dict(), "path": str(path), "options": dict(options),
            "out": str(out), "start": a, "stop": b, "channels": chans,
            "chunk_samples": int(chunk_samples), "task_samples": task_samples or 0,
            "meta": meta, "plugin_paths": [str(p) for p in extensions.search_paths()]}
    if deployment:
        return _prepare_deployment(pipeline, bound, rec, spec, out)
    parts = _plan(bound, a, b, task_samples) or []
    part_specs = [dict(spec, part=part, part_path=str(_part_path(out, i)))
                  for i, part in enumerate(parts)]
    return spec, part_specs


def _segment_parts(bound: BoundPipeline, s0: int, s1: int,
                   task_samples: int | None) -> list[dict[str, int]]:
    """The part tasks of one contiguous segment: its split (as a long file's) or it whole;
    none when it is too short to give an output."""
    parts = _plan(bound, s0, s1, task_samples)
    if parts is None:
        n_sig = bound.signal_length(s1 - s0)
        if bound.stft is None:
            take, count = n_sig, n_sig
        else:
            count = bound.stft.n_frames(n_sig) if n_sig >= bound.stft.nfft else 0
            take = (count - 1) * bound.stft.hop + bound.stft.nfft if count else 0
        parts = [{"read_start": s0, "read_stop": s1, "skip": 0, "take": take,
                  "count": count}]
    for p in parts:
        p["first"] = p["read_start"] + bound.drop + p["skip"]
    return [p for p in parts if p["count"] > 0]


def _prepare_deployment(pipeline: Pipeline, bound: BoundPipeline, dep: Any,
                        spec: dict[str, Any], out: Path) -> tuple[dict[str, Any], list]:
    """A deployment: part tasks per contiguous segment (no filter history or frame crosses a
    gap), kept in the output folder's resume folder so a stopped run goes on from them."""
    segments: list[dict[str, int]] = []
    parts: list[dict[str, int]] = []
    n_out = 0
    for s0, s1 in segments_in(dep, spec["start"], spec["stop"]):
        mine = _segment_parts(bound, s0, s1, spec["task_samples"] or None)
        count = sum(p["count"] for p in mine)
        first = mine[0]["first"] if mine else s0 + bound.drop
        segments.append({"start": s0, "stop": s1, "first": first, "out_start": n_out,
                         "out_stop": n_out + count})
        n_out += count
        parts += mine
    if not parts:
        longest = max(s1 - s0 for s0, s1 in segments_in(dep, spec["start"], spec["stop"]))
        if bound.stft is not None:
            bound.stft.check_length(bound.signal_length(longest),
                                    f"{Path(spec['path']).name} (its longest segment)")
        raise InputError(f"{spec['path']}: the range {spec['start']}..{spec['stop']} gives "
                         "no output")
    spec.update(recording=dep, deployment=True, segments=segments)
    key = resume_key(dep, pipeline, spec)
    state = _resume_dir(out, key)
    _drop_other_states(out, key)
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordingError(f"{state}: cannot create the folder of finished parts "
                             f"({os_error_cause(exc)})") from None
    base = {k: v for k, v in spec.items() if k != "segments"}  # the parts need not carry it
    part_specs = []
    for i, part in enumerate(parts):
        path = state / f"part{i:05d}.h5"
        clean_stale_partials(path)  # the temporary file of a killed part
        part_specs.append(dict(base, part=part, part_path=str(path),
                               reuse=_finished_part(path, part["count"]), state=str(state)))
    return spec, part_specs


def _finished_part(path: Path, count: int) -> bool:
    """Whether a stopped run published this part (complete: parts are written atomically)."""
    if not path.is_file():
        return False
    import h5py

    try:
        with h5py.File(path, "r") as f:
            return int(f["data"].shape[-1]) == int(count)
    except (OSError, KeyError, ValueError):
        return False


def _make_folder(folder: Path) -> None:
    """Create the output folder (and its parents); one line when that is impossible."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordingError(f"{folder}: cannot create the output folder "
                             f"({os_error_cause(exc)})") from None


def check_run_args(workers: int, chunk_samples: int, split: tuple[str, int | None],
                   executor: str) -> None:
    """Refuse a bad argument of a batch run, naming it.

    Parameters
    ----------
    workers, chunk_samples : int
        Each a whole number >= 1.
    split : (str, int or None)
        The name and value of the part size (``task_samples``, ``part_samples``): None or
        a whole number >= 0 (0: never split).
    executor : str
        One of :data:`EXECUTORS`.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers={workers!r} must be a whole number >= 1")
    if isinstance(chunk_samples, bool) or not isinstance(chunk_samples, int) or \
            chunk_samples < 1:
        raise InputError(f"chunk_samples={chunk_samples!r} must be a whole number >= 1")
    name, value = split
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0):
        raise InputError(f"{name}={value!r} must be a whole number >= 0 (0: never split)")
    if executor not in EXECUTORS:
        raise InputError(f"executor={executor!r} must be one of {', '.join(EXECUTORS)}")


def plan_outputs(inputs: Sequence[Any], out_dir: Path, output_of: Callable[[Any], Path],
                 read: Sequence[Any], taken: dict[Path, str] | None = None
                 ) -> dict[Path, str]:
    """Each input's output file, refused before anything is read when two inputs would
    write one file, an output is an input (or any file in ``read``), the output folder is
    a file or lies inside an input folder.

    Parameters
    ----------
    inputs : sequence of paths
    out_dir : Path
    output_of : callable
        ``output_of(input) -> Path``.
    read : sequence
        Other files the run reads (the pipeline file).
    taken : dict, optional
        Outputs of the run itself (a summary) and what they are called.

    Returns
    -------
    dict
        Output path -> its input (and the ``taken`` entries first).
    """
    if not inputs:
        raise InputError("no inputs given")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: the output folder is a file")
    outs: dict[Path, str] = dict(taken or {})
    for inp in inputs:
        o = output_of(inp)
        if o in outs:
            raise InputError(f"{outs[o]} and {inp} would both write {o.name}; give inputs "
                             "with different names or run them separately")
        outs[o] = str(inp)
    # an output folder holding the inputs under the output names: refused before any read
    refuse_overwriting_inputs(outs, list(inputs) + list(read))
    refuse_writing_into_folders(out_dir, inputs)
    return outs


def run_batch(pipeline: Pipeline | dict[str, Any] | str | os.PathLike[str],
              inputs: Sequence[str | os.PathLike[str]], outdir: str | os.PathLike[str], *,
              workers: int = 1, executor: Executor = "processes", dask: str | None = None,
              chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
              task_samples: int | None = DEFAULT_TASK_SAMPLES,
              recording_options: dict[str, Any] | None = None,
              start: int | None = None, stop: int | None = None,
              channels: list[int] | None = None,
              progress: Callable[[int, int, InputResult | None], None] | None = None,
              dask_options: dict[str, Any] | None = None,
              write_on: WriteOn = "auto") -> Summary:
    """Run ``pipeline`` over every input, writing ``OUTDIR/<stem>.h5`` for each.

    Parameters
    ----------
    pipeline : Pipeline, dict or path
        Validated before anything runs (:class:`InputError` otherwise).
    inputs : sequence of paths
        Recordings (any format :func:`open_recording` reads).
    outdir : path
        Created when missing.
    workers, executor : int, {"processes", "threads"}
        1 runs in this process; more use a pool of that kind (or Dask workers).
    dask, dask_options : str, dict, optional
        ``"local"`` for a ``distributed.LocalCluster`` of ``workers`` workers (extra
        arguments in ``dask_options``), or a scheduler address ``"tcp://host:port"``.
    chunk_samples : int
        Samples read at a time inside a task (bounds memory).
    task_samples : int or None
        Recordings longer than this are split into part tasks (None or 0: never).
    recording_options : dict, optional
        Passed to :func:`open_recording` (``sample_rate``, ``dtype`` for raw files).
    start, stop, channels
        Range and channels of each recording (all by default).
    progress : callable, optional
        ``progress(done, total, result)`` after each input (``result`` None for parts).
    write_on : {"auto", "client", "workers"}
        Who writes the outputs of a Dask run: the workers, in place, or this
        process, fetching each file from its worker in pieces
        (:mod:`~specscope.compute.batch.fetch`).  ``"auto"``: the workers when
        every one of them sees the output folder and may write in it (a probe
        file tells), else this process.  Local pools always write in place.

    Returns
    -------
    Summary
        One :class:`InputResult` per input; a failing input does not stop the others.

    Raises
    ------
    InputError
        A bad argument or pipeline, no inputs, an output folder that is a file, two
        inputs writing one output, or an output that is an input.
    RecordingError
        The output folder cannot be created.
    """
    t0 = time.perf_counter()
    pipeline_path = pipeline if isinstance(pipeline, (str, os.PathLike)) else None
    if not isinstance(pipeline, Pipeline):
        pipeline = (Pipeline.from_dict(pipeline) if isinstance(pipeline, dict)
                    else Pipeline.load(pipeline))
    check_run_args(workers, chunk_samples, ("task_samples", task_samples), executor)
    check_write_on(write_on)
    if pipeline.event_step is not None:
        raise InputError(f"{pipeline.event_step.label}: the pipeline ends in a detector, "
                         "so its result is events, not HDF5 signal files; run it with "
                         "run_detect")
    options = {k: v for k, v in (recording_options or {}).items() if v is not None}
    out_dir = Path(outdir)
    outs = plan_outputs(inputs, out_dir, lambda i: output_path(i, out_dir), [pipeline_path])
    _make_folder(out_dir)
    clean_abandoned_parts()

    results: dict[str, InputResult] = {}
    order = [str(i) for i in inputs]
    jobs: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for o, inp in outs.items():
        try:
            jobs[inp] = _prepare(pipeline, inp, o, options, chunk_samples, task_samples,
                                 start, stop, channels)
        except Exception as exc:  # noqa: BLE001 - this input fails, the others go on
            results[inp] = InputResult(inp, None, False, one_line(exc), failure=exc)
    collect = _Collect(jobs, results, len(order), progress)
    for r in list(results.values()):
        collect.report(r)
    tasks, finished = collect.tasks()
    try:
        info = run_tasks(_task, tasks, collect.take, workers=workers, executor=executor,
                         dask=dask, dask_options=dask_options, outputs=out_dir,
                         write_on=write_on, finished=finished)
    finally:
        for inp in collect.unfinished:
            for p in jobs[inp][1]:
                if p.get("state"):
                    continue  # a deployment's finished parts wait for the next run
                Path(p["part_path"]).unlink(missing_ok=True)
                _ABANDONED.add(Path(p["part_path"]))
        clean_stale_partials(out_dir / ".specscope-batch")  # temporaries of killed workers
    for inp, n_again in info.retried.items():
        if inp in results:
            results[inp].retried = n_again
    return Summary([results[i] for i in order], time.perf_counter() - t0, info.workers,
                   info.executor, info.threads, info.setup_seconds, info.cluster)


class _Collect:
    """The outcomes of a pipeline run's tasks, an input's result once its tasks are in."""

    def __init__(self, jobs: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]],
                 results: dict[str, InputResult], total: int,
                 progress: Callable[[int, int, InputResult | None], None] | None) -> None:
        self.jobs, self.results, self.total, self.progress = jobs, results, total, progress
        self.done = 0
        self.unfinished = set(jobs)
        self.left: dict[str, int] = {}
        self.errors: dict[str, list[str]] = {}
        self.spent = dict.fromkeys(jobs, 0.0)
        self.where: dict[str, list[str]] = {inp: [] for inp in jobs}

    def tasks(self) -> tuple[list[Task], list[tuple[Task, TaskOutcome]]]:
        """The tasks to run, and the outcome standing for a split input every part of
        which a stopped run finished."""
        tasks: list[Task] = []
        finished: list[tuple[Task, TaskOutcome]] = []
        for inp, (spec, parts) in self.jobs.items():
            if not parts:
                tasks.append(Task(inp, spec))
                continue
            todo = [Task(inp, p, i) for i, p in enumerate(parts) if not p.get("reuse")]
            self.left[inp] = len(todo)
            self.errors[inp] = []
            tasks += todo
            if not todo:
                finished.append((Task(inp, parts[-1], len(parts) - 1),
                                 TaskResult({}, reused=True)))
        return tasks, finished

    def report(self, r: InputResult) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total, r)

    def take(self, task: Task, outcome: TaskOutcome) -> None:
        """One task's outcome; the input's result once it is the last of its tasks."""
        inp = task.input
        whole, parts = self.jobs[inp]
        n = whole["stop"] - whole["start"]
        self.spent[inp] += outcome.seconds
        if outcome.worker and outcome.worker not in self.where[inp]:
            self.where[inp].append(outcome.worker)
        if task.part is None:
            failure = None if outcome.ok else outcome.error
            r = InputResult(inp, whole["out"] if outcome.ok else None, outcome.ok,
                            None if outcome.ok else outcome.message, self.spent[inp], n,
                            len(whole["channels"]), workers=self.where[inp], failure=failure)
        else:
            if isinstance(outcome, TaskFailure):
                # the output is named, not the hidden part file it is assembled from
                part = task.spec["part_path"]
                renamed(outcome.error, {os.path.abspath(part): whole["out"],
                                        part: whole["out"]})
                self.errors[inp].append(f"{outcome.message} (the part from sample "
                                        f"{task.spec['part']['read_start']})")
            if not (isinstance(outcome, TaskResult) and outcome.reused):
                self.left[inp] -= 1
            if self.left[inp]:
                return
            r = _join(whole, parts, self.errors[inp], self.spent[inp], n, self.where[inp])
        self.results[inp] = r
        self.unfinished.discard(inp)
        self.report(r)


def _join(whole: dict[str, Any], parts: list[dict[str, Any]], errors: list[str],
          spent: float, n: int, where: list[str]) -> InputResult:
    """An input's output assembled from its parts, once each has come."""
    paths = [Path(p["part_path"]) for p in parts]
    reused = sum(1 for p in parts if p.get("reuse"))
    kept = bool(whole.get("deployment"))  # finished parts wait in the resume folder
    t_join = time.perf_counter()
    try:
        if errors:
            raise RecordingError(errors[0])
        _assemble(whole, parts)
        r = InputResult(whole["path"], whole["out"], True, None,
                        spent + time.perf_counter() - t_join, n, len(whole["channels"]),
                        len(parts), workers=where, reused=reused)
    except Exception as exc:  # noqa: BLE001
        r = InputResult(whole["path"], None, False, one_line(exc),
                        spent + time.perf_counter() - t_join, n, len(whole["channels"]),
                        len(parts), workers=where, reused=reused, failure=exc)
    if kept:
        if r.ok:
            _drop_state(Path(parts[0]["state"]))
        return r
    for p in paths:
        p.unlink(missing_ok=True)
    if not r.ok:  # a part still being written may yet be moved into place
        _ABANDONED.update(paths)
    return r


def process_file(pipeline: Pipeline | dict[str, Any], path: str | os.PathLike[str],
                 out: str | os.PathLike[str], **kwargs: Any) -> InputResult:
    """Run one input in this process (same numbers as :func:`run_batch`); raise on failure.

    The run writes into a temporary folder next to ``out`` and its output is then
    moved over ``out``: no other file of that folder is touched.

    Parameters
    ----------
    pipeline : Pipeline, dict or path
    path, out : path-like or str
        The input recording, and the output HDF5 file (its folder must exist).
    **kwargs
        Keyword arguments of :func:`run_batch` (``chunk_samples``, ``start``, ...).

    Returns
    -------
    InputResult
        With ``output`` set to ``out``.

    Raises
    ------
    RecordingError
        ``out`` is a folder, its folder is missing or not writable, the run failed
        or the file cannot be replaced.
    OutputIsInputError
        ``out`` resolves to the input or to the pipeline file.
    """
    out = Path(out)
    refuse_overwriting_inputs([out], [path] + ([pipeline] if isinstance(
        pipeline, (str, os.PathLike)) else []))
    if out.is_dir():
        raise RecordingError(f"{out}: is a folder; give a file name ending in .h5")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise RecordingError(f"{out}: the folder {folder} does not exist")
    clean_stale_partials(out)
    try:
        tmpdir = Path(tempfile.mkdtemp(dir=folder, prefix=f".{out.name}.{owner_tag()}.",
                                       suffix=".partial"))
    except OSError as exc:
        raise RecordingError(f"{out}: cannot write in {folder} ({os_error_cause(exc)})"
                             ) from None
    try:
        summary = run_batch(pipeline, [path], tmpdir, **kwargs)
        r = summary.results[0]
        if not r.ok:
            inside = {str(output_path(path, tmpdir)): str(out)}
            if isinstance(r.failure, SpecscopeError):  # its own type, naming the output
                raise renamed(r.failure, inside) from None
            raise RecordingError(renamed(RecordingError(r.error or "failed"), inside))
        try:
            os.replace(Path(r.output or ""), out)
        except OSError as exc:
            raise RecordingError(f"{out}: cannot replace the file ({os_error_cause(exc)})"
                                 ) from None
        r.output = str(out)
        return r
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
