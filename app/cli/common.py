"""What every ``specscope`` subcommand shares: recording options, checks, progress, errors.

:func:`add_recording_options` / :func:`recording_options` give raw and headerless
formats their reader options; :func:`open_input` opens a command's input with
them.  :func:`require_at_least` checks an option after parsing, so that a bad
value ends, like every other bad input, with one line on stderr and exit
status 2 (:func:`run_command`).  :class:`ProgressBar` draws the one progress bar
of the command line.  Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import os
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, NoReturn

from specscope.app.cli import watch as cli_watch
from specscope.app.cli.types import at_least, whole_number
from specscope.compute.errors import (
    Cancelled,
    InputError,
    OptionError,
    SpecscopeError,
    cut_echoes,
    shown,
)
from specscope.compute.files import input_scope
from specscope.compute.types import Scaling, WriteOn, choices

__all__ = ["ESCAPE_ERRORS", "OPTION_FLAGS", "Parser", "ProgressBar", "add_plugin_option",
           "add_pool_options", "add_recording_options", "add_stft_options",
           "apply_plugin_option", "error_text", "escape_unprintable", "open_input",
           "recording_options", "report_batch", "require_at_least", "run_command"]

#: the core's keyword of an option -> the command line's flag for it and its value's name
#: (an :class:`OptionError` the core raises is printed with the flag)
OPTION_FLAGS: dict[str, tuple[str, str]] = {
    "sample_rate": ("--sample-rate", "HZ"),
    "dtype": ("--dtype", "TYPE"),
    "dataset": ("--dataset", "NAME"),
    "variable": ("--dataset", "NAME"),
    "center_frequency": ("--center-freq", "HZ"),
    "format": ("--format", "NAME"),
    "offset": ("--offset", "BYTES"),
    "n_channels": ("--raw-channels", "N"),
    "plugins": ("--plugins", "DIR"),
    "dask": ("--dask", "ADDRESS"),
    "freq_low_hz": ("--fmin", "HZ"),
    "freq_high_hz": ("--fmax", "HZ"),
    "tz": ("--tz", "ZONE"),
    "name_pattern": ("--name-pattern", "PATTERN"),
    "interval": ("--interval", "S"),
    "overlap": ("--overlap", "F"),
}


#: the codec error handler of the command line's output streams (:func:`escape_unprintable`)
ESCAPE_ERRORS = "specscope.escape"


def _escape(exc: UnicodeError) -> tuple[str, int]:
    """What cannot be encoded, as backslash escapes: a file name's undecodable bytes as
    ``\\xff`` (``os.fsdecode`` made them surrogates), other characters as ``\\u2013``."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for ch in exc.object[exc.start:exc.end]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out), exc.end


codecs.register_error(ESCAPE_ERRORS, _escape)


