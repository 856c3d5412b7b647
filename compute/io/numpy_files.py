"""NumPy ``.npy`` (read by offset) and MATLAB ``.mat`` files.

``.npy`` holds no sample rate, so ``sample_rate=`` is required.  MATLAB
files pick a variable with ``variable=`` (or ``dataset=``, ``FILE.mat:NAME``);
a file with one numeric vector or matrix
opens without naming it.  The sample rate comes from a scalar variable named
``fs``, ``Fs``, ``sample_rate`` ... when there is one.  v7.3 files are HDF5 and
are read lazily through :mod:`.hdf5`; v4/v5 files go through
``scipy.io.loadmat``, which loads the chosen variable (only it) into memory:
those formats cannot hold more than 2 GiB per variable anyway.  A v5 file is
described from its element headers alone (compressed ones inflated only as far
as their headers), its variable checked against the memory budget
(:func:`~specscope.compute.params.check_bytes`) and loaded at the first read, so
``info`` on a small file declaring gigabytes of zeros reads kilobytes.

Arrays are 1-D or 2-D, ``(samples, channels)`` unless wider than tall.
Values are returned as they are (cast to float32 / complex64), in units
"a.u." unless the file says otherwise.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, MissingOption, RecordingError, shown
from ..params import check_bytes, parse_number
from .base import Recording, SteadyFile, register_reader, time_axis
from .hdf5 import DatasetInfo, HDF5Recording, is_hdf5
from .raw import FileArray, open_steady
from .remote import RangeArray, UrlPath, as_path, open_binary

RATE_VARIABLES = ("fs", "Fs", "FS", "sample_rate", "sampleRate", "samplerate", "srate",
                  "SampleRate", "sampling_rate")
_MAT_NUMERIC = {"double", "single", "int8", "int16", "int32", "int64", "uint8", "uint16",
                "uint32", "uint64"}


def _shape_of(arr_shape: tuple[int, ...], where: str) -> tuple[int, int]:
    """(time axis, channels) of a 1-D / 2-D shape, or a RecordingError."""
    if len(arr_shape) not in (1, 2):
        raise RecordingError(f"{where}: is {len(arr_shape)}-D {tuple(arr_shape)}; expected "
                             "1-D (samples) or 2-D (samples x channels)")
    ax = time_axis(arr_shape)
    ch = arr_shape[1 - ax] if len(arr_shape) == 2 else 1
    if arr_shape[ax] == 0 or ch == 0:
        raise RecordingError(f"{where}: holds no samples (shape {tuple(arr_shape)})")
    return ax, int(ch)


class _ArrayRecording(Recording):
    """A recording over a 1-D / 2-D array (memmap or in memory)."""

    units = "a.u."

    def _use_array(self, arr: np.ndarray, where: str) -> None:
        if arr.dtype.kind not in "fiucb":
            raise RecordingError(f"{where}: holds {arr.dtype} values, not numbers")
        ax, ch = _shape_of(arr.shape, where)
        self._arr = arr if arr.ndim == 2 else arr[:, None]
        if ax == 1:
            self._arr = self._arr.T
        self._time_axis = ax
        self.n_samples = int(self._arr.shape[0])
        self.n_channels = ch
        self.is_complex = arr.dtype.kind == "c"

    def _use_range_array(self, arr: RangeArray, where: str) -> None:
        """Samples read by range or offset (RangeArray, FileArray): already (samples, width)."""
        if arr.dtype.kind not in "fiucb" or arr.dtype.names:
            raise RecordingError(f"{where}: holds {arr.dtype} values, not numbers")
        ax, ch = _shape_of(arr.stored_shape, where)
        self._arr = arr
        self._time_axis = ax
        self.n_samples = int(arr.shape[0])
        self.n_channels = ch
        self.is_complex = arr.dtype.kind == "c"

    def _read(self, start: int, stop: int) -> np.ndarray:
        return np.asarray(self._arr[start:stop])

    def close(self) -> None:
        self._arr = np.zeros((0, self.n_channels))


def _npy_holds_objects(path: Path) -> bool:
    """Whether a ``.npy`` header declares Python objects (read only with pickle).

    False when the header cannot be read: loading it then says what is wrong.
    """
    fmt = np.lib.format
    try:
        with open_binary(path) as fh:
            version = fmt.read_magic(fh)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            _shape, _fortran, dtype = read(fh)
    except Exception:  # noqa: BLE001 - a damaged header: np.load names the problem
        return False
    return bool(dtype.hasobject)


#: most bytes of a ``.npy`` header read (numpy itself refuses headers over 10,000 bytes)
_NPY_HEADER_BYTES = 1 << 16


def _npy_header(fh: Any, path: Any, size: int) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """(shape, fortran order, dtype, data offset) of a ``.npy`` header read from ``fh``.

    Raises
    ------
    RecordingError
        The header is damaged, describes no numbers, or more bytes than ``size``.
    """
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read(fh)
    except Exception as exc:  # noqa: BLE001 - numpy's header parser fails many ways
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RecordingError(f"{path}: not a readable .npy file ({msg})") from None
    if dtype.hasobject:
        raise RecordingError(f"{path}: holds Python objects, not numbers")
    if dtype.names:
        raise RecordingError(f"{path}: holds a structured array {dtype}, not numbers")
    if any(int(n) < 0 for n in shape):
        raise RecordingError(f"{path}: not a readable .npy file (negative dimension in "
                             f"{tuple(shape)})")
    _shape_of(shape, str(path))
    offset = fh.tell()
    need = offset + int(np.prod(shape, dtype=object)) * dtype.itemsize
    if size < need:
        raise RecordingError(f"{path}: not a readable .npy file (the header states "
                             f"{tuple(shape)} {dtype}, {need} bytes, and the file has {size})")
    return tuple(int(n) for n in shape), bool(fortran), dtype, offset


def _remote_npy(path: UrlPath) -> RangeArray:
    """A ``.npy`` file behind a URL: its header read, its samples left to range reads."""
    fh = path.open("rb")
    shape, fortran, dtype, offset = _npy_header(fh, path, path.stat().st_size)
    return RangeArray(fh, offset, dtype, shape, time_axis(shape), fortran)


def _local_npy(path: Path, file: SteadyFile) -> FileArray:
    """A local ``.npy`` file: its header read, its samples left to reads by offset."""
    head = io.BytesIO(file.read_bytes(0, min(file.size, _NPY_HEADER_BYTES)))
    shape, fortran, dtype, offset = _npy_header(head, path, file.size)
    return FileArray(file, offset, dtype, shape, time_axis(shape), fortran)


class NpyRecording(_ArrayRecording):
    """A ``.npy`` array, read by offset through one descriptor (no memory map).

    Parameters
    ----------
    path : path-like
    sample_rate : float or str
        Required: ``.npy`` files carry no sample rate.
    center_frequency : float or str, optional
    """

    format = "NPY"
    _file: SteadyFile | None = None

    def __init__(self, path: str | os.PathLike[str], *,
                 sample_rate: float | str | None = None,
                 center_frequency: float | str | None = None) -> None:
        super().__init__(path)
        p = self.path
        if _npy_holds_objects(p):
            raise RecordingError(f"{p}: holds Python objects, not numbers")
        if isinstance(p, UrlPath):
            arr: Any = _remote_npy(p)
        else:
            file = open_steady(p)
            try:
                arr = _local_npy(p, file)
            except BaseException:
                file.close()
                raise
            self._file = file
        self._use_range_array(arr, str(p))
        if sample_rate is None:
            raise MissingOption("sample_rate", ".npy files carry no sample rate", path=p)
        self.sample_rate = parse_number(sample_rate, "sample_rate", positive=True, where=str(p))
        if center_frequency is not None:
            self.center_frequency = parse_number(center_frequency, "center_frequency",
                                                 where=str(p))
        self.metadata = {"shape": list(arr.stored_shape), "stored_dtype": str(arr.dtype),
                         "time_axis": self._time_axis}

    def close(self) -> None:
        super().close()
        file, self._file = self._file, None
        if file is not None:
            file.close()


def open_npy(path: str | os.PathLike[str], *, sample_rate: float | str | None = None,
             center_frequency: float | str | None = None) -> NpyRecording:
    """Open a ``.npy`` array; see :class:`NpyRecording`."""
    return NpyRecording(path, sample_rate=sample_rate, center_frequency=center_frequency)


# -- MATLAB ----------------------------------------------------------------------------

def _pick_variable(path: Path, variable: str | None, candidates: list[str],
                   described: list[str], everything: list[str]) -> str:
    if variable is not None:
        if variable not in everything:
            raise InputError(f"{path}: no variable {shown(variable)}; variables: "
                             f"{', '.join(described) or ', '.join(everything) or 'none'}")
        return variable
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise RecordingError(f"{path}: holds no numeric vector or matrix; variables: "
                             f"{', '.join(everything) or 'none'}")
    raise MissingOption("variable", f"holds {len(candidates)} signals", path=path,
                        choices=candidates, labels=[described[everything.index(c)]
                                                    for c in candidates],
                        also=f"{path.name}:NAME",
                        action="pick one with")


# -- a structural check of MAT v5 files ---------------------------------------------------
# scipy's compiled v5 reader can crash the interpreter on a damaged file (sizes in
# the tags that disagree with the dimensions); the elements we are about to load are
# checked here first, so a damaged file gives a message instead.

_MI_SIZES = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8}
_MX_NUMERIC = range(6, 16)  # mxDOUBLE_CLASS .. mxUINT64_CLASS


def _tag(buf: bytes, pos: int, end: int, e: str,
         known: int | None = None) -> tuple[int, int, int]:
    """(type, nbytes, data position) of the element at ``pos``; ValueError if damaged.

    ``end`` is where the enclosing element ends; ``known`` how much of it ``buf``
    holds (the tag itself must be in it).
    """
    if pos + 8 > (end if known is None else known):
        raise ValueError("element tag past the end")
    word = int.from_bytes(buf[pos:pos + 4], e)
    if word >> 16:  # small data element: data packed into the tag
        nbytes, mtype = word >> 16, word & 0xFFFF
        if nbytes > 4:
            raise ValueError("bad small element")
        return mtype, nbytes, pos + 4
    nbytes = int.from_bytes(buf[pos + 4:pos + 8], e)
    if pos + 8 + nbytes > end:
        raise ValueError("element runs past the end")
    return word, nbytes, pos + 8


def _next(pos: int, nbytes: int, small: bool) -> int:
    return pos + 8 if small else pos + 8 + ((nbytes + 7) // 8) * 8


#: bytes of a variable's element read (decompressed) to learn its header
_HEADER_BYTES = 1 << 16
_MX_NAMES = {1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse", 6: "double", 7: "single", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16",
             12: "int32", 13: "uint32", 14: "int64", 15: "uint64"}
_MX_ITEMSIZE = {6: 8, 7: 4, 8: 1, 9: 1, 10: 2, 11: 2, 12: 4, 13: 4, 14: 8, 15: 8}


@dataclass(frozen=True)
class _MatVar:
    """What a MAT v5 element's header says: name, dimensions, class, complexity."""

    name: str
    dims: tuple[int, ...]
    mx_class: int
    is_complex: bool
    #: where the element starts in the file and its length with the tag
    offset: int = 0
    length: int = 0

    @property
    def nbytes(self) -> int:
        """Bytes the variable takes loaded (as scipy loads it)."""
        count = int(np.prod(self.dims, dtype=object))
        return count * _MX_ITEMSIZE.get(self.mx_class, 8) * (2 if self.is_complex else 1)


