"""LevelsPanel: long-term sound levels of a recording or deployment, in four plots.

A form asks for the bands (hybrid millidecade, decidecade, octave), the averaging
interval, the statistic and an optional calibration file (empty: the one its owner gives,
:meth:`LevelsPanel.set_default_calibration`); Compute asks the panel's
owner to run :func:`~specscope.compute.levels.compute_levels`.  The result, made
ready for drawing by :func:`prepare_plots` (off the GUI thread), is shown as

- an LTSA: time x band centre on a log frequency axis, colour the level, a colour bar
  with the unit (the band levels resampled to an even grid of pixels);
- band levels against time for the bands chosen in a list;
- the spectral probability density (level x frequency) with L5, L50 and L95 over it;
- a day x hour-of-day image of one band's median level (absolute times only).

Time axes read as the spectrogram's: seconds on the recording's axis, labelled with the
:class:`~specscope.compute.deployment.timeline.Timeline`'s dates, gaps marked.  Buttons
pick the plot; Export PNG, CSV and NetCDF ask the owner to write them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.levels import BAND_KINDS, Levels
from specscope.compute.levels.diel import DielLevels, diel_levels
from specscope.compute.levels.spectra import STATISTICS

from .frequency_axis import FrequencyAxis
from .gap_marks import GAP_LABELS_UP_TO, GapMarks
from .time_axis import TimeAxis

__all__ = ["BAND_NAMES", "DEFAULT_BANDS_HZ", "PERCENTS", "PLOTS", "DielLevels", "LevelsPanel",
           "LevelsPlots", "diel_levels", "nearest_bands", "prepare_plots"]

#: the plots, by key, with the text of the button that shows each
PLOTS: dict[str, str] = {"ltsa": "LTSA", "bands": "Band levels", "spd": "SPD",
                         "diel": "Day × hour"}
#: how each kind of band is named in the form
BAND_NAMES: dict[str, str] = {"hmd": "Hybrid millidecade", "decidecade": "Decidecade (1/3 oct)",
                              "octave": "Octave"}
#: the band levels drawn against time at first: the bands nearest these centres (Hz)
DEFAULT_BANDS_HZ: tuple[float, ...] = (63.0, 125.0, 1000.0)
#: the percentile levels drawn over the SPD (L_N: exceeded N % of the time)
PERCENTS: tuple[float, ...] = (5.0, 50.0, 95.0)
#: the LTSA image's greatest size in pixels (time columns, frequency rows)
LTSA_COLUMNS, LTSA_ROWS = 2000, 600
#: colours of the band curves and of the percentile curves
CURVE_COLOURS = ((255, 200, 80), (90, 200, 255), (240, 110, 110), (140, 230, 120),
                 (220, 140, 255), (255, 255, 255))
COLOURMAP = "inferno"
#: what an empty calibration field says while the recording has no calibration
NO_CALIBRATION = "none: levels in dB re 1 FS²/Hz"
ERROR_STYLE = "color: #c00000;"


@dataclass
class LevelsPlots:
    """A :class:`~specscope.compute.levels.Levels` made ready to draw (see :func:`prepare_plots`)."""

    levels: Levels
    db: np.ndarray
    x: np.ndarray
    unit: str
    ltsa: np.ndarray
    ltsa_rect: tuple[float, float, float, float]
    ltsa_columns: np.ndarray
    ltsa_rows: np.ndarray  # (n_rows, 2): the bands [a, b) of each row
    range_db: tuple[float, float]
    spd_edges: np.ndarray
    spd_density: np.ndarray
    exceedance: np.ndarray
    log_bands: np.ndarray
    chosen: list[int]
    diel: DielLevels | None = None
    timeline: Any = None
    notes: list[str] = field(default_factory=list)


def nearest_bands(centres: np.ndarray, wanted: tuple[float, ...] = DEFAULT_BANDS_HZ) -> list[int]:
    """The indices of the bands whose centres are nearest each of ``wanted`` (Hz), once each."""
    out: list[int] = []
    c = np.asarray(centres, dtype=np.float64)
    pos = np.flatnonzero(c > 0)
    if pos.size == 0:
        return [0] if c.size else []
    for f in wanted:
        k = int(pos[np.argmin(np.abs(np.log(c[pos]) - np.log(f)))])
        if k not in out:
            out.append(k)
    return out


def _axis_seconds(levels: Levels, timeline: Any) -> np.ndarray:
    """The intervals' starts on the recording's axis (s): a deployment's gaps take none."""
    t = np.asarray(levels.time, dtype=np.float64)
    if not levels.absolute:
        return t.copy()
    if timeline is None:
        return t - t[0] if t.size else t.copy()
    starts = np.array([s.start.timestamp() for s in timeline.stretches])
    t0s = np.array([s.t0 for s in timeline.stretches])
    k = np.clip(np.searchsorted(starts, t + 1e-6, side="right") - 1, 0, len(starts) - 1)
    return t0s[k] + (t - starts[k])


