"""Helpers shared by the shipped plugins (not a plugin: its name starts with ``_``)."""

from __future__ import annotations

from typing import Any

from specscope.compute.errors import InputError
from specscope.compute.operators import Param

NFFT = Param("nfft", int, 512, min=4, unit="samples", help="frame length")
HOP = Param("hop", int, 128, min=1, unit="samples", help="samples between frames")
WINDOW = Param("window", "window", "hann", help="window name or (name, parameter)")


def frame_history(p: dict[str, Any]) -> int:
    return p["nfft"] - p["hop"]


def frame_times(n_frames: int, nfft: int, hop: int, fs: float, xp: Any) -> Any:
    """Centres (s) of frames ``k*hop .. k*hop+nfft-1``."""
    return (xp.arange(n_frames, dtype=xp.float64) * hop + nfft / 2.0) / fs


def real_signal(x: Any, name: str, nfft: int | None = None) -> None:
    """Reject complex input and signals shorter than one frame, naming the operator."""
    if x.dtype.kind == "c":
        raise InputError(f"{name}: input must be real (take the magnitude or real part "
                         "of IQ data first)")
    if nfft is not None and x.shape[-1] < nfft:
        raise InputError(f"{name}: nfft={nfft} is larger than the signal ({x.shape[-1]} "
                         f"samples); choose nfft <= {x.shape[-1]}")
