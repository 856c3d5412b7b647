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


def test_frame_feedback_from_another_thread_lets_the_frames_stop(example_path):
    """The browser answers every frame with feedback, which a JupyterLab subshell
    delivers on its own thread and event loop: once the view is still, the frames stop
    (each feedback must not wake the pump, whose ticks ask for the next frame)."""
    import asyncio
    import queue
    import threading
    import time

    from specscope.app.notebook.explorer import explore

    sent: list[float] = []
    frames: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def browser() -> None:  # the subshell: feedback 150 ms after each frame
        async def answer() -> None:
            while not stop.is_set():
                try:
                    index = frames.get_nowait()
                except queue.Empty:
                    await asyncio.sleep(0.005)
                    continue
                await asyncio.sleep(0.15)
                now = time.time()
                w.canvas.set_state({"_frame_feedback": {"index": index, "timestamp": now,
                                                        "localtime": now}})
        asyncio.run(answer())

    async def main() -> float:
        notebook_qt.PUMP.attach()
        w.canvas.set_state({"_has_visible_views": True})
        feeder = threading.Thread(target=browser)
        feeder.start()
        try:
            for _ in range(5):  # wheel notches, as the browser sends them
                w.canvas.handle_event({"event_type": "wheel", "x": 450.0, "y": 200.0,
                                       "dx": 0.0, "dy": -100.0, "buttons": [],
                                       "modifiers": []})
                await asyncio.sleep(0.05)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:  # one second without a frame
                if sent and time.monotonic() - sent[-1] > 1.0:
                    return time.monotonic() - sent[-1]
                await asyncio.sleep(0.05)
            return 0.0
        finally:
            stop.set()
            feeder.join()

    notebook_qt.qt_app()
    w = explore(example_path)
    w.wait()

    def send(msg, buffers=None):
        sent.append(time.monotonic())
        frames.put(msg["index"])
    w.canvas.send = send
    previous = notebook_qt.PUMP.loop
    try:
        quiet = asyncio.run(main())
    finally:
        notebook_qt.PUMP.loop = previous
        w.close()
    # the wheel was drawn: a frame for the first look and one at least for the notches (a
    # tick sends a frame only when the view looks different, so notches may share one)
    assert len(sent) >= 2
    assert quiet > 1.0, f"{len(sent)} frames and still coming"
