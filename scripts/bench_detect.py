"""Benchmark of the detectors on a generated survey recording with known calls.

Generates a recording (1 hour at 48 kHz by default) with 300 calls (chirps and
tonal whistles, 20-400 ms; 60 of them copies of one template call) at SNRs of
0-20 dB in pink noise whose level drifts by +-3 dB, with 50 Hz hum and its
harmonics (:mod:`specscope.compute.detect.synth`), writes it to a temporary
float WAV and opens it with the normal reader.  Then, in a fresh process,
runs through the public :func:`specscope.compute.detect.detect`:

- the band-limited energy detector (band 2.5-12.5 kHz, SNR threshold 4 dB);
- template matching with the box of the loudest template copy (threshold 0.5);

each twice (the first call of the process, then warm), and two peers in the
same process: reading the file in the same chunks, and the STFT power of the
whole recording at the detectors' nfft/hop (the ``stft_power`` kernel).

Prints recall per SNR band, false detections (overlapping no call) and
duplicates (fragments of a call found already), edge errors at >= 10 dB, the
energy detections' own bands against the bands the calls are drawn in at
>= 6 dB (each edge's error in STFT bins) and the run times, with their ratios to the peers.  The SNR of a call is its mean
power over the noise power in the 2.5-12.5 kHz band at its time.

Then the executors (``--executors``, on by default): the corpus command's
:func:`specscope.compute.batch.detect.run_detect` over the recording with
each detector, in this process without parts (``part_samples=0``), in this
process with parts (the default ``part_samples``: the one recording as
parts), on a pool of 2 processes and on a real Dask cluster of a scheduler
and 2 worker processes (``tests/_dask_cluster.py``), in rounds of every
executor in turn (the median of the rounds after the first, which warms
the workers), with the ratios to the in-process run and whether every
executor wrote the same table bytes.  The load average is printed with
the times: the figures only mean something against peers of the same run.

Usage: ``python scripts/bench_detect.py [--duration S] [--calls N] [--copies N]
[--seed N] [--keep DIR] [--no-executors] [--runs N] [--kernel-threads N]``.
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

BANDS = ((0, 3), (3, 6), (6, 10), (10, 15), (15, 20.01))
ENERGY = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0}
CHUNK = 1 << 20
#: what --json records: the tables printed, by title, and their columns
TABLES: dict[str, list[dict]] = {}
COLUMNS = {
    "Detections": ["detector", "detections", "calls", "false", "duplicates",
                   "recall >= 6 dB (%)", "recall >= 3 dB (%)",
                   "start edge at >= 10 dB, 95 % (ms)", "stop edge at >= 10 dB, 95 % (ms)"],
    "Recall by SNR band": ["detector", "SNR band (dB)", "calls", "found", "recall (%)"],
    "Times in a fresh process": ["detector", "first call (s)", "warm (s)", "real time (x)",
                                 "warm / reading the file (x)", "warm / STFT (x)"],
    "Executors": ["detector", "executor", "tasks", "first (s)", "warm (s)",
                  "/ in process, whole (x)", "/ in process, parts (x)", "same table bytes"],
}


def child(path: str, template: dict, out: str) -> None:
    """Time the detectors in this (fresh) process; write events and times to ``out``."""
    t_import = time.perf_counter()
    from specscope.compute import open_recording, operators
    from specscope.compute.detect import detect
    t_import = time.perf_counter() - t_import
    rec = open_recording(path)
    times: dict[str, float] = {"import": t_import}
    found = {}
    for name, params in (("energy", ENERGY), ("template", template)):
        for run in ("first", "warm"):
            t = time.perf_counter()
            ev = detect(rec, name, params, chunk=CHUNK)
            times[f"{name}_{run}"] = time.perf_counter() - t
        found[name] = ev
    t = time.perf_counter()
    for a in range(0, rec.n_samples, CHUNK):
        rec.read(a, a + CHUNK)
    times["read"] = time.perf_counter() - t
    t = time.perf_counter()
    for a in range(0, rec.n_samples, CHUNK):
        x = rec.read(a, a + CHUNK + 256)[:, 0]
        operators.call("stft_power", x, fs=rec.sample_rate, nfft=512, hop=256,
                       scaling="spectrum", backend="numpy")
    times["stft"] = time.perf_counter() - t
    np.savez(out, **{f"{k}_{c}": getattr(ev, c) for k, ev in found.items()
                     for c in ("start_sample", "stop_sample", "score", "low_hz", "high_hz")},
             times=json.dumps(times))


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _row(table: str, *values) -> None:
    TABLES.setdefault(table, []).append(dict(zip(COLUMNS[table], values, strict=True)))


def executors(path: Path, template: dict, folder: Path, runs: int) -> None:
    """The corpus command over the recording on each executor: times, ratios, same bytes."""
    from specscope.compute.batch import run_detect
    from specscope.compute.pipeline import Pipeline

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from _dask_cluster import Cluster

    pipes = {"energy": Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}]),
             "template": Pipeline.from_steps([{"op": "detect.template",
                                               "params": template}])}
    threads = os.environ.get("SPECSCOPE_THREADS", "")
    preload = None
    if threads:  # the Dask workers start without SPECSCOPE_*: a preload file sets it there
        preload = folder / "kernel_threads.py"
        preload.write_text(f"import os\nos.environ['SPECSCOPE_THREADS'] = {threads!r}\n")
    print(f"\nexecutors: run_detect over the {path.stat().st_size / 2**20:.0f} MiB recording, "
          f"kernel threads per process: {threads or 'all cores'} (load before: {_load()})")
    with Cluster(2, root=folder / "cluster", preload=preload and str(preload)) as cluster:
        configs = (("in process, whole", {"part_samples": 0}),
                   ("in process, parts", {}),
                   ("2 processes", {"workers": 2}),
                   ("dask, 2 workers", {"dask": cluster.address}))
        for name, pipe in pipes.items():
            # rounds of every executor in turn, so a change of load hits them alike
            times: dict[str, list[float]] = {label: [] for label, _ in configs}
            loads: list[str] = []
            tables: dict[tuple[str, int], bytes] = {}
            parts: dict[str, int] = {}
            for i in range(runs):
                for label, kw in configs:
                    out = folder / f"{name}-{label.replace(' ', '').replace(',', '-')}-{i}"
                    t = time.perf_counter()
                    r = run_detect(pipe, [path], out, **kw).results[0]
                    times[label].append(time.perf_counter() - t)
                    if not r.ok:
                        raise SystemExit(f"{label}: {r.error}")
                    parts[label] = r.parts
                    tables[label, i] = (out / "survey.selections.txt").read_bytes()
                    shutil.rmtree(out, ignore_errors=True)
                loads.append(_load())
            # the first round warms the Dask workers; the median of the others
            warm = {k: float(np.median(v[1:] if len(v) > 1 else v)) for k, v in times.items()}
            ref = warm["in process, whole"]
            for label, _ in configs:
                print(f"  {name:8s} {label:18s} {parts[label]:2d} task(s)  first "
                      f"{times[label][0]:6.2f} s  warm (median of {max(1, runs - 1)}) "
                      f"{warm[label]:6.2f} s  / in process whole {warm[label] / ref:5.2f}  "
                      f"/ in process parts {warm[label] / warm['in process, parts']:5.2f}")
            ref_bytes = tables["in process, whole", 0]
            odd = [f"{label} (round {i + 1})" for (label, i), b in tables.items()
                   if b != ref_bytes]
            same = "yes" if not odd else "NO: " + ", ".join(odd)
            for label, _ in configs:
                _row("Executors", name, label, parts[label], times[label][0], warm[label],
                     warm[label] / ref, warm[label] / warm["in process, parts"],
                     all(tables[label, i] == ref_bytes for i in range(runs)))
            print(f"  {name:8s} same table bytes on every executor and round: {same}; "
                  f"dask 2 workers / in process whole = {warm['dask, 2 workers'] / ref:.2f}; "
                  f"load after each round: {'; '.join(loads)}")


def report(name: str, start, stop, calls, fs: float, bands=None, nfft: int = 512,
           short: str = "") -> dict:
    from specscope.compute.detect import Events, synth

    ev = Events(start, stop, fs)
    m = synth.match(ev, calls, fs)
    snr = np.array([c.snr_db for c in calls])
    print(f"\n{name}: {len(ev)} detections of {len(calls)} calls; "
          f"{m.n_false} false ({100 * m.n_false / max(1, len(ev)):.1f} %), "
          f"{m.n_duplicate} duplicates ({100 * m.n_duplicate / max(1, len(ev)):.1f} %)")
    print("  SNR band (dB)   calls   found   recall")
    for lo, hi in BANDS:
        sel = (snr >= lo) & (snr < hi)
        if sel.any():
            print(f"  {lo:>4g} - {min(hi, 20):<4g}      {sel.sum():5d}   {np.sum(m.found[sel] >= 0):5d}"
                  f"   {100 * np.mean(m.found[sel] >= 0):5.1f} %")
            _row("Recall by SNR band", short, f"{lo:g}-{min(hi, 20):g}", int(sel.sum()),
                 int(np.sum(m.found[sel] >= 0)), 100 * float(np.mean(m.found[sel] >= 0)))
    sel = snr >= 6
    print(f"  >= 6 dB: recall {100 * np.mean(m.found[sel] >= 0):.1f} %; >= 3 dB: "
          f"{100 * np.mean(m.found[snr >= 3] >= 0):.1f} %")
    hit = (snr >= 10) & (m.found >= 0)
    err = np.abs(m.edge_error_s[hit]) * 1000
    _row("Detections", short, len(ev), len(calls), m.n_false, m.n_duplicate,
         100 * float(np.mean(m.found[sel] >= 0)), 100 * float(np.mean(m.found[snr >= 3] >= 0)),
         float(np.percentile(err[:, 0], 95)) if err.size else None,
         float(np.percentile(err[:, 1], 95)) if err.size else None)
    if err.size:
        print(f"  edges at >= 10 dB (ms): start median {np.median(err[:, 0]):.1f}, 95 % "
              f"{np.percentile(err[:, 0], 95):.1f}, max {err[:, 0].max():.1f}; stop median "
              f"{np.median(err[:, 1]):.1f}, 95 % {np.percentile(err[:, 1], 95):.1f}, max "
              f"{err[:, 1].max():.1f}; within 10 ms: {100 * np.mean(err.max(1) <= 10):.1f} %")
    if bands is not None:
        # the detections' own bands against the band each call is drawn in, in bins
        df = fs / nfft
        hit = sel & (m.found >= 0)
        lo, hi = (np.asarray(b)[m.found[hit]] for b in bands)
        clo = np.array([c.low_hz for c in calls])[hit]
        chi = np.array([c.high_hz for c in calls])[hit]
        be = np.abs(np.concatenate([lo - clo, hi - chi])) / df
        if be.size:
            print(f"  band edges at >= 6 dB (bins of {df:g} Hz, {hit.sum()} calls): median "
                  f"{np.median(be):.2f}, 95 % {np.percentile(be, 95):.2f}, max {be.max():.1f}; "
                  f"within 2 bins: {100 * np.mean(be <= 2):.1f} %")
    return {"recall_6db": float(np.mean(m.found[sel] >= 0)),
            "false": m.n_false / max(1, len(ev))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=3600.0, help="seconds (3600)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--copies", type=int, default=60, help="copies of the template call")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="write the recording into this folder and keep it")
    ap.add_argument("--no-executors", action="store_true",
                    help="skip the runs on the executors (in process, 2 processes, Dask)")
    ap.add_argument("--runs", type=int, default=3,
                    help="rounds of every executor (the first warms the workers; default 3)")
    ap.add_argument("--kernel-threads", type=int,
                    help="threads of the STFT kernel in every process, this one, the pool's "
                         "and the Dask workers' (SPECSCOPE_THREADS; default: all cores)")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench_detect.json)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.kernel_threads:
        os.environ["SPECSCOPE_THREADS"] = str(args.kernel_threads)
    if args.child:
        child(args.child[0], json.loads(args.child[1]), args.child[2])
        return 0
    from specscope.compute.detect import synth

    fs = 48000.0
    t = time.perf_counter()
    plan = synth.plan_calls(args.duration, fs, args.calls, n_template=args.copies,
                            seed=args.seed)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_detect_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "survey.wav"
    with soundfile.SoundFile(path, "w", int(fs), 1, subtype="FLOAT") as f:
        for block in synth.render(plan):
            f.write(block)
    print(f"generated {args.duration:g} s at {fs:g} Hz, {len(plan.calls)} calls "
          f"({args.copies} template copies) in {time.perf_counter() - t:.1f} s: {path} "
          f"({path.stat().st_size / 2**20:.0f} MiB)")
    copies = [c for c in plan.calls if c.kind == "template"]
    best = max(copies, key=lambda c: c.snr_db)
    template = {"template_start_s": best.start / fs, "template_stop_s": best.stop / fs,
                "template_low_hz": best.low_hz - 300.0, "template_high_hz": best.high_hz + 300.0,
                "threshold": 0.5}
    out = folder / "events.npz"
    t = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", str(path), json.dumps(template),
                    str(out)], check=True)
    wall = time.perf_counter() - t
    res = np.load(out)
    times = json.loads(str(res["times"]))
    report("Band-limited energy detector (2.5-12.5 kHz, 4 dB)", res["energy_start_sample"],
           res["energy_stop_sample"], list(plan.calls), fs,
           (res["energy_low_hz"], res["energy_high_hz"]), short="energy")
    report(f"Template matching (box of the {best.snr_db:.1f} dB copy, threshold 0.5; "
           "truth = the copies)", res["template_start_sample"], res["template_stop_sample"],
           copies, fs, short="template")
    print(f"\ntimes for {args.duration:g} s (cores: {len(os.sched_getaffinity(0))}; fresh "
          f"process {wall:.1f} s in all, imports {times['import']:.2f} s)")
    for name in ("energy", "template"):
        first, warm = times[f"{name}_first"], times[f"{name}_warm"]
        print(f"  {name:9s} first call {first:6.2f} s   warm {warm:6.2f} s   "
              f"{args.duration / warm:7.0f}x real time   warm / read {warm / times['read']:5.1f}"
              f"   warm / stft {warm / times['stft']:5.2f}")
        _row("Times in a fresh process", name, first, warm, args.duration / warm,
             warm / times["read"], warm / times["stft"])
    print(f"  peers: read in {CHUNK}-sample chunks {times['read']:.2f} s; stft_power "
          f"(512/256) {times['stft']:.2f} s")
    if not args.no_executors:
        executors(path, template, folder, max(1, args.runs))
    if args.json is not None:
        _benchjson.record(
            "bench_detect", _benchjson.command_line(__file__),
            {k: TABLES[k] for k in COLUMNS if k in TABLES},
            {k: COLUMNS[k] for k in COLUMNS if k in TABLES},
            [f"{args.duration:g} s at {fs:g} Hz, {len(plan.calls)} calls ({args.copies} "
             "template copies); energy detector 2.5-12.5 kHz, 4 dB; template matching "
             "threshold 0.5 (truth: the copies)",
             f"peers in the same process: reading the file in {CHUNK}-sample chunks "
             f"{times['read']:.2f} s; stft_power (512/256) {times['stft']:.2f} s"],
            args.json or None)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
