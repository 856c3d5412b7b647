"""A deployment as one :class:`~specscope.compute.io.Recording`.

The sample axis is the used files' samples end to end: file ``k`` holds samples
``offsets[k]:offsets[k + 1]``, and a read across a boundary returns the concatenation.
Gaps take no samples: :attr:`Deployment.gaps` lists each as (first sample after it,
its length in seconds), and :meth:`Deployment.segments` gives the contiguous stretches,
so a caller framing a spectrum never lets a frame cross a gap.  The absolute time of a
sample is its segment's start plus its offset in that segment over the sample rate.

A deployment pickles as its source, options and fingerprint: the other side (a worker
process, a Dask worker) indexes it again from the header cache, once per process, and
opens its files when it reads them.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ..annotations import Annotation
from ..errors import InputError, RecordingError
from ..files import note_inputs
from ..io import Recording, open_recording
from ..io.remote import as_path, is_url
from .index import DeploymentIndex, FileEntry, Segment, index_deployment
from .times import iso_time

__all__ = ["Deployment", "open_deployment", "segments_in"]

#: files kept open at most by one deployment (the least recently read is closed)
MAX_OPEN = 8
#: files whose readers give annotations of their own (merged into the deployment's)
ANNOTATED_SUFFIXES = (".sigmf-meta", ".h5", ".hdf5", ".he5")
#: the options a deployment is indexed with (kept for pickling)
OPTION_NAMES = ("name_pattern", "tz", "cache", "tolerance_s")


class Deployment(Recording):
    """The used files of a :class:`DeploymentIndex` read as one recording.

    Parameters
    ----------
    index : DeploymentIndex
        What :func:`index_deployment` found.
    options : dict, optional
        The options it was indexed with (:data:`OPTION_NAMES`); pickling indexes
        again with them.
    """

    def __init__(self, index: DeploymentIndex, options: dict[str, Any] | None = None,
                 *, _first: tuple[str, float | None] | None = None) -> None:
        self._own_annotations: list[Annotation] = []
        self._merged = False
        super().__init__(_root(index))
        self.index = index
        self.options = {"name_pattern": None, "tz": index.tz, "cache": True,
                        "tolerance_s": index.tolerance_s, **(options or {})}
        self.format = "deployment"
        self.sample_rate = float(index.sample_rate)
        self.n_samples = int(index.n_samples)
        self.n_channels = int(index.n_channels)
        self.is_complex = bool(index.is_complex)
        self.start_time = iso_time(index.start)
        self.warnings = [p.message for p in index.problems]
        summary = index.summary()
        self.metadata = {k: summary[k] for k in (
            "source", "tz", "start", "end", "span_s", "recorded_s", "gap_s", "n_files",
            "n_used", "n_ignored", "problem_counts")}
        self.metadata["n_gaps"] = len(index.gaps)
        self._offsets = index.file_offsets()
        self._open: OrderedDict[int, Recording] = OrderedDict()
        note_inputs(*(f.path for f in index.used if not is_url(f.path)))
        if _first is None:
            first = self._file(0)
            _first = (first.units, first.center_frequency)
        self.units, self.center_frequency = _first

    # -- pickling: the source and options, indexed again on the other side -------------

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, (_source_of(self.index.source), dict(self.options),
                          self.fingerprint(), (self.units, self.center_frequency)))

    def __copy__(self) -> Deployment:
        """The same deployment with files of its own (opened when read)."""
        dep = Deployment(self.index, self.options, _first=(self.units, self.center_frequency))
        dep._own_annotations, dep._merged = list(self._own_annotations), self._merged
        return dep

    # -- annotations: the deployment's own and its files' ------------------------------

    @property
    def annotations(self) -> list[Annotation]:
        """The deployment's annotations: those set on it, then those its files carry (a
        SigMF or HDF5 file's own), times shifted to the deployment's axis and the file
        named in ``extra["file"]`` (read on first use)."""
        if not self._merged:
            self._merged = True
            self._own_annotations = self._own_annotations + self.file_annotations()
        return self._own_annotations

    @annotations.setter
    def annotations(self, value: list[Annotation]) -> None:
        self._own_annotations = list(value)

    def file_annotations(self) -> list[Annotation]:
        """The annotations the used files carry, on the deployment's axis.

        A file's annotation at ``t`` seconds from its first sample lies at
        ``offset / sample_rate + t``; ``extra`` gains ``file`` (its path) and
        ``file_start_s`` (its time in that file).  Only files of a format that
        carries annotations (:data:`ANNOTATED_SUFFIXES`) are opened.
        """
        out: list[Annotation] = []
        for k, entry in enumerate(self.index.used):
            if not str(entry.path).lower().endswith(ANNOTATED_SUFFIXES):
                continue
            shift = self._offsets[k] / self.sample_rate
            for a in self._file(k).annotations:
                extra = {**a.extra, "file": str(entry.path), "file_start_s": a.start_s}
                out.append(replace(a, start_s=a.start_s + shift, stop_s=a.stop_s + shift,
                                   extra=extra))
        return out

    # -- the axis ----------------------------------------------------------------------

    @property
    def files(self) -> list[FileEntry]:
        """The used files, in order."""
        return self.index.used

    @property
    def gaps(self) -> list[tuple[int, float]]:
        """Each gap as (first sample after it, its length in seconds)."""
        return [(g.sample, g.length_s) for g in self.index.gaps]

    def fingerprint(self) -> str:
        """A hash of the used files' absolute paths, sizes and modification times: it
        changes when any of them does (a key for caches of what was computed from the
        deployment)."""
        h = hashlib.sha256()
        for f in self.index.used:
            # absolute: the same files give the same print from any working folder
            path = f.path if is_url(f.path) else os.path.abspath(f.path)
            h.update(f"{path}\0{f.size}\0{f.mtime_ns}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()[:32]

    def segments(self) -> list[tuple[int, int]]:
        """The contiguous stretches as sample ranges ``(start, stop)``; none crosses a gap."""
        return [(s.start_sample, s.stop_sample) for s in self.index.segments]

    def _segment(self, sample: int) -> Segment:
        segs = self.index.segments
        i = bisect.bisect_right([s.start_sample for s in segs], sample) - 1
        return segs[max(i, 0)]

    def file_at(self, sample: int) -> tuple[Any, int]:
        """The file holding ``sample`` and the sample's offset in it.

        Raises
        ------
        InputError
            ``sample`` lies outside ``0:n_samples``.
        """
        self._check(sample)
        k = bisect.bisect_right(self._offsets, int(sample)) - 1
        return self.index.used[k].path, int(sample) - self._offsets[k]

    def time_at(self, sample: int) -> datetime:
        """The absolute time (UTC) of ``sample``; ``n_samples`` gives the end."""
        if not 0 <= int(sample) <= self.n_samples:
            self._check(sample)
        seg = self._segment(int(sample))
        return seg.start + timedelta(seconds=(int(sample) - seg.start_sample) / self.sample_rate)

    def sample_at(self, when: datetime | str) -> int:
        """The sample at time ``when``; a time in a gap gives the first sample after it.

        Parameters
        ----------
        when : datetime or str
            An aware datetime, or ISO 8601 text (read in UTC when it names no zone).

        Raises
        ------
        InputError
            ``when`` is no time, or lies before the first or after the last sample.
        """
        if isinstance(when, str):
            try:
                when = datetime.fromisoformat(when.strip())
            except ValueError:
                raise InputError(f"{when!r} is no ISO 8601 date and time") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        index = self.index
        if not index.start <= when <= index.end:
            raise InputError(f"{iso_time(when)} lies outside the deployment "
                             f"({iso_time(index.start)} to {iso_time(index.end)})")
        segs = index.segments
        i = bisect.bisect_right([s.start for s in segs], when) - 1
        seg = segs[max(i, 0)]
        k = round((when - seg.start).total_seconds() * self.sample_rate)
        if k >= seg.n_samples and i + 1 < len(segs):
            return segs[i + 1].start_sample  # in the gap after this segment
        return min(seg.start_sample + k, self.n_samples)

    def file_index(self, sample: int) -> int:
        """The position in :attr:`files` of the file holding ``sample``."""
        self._check(sample)
        return bisect.bisect_right(self._offsets, int(sample)) - 1

    def file_offsets(self) -> list[int]:
        """The first sample of each used file on the deployment's axis, then the total."""
        return list(self._offsets)

    def file_recording(self, k: int) -> Recording:
        """Used file ``k`` open as its own recording (kept open by the deployment; do not
        close it)."""
        return self._file(int(k))

    def _check(self, sample: int) -> None:
        if not 0 <= int(sample) < self.n_samples:
            raise InputError(f"sample {int(sample)} lies outside the deployment "
                             f"(0 to {self.n_samples - 1})")

    # -- reading -----------------------------------------------------------------------

    def _file(self, k: int) -> Recording:
        rec = self._open.get(k)
        if rec is not None:
            self._open.move_to_end(k)
            return rec
        entry = self.index.used[k]
        _check_unchanged(entry)
        rec = open_recording(entry.path)
        h = entry.header
        if (rec.n_samples, rec.n_channels, float(rec.sample_rate)) != (
                h.n_samples, h.n_channels, h.sample_rate):
            rec.close()
            raise RecordingError(
                f"{entry.path}: opens as {rec.n_samples} samples, {rec.n_channels} channel(s) "
                f"at {rec.sample_rate:g} Hz where its header read {h.n_samples}, "
                f"{h.n_channels} at {h.sample_rate:g} Hz; index the deployment again")
        self._open[k] = rec
        while len(self._open) > MAX_OPEN:
            _, old = self._open.popitem(last=False)
            old.close()
        return rec

    def _read(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.n_channels), self.dtype)
        k = bisect.bisect_right(self._offsets, start) - 1
        pos = start
        while pos < stop:
            lo, hi = self._offsets[k], self._offsets[k + 1]
            end = min(stop, hi)
            out[pos - start:end - start] = self._file(k).read(pos - lo, end - lo)
            pos = end
            k += 1
        return out

    def close(self) -> None:
        """Close the files that are open."""
        while self._open:
            _, rec = self._open.popitem()
            rec.close()

    def __repr__(self) -> str:
        return (f"<Deployment {len(self.index.used)} files {self.start_time} "
                f"{self.sample_rate:g} Hz, {self.n_channels} ch, {self.n_samples} samples, "
                f"{len(self.index.gaps)} gap(s)>")


