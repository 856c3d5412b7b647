"""The explorer and the filter designer inline in Jupyter: images, events, designs, a notebook."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb")

from PyQt6.QtCore import QEvent, QPointF, Qt
from PyQt6.QtGui import QMouseEvent
from PyQt6.QtWidgets import QApplication
from specscope.app.notebook.explorer import design_filter, explore
from specscope.compute.annotations import Annotation
from specscope.compute.errors import InputError
from specscope.compute.filters import FilterSpec
from specscope.compute.io import ArrayRecording
from specscope.compute.pipeline import Pipeline
from specscope.widgets.filter_designer import FilterDesigner

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "assets" / "notebooks" / "explore.ipynb"
LOWPASS = Pipeline.from_filter(FilterSpec("butter", btype="lowpass", order=8, cutoff=2000.0))


def band_brightness(w, img: np.ndarray, f_lo: float, f_hi: float) -> float:
    """Mean RGB of the snapshot between two frequencies over the visible time span."""
    t0, t1, _, _ = w.visible_range
    x0, y_hi = w.to_pixel(t0, f_hi)
    x1, y_lo = w.to_pixel(t1, f_lo)
    return float(img[int(y_hi) + 2:int(y_lo) - 2, int(x0) + 2:int(x1) - 2, :3].mean())


def pointer(kind: str, x: float, y: float, button: int = 0, buttons=(), **extra) -> dict:
    """A jupyter_rfb pointer event as the browser sends it."""
    return {"event_type": kind, "type": kind, "x": x, "y": y, "button": button,
            "buttons": tuple(buttons), "modifiers": (), **extra}


def drag(canvas, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
    """Press the left button at ``start``, move to ``end``, release, through the canvas."""
    canvas.handle_event(pointer("pointer_down", *start, button=1, buttons=(1,)))
    for k in range(1, steps + 1):
        x = start[0] + (end[0] - start[0]) * k / steps
        y = start[1] + (end[1] - start[1]) * k / steps
        canvas.handle_event(pointer("pointer_move", x, y, button=1, buttons=(1,)))
    canvas.handle_event(pointer("pointer_up", *end, button=1))


@pytest.fixture
def explorer(example_path):
    w = explore(example_path)
    yield w
    w.close()


def test_snapshot_is_the_view_and_follows_set_view_and_pipeline(explorer):
    w = explorer
    full = w.snapshot()
    assert full.dtype == np.uint8 and full.shape == (460, 900, 4)
    assert full[..., :3].std() > 20  # a spectrogram, not a blank frame
    assert w.visible_range[:2] == pytest.approx((0.0, w.recording.duration))

    w.set_view(4.0, 6.0, 0.0, 12000.0)
    zoom = w.snapshot()
    assert w.visible_range == pytest.approx((4.0, 6.0, 0.0, 12000.0))
    assert (zoom != full).any(axis=2).mean() > 0.2
    high, low = band_brightness(w, zoom, 4000, 11000), band_brightness(w, zoom, 200, 1800)

    w.pipeline = LOWPASS
    filtered = w.snapshot()
    assert w.pipeline.to_dict()["steps"][0] == LOWPASS.to_dict()["steps"][0]
    assert w.visible_range == pytest.approx((4.0, 6.0, 0.0, 12000.0))  # the view stays
    # above the cutoff the image darkens by far more than below it
    high_after, low_after = band_brightness(w, filtered, 4000, 11000), \
        band_brightness(w, filtered, 200, 1800)
    assert high_after < 0.6 * high
    assert abs(low_after - low) < 0.25 * low

    w.pipeline = Pipeline.from_steps([])
    assert np.array_equal(w.snapshot(), zoom)  # the same view renders the same image


def test_sources_arrays_and_recordings():
    fs = 8000.0
    t = np.arange(int(fs * 2)) / fs
    x = np.sin(2 * np.pi * 1000 * t).astype(np.float32)
    with pytest.raises(InputError, match="sample rate"):
        explore(x)
    w = explore(x, fs=fs)
    try:
        img = w.snapshot()
        assert w.recording.sample_rate == fs and w.recording.duration == pytest.approx(2.0)
        # the tone is the brightest row of the plot
        x0, y_tone = w.to_pixel(1.0, 1000.0)
        _, y_off = w.to_pixel(1.0, 3000.0)
        assert img[int(y_tone), int(x0), :3].astype(int).sum() > \
            img[int(y_off), int(x0), :3].astype(int).sum() + 150
    finally:
        w.close()
    rec = ArrayRecording(x[:, None], fs, name="rec")
    w = explore(rec)
    try:
        assert w.recording is rec
        with pytest.raises(InputError):
            w.set_view(1.0, 0.5)
    finally:
        w.close()


def test_wheel_zooms_drag_pans_and_the_readout_follows(explorer):
    w = explorer
    w.snapshot()
    cx, cy = w.to_pixel(10.0, 8000.0)
    w.canvas.handle_event({"event_type": "wheel", "x": cx, "y": cy, "dx": 0.0, "dy": -300.0,
                           "buttons": (), "modifiers": ()})
    w.wait()
    t0, t1, _, _ = w.visible_range
    assert t1 - t0 < 0.8 * w.recording.duration
    assert t0 < 10.0 < t1  # zoomed about the pointer

    before = w.snapshot()
    span = t1 - t0
    x_a, y_a = w.to_pixel(t0 + 0.6 * span, 8000.0)
    x_b, _ = w.to_pixel(t0 + 0.4 * span, 8000.0)
    drag(w.canvas, (x_a, y_a), (x_b, y_a))
    after = w.snapshot()
    p0, p1, _, _ = w.visible_range
    assert p0 == pytest.approx(t0 + 0.2 * span, rel=0.05)  # content follows the pointer
    assert p1 - p0 == pytest.approx(span, rel=1e-6)
    assert (after != before).any(axis=2).mean() > 0.1

    x, y = w.to_pixel(p0 + 0.5 * span, 5000.0)
    w.canvas.handle_event(pointer("pointer_move", x, y))
    assert "t = " in w.readout.value and "f = " in w.readout.value and "dB" in w.readout.value
    shown_t = float(w.readout.value.split("t = ")[1].split(" s")[0])
    assert shown_t == pytest.approx(p0 + 0.5 * span, abs=span / 200)


def test_selection_annotations_colours_and_frequency_axis(explorer):
    w = explorer
    w.set_view(4.0, 6.0, 0.0, 12000.0)
    plain = w.snapshot()
    w.select_button.value = True  # the toolbar's Select button
    a, b = w.to_pixel(4.5, 8000.0), w.to_pixel(5.5, 2000.0)
    drag(w.canvas, a, b)
    sel = w.selection
    assert sel is not None
    assert (sel.start_s, sel.stop_s) == pytest.approx((4.5, 5.5), abs=0.01)
    assert (sel.freq_low_hz, sel.freq_high_hz) == pytest.approx((2000.0, 8000.0), abs=60.0)
    assert w.visible_range[:2] == pytest.approx((4.0, 6.0))  # selecting does not pan
    boxed = w.snapshot()
    assert (boxed != plain).any(axis=2).mean() > 0.002
    w.selection = None
    w.annotations = [Annotation(4.2, 4.8, 3000.0, 6000.0, label="call")]
    assert w.annotations[0].label == "call"
    assert not np.array_equal(w.snapshot(), plain)
    w.annotations = []
    assert np.array_equal(w.snapshot(), plain)

    w.colormap = "viridis"
    assert not np.array_equal(w.snapshot(), plain)
    w.levels = (-100.0, -40.0)
    assert w.levels == pytest.approx((-100.0, -40.0))
    linear = w.snapshot()
    w.freq_scale = "log"
    log = w.snapshot()
    assert w.freq_scale == "log" and w.freq_picker.value == "log"
    assert (log != linear).any(axis=2).mean() > 0.2
    with pytest.raises(InputError):
        w.freq_scale = "bark"


def _edge_pixel(designer: FilterDesigner, f: float) -> tuple[float, float]:
    """Where the band edge at ``f`` Hz is drawn, in the designer's own pixels."""
    QApplication.sendPostedEvents()
    vb = designer.mag.getPlotItem().getViewBox()
    (_, _), (y0, y1) = vb.viewRange()
    scene = vb.mapViewToScene(QPointF(f, (y0 + y1) / 2))
    p = designer.mag.viewport().mapTo(designer, designer.mag.mapFromScene(scene))
    return float(p.x()), float(p.y())


