"""Indexing a deployment: N one-minute WAV files with BWF bext times, cold and cached.

Usage: ``python scripts/bench_deployment.py [--files 10000] [--quick] [--folder DIR]
[--json [PATH]]``

The files (removed afterwards) are 48 kHz 16-bit mono WAVs of one minute each, named
``SITE_YYYYMMDD_HHMMSS.wav``, each with a ``bext`` chunk stating its start; every tenth
hour a file is missing (a gap).  Each file is written *sparse*: its header is written
and the file is ``truncate()``-d to its full size (5.76 MB), so the file system records a
hole and the run costs no disk space (the index reads headers only; reads of the hole
return zeros).

Printed: the wall time of indexing with an empty header cache ("cold": headers read,
the file system's own cache warm from writing them), indexing again (the cache reused:
no header read), and ``specscope info FOLDER`` in a fresh process with the cache warm
(interpreter start included).  The targets of 10,000 files are 10 s cold, 1 s cached
and 2 s for ``info``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import _benchjson

RATE = 48_000
MINUTE = 60 * RATE


def _bext(when: datetime) -> bytes:
    b = bytearray(602)
    b[320:330] = when.strftime("%Y-%m-%d").encode()
    b[330:338] = when.strftime("%H:%M:%S").encode()
    b[346:348] = struct.pack("<H", 1)
    return bytes(b)


def make_files(folder: Path, n: int) -> int:
    """Write ``n`` sparse one-minute WAVs; returns the number of gaps."""
    t0 = datetime(2024, 5, 1)
    data_bytes = MINUTE * 2
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)
    k = gaps = 0
    minute = 0
    while k < n:
        when = t0 + timedelta(minutes=minute)
        minute += 1
        if minute % 600 == 300:  # one minute left out every ten hours
            gaps += 1
            continue
        bext = _bext(when)
        body = (b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
                + b"bext" + struct.pack("<I", len(bext)) + bext
                + b"data" + struct.pack("<I", data_bytes))
        path = folder / f"SITE_{when:%Y%m%d_%H%M%S}.wav"
        with open(path, "wb") as fh:
            fh.write(b"RIFF" + struct.pack("<I", len(body) - 4 + data_bytes + 4) + body)
            fh.truncate(len(body) + 8 + data_bytes)
        k += 1
    return gaps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--quick", action="store_true", help="500 files")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the cached index and info")
    ap.add_argument("--folder", help="where to create the files (default: a temp folder)")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the table to PATH "
                         "(default docs/performance/data/bench_deployment.json)")
    args = ap.parse_args()
    n = 500 if args.quick else args.files

    with tempfile.TemporaryDirectory(dir=args.folder) as d, \
            tempfile.TemporaryDirectory() as cache:
        os.environ["SPECSCOPE_CACHE_DIR"] = cache
        from specscope.compute.deployment import index_deployment

        folder = Path(d) / "site"
        folder.mkdir()
        t0 = time.perf_counter()
        gaps = make_files(folder, n)
        t_make = time.perf_counter() - t0

        t0 = time.perf_counter()
        cold = index_deployment(folder)
        t_cold = time.perf_counter() - t0
        assert cold.headers_read == n and len(cold.used) == n and len(cold.gaps) == gaps

        cached = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ix = index_deployment(folder)
            cached.append(time.perf_counter() - t0)
            assert ix.headers_read == 0
        t_cached = statistics.median(cached)

        infos = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "specscope.app", "info", str(folder)],
                           check=True, capture_output=True, env=dict(os.environ))
            infos.append(time.perf_counter() - t0)
        t_info = statistics.median(infos)

    hours = n / 60
    print(f"{n} files of 1 min ({hours:.0f} h at {RATE} Hz), {gaps} gaps; "
          f"written in {t_make:.1f} s")
    print(f"{'step':<28}{'time':>10}{'per file':>12}{'target':>10}")
    target = n / 10_000
    rows = [("index, cold (headers read)", t_cold, 10 * target),
            ("index, cached", t_cached, 1 * target),
            ("specscope info FOLDER", t_info, 2.0)]
    for name, t, goal in rows:
        print(f"{name:<28}{t:>8.2f} s{t / n * 1e6:>9.0f} us{goal:>8.1f} s")
    print(f"ratio cold/cached: {t_cold / t_cached:.1f}")
    if args.json is not None:
        columns = ["step", "time (s)", "per file (us)", "target (s)"]
        table = [dict(zip(columns, (name, t, t / n * 1e6, goal), strict=True))
                 for name, t, goal in rows]
        _benchjson.record("bench_deployment", _benchjson.command_line(__file__), table,
                          columns, [f"{n} sparse one-minute 48 kHz WAV files with bext times, "
                                    f"{gaps} gaps; targets scaled from 10,000 files "
                                    "(info: 2 s at any size)",
                                    f"ratio cold/cached: {t_cold / t_cached:.1f}"],
                          args.json or None)


if __name__ == "__main__":
    main()
