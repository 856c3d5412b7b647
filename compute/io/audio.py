"""Audio files through libsndfile (soundfile): WAV, RF64, W64, FLAC, OGG, AIFF."""

from __future__ import annotations

import math
import os
import struct
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO

import numpy as np
import soundfile

from ..errors import RecordingError
from .base import Recording, register_reader
from .remote import UrlPath, open_binary

_MAGIC = (b"RIFF", b"RIFX", b"RF64", b"riff", b"fLaC", b"OggS", b"FORM", b"BW64", b"caff")

#: what a file named with each suffix must start with, and the words for the error
_EXPECTED: dict[str, tuple[str, tuple[bytes, ...], str]] = {
    ".wav": ("WAV", (b"RIFF", b"RIFX", b"RF64", b"BW64"), "RIFF/RIFX/RF64"),
    ".wave": ("WAV", (b"RIFF", b"RIFX", b"RF64", b"BW64"), "RIFF/RIFX/RF64"),
    ".bwf": ("BWF", (b"RIFF", b"RF64", b"BW64"), "RIFF/RF64/BW64"),
    ".rf64": ("RF64", (b"RF64", b"RIFF"), "RF64/RIFF"),
    ".w64": ("W64", (b"riff",), "Wave64 'riff'"),
    ".flac": ("FLAC", (b"fLaC", b"ID3"), "fLaC"),
    ".ogg": ("OGG", (b"OggS",), "OggS"),
    ".oga": ("OGG", (b"OggS",), "OggS"),
    ".aif": ("AIFF", (b"FORM",), "FORM"),
    ".aiff": ("AIFF", (b"FORM",), "FORM"),
    ".aifc": ("AIFF", (b"FORM",), "FORM"),
    ".caf": ("CAF", (b"caff",), "caff"),
}

# fd 2 is shared by every thread: one redirection at a time
_STDERR_LOCK = threading.Lock()


