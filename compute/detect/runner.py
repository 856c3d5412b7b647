"""Running a detector over a recording in chunks: :func:`detect`.

The recording is read in chunks (all the channels asked for at once) and
each channel's samples are pushed into its own detector stream; detectors
keep the lookback they need themselves, so the events do not depend on the
chunk size: an event crossing a chunk boundary is found once, with the same
edges and score as in a whole run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import stream
from ..errors import InputError, operator_error
from ..io import ArrayRecording, Recording, open_recording
from ..operators import Operator, dispatch
from ..timefmt import time_to_sample
from .core import DETECTORS, Detector
from .events import Events
from .plugin import OperatorDetector

__all__ = ["ALIASES", "DEFAULT_CHUNK", "detect", "detector_names", "make_detector"]

#: samples read per chunk by default (per channel)
DEFAULT_CHUNK = 1 << 20
#: short names people type for the detectors
ALIASES = {"energy": "detect.energy", "bled": "detect.energy", "template": "detect.template",
           "bursts": "detect.bursts", "burst": "detect.bursts", "onsets": "onsets.detect",
           "onset": "onsets.detect"}


def detector_names() -> list[str]:
    """The built-in detectors' operator names (plugins' ``events`` operators come on top).

    Returns
    -------
    list of str
        The names, sorted.

    Examples
    --------
    >>> detector_names()
    ['detect.bursts', 'detect.energy', 'detect.template']
    """
    return sorted(DETECTORS)


def make_detector(detector: str | Operator | Detector, params: Mapping[str, Any] | None = None,
                  *, fs: float, center_frequency: float | None = None,
                  backend: str = "auto") -> Detector:
    """A detector stream for ``detector`` (a name, an alias, an operator or a Detector).

    Names are the built-in ``detect.*`` operators (:func:`detector_names`),
    their aliases (:data:`ALIASES`: ``energy``, ``template``, ``bursts``,
    ``onsets``) or any operator declaring ``events`` (a plugin's).  A
    :class:`Detector` is returned as it is (then ``params`` must be None).

    Parameters
    ----------
    detector : str, Operator or Detector
        What to run.
    params : mapping, optional
        The detector operator's parameters (validated against its schema).
    fs : float
        Sample rate (Hz).
    center_frequency : float, optional
        RF of 0 Hz for IQ streams (Hz): bands are absolute.
    backend : str
        Where the kernels run (``auto``, ``numpy``, ``cupy``); one for the whole run.

    Returns
    -------
    Detector
        A fresh detector stream, at rest.

    Raises
    ------
    InputError
        If ``detector`` is no detector, ``params`` are given with a :class:`Detector`,
        or the parameters or ``fs`` are invalid.
    """
    if isinstance(detector, Detector):
        if params:
            raise InputError(f"{detector.name}: the detector has its parameters already; "
                             "give params=None with a Detector")
        return detector
    name = detector.name if isinstance(detector, Operator) else detector
    if not isinstance(name, str):
        raise InputError(f"detector={detector!r} must be a detector name, an operator or a "
                         "Detector")
    name = ALIASES.get(name, name)
    cls = DETECTORS.get(name)
    if cls is not None:
        return cls(params, fs=fs, center_frequency=center_frequency, backend=backend)
    try:
        dispatch.get(name)
    except InputError:
        raise InputError(f"detector={name!r} is not a detector; built-in: "
                         f"{', '.join(detector_names())}, or "
                         f"{', '.join(sorted(ALIASES))}, or a plugin operator declaring "
                         "'events' (list_operators() lists them)") from None
    return OperatorDetector(name, params, fs=fs, center_frequency=center_frequency,
                            backend=backend)


def _cancelled(cancel: Any) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    if hasattr(cancel, "is_set"):
        return cancel.is_set
    if callable(cancel):
        return cancel
    raise InputError(f"cancel={cancel!r} must be a callable or a threading.Event")


def _open(recording: Any, fs: float | None) -> Recording:
    if isinstance(recording, Recording):
        return recording
    if isinstance(recording, (str, os.PathLike)):
        return open_recording(recording)
    if fs is None:
        raise operator_error(InputError, "detect", "an array needs fs= (its sample rate)")
    return ArrayRecording(np.asarray(recording), fs)


def detect(recording: Any, detector: str | Operator | Detector,
           params: Mapping[str, Any] | None = None, *,
           channels: int | Sequence[int] | None = None, start_s: float | None = None,
           stop_s: float | None = None, chunk: int | None = DEFAULT_CHUNK,
           progress: Callable[[float], Any] | None = None, cancel: Any = None,
           backend: str = "auto", fs: float | None = None) -> Events:
    """Run a detector over a recording, chunk by chunk, and return its events.

    Parameters
    ----------
    recording : Recording, path or array
        What to search (an array needs ``fs``).
    detector : str, Operator or Detector
        ``"detect.energy"``, ``"detect.template"``, ``"detect.bursts"``, an
        alias (``"energy"``), a plugin's ``events`` operator (``"onsets.detect"``)
        or a ready :class:`Detector`.
    params : mapping, optional
        The detector's parameters (its operator's schema).
    channels : int or sequence of int, optional
        Channels to search, each on its own; all when omitted.
    start_s, stop_s : float, optional
        Search only this range (events keep recording times).
    chunk : int or None
        Samples per read; None reads the range at once.  The events are the
        same for every chunk size.
    progress : callable, optional
        ``progress(fraction)`` after each chunk.
    cancel : callable or threading.Event, optional
        Checked before each chunk; when set, :class:`Cancelled` is raised.
    backend : str
        ``auto``, ``numpy`` or ``cupy``: where the kernels run (one for the run).

    Returns
    -------
    Events
        Sorted by start, then channel; sample edges from the recording's first
        sample; ``channel`` is the channel searched.
    """
    rec = _open(recording, fs)
    fs = float(rec.sample_rate)
    chans = rec.channel_list(channels)
    end = rec.n_samples / fs  # a stop past the end searches to the end
    a = 0 if start_s is None else time_to_sample(max(0.0, float(start_s)), fs, "start_s",
                                                 n_samples=rec.n_samples)
    b = rec.n_samples if stop_s is None else time_to_sample(min(float(stop_s), end), fs,
                                                            "stop_s", n_samples=rec.n_samples)
    if b < a:
        raise operator_error(InputError, "detect", f"stop_s={stop_s!r} must be >= start_s={start_s!r}")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer))
                              or chunk < 1):
        raise operator_error(InputError, "detect", f"chunk={chunk!r} must be a whole number of samples >= 1 "
                         "or None")
    step = max(1, (b - a) if chunk is None else int(chunk))
    first = make_detector(detector, params, fs=fs, center_frequency=rec.center_frequency,
                          backend=backend)
    streams = first.for_channels(chans, recording=rec)
    found = list(stream.run(streams, lambda p, q: rec.read(p, q, channels=chans).T, a, b,
                            chunk=step, progress=progress, cancelled=_cancelled(cancel)))
    return Events.concat(found, fs=fs, detector=first.name,
                         params=first.params).shifted(a).sorted()
