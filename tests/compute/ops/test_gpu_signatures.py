"""The CuPy paths call cupy / cupyx with arguments the installed CuPy accepts.

No device is needed: the call sites are found statically (an AST walk over
``compute/ops`` and ``compute/filters/apply.py``: every ``scipy_fn(xp, ...)``
call and every ``xp.`` / ``cp.`` / ``cupyx.`` call, with the operators'
factory closures filling in names like ``f"fft.{name}"``), and the installed
cupy / cupyx functions are read from their source files with ``ast`` too,
because importing ``cupyx.scipy`` without the CUDA libraries fails.  A keyword
the installed function does not take, too many positional arguments, or a
cupyx function missing behind an operator that claims a native GPU path, fails
here instead of on a user's GPU.

Skipped when the cupy wheel is not installed.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from specscope.compute import operators

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted((ROOT / "compute" / "ops").glob("*.py")) + [
    ROOT / "compute" / "filters" / "apply.py"]
#: names that hold the cupy module in the GPU code
CUPY_NAMES = {"xp": "cupy", "cp": "cupy", "cupy": "cupy", "cupyx": "cupyx"}


def _site_root() -> Path | None:
    spec = importlib.util.find_spec("cupy")
    if spec is None or not spec.submodule_search_locations:
        return None
    if importlib.util.find_spec("cupyx") is None:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


SITE = _site_root()
pytestmark = pytest.mark.skipif(SITE is None, reason="the cupy wheel is not installed "
                                "(pip install cupy-cuda12x); no device is needed")


# -- the installed cupy / cupyx, read as source ---------------------------------------


@cache
def _module_ast(modname: str) -> ast.Module | None:
    base = SITE / Path(*modname.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return ast.parse(path.read_text(encoding="utf-8"))
    return None  # compiled (Cython) or absent


def _absolute(modname: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_pkg = (SITE / Path(*modname.split(".")) / "__init__.py").is_file()
    parts = modname.split(".")
    base = parts if is_pkg else parts[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@cache
def installed_def(modname: str, name: str, depth: int = 0):
    """The FunctionDef of ``modname.name`` in the installed sources.

    ``"missing"`` when the module (read as source) does not define or import
    the name, ``None`` when it cannot be read (compiled code: not checked).
    """
    tree = _module_ast(modname)
    if tree is None or depth > 12:
        return None
    star = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
        if isinstance(node, ast.ClassDef) and node.name == name:
            init = [n for n in node.body if isinstance(n, ast.FunctionDef)
                    and n.name == "__init__"]
            return init[0] if init else None
        if isinstance(node, ast.ImportFrom):
            source = _absolute(modname, node)
            for alias in node.names:
                if alias.name == "*":
                    star.append(source)
                elif (alias.asname or alias.name) == name:
                    if _module_ast(f"{source}.{alias.name}") is not None:
                        return None  # a submodule, not a function
                    return installed_def(source, alias.name, depth + 1)
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if isinstance(node.value, ast.Name):
                return installed_def(modname, node.value.id, depth + 1)
            return None  # built at import time: not checked
    for source in star:
        found = installed_def(source, name, depth + 1)
        if found != "missing":
            return found
    return "missing"


def accepts(fn: ast.FunctionDef, n_positional: int, keywords: list[str]) -> list[str]:
    """What is wrong with calling ``fn`` with these arguments ([] when nothing)."""
    a = fn.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    problems = []
    if a.vararg is None and n_positional > len(positional):
        problems.append(f"{n_positional} positional arguments, it takes {len(positional)}")
    names = set(positional[len(a.posonlyargs):]) | {k.arg for k in a.kwonlyargs}
    if a.kwarg is None:
        problems += [f"keyword {k!r} (it takes {', '.join(sorted(names)) or 'none'})"
                     for k in keywords if k not in names]
    return problems


# -- the call sites of our GPU paths ---------------------------------------------------


@dataclass(frozen=True)
class Site:
    where: str
    target: str  # "cupyx.scipy.signal.chirp"
    n_positional: int
    keywords: tuple[str, ...]
    via_scipy_fn: bool


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _path(arg: ast.AST, subst: dict[str, object]) -> str | None:
    """The scipy path a ``scipy_fn`` call names, with closure values substituted."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr):
        out = []
        for v in arg.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) \
                    and v.value.id in subst:
                out.append(str(subst[v.value.id]))
            else:
                return None
        return "".join(out)
    return None


def _device_scipy_fn(call: ast.Call) -> bool:
    """``scipy_fn(xp, ...)``: the namespace argument is the device one on the GPU path."""
    return (isinstance(call.func, ast.Name) and call.func.id == "scipy_fn" and len(call.args) == 2
            and isinstance(call.args[0], ast.Name) and call.args[0].id in CUPY_NAMES)


