"""FilterDesigner: design a filter by editing or dragging, see every analysis at once.

The person picks a method, edits the generated form, or drags band edges and
the ripple/attenuation limits on the magnitude plot; every change redesigns
and redraws (designs take a few milliseconds, see ``scripts/bench_filter.py``,
so this happens here rather than in a job).  An impossible specification is
named next to the form and the last valid design stays.

Signals
-------
specChanged(dict)
    A valid new specification (pipeline filter-step params), on every change.
specCommitted(dict)
    The change is finished (a drag released, a field edited): apply it for good.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.errors import SpecscopeError
from specscope.compute import filters

from .param_form import ParamForm

#: methods offered, with a label
METHODS = {
    "butter": "IIR Butterworth", "cheby1": "IIR Chebyshev I", "cheby2": "IIR Chebyshev II",
    "ellip": "IIR elliptic", "bessel": "IIR Bessel", "iirnotch": "Notch",
    "iirpeak": "Peak", "iircomb": "Comb (hum and harmonics)",
    "notches": "Notches (frequency and harmonics)", "firwin": "FIR window / Kaiser",
    "remez": "FIR equiripple (remez)", "firls": "FIR least squares",
    "firwin2": "FIR frequency sampling",
}
#: spec fields drawn as draggable vertical lines on the magnitude plot
EDGE_FIELDS = ("cutoff", "passband", "stopband", "frequency")
_EDGE_PENS = {"cutoff": (255, 200, 60), "passband": (90, 220, 120), "stopband": (240, 90, 90),
              "frequency": (255, 200, 60)}


class FilterDesigner(QWidget):
    """The designer panel (see the module documentation)."""

    specChanged = pyqtSignal(dict)
    specCommitted = pyqtSignal(dict)

    def __init__(self, fs: float = 48000.0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fs = float(fs)
        self.spec = filters.FilterSpec("butter", btype="bandpass", order=4,
                                       cutoff=(300.0, 3000.0))
        self.design: filters.Design | None = None
        self.analysis: filters.Analysis | None = None
        self.verdict: filters.Verdict | None = None
        self._edges: list[tuple[str, int, pg.InfiniteLine]] = []
        self._limits: list[tuple[str, pg.InfiniteLine]] = []
        self._form: ParamForm | None = None

        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        top = QFormLayout()
        self.method = QComboBox()
        for key, label in METHODS.items():
            self.method.addItem(label, key)
        self.method.currentIndexChanged.connect(self._method_changed)
        top.addRow("Method", self.method)
        left.addLayout(top)
        self.form_host = QVBoxLayout()
        left.addLayout(self.form_host)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c00000;")
        self.info = QLabel("")
        self.info.setWordWrap(True)
        self.verdict_label = QLabel("")
        self.verdict_label.setWordWrap(True)
        self.db_axis = QCheckBox("Magnitude in dB")
        self.db_axis.setChecked(True)
        self.db_axis.toggled.connect(self._redraw)
        self.unwrap = QCheckBox("Unwrap phase")
        self.unwrap.toggled.connect(self._redraw)
        for w in (self.error, self.info, self.verdict_label, self.db_axis, self.unwrap):
            left.addWidget(w)
        left.addStretch(1)
        holder = QWidget()
        holder.setLayout(left)
        holder.setMaximumWidth(300)
        lay.addWidget(holder)

        self.tabs = QTabWidget()
        self.mag = pg.PlotWidget()
        self.mag.setLabel("bottom", "Frequency", units="Hz")
        self.mag.setLabel("left", "Magnitude (dB)")
        self.mag.showGrid(x=True, y=True, alpha=0.3)
        self._mag_curve = self.mag.plot(pen=pg.mkPen((255, 200, 60), width=2))
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
        for w, name in ((self.mag, "Magnitude"), (self.phase, "Phase"),
                        (self.gd, "Group delay"), (self.pz, "Poles/zeros"),
                        (self.imp, "Impulse"), (self.stp, "Step")):
            self.tabs.addTab(w, name)
        self.tabs.currentChanged.connect(self._redraw)
        lay.addWidget(self.tabs, 1)
        self.set_spec(self.spec, emit=False)

    # -- public API ------------------------------------------------------------
    def set_sample_rate(self, fs: float) -> None:
        """Design for this sample rate (the recording's)."""
        self.fs = float(fs)
        self._redesign(self.spec, emit=False)

    def set_spec(self, spec: filters.FilterSpec | dict, *, emit: bool = True) -> bool:
        """Show ``spec`` (a FilterSpec or pipeline filter params); False if it is invalid."""
        try:
            if isinstance(spec, dict):
                spec = filters.FilterSpec.from_params(spec)
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return False
        self.method.blockSignals(True)
        self.method.setCurrentIndex(max(0, self.method.findData(spec.design)))
        self.method.blockSignals(False)
        if self._form is None or spec.design != self.spec.design:
            self._build_form(spec)
        else:
            self._form.set_values(_form_values(spec))
        return self._redesign(spec, emit=emit, commit=emit)

    def params(self) -> dict[str, Any]:
        return self.spec.to_params()

    # -- form ------------------------------------------------------------------
    def _build_form(self, spec: filters.FilterSpec) -> None:
        if self._form is not None:
            self._form.setParent(None)
            self._form.deleteLater()
        self._form = ParamForm(filters.field_schema(spec.design), _form_values(spec))
        self._form.changed.connect(self._form_edited)
        self.form_host.addWidget(self._form)

    def _method_changed(self) -> None:
        method = self.method.currentData()
        try:
            spec = _convert(self.spec, method, self.fs)
            filters.design(spec, self.fs)
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            self.method.blockSignals(True)
            self.method.setCurrentIndex(max(0, self.method.findData(self.spec.design)))
            self.method.blockSignals(False)
            return
        self._build_form(spec)
        self._redesign(spec, emit=True, commit=True)

    def _form_edited(self) -> None:
        try:
            values = self._form.values()
            spec = filters.FilterSpec.from_params({"design": self.spec.design, **{
                k: v for k, v in values.items() if v is not None}})
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return
        self._redesign(spec, emit=True, commit=True)

    # -- design ----------------------------------------------------------------
    def _redesign(self, spec: filters.FilterSpec, *, emit: bool, commit: bool = False) -> bool:
        try:
            d = filters.design(spec, self.fs)
        except SpecscopeError as exc:
            self.error.setText(str(exc))  # keep the last valid design
            return False
        self.error.setText("")
        self.spec, self.design = spec, d
        self.analysis = filters.analyze(d, _grid_points(spec, self.fs))
        self.verdict = filters.verify(d, analysis=self.analysis)
        self._update_info()
        self._redraw()
        if emit:
            self.specChanged.emit(spec.to_params())
            if commit:
                self.specCommitted.emit(spec.to_params())
        return True

    def _update_info(self) -> None:
        d = self.design
        mp = {True: "yes", False: "no", None: "n/a"}[d.minimum_phase]
        parts = [f"order {d.order}" if d.form != "fir" else f"{d.numtaps} taps",
                 f"{d.sections} sections" if d.form == "sos" else d.form,
                 "stable" if d.stable else "UNSTABLE", f"minimum phase: {mp}",
                 f"delay {d.delay_s * 1000:.2f} ms" + (" (zero phase)" if d.zero_phase else "")]
        self.info.setText(", ".join(parts))
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
        elif tab is self.imp:
            t, h = a.impulse
            self._imp_curve.setData(t * 1000.0, h)
        elif tab is self.stp:
            t, h = a.step
            self._stp_curve.setData(t * 1000.0, h)

    def _draw_magnitude(self) -> None:
        a = self.analysis
        in_db = self.db_axis.isChecked()
        self.mag.setLabel("left", "Magnitude (dB)" if in_db else "Magnitude")
        y = np.maximum(a.magnitude_db, -200.0) if in_db else a.magnitude
        self._mag_curve.setData(a.f, y)
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
        v = getattr(self.spec, name)
        vals = np.atleast_1d(np.asarray(v, dtype=float)).tolist()
        vals[index] = float(f)
        new = tuple(vals) if len(vals) > 1 else vals[0]
        try:
            spec = dataclasses.replace(self.spec, **{name: new})
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return False
        ok = self._redesign(spec, emit=True, commit=commit)
        if ok and self._form is not None:
            self._form.set_values(_form_values(spec))
        return ok

    def _edge_dragged(self, line: pg.InfiniteLine) -> None:
        for name, i, ln in self._edges:
            if ln is line:
                self.move_edge(name, i, float(line.value()))
                return

    def _limit_dragged(self, line: pg.InfiniteLine) -> None:
        for name, ln in self._limits:
            if ln is line:
                value = max(0.0, -float(line.value()))
                try:
                    spec = dataclasses.replace(self.spec, **{name: value})
                except SpecscopeError as exc:
                    self.error.setText(str(exc))
                    return
                if self._redesign(spec, emit=True) and self._form is not None:
                    self._form.set_values(_form_values(spec))
                return

    def _drag_finished(self, *_: object) -> None:
        self.specCommitted.emit(self.spec.to_params())


def _grid_points(spec: filters.FilterSpec, fs: float) -> int:
    """Enough frequency points that a narrow notch is not missed between two of them."""
    if spec.frequency and spec.q and spec.design in ("iirnotch", "iirpeak", "iircomb",
                                                     "notches"):
        width = spec.frequency / spec.q
        return int(min(1 << 14, max(2048, 4 * (fs / 2) / width)))
    return 2048


def _form_values(spec: filters.FilterSpec) -> dict[str, Any]:
    out = {}
    for k, v in spec.to_params().items():
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


def _convert(spec: filters.FilterSpec, method: str, fs: float) -> filters.FilterSpec:
    """The current spec under another method, keeping what carries over."""
    old = spec.to_params()
    params: dict[str, Any] = {"design": method, "zero_phase": old.get("zero_phase", False)}
    fields = filters.DESIGNS[method][1]
    for k in fields:
        if k in old:
            params[k] = old[k]
    centre = old.get("frequency")
    if centre is None and old.get("cutoff") is not None:
        c = np.atleast_1d(old["cutoff"]).astype(float)
        centre = float(np.sqrt(c[0] * c[-1]))
    if "frequency" in fields:
        params.setdefault("frequency", centre or 50.0)
        params.setdefault("q", 30.0)
        if method == "iircomb":  # a comb's teeth must divide the sample rate: mains hum
            ratio = fs / params["frequency"]
            if abs(ratio - round(ratio)) > 1e-9 * ratio:
                params["frequency"] = 50.0
    if "cutoff" in fields and params.get("cutoff") is None and "passband" not in params:
        f0 = centre or fs / 8
        params["cutoff"] = [f0 / 2, min(f0 * 2, 0.45 * fs)] if old.get("btype") in (
            "bandpass", "bandstop") else f0
    if method in ("butter", "cheby1", "cheby2", "ellip", "bessel") and not params.get("order") \
            and not (params.get("passband") and params.get("rs")):
        params["order"] = 4
    if method in ("cheby1", "ellip"):
        params.setdefault("rp", 1.0)
    if method in ("cheby2", "ellip"):
        params.setdefault("rs", 40.0)
    if method == "firwin":
        params.setdefault("numtaps", 101)
    if method in ("remez", "firls"):
        nyq = fs / 2
        params = {"design": method, "numtaps": 101, "bands": [0, 0.1 * nyq, 0.15 * nyq, nyq],
                  "desired": [1, 1, 0, 0] if method == "firls" else [1, 0],
                  "zero_phase": params["zero_phase"]}
    if method == "firwin2":
        nyq = fs / 2
        params = {"design": method, "numtaps": 101, "freq": [0, 0.1 * nyq, 0.15 * nyq, nyq],
                  "gain": [1, 1, 0, 0], "zero_phase": params["zero_phase"]}
    return filters.FilterSpec.from_params({k: v for k, v in params.items() if v is not None})
