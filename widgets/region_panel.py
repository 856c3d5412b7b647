"""RegionPanel: the region tools, the regions drawn with their areas, and what to do to one.

The panel shows what it is given and says what the person asked for as signals: a
tool (Box, Lasso, Brush, Harmonics), a region of the list made current or forgotten,
an operation on the current region (Attenuate, Gain, Remove, Isolate) with the dB and
feather fields (:meth:`RegionPanel.values`), and what the view shows of the edits
(after, before, difference).  Whoever owns the regions makes the edits.
"""

from __future__ import annotations

from collections.abc import Sequence

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from .detect_panel import FittingScroll, narrow

__all__ = ["DEFAULT_DB", "DEFAULT_FEATHER_HZ", "DEFAULT_FEATHER_MS", "FIELDS_MIN_HEIGHT",
           "OPERATIONS", "TOOLS", "RegionPanel"]

#: the tools and their buttons' text, in order
TOOLS = (("box", "Box"), ("lasso", "Lasso"), ("brush", "Brush"), ("harmonics", "Harmonics"))
#: the operations and their buttons' text, in order
OPERATIONS = (("attenuate", "Attenuate"), ("gain", "Gain"), ("remove", "Remove"),
              ("isolate", "Isolate"))
#: least height of the list and fields (pixels): below their own height they scroll, while
#: the buttons under them stay in view
FIELDS_MIN_HEIGHT = 60
#: a new edit's dB (attenuate lowers, gain raises by it) and feather
DEFAULT_DB = 20.0
DEFAULT_FEATHER_MS = 10.0
DEFAULT_FEATHER_HZ = 50.0
#: what each operation's button says it does
_OPERATION_TIPS = {
    "attenuate": "Lower the region by the dB given (a processing step; Ctrl+Z undoes it)",
    "gain": "Raise the region by the dB given (a processing step; Ctrl+Z undoes it)",
    "remove": "Lower the region to the level around it, keeping the background "
              "(a processing step; Ctrl+Z undoes it)",
    "isolate": "Keep only the region, silence the rest (a processing step; Ctrl+Z undoes it)",
}
_HINT = ("Draw a region: Lasso O, Brush B (Shift erases), Box S, Harmonics Shift+H, or "
         "Ctrl+drag a box")


