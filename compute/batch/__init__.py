"""Batch runs: a pipeline or a detector over many recordings, on one machine or a cluster.

The room's modules, from the top: :mod:`.detect` (tables of detections),
:mod:`.process` (HDF5 outputs of a pipeline), :mod:`.rerun` (a stored pipeline run again), :mod:`.pool` (the executors:
in process, a process or thread pool, Dask), :mod:`.cluster` (the Dask executor),
:mod:`.compare` (a rerun's comparison), :mod:`.parts` (a long recording's detection
as parts), :mod:`.fetch` (outputs fetched from workers) and :mod:`.heap` (the
allocator's settings for long runs).  Nothing here imports Qt.
"""

from .detect import (
    DEFAULT_PART_SAMPLES,
    SUMMARY_NAME,
    TABLE_FORMATS,
    DetectResult,
    DetectSummary,
    run_detect,
    table_path,
)
from .process import (
    DEFAULT_TASK_SAMPLES,
    EXECUTORS,
    InputResult,
    RerunResult,
    Summary,
    clean_abandoned_parts,
    output_path,
    process_file,
    run_batch,
)
from .rerun import rerun

__all__ = ["DEFAULT_PART_SAMPLES", "DEFAULT_TASK_SAMPLES", "EXECUTORS", "SUMMARY_NAME",
           "TABLE_FORMATS", "DetectResult", "DetectSummary", "InputResult", "RerunResult",
           "Summary", "clean_abandoned_parts", "output_path", "process_file", "rerun",
           "run_batch", "run_detect", "table_path"]
