#!/usr/bin/env python3
"""Explorer benchmark: fly through long recordings the way the GUI does.

Generates a 1-hour 48 kHz recording and (unless --quick) one larger than 4 GB
(RF64, float32), opens each, and replays a scripted sequence of 50 zooms and
pans at 1600 px width through the code path the GUI uses
(``render_progressive`` on a ``TileEngine`` with a disk cache, as the desktop
window makes it).  Each journey runs in a new process (``--repeats`` of them),
``--passes`` times there (default 2), each pass on a new engine with an empty
disk cache: the first pass is what a user's first session gets (*fresh*), the
second runs with the imports, the allocator and the file's pages warm (*warm*).
Reports per pass:

- time to the first image (the preview or the cached/coarse image the GUI shows first),
- time to the exact image of the whole recording (the pyramid is built then),
- median and 95th percentile of the update time of the 50 steps once warm,
- peak resident memory of the process,
- the reference the goals are stated against, measured between the steps (every
  ten): ``scipy.signal.spectrogram`` of one minute read from the same recording;
  the update median and p95 are printed as multiples of it (goals: at most 0.4x
  and 1.0x),

and, as a peer measured in the same run, the naive way (``scipy.signal.spectrogram``
of the visible span, then averaging frames into columns) on the steps whose span
it can handle within a time budget.

    python scripts/bench_explorer.py --hour --ahead 0 --repeats 3   # the README's figures
    python scripts/bench_explorer.py            # 1 h and > 4 GB (needs ~5 GB of disk)
    python scripts/bench_explorer.py --quick    # 10 minutes only
    python scripts/bench_explorer.py --hour     # the 1-hour file only
    python scripts/bench_explorer.py --hour --ahead-only --ahead 2   # building ahead, 2 rounds

Then (``--ahead ROUNDS``, default 1) the same journey with ``--think`` seconds of
looking at each view, on fresh engines, without and with the pyramid built ahead in
that time (:func:`~specscope.compute.view.plan_ahead`), alternating, each against the
reference measured in its own pass.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import _benchjson
import numpy as np
import scipy.signal
import soundfile
from specscope.compute import open_recording
from specscope.compute.paths import cache_dir
from specscope.compute.view import TileEngine, build_ahead, plan_ahead, render_progressive

FS = 48_000
WIDTH = 1600
NFFT, HOP = 1024, 256
#: the columns of the tables --json records
PASS_COLUMNS = ["recording", "process", "pass", "first image (s)", "exact whole file (s)",
                "update median (ms)", "update p95 (ms)", "slowest update (ms)",
                "reference (ms)", "median / reference (x)", "p95 / reference (x)",
                "peak RSS (MB)", "load at start", "load at end"]
AHEAD_COLUMNS = ["recording", "building ahead", "updates", "median (ms)", "p95 (ms)",
                 "reference (ms)", "median / reference (x)", "p95 / reference (x)",
                 "tiles built ahead", "longest wait for it to stop (ms)"]


def generate(path: Path, seconds: float, fmt: str, subtype: str, block_s: float = 60.0) -> None:
    """Noise + hum + a chirp every minute + ONE click in the middle, written in blocks."""
    rng = np.random.default_rng(1)
    n = int(seconds * FS)
    click = n // 2 + 12_345
    with soundfile.SoundFile(str(path), "w", FS, 1, subtype=subtype, format=fmt) as f:
        for s0 in range(0, n, int(block_s * FS)):
            m = min(int(block_s * FS), n - s0)
            t = (s0 + np.arange(m)) / FS
            x = 0.01 * rng.standard_normal(m).astype(np.float32)
            x += (0.05 * np.sin(2 * np.pi * 50 * t)).astype(np.float32)
            tm = np.mod(t, 60.0)
            ch = (tm < 1.0) * 0.2 * np.sin(2 * np.pi * (2000 * tm + 2000 * tm**2))
            x += ch.astype(np.float32)
            if s0 <= click < s0 + m:  # a 1 ms broadband click
                x[click - s0:click - s0 + 48] += 0.9 * rng.choice([-1.0, 1.0], 48)
            f.write(x)


def script(duration: float, rng: np.random.Generator) -> list[tuple[float, float]]:
    """50 views: zoom in towards events, pan, zoom out, jump, deep zoom."""
    views, (t0, t1) = [], (0.0, duration)
    for i in range(50):
        span = t1 - t0
        op = i % 10
        if op in (0, 1, 2, 3):            # zoom in x4 around a point
            c = t0 + span * rng.uniform(0.3, 0.7)
            span = max(span / 4, 0.05)
            t0, t1 = c - span / 2, c + span / 2
        elif op in (4, 5):                # pan by half a view
            d = span * (0.5 if op == 4 else -0.5)
            t0, t1 = t0 + d, t1 + d
        elif op == 6:                     # zoom out x8
            c = (t0 + t1) / 2
            span = min(span * 8, duration)
            t0, t1 = c - span / 2, c + span / 2
        elif op == 7:                     # jump elsewhere at the same zoom
            c = rng.uniform(0, duration)
            t0, t1 = c - span / 2, c + span / 2
        elif op == 8:                     # home
            t0, t1 = 0.0, duration
        else:                             # deep zoom to 0.5 s
            c = rng.uniform(0, duration)
            t0, t1 = c - 0.25, c + 0.25
        if t0 < 0:
            t0, t1 = 0.0, t1 - t0
        if t1 > duration:
            t0, t1 = max(0.0, t0 - (t1 - duration)), duration
        views.append((t0, t1))
    return views


def naive(rec, t0: float, t1: float) -> np.ndarray:
    """What a simple viewer does: STFT of the span, frames averaged (or repeated)
    into WIDTH columns, in dB — the same output as the tile engine's."""
    x = rec.read(int(t0 * FS), int(t1 * FS), 0)[:, 0]
    _, _, s = scipy.signal.spectrogram(x, FS, window="hann", nperseg=NFFT,
                                       noverlap=NFFT - HOP, detrend=False)
    n = s.shape[1]
    if n >= WIDTH:
        b = np.round(np.linspace(0, n, WIDTH + 1)).astype(int)
        cols = np.add.reduceat(s, b[:-1], axis=1) / np.diff(b)
    else:
        cols = s[:, np.minimum((np.arange(WIDTH) + 0.5) * n // WIDTH, n - 1).astype(int)]
    return 10 * np.log10(np.maximum(cols, 1e-20)).astype(np.float32)


def one_minute_reference(rec) -> float:
    """Seconds scipy takes to read one minute of the recording and compute its spectrogram."""
    t0 = time.perf_counter()
    x = rec.read(0, min(rec.n_samples, 60 * FS), 0)[:, 0]
    scipy.signal.spectrogram(x, FS, window="hann", nperseg=NFFT, noverlap=NFFT - HOP,
                             detrend=False)
    return time.perf_counter() - t0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Ahead:
    """What the GUI's compute thread does in idle time: the pyramid built ahead.

    After each view a thread computes :func:`plan_ahead`'s tiles (the zoom-outs
    by 2-8 and the pans); the next request cancels it and waits for the block
    it is in to end, as the next job on the compute thread would.
    """

    def __init__(self, eng) -> None:
        self.eng, self.thread, self.stop = eng, None, threading.Event()
        self.built = 0
        self.waits: list[float] = []  # seconds from a request to the background's stop

    def start(self, t0: float, t1: float) -> None:
        self.stop = threading.Event()
        plan = plan_ahead(self.eng, t0, t1, WIDTH)

        def run(stop=self.stop) -> None:
            self.built += build_ahead(self.eng, plan, cancelled=stop.is_set)
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def cancel(self) -> None:
        if self.thread is not None:
            t0 = time.perf_counter()
            self.stop.set()
            self.thread.join()
            self.waits.append(time.perf_counter() - t0)
            self.thread = None


def journey(eng, rec, ahead: bool, think_s: float, seed: int = 7) -> dict:
    """The 50 scripted views, ``think_s`` seconds of looking after each (the pyramid
    built ahead meanwhile when ``ahead``); update times and the one-minute reference."""
    rng = np.random.default_rng(seed)
    helper = Ahead(eng) if ahead else None
    steps, reference = [], []
    for i, (t0, t1) in enumerate(script(eng.duration, rng)):
        s0 = time.perf_counter()
        if helper is not None:
            helper.cancel()  # the request arrives: the background work stops first
        render_progressive(eng, t0, t1, WIDTH)
        steps.append(time.perf_counter() - s0)
        if i % 5 == 0:
            reference.append(one_minute_reference(rec))
        if helper is not None:
            helper.start(t0, t1)
        time.sleep(think_s)
    if helper is not None:
        helper.cancel()
    ms = np.array(steps) * 1000
    return {"median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "max_ms": float(ms.max()), "reference_ms": float(np.median(reference)) * 1000,
            "built": helper.built if helper else 0, "steps_ms": ms,
            "waits_ms": np.array(helper.waits if helper else [0.0]) * 1000,
            "reference_all_ms": np.array(reference) * 1000}


def compare_ahead(path: Path, folder: Path, think_s: float, rounds: int) -> list[dict]:
    """The journey without and with the pyramid built ahead, alternating, same run."""
    print(f"\nbuilding ahead: the 50 views with {think_s * 1000:.0f} ms of looking after "
          f"each, fresh engines and disk caches, {rounds} round(s) of each, alternating")
    rows: dict[bool, list[dict]] = {False: [], True: []}
    with open_recording(path) as rec:
        for r in range(rounds):
            for ahead in ((False, True) if r % 2 == 0 else (True, False)):
                cache = folder / f"cache-ahead-{int(ahead)}-{r}"
                shutil.rmtree(cache, ignore_errors=True)
                eng = TileEngine(rec, nfft=NFFT, hop=HOP, disk_cache=cache)
                render_progressive(eng, 0.0, eng.duration, WIDTH)  # the first view
                got = journey(eng, rec, ahead, think_s)
                rows[ahead].append(got)
                ref = got["reference_ms"]
                print(f"  {'with   ' if ahead else 'without'} building ahead: median "
                      f"{got['median_ms']:6.1f} ms, p95 {got['p95_ms']:6.1f} ms, max "
                      f"{got['max_ms']:5.0f} ms; reference {ref:5.1f} ms -> "
                      f"{got['median_ms'] / ref:.2f}x / {got['p95_ms'] / ref:.2f}x"
                      + (f"; {got['built']} tiles built ahead, a request waited "
                         f"{np.median(got['waits_ms']):.1f} ms median, "
                         f"{got['waits_ms'].max():.0f} ms at most for it to stop"
                         if ahead else ""))
    # one reference for the whole run: the median of every sample of every pass
    ref = float(np.median(np.concatenate([g["reference_all_ms"] for v in rows.values()
                                          for g in v])))
    print(f"  reference over the whole run: {ref:.1f} ms")
    out = []
    for ahead in (False, True):
        steps = np.concatenate([g["steps_ms"] for g in rows[ahead]])
        med, p95 = float(np.median(steps)), float(np.percentile(steps, 95))
        print(f"  {'with   ' if ahead else 'without'}: all {steps.size} updates: median "
              f"{med:.1f} ms, p95 {p95:.1f} ms -> {med / ref:.2f}x / {p95 / ref:.2f}x of the "
              "reference (goals <= 0.4 and <= 1.0)")
        waits = max(float(g["waits_ms"].max()) for g in rows[ahead]) if ahead else None
        out.append(dict(zip(AHEAD_COLUMNS, (
            None, "with" if ahead else "without", int(steps.size), med, p95, ref, med / ref,
            p95 / ref, sum(g["built"] for g in rows[ahead]) if ahead else None, waits),
            strict=True)))
    pairs = [w["p95_ms"] / wo["p95_ms"] for w, wo in zip(rows[True], rows[False])]
    print("  p95 with / without, round by round: " + ", ".join(f"{r:.2f}" for r in pairs))
    return out


def bench(path: Path, label: str, naive_budget_s: float, cache: Path | None = None) -> dict:
    rng = np.random.default_rng(7)
    load0 = os.getloadavg()[0]
    with open_recording(path) as rec:
        t_open = time.perf_counter()
        # as the GUI does: tiles also kept in the disk cache (a fresh folder per pass)
        eng = TileEngine(rec, nfft=NFFT, hop=HOP, disk_cache=cache or cache_dir("tiles"))
        first: list[float] = []
        img = render_progressive(eng, 0.0, eng.duration, WIDTH,
                                 partial=lambda im: first.append(time.perf_counter()))
        t_exact = time.perf_counter() - t_open
        t_first = (first[0] if first else time.perf_counter()) - t_open
        # the one click in the whole recording, in the zoomed-out view
        click_t = (rec.n_samples // 2 + 12_345) / FS
        stands_out = {}
        for reduce in ("mean", "max"):
            im = img if reduce == "mean" else render_progressive(eng, 0.0, eng.duration,
                                                                 WIDTH, "max")
            j = int(np.searchsorted(im.column_edges, click_t)) - 1
            hi = im.db[300:]  # above 14 kHz: noise everywhere but at the click
            stands_out[reduce] = float(hi[:, j].mean() - np.median(hi))
        steps, shown, naive_times, reference, slow = [], [], [], [], []
        for i, (t0, t1) in enumerate(script(eng.duration, rng)):
            if i % 10 == 0:
                reference.append(one_minute_reference(rec))
            first_shown: list[float] = []
            frames0 = eng.frames_computed
            s0 = time.perf_counter()
            render_progressive(eng, t0, t1, WIDTH,
                               partial=lambda im, got=first_shown: got.append(time.perf_counter()))
            end = time.perf_counter()
            steps.append(end - s0)
            slow.append((end - s0, i, t1 - t0, eng.column_frames(t0, t1, WIDTH)[3],
                         eng.frames_computed - frames0))
            shown.append((first_shown[0] if first_shown else end) - s0)
            if t1 - t0 <= naive_budget_s:
                s0 = time.perf_counter()
                naive(rec, t0, t1)
                naive_times.append((t1 - t0, time.perf_counter() - s0, steps[-1]))
        eng.close()
    steps_ms = np.array(steps) * 1000
    shown_ms = np.array(shown) * 1000
    out = {"label": label, "size_gb": path.stat().st_size / 1e9, "first_s": t_first,
           "exact_home_s": t_exact, "median_ms": float(np.median(steps_ms)),
           "p95_ms": float(np.percentile(steps_ms, 95)), "peak_rss_mb": peak_rss_mb(),
           "shown_median_ms": float(np.median(shown_ms)),
           "shown_p95_ms": float(np.percentile(shown_ms, 95)),
           "click_db": stands_out, "naive": naive_times,
           "reference_ms": float(np.median(reference)) * 1000,
           "load": (load0, os.getloadavg()[0]), "max_ms": float(steps_ms.max())}
    print(f"\n{label}: {out['size_gb']:.2f} GB, {eng.duration / 3600:.2f} h; load average "
          f"{load0:.1f} at the start of the pass, {out['load'][1]:.1f} at its end")
    print(f"  first image           {t_first * 1000:8.0f} ms")
    print(f"  exact whole-file view {t_exact:8.2f} s")
    print(f"  the one 1 ms click, zoomed out: +{stands_out['max']:.0f} dB over the median "
          f"with peak hold, +{stands_out['mean']:.1f} dB with mean")
    print(f"  50 zooms/pans, exact  median {out['median_ms']:.1f} ms, "
          f"p95 {out['p95_ms']:.1f} ms, max {steps_ms.max():.0f} ms")
    print(f"  50 zooms/pans, first  median {out['shown_median_ms']:.1f} ms, "
          f"p95 {out['shown_p95_ms']:.1f} ms, max {shown_ms.max():.0f} ms "
          "(coarser cached level or preview shown first)")
    ref = out["reference_ms"]
    print(f"  reference: scipy read + spectrogram of one minute, median {ref:.1f} ms -> "
          f"exact update median {out['median_ms'] / ref:.2f}x (goal <= 0.4), "
          f"p95 {out['p95_ms'] / ref:.2f}x (goal <= 1.0)")
    print("  slowest steps: " + "; ".join(
        f"#{i} {d * 1000:.0f} ms ({span:.1f} s at level {lv}, {n} frames transformed)"
        for d, i, span, lv, n in sorted(slow, reverse=True)[:4]))
    print(f"  peak memory (RSS)     {out['peak_rss_mb']:.0f} MB")
    if naive_times:
        spans = np.array([n[0] for n in naive_times])
        peer = np.array([n[1] for n in naive_times]) * 1000
        ours = np.array([n[2] for n in naive_times]) * 1000
        print(f"  peer: scipy.signal.spectrogram of the visible span, same {len(spans)} steps "
              f"(spans <= {naive_budget_s:.0f} s):")
        for lo, hi_ in ((0, 2), (2, 30), (30, naive_budget_s)):
            m = (spans > lo) & (spans <= hi_)
            if m.any():
                print(f"    spans {lo:>3}-{hi_:<4.0f}s  n={m.sum():2d}  peer median "
                      f"{np.median(peer[m]):7.1f} ms  specscope {np.median(ours[m]):6.1f} ms  "
                      f"ratio {np.median(peer[m]) / max(np.median(ours[m]), 1e-3):5.1f}x")
    return out


RESULT = "RESULT-JSON "
KEYS = ("first_s", "exact_home_s", "median_ms", "p95_ms", "max_ms", "reference_ms",
        "peak_rss_mb", "load")


def passes(path: Path, label: str, n_passes: int, naive_budget_s: float, folder: Path
           ) -> list[dict]:
    """The journey ``n_passes`` times in this process, each on a new engine with an empty
    disk cache: the first is what a fresh process gets, the others run warm (imports,
    allocator and the file's pages).  The peer runs in the last pass only."""
    out = []
    for k in range(n_passes):
        cache = folder / f"cache-{os.getpid()}-{k}"
        shutil.rmtree(cache, ignore_errors=True)
        kind = "fresh process" if k == 0 else f"warm (pass {k + 1} in the process)"
        got = bench(path, f"{label}, {kind}", naive_budget_s if k == n_passes - 1 else 0.0,
                    cache)
        shutil.rmtree(cache, ignore_errors=True)
        got["kind"] = "fresh" if k == 0 else "warm"
        out.append({key: got[key] for key in (*KEYS, "kind")})
    return out


def child(path: Path, label: str, n_passes: int, naive_budget_s: float, folder: Path) -> dict:
    """One new process: its passes, each printed, then one line of JSON for the parent."""
    cmd = [sys.executable, __file__, "--child", str(path), "--label", label,
           "--passes", str(n_passes), "--naive-budget", str(naive_budget_s),
           "--dir", str(folder)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONHASHSEED="0"))
    if proc.returncode:
        raise SystemExit(f"the benchmark process failed:\n{proc.stderr[-3000:]}")
    lines = proc.stdout.splitlines()
    print("\n".join(line for line in lines if not line.startswith(RESULT)))
    return json.loads(next(line for line in lines if line.startswith(RESULT))[len(RESULT):])


def summary(label: str, runs: list[list[dict]]) -> None:
    print(f"\n{label}: {len(runs)} new process(es), exact updates against the reference "
          "measured in the same pass (goals: median <= 0.4x, p95 <= 1.0x)")
    for kind in ("fresh", "warm"):
        rows = [p for r in runs for p in r if p["kind"] == kind]
        if not rows:
            continue
        med = [p["median_ms"] / p["reference_ms"] for p in rows]
        p95 = [p["p95_ms"] / p["reference_ms"] for p in rows]
        print(f"  {kind:<5}: median " + ", ".join(f"{v:.2f}x" for v in med)
              + "; p95 " + ", ".join(f"{v:.2f}x" for v in p95)
              + "  (ms: " + "; ".join(f"{p['median_ms']:.0f}/{p['p95_ms']:.0f} vs "
                                     f"{p['reference_ms']:.0f}" for p in rows)
              + "; load " + ", ".join(f"{p['load'][0]:.1f}-{p['load'][1]:.1f}" for p in rows)
              + ")")
        home = ", ".join(f"{p['exact_home_s']:.1f}" for p in rows)
        first = ", ".join(f"{p['first_s'] * 1000:.0f}" for p in rows)
        print(f"         whole file exact {home} s; first image {first} ms; peak RSS "
              f"{max(p['peak_rss_mb'] for p in rows):.0f} MB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a 10-minute recording only")
    ap.add_argument("--hour", action="store_true", help="the 1-hour recording only")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the test files")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--no-peer", action="store_true", help="skip the scipy peer")
    ap.add_argument("--ahead", type=int, default=1, metavar="ROUNDS",
                    help="rounds of the journey without and with the pyramid built ahead "
                         "(0: skip that comparison)")
    ap.add_argument("--think", type=float, default=0.5, metavar="S",
                    help="seconds of looking at each view in that comparison (default 0.5)")
    ap.add_argument("--ahead-only", action="store_true",
                    help="only the comparison with and without building ahead")
    ap.add_argument("--repeats", type=int, default=1,
                    help="new processes per recording, each running --passes journeys")
    ap.add_argument("--passes", type=int, default=2,
                    help="journeys per process: the first fresh, the others warm (2)")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench_explorer.json)")
    # one benchmark process (internal)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--label", help=argparse.SUPPRESS)
    ap.add_argument("--naive-budget", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        os.environ["SPECSCOPE_CACHE_DIR"] = str(args.dir / "cache")
        got = passes(args.child, args.label, args.passes, args.naive_budget, args.dir)
        print(RESULT + json.dumps(got))
        return 0
    folder = args.dir or Path(tempfile.mkdtemp(prefix="specscope-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["SPECSCOPE_CACHE_DIR"] = str(folder / "cache")
    journeys: list[dict] = []
    ahead_rows: list[dict] = []
    try:
        cases = [("10 min, 48 kHz, PCM16 WAV", 600.0, "WAV", "PCM_16")] if args.quick else [
            ("1 h, 48 kHz, PCM16 WAV", 3600.0, "WAV", "PCM_16"),
            ("6.2 h, 48 kHz, float32 RF64 (> 4 GB)", 4.3e9 / 4 / FS, "RF64", "FLOAT"),
        ]
        if args.hour and not args.quick:
            cases = cases[:1]
        print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} on "
              f"{os.cpu_count()} cores")
        for label, seconds, fmt, subtype in cases:
            path = folder / f"bench_{int(seconds)}.{fmt.lower()}"
            if not path.exists():
                t = time.perf_counter()
                generate(path, seconds, fmt, subtype)
                print(f"generated {path.name} ({path.stat().st_size / 1e9:.2f} GB) in "
                      f"{time.perf_counter() - t:.0f} s")
            shutil.rmtree(folder / "cache", ignore_errors=True)  # every file starts cold
            if not args.ahead_only:
                runs = [child(path, label, args.passes, 0.0 if args.no_peer else 120.0, folder)
                        for _ in range(args.repeats)]
                summary(label, runs)
                journeys += [dict(zip(PASS_COLUMNS, (
                    label, k + 1, p["kind"], p["first_s"], p["exact_home_s"], p["median_ms"],
                    p["p95_ms"], p["max_ms"], p["reference_ms"],
                    p["median_ms"] / p["reference_ms"], p["p95_ms"] / p["reference_ms"],
                    p["peak_rss_mb"], *p["load"]), strict=True))
                    for k, r in enumerate(runs) for p in r]
            if args.ahead > 0:
                got = compare_ahead(path, folder, args.think, args.ahead)
                ahead_rows += [{**r, "recording": label} for r in got]
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json is not None:
        tables = {"The 50 zooms and pans, per pass": journeys,
                  f"The journey with {args.think:g} s of looking at each view, without and "
                  f"with the pyramid built ahead ({args.ahead} round(s) each)": ahead_rows}
        columns = dict(zip(tables, (PASS_COLUMNS, AHEAD_COLUMNS), strict=True))
        keep = [t for t, rows in tables.items() if rows]
        _benchjson.record(
            "bench_explorer", _benchjson.command_line(__file__),
            {t: tables[t] for t in keep}, {t: columns[t] for t in keep},
            [f"{WIDTH} px wide, nfft {NFFT}, hop {HOP}; reference: scipy reading one minute "
             "of the same recording and computing its spectrogram, measured in the same pass; "
             "goals: update median <= 0.4x and p95 <= 1.0x the reference"],
            args.json or None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
