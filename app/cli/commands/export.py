"""CLI subcommand ``export``: a time range and channels of a recording, processed, to a file.

``specscope export IN -o OUT [--start S] [--stop S] [--channels 0,1]
[--pipeline P.json]`` writes HDF5 (``.h5``), audio (``.wav``, ``.flac``; RF64
beyond 4 GB) or SigMF (``.sigmf-meta``), crash-safe, through
:func:`specscope.compute.output.export_range`.  :func:`add_parser` adds it to the
main CLI's subparsers.  Bad input raises
:class:`~specscope.compute.errors.SpecscopeError` (one line, exit status 2
in the main CLI).  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_recording_options,
    recording_options,
    require_at_least,
)
from specscope.app.cli.types import SECONDS_FORMS, channel_list, seconds
from specscope.compute.errors import InputError


def cmd_export(args: argparse.Namespace) -> int:
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.io import open_recording
    from specscope.compute.output import export_range, export_targets, output_kind
    from specscope.compute.timefmt import time_to_sample

    output_kind(args.output)  # a bad suffix fails before the input is opened
    refuse_overwriting_inputs(export_targets(args.output), [args.file, args.pipeline])
    require_at_least("--chunk-samples", args.chunk_samples, 1)
    if args.start is not None and args.stop is not None and args.stop <= args.start:
        raise InputError(f"--stop {args.stop:g} must be after --start {args.start:g}")
    options = recording_options(args)
    bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
    with open_recording(args.file, **options) as rec:
        fs = rec.sample_rate
        start = stop = None
        if args.start is not None:
            start = time_to_sample(args.start, fs, "--start", n_samples=rec.n_samples)
        if args.stop is not None:
            stop = time_to_sample(args.stop, fs, "--stop", n_samples=rec.n_samples)
        try:
            out = export_range(rec, args.output, pipeline=args.pipeline, start=start,
                               stop=stop, channels=args.channels, options=options,
                               chunk_samples=args.chunk_samples, subtype=args.subtype,
                               progress=bar)
        finally:
            bar.close()
    if not args.quiet:
        print(out)
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``export`` to an argparse subparsers object."""
    from specscope.compute.pipeline import DEFAULT_CHUNK_SAMPLES

    p = subparsers.add_parser(
        "export", help="export a time range and channels, processed, to HDF5, WAV/FLAC or SigMF",
        description="Run PIPELINE.json (or nothing) over a time range and channels of IN and "
                    "write OUT, crash-safe: .h5 (signal or spectrogram, with provenance; "
                    "layout in docs/reference/hdf5-layout.md), .wav/.flac (real signals; RF64 beyond "
                    "4 GB) or .sigmf-meta (+ .sigmf-data; cf32_le for IQ).  The range gives "
                    "the numbers of the whole-file run cut afterwards (IIR filters: carried "
                    "from a warm-up before the range).")
    p.add_argument("file", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file: .h5, .wav, .flac or .sigmf-meta")
    p.add_argument("--start", type=seconds, metavar="TIME",
                   help=f"start of the range: {SECONDS_FORMS} (default: the beginning)")
    p.add_argument("--stop", type=seconds, metavar="TIME",
                   help=f"end of the range: {SECONDS_FORMS} (default: the end)")
    p.add_argument("--pipeline", metavar="P.json", help="processing to apply (default: none)")
    p.add_argument("--subtype", metavar="NAME",
                   help="audio sample format (WAV default FLOAT, FLAC default PCM_24)")
    p.add_argument("--chunk-samples", type=int, default=DEFAULT_CHUNK_SAMPLES, metavar="N",
                   help=f"samples read at a time (default {DEFAULT_CHUNK_SAMPLES})")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    add_recording_options(p)
    p.add_argument("--channels", type=channel_list, metavar="0,1",
                   help="channels to export (default: all)")
    p.set_defaults(func=cmd_export)
