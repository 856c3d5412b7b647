"""MeasurementPanel: the numbers of a selected box and what can be done with it.

The panel shows the box's bounds as soon as it is drawn and its measurements
(band power, peak, RMS, SNR, ...) when they arrive from whoever computes them
(:meth:`MeasurementPanel.show_measurement` takes
:meth:`specscope.compute.annotations.Measurement.to_dict`'s fields).  Its
buttons ask to zoom to the box, export its time range, or annotate it.
Frequencies read as everywhere in specscope
(:func:`specscope.compute.freqfmt.format_frequency`: ``2.02 kHz``,
``100.0530 MHz``), to the measurement's bin width.  Times read in seconds from the
recording's first sample, or, on a recording with absolute times
(:meth:`MeasurementPanel.set_timeline`: a deployment), as the date and time the readout
writes, the file and the time into it as the row's tooltip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget
from specscope.compute.deployment.timeline import offset_text
from specscope.compute.freqfmt import format_frequency

from .detect_panel import FittingScroll, narrow

__all__ = ["FIELDS", "TIME_FIELDS", "VALUES_MIN_HEIGHT", "MeasurementPanel", "bin_width",
           "format_value"]

#: least height of the measurements (pixels): below their own height they scroll, while
#: the buttons under them stay in view
VALUES_MIN_HEIGHT = 54

#: the rows shown: (Measurement field, caption, format); None: a frequency
FIELDS = (
    ("start_s", "Start", "{:.4f} s"),
    ("stop_s", "Stop", "{:.4f} s"),
    ("duration_s", "Duration", "{:.4f} s"),
    ("freq_low_hz", "Low", None),
    ("freq_high_hz", "High", None),
    ("bandwidth_hz", "Bandwidth", None),
    ("band_power_db", "Band power", "{:.2f} dB"),
    ("peak_frequency_hz", "Peak frequency", None),
    ("peak_time_s", "Peak time", "{:.4f} s"),
    ("rms_db", "RMS", "{:.2f} dB"),
    ("snr_db", "SNR", "{:.2f} dB"),
)
#: the fields that are points on the recording's axis (dates on a deployment)
TIME_FIELDS = ("start_s", "stop_s", "peak_time_s")


def bin_width(values: Mapping[str, Any]) -> float | None:
    """The frequency step of a measurement (its band over its bins, Hz); None when unknown."""
    band, bins = values.get("bandwidth_hz"), values.get("n_bins")
    if band is None or not bins or not band > 0:
        return None
    return float(band) / float(bins)


def format_value(field: str, value: Any, resolution_hz: float | None = None,
                 timeline: Any = None) -> str:
    """A measurement value as the panel shows it ("—" when not defined).

    Parameters
    ----------
    field : str
        The Measurement field.
    value : object
        Its value (None: not defined).
    resolution_hz : float, optional
        The frequency step that still means something (the bin width,
        :func:`bin_width`): a frequency shows the decimals that tell it; None:
        as exactly as it is known.
    timeline : Timeline, optional
        The recording's absolute times: a point in time (:data:`TIME_FIELDS`) reads as
        its date and time (``2024-05-01 14:13:09.500 UTC``); None: in seconds.

    Returns
    -------
    str
        The text of the row (``"2.02 kHz"``, ``"12.34 dB"``).
    """
    if value is None:
        return "—"
    if timeline is not None and field in TIME_FIELDS:
        return timeline.format(timeline.to_time(float(value)))
    fmt = next(f for name, _, f in FIELDS if name == field)
    if fmt is None:
        return format_frequency(float(value), resolution_hz)
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
        #: the recording's absolute times (a ``Timeline``); None: seconds
        self.timeline: Any = None
        #: the values shown and the frequency step they are shown to
        self._shown: tuple[dict[str, Any], float | None] = ({}, None)
        self.clear()

    def _enable(self, on: bool) -> None:
        for b in (self.zoom_button, self.export_button, self.annotate_button):
            b.setEnabled(on)

    def set_timeline(self, timeline: Any) -> None:
        """Show times as dates and times of ``timeline`` (a
        :class:`~specscope.compute.deployment.timeline.Timeline`); None: seconds from the
        recording's first sample."""
        if timeline is self.timeline:
            return
        self.timeline = timeline
        self._show(*self._shown)

    def _show(self, values: Mapping[str, Any], step: float | None,
              pending: str = "—") -> None:
        """Each row's text (``pending`` for a field not in ``values``); a time's tooltip
        names the file it falls in and the time into it."""
        self._shown = (dict(values), step)
        tl = self.timeline
        for name, label in self.values.items():
            v = values.get(name)
            label.setText(pending if name not in values else
                          format_value(name, v, step, tl))
            at = tl.file_at(float(v)) if (tl is not None and v is not None
                                          and name in TIME_FIELDS) else None
            label.setToolTip("" if at is None else f"{at[0]} {offset_text(at[1])}")

    def clear(self) -> None:
        """No selection."""
        self._show({}, None)
        self.status.setText("Ctrl+drag on the spectrogram (or S, then drag) to select a box")
        self._enable(False)

    def set_selection(self, t0: float, t1: float, f0: float | None, f1: float | None, *,
                      resolution_hz: float | None = None) -> None:
        """Show a new box's bounds; its measurements are on their way.

        ``resolution_hz``: the frequency step the box was drawn to (a pixel); by
        default a thousandth of its band.
        """
        bounds = {"start_s": t0, "stop_s": t1, "duration_s": t1 - t0, "freq_low_hz": f0,
                  "freq_high_hz": f1, "bandwidth_hz": None if f0 is None else f1 - f0}
        if resolution_hz is None and f0 is not None and f1 is not None and f1 > f0:
            resolution_hz = (f1 - f0) / 1000
        self._show(bounds, resolution_hz, "…")
        self.status.setText("Measuring…")
        self._enable(True)

    def show_measurement(self, values: Mapping[str, Any]) -> None:
        """Show a measurement (the fields of ``Measurement.to_dict()``), its frequencies
        to its bin width."""
        self._show({name: values.get(name) for name in self.values}, bin_width(values))
        self.status.setText(f"{values.get('n_frames', '?')} frames × "
                            f"{values.get('n_bins', '?')} bins, channel "
                            f"{values.get('channel', 0)}")

    def show_error(self, message: str) -> None:
        """The measurement failed: say why, keep the bounds."""
        values, step = self._shown
        self._show({**values, **dict.fromkeys(("band_power_db", "peak_frequency_hz",
                                               "peak_time_s", "rms_db", "snr_db"))}, step)
        self.status.setText(f"Not measured: {message}")

    def text(self, field: str) -> str:
        """The text shown for ``field``."""
        return self.values[field].text()
