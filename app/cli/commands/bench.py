"""``specscope bench``: the spectrogram and FFT benchmark against peers.

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Any

from specscope.compute.errors import InputError


def _bench_script() -> Path:
    return Path(__file__).resolve().parents[3] / "scripts" / "bench.py"


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


def add_parser(subparsers: Any) -> None:
    """Add ``bench`` to the main CLI's subparsers."""
    p = subparsers.add_parser("bench", help="spectrogram and FFT benchmark against peers")
    p.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    p.set_defaults(func=_bench)
