"""Live mode: sources, a block ring, and a session that streams a Pipeline.

A :class:`Source` (opened from a spec by :func:`open_source`; plugins add schemes
with :func:`register_source`) delivers blocks into a :class:`BlockRing`; a
:class:`LiveSession` processes them on its own thread through the pipeline's
stages, keeps the output in a :class:`History` (spilling to disk), counts
latency (:class:`LatencyStats`, :class:`LiveStats`) and optionally records to
HDF5 (:class:`LiveRecorder`, :func:`recover_recording`).  A :class:`LiveMonitor`
plays the processed signal on an audio output (:class:`LiveRenderer`).

Modules: ``ring``, ``sources`` (the sources and their options), ``generator``,
``source_registry``, ``processor``, ``stats``, ``history``, ``recorder``,
``session``, ``monitor``.
"""

from .generator import GeneratorSource
from .history import History
from .monitor import LiveMonitor, LiveRenderer
from .recorder import LiveRecorder, recover_recording
from .ring import BlockRing
from .session import LiveSession
from .source_registry import open_source, register_source, source_schemes
from .sources import DeviceSource, FileSource, Source, ThreadedSource
from .stats import LatencyStats, LiveStats

__all__ = [
    "BlockRing",
    "DeviceSource",
    "FileSource",
    "GeneratorSource",
    "History",
    "LatencyStats",
    "LiveMonitor",
    "LiveRecorder",
    "LiveRenderer",
    "LiveSession",
    "LiveStats",
    "Source",
    "ThreadedSource",
    "open_source",
    "recover_recording",
    "register_source",
    "source_schemes",
]
