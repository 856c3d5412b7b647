"""``rerun``: the pipeline stored in an output run again on its source (``--verify``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..errors import InputError, RecordingError, SpecscopeError, shown
from ..files import os_error_cause, refuse_overwriting_inputs
from ..io import open_recording
from ..io.remote import as_path, is_url
from ..output import export_range, sha256_file
from ..output.provenance import read_int_attr, read_text_attr
from ..pipeline import Pipeline
from .compare import RerunResult, compare_outputs
from .process import run_batch
from .tasks import one_line

__all__ = ["rerun"]


def rerun(out_h5: str | os.PathLike[str], verify: bool = False) -> RerunResult:
    """Run the pipeline stored in an output again on its source.

    Parameters
    ----------
    out_h5 : path-like or str
        An output of :func:`run_batch` (or of a range export).
    verify : bool
        Without it the output is replaced by the new run.  With it the new result
        goes to a temporary file that is compared with the stored one, dataset by
        dataset, and removed.

    Returns
    -------
    RerunResult
        ``identical`` (None without ``verify``) says whether every number is equal.

    Raises
    ------
    RecordingError
        The file is missing or not HDF5, its source is missing or changed (its
        SHA-256 is checked; for a deployment, the fingerprint of its files), the
        rerun failed, or the output cannot be written.
    InputError
        The file holds no pipeline, (without ``verify``) resolves to its source, or
        lies inside the folder of its source deployment.
    """
    import h5py

    out = Path(out_h5)
    if not out.is_file():
        raise RecordingError(f"{out}: no such file")
    try:
        with h5py.File(out, "r") as f:
            a, where = f.attrs, out.name
            text = read_text_attr(a, "pipeline", where, default=None)
            if text is None:
                raise InputError(f"{out.name}: no pipeline inside; not written by "
                                 "run_batch")
            source = read_text_attr(a, "source_path", where)
            digest = read_text_attr(a, "source_sha256", where)
            options = jsonsafe.loads(read_text_attr(a, "source_options", where, default="{}"),
                                     f"{where}: attribute source_options")
            if not isinstance(options, dict):
                raise RecordingError(f"{where}: attribute source_options must be a JSON "
                                     "object")
            start = read_int_attr(a, "start_sample", where)
            stop = read_int_attr(a, "stop_sample", where)
            channels = jsonsafe.loads(read_text_attr(a, "channels", where, default="null"),
                                      f"{where}: attribute channels")
            if channels is not None and not (
                    isinstance(channels, list) and all(type(c) is int and c >= 0
                                                       for c in channels)):
                raise RecordingError(f"{where}: attribute channels={shown(channels)} must be "
                                     "a list of channel numbers")
            chunk = read_int_attr(a, "chunk_samples", where, minimum=1)
            task = read_int_attr(a, "task_samples", where) or None
            # a range export read lookback samples before its start to warm its steps up
            is_range = "range_first" in a
            fingerprint = _stored_fingerprint(f, where)
    except SpecscopeError:
        raise
    except OSError as exc:
        raise RecordingError(f"{out}: not an HDF5 file ({one_line(exc)})") from None
    pipeline = Pipeline.from_json(text)
    if not verify:
        refuse_overwriting_inputs([out], [source])
    if fingerprint is not None or (not is_url(source) and Path(source).is_dir()):
        _check_deployment(out, source, options, fingerprint)
    else:
        if not as_path(source).is_file():
            raise RecordingError(f"{out.name}: its source {source} is missing")
        if sha256_file(source) != digest:
            raise RecordingError(f"{out.name}: its source {source} changed since the run "
                                 "(SHA-256 differs)")
    tmpdir = out.parent / f".{out.stem}.rerun"
    try:
        tmpdir.mkdir(exist_ok=True)
    except OSError as exc:
        raise RecordingError(f"{out}: cannot write in {out.parent} "
                             f"({os_error_cause(exc)})") from None
    try:
        if is_range:
            fresh = _rerun_range(out, pipeline, source, tmpdir, options, start, stop,
                                 channels, chunk)
        else:
            summary = run_batch(pipeline, [source], tmpdir, workers=1, chunk_samples=chunk,
                                task_samples=task, recording_options=options, start=start,
                                stop=stop, channels=channels)
            r = summary.results[0]
            if not r.ok:
                raise RecordingError(f"{out.name}: rerun failed: {r.error}")
            fresh = Path(r.output or "")
        if not verify:
            try:
                os.replace(fresh, out)
            except OSError as exc:
                raise RecordingError(f"{out}: cannot replace the file "
                                     f"({os_error_cause(exc)})") from None
            return RerunResult(str(out), None)
        return compare_outputs(out, fresh)
    finally:
        # a stopped deployment run leaves its finished parts in a folder in there
        shutil.rmtree(tmpdir, ignore_errors=True)


def _stored_fingerprint(f: Any, where: str) -> str | None:
    """The fingerprint of the source deployment's files (the ``/deployment`` group's), or
    None (an output of a file)."""
    attrs = getattr(f.get("deployment"), "attrs", None)
    if attrs is None or "fingerprint" not in attrs:
        return None
    return read_text_attr(attrs, "fingerprint", f"{where}: /deployment")


def _check_deployment(out: Path, source: str, options: dict[str, Any],
                      fingerprint: str | None) -> None:
    """Refuse a deployment source that is gone, changed, or holds the output."""
    folder = Path(source)
    if not folder.is_dir():
        raise RecordingError(f"{out.name}: its source folder {source} is missing")
    if fingerprint is None:
        raise RecordingError(f"{out.name}: its source {source} is a folder of recordings, "
                             "and the file states no fingerprint of its files to check "
                             "them by")
    if out.resolve().is_relative_to(folder.resolve()):
        raise InputError(f"{out}: lies inside the folder of its source {source}, where "
                         "nothing is written; move it out of the folder first")
    try:
        with open_recording(folder, **options) as dep:
            now = getattr(dep, "fingerprint", lambda: None)()
    except SpecscopeError as exc:
        raise RecordingError(f"{out.name}: its source {source} cannot be opened "
                             f"({one_line(exc)})") from None
    if now != fingerprint:
        raise RecordingError(f"{out.name}: the files of its source {source} changed since "
                             "the run (added, removed or modified: their fingerprint "
                             "differs)")


def _rerun_range(out: Path, pipeline: Pipeline, source: str, tmpdir: Path,
                 options: dict[str, Any], start: int, stop: int, channels: list[int],
                 chunk: int) -> Path:
    """Export the range again as the export did: from ``lookback`` samples before it."""
    fresh = tmpdir / out.name
    try:
        return export_range(source, fresh, pipeline=pipeline, start=start, stop=stop,
                            channels=channels, options=options, chunk_samples=chunk)
    except SpecscopeError as exc:
        raise RecordingError(f"{out.name}: rerun failed: {one_line(exc)}") from None
