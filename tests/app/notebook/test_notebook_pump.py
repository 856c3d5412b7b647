"""The notebook pump sends a frame only when the view changed, and idle-time work (tiles
built ahead) does not keep it ticking."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

pytest.importorskip("jupyter_rfb")

from specscope.app.notebook import pump as notebook_qt
from specscope.app.qt.view_controller import BACKGROUND_KINDS, PyramidRequest

#: pump ticks the test counts frames over
TICKS = 30
WAIT_S = 60.0


def hold(started: threading.Event, release: threading.Event):
    """A compute job that runs until ``release`` is set (or its Cancel)."""
    def job(control):
        started.set()
        while not release.wait(0.01):
            control.check()
    return job


def test_a_still_view_sends_no_frames_while_tiles_are_built_ahead(example_path):
    from specscope.app.notebook.explorer import explore

    assert PyramidRequest.KIND in BACKGROUND_KINDS
    notebook_qt.qt_app()
    w = explore(example_path)
    w.wait()
    shell, canvas = w.shell, w.canvas
    sent: list[int] = []

    def send(msg, buffers=None):  # the browser answers each frame at once
        sent.append(msg["index"])
        now = time.time()
        canvas.set_state({"_frame_feedback": {"index": msg["index"], "timestamp": now,
                                              "localtime": now}})

    canvas.send = send
    started, release = threading.Event(), threading.Event()
    ticks: list[int] = []
    counted = asyncio.Event

    class Ticker:
        """A shell that keeps the pump ticking for ``TICKS`` ticks, counting them."""

        def __init__(self, done):
            self.done = done

        def sync_viewport(self):
            ticks.append(len(sent))
            if len(ticks) >= TICKS:
                self.done.set()

        def busy(self):
            return len(ticks) < TICKS

    async def run_ticks() -> None:
        ticks.clear()
        done = counted()
        ticker = Ticker(done)
        notebook_qt.PUMP.shells.add(ticker)
        try:
            notebook_qt.PUMP.wake()
            await asyncio.wait_for(done.wait(), WAIT_S)
            for _ in range(5):  # draws scheduled by the last tick run
                await asyncio.sleep(0)
        finally:
            notebook_qt.PUMP.shells.discard(ticker)

    async def main() -> dict:
        notebook_qt.PUMP.attach()
        canvas.set_state({"_has_visible_views": True})
        # the first frame of the view, then nothing moves
        canvas.request_draw()
        for _ in range(200):
            if sent:
                break
            await asyncio.sleep(0.01)
        assert sent, "the first frame was not sent"
        shell.worker.submit(PyramidRequest.KIND, hold(started, release),
                            label="Preparing zoom-outs")
        assert await asyncio.to_thread(started.wait, WAIT_S)
        busy = {"worker": shell.worker.is_busy(), "shell": shell.busy()}
        first, drawn = len(sent), canvas.frames_sent
        await run_ticks()
        # messages: at most jupyter_rfb's one lossless redraw of the last JPEG frame
        still = (len(sent) - first, canvas.frames_sent - drawn)
        # the control: the view changes under a tick (no one asks for a frame): one frame
        shell.view.set_colormap("viridis" if shell.view.colormap_name != "viridis"
                                else "magma")
        drawn = canvas.frames_sent
        await run_ticks()
        return {"busy": busy, "still": still, "changed": canvas.frames_sent - drawn}

    previous = notebook_qt.PUMP.loop
    try:
        got = asyncio.run(main())
    finally:
        notebook_qt.PUMP.loop = previous
        release.set()
        w.close()
    # the background job runs, yet the shell is not busy: the pump does not tick for it
    assert got["busy"] == {"worker": True, "shell": False}
    messages, frames = got["still"]
    assert frames == 0, f"{frames} frames of a still view over {TICKS} ticks"
    assert messages <= 1, f"{messages} messages of a still view over {TICKS} ticks"
    assert got["changed"] == 1, f"{got['changed']} frames for one change over {TICKS} ticks"


def test_a_render_the_view_waits_for_keeps_the_shell_busy(example_path):
    from specscope.app.notebook.explorer import explore

    notebook_qt.qt_app()
    w = explore(example_path)
    w.wait()
    started, release = threading.Event(), threading.Event()
    try:
        w.shell.worker.submit("detail", hold(started, release), label="Computing view")
        assert started.wait(WAIT_S)
        assert w.shell.busy() and w.shell.worker.is_busy(ignore=BACKGROUND_KINDS)
    finally:
        release.set()
        w.close()
