"""What crosses between a batch run and its workers: a task, and its result or failure.

A :class:`Task` names its input and carries the spec its task function reads; it
is frozen and pickles.  :func:`execute` runs a task function on it in a worker
and gives a :class:`TaskResult` (the function's value) or a :class:`TaskFailure`
holding the error itself: a specscope error comes back as the same type with the
same fields, so whoever receives it decides by its type, never by its text.
"""

from __future__ import annotations

import pickle
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import Cancelled, RecordingError, SpecscopeError

__all__ = ["Task", "TaskCrashed", "TaskFailure", "TaskFunction", "TaskLost", "TaskOutcome",
           "TaskResult", "execute", "one_line", "portable", "renamed"]


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


class TaskLost(RecordingError):
    """A task that never finished: its worker died, the scheduler went away, or the
    cluster cancelled it.

    Attributes
    ----------
    reason : {"worker", "scheduler", "cancelled"}
        What ended it.
    """

    def __init__(self, message: str, reason: Literal["worker", "scheduler", "cancelled"]
                 ) -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.reason))


class TaskCrashed(RecordingError):
    """An error of a type that cannot cross back from a worker, kept as its type's name
    and its text.

    Attributes
    ----------
    type_name : str
        The qualified name of the error's type.
    """

    def __init__(self, message: str, type_name: str) -> None:
        super().__init__(message)
        self.type_name = type_name

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.type_name))


def portable(exc: BaseException) -> BaseException:
    """``exc`` itself when it pickles back as the same type with the same fields, else a
    :class:`TaskCrashed` with its type's name and text.

    Parameters
    ----------
    exc : BaseException
        An error raised in a task.

    Returns
    -------
    BaseException
        An error that crosses processes.
    """
    try:
        back = pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - anything that does not pickle is replaced
        back = None
    if type(back) is type(exc) and str(back) == str(exc) and \
            getattr(back, "__dict__", {}).keys() == getattr(exc, "__dict__", {}).keys():
        return exc
    return TaskCrashed(one_line(exc), f"{type(exc).__module__}.{type(exc).__qualname__}")


def renamed(exc: BaseException, names: dict[str, str]) -> BaseException:
    """``exc`` itself (same type, same fields) with the files its message names as the
    person knows them: each key of ``names`` (a worker's or a temporary path) written as
    its value.

    Parameters
    ----------
    exc : BaseException
        The error; changed in place when its message is its one argument.
    names : dict
        Path as the task saw it -> path as the person gave it.

    Returns
    -------
    BaseException
        ``exc``.
    """
    if len(exc.args) == 1 and isinstance(exc.args[0], str):
        text = exc.args[0]
        for old, new in names.items():
            if old:
                text = text.replace(old, new)
        exc.args = (text,)
    return exc


@dataclass(frozen=True)
class Task:
    """One unit of a batch run: an input, or a part of one.

    Parameters
    ----------
    input : str
        The input (path or URL, as given) whose result this task makes or helps make.
    spec : dict
        What the task function reads: plain values that pickle.
    part : int or None
        The part's index when the input is split into parts; None for a whole input.
    """

    input: str
    spec: dict[str, Any] = field(compare=False)
    part: int | None = None


@dataclass(frozen=True)
class TaskResult:
    """A task that finished: the task function's value.

    Parameters
    ----------
    value : dict
        What the task function returned.
    seconds : float
        Its compute time.
    worker : str or None
        Where it ran (a Dask worker's name, ``pid N@host``), None when not known.
    reused : bool
        Taken from a stopped run's finished work, not computed now.
    """

    value: dict[str, Any]
    seconds: float = 0.0
    worker: str | None = None
    reused: bool = False
    ok: Literal[True] = True


@dataclass(frozen=True)
class TaskFailure:
    """A task that failed: the error it raised, as its own type.

    Parameters
    ----------
    error : BaseException
        The error (:func:`portable`): a :class:`~specscope.compute.errors.Cancelled`
        when the run stopped it, a :class:`TaskLost` when it never finished.
    seconds : float
        Time spent before it failed.
    worker : str or None
        Where it ran, when known.
    traceback : str or None
        The worker's traceback of an error that is not a specscope error (a defect).
    """

    error: BaseException
    seconds: float = 0.0
    worker: str | None = None
    traceback: str | None = None
    ok: Literal[False] = False

    @property
    def message(self) -> str:
        """The error on one line ("cancelled" when the run stopped it)."""
        return "cancelled" if isinstance(self.error, Cancelled) else one_line(self.error)

    @property
    def cancelled(self) -> bool:
        """Whether the run stopped the task (it did not fail by itself)."""
        return isinstance(self.error, Cancelled) or (
            isinstance(self.error, TaskLost) and self.error.reason == "cancelled")


TaskOutcome = TaskResult | TaskFailure
TaskFunction = Callable[[dict[str, Any]], dict[str, Any]]


def execute(function: TaskFunction, task: Task,
            worker: Callable[[], str] | None = None) -> TaskOutcome:
    """Run ``function(task.spec)``: its value as a :class:`TaskResult`, or what it raised
    as a :class:`TaskFailure`.

    Parameters
    ----------
    function : callable
        A module-level task function (it pickles to workers).
    task : Task
        The task.
    worker : callable, optional
        ``worker() -> str``, this worker's name.

    Returns
    -------
    TaskResult or TaskFailure
    """
    t0 = time.perf_counter()
    where = worker() if worker is not None else None
    try:
        value = function(task.spec)
    except Exception as exc:  # noqa: BLE001 - a task's failure is its input's, the run goes on
        tb = None if isinstance(exc, (SpecscopeError, Cancelled)) else traceback.format_exc()
        return TaskFailure(portable(exc), time.perf_counter() - t0, where, tb)
    return TaskResult(value, time.perf_counter() - t0, where)
