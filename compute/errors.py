"""Errors a person can act on.

Every error that reaches a user derives from :class:`SpecscopeError`; its message
is one line naming the file or parameter and what was expected.  The CLI turns
them into exit status 2 without a traceback, the GUI shows them in the status
bar or a dialog and keeps working.
"""

from __future__ import annotations


class SpecscopeError(Exception):
    """Base class of errors caused by input: files, parameters, plugins."""


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
