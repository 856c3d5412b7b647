"""``specscope track KIND IN -o OUT``: a measured track of a recording to CSV or HDF5.

KIND is a key of :data:`specscope.compute.tracks.TRACKS`; the options carry the
reference's parameter names (Praat's, librosa's) and apply to the kinds that take them.
Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
from typing import Any

from specscope.app.cli.common import add_recording_options, open_input
from specscope.app.cli.types import at_least
from specscope.compute.types import TrackKind, choices

#: option dest -> what it is, for the help (the dest is the parameter's name)
OPTIONS: dict[str, tuple[Any, str, str]] = {
    # pitch by autocorrelation (Praat)
    "pitch_floor": (float, "HZ", "pitch: lowest pitch (default 75)"),
    "pitch_ceiling": (float, "HZ", "pitch: highest pitch (default 600)"),
    "max_number_of_candidates": (int, "N", "pitch: candidates per frame (default 15)"),
    "silence_threshold": (float, "X", "pitch: frames below this share of the peak are "
                                      "silent (default 0.03)"),
    "voicing_threshold": (float, "X", "pitch: strength of the unvoiced candidate "
                                      "(default 0.45)"),
    "octave_cost": (float, "X", "pitch: favours higher candidates (default 0.01)"),
    "octave_jump_cost": (float, "X", "pitch: cost of a jump of an octave (default 0.35)"),
    "voiced_unvoiced_cost": (float, "X", "pitch: cost of a voicing change (default 0.14)"),
    # formants by Burg (Praat)
    "max_number_of_formants": (float, "N", "formants: formants sought (default 5)"),
    "formant_ceiling": (float, "HZ", "formants: the highest formant's limit (default 5500)"),
    "window_length": (float, "S", "formants: effective window length (default 0.025)"),
    "pre_emphasis_from": (float, "HZ", "formants: pre-emphasis above (default 50)"),
    # intensity (Praat)
    "minimum_pitch": (float, "HZ", "intensity: lowest periodicity smoothed out (default 100)"),
    "time_step": (float, "S", "intensity, pitch, formants: seconds between frames (default "
                             "0: Praat's: 0.8 / minimum pitch, 0.75 / pitch floor, a quarter "
                             "of the window)"),
    # the STFT of the spectral shapes (librosa)
    "n_fft": (int, "N", "spectral: FFT length (default 2048)"),
    "hop_length": (int, "N", "spectral, pyin: frame step in samples (default 512; pyin: "
                             "frame_length / 4)"),
    "win_length": (int, "N", "spectral: window length (default n_fft)"),
    "window": (str, "NAME", "spectral: window (default hann; kaiser,8)"),
    "p": (float, "X", "bandwidth: order of the deviation (default 2)"),
    "roll_percent": (float, "X", "rolloff: fraction of the magnitude below (default 0.85)"),
    "amin": (float, "X", "flatness: floor of the power spectrum (default 1e-10)"),
    "power": (float, "X", "flatness: exponent of the magnitude (default 2)"),
    # pyin (librosa)
    "fmin": (float, "HZ", "pyin: lowest pitch (default 65.4, C2)"),
    "fmax": (float, "HZ", "pyin: highest pitch (default 2093, C7)"),
    "frame_length": (int, "N", "pyin: frame in samples (default 2048)"),
    "n_thresholds": (int, "N", "pyin: voicing thresholds (default 100)"),
    "boltzmann_parameter": (float, "X", "pyin: prior over troughs (default 2)"),
    "resolution": (float, "X", "pyin: pitch bins per semitone, inverted (default 0.1)"),
    "max_transition_rate": (float, "X", "pyin: octaves per second at most (default 35.92)"),
    "switch_prob": (float, "X", "pyin: voiced/unvoiced switch probability (default 0.01)"),
    "no_trough_prob": (float, "X", "pyin: probability without a trough below a threshold "
                                   "(default 0.01)"),
}


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def cmd_track(args: argparse.Namespace) -> int:
    """``track``: measure a track and write it."""
    from specscope.compute.errors import InputError
    from specscope.compute.files import refuse_overwriting_inputs
    from specscope.compute.output import write_track
    from specscope.compute.output.track import track_format
    from specscope.compute.tracks import compute_track, track_parameters

    refuse_overwriting_inputs([args.output], [args.file])
    track_format(args.output)  # a bad suffix fails before the input is read
    takes = track_parameters(args.kind)
    params = {d: getattr(args, d) for d in (*OPTIONS, "subtract_mean", "center",
                                           "beta_parameters", "very_accurate")
              if getattr(args, d) is not None}
    stray = [_flag(d) for d in params if d not in takes]
    if stray:
        raise InputError(f"{', '.join(stray)}: not an option of a {args.kind} track")
    with open_input(args) as rec:
        track = compute_track(args.kind, rec, args.channel, **params)
    write_track(track, args.output, source=args.file, channel=args.channel)
    if not args.quiet:
        print(f"wrote {args.output} ({track.times.size} frames of {args.kind})")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add ``track`` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "track", help="measure a track (pitch, formants, intensity, spectral shape) to CSV "
                      "or HDF5",
        description="Measure a track of IN, equal to its reference (pitch, formants and "
                    "intensity: Praat's To Pitch (ac), To Formant (burg) and To Intensity; "
                    "pyin and the spectral shapes: librosa's), and write time "
                    "and values to OUT.csv or OUT.h5.  Options apply to the kinds named "
                    "in their help; defaults are the reference's.")
    p.add_argument("kind", choices=choices(TrackKind), metavar="KIND",
                   help=f"what to measure: {', '.join(choices(TrackKind))}")
    p.add_argument("file", metavar="IN", help="the recording")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file: .csv or .h5")
    p.add_argument("--channel", type=at_least(0), default=0, metavar="N",
                   help="channel (default 0)")
    for dest, (typ, metavar, text) in OPTIONS.items():
        p.add_argument(_flag(dest), dest=dest, type=typ, default=None, metavar=metavar,
                       help=text)
    p.add_argument("--subtract-mean", action=argparse.BooleanOptionalAction, default=None,
                   help="intensity: subtract each window's mean pressure (default yes)")
    p.add_argument("--center", action=argparse.BooleanOptionalAction, default=None,
                   help="spectral, pyin: frames centred on their times, zeros outside the "
                        "recording (default yes)")
    p.add_argument("--very-accurate", action=argparse.BooleanOptionalAction, default=None,
                   help="pitch: 6 periods and a Gaussian window (default no)")
    p.add_argument("--beta-parameters", type=float, nargs=2, default=None,
                   metavar=("A", "B"), help="pyin: beta prior over thresholds (default 2 18)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    add_recording_options(p)
    p.set_defaults(func=cmd_track)
