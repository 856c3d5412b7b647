"""Region edits in the app, driven with the mouse and keys: a lasso around a whistle over
speech, a brush and its eraser, a box with harmonics, the selection and an annotation as
regions; Remove / Attenuate as processing steps that the view shows, Ctrl+Z undoes, Space
plays and the export writes; refusals as one line."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS, idle, open_and_wait, settle, wait_until
from PyQt6.QtCore import QPoint, QPointF, Qt
from PyQt6.QtWidgets import QApplication
from specscope.app.desktop.actions import keys_text, menu_actions, shortcut_rows
from specscope.compute.annotations import Annotation
from specscope.compute.edit import Box, Brush, Harmonics, Lasso
from specscope.compute.pipeline import Pipeline
from specscope.compute.playback import FakeOutput
from specscope.widgets.frequency_axis import forward

LEFT = Qt.MouseButton.LeftButton
NONE = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier
SPEECH = Path("/usr/share/sounds/alsa/Front_Center.wav")
#: the whistle: 3 kHz over the word "Center", with 10 ms ramps
WHISTLE_HZ, WHISTLE_T0, WHISTLE_T1, WHISTLE_AMP = 3000.0, 0.85, 1.15, 0.3
#: the windows of these tests: room for the view and the Regions panel
SIZE = (1300, 900)


@pytest.fixture
def whistle(tmp_path) -> Path:
    """A spoken "Front Center" (ALSA's test sound; noise bursts where it is not installed)
    with a whistle over "Center"."""
    if SPEECH.is_file():
        x, fs = soundfile.read(str(SPEECH), dtype="float64")
        x = x if x.ndim == 1 else x[:, 0]
    else:
        fs = 48000
        rng = np.random.default_rng(7)
        t = np.arange(int(1.43 * fs)) / fs
        x = 0.05 * rng.standard_normal(t.size) * ((t % 0.5) < 0.3)
    t = np.arange(x.size) / fs
    ramp = np.clip(np.minimum(t - WHISTLE_T0, WHISTLE_T1 - t) / 0.01, 0.0, 1.0)
    x = x + WHISTLE_AMP * np.sin(2 * np.pi * WHISTLE_HZ * t) * ramp
    path = tmp_path / "whistle.wav"
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


@pytest.fixture
def window(make_window, whistle):
    w = make_window(size=SIZE, activate=True)
    open_and_wait(w, whistle)
    idle(w)
    return w


def pixel(w, t, f) -> QPoint:
    """The viewport pixel of time ``t`` (s) and frequency ``f`` (Hz)."""
    vb = w.view.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(t, float(forward(w.view.freq_scale, f))))
    return w.view.mapFromScene(scene)


def drag(qtbot, w, points, mods=NONE):
    """Press at the first point, move through the others (every 3 pixels or so, as a hand
    does), release at the last."""
    vp = w.view.viewport()
    qtbot.mousePress(vp, LEFT, mods, points[0])
    for a, b in itertools.pairwise(points):
        steps = max(1, int(max(abs(b.x() - a.x()), abs(b.y() - a.y())) // 3))
        for k in range(1, steps + 1):
            qtbot.mouseMove(vp, a + (b - a) * (k / steps))
    qtbot.mouseRelease(vp, LEFT, mods, points[-1])


def focus_view(qtbot, w):
    w.activateWindow()
    w.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.view, timeout=TIMEOUT_MS)


def key(qtbot, w, k, mods=NONE):
    focus_view(qtbot, w)
    qtbot.keyClick(w.view, k, mods)


def lasso_around_whistle(qtbot, w):
    """An ellipse around the whistle, drawn a few pixels off (as a hand does)."""
    tc, ft = (WHISTLE_T0 + WHISTLE_T1) / 2, WHISTLE_HZ
    angles = np.linspace(0.0, 2 * np.pi, 36)
    pts = [pixel(w, tc + 0.25 * np.cos(a), ft * (1 + 0.2 * np.sin(a))) + QPoint(2, -1)
           for a in angles]
    drag(qtbot, w, pts)


def band_level(img, t0, t1, f0, f1) -> float:
    """The mean level (dB) of the image's cells inside ``t0..t1`` s, ``f0..f1`` Hz."""
    tc = (img.column_edges[:-1] + img.column_edges[1:]) / 2
    fc = (img.frequency_edges[:-1] + img.frequency_edges[1:]) / 2
    cells = img.db[((fc > f0) & (fc < f1))][:, (tc > t0) & (tc < t1)]
    assert cells.size, f"no cell in {t0}..{t1} s, {f0}..{f1} Hz"
    return float(np.mean(cells))


def whistle_level(img) -> float:
    return band_level(img, WHISTLE_T0 + 0.05, WHISTLE_T1 - 0.05, WHISTLE_HZ - 50,
                      WHISTLE_HZ + 50)


def speech_level(img) -> float:
    """Speech at 0.8..1.5 kHz while the whistle sounds: outside the region."""
    return band_level(img, WHISTLE_T0 + 0.05, WHISTLE_T1 - 0.05, 800.0, 1500.0)


def edit_steps(w) -> list[dict]:
    return [s for s in json.loads(w.settings.processing) if s["op"] == "edit"]


def test_lasso_around_a_whistle_removed_undone_and_redone(qtbot, window):
    w = window
    before = w.last_image
    key(qtbot, w, Qt.Key.Key_O)  # Edit › Region tool › Lasso
    assert w.regions.tool == "lasso" and w.menu_actions["region_lasso"].isChecked()
    lasso_around_whistle(qtbot, w)
    region = w.regions.region()
    assert isinstance(region, Lasso) and len(region.points) >= 20
    # every cell of the whistle is inside; speech at 1 kHz is not
    t = np.linspace(WHISTLE_T0 + 0.02, WHISTLE_T1 - 0.02, 40)
    assert region.contains(t, np.array([WHISTLE_HZ - 40, WHISTLE_HZ, WHISTLE_HZ + 40])).all()
    assert not region.contains(t, np.array([1000.0])).any()
    # drawn on the view: its outline holds the whistle's pixels, its feather holds the outline
    drawn = w.regions.layer.outline()
    y = float(forward(w.view.freq_scale, WHISTLE_HZ))
    assert drawn.contains(QPointF((WHISTLE_T0 + WHISTLE_T1) / 2, y))
    feather = w.regions.layer.feather_path().boundingRect()
    assert feather.contains(drawn.boundingRect())
    assert feather.width() > drawn.boundingRect().width()
    # listed with its area
    assert w.regions.panel.list.count() == 1
    assert "lasso" in w.regions.panel.list.item(0).text()
    assert f"{region.area():.3g} s·Hz" in w.regions.panel.list.item(0).text()

    # Remove, from the panel's button
    w.regions_dock.raise_()
    button = w.regions.panel.operation_buttons["remove"]
    wait_until(button.isVisible, what="the Regions panel's Remove button")
    qtbot.mouseClick(button, LEFT, pos=button.rect().center() + QPoint(3, 2))
    wait_until(lambda: edit_steps(w), what="the edit step")
    settle(w)
    steps = edit_steps(w)
    assert len(steps) == 1 and steps[0]["params"]["operation"] == "remove"
    assert steps[0]["params"]["region"] == region.to_dict()
    assert w.undo_stack.undoText() == "remove lasso region"
    assert w.processing.editor.list.count() == 1
    assert w.processing.editor.list.item(0).text().startswith("edit: remove lasso")
    after = w.last_image
    assert whistle_level(before) - whistle_level(after) >= 40.0
    assert abs(speech_level(after) - speech_level(before)) <= 0.1

    # Ctrl+Z takes the step away and the whistle comes back; redo puts it back
    key(qtbot, w, Qt.Key.Key_Z, CTRL)
    wait_until(lambda: not edit_steps(w), what="the step undone")
    settle(w)
    assert w.processing.editor.list.count() == 0
    assert abs(whistle_level(w.last_image) - whistle_level(before)) <= 0.1
    key(qtbot, w, Qt.Key.Key_Z, CTRL | SHIFT)
    wait_until(lambda: edit_steps(w), what="the step redone")
    settle(w)
    assert whistle_level(before) - whistle_level(w.last_image) >= 40.0
    assert abs(speech_level(w.last_image) - speech_level(before)) <= 0.1


def test_the_lasso_stays_on_its_cells_on_a_log_axis(qtbot, window):
    w = window
    with qtbot.waitSignal(w.imageShown, timeout=TIMEOUT_MS):
        w.set_frequency_scale("log")
    idle(w)
    w.menu_actions["region_lasso"].trigger()
    lasso_around_whistle(qtbot, w)
    region = w.regions.region()
    assert isinstance(region, Lasso)
    t = np.linspace(WHISTLE_T0 + 0.02, WHISTLE_T1 - 0.02, 20)
    assert region.contains(t, np.array([WHISTLE_HZ - 40, WHISTLE_HZ + 40])).all()
    # the drawn outline spans the frequencies the drag spanned, on the log axis
    box = w.regions.layer.outline().boundingRect()
    lo, hi = (float(forward("log", f)) for f in (0.8 * WHISTLE_HZ, 1.2 * WHISTLE_HZ))
    _, (y0, y1) = w.view.plot.getViewBox().viewRange()
    px = (y1 - y0) / w.view.plot.getViewBox().height()
    assert abs(box.top() - lo) < 4 * px and abs(box.bottom() - hi) < 4 * px
    # back on a linear axis, the outline follows
    w.set_frequency_scale("linear")
    idle(w)
    box = w.regions.layer.outline().boundingRect()
    assert box.top() == pytest.approx(region.bounds()[2], rel=1e-6)
    assert box.bottom() == pytest.approx(region.bounds()[3], rel=1e-6)


def test_the_brush_paints_and_shift_erases(qtbot, window):
    w = window
    key(qtbot, w, Qt.Key.Key_B)
    assert w.regions.tool == "brush"
    # Shift with nothing painted: nothing to erase, said in the status bar
    drag(qtbot, w, [pixel(w, 0.5, WHISTLE_HZ), pixel(w, 0.6, WHISTLE_HZ)], SHIFT)
    assert w.regions.region() is None
    assert "Nothing to erase" in w.message_label.text()
    drag(qtbot, w, [pixel(w, 0.3, WHISTLE_HZ) + QPoint(1, 2),
                    pixel(w, 1.2, WHISTLE_HZ) + QPoint(1, 2)])
    brush = w.regions.region()
    assert isinstance(brush, Brush) and not brush.erased
    probe = np.array([0.5, 0.75, 1.0])
    assert brush.contains(probe, np.array([WHISTLE_HZ])).all()
    assert not brush.contains(probe, np.array([10000.0])).any()
    # Shift+drag erases across the middle: the cells there leave the region
    # a zigzag across the painted band, a little wider than it
    lo, hi = WHISTLE_HZ - 2 * brush.radius_hz, WHISTLE_HZ + 2 * brush.radius_hz
    erase = [pixel(w, t, f) + QPoint(-1, 1) for t, f in
             ((0.72, lo), (0.72, hi), (0.75, hi), (0.75, lo), (0.78, lo), (0.78, hi))]
    drag(qtbot, w, erase, SHIFT)
    erased = w.regions.region()
    assert isinstance(erased, Brush) and erased.erased
    assert erased.points == brush.points  # the same region, less the erased cells
    inside = erased.contains(probe, np.array([WHISTLE_HZ]))[0]
    assert inside.tolist() == [True, False, True]
    assert erased.area() < brush.area()
    assert w.regions.panel.list.count() == 1  # one brush region, stroke by stroke
    # the outline is now two pieces
    assert len(w.regions.layer.outline().toSubpathPolygons()) == 2
    # Attenuate 30 dB, from the menu (the panel's dB)
    w.regions.panel.db.setValue(30.0)
    w.menu_actions["region_attenuate"].trigger()
    wait_until(lambda: edit_steps(w), what="the edit step")
    step = edit_steps(w)[0]["params"]
    assert step["operation"] == "attenuate" and step["db"] == 30.0
    assert step["region"]["erased"]


def test_a_box_with_harmonics(qtbot, window):
    w = window
    key(qtbot, w, Qt.Key.Key_H, SHIFT)
    assert w.regions.tool == "harmonics"
    a, b = pixel(w, 0.9, 2800.0), pixel(w, 1.1, 3200.0)
    drag(qtbot, w, [a + QPoint(2, 1), (a + b) / 2, b + QPoint(-1, 2)])
    region = w.regions.region()
    assert isinstance(region, Harmonics) and region.count == 4
    hit = region.contains(np.array([1.0]), np.array([3000.0, 6000.0, 9000.0, 12000.0,
                                                     4500.0, 15000.0]))[:, 0]
    assert hit.tolist() == [True, True, True, True, False, False]
    assert len(w.regions.layer.outline().toSubpathPolygons()) == 4
    # the panel's count changes the current region
    w.regions.panel.harmonics.setValue(2)
    assert w.regions.region().count == 2


def test_selection_and_annotation_are_regions_and_nyquist_is_refused(qtbot, window):
    w = window
    # a Ctrl+drag selection is the current region
    a, b = pixel(w, 0.2, 500.0), pixel(w, 0.4, 1500.0)
    drag(qtbot, w, [a, (a + b) / 2, b], CTRL)
    idle(w)
    sel = w.annotations.selection
    assert sel is not None
    region = w.regions.region()
    assert isinstance(region, Box)
    assert (region.t0, region.t1, region.f0, region.f1) == pytest.approx(
        (sel.start_s, sel.stop_s, sel.freq_low_hz, sel.freq_high_hz))
    # an annotation above the Nyquist frequency (24 kHz): the region is refused, named
    high = Annotation(0.2, 0.6, 30000.0, 31000.0, label="high")
    w.annotations.apply_change([], [high])
    w.annotations.jump_to(high.uuid)
    w.menu_actions["region_from_annotation"].trigger()
    assert w.regions.region() == Box(0.2, 0.6, 30000.0, 31000.0)
    assert w.regions.panel.list.count() == 2
    with qtbot.waitSignal(w.errorShown, timeout=TIMEOUT_MS) as shown:
        w.menu_actions["region_remove"].trigger()
    message = shown.args[0]
    assert "Nyquist" in message and "30000 to 31000 Hz" in message and "\n" not in message
    assert w.message_label.text().startswith("Error: Region edit not applied")
    assert w.settings.processing == "[]"
    # outside the recording (1.4 s long): refused, named
    late = Annotation(5.0, 6.0, 1000.0, 2000.0, label="late")
    w.annotations.apply_change([], [late])
    w.annotations.jump_to(late.uuid)
    w.menu_actions["region_from_annotation"].trigger()
    with qtbot.waitSignal(w.errorShown, timeout=TIMEOUT_MS) as shown:
        w.menu_actions["region_isolate"].trigger()
    assert "outside the recording" in shown.args[0] and "5 to 6 s" in shown.args[0]
    # zero area
    w.regions.add_region(Box(0.5, 0.5, 100.0, 200.0))
    with qtbot.waitSignal(w.errorShown, timeout=TIMEOUT_MS) as shown:
        w.regions.apply("gain")
    assert "zero area" in shown.args[0]
    assert w.settings.processing == "[]" and w.undo_stack.count() == 0  # nothing applied


def show(w, mode):
    """The Regions panel's Show list: after, before or difference of the edits."""
    box = w.regions.panel.compare
    box.setCurrentIndex(box.findData(mode))


def test_before_after_and_difference_of_an_edit(qtbot, window):
    w = window
    before = whistle_level(w.last_image)
    w.menu_actions["region_lasso"].trigger()
    lasso_around_whistle(qtbot, w)
    w.menu_actions["region_remove"].trigger()
    wait_until(lambda: edit_steps(w), what="the edit step")
    settle(w)
    assert before - whistle_level(w.last_image) >= 40.0
    w.regions_dock.raise_()
    show(w, "before")
    settle(w)
    assert abs(whistle_level(w.last_image) - before) <= 0.1
    assert w.designer_panel.compare.currentText() == "before"  # one setting, both panels
    show(w, "difference")
    settle(w)
    assert w.view.quantity == "difference"
    assert whistle_level(w.last_image) <= -40.0
    assert abs(speech_level(w.last_image)) <= 0.1
    w.undo_stack.undo()  # back to "before", named so
    assert w.regions.panel.compare.currentData() == "before"
    w.undo_stack.undo()
    assert w.regions.panel.compare.currentData() == "after"
    # the designer's filter applied too: the view shows both (the edit after the filter)
    w.designer_dock.setVisible(True)
    qtbot.mouseClick(w.designer_panel.apply_box, LEFT)
    wait_until(lambda: w.settings.chain_on, what="the designer's filter applied")
    settle(w)
    assert [s["op"] for s in w.settings.steps] == ["filter", "edit"]
    assert w.views.view_note == ""
    assert before - whistle_level(w.last_image) >= 40.0


def test_space_plays_the_edit_and_the_export_writes_it(qtbot, window, tmp_path,
                                                        monkeypatch):
    w = window
    monkeypatch.delenv("SPECSCOPE_AUDIO_OUTPUT", raising=False)
    fake = FakeOutput(latency_s=0.02, rate=1.0, device_name="fake output")
    w.playback.output = fake
    w.menu_actions["region_lasso"].trigger()
    lasso_around_whistle(qtbot, w)
    w.menu_actions["region_remove"].trigger()
    wait_until(lambda: edit_steps(w), what="the edit step")
    settle(w)
    fs = w.document.recording.sample_rate
    n = w.document.recording.n_samples
    key(qtbot, w, Qt.Key.Key_Space)
    wait_until(lambda: w.playback.player is not None, what="playback")
    assert w.playback.range.stop_s - w.playback.range.start_s == pytest.approx(n / fs, abs=0.01)
    wait_until(lambda: w.playback.player is None, what="the whole span played")
    heard = fake.samples()
    assert heard.shape[0] >= n
    x, _ = soundfile.read(str(w.document.path), dtype="float64")

    def tone(y) -> float:
        seg = y[int((WHISTLE_T0 + 0.05) * fs):int((WHISTLE_T1 - 0.05) * fs)]
        k = np.arange(seg.size)
        return abs(np.dot(seg, np.exp(-2j * np.pi * WHISTLE_HZ / fs * k))) / seg.size

    assert 20 * np.log10(tone(heard) / tone(x)) <= -40.0
    # File › Export range…, processed: the same edit in the WAV
    out = tmp_path / "edited.wav"
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        w.exports.export_range_to(out, 0.0, n / fs, processed=True, subtype="FLOAT")
    y, _ = soundfile.read(str(out), dtype="float64")
    assert y.shape[0] == n
    assert 20 * np.log10(tone(y) / tone(x)) <= -40.0
    # outside the region's frames: the samples as recorded
    np.testing.assert_array_equal(y[:int(0.5 * fs)], x[:int(0.5 * fs)].astype(np.float32))


def test_sessions_and_pipelines_keep_the_edits(qtbot, window, make_window, whistle, tmp_path):
    w = window
    w.menu_actions["region_lasso"].trigger()
    lasso_around_whistle(qtbot, w)
    w.menu_actions["region_isolate"].trigger()
    wait_until(lambda: edit_steps(w), what="the edit step")
    settle(w)
    pipe_path = tmp_path / "edits.json"
    assert w.processing.save_pipeline(pipe_path)
    saved = Pipeline.load(pipe_path)
    assert [s.op for s in saved.steps] == ["edit", "spectrogram"]
    session = tmp_path / "s.json"
    assert w.save_session(session)
    again = make_window(size=SIZE)
    assert again.open_session(session)
    wait_until(lambda: again.document is not None and again.views.up_to_date(),
               what="the session reopened")
    settle(again)
    assert edit_steps(again) == edit_steps(w)
    assert again.processing.editor.list.item(0).text().startswith("edit: isolate lasso")


def test_region_keys_are_listed_and_clash_with_none(qtbot, window):
    rows = {(r.keys, r.text, r.where) for r in shortcut_rows(window.menuBar())}
    tools = "Edit › Region tool"
    assert {("O", "Lasso", tools), ("B", "Brush", tools),
            ("Shift+H", "Box with harmonics", tools)} <= rows
    assert any(r[0] == "Shift+drag" and "erase" in r[1].lower() for r in rows)
    seen: dict[str, str] = {}
    for act, where in menu_actions(window.menuBar()):
        for k in keys_text(act).split(" / "):
            if k:
                assert k not in seen, f"{k} is both {seen[k]} and {act.text()}"
                seen[k] = act.text()
    # Select box (S) is the Box tool
    key(qtbot, window, Qt.Key.Key_S)
    assert window.regions.tool == "box" and window.menu_actions["region_box"].isChecked()
    key(qtbot, window, Qt.Key.Key_O)
    assert window.regions.tool == "lasso"
    assert not window.menu_actions["select_mode"].isChecked()
    assert not window.annotations.layer.select_mode


def test_an_iq_capture_edits_in_hz_from_its_centre(qtbot, make_window, tmp_path):
    """A SigMF capture tuned to 100 MHz: the view shows absolute Hz, the edit step holds Hz
    from the centre (as pipelines and `specscope edit` take them)."""
    fs, cf, tone = 48000, 100e6, 5000.0
    t = np.arange(2 * fs) / fs
    rng = np.random.default_rng(11)
    x = 1e-3 * (rng.standard_normal(t.size) + 1j * rng.standard_normal(t.size))
    x += 0.3 * np.exp(2j * np.pi * tone * t) * ((t > 0.5) & (t < 1.0))
    (tmp_path / "cap.sigmf-data").write_bytes(x.astype("<c8").tobytes())
    meta = tmp_path / "cap.sigmf-meta"
    meta.write_text(json.dumps({
        "global": {"core:datatype": "cf32_le", "core:sample_rate": fs, "core:version": "1.0.0"},
        "captures": [{"core:sample_start": 0, "core:frequency": cf}], "annotations": []}))
    w = make_window(size=SIZE, activate=True)
    open_and_wait(w, meta)
    idle(w)
    before = band_level(w.last_image, 0.6, 0.9, cf + tone - 50, cf + tone + 50)
    mirror = band_level(w.last_image, 0.6, 0.9, cf - tone - 200, cf - tone + 200)
    key(qtbot, w, Qt.Key.Key_O)
    ring = [pixel(w, 0.75 + 0.35 * np.cos(a), cf + tone + 2500 * np.sin(a)) + QPoint(-2, 1)
            for a in np.linspace(0.0, 2 * np.pi, 36)]
    drag(qtbot, w, ring)
    region = w.regions.region()
    _, _, f0, f1 = region.bounds()
    assert 2000 < f0 < tone < f1 < 8000  # from the centre
    drawn = w.regions.layer.outline().boundingRect()
    assert drawn.top() == pytest.approx(cf + f0) and drawn.bottom() == pytest.approx(cf + f1)
    assert "99.99" not in w.regions.panel.list.item(0).text()  # shown in absolute Hz
    assert "MHz" in w.regions.panel.list.item(0).text()
    w.menu_actions["region_remove"].trigger()
    wait_until(lambda: edit_steps(w), what="the edit step")
    settle(w)
    assert edit_steps(w)[0]["params"]["region"] == region.to_dict()
    after = band_level(w.last_image, 0.6, 0.9, cf + tone - 50, cf + tone + 50)
    assert before - after >= 40.0
    # the other side of the centre (the tone's mirror, noise only) is outside the region
    assert abs(band_level(w.last_image, 0.6, 0.9, cf - tone - 200, cf - tone + 200)
               - mirror) <= 0.1


def test_the_settings_compare_before_the_edits_and_name_the_step():
    from specscope.app.session import ViewSettings, describe_change

    gain = {"op": "gain", "params": {"factor": 2.0}}
    edit = {"op": "edit", "params": {"region": Box(0.1, 0.2, 100.0, 200.0).to_dict(),
                                     "operation": "remove"}}
    plain = ViewSettings(processing=json.dumps([gain]))
    edited = plain.with_changes(processing=json.dumps([gain, edit]))
    assert not plain.compares and plain.before_steps == [gain]
    assert edited.compares and edited.has_edits and edited.before_steps == [gain]
    assert describe_change(plain, edited) == "remove box region"
    assert describe_change(edited, plain) == "processing steps"
    assert describe_change(edited, edited.with_changes(compare="before")) == \
        "show before region edits"
    # while the designer's filters are applied, before and after are theirs
    chain = json.dumps([{"params": {"design": "butter", "btype": "lowpass", "order": 4,
                                    "cutoff": 1000.0}, "enabled": True}])
    filtered = edited.with_changes(chain=chain, chain_on=True)
    assert filtered.before_steps == [gain, edit]
    # the edits that end the processing stay last, after the designer's filters
    assert [s["op"] for s in filtered.steps] == ["gain", "filter", "edit"]
    assert describe_change(filtered, filtered.with_changes(compare="before")) == \
        "show before filter"
