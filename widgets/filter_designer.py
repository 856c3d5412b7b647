"""FilterDesigner: design a filter by editing or dragging, see every analysis at once.

Every change of the form or of a dragged band edge or limit redesigns and redraws; with a
runner (:meth:`FilterDesigner.set_runner`) designs run off the GUI thread.  The rules are
the core's (:mod:`specscope.compute.filters.defaults`); this module only presents them.

See docs/explanation/rooms/widgets.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QTimer, pyqtSignal
from PyQt6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from specscope.compute import filters
from specscope.compute.errors import SpecscopeError
from specscope.compute.filters.defaults import (
    DEFAULT_SPEC,
    EDGE_FIELDS,
    METHODS,
    beyond_nyquist,
    convert,
    form_values,
    in_force,
    spec_from_form,
)
from specscope.compute.filters.preview import Prepare, Shown, compute_shown

from .param_form import ParamForm

#: colour of the draggable line of each band-edge field (``EDGE_FIELDS``)
_EDGE_PENS = {"cutoff": (255, 200, 60), "passband": (90, 220, 120), "stopband": (240, 90, 90),
              "frequency": (255, 200, 60)}
#: a typed value is taken after this long without a keystroke (or on Enter / leaving)
IDLE_MS = 300

#: ``runner(job, done, failed)``: run ``job()`` elsewhere, then call ``done(result)`` or
#: ``failed(message)`` on the GUI thread
Runner = Callable[[Callable[[], Any], Callable[[Any], None], Callable[[str], None]], None]
#: called on the GUI thread for each design: the ``Prepare`` of its job, or None
Preparer = Callable[[], Prepare | None]


def round_to_resolution(value: float, resolution: float) -> float:
    """``value`` rounded to the decade of ``resolution`` (what one pixel spans).

    A frequency dragged on a plot where a pixel is 30 Hz wide is kept as
    ``4980.0``, not ``4983.661319662642``.

    Parameters
    ----------
    value : float
        The dragged value.
    resolution : float
        What one pixel (or step) of the view spans, in the value's unit.
    """
    if not (math.isfinite(value) and math.isfinite(resolution) and resolution > 0):
        return value
    decimals = -math.floor(math.log10(resolution))
    return float(round(value, decimals))


class FilterForm(QWidget):
    """The form of one filter: its method and the fields of ``filters.field_schema(method)``.

    Typed values are taken on Enter, on leaving the field or after
    :data:`IDLE_MS` without a keystroke, never per keystroke; another method
    converts the filter, keeping what carries over.  The designer and the
    Processing panel's filter steps both edit filters with it.

    Signals
    -------
    edited(object)
        The person made a new valid :class:`~specscope.compute.filters.FilterSpec`.
    invalid(str)
        What the person typed or chose cannot be a filter (the message names the field).
    """

    edited = pyqtSignal(object)
    invalid = pyqtSignal(str)

    def __init__(self, spec: filters.FilterSpec, fs: float = 48000.0,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fs = float(fs)
        #: the filter the fields show (or were last taken as)
        self.spec = spec
        self._form: ParamForm | None = None
        self._design = spec.design
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.setInterval(IDLE_MS)
        self._idle.timeout.connect(self._form_edited)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        top = QFormLayout()
        self.method = QComboBox()
        for key, label in METHODS.items():
            self.method.addItem(label, key)
        self.method.currentIndexChanged.connect(self._method_changed)
        top.addRow("Method", self.method)
        lay.addLayout(top)
        self.host = QVBoxLayout()
        lay.addLayout(self.host)
        self.set_spec(spec)

    def set_spec(self, spec: filters.FilterSpec) -> None:
        """Show ``spec`` in the fields (no signal)."""
        self._idle.stop()
        self._select_method(spec.design)
        if self._form is None or spec.design != self._design:
            self._build_form(spec)
        else:
            self._form.set_values(form_values(spec))
        self.spec = spec

    def pending(self) -> bool:
        """Whether a typed value waits for the pause that takes it."""
        return self._idle.isActive()

    def field(self, name: str) -> QWidget | None:
        """The field for parameter ``name`` (None when the method has none)."""
        lay = self._form.layout() if self._form is not None else None
        if not isinstance(lay, QFormLayout):
            return None
        for row in range(lay.rowCount()):
            label = lay.itemAt(row, QFormLayout.ItemRole.LabelRole)
            item = lay.itemAt(row, QFormLayout.ItemRole.FieldRole)
            if label is not None and item is not None and isinstance(label.widget(), QLabel) \
                    and label.widget().text().split(" ")[0] == name:
                return item.widget()
        return None

    def _select_method(self, design: str) -> None:
        self.method.blockSignals(True)
        self.method.setCurrentIndex(max(0, self.method.findData(design)))
        self.method.blockSignals(False)

    def _build_form(self, spec: filters.FilterSpec) -> None:
        if self._form is not None:
            self._form.setParent(None)
            self._form.deleteLater()
        self._idle.stop()
        self._form = ParamForm(filters.field_schema(spec.design), form_values(spec))
        self._design = spec.design
        # typed values: taken on Enter, on leaving the field or after a pause
        self._form.changed.connect(self._idle.start)
        for box in self._form.findChildren(QAbstractSpinBox):
            box.setKeyboardTracking(False)
            box.editingFinished.connect(self._flush_form)
            for line in box.findChildren(QLineEdit):
                line.textEdited.connect(self._idle.start)
        for line in self._form.findChildren(QLineEdit):
            if not isinstance(line.parent(), (QAbstractSpinBox, QComboBox)):
                line.editingFinished.connect(self._flush_form)
        self.host.addWidget(self._form)

    def _flush_form(self) -> None:
        if self._idle.isActive():
            self._idle.stop()
            self._form_edited()

    def _method_changed(self) -> None:
        method = self.method.currentData()
        try:
            spec = convert(self.spec, method, self.fs)
        except SpecscopeError as exc:
            self._select_method(self._design)
            self.invalid.emit(str(exc))
            return
        self._build_form(spec)
        self.spec = spec
        self.edited.emit(spec)

    def _form_edited(self) -> None:
        if self._form is None:
            return
        # a spin box's typed text becomes its value only when interpreted
        for box in self._form.findChildren(QAbstractSpinBox):
            box.blockSignals(True)
            box.interpretText()
            box.blockSignals(False)
        try:
            values = self._form.values()
            spec = spec_from_form(self._design, values)
        except SpecscopeError as exc:
            # an edge past Nyquist is the problem to name, not what it then contradicts
            self.invalid.emit(beyond_nyquist(values, self.fs) or str(exc))
            return
        if spec == self.spec:
            return
        self.spec = spec
        self.edited.emit(spec)


class _Line(QLabel):
    """A wrapped line of text that takes no room while it says nothing."""

    def __init__(self) -> None:
        super().__init__("")
        self.setWordWrap(True)
        self.setVisible(False)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))


class FilterDesigner(QWidget):
    """The designer panel: a method, its form and the analysis plots of the design.

    Parameters
    ----------
    fs : float, optional
        The sample rate designed for (Hz).
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    specChanged(dict)
        A valid new specification (pipeline filter-step params) while a change goes
        on (a drag): preview it.
    specCommitted(dict)
        The change is finished (a drag released, a field edited): apply it for good
        (no ``specChanged`` comes with it: the commit replaces any preview).
    designed()
        A new design is shown (``spec``, ``design``, ``analysis`` are its).
    """

    specChanged = pyqtSignal(dict)
    specCommitted = pyqtSignal(dict)
    designed = pyqtSignal()

    def __init__(self, fs: float = 48000.0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fs = float(fs)
        self.spec = DEFAULT_SPEC
        self.design: filters.Design | None = None
        self.analysis: filters.Analysis | None = None
        self.verdict: filters.Verdict | None = None
        #: the newest spec asked for (``spec`` once its design arrives)
        self.wanted = self.spec
        self._runner: Runner | None = None
        self._preparer: Preparer | None = None
        self._request = 0          # id of the newest design request
        self._answer = 0           # id of the newest request answered (shown or refused)
        #: the chain's other enabled filters, whose response multiplies this one's
        self._others: tuple[filters.FilterSpec, ...] = ()
        self._in_chain = True      # whether this filter counts in the combined response
        self._edges: list[tuple[str, int, pg.InfiniteLine]] = []
        self._limits: list[tuple[str, pg.InfiniteLine]] = []
        self._shown: Shown | None = None

        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        #: the form of the filter shown (method and fields)
        self.form = FilterForm(self.spec, self.fs)
        self.method = self.form.method
        self.form.edited.connect(self._form_edited)
        self.form.invalid.connect(self.error_text)
        #: where the caller may place a widget above the form (the app: the chain)
        self.top_host = QVBoxLayout()
        left.addLayout(self.top_host)
        left.addWidget(self.form)
        self.error = _Line()
        self.error.setStyleSheet("color: #c00000;")
        self.info = _Line()
        #: what was found for the design (e.g. "49.93 Hz, harmonics 1–7 above the floor")
        self.note = _Line()
        self.verdict_label = _Line()
        self.db_axis = QCheckBox("Magnitude in dB")
        self.db_axis.setChecked(True)
        self.db_axis.toggled.connect(self._redraw)
        self.unwrap = QCheckBox("Unwrap phase")
        self.unwrap.toggled.connect(self._redraw)
        for w in (self.db_axis, self.unwrap):
            left.addWidget(w)
        left.addStretch(1)
        holder = QWidget()
        holder.setLayout(left)
        # the chain and the form scroll: however low the dock, they never squeeze the
        # verdict or push the window past the screen
        self.form_scroll = QScrollArea()
        self.form_scroll.setWidget(holder)
        self.form_scroll.setWidgetResizable(True)
        self.form_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.form_scroll.setHorizontalScrollBarPolicy(
            pg.QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.form_scroll.setFixedWidth(320)
        self.form_scroll.setMinimumHeight(60)
        lay.addWidget(self.form_scroll)
        #: what is in force, the verdict and the summary, above the plots: always in view
        right = QVBoxLayout()
        right.setSpacing(2)
        for w in (self.error, self.note, self.info, self.verdict_label):
            w.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
            right.addWidget(w)

        self.tabs = QTabWidget()
        self.mag = pg.PlotWidget()
        self.mag.setLabel("bottom", "Frequency", units="Hz")
        self.mag.setLabel("left", "Magnitude (dB)")
        self.mag.showGrid(x=True, y=True, alpha=0.3)
        self.mag.addLegend(offset=(-10, 10))
        self._mag_curve = self.mag.plot(pen=pg.mkPen((255, 200, 60), width=2),
                                        name="selected filter")
        #: the response of the whole chain (every enabled filter), when there is one
        self.chain_curve = self.mag.plot(pen=pg.mkPen((120, 200, 255), width=2,
                                                       style=pg.QtCore.Qt.PenStyle.DashLine),
                                          name="whole chain")
        self.chain_curve.setVisible(False)
        self._tol_items: list[Any] = []
        self.phase = pg.PlotWidget(labels={"bottom": "Frequency (Hz)", "left": "Phase (rad)"})
        self._phase_curve = self.phase.plot(pen="c")
        self.gd = pg.PlotWidget(labels={"bottom": "Frequency (Hz)", "left": "Group delay (ms)"})
        self._gd_curve = self.gd.plot(pen="c")
        self.pz = pg.PlotWidget(labels={"bottom": "Real", "left": "Imaginary"})
        self.pz.setAspectLocked(True)
        t = np.linspace(0, 2 * np.pi, 361)
        self.pz.plot(np.cos(t), np.sin(t), pen=pg.mkPen((150, 150, 150), width=1))
        self._zeros = pg.ScatterPlotItem(symbol="o", size=9, pen=pg.mkPen("c", width=2),
                                         brush=None)
        self._poles = pg.ScatterPlotItem(symbol="x", size=10, pen=pg.mkPen("r", width=2))
        self.pz.addItem(self._zeros)
        self.pz.addItem(self._poles)
        self.imp = pg.PlotWidget(labels={"bottom": "Time (ms)", "left": "Impulse response"})
        self._imp_curve = self.imp.plot(pen="c")
        self.stp = pg.PlotWidget(labels={"bottom": "Time (ms)", "left": "Step response"})
        self._stp_curve = self.stp.plot(pen="c")
        for p in (self.mag, self.phase, self.gd, self.pz, self.imp, self.stp):
            p.hideButtons()  # no stray auto-range "A" in a corner
        for w, name in ((self.mag, "Magnitude"), (self.phase, "Phase"),
                        (self.gd, "Group delay"), (self.pz, "Poles/zeros"),
                        (self.imp, "Impulse"), (self.stp, "Step")):
            self.tabs.addTab(w, name)
        self.tabs.currentChanged.connect(self._redraw)
        self.tabs.setMinimumHeight(100)
        right.addWidget(self.tabs, 1)
        lay.addLayout(right, 1)
        self.set_spec(self.spec, emit=False)

    # -- public API ------------------------------------------------------------
    def set_runner(self, runner: Runner | None, preparer: Preparer | None = None) -> None:
        """Design (and analyse) through ``runner`` from now on, e.g. on a compute thread.

        ``preparer`` completes a spec before it is designed (in the job): the app
        fills the harmonics of a notch with those above the recording's floor.
        """
        self._runner, self._preparer = runner, preparer

    def busy(self) -> bool:
        """Whether a design asked for has not been shown (or refused) yet."""
        return self._answer < self._request or self.form.pending()

    def set_sample_rate(self, fs: float) -> None:
        """Design for this sample rate (the recording's)."""
        self.fs = self.form.fs = float(fs)
        self._redesign(self.wanted, emit=False)

    def set_chain(self, others: list[filters.FilterSpec], in_chain: bool = True) -> None:
        """The chain this filter is part of: the combined response is drawn too.

        Parameters
        ----------
        others : list of FilterSpec
            The chain's other enabled filters (none: no combined curve).
        in_chain : bool
            Whether the filter shown is enabled (it counts in the combined response).
        """
        others_t = tuple(others)
        if (others_t, bool(in_chain)) == (self._others, self._in_chain):
            return
        self._others, self._in_chain = others_t, bool(in_chain)
        self._redesign(self.wanted, emit=False)

    def set_spec(self, spec: filters.FilterSpec | dict, *, emit: bool = True) -> bool:
        """Show ``spec`` (a FilterSpec or pipeline filter params); False if it is invalid.

        With a runner the design arrives later (``designed``); errors found then
        are shown next to the form.
        """
        try:
            if isinstance(spec, dict):
                spec = filters.FilterSpec.from_params(spec)
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return False
        self.form.set_spec(spec)
        return self._redesign(spec, emit=emit, commit=emit)

    def params(self) -> dict[str, Any]:
        """The newest specification asked for, as pipeline filter-step params."""
        return self.wanted.to_params()

    def field(self, name: str) -> QWidget | None:
        """The form's field for parameter ``name`` (None when the method has none)."""
        return self.form.field(name)

    def error_text(self, message: str) -> None:
        """Show why the last change could not be a filter (the last design stays)."""
        self.error.setText(message)

    # -- form ------------------------------------------------------------------
    def _form_edited(self, spec: filters.FilterSpec) -> None:
        if spec != self.wanted:
            self._redesign(spec, emit=True, commit=True)

    # -- design ----------------------------------------------------------------
    def _redesign(self, spec: filters.FilterSpec, *, emit: bool, commit: bool = False) -> bool:
        """Ask for the design of ``spec``; False when it fails at once (no runner)."""
        self._request += 1
        rid, fs = self._request, self.fs
        prepare = self._preparer() if self._preparer is not None else None
        self.wanted = spec

        others = self._others if (self._others or not self._in_chain) else None
        in_chain = self._in_chain

        def job() -> Shown:
            return compute_shown(spec, fs, prepare, others, in_chain)

        if self._runner is None:
            try:
                shown = job()
            except SpecscopeError as exc:
                self._refused(rid, str(exc))
                return False
            self._show(rid, shown, emit, commit)
            return True
        self._runner(job, lambda shown: self._show(rid, shown, emit, commit),
                     lambda message: self._refused(rid, message))
        return True

    def _refused(self, rid: int, message: str) -> None:
        if rid != self._request:
            return
        self._answer = rid
        self.error.setText(message)  # keep the last valid design
        self.wanted = self.spec
        if self.form.spec.design != self.spec.design:  # a method that cannot be designed
            self.form.set_spec(self.spec)
        else:  # the same value typed again is tried again
            self.form.spec = self.spec

    def _show(self, rid: int, shown: Shown, emit: bool, commit: bool) -> None:
        if rid != self._request:
            return  # a newer request is on its way
        self._answer = rid
        self.error.setText("")
        self.note.setText(shown.note)
        spec = shown.spec
        if spec != self.wanted:
            self.form.set_spec(spec)  # completed by the preparer
        self.spec, self.wanted, self.design = spec, spec, shown.design
        self.analysis, self.verdict, self._shown = shown.analysis, shown.verdict, shown
        self._update_info()
        self._redraw()
        self.designed.emit()
        if emit:
            (self.specCommitted if commit else self.specChanged).emit(spec.to_params())

    def _update_info(self) -> None:
        d = self.design
        mp = {True: "yes", False: "no", None: "n/a"}[d.minimum_phase]
        parts = [f"order {d.order}" if d.form != "fir" else f"{d.numtaps} taps",
                 f"{d.sections} sections" if d.form == "sos" else d.form,
                 "stable" if d.stable else "UNSTABLE", f"minimum phase: {mp}",
                 f"delay {d.delay_s * 1000:.2f} ms" + (" (zero phase)" if d.zero_phase else "")]
        force = in_force(self.spec)
        self.info.setText((force + "\n" if force else "") + ", ".join(parts))
        v = self.verdict
        if v is None or v.passed is None:
            self.verdict_label.setText("No tolerance given (passband/stopband with rp/rs)")
            self.verdict_label.setStyleSheet("")
        else:
            self.verdict_label.setText(("PASS: " if v.passed else "FAIL: ") + v.text())
            self.verdict_label.setStyleSheet("color: #007000;" if v.passed else
                                             "color: #c00000;")

    # -- drawing ---------------------------------------------------------------
    def redraw_all(self) -> None:
        """Update every analysis view, not only the visible one."""
        for i in range(self.tabs.count()):
            self._redraw(tab=self.tabs.widget(i))

    def _redraw(self, *_: object, tab: QWidget | None = None) -> None:
        a = self.analysis
        if a is None:
            return
        tab = tab if tab is not None else self.tabs.currentWidget()
        if tab is self.mag:
            self._draw_magnitude()
        elif tab is self.phase:
            self._phase_curve.setData(a.f, a.phase_unwrapped if self.unwrap.isChecked()
                                      else a.phase)
        elif tab is self.gd:
            self._gd_curve.setData(a.f, a.group_delay_s * 1000.0)
        elif tab is self.pz:
            zpk = a.zpk
            if zpk is None:
                self._zeros.setData([], [])
                self._poles.setData([], [])
            else:
                z, p, _ = zpk
                self._zeros.setData(np.real(z), np.imag(z))
                self._poles.setData(np.real(p), np.imag(p))
        elif tab is self.imp and self._shown is not None:
            t, h = self._shown.impulse
            self._imp_curve.setData(t * 1000.0, h)
        elif tab is self.stp and self._shown is not None:
            t, h = self._shown.step
            self._stp_curve.setData(t * 1000.0, h)

    def _draw_magnitude(self) -> None:
        a = self.analysis
        in_db = self.db_axis.isChecked()
        self.mag.setLabel("left", "Magnitude (dB)" if in_db else "Magnitude")
        y = np.maximum(a.magnitude_db, -200.0) if in_db else a.magnitude
        self._mag_curve.setData(a.f, y)
        combined = self._shown.combined if self._shown is not None else None
        self.chain_curve.setVisible(combined is not None)
        if combined is not None:
            with np.errstate(divide="ignore"):
                chain_y = np.maximum(20.0 * np.log10(combined), -200.0) if in_db else combined
            self.chain_curve.setData(a.f, chain_y)
            y = np.minimum(y, chain_y)
        for item in self._tol_items:
            self.mag.removeItem(item)
        self._tol_items = []
        if in_db:
            for kind, f0, f1, lo, hi in filters.tolerance_bands(self.spec, self.fs):
                lo_v = max(lo, -200.0) if math.isfinite(lo) else -200.0
                color = (90, 220, 120, 45) if kind == "pass" else (240, 90, 90, 45)
                rect = pg.QtWidgets.QGraphicsRectItem(f0, lo_v, f1 - f0, hi - lo_v)
                rect.setBrush(pg.mkBrush(*color))
                rect.setPen(pg.mkPen(None))
                self.mag.addItem(rect)
                self._tol_items.append(rect)
        self._sync_edges()
        self._sync_limits(in_db)
        self.mag.setXRange(0, self.fs / 2, padding=0.01)
        if in_db:
            self.mag.setYRange(max(-120.0, float(np.nanmin(y)) - 5), 10.0, padding=0)

    def _sync_edges(self) -> None:
        """One draggable line per band edge of the spec."""
        wanted = []
        for name in EDGE_FIELDS:
            v = getattr(self.spec, name, None)
            if v is None or name not in filters.DESIGNS[self.spec.design][1]:
                continue
            for i, f in enumerate(np.atleast_1d(np.asarray(v, dtype=float)).tolist()):
                wanted.append((name, i, f))
        if [(n, i) for n, i, _ in self._edges] != [(n, i) for n, i, _ in wanted]:
            for _, _, line in self._edges:
                self.mag.removeItem(line)
            self._edges = []
            for name, i, f in wanted:
                line = pg.InfiniteLine(pos=f, angle=90, movable=True,
                                       pen=pg.mkPen(_EDGE_PENS[name], width=2),
                                       hoverPen=pg.mkPen("w", width=3), label=name,
                                       labelOpts={"position": 0.95, "color": _EDGE_PENS[name]})
                line.setBounds((0.0, self.fs / 2))
                line.sigDragged.connect(self._edge_dragged)
                line.sigPositionChangeFinished.connect(self._drag_finished)
                self.mag.addItem(line)
                self._edges.append((name, i, line))
        else:
            for (_, _, line), (_, _, f) in zip(self._edges, wanted, strict=True):
                if not line.moving:
                    line.blockSignals(True)
                    line.setValue(f)
                    line.blockSignals(False)

    def _sync_limits(self, in_db: bool) -> None:
        """Draggable horizontal lines for the passband ripple and stopband attenuation."""
        wanted = []
        if in_db and self.spec.rp is not None and "rp" in filters.DESIGNS[self.spec.design][1]:
            wanted.append(("rp", -float(self.spec.rp)))
        if in_db and self.spec.rs is not None and "rs" in filters.DESIGNS[self.spec.design][1]:
            wanted.append(("rs", -float(self.spec.rs)))
        if [n for n, _ in self._limits] != [n for n, _ in wanted]:
            for _, line in self._limits:
                self.mag.removeItem(line)
            self._limits = []
            for name, y in wanted:
                line = pg.InfiniteLine(pos=y, angle=0, movable=True,
                                       pen=pg.mkPen((200, 200, 255), width=1,
                                                    style=pg.QtCore.Qt.PenStyle.DashLine),
                                       label=name, labelOpts={"position": 0.05})
                line.sigDragged.connect(self._limit_dragged)
                line.sigPositionChangeFinished.connect(self._drag_finished)
                self.mag.addItem(line)
                self._limits.append((name, line))
        else:
            for (_, line), (_, y) in zip(self._limits, wanted, strict=True):
                if not line.moving:
                    line.blockSignals(True)
                    line.setValue(y)
                    line.blockSignals(False)

    # -- dragging ----------------------------------------------------------------
    def move_edge(self, name: str, index: int, f: float, *, commit: bool = False) -> bool:
        """Move band edge ``index`` of field ``name`` to ``f`` Hz (what a drag does)."""
        v = getattr(self.wanted, name)
        vals = np.atleast_1d(np.asarray(v, dtype=float)).tolist()
        vals[index] = float(f)
        new = tuple(vals) if len(vals) > 1 else vals[0]
        try:
            spec = dataclasses.replace(self.wanted, **{name: new})
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return False
        self.form.set_spec(spec)
        return self._redesign(spec, emit=True, commit=commit)

    def _edge_dragged(self, line: pg.InfiniteLine) -> None:
        for name, i, ln in self._edges:
            if ln is line:
                hz_per_pixel = self.mag.getPlotItem().getViewBox().viewPixelSize()[0]
                f = round_to_resolution(float(line.value()), hz_per_pixel)
                self.move_edge(name, i, min(max(f, 0.0), self.fs / 2))
                return

    def _limit_dragged(self, line: pg.InfiniteLine) -> None:
        for name, ln in self._limits:
            if ln is line:
                value = round_to_resolution(max(0.0, -float(line.value())), 0.1)
                try:
                    spec = dataclasses.replace(self.wanted, **{name: value})
                except SpecscopeError as exc:
                    self.error.setText(str(exc))
                    return
                self.form.set_spec(spec)
                self._redesign(spec, emit=True)
                return

    def _drag_finished(self, *_: object) -> None:
        # the last position may still be designing: commit that one when it arrives
        self._redesign(self.wanted, emit=True, commit=True)
