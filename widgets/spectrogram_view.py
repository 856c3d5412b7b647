"""SpectrogramView: a zoomable spectrogram image with a dB colour bar and readout.

The view knows nothing of where images come from: it is given a dB image and
its axes, and it emits signals (cursor position, level changes).  Changing the
levels or the colour map re-levels the existing image through its lookup table;
nothing is recomputed.

Levels belong to a *quantity*: ``"level"`` (a spectrogram in dB: the STFT,
before or after a filter, a plugin's image) or ``"difference"`` (after minus
before, in dB, on a symmetric scale).  Each keeps its own range while the
view switches between them (:meth:`SpectrogramView.set_quantity`).

A recording with absolute times (:meth:`SpectrogramView.set_timeline`) reads on the
time axes as dates and clock times in its zone; its gaps are hatched marks with their
lengths ("gap 2 h 13 min") at their places on the sample axis (a gap takes no
samples: nothing is drawn in it), and the readout names the time, the file under the
cursor and the offset in it.

A calibration (:meth:`SpectrogramView.set_calibration`) adds an offset in dB per
frequency row to the level images as they are drawn: the colour bar, the readout and
the spectrum beside the image say the calibrated unit, and nothing is recomputed (the
images as computed are kept and offset again).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QPointF, QRectF, Qt, QTimer, pyqtSignal
from PyQt6.QtWidgets import QLabel
from specscope.compute.timefmt import format_time
from specscope.compute.view import auto_levels, difference_levels
from specscope.compute.view.levels import calibrated, level_unit

from .calibrated_levels import BAR_LABELS, CalibratedLevels
from .filter_lines import FilterLines
from .frequency_axis import FrequencyAxis, forward, inverse
from .gap_marks import GapMarks
from .overview import MISSING_COLOR, OverviewPlot
from .readout import readout
from .steady_paint import steady_paint
from .time_axis import TimeAxis

#: colour maps offered in menus (all bundled with pyqtgraph)
COLORMAPS = ("inferno", "viridis", "magma", "plasma", "cividis", "turbo", "CET-L1")
#: the modifier that makes the wheel zoom frequency instead of time
FREQUENCY_WHEEL_MODIFIER = Qt.KeyboardModifier.ShiftModifier
#: the spectrum beside the image: its caption under the cursor, and while the pointer is away
SLICE_AT_CURSOR = "Spectrum at cursor (dB)"
SLICE_AT_CENTRE = "at {} (view centre)"
#: what each quantity's levels are fitted with
QUANTITIES = {"level": auto_levels, "difference": difference_levels}


class TimeZoomViewBox(pg.ViewBox):
    """A ViewBox whose wheel zooms time around the cursor, and frequency with Shift.

    Over an axis the wheel zooms that axis, as in pyqtgraph.
    """

    def wheelEvent(self, ev, axis=None):
        if axis is None:
            axis = 1 if ev.modifiers() & FREQUENCY_WHEEL_MODIFIER else 0
        super().wheelEvent(ev, axis=axis)


class SpectrogramView(CalibratedLevels, FilterLines, pg.GraphicsLayoutWidget):
    """Spectrogram plot: time (s) on x, frequency (Hz) on y, level in dB as colour.

    Signals
    -------
    cursorMoved(float, float, float)
        Time (s), frequency (Hz) and level (dB, NaN outside the image) under the mouse.
    levelsChanged(float, float)
        The dB range, after the colour bar was dragged or a quantity's kept
        levels came back (:meth:`set_quantity`).
    viewportChanged(float, float, float, float, int, int)
        The visible time span (s), frequency span (Hz) and plot size in device
        pixels, after zooming, panning or resizing settled (debounced), or at
        once after :meth:`jump_to`.
    referenceChanged(float, float, float)
        A click set the measurement reference (time, frequency, level); NaNs
        when a double-click cleared it.

    Beside the image: a spectrum slice (the column under the cursor, level
    against frequency, sharing the frequency axis; the column at the view's
    centre while the pointer is away from the plot), a waveform row shown when
    zoomed in to samples, and the overview of the whole recording.  Keys:
    Left/Right pan, Ctrl++ / Ctrl+- zoom time, Shift+Up/Down zoom frequency,
    Up/Down pan frequency.  The wheel zooms time around the cursor; with Shift
    it zooms frequency.

    NaN cells of an image in stretches the overview found NaN samples in are
    drawn in :data:`~specscope.widgets.overview.MISSING_COLOR`
    (:meth:`missing_note` says where); other NaN cells (outside the recording,
    between stacked channels) stay transparent.

    Two images share the colour map: a *background* of the whole recording at
    coarse resolution, shown where the *detail* image of the visible span has
    not arrived yet (while panning), and the detail itself.

    What follows the cursor follows what is shown too: when the image, the
    zoom, the scale or the levels change, the readout (``cursorMoved``) and the
    spectrum slice are computed again at the pointer, or, once it left the plot,
    the readout at the point it last described and the slice at the centre.
    pyqtgraph's auto-range ("A") buttons are hidden on every plot: Home (the
    View menu) shows the whole recording.
    """

    cursorMoved = pyqtSignal(float, float, float)
    levelsChanged = pyqtSignal(float, float)
    viewportChanged = pyqtSignal(float, float, float, float, int, int)
    referenceChanged = pyqtSignal(float, float, float)
    #: a click in notch mode: the frequency (Hz) of the spectral line to remove
    notchRequested = pyqtSignal(float)
    #: a click in tune mode: the frequency (Hz) to listen to
    tuneRequested = pyqtSignal(float)
    #: a filter edge line was dragged: field name, index, frequency (Hz), finished
    filterLineMoved = pyqtSignal(str, int, float, bool)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setBackground("k")
        self.freq_axis = FrequencyAxis("left")
        self.plot: pg.PlotItem = self.addPlot(
            row=0, col=0, viewBox=TimeZoomViewBox(),
            axisItems={"left": self.freq_axis, "bottom": TimeAxis("bottom")})
        self.plot.setLabel("bottom", "Time")
        self.freq_axis.set_scale("linear")
        self.plot.showGrid(x=False, y=False)
        self.plot.getAxis("left").setWidth(64)
        self.plot.setMenuEnabled(True)
        self.plot.hideButtons()
        self.plot.getViewBox().setMouseMode(pg.ViewBox.PanMode)
        self.background = pg.ImageItem(axisOrder="row-major")
        self.background.setZValue(-1)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.background)
        self.plot.addItem(self.image)
        # NaN samples: a mask over each image, in a colour no colour map has
        self._missing_bg = pg.ImageItem(axisOrder="row-major")
        self._missing_bg.setZValue(-0.5)
        self._missing = pg.ImageItem(axisOrder="row-major")
        self._missing.setZValue(0.5)
        self.plot.addItem(self._missing_bg)
        self.plot.addItem(self._missing)
        #: what the image shows ("level" or "difference") and the levels each had last
        self.quantity = "level"
        self._kept_levels: dict[str, tuple[float, float]] = {}
        self._cmap_name = COLORMAPS[0]
        #: gamma of the colour scale (see set_gamma)
        self.gamma = 1.0
        #: the calibration the level images are shown with (None: as computed)
        self.calibration = None
        #: the unit of a level: full scale until :meth:`set_calibration` says otherwise
        self.level_unit = level_unit("psd")
        self.colorbar = pg.ColorBarItem(values=(-120.0, 0.0),
                                        colorMap=pg.colormap.get(self._cmap_name),
                                        label=BAR_LABELS["level"].format(self.level_unit),
                                        interactive=True, rounding=0.5)
        self.colorbar.setImageItem([self.background, self.image])
        self.addItem(self.colorbar, row=0, col=1)
        #: level against frequency of the column under the cursor
        self.slice = self.addPlot(row=0, col=2)
        self.slice.setMaximumWidth(170)
        self.slice.setYLink(self.plot)
        self.slice.hideAxis("left")
        self.slice.setLabel("bottom", SLICE_AT_CURSOR)
        self.slice.setMouseEnabled(x=False, y=False)
        self.slice.setMenuEnabled(False)
        self.slice.hideButtons()
        self._slice_curve = self.slice.plot(pen=pg.mkPen((255, 200, 80), width=1))
        #: samples of the visible span, shown when zoomed in far enough
        self.waveform = self.addPlot(row=1, col=0)
        self.waveform.setXLink(self.plot)
        self.waveform.getAxis("left").setWidth(64)
        self.waveform.setMaximumHeight(90)
        self.waveform.setMenuEnabled(False)
        self.waveform.setMouseEnabled(x=False, y=False)
        self.waveform.hideButtons()
        self.waveform.hideAxis("bottom")
        self._wave_curve = self.waveform.plot(pen=pg.mkPen((120, 220, 160), width=1))
        # tens of thousands of samples on a few hundred pixels: each pixel's column drawn
        # from the least and greatest of its samples (the same strokes, far fewer of them)
        self._wave_curve.setDownsampling(auto=True, method="peak")
        self._wave_curve.opts["autoDownsampleFactor"] = 2.0
        self.waveform.setVisible(False)
        #: the whole recording's waveform envelope, with the visible span
        self.overview = OverviewPlot(left_axis_width=64)
        self.addItem(self.overview, row=2, col=0)
        self.overview.missingChanged.connect(self._update_missing)
        # measurement: a reference point and harmonic cursors
        self._ref_marker = pg.ScatterPlotItem(size=11, symbol="+", pen=pg.mkPen("c", width=2),
                                              brush=None)
        self.plot.addItem(self._ref_marker, ignoreBounds=True)
        self.reference: tuple[float, float, float] | None = None
        self._harmonics: list[pg.InfiniteLine] = []
        self.harmonic_count = 0
        self._filter_lines: list[tuple[str, int, pg.InfiniteLine]] = []
        self._stack_split = None
        self._stack_labels: list[pg.TextItem] = []
        #: channel under the cursor when channels are stacked, else None
        self.cursor_channel: int | None = None
        #: "reference" (a click sets the measurement reference), "notch" or "tune"
        self.click_mode = "reference"
        #: where playback is (a vertical line over the image; hidden while nothing plays)
        self.play_cursor = pg.InfiniteLine(angle=90, movable=False,
                                           pen=pg.mkPen((255, 90, 60), width=2))
        self.play_cursor.setZValue(20)
        self.play_cursor.setVisible(False)
        self.plot.addItem(self.play_cursor, ignoreBounds=True)
        self.colorbar.sigLevelsChangeFinished.connect(self._on_bar_levels)
        self._vline = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen((255, 255, 255, 90)))
        self._hline = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen((255, 255, 255, 90)))
        for line in (self._vline, self._hline):
            line.setVisible(False)
            self.plot.addItem(line, ignoreBounds=True)
        self._db: np.ndarray | None = None
        #: the images as computed (before the calibration): detail and background
        self._db_raw: np.ndarray | None = None
        self._bg_raw: np.ndarray | None = None
        self._t_edges: np.ndarray | None = None
        self._f_edges: np.ndarray | None = None
        self._bg: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._extent: tuple[float, float, float, float] | None = None
        #: whether the detail image has no NaN cell (it hides the background it spans)
        self._detail_whole = False
        #: where the pointer is over the plot (scene coordinates); None when it is away
        self._pointer: QPointF | None = None
        #: the point (s, Hz on the plot's rows) the readout last described
        self._last_cursor: tuple[float, float] | None = None
        # what is shown changed: the readout and the slice again, once the change is whole
        self._cursor_timer = QTimer(self)
        self._cursor_timer.setSingleShot(True)
        self._cursor_timer.setInterval(0)
        self._cursor_timer.timeout.connect(self.refresh_cursor)
        # pyqtgraph passes on at most one pointer move per 10 ms: where the pointer came to
        # rest is followed a moment after the last move, whether or not it was passed on
        self._pointer_moved: QPointF | None = None
        self._rest_timer = QTimer(self)
        self._rest_timer.setSingleShot(True)
        self._rest_timer.setInterval(30)
        self._rest_timer.timeout.connect(self._pointer_rests)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self._viewport_timer = QTimer(self)
        self._viewport_timer.setSingleShot(True)
        self._viewport_timer.setInterval(30)
        self._viewport_timer.timeout.connect(self._emit_viewport)
        self.plot.getViewBox().sigRangeChanged.connect(self._on_range_changed)
        # the plot grew or shrank (a waveform row came): other data under a still pointer
        self.plot.getViewBox().sigResized.connect(self._schedule_cursor)
        for item in (self.plot, self.slice, self.waveform, self.overview):
            steady_paint(item)
        #: what the image shows and what is being computed, over the plot's top left
        self.caption = QLabel(self)
        self.caption.setObjectName("viewCaption")
        self.caption.setStyleSheet("QLabel#viewCaption { background: rgba(0, 0, 0, 170); "
                                   "color: #f0f0f0; padding: 3px 6px; }")
        self.caption.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.caption.setVisible(False)
        #: the absolute times of the recording's axis (None: seconds into it)
        self.timeline = None
        #: the marks of the gaps over the spectrogram, with their lengths as labels
        #: the marks of a timeline's gaps over the image
        self.gaps = GapMarks(self.plot)

    # -- absolute time -------------------------------------------------------
    def set_timeline(self, timeline) -> None:
        """Show the absolute times of ``timeline`` (a
        :class:`~specscope.compute.deployment.timeline.Timeline`) on the axes, mark its
        gaps and name its files in the readout; None: seconds into the recording."""
        self.timeline = timeline
        self.gaps.set_timeline(timeline)
        self.plot.getAxis("bottom").set_timeline(timeline)
        self.overview.getAxis("bottom").set_timeline(timeline)
        self.overview.set_timeline(timeline)
        self._show_time_caption()

    def _show_time_caption(self) -> None:
        """The time axis' title (the date at the view's start and the zone) and the marks
        of the gaps in view (:class:`~.gap_marks.GapMarks`)."""
        timeline = self.timeline
        if timeline is None:
            if self.plot.getAxis("bottom").labelText != "Time":
                self.plot.setLabel("bottom", "Time")
            return
        (t0, t1), _ = self.plot.getViewBox().viewRange()
        first, last = timeline.stretches[0].t0, timeline.stretches[-1].t1
        text = f"Time, {timeline.caption(max(t0, first), min(t1, last))}"
        if self.plot.getAxis("bottom").labelText != text:
            self.plot.setLabel("bottom", text)
        self.gaps.show_between(t0, t1)

    def gap_labels(self) -> list[tuple[float, str]]:
        """The gap marks shown over the spectrogram: (place on the axis s, label)."""
        return self.gaps.labels()

    def set_caption(self, text: str) -> None:
        """Say over the plot what the image shows (and what is coming); "" hides it."""
        self.caption.setText(text)
        self.caption.adjustSize()
        self._place_caption()
        self.caption.setVisible(bool(text))

    def _place_caption(self) -> None:
        if getattr(self, "caption", None) is None:  # during construction
            return
        rect = self.plot.getViewBox().sceneBoundingRect()
        top_left = self.mapFromScene(rect.topLeft())
        self.caption.move(top_left.x() + 6, top_left.y() + 6)

    def grab_clean(self):
        """The view as a pixmap without what follows the mouse (crosshair, harmonic
        cursors, the spectrum at the cursor) or the caption: what an export shows."""
        hide = [i for i in (self._vline, self._hline, *self._harmonics, self.caption)
                if i.isVisible()]
        slice_data = self._slice_curve.getData()
        for item in hide:
            item.setVisible(False)
        self._slice_curve.setData([], [])
        try:
            return self.grab()
        finally:
            for item in hide:
                item.setVisible(True)
            if slice_data[0] is not None:
                self._slice_curve.setData(*slice_data)

    # -- data --------------------------------------------------------------
    def set_extent(self, t0: float, t1: float, f0: float, f1: float, *,
                   min_dt: float | None = None, min_df: float | None = None) -> None:
        """The data's full extent: pan/zoom limits and what Home shows.

        ``min_dt`` and ``min_df`` bound the zoom (e.g. a few hops, a few bins).
        """
        if self.freq_scale == "log":
            f0 = max(f0, 1e-3)
            min_df = None
        self._extent = (t0, t1, f0, f1)
        self.overview.set_extent(t0, t1)
        y0, y1 = (float(v) for v in forward(self.freq_scale, [f0, f1]))
        if self.freq_scale != "linear":
            min_df = None
        self.plot.getViewBox().setLimits(xMin=t0, xMax=t1, yMin=y0, yMax=y1,
                                         minXRange=min_dt, minYRange=min_df)

    def set_stack(self, n: int, f0: float, band: float, span: float, split) -> None:
        """Channels drawn as stacked bands (``split(y) -> (channel, Hz)``); n=0 turns it off."""
        for item in self._stack_labels:
            self.plot.removeItem(item)
        self._stack_labels = []
        if n <= 0:
            self._stack_split = None
            self.freq_axis.set_stack(None)
            return
        self._stack_split = split
        self.freq_axis.set_stack((n, f0, band, span))
        for c in range(n):
            label = pg.TextItem(f"ch {c}", color=(230, 230, 230), anchor=(0, 0))
            label.setPos(0.0, c * band + span)
            self.plot.addItem(label, ignoreBounds=True)
            self._stack_labels.append(label)
        self._cursor_timer.start()

    def _place_stack_labels(self) -> None:
        (t0, _), _ = self.plot.getViewBox().viewRange()
        for label in self._stack_labels:
            label.setPos(t0, label.pos().y())

    @property
    def freq_scale(self) -> str:
        return self.freq_axis.freq_scale

    def set_frequency_scale(self, scale: str) -> None:
        """Switch the y axis between linear, log and mel (the images must follow)."""
        if scale == self.freq_scale:
            return
        self.freq_axis.set_scale(scale)
        self.image.clear()
        self.background.clear()
        self._db = self._db_raw = None
        self._bg = self._bg_raw = None
        self._update_missing()
        self._cover_background()
        self._cursor_timer.start()

    def set_background(self, db: np.ndarray, time_edges: np.ndarray,
                       freq_edges: np.ndarray) -> None:
        """The whole recording at coarse resolution (below the detail image)."""
        self._bg_raw = self._check(db, time_edges, freq_edges)
        db = calibrated(self._bg_raw, self._row_offsets(freq_edges))
        self._bg = (db, np.asarray(time_edges), np.asarray(freq_edges))
        self.background.setImage(db, autoLevels=False, levels=self.levels())
        self.background.setRect(_rect(time_edges, forward(self.freq_scale, freq_edges)))
        self._draw_missing(self._missing_bg, self._bg)
        self._cursor_timer.start()

    def set_image(self, db: np.ndarray, time_edges: np.ndarray, freq_edges: np.ndarray,
                  *, reset_view: bool = False) -> None:
        """Show a dB image shaped (n_freq, n_columns), row 0 the lowest frequency."""
        self._db_raw = self._check(db, time_edges, freq_edges)
        db = calibrated(self._db_raw, self._row_offsets(freq_edges))
        self._db, self._t_edges, self._f_edges = db, np.asarray(time_edges), np.asarray(freq_edges)
        self.image.setImage(db, autoLevels=False, levels=self.levels())
        self.image.setRect(_rect(time_edges, forward(self.freq_scale, freq_edges)))
        self._draw_missing(self._missing, (db, self._t_edges, self._f_edges))
        self._detail_whole = not np.isnan(db).any()
        self._cover_background()
        if self._extent is None:
            self.set_extent(float(time_edges[0]), float(time_edges[-1]),
                            float(freq_edges[0]), float(freq_edges[-1]))
            reset_view = True
        if reset_view:
            self.reset_view()
        # at once: the slice and readout of the new image are painted with it, in one paint
        self.refresh_cursor()

    @staticmethod
    def _check(db: np.ndarray, time_edges: np.ndarray, freq_edges: np.ndarray) -> np.ndarray:
        db = np.ascontiguousarray(db, dtype=np.float32)
        if db.ndim != 2 or db.shape != (len(freq_edges) - 1, len(time_edges) - 1):
            raise ValueError(f"image shape {db.shape} does not match the axes "
                             f"({len(freq_edges) - 1}, {len(time_edges) - 1})")
        return db

    def clear_background(self) -> None:
        """Drop the whole-recording image (alternative views have none)."""
        self._bg = self._bg_raw = None
        self.background.clear()
        self._missing_bg.clear()
        self._cursor_timer.start()

    def clear_image(self) -> None:
        """Forget both images and the extent (a new recording is coming)."""
        self.clear_reference()
        self.set_waveform(0.0, 1.0, None)
        self._slice_curve.setData([], [])
        self._db = self._db_raw = None
        self._bg = self._bg_raw = None
        self._extent = None
        self.image.clear()
        self.background.clear()
        self._missing.clear()
        self._missing_bg.clear()
        self._kept_levels.clear()  # another recording: its own levels
        self._last_cursor = None  # a point of the recording gone
        self._cover_background()
        self._cursor_timer.start()

    def _cover_background(self) -> None:
        """Draw the background only where the detail image leaves some of the plot to it:
        a detail without NaN cells spanning the visible range (to half a pixel) hides it
        (painting it under an opaque image costs a scaled copy of the recording's image
        on every paint)."""
        covered = False
        if self._db is not None and self._detail_whole and self._t_edges is not None:
            vb = self.plot.getViewBox()
            (x0, x1), (y0, y1) = vb.viewRange()
            rect = self.image.mapRectToParent(self.image.boundingRect())
            w, h = max(vb.width(), 1.0), max(vb.height(), 1.0)
            tx, ty = 0.5 * (x1 - x0) / w, 0.5 * (y1 - y0) / h
            covered = (rect.left() <= x0 + tx and rect.right() >= x1 - tx
                       and rect.top() <= y0 + ty and rect.bottom() >= y1 - ty)
        if self.background.isVisible() == covered:
            self.background.setVisible(not covered)

    @property
    def image_data(self) -> np.ndarray | None:
        """The dB image currently shown (None before the first one)."""
        return self._db

    def reset_view(self) -> None:
        """Show the whole recording (Home)."""
        if self._extent is None:
            return
        t0, t1, f0, f1 = self._extent
        y0, y1 = (float(v) for v in forward(self.freq_scale, [f0, f1]))
        self.plot.getViewBox().setRange(xRange=(t0, t1), yRange=(y0, y1), padding=0)

    def visible_range(self) -> tuple[float, float, float, float]:
        """Visible time span (s) and frequency span (Hz)."""
        (t0, t1), (y0, y1) = self.plot.getViewBox().viewRange()
        f0, f1 = (float(v) for v in inverse(self.freq_scale, [y0, y1]))
        return float(t0), float(t1), f0, f1

    def set_frequency_range(self, f0: float, f1: float) -> None:
        y0, y1 = (float(v) for v in forward(self.freq_scale, [f0, f1]))
        self.plot.getViewBox().setYRange(y0, y1, padding=0)

    def set_time_range(self, t0: float, t1: float) -> None:
        self.plot.getViewBox().setXRange(t0, t1, padding=0)

    def jump_to(self, t0: float, t1: float, f0: float | None = None,
                f1: float | None = None) -> None:
        """Show ``t0 .. t1`` s (and ``f0 .. f1`` Hz when given) as one change, and emit
        ``viewportChanged`` at once.

        For a single programmatic jump (review's next detection): nothing more is
        coming to gather, so the debounce that settles wheel and drag gestures
        would only delay the image.
        """
        y = None if f0 is None or f1 is None else \
            tuple(float(v) for v in forward(self.freq_scale, [f0, f1]))
        self.plot.getViewBox().setRange(xRange=(t0, t1), yRange=y, padding=0)
        self.emit_viewport_now()

    def emit_viewport_now(self) -> None:
        """Emit ``viewportChanged`` now instead of after the debounce (if one is pending,
        it is dropped: this emission replaces it)."""
        self._viewport_timer.stop()
        self._emit_viewport()

    def plot_size_px(self) -> tuple[int, int]:
        """Width and height of the plot area in device pixels."""
        vb = self.plot.getViewBox()
        ratio = self.devicePixelRatioF()
        return max(1, int(vb.width() * ratio)), max(1, int(vb.height() * ratio))

    def _on_range_changed(self, *_: object) -> None:
        if self.timeline is not None:
            self._show_time_caption()
        self._cover_background()
        self._place_stack_labels()
        self._place_caption()
        self._viewport_timer.start()
        self._cursor_timer.start()  # another point under the pointer, another centre

    def _emit_viewport(self) -> None:
        if self._extent is None:
            return
        t0, t1, f0, f1 = self.visible_range()
        w, h = self.plot_size_px()
        self.viewportChanged.emit(t0, t1, f0, f1, w, h)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        timer = getattr(self, "_viewport_timer", None)  # None during construction
        if timer is not None:
            timer.start()
            self._cursor_timer.start()
        self._place_caption()

    # -- appearance ----------------------------------------------------------
    def levels(self) -> tuple[float, float]:
        lo, hi = self.colorbar.levels()
        return float(lo), float(hi)

    def set_levels(self, low: float, high: float) -> None:
        """Set the dB range shown by the colour map (re-levels, never recomputes)."""
        if not high > low:
            raise ValueError(f"dB range {low}..{high}: the top must be above the bottom")
        self.colorbar.setLevels((low, high))
        self.slice.setXRange(low, high, padding=0.02)
        self._kept_levels[self.quantity] = (float(low), float(high))
        self._cursor_timer.start()

    def set_quantity(self, quantity: str) -> bool:
        """What the image shows: ``"level"`` or ``"difference"`` (after minus before, dB).

        Each quantity keeps its levels: switching back shows the range it had.

        Returns
        -------
        bool
            Whether the quantity has levels already (set, fitted or dragged since
            the recording was opened); when False, :meth:`auto_levels` fits them.
        """
        if quantity not in QUANTITIES:
            raise ValueError(f"quantity {quantity!r} must be one of {', '.join(QUANTITIES)}")
        if quantity != self.quantity:
            self.quantity = quantity
            self._show_calibrated()  # a difference of levels takes no calibration
            self._set_bar_label()
            kept = self._kept_levels.get(quantity)
            if kept is not None:
                self.set_levels(*kept)
                self.levelsChanged.emit(*kept)
        return quantity in self._kept_levels

    def set_colormap(self, name: str) -> None:
        cmap = pg.colormap.get(name)
        if cmap is None:
            raise ValueError(f"colormap {name!r} is unknown")
        self._cmap_name = name
        self._apply_colormap()

    def set_gamma(self, gamma: float) -> None:
        """Gamma of the colour scale: > 1 darkens the low levels, < 1 brightens them.

        Only the lookup table changes; the image is not recomputed.
        """
        if not gamma > 0:
            raise ValueError(f"gamma={gamma} must be > 0")
        self.gamma = float(gamma)
        self._apply_colormap()

    def _apply_colormap(self) -> None:
        cmap = pg.colormap.get(self._cmap_name)
        gamma = self.gamma
        if gamma != 1.0:  # colour at level fraction v is the map's colour at v**gamma
            pos, colors = cmap.getStops()
            cmap = pg.ColorMap(np.asarray(pos) ** (1.0 / gamma), colors)
        self.colorbar.setColorMap(cmap)

    @property
    def colormap_name(self) -> str:
        return self._cmap_name

    def auto_levels(self) -> tuple[float, float]:
        """Fit the levels to the image and return them.

        A level image: the noise floor dark and the strongest lines bright, digital
        silence and NaN left out (:func:`specscope.compute.view.auto_levels`), from
        the whole recording's background when there is one; a difference image: a
        range symmetric about 0 dB.
        """
        src = self._db
        if self.quantity == "level" and self._bg is not None:
            src = self._bg[0]  # the whole recording: the same levels at every zoom
        if src is None or not np.isfinite(src).any():
            return self.levels()
        lo, hi = QUANTITIES[self.quantity](src)
        self.set_levels(lo, hi)
        return lo, hi

    # -- NaN samples ---------------------------------------------------------
    def _draw_missing(self, item: pg.ImageItem,
                      layer: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> None:
        """Cover the NaN cells of ``layer`` lying in stretches of NaN samples."""
        spans = self.overview.missing_spans
        if layer is None or not spans:
            item.clear()
            return
        db, te, fe = layer
        cols = np.zeros(db.shape[1], bool)
        for a, b in spans:
            cols |= (te[:-1] < b) & (te[1:] > a)
        mask = np.isnan(db) & cols[None, :]
        if not mask.any():
            item.clear()
            return
        rgba = np.zeros((*db.shape, 4), np.uint8)
        rgba[mask] = MISSING_COLOR
        item.setImage(rgba, autoLevels=False)
        item.setRect(_rect(te, forward(self.freq_scale, fe)))

    def _update_missing(self) -> None:
        detail = None if self._db is None else (self._db, self._t_edges, self._f_edges)
        self._draw_missing(self._missing, detail)
        self._draw_missing(self._missing_bg, self._bg)

    def missing_mask(self) -> np.ndarray | None:
        """Cells of the detail image drawn as NaN samples (bool, shaped like the image)."""
        data = self._missing.image
        if data is None or self._db is None or data.shape[:2] != self._db.shape:
            return None
        return data[..., 3] > 0

    def missing_note(self) -> str:
        """A warning naming the stretches of NaN samples ("" when the recording has none)."""
        spans = self.overview.missing_spans
        if not spans:
            return ""
        a, b = spans[0]
        first = f"{format_time(a, 1e-3, 'clock')}–{format_time(b, 1e-3, 'clock')}"
        more = f" and {len(spans) - 1} more" if len(spans) > 1 else ""
        return (f"Warning: the recording has NaN samples at {first}{more}, "
                "shown in green")

    # -- readout -----------------------------------------------------------
    def value_at(self, t: float, f: float) -> float:
        """Level in dB at time ``t`` and frequency ``f`` (detail first, then background)."""
        layers = []
        if self._db is not None:
            layers.append((self._db, self._t_edges, self._f_edges))
        if self._bg is not None:
            layers.append(self._bg)
        for db, te, fe in layers:
            j = int(np.searchsorted(te, t, side="right")) - 1
            i = int(np.searchsorted(fe, f, side="right")) - 1
            if 0 <= i < db.shape[0] and 0 <= j < db.shape[1] and np.isfinite(db[i, j]):
                return float(db[i, j])
        return float("nan")

    def _on_mouse_moved(self, pos: QPointF) -> None:
        if self.timeline is not None:  # the file under the pointer on the overview
            ovb = self.overview.getViewBox()
            self.overview.hover_file(float(ovb.mapSceneToView(pos).x())
                                     if ovb.sceneBoundingRect().contains(pos) else None)
        if not self.plot.sceneBoundingRect().contains(pos):
            self._pointer_left()
            return
        self._pointer = QPointF(pos)
        self._cursor_at_scene(pos)

    def mouseMoveEvent(self, ev) -> None:
        self._pointer_moved = self.mapToScene(ev.position().toPoint())
        super().mouseMoveEvent(ev)
        self._rest_timer.start()

    def _pointer_rests(self) -> None:
        moved = self._pointer_moved
        if moved is not None and (self._pointer is None or moved != self._pointer):
            self._on_mouse_moved(moved)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self._pointer_moved = None
        self._rest_timer.stop()
        self._pointer_left()

    def _pointer_left(self) -> None:
        """The pointer went away from the plot: no crosshair, the slice at the centre."""
        self._pointer = None
        for line in (self._vline, self._hline):
            line.setVisible(False)
        self._show_centre_slice()

    def _cursor_at_scene(self, pos: QPointF) -> None:
        """Crosshair, slice, harmonics and ``cursorMoved`` at the scene point ``pos``."""
        p = self.plot.getViewBox().mapSceneToView(pos)
        t, f = float(p.x()), float(inverse(self.freq_scale, p.y()))
        self._vline.setPos(t)
        self._hline.setPos(p.y())
        for line in (self._vline, self._hline):
            line.setVisible(True)
        self._update_slice(t)
        self._update_harmonics(f)
        self._emit_cursor(t, f)

    def _emit_cursor(self, t: float, f: float) -> None:
        """``cursorMoved`` at ``t`` s and ``f`` Hz on the plot's rows (a stacked band's
        row: the channel and its own Hz)."""
        self._last_cursor = (t, f)
        level = self.value_at(t, f)
        if self._stack_split is not None:  # synthetic row coordinate -> channel, Hz
            self.cursor_channel, f = self._stack_split(f)
        self.cursorMoved.emit(t, f, level)

    def _schedule_cursor(self, *_: object) -> None:
        """Compute the readout and the slice again once the change under way is whole."""
        self._cursor_timer.start()

    def refresh_cursor(self) -> None:
        """Compute the readout and the slice again for what is shown now.

        With the pointer over the plot: at the point now under it (a zoom moved the
        data beneath a still pointer); away from it: ``cursorMoved`` at the point the
        readout last described (a new image, other levels, another channel), and the
        slice at the view's centre.  Nothing is said before an image is shown.
        """
        self._cursor_timer.stop()
        if self._db is None and self._bg is None:
            self._slice_curve.setData([], [])
            self._slice_caption(SLICE_AT_CURSOR)
            return
        pointer = self._pointer
        if pointer is not None and self.plot.sceneBoundingRect().contains(pointer):
            self._cursor_at_scene(pointer)
            return
        self._show_centre_slice()
        if self._last_cursor is not None:
            self._emit_cursor(*self._last_cursor)

    # -- what the readout says ---------------------------------------------------
    def hz_per_pixel(self, f: float | None = None) -> float:
        """The frequency step of one screen pixel at ``f`` Hz (the visible band's middle
        by default): what a readout of the cursor can tell apart."""
        vb = self.plot.getViewBox()
        (_, _), (y0, y1) = vb.viewRange()
        dy = abs(y1 - y0) / max(vb.height(), 1.0)
        y = (y0 + y1) / 2 if f is None else float(forward(self.freq_scale, f))
        step = abs(float(inverse(self.freq_scale, y + dy)) - float(inverse(self.freq_scale, y)))
        return step if step > 0 else float("nan")

    def seconds_per_pixel(self) -> float:
        """The time step of one screen pixel."""
        vb = self.plot.getViewBox()
        (x0, x1), _ = vb.viewRange()
        return abs(x1 - x0) / max(vb.width(), 1.0)

    def readout_text(self, t: float, f: float, level: float) -> str:
        """The readout of the cursor at ``t`` s, ``f`` Hz with ``level`` dB (and the Δ to
        the reference), to the precision a screen pixel gives (:func:`.readout.readout`)."""
        stacked = self._stack_split is not None
        return readout(t, f, level, channel=self.cursor_channel if stacked else None,
                       visible=self.visible_range(), timeline=self.timeline,
                       reference=self.reference,
                       hz_per_pixel=self.hz_per_pixel(None if stacked else f),
                       seconds_per_pixel=self.seconds_per_pixel(),
                       unit=self.readout_unit if self.quantity == "level" else "dB")

    def column_at(self, t: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Levels (dB) and frequency edges (Hz) of the column at time ``t``."""
        layers = []
        if self._db is not None:
            layers.append((self._db, self._t_edges, self._f_edges))
        if self._bg is not None:
            layers.append(self._bg)
        for db, te, fe in layers:
            j = int(np.searchsorted(te, t, side="right")) - 1
            if 0 <= j < db.shape[1] and np.isfinite(db[:, j]).any():
                return db[:, j], fe
        return None

    def _show_centre_slice(self) -> None:
        """The slice at the view's centre, captioned with its time."""
        if self._db is None and self._bg is None:
            return
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        tc = (x0 + x1) / 2
        self._update_slice(tc)
        when = format_time(tc, (x1 - x0) / 20)  # to a twentieth of the view
        self._slice_caption(SLICE_AT_CENTRE.format(when))

    def _slice_caption(self, text: str) -> None:
        axis = self.slice.getAxis("bottom")
        if axis.labelText != text:  # a new caption lays the plots out again: only when new
            self.slice.setLabel("bottom", text)

    @property
    def slice_caption(self) -> str:
        """What the spectrum beside the image is captioned with."""
        return self.slice.getAxis("bottom").labelText

    def _update_slice(self, t: float) -> None:
        if self._pointer is not None:
            self._slice_caption(SLICE_AT_CURSOR)
        col = self.column_at(t)
        if col is None:
            self._slice_curve.setData([], [])
            return
        db, fe = col
        centres = forward(self.freq_scale, np.maximum((fe[:-1] + fe[1:]) / 2, 1e-3)
                          if self.freq_scale == "log" else (fe[:-1] + fe[1:]) / 2)
        self._slice_curve.setData(db, centres)
        lo, hi = self.levels()
        self.slice.setXRange(lo, hi, padding=0.02)

    # -- measurement ---------------------------------------------------------
    def set_harmonic_count(self, n: int) -> None:
        """Show ``n`` harmonic cursors (2f, 3f, ...) of the cursor frequency; 0 hides them."""
        for line in self._harmonics:
            self.plot.removeItem(line)
        pen = pg.mkPen((120, 255, 255, 150), width=1, style=pg.QtCore.Qt.PenStyle.DashLine)
        self._harmonics = [pg.InfiniteLine(angle=0, movable=False, pen=pen,
                                           label=f"{k}f", labelOpts={"color": (120, 255, 255),
                                                                     "position": 0.97})
                           for k in range(2, n + 2)]
        for line in self._harmonics:
            line.setVisible(False)
            self.plot.addItem(line, ignoreBounds=True)
        self.harmonic_count = n

    def _update_harmonics(self, f: float) -> None:
        for k, line in enumerate(self._harmonics, start=2):
            line.setPos(float(forward(self.freq_scale, k * f)))
            line.setVisible(f > 0)

    def set_reference(self, t: float, f: float) -> None:
        """Place the measurement reference at (t, f); readouts show deltas from it."""
        level = self.value_at(t, f)
        self.reference = (t, f, level)
        self._ref_marker.setData([t], [float(forward(self.freq_scale, f))])
        self.referenceChanged.emit(t, f, level)

    def clear_reference(self) -> None:
        self.reference = None
        self._ref_marker.setData([], [])
        nan = float("nan")
        self.referenceChanged.emit(nan, nan, nan)

    def _on_mouse_clicked(self, event) -> None:
        if event.button() != pg.QtCore.Qt.MouseButton.LeftButton:
            return
        pos = event.scenePos()
        ovb = self.overview.getViewBox()
        if ovb.sceneBoundingRect().contains(pos) and not event.double():
            self.overview.jump_to(float(ovb.mapSceneToView(pos).x()))
            return
        if not self.plot.sceneBoundingRect().contains(pos):
            return
        if event.double():
            self.clear_reference()
            return
        p = self.plot.getViewBox().mapSceneToView(pos)
        f = float(inverse(self.freq_scale, p.y()))
        if self.click_mode == "notch":
            self.notchRequested.emit(f)
            return
        if self.click_mode == "tune":
            self.tuneRequested.emit(f)
            return
        self.set_reference(float(p.x()), f)

    def set_play_cursor(self, t: float | None) -> None:
        """Draw the play cursor at ``t`` s over the image and the overview; None hides it."""
        if t is None:
            self.play_cursor.setVisible(False)
        else:
            self.play_cursor.setValue(float(t))
            self.play_cursor.setVisible(True)
        self.overview.set_play_cursor(t)

    # -- waveform ------------------------------------------------------------
    def set_waveform(self, t0: float, fs: float, samples: np.ndarray | None) -> None:
        """Show samples starting at ``t0`` (s); None hides the waveform row."""
        if samples is None or samples.size == 0:
            self.waveform.setVisible(False)
            self._wave_curve.setData([], [])
            return
        x = np.real(samples)
        t = t0 + np.arange(x.size) / fs
        sym = "o" if x.size <= 200 else None
        self._wave_curve.setData(t, x, symbol=sym, symbolSize=4)
        self.waveform.setVisible(True)
        peak = float(np.max(np.abs(x))) or 1.0
        self.waveform.setYRange(-peak, peak, padding=0.05)

    # -- keyboard ------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        Qt = pg.QtCore.Qt
        key, mods = event.key(), event.modifiers()
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        dx, dy = x1 - x0, y1 - y0
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        if key == Qt.Key.Key_Left:
            vb.setXRange(x0 - 0.1 * dx, x1 - 0.1 * dx, padding=0)
        elif key == Qt.Key.Key_Right:
            vb.setXRange(x0 + 0.1 * dx, x1 + 0.1 * dx, padding=0)
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down) and shift:
            k = 0.5 if key == Qt.Key.Key_Up else 2.0
            c = (y0 + y1) / 2
            vb.setYRange(c - k * dy / 2, c + k * dy / 2, padding=0)
        elif key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            d = 0.1 * dy if key == Qt.Key.Key_Up else -0.1 * dy
            vb.setYRange(y0 + d, y1 + d, padding=0)
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal, Qt.Key.Key_Minus):
            k = 2.0 if key == Qt.Key.Key_Minus else 0.5
            c = (x0 + x1) / 2
            vb.setXRange(c - k * dx / 2, c + k * dx / 2, padding=0)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def set_zoom_box(self, on: bool) -> None:
        """Drag a rectangle to zoom into it (on), or drag to pan (off)."""
        mode = pg.ViewBox.RectMode if on else pg.ViewBox.PanMode
        self.plot.getViewBox().setMouseMode(mode)

    def _on_bar_levels(self, bar: pg.ColorBarItem) -> None:
        lo, hi = self.levels()
        self.slice.setXRange(lo, hi, padding=0.02)
        self._kept_levels[self.quantity] = (lo, hi)
        self._cursor_timer.start()
        self.levelsChanged.emit(lo, hi)


def _rect(time_edges: np.ndarray, freq_edges: np.ndarray) -> QRectF:
    t0, t1 = float(time_edges[0]), float(time_edges[-1])
    f0, f1 = float(freq_edges[0]), float(freq_edges[-1])
    return QRectF(t0, f0, t1 - t0, f1 - f0)
