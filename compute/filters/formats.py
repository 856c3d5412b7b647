"""Filter coefficients to and from files.

Formats (:data:`FORMATS`), chosen by name or by the file suffix:

``json``  (``.json``)  ``{"specscope": "filter/1", "sample_rate", "form", "spec", "sos" |
                      "b"/"a", "zeros"/"poles"/"gain"}``; complex numbers as ``[re, im]``.
``csv``   (``.csv``)   ``#`` comment lines (format tag, sample rate, spec JSON), a header
                      ``b0,b1,b2,a0,a1,a2`` and one row per section, or ``b,a`` and one
                      row per tap (``a`` empty past its length).
``npz``   (``.npz``)   arrays ``sos`` or ``b``/``a``, ``zeros``/``poles``/``gain``,
                      ``sample_rate``, ``spec`` (JSON text); read with ``allow_pickle=False``.
``c``     (``.h``)     a C header: ``<name>_sos_f64[n][6]`` and ``<name>_sos_f32`` (or
                      ``<name>_b_f64`` / ``_a_f64`` ...), sizes as ``#define``; floats
                      written with enough digits to round-trip.
``python`` (``.py``)  code that rebuilds the filter with scipy (the same scipy calls the
                      design made, arguments resolved) and checks it against the
                      coefficients stored as literals.

Importing accepts b/a, zpk or SOS wherever the format holds them.  Reading a
``.py`` file never executes it: the coefficient literals are parsed with
:func:`ast.literal_eval`.  A file is held to the limits of a design: its size
(and the memory parsing it takes, :func:`~specscope.compute.params.check_bytes`)
is checked before it is parsed, and its rows before they become arrays: at most
:data:`MAX_SECTIONS` second-order sections, :data:`MAX_FRAME` taps, :data:`MAX_ROOTS`
zeros or poles, and an order of at most ``2 * MAX_ORDER`` where b/a must be factored.
"""

from __future__ import annotations

import ast
import io
import json
import math
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .. import jsonsafe
from ..errors import InputError, RecordingError, shown
from ..files import atomic_write_bytes, note_inputs
from ..params import MAX_FRAME, check_bytes
from ..types import CoefficientFormat, choices
from .designed import Design
from .spec import MAX_ORDER, FilterSpec

__all__ = ["FORMATS", "MAX_COEFFICIENT_BYTES", "MAX_PYTHON_BYTES", "MAX_ROOTS", "MAX_SECTIONS",
           "SUFFIXES", "export_coefficients", "parse_coefficients", "read_coefficients",
           "write_coefficients"]

