"""argparse value types shared by the CLI modules: one message per kind of mistake."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def number(text: str) -> float:
    """A float, e.g. ``48000`` or ``2.5e3``."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def whole_number(text: str) -> int:
    """An int (``0x`` prefixes allowed); ranges are checked where the value is used."""
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def at_least(minimum: int) -> Callable[[str], int]:
    """A whole number ``>= minimum``."""

    def parse(text: str) -> int:
        value = whole_number(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} must be >= {minimum}")
        return value

    parse.__name__ = f"whole number >= {minimum}"
    return parse
