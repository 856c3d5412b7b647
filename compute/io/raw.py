"""Raw binary samples: headerless IQ or real data, read by offset.

A raw file says nothing about itself, so nothing is guessed: the sample rate is
always given (``sample_rate=``), and the sample type comes
from ``dtype=`` or from an extension that names it (``.cf32``,
``.cs16``, ``.cu8`` ...).  ``.iq``, ``.raw``, ``.bin`` and ``.dat`` name no type.

Sample type names follow SigMF: ``[c|r][f|i|u][bits][_le|_be]``, e.g. ``cf32_le``,
``ci16_be``, ``ru8``.  Accepted aliases: ``fc32``/``fc64`` (GNU Radio, SoapySDR),
``cs8``/``cs16``/``cs32`` and ``sc8``/``sc16`` (signed complex), ``rs16`` etc., and
numpy names (``complex64``, ``int16``, ``<i2`` ...).  Without ``_le``/``_be``,
multi-byte types are little-endian.

Integer samples are scaled to full scale (FS): signed ``x / 2**(bits-1)``,
unsigned ``(x - 2**(bits-1)) / 2**(bits-1)``; float samples are returned as
they are.  Channels are interleaved sample by sample.

Samples are read through one descriptor (:class:`FileArray`), never memory-mapped:
a file truncated while it is read raises :class:`~.base.FileChangedError` (one
line) where a mapped page would kill the process with ``SIGBUS``, and a file that
grows is read up to its size at open.  A map read blocks from the page cache some
10 % faster; from disk both run at the disk's speed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, MissingOption, RecordingError, shown
from ..params import parse_count, parse_number
from .base import Recording, SteadyFile, register_reader
from .remote import RangeArray, UrlPath

# -- sample types --------------------------------------------------------------------

_CANONICAL = re.compile(r"^(?P<kind>[cr])(?P<num>[fiu])(?P<bits>8|16|32|64)"
                        r"(?:_(?P<order>le|be))?$")
#: other spellings -> canonical stem
_ALIASES = {
    "fc32": "cf32", "fc64": "cf64",
    "cs8": "ci8", "cs16": "ci16", "cs32": "ci32",
    "sc8": "ci8", "sc16": "ci16", "sc32": "ci32",
    "rs8": "ri8", "rs16": "ri16", "rs32": "ri32",
    "complex64": "cf32", "complex128": "cf64",
    "float32": "rf32", "float64": "rf64", "float": "rf32", "double": "rf64",
    "int8": "ri8", "int16": "ri16", "int32": "ri32",
    "uint8": "ru8", "uint16": "ru16", "uint32": "ru32",
}
#: extensions that name their sample type unambiguously
EXTENSION_TYPES = {
    ".cf32": "cf32", ".fc32": "cf32", ".cfile": "cf32", ".cf64": "cf64", ".fc64": "cf64",
    ".ci32": "ci32", ".cs32": "ci32", ".ci16": "ci16", ".cs16": "ci16", ".sc16": "ci16",
    ".ci8": "ci8", ".cs8": "ci8", ".sc8": "ci8", ".cu8": "cu8", ".cu16": "cu16",
    ".rf32": "rf32", ".rf64": "rf64", ".ri16": "ri16", ".ri8": "ri8", ".ru8": "ru8",
    ".ri32": "ri32", ".ru16": "ru16",
}


def extension_sample_type(path: str | os.PathLike[str]) -> str | None:
    """The sample type a file's extension names (``x.cs16`` -> ``"ci16"``), else ``None``.

    Parameters
    ----------
    path : str or PathLike
        The file; only its suffix is looked at.

    Returns
    -------
    str or None
        The canonical stem (``"cf32"``, ``"ci16"``, ``"cu8"`` ...), or ``None`` for
        ``.iq``, ``.raw`` and other suffixes that name no type.
    """
    return EXTENSION_TYPES.get(Path(path).suffix.lower())


#: extensions the raw reader accepts without naming a type
GENERIC_EXTENSIONS = (".iq", ".raw", ".bin", ".dat")
EXAMPLE_TYPES = "cf32, cf64, ci16, ci8, cu8, cu16, rf32, rf64, ri16, ri8, ru8 (add _be for big-endian)"


@dataclass(frozen=True)
class SampleType:
    """A parsed raw sample type such as ``ci16_be``."""

    name: str  #: canonical name with byte order, e.g. ``"ci16_le"`` (``"cu8"`` for bytes)
    is_complex: bool
    component: np.dtype  #: dtype of one real component, with byte order
    scale: float  #: divide by this after subtracting ``offset`` (1.0 for floats)
    offset: float

    @property
    def components(self) -> int:
        return 2 if self.is_complex else 1

    @property
    def itemsize(self) -> int:
        """Bytes per sample of one channel."""
        return self.component.itemsize * self.components

    def convert(self, raw: np.ndarray) -> np.ndarray:
        """``(n, channels * components)`` raw values -> float32/complex64 ``(n, channels)``."""
        out = np.asarray(raw).astype(np.float32, order="C")
        if self.offset:
            out -= np.float32(self.offset)
        if self.scale != 1.0:
            out *= np.float32(1.0 / self.scale)
        if self.is_complex:
            out = out.view(np.complex64)
        return out

    def convert_into(self, raw: np.ndarray, out: np.ndarray) -> None:
        """Convert ``raw`` values into the float32 array ``out`` of the same shape
        (the numbers of :meth:`convert`, without its new array)."""
        np.copyto(out, raw, casting="unsafe")
        if self.offset:
            out -= np.float32(self.offset)
        if self.scale != 1.0:
            out *= np.float32(1.0 / self.scale)

    @property
    def stored_as_returned(self) -> bool:
        """Whether the stored values are the float32 values returned (no conversion)."""
        return (self.component == np.dtype(np.float32) and not self.offset
                and self.scale == 1.0)


def parse_sample_type(name: Any, *, what: str = "dtype", where: str = "",
                      default_order: str = "le") -> tuple[SampleType, bool]:
    """Parse a sample type name.

    Parameters
    ----------
    name : str
        A SigMF-style name (``"cf32_le"``, ``"ci16_be"``, ``"ru8"``), an alias
        (``"cs16"``, ``"fc32"``) or a numpy name (``"complex64"``, ``"<i2"``).
    what : str
        The option's name, used in the error message.
    where : str
        Context put before the error message (e.g. the file name), if any.
    default_order : {"le", "be"}
        Byte order when the name gives none.

    Returns
    -------
    (SampleType, bool)
        The type and whether the name gave the byte order explicitly.

    Raises
    ------
    InputError
        The name is not a sample type; the message lists the known ones.

    Examples
    --------
    >>> stype, explicit = parse_sample_type("cs16_be")
    >>> stype.name, stype.is_complex, stype.itemsize, explicit
    ('ci16_be', True, 4, True)
    """
    prefix = f"{where}: " if where else ""
    text = str(name).strip().lower().replace("-", "_")
    # numpy byte-order prefixes: "<i2", ">c8", "=f4"
    order: str | None = None
    if text[:1] in "<>=|" and text[1:]:
        try:
            dt = np.dtype(text)
        except TypeError:
            dt = None
        if dt is not None and dt.kind in "fiuc":
            bits = dt.itemsize * 8
            kind, num = ("c", "f") if dt.kind == "c" else ("r", dt.kind)
            if dt.kind == "c":
                bits //= 2
            order = {"<": "le", ">": "be"}.get(dt.byteorder, "le" if
                                                  np.little_endian else "be")
            text = f"{kind}{num}{bits}_{order}"
    stem, _, suffix = text.partition("_")
    stem = _ALIASES.get(stem, stem)
    text = f"{stem}_{suffix}" if suffix else stem
    m = _CANONICAL.match(text)
    if m is None or (m["num"] == "f" and m["bits"] not in ("32", "64")) or (
            m["num"] in "iu" and m["bits"] == "64"):
        raise InputError(f"{prefix}{what}={shown(name)} is not a sample type; expected one of "
                         f"{EXAMPLE_TYPES}")
    explicit = m["order"] is not None
    order = m["order"] or default_order
    bits = int(m["bits"])
    comp = np.dtype(f"{m['num']}{bits // 8}").newbyteorder("<" if order == "le" else ">")
    if m["num"] == "i":
        scale, offset = float(2 ** (bits - 1)), 0.0
    elif m["num"] == "u":
        scale, offset = float(2 ** (bits - 1)), float(2 ** (bits - 1))
    else:
        scale, offset = 1.0, 0.0
    base = f"{m['kind']}{m['num']}{bits}"
    canonical = base if bits == 8 else f"{base}_{order}"
    return SampleType(canonical, m["kind"] == "c", comp, scale, offset), explicit


# -- the sample store --------------------------------------------------------------------

class FileArray:
    """Samples stored in a local file, sliced like a ``(samples, width)`` array.

    A slice reads those samples' bytes through a :class:`~.base.SteadyFile` into a
    new array (one copy, no memory map): a file truncated meanwhile raises
    :class:`~.base.FileChangedError` instead of faulting.  The layout options are
    those of :class:`~.remote.RangeArray`, which does the same for URLs.

    Parameters
    ----------
    file : SteadyFile
        The open file.
    offset : int
        Byte offset of the first element.
    dtype : numpy dtype
        Stored element type, with its byte order.
    shape : tuple
        Stored shape, 1-D or 2-D.
    time_axis : int
        The stored axis that is time (0 or 1).
    fortran : bool
        Whether the stored array is in Fortran order.
    """

    ndim = 2

    def __init__(self, file: SteadyFile, offset: int, dtype: Any, shape: tuple[int, ...],
                 time_axis: int = 0, fortran: bool = False) -> None:
        self._file = file
        self.offset = int(offset)
        self.dtype = np.dtype(dtype)
        #: the shape as stored (1-D or 2-D)
        self.stored_shape = tuple(int(n) for n in shape)
        stored = self.stored_shape if len(shape) == 2 else (self.stored_shape[0], 1)
        n, width = stored[time_axis], stored[1 - time_axis]
        self.shape = (n, width)
        # C order (n, w) or Fortran (w, n): a sample's channels lie side by side
        self._interleaved = (time_axis == 0) != bool(fortran) or width == 1
        need = self.offset + n * width * self.dtype.itemsize
        if need > file.size:
            raise RecordingError(f"{file.path}: {n} x {width} {self.dtype} values at byte "
                                 f"{self.offset} need {need} bytes; the file has {file.size}")

    def __len__(self) -> int:
        return self.shape[0]

    def read_into(self, out: np.ndarray, start: int) -> None:
        """Fill ``out`` (C-contiguous, ``(k, width)`` of :attr:`dtype`) with samples from
        ``start`` on; for interleaved storage (a raw file, a SigMF capture)."""
        if not self._interleaved:
            raise ValueError("read_into needs samples stored interleaved")
        self._file.read_into(out, self.offset + start * self.shape[1] * self.dtype.itemsize)

    def __getitem__(self, key: Any) -> np.ndarray:
        if not isinstance(key, slice):
            raise TypeError("a FileArray is sliced along time only")
        a, b, step = key.indices(self.shape[0])
        b = max(a, b)
        n, w = self.shape
        size = self.dtype.itemsize
        if self._interleaved:
            out = np.empty((b - a, w), self.dtype)
            self._file.read_into(out, self.offset + a * w * size)
        else:  # one run of bytes per channel
            rows = np.empty((w, b - a), self.dtype)
            for c in range(w):
                self._file.read_into(rows[c], self.offset + (c * n + a) * size)
            out = rows.T
        return out[::step] if step != 1 else out


#: bytes of stored samples read and converted at a time (fits a core's cache)
_PIECE_BYTES = 1 << 18


@dataclass
class _Segment:
    first: int  # first sample index of the segment
    count: int
    array: Any  # FileArray or RangeArray shaped (count, channels * components)


class SampleMap:
    """Samples of a raw file as segments of one open file.

    One segment for a plain raw file; SigMF captures with their own header bytes
    give one segment per capture.  All segments read through one descriptor,
    however many there are.

    Parameters
    ----------
    path : Path
        The file.
    stype : SampleType
    n_channels : int
    segments : list of (first_sample, n_samples, byte_offset)
    file : SteadyFile, optional
        The file already open (its size at open is what the segments were laid out
        on); the map closes it.  Opened here when not given.
    """

    def __init__(self, path: Path, stype: SampleType, n_channels: int,
                 segments: list[tuple[int, int, int]], file: SteadyFile | None = None) -> None:
        self.stype = stype
        self.n_channels = n_channels
        self.segments: list[_Segment] = []
        self._file: SteadyFile | None = None
        width = n_channels * stype.components
        try:
            if not isinstance(path, UrlPath):
                self._file = file if file is not None else SteadyFile(path)
            for first, count, byte_offset in segments:
                if count <= 0:
                    continue
                if self._file is None:  # a URL: read by range
                    arr: Any = RangeArray(path.open("rb"), byte_offset, stype.component,
                                          (count, width))
                else:
                    arr = FileArray(self._file, byte_offset, stype.component, (count, width))
                self.segments.append(_Segment(first, count, arr))
        except (OSError, ValueError) as exc:
            self.close()
            if isinstance(exc, RecordingError):
                raise
            raise RecordingError(f"{path}: cannot open the samples ({exc})") from None

    def read(self, start: int, stop: int) -> np.ndarray:
        pieces = []
        for seg in self.segments:
            a, b = max(start, seg.first), min(stop, seg.first + seg.count)
            if a < b:
                if isinstance(seg.array, FileArray):
                    pieces.append(self._read_file(seg.array, a - seg.first, b - seg.first))
                else:
                    pieces.append(self.stype.convert(seg.array[a - seg.first:b - seg.first]))
        dtype = np.complex64 if self.stype.is_complex else np.float32
        if not pieces:
            return np.zeros((0, self.n_channels), dtype)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    @property
    def file(self) -> SteadyFile | None:
        """The open file the segments read (None for a URL, or once closed)."""
        return self._file

    def _read_file(self, arr: FileArray, a: int, b: int) -> np.ndarray:
        """Samples ``a:b`` of a segment: float32 read straight into the result, other
        types through a small buffer (in cache) converted piece by piece."""
        st = self.stype
        width = arr.shape[1]
        out = np.empty((b - a, width), np.float32)
        if st.stored_as_returned:
            arr.read_into(out, a)
        else:
            rows = max(1, _PIECE_BYTES // (width * st.component.itemsize))
            buf = np.empty((min(rows, b - a), width), st.component)
            for i in range(a, b, rows):
                k = min(rows, b - i)
                arr.read_into(buf[:k], i)
                st.convert_into(buf[:k], out[i - a:i - a + k])
        return out.view(np.complex64) if st.is_complex else out

    def close(self) -> None:
        self.segments = []
        if self._file is not None:
            self._file.close()
            self._file = None


# -- the reader -----------------------------------------------------------------------

class RawRecording(Recording):
    """Headerless samples, read by offset through one descriptor (no memory map).

    Parameters
    ----------
    path : path-like
    dtype : str
        Sample type (see the module docstring); may be omitted when the
        extension names it.
    sample_rate : float or str
        Samples per second per channel; required.
    center_frequency : float or str, optional
        Centre frequency in Hz of an IQ capture.
    offset : int
        Header bytes to skip at the start of the file.
    n_channels : int
        Interleaved channels (default 1).
    """

    format = "raw"
    units = "FS"

    def __init__(self, path: str | os.PathLike[str], *, dtype: str | None = None,
                 sample_rate: float | str | None = None,
                 center_frequency: float | str | None = None,
                 offset: int | str = 0, n_channels: int | str = 1) -> None:
        super().__init__(path)
        p = self.path
        if dtype is None:
            stem = EXTENSION_TYPES.get(p.suffix.lower())
            if stem is None:
                raise MissingOption("dtype", f"the extension {p.suffix or '(none)'} does not "
                                    "say how samples are stored", path=p,
                                    example=EXAMPLE_TYPES)
            dtype = stem
        stype, _ = parse_sample_type(dtype, where=str(p))
        if sample_rate is None:
            raise MissingOption("sample_rate", "raw samples carry no sample rate", path=p,
                                example="2.4M")
        self.sample_rate = parse_number(sample_rate, "sample_rate", positive=True, where=str(p))
        if center_frequency is not None:
            self.center_frequency = parse_number(center_frequency, "center_frequency",
                                                 where=str(p))
        header = parse_count(offset, "offset", where=str(p))
        channels = parse_count(n_channels, "n_channels", minimum=1, where=str(p))
        file = open_steady(p)
        try:
            size = p.stat().st_size if file is None else file.size
            self.n_samples = self._layout(size, header, stype, channels)
            self._map = SampleMap(p, stype, channels, [(0, self.n_samples, header)], file)
        except BaseException:
            if file is not None:
                file.close()
            raise
        self.n_channels = channels
        self.is_complex = stype.is_complex
        self.sample_type = stype
        self.metadata = {"dtype": stype.name, "offset": header, "file_size": size}
        self.format = f"raw {stype.name}"

    def _layout(self, size: int, header: int, stype: SampleType, channels: int) -> int:
        """Samples per channel in ``size`` bytes after ``header``; errors name the file."""
        p = self.path
        if header > size:
            raise InputError(f"{p}: offset={header} is past the end of the file "
                             f"({size} bytes)")
        frame = stype.itemsize * channels
        body = size - header
        if body == 0:
            raise RecordingError(f"{p}: holds no samples ({size} bytes"
                                 + (f", offset={header}" if header else "") + ")")
        if body % frame:
            raise RecordingError(
                f"{p}: {body} bytes of samples is not a multiple of {frame} bytes "
                f"({stype.name}, {channels} channel(s)); wrong dtype/offset, or a "
                "truncated file")
        return body // frame

    def _read(self, start: int, stop: int) -> np.ndarray:
        return self._map.read(start, stop)

    def close(self) -> None:
        self._map.close()


def open_steady(path: Any) -> SteadyFile | None:
    """A local file opened for reading by offset (:class:`~.base.SteadyFile`); None for a URL.

    Raises
    ------
    RecordingError
        The file cannot be opened (one line with the system's reason).
    """
    if isinstance(path, UrlPath):
        return None
    try:
        return SteadyFile(path)
    except OSError as exc:
        raise RecordingError(f"{path}: cannot open ({exc.strerror or exc})") from None


def open_raw(path: str | os.PathLike[str], *, dtype: str | None = None,
             sample_rate: float | str | None = None,
             center_frequency: float | str | None = None,
             offset: int | str = 0, n_channels: int | str = 1) -> RawRecording:
    """Open headerless samples; see :class:`RawRecording`."""
    return RawRecording(path, dtype=dtype, sample_rate=sample_rate,
                        center_frequency=center_frequency, offset=offset,
                        n_channels=n_channels)


register_reader("raw", tuple(EXTENSION_TYPES) + GENERIC_EXTENSIONS, open_raw, priority=0,
                description="raw binary samples (cf32, ci16, cu8 ...)")
