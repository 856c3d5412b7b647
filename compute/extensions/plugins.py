"""Plugins: operators from installed packages and plugin folders, loaded on first use.

A plugin is a Python module (one file, or a package folder) that declares
operators with the same :func:`~specscope.compute.operators.registry.operator` /
:class:`~specscope.compute.operators.registry.Param` API as the built-ins.  Its operators
live under the plugin's name: ``@operator("detector", ...)`` in plugin
``clicks`` registers ``clicks.detector``.

Where plugins come from, in this order (the first plugin to claim a name keeps
it; a later one with the same name is reported as a clash and not loaded):

1. ``shipped``: the modules of :mod:`specscope.plugins` (mel, CQT, ...);
2. ``entry point``: installed distributions declaring the entry-point group
   ``specscope.plugins`` (``name = "module"``);
3. ``user folder``: ``<user data dir>/plugins`` (``SPECSCOPE_DATA_DIR``
   replaces the user data dir);
4. ``path``: folders in ``SPECSCOPE_PLUGINS`` (an ``os.pathsep`` list) and
   those given with ``--plugins DIR`` (:func:`add_search_path`).

Listing never imports a plugin: its name, version, summary and operators come
from a ``plugin.toml`` inside a package plugin, a literal ``SPECSCOPE_PLUGIN``
dict at module level, and the ``@operator("name", ...)`` decorators, all read
with :mod:`tomllib` and :mod:`ast`.  A plugin is imported the first time one
of its operators is asked for (``registry.get("clicks.detector")``) or when
every operator is listed.

Isolation: an import error, an exception in an operator and a result of the
wrong kind, shape or dtype become a :class:`PluginError` naming the plugin and
the operator; the plugin's status keeps the error and its traceback; other
plugins and the app are unaffected.
"""

from __future__ import annotations

import ast
import collections
import functools
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import numbers
import os
import sys
import threading
import time
import tomllib
import traceback as _tb
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import backend as _backend
from ..errors import Cancelled, InputError, SpecscopeError
from ..operators import registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "OUTPUT_KINDS",
    "Plugin",
    "PluginError",
    "add_search_path",
    "check_result",
    "describe_operator",
    "events_to_annotations",
    "get_plugin",
    "list_plugins",
    "load",
    "load_all",
    "load_for_operator",
    "output_kind",
    "plugin_of",
    "rescan",
    "reset",
    "search_paths",
    "user_plugin_dir",
    "views",
]

ENTRY_POINT_GROUP = "specscope.plugins"
SOURCES = ("shipped", "entry point", "user folder", "path")
#: what an operator returns, declared per operator in the plugin's metadata
#: (``outputs = {"op": "image"}``); see :func:`check_result`
OUTPUT_KINDS = ("array", "same", "image", "series", "events")
_METADATA_NAME = "SPECSCOPE_PLUGIN"
_MANIFEST = "plugin.toml"
_MODULE_PREFIX = "specscope_plugin_"
_MAX_CALL_ERRORS = 20


