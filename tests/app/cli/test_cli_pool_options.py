"""The batch commands' pool options are declared once (cli/common.add_pool_options) and
``run`` and ``detect`` both list and parse them the same way."""

import argparse
import subprocess
import sys

import pytest
from specscope.app.cli import build_parser

POOL_FLAGS = ("--workers", "--threads", "--chunk-samples", "--dask", "--write-on")


def subcommand(name: str) -> argparse.ArgumentParser:
    ap = build_parser(name)
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def pool_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: a for a in parser._actions for flag in a.option_strings if flag in POOL_FLAGS}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "detect"])
def test_help_lists_the_pool_options(command):
    r = subprocess.run([sys.executable, "-m", "specscope.app", command, "--help"],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    for flag in POOL_FLAGS:
        assert flag in r.stdout, flag


def test_run_and_detect_parse_the_pool_options_alike():
    run, detect = subcommand("run"), subcommand("detect")
    a, b = pool_actions(run), pool_actions(detect)
    assert set(a) == set(b) == set(POOL_FLAGS)
    for flag in POOL_FLAGS:
        assert (a[flag].dest, a[flag].default, a[flag].choices, a[flag].nargs) == \
            (b[flag].dest, b[flag].default, b[flag].choices, b[flag].nargs), flag
    argv = ["--workers", "3", "--threads", "--chunk-samples", "4096", "--dask", "local",
            "--write-on", "client"]
    got_run = run.parse_args(["p.json", "in.wav", "-o", "out", *argv])
    got_detect = detect.parse_args(["p.json", "in.wav", "-o", "out", *argv])
    for ns in (got_run, got_detect):
        assert (ns.workers, ns.threads, ns.chunk_samples, ns.dask, ns.write_on) == \
            (3, True, 4096, "local", "client")
    with pytest.raises(SystemExit):  # a choice outside the three, refused by both
        detect.parse_args(["p.json", "in.wav", "-o", "out", "--write-on", "nobody"])
