#!/usr/bin/env python
"""Benchmark: the paths the app runs, against peers measured in the same run.

1. The public ``specscope.compute.spectrogram`` (2**24 float32 samples, nfft 1024,
   hop 256, Hann, PSD) against ``scipy.signal.spectrogram``,
   ``scipy.signal.ShortTimeFFT.spectrogram``, ``librosa.stft`` power and
   ``torch.stft`` (the last two when installed), interleaved, best of N.
2. A cold render of a whole recording by the tile engine (a generated 1-hour,
   48 kHz, 16-bit mono WAV in a temporary folder; 1600 columns, nothing cached)
   against scipy reading the same file (``scipy.io.wavfile.read``) and computing
   its spectrogram, interleaved, best of N.

Prints times and ratios (``peer time / specscope time``: above 1 is faster than
the peer) and the profile of the tile render (operator, backend, calls, time).

    python scripts/bench_engine.py [--minutes 60] [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.io.wavfile
import scipy.signal
from specscope.compute import TileEngine, open_recording, operators, spectrogram

NFFT, HOP = 1024, 256


def interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best wall time of each function, the functions taking turns (a shared machine
    slows them alike)."""
    best = dict.fromkeys(fns, float("inf"))
    for f in fns.values():
        f()  # warm-up: plans, caches, autotune
    for _ in range(repeats):
        for name, f in fns.items():
            t0 = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def show(title: str, ours: str, best: dict[str, float]) -> None:
    print(f"\n{title}")
    for name, t in best.items():
        ratio = t / best[ours]
        tag = "" if name == ours else f"   specscope is {ratio:5.2f}x faster"
        print(f"  {name:<36} {t * 1e3:10.1f} ms{tag}")


def bench_spectrogram(n: int, repeats: int) -> None:
    fs = 48000.0
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    w = scipy.signal.get_window("hann", NFFT)
    scale = 1.0 / (fs * float((w ** 2).sum()))
    sft = scipy.signal.ShortTimeFFT(w, HOP, fs, fft_mode="onesided2X", scale_to="psd")
    k = (n - NFFT) // HOP + 1
    p0 = NFFT // 2 // HOP
    fns: dict[str, Callable[[], object]] = {
        "specscope spectrogram": lambda: spectrogram(x, fs, nfft=NFFT, hop=HOP),
        "scipy.signal.spectrogram": lambda: scipy.signal.spectrogram(
            x, fs, window="hann", nperseg=NFFT, noverlap=NFFT - HOP, detrend=False),
        "scipy ShortTimeFFT.spectrogram": lambda: sft.spectrogram(x, p0=p0, p1=p0 + k),
    }
    if importlib.util.find_spec("librosa") is not None:
        import librosa

        def librosa_psd():
            p = np.abs(librosa.stft(x, n_fft=NFFT, hop_length=HOP, window="hann",
                                    center=False)) ** 2
            p[1:-1] *= 2
            return p * scale
        fns["librosa.stft power"] = librosa_psd
    if importlib.util.find_spec("torch") is not None:
        import torch

        xt, wt = torch.from_numpy(x), torch.hann_window(NFFT)

        def torch_psd():
            z = torch.stft(xt, NFFT, HOP, window=wt, center=False, return_complex=True)
            p = z.real ** 2 + z.imag ** 2
            p[1:-1] *= 2
            return (p * scale).numpy()
        fns["torch.stft (CPU)"] = torch_psd
    ours = fns["specscope spectrogram"]()[2]
    ref = fns["scipy.signal.spectrogram"]()[2]
    err = float(np.max(np.abs(ours - ref)) / ref.max())
    best = interleaved(fns, repeats)
    show(f"Public spectrogram: {n} float32 samples, nfft {NFFT}, hop {HOP}, Hann, PSD "
         f"(max error vs scipy {err:.1e} of the peak)", "specscope spectrogram", best)
    peers = {k: v for k, v in best.items() if not k.startswith("specscope")}
    fastest = min(peers, key=peers.get)
    print(f"  -> {peers[fastest] / best['specscope spectrogram']:.2f}x the fastest peer "
          f"({fastest})")


def bench_tiles(minutes: float, repeats: int, columns: int) -> None:
    fs = 48000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hour.wav"
        n = int(minutes * 60 * fs)
        rng = np.random.default_rng(1)
        t = np.arange(fs, dtype=np.float64) / fs
        second = (3000 * np.sin(2 * np.pi * 1000 * t)).astype(np.int16)
        data = np.tile(second, n // fs + 1)[:n] + rng.integers(-300, 300, n, dtype=np.int16)
        scipy.io.wavfile.write(path, fs, data)
        del data

        def scipy_read_and_spectrogram():
            _, y = scipy.io.wavfile.read(path)
            y = y.astype(np.float32) / 32768.0
            return scipy.signal.spectrogram(y, fs, window="hann", nperseg=NFFT,
                                            noverlap=NFFT - HOP, detrend=False)[2].shape

        def tile_engine_cold_render():
            with open_recording(path) as rec:
                eng = TileEngine(rec, nfft=NFFT, hop=HOP)
                return eng.render(0.0, rec.n_samples / fs, columns).image.shape

        best = interleaved({"specscope TileEngine cold render": tile_engine_cold_render,
                            "scipy wavfile.read + spectrogram": scipy_read_and_spectrogram},
                           repeats)
        show(f"Whole {minutes:g}-minute 48 kHz WAV, {columns} columns, cold (nothing cached)",
             "specscope TileEngine cold render", best)
        print(f"  -> tile engine / scipy time: "
              f"{best['specscope TileEngine cold render'] / best['scipy wavfile.read + spectrogram']:.2f}")
        with operators.profile() as prof:
            tile_engine_cold_render()
        print("\n  profile of one cold render:")
        for r in prof.by_backend():
            print(f"    {r['operator']:<14} {r['backend']:<6} {r['calls']:>6} calls "
                  f"{r['seconds'] * 1e3:10.1f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="length of the WAV (60)")
    ap.add_argument("--repeats", type=int, default=3, help="best of N (3)")
    ap.add_argument("--columns", type=int, default=1600)
    ap.add_argument("--quick", action="store_true", help="2**20 samples and a 2-minute file")
    args = ap.parse_args(argv)
    bench_spectrogram(1 << (20 if args.quick else 24), args.repeats)
    bench_tiles(2.0 if args.quick else args.minutes, args.repeats, args.columns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
