"""Shared machinery of the operator parity tests (``test_ops_parity_*.py``).

Table-driven: one :class:`Case` per operator, in the test file of its family.
Collection fails when a registered operator of those families has no case, so
adding an operator means adding its test; a family with no parity file fails
collection too.

Each input-taking case runs on lengths 0, 1, shorter than the window, odd,
prime and non-power-of-two, in float32 and float64 (complex too where it makes
sense), and on a batch of three channels along the first axis (compared with
the reference applied channel by channel).  When the reference raises, the
operator must raise a one-line :class:`SpecscopeError`.  Tolerances: float64
rtol 1e-7, float32 rtol 2e-3, absolute part relative to the largest reference
value (1e-9 / 2e-4); cases with ill-conditioned references state their own.

Each body runs on every backend; ``cupy`` is skipped when no GPU is present.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from specscope.compute import backend, operators
from specscope.compute.errors import InputError, SpecscopeError

#: the parity test file of each group of operator families
GROUPS = {
    "basic": ("basic", "fft", "windows", "generators"),
    "timefreq": ("timefreq", "features", "wavelets"),
    "filters": ("filter_design", "filtering", "analysis"),
}

LENGTHS = (0, 1, 5, 31, 97, 250)  # empty, single, < window (16), odd, prime, non-power-of-two
FS = 1000.0


def rng_signal(n: int, dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed + n)
    x = rng.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(n)
    return x.astype(dtype)


def positive(n: int, dtype: Any) -> np.ndarray:
    return (np.abs(rng_signal(n, dtype)) + 0.1).astype(dtype)


def time_axis(n: int, dtype: Any) -> np.ndarray:
    return (np.arange(n) / FS).astype(dtype)


def phase_axis(n: int, dtype: Any) -> np.ndarray:
    return np.linspace(0, 6 * np.pi, n).astype(dtype)


def image(n: int, dtype: Any) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, 7)).astype(dtype)


@dataclass
class Case:
    op: str
    ref: Callable[..., Any]
    params: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    make: Callable[[int, Any], Any] = rng_signal
    lengths: tuple = LENGTHS
    batch: bool = True
    complex: bool = False
    fs: float | None = None
    rtol32: float = 2e-3
    rtol64: float = 1e-7
    atol32: float = 2e-4
    atol64: float = 1e-9
    #: ours may refuse (InputError) where the reference answers: documented
    may_reject: Callable[[int, dict], bool] = lambda n, p: False
    #: float32 runs? (False for coefficient/time inputs where only float64 makes sense)
    float32: bool = True
    #: why NaN may legitimately vanish from the output (e.g. imag of real input)
    nan_vanishes: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.params, dict):
            self.params = [self.params]


def same(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x, **p: fn(x, **p)


def frames_ref(x, nfft, hop):
    n = x.shape[-1]
    k = 0 if n < nfft else (n - nfft) // hop + 1
    return np.stack([x[..., i * hop:i * hop + nfft] for i in range(k)], -2) if k else \
        np.zeros(x.shape[:-1] + (0, nfft))


def check_table(cases: list[Case], group: str, statistical: Iterable[str] = ()) -> None:
    """Fail collection unless ``cases`` (and ``statistical``) cover the group's operators.

    Every built-in operator of the group's families needs exactly one case, no
    case may name an operator outside them, and every built-in family must
    belong to a group.
    """
    builtins = [o for o in operators.list_operators() if "." not in o.name]
    orphans = sorted({o.family for o in builtins} - {f for fs in GROUPS.values() for f in fs})
    registered = {o.name for o in builtins if o.family in GROUPS[group]}
    names = {c.op for c in cases}
    dupes = {c.op for c in cases if sum(d.op == c.op for d in cases) > 1}
    missing = sorted(registered - names - set(statistical))
    unknown = sorted((names | set(statistical)) - registered)
    if missing or unknown or dupes or orphans:
        raise RuntimeError(f"parity table out of date: no case for {missing}; cases for "
                           f"operators not registered in {GROUPS[group]}: {unknown}; "
                           f"duplicate cases {sorted(dupes)}; families without a parity "
                           f"file: {orphans}")


BACKENDS = [pytest.param("numpy", id="numpy"),
            pytest.param("cupy", id="cupy", marks=[pytest.mark.gpu, pytest.mark.skipif(
                "cupy" not in backend.available_backends(),
                reason=f"no GPU: {backend.cupy_unavailable_reason()}")])]


def case_params(cases: list[Case]) -> list[Any]:
    """``(case, dtype)`` parameters: float64, and float32 where the case runs it."""
    out = []
    for c in cases:
        op = operators.get(c.op)
        has_dtype = any(p.name == "dtype" for p in op.params)
        if op.takes_input:
            out.append(pytest.param(c, np.float64, id=f"{c.op}-float64"))
            if c.float32:
                out.append(pytest.param(c, np.float32, id=f"{c.op}-float32"))
        else:
            out.append(pytest.param(c, np.float64, id=f"{c.op}-float64"))
            if has_dtype:
                out.append(pytest.param(c, np.float32, id=f"{c.op}-float32"))
    return out


def nan_params(cases: list[Case]) -> list[Any]:
    """The cases of operators that take an input array, named by operator."""
    return [pytest.param(c, id=c.op) for c in sorted(cases, key=lambda c: c.op)
            if operators.get(c.op).takes_input]


def _compare(ours, ref, case: Case, dtype, where: str) -> None:
    ours = backend.to_host(ours)
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and set(ours) == set(ref), where
        for k in ref:
            _compare(ours[k], ref[k], case, dtype, f"{where}[{k}]")
        return
    if isinstance(ref, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(ref), \
            f"{where}: {type(ours).__name__} of {len(ours) if hasattr(ours, '__len__') else '?'}" \
            f" vs {len(ref)}"
        for i, (a, b) in enumerate(zip(ours, ref)):
            _compare(a, b, case, dtype, f"{where}[{i}]")
        return
    if isinstance(ref, (bool, np.bool_)):
        assert bool(ours) == bool(ref), where
        return
    ref_a, ours_a = np.asarray(ref), np.asarray(ours)
    assert ours_a.shape == ref_a.shape, f"{where}: shape {ours_a.shape} != {ref_a.shape}"
    if ref_a.dtype.kind in "iub":
        np.testing.assert_array_equal(ours_a, ref_a, err_msg=where)
        return
    single = np.dtype(dtype) == np.float32
    rtol = case.rtol32 if single else case.rtol64
    atol_rel = case.atol32 if single else case.atol64
    scale = float(np.nanmax(np.abs(ref_a))) if ref_a.size and np.isfinite(
        np.nanmax(np.abs(ref_a))) else 1.0
    np.testing.assert_allclose(ours_a.astype(ref_a.dtype if ref_a.dtype.kind in "fc"
                                              else float), ref_a, rtol=rtol,
                               atol=atol_rel * max(scale, 1e-30) + 1e-300, err_msg=where,
                               equal_nan=True)


def _inputs(case: Case, n, dtype):
    yield "real", case.make(n, dtype)
    if case.complex:
        ct = np.complex64 if dtype == np.float32 else np.complex128
        yield "complex", rng_signal(n, ct) if case.make is rng_signal else \
            case.make(n, dtype).astype(ct)


def _check_one(case: Case, op, x, params, dtype, bk, where):
    fs = case.fs
    ref_kwargs = dict(params)
    if fs is not None:
        ref_kwargs["fs"] = fs
    try:
        expected = case.ref(x, **ref_kwargs) if op.takes_input else case.ref(**ref_kwargs)
        ref_error = None
    except Exception as exc:  # noqa: BLE001 - the reference refused this input
        expected, ref_error = None, exc
    arg = backend.to_device(x, bk) if op.takes_input else None
    if ref_error is not None:
        with pytest.raises(SpecscopeError) as info:
            op(arg, backend=bk, fs=fs, **params) if op.takes_input else op(
                backend=bk, fs=fs, **params)
        assert "\n" not in str(info.value), f"{where}: message is not one line"
        return
    try:
        ours = op(arg, backend=bk, fs=fs, **params) if op.takes_input else op(
            backend=bk, fs=fs, **params)
    except InputError:
        n = None if not hasattr(x, "shape") or not x.shape else x.shape[-1]
        if case.may_reject(n, params):
            return
        raise
    _compare(ours, expected, case, dtype, where)


def check_parity(case: Case, dtype: Any, bk: str) -> None:
    """Run one case on one backend in one dtype against its reference."""
    op = operators.get(case.op)
    for params in case.params:
        if not op.takes_input:
            p = dict(params)
            if any(q.name == "dtype" for q in op.params):
                p["dtype"] = np.dtype(dtype).name
            _check_one(case, op, None, p, dtype, bk, f"{case.op}{p}")
            continue
        for n in case.lengths:
            for kind, x in _inputs(case, n, dtype):
                where = f"{case.op} n={n} {kind} {params}"
                _check_one(case, op, x, params, dtype, bk, where)
                # batch: three channels along the first axis == reference per channel
                if case.batch and n and n > 1 and isinstance(x, np.ndarray) and x.ndim == 1:
                    try:
                        rows = [case.ref(r, **params, **({"fs": case.fs} if case.fs else {}))
                                for r in (x, 2 * x, x[::-1].copy())]
                    except Exception:  # noqa: BLE001 - covered by the 1-D check above
                        continue
                    xb = np.stack([x, 2 * x, x[::-1]])
                    ours = op(backend.to_device(xb, bk), backend=bk, fs=case.fs, **params)
                    expected = _stack_rows(rows)
                    _compare(ours, expected, case, dtype, where + " batch")


def _stack_rows(rows):
    first = rows[0]
    if isinstance(first, tuple):
        # (axis values, data): axes shared, data stacked
        return tuple(_stack_rows([r[i] for r in rows]) if (np.ndim(first[i]) and
                     not all(np.array_equal(r[i], first[i]) for r in rows)) or i == len(first) - 1
                     else first[i] for i in range(len(first)))
    if isinstance(first, list):
        return [np.stack([r[i] for r in rows]) for i in range(len(first))]
    return np.stack(rows)


def check_nan_policy(case: Case) -> None:
    """NaN input is passed through (a NaN in the output) or rejected, as documented."""
    name = case.op
    op = operators.get(name)
    n = next((v for v in (97, 250, 31) if v in case.lengths), case.lengths[-1])
    x = case.make(n, np.float64)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.size < 3:
        pytest.skip("input is not a float signal (coefficients, lists)")
    if case.nan_vanishes:
        pytest.skip(f"NaN may vanish: {case.nan_vanishes}")
    x = x.copy()
    x.flat[x.size // 2::7] = np.nan  # several, so decimating operators keep one
    params = case.params[0]
    if op.nan_policy == "reject":
        with pytest.raises(InputError, match="NaN"):
            op(x, fs=case.fs, **params)
        return
    try:
        out = op(x, fs=case.fs, **params)
    except SpecscopeError as exc:
        pytest.fail(f"{name} documents NaN as propagated but raised: {exc}")
    leaves = []

    def walk(v):
        if isinstance(v, (tuple, list)):
            for u in v:
                walk(u)
        elif isinstance(v, dict):
            for u in v.values():
                walk(u)
        else:
            leaves.append(np.asarray(v))
    walk(out)
    assert any(a.dtype.kind in "fc" and np.isnan(a).any() for a in leaves), \
        f"{name}: NaN input gave no NaN in the output; declare nan_policy='reject'"

