"""Review mode: the detections one at a time, zoomed, decided by single keys.

A accepts, R rejects, 1 … 9 accept with a label, N / P step, Space plays, Esc leaves;
every decision is one step of the window's undo stack, and the next detections' views
are rendered ahead on the compute thread.

See docs/explanation/rooms/app.md.
"""

from __future__ import annotations

import math
import time
from typing import Any

from PyQt6.QtCore import QEvent, QObject, Qt
from PyQt6.QtGui import QKeyEvent, QUndoCommand
from PyQt6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)
from specscope.app.desktop.controllers.annotations import Selection
from specscope.app.review import ACCEPTED, PENDING, REJECTED, Review
from specscope.compute.deployment.timeline import offset_text

__all__ = ["ReviewMode"]

K = Qt.Key
_DIGITS = {getattr(K, f"Key_{d}").value: d for d in range(1, 10)}
_STEPS = {K.Key_N.value: 1, K.Key_Right.value: 1, K.Key_P.value: -1, K.Key_Left.value: -1}
_KEYS = {K.Key_A.value, K.Key_R.value, K.Key_Space.value, K.Key_Escape.value,
         *_DIGITS, *_STEPS}
#: detectors whose score is an SNR in dB
SNR_DETECTORS = ("detect.energy", "detect.bursts")
#: least time span shown around a detection (s)
MIN_SPAN_S = 0.4
#: detections after the one under review whose views are rendered ahead
AHEAD = 2
#: of the plot's width, what the banner's margin and padding take (pixels)
BANNER_SPARE_PX = 32


def _typing_into(w: QWidget | None) -> bool:
    """Whether ``w`` is a field one types into (keys are its own there)."""
    if isinstance(w, (QLineEdit, QTextEdit, QPlainTextEdit)):
        return not w.isReadOnly()
    return isinstance(w, QAbstractSpinBox) or (isinstance(w, QComboBox) and w.isEditable())


class _Decide(QUndoCommand):
    """One decision about a detection: its old and new state and label."""

    def __init__(self, mode: ReviewMode, review: Review, i: int, new: tuple[str, str],
                 advance: bool) -> None:
        state = new[0] or "pending"
        super().__init__(f"{state} detection {i + 1}" + (f" as '{new[1]}'" if new[1] and
                                                         state == ACCEPTED else ""))
        self._mode, self._review, self._i = mode, review, i
        self._old = (review.states[i], review.labels[i])
        self._new = new
        self._advance = advance

    def redo(self) -> None:
        self._mode.apply(self._review, self._i, *self._old, *self._new)
        if self._advance:
            self._mode.step(1, quiet=True)

    def undo(self) -> None:
        self._mode.apply(self._review, self._i, *self._new, *self._old)
        if self._mode.active and self._review is self._mode.review:
            self._mode.show(self._i)


