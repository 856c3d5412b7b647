"""Measured tracks over a recording: pitch, formants, intensity and spectral shape, each
equal to the reference people trust (Praat, librosa).  Nothing here imports Qt."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .formants import formant_track
from .intensity import intensity
from .model import Track
from .pitch_praat import pitch_track
from .pyin import pyin
from .spectral import (
    SPECTRAL_KINDS,
    spectral_bandwidth,
    spectral_centroid,
    spectral_flatness,
    spectral_flux,
    spectral_rolloff,
)

#: the track function of each kind (``specscope track KIND``), in the order of
#: :data:`~specscope.compute.types.TrackKind`: kind -> function(source, channel, **params)
TRACKS: dict[str, Callable[..., Track]] = {"pitch": pitch_track, "formants": formant_track,
                                           "intensity": intensity, "pyin": pyin,
                                           **SPECTRAL_KINDS}

__all__ = ["TRACKS", "Track", "compute_track", "formant_track", "intensity", "pitch_track",
           "pyin", "spectral_bandwidth",
           "spectral_centroid", "spectral_flatness", "spectral_flux", "spectral_rolloff",
           "track_parameters"]


def track_parameters(kind: str) -> tuple[str, ...]:
    """The parameters a kind of track takes (beyond the source and channel)."""
    if kind not in TRACKS:
        raise InputError(f"kind={kind!r} must be one of {', '.join(TRACKS)}")
    sig = inspect.signature(TRACKS[kind])
    return tuple(n for n, p in sig.parameters.items()
                 if p.kind is p.KEYWORD_ONLY and n not in ("sr", "block_frames"))


def compute_track(kind: str, source: Any, channel: int = 0, **params: Any) -> Track:
    """Measure a track of ``kind`` over a recording.

    Parameters
    ----------
    kind : TrackKind
        A key of :data:`TRACKS`.
    source : Recording or array_like
        With ``sr=`` for an array.
    channel : int
    **params
        The kind's parameters, under the reference's names.

    Returns
    -------
    Track
    """
    allowed = (*track_parameters(kind), "sr", "block_frames")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InputError(f"{', '.join(unknown)}: not a parameter of a {kind} track (it "
                         f"takes {', '.join(track_parameters(kind))})")
    return TRACKS[kind](source, channel, **params)
