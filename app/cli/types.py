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

from specscope.compute.errors import InputError, shown
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
    """A finite number: ``48000``, ``2.5e3``, ``2.4M``, ``100 kHz``.

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    float
        The number, SI prefixes and units applied.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not a finite number.

    Examples
    --------
    >>> number("2.4M")
    2400000.0
    """
    try:
        return parse_number(text, _NAME)
    except InputError as exc:
        raise _argument_error(exc) from None


_WHOLE = Param(_NAME, int)


def whole_number(text: str) -> int:
    """An integer (``0x`` prefixes and ``1k`` allowed); ranges are checked where it is used.

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    int
        The whole number.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not a number or not a whole one.

    Examples
    --------
    >>> whole_number("0x10"), whole_number("1k")
    (16, 1000)
    """
    try:
        return int(text, 0)
    except ValueError:
        pass
    return _checked(_WHOLE, number(text))


def at_least(minimum: int) -> Callable[[str], int]:
    """The type of a whole number ``>= minimum``.

    Parameters
    ----------
    minimum : int
        The smallest value accepted.

    Returns
    -------
    callable
        An argparse ``type`` that reads text with :func:`whole_number` and raises
        :class:`argparse.ArgumentTypeError` below ``minimum``.

    Examples
    --------
    >>> at_least(1)("4")
    4
    """
    param = Param(_NAME, int, min=minimum)

    def parse(text: str) -> int:
        return _checked(param, whole_number(text))

    parse.__name__ = f"whole number >= {minimum}"
    return parse


_SECONDS = Param(_NAME, float, min=0.0, unit="s")
#: the help of an option that takes :func:`seconds`
SECONDS_FORMS = "seconds (12.5), 250 ms, m:ss or h:mm:ss"


def seconds(text: str) -> float:
    """A finite time ``>= 0`` in seconds.

    Accepts ``12.5``, ``250 ms``, ``1:05`` (m:ss) or ``0:39:04.25`` (h:mm:ss), read by
    :func:`~specscope.compute.timefmt.parse_time`.

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    float
        The time in seconds.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not a time or is negative.

    Examples
    --------
    >>> seconds("250 ms"), seconds("1:05")
    (0.25, 65.0)
    """
    try:
        value = parse_time(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return _checked(_SECONDS, value)


_CHANNEL = Param(_NAME, int, min=0)


def channel_list(text: str) -> list[int]:
    """Comma-separated channel numbers, e.g. ``0,1``.

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    list of int
        The channel numbers (each ``>= 0``), in the order given.

    Raises
    ------
    argparse.ArgumentTypeError
        When no channel is given, a part is not an integer, or a number is negative.

    Examples
    --------
    >>> channel_list("0,2")
    [0, 2]
    """
    parts = [c for c in text.split(",") if c.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("give at least one channel, e.g. 0 or 0,1")
    try:
        return [_checked(_CHANNEL, int(c)) for c in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a comma-separated list of "
                                         "channel numbers, e.g. 0,1") from None


def hz(text: str) -> float:
    """A frequency in Hz: ``1000``, ``1e3``, ``1k``, ``2.4M``.

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    float
        The frequency in Hz.

    Raises
    ------
    argparse.ArgumentTypeError
        When ``text`` is not a finite number.

    Examples
    --------
    >>> hz("1k")
    1000.0
    """
    try:
        return parse_number(text, "frequency")
    except InputError as exc:
        raise _argument_error(exc) from None
