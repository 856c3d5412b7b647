"""Errors a person can act on.

Every error that reaches a user derives from :class:`SpecscopeError`; its message
is one line naming the file or parameter and what was expected.  The CLI turns
them into exit status 2 without a traceback, the GUI shows them in the status
bar or a dialog and keeps working.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from os import PathLike
from typing import Any

__all__ = ["MAX_ECHO", "MAX_LISTED", "MAX_MESSAGE", "BadOption", "Cancelled", "InputError",
           "MissingOption", "OptionError", "RecordingError", "RegistrationError", "SpecscopeError",
           "cut_echoes", "one_line", "operator_detail", "operator_error", "shown"]

#: most characters of a bad value an error message repeats
MAX_ECHO = 200
#: most characters of an error message; longer ones lose their middle
MAX_MESSAGE = 1000
#: most choices a :class:`MissingOption` message lists (its ``choices`` keep them all)
MAX_LISTED = 12


def shown(value: Any, limit: int = MAX_ECHO) -> str:
    """A bad value as an error message repeats it: its ``repr``, on one line, cut to ``limit``.

    A 10 MB table cell or a file name full of line breaks becomes at most
    ``limit`` characters ending in ``...`` with the length it had.

    Parameters
    ----------
    value : object
        The value to show; a ``repr`` that fails shows its type.
    limit : int
        The most characters returned.

    Returns
    -------
    str
        The ``repr``, whitespace runs joined when it has line breaks, cut to ``limit``.

    Examples
    --------
    >>> shown("kaiser,8")
    "'kaiser,8'"
    >>> shown("x" * 300, 40)
    "'xxxxxxxxxxxxxxxxxxx... (302 characters)"
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


#: a quoted value (as ``repr`` quotes it) or a run of text without spaces
_ECHOED = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+""")


def cut_echoes(message: str, limit: int = MAX_ECHO) -> str:
    """A message written by others (argparse's) with each value it repeats cut as
    :func:`shown` cuts it, on one line.

    Every quoted value, and every run of text without spaces, longer than ``limit``
    keeps its start and says how long it was.

    Parameters
    ----------
    message : str
        The message.
    limit : int
        The most characters kept of one value.

    Returns
    -------
    str
        The message, passed through :func:`one_line`.

    Examples
    --------
    >>> cut_echoes("argument --nfft: invalid int value: '" + "9" * 300 + "'", 30)
    "argument --nfft: invalid int value: '999999999... (302 characters)"
    """
    def cut(m: re.Match[str]) -> str:
        text = m.group()
        return _cut(text, limit) if len(text) > limit else text

    return one_line(_ECHOED.sub(cut, message))


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """A message on one line of at most ``limit`` characters (the middle cut out).

    Parameters
    ----------
    message : str
        The message.
    limit : int
        The most characters kept; a longer message loses its middle, replaced by
        the number of characters cut.

    Returns
    -------
    str
        The message, whitespace runs joined when it has line breaks.

    Examples
    --------
    >>> one_line("rec.wav:\\n  no such file")
    'rec.wav: no such file'
    """
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

    Parameters
    ----------
    *args : object
        As for :class:`Exception`; a single string argument is the message, passed
        through :func:`one_line`.
    """

    def __init__(self, *args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)


class InputError(SpecscopeError, ValueError):
    """A parameter value is out of range or of the wrong kind."""


class RecordingError(SpecscopeError, OSError):
    """A file is missing, unreadable or not a recording."""


def operator_error(cls: type[SpecscopeError], operator: str, detail: str) -> SpecscopeError:
    """``cls("operator: detail")`` carrying ``operator`` and ``detail`` as fields.

    Whoever puts the error in a context of its own (a pipeline step, a filter
    design) takes :func:`operator_detail` instead of cutting the name off the text.

    Parameters
    ----------
    cls : type
        The :class:`SpecscopeError` subclass to make.
    operator : str
        The operator's name, at the front of the message.
    detail : str
        What is wrong.

    Returns
    -------
    SpecscopeError
        An instance of ``cls`` (not raised), with ``operator`` and ``detail`` set.

    Examples
    --------
    >>> err = operator_error(InputError, "fft", "n=0 must be >= 1")
    >>> str(err), err.detail
    ('fft: n=0 must be >= 1', 'n=0 must be >= 1')
    """
    exc = cls(f"{operator}: {detail}")
    exc.operator = operator
    exc.detail = detail
    return exc


def operator_detail(exc: BaseException, operator: str) -> str:
    """What ``exc`` says without the name of ``operator`` when it is that operator's own
    error (:func:`operator_error`), else its whole text.

    Parameters
    ----------
    exc : BaseException
        The error.
    operator : str
        The operator whose name is left out.

    Returns
    -------
    str
        ``exc.detail`` for that operator's own error, else ``str(exc)``.
    """
    if getattr(exc, "operator", None) == operator and getattr(exc, "detail", None) is not None:
        return exc.detail
    return str(exc)


class Cancelled(Exception):
    """Raised inside a long job when its caller asked it to stop.

    Not a :class:`SpecscopeError`: cancellation is not a failure.
    """


class RegistrationError(SpecscopeError, ValueError):
    """A declaration (operator, parameter, reader, source) is invalid or its name is taken."""


def _path_text(path: str | PathLike[str] | None) -> str:
    return "" if path is None else f"{path}: "


def _restore(cls: type, message: str, state: dict[str, Any]) -> OptionError:
    """Rebuild a pickled :class:`OptionError` (errors of a batch task cross processes)."""
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    exc.__dict__.update(state)
    return exc


class OptionError(InputError):
    """An input error about one option (a keyword argument of the core).

    Attributes
    ----------
    option : str
        The keyword, e.g. ``"sample_rate"``, ``"dtype"``, ``"dataset"``.
    path : str or None
        The file the option is for, when there is one.
    choices : tuple of str
        Values the option may take here (dataset or variable names), or empty.
    labels : tuple of str
        One description per choice (its shape and type), for a chooser.
    """

    def __init__(self, option: str, *, path: str | PathLike[str] | None = None,
                 choices: Sequence[str] = (), labels: Sequence[str] = ()) -> None:
        self.option = option
        self.path = None if path is None else str(path)
        self.choices = tuple(str(c) for c in choices)
        self.labels = tuple(str(c) for c in labels) or self.choices
        super().__init__(self.text())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (type(self), str(self), dict(self.__dict__)))

    def text(self, flag: str | None = None, metavar: str = "") -> str:
        """The message, with the option called ``flag`` (``metavar`` its value's name).

        Without ``flag`` the option is named as a keyword argument (``sample_rate=``).
        """
        return one_line(self._render(flag, metavar))

    def _render(self, flag: str | None, metavar: str) -> str:
        raise NotImplementedError