class PluginError(SpecscopeError):
    """A plugin failed: at import, in an operator, or with a result of the wrong kind.

    ``str(error)`` is one line naming the plugin and the operator; the
    traceback of the underlying exception is in :attr:`traceback` (empty for
    clashes and bad results).
    """

    def __init__(self, message: str, *, plugin: str, operator: str | None = None,
                 traceback: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin
        self.operator = operator
        self.traceback = traceback


@dataclass
class CallError:
    """A failure of one plugin operator call (kept for the Plugins dialog)."""

    operator: str
    message: str
    traceback: str
    time: float

    def to_dict(self, traceback: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {"operator": self.operator, "message": self.message,
                             "time": self.time}
        if traceback:
            d["traceback"] = self.traceback
        return d


@dataclass(eq=False)
class Plugin:
    """What is known about one plugin: where it is, what it declares, how it loaded.

    ``status`` is ``"available"`` (found, not imported yet), ``"loaded"``,
    ``"failed"`` (bad metadata or import error: see ``error`` and
    ``traceback``) or ``"clash"`` (its name is taken by an earlier plugin).
    """

    name: str
    source: str
    path: str
    module: str
    version: str = ""
    summary: str = ""
    #: operator names declared in the metadata or found in the source, unqualified
    declared: list[str] = field(default_factory=list)
    #: output kind per unqualified operator name (default ``"array"``)
    outputs: dict[str, str] = field(default_factory=dict)
    #: example parameters per unqualified operator name, for ``plugins check``
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: str = "available"
    error: str | None = None
    traceback: str = ""
    #: qualified names actually registered (after loading)
    loaded_operators: list[str] = field(default_factory=list)
    #: things that did not stop it loading (declared operators missing, ...)
    warnings: list[str] = field(default_factory=list)
    call_errors: collections.deque = field(
        default_factory=lambda: collections.deque(maxlen=_MAX_CALL_ERRORS))

    @property
    def operators(self) -> list[str]:
        """Qualified operator names: the registered ones once loaded, else the declared."""
        if self.status == "loaded":
            return list(self.loaded_operators)
        return [f"{self.name}.{n}" for n in self.declared]

    @property
    def loaded(self) -> bool:
        return self.status == "loaded"

    def output_kind(self, operator: str) -> str:
        short = operator[len(self.name) + 1:] if operator.startswith(self.name + ".") \
            else operator
        return self.outputs.get(short, "array")

    def to_dict(self, traceback: bool = False) -> dict[str, Any]:
        """A JSON-able description (``specscope plugins list --json``)."""
        d: dict[str, Any] = {
            "name": self.name, "source": self.source, "path": self.path,
            "module": self.module, "version": self.version, "summary": self.summary,
            "operators": self.operators,
            "outputs": {op: self.output_kind(op) for op in self.operators},
            "status": self.status, "error": self.error, "warnings": list(self.warnings),
            "call_errors": [e.to_dict(traceback) for e in self.call_errors],
        }
        if traceback:
            d["traceback"] = self.traceback
        return d

    def as_error(self) -> PluginError:
        return PluginError(self.error or f"plugin {self.name!r} is {self.status}",
                           plugin=self.name, traceback=self.traceback)


# -- state ----------------------------------------------------------------------------

_lock = threading.RLock()
_state: dict[str, Any] = {"plugins": None, "problems": [], "loading": set()}
_extra_dirs: list[Path] = []


def user_plugin_dir() -> Path:
    """``<user data dir>/plugins``; ``SPECSCOPE_DATA_DIR`` replaces the user data dir."""
    root = os.environ.get("SPECSCOPE_DATA_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_data_dir("specscope", appauthor=False)
    return Path(root) / "plugins"


def search_paths() -> list[Path]:
    """Plugin folders from ``SPECSCOPE_PLUGINS`` and :func:`add_search_path`, in order."""
    env = os.environ.get("SPECSCOPE_PLUGINS", "")
    dirs = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    return dirs + list(_extra_dirs)


def add_search_path(*dirs: str | os.PathLike[str]) -> None:
    """Add plugin folders (``--plugins DIR``); a folder that does not exist is an error."""
    with _lock:
        for d in dirs:
            path = Path(d).expanduser()
            if not path.is_dir():
                raise InputError(f"--plugins {d}: no such folder (a folder of plugin modules "
                                 "or packages was expected)")
            if path not in _extra_dirs:
                _extra_dirs.append(path)
        _state["plugins"] = None  # rediscover, keeping what is loaded (see discover)


def rescan() -> None:
    """Look for plugins again on next use; loaded plugins stay loaded."""
    with _lock:
        _state["plugins"] = None


def reset(unload: bool = True, forget_paths: bool = True) -> None:
    """Forget discovered plugins (tests, a "rescan" button).

    With ``unload``, operators of loaded plugins are removed from the registry
    and folder plugins' modules from :data:`sys.modules`, so they import again.
    """
    with _lock:
        if unload and _state["plugins"]:
            for p in _state["plugins"].values():
                _unload(p)
        _state["plugins"] = None
        _state["problems"] = []
        if forget_paths:
            _extra_dirs.clear()


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


# -- reading metadata without importing ----------------------------------------------


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _is_operator_call(dec: ast.expr) -> bool:
    if not isinstance(dec, ast.Call):
        return False
    f = dec.func
    return (isinstance(f, ast.Name) and f.id == "operator") or (
        isinstance(f, ast.Attribute) and f.attr == "operator")


def _scan_source(files: Iterable[Path]) -> tuple[dict[str, Any], list[tuple[str, str]], str]:
    """Module metadata, ``(operator, summary)`` pairs and the docstring's first line."""
    meta: dict[str, Any] = {}
    ops: list[tuple[str, str]] = []
    doc = ""
    for i, path in enumerate(files):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        if i == 0:
            doc = (ast.get_docstring(tree) or "").strip().splitlines()[:1]
            doc = doc[0] if doc else ""
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                if _METADATA_NAME in names and i == 0:
                    value = _literal(node.value)
                    if not isinstance(value, dict):
                        raise ValueError(f"{path.name}: {_METADATA_NAME} must be a literal dict")
                    meta.update(value)
                if "__version__" in names and i == 0:
                    v = _literal(node.value)
                    if isinstance(v, str):
                        meta.setdefault("version", v)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    if _is_operator_call(dec) and dec.args:
                        name = _literal(dec.args[0])
                        summary = next((_literal(k.value) for k in dec.keywords
                                        if k.arg == "summary"), "")
                        if isinstance(name, str):
                            ops.append((name, summary if isinstance(summary, str) else ""))
    return meta, ops, doc


def _source_files(path: Path, package: bool) -> list[Path]:
    if not package:
        return [path]
    init = path / "__init__.py"
    rest = sorted(p for p in path.rglob("*.py") if p != init and "__pycache__" not in p.parts)
    return [init] + rest[:200]


def _fill_metadata(p: Plugin, location: Path, package: bool) -> None:
    """Read manifest / module metadata into ``p`` (status ``failed`` on bad metadata)."""
    try:
        meta: dict[str, Any] = {}
        if package and (location / _MANIFEST).is_file():
            with open(location / _MANIFEST, "rb") as fh:
                meta = tomllib.load(fh)
            meta = dict(meta.get("plugin", meta))
            src_meta, ops, doc = _scan_source(_source_files(location, package))
            for k, v in src_meta.items():
                meta.setdefault(k, v)
        else:
            meta, ops, doc = _scan_source(_source_files(location, package))
    except (OSError, UnicodeDecodeError, SyntaxError, tomllib.TOMLDecodeError,
            ValueError) as exc:
        p.status = "failed"
        where = getattr(exc, "filename", None) or str(location)
        line = getattr(exc, "lineno", None)
        p.error = (f"plugin {p.name!r}: cannot read its metadata ({Path(where).name}"
                   f"{f', line {line}' if line else ''}): {type(exc).__name__}: "
                   f"{' '.join(str(getattr(exc, 'msg', exc)).split())}")
        p.traceback = _tb.format_exc()
        return
    p.version = str(meta.get("version", p.version or ""))
    p.summary = str(meta.get("summary", "") or doc)
    declared = meta.get("operators")
    if isinstance(declared, dict):
        declared = list(declared)
    names = [str(n) for n in declared] if isinstance(declared, list) else [n for n, _ in ops]
    prefix = p.name + "."
    p.declared = list(dict.fromkeys(n.removeprefix(prefix)
                                    for n in names))
    outputs = meta.get("outputs", {}) or {}
    for op, kind in (outputs.items() if isinstance(outputs, dict) else ()):
        if kind not in OUTPUT_KINDS:
            p.warnings.append(f"outputs[{op!r}]={kind!r} must be one of "
                              f"{', '.join(OUTPUT_KINDS)}; read as 'array'")
            continue
        p.outputs[str(op)] = str(kind)
    examples = meta.get("examples", {}) or {}
    if isinstance(examples, dict):
        p.examples = {str(k): dict(v) for k, v in examples.items() if isinstance(v, dict)}


def _valid_name(name: str) -> bool:
    return name.isidentifier() and name == name.lower() and not name.startswith("_")


def _folder_plugins(folder: Path, source: str, module_prefix: str) -> list[Plugin]:
    out = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            name, package = entry.stem, False
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            name, package = entry.name, True
        else:
            continue
        p = Plugin(name=name, source=source, path=str(entry), module=module_prefix + name)
        if not _valid_name(name):
            p.status = "failed"
            p.error = (f"plugin {name!r} ({entry}): the name must be a lower-case Python "
                       "identifier (it becomes the operators' namespace)")
        else:
            _fill_metadata(p, entry, package)
        out.append(p)
    return out


def _locate(modname: str) -> tuple[Path, bool] | None:
    """File (or package folder) of a module, found without importing it."""
    parts = modname.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for i in range(1, len(parts)):
            locs = spec.submodule_search_locations if spec else None
            if not locs:
                return None
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), list(locs))
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations is not None and spec.origin and \
            spec.origin.endswith("__init__.py"):
        return Path(spec.origin).parent, True
    if spec.origin and spec.origin.endswith(".py"):
        return Path(spec.origin), False
    return None


def _entry_point_plugins() -> list[Plugin]:
    out = []
    seen: set[tuple[str, str]] = set()
    try:
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as exc:  # noqa: BLE001 - broken metadata must not stop the app
        _state["problems"].append(f"entry points of {ENTRY_POINT_GROUP!r} could not be "
                                  f"read: {type(exc).__name__}: {exc}")
        return out
    for ep in eps:
        if (ep.name, ep.value) in seen:
            continue  # the same distribution found twice on sys.path
        seen.add((ep.name, ep.value))
        module = ep.value.split(":")[0].strip()
        dist = getattr(ep, "dist", None)
        version = getattr(dist, "version", "") or ""
        where = _locate(module)
        p = Plugin(name=ep.name, source="entry point", path=str(where[0]) if where else "",
                   module=module, version=version)
        if not _valid_name(ep.name):
            p.status = "failed"
            p.error = (f"plugin {ep.name!r} (entry point {ep.value!r}): the name must be a "
                       "lower-case Python identifier")
        elif where is None:
            p.status = "failed"
            p.error = (f"plugin {ep.name!r}: entry point module {module!r} cannot be found "
                       f"(distribution {getattr(dist, 'name', '?')})")
        else:
            _fill_metadata(p, where[0], where[1])
            p.version = version or p.version
        out.append(p)
    return out


def _shipped_folder() -> Path | None:
    try:
        spec = importlib.util.find_spec("specscope.plugins")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    sibling = Path(__file__).resolve().parents[2] / "plugins"
    return sibling if sibling.is_dir() else None


def discover() -> dict[str, Plugin]:
    """Find every plugin (without importing any); cached until :func:`reset`."""
    with _lock:
        if _state["plugins"] is not None:
            return _state["plugins"]
        old: dict[str, Plugin] = {}
        for p in (_state.get("previous") or {}).values():
            old[p.path] = p
        _state["problems"] = []
        found: list[Plugin] = []
        shipped = _shipped_folder()
        if shipped is not None:
            from .. import __version__

            for p in _folder_plugins(shipped, "shipped", "specscope.plugins."):
                p.version = p.version or __version__
                found.append(p)
        found += _entry_point_plugins()
        user = user_plugin_dir()
        if user.is_dir():
            found += _folder_plugins(user, "user folder", _MODULE_PREFIX)
        for d in search_paths():
            if not d.is_dir():
                _state["problems"].append(f"plugin folder {d} does not exist "
                                          "(SPECSCOPE_PLUGINS or --plugins)")
                continue
            found += _folder_plugins(d, "path", _MODULE_PREFIX)
        plugins: dict[str, Plugin] = {}
        clashes: list[Plugin] = []
        for p in found:
            if p.path in old and old[p.path].name == p.name and old[p.path].loaded:
                p = old[p.path]  # keep what is loaded across a rescan
            first = plugins.get(p.name)
            if first is None:
                plugins[p.name] = p
                continue
            p.status = "clash"
            p.error = (f"plugin {p.name!r} ({p.source}, {p.path}) clashes with the {first.source}"
                       f" plugin of the same name ({first.path}); it is not loaded - rename "
                       "one of them (the name is the namespace of their operators)")
            clashes.append(p)
        _state["clashes"] = clashes
        _state["plugins"] = plugins
        _state["previous"] = plugins
        return plugins


def list_plugins() -> list[Plugin]:
    """Every plugin found, in source order, clashing ones included (for listings, dialogs)."""
    with _lock:
        plugins = discover()
        items = list(plugins.values()) + list(_state.get("clashes", []))
    order = {s: i for i, s in enumerate(SOURCES)}
    return sorted(items, key=lambda p: (order.get(p.source, 9), p.name, p.status == "clash"))


def problems() -> list[str]:
    """Problems of discovery itself (a plugin folder that does not exist, ...)."""
    discover()
    return list(_state["problems"])


def get_plugin(name: str) -> Plugin:
    """The plugin called ``name`` (its namespace); :class:`InputError` otherwise."""
    plugins = discover()
    if name not in plugins:
        known = ", ".join(sorted(plugins)) or "none"
        raise InputError(f"plugin {name!r} is not installed (plugins: {known})")
    return plugins[name]


def plugin_of(operator: str) -> Plugin | None:
    """The plugin an operator name belongs to (by its namespace), or None."""
    if not isinstance(operator, str) or "." not in operator:
        return None
    return discover().get(operator.split(".", 1)[0])


# -- loading --------------------------------------------------------------------------


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
    spec.loader.exec_module(module)


def _registered_under(prefix: str) -> set[str]:
    with registry._registry_lock:
        return {n for n in registry._registry if n.startswith(prefix)}


def load(name: str) -> Plugin:
    """Import plugin ``name`` (once) and register its operators.

    Raises
    ------
    PluginError
        When it failed to import now or before, or clashes with another plugin.
    InputError
        When no plugin has this name.
    """
    with _lock:
        p = get_plugin(name)
        if p.status == "loaded" or name in _state["loading"]:
            return p
        if p.status in ("failed", "clash"):
            raise p.as_error()
        registry._ensure_builtins()
        prefix = name + "."
        before = _registered_under(prefix)
        _state["loading"].add(name)
        token = registry._namespace.set(name)
        try:
            _import(p)
        except (Exception, SystemExit) as exc:
            for op in _registered_under(prefix) - before:  # roll back a partial import
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
            registry._namespace.reset(token)
            _state["loading"].discard(name)
        new = sorted(_registered_under(prefix) - before)
        for opname in new:
            _guard(p, registry._registry[opname])
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
    """Load every plugin that is not loaded yet; failures stay in their status."""
    for p in list(discover().values()):
        if p.status == "available":
            try:
                load(p.name)
            except PluginError:
                pass
    return list_plugins()


def load_for_operator(name: str) -> bool:
    """Registry hook: load the plugin of ``"plugin.op"``; False when there is none.

    Raises :class:`PluginError` when that plugin cannot be loaded.
    """
    p = plugin_of(name)
    if p is None:
        rescan()  # a plugin dropped into a folder since the last scan
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


def _what(v: Any) -> str:
    if v is None:
        return "None"
    return f"a {type(v).__name__}"


def _shape(a: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in a.shape)


def _is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or _backend.is_device_array(a)


def _leaf_problem(v: Any, where: str) -> str | None:
    if _is_array(v):
        if np.dtype(v.dtype).kind not in "biufc":
            return f"an array of dtype {v.dtype}{where} (numbers were expected)"
        return None
    if isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, (str, bytes)):
        if isinstance(v, np.generic) and v.dtype.kind not in "biufc":
            return f"a {v.dtype} scalar{where}"
        return None
    if isinstance(v, (tuple, list)):
        for i, u in enumerate(v):
            bad = _leaf_problem(u, f"{where}[{i}]")
            if bad:
                return bad
        return None
    if isinstance(v, dict):
        for k, u in v.items():
            if not isinstance(k, str):
                return f"a dict with key {k!r}{where} (string keys were expected)"
            bad = _leaf_problem(u, f"{where}[{k!r}]")
            if bad:
                return bad
        return None
    return f"{_what(v)}{where} (arrays or numbers were expected)"


