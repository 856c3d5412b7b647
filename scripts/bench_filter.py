"""Benchmark the filter designer's compute path, through the functions the GUI calls.

1. Redesign + every analysis view (magnitude 2048 points, phase wrapped and
   unwrapped, group delay, poles/zeros, impulse, step) + the spec verdict,
   per filter type: what one mouse move costs (target: well under 30 ms).
2. Fast preview: filter the visible window (10 s at 48 kHz, 1600 px wide) and
   render its spectrogram with the tile engine (target: under 100 ms).

Prints median milliseconds.  ``--quick`` runs fewer filters and repetitions.

    .venv/bin/python scripts/bench_filter.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time

import _benchjson
import numpy as np
from specscope.compute.filters import (
    FilterSpec,
    analyze,
    block_filter,
    clear_design_cache,
    design,
    notch_from_click,
    verify,
)
from specscope.compute.io import ArrayRecording
from specscope.compute.view import TileEngine, render_progressive

FS = 48000.0
#: what --json records: the tables printed, by title, and their columns
TABLES: dict[str, list[dict]] = {}
COLUMNS: dict[str, list[str]] = {}


def _row(table: str, columns: list[str], *values) -> None:
    COLUMNS[table] = columns
    TABLES.setdefault(table, []).append(dict(zip(columns, values, strict=True)))


def _filters(quick: bool) -> list[tuple[str, FilterSpec]]:
    out = [
        ("butter bandpass N=4", FilterSpec("butter", btype="bandpass", order=4,
                                           cutoff=(300.0, 3000.0))),
        ("ellip lowpass min-order", FilterSpec("ellip", passband=3000.0, stopband=3500.0,
                                               rp=0.5, rs=60.0)),
        ("hum comb 50 Hz (click)", notch_from_click(50.0, FS, harmonics="nyquist")),
        ("firwin 101 taps", FilterSpec("firwin", numtaps=101, cutoff=3000.0)),
    ]
    if not quick:
        out += [
            ("cheby2 bandstop min-order", FilterSpec("cheby2", btype="bandstop",
                                                     passband=(1000.0, 3000.0),
                                                     stopband=(1500.0, 2500.0), rp=1, rs=60)),
            ("bessel lowpass N=8 zero-phase", FilterSpec("bessel", order=8, cutoff=2000.0,
                                                         zero_phase=True)),
            ("notches 60 Hz x10", notch_from_click(60.0, FS, harmonics=10)),
            ("kaiser highpass min-length", FilterSpec("firwin", btype="highpass",
                                                      passband=1500.0, stopband=1000.0,
                                                      rs=60.0)),
            ("remez lowpass min-length", FilterSpec("remez", passband=3000.0,
                                                    stopband=4000.0, rp=1.0, rs=60.0)),
        ]
    return out


def _median_ms(fn, reps: int) -> float:
    fn()  # warm caches (imports, registry)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def bench_design(filters, reps: int) -> None:
    print(f"redesign + all analysis views (median of {reps}, ms)")
    print(f"  {'filter':32s} {'design':>7s} {'views':>7s} {'verdict':>8s} {'total':>7s}  "
          "order/taps")
    for label, spec in filters:
        d = design(spec, FS)
        # a redesign is of a new spec: the cache of recent designs never answers it
        t_design = _median_ms(lambda s=spec: (clear_design_cache(), design(s, FS)), reps)
        t_views = _median_ms(lambda d=d: analyze(d, 2048).compute_all(), reps)
        t_verdict = _median_ms(lambda d=d: verify(d, analysis=analyze(d, 2048)), reps)

        def total(s=spec):
            clear_design_cache()
            dd = design(s, FS)
            a = analyze(dd, 2048).compute_all()
            verify(dd, analysis=a)
        t_total = _median_ms(total, reps)
        size = f"{d.numtaps} taps" if d.numtaps else f"order {d.order}, {d.sections} sections"
        print(f"  {label:32s} {t_design:7.2f} {t_views:7.2f} {t_verdict:8.2f} {t_total:7.2f}  "
              f"{size}")
        _row(f"Redesign + all analysis views (median of {reps})",
             ["filter", "design (ms)", "views (ms)", "verdict (ms)", "total (ms)", "size"],
             label, t_design, t_views, t_verdict, t_total, size)


def bench_preview(filters, reps: int) -> None:
    rng = np.random.default_rng(0)
    n = int(30 * FS)
    t = np.arange(n) / FS
    x = (0.1 * rng.standard_normal(n) + 0.5 * np.sin(2 * np.pi * 50 * t)).astype(np.float32)
    rec = ArrayRecording(x, FS, name="bench")
    t0, t1, width = 10.0, 20.0, 1600
    print(f"fast preview: filter {t1 - t0:g} s at {FS:g} Hz + render {width} px "
          f"(nfft 1024, hop 256; median of {reps}, ms)")
    base = TileEngine(rec, nfft=1024, hop=256)
    t_plain = _median_ms(lambda: render_progressive(
        TileEngine(rec, nfft=1024, hop=256), t0, t1, width), reps)
    del base
    print(f"  {'(no filter)':32s} {t_plain:7.2f}")
    title = (f"Fast preview: filter {t1 - t0:g} s at {FS:g} Hz + render {width} px "
             f"(median of {reps})")
    columns = ["filter", "preview (ms)", "context (samples)"]
    _row(title, columns, "(no filter)", t_plain, None)
    for label, spec in filters:
        def run(s=spec):
            clear_design_cache()
            bf = block_filter(design(s, FS))
            engine = TileEngine(rec, nfft=1024, hop=256, pipeline=bf)
            return render_progressive(engine, t0, t1, width)
        ms = _median_ms(run, reps)
        ctx = block_filter(design(spec, FS)).context
        print(f"  {label:32s} {ms:7.2f}   context {ctx[0]}+{ctx[1]} samples")
        _row(title, columns, label, ms, f"{ctx[0]}+{ctx[1]}")


def bench_gui(filters: list[tuple[str, FilterSpec]], reps: int) -> None:
    """3. The designer widget (Qt offscreen): a drag step = redesign + redraw of every tab."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtWidgets import QApplication
    from specscope.widgets.filter_designer import FilterDesigner

    app = QApplication.instance() or QApplication([])
    w = FilterDesigner(FS)
    w.resize(1000, 420)
    w.show()
    print("\nDesigner widget, one drag step: move an edge 1 %, redesign, redraw all six "
          "views (median ms)")
    for label, spec in filters:
        times = []
        w.set_spec(spec, emit=False)
        edge = next(((n, i) for n, i, _ in w._edges), None)
        for k in range(reps):
            t0 = time.perf_counter()
            if edge is not None:
                name, i = edge
                v = np.atleast_1d(np.asarray(getattr(w.spec, name), dtype=float))[i]
                w.move_edge(name, i, v * (1.01 if k % 2 == 0 else 1 / 1.01))
            else:
                w.set_spec(spec, emit=False)
            w.redraw_all()  # new data in all six views
            app.processEvents()
            w.repaint()  # and the visible one painted
            times.append(time.perf_counter() - t0)
        print(f"  {label:<34} {statistics.median(times) * 1000:7.1f} ms")
        _row(f"Designer widget, one drag step (median of {reps})",
             ["filter", "drag step (ms)"], label, statistics.median(times) * 1000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer filters and repetitions")
    ap.add_argument("--no-gui", action="store_true", help="skip the Qt designer widget")
    ap.add_argument("--json", nargs="?", const="", metavar="PATH",
                    help="also write the tables to PATH "
                         "(default docs/performance/data/bench_filter.json)")
    args = ap.parse_args(argv)
    filters = _filters(args.quick)
    reps = 5 if args.quick else 21
    bench_design(filters, reps)
    bench_preview(filters, 3 if args.quick else 7)
    if not args.no_gui:
        bench_gui(filters, 3 if args.quick else 7)
    if args.json is not None:
        _benchjson.record("bench_filter", _benchjson.command_line(__file__, argv), TABLES,
                          COLUMNS, ["goals: a redesign and redraw under 30 ms, a preview "
                                    "under 100 ms"], args.json or None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
