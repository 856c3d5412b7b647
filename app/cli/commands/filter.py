"""CLI subcommands of filters: ``filter design``, ``filter notch`` and ``filter apply``.

:func:`add_parser` adds ``filter`` to the main CLI's argparse subparsers::

    specscope filter design --design butter --btype bandpass --order 4 \\
        --cutoff 300 3000 --fs 48000 [--format json|csv|c|python|npz] [-o FILE]
    specscope filter notch IN --near 50 [--harmonics N|all] [--start S --stop S] \\
        [-o SPEC.json]
    specscope filter apply SPEC.json|PIPELINE.json|COEFFS IN -o OUT.h5

Handlers return an exit status; bad input raises
:class:`~specscope.compute.errors.SpecscopeError` subclasses, which the main
CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from specscope.app.cli.common import add_recording_options, recording_options
from specscope.app.cli.types import SECONDS_FORMS, number, seconds
from specscope.compute import jsonsafe
from specscope.compute.errors import InputError
from specscope.compute.filters.spec import MAX_SPEC_BYTES
from specscope.compute.types import (
    BesselNorm,
    Btype,
    CoefficientFormat,
    CombKind,
    FilterDesign,
    choices,
)


def _either(alias: Any) -> str:
    """An option type's choices as text: ``a, b or c``."""
    *first, last = choices(alias)
    return f"{', '.join(first)} or {last}"


_SPEC_OPTIONS = (  # (option, dest, kind, help)
    ("--btype", "btype", str, _either(Btype)),
    ("--order", "order", int, ("IIR order (omit with --passband/--stopband/--rp/--rs for "
                               "the minimum order)")),
    ("--cutoff", "cutoff", "list", "cut-off frequency in Hz, or LOW HIGH"),
    ("--passband", "passband", "list", "passband edge(s) in Hz (tolerance, minimum order)"),
    ("--stopband", "stopband", "list", "stopband edge(s) in Hz (tolerance, minimum order)"),
    ("--rp", "rp", float, "passband ripple in dB"),
    ("--rs", "rs", float, "stopband attenuation in dB"),
    ("--norm", "norm", str, f"bessel normalisation: {_either(BesselNorm)}"),
    ("--frequency", "frequency", float, "notch/peak/comb frequency in Hz"),
    ("--q", "q", float, "quality factor of a notch, peak or comb"),
    ("--kind", "kind", str, f"iircomb: {_either(CombKind)}"),
    ("--harmonics", "harmonics", int, "notches: harmonics 1..N (default: up to Nyquist)"),
    ("--numtaps", "numtaps", int, "FIR length"),
    ("--window", "window", str, "FIR window (e.g. hamming, kaiser,8)"),
    ("--width", "width", float, "firwin: Kaiser transition width in Hz"),
    ("--bands", "bands", "list", "remez/firls band edges in Hz, two per band"),
    ("--desired", "desired", "list", "remez/firls gain per band"),
    ("--weight", "weight", "list", "remez/firls weight per band"),
    ("--freq", "freq", "list", "firwin2 frequencies in Hz (0 .. Nyquist)"),
    ("--gain", "gain", "list", "firwin2 gains"),
)


def spec_from_args(args: argparse.Namespace) -> Any:
    """A FilterSpec from ``--spec`` or the design options."""
    from specscope.compute.filters import FilterSpec, FilterSpecError
    from specscope.compute.filters.defaults import FIELD_DEFAULTS

    if args.spec:
        p = Path(args.spec)
        if not p.exists():
            raise InputError(f"{p}: no such spec file")
        return FilterSpec.load(p)
    if not args.design:
        raise InputError("--design is required (or --spec FILE.json)")
    params: dict[str, Any] = {"design": args.design}
    for _, dest, kind, _ in _SPEC_OPTIONS:
        v = getattr(args, dest)
        if v is None:
            continue
        params[dest] = (v[0] if len(v) == 1 and dest in ("cutoff", "passband", "stopband")
                        else v) if kind == "list" else v
    if args.zero_phase:
        params["zero_phase"] = True
    try:
        return FilterSpec.from_params(params)
    except FilterSpecError as exc:
        field = exc.field
        if not field or field == "design":
            raise InputError(str(exc)) from None
        option = f"--{field.replace('_', '-')}"
        # a field left out that a new filter has a default for: suggest it
        hint = (f"; e.g. {option} {FIELD_DEFAULTS[field]:g}"
                if field in FIELD_DEFAULTS and getattr(args, field, None) is None else "")
        raise InputError(f"{option}: {exc}{hint}") from None


