"""Backends: availability, lazy CuPy, host/device moves, one body on every backend."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.signal as ss
from specscope.compute import backend, call
from specscope.compute.errors import InputError

HAS_CUPY = "cupy" in backend.available_backends()
BACKENDS = [pytest.param("numpy"),
            pytest.param("cupy", marks=[pytest.mark.gpu, pytest.mark.skipif(
                not HAS_CUPY, reason=f"no GPU: {backend.cupy_unavailable_reason()}")])]


def test_numpy_always_available() -> None:
    assert backend.available_backends()[0] == "numpy"
    assert backend.get_xp("numpy") is np
    info = backend.describe_backends()
    json.dumps(info)
    assert info[0]["name"] == "numpy" and info[0]["available"]
    cp = info[1]
    assert cp["name"] == "cupy" and cp["available"] == HAS_CUPY
    if HAS_CUPY:
        assert cp["device"] and cp["memory_total_bytes"] > 0
    else:
        assert cp["reason"]


@pytest.mark.slow
@pytest.mark.skipif(HAS_CUPY, reason="checks the CPU-only start")
def test_cpu_only_start_never_imports_cupy() -> None:
    code = ("import sys, numpy as np\n"
            "import specscope.compute as c\n"
            "y = c.call('spectrogram', np.ones(1 << 17, np.float32), fs=8000.0)\n"
            "z = c.call('fft', np.ones((64, 4096)))\n"
            "print(c.available_backends())\n"
            "print('cupy' in sys.modules, 'PyQt6' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"SPECSCOPE_NO_AUTOTUNE": "1",
                                          "PATH": "/usr/bin:/bin"}).stdout.split("\n")
    assert out[0] == "['numpy']"
    assert out[1] == "False False"


@pytest.mark.slow
def test_gpu_can_be_hidden() -> None:
    code = ("import sys, specscope.compute.backend as b\n"
            "print(b.available_backends(), 'cupy' in sys.modules, b.cupy_unavailable_reason())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"SPECSCOPE_NO_GPU": "1"}).stdout
    assert out.startswith("['numpy'] False disabled by SPECSCOPE_NO_GPU")


def test_unavailable_backend_is_a_one_line_error() -> None:
    if HAS_CUPY:
        pytest.skip("cupy is available here")
    with pytest.raises(InputError, match=r"backend='cupy' is not available here: "):
        call("gain", np.ones(3), backend="cupy")


def test_moves_between_host_and_device() -> None:
    x = np.arange(6.0)
    assert backend.to_host(x) is x
    assert backend.backend_of(x) == "numpy" and not backend.is_device_array(x)
    assert backend.to_device(x, "numpy") is x
    nested = backend.to_host((x, [x], {"a": x}, 3, "s"))
    assert nested[0] is x and nested[1][0] is x and nested[2]["a"] is x and nested[3] == 3
    if HAS_CUPY:
        d = backend.to_device(x)
        assert backend.is_device_array(d)
        np.testing.assert_array_equal(backend.to_host(d), x)


def test_scipy_fn_resolves_per_namespace() -> None:
    assert backend.scipy_fn(np, "signal.sosfilt") is ss.sosfilt
    assert backend.xp_name(np) == "numpy"


@pytest.mark.parametrize("bk", BACKENDS)
def test_same_numbers_on_every_backend(bk: str) -> None:
    """One body per backend: results come back as NumPy and match scipy (float32 rtol 1e-4)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4099)).astype(np.float32)  # prime length, batch axis
    sos = ss.butter(6, 0.2, output="sos")
    y = call("sosfilt", x, sos=sos, backend=bk)
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, ss.sosfilt(sos, x), rtol=1e-4, atol=1e-5)
    f = call("rfft", x, backend=bk)
    np.testing.assert_allclose(f, np.fft.rfft(x), rtol=1e-4, atol=1e-3)
    _, _, s = call("spectrogram", x[0], fs=100.0, nfft=256, hop=64, backend=bk)
    _, _, r = ss.spectrogram(x[0], 100.0, window="hann", nperseg=256, noverlap=192,
                             detrend=False)
    np.testing.assert_allclose(s, r, rtol=1e-4, atol=1e-6 * r.max())
    w = call("kaiser", M=31, beta=8.0, backend=bk)
    np.testing.assert_allclose(backend.to_host(w), ss.windows.kaiser(31, 8.0), rtol=1e-12)


# -- what the GPU path claims, the user's choice, and device failures ---------------------

CORE_GPU_OPS = ("stft_power", "spectrogram", "stft", "fft", "rfft", "sosfilt", "oaconvolve",
                "resample_poly", "welch")


