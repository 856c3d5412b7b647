"""The session, without Qt: what is open, how it is looked at, and session files.

:class:`ViewSettings` holds the analysis and view settings (immutable, replaced
on change, so undo keeps old ones); :class:`Document` is an opened recording
with its settings.  A session file (``specscope/session/1`` JSON) keeps the
file, the analysis, the processing, the representation, the filter designer's
chain, the visible range, the display levels, the calibration, the annotations and the
detections with their review (:mod:`specscope.app.review`):
:func:`session_state` builds it, :func:`write_session` writes it atomically,
:func:`load_session` reads and checks it and :func:`settings_from_session`
turns it back into settings (:func:`annotations_from_session`: the annotations
it keeps).  A session with a calibration is saved with a sidecar
``NAME.calibration.json`` (:func:`calibration_sidecar`) that other tools read as a
calibration file.  The recently opened files are kept in the user
config folder (:func:`config_dir`; ``SPECSCOPE_CONFIG_DIR`` overrides it):
:func:`recent_files`, :func:`remember_recent`, :func:`forget_recent`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from specscope.compute import jsonsafe
from specscope.compute.annotations import Annotation
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.files import atomic_write_text, refuse_overwriting_inputs
from specscope.compute.freqfmt import format_frequency
from specscope.compute.io import Recording
from specscope.compute.levels import Calibration
from specscope.compute.paths import cache_dir
from specscope.compute.spectral import StftParams, window_text
from specscope.compute.timefmt import format_time
from specscope.compute.types import FreqScale, Reduction, choices

__all__ = ["RECENT_LIMIT", "SESSION_FORMAT", "Document", "Listening", "ViewSettings",
           "annotations_from_session", "calibration_json", "calibration_of",
           "calibration_sidecar", "config_dir", "describe_chain_change",
           "describe_change", "filter_label", "forget_recent", "last_session_path",
           "listening_from_session", "load_session",
           "recent_files", "remember_recent", "session_state", "settings_from_session",
           "write_session"]

SESSION_FORMAT = "specscope/session/1"


@dataclass(frozen=True)
class ViewSettings:
    """Analysis settings of the spectrogram view; immutable, replaced on change.

    Parameters
    ----------
    stft : StftParams, optional
        FFT size, hop (samples), window and scaling of the spectrogram.
    channel : int, optional
        The channel shown; -1 shows every channel, stacked.
    reduce : {"mean", "max"}, optional
        How the frames of one column combine (``"max"``: peak hold).
    freq_scale : {"linear", "log", "mel"}, optional
        The frequency axis.
    processing : str, optional
        Processing steps before the spectrogram, as pipeline JSON.
    representation : str, optional
        ``"stft"`` (the tile engine) or a plugin operator whose output is an image.
    view_params : str, optional
        That operator's parameters, as JSON.
    compare : {"after", "before", "difference"}, optional
        What the view shows of the designer's filters.
    chain : str, optional
        The filter designer's chain in order, as JSON: a list of
        ``{"params": filter-step params, "enabled": bool}``.
    chain_on : bool, optional
        Whether the chain filters the recording ("Apply to the recording").
    chain_index : int, optional
        The chain's filter shown in the designer.
    calibration : str, optional
        The recording's calibration as JSON (:func:`calibration_json`); "" for none
        (levels in dB re full scale).
    """

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
    #: what the view shows of the designer's filters: "after", "before" or "difference"
    compare: str = "after"
    #: the filter designer's chain in order, as JSON: a list of
    #: ``{"params": filter-step params, "enabled": bool}``
    chain: str = "[]"
    #: whether the chain filters the recording (the designer's "Apply to the recording")
    chain_on: bool = False
    #: the chain's filter shown in the designer
    chain_index: int = 0
    #: the recording's calibration as JSON (``Calibration.to_dict``); "": none
    calibration: str = ""

    @property
    def filters(self) -> list[dict]:
        """The designer's chain: ``{"params": ..., "enabled": ...}`` per filter, in order."""
        return json.loads(self.chain)

    @property
    def chain_steps(self) -> list[dict]:
        """The chain's enabled filters as pipeline filter steps (none while it is off)."""
        if not self.chain_on:
            return []
        return [{"op": "filter", "params": f["params"]} for f in self.filters if f["enabled"]]

    @property
    def designer(self) -> str:
        """The filter shown in the designer (filter-step params as JSON) while the chain
        filters the recording; "" otherwise."""
        filters = self.filters
        if not self.chain_on or not filters:
            return ""
        return json.dumps(filters[min(max(self.chain_index, 0), len(filters) - 1)]["params"])

    @property
    def steps(self) -> list[dict]:
        """Processing steps, then the designer's enabled filters in order when it is on;
        the region edits that end the processing stay at the end (they act on what the
        view showed when they were drawn, and a block-wise view applies edits last)."""
        base = json.loads(self.processing)
        k = len(base)
        while k and base[k - 1].get("op") == "edit":
            k -= 1
        return [*base[:k], *self.chain_steps, *base[k:]]

    @property
    def base_steps(self) -> list[dict]:
        """Processing steps without the designer's filters (the "before" view)."""
        return json.loads(self.processing)

    @property
    def has_edits(self) -> bool:
        """Whether the processing holds region edits (``edit`` steps)."""
        return any(s.get("op") == "edit" for s in self.base_steps)

    @property
    def compares(self) -> bool:
        """Whether there is something to show before and after: the designer's filters
        while they are applied, else the region edits."""
        return bool(self.chain_steps) or self.has_edits

    @property
    def before_steps(self) -> list[dict]:
        """The steps of the "before" view: without the designer's filters while they are
        applied, else without the region edits."""
        if self.chain_steps:
            return self.base_steps
        return [s for s in self.base_steps if s.get("op") != "edit"]

    @property
    def shows_difference(self) -> bool:
        """Whether the view shows after minus before (:attr:`before_steps`), in dB."""
        return self.compares and self.compare == "difference"

    def pipeline_dict(self) -> dict:
        """The processing and the spectrogram as one pipeline (``pipeline/1`` JSON)."""
        from specscope.compute.pipeline import SCHEMA

        st = self.stft
        spec = {"op": "spectrogram", "params": {"nfft": st.nfft, "hop": st.hop,
                                                 "window": window_text(st.window),
                                                 "scaling": st.scaling}}
        return {"specscope": SCHEMA, "name": "specscope session", "steps": [*self.steps, spec]}

    @property
    def calibration_obj(self) -> Calibration | None:
        """The calibration (None: levels in dB re full scale)."""
        return calibration_of(self)

    def with_changes(self, **kw: object) -> ViewSettings:
        """A copy with the given fields replaced."""
        return replace(self, **kw)