def cmd_design(args: argparse.Namespace) -> int:
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.filters import design, export_coefficients, verify, write_coefficients

    spec = spec_from_args(args)
    d = design(spec, args.fs)
    fmt = args.coef_format
    if args.output:
        refuse_overwriting_inputs([args.output], [args.spec])
        write_coefficients(d, args.output, fmt, name=args.name)
        if not args.quiet:
            v = verify(d)
            print(f"{args.output}: {d.form}, order {d.order}, {d.sections} sections"
                  + (f", {d.numtaps} taps" if d.numtaps else "")
                  + (f"; {v.text()}" if v.passed is not None else ""), file=sys.stderr)
        return 0
    if fmt == "npz":
        raise InputError("--format npz is binary; give -o FILE.npz")
    sys.stdout.write(export_coefficients(d, fmt or "json", name=args.name))
    return 0


def _harmonics(text: str) -> int | str:
    """``all`` or a whole number >= 1 (the ``--harmonics`` of ``filter notch``)."""
    if text.strip().lower() in ("all", "nyquist"):
        return "all"
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} must be 'all' or a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be 'all' or a whole number >= 1")
    return n


def cmd_notch(args: argparse.Namespace) -> int:
    """Measure the line near ``--near`` in the recording and write a notch spec for it."""
    from specscope.app.cli.common import open_input, require_at_least
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.filters import find_line, notch_for_line
    from specscope.compute.timefmt import time_to_sample

    require_at_least("--near", args.near, 0.0, "Hz")
    require_at_least("--q", args.q, 0.1)
    refuse_overwriting_inputs([args.output], [args.input])  # before anything is read
    with open_input(args, args.input) as rec:
        fs = float(rec.sample_rate)
        n = rec.n_samples
        start = 0 if args.start is None else time_to_sample(args.start, fs, "--start",
                                                            n_samples=n)
        stop = n if args.stop is None else time_to_sample(args.stop, fs, "--stop", n_samples=n)
        if not 0 <= start < stop <= n:
            raise InputError(f"--start {args.start} / --stop {args.stop}: the range must lie "
                             f"inside the recording (0 – {rec.duration:g} s) and not be empty")
        x = rec.read(start, stop, channels=args.channel)
    fit = find_line(x, fs, args.near, tolerance_hz=args.tolerance,
                    max_harmonics=args.harmonics if isinstance(args.harmonics, int) else None)
    spec = notch_for_line(fit, fs, q=args.q, harmonics=args.harmonics,
                          zero_phase=args.zero_phase)
    if not args.quiet:
        what = (f"comb at {spec.frequency:.4f} Hz" if spec.design == "iircomb" else
                f"{spec.harmonics} notches" if spec.design == "notches" else "one notch")
        print(f"line: {fit.describe()} (±{fit.stderr_hz:.4f} Hz, bins "
              f"{fit.resolution_hz:.3f} Hz); {what}, q={spec.q:g}", file=sys.stderr)
    text = json.dumps(spec.to_params(), indent=2) + "\n"
    if args.output:
        from specscope.compute.files import atomic_file

        with atomic_file(args.output, what="spec file name ending in .json") as tmp:
            tmp.write_text(text, encoding="utf-8")
        if not args.quiet:
            print(args.output)
    else:
        sys.stdout.write(text)
    return 0


def _load_filter(path: str) -> Any:
    """A FilterSpec, Design (coefficient file) or Pipeline from a file."""
    from specscope.compute.filters import SUFFIXES, FilterSpec, read_coefficients
    from specscope.compute.pipeline import Pipeline

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file")
    if p.suffix.lower() == ".json":
        doc = jsonsafe.load_file(p, what="JSON filter spec or pipeline",
                                 max_bytes=MAX_SPEC_BYTES)
        if isinstance(doc, dict) and str(doc.get("specscope", "")).startswith("pipeline/"):
            return Pipeline.load(p)
        if isinstance(doc, dict) and "design" in doc:
            try:
                return FilterSpec.from_params(doc)
            except InputError as exc:
                raise InputError(f"{p.name}: {exc}") from None
    if p.suffix.lower() in SUFFIXES:
        return read_coefficients(p)
    raise InputError(f"{p.name}: expected a filter spec or pipeline (.json) or coefficients "
                     f"({', '.join(SUFFIXES)})")


