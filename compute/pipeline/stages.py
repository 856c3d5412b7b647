"""Pipeline stages: each step as a stream stage with declared history.

A stage (a :class:`~specscope.compute.stream.Stage`) takes chunks,
``push(x, final)`` (1-D; all channels at once shaped ``(channels, n)`` for a
stage from ``for_channels``), carries its state from chunk to chunk and
returns what a run over the whole signal returns for them:

* sample-wise operators (history 0): chunk by chunk (:class:`SamplewiseStage`);
* filters: :class:`FilterStage`, through the one filter application of
  :mod:`specscope.compute.filters.apply` (carried ``sosfilt`` state, FIR
  history, comb phases); zero-phase filters run over an overlap
  (:class:`CenteredStage`);
* operators with history ``h`` whose output has the input's length: recomputed
  over an overlap of ``h`` samples on both sides (:class:`CenteredStage`);
  operators whose output is ``h`` samples shorter: the last ``h`` inputs are
  carried (:class:`ValidStage`);
* operators that need the whole signal (:class:`WholeStage`);
* the spectrogram: frames straddling chunk borders from a carried buffer
  (:class:`SpectrogramStage`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import backend as _backend
from .. import operators
from ..errors import InputError, SpecscopeError, operator_detail
from ..filters import (
    Design,
    FilterSpec,
    StreamFilter,
    design,
    stream_filter,
    zero_phase_function,
)
from ..spectral import StftParams
from ..stream import Stage as StreamStage
from ..stream import Tail
from .step import Step

__all__ = [
    "CenteredStage",
    "Designed",
    "FilterStage",
    "SamplewiseStage",
    "SpectrogramStage",
    "Stage",
    "ValidStage",
    "WholeStage",
    "filter_stage",
    "operator_stage",
]


class _HostOp:
    """A registry operator's NumPy implementation, its parameters validated once.

    ``operators.call`` validates every parameter on every call.  A stream calls
    the same operator with the same parameters for every block, so a stage
    validates them when the pipeline is bound and then runs the implementation
    ``operators.call(..., backend="numpy")`` chooses, the way it runs it: the
    same input check, the same errors, the call recorded for
    :func:`specscope.compute.operators.autotune.profile`.  ``varying`` parameters (a
    carried ``zi``) are the stage's own arrays and are passed as they are.
    """

    def __init__(self, op: operators.Operator | str, fs: float | None = None,
                 **params: Any) -> None:
        self.op = operators.get(op) if isinstance(op, str) else op
        self.impl = self.op.get_implementation("numpy")
        kwargs = dict(self.op.validate(params))
        if self.impl.wants_xp:
            kwargs["xp"] = np
        if self.impl.wants_fs:
            kwargs["fs"] = self.impl.fs_default if fs is None else float(fs)
        self.kwargs = kwargs
        self._record = operators.autotune.record

    def __call__(self, x: np.ndarray, **varying: Any) -> Any:
        op = self.op
        x = op.check_input(x)
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


class Stage(StreamStage):
    """One pipeline step as a stream: push chunks, get the whole-run output back.

    Errors of the step's operator are raised naming the step.

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    """

    #: True when real input gives complex output (hilbert, frequency_shift)
    makes_complex = False

    def __init__(self, step: Step) -> None:
        self.step = step

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except InputError as exc:
            raise self.step.error(str(exc)) from None


class SamplewiseStage(Stage):
    """A step of history 0: each chunk computed alone, chunk by chunk.

    On NumPy chunks the operator's NumPy implementation runs with its parameters
    validated once; other backends go through the registry.

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    op : Operator
        The registry operator.
    fs : float
        Sample rate (Hz) passed to operators that take one.
    """

    #: True when the operator, given (channels, n), returns each row as it would alone
    #: (checked on a probe when the pipeline is bound)
    rows_ok = False

    def __init__(self, step: Step, op: operators.Operator, fs: float) -> None:
        super().__init__(step)
        self.op, self.fs = op, fs
        self._host = _HostOp(op, fs, **step.values)

    def push(self, x, final):
        if _backend.backend_of(x) == "numpy":
            return self._call(lambda: self._host(x))
        return self._call(lambda: self.op.run(x, backend=_backend.backend_of(x), fs=self.fs,
                                              **self.step.values))

    def for_channels(self, channels: int) -> StreamStage:
        return self.spawn() if self.rows_ok else super().for_channels(channels)


class FilterStage(Stage):
    """A causal filter: a :class:`~specscope.compute.filters.StreamFilter` it owns.

    All channels of a chunk go through the filter in one call (``for_channels``).

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    fn : StreamFilter
        The filter; the stage takes its ``lookback`` and ``exact_split``.
    """

    def __init__(self, step: Step, fn: StreamFilter) -> None:
        super().__init__(step)
        self.filter = fn
        self.lookback, self.exact_split = fn.lookback, fn.exact_split

    def push(self, x, final):
        return self._call(lambda: self.filter.push(x, final))

    def spawn(self) -> FilterStage:
        return FilterStage(self.step, self.filter.spawn())

    def for_channels(self, channels: int) -> FilterStage:
        return FilterStage(self.step, self.filter.for_channels(channels))


class CenteredStage(Stage):
    """A same-length step whose output at ``i`` depends on inputs ``i-r .. i+r``.

    Streams by recomputing over an overlap of ``r`` samples on each side of a chunk;
    the edge handling of the operator applies only at the true ends of the signal.
    ``min_input``: the fewest samples the operator takes (``filtfilt``: more than
    its padding); the stage keeps at least that many and waits for them, so short
    chunks and a short last chunk work (unless the whole signal is shorter).

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    fn : callable
        ``fn(x)``: the operator over a whole 1-D signal, output as long as the input.
    radius : int
        ``r``: samples of context each side (the stage's lookback, lookahead and latency).
    exact : bool
        Whether a chunked run equals a whole run exactly (the stage's ``exact_split``).
    min_input : int
        The fewest samples ``fn`` takes.

    Raises
    ------
    InputError
        From ``push``, naming the step, when ``fn`` changes the number of samples.
    """

    def __init__(self, step: Step, fn: Callable[[Any], Any], radius: int,
                 exact: bool = True, min_input: int = 0) -> None:
        super().__init__(step)
        self.fn = fn
        self.lookback = self.lookahead = self.latency = int(radius)
        self.exact_split = exact
        self.min_input = int(min_input)
        self.reset()

    def reset(self) -> None:
        self._buf: Any = None
        self._pos0 = 0
        self._emitted = 0

    def whole(self, x):
        return self._call(lambda: self.fn(x))

    def push(self, x, final):
        xp = _backend.get_xp(_backend.backend_of(x))
        buf = x if self._buf is None else xp.concatenate([self._buf, x])
        pos0, e, r = self._pos0, self._emitted, self.lookback
        total = pos0 + buf.shape[0]
        new_e = total if final else max(e, total - r)
        if new_e <= e or (not final and buf.shape[0] < self.min_input):
            self._buf = buf
            return buf[:0]
        y = self._call(lambda: self.fn(buf))
        if y.shape[0] != buf.shape[0]:
            raise self.step.error(f"returned {y.shape[0]} samples for {buf.shape[0]}; "
                                  "expected the same length")
        out = y[e - pos0:new_e - pos0]
        keep = max(pos0, min(new_e - r, total - self.min_input))
        self._buf, self._pos0, self._emitted = buf[keep - pos0:], keep, new_e
        return out


class ValidStage(Stage):
    """A step whose output is ``h`` samples shorter: output ``j`` uses inputs ``j .. j+h``.

    The last ``h`` inputs are carried from chunk to chunk.

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    fn : callable
        ``fn(x)``: the operator over a 1-D signal, ``h`` samples shorter than ``x``.
    h : int
        The history in samples (the stage's ``lookback`` and ``drop``).
    """

    def __init__(self, step: Step, fn: Callable[[Any], Any], h: int) -> None:
        super().__init__(step)
        self.fn, self.lookback, self.drop = fn, int(h), int(h)
        self.reset()

    def reset(self) -> None:
        self._tail = Tail(self.lookback)

    def whole(self, x):
        return self._call(lambda: self.fn(x))

    def push(self, x, final):
        z = self._tail.join(x)
        h = self.lookback
        if z.shape[0] <= h:
            return z[:0]
        return self._call(lambda: self.fn(z))


class WholeStage(Stage):
    """A step that needs the whole signal (history None).

    ``push`` keeps every chunk and runs ``fn`` once, on the final one.

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    fn : callable
        ``fn(x)``: the operator over the whole 1-D signal.
    """

    streams = False
    exact_split = False

    def __init__(self, step: Step, fn: Callable[[Any], Any]) -> None:
        super().__init__(step)
        self.fn = fn
        self.reset()

    def reset(self) -> None:
        self._parts: list[Any] = []

    def whole(self, x):
        return self._call(lambda: self.fn(x))

    def push(self, x, final):
        self._parts.append(x)
        if not final:
            return x[:0]
        xp = _backend.get_xp(_backend.backend_of(x))
        whole = xp.concatenate(self._parts) if len(self._parts) > 1 else self._parts[0]
        self._parts = []
        return self._call(lambda: self.fn(whole))


class SpectrogramStage(Stage):
    """Frames of the STFT as a stream: a buffer carries the samples of straddling frames.

    A chunk shaped (..., n) gives frames shaped (..., frames, frequencies); all
    leading axes (channels) are transformed at once, each row equal to its
    1-D stream.

    Parameters
    ----------
    step : Step
        The pipeline step (its label names it in errors).
    params : StftParams
        Frame length, hop, window and scaling.
    fs : float
        Sample rate (Hz).
    two_sided : bool
        Spectra of complex signals (both sides of 0 Hz).
    """

    def __init__(self, step: Step, params: StftParams, fs: float,
                 two_sided: bool = False) -> None:
        super().__init__(step)
        self.params, self.fs, self.two_sided = params, fs, bool(two_sided)
        #: at most the samples of one frame but its last wait for the next chunk
        self.latency = params.nfft - 1
        self.reset()

    def reset(self) -> None:
        self._buf: Any = None

    def for_channels(self, channels: int) -> SpectrogramStage:
        return self.spawn()

    def push(self, x, final) -> np.ndarray:
        p = self.params
        buf = x if self._buf is None else np.concatenate([self._buf, x], axis=-1)
        k = p.n_frames(buf.shape[-1])
        # the kernel works through the frames in cache-sized tasks: one call, any length
        out = operators.call("stft_power", buf, fs=self.fs, two_sided=self.two_sided,
                             layout="frames", **p.operator_params())
        self._buf = buf[..., k * p.hop:]
        return out


# -- designing filters ----------------------------------------------------------------


@dataclass(frozen=True)
class Designed:
    """Coefficients of a ``filter`` step, designed for one sample rate.

    Parameters
    ----------
    form : str
        ``"sos"``, ``"fir"`` or ``"comb"``.
    coefficients : dict
        ``{"sos": ...}``, ``{"b": ...}`` or ``{"b": ..., "a": ...}``.
    sample_rate : float
        The sample rate designed for (Hz).
    settle : int
        Settling length in samples.
    design : Design, optional
        The design itself (None for coefficients given to an operator step).
    """

    form: str  # "sos", "fir" or "comb"
    coefficients: dict[str, np.ndarray]
    sample_rate: float
    settle: int = 0
    #: the design itself (None for coefficients given to an operator step)
    design: Design | None = field(default=None, repr=False, compare=False)


def filter_stage(step: Step, fs: float) -> tuple[Stage, Designed]:
    """The stage of a ``filter`` step designed for ``fs``, and its design.

    The design goes through :func:`specscope.compute.filters.design`, the one
    design path; causal filters stream with carried state, zero-phase ones
    run over an overlap (FIR: exact; IIR: the settling length).

    Parameters
    ----------
    step : Step
        A validated ``filter`` step.
    fs : float
        Sample rate (Hz).

    Returns
    -------
    tuple of (Stage, Designed)
        A :class:`FilterStage`, or for zero phase a :class:`CenteredStage`, and the design.

    Raises
    ------
    InputError
        Naming the step, when the filter cannot be designed for ``fs``.
    """
    try:
        d = design(FilterSpec.from_params(step.params), fs)
        settle = d.settle
    except InputError as exc:
        raise step.error(str(exc)) from None
    designed = Designed(d.form, d.coefficients, fs, settle, d)
    c = d.coefficients
    if not step.values["zero_phase"]:
        return FilterStage(step, stream_filter(d.form, c, settle)), designed
    fn = zero_phase_function(d.form, c)
    if d.form == "fir":
        return CenteredStage(step, fn, c["b"].size, exact=True,
                             min_input=_filtfilt_min_input(d.form, c)), designed
    return CenteredStage(step, fn, settle, exact=False,
                         min_input=_filtfilt_min_input(d.form, c)), designed


def _filtfilt_min_input(form: str, c: dict[str, np.ndarray]) -> int:
    """The fewest samples scipy's ``sosfiltfilt`` / ``filtfilt`` take: one more than
    their default edge padding."""
    if form == "sos":
        sos = c["sos"]
        ntaps = 2 * sos.shape[0] + 1 - min(int((sos[:, 2] == 0).sum()),
                                            int((sos[:, 5] == 0).sum()))
        return 3 * ntaps + 1
    return 3 * max(c["b"].size, np.size(c.get("a", 1))) + 1


def _coefficient_stage(step: Step) -> Stage:
    """``sosfilt`` or FIR ``lfilter`` steps: coefficients given, applied as filters are."""
    if step.op == "sosfilt":
        sos = np.asarray(step.values["sos"], dtype=float)
        if sos.ndim != 2 or sos.shape[1] != 6:
            raise step.error(f"sos must be shaped (n_sections, 6), got {sos.shape}")
        try:
            settle = Design.from_coefficients(1.0, sos=sos).settle
        except InputError as exc:
            raise step.error(str(exc)) from None
        return FilterStage(step, stream_filter("sos", {"sos": sos}, settle))
    b = np.atleast_1d(np.asarray(step.values["b"], dtype=float))
    a = np.atleast_1d(np.asarray(step.values["a"], dtype=float))
    if a.size == 1:
        return FilterStage(step, stream_filter("fir", {"b": b / a[0]}))
    raise step.error("lfilter with a denominator: give the filter as sos (sosfilt) or as "
                     "a 'filter' step; pipelines carry sosfilt state exactly")


def operator_stage(step: Step, fs: float, complex_input: bool) -> Stage:
    """The stage of a registry operator step, chosen by its history and output length.

    The operator runs once on a random probe (seeded) to see what it gives:
    ``sosfilt`` and FIR ``lfilter`` become :class:`FilterStage`; history None a
    :class:`WholeStage`; history 0 a :class:`SamplewiseStage`; a same-length output
    with history ``h`` a :class:`CenteredStage`; an output ``h`` samples shorter a
    :class:`ValidStage`.

    Parameters
    ----------
    step : Step
        A validated operator step.
    fs : float
        Sample rate (Hz).
    complex_input : bool
        Whether the signal reaching the step is complex.

    Returns
    -------
    Stage
        The stage; ``makes_complex`` says whether it turns real input complex.

    Raises
    ------
    InputError
        Naming the step, when the operator fails on the probe, does not map a 1-D
        signal to a 1-D signal, changes the number of samples other than by its
        declared history, or is an ``lfilter`` with a denominator.
    """
    op = operators.get(step.op)

    def fn(x):
        return op.run(x, backend=_backend.backend_of(x), fs=fs, **step.values)

    if op.name in ("sosfilt", "lfilter"):
        return _coefficient_stage(step)
    history = op.history_for(step.values)
    rng = np.random.default_rng(0)
    m = max(256, 4 * int(history or 0) + 64)
    probe = rng.standard_normal(m)
    if complex_input:
        probe = probe + 1j * rng.standard_normal(m)
    try:
        y = fn(probe)
    except InputError as exc:
        raise step.error(operator_detail(exc, op.name)) from None
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        what = type(y).__name__ if not isinstance(y, np.ndarray) else f"shape {y.shape}"
        raise step.error(f"returns {what} for a 1-D signal; a pipeline step must map a "
                         "signal to a signal (put spectra last with the 'spectrogram' step)")
    if history is None:
        if y.shape[0] != m:
            raise step.error(f"changes the number of samples ({m} -> {y.shape[0]}); "
                             "pipelines keep the sample rate (resampling is not supported)")
        whole = WholeStage(step, fn)
        whole.makes_complex = y.dtype.kind == "c" and not complex_input
        return whole
    history = int(history)
    stage: Stage
    if y.shape[0] == m:
        stage = SamplewiseStage(step, op, fs) if history == 0 else CenteredStage(step, fn, history)
    elif y.shape[0] == m - history:
        stage = ValidStage(step, fn, history)
    else:
        raise step.error(f"changes the number of samples ({m} -> {y.shape[0]}) by other than its "
                     f"declared history ({history})")
    stage.makes_complex = y.dtype.kind == "c" and not complex_input
    if isinstance(stage, SamplewiseStage):
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
