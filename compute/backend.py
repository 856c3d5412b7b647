"""Array backends: ``numpy`` (+scipy) always, ``cupy`` (+cupyx.scipy) with a GPU.

Operators are written once against an array namespace ``xp``; this module says
which namespaces exist and moves arrays between them.

CuPy is imported lazily and only when it is installed *and* the CUDA driver
reports a device: the device count is asked of the driver library through
``ctypes``, so a CPU-only start never imports ``cupy`` at all.  Setting
``SPECSCOPE_NO_GPU=1`` hides the GPU.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .errors import InputError
from .types import Backend, BackendPreference, choices

BACKENDS = choices(Backend)

_lock = threading.Lock()
_cupy_state: dict[str, Any] = {}


def _cuda_device_count() -> int:
    """Devices the CUDA driver reports, asked through ctypes (no CuPy import).

    The driver is loaded by the names the dynamic loader knows it by, as CuPy
    loads it; ``ctypes.util.find_library`` is not used: it runs ldconfig and the
    compiler, tens of milliseconds on the first call of every process.
    """
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so"]
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        try:
            if lib.cuInit(0) != 0:
                return 0
            count = ctypes.c_int(0)
            if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
                return 0
            return int(count.value)
        except (AttributeError, OSError):
            return 0
    return 0


def _load_cupy() -> ModuleType | None:
    """The cupy module when it is installed and a device answers, else None."""
    with _lock:
        if "module" in _cupy_state:
            return _cupy_state["module"]
        module = None
        reason = ""
        if os.environ.get("SPECSCOPE_NO_GPU", "") not in ("", "0"):
            reason = "disabled by SPECSCOPE_NO_GPU"
        elif importlib.util.find_spec("cupy") is None:
            reason = "CuPy is not installed"
        elif _cuda_device_count() < 1:
            reason = "no CUDA device answers"
        else:
            try:
                module = importlib.import_module("cupy")
                # a real round trip: a broken driver/toolkit pair fails here
                float(module.asnumpy(module.arange(4, dtype=module.float32).sum()))
            except Exception as exc:  # noqa: BLE001 - any failure means "no GPU"
                module = None
                reason = f"CuPy failed to start: {type(exc).__name__}: {exc}".splitlines()[0]
        _cupy_state["module"] = module
        _cupy_state["reason"] = reason
        return module


def available_backends() -> list[str]:
    """Backends usable in this process, e.g. ``["numpy"]`` or ``["numpy", "cupy"]``.

    CuPy counts when it is installed, a CUDA device answers, a first round trip
    to the device succeeds and ``SPECSCOPE_NO_GPU`` is not set; the answer is
    found once per process.

    Returns
    -------
    list of str
        ``"numpy"``, then ``"cupy"`` when it is usable.
    """
    return list(BACKENDS) if _load_cupy() is not None else ["numpy"]


def cupy_unavailable_reason() -> str:
    """Why ``cupy`` is not in :func:`available_backends` ("" when it is)."""
    _load_cupy()
    return _cupy_state.get("reason", "")


def check_backend(name: str) -> str:
    """Validate a backend name and that it is usable here; returns the name."""
    if name not in BACKENDS:
        raise InputError(f"backend={name!r} must be one of auto, {', '.join(BACKENDS)}")
    if name == "cupy" and _load_cupy() is None:
        raise InputError(f"backend='cupy' is not available here: {cupy_unavailable_reason()}")
    return name


def get_xp(name: str) -> ModuleType:
    """The array namespace of a backend: ``numpy`` or ``cupy``."""
    if check_backend(name) == "cupy":
        return _load_cupy()  # type: ignore[return-value]
    return np


def backend_of(x: Any) -> str:
    """``"cupy"`` for a CuPy array, else ``"numpy"`` (never imports CuPy)."""
    return "cupy" if type(x).__module__.split(".")[0] == "cupy" else "numpy"


def is_device_array(x: Any) -> bool:
    """True for a CuPy array."""
    return backend_of(x) == "cupy"


def to_host(x: Any) -> Any:
    """A NumPy copy of a CuPy array; anything else is returned as it is.

    Tuples, lists and dicts are converted element by element.
    """
    if isinstance(x, tuple):
        return tuple(to_host(v) for v in x)
    if isinstance(x, list):
        return [to_host(v) for v in x]
    if isinstance(x, dict):
        return {k: to_host(v) for k, v in x.items()}
    if is_device_array(x):
        return x.get()
    return x


def to_device(x: Any, backend: str = "cupy") -> Any:
    """``x`` as an array of ``backend``; containers are converted element by element.

    ``to_device(x, "numpy")`` is :func:`to_host`.  Scalars and strings pass
    through unchanged.
    """
    if backend == "numpy":
        return to_host(x)
    if isinstance(x, tuple):
        return tuple(to_device(v, backend) for v in x)
    if isinstance(x, list):
        return [to_device(v, backend) for v in x]
    if isinstance(x, dict):
        return {k: to_device(v, backend) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return get_xp(backend).asarray(x)
    return x


def synchronize(backend: str) -> None:
    """Wait for queued device work (for honest timings); no-op on numpy."""
    if backend == "cupy":
        cp = _load_cupy()
        if cp is not None:
            cp.cuda.get_current_stream().synchronize()


def describe_backends() -> list[dict[str, Any]]:
    """One JSON-able dict per backend: name, available, version, device details."""
    import scipy

    out: list[dict[str, Any]] = [{
        "name": "numpy", "available": True,
        "version": f"numpy {np.__version__}, scipy {scipy.__version__}",
        "device": "CPU", "cpu_count": os.cpu_count(),
    }]
    cp = _load_cupy()
    entry: dict[str, Any] = {"name": "cupy", "available": cp is not None}
    if cp is None:
        entry["reason"] = cupy_unavailable_reason()
    else:
        entry["version"] = f"cupy {cp.__version__}"
        try:
            dev = cp.cuda.Device()
            props = cp.cuda.runtime.getDeviceProperties(dev.id)
            name = props.get("name", b"")
            entry["device"] = name.decode() if isinstance(name, bytes) else str(name)
            free, total = cp.cuda.runtime.memGetInfo()
            entry["memory_total_bytes"] = int(total)
            entry["memory_free_bytes"] = int(free)
        except Exception as exc:  # noqa: BLE001 - report, do not fail
            entry["device"] = f"unknown ({type(exc).__name__})"
    out.append(entry)
    return out


# -- scipy / cupyx.scipy per namespace ------------------------------------------------


def _host_fallback(fn: Callable[..., Any], backend: str) -> Callable[..., Any]:
    """Wrap a scipy function so it takes and returns arrays of ``backend``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = fn(*to_host(list(args)), **to_host(dict(kwargs)))
        return to_device(result, backend)

    wrapper.host_fallback = True  # type: ignore[attr-defined]
    return wrapper