def calibration_json(calibration: Calibration | None) -> str:
    """A calibration as :attr:`ViewSettings.calibration` keeps it ("" for None).

    Parameters
    ----------
    calibration : Calibration or None
        The calibration.

    Returns
    -------
    str
        ``Calibration.to_dict()`` as JSON with sorted keys (equal calibrations give
        equal text).
    """
    if calibration is None:
        return ""
    return json.dumps(calibration.to_dict(), sort_keys=True, ensure_ascii=False)


def calibration_of(settings: ViewSettings) -> Calibration | None:
    """The calibration of ``settings`` (None when it has none).

    Parameters
    ----------
    settings : ViewSettings
        The settings.

    Returns
    -------
    Calibration or None
    """
    if not settings.calibration:
        return None
    return Calibration.from_dict(json.loads(settings.calibration))


@dataclass
class Document:
    """An opened recording, the settings it is viewed with and the options it was opened with.

    Parameters
    ----------
    recording : Recording
        The open recording.
    settings : ViewSettings, optional
        The settings it is viewed with.
    options : dict, optional
        Reader options given to ``open_recording`` (sample rate, dtype, ... of raw
        files).
    """

    recording: Recording
    settings: ViewSettings = field(default_factory=ViewSettings)
    #: reader options given to ``open_recording`` (sample rate, dtype, ... of raw files)
    options: dict = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.recording.path

    def summary(self) -> str:
        """One line for the status bar."""
        r = self.recording
        kind = "complex" if r.is_complex else "real"
        # as exactly as the file says: a receiver tuned to 99989923.9 Hz reads 99.9899239 MHz
        centre = (f", centre {format_frequency(r.center_frequency)}" if r.center_frequency
                  else "")
        return (f"{r.path.name} — {r.format}, {format_frequency(r.sample_rate)}, "
                f"{r.n_channels} ch, "
                f"{kind}{centre}, {_fmt_duration(r.duration)}")


