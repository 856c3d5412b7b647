"""Recordings in: the Recording model, the reader registry and the readers."""

from . import audio, hdf5, numpy_files, raw, sigmf  # noqa: F401  (register the readers)
from .base import ReaderSpec, Recording, open_recording, readers, register_reader, split_member
from .hdf5 import list_datasets

__all__ = ["ReaderSpec", "Recording", "list_datasets", "open_recording", "readers",
           "register_reader", "split_member"]
