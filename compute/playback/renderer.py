"""A range of a recording rendered as the samples a sound card is fed.

:class:`Renderer` reads a range in chunks and streams it through the playback chain
(processing; band and heterodyne, or IQ tuning and demodulation; decimation; speed;
gain, limiter and fades), every piece with carried state; :meth:`Renderer.position_of`
maps an output sample back to recording time.

See docs/explanation/rooms/playback.md.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..errors import InputError, MissingOption
from ..files import atomic_file
from ..filters import Design, FilterSpec, design, stream_filter
from ..stream import Chain, Map, Rebuffer, Stage, Trim, run
from ..timefmt import time_to_sample
from ..types import ChannelMix, choices
from .options import DEFAULT_BANDWIDTH, PlaybackOptions
from .stages import (
    PASS_SHARE,
    Decimator,
    FmDiscriminator,
    Mixer,
    Resampler,
    Shaper,
    as_float,
    rational,
)

__all__ = ["CHANNEL_CHOICES", "DEFAULT_CHUNK", "Renderer", "channel_layout", "render"]

#: recording samples read per chunk
DEFAULT_CHUNK = 1 << 16
#: stopband attenuation of the band-pass (dB)
BAND_STOP_DB = 65.0
#: transition of the band-pass, as a factor on its edges
BAND_TRANSITION = 1.3
#: the share of the room a narrowed IQ channel takes (the rest: its filter's transition)
FIT_SHARE = 0.95
#: the narrowest channel a demodulator is given before the tuning counts as outside the band
MIN_BANDWIDTH_HZ = 100.0
#: corner of the DC block after AM demodulation (Hz)
AM_DC_HZ = 20.0


def _seconds_text(value: Any) -> str:
    """A time as an error repeats it: ``2`` for the float 2.0, text as given."""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


class Renderer:
    """Render ``start_s``..``stop_s`` of one channel for listening.

    Parameters
    ----------
    recording : Recording
        An open recording (real or IQ).
    start_s, stop_s : float
        Range in seconds from the start of the recording (``stop_s``: the end
        when omitted); a time past the end is refused.
    channel : int
        The channel heard.
    options : PlaybackOptions or dict, optional
        How to render; keywords override single options
        (``Renderer(rec, 0, 2, speed=0.1)``).
    chunk : int
        Recording samples read at a time (the output does not depend on it).

    Attributes
    ----------
    sample_rate : float
        The device rate of the output.
    length : int
        Output samples of the whole range.
    speed : float
        The speed actually played (the requested one to 1e-6; the resampler's
        ratio is a fraction of bounded size).
    """

    def __init__(self, recording: Any, start_s: float = 0.0, stop_s: float | None = None, *,
                 channel: int = 0, options: PlaybackOptions | dict[str, Any] | None = None,
                 chunk: int = DEFAULT_CHUNK, **option_kw: Any) -> None:
        self.recording = recording
        self.options = opts = PlaybackOptions.of(options, **option_kw)
        #: the recording's channels mixed into each output channel
        self.layout = channel_layout(recording, channel)
        self.channels = len(self.layout)
        self.channel = self.layout[0][0]
        self._sources = sorted({c for group in self.layout for c in group})
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise InputError(f"chunk={chunk!r} must be a whole number >= 1")
        self.chunk = int(chunk)
        fs = float(recording.sample_rate)
        self.source_rate = fs
        n = int(recording.n_samples)
        self.start_sample = time_to_sample(start_s, fs, "start_s", n_samples=n)
        self.stop_sample = n if stop_s is None else time_to_sample(stop_s, fs, "stop_s",
                                                                   n_samples=n)
        if self.stop_sample <= self.start_sample:
            stop = recording.duration if stop_s is None else stop_s
            raise InputError(f"stop_s={_seconds_text(stop)} must be after start_s="
                             f"{_seconds_text(start_s)} and within the recording "
                             f"({recording.duration:g} s)")
        self.sample_rate = opts.device_rate
        #: one-line notes on what was adjusted to fit (a narrowed bandwidth)
        self.notes: list[str] = []
        self._check(opts, recording)
        # the rate after the front of the chain (decimation or channel filter)
        self._factor, self._mid_rate = self._plan_rate(opts, recording)
        up, down = rational(self.sample_rate / (self._mid_rate * opts.speed))
        self._up, self._down = up, down
        self.speed = self.sample_rate * down / (up * self._mid_rate)
        n_mid = -(-(self.stop_sample - self.start_sample) // self._factor)
        self.length = -(-n_mid * up // down) if (up, down) != (1, 1) else n_mid
        self._bound = (None if opts.pipeline is None else
                       opts.pipeline.signal_part().bind(fs, recording.is_complex))
        if self._bound is not None and not self._bound.streams:
            raise InputError("pipeline: a step needs the whole signal at once, which "
                             "playback cannot give it")
        # every filter is designed now, so that errors come from here; each output
        # channel gets a fresh chain of its own
        cols = [[self._sources.index(c) for c in group] for group in self.layout]
        self._layout = _Layout(self._chain(), cols)
        #: the limiter's gain (linear, <= 1; 1: it did not act) over the block
        #: :meth:`blocks` yielded last (set on the thread that iterates, before the yield)
        self.block_gain = 1.0

    # -- planning -------------------------------------------------------------------------
    def _check(self, o: PlaybackOptions, rec: Any) -> None:
        fs = rec.sample_rate
        if rec.is_complex:
            for name in ("band", "heterodyne"):
                if getattr(o, name) is not None:
                    raise InputError(f"{name} applies to real recordings; for IQ use tune, "
                                     "demod and bandwidth")
            if o.tune is not None and rec.center_frequency is None:
                raise MissingOption("center_frequency", f"tune={o.tune:g} Hz needs the "
                                    "recording's centre frequency", path=rec.path)
            if o.demod is not None:
                want = o.bandwidth if o.bandwidth is not None else DEFAULT_BANDWIDTH[o.demod]
                if self._fit_bandwidth(o, want) < MIN_BANDWIDTH_HZ:
                    raise InputError(f"tune={self._tuned():g} Hz is outside the recording's "
                                     f"band (centre +- {fs / 2:g} Hz) for {o.demod.upper()}")
                bw = self._bandwidth(o)
                if bw < want:
                    self.notes.append(f"{o.demod.upper()} bandwidth narrowed from {want:g} Hz "
                                      f"to {bw:g} Hz to fit the {fs:g} Hz recording")
            elif abs(self._offset(o)) > fs / 2:
                raise InputError(f"tune={self._tuned():g} Hz is outside the recording's band")
            return
        for name in ("tune", "demod", "bandwidth"):
            if getattr(o, name) is not None:
                raise InputError(f"{name} applies to IQ (complex) recordings")
        if o.band is not None and o.band[0] >= fs / 2:
            raise InputError(f"band={list(o.band)} Hz must start below the Nyquist "
                             f"frequency ({fs / 2:g} Hz)")
        if o.heterodyne is not None and o.heterodyne >= fs / 2:
            raise InputError(f"heterodyne={o.heterodyne:g} Hz must be below the Nyquist "
                             f"frequency ({fs / 2:g} Hz)")

    def _offset(self, o: PlaybackOptions) -> float:
        """The tuned frequency relative to the centre."""
        if o.tune is None:
            return 0.0
        return o.tune - float(self.recording.center_frequency)

    def _tuned(self) -> float:
        o = self.options
        return o.tune if o.tune is not None else float(self.recording.center_frequency or 0)

    def _bandwidth(self, o: PlaybackOptions) -> float:
        bw = o.bandwidth if o.bandwidth is not None else DEFAULT_BANDWIDTH[o.demod]
        return self._fit_bandwidth(o, bw)

    def _fit_bandwidth(self, o: PlaybackOptions, bw: float) -> float:
        """``bw`` narrowed to what the recording's band holds around the tuned frequency.

        The channel filter's stopband (0.6 bandwidth from the channel's middle)
        must stay below the Nyquist frequency, and the channel inside the band
        (AM/FM: centred on the tuned frequency, USB above it, LSB below).
        """
        half = float(self.recording.sample_rate) / 2
        off = self._offset(o)
        room = {"usb": half - off, "lsb": half + off}.get(o.demod, 2 * (half - abs(off)))
        return max(0.0, min(float(bw), FIT_SHARE * 2 * half / 1.2, FIT_SHARE * room))

    def _plan_rate(self, o: PlaybackOptions, rec: Any) -> tuple[int, float]:
        lowpass = self._lowpass_plan(o, rec)
        if lowpass is None:
            return 1, float(rec.sample_rate)
        return lowpass[2], rec.sample_rate / lowpass[2]

    def _lowpass_plan(self, o: PlaybackOptions, rec: Any) -> tuple[float, float, int] | None:
        """(passband, stopband, factor) of the decimating low-pass, or None for none."""
        fs = float(rec.sample_rate)
        audible = self.sample_rate / 2 / o.speed  # device Nyquist in recording Hz
        if rec.is_complex and o.demod is not None:
            bw = self._bandwidth(o)
            pass_hz, stop_hz, needed = bw / 2, 0.6 * bw, True
        elif o.heterodyne is not None:
            pass_hz = min(o.heterodyne_bandwidth, PASS_SHARE * audible)
            stop_hz, needed = pass_hz * BAND_TRANSITION, True
        else:
            pass_hz, stop_hz, needed = PASS_SHARE * audible, audible, False
        factor = self._resamplable(fs, max(1, math.floor(fs / (pass_hz + stop_hz))), o.speed)
        if not needed and factor < 3:
            return None  # the resampler's own filter does it
        if factor > 1:
            stop_hz = fs / factor - pass_hz
        else:
            stop_hz = min(stop_hz, fs / 2)
            pass_hz = min(pass_hz, 0.8 * stop_hz)
        return pass_hz, stop_hz, factor

    def _resamplable(self, fs: float, factor: int, speed: float) -> int:
        """The largest decimation factor <= ``factor`` whose rate the resampler takes.

        ``fs / factor`` must reach the device rate by a fraction of bounded size
        (a 2.4 MHz capture decimated by 727 would not).
        """
        for f in range(factor, max(0, factor // 2), -1):
            try:
                rational(self.sample_rate / (fs / f * speed))
            except InputError:
                continue
            return f
        return factor  # the resampler's own error names the ratio

    # -- the chain ------------------------------------------------------------------------
    def _chain(self) -> Chain:
        """The stages of one output channel, in order, at rest."""
        o, rec = self.options, self.recording
        fs = self.source_rate
        pieces: list[Stage] = []
        if self._bound is not None:
            pieces.append(_pipeline_piece(self._bound, rec.is_complex, self.start_sample))
        if rec.is_complex and o.demod is None:
            if self._offset(o):
                pieces.append(Mixer(-self._offset(o), fs, self.start_sample, real_out=True))
            else:
                pieces.append(Map(_real))
        if o.band is not None:
            band = _band_piece(fs, *o.band)
            if band is not None:
                pieces.append(band)
        if o.heterodyne is not None:
            # 2 cos: the difference tone keeps the amplitude of the original
            pieces.append(Mixer(o.heterodyne, fs, self.start_sample, real_lo=True, scale=2.0))
        plan = self._lowpass_plan(o, rec)
        if rec.is_complex and o.demod is not None:
            bw = self._bandwidth(o)
            shift = self._offset(o) + {"usb": bw / 2, "lsb": -bw / 2}.get(o.demod, 0.0)
            if shift:
                pieces.append(Mixer(-shift, fs, self.start_sample))
        if plan is not None:
            pieces.append(Decimator(fs, *plan))
        if rec.is_complex and o.demod is not None:
            pieces.append(_demodulator(o, self._mid_rate, self._bandwidth(o),
                                       self.start_sample // self._factor))
        pieces.append(Resampler(self._mid_rate, self._up, self._down))
        # the real output, exactly ``length`` samples (zeros after steps that drop some)
        pieces.append(Map(np.real))
        pieces.append(Trim(take=self.length, pad=True))
        pieces.append(Shaper(o.gain_db, self.length, round(o.fade_s * self.sample_rate),
                             self.sample_rate))
        pieces.append(Map(_float32))
        return Chain(pieces)

    # -- output ---------------------------------------------------------------------------
    def blocks(self, block: int = 4096) -> Iterator[np.ndarray]:
        """The output in blocks of ``block`` samples (the last one shorter), float32.

        Each call starts again from the start of the range.
        """
        rebuffer = Rebuffer(block)
        stage = self._layout.spawn()
        meter = _GainMeter(stage.shapers())
        self.block_gain = 1.0

        def read(a: int, b: int) -> np.ndarray:
            return self.recording.read(a, b, channels=self._sources)

        for y in run(stage, read, self.start_sample, self.stop_sample, chunk=self.chunk):
            meter.take()
            for b in rebuffer.push(y):
                self.block_gain = meter.over(b.shape[0])
                yield b
        meter.take()
        for b in rebuffer.flush():
            self.block_gain = meter.over(b.shape[0])
            yield b

    def render(self, progress: Callable[[float], None] | None = None) -> np.ndarray:
        """The whole output as one float32 array of :attr:`length` samples."""
        parts = []
        done = 0
        for b in self.blocks(1 << 16):
            parts.append(b)
            done += b.shape[0]
            if progress is not None:
                progress(done / self.length)
        if parts:
            return np.concatenate(parts)
        return np.zeros((0, self.channels) if self.channels > 1 else 0, np.float32)

    def write(self, path: str | os.PathLike[str], *, subtype: str = "FLOAT",
              progress: Callable[[float], None] | None = None) -> str:
        """Write the output to a WAV file (published atomically); returns the path.

        Parameters
        ----------
        path : path-like
            The WAV file.
        subtype : str
            soundfile's sample type: ``FLOAT`` (exactly the samples), ``PCM_16``,
            ``PCM_24``.
        progress : callable, optional
            Called with the fraction done.
        """
        import soundfile as sf

        done = 0
        with atomic_file(path, what="file name ending in .wav") as tmp:
            try:
                fh = sf.SoundFile(os.fsencode(tmp), "w", samplerate=int(self.sample_rate),
                                  channels=self.channels, subtype=subtype, format="WAV")
            except (ValueError, TypeError, sf.LibsndfileError) as exc:
                raise InputError(f"subtype={subtype!r}: {exc}") from None
            with fh:
                for b in self.blocks(1 << 16):
                    fh.write(b)
                    done += b.shape[0]
                    if progress is not None:
                        progress(done / self.length)
        return str(path)

    # -- time -----------------------------------------------------------------------------
    @property
    def duration_s(self) -> float:
        """Seconds the output lasts."""
        return self.length / self.sample_rate

    @property
    def start_s(self) -> float:
        """Recording time of output sample 0."""
        return self.start_sample / self.source_rate

    def position_of(self, output_sample: Any) -> Any:
        """Recording seconds heard at output sample(s) ``output_sample`` (speed included)."""
        scale = self.speed / self.sample_rate
        if np.ndim(output_sample):
            return self.start_s + np.asarray(output_sample, dtype=float) * scale
        return self.start_s + float(output_sample) * scale

    def output_sample_of(self, t: float) -> int:
        """The output sample at which recording time ``t`` is heard (clipped to the range)."""
        k = round((float(t) - self.start_s) * self.sample_rate / self.speed)
        return min(max(k, 0), self.length)


def render(recording: Any, start_s: float = 0.0, stop_s: float | None = None, *,
           channel: int = 0, options: PlaybackOptions | dict[str, Any] | None = None,
           **option_kw: Any) -> np.ndarray:
    """The samples a sound card would get for a range, as one float32 array.

    Parameters
    ----------
    recording : Recording
        An open recording.
    start_s, stop_s : float
        Range in seconds (``stop_s``: the end when omitted).
    channel : int
        The channel heard.
    options : PlaybackOptions or dict, optional
        See :class:`PlaybackOptions`; keywords override single options.

    Returns
    -------
    numpy.ndarray
        float32 samples at ``options.device_rate``, within [-1, 1].
    """
    return Renderer(recording, start_s, stop_s, channel=channel, options=options,
                    **option_kw).render()


# -- pieces -------------------------------------------------------------------------------

#: the channel choices besides a channel number
CHANNEL_CHOICES = choices(ChannelMix)


def channel_layout(recording: Any, channel: Any) -> list[list[int]]:
    """The recording's channels heard in each output channel.

    Parameters
    ----------
    recording : Recording
        The recording (its ``n_channels`` and ``channel_list``).
    channel : int or str
        A number (that channel, mono), ``"all"`` (stereo from the first two
        channels; mono for a one-channel recording), ``"left"`` / ``"right"``
        (channel 0 / 1, mono) or ``"mix"`` (every channel down-mixed to one).

    Returns
    -------
    list of list of int
        Per output channel, the recording channels averaged into it.

    Raises
    ------
    InputError
        If ``channel`` is no choice or no channel of the recording.

    Examples
    --------
    >>> import numpy as np
    >>> from specscope.compute.io import ArrayRecording
    >>> rec = ArrayRecording(np.zeros((10, 3)), 48000.0)
    >>> channel_layout(rec, "all"), channel_layout(rec, "mix"), channel_layout(rec, 2)
    ([[0], [1]], [[0, 1, 2]], [[2]])
    """
    n = int(recording.n_channels)
    if isinstance(channel, str) and not channel.strip().lstrip("-").isdigit():
        choice = channel.strip().lower()
        if choice == "all":
            return [[0], [1]] if n >= 2 else [[0]]
        if choice == "left":
            return [[0]]
        if choice == "right":
            return [[recording.channel_list(1)[0]]]
        if choice == "mix":
            return [list(range(n))]
        raise InputError(f"channel={channel!r}: expected a channel number or one of "
                         f"{', '.join(CHANNEL_CHOICES)}")
    if isinstance(channel, str):
        channel = int(channel)
    return [[recording.channel_list(channel)[0]]]


class _Layout(Stage):
    """Chunks (samples, sources) to output (samples[, channels]): one chain per output channel.

    Output channel ``i`` hears the mean of the source columns ``cols[i]``.
    """

    def __init__(self, chain: Chain, cols: list[list[int]]) -> None:
        self.chain, self.cols = chain, cols
        self.reset()

    def reset(self) -> None:
        self.chains = [self.chain.spawn() for _ in self.cols]

    def shapers(self) -> list[Shaper]:
        """The limiter of each output channel's chain."""
        return [next(s for s in chain.stages if isinstance(s, Shaper)) for chain in self.chains]

    def push(self, data: np.ndarray, final: bool) -> np.ndarray:
        outs = [chain.push(as_float(data[:, group[0]] if len(group) == 1
                                    else data[:, group].mean(axis=1)), final)
                for chain, group in zip(self.chains, self.cols, strict=True)]
        return outs[0] if len(outs) == 1 else np.stack(outs, axis=1)


