"""``specscope plugins list [--json]`` and ``plugins check [NAME]``.

The global ``--plugins DIR`` option is :func:`specscope.app.cli.common.add_plugin_option`.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from typing import Any

import numpy as np
from specscope.app.cli.common import apply_plugin_option
from specscope.compute import backend, extensions, operators
from specscope.compute.errors import InputError, SpecscopeError

CHECK_FS = 8000.0
CHECK_N = 8192


# -- list -----------------------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    apply_plugin_option(args)
    if args.load:
        extensions.load_all()
    items = extensions.list_plugins()
    # listing imports nothing; a module-level import that cannot be found is known
    # without running the plugin, and is shown as the failure it will be
    unmet = {id(p): extensions.missing_imports(p) for p in items}
    rows = []
    for p in items:
        d = p.to_dict(traceback=args.traceback)
        if unmet[id(p)]:
            d.update(status="failed", error=unmet[id(p)])
        rows.append(d)
    if args.json:
        json.dump({"plugins": rows, "problems": extensions.problems()}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for p, d in zip(items, rows, strict=True):
        version = f" {p.version}" if p.version else ""
        status = "not loaded yet" if d["status"] == "available" else d["status"]
        print(f"{p.name}{version}  [{p.source}]  {status}  {p.path}")
        if p.summary:
            print(f"    {p.summary}")
        if p.operators:
            ops = ", ".join(f"{o} ({p.output_kind(o)})" if p.output_kind(o) != "array" else o
                            for o in p.operators)
            print(f"    operators: {ops}")
        if d["error"]:
            print(f"    error: {d['error']}")
        for w in p.warnings:
            print(f"    warning: {w}")
        for e in p.call_errors:
            print(f"    call error: {e.message}")
        if args.traceback and p.traceback:
            print("    " + p.traceback.rstrip().replace("\n", "\n    "))
    for problem in extensions.problems():
        print(f"warning: {problem}")
    count = collections.Counter(d["status"] for d in rows)
    failed = count["failed"] + count["clash"]
    line = f"{len(items)} plugins: {count['loaded']} loaded, {failed} failed"
    if count["available"]:
        line += (f", {count['available']} not loaded yet (listing does not import them; "
                 "--load does)")
    print(line)
    return 0


# -- check ----------------------------------------------------------------------------


def test_signals(fs: float = CHECK_FS, n: int = CHECK_N) -> dict[str, np.ndarray]:
    """Tone, chirp, click and noise, float64, for ``plugins check``."""
    t = np.arange(n) / fs
    click = np.zeros(n)
    click[n // 2] = 1.0
    return {
        "tone": 0.5 * np.sin(2 * np.pi * 440.0 * t),
        "chirp": 0.5 * np.sin(2 * np.pi * (100.0 * t + (0.4 * fs - 100.0) / (2 * t[-1])
                                           * t ** 2)),
        "click": click,
        "noise": np.random.default_rng(0).standard_normal(n) * 0.1,
    }


def schema_problems(op: operators.Operator) -> list[str]:
    """What is wrong with an operator's parameter schema (empty when nothing)."""
    out = []
    if not op.summary:
        out.append("no summary")
    if not op.reference:
        out.append("no reference (what it must match)")
    for p in op.params:
        if p.min is not None and p.max is not None and p.min > p.max:
            out.append(f"{p.name}: min={p.min} > max={p.max}")
        if not p.required and p.default is not None:
            try:
                p.validate(p.default, op.name)
            except SpecscopeError as exc:
                out.append(f"{p.name}: the default does not pass its own schema ({exc})")
    json.dumps(op.to_dict())
    return out


def _leaves(v: Any) -> list[np.ndarray]:
    if isinstance(v, (tuple, list)):
        return [a for u in v for a in _leaves(u)]
    if isinstance(v, dict):
        return [a for k in sorted(v) for a in _leaves(v[k])]
    return [np.asarray(backend.to_host(v))]


def _compare(a: Any, b: Any) -> str | None:
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb):
        return f"{len(la)} outputs against {len(lb)}"
    for i, (u, v) in enumerate(zip(la, lb, strict=True)):
        if u.shape != v.shape:
            return f"output {i}: shape {u.shape} against {v.shape}"
        if u.dtype.kind in "fc":
            scale = float(np.nanmax(np.abs(u))) if u.size else 0.0
            if not np.allclose(u, v, rtol=1e-4, atol=1e-6 * max(scale, 1e-30), equal_nan=True):
                err = float(np.nanmax(np.abs(u - v))) if u.size else 0.0
                return f"output {i}: max difference {err:.3g} (scale {scale:.3g})"
        elif not np.array_equal(u, v):
            return f"output {i}: values differ"
    return None


