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
