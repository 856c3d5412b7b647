"""Benchmark of the pipeline runner: throughput, speed-up with workers, peak memory.

Runs ``assets/pipelines/hum_bandpass.json`` (comb notch, band-pass, spectrogram)

1. over a batch of generated 48 kHz recordings with 1 worker (in process),
   2 worker processes, and a Dask LocalCluster of 2 workers: throughput and
   speed-up against the 1-worker run measured in the same session;
2. over one recording larger than the memory the run is allowed: a child
   process caps its address space (``RLIMIT_AS``) at what it uses after
   start-up plus ``--limit-mb``, then processes the recording; peak RSS is
   reported for the recording and for one a quarter of its size.

With ``--dask ADDRESS`` the batch also runs on a separately started cluster
(``dask scheduler`` and ``dask worker ADDRESS --nworkers 1 --nthreads 1``
processes); ``--dask spawn`` starts one of 2 workers for the run (cold, then
measured warm).  ``--dask-overhead`` prints where a Dask run's time goes
(worker start, imports, operator loading, scheduling round trip, task and
result sizes, compute) for 2 short recordings against the in-process run.

Usage: ``python scripts/bench_pipeline.py [--quick] [--dask ADDRESS|spawn] [--dask-overhead]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _benchjson
import numpy as np
import soundfile

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "assets" / "pipelines" / "hum_bandpass.json"
FS = 48000


def make_recording(path: Path, seconds: float, seed: int, block: int = 1 << 22) -> int:
    """A float32 WAV of noise plus mains hum, written in blocks (bounded memory)."""
    n = int(seconds * FS)
    rng = np.random.default_rng(seed)
    with soundfile.SoundFile(path, "w", FS, 1, subtype="FLOAT") as f:
        for i in range(0, n, block):
            k = min(block, n - i)
            t = (i + np.arange(k)) / FS
            x = 0.3 * np.sin(2 * np.pi * 50 * t) + 0.05 * rng.standard_normal(k)
            f.write(x.astype(np.float32))
    return n


def batch(inputs: list[Path], out: Path, **kw) -> tuple[float, bool]:
    from specscope.compute.batch import run_batch
    from specscope.compute.pipeline import Pipeline

    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    s = run_batch(Pipeline.load(PIPELINE), inputs, out, **kw)
    return time.perf_counter() - t0, s.ok


_CHILD = r"""
import json, os, resource, sys, time
from specscope.compute.pipeline import Pipeline
from specscope.compute.batch import run_batch
import h5py, scipy.signal, soundfile  # everything imported before the cap
def vm_kib(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
base_rss = vm_kib("VmRSS:") / 1024
limit = int(sys.argv[3]) * 2**20
if limit:
    base = vm_kib("VmSize:") * 1024
    resource.setrlimit(resource.RLIMIT_AS, (base + limit, base + limit))
t0 = time.perf_counter()
s = run_batch(Pipeline.load(sys.argv[4]), [sys.argv[1]], sys.argv[2], workers=1,
              task_samples=0, chunk_samples=1 << 18)
print(json.dumps({"ok": s.ok, "error": s.results[0].error, "seconds": time.perf_counter() - t0,
                  "peak_rss_mib": vm_kib("VmHWM:") / 1024, "base_rss_mib": base_rss}))
"""


def limited_run(path: Path, out: Path, limit_mb: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(out), str(limit_mb),
                        str(PIPELINE)], check=False, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return {"ok": False, "error": r.stderr.strip().splitlines()[-1:], "seconds": 0,
                "peak_rss_mib": float("nan"), "base_rss_mib": float("nan")}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _spawn_cluster(preload: str | None = None):
    sys.path.insert(0, str(ROOT / "tests"))
    from _dask_cluster import Cluster

    return Cluster(2, preload=preload)


def dask_overhead(address: str | None, work: Path) -> None:
    """Where the time of a Dask run of 2 short recordings goes, against the in-process run."""
    from distributed import Client
    from specscope.compute.batch import run_batch
    from specscope.compute.batch.cluster import warm
    from specscope.compute.pipeline import Pipeline

    inputs = [work / f"short{i}.wav" for i in range(2)]
    for i, p in enumerate(inputs):
        make_recording(p, 20.0, 50 + i)
    print(f"\ndask overhead: 2 recordings x 20 s, pipeline {PIPELINE.name}")
    t_in, _ = batch(inputs, work / "oi", workers=1)
    t_in2, _ = batch(inputs, work / "oi", workers=1)
    t_in = min(t_in, t_in2)
    print(f"  in process                                 {t_in:7.2f} s")
    cluster = None
    t0 = time.perf_counter()
    if address in (None, "spawn"):
        cluster = _spawn_cluster()
        address = cluster.address
        print(f"  cluster start (scheduler + 2 workers registered) {time.perf_counter() - t0:7.2f} s")
    try:
        t0 = time.perf_counter()
        client = Client(address, timeout=30)
        print(f"  client connect                             {time.perf_counter() - t0:7.2f} s")
        t0 = time.perf_counter()
        client.run(os.getpid)
        t_rt = time.perf_counter() - t0
        print(f"  first call on the workers (no import)      {t_rt:7.2f} s")
        t0 = time.perf_counter()
        first = client.run(warm, "specscope.compute.batch.process")
        t_warm = time.perf_counter() - t0
        imp = max(v["import_s"] for v in first.values())
        ops = max(v["operators_s"] for v in first.values())
        print(f"  first warm-up on the workers (wall)        {t_warm:7.2f} s  "
              f"(specscope's package {t_warm - imp - ops:.2f} s, batch and lazy imports "
              f"{imp:.2f} s, operators {ops:.2f} s)")
        t0 = time.perf_counter()
        client.run(warm, "specscope.compute.batch.process")
        print(f"  warm-up again (already warm)               {time.perf_counter() - t0:7.3f} s")
        t0 = time.perf_counter()
        for i in range(20):
            client.submit(int, i, pure=False).result()
        print(f"  task round trip (no-op, mean of 20)        "
              f"{(time.perf_counter() - t0) / 20 * 1e3:7.1f} ms")
        client.close()
        p = Pipeline.load(PIPELINE)
        rows = []
        for _ in range(3):
            shutil.rmtree(work / "od", ignore_errors=True)
            t0 = time.perf_counter()
            s = run_batch(p, inputs, work / "od", dask=address)
            wall = time.perf_counter() - t0
            rows.append((wall, s.setup_seconds, max(r.seconds for r in s.results), s.text()))
        c = s.cluster
        print(f"  largest task / result sent                 {c['largest_task_bytes']:7d} B / "
              f"{c['largest_result_bytes']} B (paths travel, never samples)")
        for k, (wall, setup, task, _text) in enumerate(rows):
            print(f"  dask run {k + 1}: {wall:6.2f} s = setup {setup:5.2f} s + slowest input's "
                  f"compute {task:5.2f} s + rest {wall - setup - task:5.2f} s")
        best = min(r[0] for r in rows[1:])
        print(f"  warm dask run - in process: {best - t_in:+.2f} s "
              f"({'within' if best - t_in <= 2.0 else 'OVER'} the 2 s goal)")
        print(f"  summary: {rows[-1][3].splitlines()[-1]}")
    finally:
        if cluster is not None:
            cluster.close()
    if cluster is not None:  # workers that warm as they start: the first run is a warm one
        with _spawn_cluster(preload="specscope.compute.batch.cluster") as pre:
            shutil.rmtree(work / "od", ignore_errors=True)
            t0 = time.perf_counter()
            s = run_batch(Pipeline.load(PIPELINE), inputs, work / "od", dask=pre.address)
            t = time.perf_counter() - t0
            print(f"  first run on workers started with --preload specscope.compute.batch.cluster: "
                  f"{t:.2f} s (setup {s.setup_seconds:.2f} s; {t - t_in:+.2f} s against in process)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    ap.add_argument("--limit-mb", type=int, default=None,
                    help="memory the large run may use beyond start-up (MiB)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--dask", metavar="ADDRESS",
                    help="also run the batch on this running scheduler ('spawn': start one)")
    ap.add_argument("--dask-overhead", action="store_true",
                    help="only the overhead breakdown of a Dask run (on --dask or a spawned "
                         "cluster)")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory part")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench_pipeline.json)")
    args = ap.parse_args()
    if args.json is not None and args.dask_overhead:
        ap.error("--json records the batch and memory tables, not --dask-overhead")
    tables: dict[str, list[dict]] = {}
    columns: dict[str, list[str]] = {}
    notes: list[str] = []
    n_files, seconds = (4, 60.0) if args.quick else (8, 300.0)
    big_seconds = 700.0 if args.quick else 2800.0  # 128 MiB / 512 MiB of float32
    limit = args.limit_mb or (96 if args.quick else 192)
    work = Path(tempfile.mkdtemp(prefix="specscope-bench-"))
    print(f"specscope pipeline benchmark ({'quick' if args.quick else 'full'}), "
          f"{os.cpu_count()} CPUs, pipeline {PIPELINE.name}")
    try:
        if args.dask_overhead:
            dask_overhead(args.dask, work)
            return 0
        inputs = [work / f"rec{i}.wav" for i in range(n_files)]
        total = sum(make_recording(p, seconds, i) for i, p in enumerate(inputs))
        mb = total * 4 / 2**20
        title = (f"Batch: {n_files} recordings x {seconds:g} s at {FS} Hz "
                 f"({total / 1e6:.1f} Msamples, {mb:.0f} MiB)")
        print(f"\nbatch: {n_files} recordings x {seconds:g} s at {FS} Hz "
              f"({total / 1e6:.1f} Msamples, {mb:.0f} MiB)")
        columns[title] = ["run", "time (s)", "throughput (Msamples/s)", "throughput (MiB/s)",
                          "real time (x)", "speed-up (x)", "ok"]
        tables[title] = []
        rows = []
        t1, ok = batch(inputs, work / "o1", workers=1)
        rows.append(("1 worker (in process)", t1, ok))
        t2, ok = batch(inputs, work / "o2", workers=2)
        rows.append(("2 worker processes", t2, ok))
        try:
            import distributed  # noqa: F401
            td, ok = batch(inputs, work / "od", workers=2, dask="local")
            rows.append(("dask LocalCluster, 2 workers", td, ok))
        except ImportError:
            print("  (dask.distributed not installed: skipped --dask local)")
        if args.dask:
            cluster = _spawn_cluster() if args.dask == "spawn" else None
            address = cluster.address if cluster is not None else args.dask
            try:
                if cluster is not None:  # a cold cluster: its first run warms it
                    batch(inputs[:1], work / "ow", dask=address)
                te, ok = batch(inputs, work / "oe", dask=address)
                rows.append(("dask external, 2 workers", te, ok))
            finally:
                if cluster is not None:
                    cluster.close()
        print(f"  {'run':<30} {'seconds':>8} {'Msamples/s':>11} {'MiB/s':>7} "
              f"{'x realtime':>10} {'speed-up':>8}")
        for name, t, ok in rows:
            print(f"  {name:<30} {t:8.2f} {total / t / 1e6:11.2f} {mb / t:7.1f} "
                  f"{total / FS / t:10.0f} {t1 / t:8.2f}" + ("" if ok else "  FAILED"))
            tables[title].append(dict(zip(columns[title], (
                name, t, total / t / 1e6, mb / t, total / FS / t, t1 / t, ok), strict=True)))
        named = {n: t for n, t, _ in rows}
        if "dask external, 2 workers" in named:
            ratio = named["dask external, 2 workers"] / named["2 worker processes"]
            print(f"  external cluster / 2-process pool: {ratio:.2f}x "
                  f"({'within' if ratio <= 1.25 else 'OVER'} the 1.25x goal)")
            notes.append(f"external cluster / 2-process pool: {ratio:.2f}x")
        for o in ("o1", "o2", "od", "oe", "ow"):
            shutil.rmtree(work / o, ignore_errors=True)

        if args.no_memory:
            return _record(args, tables, columns, notes)
        big = work / "big.wav"
        quarter = work / "quarter.wav"
        nb = make_recording(big, big_seconds, 99)
        nq = make_recording(quarter, big_seconds / 4, 98)
        print(f"\nmemory: chunks of {1 << 18} samples; one recording of {nb * 4 / 2**20:.0f} MiB "
              f"({big_seconds:g} s), run allowed {limit} MiB beyond start-up (RLIMIT_AS)")
        title = (f"Memory: one recording of {nb * 4 / 2**20:.0f} MiB in chunks of {1 << 18} "
                 f"samples, the run allowed {limit} MiB beyond start-up (RLIMIT_AS)")
        columns[title] = ["run", "recording (MiB)", "peak RSS (MiB)", "start-up RSS (MiB)",
                          "time (s)", "throughput (Msamples/s)", "state"]
        tables[title] = []
        for name, path, n in (("quarter size, no limit", quarter, nq),
                              ("full size, no limit", big, nb),
                              (f"full size, limit {limit} MiB", big, nb)):
            lim = limit if "limit " in name else 0
            r = limited_run(path, work / "ob", lim)
            state = "ok" if r["ok"] else f"FAILED: {r['error']}"
            rate = n / r["seconds"] / 1e6 if r["seconds"] else float("nan")
            print(f"  {name:<26} {n * 4 / 2**20:6.0f} MiB in  peak RSS "
                  f"{r['peak_rss_mib']:5.0f} MiB (start-up {r['base_rss_mib']:.0f} MiB)  "
                  f"{r['seconds']:6.1f} s  {rate:5.2f} Msamples/s  {state}")
            tables[title].append(dict(zip(columns[title], (
                name, n * 4 / 2**20, r["peak_rss_mib"], r["base_rss_mib"], r["seconds"], rate,
                state), strict=True)))
            shutil.rmtree(work / "ob", ignore_errors=True)
    finally:
        if args.keep:
            print(f"\nfiles kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return _record(args, tables, columns, notes)


def _record(args: argparse.Namespace, tables: dict, columns: dict, notes: list[str]) -> int:
    """Write the tables printed to the ``--json`` file, when asked for."""
    if args.json is not None and tables:
        _benchjson.record("bench_pipeline", _benchjson.command_line(__file__), tables,
                          columns, notes, args.json or None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