@functools.lru_cache(maxsize=512)
def _resolve(backend: str, path: str) -> Callable[..., Any]:
    parts = path.split(".")
    host_mod = importlib.import_module("scipy." + ".".join(parts[:-1]))
    host_fn = getattr(host_mod, parts[-1])
    if backend == "numpy":
        return host_fn
    try:
        dev_mod = importlib.import_module("cupyx.scipy." + ".".join(parts[:-1]))
        return getattr(dev_mod, parts[-1])
    except (ImportError, AttributeError):
        return _host_fallback(host_fn, backend)


def scipy_fn(xp: ModuleType, path: str) -> Callable[..., Any]:
    """``scipy.<path>`` for numpy, ``cupyx.scipy.<path>`` for cupy.

    When cupyx lacks the function, the scipy one runs on the host with the
    arrays copied over and back, so every operator has a CuPy path.
    ``path`` is relative to ``scipy``, e.g. ``"signal.sosfilt"``.
    """
    return _resolve("cupy" if xp.__name__.split(".")[0] == "cupy" else "numpy", path)


def xp_name(xp: ModuleType) -> str:
    """``"numpy"`` or ``"cupy"`` for an array namespace."""
    return "cupy" if xp.__name__.split(".")[0] == "cupy" else "numpy"


# -- the user's choice and device failures ----------------------------------------------

PREFERENCES = choices(BackendPreference)
_preference = "auto"
_fallback_listeners: list[Callable[[str], None]] = []

#: CuPy's errors that mean "the device failed", not "the input is wrong"
_DEVICE_ERRORS = frozenset({
    "OutOfMemoryError", "CUDARuntimeError", "CUDADriverError", "CUFFTError",
    "CUBLASError", "CUSOLVERError", "CUSPARSEError", "CURANDError", "NVRTCError",
    "CompileException"})


def set_preference(name: BackendPreference) -> None:
    """Where ``backend="auto"`` runs: ``"auto"`` (autotuned), ``"numpy"`` or ``"cupy"``.

    ``"cupy"`` asks for the GPU wherever an operator has a native CuPy
    implementation and a device answers; it is an error when none does.
    """
    global _preference
    if name not in PREFERENCES:
        raise InputError(f"compute backend {name!r} must be one of {', '.join(PREFERENCES)}")
    if name == "cupy":
        check_backend("cupy")
    _preference = name


def preference() -> str:
    """The choice made with :func:`set_preference` (``"auto"`` by default)."""
    return _preference


def is_device_failure(exc: BaseException) -> bool:
    """True when ``exc`` is a CuPy out-of-memory, driver, runtime, cuFFT or compile error.

    Recognised by the class name and module, so nothing imports CuPy to ask.
    """
    for cls in type(exc).__mro__:
        root = cls.__module__.split(".")[0]
        if root in ("cupy", "cupyx", "cupy_backends") and cls.__name__ in _DEVICE_ERRORS:
            return True
    return False


def add_fallback_listener(fn: Callable[[str], None]) -> Callable[[], None]:
    """Call ``fn(message)`` whenever a GPU failure falls back to the CPU.

    ``fn`` runs on the thread that ran the operator.  Returns a function that
    removes the listener.
    """
    _fallback_listeners.append(fn)

    def remove() -> None:
        if fn in _fallback_listeners:
            _fallback_listeners.remove(fn)

    return remove


def report_fallback(message: str) -> None:
    """Log a one-line fallback message and hand it to the listeners."""
    import logging

    logging.getLogger("specscope.compute").warning(message)
    for fn in tuple(_fallback_listeners):  # a listener may remove itself
        try:
            fn(message)
        except Exception:  # noqa: BLE001 - a listener never breaks a computation
            pass
