"""Finding plugins: shipped modules, entry points and plugin folders, read without importing.

A plugin is a Python module (one file, or a package folder) that declares
operators with the same :func:`~specscope.compute.operators.operator` /
:class:`~specscope.compute.operators.Param` API as the built-ins.  Its operators
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
with :mod:`tomllib` and :mod:`ast`.  :mod:`.loading` imports a plugin.
"""

from __future__ import annotations

import ast
import collections
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
import threading
import tomllib
import traceback as _tb
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import BadOption, InputError, SpecscopeError
from ..params import memory_budget
from .checks import OUTPUT_KINDS

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODULE_PREFIX",
    "SOURCES",
    "CallError",
    "Plugin",
    "PluginError",
    "add_search_path",
    "discover",
    "forget",
    "get_plugin",
    "list_plugins",
    "missing_imports",
    "output_kind",
    "plugin_of",
    "problems",
    "rescan",
    "search_paths",
    "user_plugin_dir",
    "views",
]

ENTRY_POINT_GROUP = "specscope.plugins"
SOURCES = ("shipped", "entry point", "user folder", "path")
#: module name prefix of plugins imported from a folder (``specscope_plugin_<name>``)
MODULE_PREFIX = "specscope_plugin_"
_METADATA_NAME = "SPECSCOPE_PLUGIN"
_MANIFEST = "plugin.toml"
_MAX_CALL_ERRORS = 20
#: largest plugin source file or manifest read for metadata (without importing it)
MAX_METADATA_BYTES = 4 << 20
#: memory Python's parser takes per byte of source, at most (measured)
_PARSE_BYTES_PER_BYTE = 250