def describe_change(old: ViewSettings, new: ViewSettings) -> str:
    """What changed between two settings, as the Edit menu names it ("FFT size 2048").

    Parameters
    ----------
    old, new : ViewSettings
        The settings before and after the change.

    Returns
    -------
    str
        The changes, comma-separated; ``"settings"`` when nothing named changed.

    Examples
    --------
    >>> import dataclasses
    >>> old = ViewSettings()
    >>> new = old.with_changes(stft=dataclasses.replace(old.stft, nfft=2048), channel=-1)
    >>> describe_change(old, new)
    'FFT size 2048, all channels'
    """
    parts = []
    stft = (("nfft", "FFT size"), ("hop", "hop"), ("window", "window"), ("scaling", "scaling"))
    for name, label in stft:
        if getattr(old.stft, name) != getattr(new.stft, name):
            value = getattr(new.stft, name)
            parts.append(f"{label} {window_text(value) if name == 'window' else value}")
    if old.channel != new.channel:
        parts.append("all channels" if new.channel < 0 else f"channel {new.channel}")
    if old.reduce != new.reduce:
        parts.append("peak hold " + ("on" if new.reduce == "max" else "off"))
    if old.freq_scale != new.freq_scale:
        parts.append(f"{new.freq_scale} frequency axis")
    if old.processing != new.processing:
        parts.append(_describe_steps_change(old.base_steps, new.base_steps))
    if old.chain != new.chain:
        parts.append(describe_chain_change(old.filters, new.filters))
    elif old.chain_on != new.chain_on:
        parts.append("filters on" if new.chain_on else "filters off")
    if old.compare != new.compare:
        what = "filter" if new.chain_steps or not new.has_edits else "region edits"
        parts.append(f"show {new.compare} {what}")
    if old.representation != new.representation:
        parts.append("STFT view" if new.representation == "stft" else new.representation)
    elif old.view_params != new.view_params:
        parts.append(f"{new.representation} parameters")
    if old.calibration != new.calibration:
        parts.append("calibration" if new.calibration else "no calibration")
    return ", ".join(parts) if parts else "settings"


def _describe_steps_change(old: list[dict], new: list[dict]) -> str:
    """A region edit added at the end: its operation and shape ("remove lasso region"); any
    other change of the processing: "processing steps"."""
    step = new[-1] if len(new) == len(old) + 1 and new[:-1] == old else {}
    if step.get("op") != "edit" or not isinstance(step.get("params"), dict):
        return "processing steps"
    params = step["params"]
    region = params.get("region")
    shape = region.get("shape", "box") if isinstance(region, dict) else "box"
    return f"{params.get('operation', 'edit')} {shape} region"


_BTYPES = {"lowpass": "low-pass", "highpass": "high-pass", "bandpass": "band-pass",
           "bandstop": "band-stop"}
_CENTRED = {"iirnotch": "notch", "notches": "notch", "iircomb": "comb", "iirpeak": "peak"}


def _hz(v: Any) -> str:
    values = v if isinstance(v, (list, tuple)) else [v]
    # two decimals at most: a measured line is 49.93 Hz, a band edge 300 Hz
    return "–".join(f"{float(x):.2f}".rstrip("0").rstrip(".") for x in values) + " Hz"


