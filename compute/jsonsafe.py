"""The one JSON reader for files from outside: limits on size, depth and numbers.

Pipeline files, filter specs, SigMF metadata and every other JSON document a
person hands to specscope are read by :func:`loads` or :func:`load_file`.  They
refuse, in one line naming the file, what :func:`json.loads` would turn into a
traceback or a memory bomb:

- a file larger than ``max_bytes`` (read no further than that);
- text that is not UTF-8 (a BOM is allowed);
- nesting deeper than ``max_depth`` (``json`` recurses, and 200,000 brackets
  end in ``RecursionError``);
- a number written with more than ``max_digits`` characters (``1`` followed by
  400 zeros overflows every float conversion; Python refuses integers over 4300
  digits with ``ValueError``), or one beyond the float range (``1e400``);
- ``NaN``, ``Infinity`` and ``-Infinity``, which JSON does not allow;
- optionally a key given twice in one object.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, SpecscopeError, shown
from .files import note_inputs

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_JSON_BYTES", "load_file", "loads"]

#: deepest nesting of arrays and objects accepted
MAX_DEPTH = 100
#: most characters in one number (sign, digits, point and exponent)
MAX_DIGITS = 100
#: largest JSON document read by default
MAX_JSON_BYTES = 64 << 20

# an unclosed string runs to the end of the text (one match, so the scan stays linear)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_OPEN = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSE = np.frombuffer(b"]}", dtype=np.uint8)


def _depth(text: str) -> int:
    """Deepest bracket nesting outside strings (linear, no recursion)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot be deeper than the limit
    bare = _STRING.sub('""', text).encode("utf-8", errors="replace")
    codes = np.frombuffer(bare, dtype=np.uint8)
    deepest = level = 0
    for at in range(0, codes.size, 1 << 20):
        part = codes[at:at + (1 << 20)]
        steps = np.isin(part, _OPEN).astype(np.int32) - np.isin(part, _CLOSE)
        run = np.cumsum(steps) + level
        deepest = max(deepest, int(run.max()))
        level = int(run[-1])
    return deepest


def loads(text: str | bytes, where: str, *, what: str = "JSON document",
          max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_DEPTH,
          max_digits: int = MAX_DIGITS, unique_keys: bool = False,
          error: type[SpecscopeError] = InputError,
          syntax_error: type[SpecscopeError] | None = None) -> Any:
    """Parse a JSON document within limits.

    Parameters
    ----------
    text : str or bytes
        The document; bytes must be UTF-8 (with or without a BOM).
    where : str
        What the error messages start with (a file name).
    what : str
        What the document is, for the messages (``"pipeline file"``).
    max_bytes, max_depth, max_digits : int
        Limits: document size, nesting depth, characters of one number.
    unique_keys : bool
        Refuse an object that gives a key twice.
    error : type
        The :class:`~specscope.compute.errors.SpecscopeError` raised.
    syntax_error : type, optional
        The error raised instead when the text is no JSON at all (invalid syntax), so
        that a caller can take such text for something else; by default ``error``.

    Returns
    -------
    object
        The parsed document: dicts, lists, str, int, float, bool and None.

    Raises
    ------
    SpecscopeError
        ``error``, one line naming ``where`` and the problem.

    Examples
    --------
    >>> loads('{"nfft": 1024, "window": "hann"}', "steps.json")
    {'nfft': 1024, 'window': 'hann'}
    >>> loads('[NaN]', "steps.json")
    Traceback (most recent call last):
    ...
    specscope.compute.errors.InputError: steps.json: NaN is not a number JSON allows
    """
    size = len(text)
    if size > max_bytes:
        raise error(f"{where}: {size} bytes is too large for a {what} (at most {max_bytes})")
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise error(f"{where}: not a {what} (binary content: byte 0x{raw[exc.start]:02x} "
                        f"at offset {exc.start} is not UTF-8 text)") from None
    elif text.startswith("\ufeff"):
        text = text[1:]
    depth = _depth(text)
    if depth > max_depth:
        raise error(f"{where}: not a {what}: nested {depth} levels deep (at most {max_depth})")

    def number(s: str, kind: str) -> None:
        if len(s) > max_digits:
            raise error(f"{where}: a number of {len(s)} characters ({shown(s, 40)}) is too "
                        f"long for a {what} (at most {max_digits})")

    def parse_int(s: str) -> int:
        number(s, "int")
        return int(s)

    def parse_float(s: str) -> float:
        number(s, "float")
        x = float(s)
        if not math.isfinite(x):
            raise error(f"{where}: the number {shown(s, 40)} is beyond the range of "
                        "a float (about ±1.8e308)")
        return x

    def constant(c: str) -> Any:
        raise error(f"{where}: {c} is not a number JSON allows")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if unique_keys and k in out:
                raise error(f"{where}: field {shown(k)} appears twice")
            out[k] = v
        return out

    try:
        return json.loads(text, parse_int=parse_int, parse_float=parse_float,
                          parse_constant=constant, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise (syntax_error or error)(f"{where}: not a {what}: invalid JSON at line "
                                      f"{exc.lineno}, column {exc.colno} ({exc.msg})") from None
    except RecursionError:  # a deeper stack than the depth check allows for
        raise error(f"{where}: not a {what}: nested too deep") from None


def load_file(path: str | os.PathLike[str], *, what: str = "JSON file",
              max_bytes: int = MAX_JSON_BYTES, error: type[SpecscopeError] = InputError,
              **limits: Any) -> Any:
    """Read and parse a JSON file within limits (see :func:`loads`).

    Refuses a folder, a missing or unreadable file and one over ``max_bytes``
    before reading it, each in one line naming the file.

    Parameters
    ----------
    path : path-like or str
        The file (or an object standing for one, such as a URL's path).
    what : str
        What the document is, for the messages (``"pipeline file"``).
    max_bytes : int
        The largest file read.
    error : type
        The :class:`~specscope.compute.errors.SpecscopeError` raised.
    **limits
        ``max_depth``, ``max_digits``, ``unique_keys`` and ``syntax_error`` of
        :func:`loads`.

    Returns
    -------
    object
        The parsed document.

    Raises
    ------
    SpecscopeError
        ``error``, one line naming the file and the problem.
    """
    # a Path, or an object standing for one (a URL read through fsspec)
    p: Any = Path(path) if isinstance(path, (str, os.PathLike)) else path
    try:
        if p.is_dir():
            raise error(f"{p}: is a folder, not a {what}")
        st = p.stat()
        if isinstance(p, Path) and not stat.S_ISREG(st.st_mode):  # a FIFO blocks, /dev/zero
            raise error(f"{p}: is not a regular file (a device, FIFO or socket), not a {what}")
        size = st.st_size
        if size > max_bytes:
            raise error(f"{p}: {size} bytes is too large for a {what} (at most {max_bytes})")
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
        if isinstance(p, Path):
            note_inputs(p)  # read by the command: no writer of it replaces this file
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or type(exc).__name__})") from None
    return loads(raw, str(p), what=what, max_bytes=max_bytes, error=error, **limits)
