"""What crosses between a batch run and its workers: a task's failure as one line."""

from __future__ import annotations

from ..errors import SpecscopeError

__all__ = ["one_line"]


def one_line(exc: BaseException) -> str:
    """A task's failure on one line: a specscope error's message, else ``Type: message``.

    Parameters
    ----------
    exc : BaseException
        What the task raised.

    Returns
    -------
    str
        The text, whitespace folded; the type's name when there is no text.

    Examples
    --------
    >>> one_line(ValueError("bad\\n  value"))
    'ValueError: bad value'
    """
    text = str(exc) if isinstance(exc, SpecscopeError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split()) or type(exc).__name__
