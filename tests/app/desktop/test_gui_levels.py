"""First impressions: levels on open, before/after/difference levels, the time axis, the
wheel, the overview on a new file, NaN samples."""

import re

import numpy as np
import pytest
import soundfile
from _gui import TIMEOUT_MS, settle, wait_until
from _gui import open_and_wait as open_first
from PyQt6.QtCore import QEvent, QPoint, QPointF, Qt
from PyQt6.QtGui import QImage, QMouseEvent, QPainter, QWheelEvent
from PyQt6.QtWidgets import QApplication
from specscope.app.desktop.actions import VIEW_GESTURES
from specscope.compute import open_recording
from specscope.compute.timefmt import format_time
from specscope.compute.view import TileEngine, auto_levels, difference_levels
from specscope.compute.view.levels import level_values
from specscope.widgets.spectrogram_view import SpectrogramView

FS = 16000


def _write(path, x, fs=FS):
    soundfile.write(str(path), np.asarray(x, np.float32), fs, subtype="FLOAT")
    return path


@pytest.fixture
def silence_then_tone(tmp_path):
    """20 s: 10 s of digital silence, then a 1 kHz tone in noise at about -100 dB/Hz."""
    n = FS * 20
    x = np.zeros(n, np.float32)
    t = np.arange(n // 2) / FS
    rng = np.random.default_rng(1)
    x[n // 2:] = 0.5 * np.sin(2 * np.pi * 1000 * t) + 1e-3 * rng.standard_normal(n // 2)
    return _write(tmp_path / "silence_tone.wav", x)


@pytest.fixture
def window(make_window):
    return make_window(size=(1200, 800))


def open_and_wait(w, path):
    """Open ``path``; wait for its first image and until the view is computed to the end."""
    open_first(w, path)
    settle(w)


def _noise_floor(path):
    """Median level (dB) of the tone-and-noise half, away from the tone."""
    with open_recording(path) as rec:
        e = TileEngine(rec, nfft=1024, hop=256)
        r = e.render(12.0, 18.0, 200)
        f = r.frequencies
        db = 10 * np.log10(r.image[(f > 2000) & (f < 7000)])
        peak = 10 * np.log10(np.nanmax(r.image))
    return float(np.median(db)), float(peak)


# -- levels ----------------------------------------------------------------------------

def _old_levels(db):
    """What the view's auto levels were before: 2nd and 99.95th percentile of all cells."""
    finite = db[np.isfinite(db)]
    hi = float(np.ceil(np.percentile(finite, 99.95) / 5.0) * 5.0 + 5.0)
    lo = float(np.floor(np.percentile(finite, 2.0) / 5.0) * 5.0)
    return lo, hi


def test_auto_levels_leave_out_silence_and_nan():
    rng = np.random.default_rng(0)
    noise = -100 + 5 * rng.standard_normal((257, 400))
    noise[40, :] = -20                                # a line
    db = np.concatenate([np.full((257, 400), -200.0), noise], axis=1)  # half silence
    db[:, :3] = np.nan
    db[5, 500] = -np.inf
    lo, hi = auto_levels(db)
    assert hi - lo <= 120 and hi - lo >= 40
    assert lo < -105 and hi > -20                    # the floor inside, the line below the top
    assert level_values(db).min() > -200             # silence is not a level
    old_lo, old_hi = _old_levels(db)
    assert old_hi - old_lo > 120                     # what washed the image out
    # nothing but silence or NaN: the default range
    assert auto_levels(np.full((4, 4), -200.0)) == (-120.0, 0.0)
    assert auto_levels(np.full((4, 4), np.nan)) == (-120.0, 0.0)
    lo, hi = difference_levels(np.array([[-60.0, 0.0, 0.5, np.nan]] * 100))
    assert lo == -hi and 55 <= hi <= 61


def test_opening_half_silence_shows_the_noise_floor(qtbot, window, silence_then_tone):
    open_and_wait(window, silence_then_tone)
    lo, hi = window.view.levels()
    floor, peak = _noise_floor(silence_then_tone)
    # the noise floor is inside the range, clearly above the bottom; the tone near the top
    assert lo + 10 < floor < hi - 40, (lo, hi, floor)
    assert hi - lo <= 120
    assert hi >= peak - 3
    # the controls show the same levels as the colour bar
    assert (window.controls.db_low.value(), window.controls.db_high.value()) == (lo, hi)
    # the old percentiles of the same image reach the -200 dB of the silence
    old_lo, old_hi = _old_levels(window.view.image_data)
    assert old_hi - old_lo > 150


def test_before_after_share_levels_difference_keeps_its_own(qtbot, window, example_path):
    open_and_wait(window, example_path)
    window.designer_dock.setVisible(True)
    window.designer.set_spec({"design": "butter", "btype": "highpass", "order": 6,
                              "cutoff": 1000.0}, emit=False)
    window.designer_panel.apply_box.setChecked(True)
    settle(window)
    # a person types a bottom level
    box = window.controls.db_low
    box.selectAll()
    qtbot.keyClicks(box, "-95")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    after = window.view.levels()
    assert after[0] == -95.0
    compare = window.designer_panel.compare
    compare.setCurrentText("before")
    settle(window)
    assert window.view.levels() == after
    compare.setCurrentText("difference")
    settle(window)
    diff = window.view.levels()
    assert diff[0] == -diff[1] and diff[1] >= 20       # symmetric about 0 dB
    assert (window.controls.db_low.value(), window.controls.db_high.value()) == diff
    compare.setCurrentText("after")
    settle(window)
    assert window.view.levels() == after
    assert window.controls.db_low.value() == after[0]
    compare.setCurrentText("difference")
    settle(window)
    assert window.view.levels() == diff


# -- time axis ---------------------------------------------------------------------------

def _tick_texts(axis):
    image = QImage(800, 100, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _, _, text in specs[2]]


def _shown(view):
    """Until ``view`` is on screen and each time axis shows the span of its plot."""
    axes = (view.plot.getAxis("bottom"), view.overview.getAxis("bottom"))

    def ready() -> bool:
        handle = view.windowHandle()
        return (handle is not None and handle.isExposed()
                and all(axis.range == pytest.approx(list(axis.linkedView().viewRange()[0]))
                        for axis in axes))

    wait_until(ready, what=lambda: "the view on screen, its time axes showing their spans "
               f"(axes {[a.range for a in axes]}, view {view.visible_range()[:2]})")


def test_time_axis_reads_clock_on_an_hour_and_ms_on_50_ms(qtbot):
    view = SpectrogramView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_extent(0.0, 3600.0, 0.0, 4000.0)
    view.reset_view()
    _shown(view)
    for axis in (view.plot.getAxis("bottom"), view.overview.getAxis("bottom")):
        texts = _tick_texts(axis)
        assert texts and all(re.fullmatch(r"\d:\d\d:\d\d", t) for t in texts), texts
        assert "0:30:00" in texts or "0:20:00" in texts
        assert not any("ks" in t for t in texts)
        assert "(ks)" not in axis.labelString()
    view.set_time_range(2344.0, 2344.05)     # 50 ms, 39 minutes in
    _shown(view)
    texts = _tick_texts(view.plot.getAxis("bottom"))
    assert texts and all(t.startswith("0:39:04.0") for t in texts), texts
    view.set_extent(0.0, 0.05, 0.0, 4000.0)
    view.reset_view()
    _shown(view)
    texts = _tick_texts(view.plot.getAxis("bottom"))
    assert "10 ms" in texts and "40 ms" in texts, texts
    assert all(t.endswith(" ms") for t in texts)
    assert format_time(59.9996, 0.001, "clock") == "0:01:00.000"


# -- wheel -------------------------------------------------------------------------------

def _wheel(view, t, y, *, delta=120, modifiers=Qt.KeyboardModifier.NoModifier):
    """A wheel turn over the plot at time ``t``, row coordinate ``y``."""
    vb = view.plot.getViewBox()
    pos = QPointF(view.mapFromScene(vb.mapViewToScene(QPointF(t, y))))
    event = QWheelEvent(pos, QPointF(view.viewport().mapToGlobal(pos.toPoint())), QPoint(0, 0),
                        QPoint(0, delta), Qt.MouseButton.NoButton, modifiers,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def test_wheel_zooms_time_and_shift_wheel_frequency(qtbot):
    view = SpectrogramView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.set_extent(0.0, 100.0, 0.0, 8000.0, min_dt=0.01, min_df=10.0)
    view.reset_view()
    _shown(view)
    t0, t1, f0, f1 = view.visible_range()
    tc, fc = 30.0, 2000.0
    _wheel(view, tc, fc)
    n0, n1, g0, g1 = view.visible_range()
    assert n1 - n0 < 0.9 * (t1 - t0)                              # zoomed in, in time
    assert (tc - n0) / (n1 - n0) == pytest.approx((tc - t0) / (t1 - t0), abs=0.01)
    assert (g0, g1) == pytest.approx((f0, f1))                     # frequency stays
    _wheel(view, tc, fc, modifiers=Qt.KeyboardModifier.ShiftModifier)
    m0, m1, h0, h1 = view.visible_range()
    assert (m0, m1) == pytest.approx((n0, n1))                     # time stays
    assert h1 - h0 < 0.9 * (g1 - g0)                               # zoomed in frequency
    assert (fc - h0) / (h1 - h0) == pytest.approx((fc - g0) / (g1 - g0), abs=0.01)
    _wheel(view, tc, fc, delta=-120)                               # and out again
    k0, k1, _, _ = view.visible_range()
    assert k1 - k0 > n1 - n0
    assert any(r.keys == "Shift+wheel" for r in VIEW_GESTURES)


# -- overview ----------------------------------------------------------------------------

def _mouse(widget, kind, pos, buttons):
    event = QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)),
                        Qt.MouseButton.LeftButton, buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def _drag_region(view, t_from, t_to):
    """Drag the overview's region with the mouse from time ``t_from`` to ``t_to``."""
    vb = view.overview.getViewBox()
    (_, _), (y0, y1) = vb.viewRange()
    y = (y0 + y1) / 2

    def px(t):
        return view.mapFromScene(vb.mapViewToScene(QPointF(t, y)))

    a, b = px(t_from), px(t_to)
    port = view.viewport()
    # the scene drops moves that come quicker than its rate limit (pyqtgraph's
    # mouseRateLimit), as a hand holding still sends more: each step is sent again until
    # the scene took it (``sigMouseMoved``)
    taken: list = []

    def on_move(pos) -> None:
        taken.append(pos)

    view.scene().sigMouseMoved.connect(on_move)
    try:
        _mouse(port, QEvent.Type.MouseButtonPress, a, Qt.MouseButton.LeftButton)
        for k in range(1, 11):
            p = QPoint(a.x() + (b.x() - a.x()) * k // 10, a.y())
            taken.clear()

            def moved(p=p) -> bool:
                _mouse(port, QEvent.Type.MouseMove, p, Qt.MouseButton.LeftButton)
                return bool(taken)

            wait_until(moved, what=f"the scene taking the drag's move {k} of 10")
        _mouse(port, QEvent.Type.MouseButtonRelease, b, Qt.MouseButton.NoButton)
    finally:
        view.scene().sigMouseMoved.disconnect(on_move)


def test_overview_region_follows_a_new_file(qtbot, window, tmp_path):
    rng = np.random.default_rng(2)
    long = _write(tmp_path / "long.wav", 0.1 * rng.standard_normal(FS * 20))
    short = _write(tmp_path / "short.wav", 0.1 * rng.standard_normal(FS * 5))
    open_and_wait(window, long)
    window.view.set_time_range(2.0, 6.0)
    settle(window)
    qtbot.waitUntil(lambda: window.overview.region.getRegion() == pytest.approx((2.0, 6.0),
                                                                               abs=0.05),
                    timeout=TIMEOUT_MS)  # the overview shows the span, as a person sees it
    _drag_region(window.view, 4.0, 14.0)
    settle(window)
    r0, r1 = window.overview.region.getRegion()
    assert r0 > 8.0 and r1 - r0 == pytest.approx(4.0, abs=0.2)      # the drag moved it
    assert window.view.visible_range()[0] == pytest.approx(r0, abs=0.05)
    open_and_wait(window, short)
    r0, r1 = window.overview.region.getRegion()
    assert 0.0 <= r0 < r1 <= 5.0 + 1e-9
    assert (r0, r1) == pytest.approx((0.0, 5.0), abs=0.01)
    assert window.overview.viewRange()[0] == pytest.approx([0.0, 5.0], abs=0.01)
    open_and_wait(window, long)                               # and back to 20 s
    assert window.overview.region.getRegion() == pytest.approx((0.0, 20.0), abs=0.01)
    assert window.overview.viewRange()[0] == pytest.approx([0.0, 20.0], abs=0.01)


# -- NaN samples ---------------------------------------------------------------------------

def test_nan_samples_are_shown_in_their_own_colour_with_a_warning(qtbot, window, tmp_path):
    rng = np.random.default_rng(3)
    x = 0.1 * rng.standard_normal(FS * 10)
    x[FS * 4:FS * 5] = np.nan
    path = _write(tmp_path / "gap.wav", x)
    open_and_wait(window, path)
    qtbot.waitUntil(lambda: bool(window.overview.missing_spans), timeout=TIMEOUT_MS)
    (a, b), = window.overview.missing_spans
    assert a == pytest.approx(4.0, abs=0.01) and b == pytest.approx(5.0, abs=0.01)
    mask = window.view.missing_mask()
    assert mask is not None and mask.any()
    te = window.last_image.column_edges
    cols = np.flatnonzero(mask.any(axis=0))
    assert te[cols[0]] >= 3.9 and te[cols[-1] + 1] <= 5.1           # only there
    assert "NaN" in window.message_label.text()
    lo, hi = window.view.levels()
    assert np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 120
