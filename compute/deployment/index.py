"""The index of a deployment: its files, their start times, gaps and problems.

:func:`index_deployment` takes a folder (walked, hidden entries skipped), a glob or a
list file (one path or URL a line, ``#`` comments), reads each file's header once and
keeps it in the user cache keyed by (path, size, mtime), so that indexing again reads
only new or changed files.  Nothing is written beside the recordings.

The files used are those of the deployment's sample rate, channel count and sample
kind (the one most files have), ordered by start time.  A file is left out, with one
line saying why, when it cannot be read, has no start time, has another rate or
channel count (never resampled), repeats another (same start and length) or starts
before the one it follows has ended (never merged).  Between two files, a start more
than ``tolerance_s`` after the end of the previous file is a gap; within it they are
contiguous and read as one signal.
"""

from __future__ import annotations

import glob as globmod
import hashlib
import itertools
import json
import os
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import Cancelled, RecordingError, SpecscopeError
from ..files import atomic_file
from ..io.remote import as_path, is_url
from ..paths import cache_dir
from .headers import Header, describe_time, read_header, stated_time
from .times import (
    CompiledPattern,
    aware,
    compile_pattern,
    iso_time,
    name_time,
    parse_zone,
    tried_forms,
)

__all__ = [
    "RECORDING_SUFFIXES",
    "DeploymentError",
    "DeploymentIndex",
    "FileEntry",
    "Gap",
    "Problem",
    "Segment",
    "index_deployment",
]

#: suffixes of the files a folder's deployment is made of
RECORDING_SUFFIXES = frozenset({
    ".wav", ".wave", ".bwf", ".rf64", ".w64", ".flac", ".aif", ".aiff", ".aifc", ".caf",
    ".ogg", ".oga", ".sigmf-meta", ".h5", ".hdf5", ".he5"})
#: suffixes read as a list of files
LIST_SUFFIXES = frozenset({".txt", ".lst", ".list"})
_CACHE_VERSION = 1
_GLOB_CHARS = re.compile(r"[*?\[]")


class DeploymentError(RecordingError):
    """A deployment that cannot be opened at all: no recordings, or none usable.

    Attributes
    ----------
    source : str
        The folder, glob or list file.
    problems : tuple of Problem
        The problems of its files (each also one line).
    """

    def __init__(self, source: str, message: str, problems: Sequence[Problem] = ()) -> None:
        self.source, self.problems = str(source), tuple(problems)
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (str(self), self.source, self.problems))


def _restore(message: str, source: str, problems: tuple[Problem, ...]) -> DeploymentError:
    return DeploymentError(source, message, problems)


