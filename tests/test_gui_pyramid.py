"""The pyramid built ahead in the window: after a view is shown, the compute thread
prepares the tiles of its zoom-outs and pans in idle time, and a new view stops it."""

import numpy as np
import soundfile
from _gui import TIMEOUT_MS, open_and_wait, settle, wait_until
from specscope.app.qt.view_controller import DetailRequest
from specscope.compute.view import plan_ahead

FS = 16000


def _recording(tmp_path):
    path = tmp_path / "ten_minutes.wav"
    x = 0.05 * np.random.default_rng(5).standard_normal(FS * 600)
    soundfile.write(path, x.astype(np.float32), FS, subtype="FLOAT")
    return path


def test_zoom_outs_are_ready_after_a_view_and_a_new_view_stops_the_building(
        make_window, tmp_path):
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
    # a view request stops the building: the job ends as cancelled, the view is shown
    ended: list[str] = []
    w.worker.cancelled.connect(lambda job_id, kind: ended.append(kind))
    far = DetailRequest(engine, t0=100.0, t1=104.0, width=r.width)
    assert plan_ahead(engine, far.t0, far.t1, far.width)
    assert w.views.prepare_ahead(far)
    w.view.set_time_range(500.0, 504.0)
    wait_until(lambda: "pyramid" in ended, TIMEOUT_MS, "the building ahead cancelled")
    settle(w)
    assert abs(w.views.last_image.column_edges[0] - 500.0) < 0.5
