"""``specscope backends``: show the compute backends (CPU, GPU).

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from specscope.compute import backend


def _backends(args: argparse.Namespace) -> int:
    info = backend.describe_backends()
    if args.json:
        json.dump(info, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for b in info:
        if not b["available"]:
            print(f"{b['name']:<6} unavailable: {b.get('reason', '')}")
            continue
        line = f"{b['name']:<6} {b.get('version', '')}  device: {b.get('device', '')}"
        if "memory_total_bytes" in b:
            line += (f"  memory: {b['memory_total_bytes'] / 2**30:.1f} GiB"
                     f" ({b['memory_free_bytes'] / 2**30:.1f} GiB free)")
        elif b["name"] == "numpy":
            line += f"  cores: {b.get('cpu_count')}"
        print(line)
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``backends`` to the main CLI's subparsers."""
    p = subparsers.add_parser("backends", help="show the compute backends (CPU, GPU)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_backends)