class _GainMeter:
    """The limiters' gain over consecutive output blocks, from their segment marks."""

    def __init__(self, shapers: list[Shaper]) -> None:
        self.shapers = shapers
        self.marks: deque[tuple[int, float]] = deque()
        self.pos = 0  # output samples measured so far

    def take(self) -> None:
        """Collect the segments the limiters released (every channel: the lowest gain)."""
        lists = [s.marks for s in self.shapers]
        if len(lists) == 1:
            self.marks.extend(lists[0])
        else:
            self.marks.extend((ends[0][0], min(g for _, g in ends)) for ends in zip(*lists, strict=False))
        for s in self.shapers:
            s.marks = []

    def over(self, n: int) -> float:
        """The lowest gain over the next ``n`` output samples."""
        a, b = self.pos, self.pos + n
        self.pos = b
        marks = self.marks
        while marks and marks[0][0] <= a:
            marks.popleft()
        low = 1.0
        seg = Shaper.segment
        for end, g in marks:
            if end - seg >= b:
                break
            low = min(low, g)
        return low


def _real(x: np.ndarray) -> np.ndarray:
    return x.real


def _float32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def _one_row(x: np.ndarray) -> np.ndarray:
    return x[None, :]


def _first_row(y: np.ndarray) -> np.ndarray:
    return np.asarray(y)[0]