def escape_unprintable(*streams: Any) -> None:
    """Make ``streams`` (default stdout and stderr) print what they cannot encode escaped.

    A file name that is not valid UTF-8 (``bad_\\xff\\xfe.wav``) is printed with its
    undecodable bytes as ``\\xff``, as ``ls`` escapes them, by every command and in
    every error line, whatever ``PYTHONIOENCODING`` asks; the rest of the text is
    unchanged.

    Parameters
    ----------
    *streams : text streams
        Streams to change (those without ``reconfigure`` are left as they are).
    """
    for stream in streams or (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        with contextlib.suppress(AttributeError, ValueError, OSError, LookupError):
            reconfigure(errors=ESCAPE_ERRORS)


class Parser(argparse.ArgumentParser):
    """The command line's parser: a usage error repeats the values it names cut short.

    argparse repeats a bad value whole (``invalid choice: '999...'``, ten thousand
    digits); here each is cut as :func:`~specscope.compute.errors.shown` cuts it
    (:func:`~specscope.compute.errors.cut_echoes`), so the error stays one short
    line after the usage.  Subcommands' parsers are of this class too.
    """

    def error(self, message: str) -> NoReturn:
        """Print the usage and the error, values cut, and exit with status 2."""
        super().error(cut_echoes(message))


def add_plugin_option(parser: argparse.ArgumentParser) -> None:
    """Add the global ``--plugins DIR`` (repeatable) to the main parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The main ``specscope`` parser; the folders land in ``args.plugin_dirs``.
    """
    parser.add_argument("--plugins", dest="plugin_dirs", action="append", default=[],
                        metavar="DIR",
                        help="also load plugins from DIR (repeatable; SPECSCOPE_PLUGINS too)")


def apply_plugin_option(args: argparse.Namespace) -> None:
    """Make the ``--plugins`` folders known to plugin discovery.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments; ``args.plugin_dirs`` (if any) are added to the search path.

    Raises
    ------
    InputError
        When a folder does not exist.
    """
    dirs = getattr(args, "plugin_dirs", None) or []
    if dirs:
        from specscope.compute import extensions

        extensions.add_search_path(*dirs)


def add_recording_options(p: argparse.ArgumentParser) -> None:
    """Add the reader options of raw and headerless formats to a subcommand's parser.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; :func:`recording_options` reads the values back.
    """
    g = p.add_argument_group("recording options (for raw and headerless formats)")
    g.add_argument("--format", dest="rec_format", metavar="NAME",
                   help="reader to use instead of detecting it")
    g.add_argument("--sample-rate", metavar="HZ", help="sample rate in Hz (2400000, 2.4e6, 2.4M)")
    g.add_argument("--dtype", metavar="TYPE", help="raw sample type, e.g. cf32, ci16, cu8")
    g.add_argument("--center-freq", metavar="HZ",
                   help="centre frequency of an RF capture in Hz")
    g.add_argument("--dataset", metavar="NAME", help="HDF5/MAT dataset or variable")
    g.add_argument("--offset", type=int, metavar="BYTES", help="header bytes to skip")
    g.add_argument("--raw-channels", type=int, metavar="N", dest="n_channels",
                   help="interleaved channels in a raw file (default 1)")
    d = p.add_argument_group("deployment options (for a folder of recordings)")
    d.add_argument("--tz", metavar="ZONE",
                   help="time zone of start times that state none (names, BWF bext): UTC "
                        "(default), +02:00, Europe/Berlin")
    d.add_argument("--name-pattern", metavar="PATTERN",
                   help="how file names state start times, with strftime fields "
                        "(e.g. S3_%%Y%%m%%d_%%H%%M%%S); used where metadata states none")


def recording_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reader options given on the command line, as ``open_recording`` keywords.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of a parser set up by :func:`add_recording_options`.

    Returns
    -------
    dict
        Only the options that were given (the reader validates them).
    """
    pairs = {"format": args.rec_format, "sample_rate": args.sample_rate, "dtype": args.dtype,
             "center_frequency": args.center_freq, "dataset": args.dataset,
             "offset": args.offset, "n_channels": args.n_channels,
             "tz": getattr(args, "tz", None), "name_pattern": getattr(args, "name_pattern", None)}
    return {k: v for k, v in pairs.items() if v is not None}


def open_input(args: argparse.Namespace, path: Any = None) -> Any:
    """Open ``path`` (default ``args.file``) with the command's recording options.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of a parser set up by :func:`add_recording_options`.
    path : str or os.PathLike, optional
        The recording to open; None opens ``args.file``.

    Returns
    -------
    Recording
        The open recording (a context manager).
    """
    from specscope.compute.io import open_recording

    return open_recording(args.file if path is None else path, **recording_options(args))


def require_at_least(option: str, value: float, minimum: float, unit: str = "",
                     hint: str = "") -> None:
    """Raise :class:`InputError` naming ``option`` when ``value < minimum``.

    Parameters
    ----------
    option : str
        The option as typed, e.g. ``"--workers"``.
    value, minimum : float
        The given value and the smallest allowed one.
    unit : str
        Unit shown after the minimum (``"sample"``, ``"seconds"``).
    hint : str
        What the allowed values mean, shown in parentheses.
    """
    if value < minimum:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        text = f"{option} {shown} must be >= {minimum:g}"
        if unit:
            text += f" {unit}"
        if hint:
            text += f" ({hint})"
        raise InputError(text)


class ProgressBar:
    """A throttled one-line progress bar on stderr, drawn only for a terminal.

    Call it with the fraction done in [0, 1] (the signature ``progress=``
    callbacks of the compute API take); call :meth:`close` when the work ends.
    :meth:`note` adds a remark after the bar (an operator call running long,
    see :mod:`.cli_watch`, which is told when a bar is drawn and closed).

    Parameters
    ----------
    enabled : bool, optional
        Draw at all; by default only when stderr is a terminal.
    """

    WIDTH = 30
    INTERVAL_S = 0.1

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.last = 0.0
        self.drawn = False
        self._fraction = 0.0
        self._suffix = ""
        self._note = ""
        self._width = 0
        self._lock = threading.RLock()  # a Ctrl+C may close the bar while it is drawn

    def draw(self, fraction: float, suffix: str = "", *, force: bool = False) -> None:
        """Draw the bar at ``fraction`` with ``suffix`` after it (throttled)."""
        if not self.enabled:
            return
        now = time.monotonic()
        self._fraction, self._suffix = fraction, suffix
        if not force and fraction < 1.0 and now - self.last < self.INTERVAL_S:
            return
        self.last = now
        self._render()

    def note(self, text: str) -> None:
        """Show ``text`` after the bar until the next note ("" removes it); redraws."""
        if not self.enabled:
            return
        self._note = text
        self._render()

    def _render(self) -> None:
        with self._lock:
            fill = int(self.WIDTH * min(1.0, max(0.0, self._fraction)))
            line = f"[{'#' * fill}{'-' * (self.WIDTH - fill)}] {self._suffix}"
            if self._note:
                line += f" \u2014 {self._note}"
            pad = " " * max(0, self._width - len(line))  # wipe a longer line drawn before
            self._width = len(line)
            print(f"\r{line}{pad}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        cli_watch.bar_drawn(self)

    def __call__(self, fraction: float) -> None:
        self.draw(fraction, f"{fraction * 100:5.1f} %")

    def close(self) -> None:
        """End the line the bar was drawn on."""
        cli_watch.bar_closed(self)
        with self._lock:
            if self.drawn:
                print(file=sys.stderr)
                self.drawn = False
                self._width = 0


def run_command(func: Callable[[argparse.Namespace], int | None],
                args: argparse.Namespace, *, debug: bool = False,
                watch: bool | None = None) -> int:
    """Run a subcommand and turn its errors into an exit status.

    Bad input (:class:`SpecscopeError`, :class:`InputError`) prints one line,
    ``specscope: error: ...``, and gives 2 (with ``debug`` it is raised for the
    traceback instead); a cancellation or Ctrl+C gives 130.  With ``watch``
    (by default every command without a window) long operator calls report
    themselves and Ctrl+C ends the process even when a call does not stop
    (:mod:`.cli_watch`), and every file the command reads is refused to its
    writers (:func:`~specscope.compute.files.input_scope`).

    Parameters
    ----------
    func : callable
        The subcommand's handler; it takes ``args`` and returns an exit status or None
        (taken as 0).
    args : argparse.Namespace
        The parsed arguments.
    debug : bool, optional
        Raise bad-input errors (for their traceback) instead of printing one line.
    watch : bool or None, optional
        Watch long operator calls and Ctrl+C; None: for every command except
        ``open`` and ``live`` with a window.

    Returns
    -------
    int
        The exit status.
    """
    if watch is None:  # a window has its own status line and Cancel
        command = getattr(args, "command", None)
        watch = not (command == "open" or (command == "live"
                                           and not getattr(args, "no_gui", False)))
    guard = cli_watch.command_guard() if watch else contextlib.nullcontext()
    # every file a command reads is one of its inputs, refused to all of its writers; a
    # window's session saves files it opened on purpose (a session, its annotations)
    inputs = input_scope() if watch else contextlib.nullcontext()
    with guard as state, inputs:
        code = _run(func, args, debug)
        if state is not None:
            state.code = code
        return code


def _run(func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace,
         debug: bool) -> int:
    try:
        return int(func(args) or 0)
    except SpecscopeError as exc:  # InputError too
        if debug:
            raise
        print(f"specscope: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except Cancelled:
        print("specscope: cancelled", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("specscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        return 141  # as a command ended by SIGPIPE: the reader (head, less) had enough
    except OSError as exc:
        # the file system refused a path the command was given (a name too long, a loop
        # of links): the file and the system's reason, as for every other bad input
        if debug or exc.errno is None:
            raise
        name = exc.filename
        where = f"{shown(os.fsdecode(name))}: " if isinstance(name, (str, bytes)) else ""
        print(f"specscope: error: {where}{os.strerror(exc.errno)}", file=sys.stderr)
        return 2


def _stdout_closed() -> bool:
    """Whether standard output's reader went away; if so, later writes go nowhere."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    if hasattr(select, "poll"):  # a pipe with no reader polls as an error for its writer
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if not any(events & select.POLLERR for _, events in poller.poll(0)):
            return False
    # the interpreter flushes stdout once more at exit: point it at nothing
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


def error_text(exc: BaseException) -> str:
    """An error's one line as the command line says it: an option by its flag.

    An :class:`OptionError` about ``sample_rate`` reads "give --sample-rate HZ";
    an option the table does not know keeps the core's keyword.

    Parameters
    ----------
    exc : BaseException
        The error to describe.

    Returns
    -------
    str
        Its message, with an option named by its flag (:data:`OPTION_FLAGS`).
    """
    if isinstance(exc, OptionError) and exc.option in OPTION_FLAGS:
        return exc.text(*OPTION_FLAGS[exc.option])
    return str(exc)


def add_pool_options(p: argparse.ArgumentParser, *, written: str = "outputs",
                     chunk_note: str = "") -> None:
    """Add the options of a batch's pool (``run``, ``detect``).

    The options are --workers, --threads, --chunk-samples, --dask and --write-on.
    :func:`require_at_least` checks --workers and --chunk-samples after parsing
    (0 parses, so that its error names the option).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    written : str, optional
        What the run writes, named in --write-on's help.
    chunk_note : str, optional
        Text appended to --chunk-samples's help.
    """
    from specscope.compute.pipeline import DEFAULT_CHUNK_SAMPLES

    p.add_argument("--workers", type=at_least(0), default=1, metavar="N",
                   help="parallel workers (default 1: in this process)")
    p.add_argument("--threads", action="store_true",
                   help="use threads instead of processes for the local pool")
    p.add_argument("--chunk-samples", type=at_least(0), default=DEFAULT_CHUNK_SAMPLES,
                   metavar="N", help=f"samples read at a time (default {DEFAULT_CHUNK_SAMPLES}"
                                     f"{'; ' + chunk_note if chunk_note else ''})")
    p.add_argument("--dask", metavar="local|ADDRESS",
                   help="run on Dask: 'local' starts a LocalCluster of --workers workers; "
                        "tcp://host:port uses a running scheduler")
    p.add_argument("--write-on", choices=choices(WriteOn), default="auto",
                   help=f"who writes the {written} of a --dask run: the workers in place, or "
                        "this machine, fetching each file from its worker; auto (default): "
                        "the workers when all of them see the output folder, else this "
                        "machine")


def add_stft_options(p: argparse.ArgumentParser, *, scaling: bool) -> None:
    """Add the STFT options (--nfft, --hop, --window, [--scaling], --channel).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    scaling : bool
        Also add --scaling (psd, spectrum or magnitude).
    """
    p.add_argument("--nfft", type=whole_number, default=1024, help="frame length (default 1024)")
    p.add_argument("--hop", type=whole_number, default=256, help="frame step (default 256)")
    p.add_argument("--window", default="hann",
                   help="window name, scipy.signal.get_window style (default hann; kaiser,8)")
    if scaling:
        p.add_argument("--scaling", default="psd", choices=choices(Scaling),
                       help="psd (default), spectrum or magnitude")
    p.add_argument("--channel", type=int, default=0, help="channel to analyse (default 0)")


def report_batch(summary: Any, args: argparse.Namespace,
                 done_line: Callable[[Any], str] = lambda r: str(r.output),
                 extra: str | None = None) -> int:
    """Print a batch summary as ``run`` and ``detect`` do.

    Failed inputs go to stderr one line each; ``--json`` prints the summary as JSON;
    otherwise (unless ``--quiet``) each done input's ``done_line`` on stdout, then
    ``extra``, then the summary's text on stderr.

    Parameters
    ----------
    summary : Summary
        The outcome of the batch (of ``run_batch`` or ``run_detect``): its ``done``
        and ``failed`` results, ``ok``, ``text()`` and ``to_dict()``.
    args : argparse.Namespace
        Parsed arguments with ``json`` and ``quiet``.
    done_line : callable, optional
        The stdout line of one done input's result; by default its output path.
    extra : str or None, optional
        A line printed after the done inputs.

    Returns
    -------
    int
        The exit status: 0 when every input was done, 1 when one failed.
    """
    for r in summary.failed:
        print(f"specscope: failed: {r.input}: {r.error}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary.to_dict(), indent=1))
    elif not args.quiet:
        for r in summary.done:
            print(done_line(r))
        if extra is not None:
            print(extra)
        for line in summary.text().splitlines():
            if not line.startswith("failed: "):  # printed above
                print(line, file=sys.stderr)
    return 0 if summary.ok else 1
