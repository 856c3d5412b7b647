"""Spectrograms in HDF5: full-resolution export, read-back, and display images.

:func:`export_spectrogram` computes the spectrogram of a whole channel in
blocks and writes it crash-safe (:func:`~specscope.compute.output.atomic_h5`)
with its provenance; :func:`create_spectrogram_datasets` is the layout shared
with pipeline outputs; :func:`write_display_image` writes the dB image of a
view with its axes.  Both carry the recording's annotations inside what they
show (the ``/annotations`` table).  The layout is documented in
``docs/reference/hdf5-layout.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .. import operators
from ..errors import Cancelled
from ..files import check_writes, recording_files, refuse_overwriting_inputs
from ..io import Recording
from ..spectral import FRAMES_PER_BLOCK, StftParams, window_text
from ..types import FreqScale
from .annotation_table import write_annotation_table
from .hdf5 import atomic_h5, dataset_options
from .provenance import calibration_attr, provenance, recording_provenance, write_provenance

FORMAT_TAG = "specscope/spectrogram/1"
#: format tag of a written display image
VIEW_FORMAT_TAG = "specscope/view/1"


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
    (:func:`~specscope.compute.output.write_provenance`) and the format tag on
    the file.  Shared by :func:`export_spectrogram` and the pipeline outputs.

    Parameters
    ----------
    f : h5py.File
        The output, open for writing.
    times : numpy.ndarray
        Frame centres in seconds.
    freqs : numpy.ndarray
        Bin frequencies in Hz.
    attrs : dict
        Attributes of the analysis (``sample_rate``, ``nfft``, ``hop``, ``window`` ...).
    prov : dict of str to str
        :func:`~specscope.compute.output.provenance` of the source.
    n_channels : int, optional
        Number of channels; ``None`` lays out one channel without a channel axis.
    channels : list of int, optional
        Source channel numbers for the ``channel`` scale; ``0..n_channels-1`` by default.
    pipeline_json : str, optional
        The pipeline as JSON, kept in the provenance group.
    backend : str
        The array back end that computes the values.

    Returns
    -------
    h5py.Dataset
        The ``spectrogram`` dataset, allocated and not yet filled.
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
                       cancelled: Callable[[], bool] | None = None,
                       calibration: Any = None) -> Path:
    """Compute the full-resolution spectrogram of one channel and write it to HDF5.

    Layout: dataset ``spectrogram`` shaped (time, frequency), float32,
    chunked along time, compressed, with fletcher32 checksums, with ``time``
    (frame centres, s) and ``frequency`` (Hz) attached as dimension scales; STFT parameters and
    provenance as attributes of the file and the dataset.  The recording is
    processed in blocks of frames by the ``stft_power`` operator; the numbers equal a
    whole-file :func:`~specscope.compute.spectrogram`.  A deployment is framed per
    contiguous segment (as the tile engine's frame grid): no frame crosses a gap, the
    ``time`` scale gives each frame's centre on its sample axis.

    Parameters
    ----------
    recording : Recording
        The source.
    out : str or PathLike
        The HDF5 file to write.
    params : StftParams
        The analysis (``nfft``, ``hop``, window, scaling).
    channel : int
        The source channel.
    progress : callable, optional
        ``progress(fraction)`` after each block of frames.
    cancelled : callable, optional
        Polled between blocks; :class:`~specscope.compute.Cancelled` abandons the file.
    calibration : Calibration, optional
        The recording's; kept as the root attribute ``calibration`` (JSON,
        :func:`~specscope.compute.output.provenance.calibration_attr`).

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    InputError
        The channel is out of range, the recording is shorter than ``nfft``, or
        ``out`` is one of the recording's files.
    RecordingError
        The source cannot be read or the output cannot be written.
    Cancelled
        ``cancelled()`` returned True; nothing is written.
    """
    refuse_overwriting_inputs([out], recording_files(recording))
    recording.channel_list(channel)
    fs = recording.sample_rate
    # a deployment's frames are planned per contiguous segment: none crosses a gap
    segments = getattr(recording, "segments", None)
    segs = segments() if callable(segments) else [(0, recording.n_samples)]
    params.check_length(max(b - a for a, b in segs), recording.path.name)
    runs = [(a, params.n_frames(b - a)) for a, b in segs if b - a >= params.nfft]
    n_frames = sum(k for _, k in runs)
    two_sided = recording.is_complex
    freqs = params.frequencies(fs, two_sided)
    if recording.center_frequency:
        freqs = freqs + recording.center_frequency
    if len(segs) == 1:
        times = params.frame_times(recording.n_samples, fs)
        last_end = (n_frames - 1) * params.hop + params.nfft if n_frames else 0
    else:
        times = np.concatenate([(a + np.arange(k) * params.hop + params.nfft / 2) / fs
                                for a, k in runs])
        last_end = runs[-1][0] + (runs[-1][1] - 1) * params.hop + params.nfft
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
        f.attrs.update(calibration_attr(calibration))
        write_annotation_table(f, recording.annotations, start_s=0.0, stop_s=last_end / fs,
                               channels=[int(channel)])
        f.flush()  # the scales written so far are not left for the close
        pos = 0
        for a, count in runs:
            for j0 in range(0, count, FRAMES_PER_BLOCK):
                if cancelled is not None and cancelled():
                    raise Cancelled()
                j1 = min(j0 + FRAMES_PER_BLOCK, count)
                x = recording.read(a + j0 * params.hop, a + (j1 - 1) * params.hop + params.nfft,
                                   channel)[:, 0]
                frames = operators.call("stft_power", x, fs=fs, two_sided=two_sided,
                                        layout="frames", **params.operator_params())
                # written a chunk of the dataset at a time, each flushed at once (HDF5's
                # chunk cache would keep them for a close that compresses them all),
                # asking for Cancel before each: a block of frames takes 0.2-0.3 s
                i0, rows = 0, ds.chunks[0]
                while i0 < j1 - j0:
                    if i0 and cancelled is not None and cancelled():
                        raise Cancelled()
                    i1 = min(j1 - j0, ((pos + i0) // rows + 1) * rows - pos)
                    ds[pos + i0:pos + i1, :] = frames[i0:i1]
                    ds.id.flush()
                    i0 = i1
                pos += j1 - j0
                check_writes(f)
                if progress is not None:
                    progress(pos / n_frames)
    return Path(out)


def read_spectrogram(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read an exported spectrogram back: arrays and attributes.

    Parameters
    ----------
    path : str or PathLike
        A file written by :func:`export_spectrogram` (single channel).

    Returns
    -------
    dict
        ``spectrogram`` (time, frequency), ``time`` (s), ``frequency`` (Hz),
        ``attrs`` (the file's attributes) and ``dataset_attrs``.
    """
    import h5py

    with h5py.File(path, "r") as f:
        ds = f["spectrogram"]
        return {"spectrogram": ds[...], "time": f["time"][...],
                "frequency": f["frequency"][...], "attrs": dict(f.attrs),
                "dataset_attrs": dict(ds.attrs)}


