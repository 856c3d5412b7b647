"""The document: what is open and how it is being looked at (no Qt)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from specscope.compute.io.base import Recording
from specscope.compute.spectral import StftParams


@dataclass(frozen=True)
class ViewSettings:
    """Analysis settings of the spectrogram view; immutable, replaced on change."""

    stft: StftParams = field(default_factory=StftParams)
    channel: int = 0
    reduce: str = "mean"
    freq_scale: str = "linear"
    #: processing steps before the spectrogram, as pipeline JSON (immutable, comparable)
    processing: str = "[]"
    #: "stft" (the tile engine) or a plugin operator whose output is an image
    representation: str = "stft"
    #: parameters of that operator, as JSON
    view_params: str = "{}"
    #: the filter designer's filter (pipeline filter-step params as JSON), "" when off
    designer: str = ""
    #: what the view shows of the designer's filter: "after", "before" or "difference"
    compare: str = "after"

    @property
    def steps(self) -> list[dict]:
        """Processing steps, the designer's filter last when it is on."""
        steps = json.loads(self.processing)
        if self.designer:
            steps.append({"op": "filter", "params": json.loads(self.designer)})
        return steps

    @property
    def base_steps(self) -> list[dict]:
        """Processing steps without the designer's filter (the "before" view)."""
        return json.loads(self.processing)

    def pipeline_dict(self) -> dict:
        """The processing and the spectrogram as one pipeline (``pipeline/1`` JSON)."""
        from specscope.compute.pipeline.core import SCHEMA
        from specscope.compute.spectral import window_text

        st = self.stft
        spec = {"op": "spectrogram", "params": {"nfft": st.nfft, "hop": st.hop,
                                                 "window": window_text(st.window),
                                                 "scaling": st.scaling}}
        return {"specscope": SCHEMA, "name": "specscope session", "steps": [*self.steps, spec]}

    def with_changes(self, **kw: object) -> ViewSettings:
        return replace(self, **kw)


@dataclass
class Document:
    """An opened recording and the settings it is viewed with."""

    recording: Recording
    settings: ViewSettings = field(default_factory=ViewSettings)

    @property
    def path(self) -> Path:
        return self.recording.path

    def summary(self) -> str:
        """One line for the status bar."""
        r = self.recording
        kind = "complex" if r.is_complex else "real"
        centre = f", centre {_fmt_hz(r.center_frequency)}" if r.center_frequency else ""
        return (f"{r.path.name} — {r.format}, {_fmt_hz(r.sample_rate)}, {r.n_channels} ch, "
                f"{kind}{centre}, {_fmt_duration(r.duration)}")


def _fmt_hz(hz: float) -> str:
    for scale, unit in ((1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")):
        if abs(hz) >= scale and abs(hz) % (scale / 1000) == 0:
            return f"{hz / scale:g} {unit}"
    return f"{hz:g} Hz"


def _fmt_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.3f} s"
    m, s = divmod(seconds, 60)
    if m < 60:
        return f"{int(m)}:{s:06.3f}"
    h, m = divmod(m, 60)
    return f"{int(h)}:{int(m):02d}:{s:06.3f}"
