"""Provenance of outputs: where a file came from and what made it.

:func:`provenance` hashes the source; :func:`write_provenance` writes the
``provenance`` group (and its root attributes) of an HDF5 output.
:func:`read_text_attr` and :func:`read_int_attr` read such attributes back from a
file that may have been edited: a missing or malformed one is a
:class:`~specscope.compute.errors.RecordingError` naming it.
:func:`calibration_attr` is the ``calibration`` root attribute an export of a
calibrated recording carries.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import Cancelled, RecordingError, shown
from ..io import Recording
from ..io.remote import as_path, is_url, open_binary

#: provenance attributes also written on the file root, for readers that look there
PROVENANCE_ATTRS = ("source_path", "source_sha256", "specscope_version", "created_utc")
#: distributions whose versions the provenance records (read from their metadata only:
#: nothing is imported, so CuPy is never loaded on a CPU-only machine)
VERSIONED = ("specscope", "numpy", "scipy", "h5py", "hdf5plugin", "cupy", "cupy-cuda12x",
             "cupy-cuda11x", "cupy-cuda13x")


def sha256_file(path: str | os.PathLike[str], *, block: int = 1 << 20,
                cancelled: Callable[[], bool] | None = None) -> str:
    """SHA-256 of a file, read in blocks.

    Parameters
    ----------
    path : str or PathLike
        A local file or a URL.
    block : int
        Bytes read at a time.
    cancelled : callable, optional
        ``cancelled() -> bool``, asked before each block.

    Returns
    -------
    str
        The digest, 64 lower-case hex digits.

    Raises
    ------
    Cancelled
        ``cancelled()`` returned True.
    """
    h = hashlib.sha256()
    with open_binary(path) as fh:
        while chunk := fh.read(block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            h.update(chunk)
    return h.hexdigest()


def _digests(path: str | os.PathLike[str], names: tuple[str, ...], *, block: int = 1 << 20,
             cancelled: Callable[[], bool] | None = None) -> dict[str, str]:
    """Several digests of a file in one pass."""
    hs = {n: hashlib.new(n) for n in names}
    with open_binary(path) as fh:
        while chunk := fh.read(block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            for h in hs.values():
                h.update(chunk)
    return {n: h.hexdigest() for n, h in hs.items()}


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that shape the numbers (metadata only).

    Returns
    -------
    dict of str to str
        Distribution name to version, for specscope, numpy, scipy, h5py and, when
        installed, hdf5plugin and CuPy; ``"hdf5"`` is the HDF5 library's version.
    """
    out = {"specscope": __version__}
    for name in VERSIONED[1:]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    try:
        import h5py

        out["hdf5"] = h5py.version.hdf5_version
    except ImportError:  # pragma: no cover - h5py is a dependency
        pass
    return out


