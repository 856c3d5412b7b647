"""Regions on a view's axes: outlines and feathers under linear, log and mel scales and an
IQ capture's centre, the region layer's gestures on a bare SpectrogramView, and the words
the panel and the processing list show."""

import numpy as np
import pytest
from PyQt6.QtCore import QPoint, QPointF, Qt
from specscope.compute.edit import Box, Brush, Harmonics, Lasso, RegionEdit
from specscope.widgets.frequency_axis import forward
from specscope.widgets.region_layer import RegionLayer
from specscope.widgets.region_panel import RegionPanel
from specscope.widgets.region_shapes import (
    edit_text,
    feather_outline,
    region_outline,
    region_text,
)
from specscope.widgets.spectrogram_view import SpectrogramView

LEFT = Qt.MouseButton.LeftButton


def rect(path):
    r = path.boundingRect()
    return r.left(), r.right(), r.top(), r.bottom()


@pytest.mark.parametrize("scale", ["linear", "log", "mel"])
def test_a_box_and_its_feather_on_each_scale(qtbot, scale):
    box = Box(1.0, 2.0, 1000.0, 2000.0)
    t0, t1, y0, y1 = rect(region_outline(box, scale))
    assert (t0, t1) == pytest.approx((1.0, 2.0))
    assert (y0, y1) == pytest.approx(tuple(forward(scale, [1000.0, 2000.0])))
    # grown by 10 ms and 50 Hz on every side (rounded corners stay inside that box)
    t0, t1, y0, y1 = rect(feather_outline(box, 10.0, 50.0, scale))
    assert (t0, t1) == pytest.approx((0.99, 2.01), abs=1e-6)
    assert (y0, y1) == pytest.approx(tuple(forward(scale, [950.0, 2050.0])), rel=1e-4)
    assert feather_outline(box, 0.0, 0.0, scale).isEmpty()


def test_an_iq_centre_moves_the_outline_and_a_lasso_edge_bends_on_a_log_axis():
    cf = 100e6
    _, _, y0, y1 = rect(region_outline(Box(0.0, 1.0, -5000.0, 5000.0), "linear", cf))
    assert (y0, y1) == pytest.approx((cf - 5000.0, cf + 5000.0))
    # a straight edge in Hz from (0 s, 100 Hz) to (1 s, 10 kHz): its middle is 5050 Hz, on a
    # log axis log10(5050), not the middle of the two ends' log10 (3)
    lasso = Lasso(((0.0, 100.0), (1.0, 10000.0), (1.0, 100.0)))
    poly = region_outline(lasso, "log").toSubpathPolygons()[0]
    pts = {(round(p.x(), 6), round(p.y(), 6)) for p in poly}
    assert (0.5, round(float(np.log10(5050.0)), 6)) in pts


def test_brush_erased_cells_and_harmonics_outlines():
    brush = Brush(tuple((t, 1000.0) for t in np.linspace(0.0, 1.0, 21)), 0.05, 100.0)
    assert len(region_outline(brush).toSubpathPolygons()) == 1
    cut = Brush(brush.points, 0.05, 100.0, erased=((0.5, 1000.0), (0.5, 950.0),
                                                   (0.5, 1050.0)))
    outline = region_outline(cut)
    assert len(outline.toSubpathPolygons()) == 2
    assert not outline.contains(QPointF(0.5, 1000.0)) and outline.contains(QPointF(0.2, 1000.0))
    harm = Harmonics(0.0, 1.0, 100.0, 120.0, 5)
    assert len(region_outline(harm).toSubpathPolygons()) == 5
    assert rect(region_outline(harm))[3] == pytest.approx(600.0)


def test_the_words_for_regions_and_edits():
    assert region_text(Box(1.0, 2.5, 2500.0, 3500.0)) == "box 1–2.5 s, 2.50–3.50 kHz, 1500 s·Hz"
    assert region_text(Box(0.0, 1.0, -500.0, 500.0), 100e6).startswith(
        "box 0–1 s, 99.99950–100.00050 MHz")
    edit = RegionEdit(Lasso(((0.4, 2500.0), (0.8, 2500.0), (0.6, 3500.0))), "attenuate", db=12)
    assert edit_text(edit.to_dict()) == ("attenuate 12 dB lasso 0.4–0.8 s, 2.50–3.50 kHz, "
                                         "200 s·Hz (feather 10 ms, 50 Hz)")
    assert edit_text({"operation": "remove", "region": {"shape": "nope"}}) == "remove region"