def _qt_drag(designer: FilterDesigner, start, end, steps: int = 8) -> None:
    """The same drag as :func:`drag`, as Qt mouse events on the desktop designer."""
    target = designer.mag.viewport()

    def send(kind, x, y, button, buttons):
        pos = target.mapFrom(designer, QPointF(x, y))
        QApplication.sendEvent(target, QMouseEvent(kind, pos, QPointF(x, y), button, buttons,
                                                   Qt.KeyboardModifier.NoModifier))

    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseButtonPress, *start, left, left)
    for k in range(1, steps + 1):
        send(QEvent.Type.MouseMove, start[0] + (end[0] - start[0]) * k / steps,
             start[1] + (end[1] - start[1]) * k / steps, none, left)
    send(QEvent.Type.MouseButtonRelease, *end, left, none)


def test_designer_drag_gives_the_desktop_designers_spec(qtbot):
    spec = {"design": "butter", "btype": "bandpass", "order": 4, "cutoff": [500.0, 3000.0]}
    d = design_filter(fs=48000.0, spec=spec)
    desktop = FilterDesigner(48000.0)
    qtbot.addWidget(desktop)
    desktop.set_spec(spec, emit=False)
    desktop.resize(*d.canvas.size)
    desktop.show()
    qtbot.waitExposed(desktop)
    d.snapshot()
    start = _edge_pixel(desktop, 3000.0)
    assert _edge_pixel(d.designer, 3000.0) == pytest.approx(start)  # the same geometry
    end = (start[0] + 60.0, start[1])
    committed = []
    desktop.specCommitted.connect(committed.append)
    _qt_drag(desktop, start, end)
    drag(d.canvas, start, end)

    assert desktop.spec != FilterSpec.from_params(spec)  # the drag moved the edge
    assert desktop.spec.cutoff[1] > 3500.0 and desktop.spec.cutoff[0] == 500.0
    assert d.spec == desktop.spec
    assert d.pipeline_step == {"op": "filter", "params": desktop.spec.to_params()}
    assert committed and committed[-1] == desktop.spec.to_params()
    assert d.pipeline.to_dict()["steps"] == [d.pipeline_step]


