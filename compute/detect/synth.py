"""Generated recordings with known calls: the truth detectors are measured against.

:func:`plan_calls` places calls (linear or exponential chirps and tonal
whistles with a slow vibrato, 20-400 ms, tapered) at given SNRs in a
recording of pink noise whose level drifts slowly, with mains hum and its
harmonics below the calls' band; :func:`render` gives the samples, block by
block, so an hour at 48 kHz never has to be in memory at once.

The SNR of a call is the ratio of its mean power to the noise power in the
analysis band (``band_hz``) at the call's time: what a band-limited energy
detector sees.  Calls marked ``template`` are copies of one fixed call (an
exponential downsweep), for template matching.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.signal

__all__ = ["Call", "Match", "Plan", "iq_bursts", "match", "plan_calls", "render", "render_all"]

# a pink (1/f) noise shaping filter: three poles and zeros (Kasdin's approximation)
_PINK_B = np.array([0.049922035, -0.095993537, 0.050612699, -0.004408786])
_PINK_A = np.array([1.0, -2.494956002, 2.017265875, -0.522189400])
#: the template call: an exponential downsweep (start Hz, end Hz, seconds)
TEMPLATE_CALL = (9000.0, 4500.0, 0.12)
TAPER_S = 0.004


@dataclass(frozen=True)
class Call:
    """One generated call: its box, its SNR and how to draw it.

    Parameters
    ----------
    start, stop : int
        Edges in samples.
    low_hz, high_hz : float
        The band the call spans (Hz).
    snr_db : float
        Mean power over the noise power in the analysis band at its time (dB).
    kind : str
        ``"chirp"``, ``"whistle"`` or ``"template"``.
    f0, f1 : float
        Start and end frequency of a sweep (Hz); for a whistle its centre and centre
        plus the vibrato's depth.
    amplitude : float
        Peak amplitude of the drawn call (linear).
    """

    start: int  # samples
    stop: int
    low_hz: float
    high_hz: float
    snr_db: float
    kind: str  # "chirp", "whistle" or "template"
    f0: float
    f1: float
    amplitude: float

    def start_s(self, fs: float) -> float:
        return self.start / fs

    def stop_s(self, fs: float) -> float:
        return self.stop / fs


@dataclass(frozen=True)
class Plan:
    """A generated recording: its calls and its noise, hum and drift.

    Parameters
    ----------
    fs : float
        Sample rate (Hz).
    n_samples : int
        Length in samples.
    calls : tuple of Call
        The calls, in time order.
    noise_rms : float
        RMS of the white noise before pink shaping.
    hum_amplitude : float
        Amplitude of the 50 Hz hum (harmonic ``h`` has ``hum_amplitude / h``, h = 1..5).
    drift_db : float
        Depth of the noise level's slow sinusoidal drift (dB).
    drift_period_s : float
        Period of that drift (s).
    seed : int
        Seed of the random draws.
    """

    fs: float
    n_samples: int
    calls: tuple[Call, ...]
    noise_rms: float
    hum_amplitude: float
    drift_db: float
    drift_period_s: float
    seed: int


def _noise_band_power(fs: float, band: tuple[float, float], rms: float) -> float:
    """Power of the shaped noise (white of ``rms`` through the pink filter) in ``band``."""
    f = np.linspace(band[0], band[1], 4097)
    _, h = scipy.signal.freqz(_PINK_B, _PINK_A, worN=f, fs=fs)
    psd = 2.0 * rms ** 2 * np.abs(h) ** 2 / fs  # one-sided
    return float(np.trapezoid(psd, f))


def _drift(t: np.ndarray, plan: Plan) -> np.ndarray:
    return 10.0 ** (plan.drift_db / 20.0 * np.sin(2 * np.pi * t / plan.drift_period_s))


def _shape(call: Call, fs: float) -> np.ndarray:
    n = call.stop - call.start
    t = np.arange(n) / fs
    dur = n / fs
    if call.kind == "whistle":
        depth = call.f1 - call.f0  # f0 +- depth at 8 Hz
        phase = 2 * np.pi * (call.f0 * t + depth / (2 * np.pi * 8.0)
                             * (1 - np.cos(2 * np.pi * 8.0 * t)))
    elif call.kind == "template" or call.f1 < call.f0:  # exponential sweep
        k = np.log(call.f1 / call.f0) / dur
        phase = 2 * np.pi * call.f0 * (np.exp(k * t) - 1) / k
    else:  # linear upsweep
        phase = 2 * np.pi * (call.f0 * t + 0.5 * (call.f1 - call.f0) / dur * t * t)
    taper = scipy.signal.windows.tukey(n, min(1.0, 2 * TAPER_S / dur))
    return np.sin(phase) * taper


def plan_calls(duration_s: float = 60.0, fs: float = 48000.0, n_calls: int = 20, *,
               snr_db: tuple[float, float] = (0.0, 20.0),
               durations_s: tuple[float, float] = (0.02, 0.4),
               calls_hz: tuple[float, float] = (3000.0, 12000.0),
               band_hz: tuple[float, float] = (2500.0, 12500.0), n_template: int = 0,
               min_spacing_s: float = 1.0, noise_rms: float = 0.05, hum_amplitude: float = 0.2,
               drift_db: float = 3.0, drift_period_s: float = 97.0, seed: int = 0) -> Plan:
    """Place ``n_calls`` calls (``n_template`` of them copies of the template call).

    SNRs are uniform in ``snr_db``; calls are at least ``min_spacing_s`` apart.

    Parameters
    ----------
    duration_s : float
        Length of the recording (s).
    fs : float
        Sample rate (Hz).
    n_calls : int
        Number of calls.
    snr_db : tuple of float
        Range of the calls' SNRs (dB).
    durations_s : tuple of float
        Range of the calls' durations (s); template calls last 0.12 s.
    calls_hz : tuple of float
        Range of the calls' frequencies (Hz).
    band_hz : tuple of float
        The analysis band in which SNRs are measured (Hz).
    n_template : int
        How many calls are copies of the template call (:data:`TEMPLATE_CALL`).
    min_spacing_s : float
        Least time between calls (s).
    noise_rms : float
        RMS of the white noise before pink shaping.
    hum_amplitude : float
        Amplitude of the 50 Hz hum.
    drift_db : float
        Depth of the noise level's drift (dB).
    drift_period_s : float
        Period of the drift (s).
    seed : int
        Seed of the random draws.

    Returns
    -------
    Plan
        The calls and the noise parameters; :func:`render` draws the samples.

    Raises
    ------
    ValueError
        If the calls do not fit in ``duration_s``.
    """
    rng = np.random.default_rng(seed)
    n = round(duration_s * fs)
    plan0 = Plan(fs, n, (), noise_rms, hum_amplitude, drift_db, drift_period_s, seed)
    band_power = _noise_band_power(fs, band_hz, noise_rms)
    slot = (duration_s - 1.0) / max(n_calls, 1)
    if slot < min_spacing_s + durations_s[1]:
        raise ValueError(f"{n_calls} calls do not fit in {duration_s} s")
    kinds = ["template"] * n_template + [
        "chirp" if i % 2 == 0 else "whistle" for i in range(n_calls - n_template)]
    rng.shuffle(kinds)
    calls = []
    for i, kind in enumerate(kinds):
        if kind == "template":
            f0, f1, dur = TEMPLATE_CALL
            lo, hi = min(f0, f1), max(f0, f1)
        else:
            dur = float(rng.uniform(*durations_s))
            if kind == "chirp":
                width = float(rng.uniform(1500.0, 5000.0))
                lo = float(rng.uniform(calls_hz[0], calls_hz[1] - width))
                hi = lo + width
                f0, f1 = (lo, hi) if rng.random() < 0.5 else (hi, lo)
            else:
                depth = float(rng.uniform(50.0, 300.0))
                f0 = float(rng.uniform(calls_hz[0] + depth, calls_hz[1] - depth))
                f1 = f0 + depth
                # drawn as f0 + depth*sin(2*pi*8*t) (see _shape): a call shorter than the
                # vibrato's period spans only part of f0 +- depth, and its box is that part
                swing = np.sin(2 * np.pi * 8.0 * np.linspace(0.0, dur, 1025))
                lo, hi = f0 + depth * float(swing.min()), f0 + depth * float(swing.max())
        t0 = 0.5 + i * slot + float(rng.uniform(0, slot - dur - min_spacing_s))
        start = round(t0 * fs)
        stop = start + round(dur * fs)
        snr = float(rng.uniform(*snr_db))
        call = Call(start, stop, lo, hi, snr, kind, f0, f1, 1.0)
        shape = _shape(call, fs)
        level = float(_drift(np.array([(start + stop) / 2 / fs]), plan0)[0]) ** 2
        power = float(np.mean(shape ** 2))
        amp = np.sqrt(10 ** (snr / 10) * band_power * level / power)
        calls.append(Call(start, stop, lo, hi, snr, kind, f0, f1, float(amp)))
    return Plan(fs, n, tuple(calls), noise_rms, hum_amplitude, drift_db, drift_period_s, seed)


def render(plan: Plan, block: int = 1 << 22) -> Iterator[np.ndarray]:
    """The recording's samples (float32), ``block`` at a time, in order.

    Parameters
    ----------
    plan : Plan
        The recording to draw.
    block : int
        Samples per yielded block.

    Yields
    ------
    numpy.ndarray
        The next block of samples, float32, 1-D.
    """
    fs = plan.fs
    rng = np.random.default_rng(plan.seed + 1)
    zi = np.zeros(len(_PINK_A) - 1)
    starts = np.array([c.start for c in plan.calls], np.int64)
    for a in range(0, plan.n_samples, block):
        b = min(plan.n_samples, a + block)
        t = np.arange(a, b) / fs
        white = rng.standard_normal(b - a) * plan.noise_rms
        noise, zi = scipy.signal.lfilter(_PINK_B, _PINK_A, white, zi=zi)
        x = noise * _drift(t, plan)
        for h in range(1, 6):
            x += plan.hum_amplitude / h * np.sin(2 * np.pi * 50.0 * h * t + 0.3 * h)
        first = int(np.searchsorted(starts, a - int(fs), side="left"))
        for c in plan.calls[first:]:
            if c.start >= b:
                break
            if c.stop <= a:
                continue
            wave = c.amplitude * _shape(c, fs)
            lo, hi = max(a, c.start), min(b, c.stop)
            x[lo - a:hi - a] += wave[lo - c.start:hi - c.start]
        yield x.astype(np.float32)


def render_all(plan: Plan) -> np.ndarray:
    """The whole recording in one array.

    Parameters
    ----------
    plan : Plan
        The recording to draw.

    Returns
    -------
    numpy.ndarray
        All ``plan.n_samples`` samples, float32.
    """
    return np.concatenate(list(render(plan)))


@dataclass(frozen=True)
class Match:
    """How a set of detections compares with the calls of a plan.

    Parameters
    ----------
    found : numpy.ndarray
        Per call: the index of the detection matched to it, or -1.
    call : numpy.ndarray
        Per detection: the index of the call it matched, or -1.
    edge_error_s : numpy.ndarray
        Per call: (start error, stop error) of its detection (s; NaN when missed).
    duplicate : numpy.ndarray
        Per detection: True when it overlaps only calls other detections matched.
    """

    #: per call: the index of the detection matched to it, or -1
    found: np.ndarray
    #: per detection: the index of the call it matched, or -1 (a false detection)
    call: np.ndarray
    #: per call: (start error, stop error) in seconds of its detection (NaN when missed)
    edge_error_s: np.ndarray

    #: per detection: True when it overlaps a call another detection matched (a fragment)
    duplicate: np.ndarray

    @property
    def n_false(self) -> int:
        """Detections overlapping no call."""
        return int(np.sum((self.call < 0) & ~self.duplicate))

    @property
    def n_duplicate(self) -> int:
        """Detections overlapping only calls matched to other detections."""
        return int(np.sum(self.duplicate))


def match(events, calls, fs: float) -> Match:
    """Match detections to calls by time overlap (each at most once, largest overlap first).

    Parameters
    ----------
    events : Events
        The detections (their ``start_sample`` and ``stop_sample`` are used).
    calls : sequence of Call
        The calls, in time order.
    fs : float
        Sample rate (Hz) converting edge errors to seconds.

    Returns
    -------
    Match
        The matches, missed calls, false and duplicate detections.
    """
    s = np.asarray(events.start_sample, np.int64)
    e = np.asarray(events.stop_sample, np.int64)
    cs = np.array([c.start for c in calls], np.int64)
    ce = np.array([c.stop for c in calls], np.int64)
    pairs = []
    for i in range(s.size):
        j0 = int(np.searchsorted(ce, s[i], side="right"))
        for j in range(max(0, j0 - 1), min(len(calls), j0 + 3)):
            ov = min(e[i], ce[j]) - max(s[i], cs[j])
            if ov > 0:
                pairs.append((ov, i, j))
    pairs.sort(reverse=True)
    found = np.full(len(calls), -1)
    call = np.full(s.size, -1)
    for _, i, j in pairs:
        if found[j] < 0 and call[i] < 0:
            found[j], call[i] = i, j
    dup = np.zeros(s.size, bool)
    for _, i, _ in pairs:
        dup[i] = call[i] < 0
    err = np.full((len(calls), 2), np.nan)
    ok = found >= 0
    err[ok, 0] = (s[found[ok]] - cs[ok]) / fs
    err[ok, 1] = (e[found[ok]] - ce[ok]) / fs
    return Match(found, call, err, dup)


def iq_bursts(fs: float = 48000.0, seed: int = 0, nfft: int = 1024
              ) -> tuple[np.ndarray, list[tuple[int, int, float, float]]]:
    """IQ noise with four band-limited noise bursts (about 20 dB over the noise per bin).

    Parameters
    ----------
    fs : float
        Sample rate (Hz).
    seed : int
        Seed of the random draws.
    nfft : int
        FFT length whose bin width ``fs / nfft`` the band edges are multiples of.

    Returns
    -------
    samples : numpy.ndarray
        4 s of complex64 samples.
    truth : list of tuple
        Per burst, ``(start, stop, low_hz, high_hz)`` in samples and baseband Hz.
    """
    rng = np.random.default_rng(seed)
    n = int(4 * fs)
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 0.01
    truth = []
    df = fs / nfft
    for i, (f_lo_bin, width_bins) in enumerate([(-150, 40), (20, 12), (90, 64), (-60, 25)]):
        a = int((0.3 + 0.9 * i) * fs)
        b = a + int(0.2 * fs)
        f_lo, f_hi = f_lo_bin * df, (f_lo_bin + width_bins) * df
        spec = np.zeros(b - a, complex)
        f = np.fft.fftfreq(b - a, 1 / fs)
        inside = (f >= f_lo) & (f < f_hi)
        spec[inside] = rng.standard_normal(inside.sum()) + 1j * rng.standard_normal(inside.sum())
        burst = np.fft.ifft(spec)
        burst *= 0.1 / np.sqrt(np.mean(np.abs(burst) ** 2))
        x[a:b] += burst
        truth.append((a, b, f_lo, f_hi))
    return x.astype(np.complex64), truth
