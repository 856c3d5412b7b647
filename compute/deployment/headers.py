"""What a deployment needs of each file, read from its header only.

WAV files (RIFF, RF64, BW64) are walked chunk by chunk here, with bounded reads: the
``fmt`` chunk gives rate, channels and frame size, the ``data`` chunk the sample count,
and the start time comes from a BWF ``bext`` chunk, a GUANO ``guan`` chunk or the
AudioMoth comment (``LIST``/``INFO``/``ICMT``).  Other formats (FLAC, SigMF, HDF5 ...)
are opened through their reader, which reads metadata only; their start time is the
reader's ``start_time`` (SigMF ``core:datetime`` of the first capture, HDF5 attributes).
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import RecordingError, SpecscopeError, shown
from .times import build_time, parse_iso

__all__ = ["Header", "HeaderError", "read_header"]

#: chunks walked at most before giving up on a WAV file
MAX_CHUNKS = 512
#: bytes read at most of a chunk whose content is looked at (bext, guan, LIST, fmt)
MAX_CHUNK_READ = 1 << 16

_PCM_LIKE = {1, 3, 6, 7, 0xFFFE}  # integer PCM, float, A-law, mu-law, extensible


class HeaderError(RecordingError):
    """A file's header cannot be read.

    Attributes
    ----------
    path : str
        The file.
    problem : str
        What is wrong, in words.
    """

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path, self.problem = str(path), problem
        super().__init__(f"{path}: {problem}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.problem))


@dataclass(frozen=True)
class Header:
    """The facts of one file a deployment is built from.

    Attributes
    ----------
    format : str
        ``"WAV"``, ``"FLAC"``, ``"SigMF cf32_le"`` ...
    sample_rate : float
    n_samples : int
    n_channels : int
    is_complex : bool
    time : str or None
        The start time its metadata states, ISO 8601 (without a zone when it gives none).
    time_source : str
        Where ``time`` came from: ``"bext"``, ``"guano"``, ``"audiomoth"``, ``"metadata"``.
    """

    format: str
    sample_rate: float
    n_samples: int
    n_channels: int
    is_complex: bool = False
    time: str | None = None
    time_source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The header as a JSON-ready dict (the index cache stores it)."""
        return {"format": self.format, "sample_rate": self.sample_rate,
                "n_samples": self.n_samples, "n_channels": self.n_channels,
                "is_complex": self.is_complex, "time": self.time,
                "time_source": self.time_source}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Header:
        """A header from :meth:`to_dict`'s dict."""
        return cls(str(d["format"]), float(d["sample_rate"]), int(d["n_samples"]),
                   int(d["n_channels"]), bool(d.get("is_complex", False)),
                   d.get("time"), str(d.get("time_source", "")))


def read_header(path: Path) -> Header:
    """The header of one recording (see the module docstring).

    Raises
    ------
    RecordingError
        The file cannot be read or is not a recording; one line naming it.
    """
    with open(path, "rb") as fh:
        head = fh.read(12)
    if len(head) == 12 and head[:4] in (b"RIFF", b"RF64", b"BW64") and head[8:12] == b"WAVE":
        try:
            header = _wav_header(path)
        except HeaderError as exc:
            # the chunks do not add up: what the reader makes of the file stands, if anything
            try:
                return _opened_header(path)
            except SpecscopeError:
                raise exc from None
        if header is not None:
            return header
    return _opened_header(path)


def _opened_header(path: Path) -> Header:
    from ..io import open_recording

    try:
        with open_recording(path) as rec:
            return Header(rec.format, float(rec.sample_rate), int(rec.n_samples),
                          int(rec.n_channels), bool(rec.is_complex), rec.start_time,
                          "metadata" if rec.start_time else "")
    except SpecscopeError:
        raise
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise HeaderError(path, f"cannot be read ({type(exc).__name__})") from None


