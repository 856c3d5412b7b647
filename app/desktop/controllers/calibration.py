"""The calibration of the open recording: View › Calibration…, its dialog and its undo.

A calibration (:class:`~specscope.compute.levels.Calibration`: the sensor's kind and
sensitivity, a gain, the converter's full-scale voltage, a frequency response) is part
of the settings (:attr:`~specscope.app.session.ViewSettings.calibration`), so a session
keeps it and it stays for the next recording, as the processing does.  It never
recomputes a spectrum: :class:`CalibrationController` shows it as an offset per
frequency row of the view's level images (:meth:`SpectrogramView.set_calibration`),
whose colour bar and readout then say the unit; the Levels panel computes with it
unless its own field names a file; the HDF5 exports carry it.  Each change is one step
of the window's undo stack.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from PyQt6 import sip
from PyQt6.QtCore import QEvent, QObject, Qt
from PyQt6.QtGui import QUndoCommand
from PyQt6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from specscope.app.session import ViewSettings, calibration_json, calibration_of
from specscope.compute.errors import InputError
from specscope.compute.levels import Calibration, CalibrationError, load_calibration
from specscope.compute.levels.calibration import KINDS, UNITS
from specscope.compute.view.levels import level_unit

__all__ = ["CalibrationChange", "CalibrationController", "CalibrationDialog",
           "calibration_text"]

#: the sensitivity units as the dialog shows them
_SHOWN_UNITS = {k: u.replace("uPa", "µPa") for k, u in UNITS.items()}


def calibration_text(cal: Calibration | None) -> str:
    """A calibration in a few words ("hydrophone, -170 dB re 1 V/µPa, gain 20 dB")."""
    if cal is None:
        return "none"
    text = f"{cal.kind}, {cal.sensitivity_db:g} {_SHOWN_UNITS[cal.kind]}"
    if cal.gain_db:
        text += f", gain {cal.gain_db:g} dB"
    if cal.full_scale_v != 1.0:
        text += f", full scale {cal.full_scale_v:g} V"
    if cal.response is not None:
        text += f", response of {len(cal.response[0])} points"
    return text


def _read_file(path: Path, typed: dict[str, Any]) -> Calibration:
    """A calibration file: JSON as a whole; a CSV response table joins the typed values."""
    if path.suffix.lower() != ".csv":
        return load_calibration(path)
    from specscope.compute.levels.calibration import read_response_csv

    f, db = read_response_csv(path)
    return Calibration.from_dict({**typed, "response": {"frequency_hz": list(f),
                                                        "db": list(db)}}, path=path)


class CalibrationDialog(QDialog):
    """Load a calibration file or type the sensor's values; OK applies, Clear removes.

    A bad file or value is one line under the fields; nothing changes until OK takes
    values that make a calibration.

    Parameters
    ----------
    current : Calibration or None
        The calibration the fields start with.
    apply : callable
        ``apply(calibration_or_None)``: OK's and Clear's result.
    parent : QWidget, optional
    """

    def __init__(self, current: Calibration | None, apply, parent: QWidget | None = None
                 ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Calibration")
        self._apply = apply
        #: the response table of the loaded file (kept while the values are edited)
        self.response: tuple[tuple[float, ...], tuple[float, ...]] | None = None
        self.kind = QComboBox()
        self.kind.addItems(list(KINDS))
        self.kind.currentTextChanged.connect(self._kind_changed)
        self.sensitivity = QLineEdit()
        self.sensitivity.setPlaceholderText("e.g. -170")
        self.sensitivity_unit = QLabel()
        self.gain = QLineEdit("0")
        self.full_scale = QLineEdit("1")
        self.file = QLineEdit()
        self.file.setPlaceholderText("a calibration file: JSON, or a CSV of frequency, dB")
        self.file.installEventFilter(self)
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        self.load = QPushButton("Load")
        self.load.setAutoDefault(False)
        self.load.clicked.connect(self.load_file)
        self.response_label = QLabel("none")
        self.error = QLabel("")
        self.error.setStyleSheet("color: #c00000;")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ok = QPushButton("OK")
        self.ok.setDefault(True)
        self.ok.clicked.connect(self.accept_values)
        self.clear = QPushButton("Clear")
        self.clear.setAutoDefault(False)
        self.clear.setToolTip("No calibration: levels in dB re full scale")
        self.clear.clicked.connect(self.clear_calibration)
        self.cancel = QPushButton("Cancel")
        self.cancel.setAutoDefault(False)
        self.cancel.clicked.connect(self.reject)

        file_row = QHBoxLayout()
        file_row.addWidget(self.file, 1)
        file_row.addWidget(self.browse)
        file_row.addWidget(self.load)
        sens_row = QHBoxLayout()
        sens_row.addWidget(self.sensitivity, 1)
        sens_row.addWidget(self.sensitivity_unit)
        form = QFormLayout()
        form.addRow("File:", file_row)
        form.addRow("Sensor:", self.kind)
        form.addRow("Sensitivity:", sens_row)
        form.addRow("Gain (dB):", self.gain)
        form.addRow("Full scale (V):", self.full_scale)
        form.addRow("Response:", self.response_label)
        buttons = QHBoxLayout()
        buttons.addWidget(self.clear)
        buttons.addStretch(1)
        buttons.addWidget(self.ok)
        buttons.addWidget(self.cancel)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addLayout(buttons)
        self.show_calibration(current)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        # Return in the file field loads the file; it never reaches OK as well
        if obj is self.file and event.type() == QEvent.Type.KeyPress and \
                event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.load_file()
            return True
        return super().eventFilter(obj, event)

    def _kind_changed(self, kind: str) -> None:
        self.sensitivity_unit.setText(_SHOWN_UNITS.get(kind, ""))

    def show_calibration(self, cal: Calibration | None) -> None:
        """Fill the fields with ``cal`` (None: empty sensitivity, gain 0, 1 V)."""
        cal_kind = cal.kind if cal is not None else KINDS[0]
        self.kind.setCurrentText(cal_kind)
        self._kind_changed(cal_kind)
        self.sensitivity.setText("" if cal is None else f"{cal.sensitivity_db:g}")
        self.gain.setText("0" if cal is None else f"{cal.gain_db:g}")
        self.full_scale.setText("1" if cal is None else f"{cal.full_scale_v:g}")
        self.response = None if cal is None else cal.response
        if self.response is None:
            self.response_label.setText("none")
        else:
            f = self.response[0]
            self.response_label.setText(f"{len(f)} points, {f[0]:g} to {f[-1]:g} Hz")

    def _typed(self) -> dict[str, Any]:
        """The typed values as a calibration file holds them (numbers where they parse)."""
        def number(text: str) -> Any:
            try:
                v = float(text.strip().replace("−", "-"))
            except ValueError:
                return text.strip()  # Calibration names it
            return v if math.isfinite(v) else text.strip()

        out: dict[str, Any] = {"kind": self.kind.currentText()}
        if self.sensitivity.text().strip():
            out["sensitivity_db"] = number(self.sensitivity.text())
        out["gain_db"] = number(self.gain.text() or "0")
        out["full_scale_v"] = number(self.full_scale.text() or "1")
        return out

    def values(self) -> Calibration:
        """The calibration the fields make.

        Raises
        ------
        CalibrationError
            A value is missing or cannot be used (named in the message).
        """
        d = self._typed()
        if self.response is not None:
            d["response"] = {"frequency_hz": list(self.response[0]),
                             "db": list(self.response[1])}
        return Calibration.from_dict(d)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Calibration file", self.file.text(),
                                              "Calibration (*.json *.csv);;All files (*)")
        if path:
            self.file.setText(path)
            self.load_file()

    def load_file(self) -> bool:
        """Read the file named in the field into the fields; False (one line) when bad."""
        text = self.file.text().strip()
        if not text:
            self.show_error("name a calibration file first")
            return False
        try:
            cal = _read_file(Path(text).expanduser(), self._typed())
        except InputError as exc:
            self.show_error(str(exc))
            return False
        self.show_calibration(cal)
        self.show_error("")
        return True

    def show_error(self, text: str) -> None:
        """One line under the fields ("" clears it)."""
        self.error.setText((text.strip().splitlines() or [""])[0])

    def accept_values(self) -> None:
        """OK: apply the fields' calibration, or say in one line why it cannot be."""
        try:
            cal = self.values()
        except CalibrationError as exc:
            self.show_error(str(exc))
            return
        self._apply(cal)
        self.accept()

    def clear_calibration(self) -> None:
        """Clear: no calibration (levels in dB re full scale)."""
        self._apply(None)
        self.accept()


