"""``specscope open``: the desktop app, on a file or the last session.

Bad input raises :class:`~specscope.compute.errors.SpecscopeError` subclasses, which
the main CLI prints as one line with exit status 2.  Qt is imported only when the
command runs (:mod:`specscope.app.desktop.gui`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from specscope.app.cli.common import add_recording_options, add_stft_options, recording_options
from specscope.compute.errors import SpecscopeError


def cmd_open(args: argparse.Namespace) -> int:
    from specscope.app.desktop.gui import has_display, run_app
    from specscope.app.session import ViewSettings, last_session_path
    from specscope.compute.spectral import StftParams

    settings = ViewSettings(stft=StftParams(args.nfft, args.hop, args.window),
                            channel=args.channel)
    if args.file is not None and not Path(args.file).exists():
        raise SpecscopeError(f"{args.file}: no such file")
    session = None
    if (args.file is None and args.screenshot is None and not args.no_restore
            and last_session_path().is_file()):
        session = last_session_path()
    screenshot = args.screenshot
    made = None
    if screenshot is None and not has_display():
        # a name of its own in the temporary folder (created for this user alone, 0600):
        # two users, or two runs, never write over each other's picture
        fd, screenshot = tempfile.mkstemp(prefix="specscope-screenshot-", suffix=".png")
        os.close(fd)
        made = Path(screenshot)
        print(f"specscope: no display found; writing a screenshot of the window to "
              f"{screenshot}", file=sys.stderr)
    if screenshot is not None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        code = run_app(args.file, settings, screenshot, session=session,
                       options=recording_options(args))
    finally:
        if made is not None and made.is_file() and made.stat().st_size == 0:
            made.unlink()  # nothing was drawn: no empty picture left behind
    if screenshot is not None and code == 0:
        print(Path(screenshot).resolve())
    return code


def add_parser(subparsers: Any) -> None:
    """Add ``open`` to the main CLI's subparsers."""
    p = subparsers.add_parser("open", help="open the desktop app (on FILE)")
    p.add_argument("file", nargs="?", help="recording to open")
    p.add_argument("--screenshot", metavar="PNG",
                   help="save the window as PNG once the spectrogram is drawn, then exit")
    p.add_argument("--no-restore", action="store_true",
                   help="without FILE, start empty instead of reopening the last session")
    add_stft_options(p, scaling=False)
    add_recording_options(p)
    p.set_defaults(func=cmd_open)