def _row_bands(bands: Any, y0: float, y1: float, n_rows: int) -> np.ndarray:
    """The bands ``[a, b)`` of each of ``n_rows`` rows even in log10 frequency from ``y0``
    to ``y1``: those centred in the row, else the one the row lies in."""
    fe = 10.0 ** (y0 + np.arange(n_rows + 1) * (y1 - y0) / n_rows)
    a = np.searchsorted(bands.centres, fe[:-1], side="left")
    b = np.searchsorted(bands.centres, fe[1:], side="left")
    fmid = np.sqrt(fe[:-1] * fe[1:])
    inside = np.clip(np.searchsorted(bands.edges, fmid, side="right") - 1, 0, len(bands) - 1)
    empty = b <= a
    a = np.where(empty, inside, a)
    b = np.where(empty, inside + 1, b)
    return np.stack([a, b], axis=1)


def prepare_plots(levels: Levels, timeline: Any = None, *,
                  chosen: list[int] | None = None) -> LevelsPlots:
    """Everything the four plots draw, computed once (not on the GUI thread).

    Parameters
    ----------
    levels : Levels
    timeline : Timeline, optional
        The recording's absolute times (the time axes read as the spectrogram's).
    chosen : list of int, optional
        Bands drawn against time (default: those nearest :data:`DEFAULT_BANDS_HZ`).
    """
    db = levels.db()
    x = _axis_seconds(levels, timeline)
    bands = levels.bands
    n_times, n_bands = db.shape
    finite = db[np.isfinite(db)]
    if finite.size:
        # from the quietest levels to the loudest band's L5: a tone that lasts shows
        # bright, a single loud interval does not darken everything else
        lo = float(np.percentile(finite, 1.0))
        with np.errstate(all="ignore"):
            l5 = np.nanpercentile(np.where(np.isfinite(db), db, np.nan), 95.0, axis=0)
        hi = float(np.nanmax(l5)) if np.isfinite(l5).any() else float(finite.max())
    else:
        lo, hi = -120.0, 0.0
    if hi - lo < 1.0:
        lo, hi = lo - 1.0, hi + 1.0
    # the LTSA: columns even on the axis, rows even in log frequency (bands above 0 Hz)
    log_bands = np.flatnonzero(bands.lower > 0)
    interval = float(levels.attrs.get("interval", 60.0))
    if n_times and log_bands.size:
        ends = np.minimum(x + interval, np.append(x[1:], np.inf))
        x0, x1 = float(x[0]), float(ends[-1])
        n_cols = int(min(LTSA_COLUMNS, max(2 * n_times, 2)))
        mids = x0 + (np.arange(n_cols) + 0.5) * (x1 - x0) / n_cols
        cols = np.clip(np.searchsorted(x, mids, side="right") - 1, 0, n_times - 1)
        cols = np.where(mids < ends[cols], cols, -1)
        y0 = float(np.log10(bands.lower[log_bands[0]]))
        y1 = float(np.log10(bands.upper[log_bands[-1]]))
        n_rows = int(min(LTSA_ROWS, max(2 * log_bands.size, 2)))
        rows = _row_bands(bands, y0, y1, n_rows)
        picked = db[np.maximum(cols, 0)]
        image = np.empty((n_cols, n_rows))
        for j, (a, b) in enumerate(rows):  # a row shows its loudest band: tones stay
            image[:, j] = picked[:, a:b].max(axis=1)
        image[cols < 0] = np.nan
        rect = (x0, y0, x1 - x0, y1 - y0)
    else:
        cols = np.zeros(0, dtype=np.int64)
        rows = np.zeros((0, 2), dtype=np.int64)
        image = np.full((1, 1), np.nan)
        rect = (0.0, 0.0, 1.0, 1.0)
    edges, density = levels.spd(1.0)
    exceed = levels.exceedance(PERCENTS) if n_times else np.full((len(PERCENTS), n_bands),
                                                                np.nan)
    picked = [k for k in (chosen or nearest_bands(bands.centres)) if 0 <= k < n_bands]
    tz, tz_name = (timeline.zone, timeline.tz) if timeline is not None else (UTC, "UTC")
    diel = diel_levels(levels, picked[0] if picked else 0, db, tz, tz_name) if n_bands else None
    return LevelsPlots(levels, db, x, levels.unit, image.astype(np.float32), rect, cols, rows,
                       (lo, hi), edges, density, exceed, log_bands, picked, diel, timeline)


