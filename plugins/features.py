"""Spectral features over time: centroid, bandwidth, flatness, rolloff and flux."""

from __future__ import annotations

from specscope.compute.operators import Param, operator
from specscope.compute.ops import features as feature_ops

from ._common import HOP, NFFT, WINDOW, frame_times, real_signal

SPECSCOPE_PLUGIN = {
    "summary": "Spectral features over time (centroid, bandwidth, flatness, rolloff, flux)",
    "outputs": {"spectral": "series"},
}

FEATURES = ("centroid", "bandwidth", "flatness", "rolloff", "flux")


@operator("spectral", family="features",
          summary="Spectral centroid, bandwidth, flatness, rolloff and flux per frame: "
                  "{times, centroid, bandwidth, flatness, rolloff, flux}",
          params=[NFFT, HOP, WINDOW,
                  Param("p", float, 2.0, min=1.0, help="order of the bandwidth"),
                  Param("roll_percent", float, 0.85, min=0.0, max=1.0,
                        help="fraction of the magnitude below the rolloff"),
                  Param("amin", float, 1e-10, min=0.0, help="power floor of the flatness")],
          reference="per frame of |rfft(frame*window)|: sum(f|X|)/sum|X|; "
                    "(sum(|X||f-c|^p)/sum|X|)^(1/p); gmean(P)/mean(P); smallest f with "
                    "cumsum|X| >= r sum|X|; ||max(|X_k|-|X_k-1|, 0)||_2",
          history=lambda p: 2 * p["nfft"] - p["hop"], nan_policy="reject")
def spectral(x, *, nfft, hop, window, p, roll_percent, amin, fs, xp):
    real_signal(x, "features.spectral", nfft)
    common = {"nfft": nfft, "hop": hop, "window": window, "xp": xp}
    out = {
        "centroid": feature_ops.spectral_centroid.function(x, fs=fs, **common),
        "bandwidth": feature_ops.spectral_bandwidth.function(x, p=p, fs=fs, **common),
        "flatness": feature_ops.spectral_flatness.function(x, amin=amin, **common),
        "rolloff": feature_ops.spectral_rolloff.function(x, roll_percent=roll_percent, fs=fs,
                                                         **common),
        "flux": feature_ops.spectral_flux.function(x, **common),
    }
    out["times"] = frame_times(out["centroid"].shape[-1], nfft, hop, fs, xp)
    return out
