"""``specscope measure``: duration, band power, peak, RMS and SNR of a box.

JSON output uses the field names of :func:`specscope.compute.annotations.measure`.
Bad input raises :class:`~specscope.compute.errors.SpecscopeError` (one line, exit
status 2 in the main CLI).  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from specscope.app.cli.common import add_recording_options, open_input
from specscope.app.cli.types import SECONDS_FORMS, hz, seconds, whole_number


def cmd_measure(args: argparse.Namespace) -> int:
    """``measure``: duration, band power, peak, RMS and SNR of a box."""
    from specscope.compute.annotations import measure
    from specscope.compute.errors import InputError

    if (args.fmin is None) != (args.fmax is None):  # the core names its keywords
        raise InputError("give both --fmin and --fmax or neither")
    with open_input(args) as rec:
        m = measure(rec, args.start, args.stop, args.fmin, args.fmax, nfft=args.nfft,
                    hop=args.hop, window=args.window, channel=args.channel)
    result = m.to_dict()
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    width = max(len(k) for k in result)
    for key, value in result.items():
        shown = f"{value:.6g}" if isinstance(value, float) else str(value)
        print(f"{key:<{width}}  {shown}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``measure`` to the main CLI's subparsers."""
    p = subparsers.add_parser("measure", help="measure a box: band power, peak, RMS, SNR")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--start", type=seconds, required=True, metavar="TIME",
                   help=f"start: {SECONDS_FORMS}")
    p.add_argument("--stop", type=seconds, required=True, metavar="TIME",
                   help=f"end: {SECONDS_FORMS}")
    p.add_argument("--fmin", type=hz, metavar="HZ", help="lower band edge (absolute Hz)")
    p.add_argument("--fmax", type=hz, metavar="HZ", help="upper band edge (absolute Hz)")
    p.add_argument("--nfft", type=whole_number, default=1024, help="frame length (default 1024)")
    p.add_argument("--hop", type=whole_number, default=256, help="frame step (default 256)")
    p.add_argument("--window", default="hann", help="window name (default hann; kaiser,8)")
    p.add_argument("--channel", type=whole_number, default=0,
                   help="channel to measure (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_recording_options(p)
    p.set_defaults(func=cmd_measure)
