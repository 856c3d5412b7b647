"""Band levels of a recording or a deployment, per file in parallel, cached and resumable.

The intervals are planned once (:func:`~specscope.compute.levels.spectra.plan_intervals`)
and split into tasks: the intervals that start in one file of a deployment, or
stretches of about two minutes of a single recording.  Each task's band power is
kept in the user cache under a key of the files, the parameters and the task's
samples, so a run that was stopped, or one that asks for the same bands again,
reads what was done.  Tasks run in this process, a process pool or on a Dask
cluster (:func:`specscope.compute.batch.runner.run_tasks`); the numbers are the same.
A task whose file cannot be read leaves its intervals out and names the file.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..batch.runner import run_tasks
from ..batch.tasks import Task, TaskOutcome, TaskResult
from ..deployment import Deployment
from ..errors import InputError, SpecscopeError
from ..files import atomic_write_bytes
from ..io import open_recording
from ..paths import cache_dir
from ..spectral import get_window
from ..types import BandKind
from .bands import Bands, band_power, make_bands
from .calibration import Calibration
from .products import Levels
from .spectra import Interval, SpectrumParams, interval_spectrum, plan_intervals, recording_start

__all__ = ["LevelsSink", "MemorySink", "compute_levels", "levels_task", "plan_tasks"]

#: signal per task of a single recording, in seconds
TASK_SECONDS = 120.0


class LevelsSink(Protocol):
    """Where the rows of a run go as tasks finish (in any order)."""

    def begin(self, n_times: int, bands: Bands, attrs: dict[str, Any]) -> None: ...

    def rows(self, first: int, time: np.ndarray, effort: np.ndarray,
             power: np.ndarray) -> None: ...

    def end(self, failed: list[str]) -> None: ...


class MemorySink:
    """Rows kept in arrays; :attr:`levels` once the run ended."""

    def __init__(self, calibration: Calibration | None, absolute: bool) -> None:
        self._cal, self._absolute = calibration, absolute
        self.levels: Levels | None = None

    def begin(self, n_times: int, bands: Bands, attrs: dict[str, Any]) -> None:
        self._time = np.full(n_times, np.nan)
        self._effort = np.zeros(n_times)
        self._power = np.full((n_times, len(bands)), np.nan)
        self._bands, self._attrs = bands, attrs

    def rows(self, first: int, time: np.ndarray, effort: np.ndarray,
             power: np.ndarray) -> None:
        n = len(time)
        self._time[first:first + n] = time
        self._effort[first:first + n] = effort
        self._power[first:first + n] = power

    def end(self, failed: list[str]) -> None:
        self.levels = Levels(self._time, self._effort, self._power, self._bands, self._cal,
                             self._absolute, self._attrs, failed)


#: changes when what a cached task holds changes (older entries are then not read)
CACHE_FORMAT = "levels/2"


def _source_key(rec: Any, options: dict[str, Any]) -> str | None:
    """What identifies the samples a run reads: the files, their sizes and times and the
    reader's options; None where nothing does (a recording held in memory, a URL)."""
    fingerprint = getattr(rec, "fingerprint", None)
    if callable(fingerprint):
        return str(fingerprint())
    p = Path(str(rec.path))
    if "://" in str(rec.path) or not p.is_file():
        return None
    st = p.resolve().stat()
    return json.dumps([CACHE_FORMAT, str(p.resolve()), st.st_size, st.st_mtime_ns,
                       sorted((k, repr(v)) for k, v in options.items())])


def _pickles(rec: Any) -> bool:
    try:
        pickle.dumps(rec)
    except Exception:  # noqa: BLE001 - a reader that holds a handle: reopened by path
        return False
    return True


def _file_bounds(rec: Any) -> list[int]:
    offsets = getattr(rec, "file_offsets", None)
    return list(offsets()) if callable(offsets) else []


