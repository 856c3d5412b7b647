"""Minute-level hybrid millidecade bands: specscope against PyPAM, and memory over a deployment.

Usage: ``python scripts/bench_levels.py [--minutes 10] [--files 1000] [--quick]
[--json [PATH]]``

Part 1, throughput: ``--minutes`` one-minute 16-bit WAV files of 48 kHz noise; minute
levels of hybrid millidecade bands (nfft = 48000, half overlap, Hann) by specscope
(``compute_levels``, in this process, one kernel thread, no cache) and by PyPAM
(``lifewatch-pypam`` in ``.venv-pypam``, built by ``scripts/pypam_venv``;
``AcuFile.hybrid_millidecade_bands``, one thread), the same files in the same run.
Printed: hours of audio per core-minute of each, the fastest of three runs (compute
only: PyPAM's time excludes its imports) and their ratio (the target: >= 10x PyPAM's), and the largest difference of
their levels in the bands above 10 Hz.

Part 2, memory: ``--files`` one-minute sparse files (a header, then a hole the file
system reads as zeros) as a deployment, their levels written to NetCDF in a child
process; its peak resident memory against the same for a tenth of the files
(flat: the rows go to the file as tasks end).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

os.environ.setdefault("SPECSCOPE_THREADS", "1")
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import _benchjson  # noqa: E402
import numpy as np  # noqa: E402
from bench_deployment_pyramid import RATE, _wav  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

#: runs of each tool; the fastest counts (the machine is shared)
REPEATS = 3

CHILD = """
import json, resource, sys
from specscope.compute.levels import SpectrumParams, write_levels
failed = write_levels(sys.argv[1], sys.argv[2], cache=False, bands="hmd",
                      params=SpectrumParams(interval=60))
print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "failed": len(failed)}))
"""


def noise_files(folder: Path, minutes: int) -> list[Path]:
    import soundfile as sf

    rng = np.random.default_rng(41)
    paths = []
    for k in range(minutes):
        p = folder / f"noise_{k:03d}.wav"
        sf.write(p, (rng.standard_normal(60 * RATE) * 3000).astype(np.int16), RATE,
                 subtype="PCM_16")
        paths.append(p)
    return paths


def ours(paths: list[Path]) -> tuple[float, list[np.ndarray]]:
    from specscope.compute.levels import SpectrumParams, compute_levels

    compute_levels(paths[0], cache=False)  # imports and the first call's set-up
    best = float("inf")
    for _ in range(REPEATS):
        levels = []
        t0 = time.perf_counter()
        for p in paths:
            levels.append(compute_levels(p, cache=False,
                                         params=SpectrumParams(interval=60)).db())
        best = min(best, time.perf_counter() - t0)
    return best, levels


def pypam(paths: list[Path], work: Path) -> tuple[float, list[np.ndarray]] | None:
    from reference.pypam import run_pypam, skip_reason

    if skip_reason() is not None:
        print(f"PyPAM: {skip_reason()}")
        return None
    best = float("inf")
    for k in range(REPEATS):
        res = run_pypam({"files": [str(p) for p in paths], "sample_rate": RATE, "nfft": RATE,
                         "overlap": 0.5, "window": "hann", "binsize": 60, "bands": "hmd"},
                        work / str(k))
        best = min(best, float(res["elapsed_s"]))
    rows = res["band_db"]
    return best, [rows[i:i + 1] for i in range(len(paths))]


def peak_rss(folder: Path, out: Path) -> dict:
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(out)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sparse_deployment(folder: Path, n: int) -> None:
    folder.mkdir()
    t0 = datetime(2024, 5, 1)
    for k in range(n):
        when = t0 + timedelta(minutes=k)
        _wav(folder / f"SITE_{when:%Y%m%d_%H%M%S}.wav", when, None, 60 * RATE)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=int, default=10)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="3 minutes, 100 files")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench_levels.json)")
    args = ap.parse_args()
    minutes = 3 if args.quick else args.minutes
    files = 100 if args.quick else args.files

    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as cache:
        os.environ["SPECSCOPE_CACHE_DIR"] = cache
        work = Path(d)
        (work / "noise").mkdir()
        paths = noise_files(work / "noise", minutes)
        t_ours, l_ours = ours(paths)
        theirs = pypam(paths, work / "ref")
        big, small = work / "big", work / "small"
        sparse_deployment(big, files)
        sparse_deployment(small, max(1, files // 10))
        mem_small = peak_rss(small, work / "small.nc")
        mem_big = peak_rss(big, work / "big.nc")

    hours = minutes / 60
    per_core = {"specscope": hours / (t_ours / 60)}
    rows = [{"tool": "specscope", "time (s)": t_ours,
             "audio per core-minute (h)": per_core["specscope"], "ratio (x)": None}]
    diff = None
    if theirs is not None:
        t_pp, l_pp = theirs
        per_core["PyPAM"] = hours / (t_pp / 60)
        rows[0]["ratio (x)"] = per_core["specscope"] / per_core["PyPAM"]
        rows.append({"tool": "PyPAM", "time (s)": t_pp,
                     "audio per core-minute (h)": per_core["PyPAM"], "ratio (x)": 1.0})
        from specscope.compute.levels import make_bands

        above = make_bands("hmd", RATE, RATE).centres > 10
        diff = max(float(np.max(np.abs(a[:, above] - b[:, above])))
                   for a, b in zip(l_ours, l_pp))
    print(f"{minutes} one-minute files of 48 kHz noise; minute HMD levels, nfft {RATE}, "
          "half overlap, Hann, one thread each")
    print(f"{'tool':<12}{'time':>10}{'h audio / core-min':>22}{'ratio':>9}")
    for r in rows:
        ratio = "" if r["ratio (x)"] is None else f"{r['ratio (x)']:.1f}x"
        print(f"{r['tool']:<12}{r['time (s)']:>8.2f} s{r['audio per core-minute (h)']:>22.1f}"
              f"{ratio:>9}")
    if diff is not None:
        print(f"largest level difference above 10 Hz: {diff:.2e} dB")
    mem_rows = [{"files": max(1, files // 10), "audio (h)": max(1, files // 10) / 60,
                 "peak memory (MiB)": mem_small["rss_mib"]},
                {"files": files, "audio (h)": files / 60, "peak memory (MiB)": mem_big["rss_mib"]}]
    print(f"{'files':>8}{'audio':>10}{'peak memory':>14}")
    for r in mem_rows:
        print(f"{r['files']:>8}{r['audio (h)']:>8.1f} h{r['peak memory (MiB)']:>10.0f} MiB")
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json is not None:
        notes = [f"{minutes} one-minute 16-bit WAV files of 48 kHz noise; one thread each; "
                 f"the fastest of {REPEATS} runs of each; PyPAM's time excludes its imports"]
        if diff is not None:
            notes.append(f"largest level difference above 10 Hz: {diff:.2e} dB")
        notes.append(f"memory: levels of a deployment of sparse one-minute files written to "
                     f"NetCDF in a child process (this process peaked at {self_rss:.0f} MiB)")
        _benchjson.record("bench_levels", _benchjson.command_line(__file__),
                          {"throughput": rows, "memory": mem_rows},
                          {"throughput": ["tool", "time (s)", "audio per core-minute (h)",
                                          "ratio (x)"],
                           "memory": ["files", "audio (h)", "peak memory (MiB)"]},
                          notes, args.json or None)


if __name__ == "__main__":
    main()