class ReviewMode(QObject):
    """Stepping through the detections of a :class:`DetectionController` by keys.

    Parameters
    ----------
    ctl : DetectionController
        The controller whose review this steps through; also the Qt parent.
    """

    def __init__(self, ctl: Any) -> None:
        super().__init__(ctl)
        self.ctl = ctl
        self.shell = ctl.shell
        self.active = False
        #: milliseconds from showing a detection to the next image drawn (the last ones)
        self.draw_ms: list[float] = []
        self._shown_at: float | None = None
        self._played = False
        #: the transport's band fields as the person had them before a detection played
        self._band_kept: tuple[str, str, bool] | None = None
        self._listening = False  # connected to the playback's playingChanged
        self.shell.imageShown.connect(self._image_shown)

    @property
    def review(self) -> Review | None:
        return self.ctl.review

    # -- on and off ------------------------------------------------------------------------
    def start(self, index: int | None = None) -> None:
        """Review mode on, at ``index`` (default: the first detection still pending)."""
        r = self.review
        if r is None or not len(r):
            self.shell.show_message("Nothing to review: run a detector first", 5000)
            return
        if index is None:
            index = r.index if r.states[r.index] == PENDING else (r.next_pending(r.index)
                                                                   or r.index)
        if not self.active:
            self.active = True
            QApplication.instance().installEventFilter(self)
        self.shell.view.setFocus()
        self.show(index)

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        QApplication.instance().removeEventFilter(self)
        self._clear_play_selection()
        self.ctl.layer.set_current(None)
        self.ctl.layer.set_banner("")
        self.shell.show_message("Review ended", 3000)

    # -- showing ---------------------------------------------------------------------------
    def show(self, i: int) -> None:
        """Detection ``i`` zoomed with context, highlighted, described in the status bar."""
        r = self.review
        if r is None or not len(r):
            return
        i = min(max(int(i), 0), len(r) - 1)
        r.index = i
        self._clear_play_selection()
        self._shown_at = time.perf_counter()
        view = self.shell.view
        before = view.visible_range()
        # the highlight is drawn by the redraw the change of range makes
        self.ctl.layer.set_current(i, redraw=False)
        # one jump, its viewport emitted at once (no debounce): the image is asked for now
        view.jump_to(*self.context(i))
        if view.visible_range() == before:  # the same view: no redraw came
            self.ctl.layer.redraw()
        self.ctl.layer.set_banner(self.banner(i))
        self.ctl.panel.select_row(i)
        self.shell.show_message(self.describe(i), 0)

    def context(self, i: int) -> tuple[float, float, float | None, float | None]:
        """The view detection ``i`` is shown in: its time span with context (three times
        its duration, at least :data:`MIN_SPAN_S`) and its band with half a band either
        side (None, None: the frequency range stays)."""
        e = self.review.events[i]
        rec = self.shell.document.recording
        span = max(3.0 * e.duration_s, MIN_SPAN_S)
        c = 0.5 * (e.start_s + e.stop_s)
        t0 = max(0.0, min(c - span / 2, rec.duration - span))
        t1 = min(rec.duration, t0 + span)
        if e.low_hz is None:
            return t0, t1, None, None
        lo, hi = _band(rec)
        pad = max(0.5 * (e.high_hz - e.low_hz), 0.02 * (hi - lo))
        return t0, t1, max(lo, e.low_hz - pad), min(hi, e.high_hz + pad)

    def prepare_next(self) -> bool:
        """Render the next detections' views (:data:`AHEAD` of them) on the compute thread
        while this one is looked at (idle-time work, cancelled by any other view), so the
        next keys find their images ready."""
        r = self.review
        if r is None or not self.active or not r.index + 1 < len(r):
            return False
        spans = [self.context(j)[:2] for j in range(r.index + 1,
                                                     min(len(r), r.index + 1 + AHEAD))]
        return self.shell.views.prepare_views(spans)

    def banner(self, i: int) -> str:
        """What the view says over the plot about detection ``i``: on a recording with
        absolute times a second line with its date and time, the file it is in and the
        time into it (two lines when one does not fit over the plot)."""
        r = self.review
        e = r.events[i]
        unit = " dB" if r.events.detector in SNR_DETECTORS else ""
        score = "" if math.isnan(e.score) else f"  ·  score {e.score:.3g}{unit}"
        state = {ACCEPTED: "accepted", REJECTED: "rejected"}.get(r.states[i], "to review")
        label = f" '{r.labels[i]}'" if r.labels[i] and r.states[i] == ACCEPTED else ""
        head = f"Review {i + 1} / {len(r)}{score}  ·  {state}{label}"
        where = self._where(float(e.start_s))
        if not where:
            return head
        line = "  ·  ".join(where)
        return "\n".join([head, line] if self._fits(line) else [head, *where])

    def _where(self, t: float) -> list[str]:
        """Axis point ``t`` s as a date and time, and the file it is in with the time into
        it; [] when the recording has no absolute times."""
        timeline = getattr(self.shell.view, "timeline", None)
        if timeline is None:
            return []
        parts = [timeline.format(timeline.to_time(t))]
        where = timeline.file_at(t)
        if where is not None:
            parts.append(f"{where[0]} {offset_text(where[1])}")
        return parts

    def _fits(self, line: str) -> bool:
        """Whether ``line`` fits the banner's room over the plot."""
        layer = self.ctl.layer
        layer.banner.ensurePolished()  # its style sheet's bold font
        room = layer.vb.sceneBoundingRect().width() - BANNER_SPARE_PX
        return layer.banner.fontMetrics().horizontalAdvance(line) <= room

    def describe(self, i: int) -> str:
        """What the status bar says about detection ``i``: on a recording with absolute
        times only the keys, short enough for a small screen beside the readout's date and
        file (the banner over the plot says which detection, when and where, and the
        Detect panel the labels of 1 to 9), else where it is, its score and decision too."""
        r = self.review
        n = len(r.label_list[:9])
        if getattr(self.shell.view, "timeline", None) is not None:
            labels = f", 1–{n}" if n > 1 else ", 1" if n else ""
            return f"A accept, R reject{labels}, N/P, Esc"
        e = r.events[i]
        state = r.states[i] or "to review"
        label = f" '{r.labels[i]}'" if r.labels[i] else ""
        score = "" if math.isnan(e.score) else f", score {e.score:.3g}"
        keys = ", ".join(f"{k + 1} {v}" for k, v in enumerate(r.label_list[:9]))
        return (f"Review: detection {i + 1} of {len(r)} at {e.start_s:.3f} s{score}: "
                f"{state}{label}  —  A accept, R reject, {keys}, N/P, Space play, Esc")

    def _image_shown(self) -> None:
        """An image was drawn: after a detection was shown, how long it took; the status
        bar says again what is under review (the view's note on the image replaced it),
        unless a playback is saying what it plays."""
        if not self.active:
            return
        if self._shown_at is not None:
            self.draw_ms.append((time.perf_counter() - self._shown_at) * 1e3)
            del self.draw_ms[:-200]
            self._shown_at = None
        # (again after a resize: the view rendered ahead must have the view's width)
        self.prepare_next()
        r = self.review
        if r is not None and len(r) and not self._played:
            self.shell.show_message(self.describe(r.index), 0)
        if r is not None and len(r):  # (the plot's width may have changed)
            self.ctl.layer.set_banner(self.banner(r.index))

    # -- deciding --------------------------------------------------------------------------
    def decide(self, state: str, label: str | None = None, advance: bool = True) -> None:
        """Decide the detection under review (one undo step), then go to the next."""
        r = self.review
        if r is None or not len(r):
            return
        i = r.index
        new = (state, r.labels[i] if label is None else label)
        if new == (r.states[i], r.labels[i]):
            if advance:
                self.step(1)
            return
        self.shell.undo_stack.push(_Decide(self, r, i, new, advance))

    def accept(self, label: str | None = None) -> None:
        self.decide(ACCEPTED, label)

    def reject(self) -> None:
        self.decide(REJECTED)

    def label(self, number: int) -> None:
        """Accept with label ``number`` (1-based) of the label list."""
        r = self.review
        if r is None:
            return
        if not 1 <= number <= len(r.label_list):
            self.shell.show_message(f"No label {number}: the label list has "
                                    f"{len(r.label_list)} (Detect panel, Labels 1–9)", 5000)
            return
        self.accept(r.label_list[number - 1])

    def apply(self, review: Review, i: int, old_state: str, old_label: str, state: str,
              label: str) -> None:
        """Detection ``i`` from (old state, label) to (state, label), and its annotation."""
        remove, add = [], []
        if old_state == ACCEPTED:
            remove.append(review.annotation(i))
        review.decide(i, state, label)
        if state == ACCEPTED:
            add.append(review.annotation(i))
        if remove or add:
            self.shell.annotations.apply_change(remove, add)
        if review is self.review:
            self.ctl.decision_shown(i)
            if self.active:
                self.shell.show_message(self.describe(review.index), 0)
                self.ctl.layer.set_banner(self.banner(review.index))

    def step(self, direction: int, quiet: bool = False) -> None:
        """The next (1) or previous (-1) detection."""
        r = self.review
        if r is None or not len(r):
            return
        j = r.index + direction
        if not 0 <= j < len(r):
            c = r.counts()
            self.shell.show_message(
                f"{'Last' if direction > 0 else 'First'} detection: {c['accepted']} accepted, "
                f"{c['rejected']} rejected, {c['pending']} to review", 0)
            return
        if self.active or not quiet:
            self.show(j)
        else:
            r.index = j

    # -- playing ---------------------------------------------------------------------------
    def play(self) -> None:
        """Play the detection under review in its band (again: stop)."""
        pb = self.shell.playback
        if pb.playing:
            pb.stop()
            return
        r = self.review
        e = r.events[r.index]
        ch = e.channel if e.channel is not None else max(self.shell.settings.channel, 0)
        self.shell.annotations.select(Selection(e.start_s, e.stop_s, e.low_hz, e.high_hz, ch))
        self._played = True
        if not self._listening:
            pb.playingChanged.connect(self._playing_changed)
            self._listening = True
        # playing shows the detection's band in the transport's band fields: what the
        # person had there comes back when the playback ends
        self._band_kept = pb.transport.band_fields()
        pb.play()
        if not pb.playing:  # it could not start
            self._restore_band()

    def _playing_changed(self, playing: bool) -> None:
        if not playing:
            self._restore_band()

    def _restore_band(self) -> None:
        kept, self._band_kept = self._band_kept, None
        if kept is not None:
            self.shell.playback.transport.set_band_fields(kept)

    def _clear_play_selection(self) -> None:
        if self._played:
            self._played = False
            self.shell.playback.stop()
            self.shell.annotations.clear_selection()
        self._restore_band()

    # -- keys ------------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) \
                or not isinstance(obj, QWidget) or QWidget.window(obj) is not self.shell:
            return False
        assert isinstance(event, QKeyEvent)
        key = event.key()
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if key not in _KEYS or mods != Qt.KeyboardModifier.NoModifier \
                or _typing_into(QApplication.focusWidget()):
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the key comes as a key press, never as a menu shortcut
            return True
        if event.isAutoRepeat() and key not in _STEPS:
            return True  # a held A accepts one detection, not a run of them
        self.key(key)
        return True

    def key(self, key: int) -> None:
        """What a review key does (``Qt.Key`` values)."""
        if key == K.Key_A.value:
            self.accept()
        elif key == K.Key_R.value:
            self.reject()
        elif key in _DIGITS:
            self.label(_DIGITS[key])
        elif key in _STEPS:
            self.step(_STEPS[key])
        elif key == K.Key_Space.value:
            self.play()
        elif key == K.Key_Escape.value:
            self.stop()


def _band(rec) -> tuple[float, float]:
    cf = rec.center_frequency or 0.0
    half = rec.sample_rate / 2
    return (cf - half, cf + half) if rec.is_complex else (0.0, half)