def filter_label(params: dict) -> str:
    """A filter of the designer's chain as people name it ("notch 49.93 Hz", "band-pass
    300–3000 Hz").

    Parameters
    ----------
    params : dict
        Pipeline filter-step params (``FilterSpec.to_params()``).

    Returns
    -------
    str
        The filter's kind, then its frequency or band edges in Hz (two decimals at
        most); an FIR design by its method.

    Examples
    --------
    >>> filter_label({"design": "iirnotch", "frequency": 49.93})
    'notch 49.93 Hz'
    >>> filter_label({"design": "butter", "btype": "bandpass", "cutoff": [300, 3000]})
    'band-pass 300–3000 Hz'
    """
    design = params.get("design", "filter")
    if design in _CENTRED:
        f = params.get("frequency")
        return _CENTRED[design] + (f" {_hz(f)}" if f is not None else "")
    if design in ("remez", "firls", "firwin2"):
        return f"FIR {design}"
    kind = _BTYPES.get(params.get("btype", "lowpass"), "filter")
    edges = params.get("cutoff", params.get("passband"))
    return kind + (f" {_hz(edges)}" if edges is not None else "")


def describe_chain_change(old: list[dict], new: list[dict]) -> str:
    """What one edit did to the designer's chain ("add notch 49.93 Hz", "disable band-pass").

    Parameters
    ----------
    old, new : list of dict
        The chain before and after (``ViewSettings.filters``).

    Returns
    -------
    str
        The edit (add, remove, move up, enable, disable, or the edited filter's
        label); ``"filter chain"`` for anything else.

    Examples
    --------
    >>> low = {"params": {"design": "butter", "cutoff": 1000}, "enabled": True}
    >>> notch = {"params": {"design": "iirnotch", "frequency": 50}, "enabled": True}
    >>> describe_chain_change([low], [low, notch])
    'add notch 50 Hz'
    """
    def kind(f: dict) -> str:
        return filter_label(f["params"]).split(" ")[0]

    if len(new) == len(old) + 1:
        added = next((f for i, f in enumerate(new) if i >= len(old) or f != old[i]), new[-1])
        return f"add {filter_label(added['params'])}"
    if len(new) + 1 == len(old):
        gone = next((f for i, f in enumerate(old) if i >= len(new) or f != new[i]), old[-1])
        return f"remove {filter_label(gone['params'])}"
    if len(new) == len(old):
        changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        if len(changed) == 2 and old[changed[0]] == new[changed[1]] \
                and old[changed[1]] == new[changed[0]]:
            return f"move {kind(new[changed[0]])} up"
        if len(changed) == 1:
            a, b = old[changed[0]], new[changed[0]]
            if a["params"] == b["params"]:
                return f"{'enable' if b['enabled'] else 'disable'} {kind(b)}"
            return filter_label(b["params"])
    return "filter chain"


# -- session files ----------------------------------------------------------------------

def last_session_path() -> Path:
    """Where the app remembers the last session (reopened by ``specscope open``).

    Returns
    -------
    Path
        ``last-session.json`` in specscope's cache folder.
    """
    return cache_dir("last-session.json")


def session_state(path: Path | None, settings: ViewSettings,
                  view: tuple[float, float, float, float], levels: tuple[float, float],
                  colormap: str, annotations: list[Annotation] | None = None,
                  detections: dict[str, Any] | None = None) -> dict[str, Any]:
    """The state a session file keeps: file, analysis, view, display.

    Parameters
    ----------
    path : Path or None
        The open recording.
    settings : ViewSettings
        The analysis settings.
    view : (t0, t1, f0, f1)
        The visible range in seconds and Hz.
    levels : (low, high)
        The dB range of the colour map.
    colormap : str
        The colour map's name.
    annotations : list of Annotation, optional
        The recording's annotations as the person left them.
    detections : dict, optional
        The detections and their review (``specscope.app.review.Review.to_dict``).

    Returns
    -------
    dict
        The session as JSON-ready data, ``"specscope": SESSION_FORMAT`` first;
        ``annotations`` and ``detections`` only when given, ``calibration``
        (``Calibration.to_dict``) only when the settings have one.
    """
    s = settings
    t0, t1, f0, f1 = view
    lo, hi = levels
    window = list(s.stft.window) if isinstance(s.stft.window, tuple) else s.stft.window
    return {"specscope": SESSION_FORMAT,
            "file": str(path.resolve()) if path is not None else None,
            "analysis": {"nfft": s.stft.nfft, "hop": s.stft.hop, "window": window,
                         "scaling": s.stft.scaling, "channel": s.channel,
                         "reduce": s.reduce, "freq_scale": s.freq_scale},
            "view": {"t0": t0, "t1": t1, "f0": f0, "f1": f1},
            "display": {"db_low": lo, "db_high": hi, "colormap": colormap},
            "processing": json.loads(s.processing),
            "representation": {"name": s.representation, "params": json.loads(s.view_params)},
            "filters": {"chain": s.filters, "on": s.chain_on, "current": s.chain_index,
                        "compare": s.compare},
            **({"calibration": json.loads(s.calibration)} if s.calibration else {}),
            **({"annotations": [a.to_dict() for a in annotations]}
               if annotations is not None else {}),
            **({"detections": detections} if detections is not None else {})}


