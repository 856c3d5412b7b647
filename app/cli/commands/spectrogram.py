"""``specscope spectrogram``: compute a spectrogram and export it to HDF5.

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from specscope.app.cli.common import (
    ProgressBar,
    add_recording_options,
    add_stft_options,
    open_input,
)
from specscope.compute.errors import InputError


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


def add_parser(subparsers: Any) -> None:
    """Add ``spectrogram`` to the main CLI's subparsers."""
    p = subparsers.add_parser("spectrogram", help="compute a spectrogram and export it to HDF5")
    p.add_argument("file", metavar="IN")
    p.add_argument("-o", "--output", required=True, metavar="OUT.h5")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    add_stft_options(p, scaling=True)
    add_recording_options(p)
    p.set_defaults(func=cmd_spectrogram)