def segments_in(recording: Any, start: int, stop: int) -> list[tuple[int, int]]:
    """The contiguous stretches of ``recording`` within samples ``start:stop``.

    Parameters
    ----------
    recording : Recording
        A :class:`Deployment` (its :meth:`~Deployment.segments`) or any recording
        (one stretch).
    start, stop : int
        The range, in samples.

    Returns
    -------
    list of (int, int)
        The non-empty pieces of the range that no gap cuts, in order; ``[(start,
        stop)]`` for a recording without gaps (also when the range is empty).
    """
    segments = getattr(recording, "segments", None)
    if not callable(segments):
        return [(int(start), int(stop))]
    out = [(max(int(start), s0), min(int(stop), s1)) for s0, s1 in segments()]
    out = [(a, b) for a, b in out if b > a]
    return out or [(int(start), int(stop))]


def _check_unchanged(entry: FileEntry) -> None:
    if is_url(entry.path):
        return
    try:
        st = os.stat(entry.path)
    except OSError as exc:
        raise RecordingError(f"{entry.path}: cannot be read now "
                             f"({exc.strerror or type(exc).__name__})") from None
    if (st.st_size, st.st_mtime_ns) != (entry.size, entry.mtime_ns):
        raise RecordingError(f"{entry.path}: changed since the deployment was indexed "
                             f"({entry.size} bytes then, {st.st_size} now); index it again")


