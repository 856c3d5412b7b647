"""Operators by name: lookup, listing and calls, with built-ins and plugins loaded on demand.

This is the one module that brings together the declarations
(:mod:`~specscope.compute.operators.registry`), the autotuned choice of
implementation (:mod:`~specscope.compute.operators.autotune`) and plugin
loading (:mod:`specscope.compute.extensions`):

- importing it installs autotune's choice and call statistics as the run
  policy of every :class:`~specscope.compute.operators.registry.Operator`;
- the built-in operators (:mod:`specscope.compute.ops`) are imported on the
  first lookup, which keeps ``import specscope.compute`` light;
- a namespaced name, ``"plugin.op"``, loads its plugin on first use, and a
  full listing loads every plugin (failures stay in the plugins' status).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Iterable
from typing import Any

from .. import extensions
from ..errors import InputError
from . import autotune, registry
from .registry import Operator, RunPolicy

__all__ = [
    "call",
    "describe",
    "describe_operator",
    "families",
    "get",
    "list_operators",
    "load_builtins",
    "tune",
]

registry.set_run_policy(RunPolicy(choose=autotune.choose, record=autotune.record))

_builtins_lock = threading.RLock()
_builtins_loaded = False


def load_builtins() -> None:
    """Import the built-in operators (once; later calls return at once)."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    with _builtins_lock:
        if _builtins_loaded:
            return
        # set first: a lookup made while the built-ins import must not import them again
        _builtins_loaded = True
        from .. import ops  # noqa: F401 - imported for its declarations


def get(name: str | Operator) -> Operator:
    """The operator called ``name`` (an :class:`Operator` is returned as it is).

    A namespaced name, ``"plugin.op"``, loads its plugin on first use.

    Parameters
    ----------
    name : str or Operator
        The operator's name.

    Returns
    -------
    Operator
        The registered operator.

    Raises
    ------
    InputError
        When no operator has this name; the message suggests close names.
    PluginError
        When the plugin of a namespaced name fails to load.
    """
    if isinstance(name, Operator):
        return name
    load_builtins()
    op = registry.find(name) if isinstance(name, str) else None
    if op is not None:
        return op
    if isinstance(name, str) and "." in name and extensions.load_for_operator(name):
        op = registry.find(name)
        if op is not None:
            return op
    close = difflib.get_close_matches(str(name), list(registry.declared()), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"operator={name!r} is not registered{hint} "
                     "(list_operators() lists them)")


def list_operators(family: str | None = None) -> list[Operator]:
    """Registered operators sorted by family and name, optionally of one family.

    Plugins are loaded first (failures are recorded in their status, see
    :func:`specscope.compute.extensions.list_plugins`, never raised here).

    Parameters
    ----------
    family : str, optional
        Only this family (``"fft"``, ``"windows"``, ...).

    Returns
    -------
    list of Operator
        Sorted by family, then name.
    """
    load_builtins()
    extensions.load_all()
    ops = list(registry.declared().values())
    if family is not None:
        ops = [o for o in ops if o.family == family]
    return sorted(ops, key=lambda o: (o.family, o.name))


def families() -> list[str]:
    """Family names in use, sorted (built-ins and plugins loaded first).

    Returns
    -------
    list of str
        Each family once.
    """
    return sorted({o.family for o in list_operators()})


def describe(family: str | None = None) -> list[dict[str, Any]]:
    """A JSON-able list describing every operator (what ``specscope ops --json`` prints).

    Parameters
    ----------
    family : str, optional
        Only this family.

    Returns
    -------
    list of dict
        :meth:`~specscope.compute.operators.registry.Operator.to_dict` of each
        operator, in the order of :func:`list_operators`.
    """
    return [o.to_dict() for o in list_operators(family)]


def describe_operator(name: str) -> dict[str, Any]:
    """Schema of one operator for a generated form.

    :meth:`Operator.to_dict` plus ``plugin`` (its plugin's name, or None) and
    ``output`` (its declared output kind, see
    :func:`specscope.compute.extensions.check_result`).  Loads its plugin.

    Parameters
    ----------
    name : str
        The operator's name.

    Returns
    -------
    dict
        The JSON-able schema.

    Raises
    ------
    InputError
        No operator has this name.
    PluginError
        Its plugin fails to load.
    """
    op = get(name)
    d = op.to_dict()
    p = extensions.plugin_of(op.name)
    d["plugin"] = p.name if p is not None else None
    d["output"] = extensions.output_kind(op.name)
    return d


def call(name: str, x: Any = None, /, backend: str = "auto", fs: float | None = None,
         **params: Any) -> Any:
    """Run operator ``name`` on ``x``.

    Parameters
    ----------
    name : str
        A registered operator.
    x : array_like, optional
        Input (omitted for operators that take none, e.g. windows).
    backend : str
        ``"auto"`` (autotuned), ``"numpy"``, ``"cupy"``, or ``"backend:variant"``.
    fs : float, optional
        Sample rate in Hz for operators that use one (1.0 when omitted).
    **params
        The operator's parameters, validated against its schema.

    Returns
    -------
    object
        The operator's result, in the namespace of ``x`` (NumPy in, NumPy out).
    """
    return get(name).run(x, backend=backend, fs=fs, **params)


def tune(operators: Iterable[str] | None = None, sizes: Iterable[int] = autotune.TUNE_SIZES,
         dtypes: Iterable[str] = autotune.TUNE_DTYPES) -> list[dict[str, Any]]:
    """Time and remember ``backend="auto"`` choices for common sizes.

    Parameters
    ----------
    operators : iterable of str, optional
        Operator names; every registered operator when omitted.
    sizes, dtypes
        As :func:`specscope.compute.operators.autotune.tune_operators`.

    Returns
    -------
    list of dict
        One row per decision (see :func:`~.autotune.tune_operators`).
    """
    ops = list_operators() if operators is None else [get(n) for n in operators]
    return autotune.tune_operators(ops, sizes=sizes, dtypes=dtypes)
