"""Automatic backend and implementation choice, remembered like FFTW's wisdom.

``backend="auto"`` resolves, per (operator, size class, dtype), to the
implementation that was fastest when the candidates were timed once on this
machine (:func:`choose`); the choice is kept in :func:`wisdom_path`.  Every
call's time is recorded (:func:`record`, :func:`profile`, :func:`stats`).

See docs/explanation/rooms/operators.md.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import backend as _backend
from .. import jsonsafe
from ..errors import InputError, SpecscopeError
from ..paths import cache_dir
from ..types import TuneDtype, choices

if TYPE_CHECKING:
    from .registry import Implementation, Operator

__all__ = [
    "SMALL_ELEMENTS",
    "TUNE_DTYPES",
    "TUNE_SIZES",
    "Profile",
    "choose",
    "enabled",
    "forget",
    "load_wisdom",
    "profile",
    "record",
    "reset_stats",
    "set_enabled",
    "size_class",
    "stats",
    "tune_operators",
    "wisdom_path",
]

#: inputs with fewer elements stay on the CPU: a copy to the GPU and back costs
#: more than the work (tens of microseconds per transfer and kernel launch)
SMALL_ELEMENTS = 1 << 16
WISDOM_VERSION = 1
#: timing stops after this many repeats or this many seconds per candidate
_REPEATS = 3
_BUDGET_S = 0.25
#: what :func:`tune_operators` times by default: element counts and dtypes
TUNE_SIZES = (1 << 12, 1 << 16, 1 << 20, 1000, 48000)
TUNE_DTYPES: tuple[TuneDtype, ...] = ("float32", "float64")

_lock = threading.RLock()
_state: dict[str, Any] = {"wisdom": None, "path": None, "enabled": None}


# -- settings and storage -------------------------------------------------------------


def wisdom_path() -> Path:
    """The JSON file holding remembered choices.

    Returns
    -------
    Path
        ``autotune.json`` in the user cache folder (``SPECSCOPE_CACHE_DIR``
        overrides it).
    """
    return cache_dir() / "autotune.json"


def enabled() -> bool:
    """Whether ``backend="auto"`` times candidates and uses remembered choices.

    Returns
    -------
    bool
        The value of :func:`set_enabled` when one was set; else False when
        ``SPECSCOPE_NO_AUTOTUNE`` is set (non-empty, not ``0``), True otherwise.
    """
    if _state["enabled"] is not None:
        return bool(_state["enabled"])
    return os.environ.get("SPECSCOPE_NO_AUTOTUNE", "") in ("", "0")


def set_enabled(value: bool | None) -> None:
    """Turn tuning on or off for this process.

    Parameters
    ----------
    value : bool or None
        True or False; None goes back to the environment
        (``SPECSCOPE_NO_AUTOTUNE``).
    """
    _state["enabled"] = value


def _fingerprint() -> str:
    return f"{platform.machine()}|{'+'.join(_backend.available_backends())}"


def load_wisdom() -> dict[str, Any]:
    """The remembered choices (read once per cache path; a bad file is ignored).

    Returns
    -------
    dict
        Key ``"operator|size class|dtype|home backend|machine|backends"`` -> the choice
        (``backend``, ``variant``, the ``seconds`` of each candidate, ``when``);
        empty when the file is missing, unreadable or of another version.  The
        same dict is returned until the cache path changes.
    """
    path = wisdom_path()
    with _lock:
        if _state["wisdom"] is not None and _state["path"] == path:
            return _state["wisdom"]
        entries: dict[str, Any] = {}
        try:
            data = jsonsafe.load_file(path, what="wisdom file") if path.is_file() else {}
            if data.get("version") == WISDOM_VERSION and isinstance(data.get("entries"), dict):
                entries = data["entries"]
        except (OSError, ValueError, AttributeError, SpecscopeError):
            pass  # missing or corrupt: start afresh, the next save replaces it
        _state["wisdom"], _state["path"] = entries, path
        return entries


def _save() -> None:
    path = wisdom_path()
    with _lock:
        entries = load_wisdom()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".autotune-", suffix=".json", dir=path.parent)
            with os.fdopen(fd, "w") as fh:
                json.dump({"version": WISDOM_VERSION, "entries": entries}, fh, indent=1,
                          sort_keys=True)
            os.replace(tmp, path)  # atomic: a crash never leaves half a file
        except OSError:
            pass  # a read-only cache costs a re-tune next time, nothing more


def forget() -> None:
    """Drop all remembered choices (memory and file)."""
    with _lock:
        _state["wisdom"], _state["path"] = {}, wisdom_path()
        with contextlib.suppress(OSError):
            wisdom_path().unlink()


# -- size classes ---------------------------------------------------------------------


def _length_kind(n: int) -> str:
    if n > 0 and n & (n - 1) == 0:
        return "p2"
    import scipy.fft

    return "fast" if n > 0 and scipy.fft.next_fast_len(n) == n else "rough"


def size_class(x: Any) -> str:
    """``"2^k/kind"``: element count rounded up to a power of two, last-axis kind.

    Parameters
    ----------
    x : array or None
        The input.

    Returns
    -------
    str
        ``2^k`` with ``k = ceil(log2(size))``, then the kind of the last axis's
        length: ``p2`` (a power of two), ``fast`` (5-smooth) or ``rough``;
        ``"none"`` for no input.

    Examples
    --------
    >>> import numpy as np
    >>> size_class(np.zeros(4096)), size_class(np.zeros(4099)), size_class(np.zeros(1000))
    ('2^12/p2', '2^13/rough', '2^10/fast')
    """
    if x is None:
        return "none"
    n = int(x.size)
    bucket = 0 if n <= 1 else math.ceil(math.log2(n))
    last = int(x.shape[-1]) if x.ndim else 1
    return f"2^{bucket}/{_length_kind(last)}"


def _key(op: Operator, x: Any, where: str) -> str:
    dtype = "none" if x is None else str(x.dtype)
    return f"{op.name}|{size_class(x)}|{dtype}|{where}|{_fingerprint()}"


# -- choosing -------------------------------------------------------------------------


def _time_candidate(op: Operator, impl: Implementation, x: Any, values: dict[str, Any],
                    fs: float | None, home: str) -> float:
    """Best-of-few wall time of one candidate, transfers to and from ``home`` included."""
    def once() -> None:
        out = op.execute(impl, x, values, fs)
        if impl.backend != home:
            _backend.to_device(out, home)
        _backend.synchronize(impl.backend)

    once()  # warm-up: plans, kernel compilation, caches
    best = math.inf
    start = time.perf_counter()
    for _ in range(_REPEATS):
        t0 = time.perf_counter()
        once()
        best = min(best, time.perf_counter() - t0)
        if time.perf_counter() - start > _BUDGET_S:
            break
    return best


def _candidates(op: Operator, x: Any) -> tuple[list[Implementation], str]:
    home = "numpy" if x is None else _backend.backend_of(x)
    if home == "cupy":
        return op.candidates(["cupy"]) or op.candidates(["cupy"], native_only=False), home
    backends = ["numpy"]
    if x is not None and x.size >= SMALL_ELEMENTS and "cupy" in _backend.available_backends():
        backends.append("cupy")
    return op.candidates(backends), home


def choose(op: Operator, x: Any, values: dict[str, Any], fs: float | None) -> Implementation:
    """The implementation ``backend="auto"`` runs for this input (timing it if new).

    With tuning off, or one candidate, no timing happens.  Otherwise a
    remembered choice for the input's key is used, or every candidate is timed
    (best of a few runs, copies to and from the input's backend included) and
    the fastest is remembered.

    Parameters
    ----------
    op : Operator
        The operator called.
    x : array or None
        The checked input (a list of arrays counts as no input).
    values : dict
        The validated parameters.
    fs : float or None
        The sample rate in Hz, or None.

    Returns
    -------
    Implementation
        One of ``op``'s implementations on the input's backend (or, for host
        inputs of at least :data:`SMALL_ELEMENTS` elements with a GPU, on CuPy).
    """
    if x is not None and not hasattr(x, "dtype"):
        x = None  # a list of arrays (wavelet coefficients): no size class, CPU default
    home = "numpy" if x is None else _backend.backend_of(x)
    if not enabled():
        return op.get_implementation(home)
    cands, home = _candidates(op, x)
    if not cands:
        return op.get_implementation(home)
    if len(cands) == 1:
        return cands[0]
    key = _key(op, x, home)
    wisdom = load_wisdom()
    entry = wisdom.get(key)
    if entry:
        for impl in cands:
            if impl.backend == entry.get("backend") and impl.variant == entry.get("variant"):
                return impl
    times: dict[str, float] = {}
    best: Implementation | None = None
    for impl in cands:
        try:
            t = _time_candidate(op, impl, x, values, fs, home)
        except Exception:  # noqa: BLE001 - a failing candidate is not chosen
            continue
        times[f"{impl.backend}:{impl.variant}"] = t
        if best is None or t < times[f"{best.backend}:{best.variant}"]:
            best = impl
    if best is None:
        return cands[0]  # let the real call raise its error
    with _lock:
        wisdom[key] = {"backend": best.backend, "variant": best.variant, "seconds": times,
                       "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
        _save()
    return best


def _example_input(n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(n)
    return x.astype(dtype)


def tune_operators(ops: Iterable[Operator], sizes: Iterable[int] = TUNE_SIZES,
                   dtypes: Iterable[TuneDtype] = TUNE_DTYPES) -> list[dict[str, Any]]:
    """Time and remember choices of ``ops`` for common sizes; one row per decision.

    Parameters
    ----------
    ops : iterable of Operator
        The operators to tune.  Those that need parameters without defaults,
        or take no input, are skipped (they are tuned on first use instead).
    sizes : iterable of int
        Element counts of the example inputs.
    dtypes : iterable of str
        ``float32``, ``float64``, ``complex64`` or ``complex128``.

    Returns
    -------
    list of dict
        ``operator``, ``size``, ``dtype``, ``class``, ``choice``
        (``"backend:variant"``, ``"-"`` or ``"error: ..."``), ``timed`` and,
        when timed, ``seconds`` per candidate.  An operator with a single usable
        implementation is reported without timing.
    """
    sizes, dtypes = list(sizes), list(dtypes)
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            raise InputError(f"size={s!r} must be an integer >= 1")
    for d in dtypes:
        if d not in choices(TuneDtype):
            raise InputError(f"dtype={d!r} must be one of {', '.join(choices(TuneDtype))}")
    rows: list[dict[str, Any]] = []
    for op in ops:
        if not op.takes_input or any(p.required for p in op.params):
            continue
        for dtype in dtypes:
            for n in sizes:
                x = _example_input(n, dtype)
                cands, home = _candidates(op, x)
                row = {"operator": op.name, "size": n, "dtype": dtype,
                       "class": size_class(x)}
                if len(cands) < 2:
                    row["choice"] = f"{cands[0].backend}:{cands[0].variant}" if cands else "-"
                    row["timed"] = False
                    rows.append(row)
                    continue
                try:
                    values = op.validate({})
                    impl = choose(op, x, values, None)
                except Exception as exc:  # noqa: BLE001 - report and go on
                    row["choice"] = f"error: {type(exc).__name__}"
                    row["timed"] = False
                    rows.append(row)
                    continue
                entry = load_wisdom().get(_key(op, x, home), {})
                row.update(choice=f"{impl.backend}:{impl.variant}", timed=True,
                           seconds=entry.get("seconds", {}))
                rows.append(row)
    return rows


# -- recording and profiling ----------------------------------------------------------


@dataclass
class Profile:
    """Time per operator recorded while a :func:`profile` block ran.

    Parameters
    ----------
    operators : dict, optional
        Operator name -> ``{"calls": int, "seconds": float, "backends": {backend:
        calls}, "backend_seconds": {backend: seconds}}``; empty by default.
    """

    #: name -> {"calls": int, "seconds": float, "backends": {backend: calls},
    #: "backend_seconds": {backend: seconds}}
    operators: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, name: str, backend: str, seconds: float) -> None:
        """Count one call of ``name`` on ``backend`` that took ``seconds``."""
        e = self.operators.setdefault(name, {"calls": 0, "seconds": 0.0, "backends": {},
                                             "backend_seconds": {}})
        e["calls"] += 1
        e["seconds"] += seconds
        e["backends"][backend] = e["backends"].get(backend, 0) + 1
        bs = e.setdefault("backend_seconds", {})
        bs[backend] = bs.get(backend, 0.0) + seconds

    def copy(self) -> Profile:
        """An independent snapshot (safe to hand to another thread)."""
        with _lock:
            return Profile({k: {"calls": v["calls"], "seconds": v["seconds"],
                                "backends": dict(v["backends"]),
                                "backend_seconds": dict(v.get("backend_seconds", {}))}
                            for k, v in self.operators.items()})

    def merge(self, other: Profile) -> None:
        """Add the calls of ``other`` to this profile."""
        for name, e in other.copy().operators.items():
            mine = self.operators.setdefault(name, {"calls": 0, "seconds": 0.0,
                                                    "backends": {}, "backend_seconds": {}})
            mine["calls"] += e["calls"]
            mine["seconds"] += e["seconds"]
            for b, c in e["backends"].items():
                mine["backends"][b] = mine["backends"].get(b, 0) + c
            for b, t in e["backend_seconds"].items():
                mine["backend_seconds"][b] = mine["backend_seconds"].get(b, 0.0) + t

    def by_backend(self) -> list[dict[str, Any]]:
        """One row per (operator, backend): ``operator``, ``backend``, ``calls``,
        ``seconds``, ``mean_seconds``; largest total first (JSON-able)."""
        rows = []
        for name, e in self.operators.items():
            for b, c in e["backends"].items():
                t = e.get("backend_seconds", {}).get(b, 0.0)
                rows.append({"operator": name, "backend": b, "calls": c, "seconds": t,
                             "mean_seconds": t / c if c else 0.0})
        return sorted(rows, key=lambda r: -r["seconds"])

    @property
    def total_seconds(self) -> float:
        return sum(e["seconds"] for e in self.operators.values())

    def summary(self) -> list[dict[str, Any]]:
        """Rows sorted by total time, largest first (JSON-able)."""
        rows = [{"operator": k, "calls": v["calls"], "seconds": v["seconds"],
                 "mean_seconds": v["seconds"] / v["calls"], "backends": dict(v["backends"])}
                for k, v in self.operators.items()]
        return sorted(rows, key=lambda r: -r["seconds"])

    def __str__(self) -> str:
        lines = [f"{'operator':<28}{'calls':>7}{'total ms':>12}{'mean ms':>11}  backends"]
        for r in self.summary():
            lines.append(f"{r['operator']:<28}{r['calls']:>7}{r['seconds'] * 1e3:>12.3f}"
                         f"{r['mean_seconds'] * 1e3:>11.3f}  "
                         + ", ".join(f"{b}×{c}" for b, c in r["backends"].items()))
        return "\n".join(lines)


#: open profiles: (profile, thread ident or None for every thread)
_active: list[tuple[Profile, int | None]] = []
_totals = Profile()


def record(name: str, backend: str, seconds: float) -> None:
    """Add the time of one operator call to the totals and the active profiles.

    The active profiles are those opened on the calling thread, and those that
    count every thread.

    Parameters
    ----------
    name : str
        The operator's name.
    backend : str
        The backend the call ran on.
    seconds : float
        How long it took.
    """
    me = threading.get_ident()
    with _lock:
        _totals.add(name, backend, seconds)
        for p, thread in _active:
            if thread is None or thread == me:
                p.add(name, backend, seconds)


def stats() -> Profile:
    """Totals of every call in this process so far.

    Returns
    -------
    Profile
        A copy: later calls do not change it.
    """
    return _totals.copy()


def reset_stats() -> None:
    """Clear the process-wide totals."""
    with _lock:
        _totals.operators.clear()


@contextlib.contextmanager
def profile(*, all_threads: bool = False) -> Iterator[Profile]:
    """Collect time per operator for the calls made inside the block.

    Only the calls of the thread that opened the profile count (a job's
    profile on the compute thread leaves out what the live thread runs
    meanwhile); ``all_threads=True`` counts every thread's calls.

    Parameters
    ----------
    all_threads : bool
        Count the calls of every thread, not only this one's.

    Yields
    ------
    Profile
        Filled as the block's calls end; ``print(p)`` shows a table.
    """
    p = Profile()
    entry = (p, None if all_threads else threading.get_ident())
    with _lock:
        _active.append(entry)
    try:
        yield p
    finally:
        with _lock:  # by identity: two profiles may hold equal counts
            _active[:] = [e for e in _active if e is not entry]