def check_result(kind: str, result: Any, x: Any = None) -> str | None:
    """What is wrong with an operator's result for its declared output kind, or None.

    Kinds
    -----
    ``array``
        Numeric arrays or numbers, possibly in tuples, lists or dicts.
    ``same``
        One numeric array with the shape of the input.
    ``image``
        ``(freqs, times, values)``: 1-D ``freqs`` (n_f) and ``times`` (n_t) in Hz
        and s, real ``values`` shaped ``(..., n_f, n_t)`` -- what a spectrogram
        pane can show instead of the STFT.
    ``series``
        A dict with 1-D ``times`` and numeric arrays whose last axis has its length.
    ``events``
        A dict with 1-D ``times`` (s) and ``sample`` (int) and optional 1-D
        arrays of the same length (``strength``, ...); see
        :func:`events_to_annotations`.
    """
    if result is None:
        return "None"
    bad = _leaf_problem(result, "")
    if bad:
        return bad
    if kind == "same":
        if not _is_array(result):
            return f"{_what(result)} (one array was expected)"
        if x is not None and _is_array(x) and _shape(result) != _shape(x):
            return f"shape {_shape(result)} for input shape {_shape(x)} (the same was expected)"
    elif kind == "image":
        if not isinstance(result, (tuple, list)) or len(result) != 3 or not all(
                _is_array(a) for a in result):
            return f"{_what(result)} ((freqs, times, values) arrays were expected)"
        f, t, s = result
        if f.ndim != 1 or t.ndim != 1:
            return (f"freqs of shape {_shape(f)} and times of shape {_shape(t)} "
                    "(1-D arrays were expected)")
        if s.ndim < 2 or _shape(s)[-2:] != (f.shape[0], t.shape[0]):
            return (f"values of shape {_shape(s)} for {f.shape[0]} freqs and {t.shape[0]} "
                    f"times (..., {f.shape[0]}, {t.shape[0]}) was expected)")
        if np.dtype(s.dtype).kind == "c":
            return f"complex values ({s.dtype}; real power or magnitude was expected)"
    elif kind in ("series", "events"):
        if not isinstance(result, dict) or "times" not in result or not _is_array(
                result["times"]) or result["times"].ndim != 1:
            return f"{_what(result)} (a dict with 1-D 'times' was expected)"
        n = result["times"].shape[0]
        if kind == "events" and ("sample" not in result or not _is_array(result["sample"])
                                 or np.dtype(result["sample"].dtype).kind not in "iu"):
            return "events without an integer 'sample' array"
        for k, v in result.items():
            if not _is_array(v) or v.ndim < 1 or v.shape[-1] != n:
                got = _shape(v) if _is_array(v) else _what(v)
                return f"{k!r} of shape {got} for {n} times (last axis {n} was expected)"
            if kind == "events" and v.ndim != 1:
                return f"{k!r} of shape {_shape(v)} (1-D per event was expected)"
    return None


