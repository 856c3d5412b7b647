"""A deployment as one :class:`~specscope.compute.io.Recording`.

The sample axis is the used files' samples end to end: file ``k`` holds samples
``offsets[k]:offsets[k + 1]``, and a read across a boundary returns the concatenation.
Gaps take no samples: :attr:`Deployment.gaps` lists each as (first sample after it,
its length in seconds), and :meth:`Deployment.segments` gives the contiguous stretches,
so a caller framing a spectrum never lets a frame cross a gap.  The absolute time of a
sample is its segment's start plus its offset in that segment over the sample rate.
"""

from __future__ import annotations

import bisect
import hashlib
import os
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, RecordingError
from ..files import note_inputs
from ..io import Recording, open_recording
from ..io.remote import is_url
from .index import DeploymentIndex, FileEntry, Segment, index_deployment
from .times import iso_time

__all__ = ["Deployment", "open_deployment"]

#: files kept open at most by one deployment (the least recently read is closed)
MAX_OPEN = 8


class Deployment(Recording):
    """The used files of a :class:`DeploymentIndex` read as one recording.

    Parameters
    ----------
    index : DeploymentIndex
        What :func:`index_deployment` found.
    """

    def __init__(self, index: DeploymentIndex) -> None:
        super().__init__(_root(index))
        self.index = index
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
        first = self._file(0)
        self.units = first.units
        self.center_frequency = first.center_frequency

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
        """A hash of the used files' paths, sizes and modification times: it changes when
        any of them does (a key for caches of what was computed from the deployment)."""
        h = hashlib.sha256()
        for f in self.index.used:
            h.update(f"{f.path}\0{f.size}\0{f.mtime_ns}\n".encode("utf-8", "surrogateescape"))
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
    return Deployment(index_deployment(source, name_pattern=name_pattern, tz=tz, cache=cache,
                                       tolerance_s=tolerance_s))
