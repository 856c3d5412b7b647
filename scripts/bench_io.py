"""Open time and window reads for a 10 MB and a 10 GB recording.

Usage: ``python scripts/bench_io.py [--folder DIR] [--big-gb 10]``

Files (removed afterwards):

* ``small.cf32``: 10 MB of random complex64 samples, written normally;
* ``big.cf32``: 10 GB of complex64 samples created *sparse*: the file is
  opened and ``truncate()``-d to its size, so the file system records a hole
  and no data block is written (it costs no disk space or time; reads of the
  hole return zeros from the kernel, like cached pages).  The same trick
  gives a sparse RF64: write the header with soundfile, then extend the file
  with ``truncate``; a raw file needs no header, so it is used here.

Printed: the median wall time of ``specscope info FILE`` in a fresh process
(interpreter start included), of ``open_recording`` + ``info()`` in this
process, and of reading a 1-second window (1 MS/s, 8 MB) at random places.
The point is the ratio big/small, which should be about 1.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _benchjson
import numpy as np

FS = 1_000_000


def _median(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", help="where to create the files (default: a temp folder)")
    ap.add_argument("--big-gb", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the table to PATH "
                         "(default docs/performance/data/bench_io.json)")
    args = ap.parse_args()

    from specscope.compute import open_recording

    with tempfile.TemporaryDirectory(dir=args.folder) as d:
        small, big = Path(d) / "small.cf32", Path(d) / "big.cf32"
        rng = np.random.default_rng(0)
        n_small = 10_000_000 // 8
        (rng.standard_normal(2 * n_small).astype(np.float32)).tofile(small)
        with open(big, "wb") as fh:
            fh.truncate(int(args.big_gb * 1e9) // 8 * 8)
        opts = {"sample_rate": FS, "dtype": "cf32"}
        rows = []
        for path in (small, big):
            size = path.stat().st_size

            def cli(path=path) -> None:
                subprocess.run([sys.executable, "-m", "specscope.app", "info", str(path),
                                "--sample-rate", str(FS), "--json"], check=True,
                               capture_output=True)

            def opened(path=path) -> None:
                with open_recording(path, **opts) as rec:
                    rec.info()

            with open_recording(path, **opts) as rec:
                n = rec.n_samples
                starts = rng.integers(0, n - FS, 20)
                it = iter(starts)

                def window(rec=rec, it=it) -> None:
                    a = int(next(it))
                    rec.read(a, a + FS)

                t_win = _median(window, min(20, len(starts)))
            rows.append((path.name, size, _median(cli, args.repeat),
                         _median(opened, args.repeat * 4), t_win))
        print(f"{'file':<12}{'size':>12}{'specscope info':>16}{'open+info':>12}"
              f"{'1 s window':>12}")
        for name, size, t_cli, t_open, t_win in rows:
            print(f"{name:<12}{size / 1e9:>10.3f} GB{t_cli * 1e3:>13.0f} ms"
                  f"{t_open * 1e3:>9.2f} ms{t_win * 1e3:>9.2f} ms")
        (_, _, c0, o0, w0), (_, _, c1, o1, w1) = rows
        print(f"ratio big/small: info {c1 / c0:.2f}, open {o1 / o0:.2f}, window {w1 / w0:.2f}")
        if args.json is not None:
            columns = ["file", "size (GB)", "specscope info (s)", "open + info (s)",
                       "1 s window (s)"]
            table = [dict(zip(columns, (name, size / 1e9, *times), strict=True))
                     for name, size, *times in rows]
            _benchjson.record("bench_io", _benchjson.command_line(__file__), table, columns,
                              [f"raw cf32 at {FS} samples/s; the large file is sparse; a 1 s "
                               f"window is {FS} samples ({FS * 8 // 10**6} MB)",
                               f"ratio big/small: info {c1 / c0:.2f}, open {o1 / o0:.2f}, "
                               f"window {w1 / w0:.2f}"], args.json or None)


if __name__ == "__main__":
    main()
