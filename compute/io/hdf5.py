"""HDF5 datasets as recordings, read lazily through h5py slicing.

Which dataset: ``dataset="/group/name"``, or the path syntax
``FILE.h5:/group/name``; a file with exactly one plausible signal (a numeric
1-D or 2-D dataset that is not a dimension scale, a spectrogram or provenance)
opens without naming it, otherwise the message lists the candidates.
:func:`list_datasets` gives the same list to a GUI chooser.

The sample rate comes from an attribute of the dataset or of a group above it
(``sample_rate``, ``fs``, ``samplerate`` ...), from a time dimension scale, or
from the ``sample_rate`` option, which overrides the file.  A 2-D dataset is
``(samples, channels)`` unless it is wider than tall.  Complex data may be
native complex or a compound of two float fields (``r``/``i``, ``real``/``imag``,
``re``/``im``, ``I``/``Q``).

Safety: external links are never followed, and datasets whose storage or
virtual sources live in other files are refused; filters whose plugin is
missing are reported at open time, not as a crash on the first read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..annotations.hdf5_table import GROUP, read_table
from ..errors import InputError, MissingOption, RecordingError, shown
from ..params import parse_number
from .base import Recording, register_reader, time_axis
from .remote import UrlPath, as_path, open_binary

_SIGNATURE = b"\x89HDF\r\n\x1a\n"
RATE_ATTRS = ("sample_rate", "sampling_rate", "samplerate", "sample_rate_hz", "fs", "Fs",
              "FS", "SampleRate", "sampleRate")
FREQ_ATTRS = ("center_frequency", "centre_frequency", "center_freq", "center_frequency_hz",
              "fc", "Fc")
TIME_ATTRS = ("start_time", "datetime", "start_datetime", "time_start")
_COMPLEX_FIELDS = (("r", "i"), ("real", "imag"), ("re", "im"), ("I", "Q"), ("i", "q"))
_MAX_LISTED = 12


def is_hdf5(path: Path) -> bool:
    """True when the HDF5 signature is at 0 or at a user-block offset (512, 1024 ...)."""
    with open_binary(path) as fh:
        if fh.read(8) == _SIGNATURE:
            return True
        size = path.stat().st_size
        off = 512
        while off + 8 <= size and off <= 1 << 20:
            fh.seek(off)
            if fh.read(8) == _SIGNATURE:
                return True
            off *= 2
    return False


@dataclass(frozen=True)
class DatasetInfo:
    """One dataset in an HDF5 file, as a chooser shows it."""

    path: str
    shape: tuple[int, ...]
    dtype: str
    #: whether it looks like a signal specscope can open
    plausible: bool
    #: why not, when it is not plausible
    reason: str = ""
    sample_rate: float | None = None

    def describe(self) -> str:
        if not self.dtype:  # a link or something unreadable
            return f"{self.path} ({self.reason})"
        shape = "x".join(str(n) for n in self.shape) or "scalar"
        return f"{self.path} ({shape} {self.dtype})"


def _open_file(path: Path) -> Any:
    import h5py

    if isinstance(path, UrlPath):  # h5py reads through a file object, by range
        try:
            return h5py.File(path.open("rb"), "r")
        except OSError as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{path}: not a readable HDF5 file ({msg})") from None
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    try:  # a live recording in progress (locked for writing), or one whose writer was killed
        return h5py.File(path, "r", swmr=True)
    except OSError:
        pass
    # h5py's first line says what HDF5 found ("truncated file: eof = ...", "file signature
    # not found"); it has no types of its own to tell them apart
    raise RecordingError(f"{path}: not a readable HDF5 file ({msg})") from None


def _complex_fields(dtype: np.dtype) -> tuple[str, str] | None:
    if dtype.names and len(dtype.names) == 2:
        for a, b in _COMPLEX_FIELDS:
            if dtype.names == (a, b) and all(dtype.fields[n][0].kind == "f" for n in (a, b)):
                return a, b
    return None


def _is_numeric(dtype: np.dtype) -> bool:
    return dtype.kind in "fiuc" or _complex_fields(dtype) is not None


def _walk(group: Any, prefix: str = "") -> Iterator[tuple[str, Any, str]]:
    """Yield (path, dataset or None, note) without following external or soft links."""
    import h5py

    for name in group:
        link = group.get(name, getlink=True)
        path = f"{prefix}/{name}"
        if isinstance(link, h5py.ExternalLink):
            yield path, None, f"external link to {link.filename}:{link.path} (not followed)"
            continue
        if isinstance(link, h5py.SoftLink):
            continue  # the target is listed under its own name
        try:
            obj = group[name]
        except (KeyError, OSError):
            yield path, None, "unreadable"
            continue
        if isinstance(obj, h5py.Group):
            yield from _walk(obj, path)
        elif isinstance(obj, h5py.Dataset):
            yield path, obj, ""


def _is_scale(ds: Any) -> bool:
    cls = ds.attrs.get("CLASS")
    return (cls.decode() if isinstance(cls, bytes) else cls) == "DIMENSION_SCALE"


def _not_plausible(path: str, ds: Any) -> str:
    """Why a dataset is not a signal to open by default ("" when it is)."""
    if not _is_numeric(ds.dtype):
        return "not numeric"
    if ds.ndim not in (1, 2):
        return f"{ds.ndim}-D"
    if ds.size < 2:
        return "a single value"
    if _is_scale(ds):
        return "a dimension scale"
    parts = path.lower().strip("/").split("/")
    if "provenance" in parts[:-1] or parts[-1] == "provenance":
        return "provenance"
    if parts[-1].startswith("spectrogram") or parts[-1] in ("time", "frequency", "freq"):
        return "an axis or a spectrogram"
    if ds.ndim == 2:
        try:
            label = ds.dims[1].label
        except (RuntimeError, ValueError, OSError):
            label = ""
        if label.lower() in ("frequency", "freq"):
            return "a spectrogram (frequency axis)"
    return ""


def _survey(f: Any) -> list[DatasetInfo]:
    out = []
    for path, ds, note in _walk(f):
        if ds is None:
            out.append(DatasetInfo(path, (), "", False, note))
            continue
        reason = _not_plausible(path, ds)
        rate = _attr_rate(ds) if not reason else None
        dtype = "complex" if _complex_fields(ds.dtype) else str(ds.dtype)
        out.append(DatasetInfo(path, tuple(int(n) for n in ds.shape), dtype, not reason,
                               reason, rate))
    return out


def list_datasets(path: str | os.PathLike[str]) -> list[DatasetInfo]:
    """The datasets of an HDF5 file (or MATLAB v7.3 file), for a chooser.

    Every dataset is listed; ``plausible`` marks those that look like signals.
    External links are listed but not followed.

    Parameters
    ----------
    path : str or PathLike
        The HDF5 file, or an ``http(s)://`` URL.

    Returns
    -------
    list of DatasetInfo
        One entry per dataset or external link, in file order.

    Raises
    ------
    RecordingError
        The file is not a readable HDF5 file.
    """
    p = as_path(path)
    with _open_file(p) as f:
        return _survey(f)


def _listing(infos: list[DatasetInfo]) -> str:
    shown = [i.describe() for i in infos[:_MAX_LISTED]]
    more = f" and {len(infos) - _MAX_LISTED} more" if len(infos) > _MAX_LISTED else ""
    return ", ".join(shown) + more if shown else "none"


def _scalar(value: Any) -> Any:
    """An attribute value as a plain Python value (bytes -> str, arrays -> lists)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, np.ndarray):
        if value.size > 64:
            return f"<array {value.shape} {value.dtype}>"
        return [_scalar(v) for v in value.tolist()] if value.dtype.kind != "O" else [
            _scalar(v) for v in value.ravel()]
    if isinstance(value, (list, tuple)):
        return [_scalar(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _attrs(obj: Any) -> dict[str, Any]:
    out = {}
    for k in obj.attrs:
        if k in ("DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME"):
            continue
        try:
            out[k] = _scalar(obj.attrs[k])
        except (OSError, TypeError, ValueError):
            out[k] = "<unreadable>"
    return out


def _lookup(ds: Any, names: tuple[str, ...]) -> tuple[Any, str] | None:
    """First attribute among ``names`` on the dataset or a group above it."""
    obj = ds
    while True:
        for n in names:
            if n in obj.attrs:
                return _scalar(obj.attrs[n]), f"{obj.name}@{n}"
        if obj.name == "/":
            return None
        obj = obj.parent


def _attr_rate(ds: Any) -> float | None:
    found = _lookup(ds, RATE_ATTRS)
    if found is None:
        return None
    try:
        return parse_number(found[0], "sample_rate", positive=True)
    except InputError:
        return None


def _rate_problem(value: Any) -> str:
    """Why an attribute is no sample rate: negative, zero, not finite, not a number."""
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return "not a number"
    if math.isnan(x):
        return "not a number"
    if math.isinf(x):
        return "infinite"
    return "negative" if x < 0 else "zero" if x == 0 else "not a positive number"


def _scale_rate(ds: Any, axis: int) -> float | None:
    """Sample rate from a time dimension scale attached to the time axis."""
    try:
        for scale in ds.dims[axis].values():
            if scale.ndim == 1 and scale.size >= 2 and scale.dtype.kind == "f":
                t0, t1 = scale[0:2]
                if t1 > t0:
                    return float(1.0 / (t1 - t0))
    except (RuntimeError, ValueError, OSError, TypeError):
        return None
    return None


#: most declared bytes per stored byte: plain datasets (unwritten chunks read as the
#: fill value) and filtered ones (zlib's limit is about 1032)
_MAX_FILL_RATIO = 64
_MAX_FILTER_RATIO = 4096


def _check_storage(ds: Any, path: Path, name: str) -> None:
    """Refuse missing filters and storage in other files."""
    import h5py

    plist = ds.id.get_create_plist()
    for k in range(plist.get_nfilters()):
        code, _flags, _vals, fname = plist.get_filter(k)
        if not h5py.h5z.filter_avail(code):
            label = fname.decode(errors="replace") if isinstance(fname, bytes) else fname
            raise RecordingError(
                f"{path}: dataset {name} is compressed with HDF5 filter {code} "
                f"({label or 'unknown'}), whose plugin is not installed "
                "(pip install hdf5plugin may provide it)")
    if plist.get_external_count() > 0:
        raise RecordingError(f"{path}: dataset {name} keeps its data in external raw files; "
                             "specscope does not read data outside the HDF5 file")
    if ds.is_virtual:
        for src in ds.virtual_sources():
            if src.file_name not in (".", ""):
                raise RecordingError(f"{path}: dataset {name} is a virtual dataset reading "
                                     f"from {src.file_name}; data in other files is not read")
        return
    # declared against stored: a tiny file may declare 10**12 samples it never wrote
    declared = int(ds.size) * ds.dtype.itemsize
    try:
        stored = int(ds.id.get_storage_size())
    except (RuntimeError, ValueError, OSError):
        return
    ratio = _MAX_FILTER_RATIO if plist.get_nfilters() else _MAX_FILL_RATIO
    if declared > (1 << 20) and stored * ratio < declared:
        raise RecordingError(
            f"{path}: dataset {name} declares {'x'.join(map(str, ds.shape))} values "
            f"({declared} bytes) but the file stores {stored} bytes of them; the rest was "
            "never written")


def _resolve(f: Any, name: str, path: Path, infos: list[DatasetInfo]) -> Any:
    """The dataset at ``name``, checking each link on the way."""
    import h5py

    obj = f
    parts = [p for p in name.split("/") if p]
    if not parts:
        raise InputError(f"{path}: dataset={shown(name)} names the root group; datasets: "
                         f"{_listing([i for i in infos if i.plausible] or infos)}")
    for i, part in enumerate(parts):
        here = "/" + "/".join(parts[:i + 1])
        if not isinstance(obj, h5py.Group) or part not in obj:
            raise InputError(f"{path}: no dataset {shown(here)}; datasets: "
                             f"{_listing([i for i in infos if i.plausible] or infos)}")
        link = obj.get(part, getlink=True)
        if isinstance(link, h5py.ExternalLink):
            raise RecordingError(f"{path}: {here} is an external link to {link.filename}; "
                                 "external links are not followed")
        try:
            obj = obj[part]
        except (KeyError, OSError) as exc:
            raise RecordingError(f"{path}: cannot open {here} ({exc})") from None
    if not isinstance(obj, h5py.Dataset):
        raise InputError(f"{path}: {shown(name)} is a group, not a dataset; datasets in it: "
                         f"{_listing([i for i in infos if i.path.startswith(obj.name + '/')])}")
    return obj


class HDF5Recording(Recording):
    """A 1-D or 2-D numeric HDF5 dataset.

    Parameters
    ----------
    path : path-like
    dataset : str, optional
        Path of the dataset inside the file; needed when the file holds
        several plausible signals.
    sample_rate : float or str, optional
        Required when no attribute gives it; overrides the file when given.
    center_frequency : float or str, optional
        Overrides a ``center_frequency`` attribute.
    """

    format = "HDF5"

    def __init__(self, path: str | os.PathLike[str], *, dataset: str | None = None,
                 sample_rate: float | str | None = None,
                 center_frequency: float | str | None = None) -> None:
        super().__init__(path)
        self._file = _open_file(self.path)
        try:
            self._setup(dataset, sample_rate, center_frequency)
        except BaseException:
            self._file.close()
            raise

    # hooks for MATLAB v7.3 (numpy_files.py)
    _kind = "HDF5"
    _option_name = "dataset"

    def _candidates(self, infos: list[DatasetInfo]) -> list[DatasetInfo]:
        return [i for i in infos if i.plausible]

    @staticmethod
    def _own_rate(ds: Any) -> bool:
        """Whether the dataset itself carries a rate attribute or a time scale."""
        if any(n in ds.attrs for n in RATE_ATTRS):
            return True
        return ds.ndim in (1, 2) and _scale_rate(ds, time_axis(ds.shape)) is not None

    def _file_rate(self, ds: Any) -> tuple[float, str] | None:
        rate = _attr_rate(ds)
        if rate is not None:
            where = _lookup(ds, RATE_ATTRS)
            return rate, where[1] if where else ""
        rate = _scale_rate(ds, self._time_axis)
        return (rate, "time dimension scale") if rate else None

    def _setup(self, dataset: str | None, sample_rate: Any, center_frequency: Any) -> None:
        f, p = self._file, self.path
        try:
            infos = _survey(f)
        except (OSError, RuntimeError) as exc:
            raise RecordingError(f"{p}: cannot list the datasets ({exc})") from None
        opt = self._option_name
        if dataset is None:
            cands = self._candidates(infos)
            if len(cands) > 1:
                # one signal that says its own rate (an export's signal next to filter
                # coefficients, say) is the one meant
                timed = [c for c in cands if self._own_rate(f[c.path])]
                cands = timed if len(timed) == 1 else cands
            if len(cands) != 1:
                if not cands:
                    tag = _scalar(f.attrs.get("format", ""))
                    if isinstance(tag, str) and tag.startswith("specscope/spectrogram"):
                        raise RecordingError(f"{p}: is a specscope spectrogram export; it "
                                             "holds no signal to open")
                    raise RecordingError(f"{p}: holds no 1-D or 2-D numeric signal dataset; "
                                         f"it has: {_listing(infos)}")
                raise MissingOption(opt, f"holds {len(cands)} datasets", path=p,
                                    choices=[c.path for c in cands],
                                    labels=[c.describe() for c in cands],
                                    also=f"{p.name}:NAME", action="pick one with")
            dataset = cands[0].path
        ds = _resolve(f, str(dataset), p, infos)
        name = ds.name
        if not _is_numeric(ds.dtype):
            raise RecordingError(f"{p}: dataset {name} holds {ds.dtype} values, not numbers")
        if ds.ndim not in (1, 2):
            raise RecordingError(f"{p}: dataset {name} is {ds.ndim}-D {ds.shape}; expected "
                                 "1-D (samples) or 2-D (samples x channels)")
        if ds.size == 0:
            raise RecordingError(f"{p}: dataset {name} is empty")
        _check_storage(ds, p, name)
        self._ds = ds
        self._fields = _complex_fields(ds.dtype)
        self._time_axis = time_axis(ds.shape)
        shape = ds.shape
        self.n_samples = int(shape[self._time_axis])
        self.n_channels = int(shape[1 - self._time_axis]) if ds.ndim == 2 else 1
        self.is_complex = self._fields is not None or ds.dtype.kind == "c"
        self.dataset = name

        if sample_rate is not None:
            self.sample_rate = parse_number(sample_rate, "sample_rate", positive=True,
                                            where=str(p))
            rate_source = "option"
        else:
            found = self._file_rate(ds)
            stated = _lookup(ds, RATE_ATTRS)
            if found is None and stated is not None:
                raise MissingOption("sample_rate", f"{stated[1]}={shown(stated[0])} is not a "
                                    f"sample rate ({_rate_problem(stated[0])})", path=p,
                                    stated=stated[0])
            if found is None:
                raise MissingOption("sample_rate", f"dataset {name} has no sample rate "
                                    f"attribute ({', '.join(RATE_ATTRS[:5])})", path=p)
            self.sample_rate, rate_source = found
        if center_frequency is not None:
            self.center_frequency = parse_number(center_frequency, "center_frequency",
                                                 where=str(p))
        else:
            fc = _lookup(ds, FREQ_ATTRS)
            if fc is not None:
                try:
                    self.center_frequency = parse_number(fc[0], "center_frequency")
                except InputError:
                    self.warnings.append(f"{fc[1]}={shown(fc[0])} is not a frequency; ignored")
        units = ds.attrs.get("units")
        self.units = str(_scalar(units)) if units is not None else "a.u."
        st = _lookup(ds, TIME_ATTRS)
        if st is not None and isinstance(st[0], str):
            self.start_time = st[0]
        self.format = self._kind
        self.metadata = {
            "dataset": name, "shape": list(shape), "stored_dtype": str(ds.dtype),
            "time_axis": self._time_axis, "sample_rate_source": rate_source,
            "attrs": _attrs(ds), "file_attrs": _attrs(f),
        }
        # a specscope signal export: its table's time 0 and channels are /signal's
        table = f.get(GROUP) if name == "/signal" else None
        if table is not None and hasattr(table, "keys"):
            try:
                self.annotations = read_table(table, f"{p}:/{GROUP}")
            except (InputError, RecordingError) as exc:
                self.warnings.append(f"annotations not read: {exc}")

    def _read(self, start: int, stop: int) -> np.ndarray:
        ds = self._ds
        try:
            if ds.ndim == 1:
                raw = ds[start:stop]
            elif self._time_axis == 0:
                raw = ds[start:stop, :]
            else:
                raw = ds[:, start:stop].T
        except OSError as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RecordingError(f"{self.path}: cannot read {ds.name} at samples "
                                 f"{start}:{stop} ({msg})") from None
        if self._fields is not None:
            re_, im_ = self._fields
            out = np.empty(raw.shape, np.complex64)
            out.real = raw[re_]
            out.imag = raw[im_]
            return out
        return raw

    def close(self) -> None:
        try:
            self._file.close()
        except (OSError, ValueError):
            pass


def open_hdf5(path: str | os.PathLike[str], *, dataset: str | None = None,
              sample_rate: float | str | None = None,
              center_frequency: float | str | None = None) -> HDF5Recording:
    """Open one dataset of an HDF5 file; see :class:`HDF5Recording`."""
    return HDF5Recording(path, dataset=dataset, sample_rate=sample_rate,
                         center_frequency=center_frequency)


def _sniff(path: Path) -> bool:
    return path.suffix.lower() != ".mat" and is_hdf5(path)


register_reader("hdf5", (".h5", ".hdf5", ".hdf", ".he5", ".nc4"), open_hdf5, sniff=_sniff,
                priority=20, description="HDF5 datasets (FILE.h5:/path/to/dataset)")