def provenance(source: str | os.PathLike[str],
               cancelled: Callable[[], bool] | None = None, *,
               expect_sha512: str | None = None) -> dict[str, str]:
    """Attributes that say where an export came from (no hash for in-memory sources).

    The source is hashed once; with ``expect_sha512`` (a SigMF ``core:sha512``)
    the same pass checks it and raises :class:`RecordingError` on a mismatch.

    Parameters
    ----------
    source : str or PathLike
        The source file or URL; anything that is no file (an in-memory array's
        name) is recorded as given, with an empty hash.
    cancelled : callable, optional
        ``cancelled() -> bool``, asked before each block read.
    expect_sha512 : str, optional
        The SHA-512 (hex) the source should have.

    Returns
    -------
    dict of str to str
        ``source_path`` (resolved for a local file), ``source_sha256``,
        ``specscope_version`` and ``created_utc`` (ISO 8601, UTC, in seconds).

    Raises
    ------
    RecordingError
        The source's SHA-512 differs from ``expect_sha512``.
    Cancelled
        ``cancelled()`` returned True.
    """
    # a URL (read by range) is hashed through its server, and named as given
    remote = is_url(source)
    is_file = as_path(source).is_file() if remote else Path(source).is_file()
    digest = ""
    if is_file:
        names = ("sha256", "sha512") if expect_sha512 else ("sha256",)
        d = _digests(source, names, cancelled=cancelled)
        digest = d["sha256"]
        if expect_sha512 and d["sha512"].lower() != str(expect_sha512).strip().lower():
            raise RecordingError(f"{source}: SHA-512 does not match the core:sha512 of its "
                                 "metadata; the data file changed or is damaged")
    return {
        "source_path": str(Path(source).resolve()) if is_file and not remote else str(source),
        "source_sha256": digest,
        "specscope_version": __version__,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def recording_provenance(recording: Recording,
                         cancelled: Callable[[], bool] | None = None) -> dict[str, str]:
    """:func:`provenance` of a recording's data file, checking a SigMF ``core:sha512``.

    Parameters
    ----------
    recording : Recording
        The source; its ``sha512``, when set, is checked.
    cancelled : callable, optional
        ``cancelled() -> bool``, asked before each block read.

    Returns
    -------
    dict of str to str
        As :func:`provenance` returns.

    Raises
    ------
    RecordingError
        The data file's SHA-512 differs from the one its metadata states.
    Cancelled
        ``cancelled()`` returned True.
    """
    expect = getattr(recording, "sha512", None)
    return provenance(recording.path, cancelled,
                      expect_sha512=expect if isinstance(expect, str) and expect else None)


def _attr_text(v: Any) -> Any:
    """A text attribute as HDF5 holds it: UTF-8, or the name's bytes when it is not UTF-8.

    A file name that is not valid UTF-8 (``os.fsdecode`` gives it surrogates)
    is stored as its bytes; ``os.fsdecode`` of the attribute gives it back.
    """
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return np.bytes_(os.fsencode(v))
    return v


def write_provenance(f: Any, prov: dict[str, str], *, pipeline_json: str | None = None,
                     backend: str = "numpy", extra: dict[str, Any] | None = None) -> Any:
    """Write the ``provenance`` group of an open ``h5py.File`` (and the root attributes).

    Group attributes: ``source_path``, ``source_sha256``, ``created_utc`` (ISO 8601,
    UTC), ``backend``, ``specscope_version`` and ``version_<package>`` for numpy,
    scipy, h5py, hdf5 (and cupy/hdf5plugin when installed).  The pipeline JSON is
    a string dataset ``provenance/pipeline`` (attributes are limited to 64 KiB).
    :data:`PROVENANCE_ATTRS` are written on the file root too.

    Parameters
    ----------
    f : h5py.File
        The output, open for writing.
    prov : dict of str to str
        What :func:`provenance` returned.
    pipeline_json : str, optional
        The pipeline as JSON, stored as the ``provenance/pipeline`` dataset.
    backend : str
        The array back end that computed the data (``"numpy"`` or ``"cupy"``).
    extra : dict, optional
        More attributes for the group.

    Returns
    -------
    h5py.Group
        The ``provenance`` group.
    """
    for k in PROVENANCE_ATTRS:
        if k in prov:
            f.attrs[k] = _attr_text(prov[k])
    g = f.require_group("provenance")
    for k, v in prov.items():
        g.attrs[k] = _attr_text(v)
    g.attrs["backend"] = backend
    for name, v in package_versions().items():
        g.attrs[f"version_{name}"] = v
    for k, v in (extra or {}).items():
        g.attrs[k] = v
    if pipeline_json is not None:
        import h5py

        g.create_dataset("pipeline", data=pipeline_json,
                         dtype=h5py.string_dtype("utf-8"))
    return g


_MISSING = object()


def _where(where: str, name: str) -> str:
    return f"{where}: attribute {name}" if where else f"attribute {name}"


_DEFAULT = object()


def _attr(attrs: Any, name: str, where: str, default: Any) -> Any:
    """The attribute, a numpy scalar as a Python one; _DEFAULT when missing with a default."""
    v = attrs.get(name)
    if v is None:
        if default is _MISSING:
            raise RecordingError(f"{_where(where, name)} is missing")
        return _DEFAULT
    if isinstance(v, (np.generic, np.ndarray)) and np.shape(v) == ():
        v = v.item()  # numpy scalars as Python numbers (and as errors repeat them)
    return v


def read_text_attr(attrs: Any, name: str, where: str = "", *, default: Any = _MISSING) -> Any:
    """A text attribute of an output (a file name stored as bytes comes back decoded).

    Parameters
    ----------
    attrs : h5py.AttributeManager or mapping
        The attributes (``f.attrs``).
    name : str
        The attribute.
    where : str
        Put in front of errors (the file's name).
    default : object, optional
        Returned when the attribute is missing; without it a missing one is an error.

    Returns
    -------
    str
        The text (or ``default``).

    Raises
    ------
    RecordingError
        Missing (without ``default``) or not text; the message names the attribute.
    """
    v = _attr(attrs, name, where, default)
    if v is _DEFAULT:
        return default
    if isinstance(v, (bytes, np.bytes_)):
        return os.fsdecode(bytes(v))  # a non-UTF-8 file name
    if not isinstance(v, str):
        raise RecordingError(f"{_where(where, name)}={shown(v)} must be text")
    return v


def read_int_attr(attrs: Any, name: str, where: str = "", *, minimum: int = 0,
                  default: Any = _MISSING) -> Any:
    """A whole-number attribute of an output (a sample position, a chunk size).

    Parameters
    ----------
    attrs : h5py.AttributeManager or mapping
        The attributes (``f.attrs``).
    name : str
        The attribute.
    where : str
        Put in front of errors (the file's name).
    minimum : int
        The smallest value accepted.
    default : object, optional
        Returned when the attribute is missing; without it a missing one is an error.

    Returns
    -------
    int
        The number (or ``default``).

    Raises
    ------
    RecordingError
        Missing (without ``default``), not a whole number (text such as ``'nan'``, a
        fraction, an array) or below ``minimum``; the message names the attribute.
    """
    v = _attr(attrs, name, where, default)
    if v is _DEFAULT:
        return default
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise RecordingError(f"{_where(where, name)}={shown(v)} must be a whole number "
                             f">= {minimum}")
    if v < minimum:
        raise RecordingError(f"{_where(where, name)}={int(v)} must be >= {minimum}")
    return int(v)


#: the root attribute that holds the calibration of the recording an output was made of
CALIBRATION_ATTR = "calibration"


def calibration_attr(calibration: Any) -> dict[str, str]:
    """The root attribute of an output of a calibrated recording, or none.

    The values of the output stay as computed (dB re full scale, or full-scale units);
    ``Calibration.from_dict(json.loads(f.attrs["calibration"])).offset_db(f)`` is the
    dB to add at frequency ``f``.

    Parameters
    ----------
    calibration : Calibration, dict or None
        A :class:`~specscope.compute.levels.Calibration` (or its ``to_dict()``).

    Returns
    -------
    dict
        ``{"calibration": JSON}``; empty for None.

    Examples
    --------
    >>> calibration_attr(None)
    {}
    """
    if calibration is None:
        return {}
    d = calibration if isinstance(calibration, dict) else calibration.to_dict()
    return {CALIBRATION_ATTR: json.dumps(d, ensure_ascii=False)}
