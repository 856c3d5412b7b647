"""specscope.compute — the Qt-free core.

Recordings (:func:`open_recording`, :class:`ArrayRecording`), short-time spectra
(:func:`spectrogram`, :class:`StftParams`), display images at any zoom
(:class:`TileEngine`), processing (:class:`Pipeline`, :class:`FilterSpec`), the
operator core (:func:`call`, :func:`operator`, :class:`Param`), annotations and
measurements (:class:`Annotation`, :func:`measure`) and HDF5 export
(:func:`export_spectrogram`).  Nothing here imports Qt: a notebook, the CLI and a
cluster worker use it without a GUI.

The rooms, one concept each: ``io`` (readers), ``operators`` (registry, autotune,
dispatch), ``ops`` (built-in operators), ``extensions`` (plugins), ``filters``,
``pipeline``, ``view`` (tile engine), ``output`` (files), ``annotations``,
``live`` and ``batch``.
"""

# declares the detector operators (detect.energy, detect.template, detect.bursts, detect.ncc)
from . import detect as detect
from ._version import __version__
from .annotations import (
    Annotation,
    Measurement,
    measure,
    read_annotations,
    write_annotations,
)
from .backend import available_backends
from .errors import Cancelled, InputError, RecordingError, SpecscopeError
from .filters import FilterSpec, design
from .io import ArrayRecording, Recording, open_recording, readers, register_reader
from .operators import call, operator
from .ops.timefreq import spectrogram
from .output import export_spectrogram, read_spectrogram
from .params import Param
from .pipeline import Pipeline
from .spectral import StftParams, get_window, to_db
from .view import RenderResult, TileEngine, render_progressive

__all__ = [
    "Annotation",
    "ArrayRecording",
    "Cancelled",
    "FilterSpec",
    "InputError",
    "Measurement",
    "Param",
    "Pipeline",
    "Recording",
    "RecordingError",
    "RenderResult",
    "SpecscopeError",
    "StftParams",
    "TileEngine",
    "__version__",
    "available_backends",
    "call",
    "design",
    "export_spectrogram",
    "get_window",
    "measure",
    "open_recording",
    "operator",
    "read_annotations",
    "read_spectrogram",
    "readers",
    "register_reader",
    "render_progressive",
    "spectrogram",
    "to_db",
    "write_annotations",
]
