"""DetectPanel: choose a detector, fill its generated form, run it; list and score what it found.

The panel shows a detector's parameters as a :class:`~.param_form.ParamForm`
generated from its operator schema, where to search (the whole recording or
the visible range), Run and Cancel, the label list keys 1..9 choose from in
review, and the detections as a table (start, label, decision, score, duration,
band).  The start reads in seconds from the recording's first sample, or, on a
recording with absolute times (:meth:`DetectPanel.set_timeline`: a deployment), as the
date and time the readout writes, the file and the time into it as the cell's tooltip;
the rows stay in time order.  Its buttons only ask (signals): whoever owns the
detections runs the detector, reviews, finds similar boxes, compares and exports.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from PyQt6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, QSize, Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.deployment.timeline import offset_text
from specscope.compute.errors import SpecscopeError
from specscope.compute.freqfmt import format_frequency
from specscope.compute.operators import describe_operator

from .param_form import ParamForm

__all__ = ["CONTROLS_MIN_HEIGHT", "SCORES_MIN_HEIGHT", "SHOWN_ORDER", "TABLE_MIN_HEIGHT",
           "DetectPanel", "DetectionTable", "FittingScroll", "narrow", "parse_labels"]

#: least height of the detections table (pixels): a few rows with the header
TABLE_MIN_HEIGHT = 120
#: the height the detections table asks for when it has rows (pixels)
TABLE_HEIGHT = 240
#: least height of the strip of the detector and its form (it scrolls below its own height)
CONTROLS_MIN_HEIGHT = 90
#: the most height the strip asks for while there are detections (pixels)
CONTROLS_HEIGHT = 160
#: least height of the comparison's scores (they scroll below their own height)
SCORES_MIN_HEIGHT = 48

#: (the band's edges carry their unit: ``850 Hz``, ``100.03 MHz``)
_TITLES = ("#", "Start (s)", "Dur (ms)", "Low", "High", "Score", "Label", "Review")
#: the start column's title on a recording with absolute times
DATE_TITLE = "Start"
#: the columns in the order they are shown: the label and decision beside the start, in
#: view in a narrow dock
SHOWN_ORDER = (0, 1, 6, 7, 5, 2, 3, 4)
#: the role holding a cell's number (the start's axis seconds under a date)
SORT_ROLE = Qt.ItemDataRole.UserRole
#: parameters the panel fills itself (the template box of "Find similar")
_TEMPLATE_BOX = ("template_start_s", "template_stop_s", "template_low_hz", "template_high_hz",
                 "template_file", "template_channel")


def parse_labels(text: str) -> list[str]:
    """The label list typed as ``bat, bird, noise`` (commas; empty items dropped).

    Parameters
    ----------
    text : str
        The labels as typed.

    Returns
    -------
    list of str
        The labels, stripped, at most nine (the keys 1 to 9 of review mode).

    Examples
    --------
    >>> parse_labels("bat, bird,, noise")
    ['bat', 'bird', 'noise']
    """
    return [s.strip() for s in text.split(",") if s.strip()][:9]


class DetectionTable(QAbstractTableModel):
    """The detections as rows: a model over their arrays, each cell made when it is shown.

    A table of 100 000 detections costs nothing until it scrolls.

    Parameters
    ----------
    parent : QObject or None, optional
        The Qt parent.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._boxes = np.zeros((0, 4))
        self._scores = np.zeros(0)
        self._labels: list[str] = []
        self._states: list[str] = []
        #: the absolute times of the recording (a ``Timeline``); None: seconds
        self.timeline: Any = None

    def set_rows(self, boxes: Sequence[Sequence[float]] | np.ndarray, scores: Sequence[float],
                 labels: Sequence[str], states: Sequence[str]) -> None:
        """Rows of start s, stop s, low Hz, high Hz (NaN: no band), score, label, decision."""
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        n = len(b)
        if not len(scores) == len(labels) == len(states) == n:
            raise ValueError(f"{n} boxes with {len(scores)} scores, {len(labels)} labels "
                             f"and {len(states)} decisions")
        self.beginResetModel()
        self._boxes = b
        self._scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        self._labels, self._states = list(labels), list(states)
        self.endResetModel()

    def set_decision(self, row: int, label: str, state: str) -> None:
        if not 0 <= row < len(self._labels):
            return
        self._labels[row], self._states[row] = label, state
        self.dataChanged.emit(self.index(row, 6), self.index(row, 7))

    def _value(self, row: int, column: int) -> Any:
        b = self._boxes[row]
        if column == 0:
            return row + 1
        if column == 2:
            return float(b[1] - b[0]) * 1e3
        if column in (1, 3, 4):
            return float(b[{1: 0, 3: 2, 4: 3}[column]])
        if column == 5:
            return float(self._scores[row])
        return self._labels[row] if column == 6 else self._states[row]

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._labels)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(_TITLES)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return DATE_TITLE if section == 1 and self.timeline is not None else \
                _TITLES[section]
        return None

    def set_timeline(self, timeline: Any) -> None:
        """Show the starts as dates and times of ``timeline`` (a
        :class:`~specscope.compute.deployment.timeline.Timeline`); None: seconds."""
        if timeline is self.timeline:
            return
        self.timeline = timeline
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 1, 1)
        n = self.rowCount()
        if n:
            self.dataChanged.emit(self.index(0, 1), self.index(n - 1, 1))

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        c = index.column()
        tl = self.timeline
        if role == SORT_ROLE:
            return self._value(index.row(), c)
        if role == Qt.ItemDataRole.ToolTipRole and c == 1 and tl is not None:
            at = tl.file_at(self._value(index.row(), c))
            return None if at is None else f"{at[0]} {offset_text(at[1])}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        v = self._value(index.row(), c)
        if c == 7:
            return v or "—"
        if isinstance(v, float):
            if math.isnan(v):
                return ""
            if c in (3, 4):  # to the Hz, in Hz / kHz / MHz
                return format_frequency(float(round(v)) if math.isfinite(v) else v)
            if c == 1:
                return f"{v:.3f}" if tl is None else tl.format(tl.to_time(v))
            return f"{v:.1f}"
        return str(v)


