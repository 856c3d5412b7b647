"""A FIFO or a device named where a file is expected is one line, never a hang or a write.

Annotation tables and filter specs are read whole: a FIFO would block for ever and
``/dev/zero`` would never end.  ``live --record`` onto a FIFO must leave it a FIFO.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest


def _cli(*args, cwd):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("argv", [
    ("annotations", "list", "f.csv"),
    ("annotations", "list", "/dev/zero"),
    ("filter", "design", "--spec", "f.json", "--fs", 8000),
    ("live", "--no-gui", "--source", "generator:chirp", "--rate", 0, "--duration", 0.2,
     "--record", "f.h5"),
], ids=["fifo table", "device table", "fifo spec", "live record onto a fifo"])
def test_a_special_file_is_named(tmp_path, argv):
    for name in ("f.csv", "f.json", "f.h5"):
        os.mkfifo(tmp_path / name)
    r = _cli(*argv, cwd=tmp_path)  # a FIFO read would block: the timeout fails the test
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and ("not a regular file" in lines[0] or "device" in lines[0])
    for name in ("f.csv", "f.json", "f.h5"):
        assert stat.S_ISFIFO(os.lstat(tmp_path / name).st_mode), f"{name} was replaced"
