"""Filtered recordings: a recording through one filter into crash-safe HDF5.

:func:`filter_recording` is what ``specscope filter apply`` runs: the filter
(a spec, or a design such as imported coefficients) becomes a one-step
:class:`~specscope.compute.pipeline.Pipeline`
(:meth:`~specscope.compute.pipeline.Pipeline.from_filter`) and its output is
written as every pipeline output is (:func:`write_pipeline_output`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..files import refuse_overwriting_inputs
from ..filters import Design, FilterSpec
from ..io import open_recording
from ..pipeline import DEFAULT_CHUNK_SAMPLES, Pipeline
from .provenance import recording_provenance
from .signal import recording_meta, write_pipeline_output

__all__ = ["filter_recording"]


def filter_recording(what: FilterSpec | Design, source: str | os.PathLike[str],
                     out: str | os.PathLike[str], *,
                     chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
                     recording_options: dict[str, Any] | None = None,
                     channels: int | list[int] | None = None,
                     progress: Callable[[float], None] | None = None,
                     cancelled: Callable[[], bool] | None = None) -> Path:
    """Filter a recording file into HDF5 (crash-safe).

    Parameters
    ----------
    what : FilterSpec or Design
        A spec is designed for the recording's sample rate; a design must
        have been made for it (a different rate is refused).
    source, out : path
        The recording (any format :func:`~specscope.compute.open_recording`
        reads) and the HDF5 file written.
    chunk_samples : int
        Samples read at a time.
    recording_options : dict, optional
        Reader options for the source (kept in the file for ``rerun``).
    channels : int or list of int, optional
        Channels filtered (default: all).
    progress : callable, optional
        Called with the fraction read, in [0, 1].
    cancelled : callable, optional
        Polled between chunks; :class:`~specscope.compute.Cancelled` abandons
        the file.

    Returns
    -------
    Path
        ``out``, holding the filtered signal, the pipeline JSON (with the
        spec), the designed coefficients (group ``pipeline/coefficients``) and
        the provenance.
    """
    refuse_overwriting_inputs([out], [source])  # before anything is read
    options = dict(recording_options or {})
    with open_recording(source, **options) as rec:
        if isinstance(what, Design) and abs(rec.sample_rate - what.sample_rate) > \
                1e-9 * what.sample_rate:
            raise InputError(f"{Path(source).name}: sample rate {rec.sample_rate:g} Hz "
                             f"differs from the filter's {what.sample_rate:g} Hz")
        pipeline = Pipeline.from_filter(what)
        meta = recording_meta(rec)
        bound = pipeline.bind(meta["sample_rate"], meta["is_complex"])
        chans = rec.channel_list(channels)
        n = int(rec.n_samples)
        spec = {"path": str(rec.path), "options": options, "start": 0, "stop": n,
                "channels": chans, "chunk_samples": int(chunk_samples), "task_samples": 0}

        def read(a: int, b: int) -> np.ndarray:
            return rec.read(a, b, chans)

        prov = recording_provenance(rec, cancelled)
        blocks = bound.stream(read, 0, n, chunk_samples=int(chunk_samples),
                              progress=progress, cancelled=cancelled)
        write_pipeline_output(Path(out), pipeline, bound, meta, spec, blocks, prov,
                              cancelled, annotations=rec.annotations)
    return Path(out)
