"""Images from image operators (e.g. a plugin's scalogram) on a view's frequency axis."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..operators import call
from ..spectral import hz_to_mel, mel_to_hz, to_db
from .images import DisplayImage


def _centre_edges(c: np.ndarray, log: bool) -> np.ndarray:
    """Edges around sorted centres: midpoints (geometric for ``log``), ends mirrored."""
    c = np.asarray(c, dtype=np.float64)
    if c.size == 1:
        return np.array([c[0] * 0.9, c[0] * 1.1]) if log else np.array([c[0] - 0.5, c[0] + 0.5])
    v = np.log(c) if log else c
    mid = (v[:-1] + v[1:]) / 2
    e = np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])
    return np.exp(e) if log else e


def plugin_image(op: str, x: np.ndarray, fs: float, t0: float, params: dict, *,
                 freq_scale: str = "linear", n_rows: int = 512) -> DisplayImage:
    """An image operator (e.g. a plugin's scalogram) on samples starting at ``t0`` s.

    The operator returns ``(frequencies Hz, times s, values (n_f, n_t))``.  Its
    rows, however they are spaced, are mapped onto ``n_rows`` rows uniform on
    the view's frequency scale, each showing the operator row that contains
    it (repeated, never interpolated), so the image lines up with the axis.
    Values that can be negative (e.g. MFCCs) are shown as they are, others in dB.
    """
    out = call(op, x, fs=fs, **params)
    if not (isinstance(out, tuple) and len(out) == 3):
        raise InputError(f"{op}: an image operator must return (frequencies, times, values)")
    freqs, times, values = (np.asarray(v) for v in out)
    if np.iscomplexobj(values):
        values = np.abs(values) ** 2
    values = values.reshape(-1, freqs.size, times.size)[0].astype(np.float32)
    order = np.argsort(freqs)
    freqs, values = freqs[order].astype(np.float64), values[order]
    geometric = bool(freqs.size > 2 and np.all(freqs > 0)
                     and np.allclose(np.diff(np.log(freqs)), np.log(freqs[1] / freqs[0]),
                                     rtol=1e-3))
    f_edges = _centre_edges(freqs, geometric)
    t_edges = t0 + _centre_edges(np.asarray(times, dtype=np.float64), False)
    t_edges[0] = max(t_edges[0], t0)
    if freq_scale == "log":
        lo = max(f_edges[0], 1e-3)
        target = np.geomspace(lo, f_edges[-1], n_rows + 1)
    elif freq_scale == "mel":
        target = mel_to_hz(np.linspace(hz_to_mel(max(f_edges[0], 0.0)),
                                       hz_to_mel(f_edges[-1]), n_rows + 1))
    else:
        target = np.linspace(f_edges[0], f_edges[-1], n_rows + 1)
    centres = (target[:-1] + target[1:]) / 2
    rows = np.clip(np.searchsorted(f_edges, centres, side="right") - 1, 0, freqs.size - 1)
    img = values[rows]
    db = img if np.nanmin(img) < 0 else to_db(img)
    return DisplayImage(np.ascontiguousarray(db, dtype=np.float32), t_edges, target, 0, 1.0,
                        "mean", False)
