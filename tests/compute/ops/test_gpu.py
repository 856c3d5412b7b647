"""The GPU path: fused tile kernels, streaming, fallback; block planning on the CPU.

Tests marked ``gpu`` need CuPy and a CUDA device and skip without one;
``scripts/gpu_check`` runs them (``pytest -m gpu``) on a device.  The block
planning and buffer sizing are plain Python and run everywhere.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from specscope.compute import backend, operators, spectral
from specscope.compute.ops import _cuda

HAS_GPU = "cupy" in backend.available_backends()


# -- CPU: planning and import hygiene ------------------------------------------------------


@pytest.mark.slow
def test_the_module_imports_no_cupy() -> None:
    code = ("import sys\nimport specscope.compute.ops._cuda as c\n"
            "print('cupy' in sys.modules, c.PACK_SOURCE.count('y ='))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "1"]
    assert 'extern "C" __global__ void power_reduce_{name}' in _cuda.REDUCE_SOURCE
    for real in ("float", "double"):
        src = _cuda.REDUCE_SOURCE.format(name="x", real=real)
        assert src.count("{") == src.count("}")


@pytest.mark.parametrize(("n", "nfft", "hop", "group", "frames"), [
    (10_000, 256, 64, 1, 7), (10_000, 256, 64, 5, 12), (255, 256, 64, 1, 4),
    (256, 256, 64, 3, 3), (1_000_003, 1024, 1000, 7, 50), (5000, 16, 16, 1, 1000)])
def test_blocks_cover_every_frame_once_aligned_to_columns(n, nfft, hop, group, frames) -> None:
    blocks = _cuda.plan_blocks(n, nfft, hop, group=group, frames=frames)
    n_frames = spectral.StftParams(nfft, hop).n_frames(n)
    covered = [k for b in blocks for k in range(b.frame0, b.frame1)]
    assert covered == list(range(n_frames))
    n_cols = -(-n_frames // group)
    assert [c for b in blocks for c in range(b.col0, b.col1)] == list(range(n_cols))
    for b in blocks[:-1]:
        assert b.n_frames % group == 0
    for b in blocks:
        assert b.sample0 == b.frame0 * hop and b.sample1 == (b.frame1 - 1) * hop + nfft
        assert b.sample1 <= n
    assert _cuda.buffer_samples(blocks) == max((b.n_samples for b in blocks), default=0)


def test_block_size_follows_the_memory_budget() -> None:
    per = _cuda.frames_per_block(1024, 256, 4, budget=64 * 2**20)
    assert per > 1000
    assert _cuda.block_bytes(per, 1024, 4, hop=256) <= 64 * 2**20
    assert _cuda.block_bytes(per + 1, 1024, 4, hop=256) > 64 * 2**20 - 2 * 1024 * 4
    grouped = _cuda.frames_per_block(1024, 256, 4, group=37, budget=64 * 2**20)
    assert grouped % 37 == 0 and grouped <= per
    # a column is never split, even past a tiny budget
    assert _cuda.frames_per_block(1024, 256, 4, group=500, budget=1) == 500
    assert _cuda.block_bytes(10, 512, 8, two_sided=True) > _cuda.block_bytes(10, 512, 8)


# -- device ---------------------------------------------------------------------------------


def _signal(n: int, dtype, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(n)
    return x.astype(dtype)


def _tol(dtype) -> dict:
    return {"rtol": 2e-4, "atol": 1e-6} if spectral.kernel_dtype(dtype) == np.float32 \
        else {"rtol": 1e-9, "atol": 1e-14}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("scaling", ["psd", "spectrum", "magnitude"])
@pytest.mark.parametrize("nfft", [256, 255])
def test_fused_kernel_equals_the_cpu_kernel(dtype, scaling, nfft) -> None:
    if not HAS_GPU:
        pytest.skip(f"no GPU: {backend.cupy_unavailable_reason()}")
    cp = backend.get_xp("cupy")
    x = _signal(20_000, dtype)
    params = spectral.StftParams(nfft, 100, "hann", scaling)
    ref = spectral.stft_kernel(x, params, 8000.0, layout="freq")
    ours = _cuda.stft_power_fused(cp.asarray(x), params, 8000.0, layout="freq", cp=cp)
    np.testing.assert_allclose(ours.get(), ref, **_tol(dtype))
    frames = _cuda.stft_power_fused(cp.asarray(x), params, 8000.0, layout="frames", cp=cp)
    np.testing.assert_allclose(frames.get(), ref.T, **_tol(dtype))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no GPU")
@pytest.mark.parametrize("reduce", ["mean", "max"])
def test_tile_columns_equal_the_cpu_reduction(reduce) -> None:
    cp = backend.get_xp("cupy")
    x = _signal(100_003, np.float32)
    params = spectral.StftParams(512, 128, "hann", "psd")
    full = spectral.stft_kernel(x, params, 1.0, layout="freq")
    group = 9
    n_cols = -(-full.shape[1] // group)
    pad = np.full((full.shape[0], n_cols * group - full.shape[1]), np.nan, np.float32)
    blocks = np.concatenate([full, pad], 1).reshape(full.shape[0], n_cols, group)
    ref = np.nanmax(blocks, -1) if reduce == "max" else np.nanmean(blocks, -1)
    ours = _cuda.stft_power_cupy(cp.asarray(x), params, 1.0, group=group, reduce=reduce, cp=cp)
    np.testing.assert_allclose(ours.get(), ref, rtol=2e-4, atol=1e-9)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no GPU")
@pytest.mark.parametrize(("two_sided", "nfft"), [(False, 1024), (False, 1023), (True, 512)])
def test_cell_kernel_equals_the_array_reduction(two_sided, nfft) -> None:
    cp = backend.get_xp("cupy")
    rng = np.random.default_rng(5)
    n_bin = nfft if two_sided else nfft // 2 + 1
    spec = (rng.standard_normal((1000, n_bin)) + 1j * rng.standard_normal((1000, n_bin)))
    spec = spec.astype(np.complex64)
    for cell in (1, 16, 37):
        got = _cuda.reduce_cells(cp, cp.asarray(spec), cell, one_sided=not two_sided,
                                 power=True, nfft=nfft)
        want = _cuda.reduce_cells(np, spec, cell, one_sided=not two_sided, power=True,
                                  nfft=nfft)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.get(), w, rtol=2e-5, atol=0)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no GPU")
@pytest.mark.parametrize("level", [0, 4, 7])
def test_streamed_cells_equal_the_cpu_tiles(level) -> None:
    from specscope.compute.io import ArrayRecording
    from specscope.compute.view import TileEngine
    x = _signal(4_000_001, np.float32)
    cpu = TileEngine(ArrayRecording(x, 48000), nfft=1024, hop=256, backend="numpy")
    dev = TileEngine(ArrayRecording(x, 48000), nfft=1024, hop=256, backend="cupy")
    dev.use_device(backend.get_xp("cupy"), budget=8 * 2**20)  # several blocks per tile
    for i in range(2):
        a, b = cpu.get_tile(level, i, derive=0), dev.get_tile(level, i)
        np.testing.assert_allclose(b.sums, a.sums, rtol=2e-4, atol=1e-12)
        np.testing.assert_allclose(b.maxs, a.maxs, rtol=2e-4, atol=1e-12)
    stats = dev.device_stats
    assert stats.d2h_bytes < stats.h2d_bytes * (1.0 if level == 0 else 0.2)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no GPU")
def test_tile_engine_on_the_device_equals_the_cpu() -> None:
    x = _signal(300_000, np.float32)
    kw = {"nfft": 1024, "hop": 256, "window": "hann", "scaling": "psd", "two_sided": False,
              "layout": "freq"}
    cpu = operators.call("stft_power", x, backend="numpy", fs=48000.0, **kw)
    dev = operators.call("stft_power", x, backend="cupy", fs=48000.0, **kw)
    assert isinstance(dev, np.ndarray)  # numpy in, numpy out
    np.testing.assert_allclose(dev, cpu, rtol=2e-4, atol=1e-12)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no GPU")
def test_core_operators_run_natively_on_the_device() -> None:
    cp = backend.get_xp("cupy")
    x = cp.asarray(_signal(4096, np.float32))
    for name, params in [("fft", {}), ("rfft", {}), ("welch", {}),
                         ("oaconvolve", {"in2": np.ones(31)}),
                         ("resample_poly", {"up": 3, "down": 2}),
                         ("sosfilt", {"sos": np.array([[1.0, 0, 0, 1, -0.5, 0]])}),
                         ("stft", {}), ("spectrogram", {})]:
        out = operators.call(name, x, backend="cupy", **params)
        first = out[-1] if isinstance(out, tuple) else out
        assert backend.is_device_array(first), name


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no GPU")
def test_out_of_memory_on_the_device_falls_back(monkeypatch) -> None:
    cp = backend.get_xp("cupy")
    op = operators.get("rfft")
    impl = op.get_implementation("cupy")

    def explode(*args, **kwargs):
        # a real CuPy error class, raised as the allocator would
        raise cp.cuda.memory.OutOfMemoryError(1 << 40, 0)

    monkeypatch.setattr(impl, "fn", explode)
    messages = []
    remove = backend.add_fallback_listener(messages.append)
    try:
        out = operators.call("rfft", np.ones(1 << 16), backend="cupy")
    finally:
        remove()
    np.testing.assert_allclose(out, np.fft.rfft(np.ones(1 << 16)))
    assert len(messages) == 1 and "OutOfMemoryError" in messages[0]


@pytest.mark.slow
@pytest.mark.skipif(HAS_GPU, reason="checks the report of a machine without a GPU")
def test_gpu_check_says_why_and_exits_3_without_a_gpu(tmp_path) -> None:
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "scripts" / "gpu_check"
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(script), "--json", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu_check: no GPU here: ")
    import json
    report = json.loads(out.read_text())
    assert report["gpu"] is False and report["reason"]


@pytest.mark.skipif(HAS_GPU, reason="checks the menu of a machine without a GPU")
def test_compute_menu_and_fallback_message_in_the_app(qtbot, make_window) -> None:
    from _gui import TIMEOUT_MS
    from specscope.app.session import ViewSettings

    w = make_window(ViewSettings(), show=False)
    try:
        acts = w.compute_actions
        assert [a.text() for a in acts.values()] == ["&Auto", "&CPU", "&GPU"]
        assert acts["auto"].isChecked()
        qtbot.waitUntil(lambda: "Looking" not in acts["cupy"].toolTip(), timeout=TIMEOUT_MS)
        assert not acts["cupy"].isEnabled() and acts["cupy"].toolTip().startswith("No GPU")
        assert "compute: numpy (CPU)" in w.backend_label.text()
        acts["numpy"].trigger()
        assert backend.preference() == "numpy"
        acts["auto"].trigger()
        assert backend.preference() == "auto"
        backend.report_fallback("fft: GPU failed (OutOfMemoryError: x); computed on the CPU")
        qtbot.waitUntil(lambda: "computed on the CPU" in w.message_label.text(),
                        timeout=TIMEOUT_MS)
    finally:
        backend.set_preference("auto")
