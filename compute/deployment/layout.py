"""The ``/deployment`` group of an HDF5 output computed from a deployment.

An output of a deployment runs each contiguous segment on its own (no filter history or
frame crosses a gap) and stores the outputs of the segments end to end.
:func:`write_deployment_group` records where each segment's outputs lie, the files and
their times, and sets the ``/time`` scale to each output's place on the deployment's
sample axis (docs/reference/hdf5-layout.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

__all__ = ["DEPLOYMENT_FORMAT", "utc_text", "write_deployment_group"]

#: ``format`` of the ``/deployment`` group of an output computed from a deployment
DEPLOYMENT_FORMAT = "specscope/deployment/1"


def utc_text(when: datetime) -> str:
    """An aware time as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (the time given in UTC)."""
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_deployment_group(f: Any, dep: Any, segments: Sequence[dict[str, int]], start: int,
                           sample_rate: float, stft: Any = None) -> Any:
    """Write the ``/deployment`` group of an open output and set its ``/time`` scale.

    Parameters
    ----------
    f : h5py.File
        The output, open for writing, its ``/time`` written as one run from the first
        segment's first output.
    dep : Deployment
        The source.
    segments : sequence of dict
        Per segment run: ``start`` and ``stop`` (its samples on the deployment's axis),
        ``first`` (the sample of its first output or frame start), ``out_start`` and
        ``out_stop`` (its rows of ``/signal`` or frames of ``/spectrogram``).
    start : int
        The first sample of the range run.
    sample_rate : float
        The output's sample rate.
    stft : object, optional
        The spectrogram's parameters (``hop``, ``nfft``) when the output is one.

    Returns
    -------
    h5py.Group
        The ``/deployment`` group.
    """
    import h5py

    text = h5py.string_dtype("utf-8")
    fs = float(sample_rate)
    g = f.create_group("deployment")
    g.attrs["format"] = DEPLOYMENT_FORMAT
    g.attrs["source"] = str(dep.index.source)
    g.attrs["tz"] = str(dep.index.tz)
    g.attrs["fingerprint"] = dep.fingerprint()
    g.attrs["start_utc"] = utc_text(dep.time_at(start))
    g.attrs["sample_rate"] = fs
    rows = np.asarray([(s["start"], s["stop"]) for s in segments], np.int64).reshape(-1, 2)
    outs = np.asarray([(s["out_start"], s["out_stop"]) for s in segments],
                      np.int64).reshape(-1, 2)
    g.create_dataset("segment_samples", data=rows).attrs["long_name"] = (
        "first and end sample of each contiguous segment run, on the deployment's axis")
    g.create_dataset("segment_outputs", data=outs).attrs["long_name"] = (
        "first and end output (row of /signal, frame of /spectrogram) of each segment")
    g.create_dataset("segment_start_utc",
                     data=[utc_text(dep.time_at(s["start"])) for s in segments], dtype=text)
    files = dep.files
    g.create_dataset("file_path", data=[str(e.path) for e in files], dtype=text)
    g.create_dataset("file_first_sample", data=np.asarray(dep.file_offsets()[:-1], np.int64))
    g.create_dataset("file_start_utc", data=[utc_text(e.start) for e in files], dtype=text)
    if "time" not in f:
        return g
    # gaps take no samples, but a segment's first outputs (a valid-mode step's) or frames
    # do not continue the previous segment's
    tds = f["time"]
    step = 1 if stft is None else int(stft.hop)
    centre = 0.0 if stft is None else stft.nfft / 2
    first = segments[0]["first"] if segments else 0
    for seg in segments:
        o0, o1 = seg["out_start"], seg["out_stop"]
        if seg["first"] == first + o0 * step:
            continue  # written so by the writer already
        for i in range(o0, o1, 1 << 20):
            j = min(o1, i + (1 << 20))
            tds[i:j] = (seg["first"] + np.arange(i - o0, j - o0) * step + centre) / fs
    return g