def write_display_image(image: Any, out: str | os.PathLike[str], recording: Recording,
                        params: StftParams, *, channel: int = 0,
                        freq_scale: FreqScale = "linear", calibration: Any = None) -> Path:
    """Write a display image's values (dB) and axes to HDF5, crash-safe, with provenance.

    Layout: ``level_db`` shaped (time, frequency) with ``time`` (column
    centres, s) and ``frequency`` (row centres, Hz) as dimension scales,
    and ``time_edges`` / ``frequency_edges``; attributes say how each
    column aggregates frames.

    Parameters
    ----------
    image : DisplayImage
        A :class:`~specscope.compute.view.DisplayImage` (its ``db``,
        ``column_edges``, ``frequency_edges``, ``reduce``, ``level`` and
        ``frames_per_column`` are written).
    out : path
        The HDF5 file.
    recording : Recording
        The recording the image shows (its provenance and sample rate).
    params : StftParams
        The analysis the image was computed with.
    channel : int
        The channel shown.
    freq_scale : str
        The frequency axis of the image (``"linear"``, ``"log"``, ``"mel"``).
    calibration : Calibration, optional
        The recording's; kept as the root attribute ``calibration`` (the values stay
        in dB re full scale).

    Returns
    -------
    Path
        ``out``.
    """
    refuse_overwriting_inputs([out], recording_files(recording))
    t_edges = np.asarray(image.column_edges, dtype=np.float64)
    f_edges = np.asarray(image.frequency_edges, dtype=np.float64)
    with atomic_h5(out) as f:
        f.attrs["format"] = VIEW_FORMAT_TAG
        write_provenance(f, provenance(recording.path))
        f.attrs.update(calibration_attr(calibration))
        ds = f.create_dataset("level_db", data=np.ascontiguousarray(image.db.T),
                              compression="gzip", shuffle=True)
        t = f.create_dataset("time", data=(t_edges[:-1] + t_edges[1:]) / 2)
        fr = f.create_dataset("frequency", data=(f_edges[:-1] + f_edges[1:]) / 2)
        f.create_dataset("time_edges", data=t_edges)
        f.create_dataset("frequency_edges", data=f_edges)
        t.attrs["units"], fr.attrs["units"] = "s", "Hz"
        t.make_scale("time")
        fr.make_scale("frequency")
        ds.dims[0].attach_scale(t)
        ds.dims[1].attach_scale(fr)
        attrs = {"units": "dB", "sample_rate": float(recording.sample_rate),
                 "nfft": params.nfft, "hop": params.hop, "window": window_text(params.window),
                 "scaling": params.scaling, "channel": int(channel),
                 "reduce": image.reduce, "pyramid_level": int(image.level),
                 "frames_per_column": float(image.frames_per_column),
                 "frequency_scale": freq_scale}
        for k, v in attrs.items():
            ds.attrs[k] = v
        # the image's time 0 is its first column edge
        write_annotation_table(f, recording.annotations, start_s=float(t_edges[0]),
                               stop_s=float(t_edges[-1]),
                               channels=[int(channel)] if channel >= 0 else None)
    return Path(out)
