"""Measured tracks over a recording: pitch, formants, intensity and spectral shape, each
equal to the reference people trust (Praat, librosa).  Nothing here imports Qt."""

from .intensity import intensity
from .model import Track
from .pyin import pyin
from .spectral import (
    SPECTRAL_KINDS,
    spectral_bandwidth,
    spectral_centroid,
    spectral_flatness,
    spectral_flux,
    spectral_rolloff,
)

#: the track function of each kind (``specscope track KIND``): kind -> function(source,
#: channel, **params) -> Track
TRACKS = {"intensity": intensity, "pyin": pyin, **SPECTRAL_KINDS}

__all__ = ["TRACKS", "Track", "intensity", "pyin", "spectral_bandwidth", "spectral_centroid",
           "spectral_flatness", "spectral_flux", "spectral_rolloff"]
