"""Pipeline outputs in HDF5: the files a pipeline run over a recording writes.

:func:`write_pipeline_output` writes the blocks of a run crash-safe
(:func:`~specscope.compute.output.atomic_h5`): spectrogram pipelines use the
layout of :func:`~specscope.compute.output.export_spectrogram`, time-domain
pipelines a ``signal`` dataset shaped (samples, channels) with ``time`` and
``channel`` scales, which :func:`~specscope.compute.open_recording` opens as a
recording.  Both carry the provenance group, the run's header attributes (the
pipeline, source options, range, channels, chunking: what ``rerun`` needs)
the designed filter coefficients and the recording's annotations inside the
output (the ``/annotations`` table).  :func:`export_recording` runs a
pipeline over one channel of an open recording into such a file.  The layout
is documented in ``docs/reference/hdf5-layout.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..annotations import Annotation
from ..errors import Cancelled, RecordingError
from ..files import check_writes, refuse_overwriting_inputs
from ..pipeline import DEFAULT_CHUNK_SAMPLES, SCHEMA, BoundPipeline, Pipeline
from ..spectral import window_text
from .annotation_table import write_annotation_table
from .hdf5 import atomic_h5, dataset_options
from .provenance import recording_provenance, write_provenance
from .spectrogram import create_spectrogram_datasets

SIGNAL_FORMAT = "specscope/signal/1"


def recording_meta(rec: Any) -> dict[str, Any]:
    """What a pipeline output needs to know of its recording, in plain (picklable) types.

    Parameters
    ----------
    rec : Recording
        The source recording.

    Returns
    -------
    dict
        Keys ``path`` (str), ``sample_rate`` (Hz), ``n_samples``, ``n_channels``,
        ``is_complex``, ``center_frequency`` (Hz, 0.0 when unknown) and ``units``.
    """
    return {"path": str(rec.path), "sample_rate": float(rec.sample_rate),
            "n_samples": int(rec.n_samples), "n_channels": int(rec.n_channels),
            "is_complex": bool(rec.is_complex),
            "center_frequency": float(rec.center_frequency or 0.0), "units": str(rec.units)}


def _write_header(f: Any, pipeline: Pipeline, bound: BoundPipeline, spec: dict[str, Any],
                  first: int) -> None:
    """The run's attributes on the file root and the ``pipeline`` group with coefficients."""
    f.attrs["pipeline"] = pipeline.to_json(None)
    f.attrs["pipeline_name"] = pipeline.name
    f.attrs["source_options"] = json.dumps(spec["options"])
    f.attrs["start_sample"] = int(spec["start"])
    f.attrs["stop_sample"] = int(spec["stop"])
    f.attrs["first_sample"] = int(first)
    f.attrs["channels"] = json.dumps(spec["channels"])
    f.attrs["chunk_samples"] = int(spec["chunk_samples"])
    f.attrs["task_samples"] = int(spec["task_samples"] or 0)
    f.attrs["output"] = bound.kind
    g = f.create_group("pipeline")
    g.attrs["json"] = pipeline.to_json(None)
    g.attrs["schema"] = SCHEMA
    g.attrs["name"] = pipeline.name
    cg = g.create_group("coefficients")
    for index, d in sorted(bound.coefficients().items()):
        sg = cg.create_group(f"step_{index}")
        step = pipeline.steps[index]
        sg.attrs["design"] = step.values["design"]
        sg.attrs["form"] = d.form
        sg.attrs["sample_rate"] = d.sample_rate
        sg.attrs["zero_phase"] = bool(step.values["zero_phase"])
        sg.attrs["settle_samples"] = int(d.settle)
        for name, arr in d.coefficients.items():
            arr = np.asarray(arr)
            sg.create_dataset(name, data=arr, **dataset_options(arr.shape))


