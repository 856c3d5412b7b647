"""ParamForm: a parameter form generated from an operator's schema.

The schema is the list of parameter dicts that ``Operator.to_dict()`` (and
``operators.describe_operator``) give: name, type, default, required, min, max,
choices, unit, help.  Numbers get spin boxes with their range and unit,
choices a combo box, booleans a check box; optional values (default None) and
arrays a text field.  Values are checked by the operator itself when used.
"""

from __future__ import annotations

import json
import math
from typing import Any

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)
from specscope.compute.errors import InputError
from specscope.compute.spectral import COMMON_WINDOWS, window_text

_BIG = 2**31 - 1


class ParamForm(QWidget):
    """Widgets for a schema; ``values()`` returns the parameters as the operator takes them.

    Signals
    -------
    changed()
        Any value was edited.
    """

    changed = pyqtSignal()

    def __init__(self, params: list[dict[str, Any]], values: dict[str, Any] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.schema = list(params)
        self._widgets: dict[str, QWidget] = {}
        self._kinds: dict[str, str] = {}
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for p in self.schema:
            w, kind = self._make(p)
            tip = p.get("help") or ""
            rng = _range_text(p)
            w.setToolTip(f"{tip}{' — ' if tip and rng else ''}{rng}")
            label = QLabel(p["name"] + (" *" if p.get("required") else ""))
            label.setToolTip(w.toolTip())
            form.addRow(label, w)
            self._widgets[p["name"]] = w
            self._kinds[p["name"]] = kind
        if not self.schema:
            form.addRow(QLabel("no parameters"))
        self.set_values(values or {})

    # -- construction --------------------------------------------------------
    def _make(self, p: dict[str, Any]) -> tuple[QWidget, str]:
        t, default = p.get("type"), p.get("default")
        if p.get("choices"):
            w = QComboBox()
            for c in p["choices"]:
                w.addItem(str(c), c)
            w.currentIndexChanged.connect(self.changed)
            return w, "choice"
        if t == "bool":
            w = QCheckBox()
            w.toggled.connect(self.changed)
            return w, "bool"
        if t == "int" and default is not None:
            w = QSpinBox()
            w.setRange(_bound(p.get("min"), -_BIG), _bound(p.get("max"), _BIG))
            if p.get("unit"):
                w.setSuffix(f" {p['unit']}")
            w.valueChanged.connect(self.changed)
            return w, "int"
        if t == "float" and default is not None:
            w = QDoubleSpinBox()
            w.setDecimals(6)
            lo = p.get("min") if p.get("min") is not None else -1e15
            hi = p.get("max") if p.get("max") is not None else 1e15
            w.setRange(float(lo), float(hi))
            w.setSingleStep(_step(default))
            if p.get("unit"):
                w.setSuffix(f" {p['unit']}")
            w.valueChanged.connect(self.changed)
            return w, "float"
        if t == "window":
            w = QComboBox()
            w.setEditable(True)
            w.addItems(COMMON_WINDOWS)
            w.currentTextChanged.connect(self.changed)
            return w, "window"
        w = QLineEdit()
        if default is None and not p.get("required"):
            w.setPlaceholderText("automatic")
        w.textChanged.connect(self.changed)
        return w, "text"

    def field(self, name: str) -> QWidget | None:
        """The widget editing parameter ``name`` (None when the schema has none)."""
        return self._widgets.get(name)

    # -- values --------------------------------------------------------------
    def set_values(self, values: dict[str, Any]) -> None:
        for p in self.schema:
            name = p["name"]
            v = values.get(name, p.get("default"))
            w, kind = self._widgets[name], self._kinds[name]
            w.blockSignals(True)
            try:
                if kind == "choice":
                    i = w.findData(v)
                    w.setCurrentIndex(max(i, 0))
                elif kind == "bool":
                    w.setChecked(bool(v))
                elif kind in ("int", "float"):
                    w.setValue(v if v is not None else 0)
                elif kind == "window":
                    w.setCurrentText(window_text(v) if v is not None else "hann")
                else:
                    w.setText("" if v is None else _to_text(v))
            finally:
                w.blockSignals(False)

    def values(self) -> dict[str, Any]:
        """The parameters; raises InputError naming a field that cannot be read."""
        out: dict[str, Any] = {}
        for p in self.schema:
            name = p["name"]
            w, kind = self._widgets[name], self._kinds[name]
            if kind == "choice":
                out[name] = w.currentData()
            elif kind == "bool":
                out[name] = w.isChecked()
            elif kind in ("int", "float"):
                out[name] = w.value()
            elif kind == "window":
                out[name] = w.currentText().strip()
            else:
                text = w.text().strip()
                if not text:
                    if p.get("required"):
                        raise InputError(f"{name} is required")
                    out[name] = None
                else:
                    out[name] = _parse(text, p)
        return out


def _bound(v: Any, fallback: int) -> int:
    if v is None or not math.isfinite(float(v)):
        return fallback
    return int(max(-_BIG, min(_BIG, v)))


def _step(default: Any) -> float:
    try:
        d = abs(float(default))
    except (TypeError, ValueError):
        return 1.0
    return 10.0 ** math.floor(math.log10(d)) / 10 if d > 0 else 0.1


def _range_text(p: dict[str, Any]) -> str:
    lo, hi, unit = p.get("min"), p.get("max"), p.get("unit") or ""
    if lo is not None and hi is not None:
        return f"{lo}…{hi} {unit}".strip()
    if lo is not None:
        return f"≥ {lo} {unit}".strip()
    if hi is not None:
        return f"≤ {hi} {unit}".strip()
    return unit


def _to_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _parse(text: str, p: dict[str, Any]) -> Any:
    t = p.get("type")
    try:
        if t == "int":
            return int(text)
        if t == "float":
            return float(text)
        if t == "str":
            return text
        return json.loads(text)
    except ValueError:
        if t in ("str", "any"):
            return text
        raise InputError(f"{p['name']}={text!r} is not a valid {t} "
                         "(numbers, or JSON lists such as [1, 2, 3])") from None
