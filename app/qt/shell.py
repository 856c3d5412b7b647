"""What the app's controllers need of the main window, and the undo command of settings.

The controllers (view, designer, processing, exports) get the window as a
:class:`Shell`: the current settings and document, the compute worker, the
spectrogram view, messages, and :meth:`Shell.change_settings`, which makes a
change undoable through :class:`SettingsChange`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PyQt6.QtGui import QUndoCommand
from specscope.app.session import Document, ViewSettings, describe_change

if TYPE_CHECKING:
    from PyQt6.QtWidgets import QWidget
    from specscope.app.qt.worker import ComputeWorker
    from specscope.widgets.spectrogram_view import SpectrogramView

__all__ = ["SettingsChange", "Shell"]


class Shell(Protocol):
    """The main window as the controllers see it.

    Attributes
    ----------
    settings : ViewSettings
        The current analysis settings.
    document : Document or None
        The open recording with its settings; None before one is open.
    worker : ComputeWorker
        The compute thread the controllers submit jobs to.
    view : SpectrogramView
        The spectrogram view.
    """

    settings: ViewSettings
    document: Document | None
    worker: ComputeWorker
    view: SpectrogramView

    def change_settings(self, new: ViewSettings, *, undoable: bool = True) -> None:
        """Make ``new`` the settings, as one undoable step (nothing when unchanged), or
        with ``undoable=False`` quietly (the view is recomputed)."""

    def apply_settings(self, settings: ViewSettings) -> None:
        """Make ``settings`` current: controls, axis and a recomputation."""

    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        """A transient message in the status bar."""

    def show_error(self, message: str, *, dialog: bool = True) -> None:
        """A one-line error (and a dialog when interactive)."""

    def dialog_parent(self) -> QWidget:
        """The widget dialogs open over."""


class SettingsChange(QUndoCommand):
    """One undoable change of the analysis settings, applied through the shell.

    The step is named after the change (:func:`~specscope.app.session.describe_change`).

    Parameters
    ----------
    shell : Shell
        The window whose ``apply_settings`` redo and undo call.
    old, new : ViewSettings
        The settings before and after the change.
    """

    def __init__(self, shell: Shell, old: ViewSettings, new: ViewSettings) -> None:
        super().__init__(describe_change(old, new))
        self._shell, self._old, self._new = shell, old, new

    def redo(self) -> None:
        self._shell.apply_settings(self._new)

    def undo(self) -> None:
        self._shell.apply_settings(self._old)
