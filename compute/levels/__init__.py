"""Long-term sound levels: calibrated band levels per interval over a recording or a deployment.

:func:`compute_levels` gives hybrid millidecade, decidecade or octave band levels
per interval (a minute by default) as :class:`Levels`; :func:`write_levels` writes
them to NetCDF-4 as the run goes.  :class:`Calibration` turns full-scale levels
into sound pressure levels.  The statistics of a span are
:func:`exceedance_levels` (L_N) and :func:`spectral_probability_density`.
"""

from __future__ import annotations

import os
from typing import Any

from .bands import BAND_KINDS, Bands, band_power, make_bands
from .calibration import Calibration, CalibrationError, load_calibration
from .diel import DielLevels, diel_levels
from .netcdf import netcdf_sink, to_dataset, write_netcdf
from .products import (
    EXCEEDANCE_PERCENTS,
    Levels,
    exceedance_levels,
    spectral_probability_density,
)
from .run import MemorySink, compute_levels, plan_tasks
from .spectra import SpectrumParams, plan_intervals, recording_start

__all__ = ["BAND_KINDS", "EXCEEDANCE_PERCENTS", "Bands", "Calibration", "CalibrationError",
           "DielLevels", "Levels", "MemorySink", "SpectrumParams", "band_power", "compute_levels",
           "diel_levels", "exceedance_levels", "load_calibration", "make_bands", "netcdf_sink",
           "plan_intervals", "plan_tasks", "recording_start", "spectral_probability_density",
           "to_dataset", "write_levels", "write_netcdf"]


def write_levels(source: Any, out: str | os.PathLike[str], *,
                 calibration: Calibration | None = None, **options: Any) -> list[str]:
    """:func:`compute_levels` of ``source`` written to the NetCDF file ``out`` as it runs.

    Returns
    -------
    list of str
        ``"file: reason"`` for each file that failed (its intervals hold no level).
    """
    from ..files import input_scope, note_inputs, recording_files
    from ..io import open_recording
    from .spectra import recording_start as _start

    with input_scope():
        open_options = options.pop("open_options", None) or {}
        rec = source if hasattr(source, "sample_rate") else open_recording(
            source, **open_options)
        note_inputs(*recording_files(rec))
        with netcdf_sink(out, calibration, _start(rec) is not None) as sink:
            compute_levels(rec, calibration=calibration, sink=sink,
                           open_options=open_options, **options)
        return sink.failed
