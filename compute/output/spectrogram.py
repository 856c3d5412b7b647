"""Crash-safe HDF5 export of spectrograms, and what every HDF5 output shares.

The file is written to a temporary name in the destination folder, reopened
and checked, then moved into place with ``os.replace``: a failed, cancelled or
killed export never leaves a partial file under the requested name and never
damages a file already there.  A killed export leaves its temporary file
(``.<name>.<random>.partial``) behind; the next export to the same
destination removes those older than :data:`STALE_PARTIAL_S` seconds
(environment variable ``SPECSCOPE_STALE_PARTIAL_S``).

Every output carries a ``provenance`` group (:func:`write_provenance`) and
its datasets are chunked with gzip + shuffle (zstd through blosc when the
optional ``hdf5plugin`` package is importable) and fletcher32 checksums
(:func:`dataset_options`).  The layout is documented in ``docs/hdf5-layout.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import Cancelled, RecordingError
from ..io.base import Recording
from ..spectral import FRAMES_PER_BLOCK, StftParams, stft_frames, window_text

FORMAT_TAG = "specscope/spectrogram/1"
#: temporary files of killed exports older than this (seconds) are removed by the next
#: export to the same destination
STALE_PARTIAL_S = 15 * 60
_UMASK = os.umask(0o022)
os.umask(_UMASK)
#: file attributes of provenance, kept on the file root for older readers
PROVENANCE_ATTRS = ("source_path", "source_sha256", "specscope_version", "created_utc")
#: distributions whose versions the provenance records (read from their metadata only:
#: nothing is imported, so CuPy is never loaded on a CPU-only machine)
VERSIONED = ("specscope", "numpy", "scipy", "h5py", "hdf5plugin", "cupy", "cupy-cuda12x",
             "cupy-cuda11x", "cupy-cuda13x")


def sha256_file(path: str | os.PathLike[str], *, block: int = 1 << 20,
                cancelled: Callable[[], bool] | None = None) -> str:
    """SHA-256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            h.update(chunk)
    return h.hexdigest()


