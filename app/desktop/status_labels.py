"""A status bar label that gives way: its text is elided to the room it gets (full text in
its tool tip), so the readout beside it never is cut."""

from __future__ import annotations

from PyQt6.QtCore import QSize, Qt
from PyQt6.QtGui import QPainter
from PyQt6.QtWidgets import QLabel, QSizePolicy


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


#: the longest readout of the cursor alone, and what a reference cursor adds to it (an IQ
#: capture's frequencies to the Hz a pixel tells at a deep zoom: ``-100.053000 MHz``)
READOUT_TEMPLATE = "ch 00  t = 00:00:00.000  f = -000.000000 MHz  -000.0 dB"
READOUT_REFERENCE = ("  |  Δt = -0000.000 s  Δf = -000.000000 MHz  ΔL = -000.0 dB"
                     "  (1/Δt = 0.0001234 Hz)")


def reserve_readout(label: QLabel, reference: bool) -> None:
    """Keep ``label`` as wide as the longest readout of its kind (the cursor alone, or
    with the Δ to a reference): never cut, never jumping with the text."""
    text = READOUT_TEMPLATE + (READOUT_REFERENCE if reference else "")
    width = label.fontMetrics().horizontalAdvance(text) + 8
    if label.minimumWidth() != width:
        label.setMinimumWidth(width)
