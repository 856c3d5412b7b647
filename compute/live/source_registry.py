"""The registry of live source schemes: ``scheme:target`` specs to sources.

A source is opened from a spec string by :func:`open_source`; the part before
the first ``:`` is the scheme, looked up in a registry that plugins extend with
:func:`register_source` (a scheme nobody registered is tried as the name of a
plugin, which is loaded and may register it):

``generator:KIND[,key=value...]``
    ``tone`` (frequency, amplitude, phase), ``chirp`` (f0, f1, period, method,
    amplitude: a periodic :func:`scipy.signal.chirp`), ``noise`` (color
    white|pink, amplitude, seed) with the aliases ``white`` and ``pink``,
    ``clicks`` (interval, amplitude); all take ``sample_rate`` (48000) and
    ``channels`` (1).  Numbers may carry an SI prefix (``sample_rate=44.1k``).
``file:PATH``
    Any recording :func:`~specscope.compute.io.open_recording` opens, played
    at ``rate`` times real time, looped when ``loop`` is true.
``device`` or ``device:NAME``
    Audio input through the optional ``sounddevice`` package (``pip install
    'specscope[audio]'``); ``device:NAME,sample_rate=44100,channels=2``.

``rate`` is the pacing: 1 is real time, 10 ten times faster, ``0`` (or
``inf``) as fast as the processing goes.  Paced sources behave like hardware:
a full ring drops the block (counted).  Unpaced sources wait for room instead,
so nothing is lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InputError
from ..extensions import discover, load
from .generator import GeneratorSource
from .sources import (
    DEFAULT_BLOCK,
    DeviceSource,
    FileSource,
    Source,
    check_block,
    check_rate,
    option_values,
    split_options,
)

__all__ = ["SourceFactory", "open_source", "register_source", "source_schemes"]

#: factory(target, *, block, rate, loop, duration) -> Source
SourceFactory = Callable[..., Source]


@dataclass(frozen=True)
class _SourceSpec:
    """A registered scheme."""

    scheme: str
    factory: SourceFactory
    summary: str


_SOURCES: dict[str, _SourceSpec] = {}
_SOURCES_LOCK = threading.Lock()


def register_source(scheme: str, factory: SourceFactory, *, summary: str = "",
                    replace: bool = False) -> None:
    """Make ``scheme:TARGET`` specs open with ``factory``.

    ``factory(target, *, block, rate, loop, duration)`` returns a
    :class:`Source`; ``target`` is the text after ``scheme:`` ("" without it).
    A plugin registers its sources when imported; :func:`open_source` loads
    the plugin named like an unknown scheme.

    Parameters
    ----------
    scheme : str
        Lower-case letters, digits, ``-`` or ``_``.
    factory : callable
        ``factory(target, *, block, rate, loop, duration) -> Source``.
    summary : str
        One line for listings (:func:`source_schemes`).
    replace : bool
        Whether to replace a scheme registered already.

    Raises
    ------
    InputError
        The scheme is malformed, or registered already and ``replace`` is false.
    """
    if not scheme or not scheme.replace("_", "").replace("-", "").isalnum() or (
            scheme != scheme.lower()):
        raise InputError(f"scheme={scheme!r} must be lower-case letters, digits, '-' or '_'")
    with _SOURCES_LOCK:
        if scheme in _SOURCES and not replace:
            raise InputError(f"source scheme {scheme!r} is already registered")
        _SOURCES[scheme] = _SourceSpec(scheme, factory, summary)


def source_schemes() -> dict[str, str]:
    """Registered schemes and their one-line summaries.

    Returns
    -------
    dict of str to str
        Scheme to summary, sorted by scheme.
    """
    with _SOURCES_LOCK:
        return {k: v.summary for k, v in sorted(_SOURCES.items())}


def open_source(spec: str, *, block: int = DEFAULT_BLOCK, rate: float | None = 1.0,
                loop: bool = False, duration: float | None = None) -> Source:
    """Open a source from ``scheme:target`` (see the module documentation).

    Parameters
    ----------
    spec : str
        ``generator:KIND[,key=value...]``, ``file:PATH``, ``device[:NAME,...]`` or a
        scheme a plugin registers.
    block : int
        Samples per block, 1 to 2**22.
    rate : float or None
        Pacing: 1 is real time, 10 ten times faster, 0, None or inf as fast as
        the processing goes.
    loop : bool
        Whether a file source starts again at its end.
    duration : float, optional
        Seconds delivered at most; endless (or to the end of a file) when omitted.

    Returns
    -------
    Source
        The source, not started yet.

    Raises
    ------
    InputError
        An empty spec, an unknown scheme, or invalid options.
    RecordingError
        A file or device that cannot be opened.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("source must be generator:KIND, file:PATH or device[:NAME]")
    scheme, _, target = spec.strip().partition(":")
    scheme = scheme.lower()
    with _SOURCES_LOCK:
        entry = _SOURCES.get(scheme)
    if entry is None:
        entry = _plugin_source(scheme)
    if entry is None:
        known = ", ".join(f"{s}:" for s in source_schemes())
        raise InputError(f"source {spec!r}: unknown scheme {scheme!r} (known: {known})")
    return entry.factory(target, block=check_block(block), rate=check_rate(rate),
                         loop=bool(loop), duration=duration)


def _plugin_source(scheme: str) -> _SourceSpec | None:
    """The scheme as registered by the plugin of the same name, loaded now; None without one."""
    try:
        if scheme not in discover():
            return None
        load(scheme)
    except InputError:
        return None
    with _SOURCES_LOCK:
        return _SOURCES.get(scheme)


def _generator_factory(target: str, *, block: int, rate: float, loop: bool,
                       duration: float | None) -> Source:
    kind, _, rest = target.partition(",")
    opts = split_options(rest, f"generator:{kind}")
    settings = sorted({"block", "rate", "duration", "kind"} & opts.keys())
    if settings:
        # session settings, not options of the signal: a keyword clash would be a TypeError
        raise InputError(f"generator:{kind}: {settings[0]}= is not a generator option "
                         "(block, rate and duration are settings of the session)")
    return GeneratorSource(kind.strip() or "chirp", block=block, rate=rate, duration=duration,
                           **opts)


def _file_factory(target: str, *, block: int, rate: float, loop: bool,
                  duration: float | None) -> Source:
    if not target:
        raise InputError("file: needs a path, e.g. file:recording.wav")
    return FileSource(target, block=block, rate=rate, loop=loop, duration=duration)


def _device_factory(target: str, *, block: int, rate: float, loop: bool,
                    duration: float | None) -> Source:
    name, _, rest = target.partition(",")
    if "=" in name:  # device:channels=2 (no name)
        name, rest = "", target
    where = f"device:{name}" if name else "device"
    opts = option_values(split_options(rest, where), DeviceSource.OPTIONS, where,
                         positive=DeviceSource.POSITIVE)
    device: str | int | None = name or None
    if name.isdigit():
        device = int(name)
    return DeviceSource(device, sample_rate=opts["sample_rate"], channels=opts["channels"],
                        block=block, duration=duration)


register_source("generator", _generator_factory,
                summary="synthetic: tone, chirp, noise (white, pink), clicks")
register_source("file", _file_factory, summary="a recording played in real time or faster")
register_source("device", _device_factory, summary="audio input (needs sounddevice)")
