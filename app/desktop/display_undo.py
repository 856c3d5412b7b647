"""Undo of the display settings: colour map, gamma and the dB range.

The display settings only re-level the image (they never recompute it), so they are
not part of :class:`~specscope.app.session.ViewSettings`; they still are choices a
person makes and wants to take back.  :class:`DisplayUndo` watches the controls'
edits, and each edit becomes one :class:`DisplayChange` on the window's undo stack.
Consecutive edits of the same setting (a gamma spin box stepped five times, a dB
field typed digit by digit) merge into one step, as a text editor merges typing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from PyQt6.QtGui import QUndoCommand, QUndoStack
from specscope.widgets.spectrogram_controls import SpectrogramControls
from specscope.widgets.spectrogram_view import SpectrogramView

__all__ = ["DisplayChange", "DisplayState", "DisplayUndo"]

#: the undo-command id that lets consecutive display edits merge
_MERGE_ID = 0x5D15


@dataclass(frozen=True)
class DisplayState:
    """What the display shows: colour map, gamma, and the dB range (low, high).

    Parameters
    ----------
    colormap : str
        The colour map's name.
    gamma : float
        The gamma of the colour scale.
    levels : tuple of float
        The dB range (low, high) the colour map spans.
    """

    colormap: str
    gamma: float
    levels: tuple[float, float]


class DisplayChange(QUndoCommand):
    """One undoable display edit; ``what`` names the setting ("gamma", "colour map").

    Consecutive changes of the same setting merge into one step.  Pushed after the
    control already shows the new value, so its first redo does nothing.

    Parameters
    ----------
    apply : callable
        ``apply(state)`` shows a :class:`DisplayState` in the view and the controls.
    old, new : DisplayState
        The state before and after the edit.
    what : str
        The setting edited; edits of the same setting merge.
    text : str
        The step's name on the undo stack ("gamma 1.20").
    """

    def __init__(self, apply: Callable[[DisplayState], None], old: DisplayState,
                 new: DisplayState, what: str, text: str) -> None:
        super().__init__(text)
        self._apply, self.old, self.new, self.what = apply, old, new, what
        self._done = True  # the control already shows the new value when pushed

    def id(self) -> int:
        return _MERGE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, DisplayChange) or other.what != self.what:
            return False
        self.new = other.new
        self.setText(other.text())
        return True

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        self._apply(self.new)

    def undo(self) -> None:
        self._apply(self.old)


class DisplayUndo:
    """Makes the display edits of ``controls`` undoable on ``stack``.

    Create it before the controls' signals are connected to the view: its slots
    then run first and read the view's old value, before the view takes the new one.

    Parameters
    ----------
    view : SpectrogramView
        The spectrogram view.
    controls : SpectrogramControls
        Its panel of settings, whose display edits are watched.
    stack : QUndoStack
        The window's undo stack.
    """

    def __init__(self, view: SpectrogramView, controls: SpectrogramControls,
                 stack: QUndoStack) -> None:
        self.view, self.controls, self.stack = view, controls, stack
        self._applying = False
        controls.colormapChanged.connect(self._colormap_edited)
        controls.gammaChanged.connect(self._gamma_edited)
        controls.levelsChanged.connect(self._levels_edited)

    def current(self) -> DisplayState:
        """The state the view shows now."""
        return DisplayState(self.view.colormap_name, float(self.view.gamma),
                            self.view.levels())

    def apply(self, state: DisplayState) -> None:
        """Show ``state`` in the view and the controls, without new undo steps."""
        self._applying = True
        c = self.controls
        widgets = (c.colormap, c.gamma, c.db_low, c.db_high)
        for w in widgets:
            w.blockSignals(True)
        try:
            c.colormap.setCurrentText(state.colormap)
            c.gamma.setValue(state.gamma)
            c.set_levels(*state.levels)
            self.view.set_colormap(state.colormap)
            self.view.set_gamma(state.gamma)
            self.view.set_levels(*state.levels)
        finally:
            for w in widgets:
                w.blockSignals(False)
            self._applying = False

    def _edited(self, what: str, text: str, **change: object) -> None:
        if self._applying:
            return
        old = self.current()  # the view still shows the old value (see the class notes)
        new = replace(old, **change)
        if new != old:
            self.stack.push(DisplayChange(self.apply, old, new, what, text))

    def _colormap_edited(self, name: str) -> None:
        self._edited("colour map", f"colour map {name}", colormap=name)

    def _gamma_edited(self, gamma: float) -> None:
        self._edited("gamma", f"gamma {gamma:.2f}", gamma=float(gamma))

    def _levels_edited(self, low: float, high: float) -> None:
        if high > low:
            self._edited("levels", f"dB range {low:g} to {high:g} dB",
                         levels=(float(low), float(high)))
