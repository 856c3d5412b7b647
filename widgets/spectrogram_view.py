"""SpectrogramView: a zoomable spectrogram image with a dB colour bar and readout.

The view knows nothing of where images come from: it is given a dB image and
its axes, and it emits signals (cursor position, level changes).  Changing the
levels or the colour map re-levels the existing image through its lookup table;
nothing is recomputed.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QPointF, QRectF, pyqtSignal

#: colour maps offered in menus (all bundled with pyqtgraph)
COLORMAPS = ("inferno", "viridis", "magma", "plasma", "cividis", "turbo", "CET-L1")


class SpectrogramView(pg.GraphicsLayoutWidget):
    """Spectrogram plot: time (s) on x, frequency (Hz) on y, level in dB as colour.

    Signals
    -------
    cursorMoved(float, float, float)
        Time (s), frequency (Hz) and level (dB, NaN outside the image) under the mouse.
    levelsChanged(float, float)
        The dB range, after the colour bar was dragged.
    """

    cursorMoved = pyqtSignal(float, float, float)
    levelsChanged = pyqtSignal(float, float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setBackground("k")
        self.plot: pg.PlotItem = self.addPlot(row=0, col=0)
        self.plot.setLabel("bottom", "Time", units="s")
        self.plot.setLabel("left", "Frequency", units="Hz")
        self.plot.showGrid(x=False, y=False)
        self.plot.setMenuEnabled(True)
        self.plot.getViewBox().setMouseMode(pg.ViewBox.PanMode)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self._cmap_name = COLORMAPS[0]
        self.colorbar = pg.ColorBarItem(values=(-120.0, 0.0), colorMap=pg.colormap.get(self._cmap_name),
                                        label="Level (dB)", interactive=True, rounding=0.5)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.sigLevelsChangeFinished.connect(self._on_bar_levels)
        self._vline = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen((255, 255, 255, 90)))
        self._hline = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen((255, 255, 255, 90)))
        for line in (self._vline, self._hline):
            line.setVisible(False)
            self.plot.addItem(line, ignoreBounds=True)
        self._db: np.ndarray | None = None
        self._t_edges: np.ndarray | None = None
        self._f_edges: np.ndarray | None = None
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)

    # -- data --------------------------------------------------------------
    def set_image(self, db: np.ndarray, time_edges: np.ndarray, freq_edges: np.ndarray,
                  *, reset_view: bool = False) -> None:
        """Show a dB image shaped (n_freq, n_columns), row 0 the lowest frequency."""
        db = np.ascontiguousarray(db, dtype=np.float32)
        if db.ndim != 2 or db.shape != (freq_edges.size - 1, time_edges.size - 1):
            raise ValueError(f"image shape {db.shape} does not match the axes "
                             f"({freq_edges.size - 1}, {time_edges.size - 1})")
        first = self._db is None
        self._db, self._t_edges, self._f_edges = db, np.asarray(time_edges), np.asarray(freq_edges)
        lo, hi = self.levels()
        self.image.setImage(db, autoLevels=False, levels=(lo, hi))
        t0, t1 = float(time_edges[0]), float(time_edges[-1])
        f0, f1 = float(freq_edges[0]), float(freq_edges[-1])
        self.image.setRect(QRectF(t0, f0, t1 - t0, f1 - f0))
        vb = self.plot.getViewBox()
        vb.setLimits(xMin=t0, xMax=t1, yMin=f0, yMax=f1,
                     minXRange=(t1 - t0) / max(db.shape[1], 1) * 4,
                     minYRange=(f1 - f0) / max(db.shape[0], 1) * 4)
        if first or reset_view:
            self.reset_view()

    def clear_image(self) -> None:
        self._db = None
        self.image.clear()

    @property
    def image_data(self) -> np.ndarray | None:
        """The dB image currently shown (None before the first one)."""
        return self._db

    def reset_view(self) -> None:
        """Show the whole image (Home)."""
        if self._t_edges is None or self._f_edges is None:
            return
        self.plot.getViewBox().setRange(
            xRange=(float(self._t_edges[0]), float(self._t_edges[-1])),
            yRange=(float(self._f_edges[0]), float(self._f_edges[-1])), padding=0)

    # -- appearance ----------------------------------------------------------
    def levels(self) -> tuple[float, float]:
        lo, hi = self.colorbar.levels()
        return float(lo), float(hi)

    def set_levels(self, low: float, high: float) -> None:
        """Set the dB range shown by the colour map (re-levels, never recomputes)."""
        if not high > low:
            raise ValueError(f"dB range {low}..{high}: the top must be above the bottom")
        self.colorbar.setLevels((low, high))

    def set_colormap(self, name: str) -> None:
        cmap = pg.colormap.get(name)
        if cmap is None:
            raise ValueError(f"colormap {name!r} is unknown")
        self._cmap_name = name
        self.colorbar.setColorMap(cmap)

    @property
    def colormap_name(self) -> str:
        return self._cmap_name

    def auto_levels(self) -> tuple[float, float]:
        """Levels that show the noise floor dark and the strongest lines bright."""
        if self._db is None:
            return self.levels()
        finite = self._db[np.isfinite(self._db)]
        if finite.size == 0:
            return self.levels()
        hi = float(np.ceil(np.percentile(finite, 99.95) / 5.0) * 5.0 + 5.0)
        lo = float(np.floor(np.percentile(finite, 2.0) / 5.0) * 5.0)
        if hi - lo < 20:
            lo = hi - 20
        self.set_levels(lo, hi)
        return lo, hi

    # -- readout -----------------------------------------------------------
    def value_at(self, t: float, f: float) -> float:
        """Level in dB at time ``t`` and frequency ``f``; NaN outside the image."""
        if self._db is None or self._t_edges is None or self._f_edges is None:
            return float("nan")
        j = int(np.searchsorted(self._t_edges, t, side="right")) - 1
        i = int(np.searchsorted(self._f_edges, f, side="right")) - 1
        if 0 <= i < self._db.shape[0] and 0 <= j < self._db.shape[1]:
            return float(self._db[i, j])
        return float("nan")

    def _on_mouse_moved(self, pos: QPointF) -> None:
        vb = self.plot.getViewBox()
        if not self.plot.sceneBoundingRect().contains(pos):
            for line in (self._vline, self._hline):
                line.setVisible(False)
            return
        p = vb.mapSceneToView(pos)
        t, f = float(p.x()), float(p.y())
        self._vline.setPos(t)
        self._hline.setPos(f)
        for line in (self._vline, self._hline):
            line.setVisible(True)
        self.cursorMoved.emit(t, f, self.value_at(t, f))

    def _on_bar_levels(self, bar: pg.ColorBarItem) -> None:
        lo, hi = self.levels()
        self.levelsChanged.emit(lo, hi)
