"""Review's steps draw the view once: one paint of the spectrogram per detection, what is
left out of a paint (the background under a whole detail image, the waveform's samples
beyond its pixels) leaves the pixels as they were."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from _gui import idle, open_and_wait, wait_until
from PyQt6.QtCore import QEvent, QObject, Qt
from specscope.compute.detect import synth

FS = 32000.0
BAND = {"band_low_hz": 2500.0, "band_high_hz": 12500.0}
STEPS = 8


@pytest.fixture(scope="module")
def calls_wav(tmp_path_factory):
    """20 s, 12 calls at 10-20 dB in pink noise with hum."""
    plan = synth.plan_calls(20.0, FS, 12, snr_db=(10.0, 20.0), seed=5, hum_amplitude=0.05)
    path = tmp_path_factory.mktemp("review-paint") / "calls.wav"
    soundfile.write(str(path), synth.render_all(plan).astype(np.float32), int(FS),
                    subtype="FLOAT")
    return path


class _Paints(QObject):
    """The paint events of one widget, in order, each with the images shown before it."""

    def __init__(self, widget, window) -> None:
        super().__init__()
        self.images = 0
        self.paints: list[int] = []  # the number of images shown when each paint came
        window.imageShown.connect(self._image)
        widget.installEventFilter(self)

    def _image(self) -> None:
        self.images += 1

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints.append(self.images)
        return False


def _reviewing(window, path):
    open_and_wait(window, path)
    det = window.detection
    det.run("detect.energy", dict(BAND))
    wait_until(lambda: det.review is not None, what="the detections")
    assert len(det.review) > STEPS
    det.mode.start(0)
    wait_until(lambda: det.mode.draw_ms, what="the first detection drawn")
    idle(window)  # the next detections' views rendered ahead
    return det


def test_each_step_of_review_paints_the_view_once(qtbot, window, calls_wav):
    det = _reviewing(window, calls_wav)
    view = window.view
    paints = _Paints(view.viewport(), window)
    per_step = []
    for k in range(STEPS):
        images, painted = paints.images, len(paints.paints)
        qtbot.keyClick(view, Qt.Key.Key_N)
        wait_until(lambda i=images: paints.images > i, what=f"step {k + 1}'s image")
        wait_until(lambda i=images: paints.paints and paints.paints[-1] > i,
                   what=f"step {k + 1}'s image painted")
        # nothing else is coming: the compute thread is idle (the next views rendered
        # ahead) and the event loop has passed three times with nothing left to run
        idle(window)
        per_step.append(paints.paints[painted:])
        assert det.review.index == k + 1 and det.layer.current == k + 1
    # one paint per step, and it shows that step's image (the view rendered ahead was
    # ready, so no paint came before it)
    assert [len(p) for p in per_step] == [1] * STEPS, per_step
    assert [p[0] for p in per_step] == list(range(1, STEPS + 1)), per_step


def _pixels(view) -> np.ndarray:
    img = view.grab_clean().toImage()
    ptr = img.constBits()
    ptr.setsize(img.sizeInBytes())
    rows = np.frombuffer(ptr, np.uint8).reshape(img.height(), img.bytesPerLine())
    return rows[:, :img.width() * 4].copy()


def test_the_background_under_a_whole_detail_is_left_out_without_a_change(qtbot, window,
                                                                          calls_wav):
    _reviewing(window, calls_wav)
    view = window.view
    assert view.image_data is not None and not np.isnan(view.image_data).any()
    # the detail spans the view: the background under it is not drawn, and drawing it
    # changes no pixel but those of a last column or row the plot ends inside (the
    # detail ends where the plot does, in that pixel; the background went on below it)
    assert not view.background.isVisible()
    left_out = _pixels(view)
    view.background.setVisible(True)
    drawn = _pixels(view)
    view.background.setVisible(False)
    plot = view.viewportTransform().mapRect(view.plot.getViewBox().sceneBoundingRect())
    keep = np.ones(left_out.shape, bool)
    if plot.right() % 1:
        keep[:, int(plot.right()) * 4:(int(plot.right()) + 1) * 4] = False
    if plot.bottom() % 1:
        keep[int(plot.bottom())] = False
    np.testing.assert_array_equal(left_out[keep], drawn[keep])
    assert (left_out != drawn).sum() < 4 * (plot.width() + plot.height() + 2)
    # a pan leaves part of the plot to the background until the new detail comes
    t0, t1, _, _ = view.visible_range()
    with qtbot.waitSignal(window.imageShown, timeout=60000):
        view.set_time_range(t0 + 0.5 * (t1 - t0), t1 + 0.5 * (t1 - t0))
        assert view.background.isVisible()
    assert not view.background.isVisible()
    # a detail with NaN cells (not yet computed) lets the background show through
    db = view.image_data.copy()
    db[:, : db.shape[1] // 3] = np.nan
    view.set_image(db, view._t_edges, view._f_edges)
    assert view.background.isVisible()


def test_the_waveform_is_drawn_from_its_extremes_per_pixel(qtbot, window, calls_wav):
    det = _reviewing(window, calls_wav)
    view = window.view
    # a detection's context spans thousands of samples on a few hundred pixels
    t0, t1, _, _ = view.visible_range()
    assert view.waveform.isVisible() and (t1 - t0) * FS > 4 * view.plot_size_px()[0]
    x, y = view._wave_curve.getData()
    e = det.review.events[det.review.index]
    assert len(y) < (t1 - t0) * FS / 2  # far fewer points than samples
    ds = round((x[2] - x[0]) * FS)  # samples a block: drawn as its two extremes
    assert ds > 1 and x[1] == x[0]
    with soundfile.SoundFile(str(calls_wav)) as f:
        # each pair is drawn at the middle of its block
        f.seek(round(x[0] * FS) - ds // 2)
        seen = f.read(round((x[-1] - x[0]) * FS) + ds, dtype="float32")
    # every block's extremes are drawn: the span's greatest and least sample among them
    assert float(y.max()) == float(seen.max()) and float(y.min()) == float(seen.min())
    blocks = seen[: len(seen) // ds * ds].reshape(-1, ds)
    np.testing.assert_array_equal(np.minimum(y[0::2], y[1::2]), blocks.min(axis=1))
    np.testing.assert_array_equal(np.maximum(y[0::2], y[1::2]), blocks.max(axis=1))
    assert e.start_s >= t0 - 1e-9
