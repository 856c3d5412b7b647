"""Annotations are never lost: asked before they would be, autosaved while unsaved.

:class:`UnsavedAnnotations` compares the annotations with those last saved (an
export, the recording's own, a recovered autosave counts as unsaved) and:

- before the window closes, another recording opens or the same one is
  opened again, asks *Save / Discard / Cancel* (:meth:`confirm`); Save runs
  File › Export annotations… and goes on once the file is written;
- a few seconds (:data:`AUTOSAVE_DELAY_MS`) after an edit leaves them unsaved,
  writes them to ``config_dir("autosave")`` (a small JSON file per recording,
  named by a hash of its path), and deletes that file once they are saved or
  discarded;
- when a recording opens whose autosave is still there (the app was killed),
  offers those annotations back (:meth:`offer_recovery`).

The file is a few kilobytes and written on the GUI thread (atomically: a
temporary file renamed over the old one).  Only an interactive window asks or
autosaves (tests and screenshots run without).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from PyQt6.QtCore import QObject, QTimer
from PyQt6.QtWidgets import QMessageBox
from specscope.app.session import config_dir
from specscope.compute.annotations import Annotation

#: how long after the last edit the unsaved annotations are written (ms)
AUTOSAVE_DELAY_MS = 3000
AUTOSAVE_FORMAT = "specscope/autosave/1"

Answer = str  # "save", "discard" or "cancel"


def autosave_path(recording: str | Path) -> Path:
    """Where the unsaved annotations of ``recording`` are kept (not created)."""
    key = hashlib.sha1(str(Path(recording).resolve()).encode()).hexdigest()[:16]
    return config_dir("autosave", f"{key}.json")


def read_autosave(recording: str | Path) -> tuple[list[Annotation], float] | None:
    """The autosaved annotations of ``recording`` and when they were written; None if none."""
    path = autosave_path(recording)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != AUTOSAVE_FORMAT or \
                Path(data["recording"]) != Path(recording).resolve():
            return None
        return [Annotation.from_dict(a) for a in data["annotations"]], float(data["written"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _ask_save(parent, name: str, count: int, action: str) -> Answer:
    box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved annotations",
                      f"{count} annotation{'s' if count != 1 else ''} of {name} "
                      f"{'are' if count != 1 else 'is'} not saved.",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    for button, text in ((QMessageBox.StandardButton.Save, "&Save…"),
                         (QMessageBox.StandardButton.Discard, "&Discard"),
                         (QMessageBox.StandardButton.Cancel, "&Cancel")):
        box.button(button).setText(text)
    box.setInformativeText(f"Save them before {action}?")
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    pressed = box.exec()
    return {QMessageBox.StandardButton.Save.value: "save",
            QMessageBox.StandardButton.Discard.value: "discard"}.get(pressed, "cancel")


def _ask_recover(parent, name: str, count: int, written: float) -> bool:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(written))
    box = QMessageBox(QMessageBox.Icon.Question, "Recover annotations",
                      f"{count} unsaved annotation{'s' if count != 1 else ''} of {name} "
                      f"{'were' if count != 1 else 'was'} kept when specscope last closed "
                      f"({when}).", parent=parent)
    recover = box.addButton("&Recover", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("&Discard", QMessageBox.ButtonRole.DestructiveRole)
    box.setInformativeText("Recover them?")
    box.setDefaultButton(recover)
    box.exec()
    return box.clickedButton() is recover


class UnsavedAnnotations(QObject):
    """Tracks whether the window's annotations are saved; asks and autosaves (see module).

    Parameters
    ----------
    window : MainWindow
        Its ``annotations`` controller, ``document`` and ``dialog_parent()``.
    interactive : bool
        False: never asks (Discard is assumed) and never autosaves.
    """

    def __init__(self, window, *, interactive: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self.interactive = interactive
        self._saved: tuple[Annotation, ...] = ()
        #: the recording whose annotations _saved are (while another opens, the old one)
        self._saved_for: Path | None = None
        #: what to do once a save asked for by confirm() has been written
        self._then: Callable[[], None] | None = None
        #: replaceable for tests: (parent, name, count, action) -> "save"/"discard"/"cancel"
        self.ask_save = _ask_save
        #: replaceable for tests: (parent, name, count, written) -> bool
        self.ask_recover = _ask_recover
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(AUTOSAVE_DELAY_MS)
        self._timer.timeout.connect(self.autosave)
        ctl = window.annotations
        ctl.annotationsChanged.connect(self._changed)
        ctl.annotationsSaved.connect(self._written)

    # -- state --------------------------------------------------------------------------
    def _current(self) -> tuple[Annotation, ...]:
        return tuple(self.window.annotations.annotations)

    def dirty(self) -> bool:
        """Whether the annotations differ from those last saved."""
        return self.window.document is not None and self._current() != self._saved

    def _recording_path(self) -> Path | None:
        doc = self.window.document
        return None if doc is None else Path(doc.recording.path)

    def mark_saved(self, annotations=None) -> None:
        """The annotations (or ``annotations``) are saved: no question, no autosave."""
        self._saved = self._current() if annotations is None else tuple(annotations)
        self._saved_for = self._recording_path()
        if not self.dirty():
            self._timer.stop()
            self.remove_autosave()

    def opened(self) -> None:
        """A recording opened: its own annotations are the saved ones; an autosave left
        for it is offered back once the window has shown the recording."""
        self._saved = self._current()
        self._saved_for = self._recording_path()
        self._timer.stop()
        QTimer.singleShot(0, self.offer_recovery)

    def _changed(self) -> None:
        if self._saved_for != self._recording_path():
            return  # a recording is opening: opened() follows
        if self.interactive and self.dirty():
            self._timer.start()
        elif not self.dirty():  # undone back to what is saved: nothing to keep
            self._timer.stop()
            self.remove_autosave()

    def _written(self, items) -> None:
        self.mark_saved(items)
        then, self._then = self._then, None
        if then is not None and not self.dirty():
            then()

    # -- autosave --------------------------------------------------------------------------
    def autosave(self) -> Path | None:
        """Write the unsaved annotations beside the user config now; the file, or None."""
        rec = self._recording_path()
        if rec is None or not self.dirty():
            return None
        path = autosave_path(rec)
        data = {"format": AUTOSAVE_FORMAT, "recording": str(rec.resolve()),
                "written": time.time(),
                "annotations": [a.to_dict() for a in self._current()]}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            self.window.show_message(f"Could not keep the unsaved annotations: {exc}", 8000,
                                     error=True)
            return None
        return path

    def remove_autosave(self) -> None:
        rec = self._recording_path()
        if rec is not None:
            autosave_path(rec).unlink(missing_ok=True)

    # -- asking ------------------------------------------------------------------------------
    def confirm(self, then: Callable[[], None], action: str) -> bool:
        """Whether ``then`` may run now; when the annotations are unsaved, ask first.

        Save asks for a file (File › Export annotations…) and runs ``then`` once it
        is written; Discard runs it now (the autosave goes); Cancel does nothing.
        """
        if not self.dirty() or not self.interactive:
            return True
        rec = self._recording_path()
        answer = self.ask_save(self.window.dialog_parent(), rec.name, len(self._current()),
                               action)
        if answer == "discard":
            self.mark_saved()
            return True
        if answer == "save":
            self._then = then
            if not self.window.annotations.export_dialog():
                self._then = None  # the file dialog was cancelled: nothing happens
        return False

    def offer_recovery(self) -> None:
        """A recording opened: offer its autosaved annotations back (the app was killed)."""
        rec = self._recording_path()
        if rec is None or not self.interactive:
            return
        found = read_autosave(rec)
        if found is None:
            return
        items, written = found
        if tuple(items) == self._saved or not items:
            self.remove_autosave()
            return
        if self.ask_recover(self.window.dialog_parent(), rec.name, len(items), written):
            self.window.annotations.recover(items)  # unsaved: the autosave stays until saved
        else:
            self.remove_autosave()