TAG = "specscope/filter/1"
FORMATS = choices(CoefficientFormat)
SUFFIXES = {".json": "json", ".csv": "csv", ".npz": "npz", ".h": "c", ".py": "python"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _format_for(path: str | os.PathLike[str] | None, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(f"format={fmt!r} must be one of {', '.join(FORMATS)}")
        return fmt
    suffix = Path(path).suffix.lower() if path is not None else ""
    if suffix not in SUFFIXES:
        raise InputError(f"{Path(path).name if path else 'output'}: cannot tell the format "
                         f"from the suffix {suffix!r}; give one of {', '.join(FORMATS)} "
                         f"(suffixes {', '.join(SUFFIXES)})")
    return SUFFIXES[suffix]


def _spec_params(d: Design) -> dict[str, Any] | None:
    return None if d.spec is None else d.spec.to_params()


def _cplx(v: np.ndarray) -> list[list[float]]:
    return [[float(x.real), float(x.imag)] for x in np.asarray(v, complex)]


# -- export ---------------------------------------------------------------------------


def export_coefficients(d: Design, fmt: CoefficientFormat = "json", *,
                        name: str = "specscope_filter") -> str | bytes:
    """The coefficients of ``d`` in format ``fmt`` (``npz``: bytes; others: text).

    Parameters
    ----------
    d : Design
        The designed (or imported) filter.
    fmt : str
        One of :data:`FORMATS`.
    name : str
        Identifier of the filter in C and Python output.

    Returns
    -------
    str or bytes
        The file's contents: bytes for ``npz``, text otherwise.

    Raises
    ------
    InputError
        If ``fmt`` is no format or ``name`` is no C/Python identifier.
    """
    fmt = _format_for(None, fmt)
    if not _NAME.match(name):
        raise InputError(f"name={name!r} must be a C/Python identifier")
    return {"json": _to_json, "csv": _to_csv, "npz": _to_npz, "c": _to_c,
            "python": _to_python}[fmt](d, name)


def write_coefficients(d: Design, path: str | os.PathLike[str],
                       fmt: CoefficientFormat | None = None, *,
                       name: str = "specscope_filter") -> Path:
    """Write the coefficients to ``path`` (format from ``fmt`` or the suffix), atomically.

    Parameters
    ----------
    d : Design
        The designed (or imported) filter.
    path : str or os.PathLike
        The file to write.
    fmt : str, optional
        One of :data:`FORMATS`; default: from the suffix (:data:`SUFFIXES`).
    name : str
        Identifier of the filter in C and Python output.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    InputError
        If the format is unknown or cannot be told from the suffix, or ``name`` is no
        identifier.
    """
    p = Path(path)
    data = export_coefficients(d, _format_for(p, fmt), name=name)
    atomic_write_bytes(p, data if isinstance(data, bytes) else data.encode("utf-8"),
                       what="coefficient file name")
    return p


def _to_json(d: Design, name: str) -> str:
    doc: dict[str, Any] = {"specscope": TAG, "name": name, "sample_rate": d.sample_rate,
                           "form": d.form, "spec": _spec_params(d), "order": d.order}
    for k, v in d.coefficients.items():
        doc[k] = np.asarray(v).tolist()
    if d.form == "sos" or (d.form == "fir" and d.zpk is not None):
        z, p, k = d.zpk
        doc.update(zeros=_cplx(z), poles=_cplx(p), gain=k)
    return json.dumps(doc, indent=1)


def _to_csv(d: Design, name: str) -> str:
    out = io.StringIO()
    out.write(f"# {TAG} name={name} form={d.form} sample_rate={d.sample_rate!r}\n")
    if d.spec is not None:
        out.write(f"# spec: {d.spec.to_json()}\n")
    if d.form == "sos":
        out.write("b0,b1,b2,a0,a1,a2\n")
        for row in d.sos:
            out.write(",".join(repr(float(x)) for x in row) + "\n")
    else:
        b, a = d.b, d.a
        out.write("b,a\n")
        for i in range(max(b.size, a.size)):
            bs = repr(float(b[i])) if i < b.size else ""
            as_ = repr(float(a[i])) if i < a.size else ""
            out.write(f"{bs},{as_}\n")
    return out.getvalue()


def _to_npz(d: Design, name: str) -> bytes:
    arrays: dict[str, Any] = {k: np.asarray(v, np.float64) for k, v in d.coefficients.items()}
    arrays["sample_rate"] = np.float64(d.sample_rate)
    arrays["spec"] = np.array(json.dumps(_spec_params(d)))
    arrays["form"] = np.array(d.form)
    if d.form == "sos":
        z, p, k = d.zpk
        arrays.update(zeros=np.asarray(z, complex), poles=np.asarray(p, complex),
                      gain=np.float64(k))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _c_float(x: float, single: bool) -> str:
    if single:
        return f"{float(np.float32(x))!r}f".replace("inff", "INFINITY")
    return repr(float(x))


def _c_array(name: str, arr: np.ndarray, single: bool) -> str:
    ctype = "float" if single else "double"
    if arr.ndim == 2:
        rows = ",\n".join("    {" + ", ".join(_c_float(x, single) for x in r) + "}"
                          for r in arr)
        return f"static const {ctype} {name}[{arr.shape[0]}][{arr.shape[1]}] = {{\n{rows}\n}};\n"
    body = ",\n".join("    " + ", ".join(_c_float(x, single) for x in arr[i:i + 4])
                      for i in range(0, arr.size, 4))
    return f"static const {ctype} {name}[{arr.size}] = {{\n{body}\n}};\n"


def _to_c(d: Design, name: str) -> str:
    up = name.upper()
    lines = [(f"/* {TAG}: generated by specscope; {d.form} filter, order {d.order}, "
              f"sample rate {d.sample_rate!r} Hz */")]
    if d.spec is not None:
        lines.append("/* spec: " + d.spec.to_json().replace("*/", "* /") + " */")
    lines += [f"#ifndef {up}_H", f"#define {up}_H", "",
              f"#define {up}_SAMPLE_RATE {d.sample_rate!r}"]
    body = []
    if d.form == "sos":
        lines.append(f"#define {up}_SECTIONS {d.sos.shape[0]}")
        lines.append(f"/* rows: b0, b1, b2, a0, a1, a2 (a0 = 1); run with {name}_sos_f64 for "
                     "accuracy */")
        body += [_c_array(f"{name}_sos_f64", d.sos, False),
                 _c_array(f"{name}_sos_f32", d.sos, True)]
    else:
        lines.append(f"#define {up}_NB {d.b.size}")
        lines.append(f"#define {up}_NA {d.a.size}")
        for k, v in (("b", d.b), ("a", d.a)):
            body += [_c_array(f"{name}_{k}_f64", v, False), _c_array(f"{name}_{k}_f32", v, True)]
    return "\n".join(lines) + "\n\n" + "\n".join(body) + f"\n#endif /* {up}_H */\n"


def _py_literal(v: Any) -> str:
    if isinstance(v, float):
        return "float('inf')" if math.isinf(v) else repr(v)
    if isinstance(v, np.ndarray):
        return repr(v.tolist())
    return repr(v)


def _to_python(d: Design, name: str) -> str:
    lines = [f'"""{TAG}: {d.form} filter, order {d.order}, generated by specscope.',
             "",
             "Rebuilds the filter with scipy and checks it against the stored coefficients.",
             '"""', "", "import numpy as np", "import scipy.signal as ss", "",
             f"fs = {d.sample_rate!r}"]
    if d.spec is not None:
        lines.append(f"spec = {d.spec.to_params()!r}")
    coef_name = {"sos": "sos", "fir": "b", "comb": "b"}[d.form]
    lines.append("")
    if d.form == "sos":
        lines.append(f"sos_stored = np.array({_py_literal(d.sos)})")
    else:
        lines.append(f"b_stored = np.array({_py_literal(d.b)})")
        lines.append(f"a_stored = np.array({_py_literal(d.a)})")
    lines.append("")
    lines.append(f"def {name}():")
    lines.append(f'    """The coefficients ({coef_name}) made by scipy."""')
    lines += ["    " + ln for ln in _scipy_code(d)]
    lines.append("")
    lines.append("")
    lines.append(f"{coef_name} = {name}()")
    if d.form == "sos":
        lines.append("assert np.allclose(sos, sos_stored, rtol=1e-9, atol=1e-12)")
        lines.append("# filter: y = ss.sosfilt(sos, x)  (zero-phase: ss.sosfiltfilt)")
    else:
        lines.append("a = a_stored" if d.form == "fir" else "b, a = b, a_comb")
        lines.append("assert np.allclose(b, b_stored, rtol=1e-9, atol=1e-12)")
        lines.append("# filter: y = ss.lfilter(b, a, x)  (zero-phase: ss.filtfilt)")
    return "\n".join(lines) + "\n"


def _kw(kwargs: dict[str, Any], drop: tuple[str, ...] = ()) -> str:
    return ", ".join(f"{k}={_py_literal(v)}" for k, v in kwargs.items() if k not in drop)


def _scipy_code(d: Design) -> list[str]:
    """Statements that leave the coefficients in ``sos`` or ``b`` (+ ``a_comb``), return them."""
    if not d.calls:  # imported coefficients: no design to replay
        if d.form == "sos":
            return ["return sos_stored.copy()"]
        if d.form == "comb":
            return ["global a_comb", "a_comb = a_stored.copy()", "return b_stored.copy()"]
        return ["return b_stored.copy()"]
    calls = [c for c in d.calls if c.op not in ("buttord", "cheb1ord", "cheb2ord",
                                                   "ellipord", "kaiserord")]
    out = []
    for c in d.calls:
        if c.op in ("buttord", "cheb1ord", "cheb2ord", "ellipord"):
            out.append(f"# minimum order: ss.{c.op}({_kw(c.kwargs)}, fs=fs)")
        elif c.op == "kaiserord":
            out.append(f"# Kaiser length and beta: ss.kaiserord({_kw(c.kwargs)})")
    if d.form == "comb":
        c = calls[0]
        out += [f"b, a = ss.iircomb({_kw(c.kwargs, ('output',))}, fs=fs)",
                "global a_comb", "a_comb = a", "return b"]
        return out
    if calls[0].op in ("iirnotch", "iirpeak"):
        parts = [f"ss.tf2sos(*ss.{c.op}({_kw(c.kwargs, ('output',))}, fs=fs))" for c in calls]
        if len(parts) == 1:
            out.append(f"return {parts[0]}")
        else:
            out.append("return np.vstack([")
            out += [f"    {p}," for p in parts]
            out.append("])")
        return out
    c = calls[0]
    kwargs = dict(c.kwargs)
    if c.op in ("firwin", "firwin2") and isinstance(kwargs.get("window"), tuple):
        kwargs["window"] = tuple(kwargs["window"])
    out.append(f"return ss.{c.op}({_kw(kwargs)}, fs=fs)")
    return out


# -- import ---------------------------------------------------------------------------


#: largest coefficient file read
MAX_COEFFICIENT_BYTES = 64 << 20
#: largest ``.py`` coefficient file read (its syntax tree takes ~250 bytes per byte)
MAX_PYTHON_BYTES = 4 << 20
#: most second-order sections read (a band design of the highest order has this many)
MAX_SECTIONS = MAX_ORDER
#: most zeros or poles read (two per section, or a FIR's roots)
MAX_ROOTS = 4 * MAX_ORDER
#: memory a parser takes per byte of a file of the format, at most (measured)
_PARSE_BYTES_PER_BYTE = {"python": 250, "json": 16, "csv": 24, "c": 8, "npz": 1}
_FORMAT_NAMES = {"python": "Python", "json": "JSON", "csv": "CSV", "c": "C header",
                 "npz": "npz"}


def read_coefficients(path: str | os.PathLike[str], fmt: CoefficientFormat | None = None,
                      fs: float | None = None) -> Design:
    """A :class:`~specscope.compute.filters.Design` from a coefficient file.

    Parameters
    ----------
    path : str or os.PathLike
        The coefficient file (at most 64 MiB).
    fmt : str, optional
        One of :data:`FORMATS`; default: from the suffix.
    fs : float, optional
        Sample rate (Hz); overrides (or supplies, when the file has none) the file's.

    Returns
    -------
    Design
        The filter, with the file's spec when it holds one.

    Raises
    ------
    RecordingError
        If there is no such file.
    InputError
        If the file is too large, not text where text is expected, or not a valid
        coefficient file of the format; the message starts with the file name.
    """
    p = Path(path)
    if not p.is_file():
        raise RecordingError(f"{p}: no such coefficient file")
    fmt = _format_for(p, fmt)
    size = p.stat().st_size
    _check_size(size, fmt, p.name)
    with open(p, "rb") as fh:  # no more than the size checked, should the file grow
        data: str | bytes = fh.read(_max_bytes(fmt) + 1)
    note_inputs(p)
    _check_size(len(data), fmt, p.name)
    if fmt != "npz":
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{p.name}: not a {fmt} coefficient file (byte "
                             f"0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8 "
                             "text)") from None
    try:
        return parse_coefficients(data, fmt, fs)
    except InputError as exc:
        raise InputError(f"{p.name}: {exc}") from None


def _max_bytes(fmt: str) -> int:
    return MAX_PYTHON_BYTES if fmt == "python" else MAX_COEFFICIENT_BYTES


def _check_size(size: int, fmt: str, where: str = "") -> None:
    """Refuse, before parsing, a file too large for its format or the memory budget."""
    most = _max_bytes(fmt)
    prefix = f"{where}: " if where else ""
    kind = _FORMAT_NAMES[fmt]
    if size > most:
        raise InputError(f"{prefix}{size} bytes is too large for a {kind} coefficient file "
                         f"(at most {most})")
    check_bytes(size * _PARSE_BYTES_PER_BYTE[fmt], f"parsing a {kind} coefficient file of "
                f"{size} bytes", where)


def _count(v: Any) -> int:
    """Rows of a coefficient field (a list, an array or a scalar), without converting it."""
    if isinstance(v, np.ndarray):
        return int(v.shape[0]) if v.ndim else 1
    return len(v) if isinstance(v, (list, tuple)) else 1


def _check_rows(name: str, v: Any, most: int, what: str) -> None:
    """Refuse a field of more than ``most`` rows (``what``: what a row is)."""
    if v is not None and _count(v) > most:
        raise InputError(f"{name} has {_count(v)} {what}, more than a filter may have "
                         f"(at most {most})")


def _check_fields(fields: dict[str, Any]) -> None:
    """The limits of a design on the coefficients of a file, before they become arrays."""
    _check_rows("sos", fields.get("sos"), MAX_SECTIONS, "sections")
    for k in ("b", "a"):
        _check_rows(k, fields.get(k), MAX_FRAME, "coefficients")
    for k in ("zeros", "poles"):
        _check_rows(k, fields.get(k), MAX_ROOTS, k)


def _check_factored(b: np.ndarray, a: np.ndarray) -> None:
    """Refuse b/a that would be factored (a recursive filter, not a comb) of too high an order.

    Mirrors :meth:`Design.from_coefficients`: b/a whose ``a`` is 1 is a FIR, and a
    sparse comb is run as it is; the rest is factored into sections (roots cost the
    cube of the order).
    """
    a_t = np.trim_zeros(a, "b")
    if a_t.size <= 1:
        return
    if a.size == b.size and a.size > 3 and not np.any(a[1:-1]) and not np.any(b[1:-1]):
        return  # nonzero at 0 and N only: the sparse comb
    order = max(a.size, b.size) - 1
    if order > 2 * MAX_ORDER:
        raise InputError(f"b/a of order {order} would be factored into sections; at most "
                         f"{2 * MAX_ORDER} (give sos instead)")


def _numbers(name: str, v: Any) -> np.ndarray:
    """``v`` as a float64 array (at least 1-d), or an InputError naming ``name``."""
    try:
        return np.atleast_1d(np.asarray(v, dtype=float))
    except (ValueError, TypeError, OverflowError):
        raise InputError(f"{name} must hold numbers only (rows of equal length)") from None


def _design_from(fields: dict[str, Any], fs: float | None, spec_params: Any) -> Design:
    _check_fields(fields)
    rate = fs if fs is not None else fields.get("sample_rate")
    if rate is None:
        raise InputError("no sample rate in the file; give fs")
    if isinstance(rate, np.ndarray) and rate.size == 1:
        rate = rate.item()
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer, np.floating)):
        raise InputError(f"sample_rate={shown(rate)} must be a number (Hz)")
    spec = None
    if spec_params:
        spec = FilterSpec.from_params(spec_params)
    if fields.get("sos") is not None:
        return Design.from_coefficients(float(rate), sos=_numbers("sos", fields["sos"]),
                                        spec=spec)
    if fields.get("b") is not None:
        b = _numbers("b", fields["b"])
        a = fields.get("a")
        if a is not None:
            a = _numbers("a", a)
            _check_factored(b, a)
        return Design.from_coefficients(float(rate), b=b, a=a, spec=spec)
    if fields.get("zeros") is not None:
        gain = _numbers("gain", fields["gain"] if fields["gain"] is not None else [])
        if gain.size != 1:
            raise InputError("gain must be one number")
        return Design.from_coefficients(float(rate), z=fields["zeros"], p=fields["poles"],
                                        k=gain[0], spec=spec)
    raise InputError("no coefficients found (expected sos, b/a, or zeros/poles/gain)")


