"""``specscope info``: describe a recording.

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from specscope.app.cli.common import add_recording_options, open_input, recording_options
from specscope.compute.errors import MissingOption, SpecscopeError


def _info_without_rate(args: argparse.Namespace, exc: MissingOption) -> dict:
    """What is known of a file that opens once a sample rate is given (.npy, raw, ...).

    The file is opened again with a placeholder rate; when that fails too, the
    first error stands.  The placeholder is never shown: rate and duration read
    unknown.
    """
    from specscope.compute.io import open_recording

    try:
        rec = open_recording(args.file, **{**recording_options(args), "sample_rate": 1.0})
    except SpecscopeError:
        raise exc from None
    with rec:
        info = rec.info()
    meta = info.get("metadata") or {}
    known = {"shape": meta.get("shape"), "dtype": meta.get("stored_dtype", meta.get("dtype"))}
    info.update({k: v for k, v in known.items() if v is not None})
    info["sample_rate"] = None
    info["duration_s"] = None
    return info


def cmd_info(args: argparse.Namespace) -> int:
    try:
        with open_input(args) as rec:
            info = rec.info()
    except MissingOption as exc:
        if exc.option != "sample_rate" or exc.stated is not None:
            raise  # a file whose own rate is unusable is not described as having none
        info = _info_without_rate(args, exc)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        width = max(len(k) for k in info)
        for k, v in info.items():
            if k in ("sample_rate", "duration_s") and v is None:
                v = "unknown (give --sample-rate)"
            if k != "metadata":
                print(f"{k:<{width}}  {v}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``info`` to the main CLI's subparsers."""
    p = subparsers.add_parser("info", help="describe a recording")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_recording_options(p)
    p.set_defaults(func=cmd_info)
