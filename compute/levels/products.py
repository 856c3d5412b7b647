"""Long-term products held in memory: band levels per interval and their statistics."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..errors import BadOption
from .bands import Bands
from .calibration import Calibration

__all__ = ["EXCEEDANCE_PERCENTS", "Levels", "exceedance_levels", "global_attrs",
           "spectral_probability_density", "to_dataset"]

#: the L_N levels reported by default: the level exceeded N % of the time
EXCEEDANCE_PERCENTS: tuple[float, ...] = (1, 5, 10, 50, 90, 95, 99)


@dataclass
class Levels:
    """Band levels per time interval.

    Attributes
    ----------
    time : ndarray of float64
        Start of each interval: seconds since the epoch (UTC) when ``absolute``,
        else seconds from the recording's first sample.
    effort : ndarray of float64
        Seconds of signal in each interval.
    power : ndarray of float64, shape (n_times, n_bands)
        Mean spectral density per band in FS²/Hz (uncalibrated); NaN where the
        interval's file failed.
    bands : Bands
    calibration : Calibration or None
    absolute : bool
    attrs : dict
        Parameters and provenance written with the product.
    failed : list of str
        ``"file: reason"`` for each file that could not be computed.
    """

    time: np.ndarray
    effort: np.ndarray
    power: np.ndarray
    bands: Bands
    calibration: Calibration | None = None
    absolute: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)

    @property
    def unit(self) -> str:
        """The unit of :meth:`db`: ``dB re 1 µPa²/Hz``, ``dB re 20 µPa²/Hz`` or ``dB re 1 FS²/Hz``."""
        return "dB re 1 FS²/Hz" if self.calibration is None else self.calibration.density_unit

    def db(self) -> np.ndarray:
        """Levels in dB (calibrated where a calibration is set), shape (n_times, n_bands)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out = 10.0 * np.log10(self.power)
        if self.calibration is not None:
            out = out + self.calibration.offset_db(self.bands.centres)
        return out

    def band_levels(self) -> np.ndarray:
        """Band power levels in dB (the density times the band's width), shape (n_times, n_bands).

        In dB re 1 µPa² (dB re (20 µPa)², dB re 1 FS²) rather than per hertz.
        """
        return self.db() + 10.0 * np.log10(self.bands.widths)

    def broadband(self) -> np.ndarray:
        """The level over all the bands per interval, in dB re 1 µPa² (or FS²), shape (n_times,)."""
        with np.errstate(divide="ignore"):
            return 10.0 * np.log10(np.sum(10.0 ** (self.band_levels() / 10.0), axis=1))

    def between(self, start: float, stop: float) -> Levels:
        """The intervals that start in ``start <= time < stop`` (the unit of :attr:`time`)."""
        keep = (self.time >= start) & (self.time < stop)
        return Levels(self.time[keep], self.effort[keep], self.power[keep], self.bands,
                      self.calibration, self.absolute, dict(self.attrs), list(self.failed))

    def exceedance(self, percents: Sequence[float] = EXCEEDANCE_PERCENTS) -> np.ndarray:
        """:func:`exceedance_levels` of :meth:`db`, shape (len(percents), n_bands)."""
        return exceedance_levels(self.db(), percents)

    def spd(self, step_db: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """:func:`spectral_probability_density` of :meth:`db`."""
        return spectral_probability_density(self.db(), step_db)

    def to_xarray(self) -> Any:
        """The product as an :class:`xarray.Dataset` (needs xarray)."""
        return to_dataset(self)


def exceedance_levels(db: np.ndarray, percents: Sequence[float] = EXCEEDANCE_PERCENTS
                      ) -> np.ndarray:
    """L_N: the level exceeded ``N`` % of the time, per column of ``db`` (NaN rows skipped).

    ``L_N`` is the ``100 - N`` th percentile (linear interpolation between ranks).

    Parameters
    ----------
    db : ndarray, shape (n_times, n_bands)
    percents : sequence of float
        Each in 0..100.

    Returns
    -------
    ndarray, shape (len(percents), n_bands)
    """
    p = np.asarray(percents, dtype=np.float64)
    if p.ndim != 1 or np.any((p < 0) | (p > 100)) or not np.all(np.isfinite(p)):
        raise BadOption("percents", list(percents), "must be percentages from 0 to 100")
    with np.errstate(invalid="ignore"):  # -inf levels (no power) stay -inf
        return np.nanpercentile(np.asarray(db, dtype=np.float64), 100.0 - p, axis=0)


def spectral_probability_density(db: np.ndarray, step_db: float = 1.0
                                 ) -> tuple[np.ndarray, np.ndarray]:
    """The empirical probability density of the levels of each band.

    Parameters
    ----------
    db : ndarray, shape (n_times, n_bands)
    step_db : float
        Width of a level bin in dB.

    Returns
    -------
    edges : ndarray, shape (n_levels + 1,)
        Level bin edges in dB (multiples of ``step_db``).
    density : ndarray, shape (n_levels, n_bands)
        Per band, the fraction of intervals in each level bin divided by
        ``step_db`` (each column integrates to 1 over the levels).
    """
    if not (step_db > 0 and np.isfinite(step_db)):
        raise BadOption("step_db", step_db, "must be a number of dB above 0")
    v = np.asarray(db, dtype=np.float64)
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return np.zeros(1), np.zeros((0, v.shape[1]))
    lo = np.floor(finite.min() / step_db) * step_db
    hi = (np.floor(finite.max() / step_db) + 1) * step_db
    edges = np.arange(round((hi - lo) / step_db) + 1) * step_db + lo
    density = np.zeros((edges.size - 1, v.shape[1]))
    for j in range(v.shape[1]):
        col = v[:, j][np.isfinite(v[:, j])]
        if col.size:
            h, _ = np.histogram(col, bins=edges)
            density[:, j] = h / (col.size * step_db)
    return edges, density


_PRODUCTS = {"hmd": "hybrid millidecade band levels", "decidecade": "decidecade band levels",
             "octave": "octave band levels"}


def global_attrs(attrs: dict[str, Any], calibration: Calibration | None) -> dict[str, Any]:
    """The global attributes of a product: conventions, provenance, calibration, parameters."""
    from .. import __version__

    out: dict[str, Any] = {
        "Conventions": "CF-1.8",
        "title": _PRODUCTS.get(str(attrs.get("bands")), "band levels"),
        "source": f"specscope {__version__}",
        "history": f"{datetime.now(UTC).isoformat(timespec='seconds')} specscope "
                   f"{__version__}: levels",
        "calibration": json.dumps(None if calibration is None else calibration.to_dict()),
        "units_note": "levels are mean spectral densities over each band",
    }
    for k, v in attrs.items():
        out[k] = v if isinstance(v, int | float | str) else json.dumps(v)
    return out


def to_dataset(levels: Levels) -> Any:
    """``levels`` as an :class:`xarray.Dataset` laid out as the NetCDF file."""
    import xarray as xr

    if levels.absolute:
        time = (np.round(levels.time * 1e6).astype("int64")).astype("datetime64[us]")
    else:
        time = levels.time
    db = levels.db()
    ds = xr.Dataset(
        {"psd": (("time", "frequency"), db.astype(np.float32), {"units": levels.unit}),
         "effort": (("time",), levels.effort.astype(np.float32), {"units": "s"}),
         "broadband_level": (("time",), levels.broadband().astype(np.float32),
                             {"units": levels.unit.removesuffix("/Hz")}),
         "exceedance_level": (("percent", "frequency"),
                              exceedance_levels(db).astype(np.float32),
                              {"units": levels.unit})},
        coords={"time": time,
                "frequency": ("frequency", levels.bands.centres, {"units": "Hz"}),
                "lower_frequency": ("frequency", levels.bands.lower, {"units": "Hz"}),
                "upper_frequency": ("frequency", levels.bands.upper, {"units": "Hz"}),
                "percent": ("percent", np.asarray(EXCEEDANCE_PERCENTS, dtype=np.float64),
                            {"units": "%"})},
        attrs=global_attrs(levels.attrs, levels.calibration)
        | {"failed_files": json.dumps(levels.failed)})
    return ds
