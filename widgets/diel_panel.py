"""DielPanel: detections counted by date (x) and hour of day (y), the diel plot.

The panel draws a :class:`~specscope.compute.deployment.timeline.DielCounts` (counted
in compute) as an image, one column a date and one row an hour, for all labels or
one; hours that were not recorded are drawn apart from hours with no detection.
Export… asks its owner to write the counts (CSV) and the plot (PNG).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

__all__ = ["ALL_LABELS", "DielPanel"]

#: the label choice that counts every label
ALL_LABELS = "All labels"
#: colour of hours not recorded at all (not a count)
UNRECORDED = (70, 70, 70, 255)


class DielPanel(QWidget):
    """Detections per hour of day and date, with a label choice and Export….

    Signals
    -------
    exportRequested()
        Export… was clicked.
    """

    exportRequested = pyqtSignal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts = None
        self.label_box = QComboBox()
        self.label_box.setToolTip("Count the detections of one label, or of all")
        self.label_box.currentIndexChanged.connect(self._draw)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Write the counts (CSV: date, hour, label, count, "
                                      "seconds recorded) and the plot (PNG)")
        self.export_button.clicked.connect(self.exportRequested)
        self.export_button.setEnabled(False)
        self.status = QLabel("No detections")
        top = QHBoxLayout()
        top.addWidget(QLabel("Label:"))
        top.addWidget(self.label_box, 1)
        top.addWidget(self.export_button)
        self.plot = pg.PlotWidget()
        self.plot.setBackground("k")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setLabel("left", "Hour of day")
        self.plot.setLabel("bottom", "Date")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.plot.getAxis("left").setTicks([[(h, f"{h:02d}") for h in range(0, 25, 6)]])
        self.plot.setMinimumHeight(140)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.status)

    def set_counts(self, counts, note: str = "") -> None:
        """Show ``counts`` (a ``DielCounts``; None: nothing, ``note`` saying why)."""
        self.counts = counts
        current = self.label_box.currentText()
        self.label_box.blockSignals(True)
        self.label_box.clear()
        if counts is not None:
            self.label_box.addItems([ALL_LABELS, *counts.labels])
            if current in counts.labels:
                self.label_box.setCurrentText(current)
        self.label_box.blockSignals(False)
        self.export_button.setEnabled(counts is not None and bool(counts.dates))
        self._draw()
        if counts is None:
            self.status.setText(note or "No detections")

    def label(self) -> str | None:
        """The label counted (None: all)."""
        text = self.label_box.currentText()
        return None if text in ("", ALL_LABELS) else text

    def shown(self) -> np.ndarray | None:
        """The counts drawn: shape (dates, 24)."""
        c = self.counts
        if c is None or not c.dates:
            return None
        return c.total(self.label())

    def _draw(self) -> None:
        grid = self.shown()
        if grid is None:
            self.image.clear()
            return
        c = self.counts
        peak = max(int(grid.max()), 1)
        lut = pg.colormap.get("viridis").getLookupTable(nPts=256, alpha=True)
        rgba = lut[np.clip(grid.T * 255 // peak, 0, 255).astype(int)]  # (24, dates, 4)
        unrecorded = (c.recorded_s.T == 0) & (grid.T == 0)
        rgba[unrecorded] = UNRECORDED
        self.image.setImage(rgba.astype(np.uint8), autoLevels=False)
        self.image.setRect(0, 0, len(c.dates), 24)
        self.plot.setXRange(0, len(c.dates), padding=0)
        self.plot.setYRange(0, 24, padding=0)
        every = max(1, len(c.dates) // 6)
        self.plot.getAxis("bottom").setTicks(
            [[(k + 0.5, d.strftime("%m-%d")) for k, d in enumerate(c.dates) if k % every == 0]])
        which = self.label() or "all labels"
        self.status.setText(f"{int(grid.sum())} detections ({which}) over {len(c.dates)} "
                            f"day(s), peak {int(grid.max())} in an hour; hours in {c.tz}")
