"""Raw binary samples: headerless IQ or real data, memory-mapped.

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
from .base import Recording, register_reader
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


# -- memory-mapped sample store ---------------------------------------------------------

@dataclass
class _Segment:
    first: int  # first sample index of the segment
    count: int
    array: np.ndarray  # memmap shaped (count, channels * components)


class SampleMap:
    """Samples of a raw file as memory-mapped segments.

    One segment for a plain raw file; SigMF captures with their own header bytes
    give one segment per capture.

    Parameters
    ----------
    path : Path
        The file.
    stype : SampleType
    n_channels : int
    segments : list of (first_sample, n_samples, byte_offset)
    """

    def __init__(self, path: Path, stype: SampleType, n_channels: int,
                 segments: list[tuple[int, int, int]]) -> None:
        self.stype = stype
        self.n_channels = n_channels
        self.segments: list[_Segment] = []
        width = n_channels * stype.components
        for first, count, byte_offset in segments:
            if count <= 0:
                continue
            try:
                if isinstance(path, UrlPath):  # read by range, not mapped
                    mm: Any = RangeArray(path.open("rb"), byte_offset, stype.component,
                                         (count, width))
                else:
                    mm = np.memmap(path, dtype=stype.component, mode="r",
                                   offset=byte_offset, shape=(count, width))
            except (OSError, ValueError) as exc:
                raise RecordingError(f"{path}: cannot map the samples ({exc})") from None
            self.segments.append(_Segment(first, count, mm))

    def read(self, start: int, stop: int) -> np.ndarray:
        pieces = []
        for seg in self.segments:
            a, b = max(start, seg.first), min(stop, seg.first + seg.count)
            if a < b:
                pieces.append(self.stype.convert(seg.array[a - seg.first:b - seg.first]))
        dtype = np.complex64 if self.stype.is_complex else np.float32
        if not pieces:
            return np.zeros((0, self.n_channels), dtype)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def close(self) -> None:
        # numpy closes the mapping when the last view goes away
        self.segments = []


# -- the reader -----------------------------------------------------------------------

class RawRecording(Recording):
    """Headerless samples, memory-mapped.

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
        size = p.stat().st_size
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
        self.n_samples = body // frame
        self.n_channels = channels
        self.is_complex = stype.is_complex
        self.sample_type = stype
        self._map = SampleMap(p, stype, channels, [(0, self.n_samples, header)])
        self.metadata = {"dtype": stype.name, "offset": header, "file_size": size}
        self.format = f"raw {stype.name}"

    def _read(self, start: int, stop: int) -> np.ndarray:
        return self._map.read(start, stop)

    def close(self) -> None:
        self._map.close()


def open_raw(path: str | os.PathLike[str], *, dtype: str | None = None,
             sample_rate: float | str | None = None,
             center_frequency: float | str | None = None,
             offset: int | str = 0, n_channels: int | str = 1) -> RawRecording:
    """Open headerless samples; see :class:`RawRecording`."""
    return RawRecording(path, dtype=dtype, sample_rate=sample_rate,
                        center_frequency=center_frequency, offset=offset,
                        n_channels=n_channels)


register_reader("raw", tuple(EXTENSION_TYPES) + GENERIC_EXTENSIONS, open_raw, priority=0,
                description="raw binary samples (cf32, ci16, cu8 ...), memory-mapped")