def calibration_sidecar(session: str | Path) -> Path:
    """The calibration file saved next to a session: ``NAME.calibration.json``.

    Parameters
    ----------
    session : str or Path
        The session file (``NAME.json``).

    Returns
    -------
    Path

    Examples
    --------
    >>> calibration_sidecar("/data/site.specscope.json").name
    'site.specscope.calibration.json'
    """
    p = Path(session)
    stem = p.name[:-5] if p.name.lower().endswith(".json") else p.name
    return p.with_name(f"{stem}.calibration.json")


def write_session(path: str | Path, state: dict[str, Any]) -> None:
    """Write a session file atomically (a temporary file, then a rename).

    A session with a calibration gets its sidecar (:func:`calibration_sidecar`), written
    atomically too after the session; one that holds the same calibration already is
    left as it is.

    Parameters
    ----------
    path : str or Path
        The session file to write.
    state : dict
        The session, as :func:`session_state` builds it.

    Raises
    ------
    OutputIsInputError
        When ``path`` is the session's recording.
    RecordingError
        When the write fails (naming the file and the cause).
    """
    cal = state.get("calibration")
    sidecar = calibration_sidecar(path) if cal is not None else None
    refuse_overwriting_inputs([path, *([sidecar] if sidecar else [])], [state.get("file")])
    atomic_write_text(path, json.dumps(state, indent=2), what="session file name")
    if sidecar is None or _holds_calibration(sidecar, cal):
        return
    atomic_write_text(sidecar, json.dumps(cal, indent=2, ensure_ascii=False),
                      what="calibration file name")


def _holds_calibration(path: Path, cal: dict[str, Any]) -> bool:
    """Whether the file at ``path`` holds the calibration ``cal`` already."""
    try:
        return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8"))) == \
            Calibration.from_dict(cal)
    except (OSError, ValueError, SpecscopeError):
        return False


def load_session(path: str | Path) -> dict[str, Any]:
    """Read and check a session file.

    Missing parts of older sessions get their defaults; annotations become
    :class:`~specscope.compute.annotations.Annotation` objects.

    Parameters
    ----------
    path : str or Path
        The session file.

    Returns
    -------
    dict
        The checked session state.

    Raises
    ------
    InputError
        When the file is not a specscope session or a part of it is missing or
        invalid; the message names what is wrong.
    """
    p = Path(path)
    # size, depth and numbers within limits; every problem one line naming the file
    state = jsonsafe.load_file(p, what="session file", max_bytes=16 << 20)
    if not isinstance(state, dict) or state.get("specscope") != SESSION_FORMAT:
        raise InputError(f"{p}: not a specscope session (expected \"specscope\": "
                         f"\"{SESSION_FORMAT}\")")
    try:
        a, v, d = state["analysis"], state["view"], state["display"]
        if isinstance(a["window"], list):
            a["window"] = tuple(a["window"])
        StftParams(int(a["nfft"]), int(a["hop"]), a["window"], a["scaling"])
        if a.get("reduce", "mean") not in choices(Reduction):
            raise InputError(f"{p}: analysis.reduce={a['reduce']!r} must be "
                             f"{' or '.join(choices(Reduction))}")
        if a.get("freq_scale", "linear") not in choices(FreqScale):
            raise InputError(f"{p}: analysis.freq_scale={a['freq_scale']!r} must be "
                             f"{', '.join(choices(FreqScale)[:-1])} or {choices(FreqScale)[-1]}")
        a.setdefault("reduce", "mean")
        a.setdefault("freq_scale", "linear")
        a.setdefault("channel", 0)
        for k in ("t0", "t1", "f0", "f1"):
            float(v[k])
        float(d["db_low"]), float(d["db_high"])
        d.setdefault("colormap", "inferno")
        if not state.get("file"):
            raise InputError(f"{p}: the session names no recording")
        _check_views(p, state)
        state["listening"] = Listening.from_dict(state.get("listening"), str(p)).to_dict()
        if "annotations" in state:
            items = state["annotations"]
            if not isinstance(items, list):
                raise InputError(f"{p}: \"annotations\" must be a list")
            state["annotations"] = [Annotation.from_dict(a) for a in items]
        if "detections" in state:
            from specscope.app.review import Review

            Review.from_dict(state["detections"], f"{p}: detections")  # checked here
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{p}: incomplete session ({type(exc).__name__}: {exc})") from None
    if state.get("calibration") is not None:
        Calibration.from_dict(state["calibration"], path=p)  # one line naming the value
    return state


