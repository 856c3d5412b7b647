"""Pipelines: the one representation of processing, saved as JSON (schema ``pipeline/1``).

A :class:`Pipeline` is a list of steps (a ``filter``, a registry operator, a final
``spectrogram`` or a final detector), run on arrays or, chunked, on recordings with
the numbers of a whole run (zero-phase IIR filters: to about ``SETTLE_TOL``).
Pipeline files are parsed as JSON, never executed.

See docs/explanation/rooms/pipeline.md.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import backend as _backend
from .. import jsonsafe, operators
from ..deployment import segments_in
from ..edit import RegionEdit
from ..errors import InputError, RecordingError, operator_detail, shown
from ..extensions import PluginError, output_kind
from ..files import atomic_write_text
from ..filters import DESIGN_PARAM, FILTER_DESIGNS, Design, FilterSpec
from ..params import MAX_FRAME, Param, json_types
from ..spectral import SCALINGS, StftParams
from .binding import DEFAULT_CHUNK_SAMPLES, BoundPipeline, PipelineResult
from .events import is_event_operator, run_events
from .step import Step

__all__ = ["MAX_FILE_BYTES", "SCHEMA", "Pipeline", "edit_steps", "load"]

#: value of the ``"specscope"`` field of a pipeline file
SCHEMA = "pipeline/1"
#: largest pipeline file read (they are small, hand-written documents)
MAX_FILE_BYTES = 1 << 20
_TOP_FIELDS = ("specscope", "name", "description", "steps")
_STEP_FIELDS = ("op", "params")
_OP_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")

_SPECTROGRAM_PARAMS = (
    Param("nfft", int, 1024, min=2, max=MAX_FRAME, unit="samples", help="frame length"),
    Param("hop", int, 256, min=1, unit="samples", help="samples between frames"),
    Param("window", "window", "hann", help="window name or (name, parameter)"),
    Param("scaling", str, "psd", choices=SCALINGS),
)


# -- steps ---------------------------------------------------------------------------------


def _resolve_operator(name: str, where: str) -> operators.Operator:
    try:
        return operators.get(name)  # loads the plugin of a "plugin.op" name on first use
    except PluginError as exc:
        raise InputError(f"{where}: {exc}") from None
    except InputError:
        pass
    if "." in name:
        ns = name.split(".", 1)[0]
        raise InputError(f"{where}: operator {name!r} needs the plugin {ns!r}, which is "
                         "not installed") from None
    known = [o.name for o in operators.list_operators()] + ["filter", "spectrogram", "edit"]
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"{where}: op={name!r} is not an operator{hint} (list_operators() lists them)")



def _spectrogram_values(params: dict[str, Any], where: str) -> dict[str, Any]:
    """The spectrogram step's parameters, each checked by its :class:`Param`."""
    names = [p.name for p in _SPECTROGRAM_PARAMS]
    for k in params:
        if k not in names:
            close = difflib.get_close_matches(k, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{where}: unknown parameter {k!r}{hint} (parameters: "
                             f"{', '.join(names)})")
    try:
        values = {p.name: p.validate(params[p.name]) if p.name in params else p.default
                  for p in _SPECTROGRAM_PARAMS}
        StftParams(values["nfft"], values["hop"], values["window"], values["scaling"])
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return values


def _filter_values(params: dict[str, Any], where: str) -> dict[str, Any]:
    """The filter step's values (every field of its design), validated by the one
    design path, :class:`~specscope.compute.filters.FilterSpec`."""
    if "design" not in params:
        raise InputError(f"{where}: parameter 'design' is required (one of "
                         f"{', '.join(FILTER_DESIGNS)})")
    try:
        design = DESIGN_PARAM.validate(params["design"])
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    where = f"{where.split(' (')[0]} (filter {design})"
    try:
        return FilterSpec.from_params(params).values()
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def edit_steps(values: dict[str, Any], where: str) -> list[Step]:
    """The steps of a ``filter`` edit (its ``steps``), each validated.

    Parameters
    ----------
    values : dict
        The edit's parameters (:meth:`~specscope.compute.edit.RegionEdit.to_dict`).
    where : str
        How messages name the edit step.

    Returns
    -------
    list of Step

    Raises
    ------
    InputError
        A bad step, or one that does not map a signal to a signal (a spectrogram, a
        detector, another edit).
    """
    inner = [_parse_step(raw, i) for i, raw in enumerate(values.get("steps", []))]
    for s in inner:
        if s.op in ("edit", "spectrogram") or is_event_operator(s.op):
            raise InputError(f"{where}: {s.label.replace('steps[', 'steps.steps[')} "
                             "cannot be a step of an edit: it must map the signal to a "
                             "signal of the same length")
    return inner


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
        values = _filter_values(params, where)
    elif op == "spectrogram":
        values = _spectrogram_values(params, where)
    elif op == "edit":
        values = RegionEdit.from_dict(params, where).to_dict()
        inner = tuple(edit_steps(values, where))
        return Step(op, json_types(copy.deepcopy(params)), values, index, inner)
    else:
        operator = _resolve_operator(op, where)
        if not operator.takes_input or operator.input_kind != "array":
            raise InputError(f"{where}: {op} does not take a signal; a pipeline step must "
                             "map a signal to a signal")
        kind = output_kind(operator.name)
        # declared by its plugin: an image, ...; events end a pipeline (an event step)
        if kind not in ("array", "same") and not is_event_operator(operator.name):
            raise InputError(f"{where}: {op} gives {kind}, not a signal; a pipeline step must "
                             "map a signal to a signal (or, as the last step, find events)")
        if "zi" in params:
            raise InputError(f"{where}: zi is managed by the pipeline (state carried across "
                             "chunks); remove it")
        try:
            values = operator.validate(params)
        except InputError as exc:
            raise InputError(f"{where}: {operator_detail(exc, op)}") from None
    return Step(op, json_types(copy.deepcopy(params)), values, index)




def _refuse_nul(doc: Any) -> None:
    """Refuse a NUL character in any text of a pipeline document (names, keys, values).

    Outputs keep the pipeline's name and steps in HDF5 attributes, whose strings end
    at a NUL; the field is named as a path (``name``, ``steps[0].params.window``).
    Walked without recursion, whatever the nesting.
    """
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise InputError(f"{where or 'the pipeline'}: a text with a NUL character "
                                 f"({shown(value, 60)}) cannot be stored; remove it")
        elif isinstance(value, dict):
            for k, v in value.items():
                field = f"{where}.{k}" if where else str(k)
                if isinstance(k, str) and "\x00" in k:
                    raise InputError(f"{where or 'the pipeline'}: the field name {shown(k, 60)} "
                                     "holds a NUL character, which cannot be stored; remove it")
                stack.append((field, v))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))


