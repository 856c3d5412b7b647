"""A deployment's tile pyramid, and its detections against the concatenated signal.

Usage: ``python scripts/bench_deployment_pyramid.py [--hours 100] [--quick]
[--folder DIR] [--json [PATH]]``

Part 1, the pyramid: ``--hours`` hours of 48 kHz 16-bit mono audio in one-minute WAV
files with BWF ``bext`` times (a minute left out every hour: a gap), written
*sparse* as in ``bench_deployment.py`` (the header, then a hole the file system reads as
zeros: no disk space, and an FFT costs the same on zeros).  The tile engine builds the
pyramid of the whole deployment on one thread, frames planned per segment, tiles kept
in a disk cache: every tile of a base level computed from the samples (the coarsest
level whose cells still fit one kernel block, with at most 256 tiles), then every level
above it combined from the one below.  Measured in the same run: a plain STFT of the
same samples (``stft_power``, the same frames, blocks of 2048 frames, nothing kept).
Printed: the real-time factor per core of each and their ratio (the target: >= 500x
real time per core for the pyramid).

Part 2, detections: ``--detect-minutes`` minutes of noise with 3 kHz tones, some of
them across file boundaries, as one-minute files (contiguous) and as one WAV file of
the whole; ``run_detect`` on both, in this process and on 2 worker processes.  The
tables must be the same bytes (and so the same count).
"""

from __future__ import annotations

import argparse
import math
import os
import struct
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import _benchjson
import numpy as np

RATE = 48_000
MINUTE = 60 * RATE
NFFT, HOP = 1024, 256
ENERGY = {"band_low_hz": 2000.0, "band_high_hz": 4000.0, "snr_db": 6.0}


def _bext(when: datetime) -> bytes:
    b = bytearray(602)
    b[320:330] = when.strftime("%Y-%m-%d").encode()
    b[330:338] = when.strftime("%H:%M:%S").encode()
    b[346:348] = struct.pack("<H", 1)
    return bytes(b)


def _wav(path: Path, when: datetime, data: bytes | None, n: int) -> None:
    """A 16-bit mono WAV with a bext time; ``data`` None: a hole of ``n`` samples."""
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)
    bext = _bext(when)
    body = (b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
            + b"bext" + struct.pack("<I", len(bext)) + bext
            + b"data" + struct.pack("<I", 2 * n))
    with open(path, "wb") as fh:
        fh.write(b"RIFF" + struct.pack("<I", len(body) + 2 * n) + body)
        if data is None:
            fh.truncate(len(body) + 8 + 2 * n)
        else:
            fh.write(data)


def make_sparse(folder: Path, hours: float) -> tuple[int, int]:
    """One-minute sparse files for ``hours``; returns (files, gaps)."""
    t0 = datetime(2024, 5, 1)
    n = max(1, round(hours * 60))
    k = gaps = minute = 0
    while k < n:
        when = t0 + timedelta(minutes=minute)
        minute += 1
        if minute % 60 == 30:
            gaps += 1
            continue
        _wav(folder / f"SITE_{when:%Y%m%d_%H%M%S}.wav", when, None, MINUTE)
        k += 1
    return n, gaps


def build_pyramid(dep, cache: Path) -> tuple[float, int, int]:
    """Every tile of the pyramid; returns (seconds, base level, tiles)."""
    from specscope.compute.spectral import FRAMES_PER_BLOCK
    from specscope.compute.view.tile_stores import DISK_MIN_LEVEL
    from specscope.compute.view.tiles import TILE_CELLS, TileEngine

    engine = TileEngine(dep, nfft=NFFT, hop=HOP, disk_cache=cache)
    top = engine.max_level
    base = DISK_MIN_LEVEL
    while (base < top and (1 << (base + 1)) <= FRAMES_PER_BLOCK
           and math.ceil(engine.n_frames / (TILE_CELLS << base)) > 256):
        base += 1
    base = min(base, top)
    t0 = time.perf_counter()
    n_base = math.ceil(engine.n_frames / (TILE_CELLS << base))
    for i in range(0, n_base, 16):
        engine.compute_run(base, range(i, min(n_base, i + 16)))
    tiles = n_base
    for level in range(base + 1, top + 1):
        n = math.ceil(engine.n_frames / (TILE_CELLS << level))
        for i in range(n):
            engine.get_tile(level, i, derive=0)
        tiles += n
    seconds = time.perf_counter() - t0
    assert engine.frames_computed == engine.n_frames, "a frame computed twice or never"
    engine.close()
    return seconds, base, tiles


def plain_stft(dep) -> float:
    """Seconds of a plain STFT of the same frames (read and transformed, nothing kept)."""
    from specscope.compute import operators
    from specscope.compute.spectral import FRAMES_PER_BLOCK, StftParams

    params = StftParams(NFFT, HOP)
    t0 = time.perf_counter()
    for s0, s1 in dep.segments():
        n = params.n_frames(s1 - s0) if s1 - s0 >= NFFT else 0
        for j0 in range(0, n, FRAMES_PER_BLOCK):
            j1 = min(n, j0 + FRAMES_PER_BLOCK)
            x = dep.read(s0 + j0 * HOP, s0 + (j1 - 1) * HOP + NFFT, 0)[:, 0]
            operators.call("stft_power", x, fs=float(RATE), two_sided=False,
                           layout="frames", **params.operator_params())
    return time.perf_counter() - t0