@pytest.fixture
def view(qtbot):
    """A bare view of 10 s and 0..24 kHz, shown; deleted (not closed: pyqtgraph's close
    empties the scene under the view's running timers) after the test."""
    from PyQt6.QtCore import QCoreApplication, QEvent

    v = SpectrogramView()
    v.resize(900, 600)
    v.show()
    qtbot.waitExposed(v)
    v.set_extent(0.0, 10.0, 0.0, 24000.0)
    v.reset_view()
    qtbot.waitUntil(lambda: v.plot.getViewBox().width() > 100)
    yield v
    v.hide()
    v.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)


def at(view, t, f) -> QPoint:
    vb = view.plot.getViewBox()
    return view.mapFromScene(vb.mapViewToScene(QPointF(t, float(forward(view.freq_scale, f)))))


def drag(qtbot, view, points, mods=Qt.KeyboardModifier.NoModifier):
    vp = view.viewport()
    qtbot.mousePress(vp, LEFT, mods, points[0])
    for p in points[1:]:
        qtbot.mouseMove(vp, p)
    qtbot.mouseRelease(vp, LEFT, mods, points[-1])


def test_the_layer_draws_a_lasso_and_leaves_ctrl_drags_and_panning_alone(qtbot, view):
    layer = RegionLayer(view, view)
    drawn = []
    layer.regionDrawn.connect(drawn.append)
    ring = [at(view, 5 + 2 * np.cos(a), 12000 + 5000 * np.sin(a)) + QPoint(1, 2)
            for a in np.linspace(0, 2 * np.pi, 40)]
    drag(qtbot, view, ring)  # no tool: the view pans, no region
    assert not drawn
    layer.set_tool("lasso")
    view.reset_view()
    ring = [at(view, 5 + 2 * np.cos(a), 12000 + 5000 * np.sin(a)) + QPoint(1, 2)
            for a in np.linspace(0, 2 * np.pi, 40)]
    drag(qtbot, view, ring, Qt.KeyboardModifier.ControlModifier)  # the selection's
    assert not drawn
    drag(qtbot, view, ring)
    assert len(drawn) == 1 and isinstance(drawn[0], Lasso)
    assert drawn[0].contains(np.array([5.0]), np.array([12000.0]))[0, 0]
    assert not drawn[0].contains(np.array([1.0]), np.array([12000.0]))[0, 0]
    assert layer.outline().contains(QPointF(5.0, 12000.0))
    # a click makes no lasso: said why
    refused = []
    layer.refused.connect(refused.append)
    drag(qtbot, view, [ring[0], ring[0]])
    assert len(drawn) == 1 and "lasso" in refused[0].lower()


def test_the_panel_says_what_it_was_asked(qtbot):
    panel = RegionPanel()
    qtbot.addWidget(panel)
    asked = []
    panel.operationRequested.connect(asked.append)
    tools = []
    panel.toolChosen.connect(tools.append)
    assert not panel.operation_buttons["remove"].isEnabled()  # no region yet
    panel.set_regions(["box 1–2 s, 1–2 kHz, 1000 s·Hz"], 0)
    assert panel.operation_buttons["remove"].isEnabled()
    assert panel.status.text().startswith("Current: box")
    panel.show()
    qtbot.mouseClick(panel.operation_buttons["isolate"], LEFT)
    qtbot.mouseClick(panel.tool_buttons["brush"], LEFT)
    qtbot.mouseClick(panel.tool_buttons["lasso"], LEFT)
    qtbot.mouseClick(panel.tool_buttons["lasso"], LEFT)
    assert asked == ["isolate"] and tools == ["brush", "lasso", ""]
    assert not panel.tool_buttons["brush"].isChecked()
    assert panel.values() == {"db": 20.0, "feather_ms": 10.0, "feather_hz": 50.0}
