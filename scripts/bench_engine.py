#!/usr/bin/env python
"""Benchmark: the paths the app runs, against peers, fresh and warm, in the same run.

Every library runs in its own new Python process for each repeat, the libraries
taking turns (a shared machine slows them alike), so both figures are measured:

- *fresh*: the first call in a new process (after the imports and the data), what
  a user's script or the app's first render gets;
- *warm*: the best of the next calls in that process.

1. The public ``specscope.compute.spectrogram`` (2**24 float32 samples, nfft 1024,
   hop 256, Hann, PSD) against ``scipy.signal.spectrogram``,
   ``scipy.signal.ShortTimeFFT.spectrogram``, ``librosa.stft`` power and
   ``torch.stft`` (CPU), the last two when installed (a missing one is named).
   Also the peak memory of the call: traced allocations (``tracemalloc``) and the
   growth of the peak RSS over the first call, against the size of the output.
2. A cold render of a whole recording by the tile engine (a generated 1-hour,
   48 kHz, 16-bit mono WAV in a temporary folder; 1600 columns, nothing cached)
   against scipy reading the same file (``scipy.io.wavfile.read``) and computing
   its spectrogram, and beside it the same render with a new array for every
   block's spectra (``stft_power`` without ``out=``) and the render the desktop
   window makes (an empty disk cache, which it fills, and the session's spill).

Prints the median fresh and the best warm time of each, the ratios (``peer time /
specscope time``: above 1 is faster than the peer), the load average, and the
profile of one tile render.

    python scripts/bench_engine.py [--minutes 60] [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import _benchjson
import numpy as np

NFFT, HOP, FS = 1024, 256, 48000.0
OURS = "specscope spectrogram"
SPECTROGRAM_PEERS = {  # name -> module that must be importable
    OURS: "specscope",
    "scipy.signal.spectrogram": "scipy",
    "scipy ShortTimeFFT.spectrogram": "scipy",
    "librosa.stft power": "librosa",
    "torch.stft (CPU)": "torch",
}
TILES = "specscope TileEngine cold render"
#: the same render with a new array for every block's spectra (no block buffer)
TILES_NEW_ARRAYS = "  same, new array per block"
#: the same render as the desktop window makes it: with the disk cache (levels 3 and
#: up written as they are computed) and the session's spill (level 2 from the same frames)
TILES_APP = "  same, with disk cache + spill (app)"
SCIPY_READ = "scipy wavfile.read + spectrogram"
#: what --json records: the tables printed, by title, and the lines beside them
TABLES: dict[str, list[dict]] = {}
COLUMNS: dict[str, list[str]] = {}
NOTES: list[str] = []


# -- the timed functions (built inside a worker process) -------------------------------


def spectrogram_fn(name: str, n: int) -> Callable[[], np.ndarray]:
    """The call of library ``name`` on the benchmark's signal, returning (freq, time) PSD."""
    import scipy.signal
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    w = scipy.signal.get_window("hann", NFFT)
    scale = 1.0 / (FS * float((w ** 2).sum()))
    if name == OURS:
        from specscope.compute import spectrogram
        return lambda: spectrogram(x, FS, nfft=NFFT, hop=HOP)[2]
    if name == "scipy.signal.spectrogram":
        return lambda: scipy.signal.spectrogram(x, FS, window="hann", nperseg=NFFT,
                                                noverlap=NFFT - HOP, detrend=False)[2]
    if name == "scipy ShortTimeFFT.spectrogram":
        sft = scipy.signal.ShortTimeFFT(w, HOP, FS, fft_mode="onesided2X", scale_to="psd")
        k, p0 = (n - NFFT) // HOP + 1, NFFT // 2 // HOP
        return lambda: sft.spectrogram(x, p0=p0, p1=p0 + k)
    if name == "librosa.stft power":
        import librosa

        def librosa_psd():
            p = np.abs(librosa.stft(x, n_fft=NFFT, hop_length=HOP, window="hann",
                                    center=False)) ** 2
            p[1:-1] *= 2
            return p * scale
        return librosa_psd
    if name == "torch.stft (CPU)":
        import torch
        xt, wt = torch.from_numpy(x), torch.hann_window(NFFT)

        def torch_psd():
            z = torch.stft(xt, NFFT, HOP, window=wt, center=False, return_complex=True)
            p = z.real ** 2 + z.imag ** 2
            p[1:-1] *= 2
            return (p * scale).numpy()
        return torch_psd
    raise SystemExit(f"unknown library {name!r}")


