#!/usr/bin/env python
"""Run scipy's own signal tests with each scipy name swapped for the operator of that name.

    .venv/bin/python scripts/scipy_suite.py [--jobs 2] [--files test_czt.py ...]
                                            [--json results.jsonl] [--passes out.txt]

The tests are the ones installed with scipy (``scipy/signal/tests``, non-slow);
see ``tests/scipy_swap``.  Prints "N of M tests that call a swapped function
pass (P %)", the counts per swapped function, and the failures grouped by
cause.  ``--passes`` writes the passing test ids (one a line, sorted): the
committed list ``tests/scipy_swap/expected_passes.txt`` is made this way.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


def test_dir() -> Path:
    import scipy.signal.tests as t
    return Path(t.__file__).parent


def run(files: list[str], jobs: int, results: Path, extra: list[str] | None = None,
        timeout: float | None = None) -> None:
    """Run the swapped tests of ``files`` (all when empty) into ``results`` (JSON lines)."""
    tdir = test_dir()
    if not files:
        files = sorted(p.name for p in tdir.glob("test_*.py"))
    groups: list[list[str]] = [[] for _ in range(max(1, jobs))]
    for i, f in enumerate(files):
        groups[i % len(groups)].append(f)
    procs = []
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, group in enumerate(g for g in groups if g):
            part = Path(tmp) / f"part{i}.jsonl"
            parts.append(part)
            env = dict(os.environ, SPECSCOPE_SWAP_RESULTS=str(part),
                       PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
                       PYTHONDONTWRITEBYTECODE="1")
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-p", "scipy_swap.plugin", "-m", "not slow and not xslow",
                   "-o", "addopts=", "--rootdir", str(tdir.parent.parent), "-W", "ignore",
                   "--tb=no", "-rN", *(extra or []), *[str(tdir / f) for f in group]]
            procs.append(subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        for p in procs:
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        with open(results, "w", encoding="utf-8") as out:
            for part in parts:
                if part.exists():
                    out.write(part.read_text(encoding="utf-8"))


def load(results: Path) -> list[dict]:
    return [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def counted(rows: list[dict]) -> list[dict]:
    """Tests that call a swapped function and pass or fail (skips and xfails left out)."""
    return [r for r in rows if r["called"] and r["outcome"] in ("passed", "failed")]


def cause(row: dict) -> str:
    """A short cause for a failed test: the operator's refusal, or what the test saw."""
    err = row.get("error")
    fail = row.get("failure") or ""
    if fail.startswith(("Failed: DID NOT", "AssertionError: Regex")):
        err = None  # an expected refusal came, a later one did not (or said other words)
    if err:
        name, _, rest = err.partition(": ")
        kind, _, msg = rest.partition(": ")
        msg = re.sub(r"array\(.*", "array(...)", msg)
        msg = re.sub(r"[-+]?\d[\d.e+-]*", "#", msg)[:110]
        if fail.startswith(("Failed: DID NOT RAISE", "AssertionError: Regex", "AssertionError")):
            return f"{name}: raised {kind} where the test expected otherwise: {msg}"
        return f"{name}: {kind}: {msg}"
    text = re.sub(r"[-+]?\d[\d.e+-]*", "#", fail)[:90]
    return f"{'/'.join(row['called'])}: {text}"


def report(rows: list[dict], top: int = 60) -> tuple[int, int]:
    rows_c = counted(rows)
    n_pass = sum(r["outcome"] == "passed" for r in rows_c)
    m = len(rows_c)
    per_fn: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for r in rows_c:
        for name in r["called"]:
            per_fn[name][0] += 1
            per_fn[name][1] += r["outcome"] == "passed"
    print("swapped function: tests calling it, of them passing")
    for name in sorted(per_fn):
        run_, ok = per_fn[name]
        print(f"  {name:22s} {run_:5d} {ok:5d}")
    causes = collections.Counter(cause(r) for r in rows_c if r["outcome"] == "failed")
    print("\nfailures by cause:")
    for c, k in causes.most_common(top):
        print(f"  {k:4d}  {c}")
    if len(causes) > top:
        print(f"  ... and {len(causes) - top} more causes")
    pct = 100.0 * n_pass / m if m else 0.0
    print(f"\n{n_pass} of {m} tests that call a swapped function pass ({pct:.1f} %); "
          f"{len(rows)} tests ran in all")
    return n_pass, m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="pytest processes (default 2)")
    ap.add_argument("--files", nargs="*", default=[], help="test files (default: all)")
    ap.add_argument("--json", type=Path, help="keep the per-test results (JSON lines) here")
    ap.add_argument("--from-json", type=Path, help="report on results of an earlier run")
    ap.add_argument("--passes", type=Path, help="write the passing test ids here")
    ap.add_argument("--top", type=int, default=60, help="causes to list")
    args = ap.parse_args(argv)
    if args.from_json:
        results = args.from_json
    else:
        results = args.json or Path(tempfile.mkstemp(suffix=".jsonl")[1])
        run(args.files, args.jobs, results)
    rows = load(results)
    report(rows, args.top)
    if args.passes:
        ids = sorted(r["test"] for r in counted(rows) if r["outcome"] == "passed")
        args.passes.write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
