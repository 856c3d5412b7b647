"""Annotations in SigMF metadata: the ``annotations`` array of a ``.sigmf-meta`` file.

Segments are converted between samples and seconds with the recording's sample
rate (or the meta's own); a round trip is exact to the sample.  Writing into an
existing meta replaces only its ``annotations`` array; a new path gets a minimal meta.

See docs/explanation/rooms/annotations.md.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..errors import InputError, RecordingError, shown
from ..files import atomic_write_text
from ..publish import updating_together
from ..timefmt import time_to_sample
from .common import MAX_TEXT_BYTES, Timebase, read_text
from .model import Annotation, stable_uuid

__all__ = ["CHANNEL_KEY", "SIGMF_VERSION", "TIER_KEY", "annotation_objects", "annotation_of_segment",
           "declare_extension",
           "meta_path", "put_annotations", "read_sigmf", "write_sigmf"]

META = ".sigmf-meta"
DATA = ".sigmf-data"
#: the SigMF version written into new meta files
SIGMF_VERSION = "1.2.0"
#: the key holding :attr:`Annotation.channel` (SigMF has no core key for it)
CHANNEL_KEY = "specscope:channel"
#: the key holding :attr:`Annotation.tier`
TIER_KEY = "specscope:tier"
CORE_KEYS = ("core:sample_start", "core:sample_count", "core:freq_lower_edge",
             "core:freq_upper_edge", "core:label", "core:comment", "core:generator",
             "core:uuid")
_EXTENSION = {"name": "specscope", "version": "1.0.0", "optional": True}


def meta_path(path: str | Path) -> Path:
    """The ``.sigmf-meta`` of a SigMF pair (a ``.sigmf-data`` path names its meta).

    Parameters
    ----------
    path : str or Path
        A ``.sigmf-meta`` or ``.sigmf-data`` path; any other path is returned as it is.

    Returns
    -------
    Path
        The meta file's path.

    Examples
    --------
    >>> meta_path("capture.sigmf-data").name
    'capture.sigmf-meta'
    """
    p = Path(path)
    if p.name.lower().endswith(DATA):
        return p.with_name(p.name[: -len(DATA)] + META)
    return p


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _load(path: Path) -> tuple[dict[str, Any], str]:
    text = read_text(path)
    doc = jsonsafe.loads(text, str(path), what="SigMF metadata file (JSON)",
                         max_bytes=MAX_TEXT_BYTES, error=RecordingError)
    if not isinstance(doc, dict) or not isinstance(doc.get("global"), dict):
        raise RecordingError(f"{path}: not SigMF metadata (the top level must be an object "
                             "with a \"global\" object)")
    return doc, text


def _sample_rate(path: Path, doc: dict[str, Any], timebase: Timebase) -> float:
    if timebase.sample_rate:
        return timebase.sample_rate
    fs = doc["global"].get("core:sample_rate")
    if fs is None:
        raise InputError(f"{path}: global core:sample_rate is missing; give the recording "
                         "(or its sample rate) to convert samples to seconds")
    if not _is_number(fs) or fs <= 0:
        raise RecordingError(f"{path}: global core:sample_rate={shown(fs)} must be a number > 0")
    return float(fs)


def _length(where: str, timebase: Timebase) -> int:
    """The recording's length in samples, for segments without ``core:sample_count``."""
    if timebase.n_samples is None:
        # the length is the data file's; the caller opens the recording (io reads this package)
        raise InputError(f"{where}: core:sample_count is missing (to the end of the "
                         "recording) and the recording's length is unknown; give recording=")
    return timebase.n_samples


def read_sigmf(path: str | Path, timebase: Timebase | None = None) -> list[Annotation]:
    """The annotations of a SigMF meta file, in file order.

    Parameters
    ----------
    path : str or Path
        The ``.sigmf-meta`` (or its ``.sigmf-data``).
    timebase : Timebase, optional
        The recording's; its sample rate takes precedence over the meta's.

    Returns
    -------
    list of Annotation
        One per segment; times in seconds from the first sample.

    Raises
    ------
    RecordingError
        The file is not SigMF metadata or has no ``annotations`` list.
    InputError
        An annotation segment is invalid; the message names its index and key.
    """
    path = meta_path(path)
    timebase = timebase or Timebase()
    doc, _ = _load(path)
    raw = doc.get("annotations")
    if not isinstance(raw, list):
        what = "has no \"annotations\" list" if raw is None else "\"annotations\" is not a list"
        raise RecordingError(f"{path}: {what} (SigMF requires one, maybe empty)")
    fs = _sample_rate(path, doc, timebase)
    return [annotation_of_segment(obj, i, fs, timebase.n_samples, f"{path}: annotations[{i}]")
            for i, obj in enumerate(raw)]


