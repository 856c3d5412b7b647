"""The filter designer panel and what it does to the view and the settings.

The designer edits a chain of filters (``ViewSettings.chain``: each filter's
params and whether it is enabled, in order), listed in a
:class:`~specscope.widgets.filter_chain.FilterChain` above the form; the
selected one is edited in the form and plots, whose magnitude plot also draws
the whole chain's response.  Applied to the recording, the enabled filters are
the last processing steps, in order.  Every change of the chain (an edit, a
filter added, removed, moved, enabled or disabled) is one undoable step named
after what it did ("add notch 49.93 Hz").  While an edge is dragged only the
visible span is re-filtered (a preview engine); a finished change filters the
whole recording.  The view can show the recording after the filter,
before it, or the difference in dB.  Clicking a spectral line in notch mode
measures the line on the recording's samples (a compute job: the visible span,
at least :data:`MIN_LINE_SPAN_S` around its middle: the most prominent line family
within :data:`CLICK_PIXELS` of the click, the others there named) and adds a notch
for it and the harmonics that stand above the noise floor to the chain.  Designs and
analyses of the panel run on the compute thread too (jobs of kind ``design``, a newer
one superseding an older one); the GUI thread only draws them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtGui import QKeySequence, QShortcut
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
from specscope.app.qt.shell import Shell
from specscope.app.qt.view_controller import ViewController
from specscope.app.qt.worker import JobCallbacks, JobResult, TaskControl
from specscope.app.session import ViewSettings, filter_label
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.filters import (
    DESIGNS,
    MAX_NOTCH_HARMONICS,
    FilterSpec,
    Shown,
    find_line,
    notch_for_line,
    starter,
    write_coefficients,
)
from specscope.compute.freqfmt import format_frequency
from specscope.widgets.filter_chain import FilterChain
from specscope.widgets.filter_designer import FilterDesigner, round_to_resolution
from specscope.widgets.frequency_axis import forward, inverse

__all__ = ["COEFFICIENT_FILTER", "DesignerController"]

COEFFICIENT_FILTER = "JSON (*.json);;CSV (*.csv);;NumPy (*.npz);;C header (*.h);;Python (*.py)"
#: a line is measured on at least this much of the recording around the visible middle
MIN_LINE_SPAN_S = 10.0
#: and on at most this many samples (the middle of a longer visible span)
MAX_LINE_SAMPLES = 1 << 22
#: a hand's click lands this many screen pixels (each side) from the line it means
CLICK_PIXELS = 6


class DesignerController(QObject):
    """The filter designer panel (``panel``) wired to the shell's settings and view.

    Parameters
    ----------
    shell : Shell
        The window: settings, document, worker, view, messages and undo stack.
    views : ViewController
        The view controller; its preview re-filters the visible span while an edge
        is dragged.
    parent : QWidget
        The parent of the controller and of its panel's widgets.

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
                                  "(the last steps of the processing, in order)")
        self.apply_box.toggled.connect(self._apply_toggled)
        self.compare = QComboBox()
        self.compare.addItems(["after", "before", "difference"])
        self.compare.setToolTip("Show the recording after the filter, before it, or the "
                                "difference in dB")
        self.compare.currentTextChanged.connect(self._compare_changed)
        self.notch_mode = QPushButton("Click a line to notch (N)")
        self.notch_mode.setCheckable(True)
        # N toggles the mode at once (a button's own shortcut animates a click and toggles
        # 100 ms later, so a click on the line right after N would be a reference click);
        # a shortcut of the button: active while the designer is shown
        self.notch_key = QShortcut(QKeySequence("N"), self.notch_mode)
        self.notch_key.activated.connect(self.notch_mode.toggle)
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
        #: the chain's filters; the selected one is in the designer's form
        self.chain = FilterChain()
        self.designer.top_host.addWidget(self.chain)
        self.chain.currentChanged.connect(self._select)
        self.chain.enabledChanged.connect(self._enable)
        self.chain.moveRequested.connect(self._move)
        self.chain.removeRequested.connect(self._remove)
        self.chain.addRequested.connect(self.add_filter)
        self._line_request: tuple[float, Any, float] | None = None
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
                                     done=lambda r: done(r.value),
                                     failed=lambda e: failed(e.message),
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
                note = (f"no line stands above the floor near {format_frequency(spec.frequency)}: "
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

    def _hz_within(self, f: float, pixels: float) -> float:
        """How far (Hz) from ``f`` the spectrogram's rows ``pixels`` above and below reach,
        the farther of the two (on a log or mel axis they differ)."""
        dy = pixels * abs(float(self.view.plot.getViewBox().viewPixelSize()[1]))
        scale = self.view.freq_scale
        y = float(forward(scale, max(f, 1e-3)))
        return max(abs(float(inverse(scale, y + s * dy)) - f) for s in (1, -1))

    # -- settings -> panel ---------------------------------------------------------
    def document_opened(self, sample_rate: float) -> None:
        """A new recording: designs are made for its sample rate."""
        self.designer.set_sample_rate(sample_rate)

    def sync(self) -> None:
        """Show the current settings' chain, its selected filter and the comparison (after
        undo, redo, loading)."""
        s = self.shell.settings
        self.apply_box.blockSignals(True)
        self.apply_box.setChecked(s.chain_on)
        self.apply_box.blockSignals(False)
        self.compare.blockSignals(True)
        self.compare.setCurrentText(s.compare)
        self.compare.blockSignals(False)
        filters = s.filters
        self.chain.set_filters([(filter_label(f["params"]), f["enabled"]) for f in filters],
                               s.chain_index)
        if filters:
            params = filters[self._index(s)]["params"]
            if params != self.designer.params():
                self.designer.set_spec(params, emit=False)
        self._show_chain()
        self._update_filter_lines()

    @staticmethod
    def _index(s: ViewSettings) -> int:
        return min(max(s.chain_index, 0), max(len(s.filters) - 1, 0))

    def _show_chain(self) -> None:
        """The designer draws the whole chain's response besides the selected filter's."""
        s = self.shell.settings
        filters, i = s.filters, self._index(s)
        try:
            others = [FilterSpec.from_params(f["params"]) for k, f in enumerate(filters)
                      if k != i and f["enabled"]]
        except SpecscopeError:
            others = []
        self.designer.set_chain(others, not filters or filters[i]["enabled"])

    def _update_filter_lines(self) -> None:
        edges = []
        if self.shell.settings.chain_on or self.views.preview_engine is not None:
            spec = self.designer.spec
            for name in ("cutoff", "passband", "stopband", "frequency"):
                v = getattr(spec, name, None)
                if v is None or name not in DESIGNS[spec.design][1]:
                    continue
                for i, f in enumerate(np.atleast_1d(np.asarray(v, dtype=float)).tolist()):
                    edges.append((name, i, f))
        self.view.set_filter_lines(edges)

    # -- panel -> settings ---------------------------------------------------------
    def _with_designed(self) -> tuple[list[dict], int]:
        """The chain with the designer's filter as its selected one (the first when empty)."""
        s = self.shell.settings
        filters, i = s.filters, self._index(s)
        params = self.designer.params()
        if not filters:
            return [{"params": params, "enabled": True}], 0
        filters[i] = {**filters[i], "params": params}
        return filters, i

    def _change_chain(self, filters: list[dict], index: int, **kw: Any) -> None:
        """One undoable change of the chain (named after what it did)."""
        self.shell.change_settings(self.shell.settings.with_changes(
            chain=json.dumps(filters), chain_index=index, **kw))

    def _apply_toggled(self, on: bool) -> None:
        if not on:
            self.shell.change_settings(self.shell.settings.with_changes(chain_on=False))
            return
        filters, i = self._with_designed()
        self._change_chain(filters, i, chain_on=True)

    def _compare_changed(self, mode: str) -> None:
        # the view keeps levels per quantity: before/after share them, difference has its own
        self.shell.change_settings(self.shell.settings.with_changes(compare=mode))

    def _designer_changed(self, params: dict) -> None:
        """Every change while dragging: re-filter only the visible span (fast preview)."""
        s = self.shell.settings
        if not s.chain_on or self.shell.document is None:
            return
        filters, i = self._with_designed()
        filters[i] = {**filters[i], "params": params}
        steps = s.with_changes(chain=json.dumps(filters)).steps
        try:
            self.views.preview(steps)
        except SpecscopeError as exc:
            self.designer.error.setText(str(exc))
            return
        self._update_filter_lines()

    def _designer_committed(self, params: dict) -> None:
        """A finished change of the selected filter: one undoable step (the whole recording
        is filtered when the chain is applied)."""
        self.views.preview(None)
        filters, i = self._with_designed()
        filters[i] = {**filters[i], "params": params}
        self._change_chain(filters, i)
        self._update_filter_lines()

    # -- the chain -------------------------------------------------------------------
    def _select(self, index: int) -> None:
        """Show another filter of the chain in the designer (not an undoable step)."""
        s = self.shell.settings.with_changes(chain_index=index)
        # choosing what to edit changes no processing: kept without a recomputation
        self.shell.settings = s
        if self.shell.document is not None:
            self.shell.document.settings = s
        self.designer.set_spec(s.filters[index]["params"], emit=False)
        self._show_chain()
        self._update_filter_lines()

    def _enable(self, index: int, on: bool) -> None:
        filters = self.shell.settings.filters
        filters[index] = {**filters[index], "enabled": bool(on)}
        self._change_chain(filters, index)

    def _move(self, index: int, to: int) -> None:
        filters = self.shell.settings.filters
        filters[index], filters[to] = filters[to], filters[index]
        self._change_chain(filters, to)

    def _remove(self, index: int) -> None:
        filters = self.shell.settings.filters
        del filters[index]
        self._change_chain(filters, min(index, max(len(filters) - 1, 0)))

    def add_filter(self, kind: str) -> None:
        """Add a filter of ``kind`` (one of ``filter_chain.KINDS``) after the others."""
        self.add_spec(starter(kind, self.designer.fs))

    def add_spec(self, spec: FilterSpec, **kw: Any) -> None:
        """Add ``spec`` after the chain's filters and select it (one undoable step)."""
        filters = [*self.shell.settings.filters, {"params": spec.to_params(), "enabled": True}]
        self.designer.set_spec(spec, emit=False)
        self._change_chain(filters, len(filters) - 1, **kw)

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
        # an IQ recording is seen around its centre frequency and filtered at offsets from
        # it: the line is measured and notched there (a real notch takes its mirror below
        # the centre with it)
        centre = float(rec.center_frequency or 0.0) if rec.is_complex else 0.0
        # a hand's click lands a few pixels off the line it means, and each pixel shows a
        # frequency bin: the search covers CLICK_PIXELS each side and the bins under them
        # (at least a pixel or bin and a half, and the CLI's window), and takes the most
        # prominent line family there
        resolution = self._hz_per_pixel(frequency)
        uncertainty = self._hz_within(frequency, CLICK_PIXELS)
        if self.shell.settings.representation == "stft":
            bin_hz = fs / self.shell.settings.stft.nfft
            resolution = max(resolution, bin_hz)
            uncertainty += bin_hz / 2
        harmonics = "all" if self.notch_harmonics.isChecked() else None
        self.notch_mode.setChecked(False)
        near = format_frequency(frequency, resolution)
        if rec.is_complex and frequency <= centre:
            self._line_failed(f"the line near {near} is not above the centre frequency "
                              f"{format_frequency(centre)}: a notch is measured above it "
                              "and takes its mirror below with it")
            return True
        self._line_request = (fs, harmonics, centre)
        self.line_info.setText(f"Measuring the line near {near}…")

        def measure(control: TaskControl) -> Any:
            x = rec.read(a, b, channels=channels)
            control.check()
            return find_line(x, fs, frequency - centre, view_resolution_hz=resolution,
                             uncertainty_hz=uncertainty)

        self.shell.worker.submit("line", measure, label="Measuring the line",
                                 callbacks=JobCallbacks(done=self._line_found,
                                                        failed=lambda e: self._line_failed(
                                                            e.message)))
        return True

    def _line_found(self, result: JobResult) -> None:
        if self._line_request is None:
            return
        fs, harmonics, centre = self._line_request
        self._line_request = None
        fit = result.value
        try:
            spec = notch_for_line(fit, fs, harmonics=harmonics)
        except SpecscopeError as exc:
            self._line_failed(str(exc))
            return
        line = fit.describe()
        if centre:
            line += f" (offsets from the centre, {format_frequency(centre)})"
        self.line_info.setText(line)
        self.add_spec(spec, chain_on=True)  # added, and heard: the chain filters the view
        what = {"iircomb": "A comb", "notches": f"{spec.harmonics} notches",
                "iirnotch": "One notch"}[spec.design]
        # what was notched first: the lines also near the click come after it
        self.shell.show_message(f"{what} for {line}", 8000)

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
