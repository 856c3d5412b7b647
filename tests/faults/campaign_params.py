"""The campaign's bad parameters: generated values for every option of every command.

The options are enumerated from the command line's own parsers (``build_parser``); each
value goes to the option that has had it least.  Run through :mod:`campaign`
(``python tests/faults/campaign.py --kind params``).
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable
from pathlib import Path

from campaign import Material, Nodes, Outcome, Runner, Skip, scale, seed

# -- 3: bad parameters -----------------------------------------------------------------------

NUMBERS = ["0", "-1", "nan", "inf", "1e308", "-1e308", "9" * 400, "9" * 10_000]
STRINGS = ["", "a\x00b", "x" * 10_000, "bad_\udcff\udcfe"]
DEEP = "[" * 1000 + "]" * 1000
#: options whose value has a syntax of its own: values made from the generic ones
EXTRA: dict[str, Callable[[], list[str]]] = {
    "window": lambda: [*(f"kaiser,{v}" for v in NUMBERS), "chebwin,1e9", "taylor,1000000,1e300",
                       "gaussian,nan", "kaiser," + DEEP],
    "source": lambda: [*(f"generator:tone,frequency={v}" for v in NUMBERS),
                       *(f"generator:chirp,sample_rate={v}" for v in NUMBERS[:6]),
                       "generator:" + "x" * 10_000, "generator:chirp,channels=1000000000"],
    "channels": lambda: [",".join(["0"] * 5000), "0," + "9" * 400],
    "param": lambda: [*(f"threshold_db={v}" for v in (*NUMBERS, *STRINGS)),
                      f"threshold_db={DEEP}", "x" * 10_000 + "=1", "=1",
                      '{"a": ' + DEEP + "}"],
}
NUMBER_TYPES = {"int", "float", "whole_number", "number", "seconds", "hz", "channel_list",
                "_harmonics", "_channel"}
PATH_DESTS = {"output", "pipeline", "spec", "record", "recording", "plugins", "file", "input",
              "inputs", "filter", "paths"}
#: commands the campaign leaves out: a window, or nothing that takes a value
SKIP_COMMANDS = {("open",), ("bench",), ("backends",), ("plugins", "list")}


def value_kind(action: argparse.Action) -> str:
    """``number``, ``string``, ``path``, ``choice`` or ``json`` for an argparse action."""
    if action.dest == "param":
        return "json"
    if action.choices is not None:
        return "choice"
    tname = getattr(action.type, "__name__", str(action.type))
    if tname in NUMBER_TYPES or tname.startswith("whole number") or action.metavar in (
            "HZ", "TIME", "BYTES", "N", "R", "C", "X", "DB") or action.dest in (
            "sample_rate", "center_freq", "offset"):
        return "number"
    if action.dest in PATH_DESTS:
        return "path"
    return "string"


def commands() -> dict[tuple[str, ...], list[argparse.Action]]:
    """Every leaf command of the parser with the actions that take a value."""
    from specscope.app.cli import build_parser

    out: dict[tuple[str, ...], list[argparse.Action]] = {}

    def walk(p: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        acts = []
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    walk(sp, (*path, name))
            elif a.nargs != 0 and not isinstance(a, (argparse._HelpAction,
                                                     argparse._VersionAction)):
                acts.append(a)
        if path and not any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            out[path] = acts
        elif not path:
            out[()] = acts  # the global options
    walk(build_parser(), ())
    return out


class Bases:
    """A valid command line per command, to which one bad value is given."""

    def __init__(self, m: Material, out: Path, rerun_target: Path) -> None:
        self.m, self.out = m, out
        self.rerun = rerun_target

    def deployment(self) -> Path:
        """A folder of three recordings named by their start times, with a gap."""
        folder = self.out / "deployment"
        if not folder.is_dir():
            import numpy as np
            import soundfile

            folder.mkdir(parents=True)
            for name in ("20240501_120000.wav", "20240501_120001.wav", "20240501_130000.wav"):
                soundfile.write(str(folder / name), np.zeros(8000, np.float32), 8000)
        return folder

    def get(self, path: tuple[str, ...], raw: bool) -> tuple[dict, dict]:
        """(positionals by dest, options by flag) of ``path``'s base command line."""
        m, o = self.m, self.out
        rec, rec_opts = (str(m.iq), {"--sample-rate": "1e6"}) if raw else (str(m.wav), {})
        table = {
            (): ({}, {}),
            ("info",): ({"file": rec}, rec_opts),
            ("index",): ({"source": str(self.deployment())}, {"--tz": "+02:00"}),
            ("spectrogram",): ({"file": rec}, {**rec_opts, "-o": f"{o}/s.h5", "--nfft": "256",
                                               "--hop": "128"}),
            ("ops",): ({}, {"--family": "spectral"}),
            ("tune",): ({}, {"--ops": "rfft", "--sizes": "64", "--dtypes": "float32"}),
            ("run",): ({"pipeline": str(m.pipe), "inputs": rec}, {**rec_opts, "-o": f"{o}/r"}),
            ("rerun",): ({"file": str(self.rerun)}, {}),
            ("detect",): ({"paths": rec}, {**rec_opts, "--detector": "energy",
                                           "-o": f"{o}/d"}),
            ("export",): ({"file": rec}, {**rec_opts, "-o": f"{o}/e.h5"}),
            ("filter", "design"): ({}, {"--design": "butter", "--fs": "8000", "--order": "4",
                                        "--cutoff": "1000", "-o": f"{o}/fd.json"}),
            ("filter", "notch"): ({"input": str(m.hum)}, {"--near": "50",
                                                          "-o": f"{o}/n.json"}),
            ("filter", "apply"): ({"filter": str(m.spec), "input": rec},
                                  {**rec_opts, "-o": f"{o}/fa.h5"}),
            ("live",): ({}, {"--source": "generator:chirp", "--duration": "0.2", "--rate": "0",
                             "--no-gui": None, "--record": f"{o}/l.h5"}),
            ("plugins", "check"): ({"name": "specscope"}, {}),
            ("annotations", "list"): ({"file": str(m.table)}, {"--recording": rec,
                                                              **rec_opts}),
            ("annotations", "convert"): ({"input": str(m.table), "output": f"{o}/c.txt"},
                                         {"--to": "audacity", "--recording": rec, **rec_opts}),
            ("measure",): ({"file": rec}, {**rec_opts, "--start": "0.1", "--stop": "0.3",
                                           "--fmin": "100", "--fmax": "1000"}),
            ("play",): ({"file": rec}, {**rec_opts, "--stop": "0.2", "-o": f"{o}/p.wav"}),
            ("levels",): ({"source": rec}, {**rec_opts, "-o": f"{o}/lv.nc", "--nfft": "256",
                                            "--interval": "0.1", "--no-cache": None}),
            ("edit",): ({"file": rec}, {**rec_opts, "--attenuate": "12",
                                        "--region": "0.01,0.1,100,1000", "-o": f"{o}/ed.wav"}),
            ("track",): ({"kind": "centroid", "file": rec}, {**rec_opts, "-o": f"{o}/tr.csv",
                                                             "--n-fft": "256"}),
        }
        pos, opts = table[path]
        if path in QUIET:
            opts = {**opts, "-q": None}
        return pos, opts


