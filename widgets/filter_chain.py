"""FilterChain: the list of filters the designer applies one after the other.

Each row is one filter, named by the caller ("notch 49.93 Hz"), with a check
box that enables or disables it; buttons add a filter (from a menu of
kinds), remove the current one or move it up or down.  The widget knows
nothing of filters: it shows rows it is given and says what the person asked
for, so every change can become one undoable step elsewhere.

Signals
-------
currentChanged(int)
    The person selected another row.
enabledChanged(int, bool)
    A row's check box was clicked.
moveRequested(int, int)
    Move the filter at the first index to the second.
removeRequested(int)
    Remove the filter at that index.
addRequested(str)
    Add a filter of that kind (one of :data:`KINDS`).
"""

from __future__ import annotations

from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.filters.defaults import STARTER_KINDS

from .list_buttons import ListButtons

__all__ = ["KINDS", "FilterChain"]

#: kinds of filter the Add menu offers, with their menu text (the core's new filters:
#: :func:`~specscope.compute.filters.defaults.starter`)
KINDS = STARTER_KINDS


class FilterChain(QWidget):
    """The designer's filters in order, each enabled or not (see the module documentation).

    Parameters
    ----------
    parent : QWidget or None, optional
        The parent widget.
    """

    currentChanged = pyqtSignal(int)
    enabledChanged = pyqtSignal(int, bool)
    moveRequested = pyqtSignal(int, int)
    removeRequested = pyqtSignal(int)
    addRequested = pyqtSignal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("Filters (top first)"))
        self.list = QListWidget()
        self.list.setMaximumHeight(110)
        self.list.setToolTip("The filters applied in order; unchecked ones are left out")
        self.list.currentRowChanged.connect(self._row_changed)
        self.list.itemChanged.connect(self._item_changed)
        lay.addWidget(self.list)
        menu = QMenu(self)
        for kind, text in KINDS.items():
            act = menu.addAction(text)
            act.setData(kind)
            act.triggered.connect(lambda _=False, k=kind: self.addRequested.emit(k))
        self.buttons = ListButtons(menu)
        self.add, self.remove = self.buttons.add, self.buttons.remove
        self.up, self.down = self.buttons.up, self.buttons.down
        self.add.setToolTip("Add a filter to the chain")
        self.remove.setToolTip("Remove the selected filter")
        self.up.setToolTip("Apply the selected filter earlier")
        self.down.setToolTip("Apply the selected filter later")
        self.buttons.removeClicked.connect(self._remove)
        self.buttons.moveClicked.connect(self._move)
        lay.addWidget(self.buttons)
        self._update_buttons()

    def set_filters(self, rows: list[tuple[str, bool]], current: int) -> None:
        """Show these rows (name, enabled) with row ``current`` selected; no signal."""
        self.list.blockSignals(True)
        self.list.clear()
        for name, enabled in rows:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked)
            item.setToolTip(f"{name}: {'applied' if enabled else 'left out'}")
            self.list.addItem(item)
        if rows:
            self.list.setCurrentRow(min(max(current, 0), len(rows) - 1))
        self.list.blockSignals(False)
        self._update_buttons()

    def rows(self) -> list[tuple[str, bool]]:
        """The rows shown: (name, enabled)."""
        return [(self.list.item(i).text(),
                 self.list.item(i).checkState() == Qt.CheckState.Checked)
                for i in range(self.list.count())]

    def current(self) -> int:
        """The selected row (-1 when the chain is empty)."""
        return self.list.currentRow()

    def _update_buttons(self) -> None:
        i, n = self.list.currentRow(), self.list.count()
        self.remove.setEnabled(0 <= i < n)
        self.up.setEnabled(0 < i < n)
        self.down.setEnabled(0 <= i < n - 1)

    def _row_changed(self, i: int) -> None:
        self._update_buttons()
        if i >= 0:
            self.currentChanged.emit(i)

    def _item_changed(self, item: QListWidgetItem) -> None:
        row, on = self.list.row(item), item.checkState() == Qt.CheckState.Checked
        # said once the click is over: the receiver may rebuild the rows
        QTimer.singleShot(0, lambda: self.enabledChanged.emit(row, on))

    def _remove(self) -> None:
        i = self.list.currentRow()
        if i >= 0:
            self.removeRequested.emit(i)

    def _move(self, d: int) -> None:
        i = self.list.currentRow()
        if 0 <= i and 0 <= i + d < self.list.count():
            self.moveRequested.emit(i, i + d)