def _check_matrix(buf: bytes, e: str, total: int) -> _MatVar:
    """Check the header of one miMATRIX body.

    ``buf`` is the start of the body (at least its header) and ``total`` the
    body's length as its tag states; data tags are checked against it, the data
    itself is not read.
    """
    end = len(buf)
    pos = 0
    mtype, n, data = _tag(buf, pos, end, e)
    if mtype != 6 or n != 8:
        raise ValueError("bad array flags")
    flags = int.from_bytes(buf[data:data + 4], e)
    cls, is_complex = flags & 0xFF, bool(flags & 0x0800)
    pos = _next(pos, n, data == pos + 4)
    mtype, n, data = _tag(buf, pos, end, e)
    if mtype != 5 or n % 4 or n == 0:
        raise ValueError("bad dimensions")
    dims = tuple(int.from_bytes(buf[data + 4 * k:data + 4 * k + 4], e, signed=True)
                 for k in range(n // 4))
    if any(d < 0 for d in dims):
        raise ValueError("negative dimension")
    pos = _next(pos, n, data == pos + 4)
    mtype, n, data = _tag(buf, pos, end, e)
    if mtype != 1:
        raise ValueError("bad name")
    name = buf[data:data + n].decode("latin-1")
    pos = _next(pos, n, data == pos + 4)
    if cls in _MX_NUMERIC:
        count = int(np.prod(dims, dtype=object))
        for _part in range(2 if is_complex else 1):
            mtype, n, data = _tag(buf, pos, max(end, total), e, known=end)
            size = _MI_SIZES.get(mtype)
            if size is None or n != count * size:
                raise ValueError(f"data of {name} does not match its dimensions")
            pos = _next(pos, n, data == pos + 4)
    return _MatVar(name, dims, cls, is_complex)


def _mat_v5_listing(path: Path) -> list[_MatVar] | None:
    """The variables of a MAT v5 file from their headers alone; None for a v4 file.

    Compressed variables are decompressed only as far as their headers, so a
    small file declaring gigabytes of zeros is described without inflating it.

    Raises
    ------
    RecordingError
        A variable's element is damaged.
    """
    import zlib

    size = path.stat().st_size
    out: list[_MatVar] = []
    with open_binary(path) as fh:
        head = fh.read(128)
        if len(head) < 128:
            return None  # v4 or too short: scipy reports these itself
        e = {b"IM": "little", b"MI": "big"}.get(head[126:128])
        if e is None:
            return None  # a v4 file; scipy's v4 reader is pure Python
        pos = 128
        try:
            while pos < size:
                fh.seek(pos)
                tag = fh.read(8)
                mtype, n, data = _tag(tag, 0, size - pos, e, known=len(tag))
                data += pos
                if data + n > size:
                    raise ValueError("element runs past the end")
                if mtype == 15:  # miCOMPRESSED: one element, zlib-compressed
                    inflate = zlib.decompressobj()
                    inner = b""
                    left = n
                    while len(inner) < _HEADER_BYTES and left > 0 and not inflate.eof:
                        piece = fh.read(min(left, 1 << 16))
                        left -= len(piece)
                        inner += inflate.decompress(piece, _HEADER_BYTES - len(inner))
                        while (inflate.unconsumed_tail and len(inner) < _HEADER_BYTES):
                            inner += inflate.decompress(inflate.unconsumed_tail,
                                                        _HEADER_BYTES - len(inner))
                    itype, inn, idata = _tag(inner, 0, 1 << 62, e, known=len(inner))
                    if itype == 14:
                        v = _check_matrix(inner[idata:idata + inn], e, inn)
                        out.append(replace(v, offset=pos, length=data + n - pos))
                    pos = data + n
                else:
                    nxt = _next(pos, n, data == pos + 4)
                    if mtype == 14:
                        body = fh.read(min(n, _HEADER_BYTES))
                        v = _check_matrix(body, e, n)
                        out.append(replace(v, offset=pos, length=min(nxt, size) - pos))
                    pos = nxt
        except (ValueError, zlib.error, IndexError) as exc:
            raise RecordingError(f"{path}: damaged MATLAB file ({exc})") from None
    return out


class MatV5Recording(_ArrayRecording):
    """One variable of a MATLAB v4/v5/v7 file, loaded with ``scipy.io.loadmat``."""

    format = "MAT v5"

    def __init__(self, path: str | os.PathLike[str], *, variable: str | None,
                 sample_rate: Any, center_frequency: Any) -> None:
        import scipy.io

        super().__init__(path)
        p = self.path
        v5 = _mat_v5_listing(p)
        if v5 is None:
            try:
                listing = scipy.io.whosmat(p)
            except Exception as exc:  # noqa: BLE001 - scipy fails on bad files in many ways
                msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise RecordingError(f"{p}: not a readable MATLAB file ({msg})") from None
        else:
            listing = [(v.name, v.dims, _MX_NAMES.get(v.mx_class, "other")) for v in v5]
        names = [n for n, _s, _c in listing]
        cands = [n for n, shape, cls in listing
                 if cls in _MAT_NUMERIC and len(shape) == 2 and int(np.prod(shape)) > 1
                 and n not in RATE_VARIABLES]
        described = [f"{n} ({'x'.join(map(str, s))} {c})" for n, s, c in listing]
        var = _pick_variable(p, variable, cands, described, names)
        rate_var = next((n for n in RATE_VARIABLES if n in names), None)
        wanted = [var] + ([rate_var] if rate_var and sample_rate is None else [])
        declared = next((v for v in v5 or () if v.name == var), None)
        self._v5, self._declared, self.variable = v5, declared, var
        lazy = declared is not None and declared.mx_class in _MX_NUMERIC
        if lazy:
            # the header tells shape and type: the samples wait for the first read
            shown_dims = "x".join(map(str, declared.dims))
            check_bytes(declared.nbytes, f"variable {shown(var)} ({shown_dims} "
                        f"{_MX_NAMES.get(declared.mx_class, 'other')})", where=str(p))
            ax, ch = _shape_of(declared.dims, f"{p}:{var}")
            self._arr = None
            self._time_axis = ax
            self.n_samples = int(declared.dims[ax])
            self.n_channels = ch
            self.is_complex = declared.is_complex
            shape = list(declared.dims)
            stored = {"double": "float64", "single": "float32"}.get(
                _MX_NAMES[declared.mx_class], _MX_NAMES[declared.mx_class])
            data = self._load([rate_var]) if rate_var and sample_rate is None else {}
        else:
            data = self._load(wanted)
            arr = data.get(var)
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiucb":
                raise RecordingError(f"{p}: variable {shown(var)} is not a numeric array")
            self._use_array(arr, f"{p}:{var}")
            shape, stored = list(arr.shape), str(arr.dtype)
        if sample_rate is not None:
            self.sample_rate = parse_number(sample_rate, "sample_rate", positive=True,
                                            where=str(p))
            source = "option"
        elif rate_var is not None and np.size(data.get(rate_var)) == 1:
            self.sample_rate = parse_number(np.asarray(data[rate_var]).ravel()[0].item(),
                                            rate_var, positive=True, where=str(p))
            source = f"variable {rate_var}"
        else:
            raise MissingOption("sample_rate", "no sample rate variable "
                                f"({', '.join(RATE_VARIABLES[:4])})", path=p)
        if center_frequency is not None:
            self.center_frequency = parse_number(center_frequency, "center_frequency",
                                                 where=str(p))
        self.metadata = {"variable": var, "shape": shape,
                         "stored_dtype": stored, "time_axis": self._time_axis,
                         "sample_rate_source": source, "variables": described}

    def _load(self, names: list[str]) -> dict[str, Any]:
        """Load variables with scipy; of a v5 file only their elements are read."""
        import io

        import scipy.io

        p = self.path
        source: Any = p
        if self._v5 is not None:
            with open_binary(p) as fh:
                parts = [fh.read(128)]
                for v in self._v5:
                    if v.name in names:
                        fh.seek(v.offset)
                        parts.append(fh.read(v.length))
            source = io.BytesIO(b"".join(parts))
        try:
            return scipy.io.loadmat(source, variable_names=names, squeeze_me=False,
                                    mat_dtype=False)
        except Exception as exc:  # noqa: BLE001 - scipy fails on bad files in many ways
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{p}: cannot read variable {shown(names[0])} ({msg})") from None

    def _read(self, start: int, stop: int) -> np.ndarray:
        if self._arr is None:
            var = self.variable
            arr = self._load([var]).get(var)
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiucb":
                raise RecordingError(f"{self.path}: variable {shown(var)} is not a numeric array")
            if self._declared is not None and tuple(arr.shape) != self._declared.dims:
                raise RecordingError(f"{self.path}: variable {shown(var)} holds {arr.shape}, its "
                                     f"header says {self._declared.dims}")
            self._use_array(arr, f"{self.path}:{var}")
        return super()._read(start, stop)


class MatV73Recording(HDF5Recording):
    """One variable of a MATLAB v7.3 (HDF5) file, read lazily."""

    _kind = "MAT v7.3"
    _option_name = "variable"

    def _candidates(self, infos: list[DatasetInfo]) -> list[DatasetInfo]:
        out = []
        for i in infos:
            top = i.path.strip("/")
            if not i.plausible or "/" in top or top.startswith("#"):
                continue
            if top in RATE_VARIABLES:
                continue
            cls = self._file[i.path].attrs.get("MATLAB_class", b"double")
            cls = cls.decode() if isinstance(cls, bytes) else str(cls)
            if cls in _MAT_NUMERIC:
                out.append(i)
        return out

    def _file_rate(self, ds: Any) -> tuple[float, str] | None:
        for n in RATE_VARIABLES:
            obj = self._file.get(n)
            if obj is not None and getattr(obj, "size", 0) == 1 and obj.dtype.kind in "fiu":
                try:
                    return (parse_number(np.asarray(obj[()]).ravel()[0].item(), n,
                                         positive=True, where=str(self.path)),
                            f"variable {n}")
                except InputError:
                    return None
        return super()._file_rate(ds)


def open_mat(path: str | os.PathLike[str], *, variable: str | None = None,
             dataset: str | None = None, sample_rate: float | str | None = None,
             center_frequency: float | str | None = None) -> Recording:
    """Open one variable of a MATLAB file (v4, v5, v7 or v7.3).

    ``variable`` and ``dataset`` are the same option (the CLI's ``--dataset``).
    """
    p = as_path(path)
    if variable is not None and dataset is not None and str(variable) != str(dataset):
        raise InputError(f"{p}: variable={shown(variable)} and dataset={shown(dataset)} disagree; "
                         "give one")
    var = variable if variable is not None else dataset
    if is_hdf5(p):
        name = None if var is None else "/" + str(var).lstrip("/")
        return MatV73Recording(p, dataset=name, sample_rate=sample_rate,
                               center_frequency=center_frequency)
    return MatV5Recording(p, variable=None if var is None else str(var),
                          sample_rate=sample_rate, center_frequency=center_frequency)


def _sniff_npy(path: Path) -> bool:
    with open_binary(path) as fh:
        return fh.read(6) == b"\x93NUMPY"


def _sniff_mat(path: Path) -> bool:
    with open_binary(path) as fh:
        return fh.read(7) == b"MATLAB "


register_reader("npy", (".npy",), open_npy, sniff=_sniff_npy, priority=25,
                description="NumPy .npy arrays")
register_reader("mat", (".mat",), open_mat, sniff=_sniff_mat, priority=25,
                description="MATLAB .mat (v4, v5, v7, v7.3)")