def test_designer_sets_an_explorers_pipeline_and_refuses_bad_specs(explorer):
    w = explorer
    d = design_filter(fs=w.recording.sample_rate, target=w,
                      spec={"design": "iirnotch", "frequency": 1000.0, "q": 10.0})
    assert w.pipeline.to_dict()["steps"][0] == d.pipeline_step
    before = d.snapshot()
    d.spec = FilterSpec("butter", btype="lowpass", order=4, cutoff=5000.0)
    assert d.spec.design == "butter" and d.method_picker.value == "butter"
    assert not np.array_equal(d.snapshot(), before)
    with pytest.raises(InputError):
        d.spec = {"design": "butter", "btype": "lowpass", "order": 4, "cutoff": 30000.0}
    assert d.spec.cutoff == 5000.0  # the last valid design stays
    with pytest.raises(InputError):
        design_filter(fs=1000.0, spec={"design": "butter", "btype": "lowpass", "order": 4,
                                       "cutoff": 900.0})


@pytest.mark.slow
@pytest.mark.real
def test_example_notebook_runs_in_a_kernel_without_display(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # a kernel spec for this interpreter, found before any user-installed "python3"
    spec_dir = tmp_path / "jupyter" / "kernels" / "specscope-test"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "specscope test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    # no display and no platform: the explorer module must choose the offscreen one
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="specscope-test", timeout=180,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json"
               in o.get("data", {})]
    assert len(widgets) >= 2  # the explorer and the designer are widget outputs
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    result = json.loads(text.split("RESULT ", 1)[1].splitlines()[0])
    assert result["platform"] == "offscreen"
    assert result["dtype"] == "uint8" and result["shape"][2] == 4
    assert result["std_full"] > 20
    assert result["zoom_changed"] > 0.2 and result["pipeline_changed"] > 0.05
    assert result["boxes_changed"] > 0.001
    # the kernel's event loop finished a view change while the kernel waited on something else
    assert result["background_done"] is True
    assert result["visible"] == pytest.approx([4.0, 6.0, 0.0, 12000.0])
    assert result["after"]["high"] < 0.6 * result["before"]["high"]
    assert abs(result["after"]["low"] - result["before"]["low"]) < 0.25 * result["before"]["low"]
    # the designer's target: its filter became the explorer's processing
    assert result["explorer_steps"][0] == result["step"]
    assert result["explorer_steps"][1]["op"] == "spectrogram"
    assert result["step"]["params"]["cutoff"] == [500.0, 3000.0]


