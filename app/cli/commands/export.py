"""CLI subcommand ``export``: a time range and channels of a recording, processed, to a file.

``specscope export IN -o OUT [--start S] [--stop S] [--channels 0,1]
[--pipeline P.json]`` writes HDF5 (``.h5``), audio (``.wav``, ``.flac``; RF64
beyond 4 GB) or SigMF (``.sigmf-meta``), crash-safe, through
:func:`specscope.compute.output.export_range`.  :func:`add_parser` adds it to the
main CLI's subparsers.  A deployment (a folder of recordings) exports as one
recording, and ``--start``/``--stop`` also take an absolute date and time there
(ISO 8601, UTC unless it names a zone).  Bad input raises
:class:`~specscope.compute.errors.SpecscopeError` (one line, exit status 2
in the main CLI).  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_recording_options,
    recording_options,
    require_at_least,
)
from specscope.app.cli.types import SECONDS_FORMS, channel_list, seconds
from specscope.compute.errors import InputError

#: a value that is a date and time rather than seconds: it starts YYYY-MM-DD
_DATE = re.compile(r"^\s*\d{4}-\d{2}-\d{2}")


def time_or_date(text: str) -> float | datetime:
    """A ``--start``/``--stop`` value: seconds from the first sample (the forms of
    :func:`~specscope.app.cli.types.seconds`) or, for a deployment, an ISO 8601 date and
    time (``2024-05-01T12:00:05Z``; UTC unless it names a zone)."""
    if not _DATE.match(text):
        return seconds(text)
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z",
                                                                                  "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no ISO 8601 date and time "
                                         "(e.g. 2024-05-01T12:00:05Z)") from None
    return when


def _sample_of(value: float | datetime, rec: Any, flag: str) -> int:
    """The sample ``value`` names: seconds on the recording's axis, or a date and time on
    a deployment's."""
    from specscope.compute.timefmt import time_to_sample

    if isinstance(value, datetime):
        if value.tzinfo is None:  # read in the deployment's zone
            from specscope.compute.deployment import parse_zone

            value = value.replace(tzinfo=parse_zone(getattr(rec, "options", {}).get("tz")
                                                    or "UTC"))
        at = getattr(rec, "sample_at", None)
        if not callable(at):
            raise InputError(f"{flag} {value.isoformat()}: a date and time needs a folder of "
                             f"recordings; give seconds from the first sample of {rec.path.name}")
        try:
            return int(at(value))
        except InputError as exc:
            raise InputError(f"{flag}: {exc}") from None
    return time_to_sample(value, rec.sample_rate, flag, n_samples=rec.n_samples)


def _gaps_within(rec: Any, start: int | None, stop: int | None) -> list[tuple[int, float]]:
    a = 0 if start is None else start
    b = rec.n_samples if stop is None else stop
    return [(s, length) for s, length in getattr(rec, "gaps", []) if a < s < b]


def cmd_export(args: argparse.Namespace) -> int:
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.io import open_recording
    from specscope.compute.output import export_range, export_targets, output_kind

    output_kind(args.output)  # a bad suffix fails before the input is opened
    refuse_overwriting_inputs(export_targets(args.output), [args.file, args.pipeline])
    require_at_least("--chunk-samples", args.chunk_samples, 1)
    if isinstance(args.start, float) and isinstance(args.stop, float) \
            and args.stop <= args.start:
        raise InputError(f"--stop {args.stop:g} must be after --start {args.start:g}")
    options = recording_options(args)
    bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
    with open_recording(args.file, **options) as rec:
        start = stop = None
        if args.start is not None:
            start = _sample_of(args.start, rec, "--start")
        if args.stop is not None:
            stop = _sample_of(args.stop, rec, "--stop")
        if start is not None and stop is not None and stop <= start:
            raise InputError(f"--stop {_shown(args.stop)} must be after --start "
                             f"{_shown(args.start)} (samples {start} and {stop})")
        gaps = _gaps_within(rec, start, stop)
        if gaps and not args.quiet:
            print(f"note: the range crosses {len(gaps)} gap(s) of the deployment "
                  f"({sum(g for _, g in gaps):g} s in all); {args.output} holds the recorded "
                  "samples end to end", file=sys.stderr)
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


def _shown(value: float | datetime) -> str:
    return value.isoformat() if isinstance(value, datetime) else f"{value:g}"


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
    p.add_argument("--start", type=time_or_date, metavar="TIME",
                   help=f"start of the range: {SECONDS_FORMS}, or for a folder of recordings "
                        "a date and time (2024-05-01T12:00:05Z) (default: the beginning)")
    p.add_argument("--stop", type=time_or_date, metavar="TIME",
                   help=f"end of the range: {SECONDS_FORMS}, or a date and time "
                        "(default: the end)")
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
