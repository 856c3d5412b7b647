"""The Detect panel, the detection layer and review mode, driven through the real widgets
(with review's steps: the view rendered ahead, the band given back, a large table, the
dock's table on a small screen)."""

from __future__ import annotations

import time

import numpy as np
import pytest
import soundfile
from _gui import idle, open_and_wait, settle, wait_until
from PyQt6.QtCore import QRect, Qt
from PyQt6.QtWidgets import QLineEdit
from specscope.app.desktop.controllers.annotations import Selection
from specscope.app.review import ACCEPTED, REJECTED, Review
from specscope.compute.annotations import Annotation, read_annotations
from specscope.compute.detect import Events, detect, synth
from specscope.compute.detect import events as events_module
from specscope.compute.playback import FakeOutput
from specscope.compute.spectral import to_db
from specscope.widgets.detect_panel import TABLE_MIN_HEIGHT
from specscope.widgets.detection_layer import MAX_ITEMS

FS = 32000.0
BAND = {"band_low_hz": 2500.0, "band_high_hz": 12500.0}


@pytest.fixture(scope="module")
def calls_wav(tmp_path_factory):
    """20 s, 12 calls at 10-20 dB in pink noise; the plan is the truth."""
    plan = synth.plan_calls(20.0, FS, 12, snr_db=(10.0, 20.0), seed=5, hum_amplitude=0.05)
    x = synth.render_all(plan).astype(np.float32)
    path = tmp_path_factory.mktemp("det") / "calls.wav"
    soundfile.write(str(path), x, int(FS), subtype="FLOAT")
    return path, plan


def _type_field(qtbot, widget: QLineEdit, text: str) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)
    widget.selectAll()
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Tab)


def _run_energy(qtbot, window) -> None:
    panel = window.detection.panel
    window.detect_dock.setVisible(True)
    _type_field(qtbot, panel.form.field("band_low_hz"), "2500")
    _type_field(qtbot, panel.form.field("band_high_hz"), "12500")
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: window.detection.review is not None, what="the detections")
    idle(window)


def test_panel_runs_the_energy_detector_on_the_compute_thread(qtbot, window, calls_wav):
    path, plan = calls_wav
    open_and_wait(window, path)
    _run_energy(qtbot, window)
    events = window.detection.review.events
    # the same events as the core's detect() with the form's parameters
    ref = detect(path, "detect.energy", {**window.detection.panel.form.values(), **BAND},
                 channels=[0])
    np.testing.assert_array_equal(events.start_sample, ref.start_sample)
    np.testing.assert_array_equal(events.stop_sample, ref.stop_sample)
    np.testing.assert_allclose(events.score, ref.score, rtol=1e-12)
    assert len(synth.match(events, plan.calls, FS).call) >= 11
    panel = window.detection.panel
    assert panel.model.rowCount() == len(events)
    # drawn apart from the annotations: dashed boxes with scores, none in the annotation list
    window.view.set_time_range(0.0, 20.0)
    layer = window.detection.layer
    assert len(layer.drawn()) == len(events)
    assert window.annotations.annotations == []
    rect = layer.rect_of(0)
    assert rect.left() == pytest.approx(events.start_s[0]) and \
        rect.right() == pytest.approx(events.stop_s[0])
    assert layer.item_of(0).pen().style() == Qt.PenStyle.DashLine
    assert layer.score_items()[0].textItem.toPlainText() == f"{events.score[0]:.3g}"


CTRL = Qt.KeyboardModifier.ControlModifier


def _reviewing(qtbot, window, calls_wav):
    path, _ = calls_wav
    open_and_wait(window, path)
    _run_energy(qtbot, window)
    qtbot.keyClick(window.view, Qt.Key.Key_R, CTRL)          # Detect › Review detections
    wait_until(lambda: window.detection.mode.active, what="review mode")
    return window.detection


