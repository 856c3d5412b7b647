"""The hostile-input and fault campaign: seven generators, one table.

Each generator makes command lines, runs them through the driver of
:mod:`hostile_corpus` (one forked child per command, under an address-space
limit and a timeout, inputs digested before and after) and judges the outcome:

``hostile``
    the malformed files of :func:`hostile_corpus.build_corpus` through the
    commands that read them;
``mutations``
    seeded damaged copies of valid files (:func:`hostile_corpus.mutations`);
``params``
    every option and positional of every command, enumerated from
    :func:`specscope.app.cli.build_parser`, given generated bad values
    (numbers, strings, JSON, paths) on an otherwise valid command line;
``kills``
    ``export``, ``spectrogram``, ``run``, ``annotations convert`` and
    ``live --record`` SIGKILLed at seeded random moments: the destination is
    absent, the old file byte for byte, or a complete file; the next write to the
    folder leaves no temporary file (``*.partial``, staged files, a journal);
``tmpfs``
    every writer into a 4 MiB tmpfs filled to several levels and into a
    read-only bind mount (root only);
``special``
    FIFOs, sockets, ``/dev/zero`` and ``/dev/full`` (copies of the nodes), a
    folder and a symbolic link loop as inputs and outputs;
``concurrent``
    several processes writing the same output at once: what is left is one
    complete run's file (a SigMF pair: meta and data of the same run).

A run is *ok* when it exits 0, or 2 (1 for a batch) with one error line; a
*crash* when it dies by a signal, runs out of memory or ends with another exit
status; a *traceback* when a Python exception escapes or an exit-2 error is not
one line; a *hang* when it outlives its timeout; *data lost* when an input
changed or a destination is damaged; *other* when a promise less grave is
broken (an error line over 1,200 characters, a failed write whose line does not
name the cause, a temporary file left behind).

``SPECSCOPE_CAMPAIGN_SEED`` seeds every generator (38 by default) and
``SPECSCOPE_CAMPAIGN_SCALE`` sizes them (1 by default: a few minutes on two
busy cores).  ``python tests/faults/campaign.py [--kind NAME] [--json OUT]`` runs it
and prints the table; ``tests/faults/test_campaign.py`` runs one kind per test.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
for _folder in (HERE, HERE.parent):  # tests/faults/ and tests/ (hostile_corpus, _faults)
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import hostile_corpus  # noqa: E402

DRIVER = Path(hostile_corpus.__file__)
KINDS = ("hostile", "mutations", "params", "kills", "tmpfs", "special", "concurrent")
COLUMNS = ("runs", "ok", "crashes", "tracebacks", "hangs", "data lost", "other")
BAD = ("crashes", "tracebacks", "hangs", "data lost", "other")
MEMORY = 1 << 30
TIMEOUT = 30.0
LONG_LINE = 1200
DRIVERS = 2
OK_CODES = (0, 1, 2, 130)
UNCAUGHT = 96  # the driver's exit status for an exception that escaped main()
CAUSES = {"enospc": "No space left on device", "erofs": "Read-only file system"}


def seed() -> int:
    """The campaign's seed (``SPECSCOPE_CAMPAIGN_SEED``, 38 by default)."""
    return int(os.environ.get("SPECSCOPE_CAMPAIGN_SEED", "38"))


def scale() -> float:
    """The campaign's size knob (``SPECSCOPE_CAMPAIGN_SCALE``, 1 by default)."""
    return max(0.05, float(os.environ.get("SPECSCOPE_CAMPAIGN_SCALE", "1")))


class Skip(Exception):
    """A kind that cannot run here (no root for mounts); the message says why."""


