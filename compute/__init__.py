"""specscope.compute — the Qt-free core.

Recordings (:func:`open_recording`, :class:`ArrayRecording`), short-time
spectra (:func:`spectrogram`, :class:`StftParams`), display images at any zoom
(:class:`TileEngine`) and HDF5 export (:func:`export_spectrogram`).  Nothing
here imports Qt: a notebook, the CLI and a cluster worker use it without a GUI.
"""

from ._version import __version__
from .errors import Cancelled, InputError, RecordingError, SpecscopeError
from .io import Recording, open_recording, readers, register_reader
from .io.memory import ArrayRecording
from .output.spectrogram import export_spectrogram, read_spectrogram
from .spectral import StftParams, get_window, spectrogram, to_db
from .view.tiles import RenderResult, TileEngine, render_progressive

__all__ = [
    "__version__", "Cancelled", "InputError", "RecordingError", "SpecscopeError",
    "Recording", "ArrayRecording", "open_recording", "readers", "register_reader",
    "StftParams", "get_window", "spectrogram", "to_db",
    "TileEngine", "RenderResult", "render_progressive",
    "export_spectrogram", "read_spectrogram",
]

# operator core (issue 3): registry, backends
from .backend import available_backends
from .operators.registry import Param, call, operator

__all__ += ["Param", "available_backends", "call", "operator"]

# pipelines (issue 5): the one representation of processing
from .pipeline.core import Pipeline

__all__ += ["Pipeline"]