class RegionPanel(QWidget):
    """The Regions dock's contents.

    Parameters
    ----------
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    toolChosen(str)
        A tool's button was toggled: the tool, ``""`` when it was turned off.
    regionChosen(int)
        A row of the list was chosen: its index.
    forgetRequested(int)
        Forget the region of this row.
    operationRequested(str)
        An operation's button: ``"attenuate"``, ``"gain"``, ``"remove"`` or ``"isolate"``.
    featherChanged(float, float)
        The feather fields changed: ms, Hz.
    harmonicsChanged(int), brushChanged(float)
        The harmonics count, the brush radius (screen pixels).
    compareChanged(str)
        What the view shows of the edits: ``"after"``, ``"before"`` or ``"difference"``.
    """

    toolChosen = pyqtSignal(str)
    regionChosen = pyqtSignal(int)
    forgetRequested = pyqtSignal(int)
    operationRequested = pyqtSignal(str)
    featherChanged = pyqtSignal(float, float)
    harmonicsChanged = pyqtSignal(int)
    brushChanged = pyqtSignal(float)
    compareChanged = pyqtSignal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.status = QLabel(_HINT)
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        tools = QHBoxLayout()
        #: the tool buttons, by tool
        self.tool_buttons: dict[str, QPushButton] = {}
        for tool, text in TOOLS:
            b = QPushButton(text)
            b.setCheckable(True)
            narrow(b)
            b.toggled.connect(lambda on, t=tool: self._tool_toggled(t, on))
            self.tool_buttons[tool] = b
            tools.addWidget(b)
        lay.addLayout(tools)
        # the list and the fields scroll in what the dock leaves; the buttons acting on
        # the region stay below them, in view
        middle = QWidget()
        inner = QVBoxLayout(middle)
        inner.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setMinimumHeight(40)
        self.list.setMaximumHeight(66)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._row_chosen)
        inner.addWidget(self.list)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        self.db = _spin(-200.0, 200.0, DEFAULT_DB, " dB", 1)
        self.db.setToolTip("How much Attenuate lowers and Gain raises the region")
        self.feather_ms = _spin(0.0, 10000.0, DEFAULT_FEATHER_MS, " ms", 1)
        self.feather_hz = _spin(0.0, 1e9, DEFAULT_FEATHER_HZ, " Hz", 1)
        for w in (self.feather_ms, self.feather_hz):
            w.setToolTip("How far outside the region the change fades out (the dashed "
                         "outline)")
            w.valueChanged.connect(self._feather_edited)
        feather = QHBoxLayout()
        feather.addWidget(self.feather_ms)
        feather.addWidget(self.feather_hz)
        self.harmonics = QSpinBox()
        self.harmonics.setRange(1, 64)
        self.harmonics.setValue(4)
        self.harmonics.setToolTip("How many harmonics a Harmonics box takes (the box is the "
                                  "first)")
        self.harmonics.valueChanged.connect(self.harmonicsChanged)
        self.brush = _spin(2.0, 200.0, 12.0, " px", 0)
        self.brush.setToolTip("The brush's radius on the screen")
        self.brush.valueChanged.connect(self.brushChanged)
        shapes = QHBoxLayout()
        shapes.addWidget(self.harmonics)
        shapes.addWidget(self.brush)
        form.addRow("Attenuate, gain", self.db)
        form.addRow("Feather", feather)
        form.addRow("Harmonics, brush", shapes)
        inner.addLayout(form)
        self.fields_scroll = FittingScroll(middle, FIELDS_MIN_HEIGHT, grow=True)
        lay.addWidget(self.fields_scroll, 1)
        grid = QGridLayout()
        #: the operation buttons, by operation
        self.operation_buttons: dict[str, QPushButton] = {}
        for k, (op, text) in enumerate(OPERATIONS):
            b = QPushButton(text)
            narrow(b)
            b.setToolTip(_OPERATION_TIPS[op])
            b.clicked.connect(lambda _=False, o=op: self.operationRequested.emit(o))
            self.operation_buttons[op] = b
            grid.addWidget(b, k // 2, k % 2)
        lay.addLayout(grid)
        row = QHBoxLayout()
        self.forget = QPushButton("Forget")
        narrow(self.forget)
        self.forget.setToolTip("Take the chosen region off the list (the edits made with it "
                               "stay)")
        self.forget.clicked.connect(self._forget)
        row.addWidget(self.forget)
        row.addStretch(1)
        row.addWidget(QLabel("Show"))
        self.compare = QComboBox()
        self.compare.addItems(["after", "before", "difference"])
        self.compare.setToolTip("Show the recording after the region edits, before them, or "
                                "the difference in dB (while the filter designer's filters "
                                "are applied: before and after them)")
        self.compare.currentTextChanged.connect(self.compareChanged)
        row.addWidget(self.compare)
        lay.addLayout(row)
        self.set_regions([], None)

    # -- what is shown ---------------------------------------------------------------------
    def set_tool(self, tool: str) -> None:
        """Show ``tool`` as the one in use (``""``: none); no signal."""
        for t, b in self.tool_buttons.items():
            b.blockSignals(True)
            b.setChecked(t == tool)
            b.blockSignals(False)

    def set_regions(self, texts: Sequence[str], current: int | None) -> None:
        """List the regions (one line each), ``current`` chosen; no signal."""
        self.list.blockSignals(True)
        self.list.clear()
        for k, text in enumerate(texts):
            self.list.addItem(f"{k + 1}. {text}")
            self.list.item(k).setToolTip(text)
        if current is not None and 0 <= current < len(texts):
            self.list.setCurrentRow(current)
        self.list.blockSignals(False)
        has = current is not None and 0 <= current < len(texts)
        for b in self.operation_buttons.values():
            b.setEnabled(has)
        self.forget.setEnabled(has)
        self.status.setText(f"Current: {texts[current]}" if has else _HINT)

    def set_compare(self, mode: str) -> None:
        """Show ``mode`` as what the view shows of the edits; no signal."""
        self.compare.blockSignals(True)
        self.compare.setCurrentText(mode)
        self.compare.blockSignals(False)

    def values(self) -> dict[str, float]:
        """``db``, ``feather_ms`` and ``feather_hz`` as the fields say."""
        return {"db": float(self.db.value()), "feather_ms": float(self.feather_ms.value()),
                "feather_hz": float(self.feather_hz.value())}

    # -- gestures ------------------------------------------------------------------------
    def _tool_toggled(self, tool: str, on: bool) -> None:
        if on:
            self.set_tool(tool)  # one at a time
        self.toolChosen.emit(tool if on else "")

    def _row_chosen(self, row: int) -> None:
        if row >= 0:
            self.regionChosen.emit(row)

    def _forget(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.forgetRequested.emit(row)

    def _feather_edited(self) -> None:
        self.featherChanged.emit(float(self.feather_ms.value()), float(self.feather_hz.value()))


def _spin(low: float, high: float, value: float, suffix: str, decimals: int) -> QDoubleSpinBox:
    w = QDoubleSpinBox()
    w.setRange(low, high)
    w.setDecimals(decimals)
    w.setValue(value)
    w.setSuffix(suffix)
    w.setKeyboardTracking(False)
    w.setAlignment(Qt.AlignmentFlag.AlignRight)
    return w
