"""Crash-safe HDF5 export of spectrograms.

The file is written to a temporary name in the destination folder, reopened
and checked, then moved into place with ``os.replace``: a failed, cancelled or
killed export never leaves a partial file under the requested name and never
damages a file already there.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ._version import __version__
from .errors import Cancelled, RecordingError
from .io.base import Recording
from .spectral import FRAMES_PER_BLOCK, StftParams, stft_frames, window_text

FORMAT_TAG = "specscope/spectrogram/1"


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


def provenance(source: str | os.PathLike[str],
               cancelled: Callable[[], bool] | None = None) -> dict[str, str]:
    """Attributes that say where an export came from (no hash for in-memory sources)."""
    is_file = Path(source).is_file()
    return {
        "source_path": str(Path(source).resolve()) if is_file else str(source),
        "source_sha256": sha256_file(source, cancelled=cancelled) if is_file else "",
        "specscope_version": __version__,
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


@contextmanager
def atomic_h5(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Open an HDF5 file for writing under a temporary name; publish it on success.

    The body writes into the yielded ``h5py.File``.  On success the file is
    closed, reopened read-only to check it, and renamed over ``path``.  On any
    exception the temporary file is removed and ``path`` is untouched.
    """
    import h5py

    dest = Path(path)
    if dest.is_dir():
        raise RecordingError(f"{dest}: is a folder; give a file name ending in .h5")
    folder = dest.parent if str(dest.parent) else Path(".")
    if not folder.is_dir():
        raise RecordingError(f"{dest}: the folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{dest.name}.", suffix=".partial")
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            yield f
        with h5py.File(tmp, "r") as f:  # verify the file reopens
            f.visit(lambda name: None)
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def create_spectrogram_datasets(f: Any, times: np.ndarray, freqs: np.ndarray,
                                attrs: dict[str, Any], prov: dict[str, str], *,
                                n_channels: int | None = None) -> Any:
    """Lay out a spectrogram export in an open ``h5py.File``; return the empty dataset.

    Dataset ``spectrogram`` shaped (time, frequency) -- or (channel, time,
    frequency) when ``n_channels`` is given -- float32, chunked along time,
    gzip + shuffle, with ``time`` (s) and ``frequency`` (Hz) attached as
    dimension scales; ``attrs`` on the file and the dataset, provenance and
    the format tag on the file.  Shared by :func:`export_spectrogram` and the
    pipeline runner.
    """
    n_frames = int(np.size(times))
    f.attrs["format"] = FORMAT_TAG
    for k, v in prov.items():
        f.attrs[k] = v
    tds = f.create_dataset("time", data=times)
    tds.attrs["units"] = "s"
    fds = f.create_dataset("frequency", data=freqs)
    fds.attrs["units"] = "Hz"
    chunk_t = max(1, min(n_frames, max(1, (1 << 20) // (4 * freqs.size))))
    lead = () if n_channels is None else (int(n_channels),)
    ds = f.create_dataset("spectrogram", shape=(*lead, n_frames, freqs.size), dtype="float32",
                          chunks=(*(1,) * len(lead), chunk_t, freqs.size), compression="gzip",
                          compression_opts=4, shuffle=True)
    for k, v in attrs.items():
        ds.attrs[k] = v
        f.attrs[k] = v
    tds.make_scale("time")
    fds.make_scale("frequency")
    if lead:
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
    chunked along time, gzip + shuffle, with ``time`` (frame centres, s) and
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
    prov = provenance(recording.path, cancelled)
    units = recording.units + params.units_suffix
    with atomic_h5(out) as f:
        attrs = {"sample_rate": float(fs), "nfft": int(params.nfft), "hop": int(params.hop),
                 "window": window_text(params.window), "scaling": params.scaling, "units": units,
                 "channel": int(channel), "two_sided": bool(two_sided),
                 "center_frequency": float(recording.center_frequency or 0.0)}
        ds = create_spectrogram_datasets(f, times, freqs, attrs, prov)
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
