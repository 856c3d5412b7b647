"""Export a time range and channel selection of a recording: HDF5, WAV/FLAC, SigMF.

:func:`export_range` runs a pipeline (or none) over samples ``start:stop`` of a
recording, streamed in chunks, and writes the output crash-safe in the format its
suffix names, with the annotations inside the range.  Nothing here imports Qt.

See docs/explanation/rooms/output.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..annotations import Annotation, clip_annotations, write_annotations
from ..annotations.sigmf_meta import SIGMF_VERSION, declare_extension, put_annotations
from ..deployment.layout import utc_text, write_deployment_group
from ..deployment.recording import Deployment
from ..errors import Cancelled, InputError, RecordingError
from ..files import (
    atomic_file,
    h5_for_writing,
    owner_tag,
    recording_files,
    refuse_overwriting_inputs,
)
from ..io import open_recording
from ..pipeline import DEFAULT_CHUNK_SAMPLES, BoundPipeline, Pipeline
from ..publish import publish_together
from .audio import FLOAT_SUBTYPES, float_wav_bytes, float_wav_header
from .provenance import calibration_attr, recording_provenance
from .signal import recording_meta, write_pipeline_output

__all__ = [
    "AUDIO_SUFFIXES",
    "HDF5_SUFFIXES",
    "RF64_THRESHOLD",
    "SIGMF_SUFFIXES",
    "RangePlan",
    "audio_container",
    "export_range",
    "export_targets",
    "label_path",
    "output_kind",
    "plan_range",
    "seconds_to_samples",
]

HDF5_SUFFIXES = (".h5", ".hdf5", ".he5", ".nc")
AUDIO_SUFFIXES = (".wav", ".flac")
SIGMF_SUFFIXES = (".sigmf-meta", ".sigmf-data")
#: a WAV larger than this (bytes) is written as RF64 (a RIFF size field holds 32 bits)
RF64_THRESHOLD = 0xFFFFFFFF - (1 << 16)
_WAV_HEADER_BYTES = 1 << 12
_SUBTYPE_BYTES = {"PCM_U8": 1, "PCM_S8": 1, "PCM_16": 2, "PCM_24": 3, "PCM_32": 4,
                  "FLOAT": 4, "DOUBLE": 8}


def output_kind(path: str | os.PathLike[str]) -> str:
    """``"hdf5"``, ``"audio"`` or ``"sigmf"`` from the output's suffix.

    Parameters
    ----------
    path : str or PathLike
        The output file.

    Returns
    -------
    str
        ``"hdf5"`` (:data:`HDF5_SUFFIXES`), ``"audio"`` (:data:`AUDIO_SUFFIXES`) or
        ``"sigmf"`` (:data:`SIGMF_SUFFIXES`).

    Raises
    ------
    InputError
        The suffix is none of these (a ``.sigmf`` archive included).

    Examples
    --------
    >>> output_kind("cut.flac"), output_kind("cut.sigmf-data"), output_kind("cut.h5")
    ('audio', 'sigmf', 'hdf5')
    """
    name = Path(path).name.lower()
    if name.endswith(SIGMF_SUFFIXES):
        return "sigmf"
    suffix = Path(path).suffix.lower()
    if suffix in HDF5_SUFFIXES:
        return "hdf5"
    if suffix in AUDIO_SUFFIXES:
        return "audio"
    if suffix == ".sigmf":
        raise InputError(f"{Path(path).name}: SigMF archives (.sigmf) are not written; "
                         "give NAME.sigmf-meta (the .sigmf-data is written next to it)")
    known = ", ".join(HDF5_SUFFIXES + AUDIO_SUFFIXES + SIGMF_SUFFIXES)
    raise InputError(f"{Path(path).name}: cannot tell the output format from the suffix "
                     f"{suffix!r}; expected one of {known}")


def seconds_to_samples(seconds: float | None, sample_rate: float, name: str) -> int | None:
    """A time in seconds from the start of the recording as a sample number (rounded).

    Parameters
    ----------
    seconds : float or None
        The time in seconds; ``None`` passes through.
    sample_rate : float
        Samples per second.
    name : str
        The option's name, for the error message.

    Returns
    -------
    int or None
        ``round(seconds * sample_rate)``, or ``None``.

    Raises
    ------
    InputError
        ``seconds`` is not a finite number, or is negative.

    Examples
    --------
    >>> seconds_to_samples(1.5, 48000.0, "start")
    72000
    """
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or \
            not math.isfinite(seconds):
        raise InputError(f"{name}={seconds!r} must be a finite number of seconds")
    if seconds < 0:
        raise InputError(f"{name}={seconds!r} must be >= 0 s")
    return round(seconds * sample_rate)



def _checked_range(n_samples: int, start: int | None, stop: int | None,
                   where: str) -> tuple[int, int]:
    """``start:stop`` clipped to the recording like a slice; one that holds nothing raises."""
    a, b, _ = slice(start, stop).indices(n_samples)
    if start is not None and start >= n_samples:
        raise InputError(f"{where}: the range starts at sample {start}, past the end "
                         f"({n_samples} samples)")
    if b <= a:
        raise InputError(f"{where}: the range {a}:{b} holds no samples (stop must be "
                         "after start)")
    return a, b

class RangePlan:
    """How to produce the outputs of a range: what to read and what to drop.

    Attributes
    ----------
    first : int
        Source sample of the first output (signal) or of the first frame's start.
    count : int
        Number of outputs (samples or frames).
    read_start, read_stop : int
        Source samples read, warm-up included.
    skip, take : int
        Time-domain samples dropped after the stages, then kept (see
        :meth:`BoundPipeline.stream`).
    exact : bool
        Whether the outputs equal the whole-file run cut afterwards bit for bit.
    """

    def __init__(self, bound: BoundPipeline, n_samples: int, start: int | None,
                 stop: int | None, where: str) -> None:
        a, b = _checked_range(n_samples, start, stop, where)
        drop, lb, la = bound.drop, bound.lookback, bound.lookahead
        if bound.stft is None:
            lo, hi = max(a, drop), min(b, n_samples)
            if hi <= lo:
                raise InputError(f"{where}: the range {a}:{b} has no output; the pipeline's "
                                 f"first output is at sample {drop}")
            a_sig, b_sig, count = lo, hi, hi - lo
        else:
            p = bound.stft
            n_frames = p.n_frames(bound.signal_length(n_samples))
            k0 = max(0, -(-(a - drop) // p.hop))
            k1 = min(n_frames, (b - drop - p.nfft) // p.hop + 1)
            if k1 <= k0:
                raise InputError(f"{where}: the range {a}:{b} ({b - a} samples) holds no whole "
                                 f"frame of nfft={p.nfft} on the recording's frame grid "
                                 f"(hop={p.hop}); widen it")
            a_sig = drop + k0 * p.hop
            b_sig = drop + (k1 - 1) * p.hop + p.nfft
            count = k1 - k0
        self.start, self.stop = a, b
        self.first = a_sig
        self.count = count
        self.read_start = max(0, a_sig - lb)
        self.read_stop = min(n_samples, b_sig + la)
        self.skip = a_sig - (self.read_start + drop)
        self.take = b_sig - a_sig
        self.exact = bool(bound.exact_split or self.read_start == 0)


def plan_range(bound: BoundPipeline, n_samples: int, start: int | None = None,
               stop: int | None = None, where: str = "recording") -> RangePlan:
    """The :class:`RangePlan` of samples ``start:stop``.

    How the range maps to outputs and warm-up is described in
    docs/explanation/rooms/output.md.

    Parameters
    ----------
    bound : BoundPipeline
        The pipeline bound to the recording's sample rate.
    n_samples : int
        Samples per channel in the recording.
    start, stop : int, optional
        Source sample numbers of the range, like a slice; the whole recording by default.
    where : str
        Name for error messages (the file's name).

    Returns
    -------
    RangePlan
        What to read and what to drop.

    Raises
    ------
    InputError
        The range is empty, starts past the end, or holds no output (no whole
        frame of a spectrogram).
    """
    return RangePlan(bound, int(n_samples), start, stop, where)


@dataclass(frozen=True)
class _Piece:
    """One contiguous stretch of a range, planned on the stretch's own sample axis."""

    offset: int  # the stretch's first sample on the recording's axis
    start: int  # the range's part of the stretch, on the recording's axis
    stop: int
    first: int  # the sample of its first output (or frame start), on the recording's axis
    plan: RangePlan | None  # None: too short to give an output

    @property
    def count(self) -> int:
        return self.plan.count if self.plan is not None else 0


@dataclass(frozen=True)
class _Joined:
    """The pieces of a range end to end (what the writers need of a :class:`RangePlan`)."""

    start: int
    stop: int
    first: int
    count: int
    read_start: int
    exact: bool


def _piece(offset: int, plan: RangePlan) -> _Piece:
    return _Piece(offset, offset + plan.start, offset + plan.stop, offset + plan.first, plan)


def _pieces(rec: Any, bound: BoundPipeline, n_samples: int, start: int | None,
            stop: int | None, where: str) -> tuple[list[_Piece], int, int]:
    """The range as pieces no gap cuts, each planned as a recording of its own.

    A recording without gaps is one piece.  A deployment's segment is run as its own
    recording (as a batch run over the deployment runs it): a filter starts afresh and
    frames lie on a grid from its first sample, so no warm-up, filter history or frame
    crosses a gap.  Returns the pieces (one too short to give an output has no plan) and
    the range's first and end sample.
    """
    segments = getattr(rec, "segments", None)
    if not callable(segments):
        plan = plan_range(bound, n_samples, start, stop, where)
        return [_piece(0, plan)], plan.start, plan.stop
    a, b = _checked_range(n_samples, start, stop, where)
    out: list[_Piece] = []
    spans = [(int(s0), int(s1)) for s0, s1 in segments()]
    for s0, s1 in spans:
        lo, hi = max(a, s0), min(b, s1)
        if hi <= lo:
            continue
        try:
            out.append(_piece(s0, plan_range(bound, s1 - s0, lo - s0, hi - s0, where)))
        except InputError:
            if len(spans) == 1:
                raise  # one stretch: the recording's own words
            out.append(_Piece(s0, lo, hi, lo + bound.drop, None))
    if any(p.plan is not None for p in out):
        return out, a, b
    need = (f"a whole frame of nfft={bound.stft.nfft}" if bound.stft is not None
            else f"more than the {bound.drop} samples the pipeline drops")
    raise InputError(f"{where}: the range {a}:{b} has no output: no stretch of it between "
                     f"gaps holds {need}; widen it")


def _joined(pieces: list[_Piece], start: int, stop: int) -> _Joined:
    planned = [p for p in pieces if p.plan is not None]
    first = planned[0]
    return _Joined(start=start, stop=stop, first=first.first,
                   count=sum(p.count for p in planned),
                   read_start=first.offset + first.plan.read_start,
                   exact=all(p.plan.exact for p in planned))


def _as_pipeline(pipeline: Pipeline | dict[str, Any] | str | os.PathLike[str] | None
                 ) -> Pipeline:
    if pipeline is None:
        return Pipeline.from_steps([], name="samples")
    if isinstance(pipeline, Pipeline):
        return pipeline
    if isinstance(pipeline, dict):
        return Pipeline.from_dict(pipeline)
    return Pipeline.load(pipeline)


def export_range(source: Any, out: str | os.PathLike[str], *,
                 pipeline: Pipeline | dict[str, Any] | str | os.PathLike[str] | None = None,
                 start: int | None = None, stop: int | None = None,
                 channels: int | list[int] | None = None,
                 options: dict[str, Any] | None = None,
                 chunk_samples: int = DEFAULT_CHUNK_SAMPLES,
                 subtype: str | None = None, rf64_threshold: int | None = None,
                 progress: Callable[[float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None,
                 calibration: Any = None) -> Path:
    """Export samples ``start:stop`` of ``channels`` of a recording, processed, to ``out``.

    Parameters
    ----------
    source : path or Recording
        A file :func:`~specscope.compute.open_recording` reads (opened with
        ``options``), or an open recording.
    out : path
        The output; its suffix picks the format (:func:`output_kind`).
    pipeline : Pipeline, dict, path or None
        The processing; None writes the samples unchanged.  Audio and SigMF
        outputs need a time-domain pipeline (no spectrogram step).
    start, stop : int, optional
        Source sample numbers of the range (see docs/explanation/rooms/output.md).
    channels : int or list of int, optional
        Source channels (all by default).
    options : dict, optional
        Reader options the recording is (or was) opened with; kept in the
        output for ``rerun``.
    chunk_samples : int
        Samples read at a time (bounds memory).
    subtype : str, optional
        soundfile subtype of an audio output (default ``FLOAT`` for WAV,
        ``PCM_24`` for FLAC, which clips at full scale).
    rf64_threshold : int, optional
        Size in bytes beyond which a WAV is written as RF64 (default
        :data:`RF64_THRESHOLD`; lower it in tests).
    progress : callable, optional
        ``progress(fraction)`` after each chunk.
    cancelled : callable, optional
        Polled between chunks; :class:`Cancelled` ends the export, nothing is
        written.
    calibration : Calibration, optional
        The recording's; an HDF5 output keeps it as the root attribute
        ``calibration`` (JSON, :func:`~specscope.compute.output.provenance.calibration_attr`).

    Returns
    -------
    Path
        ``out`` (for SigMF, the ``.sigmf-meta`` file).

    Raises
    ------
    InputError
        The suffix, range, channels or options are invalid, the output would
        overwrite an input, or the pipeline's output does not fit the format.
    RecordingError
        The source cannot be read or the output cannot be written.
    Cancelled
        ``cancelled()`` returned True; nothing is written.
    """
    kind = output_kind(out)
    if isinstance(chunk_samples, bool) or not isinstance(chunk_samples, int) or \
            chunk_samples < 1:
        raise InputError(f"chunk_samples={chunk_samples!r} must be a whole number >= 1")
    pipe = _as_pipeline(pipeline)
    if isinstance(source, (str, os.PathLike)):
        refuse_overwriting_inputs(export_targets(out), [source])  # before anything is read
        with open_recording(source, **dict(options or {})) as rec:
            return _export(rec, Path(out), kind, pipe, start, stop, channels, options,
                           chunk_samples, subtype, rf64_threshold, progress, cancelled,
                           calibration)
    return _export(source, Path(out), kind, pipe, start, stop, channels, options,
                   chunk_samples, subtype, rf64_threshold, progress, cancelled, calibration)


def export_targets(out: str | os.PathLike[str]) -> list[Path]:
    """Every file an export to ``out`` may write (SigMF pair, audio labels).

    Parameters
    ----------
    out : str or PathLike
        The output as given to :func:`export_range`.

    Returns
    -------
    list of Path
        ``out``; both ``.sigmf-meta`` and ``.sigmf-data`` for SigMF; ``out`` and its
        :func:`label_path` for audio.

    Raises
    ------
    InputError
        The suffix names no output format.
    """
    out = Path(out)
    kind = output_kind(out)
    if kind == "sigmf":
        return list(_sigmf_paths(out))
    if kind == "audio":
        return [out, label_path(out)]
    return [out]


def _export(rec: Any, out: Path, kind: str, pipeline: Pipeline, start: int | None,
            stop: int | None, channels: Any, options: dict[str, Any] | None,
            chunk_samples: int, subtype: str | None, rf64_threshold: int | None,
            progress: Callable[[float], None] | None,
            cancelled: Callable[[], bool] | None, calibration: Any = None) -> Path:
    refuse_overwriting_inputs(export_targets(out), recording_files(rec))
    meta = recording_meta(rec)
    where = rec.path.name
    bound = pipeline.bind(meta["sample_rate"], meta["is_complex"])
    chans = rec.channel_list(channels)
    pieces, first, end = _pieces(rec, bound, meta["n_samples"], start, stop, where)
    plan = _joined(pieces, first, end)
    if kind != "hdf5" and bound.stft is not None:
        raise InputError(f"{out.name}: a spectrogram can only be written to HDF5 (.h5); "
                         "drop the spectrogram step or change the suffix")

    def blocks() -> Iterator[np.ndarray]:
        for piece in pieces:  # each run afresh: no state crosses a gap
            p, offset = piece.plan, piece.offset
            if p is None:
                continue

            def read(a: int, b: int, offset: int = offset) -> np.ndarray:
                return rec.read(offset + a, offset + b, chans)

            yield from bound.stream(read, p.read_start, p.read_stop,
                                    chunk_samples=chunk_samples, skip=p.skip, take=p.take,
                                    cancelled=cancelled)

    if kind == "hdf5":
        prov = recording_provenance(rec, cancelled)
        spec = {"path": str(rec.path), "options": _source_options(rec, options),
                "start": plan.start,
                "stop": plan.stop, "channels": chans, "chunk_samples": int(chunk_samples),
                "task_samples": 0}
        extra = {"range_first": int(plan.first), "range_count": int(plan.count),
                 "exact_range": bool(plan.exact), "range_read_start": int(plan.read_start),
                 **calibration_attr(calibration)}
        if not isinstance(rec, Deployment):
            write_pipeline_output(out, pipeline, bound, meta, spec, blocks(), prov, cancelled,
                                  first=plan.first, n_out=plan.count, progress=progress,
                                  extra=extra, annotations=rec.annotations)
            return out
        _write_deployment_output(out, rec, pipeline, bound, meta, spec, blocks(), prov,
                                 pieces, extra, progress, cancelled)
        return out
    if kind == "audio":
        what = "file name ending in .wav or .flac"
        if not rec.annotations:
            with atomic_file(out, what=what) as tmp:
                _write_audio(out, tmp, bound, plan, chans, blocks(), subtype, rf64_threshold,
                             progress, cancelled)
            return out
        # the audio and its labels published as one unit: never the labels of another run
        with publish_together([out, label_path(out)], what=[what]) as (tmp, labels):
            _write_audio(out, tmp, bound, plan, chans, blocks(), subtype, rf64_threshold,
                         progress, cancelled)
            write_annotations(labels, _range_annotations(rec, bound, plan, chans),
                              format="audacity", sample_rate=bound.sample_rate)
        return out
    return _write_sigmf(out, rec, pipeline, bound, plan, chans, blocks(), progress,
                        cancelled)


def _source_options(rec: Any, options: dict[str, Any] | None) -> dict[str, Any]:
    """The options to open the source again with: those given, and for a deployment the
    ones it was indexed with (its zone and name pattern place its files)."""
    own = rec.options if isinstance(rec, Deployment) else None
    kept = {k: v for k, v in (own or {}).items()
            if k in ("name_pattern", "tz", "tolerance_s") and v is not None}
    return {**kept, **dict(options or {})}


def _write_deployment_output(out: Path, dep: Any, pipeline: Pipeline, bound: BoundPipeline,
                             meta: dict[str, Any], spec: dict[str, Any],
                             blocks: Iterator[np.ndarray], prov: dict[str, str],
                             pieces: list[_Piece], extra: dict[str, Any],
                             progress: Callable[[float], None] | None,
                             cancelled: Callable[[], bool] | None) -> None:
    """The HDF5 output of a deployment's range: written under a hidden name, then given the
    ``/deployment`` group (each piece's place on the deployment's axis) and published."""
    segments, n_out = [], 0
    for piece in pieces:
        segments.append({"start": piece.start, "stop": piece.stop, "first": piece.first,
                         "out_start": n_out, "out_stop": n_out + piece.count})
        n_out += piece.count
    hidden = out.with_name(f".{out.name}.{owner_tag()}.{secrets.token_hex(4)}.partial")
    try:
        write_pipeline_output(hidden, pipeline, bound, meta, spec, blocks, prov, cancelled,
                              first=next(p.first for p in pieces if p.plan is not None),
                              n_out=n_out, progress=progress,
                              extra={**extra, "start_utc": utc_text(dep.time_at(spec["start"]))},
                              annotations=dep.annotations)
        with atomic_file(out, what="file name ending in .h5") as tmp:
            os.replace(hidden, tmp)
            with h5_for_writing(tmp, "r+") as f:
                write_deployment_group(f, dep, segments, spec["start"], bound.sample_rate,
                                       bound.stft)
    finally:
        hidden.unlink(missing_ok=True)


def _range_annotations(rec: Any, bound: BoundPipeline, plan: RangePlan,
                       chans: list[int]) -> list[Annotation]:
    """The recording's annotations inside the exported samples, from the output's time 0."""
    fs = bound.sample_rate
    return clip_annotations(rec.annotations, plan.first / fs, (plan.first + plan.count) / fs,
                            channels=chans)


# -- audio ------------------------------------------------------------------------------


def label_path(audio: str | os.PathLike[str]) -> Path:
    """The Audacity label file written next to an audio export: ``NAME.labels.txt``.

    Parameters
    ----------
    audio : str or PathLike
        The audio output.

    Returns
    -------
    Path
        The label file, in the same folder.

    Examples
    --------
    >>> label_path("out/cut.wav").name
    'cut.labels.txt'
    """
    p = Path(audio)
    return p.with_name(p.stem + ".labels.txt")


def audio_container(suffix: str, n_frames: int, n_channels: int, subtype: str,
                    rf64_threshold: int | None = None) -> str:
    """The soundfile ``format``: ``FLAC``, ``WAV``, or ``RF64`` when a WAV would be too big.

    Parameters
    ----------
    suffix : str
        The output's lower-case suffix, ``".wav"`` or ``".flac"``.
    n_frames : int
        Samples per channel to write.
    n_channels : int
        Number of channels.
    subtype : str
        soundfile subtype (``"FLOAT"``, ``"PCM_16"`` ...), which sets the bytes per sample.
    rf64_threshold : int, optional
        File size in bytes beyond which a WAV becomes RF64; :data:`RF64_THRESHOLD`
        by default.

    Returns
    -------
    str
        ``"FLAC"``, ``"WAV"`` or ``"RF64"``.

    Examples
    --------
    >>> audio_container(".wav", 48000, 2, "FLOAT"), audio_container(".flac", 48000, 2, "PCM_24")
    ('WAV', 'FLAC')
    """
    if suffix == ".flac":
        return "FLAC"
    limit = RF64_THRESHOLD if rf64_threshold is None else int(rf64_threshold)
    size = n_frames * n_channels * _SUBTYPE_BYTES.get(subtype, 8) + _WAV_HEADER_BYTES
    return "RF64" if size > limit else "WAV"


def _write_audio(out: Path, tmp: Path, bound: BoundPipeline, plan: RangePlan,
                 chans: list[int], blocks: Iterator[np.ndarray], subtype: str | None,
                 rf64_threshold: int | None, progress: Callable[[float], None] | None,
                 cancelled: Callable[[], bool] | None) -> None:
    """Write the range's audio for ``out`` into the temporary file ``tmp``."""
    import soundfile

    suffix = out.suffix.lower()
    if bound.complex_output:
        raise InputError(f"{out.name}: the signal is complex (IQ); audio files hold real "
                         "samples -- write NAME.sigmf-meta instead")
    fs = bound.sample_rate
    rate = round(fs)
    if rate < 1 or abs(rate - fs) > 1e-9 * fs:
        raise InputError(f"{out.name}: audio files need a whole sample rate in Hz; "
                         f"the recording has {fs:g} Hz -- write .h5 or .sigmf-meta instead")
    subtype = (subtype or ("PCM_24" if suffix == ".flac" else "FLOAT")).upper()
    container = audio_container(suffix, plan.count, len(chans), subtype, rf64_threshold)
    if not soundfile.check_format(container, subtype):
        raise InputError(f"{out.name}: subtype {subtype} cannot be written to {container} "
                         f"(try one of {', '.join(soundfile.available_subtypes(container))})")
    pos = 0
    if subtype in FLOAT_SUBTYPES and container != "FLAC":
        # the header sox and the WAVE format expect of float samples (see .audio)
        with open(tmp, "wb") as fh:
            try:
                fh.write(float_wav_header(plan.count, len(chans), rate, subtype, container))
                for block in blocks:
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    pos += block.shape[-1]
                    if pos > plan.count:  # the header holds the length written up front
                        break
                    fh.write(float_wav_bytes(block, subtype))
                    if progress is not None:
                        progress(pos / max(1, plan.count))
            except BaseException:
                # abandoned: emptied before the close, which would write it back first
                with suppress(OSError):
                    fh.truncate(0)
                raise
    else:
        try:
            sf = soundfile.SoundFile(os.fsencode(tmp), "w", samplerate=rate,
                                     channels=len(chans), subtype=subtype, format=container)
        except (soundfile.LibsndfileError, RuntimeError, ValueError) as exc:
            raise RecordingError(f"{out.name}: cannot write {container} "
                                 f"({str(exc).splitlines()[0] if str(exc) else exc})"
                                 ) from None
        with sf:
            for block in blocks:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                sf.write(np.ascontiguousarray(block.T, dtype=np.float32))
                pos += block.shape[-1]
                if progress is not None:
                    progress(pos / max(1, plan.count))
    if pos != plan.count:
        raise RecordingError(f"{out.name}: the pipeline gave {pos} samples, expected "
                             f"{plan.count}")
    with soundfile.SoundFile(os.fsencode(tmp)) as check:  # verify it reopens, complete
        if check.frames != plan.count or check.channels != len(chans):
            raise RecordingError(f"{out.name}: wrote {check.frames} frames, expected "
                                 f"{plan.count}")


# -- SigMF ------------------------------------------------------------------------------


def _sigmf_paths(out: Path) -> tuple[Path, Path]:
    name = out.name
    base = name[: -len(".sigmf-meta")]  # both suffixes have the same length
    return out.with_name(base + ".sigmf-meta"), out.with_name(base + ".sigmf-data")


def _shift_time(iso: str | None, seconds: float) -> str | None:
    if not iso:
        return None
    try:
        t = datetime.fromisoformat(iso.replace("z", "Z"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    t = (t + timedelta(seconds=seconds)).astimezone(UTC)
    return t.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _write_sigmf(out: Path, rec: Any, pipeline: Pipeline, bound: BoundPipeline,
                 plan: RangePlan, chans: list[int], blocks: Iterator[np.ndarray],
                 progress: Callable[[float], None] | None,
                 cancelled: Callable[[], bool] | None) -> Path:
    """Data and metadata staged, then published as one unit (:func:`publish_together`).

    Both files move into place under the folder's lock, with a journal that finishes the
    moves after a kill, so readers (and concurrent exports) never pair halves of two runs.
    The metadata records the data's size (``specscope:data_bytes``) and SHA-512, which
    the reader checks against a pair torn anyway (by hand).
    """
    meta_path, data_path = _sigmf_paths(out)
    complex_out = bound.complex_output
    dtype = np.dtype("<c8" if complex_out else "<f4")
    datatype = "cf32_le" if complex_out else "rf32_le"
    sha = hashlib.sha512()
    pos = 0
    with publish_together([data_path, meta_path],
                          what=["file name ending in .sigmf-data",
                                "file name ending in .sigmf-meta"]) as (tmp_data, tmp_meta):
        with open(tmp_data, "wb") as fh:
            for block in blocks:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                raw = np.ascontiguousarray(block.T, dtype=dtype).tobytes()
                fh.write(raw)
                sha.update(raw)
                pos += block.shape[-1]
                if progress is not None:
                    progress(pos / max(1, plan.count))
            fh.flush()
        if pos != plan.count:
            raise RecordingError(f"{data_path.name}: the pipeline gave {pos} samples, "
                                 f"expected {plan.count}")
        n_bytes = plan.count * len(chans) * dtype.itemsize
        if os.path.getsize(tmp_data) != n_bytes:
            raise RecordingError(f"{data_path.name}: short write")
        doc = _sigmf_doc(rec, pipeline, bound, plan, chans, datatype, sha.hexdigest(), n_bytes)
        tmp_meta.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return meta_path


def _sigmf_doc(rec: Any, pipeline: Pipeline, bound: BoundPipeline, plan: RangePlan,
               chans: list[int], datatype: str, sha512: str, n_bytes: int) -> dict[str, Any]:
    """The metadata of an exported SigMF pair."""
    fs = bound.sample_rate
    capture: dict[str, Any] = {"core:sample_start": 0}
    if rec.center_frequency is not None:
        capture["core:frequency"] = float(rec.center_frequency)
    when = _shift_time(rec.start_time, plan.first / fs)
    if when is not None:
        capture["core:datetime"] = when
    doc: dict[str, Any] = {
        "global": {
            "core:datatype": datatype, "core:sample_rate": fs, "core:version": SIGMF_VERSION,
            "core:num_channels": len(chans), "core:sha512": sha512,
            "core:recorder": f"specscope {__version__}",
            "core:description": f"exported from {rec.path.name}, samples "
                                f"{plan.first}:{plan.first + plan.count}, channels {chans}",
            "specscope:source": str(rec.path.resolve()),
            "specscope:first_sample": int(plan.first),
            "specscope:channels": chans,
            "specscope:pipeline": pipeline.to_dict(),
            "specscope:exact_range": bool(plan.exact),
            "specscope:data_bytes": int(n_bytes),
        },
        "captures": [capture],
    }
    declare_extension(doc)  # the specscope: keys above
    put_annotations(doc, _range_annotations(rec, bound, plan, chans), fs)
    return doc