class PluginError(SpecscopeError):
    """A plugin failed: at import, in an operator, or with a result of the wrong kind.

    ``str(error)`` is one line naming the plugin and the operator; the
    traceback of the underlying exception is in :attr:`traceback` (empty for
    clashes and bad results).

    Parameters
    ----------
    message : str
        The one-line message.
    plugin : str
        The plugin's name.
    operator : str, optional
        The operator's full name, when the failure is one operator's.
    traceback : str
        The formatted traceback of the underlying exception, or "".
    """

    def __init__(self, message: str, *, plugin: str, operator: str | None = None,
                 traceback: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin
        self.operator = operator
        self.traceback = traceback


@dataclass
class CallError:
    """A failure of one plugin operator call (kept for the Plugins dialog).

    Parameters
    ----------
    operator : str
        The operator's full name.
    message : str
        The one-line error.
    traceback : str
        The formatted traceback, or "" for a result of the wrong kind.
    time : float
        When it happened (seconds since the epoch, ``time.time()``).
    """

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

    Parameters
    ----------
    name : str
        The plugin's name, the namespace of its operators.
    source : str
        Where it was found, one of :data:`SOURCES`.
    path : str
        Its file or package folder ("" when unknown).
    module : str
        The module name it is imported as.
    version, summary : str
        From its metadata.
    declared : list of str
        Operator names declared in the metadata or found in the source, unqualified.
    outputs : dict of str to str
        Output kind per unqualified operator name (default ``"array"``).
    examples : dict of str to dict
        Example parameters per unqualified operator name, for ``plugins check``.
    titles : dict of str to str
        A name for people per unqualified operator name (menus: "Constant-Q").
    status : str
        ``"available"``, ``"loaded"``, ``"failed"`` or ``"clash"``.
    error : str or None
        Why it failed or clashes.
    traceback : str
        The traceback of a failure, or "".
    loaded_operators : list of str
        Qualified names registered once it is loaded.
    warnings : list of str
        Problems that did not stop it loading (declared operators missing, ...).
    call_errors : collections.deque of CallError
        The last failures of its operator calls (at most 20).
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
    #: a name for people per unqualified operator name (menus: "Constant-Q")
    titles: dict[str, str] = field(default_factory=dict)
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
        """True once imported and its operators registered."""
        return self.status == "loaded"

    def output_kind(self, operator: str) -> str:
        """Declared output kind of one of its operators (qualified or not); ``"array"`` if none."""
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
        """Its failure (import error, bad metadata or clash) as a :class:`PluginError`."""
        return PluginError(self.error or f"plugin {self.name!r} is {self.status}",
                           plugin=self.name, traceback=self.traceback)


# -- state ----------------------------------------------------------------------------

_lock = threading.RLock()
_state: dict[str, Any] = {"plugins": None, "problems": []}
_extra_dirs: list[Path] = []


def user_plugin_dir() -> Path:
    """The user's plugin folder (it need not exist).

    Returns
    -------
    Path
        ``<user data dir>/plugins``; ``SPECSCOPE_DATA_DIR`` replaces the user data
        dir.
    """
    root = os.environ.get("SPECSCOPE_DATA_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_data_dir("specscope", appauthor=False)
    return Path(root) / "plugins"


def search_paths() -> list[Path]:
    """Plugin folders from ``SPECSCOPE_PLUGINS`` and :func:`add_search_path`, in order.

    Returns
    -------
    list of Path
        The environment's folders (an ``os.pathsep`` list, ``~`` expanded), then
        the added ones.
    """
    env = os.environ.get("SPECSCOPE_PLUGINS", "")
    dirs = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    return dirs + list(_extra_dirs)


def add_search_path(*dirs: str | os.PathLike[str]) -> None:
    """Add plugin folders (``--plugins DIR``); discovery runs again on next use.

    Parameters
    ----------
    *dirs : path-like or str
        Folders of plugin modules or packages.

    Raises
    ------
    BadOption
        A folder does not exist (option ``plugins``).
    """
    with _lock:
        for d in dirs:
            path = Path(d).expanduser()
            if not path.is_dir():
                raise BadOption("plugins", d, "no such folder", label="plugin folder",
                                expected="a folder of plugin modules or packages")
            if path not in _extra_dirs:
                _extra_dirs.append(path)
        _state["plugins"] = None  # rediscover, keeping what is loaded (see discover)


def rescan() -> None:
    """Look for plugins again on next use; loaded plugins stay loaded."""
    with _lock:
        _state["plugins"] = None

def forget(forget_paths: bool = True) -> list[Plugin]:
    """Forget the discovered plugins; return them (so the caller can unload them).

    With ``forget_paths`` the folders given to :func:`add_search_path` are
    forgotten too.  Plugins still loaded are kept by the next discovery.

    Parameters
    ----------
    forget_paths : bool
        Forget the added folders too.

    Returns
    -------
    list of Plugin
        The plugins that were known.
    """
    with _lock:
        known = list((_state["plugins"] or {}).values())
        _state["plugins"] = None
        _state["problems"] = []
        if forget_paths:
            _extra_dirs.clear()
        return known


# -- reading metadata without importing ----------------------------------------------


class _Unreadable(ValueError):
    """A plugin file that cannot be read for metadata: too large, or nested too deep.

    ``filename`` names the file (as :class:`SyntaxError` does).
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(problem)
        self.filename = str(path)


def _read_text(path: Path) -> str:
    """A plugin file's text, refused beyond :data:`MAX_METADATA_BYTES` or the memory budget."""
    size = path.stat().st_size
    most = min(MAX_METADATA_BYTES, memory_budget() // _PARSE_BYTES_PER_BYTE)
    if size > most:
        within = "" if most == MAX_METADATA_BYTES else " within the memory budget"
        raise _Unreadable(path, f"{size} bytes is too large to read without importing it "
                                f"(at most {most}{within})")
    with open(path, "rb") as fh:  # no more than checked, should the file grow
        data = fh.read(MAX_METADATA_BYTES + 1)
    if len(data) > MAX_METADATA_BYTES:
        raise _Unreadable(path, f"it grew past {MAX_METADATA_BYTES} bytes while read")
    return data.decode("utf-8")


def _parse_source(path: Path) -> ast.Module:
    """The syntax tree of a plugin file; an expression nested too deep is :class:`_Unreadable`."""
    text = _read_text(path)
    try:
        return ast.parse(text, filename=str(path))
    except (RecursionError, MemoryError):  # 1+1+... a million times
        raise _Unreadable(path, "an expression nested too deep to parse") from None


def _read_manifest(path: Path) -> dict[str, Any]:
    """A ``plugin.toml``; nesting too deep for the TOML reader is :class:`_Unreadable`."""
    text = _read_text(path)
    try:
        return tomllib.loads(text)
    except (RecursionError, MemoryError):  # [[[... a hundred thousand deep
        raise _Unreadable(path, "nested too deep to parse") from None


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
        tree = _parse_source(path)
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
            meta = _read_manifest(location / _MANIFEST)
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
        kind = "" if isinstance(exc, _Unreadable) else f"{type(exc).__name__}: "
        p.error = (f"plugin {p.name!r}: cannot read its metadata ({Path(where).name}"
                   f"{f', line {line}' if line else ''}): {kind}"
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
    titles = meta.get("titles", {}) or {}
    if isinstance(titles, dict):
        p.titles = {str(k): str(v) for k, v in titles.items() if str(v).strip()}


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
    """Find every plugin (without importing any); cached until a rescan or a reset.

    Sources are searched in the order of :data:`SOURCES`; the first plugin to
    claim a name keeps it, and later ones of that name are clashes (listed by
    :func:`list_plugins`).  A plugin loaded before a rescan is kept as it is.

    Returns
    -------
    dict of str to Plugin
        The plugins by name, clashes left out.
    """
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
            for p in _folder_plugins(shipped, "shipped", "specscope.plugins."):
                p.version = p.version or __version__
                found.append(p)
        found += _entry_point_plugins()
        user = user_plugin_dir()
        if user.is_dir():
            found += _folder_plugins(user, "user folder", MODULE_PREFIX)
        for d in search_paths():
            if not d.is_dir():
                _state["problems"].append(f"plugin folder {d} does not exist "
                                          "(SPECSCOPE_PLUGINS or an added plugin folder)")
                continue
            found += _folder_plugins(d, "path", MODULE_PREFIX)
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
    """Every plugin found, in source order, clashing ones included (for listings, dialogs).

    Returns
    -------
    list of Plugin
        Sorted by source (:data:`SOURCES`), then name; a clash after the plugin
        it clashes with.
    """
    with _lock:
        plugins = discover()
        items = list(plugins.values()) + list(_state.get("clashes", []))
    order = {s: i for i, s in enumerate(SOURCES)}
    return sorted(items, key=lambda p: (order.get(p.source, 9), p.name, p.status == "clash"))


def missing_imports(plugin: Plugin) -> str | None:
    """A module the plugin imports at module level that cannot be found, as one line.

    Read without running the plugin: the ``import`` statements at the top level
    of its files (not those under ``try``/``if``, which may be optional) are
    looked up with :func:`importlib.util.find_spec` by their top-level name.
    Relative imports are inside the plugin and not checked.  A plugin can still
    fail when imported for other reasons; only :func:`~.loading.load` tells.

    Parameters
    ----------
    plugin : Plugin
        A discovered plugin.

    Returns
    -------
    str or None
        ``"plugin 'x' (PATH) cannot be imported: no module named 'y' (x.py, line 3)"``,
        or ``None`` when every such module is found (or the plugin is already
        loaded or failed).
    """
    if plugin.status != "available" or not plugin.path:
        return None
    location = Path(plugin.path)
    try:
        files = _source_files(location, location.is_dir())
    except OSError:
        return None
    for path in files:
        try:
            tree = _parse_source(path)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "__future__" or top in sys.modules:
                    continue
                try:
                    found = importlib.util.find_spec(top) is not None
                except (ImportError, ValueError):
                    found = False
                if not found:
                    return (f"plugin {plugin.name!r} ({plugin.path}) cannot be imported: no "
                            f"module named {top!r} ({path.name}, line {node.lineno})")
    return None


def problems() -> list[str]:
    """Problems of discovery itself (a plugin folder that does not exist, ...).

    Returns
    -------
    list of str
        One line each; empty when there are none.
    """
    discover()
    return list(_state["problems"])


def get_plugin(name: str) -> Plugin:
    """The plugin called ``name`` (its namespace).

    Parameters
    ----------
    name : str
        The plugin's name.

    Returns
    -------
    Plugin
        The discovered plugin (not loaded by this call).

    Raises
    ------
    InputError
        No plugin has this name; the message lists those there are.
    """
    plugins = discover()
    if name not in plugins:
        known = ", ".join(sorted(plugins)) or "none"
        raise InputError(f"plugin {name!r} is not installed (plugins: {known})")
    return plugins[name]


def plugin_of(operator: str) -> Plugin | None:
    """The plugin an operator name belongs to (by its namespace), or None.

    Parameters
    ----------
    operator : str
        A full operator name (``"clicks.detector"``).

    Returns
    -------
    Plugin or None
        The plugin named by the part before the first dot; None for a name
        without a dot or an unknown namespace.
    """
    if not isinstance(operator, str) or "." not in operator:
        return None
    return discover().get(operator.split(".", 1)[0])

# -- output kinds and views -----------------------------------------------------------


def output_kind(operator: str) -> str:
    """Declared output kind of an operator (``"array"`` for built-ins and undeclared).

    Parameters
    ----------
    operator : str
        The operator's full name.

    Returns
    -------
    str
        One of :data:`~specscope.compute.extensions.checks.OUTPUT_KINDS`.
    """
    p = plugin_of(operator)
    return p.output_kind(operator) if p is not None else "array"


def view_title(operator: str) -> str:
    """The name people see for a view (``"Constant-Q"``).

    Parameters
    ----------
    operator : str
        The operator's full name.

    Returns
    -------
    str
        The plugin's ``titles`` entry, else its summary (with the operator's short
        name when the plugin has several views), else the operator's name.
    """
    p = plugin_of(operator)
    if p is None:
        return operator
    short = operator[len(p.name) + 1:] if operator.startswith(p.name + ".") else operator
    if short in p.titles:
        return p.titles[short]
    if not p.summary:
        return operator
    several = sum(p.output_kind(op) == "image" for op in p.operators) > 1
    return f"{p.summary} ({short})" if several else p.summary


def views() -> list[str]:
    """Plugin operators whose output is an ``image`` (alternative spectrogram views).

    Read from metadata: listing views imports no plugin.

    Returns
    -------
    list of str
        Full operator names of available or loaded plugins, in the order of
        :func:`list_plugins`.
    """
    return [op for p in list_plugins() if p.status in ("available", "loaded")
            for op in p.operators if p.output_kind(op) == "image"]
