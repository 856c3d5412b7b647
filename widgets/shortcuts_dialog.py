"""ShortcutsDialog: the keyboard shortcuts and gestures, one row each (F1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PyQt6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

COLUMNS = ("Keys", "Action", "Where", "What it does")


@dataclass(frozen=True)
class ShortcutRow:
    """One row of the list: the keys, the action's text, where it lives, what it does."""

    keys: str
    text: str
    where: str
    help: str = ""


class ShortcutsDialog(QDialog):
    """A read-only table of :class:`ShortcutRow` (menu shortcuts first, then gestures)."""

    def __init__(self, rows: Sequence[ShortcutRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(860, 560)
        self.rows = list(rows)
        lay = QVBoxLayout(self)
        self.table = QTableWidget(len(self.rows), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        for col in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        for i, row in enumerate(self.rows):
            for j, value in enumerate((row.keys, row.text, row.where, row.help)):
                item = QTableWidgetItem(value)
                item.setToolTip(row.help)
                self.table.setItem(i, j, item)
        lay.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