# -- the pipeline -------------------------------------------------------------------------


class Pipeline:
    """Processing steps, loadable from and savable to JSON (schema ``pipeline/1``).

    Build one with :meth:`load`, :meth:`from_dict` or :meth:`from_steps`;
    apply it to arrays with ``pipeline(x, fs)`` or to recordings, chunked, with
    :meth:`run`.  The file format is described in docs/explanation/rooms/pipeline.md.

    Parameters
    ----------
    steps : sequence of Step
        The validated steps, in order.
    name : str
        A name for people.
    description : str
        A longer description.
    source : str, optional
        The file it was loaded from.
    """

    def __init__(self, steps: Sequence[Step], name: str = "", description: str = "",
                 source: str | None = None) -> None:
        _refuse_nul({"name": name, "description": description})
        self.steps: tuple[Step, ...] = tuple(steps)
        self.name = name
        self.description = description
        #: the file it was loaded from, if any
        self.source = source
        last = self.steps[-1] if self.steps else None
        #: the detector ending the pipeline (its result is then events), or None
        self.event_step: Step | None = (
            last if last is not None and last.op not in ("filter", "spectrogram")
            and is_event_operator(last.op) else None)
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
        _refuse_nul(d)
        raw_steps = d["steps"]
        if not isinstance(raw_steps, list):
            raise InputError(f"steps must be a list, got {type(raw_steps).__name__}")
        steps = [_parse_step(s, i) for i, s in enumerate(raw_steps)]
        for s in steps[:-1]:
            if s.op == "spectrogram":
                raise InputError(f"{s.label}: the spectrogram must be the last step; "
                                 f"{steps[s.index + 1].label} follows it")
            if is_event_operator(s.op):
                raise InputError(f"{s.label}: a detector must be the last step (its result "
                                 f"is events, not a signal); {steps[s.index + 1].label} "
                                 "follows it")
        return cls(steps, name, desc, source)

    @classmethod
    def from_steps(cls, steps: Sequence[dict[str, Any]], name: str = "") -> Pipeline:
        """A pipeline from ``[{"op": ..., "params": {...}}, ...]``."""
        return cls.from_dict({"specscope": SCHEMA, "name": name, "steps": list(steps)})

    @classmethod
    def from_filter(cls, what: FilterSpec | Design, name: str = "filter") -> Pipeline:
        """A one-step pipeline applying a filter spec or design.

        A spec (or a design made from one) becomes a ``filter`` step, designed
        for each recording's rate; a design without a spec (imported
        coefficients) becomes an ``sosfilt`` or FIR ``lfilter`` step with its
        coefficients.
        """
        spec = what if isinstance(what, FilterSpec) else what.spec
        if spec is not None:
            return cls.from_steps([{"op": "filter", "params": spec.to_params()}], name)
        if what.form == "sos":
            step = {"op": "sosfilt", "params": {"sos": what.sos.tolist()}}
        elif what.form == "fir":
            step = {"op": "lfilter", "params": {"b": what.b.tolist(), "a": [1.0]}}
        else:
            raise InputError("an imported comb filter cannot run in a pipeline; export it as "
                             "sos")
        return cls.from_steps([step], name)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Pipeline:
        """Read and validate a pipeline file (JSON; never executed or unpickled)."""
        p = Path(path)
        if not p.is_file() and not p.is_dir():
            raise RecordingError(f"{p}: no such pipeline file")
        doc = jsonsafe.load_file(p, what="JSON pipeline file", max_bytes=MAX_FILE_BYTES,
                                 unique_keys=True)
        return cls.from_dict(doc, source=str(p))

    @classmethod
    def from_json(cls, text: str) -> Pipeline:
        return cls.from_dict(cls._parse_json(text, "pipeline"))

    @staticmethod
    def _parse_json(text: str, name: str) -> Any:
        return jsonsafe.loads(text, name, what="JSON pipeline file", max_bytes=MAX_FILE_BYTES,
                              unique_keys=True)

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
        """Write the pipeline as JSON (atomically: temporary file, then rename).

        A failed write (no space, read-only folder) raises one
        :class:`~specscope.compute.errors.RecordingError` and leaves ``path`` as it was.
        """
        p = Path(path)
        atomic_write_text(p, self.to_json() + "\n", what="pipeline file name ending in .json")
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
                spec = FilterSpec.from_params(s.params)
                names.update(spec.operators())
                fir = spec.form == "fir"
                if s.values["zero_phase"]:
                    names.add("sosfiltfilt" if spec.form == "sos" else "filtfilt")
                elif fir:
                    names.add("convolve")
                elif spec.form == "sos":
                    names.add("sosfilt")
            elif s.op != "edit":  # an edit runs NumPy's FFT, no registry operator
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
        """The steps before the spectrogram or detector, as a pipeline (the time-domain part)."""
        d = self.to_dict()
        if self.stft_params is not None or self.event_step is not None:
            d["steps"] = d["steps"][:-1]
        return Pipeline.from_dict(d)

    def block_function(self, fs: float,
                       complex_input: bool = False) -> Callable[[np.ndarray, float], Any]:
        """``f(x, fs)`` for :class:`~specscope.compute.view.TileEngine`'s ``pipeline``.

        The time-domain steps (:meth:`signal_part`) bound to ``fs``; see
        :meth:`BoundPipeline.block_function` (filters need ``f.context``
        samples around each block; steps with other history are refused).
        """
        return self.signal_part().bind(fs, complex_input).block_function()

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
        :func:`~specscope.compute.spectral.spectrogram`; for an event pipeline
        the :class:`~specscope.compute.detect.Events` of every row (``channel``
        = the row of ``x`` flattened to (rows, samples)).
        """
        if not _backend.is_device_array(x):
            x = np.asarray(x)
        if x.ndim == 0:
            raise InputError("expected a signal, got a scalar")
        if x.dtype.kind not in "biufc":
            raise InputError(f"expected numeric samples, got dtype {x.dtype}")
        if x.dtype.kind in "biu":
            x = x.astype(np.float32)
        if self.event_step is not None:
            from ..io import ArrayRecording

            rows = np.asarray(_backend.to_host(x)).reshape(-1, x.shape[-1])
            rec = ArrayRecording(rows.T, fs)
            return self.detect(rec, chunk_samples=max(1, rows.shape[-1]))
        bound = self.bind(fs, x.dtype.kind == "c")
        lead = x.shape[:-1]
        flat = x.reshape(-1, x.shape[-1])
        xp = _backend.get_xp(_backend.backend_of(x))
        outs = []
        for row in flat:
            y = row
            for stage in bound.stages:
                y = stage.whole(y)
            if bound.stft is not None:
                p = bound.stft
                p.check_length(y.shape[0], "the signal")
                *_, y = operators.call("spectrogram", y, backend=_backend.backend_of(y),
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

        The numbers equal ``pipeline(recording.read(start, stop).T, fs)`` (the one
        approximate case, zero-phase IIR filters, is described in
        docs/explanation/rooms/pipeline.md).  Every step is checked and every filter designed before any
        data is read.  A deployment runs per contiguous segment: no filter history or
        frame crosses a gap, ``times`` gives each output's place on its sample axis.
        """
        bound = self.bind(recording.sample_rate, recording.is_complex)
        a, b, _ = slice(start, stop).indices(recording.n_samples)
        b = max(a, b)
        chans = recording.channel_list(channels)
        pieces = segments_in(recording, a, b)
        if self.event_step is not None:
            events = _events_per_segment(bound, recording, pieces, chans, chunk_samples,
                                         progress, cancelled, "auto")
            return PipelineResult("events", np.zeros((len(chans), 0)), bound.sample_rate,
                                  a + bound.drop, np.zeros(0), None, bound.coefficients(),
                                  events)
        if bound.stft is not None and len(pieces) == 1:
            bound.stft.check_length(bound.signal_length(b - a),
                                    f"the range {a}:{b} of {recording.path.name}")
        fs = bound.sample_rate
        first = a + bound.drop
        blocks: list[np.ndarray] = []
        positions: list[np.ndarray] = []  # the sample of each output (a frame's start)
        total = max(1, b - a)
        done = 0
        for s0, s1 in pieces:  # no filter history, no frame crosses a gap
            if bound.stft is not None and bound.stft.n_frames(bound.signal_length(s1 - s0)) < 1:
                continue
            part = None if progress is None else (
                lambda f, d=done, n=s1 - s0: progress((d + f * n) / total))
            got = list(bound.stream(lambda i, j: recording.read(i, j, chans), s0, s1,
                                    chunk_samples=chunk_samples, progress=part,
                                    cancelled=cancelled))
            n_out = sum(g.shape[-1] for g in got)
            step = 1 if bound.stft is None else bound.stft.hop
            positions.append(s0 + bound.drop + np.arange(n_out) * step)
            blocks += got
            done += s1 - s0
        if len(pieces) > 1 and not blocks and bound.stft is not None:
            bound.stft.check_length(0, f"every segment of the range {a}:{b} of "
                                       f"{recording.path.name}")
        where = np.concatenate(positions) if positions else np.zeros(0, np.int64)
        if bound.stft is None:
            data = np.concatenate(blocks, axis=-1) if blocks else np.zeros((len(chans), 0))
            times = where / fs
            freqs = None
        else:
            p = bound.stft
            n_freq = bound.frequencies().size
            data = np.concatenate(blocks, axis=-1) if blocks else np.zeros(
                (len(chans), n_freq, 0))
            times = (where + p.nfft / 2) / fs
            freqs = bound.frequencies(recording.center_frequency)
        return PipelineResult(bound.kind, data, fs, first, times, freqs, bound.coefficients())

    def detect(self, recording: Any, start: int | None = None, stop: int | None = None, *,
               chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
               channels: int | list[int] | None = None,
               progress: Callable[[float], None] | None = None,
               cancelled: Callable[[], bool] | None = None, backend: str = "auto") -> Any:
        """The events of an event pipeline over samples ``start:stop`` of a recording.

        ``recording`` is a :class:`~specscope.compute.io.Recording` or a path.
        The steps before the detector stream over the range in chunks of
        ``chunk_samples``; each channel has its own detector stream.  Returns
        :class:`~specscope.compute.detect.Events` sorted by start, then
        channel, with recording sample edges; the same for every chunk size (a
        deployment: per contiguous segment, no detector runs across a gap)
        (:meth:`Events.to_annotations` gives annotations with ``generator``
        = the detector, :meth:`Events.to_dataframe` a pandas table).
        """
        if self.event_step is None:
            last = self.steps[-1].label if self.steps else "no step"
            raise InputError(f"the pipeline does not end in a detector ({last}); add an "
                             "event step such as {\"op\": \"detect.energy\"}")
        if isinstance(recording, (str, os.PathLike)):
            from ..io import open_recording

            with open_recording(recording) as rec:
                return self.detect(rec, start, stop, chunk_samples=chunk_samples,
                                   channels=channels, progress=progress,
                                   cancelled=cancelled, backend=backend)
        bound = self.bind(recording.sample_rate, recording.is_complex)
        a, b, _ = slice(start, stop).indices(recording.n_samples)
        b = max(a, b)
        return _events_per_segment(bound, recording, segments_in(recording, a, b),
                                   recording.channel_list(channels), chunk_samples, progress,
                                   cancelled, backend)


