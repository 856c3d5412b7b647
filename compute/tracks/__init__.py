"""Measured tracks over a recording: pitch, formants, intensity and spectral shape, each
equal to the reference people trust (Praat, librosa).  Nothing here imports Qt."""

from .model import Track

__all__ = ["Track"]
