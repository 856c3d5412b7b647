#!/usr/bin/env python3
"""Generate the bundled example recordings, deterministically.

``assets/examples/scene.wav``: 20 s, 48 kHz, mono, 16-bit PCM.  A scene that
shows what a spectrogram and a notch or band-pass filter are for:

- 50 Hz mains hum with harmonics at 100 … 400 Hz,
- a sequence of bird-like chirps between 2 and 8 kHz (rising, falling and
  warbling sweeps with harmonics and soft envelopes),
- a few clicks (short broadband transients),
- broadband noise (white, about 45 dB below the hum).

Run ``python scripts/make_examples.py [--out DIR]``; the output is byte-identical
on every run (fixed seed, no time stamps in the file).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import soundfile

FS = 48_000
DURATION = 20.0
SEED = 20261130

#: (start s, duration s, f0 Hz, f1 Hz, shape) of each chirp
CHIRPS = [
    (1.0, 0.35, 2500, 6500, "up"),
    (1.6, 0.35, 2500, 6500, "up"),
    (2.4, 0.5, 7500, 3000, "down"),
    (4.0, 0.8, 4000, 5000, "warble"),
    (5.5, 0.25, 3000, 7800, "up"),
    (5.9, 0.25, 3000, 7800, "up"),
    (6.3, 0.25, 3000, 7800, "up"),
    (8.0, 1.0, 6000, 2200, "down"),
    (10.5, 0.6, 2000, 4000, "hook"),
    (12.0, 0.9, 5000, 6000, "warble"),
    (14.0, 0.3, 2200, 7000, "up"),
    (14.5, 0.3, 7000, 2200, "down"),
    (16.2, 1.2, 3500, 4500, "warble"),
    (18.3, 0.4, 7900, 5000, "down"),
]
#: times (s) of the clicks
CLICKS = [3.2, 7.1, 11.4, 15.05, 17.8]


def _chirp(t: np.ndarray, dur: float, f0: float, f1: float, shape: str) -> np.ndarray:
    u = t / dur
    if shape == "warble":
        mid, dev = (f0 + f1) / 2, (f1 - f0) / 2
        inst = mid + dev * np.sin(2 * np.pi * 12 * t)
    elif shape == "hook":
        inst = f0 + (f1 - f0) * np.sin(np.pi * u)
    else:  # up / down: exponential sweep, as in many bird calls
        inst = f0 * (f1 / f0) ** u
    phase = 2 * np.pi * np.cumsum(inst) / FS
    env = np.sin(np.pi * u) ** 2
    return env * (np.sin(phase) + 0.25 * np.sin(2 * phase))


def make_scene(rng: np.random.Generator) -> np.ndarray:
    n = int(FS * DURATION)
    t = np.arange(n) / FS
    x = np.zeros(n)
    # mains hum: fundamental and decaying harmonics with fixed phases
    for k, amp in enumerate([0.08, 0.03, 0.04, 0.015, 0.02, 0.008, 0.01, 0.005], start=1):
        x += amp * np.sin(2 * np.pi * 50.0 * k * t + 0.7 * k)
    for start, dur, f0, f1, shape in CHIRPS:
        i0 = int(start * FS)
        m = int(dur * FS)
        x[i0:i0 + m] += 0.25 * _chirp(np.arange(m) / FS, dur, f0, f1, shape)
    for tc in CLICKS:
        i0 = int(tc * FS)
        m = 96  # 2 ms
        x[i0:i0 + m] += 0.6 * np.exp(-np.arange(m) / 12.0) * rng.choice([-1.0, 1.0], m)
    x += 0.004 * rng.standard_normal(n)
    return np.clip(x, -1.0, 1.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parent.parent / "assets" / "examples")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    x = make_scene(np.random.default_rng(SEED))
    path = args.out / "scene.wav"
    soundfile.write(str(path), x, FS, subtype="PCM_16", format="WAV")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
