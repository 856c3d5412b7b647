"""Audio files through libsndfile (soundfile): WAV, RF64, W64, FLAC, OGG, AIFF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile

from ..errors import RecordingError
from .base import Recording, register_reader

_MAGIC = (b"RIFF", b"RIFX", b"RF64", b"riff", b"fLaC", b"OggS", b"FORM", b"BW64")


class AudioRecording(Recording):
    """A recording read through soundfile; samples are in full scale (FS)."""

    units = "FS"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        try:
            self._file = soundfile.SoundFile(str(path), mode="r")
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


def _sniff(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) in _MAGIC


register_reader("audio", (".wav", ".wave", ".flac", ".ogg", ".oga", ".aif", ".aiff",
                          ".aifc", ".w64", ".rf64", ".bwf", ".caf"),
                AudioRecording, sniff=_sniff, priority=10,
                description="audio through libsndfile")