# -- outcomes -------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One command line run by the campaign, its driver result and what was found."""

    kind: str
    case: str
    argv: list[str]
    res: dict
    damage: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    may_run_on: bool = False
    killed: bool = False

    def columns(self) -> list[str]:
        """The bad columns this run counts in (empty: ok)."""
        r = self.res
        err = r.get("stderr", "")
        out: list[str] = []
        code = r.get("code")
        if r.get("hung"):
            if not (self.may_run_on or self.killed):
                out.append("hangs")
        elif "signal" in r or "MemoryError" in err or r.get("maxrss", 0) >= r.get(
                "memory", MEMORY) or (code not in (*OK_CODES, UNCAUGHT)):
            out.append("crashes")
        elif code == UNCAUGHT or "Traceback" in err:
            out.append("tracebacks")
        elif code == 2 and len(error_lines(err)) != 1:
            out.append("tracebacks")
        if r.get("lost") or self.damage:
            out.append("data lost")
        if self.all_notes():
            out.append("other")
        return out

    def all_notes(self) -> list[str]:
        """The lesser problems: the notes, and an error line too long to read."""
        r = self.res
        notes = list(self.notes)
        if not r.get("hung") and r.get("code") not in (0, None):
            long = [ln for ln in error_lines(r.get("stderr", "")) if len(ln) > LONG_LINE]
            if long:
                notes.append(f"an error line of {len(long[0])} characters")
        return notes

    def why(self) -> str:
        """The failing columns, the exit status and the last stderr line, for a report."""
        r = self.res
        status = ("timeout" if r.get("hung") else f"signal {r['signal']}" if "signal" in r
                  else f"exit {r.get('code')}")
        lines = [ln for ln in r.get("stderr", "").splitlines() if ln.strip()]
        last = shorten(lines[-1], 240) if lines else "(no stderr)"
        extra = "; ".join([*(f"lost {p}" for p in r.get("lost", [])), *self.damage,
                           *self.all_notes()])
        return f"{status}: {last}" + (f" [{extra}]" if extra else "")


def error_lines(stderr: str) -> list[str]:
    """The stderr lines less argparse's usage block and blank lines."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if lines and lines[0].startswith("usage:"):
        k = 1
        while k < len(lines) and lines[k].startswith(" "):
            k += 1
        lines = lines[k:]
    return lines


def shorten(text: str, n: int = 80) -> str:
    """``text`` cut to about ``n`` characters, its length said."""
    return text if len(text) <= n else f"{text[:n - 20]}...({len(text)} chars)"


def _run_of(mt: re.Match) -> str:
    c = mt.group(1)
    return f"{{{c if c.isprintable() else repr(c)}*{len(mt.group(0))}}}"


def shown_argv(argv: list[str]) -> str:
    """A shell-like rendering of ``argv``: runs of a character as {c*N}, odd bytes escaped."""
    words = []
    for a in argv:
        a = re.sub(r"(.)\1{39,}", _run_of, a, flags=re.DOTALL)
        if "\x00" in a or any("\udc80" <= c <= "\udcff" for c in a):
            words.append("$" + repr(a.encode("utf-8", "surrogateescape"))[1:])
        else:
            words.append(shlex.quote(a))
    return "specscope " + " ".join(words)


def table(outcomes: Iterable[Outcome]) -> dict[str, int]:
    """The campaign row of ``outcomes``: runs, ok and each bad column."""
    row = dict.fromkeys(COLUMNS, 0)
    for o in outcomes:
        row["runs"] += 1
        cols = o.columns()
        if not cols:
            row["ok"] += 1
        for c in cols:
            row[c] += 1
    return row


def failures(outcomes: Iterable[Outcome]) -> list[str]:
    """One line per failing run: its columns, case, command line and last stderr line."""
    out = []
    for o in outcomes:
        cols = o.columns()
        if cols:
            out.append(f"{'/'.join(cols)}: {o.case}: {shown_argv(o.argv)}: {o.why()}")
    return out


# -- running -----------------------------------------------------------------------------


class Runner:
    """Feeds jobs to the :mod:`hostile_corpus` driver, ``DRIVERS`` processes at a time."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.count = itertools.count()
        self.env = driver_env(work)

    def job(self, argv: list[str], inputs: Iterable[str | Path] = (), *,
            timeout: float = TIMEOUT, memory: int = MEMORY) -> dict:
        """A driver job (log files named here)."""
        stem = self.logs / f"{next(self.count):06d}"
        for ext in (".out", ".err"):  # a child killed before it opens them leaves none
            Path(f"{stem}{ext}").touch()
        return {"argv": [str(a) for a in argv], "inputs": [str(p) for p in inputs],
                "out": f"{stem}.out", "err": f"{stem}.err", "timeout": float(timeout),
                "memory": int(memory)}

    def run(self, jobs: list[dict | list[dict]], drivers: int = DRIVERS) -> list[dict]:
        """Every job through the driver; results in order, a list of jobs run in its order.

        A job given as a list (a chain) runs in one driver, one after the other, and gives
        its results in place, flattened.
        """
        chains = [j if isinstance(j, list) else [j] for j in jobs]
        flat = [j for c in chains for j in c]
        if not flat:
            return []
        drivers = max(1, min(drivers, len(chains)))
        parts: list[list[int]] = [[] for _ in range(drivers)]
        k = 0
        for i, c in enumerate(chains):
            parts[i % drivers] += list(range(k, k + len(c)))
            k += len(c)
        procs = [subprocess.Popen([sys.executable, str(DRIVER)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=self.env, cwd=self.work) for _ in parts]
        results: list[dict] = [{}] * len(flat)
        for proc, part in zip(procs, parts, strict=True):
            limit = 120 + sum(flat[i]["timeout"] + 5 for i in part)
            out, err = proc.communicate(json.dumps([flat[i] for i in part]), timeout=limit)
            if proc.returncode != 0:
                raise RuntimeError(f"the driver failed: {err[-3000:]}")
            for i, r in zip(part, json.loads(out), strict=True):
                r["memory"] = flat[i]["memory"]
                results[i] = r
        return results

    def together(self, groups: list[list[dict]]) -> list[list[dict]]:
        """Each group's jobs started at once (forked after one import, released together)."""
        for g in groups:
            for j in g:
                j["result"] = j["err"][:-4] + ".res"
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--gate"],
                              input=json.dumps(groups), capture_output=True, text=True,
                              env=self.env, cwd=self.work, check=False,
                              timeout=120 + sum(max(j["timeout"] for j in g) + 5
                                                for g in groups))
        if proc.returncode != 0:
            raise RuntimeError(f"the gate failed: {proc.stderr[-3000:]}")
        out = json.loads(proc.stdout)
        for g, rs in zip(groups, out, strict=True):
            for j, r in zip(g, rs, strict=True):
                r["memory"] = j["memory"]
        return out