def _check_views(p: Path, state: dict[str, Any]) -> None:
    """Check (and complete) the processing, representation and filter chain of a session;
    sessions written before they were kept get the defaults."""
    from specscope.compute.filters import FilterSpec

    if not isinstance(state.setdefault("processing", []), list):
        raise InputError(f"{p}: \"processing\" must be a list of pipeline steps")
    rep = state.setdefault("representation", {})
    rep.setdefault("name", "stft")
    rep.setdefault("params", {})
    if not isinstance(rep["name"], str) or not isinstance(rep["params"], dict):
        raise InputError(f"{p}: representation must name a view and its params")
    chain = state.setdefault("filters", {})
    chain.setdefault("chain", [])
    chain.setdefault("on", False)
    chain.setdefault("current", 0)
    chain.setdefault("compare", "after")
    if chain["compare"] not in ("after", "before", "difference"):
        raise InputError(f"{p}: filters.compare={chain['compare']!r} must be after, before "
                         "or difference")
    for i, f in enumerate(chain["chain"]):
        if not isinstance(f, dict) or not isinstance(f.get("enabled"), bool):
            raise InputError(f"{p}: filters.chain[{i}] must hold params and enabled")
        try:
            FilterSpec.from_params(f.get("params"))
        except SpecscopeError as exc:
            raise InputError(f"{p}: filters.chain[{i}]: {exc}") from None


def annotations_from_session(state: dict[str, Any]) -> list[Annotation] | None:
    """The annotations of a session read by :func:`load_session`.

    Parameters
    ----------
    state : dict
        A session read by :func:`load_session`.

    Returns
    -------
    list of Annotation or None
        Its annotations; None when it keeps none, so the recording's own are shown.
    """
    items = state.get("annotations")
    return None if items is None else list(items)


@dataclass(frozen=True)
class Listening:
    """How loud playback is: the transport's volume slider (0..100) and its mute.

    Kept in the session file as ``"listening": {"volume": 100, "muted": false}``
    (sessions without it get these defaults).

    Parameters
    ----------
    volume : int, optional
        The volume slider's position, 0 to 100.
    muted : bool, optional
        Whether playback is muted.
    """

    volume: int = 100
    muted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"volume": self.volume, "muted": self.muted}

    @classmethod
    def from_dict(cls, d: Any, where: str = "session") -> Listening:
        """From a session's ``listening`` object (None: the defaults); InputError names
        what is wrong."""
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise InputError(f"{where}: listening must be an object with volume and muted")
        vol, muted = d.get("volume", 100), d.get("muted", False)
        if isinstance(vol, bool) or not isinstance(vol, (int, float)) or not 0 <= vol <= 100:
            raise InputError(f"{where}: listening.volume={vol!r} must be a number from 0 "
                             "to 100")
        if not isinstance(muted, bool):
            raise InputError(f"{where}: listening.muted={muted!r} must be true or false")
        return cls(round(vol), muted)


