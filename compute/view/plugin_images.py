"""Images from image operators (e.g. a plugin's scalogram) on a view's axes.

An image operator returns ``(frequencies Hz, times s, values (n_f, n_t))`` for
a signal.  :func:`plugin_view` computes it over a span of a longer signal the
way a view needs it:

- at the view's resolution: an operator with a ``hop`` parameter is asked for
  at most ``columns`` columns over the span (its hop is raised, never
  lowered); the columns of one without are averaged down to ``columns``;
- in chunks, each read with enough context around it that its columns equal
  those of one call over the whole signal, with ``cancelled()`` checked and
  ``progress(fraction)`` reported between chunks.  The context an operator
  needs is measured once per parameters: the reach of its response to an
  impulse (an operator whose response reaches too far is called once);
- on the view's frequency axis: its rows, however they are spaced, mapped
  onto ``n_rows`` rows uniform on the linear, log or mel scale.

:func:`plugin_image` does the same for samples in memory.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable

import numpy as np

from ..errors import Cancelled, InputError, SpecscopeError
from ..operators import call, get
from ..spectral import hz_to_mel, mel_to_hz, to_db
from ..types import FreqScale
from .images import DisplayImage

__all__ = ["operator_reach", "plugin_image", "plugin_view"]

#: a chunk should take about this long, so Cancel acts within a fraction of a second
CHUNK_SECONDS = 0.08
#: samples of the first chunk (later ones are sized from its time)
FIRST_CHUNK = 1 << 14
#: the response to an impulse counts down to this fraction of its peak (power: -80 dB)
REACH_FLOOR = 1e-8
#: longest impulse probe; an operator reaching further is called on the whole span
MAX_PROBE = 1 << 20


def _centre_edges(c: np.ndarray, log: bool) -> np.ndarray:
    """Edges around sorted centres: midpoints (geometric for ``log``), ends mirrored."""
    c = np.asarray(c, dtype=np.float64)
    if c.size == 1:
        return np.array([c[0] * 0.9, c[0] * 1.1]) if log else np.array([c[0] - 0.5, c[0] + 0.5])
    v = np.log(c) if log else c
    mid = (v[:-1] + v[1:]) / 2
    e = np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])
    return np.exp(e) if log else e


def _run(op: str, x: np.ndarray, fs: float, params: dict
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One call: frequencies, column times (s from ``x[0]``) and real values (n_f, n_t)."""
    out = call(op, x, fs=fs, **params)
    if not (isinstance(out, tuple) and len(out) == 3):
        raise InputError(f"{op}: an image operator must return (frequencies, times, values)")
    freqs, times, values = (np.asarray(v) for v in out)
    if np.iscomplexobj(values):
        values = np.abs(values) ** 2
    values = values.reshape(-1, freqs.size, times.size)[0]
    return freqs, np.asarray(times, dtype=np.float64), values


