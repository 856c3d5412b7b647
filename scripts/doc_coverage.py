#!/usr/bin/env python3
"""Numpydoc coverage of specscope's public API.

The public API is every name in the ``__all__`` of every public module (no part of its
dotted name starts with an underscore) of ``specscope.compute``, ``specscope.app`` and
``specscope.widgets``, counted once, in the module that
defines it.  Functions and classes count; constants and type aliases do not.

An object is covered when its docstring has the numpydoc sections its signature calls
for: ``Parameters`` when it takes parameters (a class: its constructor's, or an
``Attributes`` section), ``Returns`` or ``Yields`` when a function returns something.

    python scripts/doc_coverage.py [--missing] [--json] [--prefix specscope.compute.io]
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import re
import sys
from dataclasses import dataclass

# plugins/ is loaded by plugin discovery, not imported; its operators are in the operator
# reference
PACKAGES = ("specscope.compute", "specscope.app", "specscope.widgets")
_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Entry:
    """One public object and what its docstring lacks."""

    qualname: str
    kind: str
    missing: tuple[str, ...]

    @property
    def covered(self) -> bool:
        return not self.missing


def public_modules(packages=PACKAGES):
    """Import and yield every public module under ``packages``."""
    for name in packages:
        pkg = importlib.import_module(name)
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, prefix=name + "."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            try:
                yield importlib.import_module(info.name)
            except ImportError:  # an optional extra (cupy, sounddevice) not installed
                continue


def sections(doc: str | None) -> set[str]:
    """The numpydoc section titles in ``doc``."""
    return {m.group(1).strip() for m in _SECTION.finditer(inspect.cleandoc(doc or ""))}


def _parameters(func) -> list[str]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")]


def _returns(func) -> bool:
    try:
        ann = inspect.signature(func).return_annotation
    except (TypeError, ValueError):
        return False
    if ann is inspect.Signature.empty:
        return False
    return ann not in (None, "None", type(None))


def check(obj) -> tuple[str, tuple[str, ...]] | None:
    """The kind of ``obj`` and the sections its docstring lacks; None if not counted."""
    found = sections(inspect.getdoc(obj))
    missing = []
    if inspect.isclass(obj):
        if not (obj.__doc__ or "").strip():
            return "class", ("docstring",)
        init = obj.__dict__.get("__init__")
        params = _parameters(obj) if init is not None or hasattr(obj, "__dataclass_fields__") \
            else []
        if issubclass(obj, BaseException) and init is None:
            params = []
        if params and not found & {"Parameters", "Attributes"}:
            missing.append("Parameters")
        return "class", tuple(missing)
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or (callable(obj) and hasattr(
        obj, "__wrapped__"
    )):
        if not (obj.__doc__ or "").strip():
            return "function", ("docstring",)
        if _parameters(obj) and "Parameters" not in found:
            missing.append("Parameters")
        if _returns(obj) and not found & {"Returns", "Yields"}:
            missing.append("Returns")
        return "function", tuple(missing)
    return None


def collect(packages=PACKAGES, prefix: str = "") -> list[Entry]:
    """Every counted public object, once, under the module that defines it."""
    seen: dict[int, Entry] = {}
    for module in public_modules(packages):
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if obj is None or id(obj) in seen:
                continue
            home = getattr(obj, "__module__", module.__name__) or module.__name__
            if not home.startswith("specscope."):
                continue
            result = check(obj)
            if result is None:
                continue
            qual = f"{home}.{getattr(obj, '__qualname__', name)}"
            seen[id(obj)] = Entry(qual, result[0], result[1])
    entries = sorted(seen.values(), key=lambda e: e.qualname)
    return [e for e in entries if e.qualname.startswith(prefix)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list what is not covered")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--prefix", default="", help="only objects under this module")
    args = parser.parse_args(argv)
    entries = collect(prefix=args.prefix)
    covered = sum(e.covered for e in entries)
    share = covered / len(entries) if entries else 1.0
    if args.json:
        print(json.dumps({"objects": len(entries), "covered": covered, "share": share}))
    else:
        if args.missing:
            for e in entries:
                if not e.covered:
                    print(f"{e.qualname}  ({e.kind}; lacks {', '.join(e.missing)})")
        print(f"{covered} of {len(entries)} public objects have their numpydoc sections "
              f"({share:.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
