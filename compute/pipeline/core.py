"""Pipelines: the one representation of processing, saved as JSON.

A pipeline is a list of steps, each naming an operator of the registry (built
in or from a plugin) and its parameters, and optionally ending with a
spectrogram.  What the app shows, what ``specscope run`` executes, what a
notebook calls and what a Dask worker runs is the same :class:`Pipeline`::

    {
      "specscope": "pipeline/1",
      "name": "hum removal and band-pass",
      "steps": [
        {"op": "filter", "params": {"design": "iircomb", "frequency": 50.0, "q": 30,
                                    "kind": "notch"}},
        {"op": "filter", "params": {"design": "butter", "btype": "bandpass", "order": 4,
                                    "cutoff": [300.0, 3000.0], "zero_phase": false}},
        {"op": "spectrogram", "params": {"nfft": 1024, "hop": 256, "window": "hann",
                                         "scaling": "psd"}}
      ]
    }

Step kinds
----------
``filter``
    A filter designed in Hz, for the recording's sample rate, when the pipeline
    is bound to it (:meth:`Pipeline.bind`).  The params are a
    :class:`specscope.compute.filters.core.FilterSpec` (``spec.to_params()``), designed
    by :func:`specscope.compute.filters.core.design`, the one design path shared with
    the filter designer and ``specscope filter``.  IIR designs (``butter``,
    ``cheby1``, ``cheby2``, ``ellip``, ``bessel`` -- fixed or minimum order --,
    ``iirnotch``, ``iirpeak``, ``notches``) become second-order sections applied
    with ``sosfilt``; FIR designs (``firwin``, ``remez``, ``firls``, ``firwin2``)
    become taps ``b`` applied as ``lfilter(b, 1)`` (a direct convolution);
    ``iircomb`` keeps scipy's ``(b, a)``, whose only non-zero taps are 0 and
    ``N = fs / frequency``, and is applied as ``N`` interleaved first-order
    recursions, which is ``lfilter(b, a)`` computed in O(1) per sample (its SOS
    form has ``N / 2`` sections).  ``zero_phase: true`` filters forwards and
    backwards (``sosfiltfilt`` / ``filtfilt``).
``spectrogram``
    The short-time power spectrum of :func:`specscope.compute.spectral.spectrogram`
    (``nfft``, ``hop``, ``window``, ``scaling`` as :class:`StftParams`).  It
    must be the last step.
any registry operator
    ``{"op": "gain", "params": {"factor": 2.0}}``.  Operators with a namespace,
    ``"myplugin.op"``, load the plugin ``myplugin`` on demand.  A step must map
    a signal to a signal of the same sample rate.

Chunked runs
------------
:meth:`Pipeline.run` reads a recording in chunks and gives the same numbers
as processing it whole (:meth:`Pipeline.__call__`), because each step runs as
a stream with declared history:

* sample-wise operators (history 0): chunk by chunk;
* IIR filters: carried state (``sosfilt`` ``zi``), identical to a whole run;
* FIR filters: a direct convolution over the carried last ``numtaps - 1`` inputs,
  identical to a whole run;
* operators with history ``h`` whose output has the input's length (median,
  Savitzky-Golay): recomputed over an overlap of ``h`` samples on both sides,
  exact;  operators whose output is ``h`` samples shorter (``moving_average``,
  ``fm_demod``): the last ``h`` inputs are carried, exact;
* the spectrogram: frames straddling chunk borders are computed from a carried
  buffer, exact;
* ``zero_phase`` filters cannot stream: the backward pass needs the future.
  They run over an overlap of ``edge`` samples on both sides of each chunk
  (FIR: ``numtaps``, exact; IIR: the length after which the impulse response
  has lost all but ``SETTLE_TOL`` of its L1 norm, so a chunked run differs from
  a whole run by at most about ``SETTLE_TOL * max|x|``); see
  :attr:`BoundPipeline.lookback`;
* operators that need the whole signal (history ``None``, e.g. ``detrend``)
  run only when the range fits in one chunk; otherwise :meth:`Pipeline.run`
  fails before reading any data, naming the step.

Pipeline files are data: they are parsed as JSON, never executed or unpickled.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import numbers
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import backend as _backend
from ..errors import Cancelled, InputError, RecordingError, SpecscopeError
from ..extensions.plugins import PluginError
from ..filters import core as _filters
from ..operators import registry
from ..params import Param, json_types
from ..spectral import FRAMES_PER_BLOCK, SCALINGS, StftParams, stft_frame_rows

__all__ = [
    "DEFAULT_CHUNK_SAMPLES",
    "FILTER_DESIGNS",
    "SCHEMA",
    "SETTLE_TOL",
    "BoundPipeline",
    "Pipeline",
    "PipelineResult",
]

#: value of the ``"specscope"`` field of a pipeline file
SCHEMA = "pipeline/1"
#: samples read per chunk by :meth:`Pipeline.run`
DEFAULT_CHUNK_SAMPLES = 1 << 20
#: IIR impulse-response tail (relative L1) treated as settled
SETTLE_TOL = _filters.SETTLE_TOL
#: largest pipeline file read (they are small, hand-written documents)
MAX_FILE_BYTES = 1 << 20
_MAX_SETTLE = 1 << 24
_TOP_FIELDS = ("specscope", "name", "description", "steps")
_STEP_FIELDS = ("op", "params")
_OP_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")

# -- the filter step's schema -----------------------------------------------------------

#: design name -> (registry design operator, its parameters): see specscope.compute.filters.core
FILTER_DESIGNS = _filters.FILTER_DESIGNS
_DESIGN = _filters.DESIGN_PARAM

_SPECTROGRAM_PARAMS = (
    Param("nfft", int, 1024, min=2, max=1 << 22, unit="samples", help="frame length"),
    Param("hop", int, 256, min=1, unit="samples", help="samples between frames"),
    Param("window", "window", "hann", help="window name or (name, parameter)"),
    Param("scaling", str, "psd", choices=SCALINGS),
)


def _strip(msg: str, name: str) -> str:
    return msg[len(name) + 2:] if msg.startswith(name + ": ") else msg


# -- steps ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One validated step: ``op`` and its parameters (as given and completed)."""

    op: str
    params: dict[str, Any]
    values: dict[str, Any] = field(repr=False, compare=False)
    index: int = 0

    @property
    def label(self) -> str:
        if self.op == "filter":
            return f"steps[{self.index}] (filter {self.values['design']})"
        return f"steps[{self.index}] ({self.op})"

    def error(self, msg: str) -> InputError:
        return InputError(f"{self.label}: {msg}")


