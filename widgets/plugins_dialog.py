"""PluginsDialog: which plugins were found, which loaded, which failed and why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PyQt6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

COLUMNS = ("name", "version", "source", "status", "operators", "error")


class PluginsDialog(QDialog):
    """A table of plugin descriptions (``Plugin.to_dict(traceback=True)`` dicts).

    ``refresh`` is called by the Rescan button and returns fresh descriptions.
    """

    def __init__(self, plugins: list[dict[str, Any]], problems: list[str],
                 refresh: Callable[[], tuple[list[dict[str, Any]], list[str]]] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Plugins")
        self.resize(900, 420)
        self._refresh = refresh
        lay = QVBoxLayout(self)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([c.capitalize() for c in COLUMNS])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.currentCellChanged.connect(lambda r, *_: self._details(r))
        lay.addWidget(self.table)
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: #c00000;")
        lay.addWidget(self.problems)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(140)
        lay.addWidget(self.details)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        rescan = QPushButton("Rescan")
        rescan.setEnabled(refresh is not None)
        rescan.clicked.connect(self.rescan)
        buttons.addButton(rescan, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.set_plugins(plugins, problems)

    def set_plugins(self, plugins: list[dict[str, Any]], problems: list[str]) -> None:
        self._plugins = plugins
        self.table.setRowCount(len(plugins))
        for r, p in enumerate(plugins):
            for c, key in enumerate(COLUMNS):
                v = p.get(key)
                text = ", ".join(v) if isinstance(v, list) else ("" if v is None else str(v))
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.problems.setText("\n".join(problems))
        self._details(0)

    def rescan(self) -> None:
        if self._refresh is not None:
            self.set_plugins(*self._refresh())

    def _details(self, row: int) -> None:
        if not 0 <= row < len(self._plugins):
            self.details.setPlainText("")
            return
        p = self._plugins[row]
        lines = [f"{p.get('name')} — {p.get('summary') or ''}", f"path: {p.get('path')}"]
        if p.get("error"):
            lines.append(f"error: {p['error']}")
        for w in p.get("warnings") or []:
            lines.append(f"warning: {w}")
        for e in p.get("call_errors") or []:
            lines.append(f"call failed: {e}")
        if p.get("traceback"):
            lines.append(p["traceback"])
        self.details.setPlainText("\n".join(lines))