@dataclass(frozen=True)
class Problem:
    """Why one file of a deployment is reported.

    Attributes
    ----------
    path : str
        The file.
    kind : str
        ``"unreadable"``, ``"no_time"``, ``"mismatch"``, ``"duplicate"``, ``"overlap"``
        (these files are left out) or ``"clock_back"`` (kept, its clock went back).
    message : str
        One line naming the file and the problem.
    """

    path: str
    kind: str
    message: str

    def to_dict(self) -> dict[str, str]:
        """As a JSON-ready dict."""
        return {"path": self.path, "kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class FileEntry:
    """One file of a deployment.

    Attributes
    ----------
    path : Path or UrlPath
        The file.
    size, mtime_ns : int
        Its size and modification time when indexed (-1 for a URL).
    header : Header or None
        Its header; ``None`` when it could not be read.
    start : datetime or None
        Its first sample's time, UTC; ``None`` when none was found.
    time_source : str
        ``"bext"``, ``"guano"``, ``"audiomoth"``, ``"metadata"``, or ``"name FORM"``.
    """

    path: Any
    size: int
    mtime_ns: int
    header: Header | None
    start: datetime | None
    time_source: str

    @property
    def duration_s(self) -> float:
        """Length in seconds (0 without a header)."""
        h = self.header
        return h.n_samples / h.sample_rate if h is not None and h.sample_rate else 0.0

    @property
    def end(self) -> datetime | None:
        """Time just after its last sample, UTC."""
        return None if self.start is None else self.start + timedelta(seconds=self.duration_s)

    def to_dict(self) -> dict[str, Any]:
        """As a JSON-ready dict."""
        h = self.header
        return {"path": str(self.path), "start": _iso(self.start), "end": _iso(self.end),
                "time_source": self.time_source, "duration_s": self.duration_s,
                "sample_rate": None if h is None else h.sample_rate,
                "n_channels": None if h is None else h.n_channels,
                "n_samples": None if h is None else h.n_samples}


@dataclass(frozen=True)
class Segment:
    """A run of contiguous files: one stretch of the deployment's sample axis.

    Attributes
    ----------
    start_sample, n_samples : int
        Where it lies on the deployment's sample axis.
    start : datetime
        Time of its first sample, UTC; sample ``start_sample + k`` is at
        ``start + k / sample_rate``.
    first_file, n_files : int
        Its files, as positions in :attr:`DeploymentIndex.used`.
    """

    start_sample: int
    n_samples: int
    start: datetime
    first_file: int
    n_files: int

    @property
    def stop_sample(self) -> int:
        """One past its last sample."""
        return self.start_sample + self.n_samples


@dataclass(frozen=True)
class Gap:
    """Time with no recording between two segments.

    Attributes
    ----------
    sample : int
        The first sample after the gap, on the deployment's sample axis.
    length_s : float
        How long nothing was recorded.
    start : datetime
        When the gap starts (the end of the file before it), UTC.
    before, after : str
        The files before and after it.
    """

    sample: int
    length_s: float
    start: datetime
    before: str
    after: str

    def to_dict(self) -> dict[str, Any]:
        """As a JSON-ready dict."""
        return {"sample": self.sample, "length_s": self.length_s, "start": _iso(self.start),
                "before": self.before, "after": self.after}


@dataclass
class DeploymentIndex:
    """What :func:`index_deployment` found.

    Attributes
    ----------
    source : str
        The folder, glob or list file.
    tz : str
        The zone times without their own were read in.
    files : list of FileEntry
        Every recording found, by start time (those without one last, by name).
    used : list of FileEntry
        The files the deployment's signal is made of, in order.
    segments : list of Segment
    gaps : list of Gap
    problems : list of Problem
        One per reported file, in the order of ``files``.
    ignored : list of str
        Files of the source that are no recordings (by their suffix).
    sample_rate : float
    n_channels : int
    is_complex : bool
    headers_read : int
        Headers read by this call (the others came from the cache).
    """

    source: str
    tz: str
    files: list[FileEntry]
    used: list[FileEntry]
    segments: list[Segment]
    gaps: list[Gap]
    problems: list[Problem]
    ignored: list[str]
    sample_rate: float
    n_channels: int
    is_complex: bool
    headers_read: int = 0
    tolerance_s: float = 1.0
    _offsets: list[int] = field(default_factory=list, repr=False)

    @property
    def n_samples(self) -> int:
        """Samples per channel over all used files."""
        return self.segments[-1].stop_sample if self.segments else 0

    @property
    def start(self) -> datetime:
        """Time of the first sample, UTC."""
        return self.segments[0].start

    @property
    def end(self) -> datetime:
        """Time just after the last sample, UTC."""
        last = self.segments[-1]
        return last.start + timedelta(seconds=last.n_samples / self.sample_rate)

    @property
    def recorded_s(self) -> float:
        """Seconds recorded (gaps not counted)."""
        return self.n_samples / self.sample_rate

    def file_offsets(self) -> list[int]:
        """First sample of each used file on the deployment's axis, and the total last."""
        if not self._offsets:
            out, total = [], 0
            for f in self.used:
                out.append(total)
                total += f.header.n_samples if f.header is not None else 0
            self._offsets = [*out, total]
        return self._offsets

    def summary(self) -> dict[str, Any]:
        """The index as a JSON-ready dict (what ``specscope index --json`` prints)."""
        kinds = Counter(p.kind for p in self.problems)
        return {
            "source": self.source, "tz": self.tz,
            "start": _iso(self.start), "end": _iso(self.end),
            "span_s": (self.end - self.start).total_seconds(),
            "recorded_s": self.recorded_s,
            "gap_s": sum(g.length_s for g in self.gaps),
            "sample_rate": self.sample_rate, "n_channels": self.n_channels,
            "is_complex": self.is_complex, "n_samples": self.n_samples,
            "n_files": len(self.files), "n_used": len(self.used),
            "n_ignored": len(self.ignored), "headers_read": self.headers_read,
            "problem_counts": dict(sorted(kinds.items())),
            "files": [f.to_dict() for f in self.files],
            "gaps": [g.to_dict() for g in self.gaps],
            "overlaps": [p.to_dict() for p in self.problems if p.kind == "overlap"],
            "mismatches": [p.to_dict() for p in self.problems if p.kind == "mismatch"],
            "problems": [p.to_dict() for p in self.problems],
        }


def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else iso_time(dt)


# -- finding the files ---------------------------------------------------------------


_DIGITS = re.compile(r"\d+")
_SPLIT = re.compile(r"(\d+)")


def _natural(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t.lower() for t in _SPLIT.split(name)]


def _walk(folder: Path) -> tuple[list[Path], list[str]]:
    found, ignored = [], []
    stack = [folder]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError as exc:
            raise RecordingError(f"{d}: cannot list the folder "
                                 f"({exc.strerror or type(exc).__name__})") from None
        for e in entries:
            if e.name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(Path(e.path))
                    continue
            except OSError:
                pass
            _sort_in(Path(e.path), found, ignored)
    return found, ignored


def _sort_in(p: Path, found: list[Path], ignored: list[str]) -> None:
    name = p.name.lower()
    if name.endswith(".sigmf-data"):
        if not p.with_suffix(".sigmf-meta").exists():
            found.append(p)  # reported as unreadable: a data file without its metadata
        return
    suffix = ".sigmf-meta" if name.endswith(".sigmf-meta") else p.suffix.lower()
    (found.append(p) if suffix in RECORDING_SUFFIXES else ignored.append(str(p)))


def _sources(source: Any) -> tuple[str, list[Any], list[str]]:
    """(key, files, ignored) of a folder, glob, list file or list of paths."""
    if isinstance(source, (list, tuple)):
        # absolute: the same files from any working folder (a worker's is elsewhere)
        files = [as_path(s) if is_url(s) else Path(s).absolute() for s in source]
        return "list:" + "\n".join(str(f) for f in files), files, []
    text = os.fspath(source)
    p = Path(text)
    if p.is_dir():
        found, ignored = _walk(p.resolve())
        return str(p.resolve()), found, ignored
    if p.is_file() and p.suffix.lower() in LIST_SUFFIXES:
        return "listfile:" + str(p.resolve()), _list_file(p), []
    if _GLOB_CHARS.search(text) and not p.exists():
        found, ignored = [], []
        for m in sorted(globmod.glob(text, recursive=True)):
            if Path(m).is_file():
                _sort_in(Path(m).absolute(), found, ignored)
        return "glob:" + str(Path(text).absolute()), found, ignored
    if p.is_file():
        raise DeploymentError(text, f"{text}: is a file, not a folder, glob or list of "
                                    f"recordings (a list file ends in .txt, .lst or .list)")
    raise DeploymentError(text, f"{text}: no such folder")


def _list_file(p: Path) -> list[Any]:
    if p.stat().st_size > 64 << 20:
        raise DeploymentError(str(p), f"{p}: a list of recordings larger than 64 MB")
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise DeploymentError(str(p), f"{p}: the list of recordings is not UTF-8 text") from None
    out: list[Any] = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if is_url(line):
            out.append(as_path(line))
        else:
            q = Path(line)
            out.append(q if q.is_absolute() else p.parent.absolute() / q)
    return out


# -- the header cache ----------------------------------------------------------------


def _cache_path(key: str) -> Path:
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return cache_dir("deployments", f"{digest}.json")


def _load_cache(path: Path) -> dict[str, list[Any]]:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("version") != _CACHE_VERSION:
        return {}
    files = doc.get("files")
    return files if isinstance(files, dict) else {}


def _save_cache(path: Path, key: str, files: dict[str, list[Any]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path) as tmp:
            tmp.write_text(json.dumps({"version": _CACHE_VERSION, "source": key,
                                       "files": files}, separators=(",", ":")))
    except (OSError, SpecscopeError):
        pass  # a cache that cannot be written costs time only


def _cached(row: Any, size: int, mtime_ns: int) -> tuple[Header | None, str] | None:
    """The cached (header, error) of a file not changed since; ``None`` when stale."""
    try:
        if row[0] != size or row[1] != mtime_ns:
            return None
        return (None if row[2] is None else Header.from_dict(row[2])), str(row[3] or "")
    except (TypeError, KeyError, ValueError, IndexError):
        return None


# -- the index -------------------------------------------------------------------------


def index_deployment(source: Any, *, name_pattern: str | None = None, tz: str = "UTC",
                     cache: bool = True, tolerance_s: float = 1.0,
                     progress: Callable[[float], None] | None = None,
                     cancelled: Callable[[], bool] | None = None) -> DeploymentIndex:
    """Index a deployment: a folder, a glob, a list file or a list of paths.

    Parameters
    ----------
    source : str, PathLike or list
        A folder (walked), a glob (``"site3/**/*.wav"``), a list file (``.txt``, ``.lst``,
        ``.list``: one path or URL a line) or a list of paths.
    name_pattern : str, optional
        How names state start times, with strftime fields (``"S3_%Y%m%d_%H%M%S"``);
        tried before the built-in name forms, for files whose metadata gives no time.
    tz : str
        Zone of times that state none (names, BWF ``bext``): ``"UTC"``, ``"+02:00"``,
        an IANA name.
    cache : bool
        Read and update the header cache in the user cache folder.
    tolerance_s : float
        A file starting within this of the previous one's end continues it.
    progress : callable, optional
        ``progress(fraction)`` as files are looked at.
    cancelled : callable, optional
        Polled between files; True stops the indexing (the cache keeps what was read).

    Returns
    -------
    DeploymentIndex

    Raises
    ------
    DeploymentError
        No recordings, or none that can be used; one line.
    Cancelled
        ``cancelled()`` said so.
    BadOption
        ``tz`` or ``name_pattern`` cannot be used.
    """
    zone = parse_zone(tz)
    pattern = compile_pattern(name_pattern)
    key, paths, ignored = _sources(source)
    if not paths:
        raise DeploymentError(key, f"{_shown_key(key)}: no recordings ({len(ignored)} other file(s); recordings "
                                   f"end in .wav, .flac, .sigmf-meta, .h5 ...)")
    cpath = _cache_path(key)
    old = _load_cache(cpath) if cache else {}
    new: dict[str, list[Any]] = {}
    entries: list[FileEntry] = []
    problems: dict[str, Problem] = {}
    read = 0
    for i, p in enumerate(paths):
        if i % 32 == 0:
            if cancelled is not None and cancelled():
                if cache and read:
                    _save_cache(cpath, key, {**old, **new})
                raise Cancelled()
            if progress is not None:
                progress(i / len(paths))
        name = str(p)
        url = is_url(p)
        size = mtime = -1
        if not url:
            try:
                st = os.stat(p)
                size, mtime = int(st.st_size), int(st.st_mtime_ns)
            except OSError as exc:
                problems[name] = Problem(name, "unreadable",
                                         f"{name}: cannot be read ({exc.strerror or exc})")
                entries.append(FileEntry(p, -1, -1, None, None, ""))
                continue
        row = None if url else old.get(name)
        hit = None if row is None else _cached(row, size, mtime)
        if hit is None:
            row = None
            read += 1
            try:
                header, error = read_header(p), ""
            except SpecscopeError as exc:
                header, error = None, str(exc)
            except (OSError, ValueError, struct.error, UnicodeError) as exc:
                header, error = None, f"{name}: cannot be read ({type(exc).__name__})"
        else:
            header, error = hit
        if not url:
            new[name] = row if row is not None else [
                size, mtime, None if header is None else header.to_dict(), error]
        if header is None:
            problems[name] = Problem(name, "unreadable", error)
            entries.append(FileEntry(p, size, mtime, None, None, ""))
            continue
        start, source_word = _start_of(p, header, zone, pattern)
        if start is None:
            problems[name] = Problem(name, "no_time", f"{name}: no start time ({source_word})")
        entries.append(FileEntry(p, size, mtime, header, start, source_word if start else ""))
    if cache and (read or set(new) != set(old)):
        _save_cache(cpath, key, new)
    return _assemble(key, str(tz), entries, problems, ignored, read, float(tolerance_s))



def _start_of(p: Any, header: Header, zone: Any,
              pattern: CompiledPattern | None) -> tuple[datetime | None, str]:
    stated = stated_time(header)
    if stated is not None:
        return aware(stated, zone), header.time_source
    found = name_time(p.name, pattern)
    if found is not None:
        return aware(found.time, zone), f"name {found.form}"
    bad = f"; its {describe_time(header)} is no time" if header.time else ""
    return None, (f"its metadata states none{bad}, and its name matches none of: "
                  f"{tried_forms(pattern)}")


def _assemble(key: str, tz: str, entries: list[FileEntry], problems: dict[str, Problem],
              ignored: list[str], read: int, tol: float) -> DeploymentIndex:
    timed = [e for e in entries if e.start is not None and e.header is not None]
    if not timed:
        first = next(iter(problems.values())).message if problems else ""
        raise DeploymentError(key, f"{_shown_key(key)}: none of the {len(entries)} "
                                   f"recording(s) can be used ({first})", list(problems.values()))
    timed.sort(key=lambda e: (e.start, str(e.path)))
    kinds = Counter((e.header.sample_rate, e.header.n_channels, e.header.is_complex)
                    for e in timed)
    # the most files; a tie goes to the kind of the earliest file
    order = {k: i for i, k in reversed(list(enumerate(
        (e.header.sample_rate, e.header.n_channels, e.header.is_complex) for e in timed)))}
    rate, chans, cplx = max(kinds, key=lambda k: (kinds[k], -order[k]))
    _clock_back(timed, problems, tol)
    used: list[FileEntry] = []
    segments: list[Segment] = []
    gaps: list[Gap] = []
    total = 0
    seg_start = seg_first = 0
    for e in timed:
        h = e.header
        name = str(e.path)
        if (h.sample_rate, h.n_channels, h.is_complex) != (rate, chans, cplx):
            problems[name] = Problem(name, "mismatch", (
                f"{name}: {_kind(h.sample_rate, h.n_channels, h.is_complex)} where the "
                f"deployment has {_kind(rate, chans, cplx)}; left out, never resampled"))
            continue
        if h.n_samples == 0:
            problems[name] = Problem(name, "unreadable", f"{name}: holds no samples; left out")
            continue
        if used:
            prev = used[-1]
            delta = (e.start - prev.end).total_seconds()
            same_start = abs((e.start - prev.start).total_seconds()) <= min(
                tol, prev.duration_s / 2)
            if delta < -tol and same_start and h.n_samples == prev.header.n_samples:
                problems[name] = Problem(name, "duplicate", (
                    f"{name}: repeats {prev.path} (same start {_iso(e.start)} and length); "
                    "left out"))
                continue
            if delta < -tol:
                problems[name] = Problem(name, "overlap", (
                    f"{name}: starts {-delta:.3f} s before the end of {prev.path} "
                    f"({_iso(e.start)} < {_iso(prev.end)}); left out, never merged"))
                continue
            if delta > tol:
                segments.append(Segment(seg_start, total - seg_start, used[seg_first].start,
                                        seg_first, len(used) - seg_first))
                gaps.append(Gap(total, delta, prev.end, str(prev.path), name))
                seg_start, seg_first = total, len(used)
        used.append(e)
        total += h.n_samples
    if not used:
        first = next(iter(problems.values())).message
        raise DeploymentError(key, f"{_shown_key(key)}: none of the recordings can be used "
                                   f"({first})", list(problems.values()))
    segments.append(Segment(seg_start, total - seg_start, used[seg_first].start, seg_first,
                            len(used) - seg_first))
    untimed = sorted((e for e in entries if e.start is None or e.header is None),
                     key=lambda e: _natural(str(e.path)))
    files = timed + untimed
    ordered = [problems[str(e.path)] for e in files if str(e.path) in problems]
    return DeploymentIndex(key, tz, files, used, segments, gaps, ordered, ignored, rate,
                           chans, cplx, read, tol)


def _clock_back(timed: list[FileEntry], problems: dict[str, Problem], tol: float) -> None:
    """Report files whose metadata clock reads earlier than a file numbered before them."""
    groups: dict[tuple[str, str], list[tuple[list[Any], FileEntry]]] = {}
    for e in timed:
        if e.time_source.startswith("name"):
            continue
        text = str(e.path)
        head, _, name = text.rpartition(os.sep)
        groups.setdefault((head, _DIGITS.sub("#", name)), []).append((_natural(name), e))
    for group in groups.values():
        group.sort(key=lambda pair: pair[0])
        for (_, a), (_, b) in itertools.pairwise(group):
            back = (a.start - b.start).total_seconds()
            if back > tol:
                name = str(b.path)
                problems.setdefault(name, Problem(name, "clock_back", (
                    f"{name}: its clock reads {back:.3f} s before that of {a.path.name}, "
                    f"which is numbered before it; placed by its clock")))


def _kind(rate: float, chans: int, cplx: bool) -> str:
    return f"{rate:g} Hz, {chans} channel(s){', complex' if cplx else ''}"


def _shown_key(key: str) -> str:
    if key.startswith("list:"):
        return "the list of recordings"
    return key.split(":", 1)[1] if key.startswith(("glob:", "listfile:")) else key


def paths_of(entries: Iterable[FileEntry]) -> list[str]:
    """The paths of entries, as text."""
    return [str(e.path) for e in entries]
