"""CLI subcommand ``live``: stream a source through a pipeline, headless or in a window.

:func:`add_parser` adds it to the main CLI's argparse subparsers.  The handler
returns an exit status; bad input raises
:class:`~specscope.compute.errors.SpecscopeError` subclasses (exit status 2).
Nothing here imports Qt: the window comes from
``specscope.app.desktop.live_window.run_live(session)``, imported only when asked for.
``--monitor`` plays the processed signal on the audio output
(:class:`~specscope.compute.live.LiveMonitor`; ``SPECSCOPE_AUDIO_DEVICE``
chooses the device, ``SPECSCOPE_AUDIO_OUTPUT=fake`` a silent fake).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from specscope.app.cli.common import require_at_least
from specscope.app.cli.types import SECONDS_FORMS, number, seconds, whole_number
from specscope.compute.errors import Cancelled

#: the pipeline used without --pipeline: a spectrogram for the waterfall
DEFAULT_STEPS = [{"op": "spectrogram",
                  "params": {"nfft": 1024, "hop": 256, "window": "hann", "scaling": "psd"}}]


def _gui() -> Any:
    """``run_live`` from the app's live window, or None when this build has none."""
    try:
        from specscope.app.desktop import live_window
    except ImportError:
        return None
    return getattr(live_window, "run_live", None)


def cmd_live(args: argparse.Namespace) -> int:
    from specscope.compute.live import LiveMonitor, LiveSession, open_source
    from specscope.compute.pipeline import Pipeline

    require_at_least("--block", args.block, 1, "sample")
    if args.duration is not None:
        require_at_least("--duration", args.duration, 0, "seconds")
    require_at_least("--rate", args.rate, 0, hint="1: real time, 0: as fast as possible")
    run_live = None
    if not args.no_gui:
        run_live = _gui()
        if run_live is None:
            print("specscope: error: the live window is not available in this build "
                  "(specscope.app.desktop.live_window.run_live is missing); use --no-gui",
                  file=sys.stderr)
            return 2
    if args.record and args.source.startswith("file:"):
        from specscope.compute.files import refuse_overwriting_inputs

        refuse_overwriting_inputs([args.record], [args.source[len("file:"):], args.pipeline])
    pipeline = (Pipeline.load(args.pipeline) if args.pipeline
                else Pipeline.from_steps(DEFAULT_STEPS, name="live spectrogram"))
    source = open_source(args.source, block=args.block, rate=args.rate, loop=args.loop,
                         duration=args.duration)
    session = LiveSession(source, pipeline, record=args.record)
    code = 0
    try:
        if run_live is not None:
            # the window starts and stops the session (and the monitor)
            code = int(run_live(session, monitor=args.monitor) or 0)
        else:
            monitor = None
            if args.monitor:  # no device: one line, before the source starts
                monitor = LiveMonitor(session, channel=args.monitor_channel).start()
                print(f"specscope: monitoring on {monitor.device_name} (latency "
                      f"{monitor.latency_s * 1e3:.0f} ms)", file=sys.stderr)
            session.start()
            try:
                while not session.wait(0.2):
                    pass
                if monitor is not None:  # let the end of the stream be heard
                    monitor.player.wait(monitor.latency_s + 1.0)
            except KeyboardInterrupt:
                print("specscope: interrupted; stopping", file=sys.stderr)
            finally:
                if monitor is not None:
                    monitor.stop()
                    if monitor.underruns and args.stats:
                        print(f"specscope: the monitor ran short {monitor.underruns} times",
                              file=sys.stderr)
    finally:
        stats = session.stop()
        session.history.close()
    if session.error is not None and not isinstance(session.error, Cancelled):
        raise session.error
    if args.stats:
        d = stats.to_dict()
        d["source"] = source.name
        if args.record:
            d["record"] = str(args.record)
        print(json.dumps(d, indent=2))
    elif args.record:
        print(args.record)
    return code


def add_parser(subparsers: Any) -> None:
    """Add ``live`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "live", help="stream a microphone, a file or a generator through a pipeline",
        description="Stream SOURCE through a pipeline block by block (the same numbers as an "
                    "offline run), show it in the live window or run headless, optionally "
                    "record to HDF5.  SOURCE is generator:KIND[,key=value...] (tone, chirp, "
                    "noise, white, pink, clicks), file:PATH (any recording, played at --rate "
                    "times real time) or device[:NAME] (audio input; needs specscope[audio]).")
    p.add_argument("--source", required=True, metavar="SPEC",
                   help="generator:chirp | file:PATH | device[:NAME]")
    p.add_argument("--pipeline", metavar="P.json",
                   help="pipeline file (default: a 1024-point spectrogram, hop 256)")
    p.add_argument("--duration", type=seconds, metavar="TIME",
                   help=f"stop after this much signal: {SECONDS_FORMS} (default: the end of "
                        "a file, or until interrupted)")
    p.add_argument("--block", type=whole_number, default=1024, metavar="N",
                   help="samples per block (default 1024)")
    p.add_argument("--rate", type=number, default=1.0, metavar="R",
                   help="pace of generator and file sources: R times real time (default 1; "
                        "0: as fast as possible, lossless)")
    p.add_argument("--loop", action="store_true", help="loop a file source")
    p.add_argument("--record", metavar="OUT.h5",
                   help="record the input (and spectrogram) to HDF5 while live; readable "
                        "even if the process is killed")
    p.add_argument("--monitor", action="store_true",
                   help="hear the processed signal on the audio output (SPECSCOPE_AUDIO_DEVICE "
                        "chooses it; needs specscope[audio])")
    p.add_argument("--monitor-channel", type=whole_number, default=0, metavar="C",
                   help="channel the monitor plays (default 0)")
    p.add_argument("--no-gui", action="store_true", help="run headless")
    p.add_argument("--stats", action="store_true",
                   help="print JSON statistics at the end: blocks processed and dropped, "
                        "per-block latency (median, p99, max) in ms")
    p.set_defaults(func=cmd_live)
