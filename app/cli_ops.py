"""CLI subcommands of the operator core: ``ops``, ``backends``, ``tune``, ``bench``.

:func:`register` adds them to the main CLI's argparse subparsers; each handler
returns an exit status and raises :class:`~specscope.compute.errors.SpecscopeError`
subclasses for bad input (the main CLI prints those as one line, exit 2).
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path
from typing import Any

from specscope.compute import backend, operators
from specscope.compute.errors import InputError
from specscope.compute.operators import autotune

from .cli_types import at_least


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


def _bench_script() -> Path:
    return Path(__file__).resolve().parent.parent / "scripts" / "bench.py"


def _bench(args: argparse.Namespace) -> int:
    script = _bench_script()
    if not script.is_file():
        raise InputError(f"the benchmark script {script} is missing; 'specscope bench' "
                         "needs a source checkout")
    argv = ["bench.py"] + (["--quick"] if args.quick else [])
    old = sys.argv
    try:
        sys.argv = argv
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        sys.argv = old
    return 0


def register(subparsers: Any) -> None:
    """Add ``ops``, ``backends``, ``tune`` and ``bench`` to an argparse subparsers object."""
    p = subparsers.add_parser("ops", help="list every operator and its parameters")
    p.add_argument("--json", action="store_true", help="machine-readable listing")
    p.add_argument("--family", default=None, help="only this family")
    p.set_defaults(func=_ops)

    p = subparsers.add_parser("backends", help="show the compute backends (CPU, GPU)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_backends)

    p = subparsers.add_parser("tune", help="time implementations and remember the fastest")
    p.add_argument("--ops", default=None, help="comma-separated operators (default: all)")
    p.add_argument("--sizes", type=at_least(1), nargs="+",
                   default=list(autotune.TUNE_SIZES))
    p.add_argument("--dtypes", nargs="+", default=list(autotune.TUNE_DTYPES),
                   choices=["float32", "float64", "complex64", "complex128"])
    p.add_argument("--forget", action="store_true", help="drop remembered choices first")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_tune)

    p = subparsers.add_parser("bench", help="spectrogram and FFT benchmark against peers")
    p.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    p.set_defaults(func=_bench)
