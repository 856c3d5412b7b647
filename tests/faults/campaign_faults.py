"""The campaign's faults: each writer killed at seeded moments, and on a tiny tmpfs.

Run through :mod:`campaign` (``python tests/faults/campaign.py --kind kills``, ``--kind tmpfs``).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import _faults
from campaign import (
    CAUSES,
    MEMORY,
    Material,
    Outcome,
    Runner,
    Skip,
    _table,
    _wav,
    bytes_problem,
    error_lines,
    files_of,
    h5_problem,
    partials,
    scale,
    seed,
    sigmf_problem,
    wav_problem,
)

# -- writers: the command lines that write, and the check of what they wrote -----------------


@dataclass
class Writer:
    """A command that writes ``dest`` in a folder from an input, and how to check it."""

    name: str
    dest: str
    argv: Callable[[Path, Path], list[str]]  # (input, destination) -> argv
    check: Callable[[Path, list[Path]], str | None]  # (destination, references) -> problem
    pair: bool = False
    updates: bool = False  # the destination is also an input, updated on purpose
    live: bool = False

    def files(self, folder: Path) -> list[Path]:
        """The files of this writer's output in ``folder``."""
        d = folder / self.dest
        return [d, d.with_suffix(".sigmf-data")] if self.pair else [d]


def _first(refs: list[Path]) -> Path | None:
    return refs[0] if refs else None


def writers(m: Material, table: Path) -> dict[str, Writer]:
    """The writers of the command line, their inputs given at call time."""
    def h5(keys: tuple[str, ...] = ()) -> Callable[[Path, list[Path]], str | None]:
        return lambda d, refs: h5_problem(d, _first(refs), keys)

    def tab(i: Path) -> Path:  # a table given as the input, else the writer's
        return i if i.suffix == ".csv" else table

    def text(d: Path, refs: list[Path]) -> str | None:
        return bytes_problem(d, refs) if refs else None

    return {
        "export-h5": Writer("export-h5", "o.h5", lambda i, d: [
            "export", i, "-o", d, "--pipeline", m.heavy, "-q"], h5(("signal",))),
        "export-wav": Writer("export-wav", "o.wav", lambda i, d: [
            "export", i, "-o", d, "--pipeline", m.heavy, "-q"],
            lambda d, refs: wav_problem(d, _first(refs))),
        "export-flac": Writer("export-flac", "o.flac", lambda i, d: [
            "export", i, "-o", d, "-q"], lambda d, refs: wav_problem(d, None)),
        "export-sigmf": Writer("export-sigmf", "o.sigmf-meta", lambda i, d: [
            "export", i, "-o", d, "--pipeline", m.heavy, "-q"],
            lambda d, refs: sigmf_problem(d, refs or None), pair=True),
        "spectrogram": Writer("spectrogram", "o.h5", lambda i, d: [
            "spectrogram", i, "-o", d, "--nfft", "512", "--hop", "64", "-q"],
            h5(("spectrogram",))),
        "run": Writer("run", "r/in.h5", lambda i, d: [
            "run", m.pipe, i, "-o", d.parent, "-q"], h5(("spectrogram",))),
        "filter-apply": Writer("filter-apply", "f.h5", lambda i, d: [
            "filter", "apply", m.pipe, i, "-o", d, "-q"], h5(("spectrogram",))),
        "play": Writer("play", "p.wav", lambda i, d: ["play", i, "-o", d, "-q"],
                       lambda d, refs: wav_problem(d, _first(refs))),
        "annotations": Writer("annotations", "a.txt", lambda i, d: [
            "annotations", "convert", tab(i), d, "--to", "audacity", "-q"], text),
        "annotations-h5": Writer("annotations-h5", "in.h5", lambda i, d: [
            "annotations", "convert", tab(i), d, "--recording", d, "-q"],
            h5(("signal", "annotations/start_s", "annotations/stop_s")), updates=True),
        "coefficients": Writer("coefficients", "c.json", lambda i, d: [
            "filter", "design", "--design", "butter", "--fs", "16000", "--order", "4",
            "--cutoff", "1000", "-o", d, "-q"], text),
        "notch": Writer("notch", "n.json", lambda i, d: [
            "filter", "notch", m.hum, "--near", "50", "-o", d, "-q"], text),
        "live": Writer("live", "l.h5", lambda i, d: [
            "live", "--no-gui", "--source", "generator:chirp,channels=2", "--block", "256",
            "--rate", "0", "--duration", "30", "--record", d],
            lambda d, refs: h5_problem(d, None), live=True),
    }