def listening_from_session(state: dict[str, Any]) -> Listening:
    """The volume and mute of a session read by :func:`load_session`.

    Parameters
    ----------
    state : dict
        A session read by :func:`load_session`.

    Returns
    -------
    Listening
        Its volume and mute; the defaults when it keeps none.
    """
    return Listening.from_dict(state.get("listening"))


def settings_from_session(state: dict[str, Any]) -> ViewSettings:
    """The analysis settings of a session read by :func:`load_session`.

    Parameters
    ----------
    state : dict
        A session read by :func:`load_session`.

    Returns
    -------
    ViewSettings
        Its analysis, processing, representation and filter chain.
    """
    a = state["analysis"]
    rep, chain = state.get("representation", {}), state.get("filters", {})
    return ViewSettings(stft=StftParams(a["nfft"], a["hop"], a["window"], a["scaling"]),
                        channel=a["channel"], reduce=a["reduce"], freq_scale=a["freq_scale"],
                        processing=json.dumps(state.get("processing", [])),
                        representation=rep.get("name", "stft"),
                        view_params=json.dumps(rep.get("params", {})),
                        chain=json.dumps(chain.get("chain", [])),
                        chain_on=bool(chain.get("on", False)),
                        chain_index=int(chain.get("current", 0)),
                        compare=chain.get("compare", "after"),
                        calibration=calibration_json(
                            Calibration.from_dict(state["calibration"])
                            if state.get("calibration") is not None else None))


# -- recent files -------------------------------------------------------------------------

#: how many recently opened files are remembered
RECENT_LIMIT = 10
RECENT_FORMAT = "specscope/recent/1"


def config_dir(*parts: str) -> Path:
    """The user config folder (``SPECSCOPE_CONFIG_DIR`` overrides it), not created.

    Parameters
    ----------
    *parts : str
        Names joined below the folder.

    Returns
    -------
    Path
        The folder, or the path of ``parts`` inside it.
    """
    root = os.environ.get("SPECSCOPE_CONFIG_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_config_dir("specscope", appauthor=False)
    return Path(root).joinpath(*parts)


def _recent_path() -> Path:
    return config_dir("recent-files.json")


def _read_recent() -> list[Path]:
    try:
        state = json.loads(_recent_path().read_text())
        return [Path(p) for p in state["files"] if isinstance(p, str)]
    except (OSError, ValueError, KeyError, TypeError):
        return []  # none yet, or unreadable: the list starts over


def _write_recent(files: list[Path]) -> None:
    path = _recent_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"specscope": RECENT_FORMAT,
                                            "files": [str(p) for p in files]}, indent=1))
    except (OSError, SpecscopeError):
        pass  # remembering recent files is a convenience


def recent_files() -> tuple[list[Path], list[Path]]:
    """The recently opened files, newest first, and those dropped because they are gone.

    Missing files are removed from the remembered list.

    Returns
    -------
    (kept, dropped) : tuple of lists of Path
    """
    files = _read_recent()
    kept = [p for p in files if p.exists()]
    dropped = [p for p in files if not p.exists()]
    if dropped:
        _write_recent(kept)
    return kept, dropped


def remember_recent(path: str | os.PathLike[str]) -> list[Path]:
    """Put ``path`` first in the recent files (at most :data:`RECENT_LIMIT`).

    Parameters
    ----------
    path : str or os.PathLike
        The file opened.

    Returns
    -------
    list of Path
        The recent files, newest first.
    """
    p = Path(path).resolve()
    files = [p, *(q for q in _read_recent() if q != p)][:RECENT_LIMIT]
    _write_recent(files)
    return files


def forget_recent(path: str | os.PathLike[str]) -> list[Path]:
    """Remove ``path`` from the recent files.

    Parameters
    ----------
    path : str or os.PathLike
        The file to forget.

    Returns
    -------
    list of Path
        The remaining recent files, newest first.
    """
    p = Path(path).resolve()
    files = [q for q in _read_recent() if q != p]
    _write_recent(files)
    return files


def _fmt_duration(seconds: float) -> str:
    """A duration as the time axis writes times (0:33:20.000, 12.500 s)."""
    return format_time(seconds, 1e-3)
