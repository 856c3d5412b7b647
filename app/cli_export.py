"""CLI subcommand ``export``: a time range and channels of a recording, processed, to a file.

``specscope export IN -o OUT [--start S] [--stop S] [--channels 0,1]
[--pipeline P.json]`` writes HDF5 (``.h5``), audio (``.wav``, ``.flac``; RF64
beyond 4 GB) or SigMF (``.sigmf-meta``), crash-safe, through
:func:`specscope.compute.output.range.export`.  :func:`register` adds it to the
main CLI's subparsers.  Bad input raises
:class:`~specscope.compute.errors.SpecscopeError` (one line, exit status 2
in the main CLI).  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from specscope.compute.errors import InputError


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite time >= 0 s")
    return value


def _channel_list(text: str) -> list[int]:
    try:
        chans = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of "
                                         "channel numbers, e.g. 0,1") from None
    if not chans:
        raise argparse.ArgumentTypeError("give at least one channel, e.g. 0 or 0,1")
    return chans


class _Bar:
    """A throttled progress bar on stderr (only drawn for a terminal)."""

    def __init__(self) -> None:
        self.last = 0.0
        self.drawn = False

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        fill = int(width * min(1.0, max(0.0, fraction)))
        print(f"\r[{'#' * fill}{'-' * (width - fill)}] {fraction * 100:5.1f} %", end="",
              file=sys.stderr, flush=True)
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            print(file=sys.stderr)


def cmd_export(args: argparse.Namespace) -> int:
    from specscope.compute.io import open_recording
    from specscope.compute.output.range import export, output_kind, seconds_to_samples

    from .cli import _recording_options

    output_kind(args.output)  # a bad suffix fails before the input is opened
    if args.chunk_samples < 1:
        raise InputError(f"--chunk-samples {args.chunk_samples} must be >= 1")
    if args.start is not None and args.stop is not None and args.stop <= args.start:
        raise InputError(f"--stop {args.stop:g} must be after --start {args.start:g}")
    options = _recording_options(args)
    bar = _Bar() if not args.quiet and sys.stderr.isatty() else None
    with open_recording(args.file, **options) as rec:
        fs = rec.sample_rate
        start = seconds_to_samples(args.start, fs, "--start")
        stop = seconds_to_samples(args.stop, fs, "--stop")
        try:
            out = export(rec, args.output, pipeline=args.pipeline, start=start, stop=stop,
                         channels=args.channels, options=options,
                         chunk_samples=args.chunk_samples, subtype=args.subtype,
                         progress=bar)
        finally:
            if bar is not None:
                bar.close()
    if not args.quiet:
        print(out)
    return 0


def register(subparsers: Any) -> None:
    """Add ``export`` to an argparse subparsers object."""
    from specscope.compute.pipeline.core import DEFAULT_CHUNK_SAMPLES

    from .cli import _add_recording_options

    p = subparsers.add_parser(
        "export", help="export a time range and channels, processed, to HDF5, WAV/FLAC or SigMF",
        description="Run PIPELINE.json (or nothing) over a time range and channels of IN and "
                    "write OUT, crash-safe: .h5 (signal or spectrogram, with provenance; "
                    "layout in docs/hdf5-layout.md), .wav/.flac (real signals; RF64 beyond "
                    "4 GB) or .sigmf-meta (+ .sigmf-data; cf32_le for IQ).  The range gives "
                    "the numbers of the whole-file run cut afterwards (IIR filters: carried "
                    "from a warm-up before the range).")
    p.add_argument("file", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file: .h5, .wav, .flac or .sigmf-meta")
    p.add_argument("--start", type=_seconds, metavar="S",
                   help="start of the range in seconds (default: the beginning)")
    p.add_argument("--stop", type=_seconds, metavar="S",
                   help="end of the range in seconds (default: the end)")
    p.add_argument("--pipeline", metavar="P.json", help="processing to apply (default: none)")
    p.add_argument("--subtype", metavar="NAME",
                   help="audio sample format (WAV default FLOAT, FLAC default PCM_24)")
    p.add_argument("--chunk-samples", type=int, default=DEFAULT_CHUNK_SAMPLES, metavar="N",
                   help=f"samples read at a time (default {DEFAULT_CHUNK_SAMPLES})")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    _add_recording_options(p)
    p.add_argument("--channels", type=_channel_list, metavar="0,1",
                   help="channels to export (default: all)")
    p.set_defaults(func=cmd_export)
