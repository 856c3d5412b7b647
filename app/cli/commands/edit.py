"""CLI subcommand ``edit``: attenuate, remove, isolate or change the gain of regions of time
and frequency, and write the result.

``specscope edit IN (--attenuate DB | --gain DB | --remove | --isolate | --apply P.json)
--region T0,T1,F0,F1 [--region-file R.json] -o OUT`` makes one pipeline step per region
(:class:`~specscope.compute.edit.RegionEdit`) and writes OUT through
:func:`specscope.compute.output.export_range` (``.wav``, ``.flac``, ``.h5`` with the
edits in its provenance, ``.sigmf-meta``); ``--save-pipeline`` keeps the steps for
``run``, ``export --pipeline`` and ``rerun``.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_recording_options,
    recording_options,
)
from specscope.compute.errors import InputError

#: a region file's form, as help and errors name it
REGION_FILE = ('a JSON list of regions ({"shape": "box", "t0": 1.0, "t1": 2.0, "f0": 2800, '
               '"f1": 3200}, or "lasso" with "points": [[t, f], ...]) or of whole edits '
               '({"region": ..., "operation": "remove", ...})')


def region_box(text: str) -> dict[str, Any]:
    """``T0,T1,F0,F1`` (seconds and Hz) as a box region."""
    parts = [p.strip() for p in text.split(",")]
    try:
        t0, t1, f0, f1 = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} must be four numbers T0,T1,F0,F1 (seconds and Hz)") from None
    return {"shape": "box", "t0": t0, "t1": t1, "f0": f0, "f1": f1}


def _edits(args: argparse.Namespace) -> list[Any]:
    from specscope.compute import jsonsafe
    from specscope.compute.edit import RegionEdit, region_from_dict

    common: dict[str, Any] = {"operation": args.operation, "db": args.db,
                              "feather_ms": args.feather_ms, "feather_hz": args.feather_hz,
                              "nfft": args.nfft, "context_ms": args.context_ms,
                              "context_hz": args.context_hz, "fill": args.fill}
    if args.apply:
        from specscope.compute.pipeline import Pipeline

        steps = Pipeline.load(args.apply).steps
        common["steps"] = [{"op": s.op, "params": s.params} for s in steps]
    edits = [RegionEdit.from_dict({"region": r, **common}, f"--region {i + 1}")
             for i, r in enumerate(args.region or [])]
    if args.region_file:
        doc = jsonsafe.load_file(args.region_file)
        if not isinstance(doc, list):
            raise InputError(f"{args.region_file}: must be {REGION_FILE}")
        for i, item in enumerate(doc):
            where = f"{args.region_file}: [{i}]"
            if isinstance(item, dict) and "region" in item:
                edits.append(RegionEdit.from_dict({**common, **item}, where))
            else:
                edits.append(RegionEdit.from_dict(
                    {"region": region_from_dict(item, where).to_dict(), **common}, where))
    if not edits:
        raise InputError("no region given: --region T0,T1,F0,F1 or --region-file R.json")
    return edits


def cmd_edit(args: argparse.Namespace) -> int:
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.io import open_recording
    from specscope.compute.output import export_range, export_targets, output_kind
    from specscope.compute.pipeline import Pipeline

    output_kind(args.output)  # a bad suffix fails before the input is opened
    targets = export_targets(args.output) + ([args.save_pipeline] if args.save_pipeline
                                             else [])
    refuse_overwriting_inputs(targets, [args.file, args.region_file, args.apply])
    edits = _edits(args)
    options = recording_options(args)
    with open_recording(args.file, **options) as rec:
        for i, e in enumerate(edits):
            try:
                e.check(rec.sample_rate, two_sided=rec.is_complex, n_samples=rec.n_samples)
            except InputError as exc:
                raise InputError(f"region {i + 1}: {exc}") from None
        pipeline = Pipeline.from_steps([{"op": "edit", "params": e.to_dict()} for e in edits],
                                       name=f"edits of {rec.path.name}")
        if args.save_pipeline:
            pipeline.save(args.save_pipeline)
        bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
        try:
            out = export_range(rec, args.output, pipeline=pipeline, options=options,
                               subtype=args.subtype, progress=bar)
        finally:
            bar.close()
    if not args.quiet:
        print(out)
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``edit`` to an argparse subparsers object."""
    from specscope.compute.edit import REMOVE_FILLS, RegionEdit

    d = RegionEdit.__dataclass_fields__
    p = subparsers.add_parser(
        "edit", help="attenuate, remove, isolate or change the gain of regions of time and "
                     "frequency",
        description="Edit regions of IN and write OUT (.wav, .flac, .h5 or .sigmf-meta). "
                    "Outside each region and its feather the samples are unchanged (bit "
                    "for bit beyond the analysis frames it reaches).  Regions are in seconds "
                    "from the start and Hz (an IQ capture's: Hz from its centre "
                    "frequency).")
    p.add_argument("file", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file: .wav, .flac, .h5 or .sigmf-meta")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--attenuate", type=float, metavar="DB",
                      help="lower each region by DB decibels")
    what.add_argument("--gain", type=float, metavar="DB",
                      help="raise each region by DB decibels (negative lowers)")
    what.add_argument("--remove", action="store_true",
                      help="lower each region to the level just before and after it")
    what.add_argument("--isolate", action="store_true",
                      help="keep the regions only (the rest becomes silence)")
    what.add_argument("--apply", metavar="P.json",
                      help="run the steps of pipeline P.json (a filter, any signal operator) "
                           "inside each region only")
    p.add_argument("--region", type=region_box, action="append", metavar="T0,T1,F0,F1",
                   help="a box from T0 to T1 seconds and F0 to F1 Hz (repeatable)")
    p.add_argument("--region-file", metavar="R.json", help=f"regions: {REGION_FILE}")
    p.add_argument("--feather-ms", type=float, default=d["feather_ms"].default, metavar="MS",
                   help="fade of the change in time outside a region (default "
                        f"{d['feather_ms'].default:g} ms)")
    p.add_argument("--feather-hz", type=float, default=d["feather_hz"].default, metavar="HZ",
                   help="fade in frequency outside a region (default "
                        f"{d['feather_hz'].default:g} Hz)")
    p.add_argument("--nfft", type=int, default=d["nfft"].default, metavar="N",
                   help=f"analysis frame length, a power of two (default {d['nfft'].default})")
    p.add_argument("--context-ms", type=float, default=d["context_ms"].default, metavar="MS",
                   help="--remove: signal before and after a region its level is taken from "
                        f"(default {d['context_ms'].default:g} ms)")
    p.add_argument("--context-hz", type=float, default=d["context_hz"].default, metavar="HZ",
                   help="--remove: bins below and above a region its level is taken from "
                        f"(default {d['context_hz'].default:g} Hz)")
    p.add_argument("--fill", choices=REMOVE_FILLS, default=d["fill"].default,
                   help="--remove: take the level from the frames around a region (time), "
                        "the bins around it (frequency), or along its longer side (auto, "
                        "the default)")
    p.add_argument("--save-pipeline", metavar="P.json",
                   help="also write the edits as a pipeline (for run, export --pipeline)")
    p.add_argument("--subtype", metavar="NAME",
                   help="audio sample format (WAV default FLOAT, FLAC default PCM_24)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    add_recording_options(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if args.attenuate is not None:
        args.operation, args.db = "attenuate", args.attenuate
    elif args.gain is not None:
        args.operation, args.db = "gain", args.gain
    elif args.apply:
        args.operation, args.db = "filter", 0.0
    else:
        args.operation, args.db = ("remove" if args.remove else "isolate"), 0.0
    return cmd_edit(args)