def _complex_list(v: Any, what: str) -> np.ndarray:
    a = _numbers(what, v) if not (isinstance(v, list) and not v) else np.zeros((0, 2))
    if a.size == 0:
        return np.zeros(0, complex)
    if a.ndim != 2 or a.shape[1] != 2:
        raise InputError(f"{what} must be a list of [re, im] pairs")
    return a[:, 0] + 1j * a[:, 1]


def parse_coefficients(data: str | bytes, fmt: CoefficientFormat,
                       fs: float | None = None) -> Design:
    """Parse exported coefficients (see :data:`FORMATS`).

    Parameters
    ----------
    data : str or bytes
        The file's contents (bytes for ``npz``).
    fmt : str
        One of :data:`FORMATS`.
    fs : float, optional
        Sample rate (Hz); overrides (or supplies, when the data has none) the stored one.

    Returns
    -------
    Design
        The filter, from SOS, b/a or zeros/poles/gain.

    Raises
    ------
    InputError
        If the data is not of the format, holds no coefficients, or gives no sample rate.
    """
    fmt = _format_for(None, fmt)
    _check_size(len(data), fmt)
    if fmt == "npz":
        if isinstance(data, str):
            raise InputError("npz data must be bytes")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                keys = _check_npz(z)
                f = {k: z[k] for k in keys}
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise InputError(f"not an npz coefficient file: {exc}") from None
        spec = jsonsafe.loads(str(f["spec"]), "spec") if "spec" in f else None
        fields = {k: f.get(k) for k in ("sos", "b", "a", "zeros", "poles", "gain")}
        if "sample_rate" in f:
            fields["sample_rate"] = float(f["sample_rate"])
        return _design_from(fields, fs, spec)
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if fmt == "json":
        doc = jsonsafe.loads(data, "coefficients", what="JSON coefficient file")
        if not isinstance(doc, dict):
            raise InputError("a coefficient file must be a JSON object")
        fields = {k: doc.get(k) for k in ("sos", "b", "a", "sample_rate")}
        _check_fields({k: doc.get(k) for k in ("zeros", "poles")})
        if doc.get("zeros") is not None or doc.get("poles") is not None:
            fields["zeros"] = _complex_list(doc.get("zeros", []), "zeros")
            fields["poles"] = _complex_list(doc.get("poles", []), "poles")
            fields["gain"] = doc.get("gain")
        if fields["sos"] is not None or fields["b"] is not None:
            fields.pop("zeros", None)
        return _design_from(fields, fs, doc.get("spec"))
    if fmt == "csv":
        return _parse_csv(data, fs)
    if fmt == "c":
        return _parse_c(data, fs)
    return _parse_python(data, fs)