#: commands with -q: a refusal is then the only line on stderr
QUIET = {("spectrogram",), ("run",), ("detect",), ("export",), ("filter", "design"),
         ("filter", "notch"), ("filter", "apply"), ("annotations", "convert"), ("play",),
         ("levels",), ("edit",), ("track",)}


def _argv(path: tuple[str, ...], pos: dict, opts: dict, order: list[str]) -> list[str]:
    """The command line: the command, ``--flag=value`` options, then the positionals."""
    argv: list[str] = []
    for flag, v in opts.items():
        if v is None:
            argv.append(flag)
        elif isinstance(v, list):
            argv += [flag, *v]
        elif flag.startswith("--"):
            argv.append(f"{flag}={v}")
        else:
            argv += [flag, v]
    tail = []
    for dest in order:
        if dest in pos:
            v = pos[dest]
            tail += v if isinstance(v, list) else [v]
    lead = ["--"] if any(t.startswith("-") for t in tail) else []
    return [*path, *argv, *lead, *tail]


def path_values(nodes: Nodes, suffix: str,
                output: bool) -> list[tuple[str, Path | None, str]]:
    """(value, node or None, label) for a path: missing, folder, /dev/null, FIFO, odd names."""
    vals: list[tuple[str, Path | None, str]] = []
    miss = nodes.d / "missing" / f"none{suffix}" if output else nodes.d / f"none{suffix}"
    vals.append((str(miss), None, "missing"))
    for kind in ("dir", "null", "fifo"):
        try:
            p = nodes.make(kind, f"x{suffix}")
        except Skip:
            continue
        vals.append((str(p), p, kind))
    vals.append((str(nodes.d / f"a\x00b{suffix}"), None, "nul"))
    vals.append((str(nodes.d / ("x" * 10_000 + suffix)), None, "long"))
    vals.append((str(nodes.d / f"bad_\udcff\udcfe{suffix}"), None, "undecodable"))
    return vals