def test_review_keys_accept_reject_label_undo_and_navigate(qtbot, window, calls_wav):
    det = _reviewing(qtbot, window, calls_wav)
    review, view = det.review, window.view
    n = len(review)
    assert n >= 6 and review.index == 0
    det.panel.set_label_list(["bat", "bird", "noise"])
    det.panel.labels.editingFinished.emit()
    e0 = review.events[0]
    t0, t1, f0, f1 = view.visible_range()
    # zoomed with context: the whole detection inside, about three times its length shown
    assert t0 <= e0.start_s and e0.stop_s <= t1
    assert t1 - t0 == pytest.approx(max(3 * e0.duration_s, 0.4), rel=1e-6)
    assert f0 <= e0.low_hz and e0.high_hz <= f1
    assert det.layer.current == 0 and "detection 1 of" in window.message_label.text()

    qtbot.keyClick(view, Qt.Key.Key_A)                       # accept, label of the detector
    qtbot.keyClick(view, Qt.Key.Key_R)                       # reject
    qtbot.keyClick(view, Qt.Key.Key_2)                       # accept as 'bird'
    assert review.states[:3] == [ACCEPTED, REJECTED, ACCEPTED]
    assert review.labels[:3] == ["energy", review.events.label[1], "bird"]
    assert review.index == 3
    notes = window.annotations.annotations
    assert [a.label for a in notes] == ["energy", "bird"]
    assert notes[1].start_s == pytest.approx(review.events.start_s[2])
    assert notes[1].generator == "detect.energy"
    assert notes[1].channel is None  # a mono recording: as an annotation drawn by hand
    # the keys never reached the menus: A did not annotate a selection, R no export dialog
    assert window.annotations.selection is None

    qtbot.keyClick(view, Qt.Key.Key_Z, CTRL)                 # undo 'bird'
    assert review.states[2] == "" and review.index == 2
    assert [a.label for a in window.annotations.annotations] == ["energy"]
    qtbot.keyClick(view, Qt.Key.Key_3)                       # 'noise' instead
    assert review.labels[2] == "noise" and review.index == 3
    qtbot.keyClick(view, Qt.Key.Key_P)
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert review.index == 1
    qtbot.keyClick(view, Qt.Key.Key_Right)
    qtbot.keyClick(view, Qt.Key.Key_N)
    assert review.index == 3
    qtbot.keyClick(view, Qt.Key.Key_9)                       # no label 9: nothing decided
    assert review.states[3] == "" and "No label 9" in window.message_label.text()
    # the table shows the decisions
    model = det.panel.model
    assert model.data(model.index(2, 7)) == ACCEPTED and model.data(model.index(2, 6)) == "noise"
    assert model.data(model.index(1, 7)) == REJECTED
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not det.mode.active
    qtbot.keyClick(view, Qt.Key.Key_A)                       # A is Annotate again: no change
    assert review.states[3] == ""


def test_typing_into_the_label_list_is_not_a_review_key(qtbot, window, calls_wav):
    det = _reviewing(qtbot, window, calls_wav)
    field = det.panel.labels
    _type_field(qtbot, field, "ara, rat")
    assert det.review.states[0] == "" and det.review.label_list == ["ara", "rat"]


def test_space_plays_the_detection_in_its_band(qtbot, window, calls_wav, monkeypatch):
    det = _reviewing(qtbot, window, calls_wav)
    played = []
    monkeypatch.setattr(window.playback, "play",
                        lambda: played.append(window.playback.plan()))
    qtbot.keyClick(window.view, Qt.Key.Key_Space)
    e = det.review.events[0]
    assert len(played) == 1
    what = played[0]
    assert (what.start_s, what.stop_s) == pytest.approx((e.start_s, e.stop_s))
    assert what.options.band == pytest.approx((e.low_hz, e.high_hz))


def test_review_survives_the_session_and_goes_into_the_raven_table(qtbot, window, calls_wav,
                                                                    tmp_path):
    det = _reviewing(qtbot, window, calls_wav)
    for key in (Qt.Key.Key_1, Qt.Key.Key_R, Qt.Key.Key_A):
        qtbot.keyClick(window.view, key)
    review = det.review
    states, labels = list(review.states), list(review.labels)
    session = tmp_path / "s.json"
    assert window.save_session(session)
    table = tmp_path / "det.selections.txt"
    det.export_to(table, "raven")
    idle(window)
    rows = read_annotations(table, sample_rate=FS)
    assert len(rows) == len(review)
    assert [r.extra["Review"] for r in rows[:4]] == ["accepted", "rejected", "accepted",
                                                      "pending"]
    assert [r.label for r in rows[:3]] == [labels[0], labels[1], labels[2]]
    assert float(rows[0].extra["Score"]) == review.events.score[0]
    csv_path = tmp_path / "det.csv"
    det.export_to(csv_path, "csv")
    idle(window)
    assert [r.extra["review"] for r in read_annotations(csv_path)[:2]] == ["accepted",
                                                                          "rejected"]

    det.clear()
    window.annotations.set_annotations([])
    assert window.open_session(session)
    wait_until(lambda: det.review is not None and window.annotations.annotations,
               what="the session's detections")
    assert det.review.states == states and det.review.labels == labels
    np.testing.assert_array_equal(det.review.events.start_sample, review.events.start_sample)
    assert [a.label for a in window.annotations.annotations] == [labels[0], labels[2]]