def _root(index: DeploymentIndex) -> Any:
    key = index.source
    if key.startswith(("glob:", "listfile:")):
        return Path(key.split(":", 1)[1])
    if key.startswith("list:"):
        local = [str(f.path) for f in index.used if not is_url(f.path)]
        try:
            return Path(os.path.commonpath(local)) if local else Path(".")
        except ValueError:
            return Path(".")
    return Path(key)


_REOPENED: dict[tuple[Any, ...], DeploymentIndex] = {}
_REOPENED_LOCK = threading.Lock()


def _source_of(key: str) -> Any:
    """The source an index key was made from (what :func:`index_deployment` takes)."""
    if key.startswith("list:"):
        return [as_path(s) if is_url(s) else s for s in key[5:].split("\n")]
    if key.startswith(("glob:", "listfile:")):
        return key.split(":", 1)[1]
    return key


def _reopen(source: Any, options: dict[str, Any], fingerprint: str,
            first: tuple[str, float | None]) -> Deployment:
    """A pickled deployment on the other side: indexed again (once per process, from the
    header cache), checked against its fingerprint; files opened when read."""
    key = (str(source), tuple(sorted((k, str(v)) for k, v in options.items())), fingerprint)
    with _REOPENED_LOCK:
        index = _REOPENED.get(key)
    if index is None:
        index = index_deployment(source, **options)
        dep = Deployment(index, options, _first=first)
        if dep.fingerprint() != fingerprint:
            raise RecordingError(f"{_root(index)}: its files changed since the deployment "
                                 "was indexed; index it again")
        with _REOPENED_LOCK:
            if len(_REOPENED) >= 16:
                _REOPENED.pop(next(iter(_REOPENED)))
            _REOPENED[key] = index
        return dep
    return Deployment(index, options, _first=first)


def open_deployment(source: Any, *, name_pattern: str | None = None, tz: str = "UTC",
                    cache: bool = True, tolerance_s: float = 1.0) -> Deployment:
    """Index a deployment (:func:`index_deployment`) and open it as one recording.

    Parameters
    ----------
    source : str, PathLike or list
        A folder, a glob, a list file or a list of paths.
    name_pattern, tz, cache, tolerance_s
        As for :func:`index_deployment`.

    Returns
    -------
    Deployment
    """
    options = {"name_pattern": name_pattern, "tz": tz, "cache": cache,
               "tolerance_s": tolerance_s}
    return Deployment(index_deployment(source, **options), options)
