"""The pyramid built ahead in the window: after a view is shown, the compute thread
prepares the tiles of its zoom-outs and pans in idle time, and a new view stops it."""

import threading
import time

import numpy as np
import soundfile
from _gui import TIMEOUT_MS, open_and_wait, settle, wait_until
from specscope.app.qt import view_controller
from specscope.app.qt.view_controller import DetailRequest
from specscope.compute.view import plan_ahead

FS = 16000


def _recording(tmp_path):
    path = tmp_path / "ten_minutes.wav"
    x = 0.05 * np.random.default_rng(5).standard_normal(FS * 600)
    soundfile.write(path, x.astype(np.float32), FS, subtype="FLOAT")
    return path


def test_zoom_outs_are_ready_after_a_view_and_a_new_view_stops_the_building(
        make_window, tmp_path, monkeypatch):
    w = make_window()
    open_and_wait(w, _recording(tmp_path))
    settle(w)
    engine = w.views.engine
    w.view.set_time_range(300.0, 304.0)  # a fine level: its zoom-outs were never computed
    wait_until(lambda: w.views.last_request is not None
               and abs(w.views.last_request.t0 - 300.0) < 0.5, TIMEOUT_MS, "the zoomed view")
    settle(w)
    r = w.views.last_request
    assert plan_ahead(engine, r.t0, r.t1, r.width) == []  # built while the view was looked at
    c, span = (r.t0 + r.t1) / 2, r.t1 - r.t0
    for z in (2, 4, 8):
        got = engine.render(c - span * z / 2, c + span * z / 2, r.width, cached_only=True)
        assert got is not None, f"the zoom-out by {z} was not prepared"
    # a view request stops the building: the job ends as cancelled, the view is shown.
    # The building is held until it is told to stop, so that the view request surely
    # comes while it runs, however fast the machine builds the real plan.
    building = threading.Event()

    def held(engine, plan, cancelled, progress=None):
        if building.is_set():
            return 0  # the building ahead of the new view: nothing to hold
        building.set()
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while not cancelled() and time.monotonic() < deadline:
            time.sleep(0.005)
        return 0

    monkeypatch.setattr(view_controller, "build_ahead", held)
    ended: list[str] = []
    w.worker.cancelled.connect(lambda job_id, kind: ended.append(kind))
    far = DetailRequest(engine, t0=100.0, t1=104.0, width=r.width)
    assert plan_ahead(engine, far.t0, far.t1, far.width)
    assert w.views.prepare_ahead(far)
    wait_until(building.is_set, TIMEOUT_MS, "the building ahead running")
    w.view.set_time_range(500.0, 504.0)
    wait_until(lambda: "pyramid" in ended, TIMEOUT_MS, "the building ahead cancelled")
    settle(w)
    assert abs(w.views.last_image.column_edges[0] - 500.0) < 0.5


def test_building_ahead_shows_no_progress_bar_and_no_cancel_button(make_window, tmp_path):
    w = make_window()
    open_and_wait(w, _recording(tmp_path))
    settle(w)
    started: list[str] = []
    shown: list[bool] = []

    def on_started(job_id, kind, label):
        started.append(kind)
        if kind == "pyramid":  # after the window's own slot has run
            shown.append(w.progress_bar.isVisible() or w.cancel_button.isVisible())

    w.worker.started.connect(on_started)
    w.view.set_time_range(200.0, 204.0)  # a fine level: building ahead has work to do
    wait_until(lambda: "pyramid" in started, TIMEOUT_MS, "the building ahead started")
    assert shown == [False], "idle-time work showed the progress bar or Cancel"
    settle(w)
    assert not w.progress_bar.isVisible() and not w.cancel_button.isVisible()
