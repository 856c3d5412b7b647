#!/usr/bin/env python
"""The documentation's performance pages, rendered from the benchmarks' JSON records.

Each benchmark script run with ``--json`` writes ``docs/performance/data/NAME.json``
(``scripts/_benchjson.py``); :func:`pages` turns those files into Markdown, one page per
benchmark and an index.  The documentation build calls it through mkdocs-gen-files;
run as a script it writes the pages into a folder (``OUT_DIR/index.md``,
``OUT_DIR/NAME.md``):

    python scripts/perf_pages.py OUT_DIR
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "docs" / "performance" / "data"


@dataclass(frozen=True)
class Bench:
    """A benchmark's page: its title, what it measures, how to run it, its headline."""

    name: str
    title: str
    summary: str
    about: str
    command: str
    headline: Callable[[dict], str | None]


# -- reading the records -----------------------------------------------------------------


def _tables(data: dict, column: str) -> list[dict]:
    return [t for t in data.get("tables", []) if column in t["columns"]]


def _row(data: dict, column: str, value: Any) -> dict | None:
    """The first row of any table whose ``column`` holds ``value``."""
    for table in data.get("tables", []):
        for row in table["rows"]:
            if row.get(column) == value:
                return row
    return None


def _x(v: float) -> str:
    if abs(v) >= 10:
        return f"{_number(v)}×"
    return f"{v:.2f}×" if abs(v) >= 0.01 else f"{v:.2g}×"


def _size(gb: float) -> str:
    return f"{_number(gb)} GB" if gb >= 1 else f"{_number(gb * 1e3)} MB"


def _text(s: str) -> str:
    """``s`` for Markdown: comparisons as ≥ and ≤, pipes escaped."""
    return s.replace(">=", "≥").replace("<=", "≤").replace("|", "\\|")


def _ms(seconds: float) -> str:
    return f"{_number(seconds * 1e3)} ms" if seconds < 1 else f"{_number(seconds)} s"


# -- the headline of each benchmark: its ratio against the peer (or its goal) --------------


def _engine_headline(data: dict) -> str | None:
    ratio = "time / specscope's, warm (x)"
    parts = []
    for ours, what in (("specscope spectrogram", "spectrogram"),
                       ("specscope TileEngine cold render", "whole-file render")):
        table = next((t for t in _tables(data, ratio)
                      if any(r["run"] == ours for r in t["rows"])), None)
        if table is None:
            continue
        # the peers: the other libraries (the rows "same, ..." are variants of specscope's)
        peers = [r for r in table["rows"] if r["run"] != ours and not r["run"].startswith("same")]
        if peers:
            best = min(peers, key=lambda r: r["warm (s)"])
            fastest = ", the fastest peer" if len(peers) > 1 else ""
            parts.append(f"{what} {_x(best[ratio])} as fast as {best['run']}{fastest} (warm)")
    return "; ".join(parts) or None


def _bench_headline(data: dict) -> str | None:
    parts = []
    for ours, what in (("specscope spectrogram", "spectrogram"), ("specscope fft", "FFT")):
        for table in _tables(data, "library"):
            rows = table["rows"]
            peers = [r for r in rows if r["library"] != ours]
            row = next((r for r in rows if r["library"] == ours), None)
            if row is not None and peers:
                best = min(peers, key=lambda r: r["warm (s)"])
                fastest = ", the fastest peer" if len(peers) > 1 else ""
                parts.append(f"{what} {_x(row['fastest peer / this, warm (x)'])} as fast as "
                             f"{best['library']}{fastest} (warm)")
    return "; ".join(parts) or None


def _pipeline_headline(data: dict) -> str | None:
    row = _row(data, "run", "2 worker processes")
    if row is None:
        return None
    return f"2 worker processes: {_x(row['speed-up (x)'])} the speed of 1 worker"