class _HeightLayout(QVBoxLayout):
    """A column whose height does not follow its width: the dock gives the panel its
    height (down to the panel's minimum) instead of the height its wrapped labels would
    like at some other width, so the table, not the dock, takes up the difference."""

    def hasHeightForWidth(self) -> bool:
        return False


class FittingScroll(QScrollArea):
    """A scroll area that wants its contents' height and can shrink to ``least`` pixels
    (it scrolls then); the Detect and Selection panels and the settings dock use it.

    A plain scroll area wants a fixed few lines whatever it holds, and does not hear
    that its contents grew (a new form, a style applied on show): this one does.

    Parameters
    ----------
    contents : QWidget
        What scrolls.
    least : int
        The least height (pixels).
    frame : bool, optional
        Draw the scroll area's frame.
    grow : bool, optional
        False: never taller than the contents want (the rest of the height goes to the
        widgets below); True: takes what it is given.
    sideways : bool, optional
        True: narrower than its contents' least width it scrolls sideways too (in a dock
        squeezed by the docks beside it), instead of keeping the dock that wide.
    """

    #: the least width of an area that scrolls sideways (pixels)
    NARROWEST = 160
    #: the most height it asks for (pixels; None: its contents' height)
    most: int | None = None

    def __init__(self, contents: QWidget, least: int, *, frame: bool = False,
                 grow: bool = False, sideways: bool = False) -> None:
        super().__init__()
        self._least = least
        self._sideways = sideways
        self.setWidget(contents)
        self.setWidgetResizable(True)
        # its controls take the focus; the area itself would take a Tab and show nothing
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        if not frame:
            self.setFrameShape(QScrollArea.Shape.NoFrame)
        if not sideways:
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumHeight(least)
        self.setSizePolicy(QSizePolicy.Policy.Preferred,
                           QSizePolicy.Policy.Preferred if grow else QSizePolicy.Policy.Maximum)

    def _extra(self) -> QSize:
        frame = 2 * self.frameWidth()
        return QSize(frame + self.verticalScrollBar().sizeHint().width(), frame)

    def sizeHint(self) -> QSize:
        hint = self.widget().sizeHint() + self._extra()
        if self.most is not None:
            hint.setHeight(max(self._least, min(hint.height(), self.most)))
        return hint

    def set_most(self, most: int | None) -> None:
        """Ask for at most ``most`` pixels of height (None: the contents' height)."""
        if most != self.most:
            self.most = most
            self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        width = self.widget().minimumSizeHint().width() + self._extra().width()
        return QSize(min(width, self.NARROWEST) if self._sideways else width, self._least)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # the contents want another size: so does the area
        return super().eventFilter(obj, event)


class _Table(QTableView):
    """The detections' table: empty, it asks for :data:`TABLE_MIN_HEIGHT` only, so the
    form above it gets the height first; with detections it asks for
    :data:`TABLE_HEIGHT` and shares what is short with the form.  What is left over goes
    to the table."""

    wanted = TABLE_MIN_HEIGHT

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.wanted)


