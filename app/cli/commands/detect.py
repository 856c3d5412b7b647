"""``specscope detect``: a detector over recordings, a table of detections per input.

``specscope detect PIPELINE.json INPUT... -o OUTDIR`` runs a pipeline ending
in an event step; ``specscope detect --detector detect.energy --param
band_low_hz=2000 INPUT... -o OUTDIR`` runs one detector without a pipeline
file.  Each input gets ``OUTDIR/<stem>.selections.txt`` (``--format``: a
Raven selection table by default, Audacity labels, CSV, SigMF or HDF5) and
the run ``OUTDIR/summary.csv``; ``--workers`` and ``--dask`` spread the
inputs as ``specscope run`` does (:func:`specscope.compute.batch.detect.run_detect`),
and a recording longer than ``--part-samples`` as parts of it.
Exit status 0 when every input was done, 1 when one failed (the others are
written), 2 for a bad pipeline or bad arguments.  Nothing here imports Qt.
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
from specscope.app.cli.types import at_least, channel_list
from specscope.compute import jsonsafe
from specscope.compute.errors import MAX_ECHO, InputError, shown
from specscope.compute.types import TableFormat, choices

#: table formats, as ``--format`` takes them (the names of
#: :data:`specscope.compute.batch.detect.TABLE_FORMATS`)
FORMAT_NAMES = choices(TableFormat)


class _Progress:
    """Tasks done (an input, or a part of a long one), failed inputs and detections so far."""

    def __init__(self, enabled: bool) -> None:
        self.bar = ProgressBar(enabled)
        self.failed = 0
        self.found = 0
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int, result: Any) -> None:
        if result is not None and not result.ok:
            self.failed += 1
        elif result is not None:
            self.found += getattr(result, "detections", 0)
        extra = f", {self.failed} failed" if self.failed else ""
        self.bar.draw(done / max(1, total),
                      f"{done}/{total} tasks, {self.found} detections{extra}", force=True)
        if done == total:
            self.bar.close()


class _NotJson(InputError):
    """A ``--param`` value that is no JSON: it is taken as text."""


def param_value(text: str, name: str = "value") -> Any:
    """A ``--param`` value: JSON (numbers, true/false, null, lists) or else the text.

    Read by the one safe JSON reader: a value nested too deep, a number too long or
    out of range, or NaN is an :class:`InputError` naming ``--param NAME``.
    """
    try:
        where = f"--param {name if len(name) <= MAX_ECHO else shown(name)}"
        return jsonsafe.loads(text, where, what="parameter value",
                              syntax_error=_NotJson)
    except _NotJson:
        return text


def detector_params(pairs: list[str]) -> dict[str, Any]:
    """``["band_low_hz=2000", ...]`` as a dict (InputError naming a malformed pair)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InputError(f"--param {pair!r}: expected NAME=VALUE (e.g. band_low_hz=2000)")
        if key in out:
            raise InputError(f"--param {key} is given twice")
        out[key] = param_value(value.strip(), key)
    return out


def pipeline_of(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """The pipeline (from the file or ``--detector``) and the inputs."""
    from specscope.compute.pipeline import Pipeline

    words = list(args.paths)
    if args.detector:
        from specscope.compute.detect import ALIASES

        if words and words[0].lower().endswith(".json"):
            raise InputError(f"{words[0]}: give either a PIPELINE.json or --detector, not both")
        if not words:
            raise InputError("no inputs given (specscope detect --detector NAME INPUT... -o OUT)")
        op = ALIASES.get(args.detector, args.detector)
        pipeline = Pipeline.from_steps([{"op": op, "params": detector_params(args.param)}],
                                       name=op)
        return pipeline, words
    if args.param:
        raise InputError("--param sets a parameter of --detector NAME; with a pipeline file "
                         "set the parameters in the file")
    if len(words) < 2:
        raise InputError("give PIPELINE.json and at least one INPUT (or --detector NAME "
                         "INPUT...)")
    return Pipeline.load(words[0]), words[1:]


def cmd_detect(args: argparse.Namespace) -> int:
    from specscope.compute.batch import run_detect

    require_at_least("--workers", args.workers, 1)
    require_at_least("--chunk-samples", args.chunk_samples, 1)
    require_at_least("--part-samples", args.part_samples, 0)
    pipeline, inputs = pipeline_of(args)
    progress = _Progress(not args.quiet and sys.stderr.isatty())
    summary = run_detect(pipeline, inputs, args.output, format=args.table_format,
                         workers=args.workers,
                         executor="threads" if args.threads else "processes",
                         dask=args.dask, chunk_samples=args.chunk_samples,
                         recording_options=recording_options(args), channels=args.channels,
                         progress=progress, write_on=args.write_on,
                         part_samples=args.part_samples)
    return report_batch(summary, args, lambda r: f"{r.output}\t{r.detections}",
                        extra=summary.summary_csv)


def add_parser(subparsers: Any) -> None:
    """Add ``detect`` to the main CLI's subparsers."""
    from specscope.compute.batch.parts import DEFAULT_PART_SAMPLES

    p = subparsers.add_parser(
        "detect", help="run a detector over recordings, a table of detections per input",
        conflict_handler="resolve",
        description="Run PIPELINE.json (a pipeline ending in a detector) over each INPUT, "
                    "or one detector with --detector NAME --param NAME=VALUE..., and write "
                    "OUTDIR/<input stem>.selections.txt (or the --format's table) per input "
                    "and OUTDIR/summary.csv (input, output, status, detections, count per "
                    "label, seconds, duration).  Exit status 1 when an input failed (the "
                    "others are written), 2 for a bad pipeline or bad arguments.")
    p.add_argument("paths", nargs="+", metavar="PIPELINE.json|INPUT",
                   help="the pipeline file, then the inputs (only inputs with --detector)")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR",
                   help="folder for the tables and the summary (created when missing)")
    p.add_argument("--detector", metavar="NAME",
                   help="run this detector without a pipeline file: detect.energy, "
                        "detect.template, detect.bursts, onsets.detect (or energy, template, "
                        "bursts, onsets)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of --detector (repeatable); see 'specscope ops'")
    p.add_argument("--channels", type=channel_list, metavar="0,1",
                   help="channels to search, each on its own (default: all)")
    add_pool_options(p, written="tables", chunk_note="the detections do not depend on it")
    p.add_argument("--part-samples", type=at_least(0), default=DEFAULT_PART_SAMPLES,
                   metavar="N",
                   help=f"split a recording longer than this (samples) into parts that run "
                        f"as tasks of their own, so the workers share it (default "
                        f"{DEFAULT_PART_SAMPLES}; 0: never; the tables are the same bytes)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--json", action="store_true",
                   help="print the summary as JSON: per input its detections, counts per "
                        "label, time and workers")
    add_recording_options(p)
    # --format names the tables written; the reader's format is --input-format here
    p.add_argument("--format", dest="table_format", choices=FORMAT_NAMES, default="raven",
                   help="table per input: raven (default, .selections.txt), audacity "
                        "(.labels.txt), csv, sigmf (.sigmf-meta) or hdf5 (.h5)")
    p.add_argument("--input-format", dest="rec_format", metavar="NAME",
                   help="reader of the inputs, instead of detecting it")
    p.set_defaults(func=cmd_detect)