#: the arrays of an npz coefficient file read: name -> (most rows, what a row is)
_NPZ_ROWS = {"sos": (MAX_SECTIONS, "sections"), "b": (MAX_FRAME, "coefficients"),
             "a": (MAX_FRAME, "coefficients"), "zeros": (MAX_ROOTS, "zeros"),
             "poles": (MAX_ROOTS, "poles"), "gain": (1, "values"),
             "sample_rate": (1, "values"), "form": (1, "values"), "spec": (1, "values")}
#: most bytes of one npz array that is a single value (the spec's JSON text)
_NPZ_VALUE_BYTES = 1 << 20


def _check_npz(z: Any) -> list[str]:
    """The arrays of an npz file to read, their shapes checked from their headers first.

    A compressed member of zeros may declare gigabytes; the declared shape is
    read before anything is decompressed into an array.
    """
    keys = []
    for member in z.zip.namelist():
        key = member.removesuffix(".npy")
        if key not in _NPZ_ROWS:
            continue  # not read
        with z.zip.open(member) as fh:
            version = np.lib.format.read_magic(fh)
            header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)
            shape, _, dtype = header(fh)
        most, what = _NPZ_ROWS[key]
        rows = shape[0] if shape else 1
        values = math.prod(shape)
        if rows > most or (key == "sos" and values > 6 * most) or \
                (key in ("b", "a", "zeros", "poles") and values > most):
            raise InputError(f"{key} has {values} values in {rows} {what}, more than a "
                             f"filter may have (at most {most} {what})")
        if values * dtype.itemsize > max(_NPZ_VALUE_BYTES, most * 16):
            raise InputError(f"{key} holds {values * dtype.itemsize} bytes, more than a "
                             "coefficient file's field may")
        keys.append(key)
    return keys


