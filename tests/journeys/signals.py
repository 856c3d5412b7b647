"""Recordings the journeys open, made in the test (no downloads)."""

from __future__ import annotations

import numpy as np
from scipy import signal

HUM_HZ = 49.93
HUM_HARMONICS = (1, 2, 3, 4, 5, 6, 7)


def speech_like(fs: int, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Syllables of a voiced source through three formant resonators, with pauses.

    The pitch glides between 95 and 150 Hz within each syllable, as a voice's
    does, so that no partial of the 'voice' stays on one frequency long enough
    to look like a line in a long average.
    """
    n = int(fs * seconds)
    out = np.zeros(n)
    t = 0.15
    while t < seconds - 0.4:
        dur = rng.uniform(0.12, 0.35)
        a, b = int(t * fs), int((t + dur) * fs)
        m = b - a
        f0 = rng.uniform(95, 150) * np.linspace(1.0, rng.uniform(0.8, 1.25), m)
        phase = 2 * np.pi * np.cumsum(f0) / fs
        src = signal.sawtooth(phase) + 0.05 * rng.standard_normal(m)
        y = np.zeros(m)
        for fc, bw, g in ((rng.uniform(500, 800), 90, 1.0), (rng.uniform(1000, 1600), 110, 0.6),
                          (rng.uniform(2200, 2800), 160, 0.3)):
            r = np.exp(-np.pi * bw / fs)
            th = 2 * np.pi * fc / fs
            y += g * signal.lfilter([1 - r], [1, -2 * r * np.cos(th), r * r], src)
        env = np.sin(np.pi * np.arange(m) / m) ** 2
        out[a:b] += env * y
        t += dur + rng.uniform(0.05, 0.5)
    out *= 0.12 / np.sqrt(np.mean(out ** 2))
    return out + 2e-4 * rng.standard_normal(n)


def slow_fluctuation(n: int, fs: int, rng: np.random.Generator, depth: float = 0.2,
                     max_hz: float = 0.05) -> np.ndarray:
    """1 ± ``depth``: a random gain changing no faster than ``max_hz``."""
    k = max(2, int(n / fs * max_hz) + 1)
    spec = np.zeros(n // 2 + 1, complex)
    spec[1:k] = rng.standard_normal(k - 1) + 1j * rng.standard_normal(k - 1)
    g = np.fft.irfft(spec, n)
    return 1.0 + depth * g / np.max(np.abs(g))


def hum(fs: int, n: int, rng: np.random.Generator, f0: float = HUM_HZ,
        amplitude: float = 0.03) -> np.ndarray:
    """Mains hum at ``f0`` and harmonics 2–7, each with its own ±20 % amplitude fluctuation."""
    t = np.arange(n) / fs
    out = np.zeros(n)
    for k in HUM_HARMONICS:
        a = amplitude / np.sqrt(k)
        out += a * slow_fluctuation(n, fs, rng) * np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 6.3))
    return out


def hummy_speech(fs: int = 48000, seconds: float = 30.0, speech_s: float = 14.0, seed: int = 7
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(speech + hum, the speech alone): ``speech_s`` of talk, then room tone (hum, faint noise).

    The pause is where a person hears whether the hum is gone (and where a
    Welch spectrum with 0.1 Hz bins sees the hum without the voice); the talk
    is where the voice's band must be unchanged.
    """
    rng = np.random.default_rng(seed)
    n = int(fs * seconds)
    s = np.zeros(n)
    s[:int(fs * speech_s)] = speech_like(fs, speech_s, rng)
    s[int(fs * speech_s):] = 2e-4 * rng.standard_normal(n - int(fs * speech_s))
    return s + hum(fs, n, rng), s