class AudioRecording(Recording):
    """A recording read through soundfile; samples are in full scale (FS)."""

    units = "FS"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        _check_header(path)
        self._raw: BinaryIO | None = None
        try:
            if isinstance(self.path, UrlPath):  # read by range through the URL's cache
                self._raw = self.path.open("rb")
                self._file = _quiet_open(self._raw)
            else:
                self._file = _quiet_open(path)
            if self._file.format == "WAV" and self._file.frames == 0:
                self._reopen_unfinished_wav()
        except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{path}: not a readable audio file ({msg})") from None
        f = self._file
        if f.format == "AIFF":
            _check_aiff_rate(path)
        if f.format == "FLAC" and f.frames > _MAX_SAMPLES_PER_BYTE * max(path.stat().st_size, 1):
            self._recount_flac()
            f = self._file
        self.format = f.format
        self.sample_rate = float(f.samplerate)
        self.n_samples = int(f.frames)
        self.n_channels = int(f.channels)
        self.metadata = {"subtype": f.subtype, "endian": f.endian,
                         "format_info": f.format_info, "subtype_info": f.subtype_info}
        if self.sample_rate <= 0:
            raise RecordingError(f"{path}: header gives sample rate {f.samplerate}")

    def _recount_flac(self) -> None:
        """Count the samples of a FLAC whose STREAMINFO states more than its size allows.

        A FLAC frame holds at most 65535 samples and takes at least a few bytes, so a
        stated count far beyond the file size is wrong (a damaged or hostile
        header: all ones states 68.7 G samples).  The samples that decode are
        found by bisection, each probe a seek through a view of the file whose
        STREAMINFO states the count probed, and the file is read through such a
        view (libFLAC seeks by the stated count).
        """
        size = self.path.stat().st_size
        with open_binary(self.path) as fh:
            head = fh.read(26)
        if len(head) < 26 or head[:4] != b"fLaC" or head[4] & 0x7F != 0:
            raise RecordingError(f"{self.path}: the FLAC header states {self._file.frames} "
                                 f"samples, more than a file of {size} bytes can hold")
        stated = int(self._file.frames)

        def view(total: int) -> tuple[soundfile.SoundFile, BinaryIO]:
            patch = bytes([(head[21] & 0xF0) | ((total >> 32) & 0x0F)]) + (
                total & 0xFFFFFFFF).to_bytes(4, "big")
            raw = open_binary(self.path)
            try:
                return soundfile.SoundFile(_PatchedFile(raw, {21: patch}, size), mode="r"), raw
            except Exception:
                raw.close()
                raise

        def decodes(total: int) -> bool:
            try:
                sf, raw = view(total)
            except (soundfile.LibsndfileError, RuntimeError, TypeError):
                return False
            try:
                sf.seek(total - 1)
                return len(sf.read(1, dtype="float32", always_2d=True)) == 1
            except (soundfile.LibsndfileError, RuntimeError):
                return False
            finally:
                sf.close()
                raw.close()

        lo, hi = 0, min(stated, _MAX_SAMPLES_PER_BYTE * size, (1 << 36) - 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if decodes(mid):
                lo = mid
            else:
                hi = mid - 1
        if lo == 0:
            raise RecordingError(f"{self.path}: the FLAC header states {stated} samples, more "
                                 f"than a file of {size} bytes can hold, and none decode")
        patched, raw = view(lo)
        self._file.close()
        self._file, self._raw = patched, raw
        self.warnings.append(f"the FLAC header states {stated} samples, more than a file of "
                             f"{size} bytes can hold; {lo} decode, and those are read")

    def _reopen_unfinished_wav(self) -> None:
        """Read the audio after a data chunk whose header says 0 bytes.

        A recorder that dies before finishing its header leaves the data size 0
        while the samples follow it; libsndfile stops at the header.  The file is
        read through a view whose header states the whole frames that are there.
        """
        found = _unfinished_wav(self.path, self._file.channels)
        if found is None:
            return
        patches, frames, n_bytes = found
        raw = open_binary(self.path)
        try:
            patched = soundfile.SoundFile(_PatchedFile(raw, patches, n_bytes), mode="r")
        except Exception:
            raw.close()
            raise
        if patched.frames != frames:
            patched.close()
            raw.close()
            return
        self._file.close()
        self._file, self._raw = patched, raw
        self.warnings.append(
            f"the WAV header says the data chunk holds 0 bytes, yet {frames} samples "
            "follow it (a writer stopped before finishing the header); read what is "
            "there, to the end of the file")

    def _read(self, start: int, stop: int) -> np.ndarray:
        try:
            self._file.seek(start)
            return self._file.read(stop - start, dtype="float32", always_2d=True)
        except (soundfile.LibsndfileError, RuntimeError) as exc:
            # a damaged stream fails only when read there: one line, not a traceback
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{self.path}: cannot read samples {start}:{stop} "
                                 f"({msg}); the file is damaged or truncated") from None

    def close(self) -> None:
        self._file.close()
        if self._raw is not None:
            self._raw.close()


#: FLAC frames hold at most 65535 samples in no fewer than 8 bytes: a bound on the
#: samples a file of a given size can hold, far above any real compression
_MAX_SAMPLES_PER_BYTE = 65535 // 8


def _check_aiff_rate(path: Path) -> None:
    """Refuse an AIFF whose COMM chunk gives a sample rate that is NaN, infinite or below 1 Hz.

    The rate is an 80-bit float; libsndfile turns NaN and infinity into 67108864 Hz
    and 0 into 1 Hz without a word.
    """
    with open_binary(path) as fh:
        head = fh.read(12)
        if head[:4] != b"FORM" or head[8:12] not in (b"AIFF", b"AIFC"):
            return
        size = path.stat().st_size
        pos = 12
        while pos + 8 <= size:
            fh.seek(pos)
            chunk_id, chunk_size = struct.unpack(">4sI", fh.read(8))
            if chunk_id == b"COMM":
                comm = fh.read(18)
                if len(comm) < 18:
                    return
                rate = _extended(comm[8:18])
                if not math.isfinite(rate) or rate < 1:
                    raise RecordingError(f"{path}: the AIFF header gives sample rate {rate:g} "
                                         "Hz; a sample rate must be a finite number >= 1")
                return
            pos += 8 + chunk_size + (chunk_size & 1)


def _extended(b: bytes) -> float:
    """An IEEE 754 80-bit extended float (big-endian), as AIFF stores its sample rate."""
    exponent = int.from_bytes(b[0:2], "big")
    mantissa = int.from_bytes(b[2:10], "big")
    sign = -1.0 if exponent & 0x8000 else 1.0
    exponent &= 0x7FFF
    if exponent == 0x7FFF:
        return sign * math.inf if mantissa << 1 & 0xFFFFFFFFFFFFFFFF == 0 else math.nan
    if exponent == 0 and mantissa == 0:
        return 0.0
    try:
        return sign * math.ldexp(mantissa, exponent - 16383 - 63)
    except OverflowError:
        return sign * math.inf


