"""The profiler panel: time per operator and backend of the last jobs.

A sortable table (operator, backend, calls, total ms, mean ms), like the
per-call timings a framework's profiler shows.  The panel only shows rows it is
given (:meth:`ProfilerPanel.show_rows`); who collects them is not its business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

__all__ = ["COLUMNS", "ProfilerPanel"]

COLUMNS = ("operator", "backend", "calls", "total ms", "mean ms")


class _NumberItem(QTableWidgetItem):
    """A cell that sorts by its number, not its text."""

    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.value = float(value)
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _NumberItem):
            return self.value < other.value
        return super().__lt__(other)


class ProfilerPanel(QWidget):
    """Operator calls of the last jobs, one row per (operator, backend).

    Parameters
    ----------
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    clearRequested()
        The Clear button was pressed.
    """

    clearRequested = pyqtSignal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("No jobs profiled yet")
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clearRequested)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(clear)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.Stretch)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table)

    def show_rows(self, rows: Iterable[Mapping[str, Any]], jobs: int = 0) -> None:
        """Show ``rows`` (``operator``, ``backend``, ``calls``, ``seconds``), keeping the sort.

        ``jobs`` is how many jobs the rows cover (for the summary line).
        """
        rows = list(rows)
        header = self.table.horizontalHeader()
        column, order = header.sortIndicatorSection(), header.sortIndicatorOrder()
        self.table.setSortingEnabled(False)  # filling a sorted table reorders mid-way
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            calls, seconds = int(r["calls"]), float(r["seconds"])
            mean = seconds / calls if calls else 0.0
            self.table.setItem(i, 0, QTableWidgetItem(str(r["operator"])))
            self.table.setItem(i, 1, QTableWidgetItem(str(r["backend"])))
            self.table.setItem(i, 2, _NumberItem(calls, str(calls)))
            self.table.setItem(i, 3, _NumberItem(seconds, f"{seconds * 1e3:.1f}"))
            self.table.setItem(i, 4, _NumberItem(mean, f"{mean * 1e3:.3f}"))
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(column, order)
        total = sum(float(r["seconds"]) for r in rows)
        self.summary.setText(f"{jobs} job{'s' if jobs != 1 else ''}: "
                             f"{sum(int(r['calls']) for r in rows)} operator calls, "
                             f"{total * 1e3:.1f} ms" if rows else "No operator calls yet")

    def rows(self) -> list[dict[str, Any]]:
        """What the table shows, in its order (for tests and copying)."""
        out = []
        for i in range(self.table.rowCount()):
            cells = [self.table.item(i, c) for c in range(len(COLUMNS))]
            out.append({"operator": cells[0].text(), "backend": cells[1].text(),
                        "calls": int(cells[2].value), "seconds": cells[3].value,
                        "mean_seconds": cells[4].value})
        return out