def write_pipeline_output(out: Path, pipeline: Pipeline, bound: BoundPipeline,
                          meta: dict[str, Any], spec: dict[str, Any],
                          blocks: Iterable[np.ndarray], prov: dict[str, str],
                          cancelled: Callable[[], bool] | None = None, *,
                          first: int | None = None, n_out: int | None = None,
                          progress: Callable[[float], None] | None = None,
                          extra: dict[str, Any] | None = None,
                          annotations: Sequence[Annotation] | None = None) -> None:
    """Write the output blocks of a pipeline run into ``out`` (crash-safe HDF5).

    Parameters
    ----------
    out : Path
        The HDF5 file.
    pipeline : Pipeline
        The pipeline that was run (stored as JSON, with its designed coefficients).
    bound : BoundPipeline
        ``pipeline`` bound to the recording's sample rate and type.
    meta : dict
        :func:`recording_meta` of the recording.
    spec : dict
        The run: ``options`` (reader options), ``start`` and ``stop`` (source
        samples), ``channels``, ``chunk_samples`` and ``task_samples``; kept
        in the file so the run can be repeated.
    blocks : iterable of numpy.ndarray
        The pipeline's output blocks, shaped (channels, [frequency,] outputs).
    prov : dict
        :func:`~specscope.compute.output.provenance` of the source.
    cancelled : callable, optional
        Polled between blocks; :class:`~specscope.compute.Cancelled` abandons
        the file.
    first : int, optional
        Source sample of the first output; default the first output of a run
        over ``spec["start"]:spec["stop"]``.
    n_out : int, optional
        Number of outputs (samples or frames); default that of the same run.
    progress : callable, optional
        ``progress(fraction)`` after each block.
    extra : dict, optional
        Attributes for the file root.
    annotations : sequence of Annotation, optional
        The recording's; those inside the output's time range and channels
        are written as the ``/annotations`` table, shifted to the output's
        first sample (:func:`write_annotation_table`).
    """
    fs = bound.sample_rate
    start, stop = spec["start"], spec["stop"]
    if first is None:
        first = start + bound.drop
    if n_out is None:
        n_out = bound.output_length(stop - start)
    n_ch = len(spec["channels"])
    pipeline_json = pipeline.to_json(None)
    refuse_overwriting_inputs([out], [spec.get("path")])
    with atomic_h5(out) as f:
        if bound.stft is not None:
            p = bound.stft
            times = (first + np.arange(n_out) * p.hop + p.nfft / 2) / fs
            freqs = bound.frequencies(meta["center_frequency"])
            attrs = {"sample_rate": fs, "nfft": int(p.nfft), "hop": int(p.hop),
                     "window": window_text(p.window), "scaling": p.scaling,
                     "units": meta["units"] + p.units_suffix, "channel": int(spec["channels"][0]),
                     "two_sided": bool(bound.complex_output),
                     "center_frequency": meta["center_frequency"]}
            ds = create_spectrogram_datasets(f, times, freqs, attrs, prov,
                                             n_channels=None if n_ch == 1 else n_ch,
                                             channels=list(spec["channels"]),
                                             pipeline_json=pipeline_json)
        else:
            f.attrs["format"] = SIGNAL_FORMAT
            write_provenance(f, prov, pipeline_json=pipeline_json)
            ds = None
        for k, v in (extra or {}).items():
            f.attrs[k] = v
        _write_header(f, pipeline, bound, spec, first)
        # what the output covers in source samples: its samples, or its frames' extent
        covered = n_out if bound.stft is None else (
            (n_out - 1) * bound.stft.hop + bound.stft.nfft if n_out else 0)
        write_annotation_table(f, annotations, start_s=first / fs,
                               stop_s=(first + covered) / fs, channels=spec["channels"])
        f.flush()  # what is written so far (the frame times) is not left for the close
        pos = 0
        tds = None
        for block in blocks:
            if cancelled is not None and cancelled():
                raise Cancelled()
            k = block.shape[-1]
            if pos + k > n_out:
                raise RecordingError(f"{out.name}: the pipeline gave more output than "
                                     f"expected ({pos + k} > {n_out})")
            if ds is None:
                ds, tds = _signal_datasets(f, n_out, spec["channels"], block.dtype, fs,
                                           meta, first)
            # a block is compressed and written one chunk of a dataset at a time, asking
            # for Cancel before each: a block takes 0.2-0.6 s, a chunk 30-70 ms.  Each is
            # flushed at once: HDF5's chunk cache (8 MiB in HDF5 2) would keep them for a
            # close that compresses them all, Cancel or not
            step = ds.chunks[-2] if ds.chunks else max(1, k)
            for j, m in _chunk_spans(pos, k, step):
                a, b = pos + j, pos + m
                if bound.stft is None:
                    writes = [(ds, np.s_[a:b, :], block[:, j:m].T),
                              (tds, np.s_[a:b], (first + np.arange(a, b)) / fs)]
                elif n_ch == 1:
                    writes = [(ds, np.s_[a:b, :], block[0, :, j:m].T)]
                else:  # a chunk holds one channel
                    writes = [(ds, np.s_[c, a:b, :], block[c, :, j:m].T) for c in range(n_ch)]
                for target, where, values in writes:
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    target[where] = values
                    target.id.flush()
            pos += k
            check_writes(f)
            if progress is not None and n_out:
                progress(pos / n_out)
        if ds is None:
            dtype = np.complex64 if meta["is_complex"] else np.float32
            ds, tds = _signal_datasets(f, n_out, spec["channels"], dtype, fs, meta, first)
        if pos != n_out:
            raise RecordingError(f"{out.name}: the pipeline gave {pos} outputs, expected "
                                 f"{n_out}")


