"""Parameters: the one validator.

:class:`Param` declares a parameter (type, default, bounds, choices, unit, help)
and :meth:`Param.validate` coerces a value to it or raises an :class:`InputError`
that names the parameter.  Operators, pipeline steps, filter specs, live sources
and readers declare their parameters with it, and forms and listings are built
from :meth:`Param.to_dict`.  :func:`parse_number` reads numbers written by people
(``"2.4M"``, ``"100 kHz"``) and :func:`json_types` turns parameter values into
plain JSON types.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import backend as _backend
from .errors import InputError, RegistrationError, operator_error, shown

__all__ = ["FRAME_PARAMS", "MAX_FRAME", "MAX_HOP", "REQUIRED", "Param", "check_bytes",
           "check_frame", "json_types", "memory_budget", "parse_count", "parse_number",
           "type_name"]

#: most samples in one frame, FFT or filter: the one cap of nfft, nperseg, mfft,
#: frame_length, numtaps on every entry point (CLI, API, pipelines, GUI)
MAX_FRAME = 1 << 22
#: most samples between frame starts (hop); a bound on sizes, not a taste
MAX_HOP = 1 << 30
#: parameter names that are a frame or filter length: capped at :data:`MAX_FRAME`
#: unless their :class:`Param` gives a smaller ``max``
FRAME_PARAMS = frozenset({"nfft", "nperseg", "mfft", "frame_length", "numtaps", "taps",
                          "win_length", "n_fft"})


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: default of a parameter that has to be given
REQUIRED: Any = _Required()

_TYPE_NAMES: dict[Any, str] = {int: "int", float: "float", bool: "bool", str: "str",
                               complex: "complex"}
_SPECIAL_TYPES = ("array", "window", "any")


def type_name(t: Any) -> str:
    """The readable name of a parameter type (``"int | str"``).

    Parameters
    ----------
    t : type, str or tuple
        A :class:`Param` type: a Python type, ``"array"``, ``"window"``, ``"any"``,
        or a tuple of these.

    Returns
    -------
    str
        The name; a tuple's names joined by ``" | "``.

    Examples
    --------
    >>> type_name((int, str))
    'int | str'
    >>> type_name("window")
    'window'
    """
    if isinstance(t, tuple):
        return " | ".join(type_name(u) for u in t)
    if t in _TYPE_NAMES:
        return _TYPE_NAMES[t]
    if isinstance(t, str):
        return t
    return getattr(t, "__name__", str(t))


@dataclass(frozen=True)
class Param:
    """One parameter of an operator's schema.

    Parameters
    ----------
    name : str
        Keyword the implementation receives.
    type : type or str or tuple
        ``int``, ``float``, ``bool``, ``str``, ``complex``; ``"array"`` (array
        like: coefficients, a kernel; moved to the backend with the input),
        ``"window"`` (a window name or tuple, as ``scipy.signal.get_window``
        takes), ``"any"``; or a tuple of these, any of which is accepted.
    default : object
        Value when the caller gives none; :data:`REQUIRED` when it has to be
        given.  A default of ``None`` also accepts ``None``.
    min, max : float, optional
        Inclusive bounds for numbers (element-wise for arrays).
    choices : sequence, optional
        Allowed values.
    unit : str, optional
        Physical unit, for forms and listings (``"Hz"``, ``"samples"``).
    help : str
        One line for forms and ``specscope ops``.
    python_only : bool
        A keyword only a call from Python can give (a buffer such as ``out=``, which
        no form, file or command line can hold): left out of the operator's schema
        (``Operator.to_dict``), so of generated forms and listings, and refused in
        pipeline steps.
    """

    name: str
    type: Any
    default: Any = REQUIRED
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    unit: str | None = None
    help: str = ""
    python_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise RegistrationError(f"Param name {self.name!r} must be a Python identifier")
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        for t in types:
            if t not in _TYPE_NAMES and t not in _SPECIAL_TYPES:
                raise RegistrationError(
                    f"Param {self.name!r}: type {t!r} must be one of int, float, bool, str, "
                    f"complex, {', '.join(repr(s) for s in _SPECIAL_TYPES)}")
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))
        if self.name in FRAME_PARAMS and int in types and (self.max is None
                                                           or self.max > MAX_FRAME):
            object.__setattr__(self, "max", MAX_FRAME)
        elif self.name == "hop" and int in types and self.max is None:
            object.__setattr__(self, "max", MAX_HOP)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    # -- validation ---------------------------------------------------------------

    def _range_text(self) -> str:
        if self.min is not None and self.max is not None:
            return f" in [{self.min}, {self.max}]"
        if self.min is not None:
            return f" >= {self.min}"
        if self.max is not None:
            return f" <= {self.max}"
        return ""

    def _fail(self, op: str, value: Any, expected: str) -> InputError:
        detail = f"{self.name}={shown(value, 60)} must be {expected}"
        return operator_error(InputError, op, detail) if op else InputError(detail)

    def _check_range(self, op: str, value: Any, shown: Any, what: str) -> None:
        lo_bad = self.min is not None and np.any(np.asarray(value) < self.min)
        hi_bad = self.max is not None and np.any(np.asarray(value) > self.max)
        if lo_bad or hi_bad or (np.size(value) and np.any(np.isnan(np.asarray(value)))):
            raise self._fail(op, shown, what + self._range_text())

    def _coerce_one(self, op: str, t: Any, value: Any) -> Any:
        """Coerce ``value`` to type ``t`` or raise TypeError (wrong kind)."""
        if t is bool:
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise TypeError
        if t is int:
            if isinstance(value, (bool, np.bool_)):
                raise TypeError
            if isinstance(value, numbers.Integral):
                return int(value)
            if isinstance(value, numbers.Real) and float(value).is_integer():
                return int(value)
            raise TypeError
        if t is float:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                raise TypeError
            return float(value)
        if t is complex:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Number):
                raise TypeError
            return complex(value)
        if t is str:
            if isinstance(value, str):
                return value
            raise TypeError
        if t == "array":
            if _backend.is_device_array(value):
                return value
            if isinstance(value, (str, bytes, dict)) or value is None:
                raise TypeError
            arr = np.asarray(value)
            if arr.dtype.kind not in "biufc":
                raise TypeError
            return arr
        if t == "window":
            if isinstance(value, str) or (isinstance(value, tuple) and value
                                          and isinstance(value[0], str)):
                return value
            raise TypeError
        return value  # "any"

    def validate(self, value: Any, op: str = "") -> Any:
        """The value coerced to the schema, or :class:`InputError` naming the parameter."""
        if value is None and self.default is None:
            return None
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        coerced: Any = REQUIRED
        for t in types:
            try:
                coerced = self._coerce_one(op, t, value)
                break
            except (TypeError, ValueError):
                continue
        what = {"int": "an integer", "float": "a number", "bool": "True or False",
                "str": "a string", "complex": "a number", "array": "an array of numbers",
                "window": "a window name or tuple"}
        expected = " or ".join(what.get(type_name(t), type_name(t)) for t in types)
        if self.default is None:
            expected += " or None"
        if coerced is REQUIRED:
            if self.choices is not None:
                raise self._fail(op, value, "one of " + ", ".join(map(str, self.choices)))
            raise self._fail(op, value, expected + self._range_text())
        if self.choices is not None and coerced not in self.choices:
            raise self._fail(op, value, "one of " + ", ".join(map(str, self.choices)))
        if (self.min is not None or self.max is not None) and not isinstance(coerced, str):
            if _backend.is_device_array(coerced):
                self._check_range(op, _backend.to_host(coerced), value, expected)
            elif isinstance(coerced, (numbers.Real, np.ndarray)):
                self._check_range(op, coerced, value, expected)
        if isinstance(coerced, float) and not math.isfinite(coerced) and (
                self.min is not None or self.max is not None):
            raise self._fail(op, value, "finite" + self._range_text())
        return coerced

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description."""
        return {"name": self.name, "type": type_name(self.type),
                "default": json_types(self.default), "required": self.required,
                "min": self.min, "max": self.max,
                "choices": None if self.choices is None else [json_types(c) for c in self.choices],
                "unit": self.unit, "help": self.help}