_SOS_HEADER = ["b0", "b1", "b2", "a0", "a1", "a2"]


def _parse_csv(text: str, fs: float | None) -> Design:
    rate, spec, header, rows, most = None, None, None, [], MAX_FRAME
    for ln in text.splitlines():
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = re.search(r"sample_rate=([0-9.eE+-]+)", s)
            if m:
                rate = float(m.group(1))
            if s.startswith("# spec:"):
                spec = jsonsafe.loads(s[len("# spec:"):], "# spec")
            continue
        if header is None:
            header = [h.strip() for h in s.split(",")]
            most = MAX_SECTIONS if header == _SOS_HEADER else MAX_FRAME
            continue
        if len(rows) >= most:
            what = "sections" if most == MAX_SECTIONS else "coefficients"
            raise InputError(f"more than {most} rows of {what}: more than a filter may have")
        rows.append([c.strip() for c in s.split(",")])
    try:
        if header == _SOS_HEADER:
            sos = np.array([[float(c) for c in r] for r in rows])
            return _design_from({"sos": sos, "sample_rate": rate}, fs, spec)
        if header and header[0] == "b":
            b = [float(r[0]) for r in rows if r[0]]
            a = [float(r[1]) for r in rows if len(r) > 1 and r[1]] or None
            return _design_from({"b": b, "a": a, "sample_rate": rate}, fs, spec)
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"a row is not numbers ({exc})") from None
    raise InputError(f"CSV header {header} must be 'b0,b1,b2,a0,a1,a2' (SOS) or 'b,a'")