def annotation_of_segment(obj: Any, index: int, sample_rate: float,
                          n_samples: int | None = None, where: str = "") -> Annotation:
    """One SigMF annotation segment as an :class:`Annotation`.

    Parameters
    ----------
    obj : dict
        The segment (``core:sample_start``, ...).
    index : int
        Its position in the ``annotations`` array (part of the uuid given to
        a segment without ``core:uuid``).
    sample_rate : float
        Samples per second.
    n_samples : int, optional
        The recording's length, for a segment without ``core:sample_count``.
    where : str
        Names the segment in error messages.

    Returns
    -------
    Annotation
        Times ``sample_start / sample_rate`` and ``(sample_start + sample_count) /
        sample_rate`` seconds; keys of other namespaces in ``extra``.

    Raises
    ------
    InputError
        The segment is invalid; the message names ``where`` and the key.
    """
    where = where or f"annotations[{index}]"
    if not isinstance(obj, dict):
        raise InputError(f"{where}: must be an object, got {type(obj).__name__}")
    start = obj.get("core:sample_start")
    if not _is_int(start) or start < 0:
        raise InputError(f"{where}: core:sample_start={shown(start)} must be a whole number >= 0")
    count = obj.get("core:sample_count")
    if count is None:
        count = max(0, _length(where, Timebase(n_samples=n_samples)) - start)
    elif not _is_int(count) or count < 0:
        raise InputError(f"{where}: core:sample_count={shown(count)} must be a whole number >= 0")
    lo, hi = obj.get("core:freq_lower_edge"), obj.get("core:freq_upper_edge")
    for key, v in (("core:freq_lower_edge", lo), ("core:freq_upper_edge", hi)):
        if v is not None and not _is_number(v):
            raise InputError(f"{where}: {key}={shown(v)} must be a number (Hz)")
    texts = {}
    for key in ("core:label", "core:comment", "core:generator", "core:uuid"):
        v = obj.get(key)
        if v is not None and not isinstance(v, str):
            raise InputError(f"{where}: {key}={shown(v)} must be a string")
        texts[key] = v
    channel = obj.get(CHANNEL_KEY)
    if channel is not None and (not _is_int(channel) or channel < 0):
        raise InputError(f"{where}: {CHANNEL_KEY}={shown(channel)} must be a whole number >= 0")
    tier = obj.get(TIER_KEY)
    if tier is not None and not isinstance(tier, str):
        raise InputError(f"{where}: {TIER_KEY}={shown(tier)} must be a string")
    uid = texts["core:uuid"] or stable_uuid("sigmf", index, start, count, lo, hi,
                                            texts["core:label"])
    extra = {k: v for k, v in obj.items() if k not in CORE_KEYS
             and k not in (CHANNEL_KEY, TIER_KEY)}
    try:
        return Annotation(
            start / sample_rate, (start + count) / sample_rate,
            None if lo is None else float(lo), None if hi is None else float(hi),
            label=texts["core:label"] or "", comment=texts["core:comment"] or "",
            uuid=uid, generator=texts["core:generator"] or "", channel=channel,
            tier=tier, extra=extra)
    except InputError as exc:
        raise InputError(f"{where}: {str(exc).removeprefix('Annotation: ')}") from None


def _to_sample(seconds: float, fs: float) -> int:
    return time_to_sample(seconds, fs, "annotation time")


def annotation_objects(annotations: Sequence[Annotation], sample_rate: float
                       ) -> list[dict[str, Any]]:
    """SigMF annotation segments, sorted by ``core:sample_start``.

    Parameters
    ----------
    annotations : sequence of Annotation
        Times in seconds from the first sample.
    sample_rate : float
        Samples per second of the recording.

    Returns
    -------
    list of dict
        One segment per annotation; times rounded to the nearest sample.

    Raises
    ------
    InputError
        An item is not an :class:`Annotation`.
    """
    rows = []
    for a in annotations:
        if not isinstance(a, Annotation):
            raise InputError(f"expected Annotation objects, got {type(a).__name__}")
        start = _to_sample(a.start_s, sample_rate)
        obj: dict[str, Any] = {"core:sample_start": start,
                               "core:sample_count": max(0, _to_sample(a.stop_s, sample_rate)
                                                        - start)}
        if a.freq_low_hz is not None:
            obj["core:freq_lower_edge"] = a.freq_low_hz
            obj["core:freq_upper_edge"] = a.freq_high_hz
        for key, value in (("core:label", a.label), ("core:comment", a.comment),
                           ("core:generator", a.generator)):
            if value:
                obj[key] = value
        obj["core:uuid"] = a.uuid
        if a.channel is not None:
            obj[CHANNEL_KEY] = a.channel
        if a.tier is not None:
            obj[TIER_KEY] = a.tier
        for key, value in a.extra.items():
            # keys of other SigMF namespaces go back; table columns (no namespace) do not
            if ":" in str(key) and key not in obj and key not in CORE_KEYS:
                obj[str(key)] = value
        rows.append(obj)
    rows.sort(key=lambda o: o["core:sample_start"])  # stable: equal starts keep their order
    return rows