def json_types(v: Any) -> Any:
    """Plain JSON types for a parameter value.

    Arrays and tuples become lists, numpy scalars Python numbers, complex numbers
    ``[re, im]``; a non-finite float becomes its text (``"nan"``, ``"inf"``), which
    JSON cannot hold as a number; :data:`REQUIRED` becomes None.

    Parameters
    ----------
    v : object
        A parameter value (dicts and sequences are converted item by item).

    Returns
    -------
    object
        The value in plain JSON types; a value of another kind is returned as it is.

    Examples
    --------
    >>> import numpy as np
    >>> json_types({"gain": np.float32(1.5), "band": (100, 200), "top": float("inf")})
    {'gain': 1.5, 'band': [100, 200], 'top': 'inf'}
    >>> json_types(1 + 2j)
    [1.0, 2.0]
    """
    if v is REQUIRED or v is None:
        return None
    if isinstance(v, dict):
        return {str(k): json_types(u) for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_types(u) for u in v]
    if isinstance(v, np.ndarray):
        return json_types(v.tolist())
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        return f if math.isfinite(f) else str(f)
    if isinstance(v, numbers.Complex):
        return [float(v.real), float(v.imag)]
    return v


# -- numbers from text ---------------------------------------------------------------

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
#: longest text read as a number (digits, point, exponent, unit and spaces)
_MAX_NUMBER_TEXT = 100
# unambiguous alternatives: the match is linear in the length of the text
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([kKMG]?)"
                     r"\s*(?:Hz|hz|sps|S/s)?\s*$")