# -- for the CLI and the GUI ----------------------------------------------------------


def output_kind(operator: str) -> str:
    """Declared output kind of an operator (``"array"`` for built-ins and undeclared)."""
    p = plugin_of(operator)
    return p.output_kind(operator) if p is not None else "array"


def views() -> list[str]:
    """Plugin operators whose output is an ``image`` (alternative spectrogram views).

    Read from metadata: listing views imports no plugin.
    """
    return [op for p in list_plugins() if p.status in ("available", "loaded")
            for op in p.operators if p.output_kind(op) == "image"]


def describe_operator(name: str) -> dict[str, Any]:
    """Schema of an operator for a generated form: :meth:`Operator.to_dict` plus
    ``plugin`` (name or None) and ``output`` (its output kind).  Loads its plugin;
    raises :class:`PluginError` when that fails."""
    op = registry.get(name)
    d = op.to_dict()
    p = plugin_of(op.name)
    d["plugin"] = p.name if p is not None else None
    d["output"] = output_kind(op.name)
    return d


def events_to_annotations(events: dict[str, Any], label: str = "onset",
                          fs: float | None = None) -> list[dict[str, Any]]:
    """Recording annotations (``Recording.annotations`` dicts) from an ``events`` result.

    Each event becomes ``{"sample_start", "sample_count": 0, "freq_lower": None,
    "freq_upper": None, "label", "comment"}``; the comment carries the strength.
    """
    problem = check_result("events", events)
    if problem:
        raise InputError(f"events must be an 'events' result; got {problem}")
    ev = _backend.to_host(events)
    strength = ev.get("strength")
    out = []
    for i, s in enumerate(np.asarray(ev["sample"]).tolist()):
        comment = None if strength is None else f"strength={float(strength[i]):.4g}"
        out.append({"sample_start": int(s), "sample_count": 0, "freq_lower": None,
                    "freq_upper": None, "label": label, "comment": comment})
    return out
