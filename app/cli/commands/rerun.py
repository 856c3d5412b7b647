"""``specscope rerun``: run the pipeline stored in an output again on its source.

Exit status 0 when done (or identical with ``--verify``), 1 when the result differs;
bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses (one
line, exit status 2 in the main CLI).  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def cmd_rerun(args: argparse.Namespace) -> int:
    from specscope.compute.batch import rerun

    result = rerun(args.file, verify=args.verify)
    if not args.verify:
        print(result.output)
        return 0
    if result.identical:
        print(f"{result.output}: identical")
        return 0
    for d in result.differences:
        print(f"specscope: differs: {d}", file=sys.stderr)
    print(f"{result.output}: differs (max |difference| {result.max_abs_diff:g})")
    return 1


def add_parser(subparsers: Any) -> None:
    """Add ``rerun`` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "rerun", help="run the pipeline stored in an output again on its source",
        description="Run the pipeline stored in OUT.h5 again on its (unchanged) source and "
                    "replace OUT.h5, or with --verify compare without writing: exit status "
                    "0 when identical, 1 when not.")
    p.add_argument("file", metavar="OUT.h5")
    p.add_argument("--verify", action="store_true",
                   help="check that the result is identical instead of replacing it")
    p.set_defaults(func=cmd_rerun)