def test_find_similar_uses_the_selected_box_as_template(qtbot, window, calls_wav,
                                                        monkeypatch):
    # scipy.fft with workers > 1 starts pocketfft's process-wide pool from the compute
    # thread, which the window's check would count as a thread the window left behind
    monkeypatch.setenv("SPECSCOPE_THREADS", "1")
    path, plan = calls_wav
    open_and_wait(window, path)
    call = plan.calls[0]
    window.annotations.select(Selection(call.start_s(FS), call.stop_s(FS), call.low_hz,
                                        call.high_hz, 0))
    window.detect_dock.setVisible(True)
    panel = window.detection.panel
    panel.threshold.setText("0.6")
    qtbot.keyClick(window.view, Qt.Key.Key_F, CTRL | Qt.KeyboardModifier.ShiftModifier)
    wait_until(lambda: window.detection.review is not None, what="the matches")
    events = window.detection.review.events
    stft = window.settings.stft
    ref = detect(path, "detect.template", {
        "template_start_s": call.start_s(FS), "template_stop_s": call.stop_s(FS),
        "template_low_hz": call.low_hz, "template_high_hz": call.high_hz,
        "template_channel": 0, "threshold": 0.6, "nfft": stft.nfft, "hop": stft.hop,
        "label": "similar"}, channels=[0])
    assert events.detector == "detect.template" and len(events) == len(ref) >= 1
    np.testing.assert_array_equal(events.start_sample, ref.start_sample)
    # the template itself is its best match
    best = int(np.argmax(events.score))
    assert abs(events.start_s[best] - call.start_s(FS)) < 0.02
    assert events.score[best] > 0.95


def test_compare_gives_precision_recall_f1_per_label(qtbot, window, calls_wav):
    path, plan = calls_wav
    open_and_wait(window, path)
    truth = [Annotation(c.start_s(FS), c.stop_s(FS), c.low_hz, c.high_hz, label="energy")
             for c in plan.calls[:8]]
    window.annotations.set_annotations(truth)
    _run_energy(qtbot, window)
    det = window.detection
    qtbot.mouseClick(det.panel.compare_button, Qt.MouseButton.LeftButton)
    rows = {r["label"]: r for r in det.comparison()}
    from specscope.compute.detect.compare import compare

    ref = {r.label: r for r in compare(det.review.events, truth)}
    assert rows["energy"]["tp"] == ref["energy"].tp >= 7
    assert rows["energy"]["precision"] == pytest.approx(ref["energy"].precision)
    assert rows["energy"]["fn"] == 8 - rows["energy"]["tp"]
    assert "energy" in det.panel.scores.text() and "F1" in det.panel.scores.text()


def test_run_shows_progress_and_cancel_stops_it(qtbot, window, calls_wav, monkeypatch):
    from specscope.app.desktop.controllers import detection
    from specscope.compute.detect import detect as real_detect

    path, _ = calls_wav
    open_and_wait(window, path)
    monkeypatch.setattr(detection, "CHUNK", 1 << 14)
    held = []

    def slow_detect(*args, progress, cancel, **kw):
        def hold(fraction):  # after the first chunk: wait for Cancel (as a long run would)
            progress(fraction)
            held.append(fraction)
            wait_end = time.monotonic() + 30
            while not cancel() and time.monotonic() < wait_end:
                time.sleep(0.005)
        return real_detect(*args, progress=hold, cancel=cancel, **kw)

    monkeypatch.setattr(detection, "detect", slow_detect)
    panel = window.detection.panel
    window.detection.show_panel()
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: held and window.progress_bar.isVisible()
               and window.progress_bar.value() > 0, what="the run's progress")
    assert not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: panel.status.text() == "Cancelled", what="the run cancelled")
    idle(window)
    assert window.detection.review is None and panel.run_button.isEnabled()
    assert len(held) == 1  # stopped at the next chunk