def tiles_fn(name: str, path: str, columns: int) -> Callable[[], object]:
    import scipy.io.wavfile
    import scipy.signal
    if name in (TILES, TILES_NEW_ARRAYS, TILES_APP):
        import shutil

        from specscope.compute import TileEngine, open_recording
        folder = Path(tempfile.mkdtemp(prefix="bench-tiles-"))

        def render():
            with open_recording(path) as rec:
                disk = folder / "cache" if name == TILES_APP else None
                eng = TileEngine(rec, nfft=NFFT, hop=HOP, disk_cache=disk)
                if name == TILES_NEW_ARRAYS:  # stft_power allocates each block's result
                    eng.block_buffer = lambda frames: None
                image = eng.render(0.0, rec.n_samples / rec.sample_rate, columns).image
                eng.close()
                return image

        def reset():  # every call starts with an empty disk cache (not timed)
            shutil.rmtree(folder / "cache", ignore_errors=True)
        render.reset = reset
        return render
    if name == SCIPY_READ:
        def read_and_spectrogram():
            fs, y = scipy.io.wavfile.read(path)
            y = y.astype(np.float32) / 32768.0
            return scipy.signal.spectrogram(y, fs, window="hann", nperseg=NFFT,
                                            noverlap=NFFT - HOP, detrend=False)[2]
        return read_and_spectrogram
    raise SystemExit(f"unknown task {name!r}")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def worker(args: argparse.Namespace) -> int:
    """One library in this (new) process: the first call, then warm calls; one JSON line."""
    fn = tiles_fn(args.worker, args.path, args.columns) if args.path \
        else spectrogram_fn(args.worker, args.n)
    reset = getattr(fn, "reset", lambda: None)
    rss0 = _peak_rss()
    reset()
    t0 = time.perf_counter()
    out = fn()
    fresh = time.perf_counter() - t0
    rss_growth = _peak_rss() - rss0
    warm = []
    for _ in range(args.warm):
        reset()
        t0 = time.perf_counter()
        out = fn()
        warm.append(time.perf_counter() - t0)
    res = {"fresh": fresh, "warm": min(warm) if warm else fresh,
           "out_bytes": int(np.asarray(out).nbytes), "rss_growth": rss_growth}
    if args.memory:
        del out
        tracemalloc.start()
        out = fn()
        res["traced_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if args.check:
        np.save(args.check, np.asarray(out, dtype=np.float32))
    if args.profile:
        from specscope.compute import operators
        with operators.profile() as prof:
            fn()
        res["profile"] = prof.by_backend()
    print(json.dumps(res))
    return 0


# -- the parent: fresh processes, interleaved -------------------------------------------


def run_worker(name: str, extra: list[str]) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONHASHSEED="0"))
    if proc.returncode:
        raise SystemExit(f"{name} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def interleaved(names: list[str], repeats: int, extra: list[str]) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:  # rotate the order
            runs[name].append(run_worker(name, extra))
    return runs


def show(title: str, ours: str, runs: dict[str, list[dict]]) -> dict[str, dict[str, float]]:
    fresh = {k: statistics.median(r["fresh"] for r in v) for k, v in runs.items()}
    warm = {k: min(r["warm"] for r in v) for k, v in runs.items()}
    print(f"\n{title}")
    print(f"  {'':<36} {'fresh (median)':>15} {'warm (best)':>12}")
    cols = ["run", "fresh (s)", "warm (s)", "time / specscope's, fresh (x)",
            "time / specscope's, warm (x)"]
    COLUMNS[title], TABLES[title] = cols, []
    for name in runs:
        tag = "" if name == ours else (f"   specscope is {fresh[name] / fresh[ours]:5.2f}x "
                                       f"fresh, {warm[name] / warm[ours]:5.2f}x warm")
        print(f"  {name:<36} {fresh[name] * 1e3:12.1f} ms {warm[name] * 1e3:9.1f} ms{tag}")
        mine = name == ours
        TABLES[title].append(dict(zip(cols, (
            name.strip(), fresh[name], warm[name], None if mine else fresh[name] / fresh[ours],
            None if mine else warm[name] / warm[ours]), strict=True)))
    return {"fresh": fresh, "warm": warm}


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:
        return "unknown"


def bench_spectrogram(n: int, repeats: int, warm: int) -> None:
    names, missing = [], []
    for name, module in SPECTROGRAM_PEERS.items():
        (names if importlib.util.find_spec(module) is not None else missing).append(name)
    extra = ["--n", str(n), "--warm", str(warm)]
    runs = interleaved(names, repeats, extra)
    with tempfile.TemporaryDirectory() as tmp:  # agreement and memory, once each
        mine, ref = Path(tmp) / "ours.npy", Path(tmp) / "scipy.npy"
        mem = run_worker(OURS, [*extra, "--memory", "--check", str(mine)])
        run_worker("scipy.signal.spectrogram", [*extra, "--warm", "0", "--check", str(ref)])
        a, b = np.load(mine), np.load(ref)
        err = float(np.max(np.abs(a.astype(np.float64) - b)) / b.max())
    res = show(f"Public spectrogram: {n} float32 samples, nfft {NFFT}, hop {HOP}, Hann, PSD; "
               f"{repeats} new processes each, interleaved (max error vs scipy {err:.1e} "
               "of the peak)", OURS, runs)
    for name in missing:
        print(f"  {name:<36} skipped: {SPECTROGRAM_PEERS[name]} is not installed")
        NOTES.append(f"{name} skipped: {SPECTROGRAM_PEERS[name]} is not installed")
    NOTES.append(f"spectrogram: max error against scipy {err:.1e} of the peak")
    peers = [k for k in runs if k != OURS]
    for kind in ("fresh", "warm"):
        t = res[kind]
        fastest = min(peers, key=t.get)
        print(f"  -> {kind}: {t[fastest] / t[OURS]:.2f}x the fastest peer ({fastest})")
        NOTES.append(f"spectrogram, {kind}: {t[fastest] / t[OURS]:.2f}x the fastest peer "
                     f"({fastest})")
    out_mb = mem["out_bytes"] / 2**20
    print(f"  peak memory of one call: output {out_mb:.1f} MiB; traced peak "
          f"{mem['traced_peak'] / 2**20:.1f} MiB (output + "
          f"{(mem['traced_peak'] - mem['out_bytes']) / 2**20:.1f} MiB); peak RSS growth "
          f"over the first call {mem['rss_growth'] / 2**20:.1f} MiB")
    NOTES.append(f"peak memory of one call: output {out_mb:.1f} MiB; traced peak "
                 f"{mem['traced_peak'] / 2**20:.1f} MiB (output + "
                 f"{(mem['traced_peak'] - mem['out_bytes']) / 2**20:.1f} MiB)")


def bench_tiles(minutes: float, repeats: int, columns: int, warm: int) -> None:
    import scipy.io.wavfile
    fs = int(FS)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hour.wav"
        n = int(minutes * 60 * fs)
        rng = np.random.default_rng(1)
        t = np.arange(fs, dtype=np.float64) / fs
        second = (3000 * np.sin(2 * np.pi * 1000 * t)).astype(np.int16)
        data = np.tile(second, n // fs + 1)[:n] + rng.integers(-300, 300, n, dtype=np.int16)
        scipy.io.wavfile.write(path, fs, data)
        del data
        extra = ["--path", str(path), "--columns", str(columns), "--warm", str(warm)]
        runs = interleaved([TILES, TILES_NEW_ARRAYS, TILES_APP, SCIPY_READ], repeats, extra)
        res = show(f"Whole {minutes:g}-minute 48 kHz WAV, {columns} columns, cold (nothing "
                   f"cached); {repeats} new processes each, interleaved", TILES, runs)
        for kind in ("fresh", "warm"):
            t = res[kind]
            print(f"  -> {kind}: tile engine / scipy time {t[TILES] / t[SCIPY_READ]:.2f} "
                  f"(with disk cache + spill, the app's: {t[TILES_APP] / t[SCIPY_READ]:.2f}); "
                  f"a new array per block / the block buffer {t[TILES_NEW_ARRAYS] / t[TILES]:.2f}")
            NOTES.append(f"whole-file render, {kind}: tile engine / scipy time "
                         f"{t[TILES] / t[SCIPY_READ]:.2f}; the app's render (disk cache + "
                         f"spill) / scipy {t[TILES_APP] / t[SCIPY_READ]:.2f}")
        prof = run_worker(TILES, [*extra, "--warm", "0", "--profile"])["profile"]
        print("\n  profile of one cold render:")
        title = "Profile of one cold render by the tile engine"
        COLUMNS[title] = ["operator", "backend", "calls", "time (s)"]
        TABLES[title] = []
        for r in prof:
            print(f"    {r['operator']:<14} {r['backend']:<6} {r['calls']:>6} calls "
                  f"{r['seconds'] * 1e3:10.1f} ms")
            TABLES[title].append(dict(zip(COLUMNS[title], (
                r["operator"], r["backend"], r["calls"], r["seconds"]), strict=True)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="length of the WAV (60)")
    ap.add_argument("--repeats", type=int, default=3, help="new processes per library (3)")
    ap.add_argument("--warm", type=int, default=3, help="warm calls per process (3)")
    ap.add_argument("--columns", type=int, default=1600)
    ap.add_argument("--quick", action="store_true", help="2**20 samples and a 2-minute file")
    ap.add_argument("--skip-tiles", action="store_true", help="the spectrogram only")
    ap.add_argument("--skip-spectrogram", action="store_true", help="the tile render only")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench_engine.json)")
    # a worker process (internal)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=1 << 24, help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--check", help=argparse.SUPPRESS)
    ap.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    print(f"load average {_load()} at the start")
    if not args.skip_spectrogram:
        bench_spectrogram(1 << (20 if args.quick else 24), args.repeats, args.warm)
    if not args.skip_tiles:
        bench_tiles(2.0 if args.quick else args.minutes, args.repeats, args.columns,
                    1)  # the render is long: one warm call after the fresh one
    print(f"\nload average {_load()} at the end")
    if args.json is not None:
        _benchjson.record("bench_engine", _benchjson.command_line(__file__, argv), TABLES,
                          COLUMNS, NOTES, args.json or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
