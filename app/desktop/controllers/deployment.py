"""Deployments in the app: File › Open folder, absolute time, Go to date/time, the diel plot.

:class:`DeploymentController` opens a folder of recordings as one recording
(:func:`specscope.compute.deployment.index_deployment`, then
:class:`~specscope.compute.deployment.Deployment`) as a job of the compute thread;
each file left out or reported is one line in View › Messages, and the status bar
says how many.  A recording with absolute times (a deployment, or a file stating its
start) gives the view its :class:`~specscope.compute.deployment.timeline.Timeline`:
dates on the time axes, in the annotation list and the Selection and Detect panels, gaps
marked with their lengths, the file under the cursor in the readout.  Go to date/time
(Ctrl+G) centres the view on a date and time; the "Detections per hour" dock counts the
current detections by date and hour of day
(:func:`~specscope.compute.deployment.timeline.diel_counts`, on the compute thread) and
exports them as CSV and PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PyQt6.QtCore import QObject, Qt
from PyQt6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)
from specscope.app.desktop.unsaved import ANNOTATIONS, REVIEW
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.compute.deployment import Deployment, DeploymentError, index_deployment
from specscope.compute.deployment.timeline import (
    Timeline,
    TimeNotRecorded,
    diel_counts,
    duration_text,
    write_diel_csv,
)
from specscope.compute.errors import InputError
from specscope.compute.timefmt import format_time, parse_time
from specscope.widgets.diel_panel import DielPanel

__all__ = ["DeploymentController", "GoToDialog"]


class GoToDialog(QDialog):
    """A date and time (or a time into the recording) to centre the view on; an error
    stays in the dialog as one line until the text is changed.

    Parameters
    ----------
    go : callable
        Called with the text on OK; returns "" when it went there, else the error.
    hint : str
        What to type, shown above the field.
    """

    def __init__(self, go, hint: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Go to date/time")
        self._go = go
        self.field = QLineEdit()
        self.field.setPlaceholderText(hint)
        self.field.setMinimumWidth(320)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #c00000;")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(hint))
        layout.addWidget(self.field)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.field.textEdited.connect(lambda _: self.error.setVisible(False))

    def _ok(self) -> None:
        problem = self._go(self.field.text())
        if problem:
            self.error.setText(problem)
            self.error.setVisible(True)
            return
        self.accept()


class DeploymentController(QObject):
    """Folders of recordings, absolute time and the diel plot of the main window.

    Parameters
    ----------
    shell : MainWindow
        The window (its worker, view, messages, detections and ``_document_opened``).
    parent : QObject, optional
    """

    def __init__(self, shell: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        #: the absolute times of the open recording (None: it states no start)
        self.timeline: Timeline | None = None
        #: the axis point (s) the last Go to centred on
        self.last_go_to: float | None = None
        self.go_dialog: GoToDialog | None = None
        self.panel = DielPanel()
        self.panel.exportRequested.connect(self.export_dialog)
        self.dock = QDockWidget("Detections per hour", shell)
        self.dock.setObjectName("detections-per-hour")
        self.dock.setWidget(self.panel)
        shell.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        shell.tabifyDockWidget(shell.annotations_dock, self.dock)
        self.dock.setVisible(False)
        shell.annotations_dock.raise_()
        shell.detection.detectionsChanged.connect(self.count)

    # -- opening a folder ----------------------------------------------------------------
    def open_folder_dialog(self) -> None:
        """File › Open folder: ask for a folder of recordings and open it."""
        doc = self.shell.document
        start = str(doc.path.parent) if doc is not None else ""
        path = QFileDialog.getExistingDirectory(self.shell, "Open folder of recordings",
                                                start)
        if path:
            self.open_folder(path)

    def open_folder(self, path: str | Path, **options) -> None:
        """Index the folder and open it as one recording (compute thread; Esc cancels).

        ``options`` go to :func:`~specscope.compute.deployment.index_deployment`
        (``tz``, ``name_pattern``, ``tolerance_s``).
        """
        path = Path(path)
        shell = self.shell
        if not shell.unsaved.confirm(lambda: self.open_folder(path, **options),
                                     f"opening {path.name}", (ANNOTATIONS, REVIEW)):
            return
        shell._opening_message = f"Indexing {path.name}…"
        shell.show_message(shell._opening_message, 0)

        def job(control: TaskControl) -> Deployment:
            control.check()
            index = index_deployment(path, progress=control.progress,
                                     cancelled=control.cancelled, **options)
            control.check()  # cancelled after indexing: nothing opens
            dep = Deployment(index, options)
            if control.cancelled():
                dep.close()
                control.check()
            return dep

        shell.worker.submit("open", job, label=f"Indexing {path.name}",
                            callbacks=JobCallbacks(done=self._opened, failed=self._failed,
                                                   cancelled=self._cancelled))

    def _opened(self, result: JobResult) -> None:
        dep: Deployment = result.value
        self.shell._document_opened(dep, {})

    def _failed(self, error: JobError) -> None:
        exc = error.exception
        for p in getattr(exc, "problems", ()) if isinstance(exc, DeploymentError) else ():
            self.shell.message_log.add(p.message, merge=False)
        self.shell.show_error(error.message)

    def _cancelled(self) -> None:
        self.shell.show_message("Opening the folder cancelled", 5000)

    # -- a recording shown ---------------------------------------------------------------
    def document_opened(self, recording: Any) -> None:
        """A recording is shown: its timeline on the view; a deployment's problems one
        line each in View › Messages, counted in the status bar."""
        self.last_go_to = None
        try:
            self.timeline = Timeline.of(recording)
        except (InputError, ValueError):
            self.timeline = None  # a start time that cannot be read: seconds, as before
        self.shell.view.set_timeline(self.timeline)
        # the annotation list, the Selection and Detect panels read their times as the
        # axis does
        self.shell.annotations.list.set_timeline(self.timeline)
        self.shell.annotations.panel.set_timeline(self.timeline)
        self.shell.detection.panel.set_timeline(self.timeline)
        self.count()
        index = getattr(recording, "index", None)
        if index is None or not isinstance(recording, Deployment):
            return
        for p in index.problems:
            self.shell.message_log.add(p.message, error=True, merge=False)
        tl = self.timeline
        text = (f"{Path(str(recording.path)).name}: {len(index.used)} files, "
                f"{tl.format(tl.start, 0)} to {tl.format(tl.end, 0)}, "
                f"{len(index.gaps)} gap(s)")
        if index.problems:
            left_out = sum(p.kind != "clock_back" for p in index.problems)
            text += (f"; {left_out} file(s) left out, {len(index.problems) - left_out} "
                     "reported (View › Messages lists each)")
        self.shell._opening_message = ""
        self.shell.show_message(text, 15000)

    # -- go to ---------------------------------------------------------------------------
    def go_to_dialog(self) -> None:
        """View › Go to date/time (Ctrl+G)."""
        hint = ("A date and time, e.g. 2024-05-01T14:30:00 (in "
                f"{self.timeline.tz} unless it names a zone), or a time into the recording"
                if self.timeline is not None else
                "A time into the recording, e.g. 12.5, 1:05 or 0:39:04.25")
        self.go_dialog = GoToDialog(self.go_to, hint, self.shell)
        self.go_dialog.open()

    def go_to(self, text: str) -> str:
        """Centre the view on ``text`` (a date and time, or a time into the recording),
        its width kept; "" when done, else the one-line error (also in the status bar)."""
        doc = self.shell.document
        if doc is None:
            return "Open a recording first"
        rec = doc.recording
        duration = rec.n_samples / float(rec.sample_rate)
        try:
            t = self._axis_point(text, duration)
        except InputError as exc:
            self.shell.show_error(str(exc), dialog=False)
            return str(exc)
        view = self.shell.view
        t0, t1, _, _ = view.visible_range()
        width = min(max(t1 - t0, 1e-6), duration)
        a = min(max(t - width / 2, 0.0), duration - width)
        view.jump_to(a, a + width)
        self.last_go_to = t
        where = (self.timeline.format(self.timeline.to_time(t)) if self.timeline is not None
                 else format_time(t))
        self.shell.show_message(f"Went to {where}", 5000)
        return ""

    def _axis_point(self, text: str, duration: float) -> float:
        tl = self.timeline
        if tl is not None:
            try:
                return tl.parse(text)
            except TimeNotRecorded:
                raise
            except InputError as no_date:
                try:
                    t = parse_time(text)
                except InputError:
                    raise no_date from None
        else:
            t = parse_time(text, "time")
        if not 0.0 <= t <= duration:
            raise InputError(f"{format_time(t)} lies outside the recording (0 to "
                             f"{format_time(duration)}, {duration_text(duration)})")
        return t

    # -- detections per hour -------------------------------------------------------------
    def count(self) -> None:
        """Count the current detections by date and hour (compute thread)."""
        review = self.shell.detection.review
        tl = self.timeline
        if review is None or not len(review):
            self.panel.set_counts(None, "No detections")
            return
        if tl is None:
            self.panel.set_counts(None, "The recording states no start time: no dates "
                                        "to count by")
            return
        starts = [float(s) for s in review.events.start_s]
        labels = list(review.labels)

        def job(control: TaskControl):
            times = [tl.to_time(s) for s in starts]
            return diel_counts(times, labels, tz=tl.tz, timeline=tl)

        self.shell.worker.submit(
            "diel", job, label="", callbacks=JobCallbacks(
                done=self._counted, failed=lambda e: self.shell.show_error(e.message,
                                                                           dialog=False)))

    def _counted(self, result: JobResult) -> None:
        self.panel.set_counts(result.value)  # a newer count supersedes an older one

    def export_dialog(self) -> None:
        """Export…: ask for a CSV file; the PNG goes beside it."""
        path, _ = QFileDialog.getSaveFileName(self.shell, "Export detections per hour",
                                              "detections_per_hour.csv", "CSV (*.csv)")
        if path:
            self.export_to(path)

    def export_to(self, path: str | Path) -> int | None:
        """Write the counts to ``path`` (CSV, compute thread) and the plot beside it
        (``.png``); returns the job id."""
        counts = self.panel.counts
        if counts is None:
            self.shell.show_message("No detections to export", 5000)
            return None
        path = Path(path)
        png = path.with_suffix(".png")

        def job(control: TaskControl) -> Path:
            return write_diel_csv(path, counts)

        def done(_: JobResult) -> None:
            if not self.panel.plot.grab().save(str(png)):
                self.shell.show_error(f"{png}: could not write the PNG", dialog=False)
                return
            self.shell.show_message(f"Detections per hour written to {path} and {png.name}",
                                    8000)

        return self.shell.worker.submit(
            "diel_export", job, label=f"Writing {path.name}",
            callbacks=JobCallbacks(done=done, failed=lambda e: self.shell.show_error(
                e.message, dialog=False)))