def test_visible_range_searches_only_what_is_seen(qtbot, window, calls_wav):
    path, plan = calls_wav
    open_and_wait(window, path)
    window.view.set_time_range(5.0, 12.0)
    panel = window.detection.panel
    panel.scope.setCurrentIndex(1)  # Visible range
    _run_energy(qtbot, window)
    events = window.detection.review.events
    t0, t1, _, _ = window.view.visible_range()
    ref = detect(path, "detect.energy", {**panel.form.values(), **BAND}, channels=[0],
                 start_s=t0, stop_s=t1)
    np.testing.assert_array_equal(events.start_sample, ref.start_sample)
    inside = [c for c in plan.calls if t0 + 0.05 < c.start_s(FS) and c.stop_s(FS) < t1 - 0.05]
    assert len(events) >= len(inside) >= 2
    assert events.start_s.min() >= t0 - 1e-9 and events.stop_s.max() <= t1 + 1e-9


# -- review's steps: the next detection's view rendered ahead and shown without the compute
# thread, the jump's viewport emitted at once, the transport's band given back after a
# detection played, a large table without per-detection work on the GUI thread, and the
# Detect dock's table on a small screen

def test_the_next_detection_is_shown_from_the_view_rendered_ahead(qtbot, window, calls_wav):
    det = _reviewing(qtbot, window, calls_wav)
    view, mode = window.view, det.mode
    idle(window)  # detection 1 shown; detection 2's view rendered ahead, its pyramid after
    started, images, viewports = [], [], []
    window.worker.started.connect(lambda i, kind, label: started.append(kind))
    window.imageShown.connect(lambda: images.append(view.visible_range()))
    view.viewportChanged.connect(lambda *v: viewports.append(v[:2]))
    qtbot.keyClick(view, Qt.Key.Key_N)
    # within the key press, before the event loop ran again: the jump's viewport went out
    # (no debounce) and its image is on screen, with no job of the compute thread
    t0, t1, f0, f1 = mode.context(1)
    assert viewports == [pytest.approx((t0, t1), abs=1e-9)]
    assert len(images) == 1 and images[0][:2] == pytest.approx((t0, t1), abs=1e-9)
    assert "detail" not in started
    # the image is the view's exact render (the tile engine's own numbers)
    engine = window.views.engine
    width = view.plot_size_px()[0]
    ref = engine.render(t0, t1, width, window.document.settings.reduce)
    np.testing.assert_allclose(view.image_data, to_db(ref.image), rtol=1e-6, atol=1e-4)
    assert det.layer.current == 1 and view.visible_range()[2:] == pytest.approx((f0, f1))
    # the detection after it was rendered ahead too: a key at once finds it ready
    qtbot.keyClick(view, Qt.Key.Key_N)
    assert len(images) == 2 and images[1][:2] == pytest.approx(mode.context(2)[:2], abs=1e-9)
    assert "detail" not in started and det.layer.current == 2
    # a jump elsewhere (not the view rendered ahead) is rendered the usual way
    idle(window)
    started.clear()
    with qtbot.waitSignal(window.imageShown, timeout=60000):
        mode.show(5)
    assert "detail" in started and det.layer.current == 5


