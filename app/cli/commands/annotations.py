"""``specscope annotations list`` and ``annotations convert``.

::

    specscope annotations list FILE [--json] [--from FMT] [--recording REC]
    specscope annotations convert IN OUT [--recording REC] [--from FMT] [--to FMT]

``list`` prints the annotations of an annotation file (SigMF meta, Raven
table, Audacity labels, CSV, the ``/annotations`` table of a specscope HDF5
export) or, for another recording, the annotations its reader found.
``convert`` reads one format and writes another; ``--recording`` gives the
sample rate and band that SigMF samples, Raven boxes and new SigMF metas
need (without a recording, ``--sample-rate`` gives the rate alone).  JSON
output uses the model's field names.  Bad input raises
:class:`~specscope.compute.errors.SpecscopeError` (one line, exit status 2 in
the main CLI).  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from specscope.app.cli.common import add_recording_options, open_input
from specscope.compute.errors import InputError
from specscope.compute.types import TableFormat, choices

__all__ = ["add_parser", "cmd_convert", "cmd_list"]


def _open_recording(args: argparse.Namespace) -> Any:
    return None if args.recording is None else open_input(args, args.recording)


def _own_recording(args: argparse.Namespace, path: str, format: str | None) -> Any:
    """A SigMF meta's own recording (its length ends open segments), if it opens."""
    from specscope.compute.annotations import detect_format
    from specscope.compute.errors import SpecscopeError

    try:
        if (format or detect_format(path)) != "sigmf":
            return None
        return open_input(args, path)
    except SpecscopeError:
        return None  # metadata only, or no data file: the meta alone has to do


def _sample_rate(args: argparse.Namespace) -> float | None:
    """``--sample-rate`` without ``--recording``: the rate of the annotated recording."""
    from specscope.compute.params import parse_number

    if args.recording is not None or args.sample_rate is None:
        return None
    return parse_number(args.sample_rate, "--sample-rate", positive=True)


def _is_annotation_file(path: str, format: str | None) -> bool:
    from specscope.compute.annotations import detect_format
    from specscope.compute.annotations.hdf5_table import has_table

    if format is not None:
        return True
    try:
        found = detect_format(path)
    except InputError:
        return False
    # an HDF5 recording without a table is listed through its reader
    return found != "hdf5" or has_table(path)


def _text_line(a: Any) -> str:
    band = (f"{a.freq_low_hz:.10g}-{a.freq_high_hz:.10g} Hz" if a.freq_low_hz is not None
            else "all frequencies")
    parts = [f"{a.start_s:.6f}-{a.stop_s:.6f} s", band]
    if a.channel is not None:
        parts.append(f"channel {a.channel}")
    if a.tier is not None:
        parts.append(f"tier {a.tier!r}")
    if a.label:
        parts.append(repr(a.label))
    if a.comment:
        parts.append(f"({a.comment})")
    return "  ".join(parts)


def cmd_list(args: argparse.Namespace) -> int:
    """``annotations list``: print the annotations of a file.

    One line per annotation (times in seconds, band in Hz) and a count, or JSON with
    ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of ``annotations list``.

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    SpecscopeError
        When the file cannot be read (an :class:`InputError` for bad input).
    """
    from specscope.compute.annotations import (
        annotations_of_recording,
        detect_format,
        read_annotations,
    )

    table = _is_annotation_file(args.file, args.from_format)
    rec = _open_recording(args)
    if rec is None and table:
        rec = _own_recording(args, args.file, args.from_format)
    try:
        if table:
            fmt = args.from_format or detect_format(args.file)
            items = read_annotations(args.file, format=fmt, recording=rec,
                                     sample_rate=_sample_rate(args))
        else:
            with open_input(args) as own:
                fmt = f"recording ({own.format})"
                items = annotations_of_recording(own)
    finally:
        if rec is not None:
            rec.close()
    if args.json:
        json.dump({"file": str(args.file), "format": fmt,
                   "annotations": [a.to_dict() for a in items]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for a in items:
        print(_text_line(a))
    print(f"{len(items)} annotation{'s' if len(items) != 1 else ''} ({fmt})")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """``annotations convert``: read one annotation format, write another.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of ``annotations convert``.

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    SpecscopeError
        When the input cannot be read, the output would overwrite an input, or the
        output format cannot be written (an :class:`InputError` for bad input).
    """
    from specscope.compute.annotations import detect_format, read_annotations, write_annotations
    from specscope.compute.files import refuse_overwriting_inputs

    to = args.to_format or detect_format(args.output, reading=False)  # fail before reading
    # SigMF and HDF5 keep everything but the annotations of an existing file: writing
    # them into the recording is an update; the other formats would replace it
    keeps = to in ("sigmf", "hdf5")
    refuse_overwriting_inputs([args.output], [args.input] + ([] if keeps else [args.recording]))
    rec = _open_recording(args)
    if rec is None:
        rec = _own_recording(args, args.input, args.from_format)
    try:
        fs = _sample_rate(args)
        items = read_annotations(args.input, format=args.from_format, recording=rec,
                                 sample_rate=fs)
        out = write_annotations(args.output, items, format=to, recording=rec, sample_rate=fs)
    finally:
        if rec is not None:
            rec.close()
    if not args.quiet:
        print(f"{out}: {len(items)} annotation{'s' if len(items) != 1 else ''} ({to})")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``annotations`` (``list``, ``convert``) to the main CLI.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The main parser's subcommands, as ``add_subparsers`` returns them.
    """
    formats = choices(TableFormat)
    p = subparsers.add_parser(
        "annotations", help="list or convert annotations (SigMF, Raven, Audacity, CSV, HDF5, "
                            "TextGrid, ELAN)",
        description="Annotation files: SigMF metadata, Raven selection tables, Audacity "
                    "label files, CSV with the model's field names, the /annotations "
                    "table of specscope's HDF5 exports, Praat TextGrids, ELAN .eaf files.")
    sub = p.add_subparsers(dest="annotations_command", metavar="ACTION", required=True)

    q = sub.add_parser("list", help="print the annotations of a file or recording")
    q.add_argument("file", help="annotation file, SigMF recording or other recording")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.add_argument("--from", dest="from_format", choices=formats,
                   help="annotation format (default: from the name and content)")
    q.add_argument("--recording", metavar="REC",
                   help="the annotated recording (sample rate, band)")
    add_recording_options(q)
    q.set_defaults(func=cmd_list)

    q = sub.add_parser("convert", help="convert an annotation file to another format")
    q.add_argument("input", metavar="IN")
    q.add_argument("output", metavar="OUT")
    q.add_argument("--recording", metavar="REC",
                   help="the annotated recording: needed for a new SigMF meta and for "
                        "time-only annotations in a Raven table")
    q.add_argument("--from", dest="from_format", choices=formats,
                   help="format of IN (default: from the name and content)")
    q.add_argument("--to", dest="to_format", choices=formats,
                   help="format of OUT (default: from the name)")
    q.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    add_recording_options(q)
    q.set_defaults(func=cmd_convert)