def check_operator(plugin: extensions.Plugin, name: str,
                   backends: list[str] | None = None) -> dict[str, Any]:
    """Run one operator on the test signals on every backend and compare them."""
    op = operators.get(name)
    backends = backends or backend.available_backends()
    row: dict[str, Any] = {"operator": name, "ok": True, "problems": [], "runs": 0,
                           "skipped": []}
    row["problems"] += [f"schema: {s}" for s in schema_problems(op)]
    params = dict(plugin.examples.get(name.split(".", 1)[1], {}))
    missing = [p.name for p in op.params if p.required and p.name not in params]
    if missing:
        row["skipped"].append(f"required parameters without an example: {', '.join(missing)}")
    elif op.input_kind == "sequence":
        row["skipped"].append("takes a list of arrays")
    else:
        inputs = test_signals() if op.takes_input else {"(no input)": None}
        for label, x in inputs.items():
            results = {}
            for b in backends:
                try:
                    if x is None:
                        out = op.run(backend=b, **params)
                    else:
                        out = op.run(backend.to_device(x, b), backend=b, fs=CHECK_FS, **params)
                    results[b] = out
                    row["runs"] += 1
                except SpecscopeError as exc:
                    row["problems"].append(f"{label} on {b}: {exc}")
            ref = results.get("numpy")
            for b, out in results.items():
                if b != "numpy" and ref is not None:
                    diff = _compare(ref, out)
                    if diff:
                        row["problems"].append(f"{label}: {b} differs from numpy: {diff}")
    row["ok"] = not row["problems"]
    return row


def check_plugin(plugin: extensions.Plugin, backends: list[str] | None = None
                 ) -> dict[str, Any]:
    """Load a plugin and check each of its operators (see :func:`check_operator`)."""
    report: dict[str, Any] = {"plugin": plugin.name, "source": plugin.source,
                              "status": plugin.status, "operators": [], "problems": []}
    try:
        extensions.load(plugin.name)
    except extensions.PluginError as exc:
        report["problems"].append(str(exc))
    report["status"] = plugin.status
    if plugin.status == "clash":
        report["problems"] = [plugin.error]
    for name in plugin.loaded_operators:
        report["operators"].append(check_operator(plugin, name, backends))
    report["problems"] += plugin.warnings
    report["ok"] = not report["problems"] and all(r["ok"] for r in report["operators"])
    return report


def _check(args: argparse.Namespace) -> int:
    apply_plugin_option(args)
    if args.name:
        chosen = [p for p in extensions.list_plugins() if p.name == args.name]
        if not chosen:
            known = ", ".join(sorted({p.name for p in extensions.list_plugins()})) or "none"
            raise InputError(f"plugin {args.name!r} is not installed (plugins: {known})")
    else:
        chosen = extensions.list_plugins()
    backends = backend.available_backends()
    reports = [check_plugin(p, backends) for p in chosen]
    if args.json:
        json.dump({"backends": backends, "plugins": reports}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"backends: {', '.join(backends)}")
        for r in reports:
            print(f"{r['plugin']}: {'OK' if r['ok'] else 'FAILED'} ({r['status']})")
            for problem in r["problems"]:
                print(f"    {problem}")
            for o in r["operators"]:
                state = "ok" if o["ok"] else "FAILED"
                print(f"  {o['operator']:<28} {state}  ({o['runs']} runs)")
                for problem in o["problems"]:
                    print(f"      {problem}")
                for s in o["skipped"]:
                    print(f"      skipped: {s}")
    bad = sum(not r["ok"] for r in reports)
    if not args.json:
        print(f"{len(reports)} plugins checked, {bad} failed")
    return 1 if bad else 0


def _add_actions(sub: Any) -> None:
    q = sub.add_parser("list", help="plugins found: source, version, operators, status, errors")
    q.add_argument("--json", action="store_true", help="machine-readable listing")
    q.add_argument("--load", action="store_true",
                   help="import every plugin first (shows every import error; without it, "
                        "only modules that cannot be found are)")
    q.add_argument("--traceback", action="store_true", help="include tracebacks of errors")
    q.set_defaults(func=_list)
    q = sub.add_parser("check", help="run each plugin operator on test signals on every "
                                     "backend, validate its schema, compare the backends")
    q.add_argument("name", nargs="?", help="only this plugin")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_check)


def add_parser(subparsers: Any) -> None:
    """Add the ``plugins`` command (``list``, ``check``) to an argparse subparsers object."""
    p = subparsers.add_parser("plugins", help="list and check plugins")
    _add_actions(p.add_subparsers(dest="plugins_command", metavar="ACTION", required=True))
