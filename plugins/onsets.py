"""Onset / transient detector: spectral-flux peaks, refined to the sample, as annotations.

Turn its result into annotations with
:func:`specscope.compute.extensions.events_to_annotations`; pass
``generator="onsets.detect"`` so each annotation says which detector found it::

    events = operators.call("onsets.detect", x, fs=fs)
    notes = extensions.events_to_annotations(events, fs=fs, generator="onsets.detect")
"""

from __future__ import annotations

import numpy as np
import scipy.signal
from specscope.compute.errors import InputError, operator_error
from specscope.compute.operators import Param, operator
from specscope.compute.ops import features as feature_ops
from specscope.compute.ops import frame_magnitudes

SPECSCOPE_PLUGIN = {
    "summary": "Onset / transient detector (writes annotations)",
    "outputs": {"detect": "events"},
}


@operator("detect", family="analysis",
          summary="Onsets and transients: {times s, sample, strength}",
          params=[Param("nfft", int, 256, min=8, unit="samples", help="frame length"),
                  Param("hop", int, 64, min=1, unit="samples", help="samples between frames"),
                  Param("window", "window", "hann"),
                  Param("threshold", float, 0.3, min=0.0, max=1.0,
                        help="minimum strength, relative to the strongest onset"),
                  Param("min_gap", float, 0.05, min=0.0, unit="s",
                        help="minimum time between onsets"),
                  Param("refine", bool, True,
                        help="move each onset to the first large sample step in its frame")],
          reference="peaks of the spectral flux (scipy.signal.find_peaks, height = threshold * "
                    "max and >= 1 % of the mean frame norm, distance = min_gap); "
                    "sample = first |diff(x)| >= half its maximum within the frame",
          history=None, nan_policy="reject")
def detect(x, *, nfft, hop, window, threshold, min_gap, refine, fs):
    x = np.asarray(x)
    if x.ndim != 1:
        raise operator_error(InputError, "onsets.detect", f"input must be one channel (1-D), got shape {x.shape}")
    if x.dtype.kind == "c":
        x = np.abs(x)  # IQ: detect on the envelope
    if x.size < nfft:
        raise operator_error(InputError, "onsets.detect", f"nfft={nfft} is larger than the signal ({x.size} "
                         f"samples); choose nfft <= {x.size}")
    flux = np.asarray(feature_ops.spectral_flux.function(x, nfft=nfft, hop=hop, window=window,
                                                         xp=np), dtype=np.float64)
    _, mag = frame_magnitudes(x, nfft, hop, window, np, "onsets.detect")
    level = float(np.sqrt((mag.astype(np.float64) ** 2).sum(-1)).mean()) if mag.size else 0.0
    top = float(flux.max()) if flux.size else 0.0
    empty = {"times": np.zeros(0), "sample": np.zeros(0, dtype=np.int64),
             "strength": np.zeros(0)}
    # a change under 1 % of the typical frame's spectral norm is not an onset
    if top <= 0.01 * level or top <= 0:
        return empty
    distance = max(1, round(min_gap * fs / hop))
    # pad so an onset in the first or last frame can still be a peak
    peaks, _ = scipy.signal.find_peaks(np.concatenate([[0.0], flux, [0.0]]),
                                       height=threshold * top, distance=distance)
    frames = peaks - 1
    samples = []
    step = np.abs(np.diff(x.astype(np.float64), prepend=x[:1].astype(np.float64)))
    for k in frames:
        if refine:
            # flux of frame k compares it with frame k-1: the new part is its last hop
            lo = max(0, k * hop + nfft - 2 * hop - nfft // 2)
            hi = min(x.size, k * hop + nfft)
            seg = step[lo:hi]
            # the first sample of the step (a click also steps back down after itself)
            samples.append(lo + int(np.argmax(seg >= 0.5 * seg.max())))
        else:
            samples.append(k * hop + nfft // 2)
    sample = np.asarray(samples, dtype=np.int64)
    return {"times": sample / fs, "sample": sample, "strength": flux[frames] / top}