def _detect_headline(data: dict) -> str | None:
    rows = [r for t in _tables(data, "warm / STFT (x)")[:1] for r in t["rows"]]
    row = next((r for r in rows if r["detector"] == "energy"), None)
    if row is None:
        return None
    return (f"energy detector: {_x(row['warm / STFT (x)'])} the time of the recording's STFT, "
            f"{row['real time (x)']:.0f}× real time (warm)")


def _explorer_headline(data: dict) -> str | None:
    rows = [r for t in _tables(data, "median / reference (x)")[:1] for r in t["rows"]]
    rows = [r for r in rows if "pass" in r]
    if not rows:
        return None
    med = max(r["median / reference (x)"] for r in rows)
    p95 = max(r["p95 / reference (x)"] for r in rows)
    return (f"update after a zoom or pan: median {_x(med)}, p95 {_x(p95)} the reference's time "
            "(goals ≤ 0.4×, ≤ 1.0×; the worst pass)")


def _filter_headline(data: dict) -> str | None:
    parts = []
    for column, what, goal in (("total (ms)", "slowest redesign + analyses", 30),
                               ("drag step (ms)", "slowest drag step", 30),
                               ("preview (ms)", "slowest preview", 100)):
        values = [r[column] for t in _tables(data, column) for r in t["rows"]
                  if r.get(column) is not None]
        if values:
            parts.append(f"{what} {max(values):.3g} ms (goal < {goal} ms)")
    return "; ".join(parts) or None


def _live_headline(data: dict) -> str | None:
    rows = [r for t in _tables(data, "latency p99 (ms)") for r in t["rows"]
            if r["mode"] == "realtime" and r["block"] == 1024]
    if not rows:
        return None
    p99 = max(r["latency p99 (ms)"] for r in rows)
    dropped = sum(r["dropped"] for r in rows)
    return (f"1024-sample blocks in real time: p99 latency {p99:.3g} ms, {dropped} dropped "
            "(goal < 1 ms, none)")


def _io_headline(data: dict) -> str | None:
    rows = [r for t in _tables(data, "open + info (s)") for r in t["rows"]]
    if len(rows) < 2:
        return None
    small, big = min(rows, key=lambda r: r["size (GB)"]), max(rows, key=lambda r: r["size (GB)"])
    return (f"open + metadata, {_size(big['size (GB)'])} / {_size(small['size (GB)'])}: "
            f"{_x(big['open + info (s)'] / small['open + info (s)'])} the time "
            f"({_ms(big['open + info (s)'])})")


def _deployment_headline(data: dict) -> str | None:
    cold = _row(data, "step", "index, cold (headers read)")
    first = _row(data, "view", "open + first whole-span image")
    zoom = _row(data, "view", "zoom/pan update, median")
    parts = []
    if cold:
        parts.append(f"index cold {_number(cold['time (s)'])} s "
                     f"(target {_number(cold['target (s)'])} s)")
    if first:
        parts.append(f"first image {_number(first['time (ms)'])} ms")
    if zoom:
        parts.append(f"zoom/pan median {_number(zoom['time (ms)'])} ms")
    return ", ".join(parts) or None


def _deployment_pyramid_headline(data: dict) -> str | None:
    pyr = _row(data, "step", "pyramid, built and stored")
    plain = _row(data, "step", "plain STFT of the same samples")
    if not pyr or not plain:
        return None
    return (f"pyramid {_number(pyr['x real time per core'])}× real time per core, "
            f"{_x(pyr['time (s)'] / plain['time (s)'])} a plain STFT's time")


def _levels_headline(data: dict) -> str | None:
    ours = _row(data, "tool", "specscope")
    if not ours:
        return None
    text = f"{_number(ours['audio per core-minute (h)'])} h of audio per core-minute"
    if ours.get("ratio (x)"):
        text += f", {_x(ours['ratio (x)'])} PyPAM's"
    return text


