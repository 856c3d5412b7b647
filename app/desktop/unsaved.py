"""Nothing a person made is lost: one modified state, asked about, autosaved where it can be.

:class:`UnsavedWork` compares each part of the window's work with its last saved,
loaded or restored state:

- the **annotations** (saved by File › Export annotations… or into a SigMF
  recording; loaded with the recording or by File › Import annotations…);
- the **processing steps** and the filter designer's **filter chain** (saved
  by File › Save pipeline… where the pipeline holds them; loaded by File ›
  Open pipeline…);
- the **review decisions** about detections (a new recording has none; a
  detection run with nothing decided has nothing to lose);

and a session file (File › Save session, Ctrl+S) holds them all: saving or
restoring one leaves nothing unsaved.  An undo back to the saved state is
saved again.  How the recording is looked at (analysis settings, range, levels,
representation) is no part of it: the last session remembers that.  From that
state:

- the window title carries the usual ``*`` (``setWindowModified``) while
  something is unsaved;
- before the window closes, another recording opens or a session opens,
  :meth:`UnsavedWork.confirm` asks *Save / Discard / Cancel* naming what that
  would lose ("3 annotations and the filter chain are not saved"); opening a
  recording keeps the processing and the chain, so only the annotations and
  the review are asked about then.  Save exports the annotations when only
  they are at stake, else saves a session holding everything;
- a few seconds (:data:`AUTOSAVE_DELAY_MS`) after an edit leaves the
  annotations unsaved, they are written to ``config_dir("autosave")`` (a small
  JSON file per recording, named by a hash of its path), deleted once they are
  saved or discarded; a recording opened while its autosave is still there
  (the app was killed) offers them back (:meth:`UnsavedWork.offer_recovery`).

Only an interactive window asks or autosaves (tests and screenshots run without).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from PyQt6 import sip
from PyQt6.QtCore import QObject, QTimer
from PyQt6.QtWidgets import QMessageBox
from specscope.app.review import PENDING
from specscope.app.session import ViewSettings, config_dir
from specscope.compute.annotations import Annotation

__all__ = ["ALL_PARTS", "ANNOTATIONS", "AUTOSAVE_DELAY_MS", "CHAIN", "PROCESSING", "REVIEW",
           "Lost", "UnsavedWork", "autosave_path", "read_autosave"]

#: how long after the last edit the unsaved annotations are written (ms)
AUTOSAVE_DELAY_MS = 3000
AUTOSAVE_FORMAT = "specscope/autosave/1"

#: the parts of the work compared with their saved state
ANNOTATIONS, PROCESSING, CHAIN, REVIEW = "annotations", "processing", "chain", "review"
ALL_PARTS = (ANNOTATIONS, PROCESSING, CHAIN, REVIEW)

Answer = str  # "save", "discard" or "cancel"


class Lost(str):
    """What would be lost, as the question names it ("3 annotations and the filter
    chain"); ``parts`` names the parts (:data:`ALL_PARTS`) it is made of, ``plural``
    whether it takes "are"."""

    parts: tuple[str, ...]
    plural: bool

    def __new__(cls, text: str, parts: Iterable[str], plural: bool = False) -> Lost:
        self = super().__new__(cls, text)
        self.parts = tuple(parts)
        self.plural = plural
        return self


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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _join(phrases: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return phrases[0] if len(phrases) == 1 else \
        ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _ask_save(parent, name: str, lost: Lost, action: str) -> Answer:
    only_annotations = lost.parts == (ANNOTATIONS,)
    verb = "are" if lost.plural else "is"
    box = QMessageBox(QMessageBox.Icon.Warning,
                      "Unsaved annotations" if only_annotations else "Unsaved changes",
                      f"{lost[:1].upper()}{lost[1:]} {verb} not saved ({name}).",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    for button, text in ((QMessageBox.StandardButton.Save, "&Save…"),
                         (QMessageBox.StandardButton.Discard, "&Discard"),
                         (QMessageBox.StandardButton.Cancel, "&Cancel")):
        box.button(button).setText(text)
    box.setInformativeText(f"Save them before {action}?" if only_annotations else
                           f"Save a session holding them before {action}?")
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


def _chain_key(s: ViewSettings) -> tuple[str, bool]:
    """The chain as it would be lost: its filters, and whether it filters (when it has any)."""
    return s.chain, s.chain_on and s.chain != "[]"


def _review_key(review: Any) -> tuple | None:
    """A review's decisions: (review, states, labels); None when nothing is decided."""
    if review is None or all(s == PENDING for s in review.states):
        return None
    return review, tuple(review.states), tuple(review.labels)


class UnsavedWork(QObject):
    """The window's work compared with what is saved; asks, autosaves (see the module).

    Parameters
    ----------
    window : MainWindow
        Its ``annotations``, ``detection`` and ``processing`` controllers, ``settings``,
        ``document``, ``undo_stack``, ``save_session_dialog()`` and ``dialog_parent()``.
    interactive : bool
        False: never asks (Discard is assumed) and never autosaves.
    """

    def __init__(self, window, *, interactive: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self.interactive = interactive
        self._set_of: tuple[list | None, frozenset[Annotation]] = (None, frozenset())
        #: each part as last saved, loaded or restored
        self._saved: dict[str, Any] = self._work()
        #: the recording whose annotations are saved (while another opens, the old one)
        self._saved_for: Path | None = None
        #: what to run once a save asked for by confirm() is written, and the parts at stake
        self._then: tuple[Callable[[], None], tuple[str, ...]] | None = None
        #: replaceable for tests: (parent, name, lost, action) -> "save"/"discard"/"cancel"
        self.ask_save = _ask_save
        #: replaceable for tests: (parent, name, count, written) -> bool
        self.ask_recover = _ask_recover
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(AUTOSAVE_DELAY_MS)
        self._timer.timeout.connect(self.autosave)
        ann = window.annotations
        ann.annotationsChanged.connect(self._changed)
        ann.annotationsSaved.connect(self._written)
        ann.annotationsLoaded.connect(self._loaded)
        window.processing.pipelineSaved.connect(self.pipeline_saved)
        window.processing.pipelineLoaded.connect(self.pipeline_loaded)
        window.detection.detectionsChanged.connect(self.refresh)
        window.detection.reviewSaved.connect(self.review_saved)
        window.undo_stack.indexChanged.connect(self.refresh)

    # -- state --------------------------------------------------------------------------
    def _annotation_set(self) -> frozenset[Annotation]:
        """The annotations as a set (kept while the controller's list is the same list:
        it makes a new one on every change)."""
        items = self.window.annotations.annotations
        if items is not self._set_of[0]:
            self._set_of = (items, frozenset(items))
        return self._set_of[1]

    def _work(self) -> dict[str, Any]:
        w = self.window
        return {ANNOTATIONS: self._annotation_set(),
                PROCESSING: w.settings.processing,
                CHAIN: _chain_key(w.settings),
                REVIEW: _review_key(w.detection.review)}

    def _differs(self, part: str, now: Any) -> bool:
        saved = self._saved[part]
        if part != REVIEW:
            return now != saved
        if now is None:
            return False  # nothing decided: nothing to lose
        return saved is None or now[0] is not saved[0] or now[1:] != saved[1:]

    def unsaved_parts(self, parts: Iterable[str] = ALL_PARTS) -> list[str]:
        """Which of ``parts`` differ from their saved state (none without a recording)."""
        if self.window.document is None:
            return []
        now = self._work()
        return [p for p in parts if self._differs(p, now[p])]

    def dirty(self, parts: Iterable[str] = ALL_PARTS) -> bool:
        """Whether any of ``parts`` (default: all) differs from its saved state."""
        return bool(self.unsaved_parts(parts))

    def lost(self, parts: Iterable[str] = ALL_PARTS) -> Lost:
        """What of ``parts`` is unsaved, in words ("" when nothing is)."""
        unsaved = self.unsaved_parts(parts)
        counted: list[tuple[str, int]] = []  # each phrase and how many things it names
        if ANNOTATIONS in unsaved:
            now, saved = self._annotation_set(), self._saved[ANNOTATIONS]
            changed = len(now - saved)
            deleted = len({a.uuid for a in saved} - {a.uuid for a in now})
            if changed:
                counted.append((_plural(changed, "annotation"), changed))
            if deleted or not changed:
                counted.append((_plural(deleted, "deleted annotation"), deleted))
        if PROCESSING in unsaved:
            counted.append(("the processing steps", 2))
        if CHAIN in unsaved:
            counted.append(("the filter chain", 1))
        if REVIEW in unsaved:
            n = self._decisions()
            counted.append((_plural(n, "review decision"), n))
        phrases = [text for text, _ in counted]
        plural = len(counted) > 1 or (bool(counted) and counted[0][1] != 1)
        return Lost(_join(phrases) if phrases else "", unsaved, plural)

    def _decisions(self) -> int:
        """How many decisions of the review differ from those saved."""
        r, saved = self.window.detection.review, self._saved[REVIEW]
        if saved is not None and saved[0] is r:
            return sum(1 for i, (s, lab) in enumerate(zip(r.states, r.labels, strict=True))
                       if (s, lab) != (saved[1][i], saved[2][i]))
        return sum(1 for s in r.states if s != PENDING)

    def refresh(self) -> None:
        """The title's ``*`` follows the modified state."""
        if not sip.isdeleted(self.window):  # (the undo stack clears as the window goes)
            self.window.setWindowModified(self.dirty())

    def _recording_path(self) -> Path | None:
        doc = self.window.document
        return None if doc is None else Path(doc.recording.path)

    def mark_saved(self, parts: Iterable[str] = ALL_PARTS) -> None:
        """``parts`` (default: all) are saved as they are now: no question, no autosave."""
        now = self._work()
        for p in parts:
            self._saved[p] = now[p]
        self._saved_for = self._recording_path()
        self._annotations_settled()

    def _annotations_settled(self) -> None:
        if not self.dirty([ANNOTATIONS]):
            self._timer.stop()
            self.remove_autosave()
        self.refresh()

    def review_saved(self, decided: tuple) -> None:
        """The review's decisions ``(review, states, labels)`` were written to a table: saved,
        when the review still holds those decisions."""
        now = _review_key(self.window.detection.review)
        if now is not None and now[0] is decided[0] and now[1:] == decided[1:]:
            self._saved[REVIEW] = now
        self.refresh()

    def opened(self) -> None:
        """A recording opened: its own annotations are the saved ones, it has no review (the
        processing and the chain stay as they were); an autosave left for it is offered
        back once the window has shown the recording."""
        now = self._work()
        self._saved[ANNOTATIONS], self._saved[REVIEW] = now[ANNOTATIONS], now[REVIEW]
        self._saved_for = self._recording_path()
        self._timer.stop()
        self.refresh()
        QTimer.singleShot(0, self.offer_recovery)

    def restored(self) -> None:
        """A session was restored: everything is as its file keeps it."""
        self.mark_saved()

    def pipeline_saved(self, settings: ViewSettings) -> None:
        """A pipeline file was written from ``settings``: their processing steps are saved,
        and the chain when the file holds it all (applied, every filter enabled)."""
        self._saved[PROCESSING] = settings.processing
        if all(f["enabled"] for f in settings.filters) and \
                (settings.chain_on or not settings.filters):
            self._saved[CHAIN] = _chain_key(settings)
        self.refresh()

    def pipeline_loaded(self) -> None:
        """A pipeline file gave the processing steps: they are saved (in that file)."""
        self._saved[PROCESSING] = self.window.settings.processing
        self.refresh()

    def _changed(self) -> None:
        if self._saved_for != self._recording_path():
            return  # a recording is opening: opened() follows
        unsaved = self.dirty([ANNOTATIONS])
        if self.interactive and unsaved:
            self._timer.start()
        elif not unsaved:  # undone back to what is saved: nothing to keep
            self._timer.stop()
            self.remove_autosave()
        self.refresh()

    def _written(self, items: Sequence[Annotation]) -> None:
        """The annotations ``items`` were written to a file."""
        self._saved[ANNOTATIONS] = frozenset(items)
        self._saved_for = self._recording_path()
        self._annotations_settled()
        pending, self._then = self._then, None
        if pending is not None and not self.dirty(pending[1]):
            pending[0]()

    def _loaded(self, items: Sequence[Annotation]) -> None:
        """The annotations ``items`` were imported from a file: saved there."""
        self._saved[ANNOTATIONS] = self._saved[ANNOTATIONS] | frozenset(items)
        self._annotations_settled()

    # -- autosave --------------------------------------------------------------------------
    def autosave(self) -> Path | None:
        """Write the unsaved annotations beside the user config now; the file, or None."""
        rec = self._recording_path()
        if rec is None or not self.dirty([ANNOTATIONS]):
            return None
        path = autosave_path(rec)
        data = {"format": AUTOSAVE_FORMAT, "recording": str(rec.resolve()),
                "written": time.time(),
                "annotations": [a.to_dict() for a in self.window.annotations.annotations]}
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
    def confirm(self, then: Callable[[], None], action: str,
                parts: Sequence[str] = ALL_PARTS) -> bool:
        """Whether ``then`` may run now; when it would lose unsaved ``parts``, ask first.

        Save exports the annotations when only they are unsaved (``then`` runs once
        the file is written), else saves a session holding everything (``then`` may run
        now); Discard lets ``then`` run now (the autosave goes); Cancel does nothing.
        """
        if not self.interactive:
            return True
        lost = self.lost(parts)
        if not lost.parts:
            return True
        rec = self._recording_path()
        answer = self.ask_save(self.window.dialog_parent(), rec.name, lost, action)
        if answer == "discard":
            self.mark_saved(lost.parts)
            return True
        if answer != "save":
            return False
        if lost.parts == (ANNOTATIONS,):
            self._then = (then, tuple(parts))
            if not self.window.annotations.export_dialog():
                self._then = None  # the file dialog was cancelled: nothing happens
            return False
        return bool(self.window.save_session_dialog()) and not self.dirty(parts)

    def offer_recovery(self) -> None:
        """A recording opened: offer its autosaved annotations back (the app was killed)."""
        rec = self._recording_path()
        if rec is None or not self.interactive:
            return
        found = read_autosave(rec)
        if found is None:
            return
        items, written = found
        if frozenset(items) == self._saved[ANNOTATIONS] or not items:
            self.remove_autosave()
            return
        if self.ask_recover(self.window.dialog_parent(), rec.name, len(items), written):
            self.window.annotations.recover(items)  # unsaved: the autosave stays until saved
        else:
            self.remove_autosave()
