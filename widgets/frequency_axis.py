"""FrequencyAxis: a y axis for linear, logarithmic or mel frequency scales.

The plot's y coordinate is ``forward(f)``: ``f`` (linear), ``log10(f)`` (log) or
mel (mel).  Ticks are placed at round frequencies and labelled in Hz or kHz,
so an image whose rows are uniform in that coordinate lines up with them.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from specscope.compute.spectral import hz_to_mel, mel_to_hz
from specscope.compute.view.scales import FREQ_SCALES

SCALES = FREQ_SCALES
_NICE = (1.0, 2.0, 5.0)


def forward(scale: str, f: np.ndarray | float) -> np.ndarray:
    """Frequency in Hz to the plot coordinate of ``scale``."""
    f = np.asarray(f, dtype=np.float64)
    if scale == "log":
        return np.log10(np.maximum(f, 1e-9))
    if scale == "mel":
        return hz_to_mel(f, htk=True)
    return f


def inverse(scale: str, y: np.ndarray | float) -> np.ndarray:
    """Plot coordinate of ``scale`` back to Hz."""
    y = np.asarray(y, dtype=np.float64)
    if scale == "log":
        return 10.0 ** y
    if scale == "mel":
        return mel_to_hz(y, htk=True)
    return y


def _fmt(f: float) -> str:
    if abs(f) >= 1000:
        k = f / 1000
        return f"{k:g}k"
    return f"{f:g}"


class FrequencyAxis(pg.AxisItem):
    """Left axis labelled in Hz for any of :data:`SCALES`."""

    def __init__(self, orientation: str = "left", **kw) -> None:
        super().__init__(orientation, **kw)
        self.freq_scale = "linear"
        #: (channels, lowest Hz, band height, span) when channels are stacked, else None
        self.stack: tuple[int, float, float, float] | None = None

    def set_stack(self, stack: tuple[int, float, float, float] | None) -> None:
        """Label stacked channel bands: each band ``[c*band, c*band + span)`` in Hz from f0."""
        self.stack = stack
        self.picture = None
        self.update()

    def set_scale(self, scale: str) -> None:
        if scale not in SCALES:
            raise ValueError(f"frequency scale {scale!r} must be one of {', '.join(SCALES)}")
        self.freq_scale = scale
        if scale == "linear":
            self.setLabel("Frequency", units="Hz")
            self.enableAutoSIPrefix(True)
        else:
            self.setLabel(f"Frequency (Hz, {scale})", units=None)
            self.enableAutoSIPrefix(False)
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):
        if self.stack is not None:
            n, f0, band, span = self.stack
            per = max(size / max(n, 1), 20.0)
            lo, hi = sorted((minVal, maxVal))
            levels: list[tuple[float, list[float]]] = []
            for c in range(n):
                a, b = max(lo, c * band), min(hi, c * band + span)
                if b <= a:
                    continue
                sub = super().tickValues(f0 + a - c * band, f0 + b - c * band,
                                         per * (b - a) / span)
                for k, (spacing, values) in enumerate(sub):
                    while len(levels) <= k:
                        levels.append((spacing, []))
                    levels[k][1].extend(v - f0 + c * band for v in values)
            return levels
        if self.freq_scale == "linear":
            return super().tickValues(minVal, maxVal, size)
        f0, f1 = float(inverse(self.freq_scale, minVal)), float(inverse(self.freq_scale, maxVal))
        f0 = max(f0, 1e-3)
        if f1 <= f0:
            return []
        decades = range(int(np.floor(np.log10(f0))), int(np.ceil(np.log10(f1))) + 1)
        cands = [m * 10.0 ** d for d in decades for m in _NICE]
        major = [f for f in cands if f0 <= f <= f1]
        minor = [m * 10.0 ** d for d in decades for m in range(1, 10)
                 if f0 <= m * 10.0 ** d <= f1 and m not in _NICE]
        max_major = max(2, int(size / 28))
        if len(major) > max_major:  # keep the powers of ten (and 5s if room)
            major = [f for f in major if np.isclose(f / 10 ** np.floor(np.log10(f)), 1.0)]
        # spacing values are nominal: labels come from tickStrings, not from them
        return [(1.0, [float(forward(self.freq_scale, f)) for f in major]),
                (0.5, [float(forward(self.freq_scale, f)) for f in minor])]

    def tickStrings(self, values, scale, spacing):
        if self.stack is not None:
            n, f0, band, _ = self.stack
            freqs = [f0 + v - min(max(int(v // band), 0), n - 1) * band for v in values]
            return super().tickStrings(freqs, scale, spacing)
        if self.freq_scale == "linear":
            return super().tickStrings(values, scale, spacing)
        return [_fmt(float(np.round(inverse(self.freq_scale, v), 6))) for v in values]