def _edit_headline(data: dict) -> str | None:
    update = _row(data, "figure", "update after an edit (s)")
    export = _row(data, "figure", "export of the edited recording (x real time)")
    if not update or not export:
        return None
    return (f"an edit shows in {update['specscope'] * 1000:.0f} ms, "
            f"{_x(update['ratio (x)'])} a whole-signal STFT; the edited file exports at "
            f"{_number(export['specscope'])}× real time")


BENCHES = [
    Bench(
        "bench_engine", "The spectrogram the app computes",
        "the spectrogram kernel and a whole-file render against scipy, librosa, torch",
        "Every spectrogram of the app (the public `specscope.compute.spectrogram`, the tile "
        "engine, the exports, the pipeline's spectrogram stage, live blocks, batch runs) runs "
        "one kernel, the `stft_power` operator, so this benchmark times the paths the app "
        "takes. The first table times the public function on 2^24 float32 samples (2^20 with "
        "`--quick`; nfft 1024, hop 256, Hann, PSD) against `scipy.signal.spectrogram`, "
        "`scipy.signal.ShortTimeFFT.spectrogram`, `librosa.stft` power and `torch.stft` on "
        "the CPU, those installed. Every library runs in a new Python process for each repeat, "
        "the libraries taking turns: *fresh* is the first call in the process (after the "
        "imports and the data: what a script or the app's first render gets, the median over "
        "the processes), *warm* the best of the next calls. The second table is a cold render "
        "of a whole generated 48 kHz, 16-bit WAV (an hour; two minutes with `--quick`) at "
        "1600 columns by the `TileEngine`, beside the same render with a new array for every "
        "block's spectra and the render as the desktop window makes it (an empty disk cache, "
        "which it fills, and the session's spill), against scipy reading the same file and "
        "computing its spectrogram. The ratio columns are each row's time over specscope's "
        "(the first row's): above 1, specscope is that many times faster.",
        "python scripts/bench_engine.py --json", _engine_headline),
    Bench(
        "bench", "Spectrogram and FFT against peers",
        "the public spectrogram and the batched FFT against scipy, librosa, numpy, torch",
        "The same public `specscope.compute.spectrogram` as the engine benchmark, and a "
        "batched 1024-point FFT (the `fft` operator) against `numpy.fft` and `torch.fft`, on "
        "2^24 float32 samples (2^18 with `--quick`), fresh and warm in new processes, the "
        "libraries taking turns; it also checks that the results agree (the largest "
        "difference relative to the peak). `specscope bench` runs it. The ratio columns are "
        "the fastest peer's time over each row's: specscope's row above 1 means faster than "
        "every peer. torch and librosa are measured when installed (they are never "
        "dependencies); a missing one is named under the tables.",
        "python scripts/bench.py --json", _bench_headline),
    Bench(
        "bench_pipeline", "Batch processing",
        "a pipeline over a batch of recordings: workers, Dask, peak memory",
        "The example pipeline `assets/pipelines/hum_bandpass.json` (comb notch, band-pass, "
        "spectrogram) over a batch of generated 48 kHz recordings (8 of 300 s; 4 of 60 s with "
        "`--quick`) with one worker in the process, a pool of two worker processes and a Dask "
        "LocalCluster of two workers (`--dask ADDRESS` or `--dask spawn` adds an external "
        "cluster). The speed-up is the one-worker run's time over each run's, measured in the "
        "same session. The memory table runs one recording larger than the memory the run "
        "may use, in a child process whose address space is capped (`RLIMIT_AS`) at what it "
        "uses after start-up plus the limit, and reports its peak resident memory beside that "
        "of a recording a quarter of its size: it does not grow with the recording.",
        "python scripts/bench_pipeline.py --json", _pipeline_headline),
    Bench(
        "bench_detect", "Event detection",
        "the energy and template detectors on a recording with known calls; the executors",
        "A generated survey recording with known calls (by default an hour at 48 kHz with "
        "300 chirps and tonal whistles of 20-400 ms, 60 of them copies of one template call, "
        "at SNRs of 0-20 dB in pink noise whose level drifts by ±3 dB, with 50 Hz hum and its "
        "harmonics) goes through the public `specscope.compute.detect.detect` in a fresh "
        "process: the band-limited energy detector (2.5-12.5 kHz, 4 dB) and template "
        "matching with the box of the loudest template copy (threshold 0.5), each run twice "
        "(the first call, then warm). The tables give the recall per SNR band, the false "
        "detections (overlapping no call), the duplicates and the edge errors. The peers run "
        "in the same process: reading the file in chunks of 2^20 samples, and the STFT power "
        "of the whole recording at the detectors' 512/256 frames; the ratios are a detector's "
        "warm time over the peer's (below 1, faster than the peer). The executors table runs "
        "`run_detect` (what `specscope detect` runs) in the process, unsplit and as parts, on "
        "a pool of two processes and on a Dask cluster of a scheduler and two workers, in "
        "rounds of every executor in turn (the median of the rounds after the first, which "
        "warms the workers), each against the in-process run, and checks that every executor "
        "wrote the same table bytes.",
        "python scripts/bench_detect.py --json", _detect_headline),
    Bench(
        "bench_explorer", "Exploring a long recording",
        "50 scripted zooms and pans through the window's code path, against scipy",
        "The benchmark generates a recording (an hour at 48 kHz, 16-bit WAV; ten minutes with "
        "`--quick`; without `--hour`, also an RF64 file over 4 GB) and, in a new process, "
        "replays 50 scripted zooms and pans at 1600 px through the code path of the desktop "
        "window (`render_progressive` on a `TileEngine` with the disk cache and the session's "
        "spill): *fresh* is the first pass in the process, *warm* a second pass on a new "
        "engine with an empty disk cache. The reference is scipy reading one minute of the "
        "same recording and computing its spectrogram, timed every ten steps of the same "
        "pass; the ratios are an update's time over the reference's (the goals: a median of at "
        "most 0.4× and a 95th percentile of at most 1.0×). The table also gives the time to "
        "the first image after opening, to the exact image of the whole recording (the "
        "pyramid built) and the peak resident memory. With `--ahead ROUNDS` the same journey "
        "runs with `--think` seconds of looking at each view, without and with the pyramid "
        "built ahead in that time (`specscope.compute.view.plan_ahead`), alternating.",
        "python scripts/bench_explorer.py --hour --ahead 0 --json", _explorer_headline),
    Bench(
        "bench_filter", "Filter designer",
        "a redesign with every analysis view, a drag step in the widget, the preview",
        "Times the filter designer through the functions and the widget the app uses, per "
        "filter: a redesign with every analysis view (magnitude on 2048 points, phase wrapped "
        "and unwrapped, group delay, poles and zeros, impulse, step) and the spec's verdict; "
        "the fast preview (filtering the visible 10 s at 48 kHz and rendering it at 1600 px "
        "with the tile engine); and one drag step in the designer widget (an edge moved by "
        "1 %, the redesign, new data in all six views and a repaint; Qt offscreen, left out "
        "with `--no-gui`). There is no peer: the goals are a redesign and redraw under 30 ms "
        "and a preview under 100 ms. `--quick` runs fewer filters and repetitions.",
        "python scripts/bench_filter.py --json", _filter_headline),
    Bench(
        "bench_live", "Live processing",
        "48 kHz stereo through a filter and a spectrogram, block by block, in real time",
        "A 48 kHz stereo generator streams through a 4th-order Butterworth band-pass and a "
        "1024-point spectrogram (hop 256) in blocks of 256 and 1024 samples, in two modes: "
        "*realtime*, paced like a sound card (a full ring drops blocks) while a reader polls "
        "the new frames 30 times a second as the live window does, and *fast*, as fast as "
        "possible, which gives the throughput as a multiple of real time. The table gives the "
        "processing latency per block (median, 99th percentile, largest), the blocks dropped, "
        "the delay from a block entering the ring to its frames in the history, and the "
        "resident memory at the start, mid-run and the end (flat once the history reaches its "
        "memory budget and spills to disk). The goal: 1024-sample blocks in real time with a "
        "99th percentile under 1 ms and none dropped. A real-time run lasts 15 s by default; "
        "`--minutes N` makes it a soak.",
        "python scripts/bench_live.py --json", _live_headline),
    Bench(
        "bench_io", "Opening huge files",
        "opening and reading a 10 MB and a 10 GB raw file",
        "A 10 MB and a 10 GB raw complex64 (cf32) recording at 1 MS/s, the large one sparse "
        "(it costs no disk): the time of `specscope info` in a new process (the interpreter's "
        "start included), of opening the recording and reading its metadata in the process, "
        "and of reading a 1-second window (8 MB) at random places. The point is the ratio of "
        "the large file's times to the small one's, which should be about 1: opening does not "
        "depend on the size.",
        "python scripts/bench_io.py --json", _io_headline),
    Bench(
        "bench_deployment", "Deployments: indexing and viewing",
        "indexing 10,000 files cold and cached; the first image and zooms of 1,000 hours",
        "A folder of generated one-minute 48 kHz WAV files with BWF `bext` start times "
        "(10,000 by default, 500 with `--quick`; every ten hours a minute left out: a gap), "
        "written sparse so that they cost no disk: the time of indexing the folder with an "
        "empty header cache (cold), again with the cache (no header read), and of "
        "`specscope info FOLDER` in a new process (the interpreter's start included). The "
        "targets for 10,000 files: 10 s cold, 1 s cached, 2 s for `info`. The second table "
        "opens an indexed deployment of 1,000 one-hour sparse files (100 with `--quick`; an "
        "hour left out after every 50th) and times the first image of its whole span at "
        "1600 columns from a `TileEngine` with a disk cache (what the window shows first; "
        "the target 1 s), then 40 zooms and pans within two hours of it (2 h down to 1 s) "
        "once the pyramid holds their levels (the target: a median of 100 ms). There is no "
        "peer that opens a folder as one recording; the figures are against the targets.",
        "python scripts/bench_deployment.py --json", _deployment_headline),
    Bench(
        "bench_deployment_pyramid", "Deployments: the pyramid and detections",
        "the tile pyramid of a deployment against a plain STFT; detections across files",
        "Hours of 48 kHz audio in one-minute sparse WAV files (100 hours by default, one with "
        "`--quick`; a minute left out every hour): the tile engine builds the deployment's "
        "whole pyramid on one thread and keeps it in a disk cache, against a plain STFT of "
        "the same frames measured in the same run (the target: at least 500× real time per "
        "core). Then minutes of noise with 3 kHz tones, some across file boundaries, as "
        "one-minute files and as one file of the whole: `run_detect` on both in the process "
        "and on two worker processes must write the same table bytes.",
        "python scripts/bench_deployment_pyramid.py --json", _deployment_pyramid_headline),
    Bench(
        "bench_edit", "Region edits",
        "how soon an edit of 3 s of an hour shows and plays; the edited hour's export",
        "An hour of 48 kHz float32 noise and a tone in a WAV file; the edit removes a 3 s "
        "lasso region (nfft 1024). *Update* is what the view and playback need after an "
        "edit, the samples the region changes read and computed (the median of 5); its peer "
        "is `scipy.signal.ShortTimeFFT` analysing and synthesising the whole recording, "
        "what an edit costs when the whole signal is computed again. *View* is a cold render "
        "of 10 s around the region by the tile engine with the edit in its pipeline, *play* "
        "the first 0.5 s of playback from the region's start, *export* the edited recording "
        "written to WAV; their peers are the same with no edit. Targets: 0.1 s to show and "
        "play, 200× real time to export.",
        "python scripts/bench_edit.py --json", _edit_headline),
    Bench(
        "bench_levels", "Long-term levels",
        "minute hybrid millidecade levels against PyPAM; memory over a deployment",
        "One-minute 16-bit WAV files of 48 kHz noise (ten by default, three with `--quick`): "
        "minute levels of hybrid millidecade bands (nfft 48000, half overlap, Hann) by "
        "`compute_levels` and by PyPAM (`lifewatch-pypam` in its own venv, "
        "`scripts/pypam_venv`), the same files in the same run, one thread each; the figure "
        "is hours of audio per core-minute (the target: at least 10× PyPAM's) and the "
        "largest difference of their levels above 10 Hz. The second table is the peak "
        "memory of writing the levels of a deployment of sparse one-minute files to NetCDF "
        "in a new process, for a tenth of the files and for all of them (1,000 by default): "
        "it stays flat, the rows go to the file as each file's task ends.",
        "python scripts/bench_levels.py --json", _levels_headline),
]


