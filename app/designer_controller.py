"""The filter designer panel and what it does to the view and the settings.

A design applied to the recording is the last processing step
(``ViewSettings.designer``).  While an edge is dragged only the visible span is
re-filtered (a preview engine); a finished change filters the whole recording
as one undoable step.  The view can show the recording after the filter,
before it, or the difference in dB.  Clicking a spectral line in notch mode
places a notch (with harmonics) on it.
"""

from __future__ import annotations

import json
from pathlib import Path

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
from specscope.compute.errors import SpecscopeError
from specscope.compute.filters import DESIGNS, notch_from_click, write_coefficients
from specscope.widgets.filter_designer import FilterDesigner

from .shell import Shell
from .view_controller import ViewController

__all__ = ["COEFFICIENT_FILTER", "DesignerController"]

COEFFICIENT_FILTER = "JSON (*.json);;CSV (*.csv);;NumPy (*.npz);;C header (*.h);;Python (*.py)"


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
        lay.addWidget(self.designer, 1)
        self.designer.specChanged.connect(self._designer_changed)
        self.designer.specCommitted.connect(self._designer_committed)
        self.view.notchRequested.connect(self.notch_at)
        self.view.filterLineMoved.connect(self._filter_line_moved)

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
        self.designer.move_edge(name, index, f, commit=finished)

    def _notch_mode_toggled(self, on: bool) -> None:
        self.view.click_mode = "notch" if on else "reference"
        if on:
            self.panelWanted.emit()
            self.shell.show_message("Click a spectral line to notch it", 8000)

    def notch_at(self, frequency: float) -> bool:
        """Place a notch (with harmonics when asked) on the line at ``frequency`` Hz."""
        if self.shell.document is None:
            return False
        fs = self.shell.document.recording.sample_rate
        try:
            spec = notch_from_click(frequency, fs, harmonics="nyquist"
                                    if self.notch_harmonics.isChecked() else None)
        except SpecscopeError as exc:
            self.shell.show_error(str(exc), dialog=False)
            return False
        self.notch_mode.setChecked(False)
        if not self.designer.set_spec(spec, emit=False):
            return False
        self.shell.change_settings(self.shell.settings.with_changes(
            designer=json.dumps(self.designer.params())))
        self.shell.show_message(f"Notch at {frequency:.1f} Hz ({spec.design})", 8000)
        return True

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