def band_text(f: float) -> str:
    """A band centre as people read it: ``63 Hz``, ``1.25 kHz``."""
    return f"{f / 1000:.4g} kHz" if f >= 1000 else f"{f:.4g} Hz"


def _plot_widget(bottom: pg.AxisItem | None = None, left: pg.AxisItem | None = None
                 ) -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem]:
    widget = pg.GraphicsLayoutWidget()
    widget.setBackground("k")
    axes = {k: v for k, v in (("bottom", bottom), ("left", left)) if v is not None}
    plot = widget.addPlot(row=0, col=0, axisItems=axes)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.getViewBox().setDefaultPadding(0.0)
    widget.setMinimumHeight(160)
    return widget, plot


def _colour_bar(widget: pg.GraphicsLayoutWidget, image: pg.ImageItem,
                label: str) -> pg.ColorBarItem:
    bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(COLOURMAP),
                          label=label, interactive=False, width=14)
    bar.setImageItem(image)
    widget.addItem(bar, row=0, col=1)
    return bar


class LevelsPanel(QWidget):
    """The Levels dock's contents: the form, the plot buttons, the four plots, exports.

    Signals
    -------
    computeRequested(dict)
        Compute was clicked: ``bands``, ``interval``, ``statistic``, ``calibration``
        (a path, "" for none).
    cancelRequested()
        Cancel was clicked.
    exportRequested(str)
        ``"png"`` or ``"csv"`` (of the plot shown) or ``"netcdf"`` (the whole product).
    dielBandChanged(int)
        Another band was chosen for the day x hour plot.
    """

    computeRequested = pyqtSignal(dict)
    cancelRequested = pyqtSignal()
    exportRequested = pyqtSignal(str)
    dielBandChanged = pyqtSignal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plots: LevelsPlots | None = None
        self._build_form()
        self._build_plots()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(self._form_row)
        layout.addLayout(self._cal_row)
        layout.addLayout(self._plot_row)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.status)
        self.set_running(False)
        self.set_plots(None)

    # -- building ----------------------------------------------------------------------
    def _build_form(self) -> None:
        self.bands_box = QComboBox()
        for kind in BAND_KINDS:
            self.bands_box.addItem(BAND_NAMES.get(kind, kind), kind)
        self.bands_box.setToolTip("Hybrid millidecade bands (1 Hz below about 435 Hz, "
                                  "millidecades above), decidecade or octave bands")
        self.interval_box = QDoubleSpinBox()
        self.interval_box.setRange(0.1, 86400.0)
        self.interval_box.setDecimals(1)
        self.interval_box.setValue(60.0)
        self.interval_box.setSuffix(" s")
        self.interval_box.setToolTip("Averaging interval: one level per band per interval "
                                     "(60 s: minute levels; 5 s: a Triton-like LTSA)")
        self.statistic_box = QComboBox()
        self.statistic_box.addItems(list(STATISTICS))
        self.statistic_box.setToolTip("How the spectra of an interval's frames combine: "
                                      "their mean (Welch) or their median")
        self._form_row = QHBoxLayout()
        for text, w in (("Bands:", self.bands_box), ("Interval:", self.interval_box),
                        ("Statistic:", self.statistic_box)):
            self._form_row.addWidget(QLabel(text))
            self._form_row.addWidget(w)
        self._form_row.addStretch(1)
        self.calibration_field = QLineEdit()
        self.calibration_field.setPlaceholderText(NO_CALIBRATION)
        self.calibration_field.setToolTip("A calibration file (JSON: sensitivity, gain, "
                                          "full-scale voltage; or a response CSV)")
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse)
        self.compute_button = QPushButton("Compute")
        self.compute_button.setObjectName("levels_compute")
        self.compute_button.setToolTip("Compute the levels of the open recording or "
                                       "deployment (compute thread; Esc cancels)")
        self.compute_button.clicked.connect(self._compute)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("levels_cancel")
        self.cancel_button.clicked.connect(self.cancelRequested)
        self._cal_row = QHBoxLayout()
        self._cal_row.addWidget(QLabel("Calibration:"))
        self._cal_row.addWidget(self.calibration_field, 1)
        self._cal_row.addWidget(self.browse_button)
        self._cal_row.addWidget(self.compute_button)
        self._cal_row.addWidget(self.cancel_button)
        self.status = QLabel("")
        self.status.setWordWrap(False)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _build_plots(self) -> None:
        self.plot_buttons: dict[str, QPushButton] = {}
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self._plot_row = QHBoxLayout()
        for i, (key, text) in enumerate(PLOTS.items()):
            b = QPushButton(text)
            b.setObjectName(f"levels_plot_{key}")
            b.setCheckable(True)
            self._group.addButton(b, i)
            self.plot_buttons[key] = b
            self._plot_row.addWidget(b)
        self._group.idClicked.connect(self.show_plot)
        self._plot_row.addStretch(1)
        self.export_buttons: dict[str, QPushButton] = {}
        for kind, text, tip in (
                ("png", "PNG…", "Write the plot shown as a PNG image"),
                ("csv", "CSV…", "Write the numbers of the plot shown as CSV (its header "
                               "names the unit)"),
                ("netcdf", "NetCDF…", "Write the whole product as NetCDF-4 (CF)")):
            b = QPushButton(text)
            b.setObjectName(f"levels_export_{kind}")
            b.setToolTip(tip)
            b.clicked.connect(lambda _=False, k=kind: self.exportRequested.emit(k))
            self.export_buttons[kind] = b
            self._plot_row.addWidget(b)
        self.stack = QStackedWidget()
        # (a) LTSA
        self.ltsa_axis = TimeAxis("bottom")
        self.ltsa_freq = FrequencyAxis("left")
        self.ltsa_freq.set_scale("log")
        self.ltsa_widget, self.ltsa_plot = _plot_widget(self.ltsa_axis, self.ltsa_freq)
        self.ltsa_image = pg.ImageItem(axisOrder="col-major")
        self.ltsa_plot.addItem(self.ltsa_image)
        self.ltsa_bar = _colour_bar(self.ltsa_widget, self.ltsa_image, "dB")
        self.ltsa_gaps = GapMarks(self.ltsa_plot)
        self.ltsa_plot.getViewBox().sigXRangeChanged.connect(self._ltsa_range)
        # (b) band levels against time, with the list of bands
        self.band_axis = TimeAxis("bottom")
        self.band_widget, self.band_plot = _plot_widget(self.band_axis)
        self.band_plot.showGrid(x=True, y=True, alpha=0.25)
        self.band_legend = self.band_plot.addLegend(offset=(-10, 10))
        self.band_gaps = GapMarks(self.band_plot)
        self.band_plot.getViewBox().sigXRangeChanged.connect(self._band_range)
        self.band_list = QListWidget()
        self.band_list.setToolTip("Tick the bands to draw")
        self.band_list.itemChanged.connect(self._bands_ticked)
        band_page = QSplitter(Qt.Orientation.Horizontal)
        band_page.addWidget(self.band_list)
        band_page.addWidget(self.band_widget)
        band_page.setStretchFactor(1, 1)
        band_page.setSizes([130, 600])
        self.band_curves: dict[int, pg.PlotDataItem] = {}
        # (c) SPD with percentile curves
        self.spd_freq = FrequencyAxis("bottom")
        self.spd_freq.set_scale("log")
        self.spd_widget, self.spd_plot = _plot_widget(self.spd_freq)
        self.spd_image = pg.ImageItem(axisOrder="col-major")
        self.spd_plot.addItem(self.spd_image)
        self.spd_bar = _colour_bar(self.spd_widget, self.spd_image, "density (1/dB)")
        self.spd_legend = self.spd_plot.addLegend(offset=(-10, 10))
        self.spd_curves: list[pg.PlotDataItem] = []
        for p, colour in zip(PERCENTS, CURVE_COLOURS[3:], strict=False):
            self.spd_curves.append(self.spd_plot.plot(
                pen=pg.mkPen(colour, width=2), name=f"L{p:g}"))
        # (d) day x hour of one band
        self.diel_box = QComboBox()
        self.diel_box.setToolTip("The band whose median level per hour is drawn")
        self.diel_box.currentIndexChanged.connect(self._diel_band)
        self.diel_widget, self.diel_plot = _plot_widget()
        self.diel_plot.setLabel("left", "Hour of day")
        self.diel_plot.setLabel("bottom", "Date")
        self.diel_plot.setMouseEnabled(x=False, y=False)
        self.diel_plot.getAxis("left").setTicks([[(h, f"{h:02d}") for h in range(0, 25, 6)]])
        self.diel_image = pg.ImageItem(axisOrder="col-major")
        self.diel_plot.addItem(self.diel_image)
        self.diel_bar = _colour_bar(self.diel_widget, self.diel_image, "median, dB")
        self.diel_note = QLabel("")
        diel_page = QWidget()
        dl = QVBoxLayout(diel_page)
        dl.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(QLabel("Band:"))
        top.addWidget(self.diel_box, 1)
        top.addWidget(self.diel_note, 2)
        dl.addLayout(top)
        dl.addWidget(self.diel_widget, 1)
        for page in (self.ltsa_widget, band_page, self.spd_widget, diel_page):
            self.stack.addWidget(page)
        self.plot_buttons["ltsa"].setChecked(True)

    # -- the form ----------------------------------------------------------------------
    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Calibration file",
                                              self.calibration_field.text(),
                                              "Calibration (*.json *.csv);;All files (*)")
        if path:
            self.calibration_field.setText(path)

    def set_default_calibration(self, text: str | None) -> None:
        """What an empty calibration field stands for: the recording's calibration in a
        few words, or None (levels in dB re 1 FS²/Hz)."""
        self.calibration_field.setPlaceholderText(
            NO_CALIBRATION if text is None else f"the recording's: {text}")

    def form(self) -> dict[str, Any]:
        """The form's values: ``bands``, ``interval``, ``statistic``, ``calibration``."""
        return {"bands": self.bands_box.currentData(),
                "interval": float(self.interval_box.value()),
                "statistic": self.statistic_box.currentText(),
                "calibration": self.calibration_field.text().strip()}

    def _compute(self) -> None:
        self.computeRequested.emit(self.form())

    def set_running(self, running: bool, text: str = "") -> None:
        """Compute greyed and Cancel offered while a computation runs."""
        self.compute_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if text:
            self.show_status(text)

    def show_status(self, text: str, error: bool = False) -> None:
        """One line under the plots (red for an error)."""
        self.status.setStyleSheet(ERROR_STYLE if error else "")
        self.status.setText(text)
        self.status.setToolTip(text)

    # -- the plots ---------------------------------------------------------------------
    def current_plot(self) -> str:
        """The key of the plot shown (see :data:`PLOTS`)."""
        return list(PLOTS)[self.stack.currentIndex()]

    def show_plot(self, which: int | str) -> None:
        """Show plot ``which`` (its index or key)."""
        i = list(PLOTS).index(which) if isinstance(which, str) else int(which)
        self.stack.setCurrentIndex(i)
        self.plot_buttons[list(PLOTS)[i]].setChecked(True)
        self._exports_enabled()

    def plot_widget(self, which: str | None = None) -> QWidget:
        """The widget drawn for plot ``which`` (default: the one shown), as exported."""
        return {"ltsa": self.ltsa_widget, "bands": self.band_widget, "spd": self.spd_widget,
                "diel": self.diel_widget}[which or self.current_plot()]

    def _exports_enabled(self) -> None:
        p = self.plots
        has = p is not None and len(p.levels.time) > 0
        for b in self.export_buttons.values():
            b.setEnabled(has)
        if has and self.current_plot() == "diel" and p.diel is None:
            self.export_buttons["png"].setEnabled(False)
            self.export_buttons["csv"].setEnabled(False)

    def set_plots(self, plots: LevelsPlots | None) -> None:
        """Draw ``plots`` (None: clear everything)."""
        self.plots = plots
        tl = None if plots is None else plots.timeline
        for axis in (self.ltsa_axis, self.band_axis):
            axis.set_timeline(tl)
        self.ltsa_gaps.set_timeline(tl)
        self.band_gaps.set_timeline(tl)
        self._draw_ltsa()
        self._fill_band_list()
        self._draw_bands()
        self._draw_spd()
        self._fill_diel_box()
        self.set_diel(None if plots is None else plots.diel)
        self._exports_enabled()

    def _draw_ltsa(self) -> None:
        p = self.plots
        if p is None or not p.ltsa_columns.size:
            self.ltsa_image.clear()
            return
        lo, hi = p.range_db
        self.ltsa_image.setImage(p.ltsa, levels=(lo, hi), autoLevels=False)
        self.ltsa_image.setRect(*p.ltsa_rect)
        self.ltsa_bar.setLevels((lo, hi))
        self.ltsa_bar.getAxis("left").setLabel(p.unit)
        x0, y0, w, h = p.ltsa_rect
        self.ltsa_plot.setXRange(x0, x0 + w, padding=0)
        self.ltsa_plot.setYRange(y0, y0 + h, padding=0)
        self.ltsa_plot.setLimits(xMin=x0, xMax=x0 + w, yMin=y0, yMax=y0 + h)
        self._ltsa_range()

    @staticmethod
    def _mark_gaps(plot: pg.PlotItem, marks: GapMarks) -> None:
        """The gaps in view marked while few are (many would cover the levels)."""
        t0, t1 = plot.getViewBox().viewRange()[0]
        tl = marks.timeline
        if tl is not None and len(tl.gaps_in(t0, t1)) > GAP_LABELS_UP_TO:
            t0 = t1 = -1.0  # none in view
        marks.show_between(t0, t1)

    def _ltsa_range(self, *_: object) -> None:
        self._mark_gaps(self.ltsa_plot, self.ltsa_gaps)

    def _band_range(self, *_: object) -> None:
        self._mark_gaps(self.band_plot, self.band_gaps)

    def _fill_band_list(self) -> None:
        self.band_list.blockSignals(True)
        self.band_list.clear()
        p = self.plots
        if p is not None:
            for k, f in enumerate(p.levels.bands.centres):
                item = QListWidgetItem(band_text(float(f)))
                item.setData(Qt.ItemDataRole.UserRole, k)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if k in p.chosen
                                   else Qt.CheckState.Unchecked)
                self.band_list.addItem(item)
            if p.chosen:
                self.band_list.scrollToItem(self.band_list.item(p.chosen[0]))
        self.band_list.blockSignals(False)

    def _bands_ticked(self, item: QListWidgetItem) -> None:
        p = self.plots
        if p is None:
            return
        k = int(item.data(Qt.ItemDataRole.UserRole))
        if item.checkState() == Qt.CheckState.Checked and k not in p.chosen:
            p.chosen.append(k)
        elif item.checkState() != Qt.CheckState.Checked and k in p.chosen:
            p.chosen.remove(k)
        self._draw_bands()

    def set_chosen_bands(self, bands: list[int]) -> None:
        """Draw the levels of ``bands`` (indices) against time."""
        for i in range(self.band_list.count()):
            item = self.band_list.item(i)
            want = int(item.data(Qt.ItemDataRole.UserRole)) in bands
            item.setCheckState(Qt.CheckState.Checked if want else Qt.CheckState.Unchecked)

    def band_series(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """The band curves drawn: band index -> (axis s, level dB), gaps' NaNs left out."""
        out = {}
        for k, curve in self.band_curves.items():
            x, y = curve.getData()
            keep = np.isfinite(y)
            out[k] = (np.asarray(x)[keep], np.asarray(y)[keep])
        return out

    def _draw_bands(self) -> None:
        for curve in self.band_curves.values():
            self.band_plot.removeItem(curve)
            self.band_legend.removeItem(curve)
        self.band_curves = {}
        p = self.plots
        if p is None:
            return
        self.band_plot.setLabel("left", f"Level ({p.unit})")
        for n, k in enumerate(p.chosen):
            colour = CURVE_COLOURS[n % len(CURVE_COLOURS)]
            curve = pg.PlotDataItem(p.x, p.db[:, k], pen=pg.mkPen(colour, width=1.5),
                                    connect="finite",
                                    name=band_text(float(p.levels.bands.centres[k])))
            self.band_plot.addItem(curve)
            self.band_curves[k] = curve
        if len(p.x):
            end = float(p.ltsa_rect[0] + p.ltsa_rect[2]) if p.ltsa_columns.size \
                else float(p.x[-1])
            self.band_plot.setXRange(float(p.x[0]), max(end, float(p.x[0]) + 1e-3),
                                     padding=0.01)
        self.band_plot.enableAutoRange(axis="y")
        self._band_range()

    def _draw_spd(self) -> None:
        p = self.plots
        if p is None or not p.log_bands.size or p.spd_density.shape[0] == 0:
            self.spd_image.clear()
            for c in self.spd_curves:
                c.setData([], [])
            return
        bands = p.levels.bands
        lb = p.log_bands
        f = np.log10(bands.centres[lb])
        self.spd_plot.setLabel("left", f"Level ({p.unit})")
        # columns even in log frequency; each shows the band it falls in
        x0, x1 = float(np.log10(bands.lower[lb[0]])), float(np.log10(bands.upper[lb[-1]]))
        n = int(min(LTSA_ROWS, max(2 * lb.size, 2)))
        fmid = 10.0 ** (x0 + (np.arange(n) + 0.5) * (x1 - x0) / n)
        cols = np.clip(np.searchsorted(bands.edges, fmid, side="right") - 1, 0, len(bands) - 1)
        density = p.spd_density[:, cols].T.astype(np.float32)  # (freq, level)
        self.spd_columns = cols
        top = float(np.nanmax(density)) if density.size else 1.0
        self.spd_image.setImage(density, levels=(0.0, max(top, 1e-6)), autoLevels=False)
        e = p.spd_edges
        self.spd_image.setRect(x0, float(e[0]), x1 - x0, float(e[-1] - e[0]))
        self.spd_bar.setLevels((0.0, max(top, 1e-6)))
        for c, row in zip(self.spd_curves, p.exceedance, strict=True):
            c.setData(f, row[lb], connect="finite")
        self.spd_plot.setXRange(x0, x1, padding=0)
        self.spd_plot.setYRange(float(e[0]), float(e[-1]), padding=0)

    def _fill_diel_box(self) -> None:
        self.diel_box.blockSignals(True)
        self.diel_box.clear()
        p = self.plots
        if p is not None:
            for k, f in enumerate(p.levels.bands.centres):
                self.diel_box.addItem(band_text(float(f)), k)
            if p.diel is not None:
                self.diel_box.setCurrentIndex(p.diel.band)
        self.diel_box.setEnabled(p is not None and p.levels.absolute)
        self.diel_box.blockSignals(False)

    def _diel_band(self, index: int) -> None:
        if index >= 0 and self.plots is not None and self.plots.levels.absolute:
            self.dielBandChanged.emit(int(self.diel_box.itemData(index)))

    def set_diel(self, diel: DielLevels | None) -> None:
        """Draw one band's median levels per day and hour (None: none)."""
        p = self.plots
        if p is not None:
            p.diel = diel
        self.diel_plot.setVisible(diel is not None)  # the page keeps its size
        self.diel_bar.setVisible(diel is not None)
        if diel is None:
            self.diel_image.clear()
            self.diel_note.setText("" if p is None else
                                   "The recording states no start time: no days or hours"
                                   if not p.levels.absolute else "")
            self._exports_enabled()
            return
        grid = diel.grid.astype(np.float32)
        finite = grid[np.isfinite(grid)]
        lo, hi = ((float(finite.min()), float(finite.max())) if finite.size
                  else p.range_db if p is not None else (0.0, 1.0))
        if hi - lo < 0.1:
            lo, hi = lo - 0.5, hi + 0.5
        self.diel_image.setImage(grid, levels=(lo, hi), autoLevels=False)
        self.diel_image.setRect(0, 0, len(diel.days), 24)
        self.diel_bar.setLevels((lo, hi))
        if p is not None:
            self.diel_bar.getAxis("left").setLabel(f"median, {p.unit}")
        self.diel_plot.setXRange(0, len(diel.days), padding=0)
        self.diel_plot.setYRange(0, 24, padding=0)
        every = max(1, len(diel.days) // 6)
        self.diel_plot.getAxis("bottom").setTicks(
            [[(k + 0.5, d.strftime("%m-%d")) for k, d in enumerate(diel.days)
              if k % every == 0]])
        self.diel_plot.setLabel("left", f"Hour of day ({diel.tz})")
        self.diel_note.setText(f"{int((diel.counts > 0).sum())} hour(s) over "
                               f"{len(diel.days)} day(s)")
        if self.diel_box.currentIndex() != diel.band:
            self.diel_box.blockSignals(True)
            self.diel_box.setCurrentIndex(diel.band)
            self.diel_box.blockSignals(False)
        self._exports_enabled()
