"""Audio files through libsndfile (soundfile): WAV, RF64, W64, FLAC, OGG, AIFF."""

from __future__ import annotations

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
            self._file = _quiet_open(path)
            if self._file.format == "WAV" and self._file.frames == 0:
                self._reopen_unfinished_wav()
        except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{path}: not a readable audio file ({msg})") from None
        f = self._file
        self.format = f.format
        self.sample_rate = float(f.samplerate)
        self.n_samples = int(f.frames)
        self.n_channels = int(f.channels)
        self.metadata = {"subtype": f.subtype, "endian": f.endian,
                         "format_info": f.format_info, "subtype_info": f.subtype_info}
        if self.sample_rate <= 0:
            raise RecordingError(f"{path}: header gives sample rate {f.samplerate}")

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
        raw = open(self.path, "rb")  # noqa: SIM115 - held open with the SoundFile
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


def _check_header(path: Path) -> None:
    """Refuse, in one line, a file whose first bytes are no audio format at all.

    Handing such a file to libsndfile makes its MPEG decoder guess and print notes
    on stderr, and the error it then gives does not name the cause.
    """
    with open(path, "rb") as fh:
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


def _quiet_open(path: Path) -> soundfile.SoundFile:
    """Open with libsndfile while its decoders' notes on fd 2 go nowhere."""
    with _STDERR_LOCK:
        saved = os.dup(2)
        try:
            with tempfile.TemporaryFile() as sink:
                os.dup2(sink.fileno(), 2)
                try:
                    return soundfile.SoundFile(str(path), mode="r")
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
    with open(path, "rb") as fh:
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
    with open(path, "rb") as fh:
        return fh.read(4) in _MAGIC


register_reader("audio", (".wav", ".wave", ".flac", ".ogg", ".oga", ".aif", ".aiff",
                          ".aifc", ".w64", ".rf64", ".bwf", ".caf"),
                AudioRecording, sniff=_sniff, priority=10,
                description="audio through libsndfile")