def sites_in(fn_node: ast.AST, where: str, subst: dict[str, object],
             unresolved: list[str]) -> list[Site]:
    """Every cupy/cupyx call made in ``fn_node`` (aliases of scipy_fn results followed)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and _device_scipy_fn(node.value) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            p = _path(node.value.args[1], subst)
            if p is not None:
                aliases[node.targets[0].id] = p
    out = []
    for node in ast.walk(fn_node):
        if not isinstance(node, ast.Call):
            continue
        kws = tuple(k.arg for k in node.keywords if k.arg is not None)
        npos = sum(not isinstance(a, ast.Starred) for a in node.args)
        if any(isinstance(a, ast.Starred) for a in node.args):
            npos = 0  # unknown count: keywords only
        line = f"{where}:{node.lineno}"
        if isinstance(node.func, ast.Call) and _device_scipy_fn(node.func):
            p = _path(node.func.args[1], subst)
            if p is None:
                unresolved.append(line)
                continue
            out.append(Site(line, "cupyx.scipy." + p, npos, kws, True))
        elif isinstance(node.func, ast.Name) and node.func.id in aliases:
            out.append(Site(line, "cupyx.scipy." + aliases[node.func.id], npos, kws, True))
        else:
            chain = _chain(node.func)
            if chain and chain[0] in CUPY_NAMES and len(chain) > 1:
                out.append(Site(line, ".".join([CUPY_NAMES[chain[0]], *chain[1:]]), npos,
                                kws, False))
    return out


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _def_at(path: Path, lineno: int) -> ast.AST | None:
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.lineno == lineno or any(d.lineno == lineno for d in node.decorator_list)):
            return node
    return None


def native_gpu_functions():
    """``(operator name, file, FunctionDef, closure values)`` of every native CuPy path."""
    out = []
    for op in operators.list_operators():
        for impl in op.implementations.get("cupy", {}).values():
            if not impl.native:
                continue
            fn = inspect.unwrap(impl.fn)
            try:
                path = Path(inspect.getsourcefile(fn)).resolve()
            except TypeError:
                continue
            if path not in {p.resolve() for p in SOURCES}:
                continue  # a plugin: its own tests
            node = _def_at(path, fn.__code__.co_firstlineno)
            assert node is not None, f"{op.name}: no definition at {path}:{fn.__code__.co_firstlineno}"
            closure = inspect.getclosurevars(fn).nonlocals
            out.append((op.name, path, node, dict(closure)))
    return out


def all_sites() -> tuple[list[Site], list[str], list[tuple[str, Site]]]:
    """Module-wide sites, unresolved f-string sites, and the sites per native operator."""
    unresolved: list[str] = []
    sites: list[Site] = []
    for path in SOURCES:
        sites += sites_in(_tree(path), path.relative_to(ROOT).as_posix(), {}, unresolved)
    by_op = []
    resolved_lines = set()
    for name, path, node, closure in native_gpu_functions():
        ignore: list[str] = []
        for s in sites_in(node, path.relative_to(ROOT).as_posix(), closure, ignore):
            by_op.append((name, s))
            resolved_lines.add(s.where)
    unresolved = [u for u in unresolved if u not in resolved_lines]
    return sites + [s for _, s in by_op], unresolved, by_op


def _split(target: str) -> tuple[str, str]:
    mod, _, name = target.rpartition(".")
    return mod, name


def test_the_walk_finds_the_known_gpu_calls():
    sites, _, by_op = all_sites()
    targets = {s.target for s in sites}
    for t in ("cupyx.scipy.signal.sosfilt", "cupyx.scipy.signal.welch",
              "cupyx.scipy.signal.chirp", "cupyx.scipy.fft.dct", "cupyx.scipy.fft.rfft",
              "cupy.fft.rfft"):
        assert t in targets, t
    assert {n for n, _ in by_op} >= {"fft", "dct", "chirp", "sosfilt", "welch"}


def test_every_call_matches_the_installed_signature():
    sites, unresolved, _ = all_sites()
    assert not unresolved, f"scipy_fn paths the walk cannot name: {unresolved}"
    problems = []
    checked = 0
    for s in sorted(set(sites), key=lambda s: (s.where, s.target)):
        fn = installed_def(*_split(s.target))
        if fn is None or fn == "missing":
            continue  # compiled, a module attribute, or missing (next test)
        checked += 1
        problems += [f"{s.where}: {s.target}: {p}"
                     for p in accepts(fn, s.n_positional, list(s.keywords))]
    assert checked > 40
    assert not problems, "calls the installed CuPy rejects:\n" + "\n".join(problems)


def test_native_gpu_paths_call_functions_cupyx_has():
    """A native CuPy implementation must not reach scipy_fn's silent host fallback."""
    _, _, by_op = all_sites()
    missing = sorted({f"{name}: {s.target} ({s.where})" for name, s in by_op
                      if s.via_scipy_fn and installed_def(*_split(s.target)) == "missing"})
    assert not missing, ("native GPU paths calling functions cupyx lacks (give the "
                         "operator a host implementation instead):\n" + "\n".join(missing))


def test_a_wrong_keyword_is_caught():
    tree = ast.parse("def f(x, xp):\n"
                     "    return scipy_fn(xp, 'signal.chirp')(x, 1, 2, 3, complex=True)\n")
    (site,) = sites_in(tree, "example", {}, [])
    fn = installed_def(*_split(site.target))
    assert isinstance(fn, ast.FunctionDef)
    assert accepts(fn, site.n_positional, list(site.keywords))
