"""Event detection: detectors over recordings, and the table of what they found.

- :class:`Events` (:mod:`.events`): the detections as columns (sample edges,
  seconds, band, score, label, channel, detector and parameters), to and from
  annotations and annotation files (Raven, Audacity, CSV, SigMF, HDF5);
- the built-in detectors, each an operator with a parameter schema (family
  ``detect``) and a streaming :class:`Detector` (``push(x, final) -> Events``):
  ``detect.energy`` (:class:`EnergyDetector`, band-limited energy over an
  adaptive noise floor), ``detect.template`` (:class:`TemplateDetector`,
  normalised cross-correlation of a spectrogram box; its kernel is the
  operator ``detect.ncc``), ``detect.bursts`` (:class:`BurstDetector`, IQ
  bursts with centre frequency and bandwidth); any plugin operator declaring
  ``events`` (``onsets.detect``) runs as an :class:`OperatorDetector`;
- :func:`detect`: a detector over a recording in chunks; the events do not
  depend on the chunk size; :class:`ChannelStreams`: one stream per channel,
  for a pipeline's event step or a live monitor;
- :mod:`.synth`: generated recordings with known calls and bursts, and
  :func:`.synth.match` to compare detections with them.

Importing this package declares the detector operators (``specscope.compute``
imports it).  In a notebook: ``from specscope.compute.detect import detect`` then
``detect("survey.wav", "energy", {"band_low_hz": 2000}).to_dataframe()``.
"""

from .core import DETECTORS, ChannelStreams, Detector
from .energy import BurstDetector, EnergyDetector
from .events import COLUMNS, Event, Events, read_events
from .plugin import OperatorDetector
from .runner import (
    ALIASES,
    DEFAULT_CHUNK,
    detect,
    detector_names,
    make_detector,
)
from .template import TemplateDetector, ncc

__all__ = ["ALIASES", "COLUMNS", "DEFAULT_CHUNK", "DETECTORS", "BurstDetector", "ChannelStreams",
           "Detector", "EnergyDetector", "Event", "Events", "OperatorDetector",
           "TemplateDetector", "detect", "detector_names", "make_detector", "ncc",
           "read_events"]
