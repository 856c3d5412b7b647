"""The layering of DESIGN.md: compute is Qt-free; import-linter contracts hold."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_compute_imports_no_qt_in_a_fresh_interpreter():
    code = ("import sys, specscope.compute, specscope.compute.io, specscope.compute.output.spectrogram\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PyQt6', 'PySide6', 'pyqtgraph') or m.startswith(('specscope.app', "
            "'specscope.widgets')))\n"
            "print(','.join(bad))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "", f"compute imported GUI modules: {r.stdout}"


_GUI = ("PyQt6", "PySide6", "pyqtgraph")
_GUI_ROOMS = ("specscope.widgets", "specscope.app.qt", "specscope.app.desktop",
              "specscope.app.notebook")


def _cli_imports(argv: list[str]) -> tuple[list[str], list[str]]:
    """(GUI modules, command modules) a fresh interpreter imports to run ``specscope argv``."""
    code = ("import sys, io, contextlib\nfrom specscope.app.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            f"gui = [m for m in sys.modules if m.split('.')[0] in {_GUI!r} "
            f"or m.startswith({_GUI_ROOMS!r})]\n"
            "cmds = [m for m in sys.modules if m.startswith('specscope.app.cli.commands.')]\n"
            "print(','.join(sorted(gui)) + '|' + ','.join(sorted(cmds)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    gui, cmds = r.stdout.strip().splitlines()[-1].split("|")
    return [m for m in gui.split(",") if m], [m for m in cmds.split(",") if m]


@pytest.mark.slow
def test_cli_help_and_every_commands_help_import_no_qt_and_one_command_module():
    from specscope.app.cli import COMMANDS

    gui, cmds = _cli_imports(["--help"])
    assert gui == [] and cmds == [], (gui, cmds)
    for name, row in COMMANDS.items():
        gui, cmds = _cli_imports([name, "--help"])
        assert gui == [], f"specscope {name} --help imported {gui}"
        assert cmds == [f"specscope.app.cli.commands.{row.module}"], (name, cmds)


@pytest.mark.slow
def test_cli_info_imports_no_qt(example_path):
    gui, cmds = _cli_imports(["info", str(example_path)])
    assert gui == [] and cmds == ["specscope.app.cli.commands.info"], (gui, cmds)


def test_command_table_help_is_the_help_each_command_module_gives():
    import argparse

    from specscope.app.cli import COMMANDS, command_module

    for name, row in COMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        command_module(name).add_parser(sub)
        (action,) = sub._choices_actions  # the one subcommand the module added
        assert (action.dest, action.help) == (name, row.help)


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                              os.environ.get("PATH", "")]))
    assert exe, "lint-imports (import-linter) is not installed: install the dev extra"
    r = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stdout[-2000:]
    assert "0 broken" in r.stdout
    kept = int(r.stdout.split("Contracts: ")[1].split(" kept")[0])
    assert kept >= 5, r.stdout[-800:]


# -- the house: no import cycles, no private reaches, no oversized modules -----------------

import ast  # noqa: E402

PACKAGES = {"app": "specscope.app", "compute": "specscope.compute",
            "widgets": "specscope.widgets", "plugins": "specscope.plugins"}
MAX_LINES = 1000  # one cap for a module, a test or a script: files split by concept


def _modules() -> dict[str, Path]:
    """Every specscope module name -> its file."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _import_facts():
    """(edges, private reaches) over all modules, function-level imports included."""
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    reaches: list[str] = []

    def package_of(m: str) -> str:
        return m if modules[m].name == "__init__.py" else m.rsplit(".", 1)[0]

    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(module, path, node)
                if not target.startswith("specscope."):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in modules:
                        edges[module].add(sub)
                        aliases[alias.asname or alias.name] = sub
                        hidden = [p for p in sub.split(".") if _is_private(p)]
                        if hidden and not module.startswith(package_of(sub)):
                            reaches.append(f"{module} imports private module {sub}")
                    else:
                        if target in modules:
                            edges[module].add(target)
                        if _is_private(alias.name) and target != module:
                            reaches.append(f"{module} imports {target}.{alias.name}")
                if target in modules:
                    hidden = [p for p in target.split(".") if _is_private(p)]
                    if hidden and not module.startswith(package_of(target)):
                        reaches.append(f"{module} imports from private module {target}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        edges[module].add(alias.name)
                        if alias.asname:
                            aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and _is_private(node.attr)
                    and aliases[node.value.id] != module):
                reaches.append(f"{module}:{node.lineno} touches "
                               f"{aliases[node.value.id]}.{node.attr}")
            if isinstance(node, ast.Attribute) and node.attr == "__wrapped__":
                # the undecorated function of an operator is reached through its public API
                reaches.append(f"{module}:{node.lineno} reaches __wrapped__")
    return modules, edges, reaches


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


@pytest.mark.slow
def test_no_import_cycles_between_modules():
    _, edges, _ = _import_facts()
    cycles = _cycles(edges)
    assert not cycles, "import cycles (function-level imports count):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle():
    # the check above can fail: a two-module loop and a self-contained chain
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow
def test_no_module_reaches_into_another_modules_private_names():
    _, _, reaches = _import_facts()
    assert not reaches, "private names used across modules:\n" + "\n".join(reaches)


def test_no_source_file_is_over_1000_lines():
    def too_long(folders, limit):
        return {str(p.relative_to(ROOT)): n for folder in folders
                for p in (ROOT / folder).rglob("*.py")
                if (n := len(p.read_text().splitlines())) > limit}

    long = too_long((*PACKAGES, "tests", "scripts"), MAX_LINES)
    assert not long, f"files over {MAX_LINES} lines: {long}"


def test_batch_work_lives_in_its_room_not_flat_in_compute():
    """Running work over many inputs is one room, ``compute/batch/``, with its own contract."""
    flat = sorted(p.name for p in (ROOT / "compute").glob("*.py")
                  if p.stem.startswith(("batch", "detect_parts", "heap")))
    assert flat == [], f"batch modules outside compute/batch/: {flat}"
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    batch = [c for c in contracts["contracts"]
             if c.get("containers") == ["specscope.compute.batch"]]
    assert len(batch) == 1, "the batch room has no contract of its own"
    named = {n.strip() for layer in batch[0]["layers"] for n in layer.split("|")}
    room = {p.stem for p in (ROOT / "compute" / "batch").glob("*.py")} - {"__init__"}
    assert room == named, f"modules of compute/batch/ not in its layers: {room ^ named}"


def test_test_modules_have_names_of_their_own():
    """pytest imports test modules by their base name (rootdir, no packages): two files of
    one name in different folders shadow each other's helpers."""
    from collections import Counter

    names = Counter(p.name for p in (ROOT / "tests").rglob("*.py") if p.name != "__init__.py"
                    and p.name != "conftest.py")
    assert [n for n, k in names.items() if k > 1] == []