def dest_problem(w: Writer, folder: Path, old: dict[str, bytes] | None,
                 refs: list[Path]) -> str | None:
    """Why ``w``'s destination in ``folder`` is neither absent, the old one, nor complete."""
    files = w.files(folder)
    now = {str(p.relative_to(folder)): p.read_bytes() for p in files if p.is_file()}
    if not now:
        return None if old is None else "the old output is gone"
    if old is not None and now == old:
        return None
    if len(now) != len(files):
        return f"half a pair: {sorted(now)}"
    return w.check(files[0], refs)


# -- 4: kills ----------------------------------------------------------------------------------

KILLED = ("export-h5", "export-wav", "export-sigmf", "spectrogram", "run", "annotations",
          "annotations-h5", "live")


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    """``argv`` with the value after ``flag`` replaced."""
    out = list(argv)
    out[out.index(flag) + 1] = value
    return out


def kind_kills(work: Path, runner: Runner) -> list[Outcome]:
    """SIGKILL each writer at seeded random moments; check its destination and temporaries."""
    m = Material(work / "in")
    big = _wav(work / "in" / "big" / "in.wav", 300_000, 48000, seed_=2, channels=2)
    small = _wav(work / "in" / "small" / "in.wav", 4000, 48000, seed_=3, channels=2)
    big_table = _table(work / "in" / "big.csv", 8_000)
    small_table = _table(work / "in" / "small.csv", 3)
    ws = writers(m, big_table)
    rng = random.Random(seed() * 1000 + 4)
    n_kills = max(2, round(4 * scale()))

    def argv_of(w: Writer, src: Path, dest: Path, duration: str = "30") -> list[str]:
        argv = w.argv(src, dest)
        return _with(_with(argv, "--rate", "1"), "--duration", duration) if w.live else argv

    # old outputs (a short input) and references (complete runs), timing each writer; an
    # update (annotations into a recording) starts from an export of the short input
    prep_jobs: list[dict | list[dict]] = []
    prep_keys = []
    for name in KILLED:
        w = ws[name]
        for what, src, duration in (("ref", big, "1"), ("old", small, "0.05")):
            dest = work / what / name / w.dest
            dest.parent.mkdir(parents=True)
            if w.updates:
                export = runner.job(["export", small, "-o", dest, "-q"], [], timeout=120)
                chain = [export] if what == "old" else [
                    export, runner.job(w.argv(big_table, dest), [], timeout=120,
                                       memory=2 * MEMORY)]
                prep_jobs.append(chain)
                prep_keys += [(name, what + "-export")] + ([(name, what)] if what == "ref"
                                                           else [])
                continue
            prep_jobs.append(runner.job(argv_of(w, src, dest, duration), [], timeout=120,
                                        memory=2 * MEMORY))
            prep_keys.append((name, what))
    outcomes: list[Outcome] = []
    prep = {}
    failed = set()
    flat = [j for c in prep_jobs for j in (c if isinstance(c, list) else [c])]
    for key, job, res in zip(prep_keys, flat, runner.run(prep_jobs), strict=True):
        prep[key] = res
        if res.get("code") != 0:  # the writer cannot be killed: said, not hidden
            o = Outcome("kills", f"{key[0]} {key[1]} (a complete run)", job["argv"], res)
            o.notes.append("a complete run failed, so this writer was not killed")
            outcomes.append(o)
            failed.add(key[0])
    kills, keys = [], []
    for name in KILLED:
        if name in failed:
            continue
        w = ws[name]
        span = 1.5 if w.live else max(0.3, 1.2 * prep[(name, "ref")].get("seconds", 1.0))
        old_files = {str(p.relative_to(work / "old" / name)): p.read_bytes()
                     for p in w.files(work / "old" / name) if p.is_file()}
        for k in range(n_kills):
            folder = work / "kill" / name / f"{k:02d}"
            folder.mkdir(parents=True)
            keep_old = bool(old_files) and (w.updates or rng.random() < 0.5)
            if keep_old:
                for rel, body in old_files.items():
                    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                    (folder / rel).write_bytes(body)
            moment = rng.uniform(0.0, span)
            inputs = [big_table] if "annotations" in name else [big]
            kills.append(runner.job(argv_of(w, big, folder / w.dest), inputs, timeout=moment,
                                    memory=2 * MEMORY))
            keys.append((name, folder, old_files if keep_old else None, moment))
    nexts, next_keys = [], []
    for (name, folder, old, moment), job, res in zip(keys, kills, runner.run(kills),
                                                     strict=True):
        w = ws[name]
        ref = work / "ref" / name / w.dest
        refs = [ref] if ref.exists() and not w.live else []
        problem = dest_problem(w, folder, old, refs)
        now = {str(p.relative_to(folder)): p.read_bytes() for p in w.files(folder)
               if p.is_file()}
        state = ("finished" if not res.get("hung") else "absent" if not now
                 else "old" if now == old else "new")
        o = Outcome("kills", f"{name} killed at {moment:.2f} s ({state}, "
                    f"{len(partials(folder))} temporary)", job["argv"], res, killed=True)
        if problem:
            o.damage.append(problem)
        outcomes.append(o)
        if not partials(folder):
            continue
        # the next write to the folder: the temporary files of the killed one go
        if w.updates:
            argv = w.argv(small_table, folder / w.dest)
        elif w.dest.startswith("r/"):
            argv = argv_of(w, small, folder / w.dest)
        else:
            src = small_table if "annotations" in name else small
            argv = argv_of(w, src, folder / ("next" + "".join(Path(w.dest).suffixes)),
                           "0.05")
        nexts.append(runner.job(argv, [small], timeout=60, memory=2 * MEMORY))
        next_keys.append((name, folder))
    for (name, folder), job, res in zip(next_keys, nexts, runner.run(nexts), strict=True):
        o = Outcome("kills", f"{name} next write", job["argv"], res)
        left = partials(folder)
        if left:
            o.notes.append(f"{len(left)} temporary files survive the next write: "
                           f"{left[0].name}")
        outcomes.append(o)
    return outcomes


