"""The session's messages: a log kept as they are shown, and the dialog that lists them.

The status bar shows one message at a time, for a few seconds, elided to the room it
gets (:class:`ElidedLabel`); :class:`MessageLog` keeps each of them whole with the time it was shown, and
:class:`MessagesDialog` (View › Messages) lists them, newest last, while it is open.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from PyQt6.QtCore import QObject, QSize, Qt, pyqtSignal
from PyQt6.QtGui import QBrush, QColor, QGuiApplication, QPainter
from PyQt6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

__all__ = ["KEEP", "ElidedLabel", "Message", "MessageLog", "MessagesDialog"]

#: the most messages a log keeps (the oldest go first)
KEEP = 1000
#: a message that differs from the last one only in its numbers, within this many
#: seconds, is its update ("… 255 ms" after "… 538 ms", "running for 31 s" after 30 s):
#: it takes the last one's line
UPDATE_S = 10.0

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _shape(text: str) -> str:
    return _NUMBER.sub("#", text)


@dataclass(frozen=True)
class Message:
    """One message as it was shown.

    Parameters
    ----------
    when : float
        When it was shown last (``time.time()``).
    text : str
        The whole text.
    error : bool
        Shown as an error.
    count : int
        How many times in a row it (or an update of it) was shown.
    """

    when: float
    text: str
    error: bool = False
    count: int = 1

    def line(self) -> str:
        """``"14:03:27  text"``, with ``"  (×3)"`` when it was shown 3 times in a row.

        Examples
        --------
        >>> Message(0.0, "Saved", count=2).line().endswith("Saved  (×2)")
        True
        """
        stamp = time.strftime("%H:%M:%S", time.localtime(self.when))
        again = f"  (×{self.count})" if self.count > 1 else ""
        return f"{stamp}  {self.text}{again}"


class MessageLog(QObject):
    """The messages of a session, oldest first, at most :data:`KEEP`.

    Parameters
    ----------
    parent : QObject or None, optional
        The Qt parent (the window whose messages it keeps).

    Signals
    -------
    changed()
        A message was added (or repeated), or the log was cleared.
    """

    changed = pyqtSignal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.messages: list[Message] = []

    def add(self, text: str, *, error: bool = False, when: float | None = None,
            merge: bool = True) -> None:
        """Keep ``text``, shown at ``when`` (now when None).

        The same text again counts as a repeat of the last line, and so does its update
        (the same text but its numbers, within :data:`UPDATE_S`), whose text the line
        then shows: a report that changes every second is one line, not hundreds.
        ``merge=False``: a line of its own even so (one of a list, each naming a file).
        """
        if not text:
            return
        now = time.time() if when is None else when
        last = self.messages[-1] if self.messages else None
        if merge and last is not None and last.error == error and (
                last.text == text
                or (now - last.when <= UPDATE_S and _shape(last.text) == _shape(text))):
            self.messages[-1] = Message(now, text, error, last.count + 1)
        else:
            self.messages.append(Message(now, text, error))
            del self.messages[:-KEEP]
        self.changed.emit()

    def clear(self) -> None:
        self.messages.clear()
        self.changed.emit()

    def texts(self) -> list[str]:
        """The whole texts, oldest first."""
        return [m.text for m in self.messages]


class MessagesDialog(QDialog):
    """The messages of a :class:`MessageLog` with their times, newest last; kept up to date
    while open.  Copy puts them on the clipboard, Clear empties the log.

    Parameters
    ----------
    log : MessageLog
        The messages.
    parent : QWidget or None, optional
        The window it belongs to.
    """

    def __init__(self, log: MessageLog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Messages")
        self.resize(720, 360)
        self.log = log
        lay = QVBoxLayout(self)
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        lay.addWidget(self.list)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the messages (the selected ones, else all)")
        self.clear_button = QPushButton("Clear")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.clear_button, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy)
        self.clear_button.clicked.connect(log.clear)
        lay.addWidget(buttons)
        log.changed.connect(self._changed)
        self.refresh()

    def refresh(self) -> None:
        """Show the log as it is now, scrolled to the newest."""
        self.list.clear()
        red = QBrush(QColor("#c00000"))
        for m in self.log.messages:
            item = QListWidgetItem(m.line())
            item.setToolTip(m.text)
            if m.error:
                item.setForeground(red)
            self.list.addItem(item)
        if self.list.count():
            self.list.scrollToBottom()

    def lines(self) -> list[str]:
        """The lines as listed."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    def copy(self) -> None:
        chosen = self.list.selectedItems() or [self.list.item(i)
                                               for i in range(self.list.count())]
        rows = sorted(chosen, key=self.list.row)
        QGuiApplication.clipboard().setText("\n".join(item.text() for item in rows))

    def _changed(self) -> None:
        if self.isVisible():  # a closed list is filled again when it shows
            self.refresh()

    def showEvent(self, event) -> None:
        self.refresh()
        super().showEvent(event)


class ElidedLabel(QLabel):
    """A one-line label that shrinks to a few characters, eliding its text (in the middle,
    or where ``elide`` says)."""

    def __init__(self, text: str = "", parent=None, *,
                 elide: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle) -> None:
        super().__init__(text, parent)
        self._elide = elide
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(hint.width() + 4, hint.height())  # room for the whole text, never elided

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().horizontalAdvance("M" * 5)),
                     hint.height())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), self._elide,
                                             rect.width())
        painter.drawText(rect, int(self.alignment()), text)
