"""SigMF recordings: ``NAME.sigmf-meta`` (JSON) next to ``NAME.sigmf-data`` (samples).

Opening either file opens the pair.  The metadata is validated at open time,
with one-line messages naming the file and the field; problems that do not
stop the samples from being read (annotations past the end, a datatype without
byte order, an unreadable datetime) become :attr:`Recording.warnings`.

The two files are opened together with the folder's publication lock held shared
(:mod:`specscope.compute.publish`), so a pair being replaced is read all old or
all new.  The samples are read through one descriptor (:mod:`.raw`), however many
captures there are.  A pair the exporter wrote records its data's size
(``specscope:data_bytes``): a data file of another size, or of another SHA-512
when it is at most :data:`HASH_CHECK_BYTES` long, is a torn pair
(:class:`TornPairError`).  Otherwise ``core:sha512`` is checked only on request
(:meth:`SigMFRecording.verify_checksum`) because it reads the whole file.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from .. import jsonsafe
from ..annotations import Annotation
from ..annotations.sigmf_meta import annotation_of_segment
from ..errors import Cancelled, InputError, MissingOption, RecordingError, shown
from ..params import parse_number
from ..publish import reading_together
from .base import Recording, SteadyFile, file_problem, register_reader
from .raw import SampleMap, open_steady, parse_sample_type
from .remote import UrlPath, as_path, open_binary

META = ".sigmf-meta"
DATA = ".sigmf-data"
#: largest metadata file read (annotations make them long, never this long)
MAX_META_BYTES = 64 << 20


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _iso(value: Any) -> str | None:
    """An ISO 8601 string, or None when it does not parse."""
    if not isinstance(value, str):
        return None
    try:
        datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return None
    return value


class SigMFRecording(Recording):
    """A SigMF dataset.

    Parameters
    ----------
    path : path-like
        The ``.sigmf-meta`` or the ``.sigmf-data`` file.
    sample_rate : float or str, optional
        Used when ``core:sample_rate`` is missing; overrides it when present.
    center_frequency : float or str, optional
        Used when the first capture has no ``core:frequency``; overrides it
        when present.
    """

    units = "FS"

    def __init__(self, path: str | os.PathLike[str], *,
                 sample_rate: float | str | None = None,
                 center_frequency: float | str | None = None) -> None:
        given = as_path(path)
        meta_path, data_path = _pair(given)
        super().__init__(data_path)
        self.meta_path = meta_path
        doc, data_path, file = _open_pair(meta_path, data_path)
        self.path = data_path
        try:
            self._describe(doc, meta_path, data_path, file, sample_rate, center_frequency)
        except BaseException:
            if file is not None:
                file.close()
            raise

    def _describe(self, doc: dict[str, Any], meta_path: Path, data_path: Path,
                  file: SteadyFile | None, sample_rate: float | str | None,
                  center_frequency: float | str | None) -> None:
        """Check the metadata and lay the captures out in the data file open as ``file``."""
        m = str(meta_path)
        glob = doc["global"]
        captures = doc.get("captures", [])
        annotations = doc.get("annotations", [])
        if not isinstance(captures, list):
            raise RecordingError(f"{m}: \"captures\" must be a list")
        if not isinstance(annotations, list):
            raise RecordingError(f"{m}: \"annotations\" must be a list")
        if "captures" not in doc:
            self.warnings.append("no \"captures\" list (required by SigMF)")
        if "core:version" not in glob:
            self.warnings.append("global has no core:version (required by SigMF)")

        # sample type and channels
        datatype = glob.get("core:datatype")
        if datatype is None:
            raise RecordingError(f"{m}: global core:datatype is missing (e.g. \"cf32_le\")")
        if not isinstance(datatype, str):
            raise RecordingError(f"{m}: core:datatype={shown(datatype)} must be a string")
        try:
            stype, explicit = parse_sample_type(datatype, what="core:datatype", where=m)
        except InputError as exc:
            raise RecordingError(str(exc)) from None
        if not explicit and stype.component.itemsize > 1:
            self.warnings.append(f"core:datatype {shown(datatype)} gives no byte order "
                                 "(_le/_be); read as little-endian")
        n_channels = glob.get("core:num_channels", 1)
        if not _is_int(n_channels) or n_channels < 1:
            raise RecordingError(f"{m}: core:num_channels={shown(n_channels)} must be a whole "
                                 "number >= 1")

        # sample rate: the option overrides the file
        fs = glob.get("core:sample_rate")
        if sample_rate is not None:
            self.sample_rate = parse_number(sample_rate, "sample_rate", positive=True,
                                            where=m)
            self.metadata["sample_rate_source"] = "option"
        elif fs is None:
            raise MissingOption("sample_rate", "global core:sample_rate is missing", path=m)
        elif not _is_number(fs) or fs <= 0:
            raise RecordingError(f"{m}: core:sample_rate={shown(fs)} must be a number > 0")
        else:
            self.sample_rate = float(fs)
            self.metadata["sample_rate_source"] = "core:sample_rate"

        # captures: sorted, non-negative starts, header bytes
        starts: list[int] = []
        headers: list[int] = []
        for i, cap in enumerate(captures):
            if not isinstance(cap, dict):
                raise RecordingError(f"{m}: captures[{i}] must be an object")
            s = cap.get("core:sample_start", 0 if i == 0 else None)
            if not _is_int(s) or s < 0:
                raise RecordingError(f"{m}: captures[{i}] core:sample_start={shown(s)} must be a "
                                     "whole number >= 0")
            # equal starts are allowed (the spec asks only for order): the earlier
            # capture then holds no samples, only its header bytes
            if starts and s < starts[-1]:
                raise RecordingError(f"{m}: captures are not sorted by core:sample_start "
                                     f"(captures[{i}] starts at {s}, the one before at "
                                     f"{starts[-1]})")
            h = cap.get("core:header_bytes", 0)
            if not _is_int(h) or h < 0:
                raise RecordingError(f"{m}: captures[{i}] core:header_bytes={shown(h)} must be "
                                     "a whole number >= 0")
            f = cap.get("core:frequency")
            if f is not None and not _is_number(f):
                raise RecordingError(f"{m}: captures[{i}] core:frequency={shown(f)} must be a "
                                     "number (Hz)")
            starts.append(s)
            headers.append(h)
        if not starts:
            starts, headers = [0], [0]
        if starts[0] != 0:
            # samples before the first capture have no capture metadata; still readable
            starts.insert(0, 0)
            headers.insert(0, 0)
        trailing = glob.get("core:trailing_bytes", 0)
        if not _is_int(trailing) or trailing < 0:
            raise RecordingError(f"{m}: core:trailing_bytes={shown(trailing)} must be a whole "
                                 "number >= 0")

        # lay the captures out in the data file, as big as it was when opened
        size = data_path.stat().st_size if file is None else file.size
        if file is not None:
            _check_pair(meta_path, glob, file)
        frame = stype.itemsize * n_channels
        body = size - trailing - sum(headers)
        if body < 0:
            raise RecordingError(f"{data_path}: {size} bytes is shorter than the header and "
                                 f"trailing bytes the metadata declares ({sum(headers)} + "
                                 f"{trailing})")
        if body % frame:
            raise RecordingError(
                f"{data_path}: {body} bytes of samples is not a multiple of {frame} bytes "
                f"({stype.name}, {n_channels} channel(s)); truncated file or wrong "
                "core:datatype / core:num_channels")
        n_samples = body // frame
        if n_samples == 0:
            raise RecordingError(f"{data_path}: holds no samples")
        if starts[-1] >= n_samples and len(starts) > 1:
            raise RecordingError(f"{m}: a capture starts at sample {starts[-1]}, past the "
                                 f"end of the data ({n_samples} samples)")
        segments = []
        byte = 0
        for i, (s, h) in enumerate(zip(starts, headers, strict=True)):
            end = starts[i + 1] if i + 1 < len(starts) else n_samples
            byte += h
            if end > s:
                segments.append((s, end - s, byte))
            byte += (end - s) * frame

        self._map = SampleMap(data_path, stype, n_channels, segments, file)
        self.sample_type = stype
        self.n_samples = n_samples
        self.n_channels = n_channels
        self.is_complex = stype.is_complex
        self.format = f"SigMF {stype.name}"

        # centre frequency and start time from the first capture
        first = captures[0] if captures else {}
        if center_frequency is not None:
            self.center_frequency = parse_number(center_frequency, "center_frequency",
                                                 where=m)
        elif first.get("core:frequency") is not None:
            self.center_frequency = float(first["core:frequency"])
        freqs = {c.get("core:frequency") for c in captures if "core:frequency" in c}
        if len(freqs) > 1:
            self.warnings.append("the centre frequency changes between captures; "
                                 "the first capture's is shown")
        dt = first.get("core:datetime")
        if dt is not None:
            self.start_time = _iso(dt)
            if self.start_time is None:
                self.warnings.append(f"captures[0] core:datetime={shown(dt)} is not ISO 8601")
            elif first.get("core:sample_start", 0):
                self.warnings.append("captures[0] does not start at sample 0; start_time is "
                                     "the time of its first sample")

        self.annotations = self._annotations(annotations, m)
        self.metadata.update({
            "datatype": stype.name, "meta_path": str(meta_path), "data_path": str(data_path),
            "version": glob.get("core:version"), "global": glob, "captures": captures,
            "trailing_bytes": trailing, "header_bytes": sum(headers),
        })
        self.sha512 = glob.get("core:sha512")

    def _annotations(self, raw: list[Any], m: str) -> list[Annotation]:
        """The segments as annotations; a segment that does not fit is mended or skipped
        with a warning (the samples stay readable)."""
        out = []
        for i, a in enumerate(raw):
            if not isinstance(a, dict):
                self.warnings.append(f"annotations[{i}] is not an object; ignored")
                continue
            seg = dict(a)
            start = seg.get("core:sample_start")
            count = seg.get("core:sample_count")
            if not _is_int(start) or start < 0:
                self.warnings.append(f"annotations[{i}] core:sample_start={shown(start)} is not a "
                                     "whole number >= 0; ignored")
                continue
            if count is not None and (not _is_int(count) or count < 0):
                self.warnings.append(f"annotations[{i}] core:sample_count={shown(count)} is not a "
                                     "whole number >= 0; read as to the end")
                seg.pop("core:sample_count")
                count = None
            if start >= self.n_samples:
                self.warnings.append(f"annotations[{i}] starts at sample {start}, past the "
                                     f"end ({self.n_samples} samples); ignored")
                continue
            if count is not None and start + count > self.n_samples:
                self.warnings.append(f"annotations[{i}] runs past the end; cut at sample "
                                     f"{self.n_samples}")
                seg["core:sample_count"] = self.n_samples - start
            lo, hi = seg.get("core:freq_lower_edge"), seg.get("core:freq_upper_edge")
            if (lo is None) != (hi is None) or not all(
                    v is None or _is_number(v) for v in (lo, hi)):
                self.warnings.append(f"annotations[{i}] has one frequency edge or one that "
                                     "is not a number; read as time only")
                seg.pop("core:freq_lower_edge", None)
                seg.pop("core:freq_upper_edge", None)
            elif lo is not None and lo > hi:
                self.warnings.append(f"annotations[{i}] has freq_lower_edge > "
                                     "freq_upper_edge; swapped")
                seg["core:freq_lower_edge"], seg["core:freq_upper_edge"] = hi, lo
            try:
                out.append(annotation_of_segment(seg, i, self.sample_rate, self.n_samples,
                                                 f"annotations[{i}]"))
            except InputError as exc:
                self.warnings.append(f"{exc}; ignored")
        return out

    def _read(self, start: int, stop: int) -> np.ndarray:
        return self._map.read(start, stop)

    def close(self) -> None:
        self._map.close()

    def verify_checksum(self, *, block: int = 1 << 22,
                        cancelled: Callable[[], bool] | None = None) -> bool | None:
        """Check ``core:sha512`` against the data file (reads the whole file).

        Returns
        -------
        bool or None
            True when it matches, None when the metadata has no checksum.

        Raises
        ------
        RecordingError
            The checksum does not match.
        """
        if not self.sha512:
            return None
        file = self._map.file
        if file is not None:  # the file read, even if another took its name since
            digest = _sha512(file, block, cancelled)
        else:
            h = hashlib.sha512()
            with open_binary(self.path) as fh:
                while chunk := fh.read(block):
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    h.update(chunk)
            digest = h.hexdigest()
        if digest.lower() != str(self.sha512).lower():
            raise RecordingError(f"{self.path}: SHA-512 does not match core:sha512 in "
                                 f"{self.meta_path.name}; the data file changed or is damaged")
        return True


def _pair(path: Path) -> tuple[Path, Path]:
    name = path.name
    lower = name.lower()
    if lower.endswith((META, DATA)):
        base = name[: -len(META)]
    elif lower.endswith(".sigmf"):
        raise RecordingError(f"{path}: SigMF archives (.sigmf) are not supported yet; "
                             "extract it (tar -xf) and open the .sigmf-meta file")
    else:
        base = path.stem
    meta, data = path.with_name(base + META), path.with_name(base + DATA)
    if not meta.is_file():
        problem = (file_problem(meta) or "is not a regular file").replace("no such file",
                                                                          "is missing")
        raise RecordingError(f"{path}: the SigMF metadata file {meta.name} {problem}")
    return meta, data


def _open_pair(meta_path: Path, data_path: Path) -> tuple[dict[str, Any], Path,
                                                         SteadyFile | None]:
    """The metadata and the data file it names, opened together.

    Both are opened with the folder's publication lock held shared
    (:func:`~specscope.compute.publish.reading_together`), so a pair being replaced
    is read all old or all new.

    Returns
    -------
    (dict, Path, SteadyFile or None)
        The metadata document, the data file and its open descriptor (None for a URL).
    """
    local = not isinstance(meta_path, UrlPath)
    with reading_together(meta_path.parent) if local else contextlib.nullcontext():
        doc = _load_json(meta_path)
        m = str(meta_path)
        glob = doc.get("global")
        if not isinstance(glob, dict):
            raise RecordingError(f"{m}: has no \"global\" object; not SigMF metadata")
        if glob.get("core:metadata_only"):
            raise RecordingError(f"{m}: is metadata only (core:metadata_only); "
                                 "it has no samples to show")
        dataset_name = glob.get("core:dataset")
        if dataset_name is not None:
            # a non-conforming dataset: the samples live in another file next to this one
            if (not isinstance(dataset_name, str) or not dataset_name
                    or Path(dataset_name).name != dataset_name):
                raise RecordingError(f"{m}: core:dataset={shown(dataset_name)} must be a file "
                                     "name in the same folder")
            data_path = meta_path.parent / dataset_name
        if not data_path.is_file():
            problem = (file_problem(data_path) or "is not a regular file").replace(
                "no such file", "is missing")
            raise RecordingError(f"{m}: the data file {data_path.name} {problem}")
        return doc, data_path, open_steady(data_path)


class TornPairError(RecordingError):
    """A SigMF metadata file describes other data than the data file next to it holds.

    What the exporter records (``specscope:data_bytes`` and ``core:sha512``) is
    compared with the data file when it is opened: the sizes always, the SHA-512
    when the sizes agree and the file is at most :data:`HASH_CHECK_BYTES` long.

    Attributes
    ----------
    meta, data : str
        The two files.
    recorded_bytes, data_bytes : int
        The size the metadata records and the data file's size.
    recorded_sha512, data_sha512 : str or None
        The SHA-512 the metadata records, and the data file's (None when not computed:
        the file is longer than :data:`HASH_CHECK_BYTES`).
    """

    def __init__(self, meta: str | os.PathLike[str], data: str | os.PathLike[str],
                 recorded_bytes: int, data_bytes: int, recorded_sha512: str | None,
                 data_sha512: str | None) -> None:
        self.meta, self.data = str(meta), str(data)
        self.recorded_bytes, self.data_bytes = int(recorded_bytes), int(data_bytes)
        self.recorded_sha512, self.data_sha512 = recorded_sha512, data_sha512

        def digest(h: str | None) -> str:
            return f"SHA-512 {h[:16]}..." if h else "SHA-512 not computed"

        super().__init__(
            f"{meta} and {Path(data).name} are halves of two writes (a torn pair): the "
            f"metadata records {recorded_bytes} bytes, {digest(recorded_sha512)}; the data "
            f"file has {data_bytes} bytes, {digest(data_sha512)}")

    def __reduce__(self) -> tuple[Any, ...]:
        # errors of batch tasks cross processes
        return (type(self), (self.meta, self.data, self.recorded_bytes, self.data_bytes,
                             self.recorded_sha512, self.data_sha512))


#: data files up to this size are hashed at open to check a pair the exporter wrote;
#: larger ones are checked by size only (their SHA-512 on request, ``verify_checksum``)
HASH_CHECK_BYTES = 32 << 20


def _sha512(file: SteadyFile, block: int = 1 << 22,
            cancelled: Callable[[], bool] | None = None) -> str:
    """SHA-512 (hex) of the file up to its size at open."""
    h = hashlib.sha512()
    buf = bytearray(block)
    view = memoryview(buf)
    for at in range(0, file.size, block):
        if cancelled is not None and cancelled():
            raise Cancelled()
        n = min(block, file.size - at)
        file.read_into(view[:n], at)
        h.update(view[:n])
    return h.hexdigest()


def _check_pair(meta_path: Path, glob: dict[str, Any], file: SteadyFile) -> None:
    """Raise :class:`TornPairError` when the metadata records other data than ``file`` holds.

    Only metadata that records the data's size (``specscope:data_bytes``, written by
    the exporter) is checked; other SigMF files keep their checksum for
    :meth:`SigMFRecording.verify_checksum`.
    """
    recorded = glob.get("specscope:data_bytes")
    if not _is_int(recorded):
        return
    sha = glob.get("core:sha512")
    sha = sha.strip().lower() if isinstance(sha, str) and sha.strip() else None
    actual = _sha512(file) if file.size <= HASH_CHECK_BYTES else None
    if recorded != file.size or (sha is not None and actual is not None and actual != sha):
        raise TornPairError(meta_path, file.path, recorded, file.size, sha, actual)


def _load_json(meta: Path) -> dict[str, Any]:
    doc = jsonsafe.load_file(meta, what="SigMF metadata file (JSON)", max_bytes=MAX_META_BYTES,
                             error=RecordingError)
    if not isinstance(doc, dict):
        raise RecordingError(f"{meta}: the top level must be a JSON object with "
                             "\"global\", \"captures\" and \"annotations\"")
    return doc


def open_sigmf(path: str | os.PathLike[str], *, sample_rate: float | str | None = None,
               center_frequency: float | str | None = None) -> SigMFRecording:
    """Open a SigMF dataset; see :class:`SigMFRecording`."""
    return SigMFRecording(path, sample_rate=sample_rate, center_frequency=center_frequency)


register_reader("sigmf", (META, DATA), open_sigmf, priority=30,
                description="SigMF (.sigmf-meta + .sigmf-data)")
