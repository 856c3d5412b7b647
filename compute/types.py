"""Option types: every option of the public API that takes a fixed set of strings.

Each option is a ``Literal`` alias; signatures take the alias, and the tuples that
checks, parameter schemas, menus and the command line list are ``choices(alias)``,
so the strings are written once, here.  ``Literal`` aliases (not enums) because the
values cross JSON, pipelines and the command line as plain strings.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

__all__ = [
    "Backend",
    "BackendPreference",
    "BandKind",
    "BesselNorm",
    "Btype",
    "CalibrationKind",
    "ChannelMix",
    "ChirpMethod",
    "CoefficientFormat",
    "CombKind",
    "Deemphasis",
    "Demod",
    "EditOperation",
    "Executor",
    "FilterDesign",
    "FirDesign",
    "FreqScale",
    "GeneratorKind",
    "IirDesign",
    "Layout",
    "NanPolicy",
    "NoiseColor",
    "NotchDesign",
    "OutputKind",
    "Reduction",
    "RegionShape",
    "RemoveFill",
    "Scaling",
    "SpecMode",
    "Statistic",
    "TableFormat",
    "TemplateScale",
    "TrackKind",
    "TuneDtype",
    "WriteOn",
    "choices",
]

# -- spectra and their display ----------------------------------------------------------

#: spectrogram scaling: power density, power spectrum or amplitude spectrum
Scaling = Literal["psd", "spectrum", "magnitude"]
#: the spectrogram operator's mode: a scaling, the phase or the complex spectrum
SpecMode = Literal[Scaling, "angle", "complex"]
#: axis order of STFT output: one spectrum per row, or one frequency per row
Layout = Literal["frames", "freq"]
#: frequency axis of a display: uniform in Hz, log10(Hz) or mel
FreqScale = Literal["linear", "log", "mel"]
#: how display tiles combine the frames of one column
Reduction = Literal["mean", "max"]
#: how the periodograms of frames combine per bin (Welch's mean, or the median)
Statistic = Literal["mean", "median"]
#: long-term level bands: hybrid millidecade, decidecade or octave
BandKind = Literal["hmd", "decidecade", "octave"]
#: the sensor a calibration describes
CalibrationKind = Literal["hydrophone", "microphone"]

# -- compute backends -------------------------------------------------------------------

#: array libraries operators are implemented on
Backend = Literal["numpy", "cupy"]
#: where ``backend="auto"`` runs: autotuned, or always one backend
BackendPreference = Literal["auto", Backend]
#: what an operator does with NaN input
NanPolicy = Literal["propagate", "reject"]
#: dtypes the autotuner times
TuneDtype = Literal["float32", "float64", "complex64", "complex128"]
#: what a plugin operator declares it returns
OutputKind = Literal["array", "same", "image", "series", "events"]

# -- batch runs and their outputs -------------------------------------------------------

#: the local pool of a batch run
Executor = Literal["processes", "threads"]
#: who writes a Dask run's outputs: decided per run, this machine, or the workers
WriteOn = Literal["auto", "client", "workers"]
#: annotation table formats (read, written, and written per input by detection)
TableFormat = Literal["sigmf", "raven", "audacity", "csv", "hdf5", "textgrid", "eaf"]
#: what the template detector correlates: dB or power spectrograms
TemplateScale = Literal["db", "power"]

# -- filters ----------------------------------------------------------------------------

#: IIR design methods (scipy.signal's iirfilter ftype)
IirDesign = Literal["butter", "cheby1", "cheby2", "ellip", "bessel"]
#: notch, peak and comb designs
NotchDesign = Literal["iirnotch", "iirpeak", "iircomb", "notches"]
#: FIR design methods
FirDesign = Literal["firwin", "remez", "firls", "firwin2"]
#: every design method of a filter spec, in the order forms list them
FilterDesign = Literal[IirDesign, NotchDesign, FirDesign]
#: band type of a filter
Btype = Literal["lowpass", "highpass", "bandpass", "bandstop"]
#: normalisation of a Bessel filter
BesselNorm = Literal["phase", "delay", "mag"]
#: a comb filter's teeth: notches or peaks
CombKind = Literal["notch", "peak"]
#: formats filter coefficients are exported in
CoefficientFormat = Literal["json", "csv", "npz", "c", "python"]

# -- playback and live sources ----------------------------------------------------------

#: demodulators of IQ recordings
Demod = Literal["am", "fm", "usb", "lsb"]
#: FM de-emphasis time constant
Deemphasis = Literal["none", "50us", "75us"]
#: channels heard, besides a channel number: stereo, left, right or all mixed
ChannelMix = Literal["all", "left", "right", "mix"]
#: signals a generator source makes (``white`` and ``pink`` are ``noise``)
GeneratorKind = Literal["tone", "chirp", "noise", "white", "pink", "clicks"]
#: frequency sweep of a chirp (scipy.signal.chirp's method)
ChirpMethod = Literal["linear", "quadratic", "logarithmic", "hyperbolic"]
#: spectrum of generated noise
NoiseColor = Literal["white", "pink"]

# -- region edits --------------------------------------------------------------------------
#: what an edit does to the part of a recording a region covers
EditOperation = Literal["attenuate", "gain", "remove", "isolate", "filter"]
#: the shape of a region of time and frequency
RegionShape = Literal["box", "lasso", "brush", "harmonics"]
#: where ``remove`` takes the level it lowers a region to: the frames before and after it,
#: the bins below and above it, or (auto) along the region's shorter side
RemoveFill = Literal["auto", "time", "frequency"]

# -- measured tracks -----------------------------------------------------------------------
#: what a track measures (``specscope track KIND``; keys of compute.tracks.TRACKS)
TrackKind = Literal["pitch", "formants", "intensity", "pyin", "centroid", "bandwidth",
                    "rolloff", "flatness", "flux"]


def choices(alias: Any) -> tuple[str, ...]:
    """The strings an option type allows, in its order.

    Parameters
    ----------
    alias : Literal
        One of this module's aliases (nested ``Literal`` aliases are flattened).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> choices(Layout)
    ('frames', 'freq')
    """
    return tuple(get_args(alias))