@functools.lru_cache(maxsize=64)
def _reach(op: str, params_json: str, fs: float) -> int | None:
    params = json.loads(params_json)
    n = FIRST_CHUNK
    while n <= MAX_PROBE:
        zero = np.zeros(n)
        impulse = zero.copy()
        impulse[n // 2] = 1.0
        try:
            _, t0, v0 = _run(op, zero, fs, params)
            _, t1, v1 = _run(op, impulse, fs, params)
        except SpecscopeError:
            return None  # e.g. frames longer than the probe: no chunking
        if t0.shape != t1.shape or v0.shape != v1.shape:
            return None
        diff = np.abs(v1.astype(np.float64) - v0.astype(np.float64))
        diff = np.nan_to_num(diff, nan=0.0).max(axis=0)
        peak = diff.max() if diff.size else 0.0
        if peak == 0.0:
            return None  # the probe does not tell
        hit = t1[diff > REACH_FLOOR * peak] * fs - n // 2
        reach = math.ceil(np.abs(hit).max())
        if reach < n // 4:
            return reach
        n *= 2
    return None


def operator_reach(op: str, params: dict, fs: float) -> int | None:
    """How far (samples) an image operator's columns reach into the signal, or None.

    Measured once per operator, parameters and sample rate: the farthest column
    centre whose values respond to an impulse above :data:`REACH_FLOOR` of the
    strongest response.  None when the reach exceeds a quarter of
    :data:`MAX_PROBE` samples or the probe fails: then the operator is called
    on the whole span.  For an operator with a ``hop`` parameter the reach is
    measured once at the first hop asked for, and that hop is added to it.

    Parameters
    ----------
    op : str
        The image operator's name.
    params : dict
        Its parameters.
    fs : float
        Sample rate in Hz.

    Returns
    -------
    int or None
        The reach in samples, or None when the operator is to be called on the
        whole span.

    Raises
    ------
    InputError
        No operator has this name, or its parameters are invalid.
    """
    if not _hop_param(op):
        return _reach(op, json.dumps(params, sort_keys=True, default=str), float(fs))
    # a view changes the hop at every zoom; the reach is the kernel's, measured once at
    # the first hop asked for, plus that hop (the probe sees column centres on its grid)
    rest = {k: v for k, v in params.items() if k != "hop"}
    key = (op, json.dumps(rest, sort_keys=True, default=str), float(fs))
    if key not in _REACH_ANY_HOP:
        hop = int(get(op).validate(dict(params))["hop"])
        reach = _reach(op, json.dumps(params, sort_keys=True, default=str), float(fs))
        _REACH_ANY_HOP[key] = None if reach is None else reach + hop
    return _REACH_ANY_HOP[key]


#: reach of operators with a hop, whatever the hop (see :func:`operator_reach`)
_REACH_ANY_HOP: dict[tuple[str, str, float], int | None] = {}


def _hop_param(op: str) -> bool:
    p = {q.name: q for q in get(op).params}.get("hop")
    return p is not None and p.type is int


def _bin_columns(times: np.ndarray, values: np.ndarray, columns: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Average consecutive columns down to ``columns`` (every column counted once)."""
    n = times.size
    if n <= columns:
        return times, values
    starts = np.unique(np.linspace(0, n, columns + 1)[:-1].astype(np.int64))
    counts = np.diff(np.append(starts, n))
    v = np.add.reduceat(values.astype(np.float64), starts, axis=1) / counts
    t = np.add.reduceat(times, starts) / counts
    return t, v


def plugin_view(op: str, read: Callable[[int, int], np.ndarray], n_samples: int, fs: float,
                start: int, stop: int, params: dict, *, t_offset: float = 0.0,
                columns: int | None = None, freq_scale: FreqScale = "linear", n_rows: int = 512,
                progress: Callable[[float], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> DisplayImage:
    """An image operator over samples ``start:stop`` of a signal, at a view's resolution.

    Parameters
    ----------
    op : str
        The image operator (e.g. ``"scalogram.morlet"``).
    read : callable
        ``read(a, b)`` returns samples ``a:b`` (``0 <= a < b <= n_samples``), 1-D.
    n_samples : int
        Length of the signal; outside ``0 .. n_samples`` it is taken as zeros.
    fs : float
        Sample rate in Hz.
    start, stop : int
        The span, in samples.
    params : dict
        The operator's parameters.
    t_offset : float
        Time (s) of sample 0.
    columns : int, optional
        At most this many columns over the span (the view's width, or twice it).
    freq_scale : {"linear", "log", "mel"}
        The view's frequency axis, ``n_rows`` rows uniform on it.
    n_rows : int
        Rows of the image.
    progress : callable, optional
        ``progress(fraction)`` after each chunk.
    cancelled : callable, optional
        Checked between chunks; when it returns True, :class:`Cancelled` is raised.

    Returns
    -------
    DisplayImage
        dB (or the values as they are, when some are negative), column edges
        in seconds, row edges in Hz.

    Raises
    ------
    InputError
        The span holds fewer than 2 samples or gives no column, or the operator
        is unknown or does not return an image.
    Cancelled
        ``cancelled()`` returned True.
    """
    start, stop = max(0, int(start)), min(int(n_samples), int(stop))
    if stop - start < 2:
        raise InputError(f"{op}: the span holds {max(stop - start, 0)} samples; it needs >= 2")
    params = dict(params)
    hop = 1
    if _hop_param(op):
        hop = int(get(op).validate(params)["hop"])
        if columns is not None:
            hop = max(hop, -(-(stop - start) // int(columns)))
            params["hop"] = hop

    def check() -> None:
        if cancelled is not None and cancelled():
            raise Cancelled()

    def padded(a: int, b: int) -> np.ndarray:
        """Samples ``a:b``, zeros where that lies outside the signal."""
        lo, hi = max(a, 0), min(b, n_samples)
        x = read(lo, hi) if hi > lo else np.zeros(0, np.float32)
        if lo == a and hi == b:
            return x
        out = np.zeros(b - a, dtype=x.dtype if x.size else np.float32)
        out[lo - a:hi - a] = x
        return out

    check()
    reach = operator_reach(op, params, fs)
    check()
    parts_t, parts_v, freqs = [], [], None
    if reach is None:  # one call over the span, as the operator sees a whole signal
        freqs, t, v = _run(op, read(start, stop), fs, params)
        parts_t.append(start + t * fs)
        parts_v.append(v)
    else:
        # chunk starts stay on the operator's hop grid from ``start``, so every column
        # is the one a single call would give, and belongs to exactly one chunk
        margin = -(-(reach + hop) // hop) * hop
        # at least two margins (the context read around a chunk at most doubles the
        # work), at most a sixteenth of the span (progress to show) when margins allow
        most = max(-(-(stop - start) // 16), 2 * margin)
        chunk = -(-min(max(FIRST_CHUNK, 2 * margin), most) // hop) * hop
        a = start
        while a < stop:
            b = min(a + chunk, stop)
            t_start = time.perf_counter()
            f, t, v = _run(op, padded(a - margin, b + margin), fs, params)
            pos = (a - margin) + t * fs
            keep = (pos >= a - 1e-3) & (pos < b - 1e-3)
            freqs = f
            parts_t.append(pos[keep])
            parts_v.append(v[:, keep])
            if progress is not None:
                progress((b - start) / (stop - start))
            check()
            # size the next chunk for CHUNK_SECONDS (its margins count too)
            per_sample = (time.perf_counter() - t_start) / (b - a + 2 * margin)
            want = int(CHUNK_SECONDS / max(per_sample, 1e-9)) - 2 * margin
            chunk = -(-min(max(want, 2 * margin, 4096, hop), most) // hop) * hop
            a = b
    assert freqs is not None
    pos = np.concatenate(parts_t)
    values = np.concatenate(parts_v, axis=1) if parts_v else np.zeros((freqs.size, 0))
    if pos.size == 0:
        raise InputError(f"{op}: the span gave no columns; zoom out or lower the hop")
    if columns is not None:
        pos, values = _bin_columns(pos, values, int(columns))
    return _display(freqs, t_offset + pos / fs, values.astype(np.float32),
                    (t_offset + start / fs, t_offset + stop / fs), freq_scale, n_rows)


def _display(freqs: np.ndarray, times: np.ndarray, values: np.ndarray,
             span: tuple[float, float], freq_scale: str, n_rows: int) -> DisplayImage:
    """Operator rows mapped onto ``n_rows`` rows uniform on the view's frequency scale."""
    order = np.argsort(freqs)
    freqs, values = freqs[order].astype(np.float64), values[order]
    geometric = bool(freqs.size > 2 and np.all(freqs > 0)
                     and np.allclose(np.diff(np.log(freqs)), np.log(freqs[1] / freqs[0]),
                                     rtol=1e-3))
    f_edges = _centre_edges(freqs, geometric)
    t_edges = _centre_edges(times, False)
    t_edges[0] = max(t_edges[0], span[0])
    t_edges[-1] = max(min(t_edges[-1], span[1]), t_edges[-2] + 1e-12)
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


def plugin_image(op: str, x: np.ndarray, fs: float, t0: float, params: dict, *,
                 freq_scale: FreqScale = "linear", n_rows: int = 512, columns: int | None = None,
                 progress: Callable[[float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> DisplayImage:
    """An image operator (e.g. a plugin's scalogram) on samples ``x`` starting at ``t0`` s.

    The signal is taken as zeros outside ``x``.  The operator's rows, however
    they are spaced, are mapped onto ``n_rows`` rows uniform on the view's
    frequency scale, each showing the operator row that contains it
    (repeated, never interpolated), so the image lines up with the axis.
    Values that can be negative (e.g. MFCCs) are shown as they are, others in
    dB.

    Parameters
    ----------
    op : str
        The image operator (e.g. ``"scalogram.morlet"``).
    x : numpy.ndarray
        The samples, 1-D.
    fs : float
        Sample rate in Hz.
    t0 : float
        Time (s) of ``x[0]``.
    params : dict
        The operator's parameters.
    freq_scale : {"linear", "log", "mel"}
        The view's frequency axis.
    n_rows : int
        Rows of the image, uniform on ``freq_scale``.
    columns : int, optional
        At most this many columns.
    progress : callable, optional
        ``progress(fraction)`` after each chunk.
    cancelled : callable, optional
        Checked between chunks.

    Returns
    -------
    DisplayImage
        dB (or the values as they are), column edges in seconds, row edges in Hz.

    Raises
    ------
    InputError
        ``x`` holds fewer than 2 samples, or the operator is unknown or does not
        return an image.
    Cancelled
        ``cancelled()`` returned True.
    """
    x = np.asarray(x)
    return plugin_view(op, lambda a, b: x[a:b], x.shape[0], fs, 0, x.shape[0], params,
                       t_offset=t0, columns=columns, freq_scale=freq_scale, n_rows=n_rows,
                       progress=progress, cancelled=cancelled)
