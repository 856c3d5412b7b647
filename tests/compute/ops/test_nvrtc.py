"""Every CUDA source the project ships compiles with NVRTC, without a device.

NVRTC (the ``nvidia-cuda-nvrtc-cu12`` wheel of the dev extra) needs no driver
and no GPU; CuPy's own compile helper asks the device for its architecture,
so the programs are created and compiled here through
``cupy_backends.cuda.libs.nvrtc`` directly, for ``compute_80`` (A100) and
``compute_90`` (H100/H200).  A compile error or any warning in the log fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from specscope.compute.ops import _cuda

ARCHES = ("compute_80", "compute_90")


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc
        nvrtc.getVersion()
    except Exception as exc:  # noqa: BLE001 - the reason is the skip message
        pytest.skip(f"NVRTC is not loadable ({type(exc).__name__}: {exc}); install the "
                    "dev extra (nvidia-cuda-nvrtc-cu12)")
    return nvrtc


def _cupy_include() -> str:
    import cupy_backends
    root = Path(cupy_backends.__file__).resolve().parent.parent / "cupy" / "_core" / "include"
    assert (root / "cupy" / "complex.cuh").is_file(), root
    return str(root)


def _compile(nvrtc, name: str, source: str, arch: str) -> tuple[bytes, str]:
    prog = nvrtc.createProgram(source, f"{name}.cu", [], [])
    inc = Path(_cupy_include())
    cccl = inc / "cupy" / "_cccl"  # thrust, cub and libcu++ as CuPy ships them
    opts = [f"--gpu-architecture={arch}", "--std=c++17", f"-I{inc}",
            f"-I{cccl / 'thrust'}", f"-I{cccl / 'libcudacxx'}", f"-I{cccl / 'cub'}"]
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise AssertionError(f"{name} ({arch}) does not compile: {exc}\n{log}") from None
        log = nvrtc.getProgramLog(prog).strip("\x00").strip()
        return nvrtc.getPTX(prog), log
    finally:
        nvrtc.destroyProgram(prog)


SOURCES = _cuda.kernel_sources()


def test_every_kernel_is_listed() -> None:
    names = [n for n, _ in SOURCES]
    assert len(names) == len(set(names))
    for kind in ("power_reduce_", "cell_reduce_", "specscope_window_pack_"):
        assert sum(n.startswith(kind) for n in names) >= 2, kind


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[n for n, _ in SOURCES])
def test_kernel_compiles_without_warnings(name: str, source: str, arch: str) -> None:
    nvrtc = _nvrtc()
    ptx, log = _compile(nvrtc, name, source, arch)
    assert not log, f"{name} ({arch}) compiles with messages:\n{log}"
    assert name.encode() in ptx, f"{name} is not an entry point of the program"
    assert f".target sm_{arch.split('_')[1]}".encode() in ptx


def test_a_broken_source_fails() -> None:
    """The check can fail: an undeclared name is a compile error, a warning is reported."""
    nvrtc = _nvrtc()
    with pytest.raises(AssertionError, match="does not compile"):
        _compile(nvrtc, "broken", 'extern "C" __global__ void broken() { undeclared = 1; }',
                 "compute_80")
    _, log = _compile(nvrtc, "warns", 'extern "C" __global__ void warns(float* y) '
                      '{ int unused_variable = 1; y[0] = 1.0f; }', "compute_80")
    assert "warning" in log
