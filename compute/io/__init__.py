"""Recordings in: the Recording model, the reader registry and the readers."""

from . import audio, hdf5, numpy_files, raw, sigmf  # noqa: F401  (register the readers)
from .base import ReaderSpec, Recording, open_recording, readers, register_reader, split_member
from .hdf5 import list_datasets
from .memory import ArrayRecording
from .raw import extension_sample_type, parse_sample_type
from .sigmf import SigMFRecording

__all__ = ["ArrayRecording", "ReaderSpec", "Recording", "SigMFRecording",
           "extension_sample_type", "list_datasets",
           "open_recording", "parse_sample_type", "readers", "register_reader", "split_member"]