def _wav_header(path: Path) -> Header | None:
    """The header of a little-endian WAV file; ``None`` for a coding soundfile must count."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        riff = fh.read(12)
        rf64 = riff[:4] in (b"RF64", b"BW64")
        pos, fmt, data_off, data_size, ds64_data = 12, None, None, None, None
        times: dict[str, str] = {}
        for _ in range(MAX_CHUNKS):
            if pos + 8 > size:
                break
            fh.seek(pos)
            cid, csize = struct.unpack("<4sI", fh.read(8))
            body = pos + 8
            if cid == b"ds64" and rf64:
                raw = fh.read(min(csize, 28))
                if len(raw) >= 24:
                    ds64_data = struct.unpack("<Q", raw[8:16])[0]
            elif cid == b"fmt ":
                fmt = fh.read(min(csize, 40))
            elif cid == b"data":
                data_off = body
                data_size = csize
                if rf64 and csize == 0xFFFFFFFF and ds64_data is not None:
                    data_size = ds64_data
                if data_size in (0, 0xFFFFFFFF) or body + data_size > size:
                    data_size = size - body  # unfinished or truncated: what is there
                csize = data_size
            elif cid in (b"bext", b"guan", b"LIST") and csize <= MAX_CHUNK_READ:
                _chunk_time(cid, fh.read(csize), times)
            if data_off is not None and body + csize >= size:
                break
            pos = body + csize + (csize & 1)
    if fmt is None or len(fmt) < 16:
        raise HeaderError(path, "a WAV file without a complete fmt chunk")
    if data_off is None:
        raise HeaderError(path, "a WAV file without a data chunk")
    tag, channels, rate, _, block, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag not in _PCM_LIKE:
        return None
    if channels == 0 or block == 0 or block != channels * ((bits + 7) // 8):
        raise HeaderError(path, f"the fmt chunk gives {channels} channel(s) of {bits} bits "
                                f"in frames of {block} bytes")
    if rate == 0:
        raise HeaderError(path, "the fmt chunk gives sample rate 0")
    n = max(0, int(data_size or 0)) // block
    time, source = _pick_time(times, float(rate))
    return Header("WAV", float(rate), n, int(channels), False, time, source)


def _chunk_time(cid: bytes, body: bytes, times: dict[str, str]) -> None:
    if cid == b"bext" and len(body) >= 346:
        date = body[320:330].decode("ascii", "replace")
        clock = body[330:338].decode("ascii", "replace")
        ref = struct.unpack("<Q", body[338:346])[0]
        m = re.match(r"^(\d{4})\D(\d{2})\D(\d{2})$", date)
        c = re.match(r"^(\d{2})\D(\d{2})\D(\d{2})$", clock)
        if m and c:
            dt = build_time(*m.groups(), *c.groups())
            if dt is not None:
                times["bext"] = dt.isoformat()
                times["bext_ref"] = str(ref)
    elif cid == b"guan":
        text = body.decode("utf-8", "replace")
        m = re.search(r"^Timestamp:\s*(\S[^\r\n]*)$", text, re.MULTILINE)
        if m and parse_iso(m.group(1).strip()) is not None:
            times["guano"] = m.group(1).strip()
    elif cid == b"LIST" and body[:4] == b"INFO":
        pos = 4
        while pos + 8 <= len(body):
            sid, ssize = struct.unpack("<4sI", body[pos:pos + 8])
            if sid == b"ICMT":
                found = audiomoth_time(body[pos + 8:pos + 8 + ssize].decode("latin-1"))
                if found is not None:
                    times["audiomoth"] = found
            pos += 8 + ssize + (ssize & 1)


_AUDIOMOTH = re.compile(
    r"Recorded at (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))? (?:on )?(\d{2})/(\d{2})/(\d{4})"
    r" \(UTC(?:([+-])(\d{1,2})(?::?(\d{2}))?)?\)")


def audiomoth_time(comment: str) -> str | None:
    """The time an AudioMoth comment states (``Recorded at 14:30:00 01/05/2024 (UTC+1)``),
    ISO 8601 with its offset; ``None`` when the comment states none."""
    m = _AUDIOMOTH.search(comment)
    if not m:
        return None
    hh, mi, ss, frac, dd, mo, yy, sign, oh, om = m.groups()
    zone = "Z" if sign is None else f"{sign}{int(oh):02d}:{int(om or 0):02d}"
    dt = build_time(yy, mo, dd, hh, mi, ss, fraction=frac, zone=zone)
    return None if dt is None else dt.isoformat()


def _pick_time(times: dict[str, str], rate: float) -> tuple[str | None, str]:
    """The best stated time: GUANO and AudioMoth carry their zone; bext is local time,
    made finer by its time reference (samples since midnight) when the two agree."""
    for key in ("guano", "audiomoth"):
        if key in times:
            return times[key], key
    if "bext" in times:
        dt = datetime.fromisoformat(times["bext"])
        ref = int(times.get("bext_ref", "0"))
        if ref:
            secs = ref / rate
            day = dt.replace(hour=0, minute=0, second=0, microsecond=0)
            fine = day + timedelta(seconds=secs)
            if timedelta(0) <= fine - dt < timedelta(seconds=1):
                dt = fine
        return dt.isoformat(), "bext"
    return None, ""


def stated_time(header: Header) -> datetime | None:
    """The header's stated time as a datetime (naive when it gives no zone)."""
    if not isinstance(header.time, str):
        return None
    try:
        return datetime.fromisoformat(header.time)
    except ValueError:
        return parse_iso(header.time)


def describe_time(header: Header) -> str:
    """A short description of where the header's time came from, for messages."""
    return {"bext": "BWF bext", "guano": "GUANO", "audiomoth": "AudioMoth comment",
            "metadata": "metadata"}.get(header.time_source, header.time_source) + (
        f" {shown(header.time)}" if header.time else "")

