"""MeasurementPanel: the numbers of a selected box and what can be done with it.

The panel shows the box's bounds as soon as it is drawn and its measurements
(band power, peak, RMS, SNR, ...) when they arrive from whoever computes them
(:meth:`MeasurementPanel.show_measurement` takes
:meth:`specscope.compute.annotations.Measurement.to_dict`'s fields).  Its
buttons ask to zoom to the box, export its time range, or annotate it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from .detect_panel import FittingScroll, narrow

__all__ = ["FIELDS", "VALUES_MIN_HEIGHT", "MeasurementPanel"]

#: least height of the measurements (pixels): below their own height they scroll, while
#: the buttons under them stay in view
VALUES_MIN_HEIGHT = 54

#: the rows shown: (Measurement field, caption, format)
FIELDS = (
    ("start_s", "Start", "{:.4f} s"),
    ("stop_s", "Stop", "{:.4f} s"),
    ("duration_s", "Duration", "{:.4f} s"),
    ("freq_low_hz", "Low", "{:.1f} Hz"),
    ("freq_high_hz", "High", "{:.1f} Hz"),
    ("bandwidth_hz", "Bandwidth", "{:.1f} Hz"),
    ("band_power_db", "Band power", "{:.2f} dB"),
    ("peak_frequency_hz", "Peak frequency", "{:.1f} Hz"),
    ("peak_time_s", "Peak time", "{:.4f} s"),
    ("rms_db", "RMS", "{:.2f} dB"),
    ("snr_db", "SNR", "{:.2f} dB"),
)


def format_value(field: str, value: Any) -> str:
    """A measurement value as the panel shows it ("—" when not defined)."""
    if value is None:
        return "—"
    fmt = next(f for name, _, f in FIELDS if name == field)
    return fmt.format(value)


class MeasurementPanel(QWidget):
    """Bounds and measurements of the selection, with Zoom, Export and Annotate.

    Parameters
    ----------
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    zoomRequested(), exportRequested(), annotateRequested()
        The buttons.
    """

    zoomRequested = pyqtSignal()
    exportRequested = pyqtSignal()
    annotateRequested = pyqtSignal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = QLabel()
        self.status.setWordWrap(True)
        values = QWidget()
        form = QFormLayout(values)
        form.setContentsMargins(0, 0, 0, 0)
        #: the value label of each field, by Measurement field name
        self.values: dict[str, QLabel] = {}
        for name, caption, _ in FIELDS:
            label = QLabel("—")
            label.setObjectName(name)
            self.values[name] = label
            form.addRow(caption, label)
        self.zoom_button = QPushButton("Zoom")
        self.zoom_button.setToolTip("Zoom to the selection (Shift+Z)")
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Export the selection's time range (File › Export range…)")
        self.annotate_button = QPushButton("Annotate")
        self.annotate_button.setToolTip("Make the selection an annotation (A or Enter)")
        buttons = QHBoxLayout()
        for b in (self.zoom_button, self.export_button, self.annotate_button):
            narrow(b)
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        # the values scroll in what the dock leaves; the buttons stay below them, in view
        self.values_scroll = FittingScroll(values, VALUES_MIN_HEIGHT)
        layout.addWidget(self.values_scroll)
        layout.addLayout(buttons)
        layout.addStretch(1)
        self.zoom_button.clicked.connect(self.zoomRequested)
        self.export_button.clicked.connect(self.exportRequested)
        self.annotate_button.clicked.connect(self.annotateRequested)
        self.clear()

    def _enable(self, on: bool) -> None:
        for b in (self.zoom_button, self.export_button, self.annotate_button):
            b.setEnabled(on)

    def clear(self) -> None:
        """No selection."""
        for label in self.values.values():
            label.setText("—")
        self.status.setText("Ctrl+drag on the spectrogram (or S, then drag) to select a box")
        self._enable(False)

    def set_selection(self, t0: float, t1: float, f0: float | None, f1: float | None) -> None:
        """Show a new box's bounds; its measurements are on their way."""
        bounds = {"start_s": t0, "stop_s": t1, "duration_s": t1 - t0, "freq_low_hz": f0,
                  "freq_high_hz": f1, "bandwidth_hz": None if f0 is None else f1 - f0}
        for name, label in self.values.items():
            label.setText(format_value(name, bounds[name]) if name in bounds else "…")
        self.status.setText("Measuring…")
        self._enable(True)

    def show_measurement(self, values: Mapping[str, Any]) -> None:
        """Show a measurement (the fields of ``Measurement.to_dict()``)."""
        for name, label in self.values.items():
            label.setText(format_value(name, values.get(name)))
        self.status.setText(f"{values.get('n_frames', '?')} frames × "
                            f"{values.get('n_bins', '?')} bins, channel "
                            f"{values.get('channel', 0)}")

    def show_error(self, message: str) -> None:
        """The measurement failed: say why, keep the bounds."""
        for name in ("band_power_db", "peak_frequency_hz", "peak_time_s", "rms_db", "snr_db"):
            self.values[name].setText("—")
        self.status.setText(f"Not measured: {message}")

    def text(self, field: str) -> str:
        """The text shown for ``field``."""
        return self.values[field].text()
