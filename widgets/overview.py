"""OverviewPlot: the whole recording as a min/max envelope, with the visible span."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QObject, pyqtSignal


class _Signals(QObject):
    regionChanged = pyqtSignal(float, float)


class OverviewPlot(pg.PlotItem):
    """A thin plot of the waveform envelope; the bright region is the visible span.

    ``signals.regionChanged(t0, t1)`` is emitted when the person drags the region.
    Meant to sit under a spectrogram in the same layout column, so the time
    axes line up.
    """

    def __init__(self, left_axis_width: int = 64) -> None:
        super().__init__()
        self.signals = _Signals()
        self.regionChanged = self.signals.regionChanged
        self.setMaximumHeight(80)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.getAxis("left").setWidth(left_axis_width)
        self.getAxis("left").setStyle(showValues=False)
        self.getAxis("left").setTicks([[]])
        self.setLabel("bottom", "", units="s")
        pen = pg.mkPen((120, 180, 255), width=1)
        self._lo = pg.PlotDataItem(pen=pen)
        self._hi = pg.PlotDataItem(pen=pen)
        self._fill = pg.FillBetweenItem(self._lo, self._hi, brush=pg.mkBrush(80, 140, 230, 140))
        for item in (self._lo, self._hi, self._fill):
            self.addItem(item)
        self.region = pg.LinearRegionItem(values=(0, 1), brush=pg.mkBrush(255, 255, 255, 40),
                                          pen=pg.mkPen((255, 255, 255, 200), width=1))
        self.region.setZValue(10)
        self.addItem(self.region)
        self._quiet = False
        self.region.sigRegionChanged.connect(self._on_region)
        self.setToolTip("The whole recording; drag the bright region to move the view")

    def set_envelope(self, edges: np.ndarray, mins: np.ndarray, maxs: np.ndarray) -> None:
        """Bucket edges (s) and the minimum and maximum sample of each bucket."""
        centres = (edges[:-1] + edges[1:]) / 2
        self._lo.setData(centres, mins)
        self._hi.setData(centres, maxs)
        self.setXRange(float(edges[0]), float(edges[-1]), padding=0)
        peak = float(max(np.max(np.abs(mins)), np.max(np.abs(maxs)), 1e-12))
        self.setYRange(-peak, peak, padding=0.05)
        self.region.setBounds((float(edges[0]), float(edges[-1])))

    def clear_envelope(self) -> None:
        self._lo.setData([], [])
        self._hi.setData([], [])

    def set_region(self, t0: float, t1: float) -> None:
        """Show the visible span (does not emit regionChanged)."""
        self._quiet = True
        try:
            self.region.setRegion((t0, t1))
        finally:
            self._quiet = False

    def _on_region(self) -> None:
        if not self._quiet:
            t0, t1 = self.region.getRegion()
            self.regionChanged.emit(float(t0), float(t1))