class _Scores(QLabel):
    """The comparison's table: shown only while it has something to say."""

    def setText(self, text: str) -> None:
        super().setText(text)
        box = self.parentWidget()
        while box is not None and not isinstance(box, QScrollArea):
            box = box.parentWidget()
        if box is not None:
            box.setVisible(bool(text))


def narrow(button: QPushButton) -> None:
    """Let ``button`` shrink to its text (styles make text buttons at least 80 px wide), so
    a row of four fits a narrow dock.

    Parameters
    ----------
    button : QPushButton
        The button; its text is set already.
    """
    room = button.fontMetrics().horizontalAdvance(button.text()) + 16
    button.setMinimumWidth(min(room, button.sizeHint().width()))


class DetectPanel(QWidget):
    """The Detect dock's contents.

    Parameters
    ----------
    detectors : sequence of str
        The detector operators offered, in order.
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    runRequested(str, dict, bool)
        Run detector ``name`` with ``params``; ``True``: the visible range only.
    cancelRequested()
    reviewRequested()
    findSimilarRequested(float)
        Template matching with the selection as template, at this threshold.
    compareRequested()
    exportRequested()
    clearRequested()
    rowActivated(int)
        A detection's row was clicked (its index).
    labelsChanged(list)
        The label list was edited.
    """

    runRequested = pyqtSignal(str, dict, bool)
    cancelRequested = pyqtSignal()
    reviewRequested = pyqtSignal()
    findSimilarRequested = pyqtSignal(float)
    compareRequested = pyqtSignal()
    exportRequested = pyqtSignal()
    clearRequested = pyqtSignal()
    rowActivated = pyqtSignal(int)
    labelsChanged = pyqtSignal(list)

    def __init__(self, detectors: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form: ParamForm | None = None
        self._values: dict[str, dict[str, Any]] = {}
        outer = _HeightLayout(self)
        # the detector, its form and the label list scroll in a strip of their own when
        # the dock is short; the buttons that act on them stay below it, always in view,
        # and the table keeps TABLE_MIN_HEIGHT
        controls = QWidget()
        top = QVBoxLayout(controls)
        top.setContentsMargins(0, 0, 0, 0)
        head = QFormLayout()
        self.detector = QComboBox()
        for name in detectors:
            if name != "detect.template":  # "Find similar" runs it on a selected box
                self.detector.addItem(name, name)
        head.addRow("Detector", self.detector)
        self.scope = QComboBox()
        self.scope.addItem("Whole recording", False)
        self.scope.addItem("Visible range", True)
        head.addRow("Search", self.scope)
        top.addLayout(head)
        self.params_box = QGroupBox("Parameters")
        self.params_box.setLayout(QVBoxLayout())
        top.addWidget(self.params_box)
        labels = QFormLayout()
        self.labels = QLineEdit("call, noise, other")
        self.labels.setToolTip("Keys 1…9 in review give these labels (commas between)")
        labels.addRow("Labels 1–9", self.labels)
        top.addLayout(labels)
        self.controls = FittingScroll(controls, CONTROLS_MIN_HEIGHT, sideways=True)
        outer.addWidget(self.controls)
        row = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        outer.addLayout(row)
        similar = QHBoxLayout()
        self.similar_button = QPushButton("Find similar")
        self.similar_button.setToolTip("Template matching: the selected box (or annotation) "
                                       "as template, over the recording")
        self.threshold = QLineEdit("0.5")
        self.threshold.setMaximumWidth(60)
        self.threshold.setToolTip("lowest correlation of a match (-1…1)")
        similar.addWidget(self.similar_button)
        similar.addWidget(QLabel("threshold"))
        similar.addWidget(self.threshold)
        outer.addLayout(similar)
        self.status = QLabel("No detections")
        self.status.setWordWrap(True)
        outer.addWidget(self.status)
        self.model = DetectionTable(self)
        self.table = _Table()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for visual, column in enumerate(SHOWN_ORDER):
            header.moveSection(header.visualIndex(column), visual)
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(TABLE_MIN_HEIGHT)
        outer.addWidget(self.table)  # Expanding: it takes the height left over
        buttons = QHBoxLayout()
        self.review_button = QPushButton("Review")
        self.review_button.setToolTip("Each detection zoomed: A accept, R reject, 1–9 label, "
                                      "N / P next / previous, Space play, Ctrl+Z undo, Esc leave")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Precision, recall and F1 per label against the "
                                       "annotations (matched by overlap)")
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Write every detection with its score and review")
        self.clear_button = QPushButton("Clear")
        for b in (self.review_button, self.compare_button, self.export_button,
                  self.clear_button):
            narrow(b)
            buttons.addWidget(b)
        outer.addLayout(buttons)
        self.scores = _Scores("")
        self.scores.setTextFormat(Qt.TextFormat.RichText)
        self.scores.setWordWrap(True)
        scores = FittingScroll(self.scores, SCORES_MIN_HEIGHT)
        scores.setVisible(False)
        outer.addWidget(scores)

        self.detector.currentIndexChanged.connect(self._detector_changed)
        self.run_button.clicked.connect(self._run)
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.similar_button.clicked.connect(self._similar)
        self.review_button.clicked.connect(self.reviewRequested)
        self.compare_button.clicked.connect(self.compareRequested)
        self.export_button.clicked.connect(self.exportRequested)
        self.clear_button.clicked.connect(self.clearRequested)
        self.table.clicked.connect(lambda index: self.rowActivated.emit(index.row()))
        self.labels.editingFinished.connect(
            lambda: self.labelsChanged.emit(parse_labels(self.labels.text())))
        self._detector_changed()
        self.set_has_detections(False)

    # -- the form ------------------------------------------------------------------------
    def current_detector(self) -> str:
        return str(self.detector.currentData() or "")

    def _detector_changed(self) -> None:
        if self.form is not None:
            try:
                self._values[self.form.objectName()] = self.form.values()
            except SpecscopeError:
                pass
            self.form.setParent(None)
            self.form.deleteLater()
            self.form = None
        name = self.current_detector()
        if not name:
            return
        try:
            schema = describe_operator(name)["params"]
        except SpecscopeError as exc:
            self.status.setText(str(exc))
            return
        self.form = ParamForm([p for p in schema if p["name"] not in _TEMPLATE_BOX],
                              self._values.get(name))
        self.form.setObjectName(name)
        self.params_box.layout().addWidget(self.form)
        if getattr(self, "controls", None) is not None:
            self.controls.updateGeometry()  # another form: another height wanted

    def set_detector(self, name: str, values: dict[str, Any] | None = None) -> None:
        """Choose ``name`` and (optionally) fill its form."""
        i = self.detector.findData(name)
        if i >= 0:
            self.detector.setCurrentIndex(i)
        if values and self.form is not None:
            self.form.set_values(values)

    def _run(self) -> None:
        if self.form is None:
            return
        try:
            values = self.form.values()
        except SpecscopeError as exc:
            self.status.setText(f"Error: {exc}")
            return
        self.runRequested.emit(self.current_detector(), values, bool(self.scope.currentData()))

    def _similar(self) -> None:
        try:
            threshold = float(self.threshold.text())
        except ValueError:
            self.status.setText(f"Error: threshold={self.threshold.text()!r} must be a number "
                                "between -1 and 1")
            return
        self.findSimilarRequested.emit(threshold)

    # -- what it shows -------------------------------------------------------------------
    def label_list(self) -> list[str]:
        return parse_labels(self.labels.text())

    def set_label_list(self, labels: Sequence[str]) -> None:
        self.labels.setText(", ".join(labels))

    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.similar_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def set_has_detections(self, has: bool) -> None:
        # with detections the table asks for more and the form for less: what a short
        # dock lacks is taken from both
        self.controls.set_most(CONTROLS_HEIGHT if has else None)
        wanted = TABLE_HEIGHT if has else TABLE_MIN_HEIGHT
        if self.table.wanted != wanted:
            self.table.wanted = wanted
            self.table.updateGeometry()
        for b in (self.review_button, self.compare_button, self.export_button,
                  self.clear_button):
            b.setEnabled(has)

    def set_timeline(self, timeline: Any) -> None:
        """Show the detections' starts as dates and times of ``timeline`` (a
        :class:`~specscope.compute.deployment.timeline.Timeline`: a deployment, a file
        stating its start); None: seconds from the recording's first sample."""
        self.model.set_timeline(timeline)

    def select_row(self, row: int) -> None:
        if 0 <= row < self.model.rowCount():
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))

    def show_scores(self, rows: Sequence[dict[str, Any]]) -> None:
        """The comparison: one line per label (precision, recall, F1, counts)."""
        def pct(v: float) -> str:
            return "—" if math.isnan(v) else f"{v * 100:.0f} %"
        lines = [("<table><tr><th align=left>label</th><th>P</th><th>R</th><th>F1</th>"
                  "<th>tp/fp/fn</th></tr>")]
        for r in rows:
            name = "all" if r["label"] == "*" else html.escape(r["label"] or "(none)")
            lines.append(f"<tr><td>{name}</td><td>{pct(r['precision'])}</td>"
                         f"<td>{pct(r['recall'])}</td><td>{pct(r['f1'])}</td>"
                         f"<td>{r['tp']}/{r['fp']}/{r['fn']}</td></tr>")
        self.scores.setText("".join(lines) + "</table>")
