"""``specscope levels``: long-term band levels of a recording or a deployment, to NetCDF.

Hybrid millidecade (default), decidecade or octave band levels per interval (a
minute by default), calibrated when a calibration file is given, written to a
NetCDF-4 file as the run goes.  Files that fail are named on stderr and in the
file's ``failed_files`` attribute; the rest are computed.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_recording_options,
    recording_options,
)
from specscope.app.cli.types import at_least
from specscope.compute.types import BandKind, Statistic, choices


def cmd_levels(args: argparse.Namespace) -> int:
    from specscope.compute.levels import SpectrumParams, load_calibration, write_levels

    calibration = load_calibration(args.calibration) if args.calibration else None
    params = SpectrumParams(interval=args.interval, nfft=args.nfft, overlap=args.overlap,
                            window=args.window, statistic=args.statistic)
    bar = ProgressBar(None if not args.quiet else False)

    def progress(done: int, total: int) -> None:
        bar.draw(done / max(1, total), f"{done}/{total} tasks", force=done == total)

    try:
        failed = write_levels(args.source, args.output, calibration=calibration,
                              bands=args.bands, params=params, low=args.fmin, high=args.fmax,
                              channel=args.channel, workers=max(1, args.workers),
                              dask=args.dask, cache=not args.no_cache, progress=progress,
                              open_options=recording_options(args))
    finally:
        bar.close()
    for line in failed:
        print(f"failed: {line}", file=sys.stderr)
    if not args.quiet:
        print(f"wrote {args.output}" + (f" ({len(failed)} file(s) failed)" if failed else ""))
    return 1 if failed else 0


def add_parser(subparsers: Any) -> None:
    """Add ``levels`` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "levels", help="long-term band levels (hybrid millidecade, decidecade, octave) of a "
                       "recording or a folder, to NetCDF",
        description="Band levels per interval as mean spectral density in dB (re 1 FS²/Hz, "
                    "or re 1 µPa²/Hz / 20 µPa²/Hz with --calibration), written to NetCDF-4.")
    p.add_argument("source", metavar="FOLDER|FILE", help="a recording or a folder of recordings")
    p.add_argument("-o", "--output", required=True, metavar="OUT.nc", help="the NetCDF file")
    p.add_argument("--bands", choices=choices(BandKind), default="hmd",
                   help="hybrid millidecade (default), decidecade or octave bands")
    p.add_argument("--interval", type=float, default=60.0, metavar="S",
                   help="seconds per row (default 60)")
    p.add_argument("--nfft", type=at_least(16), default=None, metavar="N",
                   help="FFT length (default: the sample rate, 1 Hz bins)")
    p.add_argument("--overlap", type=float, default=0.5, metavar="F",
                   help="fraction of a frame shared with the next (default 0.5)")
    p.add_argument("--window", default="hann", metavar="NAME", help="window (default hann)")
    p.add_argument("--statistic", choices=choices(Statistic), default="mean",
                   help="how frames combine per bin (default mean: Welch)")
    p.add_argument("--fmin", type=float, default=0.0, metavar="HZ",
                   help="lowest band frequency (default 0)")
    p.add_argument("--fmax", type=float, default=None, metavar="HZ",
                   help="highest band frequency (default half the sample rate)")
    p.add_argument("--channel", type=at_least(0), default=0, metavar="N",
                   help="channel (default 0)")
    p.add_argument("--calibration", metavar="C.json",
                   help="calibration file: sensitivity, gain, full-scale voltage, response")
    p.add_argument("--workers", type=at_least(1), default=1, metavar="N",
                   help="parallel processes (default 1: in this process)")
    p.add_argument("--dask", metavar="local|ADDRESS",
                   help="run on Dask: 'local' or a scheduler's tcp://host:port")
    p.add_argument("--no-cache", action="store_true",
                   help="compute everything again (the cache is not used nor updated)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    add_recording_options(p)
    p.set_defaults(func=cmd_levels)