def parse_number(value: Any, name: str, *, positive: bool = False,
                 where: str = "") -> float:
    """A finite float from a number or a string like ``"2.4M"`` / ``"100 kHz"``.

    Strings may carry an SI prefix (``k``, ``K``, ``M``, ``G``) and a unit of
    ``Hz``, ``sps`` or ``S/s``.

    Parameters
    ----------
    value : object
        A number or a string of at most 100 characters.
    name : str
        The option, named in errors.
    positive : bool
        Refuse values <= 0.
    where : str
        Put in front of errors (a file name).

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        Not a number, not finite, beyond the float range, or not > 0 when
        ``positive``; naming the option (and ``where``).

    Examples
    --------
    >>> parse_number("2.4M", "sample_rate")
    2400000.0
    >>> parse_number("100 kHz", "f0")
    100000.0
    """
    prefix = f"{where}: " if where else ""
    if isinstance(value, str):
        m = _NUMBER.match(value) if len(value) <= _MAX_NUMBER_TEXT else None
        if m is None:
            raise InputError(f"{prefix}{name}={shown(value)} is not a number "
                             "(expected e.g. 2400000, 2.4e6 or 2.4M)")
        x = float(m.group(1)) * _SI[m.group(2)]
    elif isinstance(value, bool):
        raise InputError(f"{prefix}{name}={shown(value)} is not a number")
    else:
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{prefix}{name}={shown(value)} is not a number") from None
        except OverflowError:  # an int beyond the float range
            raise InputError(f"{prefix}{name}={shown(value)} is beyond the range of a "
                             "float (about 1.8e308)") from None
    if not math.isfinite(x):
        raise InputError(f"{prefix}{name}={shown(value)} must be finite")
    if positive and x <= 0:
        raise InputError(f"{prefix}{name}={shown(value)} must be > 0")
    return x


