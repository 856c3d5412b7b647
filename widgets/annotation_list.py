"""AnnotationList: the table of a recording's annotations, with a search field.

Columns: start, stop, low, high, label, generator (the comment is the row's
tooltip); the band's edges read in Hz, kHz or MHz (``100.03 MHz``) and sort as
numbers.  Start and stop read in seconds from the recording's first sample, or, on
a recording with absolute times (:meth:`AnnotationList.set_timeline`: a deployment),
as the date and time the readout writes (``2024-05-01 14:30:05.250 UTC``), with the
file the time falls in and the time into it as the cell's tooltip.  The search field keeps the rows whose label or comment contains its
text (case-insensitive).  Rows are sorted by start unless a header is clicked.
A click on a row asks to jump to it; a double-click (or F2) on a label edits it
in place.  The list never changes an annotation itself: an edited label is
reported with :attr:`AnnotationList.labelEdited` and comes back through
:meth:`AnnotationList.set_annotations`, so whoever owns them can make it an
undoable step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PyQt6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    pyqtSignal,
)
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.annotations import Annotation
from specscope.compute.deployment.timeline import offset_text
from specscope.compute.freqfmt import format_frequency

from .annotation_layer import label_color

__all__ = ["COLUMNS", "DATE_COLUMNS", "AnnotationList", "AnnotationTableModel"]

#: the table's columns
COLUMNS = ("Start (s)", "Stop (s)", "Low", "High", "Label", "Generator", "Channel")
#: the time columns' titles on a recording with absolute times
DATE_COLUMNS = ("Start", "Stop")
CHANNEL_COLUMN = 6
LABEL_COLUMN = 4
#: the role holding a cell's value for sorting (numbers sort as numbers)
SORT_ROLE = Qt.ItemDataRole.UserRole
UUID_ROLE = Qt.ItemDataRole.UserRole + 1


#: a band edge is shown to this step (Hz) unless the list is given a coarser one, as
#: exactly as it is known within it
EDGE_DIGITS_HZ = 0.1
#: the widest band edge a column makes room for at first
_EDGE_TEMPLATE = "000.0000000 MHz"
#: the width (px) of a time column in seconds
TIME_WIDTH = 80


def _hz(f: float | None, resolution: float | None = None) -> str:
    """A band edge with its unit: ``"850.5 Hz"``, ``"100.03 MHz"``, ``"—"`` for none; to
    the digits ``resolution`` (Hz) tells when given."""
    if f is None:
        return "—"
    if resolution is not None and resolution > EDGE_DIGITS_HZ:
        return format_frequency(f, resolution)
    return format_frequency(round(f / EDGE_DIGITS_HZ) * EDGE_DIGITS_HZ)


class AnnotationTableModel(QAbstractTableModel):
    """Annotations as table rows; an edit of a label is reported, not applied.

    Parameters
    ----------
    parent : QObject or None, optional
        The Qt parent.

    Signals
    -------
    labelEdited(str, str)
        The uuid of the row whose label was edited, and the new label.
    """

    labelEdited = pyqtSignal(str, str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.annotations: list[Annotation] = []
        #: the step (Hz) the band edges are shown to; None: :data:`EDGE_DIGITS_HZ`
        self.resolution_hz: float | None = None
        #: the absolute times of the recording (a ``Timeline``); None: seconds
        self.timeline = None

    def set_annotations(self, annotations: Sequence[Annotation]) -> None:
        self.beginResetModel()
        self.annotations = list(annotations)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.annotations)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            if self.timeline is not None and section < 2:
                return DATE_COLUMNS[section]
            return COLUMNS[section]
        return None

    def _when(self, t: float) -> str:
        """``t`` s on the recording's axis as the readout writes it."""
        tl = self.timeline
        return f"{t:.4f}" if tl is None else tl.format(tl.to_time(t))

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        a = self.annotations[index.row()]
        col = index.column()
        values = (a.start_s, a.stop_s, a.freq_low_hz, a.freq_high_hz, a.label, a.generator,
                  a.channel)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            v = values[col]
            if col == CHANNEL_COLUMN:  # counted from 0, as the Channel box and the bands
                return "all" if v is None else str(v)
            if col < 2:
                return self._when(v)
            if col < 4:
                return _hz(v, self.resolution_hz)
            return v
        if role == SORT_ROLE:
            v = values[col]
            return float("-inf") if v is None else v
        if role == UUID_ROLE:
            return a.uuid
        if role == Qt.ItemDataRole.ToolTipRole:
            at = self.timeline.file_at(values[col]) if (
                col < 2 and self.timeline is not None) else None
            if at is not None:  # the file the time falls in, and the time into it
                where = f"{at[0]} {offset_text(at[1])}"
                return f"{where}\n{a.comment}" if a.comment else where
            return a.comment or None
        if role == Qt.ItemDataRole.ForegroundRole and col == LABEL_COLUMN:
            return QColor(*label_color(a.label)).darker(180)  # readable on white
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        f = super().flags(index)
        return f | Qt.ItemFlag.ItemIsEditable if index.column() == LABEL_COLUMN else f

    def setData(self, index: QModelIndex, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or index.column() != LABEL_COLUMN:
            return False
        a = self.annotations[index.row()]
        if str(value) != a.label:
            self.labelEdited.emit(a.uuid, str(value))
        return True


class _Filter(QSortFilterProxyModel):
    """Rows whose label or comment contains the search text."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.text = ""

    def set_text(self, text: str) -> None:
        self.text = text.strip().lower()
        self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:
        if not self.text:
            return True
        a = self.sourceModel().annotations[row]
        return self.text in a.label.lower() or self.text in a.comment.lower()


class AnnotationList(QWidget):
    """A search field over a table of annotations.

    Parameters
    ----------
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    jumpRequested(str)
        A row was clicked: the uuid of its annotation.
    labelEdited(str, str)
        A label was edited in place: uuid, new label.
    """

    jumpRequested = pyqtSignal(str)
    labelEdited = pyqtSignal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search label or comment")
        self.search.setClearButtonEnabled(True)
        self.count = QLabel("no annotations")
        self.model = AnnotationTableModel(self)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # typing a letter never starts an edit: N and P navigate
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        edge = self.fontMetrics().horizontalAdvance(_EDGE_TEMPLATE) + 12
        for col, width in enumerate((TIME_WIDTH, TIME_WIDTH, edge, edge, 140, 160)):
            self.table.setColumnWidth(col, width)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self.search.textChanged.connect(self._search)
        self.table.clicked.connect(self._clicked)
        self.model.labelEdited.connect(self.labelEdited)

    def set_annotations(self, annotations: Sequence[Annotation]) -> None:
        """Show ``annotations``; the current row stays on the same annotation."""
        current = self.current()
        self.model.set_annotations(annotations)
        self._update_count()
        if current is not None:
            self.set_current(current)

    def set_frequency_resolution(self, hz: float | None) -> None:
        """Show the band edges to the digits ``hz`` tells (a frequency bin of the view);
        None: to :data:`EDGE_DIGITS_HZ`.  Sorting stays by the exact values."""
        if hz is not None and not (math.isfinite(hz) and hz > 0):
            hz = None
        if hz != self.model.resolution_hz:
            self.model.resolution_hz = hz
            n = self.model.rowCount()
            if n:
                self.model.dataChanged.emit(self.model.index(0, 2), self.model.index(n - 1, 3))

    def set_timeline(self, timeline) -> None:
        """Show start and stop as dates and times of ``timeline`` (a
        :class:`~specscope.compute.deployment.timeline.Timeline`); None: seconds from the
        recording's first sample.  Sorting stays by the axis times."""
        if timeline is self.model.timeline:
            return
        self.model.timeline = timeline
        if timeline is None:
            width = TIME_WIDTH
        else:  # room for the longest date and time the column writes
            sample = timeline.format(timeline.end)
            width = max(TIME_WIDTH, self.fontMetrics().horizontalAdvance(sample + "0") + 12)
        for col in (0, 1):
            self.table.setColumnWidth(col, width)
        self.model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, 1)
        n = self.model.rowCount()
        if n:
            self.model.dataChanged.emit(self.model.index(0, 0), self.model.index(n - 1, 1))

    def _search(self, text: str) -> None:
        self.proxy.set_text(text)
        self._update_count()

    def _update_count(self) -> None:
        n, shown = self.model.rowCount(), self.proxy.rowCount()
        self.count.setText((f"{n} annotation" + ("" if n == 1 else "s")) if shown == n
                           else f"{shown} of {n}")

    def _clicked(self, index: QModelIndex) -> None:
        uuid = index.data(UUID_ROLE)
        if uuid:
            self.jumpRequested.emit(uuid)

    def row_count(self) -> int:
        """Rows shown (after the search)."""
        return self.proxy.rowCount()

    def ordered(self) -> list[str]:
        """Uuids of the rows shown, in the table's order."""
        return [self.proxy.index(r, 0).data(UUID_ROLE) for r in range(self.proxy.rowCount())]

    def row_of(self, uuid: str) -> int:
        """The row shown for ``uuid``; -1 when it is filtered out or unknown."""
        for r, a in enumerate(self.model.annotations):
            if a.uuid == uuid:
                return self.proxy.mapFromSource(self.model.index(r, 0)).row()
        return -1

    def current(self) -> str | None:
        """The uuid of the selected row, None when none."""
        rows = self.table.selectionModel().selectedRows()
        return rows[0].data(UUID_ROLE) if rows else None

    def set_current(self, uuid: str | None) -> None:
        """Select and show the row of ``uuid`` (None clears the selection)."""
        row = -1 if uuid is None else self.row_of(uuid)
        sel = self.table.selectionModel()
        if row < 0:
            sel.clearSelection()
            return
        if self.table.currentIndex().row() == row and sel.isRowSelected(row):
            return  # already there: the current cell (which a key may edit) stays
        index = self.proxy.index(row, max(self.table.currentIndex().column(), 0))
        sel.setCurrentIndex(index, sel.SelectionFlag.ClearAndSelect | sel.SelectionFlag.Rows)
        self.table.scrollTo(index)

    def cell(self, uuid: str, column: int) -> str:
        """The text shown in ``column`` of ``uuid``'s row ("" when not shown)."""
        row = self.row_of(uuid)
        return "" if row < 0 else str(self.proxy.index(row, column).data())
