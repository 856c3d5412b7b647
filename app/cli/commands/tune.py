"""``specscope tune``: time implementations and remember the fastest.

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from specscope.app.cli.types import at_least
from specscope.compute import operators
from specscope.compute.errors import InputError
from specscope.compute.operators import autotune
from specscope.compute.types import TuneDtype, choices


def _tune(args: argparse.Namespace) -> int:
    if not autotune.enabled():
        raise InputError("autotuning is disabled (SPECSCOPE_NO_AUTOTUNE is set)")
    if args.forget:
        autotune.forget()
    ops = args.ops.split(",") if args.ops else None
    rows = operators.tune(ops, sizes=args.sizes, dtypes=args.dtypes)
    timed = [r for r in rows if r.get("timed")]
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for r in timed:
        secs = ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in r.get("seconds", {}).items())
        print(f"{r['operator']:<20} {r['dtype']:<8} n={r['size']:<9} -> {r['choice']:<18} {secs}")
    print(f"{len(timed)} choices timed, {len(rows) - len(timed)} with a single candidate; "
          f"wisdom: {autotune.wisdom_path()}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``tune`` to the main CLI's subparsers."""
    p = subparsers.add_parser("tune", help="time implementations and remember the fastest")
    p.add_argument("--ops", default=None, help="comma-separated operators (default: all)")
    p.add_argument("--sizes", type=at_least(1), nargs="+",
                   default=list(autotune.TUNE_SIZES))
    p.add_argument("--dtypes", nargs="+", default=list(autotune.TUNE_DTYPES),
                   choices=choices(TuneDtype))
    p.add_argument("--forget", action="store_true", help="drop remembered choices first")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_tune)
