"""The notebook widgets touch Qt only on the Qt thread, whatever thread delivers a message.

JupyterLab 4.6 sends widget comms over a kernel subshell, a second thread: events,
trait changes and button callbacks arrive there.  The stress script drives an
explorer and a designer from four threads at once; it runs in a subprocess, so a
segfault fails the test instead of killing pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jupyter_rfb")

from specscope.app.notebook import pump as notebook_qt

SCRIPT = Path(__file__).resolve().parent / "notebook_thread_stress.py"


def run_stress(wav: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, str(SCRIPT), str(wav), *extra], check=False,
                          env=env,
                          capture_output=True, text=True, timeout=540)


def test_events_traits_and_clicks_from_four_threads_reach_qt_on_its_thread(example_path):
    proc = run_stress(example_path, "--threads", "4", "--iterations", "300")
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["errors"] == []
    assert result["qt_thread_warnings"] == 0, result["first_warnings"]
    for needle in ("different thread", "QPainter", "propagateSizeHints"):
        assert needle not in proc.stderr
    assert result["senders"] == ["MainThread"]  # Qt events only from the Qt thread
    # the calls arrived: each canvas event is one call, unchanged traits call nothing
    assert result["events_sent"] > 3000
    assert result["calls_run_on_qt_thread"] > 0.8 * result["events_sent"]
    # and the last ones took effect, in order
    assert result["freq_scale"] == result["view_scale"] == "mel"
    assert result["visible_range"][:2] == pytest.approx([1.0, 3.0])


def test_a_call_from_another_thread_waits_for_the_qt_thread():
    import threading

    notebook_qt.qt_app()
    seen: list[int] = []
    main = threading.get_ident()
    outside = threading.Thread(target=lambda: notebook_qt.run_on_qt(
        lambda: seen.append(threading.get_ident())))
    outside.start()
    outside.join()
    assert seen == []  # queued, not run in the other thread
    assert notebook_qt.run_queued_calls() == 1
    assert seen == [main]
    assert notebook_qt.run_on_qt(lambda: 42) == 42  # on the Qt thread: in place