def put_annotations(doc: dict[str, Any], annotations: Sequence[Annotation],
                    sample_rate: float, *, declare: bool = True) -> dict[str, Any]:
    """Set the ``annotations`` array of a SigMF metadata document (in place).

    Parameters
    ----------
    doc : dict
        The metadata document.
    annotations : sequence of Annotation
        The annotations; times in seconds.
    sample_rate : float
        Samples per second of its samples.
    declare : bool
        When a segment carries a channel (``specscope:channel``), declare the
        ``specscope`` extension in ``global`` ``core:extensions``, as SigMF
        asks of every namespace used.  Off to leave ``global`` untouched.

    Returns
    -------
    dict
        ``doc``.
    """
    objects = annotation_objects(annotations, sample_rate)
    doc["annotations"] = objects
    if declare and any(CHANNEL_KEY in o for o in objects):
        declare_extension(doc)
    return doc


def declare_extension(doc: dict) -> dict:
    """Declare the ``specscope`` namespace in ``global`` ``core:extensions`` (once).

    SigMF asks every namespace a file uses to be declared there; a file whose
    ``core:extensions`` is not a list is left as it is.

    Parameters
    ----------
    doc : dict
        A SigMF metadata document, changed in place.

    Returns
    -------
    dict
        ``doc``.

    Examples
    --------
    >>> declare_extension(declare_extension({}))["global"]["core:extensions"]
    [{'name': 'specscope', 'version': '1.0.0', 'optional': True}]
    """
    glob = doc.setdefault("global", {})
    declared = glob.setdefault("core:extensions", [])
    if isinstance(declared, list) and not any(
            isinstance(e, dict) and e.get("name") == _EXTENSION["name"] for e in declared):
        declared.append(dict(_EXTENSION))
    return doc


def _indent(text: str) -> str | None:
    """The indentation a JSON text uses (None: all on one line)."""
    m = re.search(r"\n([ \t]+)\S", text)
    if m is None:
        return None
    return m.group(1)


def _datatype(timebase: Timebase) -> str:
    return "cf32_le" if timebase.is_complex else "rf32_le"


def write_sigmf(path: str | Path, annotations: Sequence[Annotation],
                timebase: Timebase | None = None) -> Path:
    """Write annotations into a SigMF meta file, atomically.

    What an existing file keeps and what a new one holds is described in
    docs/explanation/rooms/annotations.md.

    Parameters
    ----------
    path : str or Path
        An existing ``.sigmf-meta`` (its ``annotations`` array is replaced) or a
        new one (written from ``timebase``); a ``.sigmf-data`` path names its meta.
    annotations : sequence of Annotation
        The annotations; times in seconds, rounded to samples.
    timebase : Timebase, optional
        The recording's; required for a new file.

    Returns
    -------
    Path
        The meta file written.

    Raises
    ------
    InputError
        A new file without a sample rate, or an item that is not an :class:`Annotation`.
    RecordingError
        The existing file is not SigMF metadata, or the file cannot be written.
    """
    path = meta_path(path)
    timebase = timebase or Timebase()
    if path.exists():  # a recording's own metadata, updated on purpose
        # read and replaced with no publication of the pair in between
        with updating_together(path.parent):
            doc, text = _load(path)
            put_annotations(doc, annotations, _sample_rate(path, doc, timebase),
                            declare=False)
            out = json.dumps(doc, indent=_indent(text), ensure_ascii=False)
            if text.endswith("\n"):
                out += "\n"
            atomic_write_text(path, out, updates_input=True)
        return path
    if not timebase.sample_rate:
        raise InputError(f"{path}: a new SigMF meta needs the recording (its sample rate "
                         "and sample type); give recording=")
    glob: dict[str, Any] = {"core:datatype": _datatype(timebase),
                            "core:sample_rate": timebase.sample_rate,
                            "core:version": SIGMF_VERSION}
    if timebase.n_channels and timebase.n_channels > 1:
        glob["core:num_channels"] = timebase.n_channels
    glob["core:recorder"] = "specscope"
    data = path.with_name(path.name[: -len(META)] + DATA) \
        if path.name.lower().endswith(META) else None
    if data is None or not data.exists():
        glob["core:metadata_only"] = True
    capture: dict[str, Any] = {"core:sample_start": 0}
    if timebase.center_frequency is not None:
        capture["core:frequency"] = timebase.center_frequency
    doc = put_annotations({"global": glob, "captures": [capture]}, annotations,
                          timebase.sample_rate)
    out = json.dumps(doc, indent=4, ensure_ascii=False) + "\n"
    atomic_write_text(path, out)
    return path