_C_ARRAY = re.compile(r"static\s+const\s+double\s+(\w+?)_(sos|b|a)_f64\s*(\[[^=]*\])\s*=\s*"
                      r"\{(.*?)\};", re.DOTALL)


_C_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _parse_c(text: str, fs: float | None) -> Design:
    rate = None
    m = re.search(r"#define\s+\w+_SAMPLE_RATE\s+([0-9.eE+-]+)", text)
    if m:
        rate = float(m.group(1))
    spec = None
    ms = re.search(r"/\* spec: (.*?) \*/", text)
    if ms:
        spec = jsonsafe.loads(ms.group(1), "spec")
    fields: dict[str, Any] = {"sample_rate": rate}
    for _, kind, _dims, body in _C_ARRAY.findall(text):
        words = _C_NUMBER.findall(body)
        most = 6 * MAX_SECTIONS if kind == "sos" else MAX_FRAME
        if len(words) > most:
            what = f"{len(words) // 6} sections" if kind == "sos" else f"{len(words)} values"
            raise InputError(f"{kind} has {what}, more than a filter may have (at most "
                             f"{most // 6 if kind == 'sos' else most})")
        nums = np.array([float(x) for x in words])
        if kind == "sos" and nums.size % 6:
            raise InputError(f"sos has {nums.size} values, not rows of 6")
        fields[kind] = nums.reshape(-1, 6) if kind == "sos" else nums
    if not any(k in fields for k in ("sos", "b")):
        raise InputError("no '<name>_sos_f64' or '<name>_b_f64' array in the C header")
    return _design_from(fields, fs, spec)


def _parse_python(text: str, fs: float | None) -> Design:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise InputError(f"not Python: {exc.msg} at line {exc.lineno}") from None
    except (RecursionError, MemoryError):  # 1+1+... a million times: the parser's stack
        raise InputError("not a Python coefficient file: an expression nested too deep "
                         "to parse") from None
    found: dict[str, Any] = {}
    rows = {"sos_stored": MAX_SECTIONS, "b_stored": MAX_FRAME, "a_stored": MAX_FRAME}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        try:
            if name in ("fs", "spec"):
                found[name] = ast.literal_eval(value)
            elif name in rows and isinstance(value, ast.Call) and value.args:
                literal = ast.literal_eval(value.args[0])
                _check_rows(name, literal, rows[name],
                            "sections" if name == "sos_stored" else "coefficients")
                found[name] = np.asarray(literal, float)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{name} is not a literal of numbers") from None
    fields = {"sos": found.get("sos_stored"), "b": found.get("b_stored"),
              "a": found.get("a_stored"), "sample_rate": found.get("fs")}
    return _design_from(fields, fs, found.get("spec"))