def plan_tasks(rec: Any, params: SpectrumParams, start: int = 0,
               stop: int | None = None) -> list[list[Interval]]:
    """The intervals of a run, grouped into tasks (a deployment: by the file each starts in)."""
    intervals = plan_intervals(rec, params, start, stop)
    bounds = _file_bounds(rec)
    tasks: list[list[Interval]] = []
    if bounds:
        last = None
        for iv in intervals:
            k = bisect.bisect_right(bounds, iv.start) - 1
            if k != last:
                tasks.append([])
                last = k
            tasks[-1].append(iv)
        return tasks
    per = max(1, int(TASK_SECONDS // params.interval))
    return [intervals[i:i + per] for i in range(0, len(intervals), per)]


def _cache_file(key: str) -> Path:
    return cache_dir("levels", key[:2], f"{key}.npz")


def _task_key(source: str, spec: dict[str, Any]) -> str:
    what = json.dumps([source, spec["params"], spec["bands"], spec["channel"],
                       spec["intervals"][0], spec["intervals"][-1], len(spec["intervals"])])
    return hashlib.sha256(what.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _cached(path: str | None) -> dict[str, Any] | None:
    if not path or not os.path.exists(path):
        return None
    try:
        with np.load(path) as z:
            return {"time": z["time"], "effort": z["effort"], "power": z["power"],
                    "cached": True}
    except (OSError, ValueError, KeyError):
        return None  # a damaged cache entry is computed again


def levels_task(spec: dict[str, Any]) -> dict[str, Any]:
    """One task: the band power of its intervals (module level: it pickles to workers)."""
    done = _cached(spec.get("cache"))
    if done is not None:
        return done
    rec = spec["recording"] if spec.get("recording") is not None else open_recording(
        spec["path"], **spec.get("options", {}))
    params = SpectrumParams(**spec["params"])
    kind, low, high = spec["bands"]
    fs = float(rec.sample_rate)
    nfft, _ = params.frame(fs)
    bands = make_bands(kind, fs, nfft, low, high)
    ivs = [Interval(*iv) for iv in spec["intervals"]]
    power = np.empty((len(ivs), len(bands)))
    effort = np.empty(len(ivs))
    for i, iv in enumerate(ivs):
        psd, _ = interval_spectrum(rec, iv, params, spec["channel"])
        power[i] = band_power(psd, fs / nfft, bands)
        effort[i] = (iv.stop - iv.start) / fs
    time = np.array([iv.time for iv in ivs])
    if spec.get("cache"):
        buf = io.BytesIO()
        np.savez(buf, time=time, effort=effort, power=power)
        try:
            Path(spec["cache"]).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(spec["cache"], buf.getvalue())
        except (OSError, SpecscopeError):
            pass  # a cache that cannot be written costs a recomputation only
    return {"time": time, "effort": effort, "power": power}


def _task_file(rec: Any, iv: Interval) -> str:
    file_at = getattr(rec, "file_at", None)
    if callable(file_at):
        return str(file_at(iv.start)[0])
    return str(rec.path)


def compute_levels(source: Any, *, bands: BandKind = "hmd", params: SpectrumParams | None = None,
                   low: float = 0.0, high: float | None = None, channel: int = 0,
                   calibration: Calibration | None = None, start: int = 0,
                   stop: int | None = None, workers: int = 1, dask: str | None = None,
                   sink: LevelsSink | None = None, cache: bool = True,
                   progress: Callable[[int, int], None] | None = None,
                   cancelled: Callable[[], bool] | None = None,
                   open_options: dict[str, Any] | None = None) -> Levels | None:
    """Band levels per interval of a recording, a file or a folder of recordings.

    Parameters
    ----------
    source : Recording, str or PathLike
        An open recording (a deployment included), or a path ``open_recording`` takes.
    bands : {"hmd", "decidecade", "octave"}
    params : SpectrumParams, optional
        Interval, FFT length, overlap, window, statistic (default: minutes, 1 Hz bins,
        half overlap, Hann, mean).
    low, high : float
        Band range in Hz (``high`` defaults to half the sample rate).
    channel : int
    calibration : Calibration, optional
        Applied when levels are read in dB; the power is kept uncalibrated.
    start, stop : int
        Sample range.
    workers : int
        Processes (1: in this process); with ``dask``, the local cluster's size.
    dask : str, optional
        ``"local"`` or a scheduler address.
    sink : LevelsSink, optional
        Where rows go; default: kept in memory and returned.
    cache : bool
        Reuse and keep each task's result in the user cache.
    progress : callable, optional
        ``progress(done, total)`` after each task.
    cancelled : callable, optional
        Polled between tasks; True stops the run with :class:`Cancelled`.
    open_options : dict, optional
        Options for ``open_recording`` when ``source`` is a path.

    Returns
    -------
    Levels or None
        The levels (None when a ``sink`` was given).
    """
    params = params or SpectrumParams()
    options = dict(open_options or {})
    given = hasattr(source, "sample_rate")
    rec = source if given else open_recording(source, **options)
    if rec.dtype.kind == "c":
        raise InputError(f"{rec.path}: sound levels need a real signal; this recording "
                         "is complex (IQ)")
    if not 0 <= channel < rec.n_channels:
        raise InputError(f"channel={channel} must be one of 0..{rec.n_channels - 1}")
    fs = float(rec.sample_rate)
    nfft, _ = params.frame(fs)
    tasks = plan_tasks(rec, params, start, stop)
    if not tasks:
        raise InputError(f"{rec.path}: no interval holds a whole frame of {nfft} samples "
                         "(a shorter nfft or a longer recording is needed)")
    get_window(params.window, 16)  # a bad window is the run's error, not each task's
    band_set = make_bands(bands, fs, nfft, low, high)
    if calibration is not None:
        above = band_set.centres[band_set.centres > 0]
        calibration.check_covers(float(above.min()), float(above.max()))
    absolute = recording_start(rec) is not None
    own = sink is None
    sink = sink or MemorySink(calibration, absolute)
    attrs = {"bands": bands, "band_low_hz": float(low),
             "band_high_hz": float(band_set.edges[-1]), "channel": channel,
             "sample_rate": fs, "nfft": nfft, **{k: v for k, v in params.to_dict().items()
                                                  if k != "nfft"}}
    n_times = sum(len(t) for t in tasks)
    sink.begin(n_times, band_set, attrs)
    is_dep = isinstance(rec, Deployment)
    # a task opens the path with the options, or takes the recording itself: a deployment
    # (it pickles by its source), one opened by the caller, or any run in this process
    inline = workers == 1 and dask is None
    send = rec if is_dep or inline or (given and _pickles(rec)) else None
    source_key = _source_key(rec, options) if cache else None
    base = {"path": str(rec.path), "options": options,
            "recording": send, "params": params.to_dict(),
            "bands": (bands, float(low), None if high is None else float(high)),
            "channel": int(channel)}
    specs = []
    first = 0
    for t in tasks:
        spec = dict(base, intervals=[(iv.start, iv.stop, iv.time) for iv in t], first=first,
                    file=_task_file(rec, t[0]))
        spec["cache"] = None if source_key is None else str(
            _cache_file(_task_key(source_key, spec)))
        specs.append(Task(spec["file"], spec, len(specs)))
        first += len(t)
    failed: list[str] = []
    done = 0

    def take(task: Task, outcome: TaskOutcome) -> None:
        nonlocal done
        spec = task.spec
        if isinstance(outcome, TaskResult):
            v = outcome.value
            sink.rows(spec["first"], v["time"], v["effort"], v["power"])
        else:  # the intervals stay, with no signal counted and no level
            failed.append(f"{spec['file']}: {outcome.message}")
            n = len(spec["intervals"])
            sink.rows(spec["first"], np.array([iv[2] for iv in spec["intervals"]]),
                      np.zeros(n), np.full((n, len(band_set)), np.nan))
        done += 1
        if progress is not None:
            progress(done, len(specs))

    # a few tasks per worker in flight: finished results are not held until the run ends
    run_tasks(levels_task, specs, take, workers=workers, dask=dask,
              in_flight=4 * max(1, workers), cancelled=cancelled)
    sink.end(failed)
    return sink.levels if own else None  # type: ignore[attr-defined]
