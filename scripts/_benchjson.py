"""A benchmark's table as JSON, with the machine and the conditions it was measured in.

The benchmark scripts call :func:`record` when run with ``--json [PATH]``;
``scripts/perf_pages.py`` renders the files into the documentation's performance pages.
Importing this module notes the load average, which :func:`record` writes as the load
before the run.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "performance" / "data"


def _loadavg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


_LOAD_BEFORE = _loadavg()


def start() -> None:
    """Note the load average now as the load before the run (importing notes it too)."""
    global _LOAD_BEFORE
    _LOAD_BEFORE = _loadavg()


def machine() -> dict[str, Any]:
    """The CPU model, the cores and the memory of this machine.

    Returns
    -------
    dict
        ``cpu`` (the model name from ``/proc/cpuinfo``, else :func:`platform.processor`),
        ``cores`` (logical CPUs), ``cores_usable`` (those this process may run on) and
        ``memory_gib`` (``MemTotal`` from ``/proc/meminfo``; None where unknown).
    """
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    memory = round(int(line.split()[1]) / 2**20, 1)
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {"cpu": cpu or platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "cores_usable": usable, "memory_gib": memory}


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except ImportError:
        return None


def command_line(script: str, argv: Sequence[str] | None = None) -> str:
    """The command that runs ``script`` with ``argv`` (default: this process's arguments).

    Parameters
    ----------
    script : str
        The script's file; written relative to the repository root where it is inside it.
    argv : sequence of str, optional
        Its arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    str
        ``python scripts/NAME.py ARGS``, quoted for a POSIX shell.
    """
    path = Path(script).resolve()
    try:
        shown = str(path.relative_to(ROOT))
    except ValueError:
        shown = str(path)
    args = list(sys.argv[1:] if argv is None else argv)
    return shlex.join(["python", shown, *args])


def _table(title: str | None, rows: Sequence[Mapping[str, Any]],
           columns: Sequence[str]) -> dict[str, Any]:
    return {"title": title, "columns": list(columns), "rows": [dict(r) for r in rows]}


def record(name: str, command: str, rows: Sequence[Mapping[str, Any]] | Mapping[str, Any],
           columns: Sequence[str] | Mapping[str, Sequence[str]],
           notes: str | Sequence[str] | None = None, path: str | os.PathLike | None = None
           ) -> Path:
    """Write a benchmark's table(s) and the conditions of the run to a JSON file.

    Parameters
    ----------
    name : str
        The benchmark's name (``bench_engine``): the file's name and its page's.
    command : str
        The command line that ran it (see :func:`command_line`).
    rows : sequence of dict, or dict of them
        One table's rows, each a dict from column name to the value as measured (seconds,
        ratios, counts; None where there is none); or several tables, a dict from each
        table's title to its rows.
    columns : sequence of str, or dict of them
        The column names in order (a unit, where the values have one, in parentheses at the
        end: ``"warm (s)"``, ``"ratio (x)"``); a dict with the same keys as ``rows`` for
        several tables.
    notes : str or sequence of str, optional
        Short lines shown under the tables (a result the tables leave out).
    path : path-like, optional
        Where to write; ``docs/performance/data/NAME.json`` in the repository by default.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        If ``rows`` and ``columns`` do not have the same tables, or a row has a value of a
        column not listed.
    """
    if isinstance(rows, Mapping):
        if not isinstance(columns, Mapping) or list(rows) != list(columns):
            raise ValueError("several tables need columns given per table, same keys as rows")
        tables = [_table(t, rows[t], columns[t]) for t in rows]
    else:
        if isinstance(columns, Mapping):
            raise ValueError("one table's rows need one list of columns")
        tables = [_table(None, rows, columns)]
    for table in tables:
        extra = {k for r in table["rows"] for k in r} - set(table["columns"])
        if extra:
            raise ValueError(f"values of columns not listed: {sorted(extra)}")
    if isinstance(notes, str):
        notes = [notes]
    data = {
        "name": name,
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "load_before": _LOAD_BEFORE,
        "load_after": _loadavg(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "tables": tables,
        "notes": list(notes or []),
    }
    out = Path(path) if path else DATA / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_plain(data), indent=1, allow_nan=False) + "\n")
    print(f"recorded {out}", file=sys.stderr)
    return out


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays as plain numbers and lists, NaN as None."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
