"""What the annotation formats share: the recording's timebase and text files.

:class:`Timebase` is what a format needs to know about the recording: the
sample rate (SigMF counts samples), the band the spectrum covers (Raven tables
need frequencies, Audacity marks "no frequency" with -1) and the channel count.
The formats publish their files with :func:`specscope.compute.files.atomic_write_text`,
so a failed or killed write never leaves a half-written file nor damages the one
it replaces.
"""

from __future__ import annotations

import math
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, RecordingError, shown

__all__ = ["Timebase", "cell_number", "clean_cell", "read_bytes", "read_head", "read_text",
           "text_lines"]

#: files larger than this are not annotation files (a guard against opening samples)
MAX_TEXT_BYTES = 64 << 20


@dataclass(frozen=True)
class Timebase:
    """What the formats need to know about the annotated recording.

    Parameters
    ----------
    sample_rate : float or None
        Samples per second; ``None`` when unknown.
    center_frequency : float or None
        RF frequency of 0 Hz for IQ recordings.
    is_complex : bool
        IQ samples: the spectrum covers ``center ± fs/2``, else ``0..fs/2``.
    n_samples : int or None
        Length in samples, when known.
    n_channels : int or None
        Channel count, when known.
    """

    sample_rate: float | None = None
    center_frequency: float | None = None
    is_complex: bool = False
    n_samples: int | None = None
    n_channels: int | None = None

    @classmethod
    def of(cls, recording: Any = None, sample_rate: float | None = None) -> Timebase:
        """The timebase of a :class:`~specscope.compute.io.Recording` (or none).

        ``sample_rate`` is used when there is no recording.
        """
        if recording is None:
            if sample_rate is not None and not (math.isfinite(sample_rate) and sample_rate > 0):
                raise InputError(f"sample_rate={sample_rate!r} must be a number > 0")
            return cls(sample_rate=None if sample_rate is None else float(sample_rate))
        fs = float(recording.sample_rate) if recording.sample_rate else None
        fc = recording.center_frequency
        return cls(sample_rate=fs, center_frequency=None if fc is None else float(fc),
                   is_complex=bool(recording.is_complex),
                   n_samples=int(recording.n_samples), n_channels=int(recording.n_channels))

    @property
    def duration_s(self) -> float | None:
        """The recording's length in seconds, when its length and sample rate are known."""
        if self.n_samples is None or not self.sample_rate:
            return None
        return self.n_samples / self.sample_rate

    def band(self) -> tuple[float, float] | None:
        """Lowest and highest frequency of the spectrum in absolute Hz, if known.

        ``(0, fs/2)`` for real samples, ``(fc - fs/2, fc + fs/2)`` for IQ
        (``fc`` = 0 when the centre frequency is unknown).
        """
        if self.sample_rate is None:
            return None
        half = self.sample_rate / 2
        if self.is_complex:
            fc = self.center_frequency or 0.0
            return fc - half, fc + half
        return 0.0, half


def read_bytes(path: Path) -> bytes:
    """The bytes of an annotation file, with the guards of :func:`read_text`.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    bytes
        The file's content.

    Raises
    ------
    RecordingError
        The file is missing, unreadable, not a regular file, or too large to be
        an annotation file.
    """
    if path.is_dir():
        raise RecordingError(f"{path}: is a folder, not an annotation file")
    try:
        mode = path.stat().st_mode
    except OSError:
        mode = stat.S_IFREG  # named below, where it is read
    if not stat.S_ISREG(mode):  # a FIFO would block, a device never end
        raise RecordingError(f"{path}: is not a regular file (a device, FIFO or socket); "
                             "give an annotation file")
    try:
        size = path.stat().st_size
        raw = path.read_bytes() if size <= MAX_TEXT_BYTES else b""
    except FileNotFoundError:
        raise RecordingError(f"{path}: no such file") from None
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if size > MAX_TEXT_BYTES:
        raise RecordingError(f"{path}: {size} bytes is too large for an annotation file")
    return raw


def read_text(path: Path) -> str:
    """The text of an annotation file (UTF-8, with or without BOM; else Windows-1252).

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    str
        The decoded text.

    Raises
    ------
    RecordingError
        The file is missing, unreadable, or too large to be an annotation file.
    """
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # tables saved by Windows tools in the ANSI code page
        return raw.decode("cp1252", errors="replace")


def read_head(path: Path, size: int = 4096) -> str:
    """The first ``size`` bytes of a file as text (for telling formats apart); "" if unreadable.

    Parameters
    ----------
    path : Path
        The file.
    size : int
        Bytes read.

    Returns
    -------
    str
        The text, decoded as UTF-8 with replacement; ``""`` when the file cannot be
        read or holds a NUL byte (binary data).
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read(size)
    except OSError:
        return ""
    if b"\0" in raw:
        return ""  # binary: samples, not a table
    return raw.decode("utf-8-sig", errors="replace")


def text_lines(text: str) -> list[str]:
    """Lines split at ``\\n``, ``\\r\\n`` or ``\\r`` only.

    :meth:`str.splitlines` also splits at form feeds, NEL and other separators,
    which labels may hold.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    list of str
        The lines, without their line ends.

    Examples
    --------
    >>> text_lines("a\\r\\nb\\x0cc\\rd")
    ['a', 'b\\x0cc', 'd']
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def cell_number(text: str, where: str, name: str) -> float:
    """A finite float from a table cell, or an :class:`InputError` naming ``where`` and ``name``.

    Parameters
    ----------
    text : str
        The cell; surrounding blanks are ignored.
    where : str
        The file and line, for the error message.
    name : str
        The column, for the error message.

    Returns
    -------
    float
        The number.

    Raises
    ------
    InputError
        The cell is empty, not a number, or not finite.
    """
    s = text.strip()
    try:
        x = float(s)
    except ValueError:
        text = shown(s) if s else "an empty cell"
        raise InputError(f"{where}: {name}: {text} is not a number") from None
    if not math.isfinite(x):
        raise InputError(f"{where}: {name}: {shown(s)} must be a finite number")
    return x


def clean_cell(text: str) -> str:
    """Text for a tab-separated cell: tabs and line breaks become spaces.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    str
        The text on one line, without tabs.

    Examples
    --------
    >>> clean_cell("two\\tlines\\nhere")
    'two lines here'
    """
    return text.replace("\r\n", " ").replace("\t", " ").replace("\n", " ").replace("\r", " ")