def detections(folder: Path, minutes: int, workers: int) -> dict[str, object]:
    """The deployment's table against the concatenation's: same bytes?"""
    from specscope.compute.batch import run_detect
    from specscope.compute.pipeline import Pipeline

    rng = np.random.default_rng(40)
    n = minutes * MINUTE
    x = rng.normal(0, 300, n)
    t = np.arange(n) / RATE
    for k in range(minutes):  # one tone across each boundary, one inside each file
        for a, b in ((60 * k + 59.6, 60 * k + 60.4), (60 * k + 20.0, 60 * k + 20.5)):
            on = (t >= a) & (t < b)
            x[on] += 12000 * np.sin(2 * np.pi * 3000 * t[on])
    pcm = np.clip(np.rint(x), -32768, 32767).astype("<i2")
    site = folder / "det"
    site.mkdir()
    t0 = datetime(2024, 5, 1)
    for k in range(minutes):
        _wav(site / f"SITE_{t0 + timedelta(minutes=k):%Y%m%d_%H%M%S}.wav",
             t0 + timedelta(minutes=k), pcm[k * MINUTE:(k + 1) * MINUTE].tobytes(), MINUTE)
    whole = folder / "det.wav"
    _wav(whole, t0, pcm.tobytes(), n)
    pipe = Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}])
    out = {}
    for w in sorted({1, workers}):
        a = run_detect(pipe, [str(site)], folder / f"dep{w}", format="raven", workers=w,
                       part_samples=7 * MINUTE // 2)
        b = run_detect(pipe, [str(whole)], folder / f"cat{w}", format="raven", workers=w,
                       part_samples=7 * MINUTE // 2)
        assert a.ok and b.ok, (a.text(), b.text())
        same = ((folder / f"dep{w}" / "det.selections.txt").read_bytes()
                == (folder / f"cat{w}" / "det.selections.txt").read_bytes())
        out[w] = {"deployment": a.detections, "concatenated": b.detections, "same_bytes": same,
                  "seconds": a.seconds}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=100.0)
    ap.add_argument("--quick", action="store_true", help="1 hour, 4 minutes of detection")
    ap.add_argument("--detect-minutes", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2, help="processes of the detect check")
    ap.add_argument("--folder", help="where to create the files (default: a temp folder)")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the table to PATH "
                         "(default docs/performance/data/bench_deployment_pyramid.json)")
    args = ap.parse_args()
    hours = 1.0 if args.quick else args.hours
    minutes = 4 if args.quick else args.detect_minutes

    with tempfile.TemporaryDirectory(dir=args.folder) as d, \
            tempfile.TemporaryDirectory() as cache:
        os.environ["SPECSCOPE_CACHE_DIR"] = cache
        from specscope.compute.deployment import open_deployment

        folder = Path(d) / "site"
        folder.mkdir()
        n_files, gaps = make_sparse(folder, hours)
        dep = open_deployment(folder)
        audio_s = dep.n_samples / RATE
        t_plain = plain_stft(dep)
        t_pyr, base, tiles = build_pyramid(dep, Path(cache) / "tiles")
        dep.close()
        det = detections(Path(d), minutes, args.workers)

    rt_pyr, rt_plain = audio_s / t_pyr, audio_s / t_plain
    print(f"{n_files} files of 1 min ({audio_s / 3600:.1f} h at {RATE} Hz), {gaps} gap(s); "
          f"nfft {NFFT}, hop {HOP}; pyramid from level {base} up, {tiles} tiles")
    print(f"{'step':<34}{'time':>10}{'x real time/core':>18}")
    rows = [("plain STFT of the same samples", t_plain, rt_plain),
            ("pyramid, built and stored", t_pyr, rt_pyr)]
    for name, t, rt in rows:
        print(f"{name:<34}{t:>8.2f} s{rt:>16.0f} x")
    print(f"pyramid / plain STFT time: {t_pyr / t_plain:.2f} (target: >= 500x real time per "
          "core)")
    for w, r in det.items():
        print(f"detections on {w} process(es): deployment {r['deployment']}, concatenated "
              f"{r['concatenated']}, same bytes: {r['same_bytes']}")
    ok = all(r["same_bytes"] and r["deployment"] == r["concatenated"] for r in det.values())
    if args.json is not None:
        columns = ["step", "time (s)", "x real time per core"]
        table = [dict(zip(columns, row, strict=True)) for row in rows]
        notes = [f"{audio_s / 3600:.1f} h of 48 kHz audio in {n_files} sparse one-minute WAV "
                 f"files, {gaps} gap(s); one thread",
                 f"pyramid / plain STFT time: {t_pyr / t_plain:.2f}"]
        notes += [f"detections ({w} process(es), {minutes} min): deployment "
                  f"{r['deployment']}, concatenated {r['concatenated']}, same bytes "
                  f"{r['same_bytes']}" for w, r in det.items()]
        _benchjson.record("bench_deployment_pyramid", _benchjson.command_line(__file__),
                          table, columns, notes, args.json or None)
    if not ok:
        sys.exit("the deployment's detections differ from the concatenated signal's")


if __name__ == "__main__":
    main()