def driver_env(work: Path) -> dict[str, str]:
    """The environment of the driven commands: one BLAS thread, private config and caches."""
    env = dict(os.environ)
    for sub in ("home", "cfg", "cache", "data", "sscache", "ssconfig"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MALLOC_ARENA_MAX="2", HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "cfg"),
               XDG_CACHE_HOME=str(work / "cache"), XDG_DATA_HOME=str(work / "data"),
               SPECSCOPE_CACHE_DIR=str(work / "sscache"),
               SPECSCOPE_CONFIG_DIR=str(work / "ssconfig"), QT_QPA_PLATFORM="offscreen",
               SPECSCOPE_PLUGINS="", PYTHONWARNINGS="ignore")
    for name in ("SPECSCOPE_MEMORY_BUDGET", "SPECSCOPE_STALE_PARTIAL_S", "SPECSCOPE_AUDIO_DEVICE"):
        env.pop(name, None)
    return env


def _gate_main() -> None:
    """``campaign.py --gate``: run groups of driver jobs, each group's jobs at once."""
    groups = json.loads(sys.stdin.read())
    os.environ.setdefault("SPECSCOPE_PLUGINS", "")
    import h5py  # noqa: F401 - imported once, before the forks
    import scipy.signal  # noqa: F401
    import soundfile  # noqa: F401
    from specscope.app import cli

    cli.build_parser()
    out = []
    for group in groups:
        r, w = os.pipe()
        pids = []
        for job in group:
            pid = os.fork()
            if pid == 0:
                try:
                    os.close(w)
                    os.read(r, 1)
                    res = hostile_corpus.drive([job])[0]
                    Path(job["result"]).write_text(json.dumps(res))
                finally:
                    os._exit(0)
            pids.append(pid)
        os.close(r)
        os.write(w, b"x" * len(group))
        os.close(w)
        for pid in pids:
            os.waitpid(pid, 0)
        rows = []
        for job in group:
            try:
                rows.append(json.loads(Path(job["result"]).read_text()))
            except (OSError, ValueError):
                rows.append({"hung": False, "code": 95, "stderr": "the gate lost this run",
                             "stderr_bytes": 0, "lost": [], "maxrss": 0, "seconds": 0})
        out.append(rows)
    print(json.dumps(out))


# -- material ----------------------------------------------------------------------------


def _wav(path: Path, n: int, fs: int, seed_: int = 0, hum: bool = False,
         channels: int = 1) -> Path:
    import soundfile

    r = np.random.default_rng(seed_)
    x = r.standard_normal((n, channels)) * 0.05
    if hum:
        t = np.arange(n) / fs
        for k in (1, 2, 3):
            x += (0.2 / k) * np.sin(2 * np.pi * 50 * k * t)[:, None]
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