def _first_row_real(y: np.ndarray) -> np.ndarray:
    # a step that makes a real recording complex (analytic signal): hear its real part
    y = np.asarray(y)[0]
    return y.real if y.dtype.kind == "c" else y


def _pipeline_piece(bound: Any, complex_input: bool, origin: int = 0) -> Chain:
    """The pipeline's time-domain stages, as a stream of one channel from sample ``origin``."""
    return Chain([Map(_one_row), bound.chain(1, origin),
                  Map(_first_row if complex_input else _first_row_real)])


def _filter_piece(d: Design) -> Stage:
    return stream_filter(d.form, d.coefficients, d.settle)


def _band_piece(fs: float, lo: float, hi: float) -> Stage | None:
    """A causal elliptic filter passing ``lo``..``hi`` Hz (>= 65 dB outside); None: all pass."""
    nyq = fs / 2
    kw = {"rp": 0.5, "rs": BAND_STOP_DB}
    if lo <= 0 and hi * BAND_TRANSITION >= nyq:
        return None
    if lo <= 0:
        spec = FilterSpec("ellip", btype="lowpass", passband=hi, stopband=hi * BAND_TRANSITION,
                          **kw)
    elif hi * BAND_TRANSITION >= nyq:
        spec = FilterSpec("ellip", btype="highpass", passband=lo,
                          stopband=lo / BAND_TRANSITION, **kw)
    else:
        spec = FilterSpec("ellip", btype="bandpass", passband=[lo, hi],
                          stopband=[lo / BAND_TRANSITION, hi * BAND_TRANSITION], **kw)
    return _filter_piece(design(spec, fs))


def _demodulator(o: PlaybackOptions, fs: float, bw: float, first: int) -> Stage:
    """Complex baseband at ``fs`` to audio at ``fs``."""
    if o.demod == "am":
        dc = _filter_piece(design(FilterSpec("butter", btype="highpass", order=2,
                                             cutoff=AM_DC_HZ), fs))
        return Chain([Map(np.abs), dc])
    if o.demod in ("usb", "lsb"):
        # the channel sits at 0..bw (usb) or -bw..0 (lsb) after shifting back
        return Mixer(bw / 2 if o.demod == "usb" else -bw / 2, fs, first, real_out=True)
    scale = fs / (2 * np.pi) / (bw / 2)  # full scale at a deviation of half the bandwidth
    deemph = None
    if o.deemphasis != "none":
        tau = {"50us": 50e-6, "75us": 75e-6}[o.deemphasis]
        p = math.exp(-1.0 / (tau * fs))  # one pole; unity gain at 0 Hz
        deemph = _filter_piece(Design.from_coefficients(fs, b=[1 - p], a=[1.0, -p]))
    return FmDiscriminator(scale, deemph)
