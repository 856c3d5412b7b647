"""``specscope run``: a pipeline over recordings, one HDF5 file per input.

:func:`add_parser` adds it to the main CLI's argparse subparsers.  Handlers
return an exit status: 0 when everything was done, 1 when an input failed (the
others are still written); bad pipelines and arguments raise
:class:`~specscope.compute.errors.SpecscopeError` subclasses, which the main
CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_pool_options,
    add_recording_options,
    recording_options,
    report_batch,
    require_at_least,
)
from specscope.app.cli.types import at_least


class _Progress:
    """The batch's progress callback: inputs done (and failed), throughput, on the bar."""

    def __init__(self, enabled: bool) -> None:
        self.bar = ProgressBar(enabled)
        self.failed = 0
        self.samples = 0
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int, result: Any) -> None:
        if result is not None and not result.ok:
            self.failed += 1
        if result is not None and result.ok:
            self.samples += result.n_samples * max(1, result.n_channels)
        extra = f", {self.failed} failed" if self.failed else ""
        dt = time.perf_counter() - self.t0
        rate = f", {self.samples / dt / 1e6:.1f} Msamples/s" if dt > 0 and self.samples else ""
        self.bar.draw(done / max(1, total), f"{done}/{total} inputs{extra}{rate}", force=True)
        if done == total:
            self.bar.close()


def cmd_run(args: argparse.Namespace) -> int:
    from specscope.compute.batch import run_batch
    from specscope.compute.pipeline import Pipeline

    require_at_least("--workers", args.workers, 1)
    require_at_least("--chunk-samples", args.chunk_samples, 1)
    pipeline = Pipeline.load(args.pipeline)
    options = recording_options(args)
    progress = _Progress(not args.quiet and sys.stderr.isatty())
    summary = run_batch(pipeline, args.inputs, args.output, workers=args.workers,
                        executor="threads" if args.threads else "processes",
                        dask=args.dask, chunk_samples=args.chunk_samples,
                        task_samples=args.task_samples, recording_options=options,
                        progress=progress, write_on=args.write_on)
    return report_batch(summary, args)


def add_parser(subparsers: Any) -> None:
    """Add ``run`` to the main CLI's subparsers."""
    from specscope.compute.batch import DEFAULT_TASK_SAMPLES

    p = subparsers.add_parser(
        "run", help="run a pipeline over recordings, one HDF5 file per input",
        description="Run PIPELINE.json over each INPUT and write OUTDIR/<input stem>.h5 "
                    "(crash-safe, with the pipeline and provenance inside).  Exit status 1 "
                    "when an input failed (the others are written), 2 for a bad pipeline "
                    "or bad arguments.")
    p.add_argument("pipeline", metavar="PIPELINE.json")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR",
                   help="folder for the outputs (created when missing)")
    add_pool_options(p)
    p.add_argument("--task-samples", type=at_least(0), default=DEFAULT_TASK_SAMPLES, metavar="N",
                   help="split longer recordings into tasks of N samples "
                        f"(default {DEFAULT_TASK_SAMPLES}; 0: never)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--json", action="store_true",
                   help="print the summary as JSON: per input its time, throughput and the "
                        "workers that ran it; the cluster's workers and threads")
    add_recording_options(p)
    p.set_defaults(func=cmd_run)
