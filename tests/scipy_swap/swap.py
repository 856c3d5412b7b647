"""scipy.signal names swapped for the specscope operators of the same name.

:func:`swapped` builds, for every operator whose declared reference is
``scipy.signal.<name>`` (or ``scipy.signal.windows.<name>``) and whose name is
that function's name, a stand-in that binds the arguments exactly as scipy's
own signature does and calls ``specscope.compute.call(name, x, backend="numpy",
fs=fs, **params)``: the input array is the first of scipy's parameters that
the operator does not declare, ``fs`` goes to the call's sample rate, the rest
go by name.  Every call is recorded in :data:`CALLS` (cleared per test by the
plugin), with the exception it raised, if any.

:func:`patch_namespace` replaces, in a test module's globals (or a
parametrised test's arguments), every object that *is* one of the swapped
scipy functions, and the modules ``scipy.signal`` / ``scipy.signal.windows``
by proxies whose attributes are swapped.  scipy's own modules are never
patched, so the operators (which call scipy internally) see the real scipy.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

import scipy.signal
import scipy.signal.windows

#: (name, exception or None) of every swapped call in the current test
CALLS: list[tuple[str, BaseException | None]] = []

_table: dict[int, tuple[str, Any]] | None = None
_signal_proxy: types.ModuleType | None = None
_windows_proxy: types.ModuleType | None = None


def _stand_in(name: str, original: Any) -> Any:
    from specscope import compute
    from specscope.compute.operators import get

    op = get(name)
    sig = inspect.signature(original)
    declared = {p.name for p in op.params}
    input_name = None
    if op.takes_input:
        for pname, p in sig.parameters.items():
            if pname not in declared and pname != "fs" and p.kind not in (
                    p.VAR_KEYWORD, p.VAR_POSITIONAL):
                input_name = pname
                break

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        given = dict(bound.arguments)
        for pname, p in sig.parameters.items():
            if p.kind == p.VAR_KEYWORD and pname in given:
                given.update(given.pop(pname))
            elif p.kind == p.VAR_POSITIONAL and pname in given:
                extra = given.pop(pname)
                if extra:
                    raise TypeError(f"{name}: extra positional arguments {extra!r}")
        x = given.pop(input_name, None) if input_name else None
        fs = given.pop("fs", None)
        try:
            result = compute.call(name, x, backend="numpy", fs=fs, **given)
        except BaseException as exc:
            CALLS.append((name, exc))
            raise
        CALLS.append((name, None))
        return result

    call.__specscope_swapped__ = name
    return call


def swapped() -> dict[int, tuple[str, Any]]:
    """``id(scipy function) -> (name, stand-in)`` for every swapped name."""
    global _table, _signal_proxy, _windows_proxy
    if _table is not None:
        return _table
    from specscope.compute.operators import list_operators

    table: dict[int, tuple[str, Any]] = {}
    signal_attrs: dict[str, Any] = {}
    window_attrs: dict[str, Any] = {}
    for op in list_operators():
        for module, attrs, prefix in ((scipy.signal, signal_attrs, "scipy.signal."),
                                      (scipy.signal.windows, window_attrs,
                                       "scipy.signal.windows.")):
            original = getattr(module, op.name, None)
            if (original is None or not callable(original) or isinstance(original, type)
                    or not op.reference.startswith(prefix + op.name)):
                continue
            stand_in = _stand_in(op.name, original)
            table[id(original)] = (op.name, stand_in)
            attrs[op.name] = stand_in
    _windows_proxy = _proxy(scipy.signal.windows, window_attrs)
    signal_attrs["windows"] = _windows_proxy
    for name, fn in window_attrs.items():
        if getattr(scipy.signal, name, None) is getattr(scipy.signal.windows, name):
            signal_attrs.setdefault(name, fn)
    _signal_proxy = _proxy(scipy.signal, signal_attrs)
    _table = table
    return table


def _proxy(module: types.ModuleType, attrs: dict[str, Any]) -> types.ModuleType:
    proxy = types.ModuleType(module.__name__)
    proxy.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    proxy.__dict__.update(attrs)
    proxy.__all__ = list(getattr(module, "__all__", []))
    return proxy


def names() -> list[str]:
    """The swapped names."""
    return sorted({n for n, _ in swapped().values()})


def replacement(value: Any) -> Any:
    """The swapped stand-in (or proxy module) for ``value``, or ``value`` itself."""
    table = swapped()
    if value is scipy.signal:
        return _signal_proxy
    if value is scipy.signal.windows:
        return _windows_proxy
    try:
        hit = table.get(id(value))
    except TypeError:
        return value
    return hit[1] if hit is not None else value


def patch_namespace(ns: dict[str, Any]) -> None:
    """Swap, in place, every value of ``ns`` that is a swapped scipy function or module."""
    for key, value in list(ns.items()):
        new = replacement(value)
        if new is not value:
            ns[key] = new
        elif type(value) in (list, tuple) and value:
            items = [replacement(v) for v in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                ns[key] = type(value)(items)