class MissingOption(OptionError):
    """A needed option was not given (a raw file's sample rate, which dataset to open...).

    The message reads ``PATH: PROBLEM; give sample_rate= (e.g. 2.4M), one of: ...``
    (at most :data:`MAX_LISTED` of the choices).

    Parameters
    ----------
    option : str
        The keyword that is missing.
    problem : str
        Why it is needed ("raw samples carry no sample rate").
    path : path, optional
        The file.
    choices, labels : sequence of str, optional
        The values to choose from and a description of each.
    example : str, optional
        A value as it would be given.
    also : str, optional
        Another way to give it (``rec.h5:NAME``).
    action : str, optional
        What the person is asked to do with the option ("give", "pick one with").
    stated : object, optional
        What the file says instead, when it says something that cannot be used (a
        negative rate attribute); None when it says nothing.
    """

    def __init__(self, option: str, problem: str, *, path: str | PathLike[str] | None = None,
                 choices: Sequence[str] = (), labels: Sequence[str] = (), example: str = "",
                 also: str = "", action: str = "give", stated: Any = None) -> None:
        self.problem, self.example, self.also, self.action = problem, example, also, action
        self.stated = stated
        super().__init__(option, path=path, choices=choices, labels=labels)

    def _render(self, flag: str | None, metavar: str) -> str:
        name = f"{self.option}=" if flag is None else f"{flag} {metavar}".rstrip()
        text = f"{_path_text(self.path)}{self.problem}; {self.action} {name}"
        if self.example:
            text += f" (e.g. {self.example})"
        if self.also:
            text += f" or {self.also}"
        if self.labels:
            more = len(self.labels) - MAX_LISTED
            text += f", one of: {', '.join(self.labels[:MAX_LISTED])}"
            text += f" and {more} more" if more > 0 else ""
        return text


class BadOption(OptionError):
    """An option's value cannot be used (a folder that is not there, a scheduler out of reach).

    The message reads ``dask='tcp://host:8786': PROBLEM (EXPECTED was expected)``, or
    with ``label`` (a name for what the value is, "plugin folder") ``plugin folder
    /x: ...``.

    Attributes
    ----------
    value : object
        The value given.
    problem : str
        What is wrong with it.
    expected : str
        What was expected instead, or "".
    """

    def __init__(self, option: str, value: Any, problem: str, *, expected: str = "",
                 label: str = "", path: str | PathLike[str] | None = None) -> None:
        self.value, self.problem, self.expected, self.label = value, problem, expected, label
        super().__init__(option, path=path)

    def _render(self, flag: str | None, metavar: str) -> str:
        if flag is not None:
            subject = f"{flag} {_cut(' '.join(str(self.value).split()), MAX_ECHO)}"
        elif self.label:
            subject = f"{self.label} {_cut(' '.join(str(self.value).split()), MAX_ECHO)}"
        else:
            subject = f"{self.option}={shown(self.value)}"
        text = f"{_path_text(self.path)}{subject}: {self.problem}"
        if self.expected:
            text += f" ({self.expected} was expected)"
        return text
