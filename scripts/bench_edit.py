#!/usr/bin/env python
"""Region edits: how soon an edit of a few seconds of an hour shows and plays, and how fast
the edited hour exports, against the whole-signal way of computing it.

    python scripts/bench_edit.py [--minutes M] [--json [PATH]]

An hour (``--minutes``) of 48 kHz float32 noise with a tone, in a WAV file; the edit
removes a 3 s lasso region (nfft 1024).  *Update* is what the view and playback need
after an edit: the samples the region changes, read and computed (the median of 5);
the peer is ``scipy.signal.ShortTimeFFT`` run over the whole recording with the same
gains (what an edit costs when the whole signal is analysed and synthesised again).
*View* is a cold render of 10 s around the region by the tile engine with the edit in
its pipeline; *play* the first 0.5 s of playback from the region's start.  *Export*
writes the edited recording to WAV through ``export_range``, beside the same export
with no processing, in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _benchjson
import numpy as np

RATE = 48000


def _wav(path: Path, minutes: float) -> None:
    import soundfile as sf

    n = int(minutes * 60 * RATE)
    rng = np.random.default_rng(0)
    with sf.SoundFile(path, "w", RATE, 1, subtype="FLOAT") as fh:
        for a in range(0, n, 60 * RATE):
            b = min(n, a + 60 * RATE)
            t = np.arange(a, b) / RATE
            fh.write((0.05 * rng.standard_normal(b - a) + 0.3 * np.sin(2 * np.pi * 3000 * t))
                     .astype(np.float32))


def _best(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--json", nargs="?", const="", default=None, metavar="PATH")
    args = ap.parse_args()
    import scipy.signal as ss
    from specscope.compute import open_recording
    from specscope.compute.edit import Lasso, RegionEdit, apply_edit
    from specscope.compute.output import export_range
    from specscope.compute.pipeline import Pipeline
    from specscope.compute.playback.renderer import render
    from specscope.compute.view import TileEngine

    work = Path(tempfile.mkdtemp(prefix="specscope-bench-edit-"))
    src = work / "hour.wav"
    _wav(src, args.minutes)
    seconds = args.minutes * 60
    mid = seconds / 2
    edit = RegionEdit(Lasso(((mid, 2800.0), (mid + 3, 2850.0), (mid + 2.8, 3250.0),
                             (mid + 0.2, 3200.0))), "remove", nfft=1024)
    pipe = Pipeline.from_steps([{"op": "edit", "params": edit.to_dict()}])
    rows = []
    with open_recording(src) as rec:
        n = rec.n_samples
        _, _, r0, r1 = edit.span(RATE)

        def update() -> None:
            x = rec.read(r0, r1)[:, 0]
            apply_edit(x, RATE, edit, r0)

        t_update = statistics.median(_best(update, 5))
        x_all = rec.read(0, n)[:, 0].astype(np.float64)

        def whole() -> None:
            sft = ss.ShortTimeFFT(ss.get_window("hann", 1024), 256, RATE)
            spec = sft.stft(x_all)
            sft.istft(spec * 0.5, k1=n)  # the gains' cost left out: a lower bound

        t_whole = min(_best(whole, 1))
        x_all = None  # the whole recording is let go before the next figures
        rows.append({"figure": "update after an edit (s)", "specscope": t_update,
                     "peer": t_whole, "ratio (x)": t_whole / t_update, "target": "0.1 s"})

        def view() -> None:
            eng = TileEngine(rec, nfft=1024, hop=256, pipeline=pipe.block_function(RATE),
                             disk_cache=None)
            eng.render(mid - 3.5, mid + 6.5, 1600)

        def view_plain() -> None:
            TileEngine(rec, nfft=1024, hop=256, disk_cache=None).render(mid - 3.5, mid + 6.5,
                                                                        1600)

        t_view = statistics.median(_best(view, 3))
        t_view0 = statistics.median(_best(view_plain, 3))
        rows.append({"figure": "view of 10 s around it, cold (s)", "specscope": t_view,
                     "peer": t_view0, "ratio (x)": t_view0 / t_view, "target": "0.1 s"})

        def play() -> None:
            render(rec, mid, mid + 0.5, pipeline=pipe)

        def play_plain() -> None:
            render(rec, mid, mid + 0.5)

        t_play = statistics.median(_best(play, 3))
        t_play0 = statistics.median(_best(play_plain, 3))
        rows.append({"figure": "first 0.5 s of playback (s)", "specscope": t_play,
                     "peer": t_play0, "ratio (x)": t_play0 / t_play, "target": "0.1 s"})
    t_export = min(_best(lambda: export_range(src, work / "edited.wav", pipeline=pipe), 1))
    t_copy = min(_best(lambda: export_range(src, work / "copy.wav"), 1))
    rows.append({"figure": "export of the edited recording (x real time)",
                 "specscope": seconds / t_export, "peer": seconds / t_copy,
                 "ratio (x)": t_copy / t_export, "target": "200x"})
    print(f"{args.minutes:g} min of 48 kHz float32; remove a 3 s lasso region, nfft 1024")
    print(f"{'figure':<46}{'specscope':>12}{'peer':>12}{'ratio':>9}")
    for r in rows:
        print(f"{r['figure']:<46}{r['specscope']:>12.4g}{r['peer']:>12.4g}"
              f"{r['ratio (x)']:>8.2f}x")
    if args.json is not None:
        notes = [f"{args.minutes:g} min of 48 kHz float32 noise and a tone in a WAV file; "
                 "remove a 3 s lasso region (nfft 1024); peers: update, scipy's ShortTimeFFT "
                 "over the whole recording; view, play and export, the same with no edit"]
        _benchjson.record("bench_edit", _benchjson.command_line(__file__), rows,
                          ["figure", "specscope", "peer", "ratio (x)", "target"], notes,
                          args.json or None)


if __name__ == "__main__":
    main()
