"""Long-term products as NetCDF-4 (CF conventions) and as xarray Datasets.

The file holds ``psd(time, frequency)``: the band levels as mean spectral density
in dB, with ``effort(time)`` (seconds of signal in each interval),
``lower_frequency`` and ``upper_frequency`` per band, and
``exceedance_level(percent, frequency)`` (L_N over the whole run).  ``time`` is
the start of each interval in seconds since 1970-01-01 UTC (or from the
recording's first sample where its start is not known); ``frequency`` is each
band's centre in Hz.  The global attributes hold the parameters, the calibration
(JSON), the files that failed and the provenance.  Rows are written as the run's
tasks finish, so a deployment's levels never sit in memory whole; the file is
published only when the run ends.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..files import atomic_file, h5_for_writing
from .bands import Bands
from .calibration import Calibration
from .products import EXCEEDANCE_PERCENTS, Levels, exceedance_levels, global_attrs, to_dataset

__all__ = ["NetCDFSink", "netcdf_sink", "to_dataset", "write_netcdf"]

#: values (rows x bands) read back at a time for the statistics (8 bytes each)
_READ_VALUES = 1 << 22


def _time_attrs(absolute: bool) -> dict[str, str]:
    if absolute:
        return {"units": "seconds since 1970-01-01T00:00:00Z", "calendar": "standard",
                "standard_name": "time", "long_name": "start of the interval"}
    return {"units": "s", "long_name": "start of the interval from the recording's start"}


class NetCDFSink:
    """A :class:`~specscope.compute.levels.run.LevelsSink` writing an open NetCDF file."""

    def __init__(self, nc: Any, calibration: Calibration | None, absolute: bool) -> None:
        self._nc, self._cal, self._absolute = nc, calibration, absolute
        self.failed: list[str] = []

    def begin(self, n_times: int, bands: Bands, attrs: dict[str, Any]) -> None:
        nc = self._nc
        nc.dimensions = {"time": n_times, "frequency": len(bands),
                         "percent": len(EXCEEDANCE_PERCENTS)}
        t = nc.create_variable("time", ("time",), "f8")
        t.attrs.update(_time_attrs(self._absolute))
        f = nc.create_variable("frequency", ("frequency",), "f8", data=bands.centres)
        f.attrs.update({"units": "Hz", "long_name": "band centre frequency"})
        for name, data in (("lower_frequency", bands.lower), ("upper_frequency", bands.upper)):
            v = nc.create_variable(name, ("frequency",), "f8", data=data)
            v.attrs.update({"units": "Hz", "long_name": f"band {name.split('_')[0]} edge"})
        unit = "dB re 1 FS^2/Hz" if self._cal is None else \
            self._cal.density_unit.replace("µ", "u").replace("²", "^2")
        p = nc.create_variable("psd", ("time", "frequency"), "f4", fillvalue=np.float32(np.nan),
                               chunks=(min(max(n_times, 1), 64), len(bands)),
                               compression="gzip", compression_opts=1)
        p.attrs.update({"units": unit, "long_name": "band level (mean spectral density)"})
        bb = nc.create_variable("broadband_level", ("time",), "f4",
                                fillvalue=np.float32(np.nan))
        bb.attrs.update({"units": unit.removesuffix("/Hz"),
                         "long_name": "level over all the bands (sum of the band powers)"})
        self._widths_db = 10.0 * np.log10(bands.widths)
        e = nc.create_variable("effort", ("time",), "f4")
        e.attrs.update({"units": "s", "long_name": "seconds of signal in the interval"})
        self._offset = None if self._cal is None else \
            self._cal.offset_db(bands.centres).astype(np.float64)
        self._attrs = global_attrs(attrs, self._cal)
        self._n = n_times

    def rows(self, first: int, time: np.ndarray, effort: np.ndarray,
             power: np.ndarray) -> None:
        n = len(time)
        with np.errstate(divide="ignore", invalid="ignore"):
            db = 10.0 * np.log10(np.asarray(power, dtype=np.float64))
        if self._offset is not None:
            db += self._offset
        self._nc.variables["time"][first:first + n] = time
        self._nc.variables["effort"][first:first + n] = effort
        self._nc.variables["psd"][first:first + n] = db.astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            bb = 10.0 * np.log10(np.sum(10.0 ** ((db + self._widths_db) / 10.0), axis=1))
        self._nc.variables["broadband_level"][first:first + n] = bb.astype(np.float32)

    def end(self, failed: list[str]) -> None:
        nc = self._nc
        self.failed = list(failed)
        pc = nc.create_variable("percent", ("percent",), "f8",
                                data=np.asarray(EXCEEDANCE_PERCENTS, dtype=np.float64))
        pc.attrs.update({"units": "%", "long_name": "percent of the time a level is exceeded"})
        x = nc.create_variable("exceedance_level", ("percent", "frequency"), "f4",
                               fillvalue=np.float32(np.nan))
        x.attrs.update({"units": nc.variables["psd"].attrs["units"],
                        "long_name": "level exceeded the given percent of the time (L_N)"})
        psd = nc.variables["psd"]
        n_bands = psd.shape[1]
        # columns read back a block at a time: about _READ_VALUES values
        step = max(1, min(n_bands, _READ_VALUES // max(1, self._n)))
        for j in range(0, n_bands, step):
            cols = np.asarray(psd[:, j:j + step], dtype=np.float64)
            if self._n and np.isfinite(cols).any():
                x[:, j:j + step] = exceedance_levels(cols).astype(np.float32)
        attrs = dict(self._attrs, failed_files=json.dumps(self.failed),
                     intervals=self._n)
        for k, v in attrs.items():
            nc.attrs[k] = v


@contextmanager
def netcdf_sink(path: str | os.PathLike[str], calibration: Calibration | None,
                absolute: bool) -> Iterator[NetCDFSink]:
    """A :class:`NetCDFSink` on a temporary file, published as ``path`` when the body ends."""
    import h5netcdf

    with atomic_file(path, what="file name ending in .nc") as tmp:
        with h5_for_writing(tmp, "w", track_order=True) as h5:
            nc = h5netcdf.File(h5, "w")
            try:
                yield NetCDFSink(nc, calibration, absolute)
            finally:
                nc.close()


def write_netcdf(levels: Levels, path: str | os.PathLike[str]) -> None:
    """Write ``levels`` (in memory) to a NetCDF-4 file ``path``."""
    with netcdf_sink(path, levels.calibration, levels.absolute) as sink:
        sink.begin(len(levels.time), levels.bands, levels.attrs)
        if len(levels.time):
            sink.rows(0, levels.time, levels.effort, levels.power)
        sink.end(levels.failed)
