"""Fixtures of the documentation tests: the site built once, strictly, per session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site built by ``mkdocs build --strict`` (what ./scripts/docs runs)."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", NO_MKDOCS_2_WARNING="1",
               DISABLE_MKDOCS_2_WARNING="true")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
                         check=False)
    warnings = [line for line in run.stderr.splitlines()
                if line.startswith(("WARNING", "ERROR"))]
    assert run.returncode == 0 and not warnings, \
        "the strict docs build failed:\n" + "\n".join(warnings or run.stderr.splitlines()[-30:])
    return out
