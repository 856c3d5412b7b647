"""Pages generated at build time (run by mkdocs-gen-files).

- ``reference/cli.md``: every command and option, from the argparse parsers;
- ``reference/operators.md``: every operator, from the registry, with the reference it
  matches and the tolerance its parity test holds it to;
- ``reference/api/``: one page per room of the public API (the ``__all__`` of each public
  module), rendered by mkdocstrings from the numpydoc docstrings;
- ``performance/``: the benchmark pages, from the JSON the benchmarks write.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path

import mkdocs_gen_files

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("specscope.compute", "specscope.app", "specscope.widgets")
def _md(text: object) -> str:
    """``text`` safe in a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


# ---------------------------------------------------------------------------------- CLI


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar or action.dest.upper()
                if isinstance(metavar, tuple):
                    metavar = " ".join(metavar)
                name += f" `{metavar}`"
        else:
            name = f"`{action.metavar or action.dest}`"
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS) or action.nargs == 0 \
            else f"`{default}`"
        choices = ", ".join(f"`{c}`" for c in action.choices) if action.choices else ""
        help_text = (action.help or "") % {"default": default, "prog": parser.prog} \
            if action.help and "%(" in action.help else (action.help or "")
        rows.append(f"| {name} | {_md(help_text)} | {shown} | {choices} |")
    return rows


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _command_section(name: str, parser: argparse.ArgumentParser, depth: int) -> list[str]:
    out = [f"{'#' * depth} `{name}`", ""]
    if parser.description:
        out += [parser.description, ""]
    usage = parser.format_usage().replace("usage: ", "").strip()
    out += ["```text", usage, "```", ""]
    rows = _option_rows(parser)
    if rows:
        out += ["| argument | what it does | default | choices |", "|---|---|---|---|", *rows,
                ""]
    if parser.epilog:
        out += [parser.epilog, ""]
    for sub_name, sub in _subparsers(parser).items():
        out += _command_section(f"{name} {sub_name}", sub, min(depth + 1, 4))
    return out