# -- 5: a tiny tmpfs and a read-only bind mount ----------------------------------------------

def rooms() -> list[int]:
    """The free bytes left on the tmpfs: a full disk, a few blocks, more with the scale."""
    return [0, 16 << 10] + ([4 << 10, 64 << 10, 256 << 10] if scale() >= 2 else [])


def can_mount(work: Path) -> str | None:
    """None when this process can mount a tmpfs, else why not."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "mounting a tmpfs and a read-only bind mount needs root"
    probe = work / "probe"
    probe.mkdir(parents=True, exist_ok=True)
    try:
        _faults.mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe))
    except (subprocess.CalledProcessError, OSError) as exc:
        return f"cannot mount a tmpfs: {exc}"
    _faults.umount(probe)
    return None


def kind_tmpfs(work: Path, runner: Runner) -> list[Outcome]:
    """Every writer into a 4 MiB tmpfs filled to several levels, and into a read-only mount."""
    why = can_mount(work)
    if why:
        raise Skip(why)
    m = Material(work / "in")
    small = _wav(work / "in" / "small" / "in.wav", 4000, 16000, seed_=1)
    big = _wav(work / "in" / "big" / "in.wav", 1 << 20, 16000, seed_=2)  # 4 MiB of float32
    small_table = _table(work / "in" / "small.csv", 3)
    big_table = _table(work / "in" / "big.csv", 20_000)  # 1 MB as Audacity labels
    ws_small, ws_big = writers(m, small_table), writers(m, big_table)
    # the previous outputs, written once and copied into every faulty folder
    prev: list[dict | list[dict]] = []
    for name, w in ws_small.items():
        dest = work / "prev" / name / w.dest
        dest.parent.mkdir(parents=True)
        argv = w.argv(small, dest)
        if w.live:
            argv = _with(argv, "--duration", "0.05")
        job = runner.job(argv, [], timeout=120)
        prev.append([runner.job(["export", small, "-o", dest, "-q"], [], timeout=120), job]
                    if w.updates else job)
    outcomes: list[Outcome] = []
    failed = set()
    flat = [j for c in prev for j in (c if isinstance(c, list) else [c])]
    names = [n for n, w in ws_small.items() for _ in range(2 if w.updates else 1)]
    for name, job, res in zip(names, flat, runner.run(prev), strict=True):
        if res.get("code") != 0:  # the writer cannot be tested: said, not hidden
            o = Outcome("tmpfs", f"{name} (the previous output)", job["argv"], res)
            o.notes.append("the previous output failed, so this writer was left out")
            outcomes.append(o)
            failed.add(name)
    faults = [f"enospc-{r}" for r in rooms()] + ["erofs"]
    mounted: list[Path] = []
    try:
        plan, jobs, snaps = [], [], []
        for name, w in ws_big.items():
            if name in failed:
                continue
            for fault in faults:
                base = work / "fs" / f"{name}-{fault}"
                folder = base / "m"
                folder.mkdir(parents=True)
                where = folder
                if fault.startswith("enospc"):
                    _faults.mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder))
                    mounted.append(folder)
                else:
                    where = base / "src"
                shutil.copytree(work / "prev" / name, where, dirs_exist_ok=True)
                if fault.startswith("enospc"):
                    _faults.fill(folder, int(fault.split("-")[1]))
                else:
                    _faults.mount("--bind", str(where), str(folder))
                    mounted.append(folder)
                    _faults.mount("-o", "remount,ro,bind", str(folder))
                before = files_of(folder)
                before.pop("filler", None)
                snaps.append(before)
                plan.append((name, fault, folder))
                jobs.append(runner.job(w.argv(big, folder / w.dest), [big, big_table],
                                       timeout=60, memory=2 * MEMORY))
        for (name, fault, folder), job, before, res in zip(plan, jobs, snaps, runner.run(jobs),
                                                           strict=True):
            outcomes.append(_judge_fault(ws_big[name], fault, folder, job, before, res))
    finally:
        for p in reversed(mounted):
            _faults.umount(p)
    return outcomes


def _judge_fault(w: Writer, fault: str, folder: Path, job: dict, before: dict[str, bytes],
                 res: dict) -> Outcome:
    """A write into a full or read-only folder: one line naming the cause, nothing changed."""
    o = Outcome("tmpfs", f"{w.name} into {fault}", job["argv"], res)
    after = files_of(folder)
    after.pop("filler", None)
    code = res.get("code")
    if code == 0:  # it fitted: then it is complete, and alone
        problem = w.check(folder / w.dest, [])
        if problem:
            o.damage.append(problem)
        if partials(folder):
            o.notes.append(f"left {partials(folder)[0].name}")
    else:
        lines = error_lines(res["stderr"])
        cause = CAUSES[fault.split("-")[0]]
        if code in (1, 2) and lines and cause not in lines[-1]:
            o.notes.append(f"the line does not say '{cause}'")
        changed = [k for k in before if after.get(k) != before[k]]
        if changed and not (w.live and not h5_problem(folder / w.dest, None)):
            o.damage.append(f"{changed[0]} changed")
        new = sorted(set(after) - set(before))
        if new:
            o.notes.append(f"left {new[0]}")
    return o