# -- Markdown --------------------------------------------------------------------------------

_UNIT = re.compile(r"^(.*?)\s*\(([^()]*)\)$")


def _split(column: str) -> tuple[str, str]:
    """A column's name and unit: ``"warm (s)"`` -> ``("warm", "s")``."""
    m = _UNIT.match(column)
    return (m.group(1), m.group(2)) if m else (column, "")


def _number(v: float) -> str:
    a = abs(v)
    if a >= 100 or v == int(v):
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _cell(v: Any, unit: str, scale: float = 1.0) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) and scale == 1.0 and unit not in ("x", "%"):
        return str(v)
    if isinstance(v, int | float):
        v = v * scale
        if unit == "x":
            return _x(v)
        if unit == "%":
            return f"{v:.1f} %"
        if unit == "s?":  # a column of seconds of mixed sizes: each cell with its unit
            return _ms(v)
        return _number(v)
    return _text(str(v))


def table_markdown(table: dict) -> str:
    """A recorded table as a Markdown table, times in ms or s as their size asks.

    Parameters
    ----------
    table : dict
        ``columns`` (names, a unit in parentheses at the end) and ``rows`` (dicts).

    Returns
    -------
    str
        The Markdown table: ratios written with ×, a column of seconds under 1 s in ms, one
        of both small and large times with the unit in each cell.

    Examples
    --------
    >>> print(table_markdown({"columns": ["run", "warm (s)", "speed-up (x)"],
    ...                       "rows": [{"run": "a", "warm (s)": 0.0123, "speed-up (x)": 2}]}))
    | run | warm (ms) | speed-up |
    |---|---|---|
    | a | 12.3 | 2.00× |
    """
    heads, cells = [], []
    for column in table["columns"]:
        name, unit = _split(column)
        values = [r.get(column) for r in table["rows"]]
        numbers = [abs(v) for v in values if isinstance(v, int | float)
                   and not isinstance(v, bool)]
        scale = 1.0
        if unit == "s" and numbers and max(numbers) < 1:
            unit, scale = "ms", 1e3
        elif unit == "s" and numbers and min(numbers) < 0.1:
            unit = "s?"
        heads.append(name if unit in ("x", "%", "", "s?") else f"{name} ({unit})")
        cells.append([_cell(v, unit, scale) for v in values])
    lines = ["| " + " | ".join(_text(h) for h in heads) + " |",
             "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*cells, strict=True)]
    return "\n".join(lines)


def _conditions(data: dict) -> str:
    m = data.get("machine", {})
    when = data.get("date", "").replace("T", " ").replace("Z", " UTC")
    cores = m.get("cores")
    usable = m.get("cores_usable")
    core_text = f"{cores} cores" + (f" ({usable} usable)" if usable and usable != cores else "")
    memory = f", {m['memory_gib']:g} GiB" if m.get("memory_gib") else ""
    before, after = data.get("load_before"), data.get("load_after")
    load = (f"; load average {before[0]:.2f} before, {after[0]:.2f} after (1 minute)"
            if before and after else "")
    return (f"Measured {when} on {m.get('cpu') or 'an unknown CPU'}, {core_text}{memory}"
            f"{load}; Python {data.get('python')}, numpy {data.get('numpy')}, "
            f"scipy {data.get('scipy')}.")


def load(data_dir: Path | None = None) -> dict[str, dict]:
    """The records in ``data_dir`` (``docs/performance/data``), by benchmark name.

    Parameters
    ----------
    data_dir : pathlib.Path, optional
        Where the JSON records are.

    Returns
    -------
    dict
        The parsed records, keyed by their file's name without ``.json``.
    """
    folder = DATA if data_dir is None else Path(data_dir)
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def page(bench: Bench, data: dict | None) -> str:
    """The Markdown page of one benchmark; ``data`` is its record, or None.

    Parameters
    ----------
    bench : Bench
        The benchmark.
    data : dict or None
        Its JSON record; None where no figures have been recorded.

    Returns
    -------
    str
        The page.
    """
    out = [f"# {bench.title}", "", bench.about, ""]
    if data is None:
        out += ['!!! note "No figures recorded yet"', "",
                "    No figures have been recorded for this benchmark yet. The command below "
                "runs it and records them.", "",
                "## Reproduce", "", "```bash", bench.command, "```", "",
                "[All benchmarks](index.md).", ""]
        return "\n".join(out)
    out += ["## Reproduce", "", "```bash", data["command"], "```", ""]
    if data["command"] != bench.command:
        out += [f"The full-size run: `{bench.command}`. The figures below come from the "
                "command above.", ""]
    out += ["## Figures", "", _conditions(data), ""]
    for table in data.get("tables", []):
        if table.get("title"):
            out += [f"### {table['title']}", ""]
        out += [table_markdown(table), ""]
    if data.get("notes"):
        out += [f"- {_text(note)}" for note in data["notes"]] + [""]
    out += [f"The record: [{bench.name}.json](data/{bench.name}.json). "
            "[All benchmarks](index.md).", ""]
    return "\n".join(out)


def index(records: dict[str, dict]) -> str:
    """The index page: every benchmark, its headline figure and when it was measured.

    Parameters
    ----------
    records : dict
        The JSON records by benchmark name (see :func:`load`).

    Returns
    -------
    str
        The page.
    """
    out = ["# Performance", "",
           "Each benchmark is a script in `scripts/` that measures specscope and its peers in "
           "the same run, so that a busy or slow machine slows them alike; a ratio means "
           "something only against the peer measured beside it. Run with `--json`, a script "
           "also writes its tables, the machine, the date and the load average before and "
           "after the run to `docs/performance/data/NAME.json`, and these pages are rendered "
           "from those files when the documentation is built. Each page names the command "
           "that made its figures (`--quick` runs are smaller than the full ones).", "",
           "| benchmark | what it measures | headline | measured |", "|---|---|---|---|"]
    for bench in BENCHES:
        data = records.get(bench.name)
        if data is None:
            headline, when = "no figures recorded yet", "–"
        else:
            try:
                headline = bench.headline(data) or "–"
            except (KeyError, TypeError, ValueError, ZeroDivisionError):
                headline = "–"
            m = data.get("machine", {})
            when = f"{data.get('date', '')[:10]}, {m.get('cores')} cores"
            if data.get("load_before"):
                when += f", load {data['load_before'][0]:.1f}"
        out.append(f"| [{bench.title}]({bench.name}.md) | {bench.summary} | {headline} | "
                   f"{when} |")
    out.append("")
    return "\n".join(out)


def pages(data_dir: Path | None = None) -> dict[str, str]:
    """Every performance page, from the records in ``data_dir``.

    Parameters
    ----------
    data_dir : pathlib.Path, optional
        Where the JSON records are (``docs/performance/data`` by default).

    Returns
    -------
    dict
        ``"performance/NAME.md"`` to the page's Markdown, ``"performance/index.md"``
        included.
    """
    records = load(data_dir)
    out = {"performance/index.md": index(records)}
    for bench in BENCHES:
        out[f"performance/{bench.name}.md"] = page(bench, records.get(bench.name))
    return out


def _figure(data: dict, column: str, value: str, key: str) -> Any:
    row = _row(data, column, value)
    return None if row is None else row.get(key)


def _deployments_table(records: dict[str, dict]) -> dict:
    dep, pyr = records["bench_deployment"], records["bench_deployment_pyramid"]
    rows = [
        ("index 10,000 files, cold", _figure(dep, "step", "index, cold (headers read)",
                                             "time (s)"), "s", 10.0),
        ("index 10,000 files, cached", _figure(dep, "step", "index, cached", "time (s)"),
         "s", 1.0),
        ("`specscope info FOLDER`", _figure(dep, "step", "specscope info FOLDER", "time (s)"),
         "s", 2.0),
        ("first whole-span image of 1,000 h", _figure(
            dep, "view", "open + first whole-span image", "time (ms)"), "ms", 1000.0),
        ("zoom/pan update, median", _figure(dep, "view", "zoom/pan update, median",
                                            "time (ms)"), "ms", 100.0),
        ("the pyramid, real time per core", _figure(
            pyr, "step", "pyramid, built and stored", "x real time per core"), "×", 500.0),
    ]
    out = []
    for name, v, unit, target in rows:
        shown = "–" if v is None else f"{_number(v)} {unit}" if unit != "×" else _x(v)
        goal = f"{_number(target)} {unit}" if unit != "×" else f"≥ {_x(target)}"
        out.append({"figure": name, "measured": shown, "target": goal})
    return {"columns": ["figure", "measured", "target"], "rows": out}


def _levels_table(records: dict[str, dict]) -> dict:
    data = records["bench_levels"]
    table = next(t for t in data["tables"] if t.get("title") == "throughput")
    return {"columns": table["columns"], "rows": table["rows"]}


#: the README's benchmark blocks: name -> (the table from the records, the records used)
README_BLOCKS: dict[str, tuple[Callable[[dict], dict], tuple[str, ...]]] = {
    "deployments": (_deployments_table, ("bench_deployment", "bench_deployment_pyramid")),
    "levels": (_levels_table, ("bench_levels",)),
}


def readme_block(name: str, data_dir: Path | None = None) -> str:
    """The README's Markdown block ``name``: a table of figures from the benchmarks' records
    and the commands that made them.

    Parameters
    ----------
    name : str
        A key of :data:`README_BLOCKS`.
    data_dir : pathlib.Path, optional
        Where the JSON records are.

    Returns
    -------
    str
    """
    make, names = README_BLOCKS[name]
    records = load(data_dir)
    commands = ", ".join(f"`{records[n]['command']}`" for n in names)
    dates = sorted(records[n].get("date", "")[:10] for n in names)
    return (f"{table_markdown(make(records))}\n\n{commands} "
            f"({dates[-1]}, {records[names[0]]['machine'].get('cores')} cores; details on "
            "the Performance pages)")


_README_BLOCK = re.compile(r"(<!-- perf:(\w+) -->\n).*?(<!-- /perf -->)", re.DOTALL)


def readme_with_tables(text: str, data_dir: Path | None = None) -> str:
    """``text`` (the README) with each ``<!-- perf:NAME -->`` block rendered afresh."""
    return _README_BLOCK.sub(
        lambda m: f"{m.group(1)}{readme_block(m.group(2), data_dir)}\n{m.group(3)}", text)


def main(argv: list[str] | None = None) -> int:
    """Write the pages into the folder named by the first argument (``index.md`` etc.);
    with ``--readme``, render the README's benchmark tables from the records in place."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--readme"]:
        readme = DATA.parent.parent.parent / "README.md"
        readme.write_text(readme_with_tables(readme.read_text()))
        return 0
    if len(args) != 1:
        print("usage: perf_pages.py OUT_DIR | --readme", file=sys.stderr)
        return 2
    folder = Path(args[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (folder / name.removeprefix("performance/")).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
