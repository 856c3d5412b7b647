"""RegionPanel: the region tools, the regions drawn with their areas, and what to do to one.

The panel shows what it is given and says what the person asked for as signals: a
tool (Box, Lasso, Brush, Harmonics), a region of the list made current or forgotten,
an operation on the current region (Attenuate, Gain, Remove, Isolate) with the dB and
feather fields (:meth:`RegionPanel.values`), and what the view shows of the edits
(after, before, difference).  Whoever owns the regions makes the edits.
"""

from __future__ import annotations

from collections.abc import Sequence

from PyQt6.QtCore import QSize, Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from .detect_panel import narrow
from .messages import ElidedLabel

__all__ = [
    "COMPARE",
    "DEFAULT_DB",
    "DEFAULT_FEATHER_HZ",
    "DEFAULT_FEATHER_MS",
    "LIST_MIN_HEIGHT",
    "OPERATIONS",
    "TOOLS",
    "RegionPanel",
]

#: the tools and their buttons' text, in order
TOOLS = (("box", "Box"), ("lasso", "Lasso"), ("brush", "Brush"), ("harmonics", "Harmonics"))
#: the operations and their buttons' text, in order
OPERATIONS = (("attenuate", "Attenuate"), ("gain", "Gain"), ("remove", "Remove"),
              ("isolate", "Isolate"))
#: least height of the list of regions (pixels): it gives way to the fields and buttons,
#: which keep their height
LIST_MIN_HEIGHT = 30
#: what the view can show of the edits, in the Show list's order
COMPARE = ("after", "before", "difference")
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
        # one line (the whole of it in the tool tip): the list gives way, never the fields
        self.status = ElidedLabel(_HINT, elide=Qt.TextElideMode.ElideRight)
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
        # the list takes what the dock leaves (it scrolls itself); the fields and the
        # buttons acting on the region keep their height, in view
        listed = QHBoxLayout()
        self.list = QListWidget()
        self.list.setMinimumHeight(LIST_MIN_HEIGHT)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._row_chosen)
        listed.addWidget(self.list, 1)
        side = QVBoxLayout()
        self.forget = QPushButton("Forget")
        self.forget.setToolTip("Take the chosen region off the list (the edits made with it "
                               "stay)")
        self.forget.clicked.connect(self._forget)
        side.addWidget(self.forget)
        self.compare = QComboBox()
        for mode in COMPARE:
            self.compare.addItem(f"Show {mode}", mode)
        self.compare.setToolTip("Show the recording after the region edits, before them, or "
                                "the difference in dB (while the filter designer's filters "
                                "are applied: before and after them)")
        self.compare.currentIndexChanged.connect(
            lambda i: self.compareChanged.emit(self.compare.itemData(i)))
        side.addWidget(self.compare)
        side.addStretch(1)
        listed.addLayout(side)
        lay.addLayout(listed, 1)
        self.db = _spin(-200.0, 200.0, DEFAULT_DB, " dB", 1)
        self.db.setToolTip("How much Attenuate lowers and Gain raises the region")
        self.feather_ms = _spin(0.0, 10000.0, DEFAULT_FEATHER_MS, " ms", 1)
        self.feather_hz = _spin(0.0, 1e6, DEFAULT_FEATHER_HZ, " Hz", 1)
        for w in (self.feather_ms, self.feather_hz):
            w.setToolTip("How far outside the region the change fades out (the dashed "
                         "outline)")
            w.valueChanged.connect(self._feather_edited)
        self.harmonics = QSpinBox()
        self.harmonics.setRange(1, 64)
        self.harmonics.setValue(4)
        self.harmonics.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.harmonics.setToolTip("How many harmonics a Harmonics box takes (the box is the "
                                  "first)")
        self.harmonics.valueChanged.connect(self.harmonicsChanged)
        self.brush = _spin(2.0, 200.0, 12.0, " px", 0)
        self.brush.setToolTip("The brush's radius on the screen")
        self.brush.valueChanged.connect(self.brushChanged)
        # a row each, so the dock stays as narrow as its neighbours
        for cells in ((("Attenuate, gain by", self.db),),
                      (("Feather", self.feather_ms), (None, self.feather_hz)),
                      (("Harmonics", self.harmonics), ("Brush", self.brush))):
            row = QHBoxLayout()
            for caption, w in cells:
                if caption:
                    label = QLabel(caption)
                    label.setBuddy(w)
                    row.addWidget(label)
                row.addWidget(w, 1)
            lay.addLayout(row)
        ops = QHBoxLayout()
        #: the operation buttons, by operation
        self.operation_buttons: dict[str, QPushButton] = {}
        for op, text in OPERATIONS:
            b = QPushButton(text)
            narrow(b)
            b.setToolTip(_OPERATION_TIPS[op])
            b.clicked.connect(lambda _=False, o=op: self.operationRequested.emit(o))
            self.operation_buttons[op] = b
            ops.addWidget(b)
        lay.addLayout(ops)
        self.set_regions([], None)

    def sizeHint(self) -> QSize:
        """As wide as it can be at least (its status line and fields would ask for their
        whole text): the docks beside it set the column's width."""
        return QSize(self.minimumSizeHint().width(), super().sizeHint().height())

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
        self.compare.setCurrentIndex(max(self.compare.findData(mode), 0))
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
