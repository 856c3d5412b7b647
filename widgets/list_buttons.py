"""ListButtons: the Add ▾ / Remove / ↑ / ↓ row under an ordered list (steps, filters)."""

from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import QHBoxLayout, QMenu, QPushButton, QToolButton, QWidget

__all__ = ["ListButtons"]


class ListButtons(QWidget):
    """Buttons that edit an ordered list: an Add menu, Remove, and move up / down.

    Parameters
    ----------
    menu : QMenu or None, optional
        The menu the Add button opens.
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    removeClicked()
        Remove was clicked.
    moveClicked(int)
        -1 for up (earlier), +1 for down (later).
    """

    removeClicked = pyqtSignal()
    moveClicked = pyqtSignal(int)

    def __init__(self, menu: QMenu | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.add = QToolButton()
        self.add.setText("Add ▾")
        self.add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        if menu is not None:
            self.add.setMenu(menu)
        self.remove = QPushButton("Remove")
        self.up = QPushButton("↑")
        self.down = QPushButton("↓")
        for b in (self.up, self.down):
            b.setMaximumWidth(36)
        self.remove.clicked.connect(self.removeClicked)
        self.up.clicked.connect(self._up)
        self.down.clicked.connect(self._down)
        for w in (self.add, self.remove, self.up, self.down):
            row.addWidget(w)
        row.addStretch(1)

    def _up(self) -> None:
        self.moveClicked.emit(-1)

    def _down(self) -> None:
        self.moveClicked.emit(+1)