def _resolve_operator(name: str, where: str) -> registry.Operator:
    try:
        return registry.get(name)  # loads the plugin of a "plugin.op" name on first use
    except PluginError as exc:
        raise InputError(f"{where}: {exc}") from None
    except InputError:
        pass
    if "." in name:
        ns = name.split(".", 1)[0]
        raise InputError(f"{where}: operator {name!r} needs the plugin {ns!r}, which is "
                         "not installed") from None
    known = [o.name for o in registry.list_operators()] + ["filter", "spectrogram"]
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"{where}: op={name!r} is not an operator{hint} (see 'specscope ops')")


def _validate_params(schema: Sequence[Param], params: dict[str, Any], where: str,
                     skip: Sequence[str] = ()) -> dict[str, Any]:
    by_name = {p.name: p for p in schema}
    for k in params:
        if k not in by_name and k not in skip:
            close = difflib.get_close_matches(k, list(by_name), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{where}: unknown parameter {k!r}{hint} (parameters: "
                             f"{', '.join(by_name)})")
    out: dict[str, Any] = {}
    for p in schema:
        if p.name in params:
            try:
                out[p.name] = p.validate(params[p.name])
            except InputError as exc:
                raise InputError(f"{where}: {exc}") from None
        elif p.required:
            raise InputError(f"{where}: parameter {p.name!r} is required"
                             + (f" ({p.help})" if p.help else ""))
        else:
            out[p.name] = p.default
    return out


def _validate_filter(params: dict[str, Any], where: str) -> dict[str, Any]:
    """The filter step's values (every field of its design), validated by the one
    design path, :class:`~specscope.compute.filters.core.FilterSpec`."""
    if "design" not in params:
        raise InputError(f"{where}: parameter 'design' is required (one of "
                         f"{', '.join(FILTER_DESIGNS)})")
    design = _validate_params([_DESIGN], {"design": params["design"]}, where)["design"]
    where = f"{where.split(' (')[0]} (filter {design})"
    try:
        return _filters.FilterSpec.from_params(params).values()
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _parse_step(raw: Any, index: int) -> Step:
    where = f"steps[{index}]"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: must be an object {{\"op\": ..., \"params\": {{...}}}}, "
                         f"got {type(raw).__name__}")
    for k in raw:
        if k not in _STEP_FIELDS:
            raise InputError(f"{where}: unknown field {k!r} (a step has: "
                             f"{', '.join(_STEP_FIELDS)})")
    if "op" not in raw:
        raise InputError(f"{where}: missing field 'op' (an operator name, 'filter' or "
                         "'spectrogram')")
    op = raw["op"]
    if not isinstance(op, str) or not _OP_NAME.match(op):
        raise InputError(f"{where}: op={op!r} is not an operator name (lower-case words "
                         "joined by '_', 'plugin.op' for plugins)")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise InputError(f"{where} ({op}): params must be an object, got "
                         f"{type(params).__name__}")
    where = f"{where} ({op})"
    if op == "filter":
        values = _validate_filter(params, where)
    elif op == "spectrogram":
        values = _validate_params(_SPECTROGRAM_PARAMS, params, where)
        try:
            StftParams(values["nfft"], values["hop"], values["window"], values["scaling"])
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    else:
        operator = _resolve_operator(op, where)
        if not operator.takes_input or operator.input_kind != "array":
            raise InputError(f"{where}: {op} does not take a signal; a pipeline step must "
                             "map a signal to a signal")
        if "zi" in params:
            raise InputError(f"{where}: zi is managed by the pipeline (state carried across "
                             "chunks); remove it")
        try:
            values = operator.validate(params)
        except InputError as exc:
            raise InputError(f"{where}: {_strip(str(exc), op)}") from None
    return Step(op, json_types(copy.deepcopy(params)), values, index)


# -- streaming stages ---------------------------------------------------------------------


def _backend_of(x: Any) -> str:
    return "cupy" if _backend.is_device_array(x) else "numpy"


class _HostOp:
    """A registry operator's NumPy implementation, its parameters validated once.

    ``registry.call`` validates every parameter on every call.  A stream calls
    the same operator with the same parameters for every block, so a stage
    validates them when the pipeline is bound and then runs the implementation
    ``registry.call(..., backend="numpy")`` chooses, the way it runs it: the
    same input check, the same errors, the call recorded for
    :func:`specscope.compute.operators.autotune.profile`.  ``varying`` parameters (a
    carried ``zi``) are the stage's own arrays and are passed as they are.
    """

    def __init__(self, op: registry.Operator | str, fs: float | None = None,
                 **params: Any) -> None:
        from ..operators import autotune

        self.op = registry.get(op) if isinstance(op, str) else op
        self.impl = self.op.get_implementation("numpy")
        kwargs = dict(self.op.validate(params))
        if self.impl.wants_xp:
            kwargs["xp"] = np
        if self.impl.wants_fs:
            kwargs["fs"] = self.impl.fs_default if fs is None else float(fs)
        self.kwargs = kwargs
        self._record = autotune.record

    def __call__(self, x: np.ndarray, **varying: Any) -> Any:
        op = self.op
        x = op._check_input(x)
        kwargs = {**self.kwargs, **varying} if varying else self.kwargs
        t0 = time.perf_counter()
        try:
            result = self.impl.fn(x, **kwargs)
        except SpecscopeError:
            raise
        except (ValueError, TypeError, ZeroDivisionError, IndexError) as exc:
            msg = " ".join(str(exc).split()) or type(exc).__name__
            raise InputError(f"{op.name}: {msg}") from exc
        self._record(op.name, "numpy", time.perf_counter() - t0)
        return result


class _Stage:
    """One time-domain step as a stream: push chunks, get the whole-run output back."""

    #: input samples before an output sample it depends on (IIR: settling length)
    lookback = 0
    #: input samples after an output sample it depends on
    lookahead = 0
    #: leading samples a whole run does not emit (outputs of "valid" operators)
    drop = 0
    #: True when a cold start ``lookback`` samples early gives exactly the same output
    exact_split = True
    #: False when the step needs the whole signal at once
    streams = True
    #: True when real input gives complex output (hilbert, frequency_shift)
    makes_complex = False

    def __init__(self, step: Step) -> None:
        self.step = step

    def new_state(self) -> dict[str, Any]:
        return {}

    def push(self, st: dict[str, Any], x: np.ndarray, final: bool) -> np.ndarray:
        raise NotImplementedError

    # Several channels at once: ``push_rows`` takes a chunk shaped (channels, n)
    # and returns (channels, m), each row equal, bit for bit, to what ``push``
    # returns for that channel alone.  Stages that can, filter all channels in
    # one call; the others run ``push`` channel by channel (this default).
    def new_rows_state(self, channels: int) -> dict[str, Any]:
        """State of a stream of ``channels`` channels (for :meth:`push_rows`)."""
        return {"rows": [self.new_state() for _ in range(channels)]}

    def push_rows(self, st: dict[str, Any], x: Any, final: bool) -> Any:
        """Push a chunk shaped (channels, n); returns (channels, m)."""
        rows = st["rows"]
        if not rows:
            return x[:, :0]
        ys = [self.push(s, x[c], final) for c, s in enumerate(rows)]
        return _backend.get_xp(_backend_of(ys[0])).stack(ys)

    def whole(self, x: Any) -> Any:
        """Run on a whole 1-D signal (NumPy or CuPy)."""
        return self.push(self.new_state(), x, True)

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except InputError as exc:
            raise self.step.error(str(exc)) from None


class _Samplewise(_Stage):
    #: True when the operator, given (channels, n), returns each row as it would alone
    #: (checked on a probe when the pipeline is bound)
    rows_ok = False

    def __init__(self, step: Step, op: registry.Operator, fs: float) -> None:
        super().__init__(step)
        self.op, self.fs = op, fs
        self._host = _HostOp(op, fs, **step.values)

    def push(self, st, x, final):
        if _backend_of(x) == "numpy":
            return self._call(lambda: self._host(x))
        return self._call(lambda: self.op.run(x, backend=_backend_of(x), fs=self.fs,
                                              **self.step.values))

    def new_rows_state(self, channels):
        return super().new_rows_state(channels) if not self.rows_ok else {}

    def push_rows(self, st, x, final):
        if not self.rows_ok:
            return super().push_rows(st, x, final)
        return self.push(st, x, final)


class _Sos(_Stage):
    """IIR in second-order sections with carried ``zi``."""

    exact_split = False

    def __init__(self, step: Step, sos: np.ndarray, settle: int) -> None:
        super().__init__(step)
        self.sos, self.lookback = sos, settle
        self._host = _HostOp("sosfilt", sos=sos, axis=-1)
        self._sos_k = np.ascontiguousarray(sos, np.float64) if np.isrealobj(sos) else sos

    def new_state(self):
        return {"zi": None}

    def push(self, st, x, final):
        if _backend_of(x) == "cupy" and st["zi"] is None and final:
            return self._call(lambda: registry.call("sosfilt", x, backend="cupy", sos=self.sos))
        return self._filter(st, x, (self.sos.shape[0], 2))

    def new_rows_state(self, channels):
        return {"zi": None, "zk": None}

    def push_rows(self, st, x, final):
        # all channels in one call: scipy's sosfilt over the last axis, zi shaped
        # (sections, channels, 2), or straight into its kernel (the same loop, without
        # the wrapper's reshaping: most of the time of a small real-time block)
        kernel = _sos_kernel()
        if (kernel is not None and st["zi"] is None and type(x) is np.ndarray
                and x.ndim == 2 and np.result_type(self.sos, x.dtype) == self._sos_k.dtype):
            y = np.array(x, self._sos_k.dtype, order="C")  # a copy, filtered in place
            if st["zk"] is None:  # the kernel's layout: (channels, sections, 2)
                st["zk"] = np.zeros((x.shape[0], self.sos.shape[0], 2), y.dtype)
            if y.size:
                t0 = time.perf_counter()
                kernel(self._sos_k, y, st["zk"])
                self._host._record("sosfilt", "numpy", time.perf_counter() - t0)
            return y
        if st["zk"] is not None:  # switch to the wrapper's layout, carrying the state on
            st["zi"], st["zk"] = np.ascontiguousarray(st["zk"].transpose(1, 0, 2)), None
        return self._filter(st, x, (self.sos.shape[0], x.shape[0], 2))

    def _filter(self, st, x, zi_shape):
        if st["zi"] is None:
            st["zi"] = np.zeros(zi_shape, np.result_type(self.sos, x.dtype))
        if _backend_of(x) == "numpy":
            y, st["zi"] = self._call(lambda: self._host(x, zi=st["zi"]))
        else:
            y, st["zi"] = self._call(lambda: registry.call(
                "sosfilt", x, backend=_backend_of(x), sos=self.sos, zi=st["zi"]))
        return y


_SOS_KERNEL: list[Any] = []


def _sos_kernel() -> Callable[..., Any] | None:
    """scipy's in-place sosfilt loop ``(sos, x (signals, n), zi (signals, sections, 2))``
    when it is there and gives exactly what ``scipy.signal.sosfilt`` gives, else None."""
    if not _SOS_KERNEL:
        kernel = None
        try:
            import scipy.signal as ss
            from scipy.signal._sosfilt import _sosfilt as k

            rng = np.random.default_rng(0)
            sos = ss.butter(4, [0.05, 0.3], "bandpass", output="sos")
            x = rng.standard_normal((2, 300)).astype(np.float32)
            zi = np.zeros((sos.shape[0], 2, 2))
            zk = np.zeros((2, sos.shape[0], 2))
            ok = True
            for part in (x[:, :123], x[:, 123:]):
                want, zi = ss.sosfilt(sos, part, axis=-1, zi=zi)
                got = np.array(part, np.float64, order="C")
                k(sos, got, zk)
                ok = ok and np.array_equal(want, got) and np.array_equal(
                    zi, zk.transpose(1, 0, 2))
            kernel = k if ok else None
        except Exception:  # noqa: BLE001 -- not there or not the same: use the wrapper
            kernel = None
        _SOS_KERNEL.append(kernel)
    return _SOS_KERNEL[0]


class _Fir(_Stage):
    """FIR taps: a direct convolution over the carried last ``numtaps - 1`` inputs.

    The whole run takes the same path (zeros before the first sample), so every
    output is the same dot product, bit for bit, however the signal is chunked.
    """

    def __init__(self, step: Step, b: np.ndarray) -> None:
        super().__init__(step)
        self.b, self.lookback = b, b.size - 1
        self._host = _HostOp("convolve", kernel=b, mode="valid", method="direct")

    def new_state(self):
        return {"tail": None}

    def push(self, st, x, final):
        xp = _backend.get_xp(_backend_of(x))
        if st["tail"] is None:
            st["tail"] = xp.zeros(self.lookback, x.dtype)
        z = xp.concatenate([st["tail"], x])
        st["tail"] = z[z.shape[0] - self.lookback:]
        if x.shape[0] == 0:
            return x
        return self._convolve(z)

    def new_rows_state(self, channels):
        return {"tail": None}

    def push_rows(self, st, x, final):
        # the carried tails of all channels in one array; the same 1-D direct
        # convolution per row as push (a 2-D convolution would sum in another order)
        xp = _backend.get_xp(_backend_of(x))
        if st["tail"] is None:
            st["tail"] = xp.zeros((x.shape[0], self.lookback), x.dtype)
        z = xp.concatenate([st["tail"], x], axis=-1)
        st["tail"] = z[:, z.shape[1] - self.lookback:]
        if x.shape[1] == 0 or x.shape[0] == 0:
            return x
        return xp.stack([self._convolve(row) for row in z])

    def _convolve(self, z):
        if _backend_of(z) == "numpy":
            return self._call(lambda: self._host(z))
        return self._call(lambda: registry.call("convolve", z, backend="cupy",
                                                kernel=self.b, mode="valid", method="direct"))


class _Comb(_Stage):
    """``lfilter(b, a)`` for b, a non-zero only at 0 and N, as N first-order recursions.

    Sample ``n`` belongs to phase ``n % N``; each phase is the filter
    ``([b0, bN], [1, aN])`` in transposed direct form with one state value.
    """

    exact_split = False

    def __init__(self, step: Step, b: np.ndarray, a: np.ndarray, settle: int) -> None:
        super().__init__(step)
        self.n = b.size - 1
        self.b0, self.bn = float(b[0] / a[0]), float(b[-1] / a[0])
        self.an = float(a[-1] / a[0])
        self.lookback = settle

    def new_state(self):
        return {"z": None, "pos": 0}

    def push(self, st, x, final):
        xp = _backend.get_xp(_backend_of(x))
        x = x.astype(np.result_type(x.dtype, np.float64), copy=False)
        if st["z"] is None:
            st["z"] = xp.zeros(self.n, x.dtype)
        z, n, L = st["z"], self.n, x.shape[0]
        y = xp.empty_like(x)
        p = st["pos"] % n
        h = min(L, (n - p) % n)
        if h:
            y[:h] = self.b0 * x[:h] + z[p:p + h]
            z[p:p + h] = self.bn * x[:h] - self.an * y[:h]
        m = (L - h) // n
        if m:
            rows = x[h:h + m * n].reshape(m, n)
            if xp is np:
                import scipy.signal as ss
                out, zf = ss.lfilter([self.b0, self.bn], [1.0, self.an], rows, axis=0,
                                     zi=z[None, :])
                y[h:h + m * n] = out.reshape(-1)
                z[:] = zf[0]
            else:  # first-order recursion down the rows, vectorised over phases
                for r in range(m):
                    yr = self.b0 * rows[r] + z
                    z[:] = self.bn * rows[r] - self.an * yr
                    y[h + r * n:h + (r + 1) * n] = yr
        t = L - h - m * n
        if t:
            xt = x[L - t:]
            y[L - t:] = self.b0 * xt + z[:t]
            z[:t] = self.bn * xt - self.an * y[L - t:]
        st["pos"] += L
        return y


class _Centered(_Stage):
    """A same-length step whose output at ``i`` depends on inputs ``i-r .. i+r``.

    Streams by recomputing over an overlap of ``r`` samples on each side of a chunk;
    the edge handling of the operator applies only at the true ends of the signal.
    """

    def __init__(self, step: Step, fn: Callable[[Any], Any], radius: int,
                 exact: bool = True) -> None:
        super().__init__(step)
        self.fn = fn
        self.lookback = self.lookahead = int(radius)
        self.exact_split = exact

    def new_state(self):
        return {"buf": None, "pos0": 0, "emitted": 0}

    def whole(self, x):
        return self._call(lambda: self.fn(x))

    def push(self, st, x, final):
        xp = _backend.get_xp(_backend_of(x))
        buf = x if st["buf"] is None else xp.concatenate([st["buf"], x])
        pos0, e, r = st["pos0"], st["emitted"], self.lookback
        total = pos0 + buf.shape[0]
        new_e = total if final else max(e, total - r)
        if new_e <= e:
            st["buf"] = buf
            return buf[:0]
        y = self._call(lambda: self.fn(buf))
        if y.shape[0] != buf.shape[0]:
            raise self.step.error(f"returned {y.shape[0]} samples for {buf.shape[0]}; "
                                  "expected the same length")
        out = y[e - pos0:new_e - pos0]
        keep = max(pos0, new_e - r)
        st["buf"], st["pos0"], st["emitted"] = buf[keep - pos0:], keep, new_e
        return out


class _Valid(_Stage):
    """A step whose output is ``h`` samples shorter: output ``j`` uses inputs ``j .. j+h``."""

    def __init__(self, step: Step, fn: Callable[[Any], Any], h: int) -> None:
        super().__init__(step)
        self.fn, self.lookback, self.drop = fn, int(h), int(h)

    def new_state(self):
        return {"tail": None}

    def whole(self, x):
        return self._call(lambda: self.fn(x))

    def push(self, st, x, final):
        xp = _backend.get_xp(_backend_of(x))
        z = x if st["tail"] is None else xp.concatenate([st["tail"], x])
        h = self.lookback
        st["tail"] = z[max(0, z.shape[0] - h):]
        if z.shape[0] <= h:
            return z[:0]
        return self._call(lambda: self.fn(z))


class _Whole(_Stage):
    """A step that needs the whole signal (history None)."""

    streams = False
    exact_split = False

    def __init__(self, step: Step, fn: Callable[[Any], Any]) -> None:
        super().__init__(step)
        self.fn = fn

    def new_state(self):
        return {"parts": []}

    def whole(self, x):
        return self._call(lambda: self.fn(x))

    def push(self, st, x, final):
        st["parts"].append(x)
        if not final:
            return x[:0]
        xp = _backend.get_xp(_backend_of(x))
        whole = xp.concatenate(st["parts"]) if len(st["parts"]) > 1 else st["parts"][0]
        st["parts"] = []
        return self._call(lambda: self.fn(whole))


class _Spectrogram:
    """Frames of the STFT as a stream: a buffer carries the samples of straddling frames."""

    def __init__(self, step: Step, params: StftParams, fs: float) -> None:
        self.step, self.params, self.fs = step, params, fs

    def new_state(self):
        return {"buf": None}

    def push(self, st, x, final, two_sided: bool) -> np.ndarray:
        """A 1-D chunk -> frames shaped (frequencies, frames)."""
        return self.push_rows(st, x, final, two_sided).T

    def new_rows_state(self, channels: int) -> dict[str, Any]:
        return {"buf": None}

    def push_rows(self, st, x, final, two_sided: bool) -> np.ndarray:
        """A chunk shaped (..., n) -> frames shaped (..., frames, frequencies).

        All channels are transformed at once; each equals its 1-D stream.
        """
        p = self.params
        buf = x if st["buf"] is None else np.concatenate([st["buf"], x], axis=-1)
        k = p.n_frames(buf.shape[-1])
        if k <= FRAMES_PER_BLOCK:
            out = stft_frame_rows(buf, p, self.fs, first=0, last=k, two_sided=two_sided)
        else:
            n_freq = p.nfft if two_sided else p.nfft // 2 + 1
            ftype = np.float32 if buf.dtype in (np.float32, np.complex64) else np.float64
            out = np.empty((*buf.shape[:-1], k, n_freq), ftype)
            for k0 in range(0, k, FRAMES_PER_BLOCK):
                k1 = min(k0 + FRAMES_PER_BLOCK, k)
                out[..., k0:k1, :] = stft_frame_rows(buf, p, self.fs, first=k0, last=k1,
                                                     two_sided=two_sided)
        st["buf"] = buf[..., k * p.hop:]
        return out


# -- designing filters ----------------------------------------------------------------


def _impulse_settle(apply: Callable[[np.ndarray], np.ndarray], where: str,
                    tol: float = SETTLE_TOL) -> int:
    """Samples after which the impulse response keeps at most ``tol`` of its L1 norm."""
    def first(n: int) -> np.ndarray:
        imp = np.zeros(n)
        imp[0] = 1.0
        return apply(imp)
    try:
        return _filters.impulse_settle(first, tol)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class Designed:
    """Coefficients of a ``filter`` step, designed for one sample rate."""

    form: str  # "sos", "fir" or "comb"
    coefficients: dict[str, np.ndarray]
    sample_rate: float
    settle: int = 0


def _design(step: Step, fs: float) -> Designed:
    """Design a filter step through :func:`specscope.compute.filters.core.design`."""
    try:
        spec = _filters.FilterSpec.from_params(step.params)
        d = _filters.design(spec, fs)
        settle = d.settle
    except InputError as exc:
        raise step.error(str(exc)) from None
    return Designed(d.form, d.coefficients, fs, settle)


def _finish_sos(step: Step, sos: np.ndarray, fs: float) -> Designed:
    try:
        d = _filters.Design.from_coefficients(fs or 1.0, sos=sos)
        settle = d.settle
    except InputError as exc:
        raise step.error(str(exc)) from None
    return Designed("sos", {"sos": sos}, fs, settle)


def _filter_stage(step: Step, d: Designed) -> _Stage:
    c = d.coefficients
    if not step.values["zero_phase"]:
        if d.form == "sos":
            return _Sos(step, c["sos"], d.settle)
        if d.form == "fir":
            return _Fir(step, c["b"])
        return _Comb(step, c["b"], c["a"], d.settle)
    if d.form == "sos":
        def fn(x):
            return registry.call("sosfiltfilt", x, backend=_backend_of(x), sos=c["sos"])
        return _Centered(step, fn, d.settle, exact=False)
    b = c["b"]
    a = c.get("a", np.ones(1))

    def fn2(x):
        return registry.call("filtfilt", x, backend=_backend_of(x), b=b, a=a)
    if d.form == "fir":
        return _Centered(step, fn2, b.size, exact=True)
    return _Centered(step, fn2, d.settle, exact=False)


def _generic_stage(step: Step, fs: float, complex_input: bool) -> _Stage:
    op = registry.get(step.op)

    def fn(x):
        return op.run(x, backend=_backend_of(x), fs=fs, **step.values)

    if op.name in ("sosfilt", "lfilter"):
        if op.name == "sosfilt":
            sos = np.asarray(step.values["sos"], dtype=float)
            if sos.ndim != 2 or sos.shape[1] != 6:
                raise step.error(f"sos must be shaped (n_sections, 6), got {sos.shape}")
            return _finish_stage_sos(step, sos)
        b = np.atleast_1d(np.asarray(step.values["b"], dtype=float))
        a = np.atleast_1d(np.asarray(step.values["a"], dtype=float))
        if a.size == 1:
            return _Fir(step, b / a[0])
        raise step.error("lfilter with a denominator: give the filter as sos (sosfilt) or as "
                         "a 'filter' step; pipelines carry sosfilt state exactly")
    history = op.history_for(step.values)
    rng = np.random.default_rng(0)
    m = max(256, 4 * int(history or 0) + 64)
    probe = rng.standard_normal(m)
    if complex_input:
        probe = probe + 1j * rng.standard_normal(m)
    try:
        y = fn(probe)
    except InputError as exc:
        raise step.error(_strip(str(exc), op.name)) from None
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        what = type(y).__name__ if not isinstance(y, np.ndarray) else f"shape {y.shape}"
        raise step.error(f"returns {what} for a 1-D signal; a pipeline step must map a "
                         "signal to a signal (put spectra last with the 'spectrogram' step)")
    if history is None:
        if y.shape[0] != m:
            raise step.error(f"changes the number of samples ({m} -> {y.shape[0]}); "
                             "pipelines keep the sample rate (resampling is not supported)")
        whole = _Whole(step, fn)
        whole.makes_complex = y.dtype.kind == "c" and not complex_input
        return whole
    history = int(history)
    stage: _Stage
    if y.shape[0] == m:
        stage = _Samplewise(step, op, fs) if history == 0 else _Centered(step, fn, history)
    elif y.shape[0] == m - history:
        stage = _Valid(step, fn, history)
    else:
        raise step.error(f"changes the number of samples ({m} -> {y.shape[0]}) by other than its "
                     f"declared history ({history})")
    stage.makes_complex = y.dtype.kind == "c" and not complex_input
    if isinstance(stage, _Samplewise):
        stage.rows_ok = _rows_agree(fn, probe, y)
    return stage


def _rows_agree(fn: Callable[[Any], Any], probe: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``fn`` on (2, n) gives each row, bit for bit, as it gives it alone."""
    two = np.stack([probe, probe[::-1] * 0.5])
    try:
        y2 = fn(two)
        y1 = fn(two[1].copy())
    except Exception:  # noqa: BLE001 -- any failure: run channel by channel
        return False
    return (isinstance(y2, np.ndarray) and y2.shape == (2, y.shape[0])
            and y2.dtype == y.dtype and isinstance(y1, np.ndarray) and y1.dtype == y.dtype
            and bool(np.array_equal(y2[0], y, equal_nan=True))
            and bool(np.array_equal(y2[1], y1, equal_nan=True)))


def _finish_stage_sos(step: Step, sos: np.ndarray) -> _Stage:
    d = _finish_sos(step, sos, 0.0)
    return _Sos(step, sos, d.settle)


# -- the pipeline -------------------------------------------------------------------------


@dataclass
class PipelineResult:
    """What :meth:`Pipeline.run` returns.

    Attributes
    ----------
    kind : {"signal", "spectrogram"}
    data : ndarray
        ``signal``: shaped (channels, samples); ``spectrogram``: (channels,
        frequencies, frames), power (``psd``, ``spectrum``) or amplitude.
    sample_rate : float
    first_sample : int
        Recording sample of the first output sample, or where frame 0 starts.
    times : ndarray
        Seconds from the start of the recording: of each sample, or of each
        frame centre.
    frequencies : ndarray or None
        Bin frequencies in Hz (plus the recording's centre frequency).
    coefficients : dict
        Designed filters by step index (see :meth:`BoundPipeline.coefficients`).
    """

    kind: str
    data: np.ndarray
    sample_rate: float
    first_sample: int
    times: np.ndarray
    frequencies: np.ndarray | None
    coefficients: dict[int, Designed]


class _BlockChain:
    """Functions applied in turn to a block; ``context`` samples needed around it."""

    def __init__(self, fns: list[Callable[[np.ndarray, float], Any]],
                 context: tuple[int, int]) -> None:
        self.fns = fns
        self.context = context

    def __call__(self, x: np.ndarray, fs: float) -> np.ndarray:
        for fn in self.fns:
            x = np.asarray(fn(x, fs))
        return x


class BoundPipeline:
    """A pipeline designed for one sample rate: its stages and what chunking needs."""

    def __init__(self, pipeline: Pipeline, fs: float, complex_input: bool = False) -> None:
        if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not (
                math.isfinite(fs) and fs > 0):
            raise InputError(f"fs={fs!r} must be a positive sample rate in Hz")
        self.pipeline = pipeline
        self.sample_rate = float(fs)
        self.complex_input = bool(complex_input)
        self.stages: list[_Stage] = []
        self.designed: dict[int, Designed] = {}
        self.spectrogram: _Spectrogram | None = None
        for step in pipeline.steps:
            if step.op == "filter":
                d = _design(step, self.sample_rate)
                self.designed[step.index] = d
                self.stages.append(_filter_stage(step, d))
            elif step.op == "spectrogram":
                v = step.values
                self.spectrogram = _Spectrogram(
                    step, StftParams(v["nfft"], v["hop"], v["window"], v["scaling"]),
                    self.sample_rate)
            else:
                self.stages.append(_generic_stage(step, self.sample_rate, complex_input))
        #: whether the time-domain output is complex (two-sided spectra)
        self.complex_output = self.complex_input or any(s.makes_complex for s in self.stages)

    # -- what chunked runs need ---------------------------------------------------------
    @property
    def kind(self) -> str:
        return "spectrogram" if self.spectrogram is not None else "signal"

    @property
    def stft(self) -> StftParams | None:
        return None if self.spectrogram is None else self.spectrogram.params

    @property
    def lookback(self) -> int:
        """Input samples before an output sample that it depends on (IIR: settling)."""
        return sum(s.lookback for s in self.stages)

    @property
    def lookahead(self) -> int:
        return sum(s.lookahead for s in self.stages)

    @property
    def drop(self) -> int:
        """Leading input samples without a time-domain output (valid-mode steps)."""
        return sum(s.drop for s in self.stages)

    @property
    def streams(self) -> bool:
        """Whether a chunked run is possible (no step needs the whole signal)."""
        return all(s.streams for s in self.stages)

    @property
    def exact_split(self) -> bool:
        """Whether a range computed from a cold start ``lookback`` samples early is exact."""
        return all(s.exact_split for s in self.stages)

    @property
    def samplewise(self) -> bool:
        """True when every time-domain step is sample-wise (blocks are independent)."""
        return all(isinstance(s, _Samplewise) for s in self.stages)

    def signal_length(self, n_input: int) -> int:
        return max(0, n_input - self.drop)

    def output_length(self, n_input: int) -> int:
        n = self.signal_length(n_input)
        return n if self.stft is None else self.stft.n_frames(n)

    def frequencies(self, center_frequency: float | None = None) -> np.ndarray | None:
        if self.stft is None:
            return None
        return self.stft.frequencies(self.sample_rate, self.complex_output) + (
            center_frequency or 0.0)

    def coefficients(self) -> dict[int, Designed]:
        """Designed filters by step index."""
        return dict(self.designed)

    # -- streaming ----------------------------------------------------------------------
    def stream(self, read: Callable[[int, int], np.ndarray], read_start: int, read_stop: int,
               *, chunk_samples: int = DEFAULT_CHUNK_SAMPLES, skip: int = 0,
               take: int | None = None,
               progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> Iterator[np.ndarray]:
        """Blocks of output for input ``read_start:read_stop``.

        ``read(a, b)`` returns samples ``a:b`` shaped (samples, channels).  The
        time-domain signal leaves the stages, loses its first ``skip`` samples
        and is cut after ``take`` samples; then it is yielded, shaped
        (channels, samples), or transformed into spectrogram frames, shaped
        (channels, frequencies, frames).
        """
        if chunk_samples < 1:
            raise InputError(f"chunk_samples={chunk_samples} must be >= 1")
        n_in = read_stop - read_start
        if not self.streams and n_in > chunk_samples:
            bad = next(s for s in self.stages if not s.streams)
            raise bad.step.error(f"needs the whole signal at once; the range has {n_in} "
                                 f"samples, more than chunk_samples={chunk_samples} "
                                 "(raise it, or drop the step)")
        states: list[dict[str, Any]] | None = None
        spec_state: dict[str, Any] = {}
        passed = 0
        skipped = 0
        pos = read_start
        while pos < read_stop or states is None:
            if cancelled is not None and cancelled():
                raise Cancelled()
            end = min(read_stop, pos + chunk_samples)
            final = end >= read_stop
            block = np.asarray(read(pos, end))
            if block.ndim == 1:
                block = block[:, None]
            if states is None:
                states = [s.new_rows_state(block.shape[1]) for s in self.stages]
                if self.spectrogram is not None:
                    spec_state = self.spectrogram.new_rows_state(block.shape[1])
            # all channels at once, shaped (channels, samples)
            sig = block.T
            for stage, st in zip(self.stages, states, strict=True):
                sig = stage.push_rows(st, sig, final)
            if block.shape[1] == 0:
                sig = np.zeros((0, 0))
            if skipped < skip:
                k = min(skip - skipped, sig.shape[1])
                sig = sig[:, k:]
                skipped += k
            if take is not None:
                sig = sig[:, :max(0, take - passed)]
            passed += sig.shape[1]
            if self.spectrogram is not None:
                frames = self.spectrogram.push_rows(spec_state, sig, final,
                                                    self.complex_output)
                out = np.ascontiguousarray(frames.transpose(0, 2, 1))
            else:
                out = np.ascontiguousarray(sig)
            if out.shape[-1]:
                yield out
            pos = end
            if progress is not None and n_in:
                progress((pos - read_start) / n_in)
            if final or (take is not None and passed >= take):
                break


class Pipeline:
    """Processing steps, loadable from and savable to JSON (schema ``pipeline/1``).

    Build one with :meth:`load`, :meth:`from_dict` or :meth:`from_steps`;
    apply it to arrays with ``pipeline(x, fs)`` or to recordings, chunked, with
    :meth:`run`.  See the module documentation for the file format.
    """

    def __init__(self, steps: Sequence[Step], name: str = "", description: str = "",
                 source: str | None = None) -> None:
        self.steps: tuple[Step, ...] = tuple(steps)
        self.name = name
        self.description = description
        #: the file it was loaded from, if any
        self.source = source
        self._bound: dict[tuple[float, bool], BoundPipeline] = {}

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Any, *, source: str | None = None) -> Pipeline:
        """Validate a pipeline document (already parsed JSON)."""
        try:
            return cls._from_dict(d, source)
        except InputError as exc:
            if source:
                raise InputError(f"{Path(source).name}: {exc}") from None
            raise

    @classmethod
    def _from_dict(cls, d: Any, source: str | None) -> Pipeline:
        if not isinstance(d, dict):
            raise InputError(f"a pipeline must be a JSON object with \"specscope\": "
                             f"\"{SCHEMA}\" and \"steps\", got {type(d).__name__}")
        if "specscope" not in d:
            raise InputError(f"missing field 'specscope' (expected \"specscope\": \"{SCHEMA}\")")
        tag = d["specscope"]
        if tag != SCHEMA:
            if isinstance(tag, str) and tag.startswith("pipeline/"):
                raise InputError(f"specscope={tag!r} is a pipeline schema version this "
                                 f"specscope does not read (it reads {SCHEMA!r})")
            raise InputError(f"specscope={tag!r} must be {SCHEMA!r}")
        for k in d:
            if k not in _TOP_FIELDS:
                raise InputError(f"unknown field {k!r} (a pipeline has: "
                                 f"{', '.join(_TOP_FIELDS)})")
        if "steps" not in d:
            raise InputError("missing field 'steps' (a list of {\"op\": ..., \"params\": ...})")
        name, desc = d.get("name", ""), d.get("description", "")
        if not isinstance(name, str) or not isinstance(desc, str):
            raise InputError("name and description must be strings")
        raw_steps = d["steps"]
        if not isinstance(raw_steps, list):
            raise InputError(f"steps must be a list, got {type(raw_steps).__name__}")
        steps = [_parse_step(s, i) for i, s in enumerate(raw_steps)]
        for s in steps[:-1]:
            if s.op == "spectrogram":
                raise InputError(f"{s.label}: the spectrogram must be the last step; "
                                 f"{steps[s.index + 1].label} follows it")
        return cls(steps, name, desc, source)

    @classmethod
    def from_steps(cls, steps: Sequence[dict[str, Any]], name: str = "") -> Pipeline:
        """A pipeline from ``[{"op": ..., "params": {...}}, ...]``."""
        return cls.from_dict({"specscope": SCHEMA, "name": name, "steps": list(steps)})

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Pipeline:
        """Read and validate a pipeline file (JSON; never executed or unpickled)."""
        p = Path(path)
        if not p.is_file():
            raise RecordingError(f"{p}: no such pipeline file")
        if p.stat().st_size > MAX_FILE_BYTES:
            raise InputError(f"{p.name}: {p.stat().st_size} bytes is too large for a "
                             f"pipeline file (at most {MAX_FILE_BYTES})")
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{p.name}: not a pipeline file (binary content; pipeline files "
                             "are JSON text)") from None
        return cls.from_dict(cls._parse_json(text, p.name), source=str(p))

    @classmethod
    def from_json(cls, text: str) -> Pipeline:
        return cls.from_dict(cls._parse_json(text, "pipeline"))

    @staticmethod
    def _parse_json(text: str, name: str) -> Any:
        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for k, v in items:
                if k in out:
                    raise InputError(f"{name}: field {k!r} appears twice")
                out[k] = v
            return out

        def constant(c: str) -> Any:
            raise InputError(f"{name}: {c} is not a number JSON allows")

        try:
            return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: not a JSON pipeline file: {exc.msg} at line "
                             f"{exc.lineno} column {exc.colno}") from None

    # -- serialisation ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The pipeline document (JSON types)."""
        d: dict[str, Any] = {"specscope": SCHEMA}
        if self.name:
            d["name"] = self.name
        if self.description:
            d["description"] = self.description
        d["steps"] = [{"op": s.op, "params": copy.deepcopy(s.params)} for s in self.steps]
        return d

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the pipeline as JSON (atomically: temporary file, then rename)."""
        p = Path(path)
        tmp = p.with_name(f".{p.name}.partial")
        tmp.write_text(self.to_json() + "\n", encoding="utf-8")
        os.replace(tmp, p)
        return p

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pipeline) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.to_json(None))

    def __repr__(self) -> str:
        ops = ", ".join(s.op if s.op != "filter" else f"filter:{s.values['design']}"
                        for s in self.steps)
        return f"<Pipeline {self.name!r}: {ops}>"

    # -- introspection ------------------------------------------------------------------
    def operators(self) -> list[str]:
        """Registry operators the pipeline runs (design and filtering included), sorted."""
        names: set[str] = set()
        for s in self.steps:
            if s.op == "filter":
                spec = _filters.FilterSpec.from_params(s.params)
                names.update(spec.operators())
                fir = spec.form == "fir"
                if s.values["zero_phase"]:
                    names.add("sosfiltfilt" if spec.form == "sos" else "filtfilt")
                elif fir:
                    names.add("convolve")
                elif spec.form == "sos":
                    names.add("sosfilt")
            else:
                names.add(s.op)
        return sorted(names)

    def plugins(self) -> list[str]:
        """Namespaces of the plugin operators the pipeline needs."""
        return sorted({n.split(".", 1)[0] for n in self.operators() if "." in n})

    @property
    def stft_params(self) -> StftParams | None:
        """The final spectrogram's parameters, or None for a time-domain pipeline."""
        last = self.steps[-1] if self.steps else None
        if last is None or last.op != "spectrogram":
            return None
        v = last.values
        return StftParams(v["nfft"], v["hop"], v["window"], v["scaling"])

    def signal_part(self) -> Pipeline:
        """The steps before the spectrogram, as a pipeline (the time-domain part)."""
        d = self.to_dict()
        if self.stft_params is not None:
            d["steps"] = d["steps"][:-1]
        return Pipeline.from_dict(d)

    def block_function(self, fs: float,
                       complex_input: bool = False) -> Callable[[np.ndarray, float], Any]:
        """``f(x, fs)`` for :class:`~specscope.compute.view.tiles.TileEngine`'s ``pipeline``.

        The tile engine reads blocks independently: sample-wise steps run as
        they are, filters through :func:`~specscope.compute.filters.core.block_filter`,
        which needs ``f.context = (before, after)`` samples around each block
        (the engine reads and trims them).  Other steps with history are refused
        with an error naming the step.
        """
        from ..filters import core as filters

        part = self.signal_part()
        bound = part.bind(fs, complex_input)
        steps = part.to_dict()["steps"]
        fns: list[Callable[[np.ndarray, float], Any]] = []
        before = after = 0
        for raw, step, stage in zip(steps, part.steps, bound.stages, strict=True):
            if isinstance(stage, _Samplewise):
                fns.append(Pipeline.from_steps([raw]))
            elif step.op == "filter":
                bf = filters.block_filter(filters.FilterSpec.from_params(step.values), fs)
                fns.append(bf)
                before += bf.context[0]
                after += bf.context[1]
            else:
                raise step.error("needs history across blocks, which a block-wise view "
                                 "cannot give it; the export applies it")
        return _BlockChain(fns, (before, after))

    # -- running ------------------------------------------------------------------------
    def bind(self, fs: float, complex_input: bool = False) -> BoundPipeline:
        """Design the filters for sample rate ``fs`` and check every step (no data read)."""
        key = (float(fs), bool(complex_input))
        if key not in self._bound:
            self._bound[key] = BoundPipeline(self, fs, complex_input)
        return self._bound[key]

    def __call__(self, x: Any, fs: float) -> Any:
        """Apply the pipeline to a whole array (NumPy or CuPy), time along the last axis.

        Returns the processed signal, or for a pipeline ending with a
        spectrogram the spectra shaped (..., frequencies, frames), like
        :func:`~specscope.compute.spectral.spectrogram`.
        """
        if not _backend.is_device_array(x):
            x = np.asarray(x)
        if x.ndim == 0:
            raise InputError("expected a signal, got a scalar")
        if x.dtype.kind not in "biufc":
            raise InputError(f"expected numeric samples, got dtype {x.dtype}")
        if x.dtype.kind in "biu":
            x = x.astype(np.float32)
        bound = self.bind(fs, x.dtype.kind == "c")
        lead = x.shape[:-1]
        flat = x.reshape(-1, x.shape[-1])
        xp = _backend.get_xp(_backend_of(x))
        outs = []
        for row in flat:
            y = row
            for stage in bound.stages:
                y = stage.whole(y)
            if bound.stft is not None:
                p = bound.stft
                p.check_length(y.shape[0], "the signal")
                *_, y = registry.call("spectrogram", y, backend=_backend_of(y),
                                      fs=bound.sample_rate, nfft=p.nfft, hop=p.hop,
                                      window=p.window, mode=p.scaling)
            outs.append(y)
        out = xp.stack(outs) if outs else xp.zeros((0,))
        return out.reshape(*lead, *out.shape[1:])

    def run(self, recording: Any, start: int | None = None, stop: int | None = None, *,
            chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
            channels: int | list[int] | None = None,
            progress: Callable[[float], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> PipelineResult:
        """Run over samples ``start:stop`` of a recording, reading ``chunk_samples`` at a time.

        The numbers equal ``pipeline(recording.read(start, stop).T, fs)`` (see the
        module documentation for the one approximate case, zero-phase IIR
        filters).  Every step is checked and every filter designed before any
        data is read.
        """
        bound = self.bind(recording.sample_rate, recording.is_complex)
        a, b, _ = slice(start, stop).indices(recording.n_samples)
        b = max(a, b)
        chans = recording._channel_list(channels)
        if bound.stft is not None:
            bound.stft.check_length(bound.signal_length(b - a),
                                    f"the range {a}:{b} of {recording.path.name}")
        blocks = list(bound.stream(lambda i, j: recording.read(i, j, chans), a, b,
                                   chunk_samples=chunk_samples, progress=progress,
                                   cancelled=cancelled))
        fs = bound.sample_rate
        first = a + bound.drop
        if bound.stft is None:
            data = np.concatenate(blocks, axis=-1) if blocks else np.zeros((len(chans), 0))
            times = (first + np.arange(data.shape[-1])) / fs
            freqs = None
        else:
            p = bound.stft
            n_freq = bound.frequencies().size
            data = np.concatenate(blocks, axis=-1) if blocks else np.zeros(
                (len(chans), n_freq, 0))
            times = (first + np.arange(data.shape[-1]) * p.hop + p.nfft / 2) / fs
            freqs = bound.frequencies(recording.center_frequency)
        return PipelineResult(bound.kind, data, fs, first, times, freqs, bound.coefficients())


def load(path: str | os.PathLike[str]) -> Pipeline:
    """Shorthand for :meth:`Pipeline.load`."""
    return Pipeline.load(path)

