"""backend="auto": choice per (operator, size class, dtype), remembered on disk."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from specscope.compute import operators
from specscope.compute.operators import Param, autotune, operator


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SPECSCOPE_NO_AUTOTUNE", raising=False)
    autotune.set_enabled(None)
    autotune.forget()
    yield tmp_path
    autotune.forget()
    autotune.set_enabled(None)


@pytest.fixture
def slow_and_fast():
    """An operator whose 'default' is slow and whose 'fast' variant is quick."""
    calls = []

    @operator("test.tuned", family="basic", summary="two variants",
              params=[Param("k", float, 2.0)])
    def slow(x, *, k):
        calls.append("default")
        time.sleep(0.004)
        return x * k

    @slow.implementation("numpy", "fast")
    def fast(x, *, k, xp):
        calls.append("fast")
        return x * k
    yield slow, calls
    operators.unregister("test.tuned")


def test_size_classes() -> None:
    assert autotune.size_class(np.ones(4096)) == "2^12/p2"
    assert autotune.size_class(np.ones(4000)) == "2^12/fast"  # 2^5 * 5^3
    assert autotune.size_class(np.ones(4099)) == "2^13/rough"  # prime
    assert autotune.size_class(np.ones((3, 1000))) == "2^12/fast"


def test_picks_fastest_and_remembers(slow_and_fast, cache) -> None:
    op, calls = slow_and_fast
    x = np.ones(1000)
    np.testing.assert_array_equal(op(x, k=3.0), x * 3.0)
    assert "default" in calls and "fast" in calls  # both timed once
    data = json.loads((cache / "autotune.json").read_text())
    (key, entry), = [(k, v) for k, v in data["entries"].items() if k.startswith("test.tuned|")]
    assert entry["variant"] == "fast" and entry["backend"] == "numpy"
    assert "|2^10/fast|float64|numpy|" in key
    assert entry["seconds"]["numpy:default"] > entry["seconds"]["numpy:fast"]
    calls.clear()
    op(x)
    assert calls == ["fast"]  # remembered: no re-timing
    # a new process (fresh memory) reads the file
    autotune._state["wisdom"] = None
    calls.clear()
    op(x)
    assert calls == ["fast"]


def test_dtype_and_length_kind_are_tuned_separately(slow_and_fast, cache) -> None:
    op, _ = slow_and_fast
    op(np.ones(1024, np.float32))
    op(np.ones(1024, np.float64))
    op(np.ones(1021, np.float64))  # prime length
    keys = [k for k in json.loads((cache / "autotune.json").read_text())["entries"]
            if k.startswith("test.tuned|")]
    assert len(keys) == 3
    assert any("|float32|" in k for k in keys) and any("/rough|" in k for k in keys)


def test_disabled_by_environment(slow_and_fast, cache, monkeypatch) -> None:
    op, calls = slow_and_fast
    monkeypatch.setenv("SPECSCOPE_NO_AUTOTUNE", "1")
    op(np.ones(100))
    assert calls == ["default"]
    assert not (cache / "autotune.json").exists()


def test_single_candidate_is_not_timed(cache) -> None:
    # gain has one numpy implementation; cupy is not available here or the input is small
    operators.get("gain")(np.ones(100), factor=2.0)
    assert not (cache / "autotune.json").exists()


def test_small_inputs_stay_on_cpu() -> None:
    op = operators.get("sosfilt")
    cands, home = autotune._candidates(op, np.ones(autotune.SMALL_ELEMENTS - 1))
    assert home == "numpy" and {c.backend for c in cands} == {"numpy"}


def test_corrupt_wisdom_is_ignored(slow_and_fast, cache) -> None:
    (cache / "autotune.json").write_text("{not json")
    autotune._state["wisdom"] = None
    op, _ = slow_and_fast
    op(np.ones(10))
    assert json.loads((cache / "autotune.json").read_text())["version"] == 1


def test_tune_reports_choices(slow_and_fast, cache) -> None:
    rows = operators.tune(["test.tuned", "gain"], sizes=[64, 1000], dtypes=["float32"])
    tuned = [r for r in rows if r["operator"] == "test.tuned"]
    assert [r["timed"] for r in tuned] == [True, True]
    assert all(r["choice"] == "numpy:fast" for r in tuned)
    assert all(not r["timed"] for r in rows if r["operator"] == "gain")
    with pytest.raises(Exception, match="size=0 must be an integer >= 1"):
        operators.tune(["gain"], sizes=[0])


def test_spectrogram_auto_matches_numpy_and_the_kernel() -> None:
    x = np.random.default_rng(2).standard_normal(200_000).astype(np.float32)
    op = operators.get("spectrogram")
    ref = op(x, backend="numpy:default", fs=8000.0, nfft=512, hop=128)
    auto = op(x, fs=8000.0, nfft=512, hop=128)
    for a, b in zip(ref, auto):
        np.testing.assert_array_equal(a, b)
    kernel = operators.call("stft_power", x, backend="numpy", fs=8000.0, nfft=512, hop=128,
                            layout="freq")
    np.testing.assert_array_equal(ref[2], kernel)


def test_profile_summarises_time_per_operator() -> None:
    x = np.ones(256)
    with autotune.profile() as prof:
        operators.call("gain", x, factor=2.0)
        operators.call("gain", x, factor=3.0)
        operators.call("rfft", x)
    rows = {r["operator"]: r for r in prof.summary()}
    assert rows["gain"]["calls"] == 2 and rows["rfft"]["calls"] == 1
    assert rows["gain"]["backends"] == {"numpy": 2}
    assert rows["gain"]["seconds"] > 0 and prof.total_seconds >= rows["gain"]["seconds"]
    assert "gain" in str(prof)
    operators.call("gain", x)  # outside: not recorded
    assert rows["gain"]["calls"] == prof.operators["gain"]["calls"] == 2
    assert autotune.stats().operators["gain"]["calls"] >= 3


def test_profile_counts_the_profiling_thread_only() -> None:
    import threading
    x = np.ones(256)
    started, stop = threading.Event(), threading.Event()
    other_calls = []

    def other() -> None:  # another thread (the live one) calling operators meanwhile
        while not stop.is_set():
            operators.call("gain", x, factor=5.0)
            other_calls.append(1)
            started.set()

    t = threading.Thread(target=other, daemon=True)
    t.start()
    started.wait(10)
    with autotune.profile() as mine, autotune.profile(all_threads=True) as every:
        n0 = len(other_calls)
        operators.call("rfft", x)
        while len(other_calls) < n0 + 3:  # the other thread called during the block
            operators.call("rfft", x)
    stop.set()
    t.join(10)
    assert "gain" not in mine.operators and mine.operators["rfft"]["calls"] >= 1
    assert every.operators["gain"]["calls"] >= 2  # one may have been recorded before
    assert every.operators["rfft"]["calls"] == mine.operators["rfft"]["calls"]


def test_cli_tune(slow_and_fast, capsys) -> None:
    from specscope.app.cli import build_parser

    parser = build_parser("tune")
    args = parser.parse_args(["tune", "--ops", "test.tuned", "--sizes", "512",
                              "--dtypes", "float64"])
    assert args.func(args) == 0
    assert "numpy:fast" in capsys.readouterr().out
