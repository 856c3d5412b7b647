"""Loading plugins: importing one under its namespace, isolating its calls, unloading.

A plugin is imported the first time one of its operators is asked for
(:func:`load_for_operator`, which :func:`specscope.compute.operators.get`
calls for a ``"plugin.op"`` name) or when every operator is listed
(:func:`load_all`).  Its module runs inside
:func:`specscope.compute.operators.registry.namespace`, so ``@operator("op")``
declares ``"plugin.op"``.

Isolation: an import error, an exception in an operator and a result of the
wrong kind, shape or dtype become a :class:`~.discovery.PluginError` naming
the plugin and the operator; the plugin's status keeps the error and its
traceback; other plugins and the app are unaffected.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import threading
import time
import traceback as _tb
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import Cancelled, InputError, SpecscopeError
from ..files import note_inputs
from ..operators import registry, watch
from .checks import check_result
from .discovery import (
    CallError,
    Plugin,
    PluginError,
    discover,
    forget,
    get_plugin,
    list_plugins,
    plugin_of,
    rescan,
)

__all__ = ["load", "load_all", "load_for_operator", "reset"]

_lock = threading.RLock()
#: plugins being imported now (an import that asks for its own operators)
_loading: set[str] = set()


def reset(unload: bool = True, forget_paths: bool = True) -> None:
    """Forget discovered plugins (tests, a "rescan" button).

    With ``unload``, operators of loaded plugins are removed from the registry
    and folder plugins' modules from :data:`sys.modules`, so they import again.
    With ``forget_paths``, folders given to
    :func:`~.discovery.add_search_path` are forgotten too.

    Parameters
    ----------
    unload : bool
        Unregister the operators of loaded plugins and drop their modules.
    forget_paths : bool
        Forget the added plugin folders.
    """
    with _lock:
        known = forget(forget_paths)
        if unload:
            for p in known:
                _unload(p)


def _unload(p: Plugin) -> None:
    for name in p.loaded_operators:
        try:
            registry.unregister(name)
        except InputError:
            pass
    for mod in [m for m in sys.modules if m == p.module or m.startswith(p.module + ".")]:
        del sys.modules[mod]
    p.loaded_operators = []
    if p.status == "loaded":
        p.status = "available"


def _import(p: Plugin) -> None:
    if p.source in ("shipped", "entry point"):
        importlib.import_module(p.module)
        return
    path = Path(p.path)
    if path.is_dir():
        spec = importlib.util.spec_from_file_location(
            p.module, path / "__init__.py", submodule_search_locations=[str(path)])
    else:
        spec = importlib.util.spec_from_file_location(p.module, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[p.module] = module
    note_inputs(spec.origin)  # a command that loaded a plugin file never writes over it
    spec.loader.exec_module(module)


def load(name: str) -> Plugin:
    """Import plugin ``name`` (once) and register its operators.

    Its module runs under the plugin's namespace; each operator it declares is
    wrapped so that a failure or a result of the wrong kind becomes a
    :class:`PluginError`.

    Parameters
    ----------
    name : str
        The plugin's name.

    Returns
    -------
    Plugin
        The plugin, status ``"loaded"`` (its operators in ``loaded_operators``).

    Raises
    ------
    PluginError
        When it failed to import now or before, or clashes with another plugin.
    InputError
        When no plugin has this name.
    """
    with _lock:
        p = get_plugin(name)
        if p.status == "loaded" or name in _loading:
            return p
        if p.status in ("failed", "clash"):
            raise p.as_error()
        prefix = name + "."
        before = set(registry.declared(prefix))
        _loading.add(name)
        try:
            with registry.namespace(name):
                _import(p)
        except (Exception, SystemExit) as exc:
            for op in set(registry.declared(prefix)) - before:  # roll back a partial import
                registry.unregister(op)
            for mod in [m for m in sys.modules if m == p.module or m.startswith(p.module + ".")]:
                del sys.modules[mod]
            msg = " ".join(str(exc).split()) or type(exc).__name__
            p.status = "failed"
            p.error = (f"plugin {name!r} ({p.path}) failed to import: "
                       f"{type(exc).__name__}: {msg}")
            p.traceback = _tb.format_exc()
            raise p.as_error() from exc
        finally:
            _loading.discard(name)
        now = registry.declared(prefix)
        new = sorted(set(now) - before)
        for opname in new:
            _guard(p, now[opname])
        p.loaded_operators = new
        p.status = "loaded"
        p.error = None
        if not new:
            p.warnings.append(f"plugin {name!r} registers no operators")
        missing = [d for d in p.declared if f"{prefix}{d}" not in new]
        if missing:
            p.warnings.append("declared but not registered: " + ", ".join(missing))
        return p


def load_all() -> list[Plugin]:
    """Load every plugin that is not loaded yet; failures stay in their status.

    Returns
    -------
    list of Plugin
        Every plugin found, as :func:`~.discovery.list_plugins` gives them.
    """
    for p in list(discover().values()):
        if p.status == "available":
            try:
                load(p.name)
            except PluginError:
                pass
    return list_plugins()


def load_for_operator(name: str) -> bool:
    """Load the plugin of ``"plugin.op"``; False when no plugin has that namespace.

    A name whose plugin is not known yet triggers a rescan first (a plugin
    dropped into a folder since the last scan).

    Parameters
    ----------
    name : str
        A full operator name.

    Returns
    -------
    bool
        True once its plugin is loaded; False when no plugin has that namespace.

    Raises
    ------
    PluginError
        The plugin cannot be loaded.
    """
    p = plugin_of(name)
    if p is None:
        rescan()
        p = plugin_of(name)
        if p is None:
            return False
    load(p.name)
    return True


# -- isolation of calls ---------------------------------------------------------------


def _guard(p: Plugin, op: registry.Operator) -> None:
    kind = p.output_kind(op.name)
    for variants in op.implementations.values():
        for impl in variants.values():
            if not getattr(impl.fn, "_specscope_guarded", False):
                impl.fn = _guarded(p, op, kind, impl.fn)


def _record(p: Plugin, err: PluginError) -> PluginError:
    p.call_errors.append(CallError(err.operator or "", str(err), err.traceback, time.time()))
    return err


def _guarded(p: Plugin, op: registry.Operator, kind: str,
             fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            with watch.watching(op.name):  # a long call reports itself (operators.watch)
                result = fn(*args, **kwargs)
        except (SpecscopeError, Cancelled):
            raise  # bad input named by the plugin itself, or a cancellation
        except Exception as exc:
            msg = " ".join(str(exc).split()) or type(exc).__name__
            raise _record(p, PluginError(
                f"plugin {p.name!r}, operator {op.name!r} failed: {type(exc).__name__}: {msg}",
                plugin=p.name, operator=op.name, traceback=_tb.format_exc())) from exc
        x = args[0] if op.takes_input and args else None
        problem = check_result(kind, result, x)
        if problem:
            raise _record(p, PluginError(
                f"plugin {p.name!r}, operator {op.name!r} returned {problem} "
                f"(declared output: {kind!r})", plugin=p.name, operator=op.name))
        return result

    run._specscope_guarded = True  # type: ignore[attr-defined]
    return run
