"""The Recording model and the reader registry.

A :class:`Recording` is an opened file, read lazily: its metadata is known at
open time and :meth:`Recording.read` returns only the samples asked for.
Readers register themselves per format with :func:`register_reader`;
:func:`open_recording` asks each reader, in order of priority, whether it
accepts a path, and opens it with the first that does.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, RecordingError


class Recording(ABC):
    """An opened recording.

    Subclasses implement :meth:`_read` and set the metadata attributes.  Reading
    is thread-safe: the compute thread reads while the GUI thread looks at the
    metadata.
    """

    #: short name of the file format, e.g. ``"WAV"``
    format: str = ""
    #: samples per second (per channel)
    sample_rate: float = 0.0
    #: number of samples per channel
    n_samples: int = 0
    #: number of channels
    n_channels: int = 1
    #: whether samples are complex (IQ)
    is_complex: bool = False
    #: centre frequency in Hz for RF captures, else ``None``
    center_frequency: float | None = None
    #: physical unit of a sample value
    units: str = "FS"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.metadata: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.n_samples / self.sample_rate if self.sample_rate else 0.0

    @property
    def dtype(self) -> np.dtype:
        """Sample type returned by :meth:`read`."""
        return np.dtype(np.complex64 if self.is_complex else np.float32)

    def read(self, start: int = 0, stop: int | None = None,
             channels: int | list[int] | None = None) -> np.ndarray:
        """Read samples ``start:stop``.

        Parameters
        ----------
        start, stop : int
            Sample indices, clipped to the recording like a slice.
        channels : int or list of int, optional
            Channel index or indices; all channels when omitted.

        Returns
        -------
        numpy.ndarray
            float32 (complex64 for IQ) array shaped ``(samples, channels)``.
        """
        start, stop, _ = slice(start, stop).indices(self.n_samples)
        stop = max(stop, start)
        chans = self._channel_list(channels)
        with self._lock:
            data = self._read(start, stop)
        data = np.asarray(data, dtype=self.dtype)
        if data.ndim == 1:
            data = data[:, None]
        if data.shape[0] != stop - start:
            raise RecordingError(
                f"{self.path}: expected {stop - start} samples at {start}, "
                f"the file gave {data.shape[0]} (truncated file?)")
        return np.ascontiguousarray(data[:, chans])

    def _channel_list(self, channels: int | list[int] | None) -> list[int]:
        if channels is None:
            return list(range(self.n_channels))
        chans = [channels] if isinstance(channels, (int, np.integer)) else list(channels)
        for c in chans:
            if not 0 <= int(c) < self.n_channels:
                raise InputError(
                    f"channel={c} is out of range; {self.path.name} has "
                    f"{self.n_channels} channel(s), numbered 0..{self.n_channels - 1}")
        return [int(c) for c in chans]

    @abstractmethod
    def _read(self, start: int, stop: int) -> np.ndarray:
        """Return samples ``start:stop`` of all channels, shaped (samples, channels)."""

    def close(self) -> None:  # noqa: B027 - optional for readers without handles
        """Release the file handle."""

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> dict[str, Any]:
        """Metadata as a JSON-ready dict (what ``specscope info`` prints)."""
        return {
            "path": str(self.path),
            "format": self.format,
            "sample_rate": float(self.sample_rate),
            "n_samples": int(self.n_samples),
            "n_channels": int(self.n_channels),
            "duration_s": float(self.duration),
            "is_complex": bool(self.is_complex),
            "center_frequency": self.center_frequency,
            "units": self.units,
            "metadata": self.metadata,
        }

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.path.name!r} {self.format} "
                f"{self.sample_rate:g} Hz, {self.n_channels} ch, {self.n_samples} samples>")


@dataclass(frozen=True)
class ReaderSpec:
    """A registered reader: which paths it accepts and how it opens them."""

    name: str
    extensions: tuple[str, ...]
    opener: Callable[..., Recording]
    sniff: Callable[[Path], bool] | None = None
    priority: int = 0
    description: str = field(default="", compare=False)

    def accepts(self, path: Path) -> bool:
        if self.sniff is not None:
            try:
                if self.sniff(path):
                    return True
            except OSError:
                return False
        return path.suffix.lower() in self.extensions


_READERS: list[ReaderSpec] = []


def register_reader(name: str, extensions: list[str] | tuple[str, ...],
                    opener: Callable[..., Recording], *,
                    sniff: Callable[[Path], bool] | None = None,
                    priority: int = 0, description: str = "") -> ReaderSpec:
    """Register a reader for a format.

    Parameters
    ----------
    name : str
        Format name, e.g. ``"audio"``.
    extensions : sequence of str
        Lower-case suffixes with the dot, e.g. ``(".wav", ".flac")``.
    opener : callable
        ``opener(path, **options) -> Recording``.
    sniff : callable, optional
        ``sniff(path) -> bool`` looking at the file's content; tried before the
        extension so a mislabelled file still opens with the right reader.
    priority : int
        Higher is asked first.
    """
    spec = ReaderSpec(name, tuple(e.lower() for e in extensions), opener, sniff,
                      priority, description)
    _READERS[:] = [r for r in _READERS if r.name != name] + [spec]
    _READERS.sort(key=lambda r: -r.priority)
    return spec


def readers() -> list[ReaderSpec]:
    """The registered readers, highest priority first."""
    return list(_READERS)


def open_recording(path: str | os.PathLike[str], *, format: str | None = None,
                   **options: Any) -> Recording:
    """Open a recording lazily.

    Parameters
    ----------
    path : str or PathLike
        The file.
    format : str, optional
        Reader name to use instead of detecting it.
    **options
        Passed to the reader (e.g. a sample rate for raw files).

    Raises
    ------
    RecordingError
        The file is missing, unreadable, or no reader accepts it.
    """
    p = Path(path)
    if not p.exists():
        raise RecordingError(f"{p}: no such file")
    if p.is_dir():
        raise RecordingError(f"{p}: is a folder, not a recording")
    if not os.access(p, os.R_OK):
        raise RecordingError(f"{p}: permission denied")
    if format is not None:
        for spec in _READERS:
            if spec.name == format:
                return spec.opener(p, **options)
        known = ", ".join(r.name for r in _READERS)
        raise InputError(f"format={format!r} is unknown; expected one of: {known}")
    for spec in _READERS:
        if spec.accepts(p):
            return spec.opener(p, **options)
    known = ", ".join(sorted({e for r in _READERS for e in r.extensions}))
    raise RecordingError(f"{p}: not a recording specscope can read (known: {known})")