class CalibrationChange(QUndoCommand):
    """One undoable change of the calibration.

    Parameters
    ----------
    controller : CalibrationController
        Applies a calibration (JSON of the settings) on redo and undo.
    old, new : str
        :attr:`ViewSettings.calibration` before and after.
    """

    def __init__(self, controller: CalibrationController, old: str, new: str) -> None:
        super().__init__("calibration" if new else "no calibration")
        self._controller, self._old, self._new = controller, old, new

    def redo(self) -> None:
        self._controller.apply_json(self._new)

    def undo(self) -> None:
        self._controller.apply_json(self._old)


class CalibrationController(QObject):
    """View › Calibration…: the dialog, the undo steps, and showing the calibration.

    Parameters
    ----------
    shell : MainWindow
        The window: its settings, document, view, undo stack and Levels controller.
    parent : QObject, optional
    """

    def __init__(self, shell: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        #: the open dialog (None when none is)
        self.dialog_widget: CalibrationDialog | None = None
        # an undo or redo of other settings (the scaling: another unit) shows them again
        shell.undo_stack.indexChanged.connect(self._stack_moved)
        self.sync(keep_colours=False)

    def current(self) -> Calibration | None:
        """The calibration of the open recording (None: levels in dB re full scale)."""
        return calibration_of(self.shell.settings)

    def dialog(self) -> CalibrationDialog:
        """Open the calibration dialog (non-modal; OK applies)."""
        if self.dialog_widget is not None:
            self.dialog_widget.raise_()
            self.dialog_widget.activateWindow()
            return self.dialog_widget
        dlg = CalibrationDialog(self.current(), self.set_calibration,
                                self.shell.dialog_parent())
        dlg.finished.connect(self._dialog_closed)
        self.dialog_widget = dlg
        dlg.open()
        return dlg

    def _dialog_closed(self, _result: int) -> None:
        dlg, self.dialog_widget = self.dialog_widget, None
        if dlg is not None:
            dlg.deleteLater()

    def set_calibration(self, calibration: Calibration | None) -> None:
        """Make ``calibration`` the recording's (None: none), as one undoable step."""
        old, new = self.shell.settings.calibration, calibration_json(calibration)
        if new != old:
            self.shell.undo_stack.push(CalibrationChange(self, old, new))

    def apply_json(self, text: str) -> None:
        """Make the calibration ``text`` (:func:`calibration_json`) current and show it;
        nothing is recomputed."""
        s: ViewSettings = self.shell.settings.with_changes(calibration=text)
        self.shell.settings = s
        if self.shell.document is not None:
            self.shell.document.settings = s
        self.sync()
        cal = self.current()
        self.shell.show_message(f"Calibration: {calibration_text(cal)}; levels in "
                                f"{level_unit(s.stft.scaling, cal)}", 5000)

    def restore(self) -> None:
        """A session's settings became current: show their calibration; the dB range it
        brings is in their unit already."""
        self.sync(keep_colours=False)

    def _stack_moved(self, _index: int) -> None:
        levels = getattr(self.shell, "levels", None)
        if sip.isdeleted(self.shell.view) or (levels is not None
                                              and sip.isdeleted(levels.panel)):
            return  # the stack clears as the window goes
        self.sync()

    def sync(self, *, keep_colours: bool = True) -> None:
        """Show the settings' calibration in the view (STFT images only: a plugin's image
        is no spectral density) and make it the Levels panel's default."""
        s = self.shell.settings
        cal = self.current()
        shown = cal if s.representation == "stft" else None
        self.shell.view.set_calibration(shown, level_unit(s.stft.scaling, shown),
                                        keep_colours=keep_colours)
        levels = getattr(self.shell, "levels", None)
        if levels is not None:
            levels.set_default_calibration(cal)
