"""Filters: specification, design, analysis, application and coefficient files.

The filter designer (GUI), the pipeline's ``filter`` step and ``specscope
filter`` share one design path, and every place that filters samples (pipeline
stages, exports, batch runs, live sessions, the tile engine) shares one
application.  Nothing here imports Qt.

Quick tour::

    spec = FilterSpec("butter", btype="bandpass", order=4, cutoff=(300.0, 3000.0))
    d = design(spec, fs=48000)            # Design: d.sos, d.order, d.stable, ...
    a = analyze(d)                         # Analysis: a.f, a.magnitude_db, a.group_delay, ...
    v = verify(d)                          # Verdict: v.passed, v.worst
    spec2 = dataclasses.replace(spec, cutoff=(350.0, 3000.0))   # a drag: a new spec
    y = stream_filter(d.form, d.coefficients, d.settle).whole(x)   # filtered samples

    hum = notch_from_click(50.0, fs=48000, harmonics="nyquist")  # comb for hum + harmonics
    fit = find_line(samples, fs, near=48.0)    # LineFit: 49.93 Hz, harmonics 1-7 above the floor
    spec = notch_for_line(fit, fs)             # notches for those harmonics only

Modules: :mod:`.spec` (:class:`FilterSpec`, the parameter table, form schemas),
:mod:`.design` (:func:`design`), :mod:`.lines`
(:func:`find_line`), :mod:`.designed` (:class:`Design`: coefficients,
response, roots, delay, settling), :mod:`.analysis` (:func:`analyze`,
:func:`verify`), :mod:`.apply` (:class:`StreamFilter` and the block function of
the tile engine), :mod:`.formats` (coefficient files).
"""

from .analysis import Analysis, BandCheck, Verdict, analyze, tolerance_bands, verify
from .apply import (
    FFT_MIN_TAPS,
    VIEW_SETTLE_TOL,
    BlockFilter,
    CombFilter,
    FftFirFilter,
    FirFilter,
    SosFilter,
    StreamFilter,
    block_filter,
    stream_filter,
    zero_phase_function,
)
from .defaults import DEFAULT_SPEC, METHODS, convert, in_force, starter
from .design import (
    COMB_MIN_HARMONICS,
    MAX_NOTCH_HARMONICS,
    clear_design_cache,
    design,
    notch_for_line,
    notch_from_click,
    remez_length,
)
from .designed import SETTLE_TOL, Call, Design, impulse_settle
from .formats import (
    FORMATS,
    SUFFIXES,
    export_coefficients,
    parse_coefficients,
    read_coefficients,
    write_coefficients,
)
from .lines import LineFit, find_line, line_spectrum, search_tolerance
from .preview import Shown, compute_shown
from .spec import (
    BTYPES,
    DESIGN_PARAM,
    DESIGNS,
    FILTER_DESIGNS,
    MAX_NUMTAPS,
    MAX_ORDER,
    FilterSpec,
    FilterSpecError,
    field_schema,
)

__all__ = [
    "BTYPES",
    "COMB_MIN_HARMONICS",
    "DEFAULT_SPEC",
    "DESIGNS",
    "DESIGN_PARAM",
    "FFT_MIN_TAPS",
    "FILTER_DESIGNS",
    "FORMATS",
    "MAX_NOTCH_HARMONICS",
    "MAX_NUMTAPS",
    "MAX_ORDER",
    "METHODS",
    "SETTLE_TOL",
    "SUFFIXES",
    "VIEW_SETTLE_TOL",
    "Analysis",
    "BandCheck",
    "BlockFilter",
    "Call",
    "CombFilter",
    "Design",
    "FftFirFilter",
    "FilterSpec",
    "FilterSpecError",
    "FirFilter",
    "LineFit",
    "Shown",
    "SosFilter",
    "StreamFilter",
    "Verdict",
    "analyze",
    "block_filter",
    "clear_design_cache",
    "compute_shown",
    "convert",
    "design",
    "export_coefficients",
    "field_schema",
    "find_line",
    "impulse_settle",
    "in_force",
    "line_spectrum",
    "notch_for_line",
    "notch_from_click",
    "parse_coefficients",
    "read_coefficients",
    "remez_length",
    "search_tolerance",
    "starter",
    "stream_filter",
    "tolerance_bands",
    "verify",
    "write_coefficients",
    "zero_phase_function",
]