def _chunk_spans(pos: int, k: int, step: int) -> Iterator[tuple[int, int]]:
    """Spans ``j:m`` of a block of ``k`` outputs starting at output ``pos`` that end where
    the dataset's chunks of ``step`` outputs end (the last one where the block ends)."""
    j = 0
    while j < k:
        m = min(k, ((pos + j) // step + 1) * step - pos)
        yield j, m
        j = m


def _signal_datasets(f: Any, n: int, channels: Sequence[int], dtype: Any, fs: float,
                     meta: dict[str, Any], first: int) -> tuple[Any, Any]:
    """The empty ``signal`` (time, channel) dataset with its ``time`` and ``channel`` scales."""
    n_ch = len(channels)
    rows = max(1, min(n, (1 << 20) // max(1, n_ch * np.dtype(dtype).itemsize)))
    ds = f.create_dataset("signal", shape=(n, n_ch), dtype=dtype,
                          **dataset_options((n, n_ch), (rows, n_ch)))
    attrs = {"sample_rate": fs, "units": meta["units"], "first_sample": int(first),
             "time_offset": first / fs, "center_frequency": meta["center_frequency"]}
    for k, v in attrs.items():
        ds.attrs[k] = v
        f.attrs[k] = v
    tds = f.create_dataset("time", shape=(n,), dtype=np.float64,
                           **dataset_options((n,), (max(1, min(n, 1 << 17)),)))
    tds.attrs["units"] = "s"
    tds.attrs["long_name"] = "time of the sample from the start of the source"
    cds = f.create_dataset("channel", data=np.asarray(list(channels), np.int64))
    cds.attrs["long_name"] = "channel number in the source"
    tds.make_scale("time")
    cds.make_scale("channel")
    ds.dims[0].attach_scale(tds)
    ds.dims[0].label = "time"
    ds.dims[1].attach_scale(cds)
    ds.dims[1].label = "channel"
    return ds, tds


def export_recording(pipeline: Pipeline, recording: Any, out: str | os.PathLike[str], *,
                     channel: int = 0, chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
                     options: dict[str, Any] | None = None,
                     progress: Callable[[float], None] | None = None,
                     cancelled: Callable[[], bool] | None = None) -> Path:
    """Run ``pipeline`` over one channel of an open recording into ``out`` (crash-safe HDF5).

    The same layout and numbers as :func:`~specscope.compute.batch.run_batch`
    (one task), with progress and cancellation between chunks.

    Parameters
    ----------
    pipeline : Pipeline
        The processing.
    recording : Recording
        The open source.
    out : str or PathLike
        The HDF5 file to write.
    channel : int
        The source channel processed.
    chunk_samples : int
        Samples read at a time (bounds memory).
    options : dict, optional
        The reader options the recording was opened with (kept for ``rerun``).
    progress : callable, optional
        ``progress(fraction)`` as chunks are read.
    cancelled : callable, optional
        Polled between blocks; :class:`~specscope.compute.Cancelled` abandons the file.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    InputError
        The channel is out of range, the recording is shorter than one STFT
        frame, or ``out`` is one of the recording's files.
    RecordingError
        The source cannot be read or the output cannot be written.
    Cancelled
        ``cancelled()`` returned True; nothing is written.
    """
    meta = recording_meta(recording)
    bound = pipeline.bind(meta["sample_rate"], meta["is_complex"])
    recording.channel_list(channel)
    n = int(recording.n_samples)
    spec = {"path": str(recording.path), "options": dict(options or {}), "start": 0,
            "stop": n, "channels": [int(channel)], "chunk_samples": int(chunk_samples),
            "task_samples": None}
    if bound.stft is not None:
        bound.stft.check_length(bound.signal_length(n), recording.path.name)

    def read(a: int, b: int) -> np.ndarray:
        if progress is not None:
            progress(min(1.0, b / max(n, 1)))
        return recording.read(a, b, [int(channel)])

    prov = recording_provenance(recording, cancelled)
    blocks = bound.stream(read, 0, n, chunk_samples=int(chunk_samples))
    write_pipeline_output(Path(out), pipeline, bound, meta, spec, blocks, prov, cancelled,
                          annotations=recording.annotations)
    return Path(out)
