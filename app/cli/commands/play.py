"""CLI subcommand ``play``: listen to a range of a recording, or write what would be heard.

:func:`add_parser` adds it to the main CLI's argparse subparsers.  With ``-o``
the rendered samples go to a WAV file (32-bit float, published atomically);
without, they are played on the audio output (``SPECSCOPE_AUDIO_DEVICE``
chooses it) with a progress bar.  No sounddevice, no PortAudio or no device:
one line and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_recording_options,
    open_input,
    require_at_least,
)
from specscope.app.cli.types import SECONDS_FORMS, number, seconds, whole_number
from specscope.compute.timefmt import format_time
from specscope.compute.types import ChannelMix, Deemphasis, Demod, choices


def _clock(t: float) -> str:
    """A position as every time in specscope reads (h:mm:ss.ss)."""
    return format_time(max(0.0, t), 0.01, "clock")


def _channel(text: str) -> int | str:
    choice = text.strip().lower()
    if choice in choices(ChannelMix):
        return choice
    try:
        return whole_number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected {', '.join(choices(ChannelMix))} "
                                         "or a channel number") from None


def _options(args: argparse.Namespace) -> dict[str, Any]:
    from specscope.compute.pipeline import Pipeline

    opts: dict[str, Any] = {"speed": args.speed, "gain_db": args.gain,
                            "deemphasis": args.deemphasis, "device_rate": args.device_rate}
    given = {"band": args.band, "heterodyne": args.heterodyne, "tune": args.tune,
             "demod": args.demod, "bandwidth": args.bandwidth}
    opts.update({k: v for k, v in given.items() if v is not None})
    if args.pipeline:
        opts["pipeline"] = Pipeline.load(args.pipeline)
    return opts


def cmd_play(args: argparse.Namespace) -> int:
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.playback import Player, Renderer

    require_at_least("--start", args.start, 0, "seconds")
    refuse_overwriting_inputs([args.output], [args.file])  # before anything is read
    with open_input(args) as rec:
        r = Renderer(rec, args.start, args.stop, channel=args.channel, options=_options(args))
        for note in r.notes:
            print(f"specscope: {note}", file=sys.stderr)
        bar = ProgressBar(enabled=not args.quiet and sys.stderr.isatty())
        if args.output:
            try:
                out = r.write(args.output, progress=bar)
            finally:
                bar.close()
            if not args.quiet:
                print(out)
            return 0
        player = Player(r)  # no device: one SpecscopeError line, exit 2
        total = _clock(r.duration_s)
        try:
            player.start()
            if not args.quiet:
                print(f"playing on {player.device_name} (latency "
                      f"{player.latency_s * 1e3:.0f} ms)", file=sys.stderr)
            while not player.wait(0.1):
                bar.draw(player.position / max(1, r.length),
                         f"{_clock(player.position_s)} of the recording, "
                         f"{_clock(player.position / r.sample_rate)} / {total}")
            bar.draw(1.0, f"{_clock(r.position_of(r.length))} / {total}", force=True)
        finally:
            player.stop()
            bar.close()
        if player.dropouts and not args.quiet:
            print(f"specscope: {player.dropouts} dropout(s): the sound ran short of samples",
                  file=sys.stderr)
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``play`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "play", help="listen to a range of a recording (or write it to a WAV file)",
        description="Play FILE from --start to --stop on the audio output (chosen with "
                    "SPECSCOPE_AUDIO_DEVICE; needs specscope[audio]), slowed down or sped "
                    "up, band-limited, heterodyned, or tuned and demodulated for IQ "
                    "recordings.  With -o, write what would be played to a WAV file.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--start", type=seconds, default=0.0, metavar="TIME",
                   help=f"start: {SECONDS_FORMS} (default 0)")
    p.add_argument("--stop", type=seconds, metavar="TIME",
                   help=f"stop: {SECONDS_FORMS} (default: the end)")
    p.add_argument("--channel", type=_channel, default="all", metavar="C",
                   help="what to hear: all (stereo from the first two channels; the default), "
                        "left, right, mix (every channel down-mixed) or a channel number")
    p.add_argument("--speed", type=number, default=1.0, metavar="R",
                   help="speed, 0.05-4 (0.1: ten times slower, pitch down by ten; default 1)")
    p.add_argument("--band", type=number, nargs=2, metavar=("LO", "HI"),
                   help="hear only LO..HI Hz of the recording")
    p.add_argument("--heterodyne", type=number, metavar="HZ",
                   help="mix with a local oscillator at HZ (ultrasound into the audible range)")
    p.add_argument("--tune", type=number, metavar="HZ",
                   help="IQ: absolute frequency to listen to")
    p.add_argument("--demod", choices=choices(Demod), help="IQ: demodulator")
    p.add_argument("--bandwidth", type=number, metavar="HZ",
                   help="IQ: channel bandwidth (am 10k, fm 200k, usb/lsb 3k)")
    p.add_argument("--deemphasis", choices=choices(Deemphasis), default="none",
                   help="FM de-emphasis (default none)")
    p.add_argument("--gain", type=number, default=0.0, metavar="DB",
                   help="gain in dB before the limiter (default 0)")
    p.add_argument("--device-rate", type=number, default=48000.0, metavar="HZ",
                   help="output sample rate (default 48000)")
    p.add_argument("--pipeline", metavar="P.json", help="processing applied first")
    p.add_argument("-o", "--output", metavar="OUT.wav",
                   help="write the samples to a 32-bit float WAV file instead of playing")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, no output path")
    add_recording_options(p)
    p.set_defaults(func=cmd_play)
