"""Recordings in: the Recording model, the reader registry and the readers."""

from .base import ReaderSpec, Recording, open_recording, readers, register_reader
from . import audio  # noqa: F401  (registers the audio reader)

__all__ = ["Recording", "ReaderSpec", "open_recording", "readers", "register_reader"]
