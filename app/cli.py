"""The ``specscope`` command line.

Bad input ends with exit status 2 and one line on stderr naming the problem;
``--debug`` shows the traceback instead.  Subcommands that need no GUI never
import Qt.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from specscope.compute import __version__
from specscope.compute.errors import InputError, SpecscopeError

from . import (
    cli_annotations,
    cli_export,
    cli_filter,
    cli_live,
    cli_ops,
    cli_pipeline,
    cli_play,
    cli_plugins,
)
from .cli_common import (
    ProgressBar,
    add_recording_options,
    open_input,
    recording_options,
    run_command,
)
from .cli_types import whole_number

EXAMPLE = Path(__file__).resolve().parent.parent / "assets" / "examples" / "scene.wav"


def _add_stft_options(p: argparse.ArgumentParser, *, scaling: bool) -> None:
    p.add_argument("--nfft", type=whole_number, default=1024, help="frame length (default 1024)")
    p.add_argument("--hop", type=whole_number, default=256, help="frame step (default 256)")
    p.add_argument("--window", default="hann",
                   help="window name, scipy.signal.get_window style (default hann; kaiser,8)")
    if scaling:
        p.add_argument("--scaling", default="psd", choices=["psd", "spectrum", "magnitude"],
                       help="psd (default), spectrum or magnitude")
    p.add_argument("--channel", type=int, default=0, help="channel to analyse (default 0)")


def _info_without_rate(args: argparse.Namespace, exc: InputError) -> dict:
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
    except InputError as exc:
        if recording_options(args).get("sample_rate") is not None:
            raise
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


def cmd_spectrogram(args: argparse.Namespace) -> int:
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.output import HDF5_SUFFIXES, export_spectrogram
    from specscope.compute.spectral import StftParams

    if Path(args.output).suffix.lower() not in HDF5_SUFFIXES:  # x.wav would hold HDF5
        raise InputError(f"{args.output}: a spectrogram is written as HDF5; give a name "
                         f"ending in {', '.join(HDF5_SUFFIXES)}")
    refuse_overwriting_inputs([args.output], [args.file])  # before anything is read
    params = StftParams(args.nfft, args.hop, args.window, args.scaling)
    with open_input(args) as rec:
        bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
        try:
            out = export_spectrogram(rec, args.output, params, channel=args.channel,
                                     progress=bar)
        finally:
            bar.close()
    if not args.quiet:
        print(out)
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    from specscope.compute.spectral import StftParams

    from .gui import has_display, run_app
    from .session import ViewSettings, last_session_path

    settings = ViewSettings(stft=StftParams(args.nfft, args.hop, args.window),
                            channel=args.channel)
    if args.file is not None and not Path(args.file).exists():
        raise SpecscopeError(f"{args.file}: no such file")
    session = None
    if (args.file is None and args.screenshot is None and not args.no_restore
            and last_session_path().is_file()):
        session = last_session_path()
    screenshot = args.screenshot
    if screenshot is None and not has_display():
        screenshot = os.path.join(tempfile.gettempdir(), "specscope-screenshot.png")
        print("specscope: no display found; writing a screenshot of the window instead",
              file=sys.stderr)
    if screenshot is not None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    code = run_app(args.file, settings, screenshot, session=session,
                   options=recording_options(args))
    if screenshot is not None and code == 0:
        print(Path(screenshot).resolve())
    return code


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="specscope", description="Explore recordings spectrally.",
        epilog="Run 'specscope COMMAND --help' for the options of a command.")
    ap.add_argument("--version", action="version", version=f"specscope {__version__}")
    ap.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("open", help="open the desktop app (on FILE)")
    p.add_argument("file", nargs="?", help="recording to open")
    p.add_argument("--screenshot", metavar="PNG",
                   help="save the window as PNG once the spectrogram is drawn, then exit")
    p.add_argument("--no-restore", action="store_true",
                   help="without FILE, start empty instead of reopening the last session")
    _add_stft_options(p, scaling=False)
    add_recording_options(p)
    p.set_defaults(func=cmd_open)

    p = sub.add_parser("info", help="describe a recording")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_recording_options(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("spectrogram", help="compute a spectrogram and export it to HDF5")
    p.add_argument("file", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    _add_stft_options(p, scaling=True)
    add_recording_options(p)
    p.set_defaults(func=cmd_spectrogram)

    cli_plugins.add_global_options(ap)
    cli_ops.register(sub)
    cli_pipeline.register(sub)
    cli_export.register(sub)
    cli_filter.register(sub)
    cli_live.register(sub)
    cli_plugins.register(sub)
    cli_annotations.register(sub)
    cli_play.register(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        args = ap.parse_args(["open", *(argv if argv is not None else sys.argv[1:])])

    def run(args: argparse.Namespace) -> int:
        cli_plugins.apply_global_options(args)
        return args.func(args)

    return run_command(run, args, debug=args.debug)