def cli_page() -> str:
    from specscope.app.cli import COMMANDS, build_parser

    lines = [
        "# Command line",
        "",
        "Every command of `specscope`, with its options, generated from the parsers the "
        "command line runs. `specscope COMMAND --help` prints the same. Bad input ends with "
        "exit status 2 and one line naming the problem; `--debug` shows the traceback.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [f"| [`{n}`](#{n}) | {_md(c.help)} |" for n, c in COMMANDS.items()]
    lines += ["", "## Global options", ""]
    lines += ["| argument | what it does | default | choices |", "|---|---|---|---|"]
    lines += _option_rows(build_parser("info"))
    lines.append("")
    for name in COMMANDS:
        full = build_parser(name)
        lines += _command_section(name, _subparsers(full)[name], 2)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- operators


def _parity_tolerances() -> dict[str, str]:
    """The tolerance each operator's parity test states, by operator name."""
    tests = ROOT / "tests" / "compute" / "ops"  # the parity tables and their _parity.py
    if importlib.util.find_spec("pytest") is None:
        return {}
    sys.path.insert(0, str(tests))
    found: dict[str, str] = {}
    try:
        for path in sorted(tests.glob("test_ops_parity_*.py")):
            spec = importlib.util.spec_from_file_location(f"_docs_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception:  # noqa: BLE001 - a table that cannot load leaves the default
                continue
            for case in getattr(module, "CASES", ()):
                found[case.op] = (f"float64 rtol {case.rtol64:g}, atol {case.atol64:g}; "
                                  f"float32 rtol {case.rtol32:g}, atol {case.atol32:g}"
                                  if case.float32 else
                                  f"float64 rtol {case.rtol64:g}, atol {case.atol64:g}")
    finally:
        sys.path.remove(str(tests))
    return found


def operators_page() -> str:
    from specscope.compute import operators

    items = operators.describe(None)
    tolerances = _parity_tolerances()
    families = sorted({i["family"] for i in items})
    lines = [
        "# Operators",
        "",
        f"The {len(items)} operators of the operator core, by family, generated from the "
        "registry. Each names the reference it matches (the parity tests run it beside the "
        "reference on empty, single-sample, odd, prime and non-power-of-two lengths, in "
        "float32 and float64); the tolerance is relative to the largest reference value. "
        "*Backends* are the array libraries it runs on; *GPU* says whether the CuPy path is "
        "native or copies to the host. `specscope ops` lists the same; "
        "`specscope.compute.call(name, x, **params)` runs one.",
        "",
        " · ".join(f"[{f}](#{f.replace('_', '-')})" for f in families),
        "",
    ]
    for family in families:
        lines += [f"## {family.replace('_', '-')}", ""]
        for item in (i for i in items if i["family"] == family):
            lines += [f"### `{item['name']}`", "", _md(item["summary"]) or "", ""]
            facts = []
            if item["reference"]:
                facts.append(f"**Reference** `{item['reference']}`")
            tol = tolerances.get(item["name"])
            if tol:
                facts.append(f"**Tolerance** {tol}")
            facts.append(f"**Backends** {', '.join(item['backends'])}")
            facts.append(f"**GPU** {item['gpu']}")
            if item["streamable"]:
                facts.append("**Streams** with carried state")
            if item["history"]:
                facts.append(f"**History** {item['history']} samples")
            lines += [" · ".join(facts), ""]
            if item["params"]:
                lines += ["| parameter | type | default | range or choices | unit | help |",
                          "|---|---|---|---|---|---|"]
                for p in item["params"]:
                    default = "required" if p["required"] else f"`{p['default']!r}`"
                    rng = ""
                    if p["choices"]:
                        rng = ", ".join(f"`{c}`" for c in p["choices"])
                    elif p["min"] is not None or p["max"] is not None:
                        lo = "" if p["min"] is None else p["min"]
                        hi = "" if p["max"] is None else p["max"]
                        rng = f"{lo} … {hi}"
                    lines.append(f"| `{p['name']}` | {p['type']} | {_md(default)} | "
                                 f"{_md(rng)} | {p['unit'] or ''} | {_md(p['help'])} |")
                lines.append("")
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------- API


def public_modules() -> dict[str, list[str]]:
    """Public modules with an ``__all__``, grouped by room (the package they live in)."""
    rooms: dict[str, list[str]] = {}
    for top in ROOMS:
        pkg = importlib.import_module(top)
        names = [top] + [i.name for i in pkgutil.walk_packages(pkg.__path__, prefix=top + ".")]
        for name in names:
            if any(part.startswith("_") for part in name.split(".")):
                continue
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            if not getattr(module, "__all__", None):
                continue
            is_pkg = hasattr(module, "__path__")
            room = name if is_pkg else name.rsplit(".", 1)[0]
            rooms.setdefault(room, []).append(name)
    return rooms


def api_pages() -> dict[str, str]:
    rooms = public_modules()
    pages = {}
    index = [
        "# Python API",
        "",
        "Everything public, room by room: the names in the `__all__` of each public module, "
        "with their numpydoc docstrings. `specscope.compute` is the Qt-free core a notebook, "
        "the command line and a cluster worker use; `specscope.app` and `specscope.widgets` "
        "are the front-ends and their widgets.",
        "",
        "| room | modules |",
        "|---|---|",
    ]
    nav = []
    for room in sorted(rooms):
        page = f"{room}.md"
        modules = rooms[room]
        body = [f"# `{room}`", ""]
        for module in modules:
            if module != room:
                body += [f"## `{module}`", ""]
            body += [f"::: {module}", "    options:",
                     "      show_root_heading: false",
                     "      show_root_toc_entry: false",
                     f"      heading_level: {2 if module == room else 3}", ""]
        pages[page] = "\n".join(body)
        short = ", ".join(f"`{m.rsplit('.', 1)[1]}`" for m in modules if m != room)
        index.append(f"| [`{room}`]({page}) | {short} |")
        nav.append(f"* [{room}]({page})")
    pages["index.md"] = "\n".join(index) + "\n"
    pages["SUMMARY.md"] = "* [Overview](index.md)\n" + "\n".join(nav) + "\n"
    return pages


# ------------------------------------------------------------------------------ write


def _performance_pages() -> dict[str, str]:
    path = ROOT / "scripts" / "perf_pages.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location("_docs_perf_pages", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.pages()


def main() -> None:
    with mkdocs_gen_files.open("reference/cli.md", "w") as f:
        f.write(cli_page())
    with mkdocs_gen_files.open("reference/operators.md", "w") as f:
        f.write(operators_page())
    for name, text in api_pages().items():
        with mkdocs_gen_files.open(f"reference/api/{name}", "w") as f:
            f.write(text)
    for name, text in _performance_pages().items():
        with mkdocs_gen_files.open(name, "w") as f:
            f.write(text)


main()
