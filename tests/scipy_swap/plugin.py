"""pytest plugin: run scipy's own signal tests with scipy names swapped for operators.

Load it with ``-p scipy_swap.plugin`` (``tests`` on ``sys.path``) when running
``--pyargs scipy.signal.tests``.  Every collected test module of
``scipy.signal.tests`` gets its globals swapped (:func:`swap.patch_namespace`),
and so do a parametrised test's arguments.  Each test's outcome is written,
with whether it called a swapped function and the first exception such a call
raised, as one JSON line per test to the file named by the environment
variable ``SPECSCOPE_SWAP_RESULTS``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from . import swap

_patched: set[int] = set()
_out: Any = None
_current: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    global _out
    path = os.environ.get("SPECSCOPE_SWAP_RESULTS")
    if path:
        _out = open(path, "w", encoding="utf-8")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _out is not None:
        _out.close()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    swap.swapped()
    for item in items:
        module = getattr(item, "module", None)
        if module is None or id(module) in _patched:
            continue
        if not module.__name__.startswith("scipy.signal.tests"):
            continue
        _patched.add(id(module))
        swap.patch_namespace(vars(module))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    swap.CALLS.clear()
    funcargs = getattr(item, "funcargs", None)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for key, value in list(callspec.params.items()):
            new = swap.replacement(value)
            if new is not value:
                callspec.params[key] = new
    if funcargs:
        swap.patch_namespace(funcargs)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    swap.patch_namespace(pyfuncitem.funcargs)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    nodeid = item.nodeid
    row = _current.get(nodeid)
    if row is None:
        row = _current[nodeid] = {"test": nodeid, "outcome": "passed", "called": [],
                                  "error": None, "failure": None}
    if report.failed:
        row["outcome"] = "failed"
        if row["failure"] is None and call.excinfo is not None:
            text = " ".join(str(call.excinfo.value).split())[:300]
            row["failure"] = f"{call.excinfo.type.__name__}: {text}"
    elif report.skipped and report.when in ("setup", "call"):
        row["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
    elif report.passed and hasattr(report, "wasxfail") and report.when == "call":
        row["outcome"] = "xpassed"
    for name, exc in swap.CALLS:
        if name not in row["called"]:
            row["called"].append(name)
        if exc is not None and row["error"] is None:
            text = " ".join(str(exc).split())[:300]
            row["error"] = f"{name}: {type(exc).__name__}: {text}"
    swap.CALLS.clear()
    if report.when == "teardown":
        del _current[nodeid]
        if _out is not None:
            _out.write(json.dumps(row) + "\n")
            _out.flush()
