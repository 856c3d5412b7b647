"""``specscope index``: describe a deployment, a folder of recordings read as one.

Prints its files, span, recorded time, gaps and the files left out (overlaps,
duplicates, another rate or channel count, no start time, unreadable), one line
each.  Headers are read once and kept in the user cache; nothing is written into the
folder.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
from datetime import timedelta
from typing import Any

from specscope.app.cli.common import OPTION_FLAGS
from specscope.compute.errors import InputError, OptionError


def _span(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds, 3)))


def cmd_index(args: argparse.Namespace) -> int:
    from specscope.compute.deployment import index_deployment

    try:
        ix = index_deployment(args.source, name_pattern=args.name_pattern, tz=args.tz,
                              cache=not args.no_cache)
    except OptionError as exc:
        if exc.option in OPTION_FLAGS:
            raise InputError(exc.text(*OPTION_FLAGS[exc.option])) from None
        raise
    s = ix.summary()
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    rows = [
        ("source", s["source"]),
        ("files", f"{s['n_files']} recordings, {s['n_used']} used, "
                  f"{s['n_files'] - s['n_used']} left out; {s['n_ignored']} other files"),
        ("span", f"{s['start']} to {s['end']} ({_span(s['span_s'])})"),
        ("recorded", _span(s["recorded_s"])),
        ("signal", f"{s['sample_rate']:g} Hz, {s['n_channels']} channel(s)"
                   f"{', complex' if s['is_complex'] else ''}"),
        ("gaps", f"{len(s['gaps'])} ({_span(s['gap_s'])} in all)"),
        ("overlaps", str(len(s["overlaps"]))),
        ("mismatches", str(len(s["mismatches"]))),
        ("time zone", s["tz"]),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    for g in s["gaps"]:
        print(f"gap  {g['start']}  {_span(g['length_s'])}  before {g['after']}")
    for p in s["problems"]:
        print(f"{p['kind']}  {p['message']}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``index`` to the main CLI's subparsers."""
    p = subparsers.add_parser("index", help="describe a deployment: a folder of recordings "
                                            "as one timeline")
    p.add_argument("source", metavar="FOLDER",
                   help="a folder, a glob ('site/**/*.wav') or a list file (.txt: a path a line)")
    p.add_argument("--name-pattern", metavar="PATTERN",
                   help="how names state start times, with strftime fields "
                        "(e.g. S3_%%Y%%m%%d_%%H%%M%%S); used where metadata states none")
    p.add_argument("--tz", default="UTC", metavar="ZONE",
                   help="time zone of times that state none (names, BWF bext): UTC "
                        "(default), +02:00, Europe/Berlin")
    p.add_argument("--no-cache", action="store_true",
                   help="read every header again (the cache is not used nor updated)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_index)