def _digests(path: str | os.PathLike[str], names: tuple[str, ...], *, block: int = 1 << 20,
             cancelled: Callable[[], bool] | None = None) -> dict[str, str]:
    """Several digests of a file in one pass."""
    hs = {n: hashlib.new(n) for n in names}
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            if cancelled is not None and cancelled():
                raise Cancelled()
            for h in hs.values():
                h.update(chunk)
    return {n: h.hexdigest() for n, h in hs.items()}


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that shape the numbers (metadata only)."""
    from importlib.metadata import PackageNotFoundError, version

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
    """
    is_file = Path(source).is_file()
    digest = ""
    if is_file:
        names = ("sha256", "sha512") if expect_sha512 else ("sha256",)
        d = _digests(source, names, cancelled=cancelled)
        digest = d["sha256"]
        if expect_sha512 and d["sha512"].lower() != str(expect_sha512).strip().lower():
            raise RecordingError(f"{source}: SHA-512 does not match the core:sha512 of its "
                                 "metadata; the data file changed or is damaged")
    return {
        "source_path": str(Path(source).resolve()) if is_file else str(source),
        "source_sha256": digest,
        "specscope_version": __version__,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def recording_provenance(recording: Recording,
                         cancelled: Callable[[], bool] | None = None) -> dict[str, str]:
    """:func:`provenance` of a recording's data file, checking a SigMF ``core:sha512``."""
    expect = getattr(recording, "_sha512", None)
    return provenance(recording.path, cancelled,
                      expect_sha512=expect if isinstance(expect, str) and expect else None)


def write_provenance(f: Any, prov: dict[str, str], *, pipeline_json: str | None = None,
                     backend: str = "numpy", extra: dict[str, Any] | None = None) -> Any:
    """Write the ``provenance`` group of an open ``h5py.File`` (and the root attributes).

    Group attributes: ``source_path``, ``source_sha256``, ``created_utc`` (ISO 8601,
    UTC), ``backend``, ``specscope_version`` and ``version_<package>`` for numpy,
    scipy, h5py, hdf5 (and cupy/hdf5plugin when installed).  The pipeline JSON is
    a string dataset ``provenance/pipeline`` (attributes are limited to 64 KiB).
    The four historical keys stay on the file root too.
    """
    for k in PROVENANCE_ATTRS:
        if k in prov:
            f.attrs[k] = prov[k]
    g = f.require_group("provenance")
    for k, v in prov.items():
        g.attrs[k] = v
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


def compression_options() -> dict[str, Any]:
    """Compression of every dataset: zstd (blosc) with ``hdf5plugin``, else gzip + shuffle."""
    try:
        import hdf5plugin
    except ImportError:
        return {"compression": "gzip", "compression_opts": 4, "shuffle": True}
    return dict(hdf5plugin.Blosc(cname="zstd", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))


def dataset_options(shape: tuple[int, ...], chunks: tuple[int, ...] | None = None
                    ) -> dict[str, Any]:
    """``create_dataset`` keywords: chunks, compression and fletcher32 checksums.

    Empty datasets cannot be chunked in HDF5 without a growable shape; they are
    stored contiguous, without filters.
    """
    if any(int(n) == 0 for n in shape):
        return {}
    opts: dict[str, Any] = {"chunks": tuple(int(c) for c in chunks) if chunks else True,
                            "fletcher32": True}
    opts.update(compression_options())
    return opts


def clean_stale_partials(dest: str | os.PathLike[str], max_age_s: float | None = None) -> list[Path]:
    """Remove temporary files of killed exports to ``dest`` older than ``max_age_s``.

    Only names made by this module for this destination (``.<name>.*.partial`` in
    its folder) are considered.  Returns the removed paths.
    """
    dest = Path(dest)
    if max_age_s is None:
        try:
            max_age_s = float(os.environ.get("SPECSCOPE_STALE_PARTIAL_S", STALE_PARTIAL_S))
        except ValueError:
            max_age_s = STALE_PARTIAL_S
    folder = dest.parent if str(dest.parent) else Path(".")
    prefix = f".{dest.name}."
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        if not (e.name.startswith(prefix) and e.name.endswith(".partial")):
            continue
        middle = e.name[len(prefix):-len(".partial")]
        if not middle or "." in middle:  # mkstemp's random part only
            continue
        try:
            if e.is_file(follow_symlinks=False) and \
                    now - e.stat(follow_symlinks=False).st_mtime >= max_age_s:
                os.unlink(e.path)
                removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (best effort; not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_file(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[Path]:
    """A temporary path in ``path``'s folder, moved over ``path`` when the body succeeds.

    The body writes the yielded path (and may raise to abandon it); on success
    the data is fsynced and ``os.replace`` publishes it.  Stale temporary files
    of killed runs to the same destination are removed first.
    """
    dest = Path(path)
    if dest.is_dir():
        raise RecordingError(f"{dest}: is a folder; give a {what} name")
    folder = dest.parent if str(dest.parent) else Path(".")
    if not folder.is_dir():
        raise RecordingError(f"{dest}: the folder {folder} does not exist")
    clean_stale_partials(dest)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{dest.name}.", suffix=".partial")
    except OSError as exc:
        raise RecordingError(f"{dest}: cannot write in {folder} "
                             f"({exc.strerror or exc})") from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give what open() would
        os.replace(tmp, dest)
        _fsync_folder(folder)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _check_dataset(name: str, obj: Any) -> None:
    """Read the first and last element of a dataset (checksums are verified on read)."""
    import h5py

    if isinstance(obj, h5py.Dataset) and obj.shape and obj.size:
        obj[(0,) * obj.ndim]
        obj[tuple(n - 1 for n in obj.shape)]


@contextmanager
def atomic_h5(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Open an HDF5 file for writing under a temporary name; publish it on success.

    The body writes into the yielded ``h5py.File``.  On success the file is
    closed, reopened read-only to check it, and renamed over ``path``.  On any
    exception the temporary file is removed and ``path`` is untouched.
    """
    import h5py

    with atomic_file(path, what="file name ending in .h5") as tmp:
        with h5py.File(tmp, "w") as f:
            yield f
        with h5py.File(tmp, "r") as f:  # verify the file reopens and its data reads
            f.visititems(_check_dataset)


def create_spectrogram_datasets(f: Any, times: np.ndarray, freqs: np.ndarray,
                                attrs: dict[str, Any], prov: dict[str, str], *,
                                n_channels: int | None = None,
                                channels: list[int] | None = None,
                                pipeline_json: str | None = None,
                                backend: str = "numpy") -> Any:
    """Lay out a spectrogram export in an open ``h5py.File``; return the empty dataset.

    Dataset ``spectrogram`` shaped (time, frequency) -- or (channel, time,
    frequency) when ``n_channels`` is given -- float32, chunked along time,
    compressed with fletcher32 checksums (:func:`dataset_options`), with
    ``time`` (s) and ``frequency`` (Hz) -- and ``channel`` (source channel
    numbers) for several channels -- attached as dimension scales; ``attrs``
    on the file and the dataset, the ``provenance`` group
    (:func:`write_provenance`) and the format tag on the file.  Shared by
    :func:`export_spectrogram`, the pipeline runner and the writers.
    """
    n_frames = int(np.size(times))
    f.attrs["format"] = FORMAT_TAG
    write_provenance(f, prov, pipeline_json=pipeline_json, backend=backend)
    tds = f.create_dataset("time", data=np.asarray(times, np.float64),
                           **dataset_options((n_frames,)))
    tds.attrs["units"] = "s"
    tds.attrs["long_name"] = "time of the frame centre from the start of the source"
    fds = f.create_dataset("frequency", data=np.asarray(freqs, np.float64),
                           **dataset_options((freqs.size,)))
    fds.attrs["units"] = "Hz"
    chunk_t = max(1, min(n_frames, max(1, (1 << 20) // (4 * max(1, freqs.size)))))
    lead = () if n_channels is None else (int(n_channels),)
    shape = (*lead, n_frames, freqs.size)
    ds = f.create_dataset("spectrogram", shape=shape, dtype="float32",
                          **dataset_options(shape, (*(1,) * len(lead), chunk_t,
                                                    max(1, freqs.size))))
    for k, v in attrs.items():
        ds.attrs[k] = v
        f.attrs[k] = v
    tds.make_scale("time")
    fds.make_scale("frequency")
    if lead:
        cds = f.create_dataset("channel", data=np.asarray(
            channels if channels is not None else range(lead[0]), np.int64))
        cds.attrs["long_name"] = "channel number in the source"
        cds.make_scale("channel")
        ds.dims[0].attach_scale(cds)
        ds.dims[0].label = "channel"
    ds.dims[len(lead)].attach_scale(tds)
    ds.dims[len(lead)].label = "time"
    ds.dims[len(lead) + 1].attach_scale(fds)
    ds.dims[len(lead) + 1].label = "frequency"
    return ds


def export_spectrogram(recording: Recording, out: str | os.PathLike[str],
                       params: StftParams, *, channel: int = 0,
                       progress: Callable[[float], None] | None = None,
                       cancelled: Callable[[], bool] | None = None) -> Path:
    """Compute the full-resolution spectrogram of one channel and write it to HDF5.

    Layout: dataset ``spectrogram`` shaped (time, frequency), float32,
    chunked along time, compressed, with fletcher32 checksums, with ``time`` (frame centres, s) and
    ``frequency`` (Hz) attached as dimension scales; STFT parameters and
    provenance as attributes of the file and the dataset.  The recording is
    processed in blocks of frames; the numbers equal a whole-file
    :func:`~specscope.compute.spectral.spectrogram`.
    """
    recording._channel_list(channel)
    fs = recording.sample_rate
    params.check_length(recording.n_samples, recording.path.name)
    n_frames = params.n_frames(recording.n_samples)
    two_sided = recording.is_complex
    freqs = params.frequencies(fs, two_sided)
    if recording.center_frequency:
        freqs = freqs + recording.center_frequency
    times = params.frame_times(recording.n_samples, fs)
    prov = recording_provenance(recording, cancelled)
    units = recording.units + params.units_suffix
    with atomic_h5(out) as f:
        attrs = {"sample_rate": float(fs), "nfft": int(params.nfft), "hop": int(params.hop),
                 "window": window_text(params.window), "scaling": params.scaling, "units": units,
                 "channel": int(channel), "two_sided": bool(two_sided),
                 "center_frequency": float(recording.center_frequency or 0.0)}
        pipeline_json = json.dumps({"specscope": "pipeline/1", "name": "spectrogram", "steps": [
            {"op": "spectrogram", "params": {"nfft": int(params.nfft), "hop": int(params.hop),
                                             "window": window_text(params.window),
                                             "scaling": params.scaling}}]})
        ds = create_spectrogram_datasets(f, times, freqs, attrs, prov,
                                         pipeline_json=pipeline_json)
        for k0 in range(0, n_frames, FRAMES_PER_BLOCK):
            if cancelled is not None and cancelled():
                raise Cancelled()
            k1 = min(k0 + FRAMES_PER_BLOCK, n_frames)
            x = recording.read(k0 * params.hop, (k1 - 1) * params.hop + params.nfft,
                               channel)[:, 0]
            ds[k0:k1, :] = stft_frames(x, params, fs, two_sided=two_sided).T
            if progress is not None:
                progress(k1 / n_frames)
    return Path(out)


def read_spectrogram(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read an exported spectrogram back: arrays and attributes."""
    import h5py

    with h5py.File(path, "r") as f:
        ds = f["spectrogram"]
        return {"spectrogram": ds[...], "time": f["time"][...],
                "frequency": f["frequency"][...], "attrs": dict(f.attrs),
                "dataset_attrs": dict(ds.attrs)}
