"""The ``specscope`` command line.

The parser is built from :data:`COMMANDS`, a table of command name → (module
under :mod:`specscope.app.cli.commands`, one-line help).  Only the module of the
command being run is imported; ``specscope --help`` lists the table and imports
none.  Each command module has ``add_parser(subparsers)``, which adds its
subcommand with a handler (``set_defaults(func=...)``) returning an exit status.

Bad input ends with exit status 2 and one line on stderr naming the problem
(:func:`~specscope.app.cli.common.run_command`); ``--debug`` shows the traceback
instead.  Nothing here imports Qt: ``open`` and ``live --gui`` import the desktop
front-end when they run.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from specscope.app.cli.common import (
    Parser,
    add_plugin_option,
    apply_plugin_option,
    escape_unprintable,
    run_command,
)
from specscope.compute import __version__

__all__ = ["COMMANDS", "EXAMPLE", "build_parser", "command_module", "main"]

EXAMPLE = Path(__file__).resolve().parents[2] / "assets" / "examples" / "scene.wav"


class Command(NamedTuple):
    """A row of :data:`COMMANDS`: the module that implements it and its one-line help."""

    module: str
    help: str


#: every subcommand, in the order ``specscope --help`` lists them
COMMANDS: dict[str, Command] = {
    "open": Command("open", "open the desktop app (on FILE)"),
    "info": Command("info", "describe a recording"),
    "index": Command("index", "describe a deployment: a folder of recordings as one timeline"),
    "spectrogram": Command("spectrogram", "compute a spectrogram and export it to HDF5"),
    "ops": Command("ops", "list every operator and its parameters"),
    "backends": Command("backends", "show the compute backends (CPU, GPU)"),
    "tune": Command("tune", "time implementations and remember the fastest"),
    "bench": Command("bench", "spectrogram and FFT benchmark against peers"),
    "run": Command("run", "run a pipeline over recordings, one HDF5 file per input"),
    "rerun": Command("rerun", "run the pipeline stored in an output again on its source"),
    "detect": Command("detect", "run a detector over recordings, a table of detections per "
                                "input"),
    "export": Command("export", "export a time range and channels, processed, to HDF5, "
                                "WAV/FLAC or SigMF"),
    "edit": Command("edit", "attenuate, remove, isolate or change the gain of regions of "
                            "time and frequency"),
    "filter": Command("filter", "design filters, export coefficients, filter recordings"),
    "live": Command("live", "stream a microphone, a file or a generator through a pipeline"),
    "plugins": Command("plugins", "list and check plugins"),
    "annotations": Command("annotations", "list or convert annotations (SigMF, Raven, "
                                          "Audacity, CSV, HDF5, TextGrid, ELAN)"),
    "measure": Command("measure", "measure a box: band power, peak, RMS, SNR"),
    "play": Command("play", "listen to a range of a recording (or write it to a WAV file)"),
    "levels": Command("levels", "long-term band levels (hybrid millidecade, decidecade, "
                                "octave) of a recording or a folder, to NetCDF"),
    "track": Command("track", "measure a track (pitch, formants, intensity, spectral shape) "
                              "to CSV or HDF5"),
}

#: global options that take a value (so that their value is not taken for a command)
_VALUED = {"--plugins"}


def command_module(name: str) -> ModuleType:
    """Import the module of command ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`COMMANDS`, e.g. ``"info"``.

    Returns
    -------
    types.ModuleType
        The command's module under :mod:`specscope.app.cli.commands`.

    Raises
    ------
    KeyError
        When ``name`` is not a command.
    """
    return importlib.import_module(f"{__name__}.commands.{COMMANDS[name].module}")


def _command_in(argv: list[str]) -> str | None:
    """The command named in ``argv``: its first positional word, or None."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif word == "--":
            return None
        elif not word.startswith("-"):
            return word
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with the full options of ``command`` (all commands when None).

    The other commands are listed with their help line only, so that building the
    parser for one command imports one command module.

    Parameters
    ----------
    command : str or None, optional
        The command whose options to add; None adds every command's.

    Returns
    -------
    argparse.ArgumentParser
        The ``specscope`` parser with its global options and subcommands.
    """
    ap = Parser(
        prog="specscope", description="Explore recordings spectrally.",
        epilog="Run 'specscope COMMAND --help' for the options of a command.")
    ap.add_argument("--version", action="version", version=f"specscope {__version__}")
    ap.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    add_plugin_option(ap)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name, row in COMMANDS.items():
        if command is None or name == command:
            command_module(name).add_parser(sub)
        else:
            sub.add_parser(name, help=row.help, add_help=False)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the ``specscope`` command line.

    Without a command the desktop app opens (``open``); errors become an exit status
    (:func:`~specscope.app.cli.common.run_command`).

    Parameters
    ----------
    argv : list of str or None, optional
        The arguments after the program name; None reads ``sys.argv``.

    Returns
    -------
    int
        The command's exit status (0 on success), 2 for bad input, 130 when
        cancelled or interrupted.
    """
    escape_unprintable()  # a file name that is not UTF-8 is printed escaped, never a crash
    argv = list(sys.argv[1:] if argv is None else argv)
    if any("\0" in str(a) for a in argv):  # only a program can pass one; no path holds it
        print("specscope: error: an argument holds a NUL character", file=sys.stderr)
        return 2
    name = _command_in(argv)
    if name is None and not {"-h", "--help", "--version"} & set(argv):
        argv = ["open", *argv]  # no command: the desktop app
        name = "open"
    ap = build_parser(name if name in COMMANDS else "")
    args = ap.parse_args(argv)

    def run(args: argparse.Namespace) -> int:
        apply_plugin_option(args)
        return args.func(args)

    return run_command(run, args, debug=args.debug)