def test_ops_json_says_how_each_operator_runs_on_a_gpu(capsys) -> None:
    from specscope.app.cli import main

    assert main(["ops", "--json"]) == 0
    items = {d["name"]: d for d in json.loads(capsys.readouterr().out)}
    assert {d["gpu"] for d in items.values()} <= {"native", "host", "none"}
    for name in CORE_GPU_OPS:
        assert items[name]["gpu"] == "native", name
    # a host round trip is never called a GPU path
    for d in items.values():
        natives = [i["native"] for i in d["implementations"].get("cupy", [])]
        assert d["gpu"] == ("native" if any(natives) else "host" if natives else "none")
    assert items["dpss"]["gpu"] == "host" and items["butter"]["gpu"] == "host"


@pytest.mark.slow
def test_with_the_wheel_but_no_device_only_numpy_is_offered() -> None:
    code = ("import sys, specscope.compute.backend as b\n"
            "print(b.available_backends(), bool(b.cupy_unavailable_reason()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    if not HAS_CUPY:
        assert out.strip() == "['numpy'] True"


def test_preference_chooses_where_auto_runs() -> None:
    assert backend.preference() == "auto"
    with pytest.raises(InputError, match="compute backend"):
        backend.set_preference("gpu")
    if not HAS_CUPY:
        with pytest.raises(InputError, match="not available"):
            backend.set_preference("cupy")
    backend.set_preference("numpy")
    try:
        from specscope.compute import operators
        with operators.profile() as prof:
            call("fft", np.ones(1 << 16))
        assert {b for r in prof.summary() for b in r["backends"]} == {"numpy"}
    finally:
        backend.set_preference("auto")


def _device_error(name: str, module: str) -> type[Exception]:
    """An exception class that looks like CuPy's (no CuPy needed)."""
    return type(name, (RuntimeError,), {"__module__": module})


def test_device_failures_are_recognised_by_class() -> None:
    oom = _device_error("OutOfMemoryError", "cupy.cuda.memory")
    drv = _device_error("CUDARuntimeError", "cupy_backends.cuda.api.runtime")
    assert backend.is_device_failure(oom("out of memory allocating 1 GiB"))
    assert backend.is_device_failure(drv("cudaErrorLaunchFailure"))
    assert not backend.is_device_failure(ValueError("bad input"))
    assert not backend.is_device_failure(_device_error("OutOfMemoryError", "mylib")("x"))


@pytest.fixture
def failing_gpu_operator():
    """An operator whose CuPy implementation fails like a device, chosen by the run policy."""
    from specscope.compute.operators import autotune, registry

    name = "test_gpu_failure_probe"
    calls: list[str] = []
    errors = {"raise": _device_error("OutOfMemoryError", "cupy.cuda.memory")(
        "Out of memory allocating 8,589,934,592 bytes")}

    @registry.operator(name, family="basic", summary="probe", takes_input=False,
                       params=[registry.Param("n", int, 3)])
    def probe(*, n):
        calls.append("numpy")
        return np.arange(n, dtype=float)

    @probe.implementation("cupy")
    def _probe_gpu(*, n):
        calls.append("cupy")
        raise errors["raise"]

    def choose_gpu(op, x, values, fs):
        return op.get_implementation("cupy") if op is probe else autotune.choose(
            op, x, values, fs)

    registry.set_run_policy(registry.RunPolicy(choose_gpu, autotune.record))
    try:
        yield probe, calls, errors
    finally:
        registry.set_run_policy(registry.RunPolicy(autotune.choose, autotune.record))
        registry.unregister(name)


def test_a_gpu_failure_falls_back_to_the_cpu_with_one_line(failing_gpu_operator,
                                                           caplog) -> None:
    probe, calls, _ = failing_gpu_operator
    messages: list[str] = []
    remove = backend.add_fallback_listener(messages.append)
    try:
        out = probe(n=4)
    finally:
        remove()
    np.testing.assert_array_equal(out, np.arange(4.0))
    assert calls == ["cupy", "numpy"]
    assert len(messages) == 1 and "\n" not in messages[0]
    assert messages[0].startswith("test_gpu_failure_probe: GPU failed (OutOfMemoryError")
    assert messages[0].endswith("computed on the CPU")
    assert any("computed on the CPU" in r.getMessage() for r in caplog.records)


def test_other_errors_of_a_gpu_path_are_not_hidden(failing_gpu_operator) -> None:
    probe, calls, errors = failing_gpu_operator
    errors["raise"] = ValueError("n is odd")
    with pytest.raises(InputError, match="n is odd"):
        probe(n=4)
    assert calls == ["cupy"]
