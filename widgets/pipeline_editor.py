"""PipelineEditor: the processing steps applied before the spectrogram.

A list of steps (operator name and parameters) with a form generated from the
selected step's schema.  The editor knows nothing of where operators come
from: it is given a catalogue (name, family, summary) and a ``describe``
function returning an operator's schema; it emits the steps when applied.
A filter step is edited with the designer's form
(:class:`~specscope.widgets.filter_designer.FilterForm`: its method and the
fields of ``compute.filters.field_schema``); a finished edit of it (Enter,
leaving the field, a pause) applies the steps at once, as in the designer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (
    QLabel,
    QListWidget,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.errors import SpecscopeError
from specscope.compute.filters import FilterSpec

from .filter_designer import FilterForm
from .list_buttons import ListButtons
from .param_form import ParamForm
from .region_shapes import edit_text

#: a new filter step: the designer's first filter
NEW_FILTER = {"design": "butter", "btype": "bandpass", "order": 4, "cutoff": [300.0, 3000.0]}


class PipelineEditor(QWidget):
    """Edit a list of ``{"op": name, "params": {...}}`` steps.

    Signals
    -------
    stepsChanged(list)
        The person pressed Apply (or removed/moved a step); the steps to use.
    """

    stepsChanged = pyqtSignal(list)

    def __init__(self, catalogue: list[dict[str, Any]],
                 describe: Callable[[str], dict[str, Any]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._describe = describe
        self._steps: list[dict[str, Any]] = []
        #: the selected step's form: a FilterForm for a filter step, else a ParamForm
        self.form: ParamForm | FilterForm | None = None
        #: the sample rate filter steps are designed for (method changes keep below Nyquist)
        self.fs = 48000.0
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.list = QListWidget()
        self.list.setMaximumHeight(130)
        self.list.currentRowChanged.connect(self._select)
        lay.addWidget(QLabel("Steps before the spectrogram (top first)"))
        lay.addWidget(self.list)
        self.buttons = ListButtons(self._menu(catalogue))
        self.add, self.remove = self.buttons.add, self.buttons.remove
        self.up, self.down = self.buttons.up, self.buttons.down
        self.buttons.removeClicked.connect(self._remove)
        self.buttons.moveClicked.connect(self._move)
        lay.addWidget(self.buttons)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.form_host = QVBoxLayout()
        lay.addLayout(self.form_host)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #c00000;")
        self.error.setWordWrap(True)
        lay.addWidget(self.error)
        self.apply = QPushButton("Apply")
        self.apply.setToolTip("Use these steps for the view and the export")
        self.apply.clicked.connect(self._apply)
        lay.addWidget(self.apply)
        lay.addStretch(1)

    def _menu(self, catalogue: list[dict[str, Any]]) -> QMenu:
        menu = QMenu(self)
        families: dict[str, QMenu] = {}
        act = menu.addAction("filter (design in Hz)")
        act.triggered.connect(lambda *_: self.add_step("filter"))
        for item in sorted(catalogue, key=lambda d: (d.get("family", ""), d["name"])):
            fam = item.get("family") or "other"
            if fam not in families:
                families[fam] = menu.addMenu(fam)
            a = families[fam].addAction(item["name"])
            a.setToolTip(item.get("summary", ""))
            a.setStatusTip(item.get("summary", ""))
            a.triggered.connect(lambda *_, n=item["name"]: self.add_step(n))
        menu.setToolTipsVisible(True)
        return menu

    def set_catalogue(self, catalogue: list[dict[str, Any]]) -> None:
        """Operators offered by Add (name, family, summary)."""
        self.add.setMenu(self._menu(catalogue))

    def set_sample_rate(self, fs: float) -> None:
        """The recording's sample rate (a filter step's form converts methods for it)."""
        self.fs = float(fs)
        if isinstance(self.form, FilterForm):
            self.form.fs = self.fs

    # -- steps ---------------------------------------------------------------
    def steps(self) -> list[dict[str, Any]]:
        """The steps shown, as pipeline steps (``{"op": ..., "params": {...}}``)."""
        return [{"op": s["op"], "params": dict(s["params"])} for s in self._steps]

    def set_steps(self, steps: list[dict[str, Any]]) -> None:
        """Show these steps (no signal)."""
        self.error.setText("")
        if [{"op": s["op"], "params": s.get("params", {})} for s in steps] == self._steps:
            return  # the steps just applied: the form being edited stays
        self._steps = [{"op": s["op"], "params": dict(s.get("params", {}))} for s in steps]
        self._refresh()

    def add_step(self, op: str) -> None:
        """Add a step of operator ``op`` (``"filter"``: a band-pass) and select it."""
        params: dict[str, Any] = dict(NEW_FILTER) if op == "filter" else {}
        self._steps.append({"op": op, "params": params})
        self._refresh()
        self.list.setCurrentRow(len(self._steps) - 1)

    def show_error(self, message: str) -> None:
        """Say why the steps could not be used."""
        self.error.setText(message)

    def _remove(self) -> None:
        i = self.list.currentRow()
        if 0 <= i < len(self._steps):
            del self._steps[i]
            self._refresh()
            self._apply()

    def _move(self, d: int) -> None:
        i = self.list.currentRow()
        j = i + d
        if 0 <= i < len(self._steps) and 0 <= j < len(self._steps):
            self._steps[i], self._steps[j] = self._steps[j], self._steps[i]
            self._refresh()
            self.list.setCurrentRow(j)
            self._apply()

    def _refresh(self) -> None:
        row = self.list.currentRow()
        self.list.blockSignals(True)
        self.list.clear()
        for s in self._steps:
            self.list.addItem(_row_text(s))
        self.list.blockSignals(False)
        if self._steps:
            self.list.setCurrentRow(min(max(row, 0), len(self._steps) - 1))
        self._select(self.list.currentRow())

    def _select(self, i: int) -> None:
        if self.form is not None:
            self.form.setParent(None)
            self.form.deleteLater()
            self.form = None
        self.summary.setText("")
        if not 0 <= i < len(self._steps):
            return
        step = self._steps[i]
        if step["op"] == "edit":  # drawn on the spectrogram: no form
            self.summary.setText("A region edit (Edit › Region): "
                                 f"{edit_text(step['params'])}. Remove drops it")
            return
        try:
            if step["op"] == "filter":
                form = FilterForm(FilterSpec.from_params(step["params"]), self.fs)
                form.edited.connect(self._filter_edited)
                form.invalid.connect(self.error.setText)
                self.form = form
                self.summary.setText("Filter designed for the recording's sample rate; "
                                     "a finished edit applies it")
                self.form_host.addWidget(form)
                return
            d = self._describe(step["op"])
            schema, values = d.get("params", []), step["params"]
            self.summary.setText(d.get("summary", ""))
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return
        self.form = ParamForm(schema, values)
        self.form.changed.connect(self._form_changed)
        self.form_host.addWidget(self.form)

    def _filter_edited(self, spec: FilterSpec) -> None:
        """A finished edit of a filter step: used at once, like the designer's."""
        i = self.list.currentRow()
        if not 0 <= i < len(self._steps):
            return
        self._steps[i]["params"] = spec.to_params()
        self._show_row(i)
        self._apply()

    def _form_changed(self) -> None:
        i = self.list.currentRow()
        if not isinstance(self.form, ParamForm) or not 0 <= i < len(self._steps):
            return
        try:
            values = self.form.values()
        except SpecscopeError as exc:
            self.error.setText(str(exc))
            return
        self.error.setText("")
        schema = {p["name"]: p for p in self.form.schema}
        # keep only values that differ from the defaults: short, readable pipelines
        self._steps[i]["params"] = {k: v for k, v in values.items()
                                    if v != schema[k].get("default")}
        self._show_row(i)

    def _show_row(self, i: int) -> None:
        self.list.item(i).setText(_row_text(self._steps[i]))

    def _apply(self) -> None:
        self.error.setText("")
        self.stepsChanged.emit(self.steps())


def _row_text(step: dict[str, Any]) -> str:
    """A step's row: ``op(name=value, ...)``; a region edit in words."""
    if step["op"] == "edit":
        return f"edit: {edit_text(step['params'])}"
    args = ", ".join(f"{k}={_short(v)}" for k, v in step["params"].items())
    return f"{step['op']}({args})"


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, str) else v
    return text if len(text) <= 24 else text[:21] + "…"
