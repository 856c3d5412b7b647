"""Indexing a deployment: N one-minute WAV files with BWF bext times, cold and cached.

Usage: ``python scripts/bench_deployment.py [--files 10000] [--hours 1000] [--quick]
[--folder DIR] [--json [PATH]]``

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

Then the view of a long deployment: ``--hours`` one-hour sparse files (an hour left out
after every 50th: a gap), indexed once.  Timed: opening the indexed deployment and the
first image of its whole span at 1600 columns from a ``TileEngine`` with a disk cache,
its modules loaded before (as the app's window has them when a folder is opened)
(``render_progressive``'s first image, what the window shows first; the exact image,
which needs every frame, is not waited for), and 40 zoom/pan views within two hours of
it (spans from 2 h down to 1 s) once the pyramid holds their levels: the views rendered
once to compute their tiles, then timed again (no frame computed twice; median and 95th
percentile; the targets: 1 s and a 100 ms median).
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
import numpy as np

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


def make_hours(folder: Path, hours: int) -> int:
    """Write ``hours`` sparse one-hour WAVs, an hour left out after every 50th; returns
    the number of gaps."""
    t0 = datetime(2024, 5, 1)
    data_bytes = 3600 * RATE * 2
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)
    gaps = 0
    for k in range(hours):
        gaps = k // 50
        when = t0 + timedelta(hours=k + gaps)
        bext = _bext(when)
        body = (b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
                + b"bext" + struct.pack("<I", len(bext)) + bext
                + b"data" + struct.pack("<I", data_bytes))
        with open(folder / f"SITE_{when:%Y%m%d_%H%M%S}.wav", "wb") as fh:
            fh.write(b"RIFF" + struct.pack("<I", len(body) - 4 + data_bytes + 4) + body)
            fh.truncate(len(body) + 8 + data_bytes)
    return (hours - 1) // 50


def _views(t_mid: float, n: int = 40) -> list[tuple[float, float]]:
    """Zooms (2 h down to 1 s) and pans around ``t_mid``: a scripted exploration."""
    rng = np.random.default_rng(40)
    out = []
    for span in np.geomspace(7200.0, 1.0, n // 2):
        c = t_mid + rng.uniform(-0.3, 0.3) * min(span, 3600.0)
        out += [(c - span / 2, c + span / 2), (c - span / 5, c + span * 4 / 5)]  # a pan
    return out


def view_figures(folder: Path, hours: int, cache: Path) -> tuple[list[tuple], str]:
    """Open an indexed deployment of ``hours`` one-hour files: the first whole-span image,
    and zoom/pan updates once the pyramid holds their levels."""
    from specscope.compute.deployment import index_deployment, open_deployment
    from specscope.compute.errors import Cancelled
    from specscope.compute.view.tiles import TileEngine, render_progressive

    gaps = make_hours(folder, hours)
    index_deployment(folder)  # indexed before
    # the window functions' module, which the app's window has loaded before a folder is
    # opened (the command line loads it only where a command needs it): not timed here
    import scipy.signal  # noqa: F401
    tiles = cache / "view-tiles"
    t0 = time.perf_counter()
    dep = open_deployment(folder)
    t_open = time.perf_counter() - t0
    eng = TileEngine(dep, nfft=1024, hop=256, disk_cache=tiles)
    first: list[float] = []
    try:
        render_progressive(eng, 0.0, eng.duration, 1600,
                           partial=lambda im: first.append(time.perf_counter()),
                           cancelled=lambda: bool(first))
    except Cancelled:
        pass
    t_first = first[0] - t0
    assert len(dep.files) == hours and len(dep.gaps) == gaps
    views = _views(eng.duration / 2)
    for a, b in views:  # the pyramid's levels of these views, computed and kept
        render_progressive(eng, a, b, 1600)
    frames = eng.frames_computed
    steps = []
    for a, b in views:
        s0 = time.perf_counter()
        render_progressive(eng, a, b, 1600)
        steps.append(time.perf_counter() - s0)
    assert eng.frames_computed == frames, "a view computed frames the pyramid held"
    eng.close()
    dep.close()
    rows = [("open + first whole-span image", t_first, 1.0),
            ("zoom/pan update, median", statistics.median(steps), 0.1),
            ("zoom/pan update, 95th pct", float(np.percentile(steps, 95)), None)]
    note = (f"view: {hours} one-hour sparse 48 kHz WAV files ({hours} h, {gaps} gaps of 1 h), "
            f"indexed before; opening {t_open * 1e3:.0f} ms of the first image's time; "
            f"{len(views)} views of 2 h to 1 s at 1600 columns, nfft 1024, hop 256, "
            "rendered once to compute their tiles, then timed (no frame computed again)")
    return rows, note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--hours", type=int, default=1000,
                    help="one-hour files of the view figures")
    ap.add_argument("--quick", action="store_true", help="500 files, 100 hours")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the cached index and info")
    ap.add_argument("--folder", help="where to create the files (default: a temp folder)")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the table to PATH "
                         "(default docs/performance/data/bench_deployment.json)")
    args = ap.parse_args()
    n = 500 if args.quick else args.files
    view_hours = 100 if args.quick else args.hours

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
        long = Path(d) / "long"
        long.mkdir()
        view_rows, view_note = view_figures(long, view_hours, Path(cache))

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
    print(view_note)
    for name, t, goal in view_rows:
        print(f"{name:<32}{t * 1e3:>8.1f} ms" + (f"  (target {goal * 1e3:.0f} ms)"
                                                  if goal else ""))
    if args.json is not None:
        columns = ["step", "time (s)", "per file (us)", "target (s)"]
        table = [dict(zip(columns, (name, t, t / n * 1e6, goal), strict=True))
                 for name, t, goal in rows]
        view_columns = ["view", "time (ms)", "target (ms)"]
        view_table = [dict(zip(view_columns, (name, t * 1e3, goal and goal * 1e3),
                               strict=True)) for name, t, goal in view_rows]
        _benchjson.record("bench_deployment", _benchjson.command_line(__file__),
                          {"Indexing": table, f"Viewing {view_hours} hours": view_table},
                          {"Indexing": columns, f"Viewing {view_hours} hours": view_columns},
                          [f"index: {n} sparse one-minute 48 kHz WAV files with bext "
                                 f"times, {gaps} gaps; targets scaled from 10,000 files "
                                 "(info: 2 s at any size)",
                                 f"ratio cold/cached: {t_cold / t_cached:.1f}", view_note],
                          args.json or None)


if __name__ == "__main__":
    main()
