"""``specscope ops``: list every operator and its parameters.

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from specscope.compute import operators
from specscope.compute.errors import InputError


def _ops(args: argparse.Namespace) -> int:
    if args.family is not None and args.family not in operators.families():
        raise InputError(f"--family={args.family!r} must be one of "
                         f"{', '.join(operators.families())}")
    items = operators.describe(args.family)
    if args.json:
        json.dump(items, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    family = None
    for item in items:
        if item["family"] != family:
            family = item["family"]
            print(f"\n[{family}]")
        params = ", ".join(
            p["name"] + ("" if p["required"] else f"={p['default']!r}") for p in item["params"])
        print(f"  {item['name']:<24} {item['summary']}")
        if params:
            print(f"  {'':<24}   ({params})  backends: {', '.join(item['backends'])}"
                  f"  gpu: {item['gpu']}")
    print(f"\n{len(items)} operators")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``ops`` to the main CLI's subparsers."""
    p = subparsers.add_parser("ops", help="list every operator and its parameters")
    p.add_argument("--json", action="store_true", help="machine-readable listing")
    p.add_argument("--family", default=None, help="only this family")
    p.set_defaults(func=_ops)
