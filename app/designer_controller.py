"""The filter designer panel and what it does to the view and the settings.

A design applied to the recording is the last processing step
(``ViewSettings.designer``).  While an edge is dragged only the visible span is
re-filtered (a preview engine); a finished change filters the whole recording
as one undoable step.  The view can show the recording after the filter,
before it, or the difference in dB.  Clicking a spectral line in notch mode
measures the line on the recording's samples (a compute job: the visible span,
at least :data:`MIN_LINE_SPAN_S` around its middle) and notches it and the
harmonics that stand above the noise floor.  Designs and analyses of the panel
run on the compute thread too (jobs of kind ``design``, a newer one superseding
an older one); the GUI thread only draws them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtGui import QKeySequence
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.filters import (
    DESIGNS,
    MAX_NOTCH_HARMONICS,
    FilterSpec,
    find_line,
    notch_for_line,
    write_coefficients,
)
from specscope.widgets.filter_designer import FilterDesigner, Shown, round_to_resolution
from specscope.widgets.frequency_axis import forward, inverse

from .shell import Shell
from .view_controller import ViewController
from .worker import JobCallbacks, JobResult, TaskControl

__all__ = ["COEFFICIENT_FILTER", "DesignerController"]

COEFFICIENT_FILTER = "JSON (*.json);;CSV (*.csv);;NumPy (*.npz);;C header (*.h);;Python (*.py)"
#: a line is measured on at least this much of the recording around the visible middle
MIN_LINE_SPAN_S = 10.0
#: and on at most this many samples (the middle of a longer visible span)
MAX_LINE_SAMPLES = 1 << 22


class DesignerController(QObject):
    """The filter designer panel (``panel``) wired to the shell's settings and view.

    Signals
    -------
    panelWanted()
        The panel should be shown (notch mode was turned on).
    """

    panelWanted = pyqtSignal()

    def __init__(self, shell: Shell, views: ViewController, parent: QWidget) -> None:
        super().__init__(parent)
        self.shell, self.views, self.view = shell, views, shell.view
        self.designer = FilterDesigner(48000.0, parent)
        self.panel = QWidget(parent)
        lay = QVBoxLayout(self.panel)
        lay.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.apply_box = QCheckBox("Apply to the recording")
        self.apply_box.setToolTip("Filter the view and the export with this design "
                                  "(the last step of the processing)")
        self.apply_box.toggled.connect(self._apply_toggled)
        self.compare = QComboBox()
        self.compare.addItems(["after", "before", "difference"])
        self.compare.setToolTip("Show the recording after the filter, before it, or the "
                                "difference in dB")
        self.compare.currentTextChanged.connect(self._compare_changed)
        self.notch_mode = QPushButton("Click a line to notch (N)")
        self.notch_mode.setCheckable(True)
        self.notch_mode.setShortcut(QKeySequence("N"))
        self.notch_mode.setToolTip("Then click a spectral line (e.g. mains hum) in the "
                                   "spectrogram: a notch is placed on it")
        self.notch_mode.toggled.connect(self._notch_mode_toggled)
        self.notch_harmonics = QCheckBox("with harmonics")
        self.notch_harmonics.setChecked(True)
        export = QPushButton("Export coefficients…")
        export.clicked.connect(self.export_coefficients_dialog)
        row.addWidget(self.apply_box)
        row.addWidget(QLabel("Show"))
        row.addWidget(self.compare)
        row.addWidget(self.notch_mode)
        row.addWidget(self.notch_harmonics)
        row.addStretch(1)
        row.addWidget(export)
        lay.addLayout(row)
        #: what the last click found ("49.93 Hz, harmonics 1–7 above the floor")
        self.line_info = QLabel("")
        lay.addWidget(self.line_info)
        lay.addWidget(self.designer, 1)
        self._line_request: tuple[float, Any] | None = None
        self.designer.set_runner(self._run_design, self._notch_preparer)
        self.designer.designed.connect(self._update_filter_lines)
        self.designer.specChanged.connect(self._designer_changed)
        self.designer.specCommitted.connect(self._designer_committed)
        self.view.notchRequested.connect(self.notch_at)
        self.view.filterLineMoved.connect(self._filter_line_moved)

    # -- the compute thread ---------------------------------------------------------
    def _run_design(self, job: Any, done: Any, failed: Any) -> None:
        """The designer's runner: design and analyse on the compute thread."""
        def run(control: TaskControl) -> Shown:
            return job()

        # a cancelled design (Cancel, or a newer one) leaves the last design shown
        self.shell.worker.submit("design", run, label="Designing the filter",
                                 callbacks=JobCallbacks(
                                     done=lambda r: done(r.value), failed=failed,
                                     cancelled=lambda: failed("design cancelled")))

    def _span(self) -> tuple[Any, int, int, Any] | None:
        """(recording, start, stop, channels) of the samples a line is measured on."""
        doc = self.shell.document
        if doc is None:
            return None
        rec = doc.recording
        fs = rec.sample_rate
        t0, t1, _, _ = self.view.visible_range()
        a, b = max(0, math.floor(t0 * fs)), min(rec.n_samples, math.ceil(t1 * fs))
        mid = (a + b) // 2 if b > a else rec.n_samples // 2
        half = min(max((b - a) // 2, round(MIN_LINE_SPAN_S * fs / 2)), MAX_LINE_SAMPLES // 2)
        a, b = max(0, mid - half), min(rec.n_samples, mid + half)
        channel = self.shell.settings.channel
        return rec, a, b, (channel if channel >= 0 else None)

    def _notch_preparer(self) -> Any:
        """For the designer's job: notches "up to Nyquist" become those above the floor."""
        span = self._span()
        if span is None:
            return None
        rec, a, b, channels = span

        def prepare(spec: FilterSpec, fs: float) -> tuple[FilterSpec, str]:
            try:
                fit = find_line(rec.read(a, b, channels=channels), fs, spec.frequency,
                                tolerance_hz=max(1.0, 0.02 * spec.frequency))
            except InputError:
                n = MAX_NOTCH_HARMONICS
                note = (f"no line stands above the floor near {spec.frequency:g} Hz: "
                        f"notches for the first {n} harmonics")
            else:
                n = min(fit.top_harmonic, MAX_NOTCH_HARMONICS)
                note = f"{fit.describe()}: notches for harmonics 1–{n}"
            return FilterSpec.from_params({**spec.to_params(), "harmonics": n}), note

        return prepare

    def _hz_per_pixel(self, f: float) -> float:
        """What one pixel of the spectrogram spans in Hz near ``f``."""
        dy = abs(float(self.view.plot.getViewBox().viewPixelSize()[1]))
        scale = self.view.freq_scale
        y = float(forward(scale, max(f, 1e-3)))
        return abs(float(inverse(scale, y + dy)) - float(inverse(scale, y)))

    # -- settings -> panel ---------------------------------------------------------
    def document_opened(self, sample_rate: float) -> None:
        """A new recording: designs are made for its sample rate."""
        self.designer.set_sample_rate(sample_rate)

    def sync(self) -> None:
        """Show the current settings' filter and comparison (after undo, redo, loading)."""
        s = self.shell.settings
        self.apply_box.blockSignals(True)
        self.apply_box.setChecked(bool(s.designer))
        self.apply_box.blockSignals(False)
        self.compare.blockSignals(True)
        self.compare.setCurrentText(s.compare)
        self.compare.blockSignals(False)
        if s.designer and json.loads(s.designer) != self.designer.params():
            self.designer.set_spec(json.loads(s.designer), emit=False)
        self._update_filter_lines()

    def _update_filter_lines(self) -> None:
        edges = []
        if self.shell.settings.designer or self.views.preview_engine is not None:
            spec = self.designer.spec
            for name in ("cutoff", "passband", "stopband", "frequency"):
                v = getattr(spec, name, None)
                if v is None or name not in DESIGNS[spec.design][1]:
                    continue
                for i, f in enumerate(np.atleast_1d(np.asarray(v, dtype=float)).tolist()):
                    edges.append((name, i, f))
        self.view.set_filter_lines(edges)

    # -- panel -> settings ---------------------------------------------------------
    def _apply_toggled(self, on: bool) -> None:
        params = json.dumps(self.designer.params()) if on else ""
        self.shell.change_settings(self.shell.settings.with_changes(designer=params))

    def _compare_changed(self, mode: str) -> None:
        # the view keeps levels per quantity: before/after share them, difference has its own
        self.shell.change_settings(self.shell.settings.with_changes(compare=mode))

    def _designer_changed(self, params: dict) -> None:
        """Every change while dragging: re-filter only the visible span (fast preview)."""
        if not self.shell.settings.designer or self.shell.document is None:
            return
        steps = [*self.shell.settings.base_steps, {"op": "filter", "params": params}]
        try:
            self.views.preview(steps)
        except SpecscopeError as exc:
            self.designer.error.setText(str(exc))
            return
        self._update_filter_lines()

    def _designer_committed(self, params: dict) -> None:
        """A finished change: the whole recording is filtered (background and export)."""
        self.views.preview(None)
        if not self.shell.settings.designer:
            self._update_filter_lines()
            return
        self.shell.change_settings(self.shell.settings.with_changes(
            designer=json.dumps(params)))

    def _filter_line_moved(self, name: str, index: int, f: float, finished: bool) -> None:
        f = round_to_resolution(f, self._hz_per_pixel(f))
        self.designer.move_edge(name, index, f, commit=finished)

    def _notch_mode_toggled(self, on: bool) -> None:
        self.view.click_mode = "notch" if on else "reference"
        if on:
            self.panelWanted.emit()
            self.shell.show_message("Click a spectral line to notch it", 8000)

    def notch_at(self, frequency: float) -> bool:
        """Measure the line clicked at ``frequency`` Hz and notch it (and its harmonics).

        The measurement runs on the compute thread; the notch follows when it
        ends.  False when no recording is open.
        """
        span = self._span()
        if span is None:
            return False
        rec, a, b, channels = span
        fs = rec.sample_rate
        # the click may be anywhere on the line's pixel: search a pixel and a half around
        tolerance = max(2.0, 1.5 * self._hz_per_pixel(frequency))
        harmonics = "all" if self.notch_harmonics.isChecked() else None
        self.notch_mode.setChecked(False)
        self._line_request = (fs, harmonics)
        self.line_info.setText(f"Measuring the line near {frequency:.1f} Hz…")

        def measure(control: TaskControl) -> Any:
            x = rec.read(a, b, channels=channels)
            control.check()
            return find_line(x, fs, frequency, tolerance_hz=tolerance)

        self.shell.worker.submit("line", measure, label="Measuring the line",
                                 callbacks=JobCallbacks(done=self._line_found,
                                                        failed=self._line_failed))
        return True

    def _line_found(self, result: JobResult) -> None:
        if self._line_request is None:
            return
        fs, harmonics = self._line_request
        self._line_request = None
        fit = result.value
        try:
            spec = notch_for_line(fit, fs, harmonics=harmonics)
        except SpecscopeError as exc:
            self._line_failed(str(exc))
            return
        self.line_info.setText(fit.describe())
        if not self.designer.set_spec(spec, emit=False):
            return
        self.shell.change_settings(self.shell.settings.with_changes(
            designer=json.dumps(spec.to_params())))
        what = {"iircomb": "a comb", "notches": f"{spec.harmonics} notches",
                "iirnotch": "one notch"}[spec.design]
        self.shell.show_message(f"{fit.describe()}: {what}", 8000)

    def _line_failed(self, message: str) -> None:
        self._line_request = None
        self.line_info.setText(message)
        self.shell.show_error(message, dialog=False)

    # -- coefficients ------------------------------------------------------------
    def export_coefficients_dialog(self) -> None:
        """Ask for a file and write the design's coefficients to it."""
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(),
                                              "Export filter coefficients", "filter.json",
                                              COEFFICIENT_FILTER)
        if path:
            self.export_coefficients(path)

    def export_coefficients(self, path: str | Path) -> bool:
        """Write the design's coefficients (format from the suffix); False when none."""
        if self.designer.design is None:
            return False
        try:
            write_coefficients(self.designer.design, path)
        except (SpecscopeError, OSError) as exc:
            self.shell.show_error(f"{path}: {exc}")
            return False
        self.shell.show_message(f"Coefficients written to {path}")
        return True