def parse_count(value: Any, name: str, *, minimum: int = 0, where: str = "") -> int:
    """A whole number >= ``minimum`` (ints or integer strings).

    Parameters
    ----------
    value : object
        An int, a float with no fractional part, or a string in Python's integer
        syntax (``"16"``, ``"0x10"``).
    name : str
        The option, named in errors.
    minimum : int
        The smallest value accepted.
    where : str
        Put in front of errors (a file name).

    Returns
    -------
    int
        The value.

    Raises
    ------
    InputError
        Not a whole number, or below ``minimum``.

    Examples
    --------
    >>> parse_count("0x10", "channels"), parse_count(8.0, "channels")
    (16, 8)
    """
    prefix = f"{where}: " if where else ""
    x: int | None = None
    if isinstance(value, str):
        try:
            x = int(value.strip(), 0)
        except ValueError:
            x = None
    elif (isinstance(value, (int, np.integer)) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()):
        x = int(value)
    if x is None:
        raise InputError(f"{prefix}{name}={shown(value)} must be a whole number")
    if x < minimum:
        raise InputError(f"{prefix}{name}={shown(value)} must be >= {minimum}")
    return x


# -- sizes ----------------------------------------------------------------------------


def check_frame(value: Any, name: str = "nfft", *, minimum: int = 1,
                maximum: int = MAX_FRAME, where: str = "") -> int:
    """A frame or filter length as an int in ``[minimum, maximum]``, checked before any allocation.

    The one rule of sizes: ``nfft``, ``nperseg``, ``numtaps`` ... are at most
    :data:`MAX_FRAME` samples (``hop`` at most :data:`MAX_HOP`) wherever they come from.

    Parameters
    ----------
    value : object
        The length in samples; it must be an integer (bools refused).
    name : str
        The parameter, named in errors.
    minimum, maximum : int
        The bounds, inclusive.
    where : str
        Put in front of errors (a file name).

    Returns
    -------
    int
        The length.

    Raises
    ------
    InputError
        Not an integer, below ``minimum`` or above ``maximum``.
    """
    prefix = f"{where}: " if where else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{prefix}{name}={shown(value)} must be an integer >= {minimum}")
    if value < minimum:
        raise InputError(f"{prefix}{name}={shown(value)} must be an integer >= {minimum}")
    if value > maximum:
        raise InputError(f"{prefix}{name}={int(value)} is too large (at most {maximum})")
    return int(value)


def memory_budget() -> int:
    """Bytes one array may take: half the memory, less under an address-space limit.

    ``SPECSCOPE_MEMORY_BUDGET`` (bytes; ``512M``, ``2G``) sets it.

    Returns
    -------
    int
        The environment's value when it is a positive number; else half the
        physical memory, capped at a quarter of a soft address-space limit
        (``RLIMIT_AS``).
    """
    env = os.environ.get("SPECSCOPE_MEMORY_BUDGET")
    if env:
        try:
            return int(parse_number(env, "SPECSCOPE_MEMORY_BUDGET", positive=True))
        except InputError:
            pass
    budget = 1 << 62
    try:
        budget = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            budget = min(budget, soft // 4)
    except (ImportError, ValueError, OSError):
        pass
    return int(budget)


def _size_text(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} bytes"


def check_bytes(n_bytes: float, what: str, where: str = "") -> None:
    """Refuse, before allocating, ``what`` needing more than :func:`memory_budget` bytes.

    Parameters
    ----------
    n_bytes : float
        The bytes the allocation would take.
    what : str
        What would be allocated, for the message (``"a spectrogram of 3 channels"``).
    where : str
        Put in front of the message (a file name).

    Raises
    ------
    InputError
        ``n_bytes`` exceeds the budget; the message gives both sizes and names
        ``SPECSCOPE_MEMORY_BUDGET``.
    """
    budget = memory_budget()
    if n_bytes > budget:
        prefix = f"{where}: " if where else ""
        raise InputError(f"{prefix}{what} would take {_size_text(n_bytes)} of memory, more "
                         f"than the budget of {_size_text(budget)} "
                         "(SPECSCOPE_MEMORY_BUDGET sets it)")
