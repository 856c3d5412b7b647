"""Plugin operator calls that run long report themselves; Ctrl+C ends them, or the process.

A real plugin folder holds slow operators: one sleeping without ever checking
for cancellation, one waiting in a loop that checks
``specscope.compute.operators.cancelled()`` (both quick on the short probe a
pipeline makes when it is bound, so that the slow calls run where the batch
runs them: the main thread, worker threads or worker processes).  ``specscope run`` runs them as a
subprocess; its stderr must name the call ("plugin op slow.x running for N s…")
once it passes the threshold (``SPECSCOPE_SLOW_OP_S``), and SIGINT must end the
process within a few seconds with one line and no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile
from specscope.compute import extensions, operators
from specscope.compute.errors import Cancelled
from specscope.compute.operators import watch

ROOT = Path(__file__).resolve().parents[3]

SLOW = '''
"""Slow operators for the watchdog tests."""
import os, time
from specscope.compute.operators import Param, cancelled, operator

SPECSCOPE_PLUGIN = {"version": "1.0", "outputs": {"sleepy": "same", "careful": "same"}}


@operator("sleepy", family="basic", summary="Sleeps, never checks", reference="x")
def sleepy(x, *, xp):
    if x.shape[-1] <= 256:  # the probe a pipeline makes when it is bound: quick
        return x
    time.sleep(float(os.environ.get("SLOW_SECONDS", "60")))
    return x


@operator("careful", family="basic", summary="Waits, checking for cancellation",
          reference="x")
def careful(x, *, xp):
    if x.shape[-1] <= 256:
        return x
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        if cancelled():
            with open(os.environ["SLOW_MARK"], "w") as f:
                f.write("cancelled")
            return x
        time.sleep(0.02)
    return x
'''


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "slow.py").write_text(textwrap.dedent(SLOW))
    return folder


def _inputs(tmp_path: Path, n: int) -> list[str]:
    fs = 8000
    x = (0.1 * np.sin(2 * np.pi * 440 * np.arange(fs // 4) / fs)).astype(np.float32)
    paths = []
    for i in range(n):
        p = tmp_path / f"in{i}.wav"
        soundfile.write(str(p), x, fs, subtype="FLOAT")
        paths.append(str(p))
    return paths


def _start(tmp_path: Path, folder: Path, op: str, *extra: str) -> subprocess.Popen:
    pipe = tmp_path / f"{op}.json"
    pipe.write_text(json.dumps({"specscope": "pipeline/1",
                                "steps": [{"op": f"slow.{op}", "params": {}}]}))
    n = 2 if "--workers" in extra else 1
    env = dict(os.environ, SPECSCOPE_PLUGINS=str(folder), SPECSCOPE_DATA_DIR=str(tmp_path),
               SPECSCOPE_NO_AUTOTUNE="1", SPECSCOPE_SLOW_OP_S="1", PYTHONPATH="",
               SLOW_MARK=str(tmp_path / "mark.txt"))
    return subprocess.Popen([sys.executable, "-m", "specscope.app", "run", str(pipe),
                             *_inputs(tmp_path, n), "-o", str(tmp_path / "out"), *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _read_until(proc: subprocess.Popen, needle: str, timeout: float = 120) -> list[str]:
    """Lines of stderr up to the one holding ``needle`` (read on a thread: no hang)."""
    lines: list[str] = []
    found = threading.Event()

    def pump() -> None:
        for line in proc.stderr:
            lines.append(line)
            if needle in line:
                found.set()
        found.set()

    threading.Thread(target=pump, daemon=True).start()
    assert found.wait(timeout), f"no {needle!r} on stderr: {''.join(lines)}"
    assert needle in "".join(lines), "".join(lines)
    return lines


def _interrupt(proc: subprocess.Popen, lines: list[str], within: float = 20,
               group: bool = False) -> float:
    """SIGINT to the command (or, as a terminal's Ctrl+C does, to all its processes)."""
    t0 = time.monotonic()
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(within)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the process did not end after SIGINT")
    time.sleep(0.2)  # the pump thread reads the last lines
    return time.monotonic() - t0


@pytest.mark.parametrize(("extra", "group"), [((), False), (("--workers", "2", "--threads"), False),
                                             (("--workers", "2"), False),
                                             (("--workers", "2"), True)],
                         ids=["in-process", "threads", "processes", "processes-terminal"])
def test_a_call_that_never_checks_reports_itself_and_ctrl_c_ends_the_process(
        tmp_path, plugin_dir, extra, group):
    proc = _start(tmp_path, plugin_dir, "sleepy", *extra)
    lines = _read_until(proc, "plugin op slow.sleepy running for")
    _interrupt(proc, lines, group=group)
    err = "".join(lines)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    # the report and then one line saying why it ended
    after = [ln for ln in lines if "running for" not in ln]
    assert len(after) == 1 and after[0].startswith("specscope: interrupted"), err


def test_a_call_that_checks_stops_on_ctrl_c(tmp_path, plugin_dir):
    # in worker threads: the interrupt reaches the plugin only through cancelled()
    proc = _start(tmp_path, plugin_dir, "careful", "--workers", "2", "--threads")
    lines = _read_until(proc, "plugin op slow.careful running for")
    _interrupt(proc, lines)
    err = "".join(lines)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert (tmp_path / "mark.txt").read_text() == "cancelled", err
    # it stopped by itself: the ordinary interrupt line, not the forced exit's
    assert [ln for ln in lines if "running for" not in ln] == ["specscope: interrupted\n"], err


# -- in process: the table, the watchdog's text, the cancellation scopes -----------------


def test_watchdog_reports_a_long_plugin_call_and_cancel_scope_stops_it(tmp_path,
                                                                      plugin_dir, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_PLUGINS", str(plugin_dir))
    monkeypatch.setenv("SPECSCOPE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SLOW_MARK", str(tmp_path / "mark.txt"))
    extensions.reset()
    try:
        reports: list[list[str]] = []
        stop = threading.Event()
        result: list[object] = []

        def job() -> None:
            with watch.cancel_scope(stop.is_set):
                result.append(operators.call("slow.careful", np.ones(1000)))

        with watch.Watchdog(lambda calls: reports.append([c.text for c in calls]),
                            threshold=0.2, interval=0.1):
            t = threading.Thread(target=job)
            t.start()
            deadline = time.monotonic() + 30
            while not reports and time.monotonic() < deadline:
                time.sleep(0.02)
            assert reports and reports[0][0].startswith("plugin op slow.careful running for")
            assert not watch.cancelled()  # this thread has no scope: not cancelled
            stop.set()
            t.join(5)
            assert not t.is_alive()
            deadline = time.monotonic() + 10
            while reports[-1] and time.monotonic() < deadline:  # the end is reported too
                time.sleep(0.02)
        assert reports[-1] == []
        np.testing.assert_array_equal(result[0], np.ones(1000))
        assert (tmp_path / "mark.txt").read_text() == "cancelled"
        assert watch.running_calls() == []
    finally:
        extensions.reset()


def test_check_cancelled_raises_in_the_scope_only():
    with watch.cancel_scope(lambda: True):
        assert watch.cancelled()
        with pytest.raises(Cancelled):
            watch.check_cancelled()
    assert not watch.cancelled()
    watch.cancel_all()
    try:
        assert watch.cancelled()
    finally:
        watch.reset_cancel()
    assert not watch.cancelled()


def test_the_progress_line_carries_the_note_and_wipes_it(capsys):
    from specscope.app.cli.common import ProgressBar

    bar = ProgressBar(enabled=True)
    bar.draw(0.5, "1/2 inputs", force=True)
    bar.note("plugin op slow.sleepy running for 12 s\u2026")
    bar.note("")
    bar.close()
    err = capsys.readouterr().err
    frames = err.split("\r")[1:]
    assert frames[0].rstrip() == "[" + "#" * 15 + "-" * 15 + "] 1/2 inputs"
    assert frames[1].endswith("1/2 inputs \u2014 plugin op slow.sleepy running for 12 s\u2026")
    # the note removed: the line is redrawn without it, blanks over what it was
    assert frames[2].rstrip() + "\n" == frames[0].rstrip() + "\n"
    assert len(frames[2].rstrip("\n")) == len(frames[1])


def test_gui_worker_shows_a_long_call_and_its_cancel_stops_it(qtbot, tmp_path, plugin_dir,
                                                                monkeypatch):
    from specscope.app.qt.worker import ComputeWorker

    monkeypatch.setenv("SPECSCOPE_PLUGINS", str(plugin_dir))
    monkeypatch.setenv("SPECSCOPE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SLOW_MARK", str(tmp_path / "mark.txt"))
    monkeypatch.setenv("SPECSCOPE_SLOW_OP_S", "0.3")
    extensions.reset()
    worker = ComputeWorker()
    try:
        texts: list[str] = []
        worker.slow.connect(lambda _id, _kind, text: texts.append(text))
        worker.submit("k", lambda control: operators.call("slow.careful", np.ones(1000)))
        qtbot.waitUntil(lambda: any(t.startswith("plugin op slow.careful running for")
                                    for t in texts), timeout=30000)
        with qtbot.waitSignal(worker.cancelled, timeout=10000):
            worker.cancel("k")
        assert (tmp_path / "mark.txt").read_text() == "cancelled"
    finally:
        worker.shutdown()
        extensions.reset()