@pytest.mark.slow
def test_no_display_means_the_offscreen_platform():
    import subprocess

    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    code = ("from specscope.app.notebook.explorer import qt_app\n"
            "print(qt_app().platformName())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120, check=True)
    assert r.stdout.strip() == "offscreen"


def test_a_pixel_ratio_of_two_renders_the_same_layout_at_twice_the_pixels(explorer):
    """HiDPI: at ratio 2 the frame is the same picture in four times the pixels, not the
    top-left quarter magnified (which differs from the 1x frame by ~40 grey levels)."""
    w = explorer
    one = w.snapshot()
    w.canvas.handle_event({"event_type": "resize", "width": 900, "height": 460,
                           "pixel_ratio": 2.0})
    two = w.snapshot()
    assert two.shape == (920, 1800, 4)
    binned = two[..., :3].astype(float).reshape(460, 2, 900, 2, 3).mean(axis=(1, 3))
    assert np.abs(binned - one[..., :3]).mean() < 8.0
    d = design_filter(fs=48000.0)
    try:
        d1 = d.snapshot()
        d.canvas.handle_event({"event_type": "resize", "width": d1.shape[1],
                               "height": d1.shape[0], "pixel_ratio": 2.0})
        d2 = d.snapshot()
        h, wd = d1.shape[:2]
        binned = d2[..., :3].astype(float).reshape(h, 2, wd, 2, 3).mean(axis=(1, 3))
        assert np.abs(binned - d1[..., :3]).mean() < 8.0
    finally:
        d.close()


def test_the_view_starts_at_the_datas_extent_and_the_designer_waits_for_a_spec(explorer):
    w = explorer
    nyquist = w.recording.sample_rate / 2
    assert w.visible_range == pytest.approx((0.0, w.recording.duration, 0.0, nyquist))
    before = w.pipeline.to_dict()
    d = design_filter(fs=w.recording.sample_rate, target=w)  # no spec: nothing changes
    try:
        assert w.pipeline.to_dict() == before
        # one method picker (the notebook's dropdown), and the whole form in the canvas
        assert not d.designer.method.isVisibleTo(d.designer)
        form = d.designer.form_scroll
        d.snapshot()
        assert form.verticalScrollBar().maximum() == 0
        d.method_picker.value = "remez"  # more fields: the canvas grows with the form
        d.snapshot()
        assert form.verticalScrollBar().maximum() == 0
    finally:
        d.close()


def test_the_waveform_row_at_deep_zoom_does_not_squeeze_the_spectrogram(explorer):
    w = explorer
    w.snapshot()
    plot_h, canvas_h = w.view.plot_size_px()[1], w.canvas.size[1]
    w.set_view(5.0, 5.2)  # 9600 samples: the waveform row appears
    deep = w.snapshot()
    assert w.view.waveform.isVisible()
    assert abs(w.view.plot_size_px()[1] - plot_h) <= 2  # the canvas grew instead
    assert deep.shape[0] == w.canvas.size[1] > canvas_h
    w.set_view(0.0, w.recording.duration)
    w.snapshot()
    assert not w.view.waveform.isVisible() and w.canvas.size[1] == canvas_h


def test_the_notebooks_boxes_are_the_annotation_layers_items(explorer):
    """The explorer draws annotations and the selection with the desktop app's
    AnnotationLayer: its items, in the view's scene, at the data coordinates."""
    from specscope.widgets.annotation_layer import AnnotationLayer, label_color

    w = explorer
    w.set_view(4.0, 6.0, 0.0, 12000.0)
    plain = w.snapshot()
    a = Annotation(4.2, 4.8, 3000.0, 6000.0, label="call")
    w.annotations = [a]
    assert isinstance(w.layer, AnnotationLayer) and w.layer.view is w.view
    assert w.layer.drawn() == [a.uuid]
    r = w.layer.rect_of(a.uuid)
    assert (r.left(), r.right(), r.top(), r.bottom()) == pytest.approx((4.2, 4.8, 3000, 6000))
    shown = [item for item in w.layer.items() if item.isVisible()]
    assert shown and all(item.scene() is w.view.scene() for item in shown)
    # the box's left edge is drawn in the label's colour where to_pixel puts it
    img = w.snapshot()
    x, y_top = w.to_pixel(4.2, 6000.0)
    _, y_bottom = w.to_pixel(4.2, 3000.0)
    column = img[int(y_top) + 8:int(y_bottom) - 8, round(x) - 1:round(x) + 2, :3]
    assert np.abs(column.astype(int) - label_color("call")).max(axis=2).min(axis=1).max() < 60
    assert not np.array_equal(img, plain)

    # a log axis moves the box to log10 of its edges
    w.freq_scale = "log"
    r = w.layer.rect_of(a.uuid)
    assert (r.top(), r.bottom()) == pytest.approx((np.log10(3000.0), np.log10(6000.0)))
    w.freq_scale = "linear"
    w.set_view(4.0, 6.0, 0.0, 12000.0)

    # a drag on the left edge (Select off) moves it: the layer's gesture
    start = w.to_pixel(4.2, 4500.0)
    drag(w.canvas, start, w.to_pixel(4.05, 4500.0))
    moved = w.annotations[0]
    assert moved.uuid == a.uuid and moved.start_s == pytest.approx(4.05, abs=0.01)
    assert (moved.stop_s, moved.freq_low_hz, moved.freq_high_hz) == (4.8, 3000.0, 6000.0)
    assert w.layer.rect_of(a.uuid).left() == pytest.approx(moved.start_s)
    assert w.visible_range[:2] == pytest.approx((4.0, 6.0))  # the edge moved, no pan

    # the selection dragged with Select on is the layer's selection box
    w.select_button.value = True
    unselected = w.snapshot()
    drag(w.canvas, w.to_pixel(5.0, 9000.0), w.to_pixel(5.5, 7000.0))
    sel = w.selection
    assert w.layer.selection == (sel.start_s, sel.stop_s, sel.freq_low_hz, sel.freq_high_hz)
    assert (sel.start_s, sel.stop_s) == pytest.approx((5.0, 5.5), abs=0.01)
    assert (w.snapshot() != unselected).any(axis=2).mean() > 0.002
    w.selection = None
    w.annotations = []
    assert not any(item.isVisible() for item in w.layer.items())
    assert np.array_equal(w.snapshot(), plain)


def test_the_wheel_hint_shows_until_the_first_click_into_the_view(explorer):
    from specscope.app.notebook.explorer import WHEEL_HINT
    w = explorer
    w.wait()
    assert WHEEL_HINT in w.status.value  # also beside the render's summary
    w.shell.show_message("rendered")
    assert "rendered" in w.status.value and WHEEL_HINT in w.status.value
    x, y = w.to_pixel(5.0, 4000.0)
    w.canvas.handle_event(pointer("pointer_move", x, y))
    assert WHEEL_HINT in w.status.value  # hovering is not a click
    w.canvas.handle_event(pointer("pointer_down", x, y, button=1, buttons=(1,)))
    w.canvas.handle_event(pointer("pointer_up", x, y, button=1))
    assert WHEEL_HINT not in w.status.value and "rendered" in w.status.value
    w.shell.show_message("again")
    assert WHEEL_HINT not in w.status.value and "again" in w.status.value


def test_the_canvas_front_end_is_jupyter_rfbs_with_the_busy_overlay():
    import jupyter_rfb.widget
    from specscope.app.notebook import frontend
    from specscope.app.notebook.canvas import FrameCanvas
    assert FrameCanvas._esm == frontend.ESM
    assert frontend.ESM.count("export default") == 1  # one module export: the wrapper
    assert jupyter_rfb.widget.JS.split("export default")[0] in frontend.ESM
    assert "specscope-busy" in frontend.CSS and jupyter_rfb.widget.CSS in frontend.CSS
    with pytest.raises(ImportError, match="export default"):
        frontend._esm("class A {}")
