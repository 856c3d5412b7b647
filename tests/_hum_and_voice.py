"""Mains hum under a talking voice: the recording of the notch-near-a-click tests
(tests/compute/filters/test_notch_near_click.py) and of the journey
tests/journeys/test_notch_click.py."""

from __future__ import annotations

import numpy as np

FS = 48000
HUM_HZ = 49.9
VOICE_HZ = 110.0


def talk_with_hum(seconds: float, *, start_s: float = 0.0, seed: int = 1,
                  hum_hz: float = HUM_HZ, voice_hz: float = VOICE_HZ,
                  hum: bool = True) -> np.ndarray:
    """Mains hum (harmonics 1–7) and a voice's harmonic stack (1–3) in faint noise.

    The voice speaks in syllables of 0.15–0.4 s at random times, its pitch gliding
    within ±2 % of ``voice_hz``: its harmonics at 110, 220 and 330 Hz stand as high
    above the floor as the hum's but the hum has seven.  ``start_s``: where in a
    longer recording the samples start (s).
    """
    n = round(seconds * FS)
    rng = np.random.default_rng(seed)
    t = start_s + np.arange(n) / FS
    x = 0.003 * rng.standard_normal(n)
    if hum:
        for k in range(1, 8):
            x += 0.02 / np.sqrt(k) * np.sin(2 * np.pi * k * hum_hz * t + k)
    f0 = np.zeros(n)
    env = np.zeros(n)
    s = int(rng.uniform(0.05, 0.3) * FS)
    while s < n:
        m = min(int(rng.uniform(0.15, 0.4) * FS), n - s)
        f0[s:s + m] = voice_hz * np.linspace(*rng.uniform(0.98, 1.02, 2), m)
        env[s:s + m] = np.sin(np.pi * np.arange(m) / m) ** 2
        s += m + int(rng.uniform(0.05, 0.4) * FS)
    phase = 2 * np.pi * np.cumsum(f0) / FS
    for k, a in ((1, 0.08), (2, 0.06), (3, 0.05)):
        x += a * env * np.sin(k * phase)
    return x


def is_voice(f: float) -> bool:
    """Whether ``f`` Hz is the voice's pitch or one of its harmonics (to its ±3 %)."""
    return any(abs(f - k * VOICE_HZ) <= 0.03 * k * VOICE_HZ for k in (1, 2, 3))