@pytest.mark.parametrize("window", [{"activate": True}], indirect=True)  # keys need the focus
def test_playing_a_detection_gives_the_band_fields_back(qtbot, window, calls_wav):
    det = _reviewing(qtbot, window, calls_wav)
    # an output 20 times slower than real time: a detection of tens of ms plays for a while
    window.playback.output = FakeOutput(latency_s=0.04, rate=0.05, device_name="fake output")
    heard = []
    window.playback.playingChanged.connect(
        lambda on: heard.append((on, bar.band_lo.text(), bar.band_hi.text())))
    bar = window.transport_bar
    qtbot.mouseClick(bar.band_box, Qt.MouseButton.LeftButton)
    for field, text in ((bar.band_lo, "1000"), (bar.band_hi, "2000")):
        field.clear()
        qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
        qtbot.keyClicks(field, text)
    assert bar.settings().band == (1000.0, 2000.0)  # a band the person typed
    window.view.setFocus()
    wait_until(window.view.hasFocus, what="the focus back on the view")
    qtbot.keyClick(window.view, Qt.Key.Key_Space)
    wait_until(lambda: window.playback.player is not None, what="the detection playing")
    e = det.review.events[0]
    assert window.playback.renderer.options.band == pytest.approx((e.low_hz, e.high_hz))
    assert float(bar.band_lo.text()) == pytest.approx(e.low_hz, rel=1e-5)  # shown meanwhile
    qtbot.keyClick(window.view, Qt.Key.Key_Space)           # again: stop
    assert window.playback.player is None
    assert (bar.band_lo.text(), bar.band_hi.text()) == ("1000", "2000")
    assert bar.settings().band == (1000.0, 2000.0)  # typed again, as it was
    # a playback that ends by itself gives them back too
    heard.clear()
    window.playback.output = FakeOutput(latency_s=0.01, rate=1.0, device_name="fake output")
    qtbot.keyClick(window.view, Qt.Key.Key_Space)
    wait_until(lambda: len(heard) == 2, what="the detection played to its end")
    assert [on for on, _, _ in heard] == [True, False]
    assert float(heard[0][1]) == pytest.approx(e.low_hz, rel=1e-5)
    assert (bar.band_lo.text(), bar.band_hi.text()) == ("1000", "2000")


def _many(n: int, fs: float) -> Events:
    rng = np.random.default_rng(3)
    starts = np.arange(n, dtype=np.int64) * 6  # 100 000 in the 20 s recording
    stops = starts + 30
    low = rng.uniform(1000.0, 5000.0, n)
    return Events(starts, stops, fs, low, low + 1500.0, rng.normal(10.0, 3.0, n),
                  ("energy",) * n, np.full(n, -1), "detect.energy", {})


def test_a_large_table_builds_nothing_per_detection_on_the_gui_thread(qtbot, window, calls_wav,
                                                                    monkeypatch):
    path, _ = calls_wav
    open_and_wait(window, path)
    fs = window.document.recording.sample_rate
    events = _many(100_000, fs)
    reference = events.take([12_345]).to_annotations()[0]
    built = []
    real = events_module.Annotation

    def counted(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(events_module, "Annotation", counted)
    det = window.detection
    det.set_review(Review(events))
    det.mode.start(12_345)
    settle(window)
    # nothing was built per detection: no annotation, the layer's items for those in view
    assert built == []
    assert len(det.layer.drawn()) <= MAX_ITEMS and 12_345 in det.layer.drawn()
    model = det.panel.model
    assert model.rowCount() == 100_000
    assert model.data(model.index(99_999, 1)) == f"{events.start_s[99_999]:.3f}"
    assert model.data(model.index(12_345, 5)) == f"{events.score[12_345]:.1f}"
    # the GUI thread still answers: a key steps to the next detection
    qtbot.keyClick(window.view, Qt.Key.Key_A)               # accept: one annotation built
    assert det.review.states[12_345] == ACCEPTED and det.review.index == 12_346
    assert len(built) == 1
    (a,) = window.annotations.annotations
    assert (a.uuid, a.start_s, a.freq_low_hz, a.label) == (
        reference.uuid, reference.start_s, reference.freq_low_hz, reference.label)


def _rect_in(window, widget) -> QRect:
    return QRect(widget.mapTo(window, widget.rect().topLeft()), widget.size())


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_the_detections_table_keeps_its_height_beside_the_selection(qtbot, make_window,
                                                                   example_path, size):
    w = make_window(size=size)
    open_and_wait(w, example_path)
    det = w.detection
    w.detect_dock.setVisible(True)
    w.detect_dock.raise_()
    settle(w)
    table = det.panel.table
    for shown in ("raised", "asked for"):
        assert (w.width(), w.height()) == size, shown  # the window did not grow
        assert w.measurement_dock.isVisible(), shown  # sharing the column with Selection
        assert table.height() >= TABLE_MIN_HEIGHT, shown
        # on screen, whole: inside the dock's visible part
        seen = table.visibleRegion().boundingRect()
        assert seen.height() >= TABLE_MIN_HEIGHT, shown
        assert w.rect().contains(_rect_in(w, table)), shown
        det.show_panel()                                       # Detect › Detect panel
        settle(w)
