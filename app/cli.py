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
from typing import Any

from specscope.compute import __version__
from specscope.compute.errors import Cancelled, InputError, SpecscopeError

from . import cli_plugins
from .cli_types import whole_number

EXAMPLE = Path(__file__).resolve().parent.parent / "assets" / "examples" / "scene.wav"


def _add_recording_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("recording options (for raw and headerless formats)")
    g.add_argument("--format", dest="rec_format", metavar="NAME",
                   help="reader to use instead of detecting it")
    g.add_argument("--sample-rate", metavar="HZ", help="sample rate in Hz (2400000, 2.4e6, 2.4M)")
    g.add_argument("--dtype", metavar="TYPE", help="raw sample type, e.g. cf32, ci16, cu8")
    g.add_argument("--center-freq", metavar="HZ",
                   help="centre frequency of an RF capture in Hz")
    g.add_argument("--dataset", metavar="PATH", help="HDF5/MAT dataset or variable")
    g.add_argument("--offset", type=int, metavar="BYTES", help="header bytes to skip")
    g.add_argument("--raw-channels", type=int, metavar="N", dest="n_channels",
                   help="interleaved channels in a raw file (default 1)")


def _recording_options(args: argparse.Namespace) -> dict[str, Any]:
    pairs = {"format": args.rec_format, "sample_rate": args.sample_rate, "dtype": args.dtype,
             "center_frequency": args.center_freq, "dataset": args.dataset,
             "offset": args.offset, "n_channels": args.n_channels}
    return {k: v for k, v in pairs.items() if v is not None}


def _add_stft_options(p: argparse.ArgumentParser, *, scaling: bool) -> None:
    p.add_argument("--nfft", type=whole_number, default=1024, help="frame length (default 1024)")
    p.add_argument("--hop", type=whole_number, default=256, help="frame step (default 256)")
    p.add_argument("--window", default="hann",
                   help="window name, scipy.signal.get_window style (default hann; kaiser,8)")
    if scaling:
        p.add_argument("--scaling", default="psd", choices=["psd", "spectrum", "magnitude"],
                       help="psd (default), spectrum or magnitude")
    p.add_argument("--channel", type=int, default=0, help="channel to analyse (default 0)")


def _open(args: argparse.Namespace):
    from specscope.compute.io.base import open_recording

    return open_recording(args.file, **_recording_options(args))


def cmd_info(args: argparse.Namespace) -> int:
    with _open(args) as rec:
        info = rec.info()
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        width = max(len(k) for k in info)
        for k, v in info.items():
            if k != "metadata":
                print(f"{k:<{width}}  {v}")
    return 0


def cmd_spectrogram(args: argparse.Namespace) -> int:
    from specscope.compute.output.spectrogram import export_spectrogram
    from specscope.compute.spectral import StftParams

    params = StftParams(args.nfft, args.hop, args.window, args.scaling)
    with _open(args) as rec:
        progress = None
        if not args.quiet and sys.stderr.isatty():
            def progress(f: float) -> None:
                print(f"\r{f * 100:5.1f} %", end="", file=sys.stderr, flush=True)
        out = export_spectrogram(rec, args.output, params, channel=args.channel,
                                 progress=progress)
        if progress is not None:
            print(file=sys.stderr)
    if not args.quiet:
        print(out)
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    from specscope.compute.spectral import StftParams

    from .document import ViewSettings
    from .gui import has_display, run_app

    settings = ViewSettings(stft=StftParams(args.nfft, args.hop, args.window),
                            channel=args.channel)
    if args.file is not None and not Path(args.file).exists():
        raise SpecscopeError(f"{args.file}: no such file")
    session = None
    if args.file is None and args.screenshot is None and not args.no_restore:
        from .main_window import last_session_path

        if last_session_path().is_file():
            session = last_session_path()
    screenshot = args.screenshot
    if screenshot is None and not has_display():
        screenshot = os.path.join(tempfile.gettempdir(), "specscope-screenshot.png")
        print("specscope: no display found; writing a screenshot of the window instead",
              file=sys.stderr)
    if screenshot is not None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    code = run_app(args.file, settings, screenshot, session=session,
                   options=_recording_options(args))
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
    _add_recording_options(p)
    p.set_defaults(func=cmd_open)

    p = sub.add_parser("info", help="describe a recording")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_recording_options(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("spectrogram", help="compute a spectrogram and export it to HDF5")
    p.add_argument("file", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    _add_stft_options(p, scaling=True)
    _add_recording_options(p)
    p.set_defaults(func=cmd_spectrogram)

    from . import cli_export, cli_filter, cli_live, cli_ops, cli_pipeline, cli_plugins

    cli_plugins.add_global_options(ap)
    cli_ops.register(sub)
    cli_pipeline.register(sub)
    cli_export.register(sub)
    cli_filter.register(sub)
    cli_live.register(sub)
    cli_plugins.register(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        args = ap.parse_args(["open", *(argv if argv is not None else sys.argv[1:])])
    try:
        cli_plugins.apply_global_options(args)
        return int(args.func(args) or 0)
    except (SpecscopeError, InputError) as exc:
        if args.debug:
            raise
        print(f"specscope: error: {exc}", file=sys.stderr)
        return 2
    except Cancelled:
        print("specscope: cancelled", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("specscope: interrupted", file=sys.stderr)
        return 130