def _key(v: str | tuple[str, Path | None, str]) -> str:
    """A value as counted for the least-used choice: a path value by its label."""
    return v[2] if isinstance(v, tuple) else v


def kind_params(work: Path, runner: Runner) -> list[Outcome]:
    """Every option and positional of every command with generated bad values."""
    m = Material(work / "in")
    out = work / "out"
    out.mkdir()
    bases = Bases(m, out, out / "rr" / "good.h5")  # rerun's file: only bad ones are given
    nodes = Nodes(work / "nodes")
    rng = random.Random(seed() * 1000 + 3)
    frac = min(1.0, 0.15 * scale())
    used: dict[tuple[str, str], int] = {}  # (dest, value) -> times given so far
    jobs, meta = [], []
    for path, actions in commands().items():
        if path in SKIP_COMMANDS:
            continue
        order = [a.dest for a in actions if not a.option_strings]
        for a in actions:
            if path == () and a.dest != "plugins":
                continue
            kind = value_kind(a)
            raw = a.dest in ("sample_rate", "dtype", "offset", "raw_channels", "center_freq")
            pos, opts = bases.get(path, raw)
            flag = a.option_strings[-1] if a.option_strings else None
            if kind == "number":
                values = list(NUMBERS)
            elif kind == "json":
                values = EXTRA["param"]()
            elif kind == "path":
                base = pos.get(a.dest) if not flag else opts.get(flag) or opts.get(
                    a.option_strings[0])
                suffix = "".join(Path(str(base)).suffixes[-1:]) if base else ""
                output = a.dest in ("output", "record")
                values = path_values(nodes, suffix, output)
            else:
                values = list(STRINGS) + (["9" * 10_000] if kind == "choice" else [])
            values += EXTRA[a.dest]() if a.dest in EXTRA and kind != "json" else []
            keep = max(1, math.ceil(len(values) * frac))
            # the values least given to this option so far (by other commands), seeded ties
            shuffled = rng.sample(values, len(values))
            picked = sorted(shuffled, key=lambda v: used.get((a.dest, _key(v)), 0))[:keep]
            for v in picked:
                used[(a.dest, _key(v))] = used.get((a.dest, _key(v)), 0) + 1
            for v in picked:
                v, node = (v[0], v[1]) if isinstance(v, tuple) else (v, None)
                p2, o2 = dict(pos), dict(opts)
                width = 2 if a.nargs == 2 else 1
                given = [v] * width if width > 1 else v
                if flag is None:
                    p2[a.dest] = given
                else:
                    for f in a.option_strings:
                        o2.pop(f, None)
                    o2[flag] = given
                argv = _argv(path, p2, o2, order)
                if path == ():
                    argv = [f"--plugins={v}", "ops", "--family=spectral"]
                may_run_on = path == ("live",) and a.dest == "duration"
                jobs.append(runner.job(argv, m.inputs(), timeout=15))
                meta.append((f"{' '.join(path) or 'global'} {flag or a.dest}", argv, node,
                             may_run_on))
    results = runner.run(jobs)
    outcomes = []
    for (case, argv, node, may_run_on), res in zip(meta, results, strict=True):
        o = Outcome("params", case, argv, res, may_run_on=may_run_on)
        if node is not None:
            o.damage += nodes.damage(node)
        outcomes.append(o)
    return outcomes


