"""Errors a person can act on.

Every error that reaches a user derives from :class:`SpecscopeError`; its message
is one line naming the file or parameter and what was expected.  The CLI turns
them into exit status 2 without a traceback, the GUI shows them in the status
bar or a dialog and keeps working.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_ECHO", "MAX_MESSAGE", "Cancelled", "InputError", "RecordingError",
           "RegistrationError", "SpecscopeError", "one_line", "shown"]

#: most characters of a bad value an error message repeats
MAX_ECHO = 200
#: most characters of an error message; longer ones lose their middle
MAX_MESSAGE = 1000


def shown(value: Any, limit: int = MAX_ECHO) -> str:
    """A bad value as an error message repeats it: its ``repr``, on one line, cut to ``limit``.

    A 10 MB table cell or a file name full of line breaks becomes at most
    ``limit`` characters ending in ``...`` with the length it had.
    """
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails is shown by its type
        text = f"<{type(value).__name__}>"
    return _cut(" ".join(text.split()) if "\n" in text or "\r" in text else text, limit)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    tail = f"... ({len(text)} characters)"
    return text[:max(limit - len(tail), 1)] + tail


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """A message on one line of at most ``limit`` characters (the middle cut out)."""
    text = " ".join(message.split()) if ("\n" in message or "\r" in message) else message
    if len(text) <= limit:
        return text
    keep = limit - 40
    head, tail = text[:keep * 2 // 3], text[-(keep - keep * 2 // 3):]
    return f"{head} ...({len(text) - len(head) - len(tail)} characters cut)... {tail}"


class SpecscopeError(Exception):
    """Base class of errors caused by input: files, parameters, plugins.

    The message is kept to one line of at most :data:`MAX_MESSAGE` characters,
    whatever the values it repeats.
    """

    def __init__(self, *args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)


class InputError(SpecscopeError, ValueError):
    """A parameter value is out of range or of the wrong kind."""


class RecordingError(SpecscopeError, OSError):
    """A file is missing, unreadable or not a recording."""


class Cancelled(Exception):
    """Raised inside a long job when its caller asked it to stop.

    Not a :class:`SpecscopeError`: cancellation is not a failure.
    """


class RegistrationError(SpecscopeError, ValueError):
    """A declaration (operator, parameter, reader, source) is invalid or its name is taken."""