def _check_header(path: Path) -> None:
    """Refuse, in one line, a file whose first bytes are no audio format at all.

    Handing such a file to libsndfile makes its MPEG decoder guess and print notes
    on stderr, and the error it then gives does not name the cause.
    """
    with open_binary(path) as fh:
        head = fh.read(12)
    if not head:
        raise RecordingError(f"{path}: the file is empty")
    if head[:4] in _MAGIC or head[:3] == b"ID3":
        return
    expected = _EXPECTED.get(path.suffix.lower())
    if expected is not None:
        # other suffixes (format="audio" on an .mp3, say) are left to libsndfile
        name, _, words = expected
        raise RecordingError(f"{path}: not a{'n' if name[0] in 'AEFIO' else ''} {name} "
                             f"file (no {words} header)")


def _quiet_open(path: Path | BinaryIO) -> soundfile.SoundFile:
    """Open with libsndfile while its decoders' notes on fd 2 go nowhere."""
    with _STDERR_LOCK:
        saved = os.dup(2)
        try:
            with tempfile.TemporaryFile() as sink:
                os.dup2(sink.fileno(), 2)
                try:
                    # a file name as bytes (any name), or a file object
                    source = path if hasattr(path, "read") else os.fsencode(path)
                    return soundfile.SoundFile(source, mode="r")
                finally:
                    os.dup2(saved, 2)
        finally:
            os.close(saved)


def _unfinished_wav(path: Path, channels: int) -> tuple[dict[int, bytes], int, int] | None:
    """Header patches for a RIFF WAV whose data chunk says 0 bytes but has samples.

    Returns
    -------
    (patches, frames, size) or None
        Byte offset -> replacement bytes, the whole frames after the data chunk
        header, and the size of the file as presented (trailing partial frame cut).
    """
    size = path.stat().st_size
    with open_binary(path) as fh:
        head = fh.read(12)
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        block_align = 0
        pos = 12
        while pos + 8 <= size:
            fh.seek(pos)
            chunk_id, chunk_size = struct.unpack("<4sI", fh.read(8))
            if chunk_id == b"fmt ":
                fmt = fh.read(min(chunk_size, 16))
                if len(fmt) >= 14:
                    block_align = struct.unpack("<H", fmt[12:14])[0]
            elif chunk_id == b"data":
                if chunk_size != 0 or block_align <= 0:
                    return None
                start = pos + 8
                frames = (size - start) // block_align
                n_bytes = min(frames * block_align, 0xFFFFFFFF - start)
                frames = n_bytes // block_align
                n_bytes = frames * block_align
                if frames <= 0 or block_align % max(channels, 1):
                    return None
                patches = {4: struct.pack("<I", start + n_bytes - 8),
                           pos + 4: struct.pack("<I", n_bytes)}
                return patches, frames, start + n_bytes
            pos += 8 + chunk_size + (chunk_size & 1)
    return None


class _PatchedFile:
    """A read-only file view with a few header bytes replaced and its end cut."""

    def __init__(self, fh: BinaryIO, patches: dict[int, bytes], size: int) -> None:
        self._fh = fh
        self._patches = patches
        self._size = size
        self._pos = 0

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, count: int = -1) -> bytes:
        end = self._size if count < 0 else min(self._size, self._pos + count)
        if end <= self._pos:
            return b""
        self._fh.seek(self._pos)
        data = bytearray(self._fh.read(end - self._pos))
        for at, new in self._patches.items():
            for i, byte in enumerate(new):
                j = at + i - self._pos
                if 0 <= j < len(data):
                    data[j] = byte
        self._pos += len(data)
        return bytes(data)

    def write(self, data: bytes) -> int:
        raise OSError("read-only")


def _sniff(path: Path) -> bool:
    with open_binary(path) as fh:
        return fh.read(4) in _MAGIC


register_reader("audio", (".wav", ".wave", ".flac", ".ogg", ".oga", ".aif", ".aiff",
                          ".aifc", ".w64", ".rf64", ".bwf", ".caf"),
                AudioRecording, sniff=_sniff, priority=10,
                description="audio through libsndfile")
