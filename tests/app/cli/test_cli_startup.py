"""The command line starts without the modules only some commands need: ``info`` and
``index`` of a folder never import scipy.signal (about a second of a cold start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _deployments import stamped

HEAVY = "scipy.signal"

PROBE = f"""
import json, sys
from specscope.app.cli import main
rc = main(sys.argv[1:])
print(json.dumps({{"rc": rc, "loaded": "{HEAVY}" in sys.modules}}))
"""


def _probe(args: list[str], tmp_path: Path) -> dict:
    env = dict(os.environ, SPECSCOPE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", PROBE, *args], check=False,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_info_command_leaves_scipy_signal_out():
    code = ("import sys, specscope.app.cli.commands.info, specscope.app.cli.commands.index; "
            f"print('{HEAVY}' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("command", [["info"], ["index", "--json"]])
def test_info_and_index_of_a_folder_leave_scipy_signal_out(tmp_path, command):
    stamped(tmp_path / "site", [0, 1, 5], n=500, rate=1000, ch=2)
    got = _probe([*command, str(tmp_path / "site")], tmp_path)
    assert got == {"rc": 0, "loaded": False}


def test_a_command_that_filters_still_loads_it_when_it_runs(tmp_path):
    # the probe sees it: the module is loaded where a command needs it, not at start
    stamped(tmp_path / "site", [0, 1], n=500, rate=1000)
    pipe = tmp_path / "p.json"
    pipe.write_text(json.dumps({"specscope": "pipeline/1", "steps": [
        {"op": "filter", "params": {"design": "butter", "order": 2, "cutoff": 100,
                                    "btype": "lowpass"}}]}))
    got = _probe(["export", str(tmp_path / "site"), "--pipeline", str(pipe), "-o",
                  str(tmp_path / "cut.wav"), "-q"], tmp_path)
    assert got == {"rc": 0, "loaded": True}
    assert (tmp_path / "cut.wav").stat().st_size > 1000
