"""Benchmark of live mode: 48 kHz stereo through a filter + spectrogram, block by block.

For 256- and 1024-sample blocks it streams a generator (a stereo chirp)
through a 4th-order Butterworth band-pass and a 1024-point spectrogram (hop
256), in two modes:

* ``realtime``: the source is paced like a sound card (a full ring drops
  blocks), while a reader thread polls ``frames_since`` 30 times a second the
  way the GUI waterfall does;
* ``fast``: as fast as possible (the source waits for room; nothing drops),
  which measures throughput as a multiple of real time.

It reports the per-block processing latency (median, p99, max), blocks
dropped, the end-to-end delay (put into the ring -> frames in history) and the
process's resident memory at the start, middle and end (flat once the history
reaches its memory budget, which spills to disk beyond it).

    .venv/bin/python scripts/bench_live.py              # --quick: 15 s per real-time run
    .venv/bin/python scripts/bench_live.py --minutes 10 # soak: 10 min per real-time run
    .venv/bin/python scripts/bench_live.py --load --minutes 5 --blocks 256 --modes realtime

``--load`` starts another process that keeps one core busy (a spinning loop
pinned to the last CPU) for the whole run, the way a busy machine does.  The
resident memory is sampled through each real-time run; the line ``RSS after
the history's budget`` gives its growth from the moment the history reached
its memory budget to the end (flat: a few MiB at most).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import threading
import time

import _benchjson
from specscope.compute.live import GeneratorSource, LiveSession
from specscope.compute.pipeline import Pipeline

FS = 48000.0
STEPS = [
    {"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": [300.0, 3000.0],
                                "btype": "bandpass"}},
    {"op": "spectrogram", "params": {"nfft": 1024, "hop": 256, "window": "hann"}},
]


def _rss() -> int:
    try:
        import psutil
        return int(psutil.Process().memory_info().rss)
    except ImportError:  # Linux fallback
        with open(f"/proc/{os.getpid()}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _spin(cpu: int) -> None:
    """Keep one core busy until killed."""
    try:
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        pass
    x = 0
    while True:
        x += 1


def start_load() -> multiprocessing.Process:
    """A process spinning on the last CPU (the load of ``--load``)."""
    cpu = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    p = multiprocessing.get_context("spawn").Process(target=_spin, args=(cpu,), daemon=True)
    p.start()
    return p


def _gil_staller(ms: float, every_s: float, stop: threading.Event) -> threading.Thread:
    """A thread holding the GIL for ``ms`` every ``every_s`` seconds (a C loop: no switch).

    It stands for what stalls the processing thread in a real process: a long
    garbage collection, a heavy draw in the GUI thread, a C extension that does
    not release the GIL.
    """
    t0 = time.perf_counter()
    sum(range(1_000_000))
    n = int(1_000_000 * (ms / 1e3) / max(time.perf_counter() - t0, 1e-6))

    def run() -> None:
        while not stop.wait(every_s):
            sum(range(n))

    t = threading.Thread(target=run, daemon=True, name="bench-gil-stall")
    t.start()
    return t


def run_one(block: int, seconds: float, realtime: bool, history_mb: int,
            ring_blocks: int | None = None, batch: bool = True,
            gil_stall_ms: float = 0.0) -> dict:
    pipe = Pipeline.from_steps(STEPS, name="bench")
    src = GeneratorSource("chirp", sample_rate=FS, channels=2, block=block,
                          rate=1.0 if realtime else 0, duration=seconds)
    session = LiveSession(src, pipe, history_bytes=history_mb << 20,
                          disk_bytes=max(history_mb, 256) << 22, ring_blocks=ring_blocks)
    if not batch:
        session.MAX_BACKLOG_BLOCKS = 1  # block by block even after a stall
    rss = [_rss()]
    stop = threading.Event()
    polled = [0]

    def reader() -> None:  # what the GUI timer does
        n = 0
        while not stop.wait(1 / 30):
            first, frames = session.frames_since(n, channel=0, limit=2048)
            n = first + len(frames)
            polled[0] += len(frames)

    t = threading.Thread(target=reader, daemon=True)
    t0 = time.perf_counter()
    session.start()
    t.start()
    if gil_stall_ms and realtime:
        _gil_staller(gil_stall_ms, 5.0, stop)
    samples: list[tuple[float, int]] = []
    t_full = None  # when the history's memory reached its budget
    while not session.wait(min(5.0, max(0.5, seconds / 20))):
        ts = time.perf_counter() - t0
        samples.append((ts, _rss()))
        if t_full is None and session.history.memory_in_use >= 0.95 * (history_mb << 20):
            t_full = ts
    wall = time.perf_counter() - t0
    stop.set()
    t.join()
    st = session.stop()
    rss_end = _rss()
    session.history.close()
    session.raise_error()
    half = [r for (ts, r) in samples if ts >= wall / 2] or [rss_end]
    t_full = wall if t_full is None else t_full
    after = [r for (ts, r) in samples if ts >= t_full + 5.0]
    growth = (max(after) - after[0]) / 2**20 if len(after) >= 2 else None
    return {
        "mode": "realtime" if realtime else "fast",
        "block": block,
        "ring_blocks": session.ring.capacity,
        "batch": batch,
        "signal_s": seconds,
        "wall_s": round(wall, 2),
        "x_realtime": round(seconds / wall, 1),
        "blocks": st.blocks_processed,
        "dropped": st.blocks_dropped,
        "lat_median_ms": round(st.latency_ms_median, 3),
        "lat_p99_ms": round(st.latency_ms_p99, 3),
        "lat_max_ms": round(st.latency_ms_max, 3),
        "delay_p99_ms": round(st.delay_ms_p99, 3),
        "block_ms": round(st.block_ms, 2),
        "frames": st.frames,
        "frames_polled": polled[0] if realtime else None,
        "history_mem_mb": round(st.history_memory_bytes / 2**20, 1),
        "history_disk_mb": round(st.history_disk_bytes / 2**20, 1),
        "rss_start_mb": round(rss[0] / 2**20, 1),
        "rss_mid_mb": round(half[0] / 2**20, 1),
        "rss_end_mb": round(rss_end / 2**20, 1),
        "history_full_s": round(t_full, 1),
        "rss_growth_after_full_mb": None if growth is None else round(growth, 1),
        "rss_timeline_mb": [(round(ts), round(r / 2**20, 1)) for ts, r in samples[::max(
            1, len(samples) // 12)]],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="15 s per real-time run (default)")
    g.add_argument("--minutes", type=float, help="minutes per real-time run (soak)")
    ap.add_argument("--blocks", default="256,1024", help="block sizes (default 256,1024)")
    ap.add_argument("--modes", default="realtime,fast", help="realtime,fast (default both)")
    ap.add_argument("--fast-seconds", type=float, default=120.0,
                    help="seconds of signal in the fast mode (default 120)")
    ap.add_argument("--history-mb", type=int, default=32,
                    help="history memory budget in MiB (default 32; spills beyond)")
    ap.add_argument("--jsonl", action="store_true", help="print JSON lines instead of a table")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the table to PATH "
                         "(default docs/performance/data/bench_live.json)")
    ap.add_argument("--ring-blocks", type=int, default=None,
                    help="ring capacity in blocks (default: 2 s of signal)")
    ap.add_argument("--no-batch", action="store_true",
                    help="process a backlog block by block (the behaviour before batching)")
    ap.add_argument("--gil-stall-ms", type=float, default=0.0, metavar="MS",
                    help="a thread holds the GIL for MS every 5 s (a stall of the processing)")
    ap.add_argument("--load", action="store_true",
                    help="keep one core busy with another process for the whole run")
    args = ap.parse_args(argv)
    seconds = 15.0 if args.minutes is None else args.minutes * 60.0
    blocks = [int(b) for b in args.blocks.split(",")]
    modes = args.modes.split(",")
    print(f"specscope live benchmark: 48 kHz stereo, butter(4) band-pass + 1024-point "
          f"spectrogram (hop 256); {os.cpu_count()} CPUs; history {args.history_mb} MiB",
          file=sys.stderr)
    rows = []
    load = start_load() if args.load else None
    if load is not None:
        print(f"load: process {load.pid} spinning on one core", file=sys.stderr)
    try:
        _runs(args, seconds, blocks, modes, rows)
    finally:
        if load is not None:
            load.kill()
            load.join()
    if args.json is not None:
        columns = ["mode", "block", "signal (s)", "blocks", "dropped", "latency median (ms)",
                   "latency p99 (ms)", "latency max (ms)", "delay p99 (ms)", "real time (x)",
                   "RSS start (MiB)", "RSS mid-run (MiB)", "RSS end (MiB)"]
        keys = ["mode", "block", "signal_s", "blocks", "dropped", "lat_median_ms",
                "lat_p99_ms", "lat_max_ms", "delay_p99_ms", "x_realtime", "rss_start_mb",
                "rss_mid_mb", "rss_end_mb"]
        _benchjson.record(
            "bench_live", _benchjson.command_line(__file__, argv),
            [{c: r[k] for c, k in zip(columns, keys, strict=True)} for r in rows], columns,
            [f"48 kHz stereo, butter(4) band-pass + 1024-point spectrogram (hop 256); history "
             f"{args.history_mb} MiB" + ("; another process kept one core busy"
                                          if args.load else ""),
             "goal: 1024-sample blocks in real time with a p99 latency under 1 ms and no "
             "block dropped"], args.json or None)
    return 0


def _runs(args: argparse.Namespace, seconds: float, blocks: list[int], modes: list[str],
          rows: list[dict]) -> None:
    # warm-up: imports, FFT plans, filter design
    run_one(1024, 0.5, False, args.history_mb)
    for mode in modes:
        for block in blocks:
            realtime = mode == "realtime"
            r = run_one(block, seconds if realtime else args.fast_seconds, realtime,
                        args.history_mb, args.ring_blocks, not args.no_batch,
                        args.gil_stall_ms)
            rows.append(r)
            if args.jsonl:
                print(json.dumps(r), flush=True)
            else:
                print(f"{r['mode']:>8} block {block:>5} ({r['block_ms']:5.2f} ms, ring "
                      f"{r['ring_blocks']}{'' if r['batch'] else ', no batching'}): "
                      f"{r['blocks']:>7} blocks, {r['dropped']} dropped; latency ms median "
                      f"{r['lat_median_ms']:.3f} p99 {r['lat_p99_ms']:.3f} max "
                      f"{r['lat_max_ms']:.3f}; delay p99 {r['delay_p99_ms']:.2f} ms; "
                      f"{r['x_realtime']}x real time; RSS MiB {r['rss_start_mb']} -> "
                      f"{r['rss_mid_mb']} -> {r['rss_end_mb']} (history "
                      f"{r['history_mem_mb']} MiB + {r['history_disk_mb']} MiB disk)",
                      flush=True)
                if realtime:
                    print(f"         RSS after the history's budget (full at "
                          f"{r['history_full_s']} s): +{r['rss_growth_after_full_mb']} MiB; "
                          f"timeline (s, MiB) {r['rss_timeline_mb']}", flush=True)
    goal = [r for r in rows if r["block"] == 1024 and r["mode"] == "realtime"]
    if goal:
        ok = all(r["lat_p99_ms"] < 1.0 and r["dropped"] == 0 for r in goal)
        print(f"goal (1024-sample blocks in real time: p99 < 1 ms, 0 dropped): "
              f"{'met' if ok else 'NOT met'}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