def _table(path: Path, rows: int, offset: float = 0.0) -> Path:
    lines = ["start_s,stop_s,freq_low_hz,freq_high_hz,label,channel"]
    lines += [f"{offset + i * 1e-3:.6f},{offset + i * 1e-3 + 5e-4:.6f},100,200,call {i},0"
              for i in range(rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


PIPELINE = {"specscope": "pipeline/1", "name": "campaign", "steps": [
    {"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": 1000,
                                "btype": "lowpass"}},
    {"op": "spectrogram", "params": {"nfft": 256, "hop": 128}}]}
HEAVY = {"specscope": "pipeline/1", "name": "heavy", "steps": [
    {"op": "filter", "params": {"design": "firwin", "numtaps": 255, "cutoff": 3000.0,
                                "btype": "lowpass"}}]}


class Material:
    """Valid inputs every kind starts from, in ``d``."""

    def __init__(self, d: Path) -> None:
        d.mkdir(parents=True, exist_ok=True)
        self.d = d
        self.wav = d / "good.wav"
        self.wav.write_bytes(hostile_corpus._audio_bytes("WAV", "PCM_16"))
        self.hum = _wav(d / "hum.wav", 16000, 16000, seed_=1, hum=True)
        self.iq = d / "iq.cf32"
        self.iq.write_bytes(hostile_corpus._iq(4000))
        self.pipe = d / "pipe.json"
        self.pipe.write_text(json.dumps(PIPELINE, indent=1))
        self.heavy = d / "heavy.json"
        self.heavy.write_text(json.dumps(HEAVY, indent=1))
        self.spec = d / "spec.json"
        self.spec.write_text(json.dumps({"design": "butter", "order": 4, "cutoff": 1000.0}))
        self.table = _table(d / "table.csv", 5)

    def inputs(self) -> list[Path]:
        """The files no command may change."""
        return [self.wav, self.hum, self.iq, self.pipe, self.heavy, self.spec, self.table]


# -- destination checks -------------------------------------------------------------------


def _h5_read(path: Path) -> dict[str, np.ndarray]:
    """Every dataset of an HDF5 file, read whole (raises when it does not open or read)."""
    import h5py

    out: dict[str, np.ndarray] = {}
    with h5py.File(path, "r") as f:
        def visit(name: str, obj: object) -> None:
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        f.visititems(visit)
    return out


def h5_problem(path: Path, ref: Path | None, keys: tuple[str, ...] = ()) -> str | None:
    """Why ``path`` is no complete HDF5 output like ``ref`` (None when it is)."""
    try:
        got = _h5_read(path)
    except Exception as exc:  # noqa: BLE001 - what h5py says of a damaged file
        return f"{path.name} does not read in h5py: {shorten(str(exc), 160)}"
    if ref is None:
        return None
    want = _h5_read(ref)
    for k in keys or [k for k, v in want.items() if getattr(v, "dtype", None) is not None
                      and v.dtype.kind in "fciub"]:
        if k not in got:
            return f"{path.name} has no /{k}"
        if not np.array_equal(np.asarray(got[k]), np.asarray(want[k])):
            return f"{path.name}: /{k} is not a complete run's"
    return None


def wav_problem(path: Path, ref: Path | None) -> str | None:
    import soundfile

    try:
        x, fs = soundfile.read(str(path), dtype="float32")
    except Exception as exc:  # noqa: BLE001
        return f"{path.name} does not read in soundfile: {shorten(str(exc), 160)}"
    if ref is not None:
        y, gs = soundfile.read(str(ref), dtype="float32")
        if fs != gs or x.shape != y.shape or not np.array_equal(x, y):
            return f"{path.name}: {x.shape[0]} samples, not a complete run's {y.shape[0]}"
    return None


def sigmf_problem(meta: Path, refs: list[Path] | None) -> str | None:
    """Why a SigMF pair is not one complete run's (torn, damaged, or no run's at all)."""
    data = meta.with_suffix(".sigmf-data")
    try:
        doc = json.loads(meta.read_bytes())
        glob = doc["global"]
        body = data.read_bytes()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{meta.name}: the pair does not read ({shorten(str(exc), 120)})"
    sha = glob.get("core:sha512")
    if sha and hashlib.sha512(body).hexdigest() != sha:
        return (f"{meta.name}: torn pair, the meta's core:sha512 is not the data's "
                f"({len(body)} bytes, meta records {glob.get('specscope:data_bytes')})")
    if "specscope:data_bytes" in glob and glob["specscope:data_bytes"] != len(body):
        return (f"{meta.name}: torn pair, data {len(body)} bytes, meta records "
                f"{glob['specscope:data_bytes']}")
    if refs is not None and not any(r.with_suffix(".sigmf-data").read_bytes() == body
                                    and _same_meta(json.loads(r.read_bytes()), doc)
                                    for r in refs):
        return f"{meta.name}: the pair is no complete run's"
    return None


def _same_meta(a: dict, b: dict) -> bool:
    def strip(d: dict) -> dict:
        g = {k: v for k, v in d.get("global", {}).items()
             if "datetime" not in k and k != "specscope:source"}
        return {**d, "global": g}
    return strip(a) == strip(b)


def bytes_problem(path: Path, refs: list[Path]) -> str | None:
    try:
        body = path.read_bytes()
    except OSError as exc:
        return f"{path.name}: {exc.strerror}"
    if not any(body == r.read_bytes() for r in refs):
        return f"{path.name}: {len(body)} bytes, no complete run's"
    return None


def partials(folder: Path) -> list[Path]:
    """Temporary files left under ``folder``: hidden ones (partial, staged, journal)."""
    return sorted(p for p in folder.rglob("*")
                  if p.name.startswith(".") or p.name.endswith(".partial"))


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


# -- 1, 2: hostile files and mutations ------------------------------------------------------


def kind_hostile(work: Path, runner: Runner) -> list[Outcome]:
    """The malformed files of :func:`hostile_corpus.build_corpus` x the commands reading them."""
    (work / "corpus").mkdir()
    cases = hostile_corpus.build_corpus(work / "corpus", seed=seed())
    return _cases(cases, runner, "hostile", share=0.25 * scale())


def kind_mutations(work: Path, runner: Runner) -> list[Outcome]:
    """Seeded damaged copies of valid files of every format (:func:`hostile_corpus.mutations`)."""
    n = max(20, round(150 * scale()))
    cases = hostile_corpus.mutations(work / "mutations", n, seed=seed() * 1000 + 7)
    return _cases(cases, runner, "mutations")


def _cases(cases: list[hostile_corpus.Case], runner: Runner, kind: str,
           share: float = 1.0) -> list[Outcome]:
    """Each case's command lines (a seeded ``share`` of them, one at least) through the driver."""
    rng = random.Random(seed() * 1000 + 5)
    jobs, keys = [], []
    for case in cases:
        keep = max(1, math.ceil(len(case.argvs) * min(1.0, share)))
        for k in sorted(rng.sample(range(len(case.argvs)), keep)):
            argv = case.argvs[k]
            jobs.append(runner.job(argv, case.inputs))
            keys.append((f"{case.name}#{k}", argv))
    results = runner.run(jobs)
    return [Outcome(kind, name, argv, res) for (name, argv), res in zip(keys, results,
                                                                          strict=True)]


# -- 6: special files as inputs and outputs -----------------------------------------------------

SPECIAL = ("fifo", "socket", "zero", "full", "dir", "loop")


class Nodes:
    """Fresh special files for path values: one folder per use, so no use sees another's."""

    def __init__(self, d: Path) -> None:
        self.d = d
        self.n = itertools.count()
        self.devices = os.geteuid() == 0 if hasattr(os, "geteuid") else False
        self.made: list[tuple[Path, str, object]] = []

    def make(self, kind: str, name: str) -> Path:
        """A ``kind`` node (fifo, socket, null, zero, full, dir, loop) named ``name``."""
        folder = self.d / f"{next(self.n):05d}"
        folder.mkdir(parents=True)
        p = folder / name
        if kind == "fifo":
            os.mkfifo(p)
        elif kind == "socket":
            os.mknod(p, 0o600 | stat.S_IFSOCK)
        elif kind in ("null", "zero", "full"):
            minor = {"null": 3, "zero": 5, "full": 7}[kind]
            if self.devices:
                try:
                    os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
                except OSError:
                    self.devices = False
            if not self.devices:
                raise Skip(f"cannot make a copy of /dev/{kind} (mknod needs root)")
        elif kind == "dir":
            p.mkdir()
            (p / "inside.txt").write_text("keep me")
        elif kind == "loop":
            other = folder / ("loop2" + "".join(Path(name).suffixes))
            p.symlink_to(other.name)
            other.symlink_to(p.name)
        else:
            raise ValueError(kind)
        self.made.append((p, kind, self.state(p)))
        return p

    @staticmethod
    def state(p: Path) -> object:
        """What ``p`` is: a folder and its files, a link and its target, or a node type."""
        try:
            st = os.lstat(p)
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            return ("dir", files_of(p))
        if stat.S_ISLNK(st.st_mode):
            return ("link", os.readlink(p))
        return (stat.S_IFMT(st.st_mode), st.st_rdev)

    def damage(self, p: Path) -> list[str]:
        """What happened to node ``p`` and its folder since it was made."""
        for q, kind, before in self.made:
            if q == p:
                now = self.state(p)
                out = []
                if kind == "dir" and isinstance(now, tuple) and now[0] == "dir":
                    now = ("dir", {k: v for k, v in now[1].items() if k in before[1]})
                if now != before and not (kind == "loop" and now is not None and
                                           stat.S_ISREG(os.lstat(p).st_mode)):
                    out.append(f"the {kind} {p.name} was replaced or changed")
                left = [x.name for x in partials(p.parent)]
                if left:
                    out.append(f"left {left[0]}")
                return out
        return []


def kind_special(work: Path, runner: Runner) -> list[Outcome]:
    """FIFOs, sockets, devices, a folder and a symbolic link loop where files are expected."""
    m = Material(work / "in")
    out = work / "out"
    out.mkdir()
    nodes = Nodes(work / "nodes")
    w, o = str(m.wav), str(out)
    live = ["live", "--no-gui", "--rate", "0", "--duration", "0.2"]
    q = "-q"
    uses: list[tuple[str, str, Callable[[str], list[str]]]] = [  # (input|output, suffix, argv)
        ("input", ".wav", lambda x: ["info", x]),
        ("input", ".wav", lambda x: ["spectrogram", x, "-o", f"{o}/s.h5", q]),
        ("input", ".wav", lambda x: ["export", x, "-o", f"{o}/e.h5", q]),
        ("input", ".wav", lambda x: ["measure", x]),
        ("input", ".wav", lambda x: ["play", x, "-o", f"{o}/p.wav", q]),
        ("input", ".json", lambda x: ["filter", "apply", x, w, "-o", f"{o}/fa.h5", q]),
        ("input", ".wav", lambda x: ["filter", "apply", str(m.spec), x, "-o", f"{o}/fa2.h5",
                                     q]),
        ("input", ".json", lambda x: ["filter", "design", "--spec", x, "--fs", "8000"]),
        ("input", ".wav", lambda x: ["filter", "notch", x, "--near", "50", q]),
        ("input", ".json", lambda x: ["run", x, w, "-o", f"{o}/r1", q]),
        ("input", ".wav", lambda x: ["run", str(m.pipe), x, "-o", f"{o}/r2", q]),
        ("input", ".json", lambda x: ["export", w, "--pipeline", x, "-o", f"{o}/ep.h5", q]),
        ("input", ".csv", lambda x: ["annotations", "list", x]),
        ("input", ".csv", lambda x: ["annotations", "convert", x, f"{o}/a.txt", "--to",
                                     "audacity", q]),
        ("input", ".wav", lambda x: ["annotations", "list", str(m.table), "--recording", x]),
        ("input", ".wav", lambda x: ["detect", "--detector", "energy", x, "-o", f"{o}/d", q]),
        ("input", ".wav", lambda x: [*live, "--source", f"file:{x}"]),
        ("input", ".json", lambda x: [*live, "--source", "generator:chirp", "--pipeline", x]),
        ("input", ".h5", lambda x: ["rerun", x]),
        ("input", ".sigmf-meta", lambda x: ["info", x]),
        ("input", "", lambda x: ["--plugins", x, "ops", "--family", "spectral"]),
        ("output", ".h5", lambda x: ["export", w, "-o", x, q]),
        ("output", ".wav", lambda x: ["export", w, "-o", x, q]),
        ("output", ".sigmf-meta", lambda x: ["export", w, "-o", x, q]),
        ("output", ".h5", lambda x: ["spectrogram", w, "-o", x, q]),
        ("output", ".h5", lambda x: ["filter", "apply", str(m.spec), w, "-o", x, q]),
        ("output", ".wav", lambda x: ["play", w, "-o", x, q]),
        ("output", ".txt", lambda x: ["annotations", "convert", str(m.table), x, "--to",
                                      "audacity", q]),
        ("output", ".json", lambda x: ["filter", "design", "--design", "butter", "--fs", "8000",
                                       "--order", "4", "--cutoff", "1000", "-o", x, q]),
        ("output", ".json", lambda x: ["filter", "notch", str(m.hum), "--near", "50", "-o", x,
                                       q]),
        ("output", "", lambda x: ["run", str(m.pipe), w, "-o", x, q]),
        ("output", "", lambda x: ["detect", "--detector", "energy", w, "-o", x, q]),
        ("output", ".h5", lambda x: [*live, "--source", "generator:chirp", "--record", x]),
    ]
    # each use meets a seeded share of the special kinds, the kinds taken in turn
    rng = random.Random(seed() * 1000 + 6)
    order = rng.sample(SPECIAL, len(SPECIAL))
    keep = max(1, math.ceil(len(SPECIAL) * min(1.0, 0.5 * scale())))
    jobs, meta = [], []
    for i, (role, suffix, make) in enumerate(uses):
        for j in range(keep):
            kind = order[(i * keep + j) % len(order)]
            if kind == "dir" and role == "output" and not suffix:
                continue  # a folder is what run and detect write into
            try:
                node = nodes.make(kind, f"x{suffix}")
            except Skip:
                continue
            jobs.append(runner.job(make(str(node)), m.inputs(), timeout=15))
            meta.append((f"{kind} as {role}", node))
    outcomes = []
    for (case, node), job, res in zip(meta, jobs, runner.run(jobs), strict=True):
        o = Outcome("special", case, job["argv"], res)
        o.damage += nodes.damage(node)
        if res.get("code") == 0 and "output" in case and not (
                node.parent / node.name).is_file() and "loop" not in case:
            o.notes.append("exit 0, yet nothing written")
        outcomes.append(o)
    return outcomes


# -- 7: concurrent writers ---------------------------------------------------------------------


def kind_concurrent(work: Path, runner: Runner) -> list[Outcome]:
    """N processes writing the same output at once: one complete run's file is left."""
    m = Material(work / "in")
    n_procs = 6
    rounds = max(1, round(3 * scale()))
    tables = [_table(work / "in" / f"t{k}.csv", k + 1, offset=k) for k in range(n_procs)]

    def stop(k: int) -> str:
        return f"{0.1 * (k + 1):.1f}"
    racers: dict[str, tuple[str, Callable[[int, Path], list[str]], Callable]] = {
        "h5": ("o.h5", lambda k, d: ["export", m.hum, "-o", d, "--stop", stop(k), "-q"],
               lambda d, refs: _any_ok(refs, lambda r: h5_problem(d, r, ("signal",)))),
        "wav": ("o.wav", lambda k, d: ["export", m.hum, "-o", d, "--stop", stop(k), "-q"],
                lambda d, refs: _any_ok(refs, lambda r: wav_problem(d, r))),
        "sigmf": ("o.sigmf-meta", lambda k, d: ["export", m.hum, "-o", d, "--stop", stop(k),
                                                "-q"],
                  lambda d, refs: sigmf_problem(d, refs)),
        "csv": ("o.csv", lambda k, d: ["annotations", "convert", tables[k], d, "--to", "csv",
                                       "-q"],
                lambda d, refs: bytes_problem(d, refs)),
        "json": ("o.json", lambda k, d: ["filter", "design", "--design", "butter", "--fs",
                                         "8000", "--order", str(k + 1), "--cutoff", "1000",
                                         "-o", d, "-q"],
                 lambda d, refs: bytes_problem(d, refs)),
    }
    refs_jobs, ref_paths = [], {}
    for name, (dest, argv, _) in racers.items():
        for k in range(n_procs):
            p = work / "ref" / name / str(k) / dest
            p.parent.mkdir(parents=True)
            refs_jobs.append(runner.job(argv(k, p), []))
            ref_paths.setdefault(name, []).append(p)
    for job, res in zip(refs_jobs, runner.run(refs_jobs), strict=True):
        if res.get("code") != 0:
            raise RuntimeError(f"reference failed: {job['argv']}: {res['stderr'][-1000:]}")
    groups, keys = [], []
    inputs = [m.hum, *tables]
    for r in range(rounds):
        for name, (dest, argv, _) in racers.items():
            folder = work / "race" / name / str(r)
            folder.mkdir(parents=True)
            groups.append([runner.job(argv(k, folder / dest), inputs, timeout=60)
                           for k in range(n_procs)])
            keys.append((name, r, folder))
    outcomes = []
    for (name, r, folder), group, results in zip(keys, groups, runner.together(groups),
                                                 strict=True):
        dest, _, check = racers[name]
        problem = None
        if any(res.get("code") == 0 for res in results):
            problem = check(folder / dest, ref_paths[name]) if (folder / dest).exists() \
                else f"{dest} is missing though a writer succeeded"
        left = partials(folder)
        for k, (job, res) in enumerate(zip(group, results, strict=True)):
            o = Outcome("concurrent", f"{name} round {r} writer {k}", job["argv"], res)
            if problem and k == 0:
                o.damage.append(problem)
            if left and k == 0:
                o.notes.append(f"left {left[0].name}")
            outcomes.append(o)
    return outcomes


def _any_ok(refs: list[Path], check: Callable[[Path], str | None]) -> str | None:
    problems = [check(r) for r in refs]
    return None if any(p is None for p in problems) else problems[0]


# -- the campaign ------------------------------------------------------------------------------

def _kind_kills(work: Path, runner: Runner) -> list[Outcome]:
    from campaign_faults import kind_kills

    return kind_kills(work, runner)


def _kind_tmpfs(work: Path, runner: Runner) -> list[Outcome]:
    from campaign_faults import kind_tmpfs

    return kind_tmpfs(work, runner)


def _kind_params(work: Path, runner: Runner) -> list[Outcome]:
    from campaign_params import kind_params  # the generator of bad values, a module of its own

    return kind_params(work, runner)


GENERATORS: dict[str, Callable[[Path, Runner], list[Outcome]]] = {
    "hostile": kind_hostile, "mutations": kind_mutations, "params": _kind_params,
    "kills": _kind_kills, "tmpfs": _kind_tmpfs, "special": kind_special,
    "concurrent": kind_concurrent}


def run_kind(kind: str, work: Path) -> list[Outcome]:
    """Run one kind in the empty folder ``work`` (raises :class:`Skip` when it cannot)."""
    work.mkdir(parents=True, exist_ok=True)
    return GENERATORS[kind](work, Runner(work))


def main(argv: list[str] | None = None) -> int:
    """Run the campaign (or ``--kind``s of it), print the table, write it as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", action="append", choices=KINDS, help="run only this kind")
    ap.add_argument("--json", metavar="OUT", help="write the table and failures as JSON")
    ap.add_argument("--work", metavar="DIR", help="keep the files here (default: a temporary "
                                                  "folder, removed)")
    ap.add_argument("--gate", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gate:
        _gate_main()
        return 0
    kinds = args.kind or list(KINDS)
    top = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="campaign-"))
    report: dict = {"seed": seed(), "scale": scale(), "kinds": {}}
    total = dict.fromkeys(COLUMNS, 0)
    print(f"seed {seed()}, scale {scale()}")
    print(f"{'kind':<11}| " + " | ".join(f"{c:>10}" for c in COLUMNS) + " | seconds")
    try:
        for kind in kinds:
            t0 = time.monotonic()
            try:
                outcomes = run_kind(kind, top / kind)
            except Skip as exc:
                print(f"{kind:<11}| skipped: {exc}")
                report["kinds"][kind] = {"skipped": str(exc)}
                continue
            row = table(outcomes)
            secs = round(time.monotonic() - t0, 1)
            for c in COLUMNS:
                total[c] += row[c]
            print(f"{kind:<11}| " + " | ".join(f"{row[c]:>10}" for c in COLUMNS)
                  + f" | {secs}", flush=True)
            slow = sorted(outcomes, key=lambda o: -o.res.get("seconds", 0))[:8]
            report["kinds"][kind] = {
                **row, "seconds": secs, "failures": failures(outcomes),
                "run_seconds": round(sum(o.res.get("seconds", 0) for o in outcomes), 1),
                "slowest": [f"{o.res.get('seconds', 0):.2f} s {o.case}: {shown_argv(o.argv)}"
                            for o in slow]}
        print(f"{'total':<11}| " + " | ".join(f"{total[c]:>10}" for c in COLUMNS))
        report["total"] = total
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1))
        for kind, r in report["kinds"].items():
            for line in r.get("failures", [])[:50]:
                print(f"  {kind}: {line}")
    finally:
        if not args.work:
            shutil.rmtree(top, ignore_errors=True)
    return 0 if all(total[c] == 0 for c in BAD) else 1


if __name__ == "__main__":
    sys.exit(main())
