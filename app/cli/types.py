"""argparse value types of the command line, built on :mod:`specscope.compute.params`.

The numbers are read by :func:`~specscope.compute.params.parse_number` (times by
:func:`~specscope.compute.timefmt.parse_time`, so every option taking seconds
accepts ``12.5``, ``250 ms``, ``m:ss`` and ``h:mm:ss``) and checked
by :meth:`Param.validate <specscope.compute.params.Param.validate>`, so the command
line accepts and rejects what the rest of specscope does, with the same words;
argparse names the option in front of the message.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from specscope.compute.errors import InputError
from specscope.compute.params import Param, parse_number
from specscope.compute.timefmt import parse_time

__all__ = ["SECONDS_FORMS", "at_least", "channel_list", "hz", "number", "seconds",
           "whole_number"]

#: the parameter name the checks are made under; argparse shows the option instead
_NAME = "value"


def _argument_error(exc: InputError) -> argparse.ArgumentTypeError:
    """The check's message without the placeholder name (argparse adds the option)."""
    return argparse.ArgumentTypeError(str(exc).removeprefix(f"{_NAME}="))


def _checked(param: Param, value: object) -> object:
    try:
        return param.validate(value)
    except InputError as exc:
        raise _argument_error(exc) from None


def number(text: str) -> float:
    """A finite number: ``48000``, ``2.5e3``, ``2.4M``, ``100 kHz``."""
    try:
        return parse_number(text, _NAME)
    except InputError as exc:
        raise _argument_error(exc) from None


_WHOLE = Param(_NAME, int)


def whole_number(text: str) -> int:
    """An integer (``0x`` prefixes and ``1k`` allowed); ranges are checked where it is used."""
    try:
        return int(text, 0)
    except ValueError:
        pass
    return _checked(_WHOLE, number(text))


def at_least(minimum: int) -> Callable[[str], int]:
    """The type of a whole number ``>= minimum``."""
    param = Param(_NAME, int, min=minimum)

    def parse(text: str) -> int:
        return _checked(param, whole_number(text))

    parse.__name__ = f"whole number >= {minimum}"
    return parse


_SECONDS = Param(_NAME, float, min=0.0, unit="s")
#: the help of an option that takes :func:`seconds`
SECONDS_FORMS = "seconds (12.5), 250 ms, m:ss or h:mm:ss"


def seconds(text: str) -> float:
    """A finite time ``>= 0`` in seconds: ``12.5``, ``250 ms``, ``1:05`` (m:ss) or
    ``0:39:04.25`` (h:mm:ss), read by :func:`~specscope.compute.timefmt.parse_time`."""
    try:
        value = parse_time(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return _checked(_SECONDS, value)


_CHANNEL = Param(_NAME, int, min=0)


def channel_list(text: str) -> list[int]:
    """Comma-separated channel numbers, e.g. ``0,1``."""
    parts = [c for c in text.split(",") if c.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("give at least one channel, e.g. 0 or 0,1")
    try:
        return [_checked(_CHANNEL, int(c)) for c in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of "
                                         "channel numbers, e.g. 0,1") from None


def hz(text: str) -> float:
    """A frequency in Hz: ``1000``, ``1e3``, ``1k``, ``2.4M``."""
    try:
        return parse_number(text, "frequency")
    except InputError as exc:
        raise _argument_error(exc) from None
