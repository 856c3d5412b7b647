#!/usr/bin/env python
"""Benchmark: specscope's spectrogram and batched FFT against peers, fresh and warm.

Same float32 data for everyone (2**24 samples, nfft 1024, hop 256, Hann, PSD):
the public ``specscope.compute.spectrogram`` (the function the app's paths share:
its ``stft_power`` kernel runs tiles, exports, pipelines and live blocks),
``scipy.signal.spectrogram``, ``scipy.signal.ShortTimeFFT.spectrogram``,
``torch.stft`` (CPU) and ``librosa.stft`` when installed (a missing one is
named).  Then a batched 1024-point FFT against ``numpy.fft`` (and ``torch.fft``).

Each library runs in a new Python process per repeat, the libraries taking turns:
*fresh* is the first call in that process (what a user's first call gets), *warm*
the best of the next ones.  Prints both, the ratio to the fastest peer, and
checks that the numbers agree (rtol 1e-3 on float32).

    python scripts/bench.py [--quick] [--repeats N]     (or: specscope bench)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _benchjson
import bench_engine as engine

COLUMNS = ["library", "fresh (s)", "warm (s)", "fastest peer / this, fresh (x)",
           "fastest peer / this, warm (x)", "agreement with specscope"]

FFT_PEERS = {"specscope fft": "specscope", "numpy.fft.fft": "numpy",
             "torch.fft.fft (CPU)": "torch"}


def fft_fn(name: str, n: int) -> Callable[[], np.ndarray]:
    batch = np.random.default_rng(0).standard_normal(n).astype(np.float32).reshape(-1, 1024)
    if name == "specscope fft":
        from specscope.compute import call
        return lambda: call("fft", batch)
    if name == "numpy.fft.fft":
        return lambda: np.fft.fft(batch, axis=-1)
    if name == "torch.fft.fft (CPU)":
        import torch
        bt = torch.from_numpy(batch)
        return lambda: torch.fft.fft(bt, dim=-1).numpy()
    raise SystemExit(f"unknown library {name!r}")


def worker(args: argparse.Namespace) -> int:
    fn = fft_fn(args.worker, args.n) if args.worker in FFT_PEERS \
        else engine.spectrogram_fn(args.worker, args.n)
    t0 = time.perf_counter()
    out = fn()
    fresh = time.perf_counter() - t0
    warm = []
    for _ in range(args.warm):
        t0 = time.perf_counter()
        out = fn()
        warm.append(time.perf_counter() - t0)
    if args.check:
        out = np.asarray(out)
        np.save(args.check, np.abs(out) if out.dtype.kind == "c" else out)
    print(json.dumps({"fresh": fresh, "warm": min(warm) if warm else fresh}))
    return 0


def run(name: str, extra: list[str]) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", name, *extra],
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{name} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def agree(a: np.ndarray, b: np.ndarray) -> str:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"SHAPE {a.shape} vs {b.shape}"
    scale = float(np.max(np.abs(b))) or 1.0
    err = float(np.max(np.abs(a - b)) / scale)
    return f"max rel err {err:.1e}" + ("" if err < 1e-3 else "  MISMATCH")


def section(title: str, peers: dict[str, str], n: int, repeats: int, warm: int
            ) -> tuple[list[dict], list[str]]:
    names = [k for k, m in peers.items() if importlib.util.find_spec(m) is not None]
    missing = [k for k in peers if k not in names]
    ours = names[0]
    extra = ["--n", str(n), "--warm", str(warm)]
    runs: dict[str, list[dict]] = {k: [] for k in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            runs[name].append(run(name, extra))
    fresh = {k: float(np.median([r["fresh"] for r in v])) for k, v in runs.items()}
    best = {k: min(r["warm"] for r in v) for k, v in runs.items()}
    print(f"\n{title}")
    print(f"  {'':<34} {'fresh (median)':>15} {'warm (best)':>12}   vs fastest peer")
    others = [k for k in names if k != ours]
    ff = min((fresh[k] for k in others), default=float("nan"))
    fw = min((best[k] for k in others), default=float("nan"))
    rows = []
    for k in names:
        print(f"  {k:<34} {fresh[k] * 1e3:12.1f} ms {best[k] * 1e3:9.1f} ms   "
              f"{ff / fresh[k]:5.2f}x fresh, {fw / best[k]:5.2f}x warm")
        rows.append(dict(zip(COLUMNS, (k, fresh[k], best[k], ff / fresh[k], fw / best[k],
                                       None), strict=True)))
    skipped = []
    for k in missing:
        print(f"  {k:<34} skipped: {peers[k]} is not installed")
        skipped.append(f"{k} skipped: {peers[k]} is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for k in names:
            files[k] = Path(tmp) / f"{len(files)}.npy"
            run(k, ["--n", str(n), "--warm", "0", "--check", str(files[k])])
        mine = np.load(files[ours])
        for row, k in zip(rows[1:], others, strict=True):
            row[COLUMNS[-1]] = agree(mine, np.load(files[k]))
            print(f"  agreement with {k:<30} {row[COLUMNS[-1]]}")
    return rows, skipped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2**18 samples instead of 2**24")
    ap.add_argument("--repeats", type=int, default=None, help="new processes per library")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench.json)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=1 << 24, help=argparse.SUPPRESS)
    ap.add_argument("--warm", type=int, default=3, help=argparse.SUPPRESS)
    ap.add_argument("--check", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    n = 1 << (18 if args.quick else 24)
    repeats = args.repeats or (2 if args.quick else 3)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"{n} float32 samples, nfft {engine.NFFT}, hop {engine.HOP}, Hann, PSD; "
          f"{repeats} new processes per library; load average {load} on {os.cpu_count()} cores")
    spec, skipped = section("Spectrogram", engine.SPECTROGRAM_PEERS, n, repeats, 3)
    fft_title = f"Batched 1024-point FFT ({n // 1024} rows, complex64 out)"
    fft, skipped_fft = section(fft_title, FFT_PEERS, n, repeats, 3)
    if args.json is not None:
        _benchjson.record(
            "bench", _benchjson.command_line(__file__, argv),
            {f"Spectrogram, {n} float32 samples": spec, fft_title: fft},
            {f"Spectrogram, {n} float32 samples": COLUMNS, fft_title: COLUMNS},
            [f"{n} float32 samples, nfft {engine.NFFT}, hop {engine.HOP}, Hann, PSD; "
             f"{repeats} new processes per library; fresh: the median first call, warm: "
             "the best later call", *skipped, *skipped_fft], args.json or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