def _events_per_segment(bound: BoundPipeline, recording: Any, pieces: list[tuple[int, int]],
                        chans: list[int], chunk_samples: int,
                        progress: Callable[[float], None] | None,
                        cancelled: Callable[[], bool] | None, backend: str) -> Any:
    """The events of each contiguous piece run on its own (no detector crosses a gap)."""
    if len(pieces) == 1:
        a, b = pieces[0]
        return run_events(bound, recording, a, b, chans, chunk_samples=chunk_samples,
                          progress=progress, cancelled=cancelled, backend=backend)
    total = max(1, sum(s1 - s0 for s0, s1 in pieces))
    found = []
    done = 0
    for s0, s1 in pieces:
        part = None if progress is None else (
            lambda f, d=done, n=s1 - s0: progress((d + f * n) / total))
        found.append(run_events(bound, recording, s0, s1, chans, chunk_samples=chunk_samples,
                                progress=part, cancelled=cancelled, backend=backend))
        done += s1 - s0
    first = found[0]
    return type(first).concat(found, fs=first.fs, detector=first.detector,
                              params=first.params).sorted()

def load(path: str | os.PathLike[str]) -> Pipeline:
    """Shorthand for :meth:`Pipeline.load`.

    Parameters
    ----------
    path : str or os.PathLike
        A pipeline file (JSON, at most :data:`MAX_FILE_BYTES`).

    Returns
    -------
    Pipeline
        The validated pipeline.

    Raises
    ------
    RecordingError
        If there is no such file.
    InputError
        If the file is not a valid pipeline; the message names the file and the step.
    """
    return Pipeline.load(path)