def cmd_apply(args: argparse.Namespace) -> int:
    from specscope.compute.batch import process_file
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.output import filter_recording
    from specscope.compute.pipeline import Pipeline

    refuse_overwriting_inputs([args.output], [args.input, args.filter])  # before any read
    what = _load_filter(args.filter)
    options = recording_options(args)
    if isinstance(what, Pipeline):
        out = process_file(what, args.input, args.output, recording_options=options).output
    else:
        out = filter_recording(what, args.input, args.output, recording_options=options)
    if not args.quiet:
        print(out)
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``filter design`` and ``filter apply`` to an argparse subparsers object."""
    from specscope.compute.filters.defaults import DEFAULT_Q

    top = subparsers.add_parser("filter", help="design filters, export coefficients, "
                                               "filter recordings")
    sub = top.add_subparsers(dest="filter_command", metavar="COMMAND")
    top.set_defaults(func=lambda a: (top.print_help(), 2)[1])

    p = sub.add_parser(
        "design", help="design a filter and print (or write) its coefficients",
        description="Design a filter (frequencies in Hz) and print its coefficients. The "
                    "SOS equal scipy's for the same specification.")
    p.add_argument("--design", choices=choices(FilterDesign), help="design method")
    p.add_argument("--spec", metavar="SPEC.json", help="read the specification from a file")
    p.add_argument("--fs", type=number, required=True, help="sample rate in Hz")
    for opt, dest, kind, help_ in _SPEC_OPTIONS:
        if kind == "list":
            p.add_argument(opt, dest=dest, type=number, nargs="+", metavar="X", help=help_)
        else:
            p.add_argument(opt, dest=dest, type=number if kind is float else kind,
                           help=help_)
    p.add_argument("--zero-phase", action="store_true", help="forward-backward filtering")
    p.add_argument("--format", dest="coef_format", choices=choices(CoefficientFormat),
                   help="output format (default json, or from the -o suffix)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--name", default="specscope_filter",
                   help="identifier for the C and Python exports")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_design)

    p = sub.add_parser(
        "notch", help="measure a spectral line (hum) in a recording and write a notch spec",
        description="Measure the line near --near Hz in IN (a long Welch spectrum, peaks "
                    "interpolated, the fundamental fitted across its harmonics) and write a "
                    "spec that notches it and its harmonics above the noise floor; "
                    "'filter apply', pipelines and the designer read it.")
    p.add_argument("input", metavar="IN")
    p.add_argument("--near", type=number, required=True, metavar="HZ",
                   help="roughly where the line is")
    p.add_argument("--tolerance", type=number, metavar="HZ",
                   help="how far from --near the line may be (default max(2, near/4))")
    p.add_argument("--harmonics", type=_harmonics, default="all", metavar="N|all",
                   help="notch harmonics 1..N that stand above the floor, or all of them "
                        "(default all)")
    p.add_argument("--q", type=number, default=DEFAULT_Q,
                   help=f"quality factor: each notch is frequency/q Hz wide (default "
                        f"{DEFAULT_Q:g})")
    p.add_argument("--start", type=seconds, metavar="TIME",
                   help=f"measure from this time: {SECONDS_FORMS}")
    p.add_argument("--stop", type=seconds, metavar="TIME",
                   help=f"measure up to this time: {SECONDS_FORMS}")
    p.add_argument("--channel", type=int, metavar="N", help="channel (default: all, averaged)")
    p.add_argument("--zero-phase", action="store_true", help="forward-backward filtering")
    p.add_argument("-o", "--output", metavar="SPEC.json", help="write the spec to a file")
    p.add_argument("-q", "--quiet", action="store_true")
    add_recording_options(p)
    p.set_defaults(func=cmd_notch)

    p = sub.add_parser(
        "apply", help="filter a recording into HDF5",
        description="Filter IN with a spec (.json with \"design\"), a pipeline (.json) or a "
                    "coefficient file, writing OUT.h5 (crash-safe, with the spec, the "
                    "coefficients and provenance inside).")
    p.add_argument("filter", metavar="SPEC-or-PIPELINE")
    p.add_argument("input", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    p.add_argument("-q", "--quiet", action="store_true")
    add_recording_options(p)
    p.set_defaults(func=cmd_apply)
