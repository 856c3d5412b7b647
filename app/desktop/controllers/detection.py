"""Detecting in the app: the Detect panel, the detection layer, Find similar, the comparison.

:class:`DetectionController` runs a detector of :mod:`specscope.compute.detect`
on the open recording (or the visible range, on the channel shown) as a job of
the compute thread, chunk by chunk with progress and Cancel; the GUI thread
only draws the result.  The detections are a layer apart from the annotations
(:class:`~specscope.widgets.detection_layer.DetectionLayer`: dashed boxes with
their scores) and a table in the panel; their review (accepted, rejected,
labels) is a :class:`~specscope.app.review.Review`, stepped through by
:class:`~.review.ReviewMode` and kept in the session file.

* **Find similar**: the selected box (or the current annotation) becomes the
  template of ``detect.template`` (normalised cross-correlation of its
  spectrogram patch) over the recording;
* **Compare**: precision, recall and F1 per label of the detections (with the
  labels given in review) against the annotations not made from them
  (:func:`specscope.compute.detect.compare.compare`);
* **Export…**: every detection with its score and decision
  (:meth:`~specscope.app.review.Review.write_table`: Raven, Audacity, CSV,
  SigMF, HDF5; Raven and CSV with ``Score`` and ``Review`` columns), the file
  type chosen and the name's extension always agreeing.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from PyQt6.QtCore import QObject, Qt, pyqtSignal
from specscope.app.desktop.controllers.annotations import EXPORT_FILTERS
from specscope.app.desktop.controllers.review import ReviewMode
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.app.review import DEFAULT_LABELS, Review
from specscope.compute.annotations import FORMATS as ANNOTATION_FORMATS
from specscope.compute.detect import Events, detect, detector_names
from specscope.compute.detect.compare import Box, compare
from specscope.compute.errors import SpecscopeError
from specscope.compute.operators import describe_operator
from specscope.widgets.detect_panel import DetectPanel
from specscope.widgets.detection_layer import DetectionLayer
from specscope.widgets.export_dialog import FormatFileDialog

__all__ = ["DetectionController", "panel_detectors"]

#: chunk of a detector job (samples per channel): progress and Cancel between chunks
CHUNK = 1 << 18


def panel_detectors() -> list[str]:
    """The detectors the panel offers: the built-ins and the shipped onset detector.

    Returns
    -------
    list of str
        Operator names, ``detect.energy`` first; ``onsets.detect`` last when its
        plugin is loaded.
    """
    names = sorted(detector_names(), key=lambda n: (n != "detect.energy", n))
    try:
        describe_operator("onsets.detect")
        names.append("onsets.detect")
    except SpecscopeError:
        pass
    return names


class DetectionController(QObject):
    """The detections of the open recording and their review.

    Parameters
    ----------
    shell : MainWindow
        The main window: its document, settings, worker, view, annotations, playback,
        undo stack, messages and ``detect_dock``.
    parent : QObject or None, optional
        The Qt parent.

    Signals
    -------
    detectionsChanged()
        New detections (a run, Find similar, a session, Clear).
    reviewSaved(object)
        The review's decisions were written to a table: ``(review, states, labels)`` as
        they were when the export started.
    """

    detectionsChanged = pyqtSignal()
    reviewSaved = pyqtSignal(object)

    def __init__(self, shell: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.panel = DetectPanel(panel_detectors())
        self.layer = DetectionLayer(shell.view, self)
        #: the detections and their decisions (None: no detections)
        self.review: Review | None = None
        self.mode = ReviewMode(self)
        self._job = 0
        p = self.panel
        p.runRequested.connect(self.run)
        p.cancelRequested.connect(self.cancel)
        p.findSimilarRequested.connect(self.find_similar)
        p.reviewRequested.connect(self.mode.start)
        p.compareRequested.connect(self.compare)
        p.exportRequested.connect(self.export_dialog)
        p.clearRequested.connect(self.clear)
        p.rowActivated.connect(self._row_activated)
        p.labelsChanged.connect(self._labels_changed)

    # -- running -------------------------------------------------------------------------
    def run(self, detector: str, params: dict, visible_only: bool = False) -> int | None:
        """Run ``detector`` on the compute thread; the detections replace the old ones."""
        doc = self.shell.document
        if doc is None:
            self.shell.show_message("Open a recording first", 5000)
            return None
        span = None
        if visible_only:
            t0, t1, _, _ = self.shell.view.visible_range()
            span = (max(0.0, t0), min(doc.recording.duration, t1))
        return self._submit(detector, dict(params), span)

    def show_panel(self) -> None:
        """Detect › Detect panel: the dock shown, in front of those it shares a place with."""
        dock = self.shell.detect_dock
        dock.setVisible(True)
        dock.raise_()
        # the dock scrolls when short; when asked for, it gets the height its panel wants
        # (up to three quarters of the window), taken from the docks beside it
        wanted = min(self.panel.sizeHint().height() + 30, int(0.75 * self.shell.height()))
        self.shell.resizeDocks([dock], [wanted], Qt.Orientation.Vertical)
        self.shell.show_message("Detect: choose a detector and its parameters, then Run; "
                                "Ctrl+R reviews the detections", 8000)

    def run_from_panel(self) -> None:
        """Detect › Run detector: the panel's detector and form, as its Run button."""
        self.show_panel()
        self.panel.run_button.click()

    def find_similar_from_panel(self) -> None:
        """Detect › Find similar: at the panel's threshold, as its button."""
        self.show_panel()
        self.panel.similar_button.click()

    def _channels(self) -> list[int] | None:
        ch = self.shell.settings.channel
        return None if ch < 0 else [ch]

    def _submit(self, detector: str, params: dict, span: tuple[float, float] | None) -> int:
        rec = self.shell.document.recording
        channels = self._channels()
        where = "the visible range" if span else "the recording"

        def job(control: TaskControl) -> Events:
            events = detect(rec, detector, params, channels=channels,
                            start_s=None if span is None else span[0],
                            stop_s=None if span is None else span[1], chunk=CHUNK,
                            progress=control.progress, cancel=control.cancelled)
            # a mono recording's annotations have no channel (as those drawn by hand)
            return events.with_channel(None) if rec.n_channels == 1 else events

        self.panel.set_running(True)
        self.panel.status.setText(f"Running {detector} on {where}…")
        self._job = self.shell.worker.submit(
            "detect", job, label=f"Detecting ({detector})",
            callbacks=JobCallbacks(done=self._found, failed=self._failed,
                                   cancelled=self._cancelled))
        return self._job

    def cancel(self) -> None:
        self.shell.worker.cancel("detect")

    def _found(self, result: JobResult) -> None:
        self.panel.set_running(False)
        events: Events = result.value
        self.set_review(Review(events, label_list=self.panel.label_list() or DEFAULT_LABELS))
        self.show_panel()
        self.shell.show_message(f"{len(events)} detections by {events.detector} in "
                                f"{result.seconds:.2f} s", 8000)

    def _failed(self, error: JobError) -> None:
        self.panel.set_running(False)
        self.panel.status.setText(f"Error: {error.message}")
        self.shell.show_error(error.message, dialog=False)

    def _cancelled(self) -> None:
        self.panel.set_running(False)
        self.panel.status.setText("Cancelled")
        self.shell.show_message("Detection cancelled", 5000)

    # -- what is shown -------------------------------------------------------------------
    def boxes(self) -> np.ndarray:
        e = self.review.events if self.review is not None else None
        if e is None or not len(e):
            return np.zeros((0, 4))
        return np.column_stack([e.start_s, e.stop_s, e.low_hz, e.high_hz])

    def set_review(self, review: Review | None) -> None:
        """Show ``review``'s detections (None: none); not an undo step."""
        self.mode.stop()
        self.review = review
        self.layer.current = None
        if review is None or not len(review):
            self.layer.clear()
            self.panel.model.set_rows([], [], [], [])
            self.panel.status.setText("No detections" if review is None else
                                      f"No detections by {review.events.detector}")
            self.panel.set_has_detections(False)
        else:
            boxes = self.boxes()  # arrays: nothing per detection is built here
            self.layer.set_detections(boxes, review.events.score, review.states)
            self.panel.model.set_rows(boxes, review.events.score, review.labels,
                                      review.states)
            if review.label_list:
                self.panel.set_label_list(review.label_list)
            self.panel.set_has_detections(True)
            self.update_status()
        self.panel.scores.setText("")
        self.detectionsChanged.emit()

    def update_status(self) -> None:
        r = self.review
        if r is None:
            return
        c = r.counts()
        self.panel.status.setText(f"{len(r)} detections by {r.events.detector}: "
                                  f"{c['accepted']} accepted, {c['rejected']} rejected, "
                                  f"{c['pending']} to review")

    def decision_shown(self, i: int) -> None:
        """Detection ``i``'s decision changed: its row, its colour, the counts."""
        r = self.review
        self.panel.model.set_decision(i, r.labels[i], r.states[i])
        self.layer.set_states(r.states)
        self.update_status()

    def clear(self) -> None:
        self.set_review(None)

    def document_opened(self) -> None:
        """A new recording: no detections."""
        self.cancel()
        self.set_review(None)

    def _row_activated(self, row: int) -> None:
        if self.review is None:
            return
        if self.mode.active:
            self.mode.show(row)
        else:
            self.mode.start(row)

    def _labels_changed(self, labels: list) -> None:
        if self.review is not None:
            self.review.label_list = list(labels)

    # -- find similar ----------------------------------------------------------------------
    def template_box(self) -> tuple[float, float, float | None, float | None, int] | None:
        """The selection, else the current annotation: (t0, t1, f0, f1, channel)."""
        ann = self.shell.annotations
        s = ann.selection
        if s is not None:
            return s.start_s, s.stop_s, s.freq_low_hz, s.freq_high_hz, s.channel
        a = ann.annotation(ann.current) if ann.current else None
        if a is not None:
            ch = a.channel if a.channel is not None else max(self.shell.settings.channel, 0)
            return a.start_s, a.stop_s, a.freq_low_hz, a.freq_high_hz, ch
        return None

    def find_similar(self, threshold: float = 0.5) -> int | None:
        """Template matching with the selected box as template, over the recording."""
        if self.shell.document is None:
            return None
        box = self.template_box()
        if box is None:
            self.shell.show_message("Find similar: select a box (Ctrl+drag) or an annotation "
                                    "first", 6000)
            return None
        t0, t1, f0, f1, ch = box
        stft = self.shell.settings.stft
        params: dict[str, Any] = {"template_start_s": t0, "template_stop_s": t1,
                                  "template_low_hz": f0, "template_high_hz": f1,
                                  "template_channel": ch, "threshold": float(threshold),
                                  "nfft": stft.nfft, "hop": stft.hop, "label": "similar"}
        return self._submit("detect.template", params, None)

    # -- comparison ------------------------------------------------------------------------
    def truth(self) -> list:
        """The annotations the detections are compared with: those not made from them."""
        name = self.review.events.detector if self.review is not None else ""
        return [a for a in self.shell.annotations.annotations if a.generator != name]

    def comparison(self, min_overlap: float = 0.3) -> list[dict]:
        """Rows of precision, recall and F1 per label (``"*"``: all labels)."""
        r = self.review
        if r is None:
            return []
        e = r.events
        boxes = [(float(e.start_s[i]), float(e.stop_s[i]), e.low_hz[i], e.high_hz[i],
                  r.labels[i]) for i in range(len(r))]
        det = [Box(a, b, None if math.isnan(lo) else float(lo),
                   None if math.isnan(hi) else float(hi), lab) for a, b, lo, hi, lab in boxes]
        return [row.to_dict() for row in compare(det, self.truth(), min_overlap=min_overlap)]

    def compare(self) -> list[dict]:
        rows = self.comparison()
        if not rows:
            return rows
        if not self.truth():
            self.shell.show_message("Compare: there are no annotations to compare with "
                                    "(import or draw some)", 6000)
        self.panel.show_scores(rows)
        return rows

    # -- export ----------------------------------------------------------------------------
    def export_dialog(self) -> int | None:
        """Detect › Export detections…: the type chosen, the name's extension following it
        (:class:`~specscope.widgets.export_dialog.FormatFileDialog`); the job id, None
        when cancelled."""
        if self.review is None or self.shell.document is None:
            return None
        rec = self.shell.document.recording
        start = str(rec.path.with_name(rec.path.stem + ".detections.selections.txt"))
        # the type chosen in the dialog and the name's extension agree, whatever the order
        chosen = FormatFileDialog.ask(self.shell.dialog_parent(), "Export detections", start,
                                      [(text, fmt, ANNOTATION_FORMATS[fmt].suffixes)
                                       for text, fmt in EXPORT_FILTERS])
        if chosen is None:
            return None
        path, fmt = chosen
        return self.export_to(path, fmt)

    def export_to(self, path: str | Path, fmt: str | None = None) -> int | None:
        """Write every detection with its decision (compute thread); returns the job id."""
        r = self.review
        if r is None or self.shell.document is None:
            return None
        snapshot = Review(r.events, r.states, r.labels, r.index, r.label_list)
        decided = (r, tuple(r.states), tuple(r.labels))
        rec = self.shell.document.recording

        def job(control: TaskControl) -> Path:
            return snapshot.write_table(path, format=fmt, recording=rec)

        def done(res: JobResult) -> None:
            c = snapshot.counts()
            self.shell.show_message(f"{len(snapshot)} detections ({c['accepted']} accepted) "
                                    f"written to {res.value}", 8000)
            self.reviewSaved.emit(decided)

        return self.shell.worker.submit(
            "detect-export", job, label="Writing the detections",
            callbacks=JobCallbacks(done=done,
                                   failed=lambda e: self.shell.show_error(e.message)))

    # -- sessions --------------------------------------------------------------------------
    def session_state(self) -> dict | None:
        return None if self.review is None else self.review.to_dict()

    def restore(self, state: dict | None) -> None:
        """The detections and review of a session (checked when it was read)."""
        if state is None:
            return
        try:
            self.set_review(Review.from_dict(state))
        except SpecscopeError as exc:
            self.shell.show_error(str(exc), dialog=False)
