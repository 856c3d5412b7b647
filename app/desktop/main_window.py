"""The main window: the shell that wires docks, menus, dialogs and the app's controllers.

The GUI thread only draws: opening, computing and exporting are compute-thread jobs
(:mod:`specscope.app.qt.worker`) whose results arrive as signals; the controllers (view,
designer, processing, exports) do the work, the menus come from the action table of
:mod:`specscope.app.desktop.actions`, session files from :mod:`specscope.app.session`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

from PyQt6.QtCore import QEvent, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QActionGroup, QUndoStack
from PyQt6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QWidget,
)
from specscope.app.desktop.actions import ACTIONS, ShortcutGuard, build_menus, shortcut_rows
from specscope.app.desktop.controllers.annotations import AnnotationsController
from specscope.app.desktop.controllers.calibration import CalibrationController
from specscope.app.desktop.controllers.deployment import DeploymentController
from specscope.app.desktop.controllers.designer import DesignerController
from specscope.app.desktop.controllers.detection import DetectionController
from specscope.app.desktop.controllers.levels import LevelsController
from specscope.app.desktop.controllers.playback import PlaybackController
from specscope.app.desktop.controllers.processing import ProcessingController
from specscope.app.desktop.controllers.profiler import ProfilerController
from specscope.app.desktop.controllers.regions import RegionsController
from specscope.app.desktop.display_undo import DisplayUndo
from specscope.app.desktop.exports import Exports
from specscope.app.desktop.unsaved import ANNOTATIONS, REVIEW, UnsavedWork
from specscope.app.qt.shell import SettingsChange
from specscope.app.qt.view_controller import BACKGROUND_KINDS, ViewController
from specscope.app.qt.worker import ComputeWorker, JobCallbacks, JobError, JobResult, TaskControl
from specscope.app.session import (
    Document,
    ViewSettings,
    annotations_from_session,
    forget_recent,
    last_session_path,
    listening_from_session,
    load_session,
    recent_files,
    remember_recent,
    session_state,
    settings_from_session,
    write_session,
)
from specscope.compute import __version__
from specscope.compute import backend as compute_backend
from specscope.compute.errors import InputError, MissingOption, RecordingError, SpecscopeError
from specscope.compute.io import Recording, open_recording, readers
from specscope.compute.pipeline import Pipeline
from specscope.compute.spectral import StftParams
from specscope.compute.view.scales import freq_scale_problem, usable_freq_scale
from specscope.widgets.detect_panel import FittingScroll
from specscope.widgets.messages import ElidedLabel, MessageLog, MessagesDialog
from specscope.widgets.readout import reserve_readout
from specscope.widgets.recording_options import RecordingOptionsDialog, option_message
from specscope.widgets.shortcuts_dialog import ShortcutsDialog
from specscope.widgets.spectrogram_controls import SpectrogramControls
from specscope.widgets.spectrogram_view import SpectrogramView

__all__ = ["OPEN_FILTER", "MainWindow"]

OPEN_FILTER = ("Recordings (*.wav *.wave *.flac *.ogg *.oga *.aif *.aiff *.w64 *.rf64 *.caf "
               "*.sigmf-meta *.sigmf-data *.h5 *.hdf5 *.npy *.mat *.cf32 *.cfile *.cs16 *.ci16 "
               "*.cs8 *.cu8 *.iq *.raw *.bin *.dat);;All files (*)")
SESSION_FILTER = "Sessions (*.json)"


#: widest the progress bar gets (pixels): it shows the percentage, the job's text is beside it
PROGRESS_BAR_WIDTH = 110
#: a job shown in the status bar this long (s) or longer goes in View › Messages when it ends
LOGGED_JOB_S = 2.0
#: least height of the spectrogram settings (pixels): a few rows; below their own height
#: they scroll
SETTINGS_MIN_HEIGHT = 150


class MainWindow(QMainWindow):
    """specscope's main window.

    Parameters
    ----------
    settings : ViewSettings or None, optional
        The analysis settings to start with; None: the defaults.
    interactive : bool, optional
        False: never ask with a modal dialog (screenshots, tests).
    backend_name : str, optional
        The compute backend shown in the status bar.

    Signals
    -------
    imageShown()
        A computed spectrogram was drawn (used by ``--screenshot`` and tests).
    errorShown(str)
        An error message was shown to the person.
    """

    imageShown = pyqtSignal()
    errorShown = pyqtSignal(str)
    #: a GPU failure computed on the CPU (emitted on the thread that ran the operator)
    gpuFallback = pyqtSignal(str)

    def __init__(self, settings: ViewSettings | None = None, *, interactive: bool = True,
                 backend_name: str = "numpy (CPU)") -> None:
        super().__init__()
        self.setWindowTitle("specscope")
        self.resize(1280, 760)
        self.setAcceptDrops(True)
        self._interactive = interactive  # False: no modal dialogs (screenshots, tests)
        self.document: Document | None = None
        self.settings = settings or ViewSettings()
        self.last_error: str | None = None
        self._pending_session: dict | None = None
        self.shortcuts_dialog: ShortcutsDialog | None = None
        #: every message shown, whole, with its time (View › Messages)
        self.message_log = MessageLog(self)
        self.messages_dialog: MessagesDialog | None = None

        self.worker = ComputeWorker(self)
        self.worker.started.connect(self._on_started)
        self.worker.progress.connect(self._on_progress)
        self.worker.idle.connect(self._on_idle)
        # a plugin call running long says so ("" when it ended); see compute.operators.watch
        self.worker.slow.connect(self._plugin_slow)
        self._running_job = 0  # the job whose progress the bar shows
        #: the jobs whose text the status bar showed: (text, start), until they end
        self._jobs_shown: dict[int, tuple[str, float]] = {}
        self.worker.finished.connect(self._job_finished)
        self.worker.failed.connect(self._job_failed)
        self.worker.cancelled.connect(self._job_cancelled)

        self.view = SpectrogramView(self)
        self.overview = self.view.overview
        self.setCentralWidget(self.view)
        self.views = ViewController(self, self)
        self.views.imageShown.connect(self.imageShown)
        self.controls = SpectrogramControls(self)
        self._show_settings(self.settings)
        self.processing = ProcessingController(self, self)
        self.controls.layout().insertWidget(2, self.processing.view_box)
        self.designer_panel = DesignerController(self, self.views, self)
        self.designer = self.designer_panel.designer
        self.exports = Exports(self, self.views, self)
        self.annotations = AnnotationsController(self, self.exports.export_range_dialog, self,
                                                 interactive=interactive)
        self.exports.selection_span = self.annotations.selection_span
        #: region tools over the view and the edits made with them (Edit › Region)
        self.regions = RegionsController(self, self.annotations, self, interactive=interactive)
        self.playback = PlaybackController(self, self)
        self.profiler = ProfilerController(self.worker, self)
        self.transport_bar = self.playback.transport
        self.detection = DetectionController(self, self)
        self.addToolBar(self.transport_bar)
        self._build_docks()
        #: folders of recordings, absolute time, Go to date/time, detections per hour
        self.deployment = DeploymentController(self, self)
        #: long-term sound levels (the Levels dock)
        self.levels = LevelsController(self, self)

        self.undo_stack = QUndoStack(self)
        #: what is unsaved (the title's *): asked about before it would be lost; the
        #: annotations are autosaved
        self.unsaved = UnsavedWork(self, interactive=interactive)
        # before the controls reach the view: its slots read the old display values
        self.display_undo = DisplayUndo(self.view, self.controls, self.undo_stack)
        #: the recording's calibration (View › Calibration…)
        self.calibration = CalibrationController(self, self)
        self.controls.paramsChanged.connect(self._on_params_changed)
        self.controls.levelsChanged.connect(self._on_levels_from_controls)
        self.controls.colormapChanged.connect(self.view.set_colormap)
        self.controls.gammaChanged.connect(self.view.set_gamma)
        self.controls.autoLevelsRequested.connect(self.views.auto_levels)
        self.controls.freqScaleChanged.connect(self.set_frequency_scale)
        self.views.levelsFitted.connect(self.controls.set_levels)
        self.view.levelsChanged.connect(self.controls.set_levels)
        self.view.cursorMoved.connect(self.show_cursor)
        # bound methods, not lambdas: Qt disconnects them when the window is destroyed
        self.view.viewportChanged.connect(self._viewport_changed)
        self.overview.regionChanged.connect(self.view.set_time_range)

        self.menu_actions = build_menus(self, self.menuBar())
        self.playback.bind_actions(self.menu_actions)
        self.regions.bind_actions(self.menu_actions)
        self.shortcut_guard = ShortcutGuard(self)
        self.processing.set_menu(self.representation_menu)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self._build_status_bar(backend_name)
        self._build_compute_menu()
        self.show_message("Open a recording with File › Open (Ctrl+O) or drop a file here", 0)
        self.worker.submit("backends", _probe_backends, label="Looking for a GPU",
                           callbacks=JobCallbacks(done=self._backends_found,
                                                  failed=self._view_failed))
        self.processing.load_catalogue()

    # -- construction ------------------------------------------------------------
    def _add_dock(self, title: str, name: str, widget: QWidget,
                  area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        right = Qt.DockWidgetArea.RightDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        # the right column keeps the window's height: a bottom dock (the designer) takes
        # its height from the spectrogram, never from the panels beside it
        self.setCorner(Qt.Corner.BottomRightCorner, right)
        self.settings_dock = self._add_dock("Spectrogram", "spectrogram-settings",
                                            FittingScroll(self.controls, SETTINGS_MIN_HEIGHT,
                                                          frame=True, grow=True),
                                            right)
        self.settings_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                       | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.processing_dock = self._add_dock("Processing", "processing",
                                              self.processing.editor, right)
        self.tabifyDockWidget(self.settings_dock, self.processing_dock)
        self.settings_dock.raise_()
        self.designer_dock = self._add_dock("Filter designer", "filter-designer",
                                            self.designer_panel.panel, bottom)
        self.designer_dock.setVisible(False)
        self.annotations_dock = self._add_dock("Annotations", "annotations",
                                               self.annotations.list, bottom)
        # the panels scroll their values themselves, their buttons always in view
        self.measurement_dock = self._add_dock("Selection", "selection",
                                               self.annotations.panel, right)
        self.regions_dock = self._add_dock("Regions", "regions", self.regions.panel, right)
        self.tabifyDockWidget(self.measurement_dock, self.regions_dock)
        self.measurement_dock.raise_()
        # its summary line grows with the jobs: beside the designer on a small screen it
        # scrolls sideways rather than making the window wider than the screen
        profiler = FittingScroll(self.profiler.panel,
                                 self.profiler.panel.minimumSizeHint().height(),
                                 grow=True, sideways=True)
        self.profiler_dock = self._add_dock("Profiler", "profiler", profiler, bottom)
        # a table like the annotations: a tab beside them, not a third column under the view
        self.tabifyDockWidget(self.annotations_dock, self.profiler_dock)
        self.profiler_dock.setVisible(False)
        self.detect_dock = self._add_dock("Detect", "detect", self.detection.panel, right)
        self.tabifyDockWidget(self.processing_dock, self.detect_dock)
        self.settings_dock.raise_()
        self.annotations_dock.raise_()
        self.designer_dock.visibilityChanged.connect(self._designer_shown)
        self.designer_panel.panelWanted.connect(self._show_designer)
        QTimer.singleShot(0, self._initial_dock_sizes)
        # N is the designer's notch key while it is open (its button says so)
        self.annotations.view_n_taken = self.designer_dock.isVisible

    def _initial_dock_sizes(self) -> None:
        # the annotation list starts as a strip: the spectrogram gets the height
        self.resizeDocks([self.annotations_dock], [150], Qt.Orientation.Vertical)
        self._fit_settings_dock()

    def _fit_settings_dock(self) -> None:
        """The spectrogram settings as tall as they want, the Selection the rest; each
        keeps its least height (below their own height they scroll)."""
        settings, selection = self.settings_dock, self.measurement_dock
        room = settings.height() + selection.height()  # what the two share now
        high = min(settings.sizeHint().height(),
                   room - selection.minimumSizeHint().height())
        high = max(high, settings.minimumSizeHint().height())
        ask = high
        for _ in range(2):  # Qt gives a tabbed dock a few pixels less than asked: ask again
            self.resizeDocks([settings, selection], [ask, room - ask], Qt.Orientation.Vertical)
            self.layout().activate()
            if settings.height() >= high:
                break
            ask += high - settings.height()

    def _show_designer(self) -> None:
        self.designer_dock.setVisible(True)

    def _viewport_changed(self, t0: float, t1: float, f0: float, f1: float, width: int,
                          height: int) -> None:
        self.views.set_viewport(t0, t1, width)

    def _designer_shown(self, visible: bool) -> None:
        if visible:  # leave the spectrogram most of the height
            self.resizeDocks([self.designer_dock], [max(260, self.height() // 3)],
                             Qt.Orientation.Vertical)

    def _build_status_bar(self, backend_name: str) -> None:
        sb = self.statusBar()
        self.file_label = ElidedLabel("no recording")
        self.cursor_label = QLabel("")
        # as wide as the longest readout of its kind (the cursor alone, or with the Δ to a
        # reference): never cut, never jumping with the text; the file info and messages
        # give way (their full text is their tool tip)
        reserve_readout(self.cursor_label, False)
        self.cursor_label.setSizePolicy(QSizePolicy.Policy.Minimum,
                                        QSizePolicy.Policy.Preferred)
        self._opening_message = ""
        self.imageShown.connect(self._first_image_shown)
        # a message shares the room the readout leaves with the file info (both give way
        # down to a few characters); a long one ends in an ellipsis, the whole of it in
        # the tool tip
        self.message_label = ElidedLabel("", elide=Qt.TextElideMode.ElideRight)
        self._tip_saved: str | None = None  # the message a menu's status tip covers
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._clear_message)
        # gives way too while a job's text needs the room (whole in its tool tip)
        self.backend_label = ElidedLabel(f"compute: {backend_name}",
                                         elide=Qt.TextElideMode.ElideRight)
        # the running job: its text beside a bar that shows the percentage; the text gets
        # the room it needs, elided (whole in its tool tip) only when the window is narrow
        self.progress_label = ElidedLabel("")
        self.progress_label.setVisible(False)
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(PROGRESS_BAR_WIDTH)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setFormat("%p%")
        self.progress_bar.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_jobs)
        sb.addWidget(self.file_label)
        sb.addWidget(self.cursor_label)
        sb.addWidget(self.message_label, 1)
        for w in (self.progress_label, self.progress_bar, self.cancel_button,
                  self.backend_label):
            sb.addPermanentWidget(w)

    def _fit_progress_label(self) -> None:
        """The job's text as wide as it is, down to what the status bar has left beside
        the readout and the others' least widths; elided below that."""
        label = self.progress_label
        if not label.isVisibleTo(self):
            return
        least = label.fontMetrics().horizontalAdvance("M" * 5)
        label.setMinimumWidth(least)
        layout = self.statusBar().layout()
        layout.invalidate()  # the least width of the whole bar with the text at its least
        spare = self.statusBar().width() - layout.minimumSize().width()
        label.setMinimumWidth(max(least, min(label.sizeHint().width(), least + spare)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_progress_label()

    def dialog_parent(self) -> QWidget:
        """The widget dialogs open over."""
        return self

    # -- what the controllers show ------------------------------------------------
    @property
    def engine(self):
        """The tile engine of the view (None until a recording is shown)."""
        return self.views.engine

    @property
    def last_image(self):
        """The last complete image of the visible span (a ``DisplayImage``)."""
        return self.views.last_image

    @property
    def last_request(self):
        """The last render request of the visible span (a ``DetailRequest``)."""
        return self.views.last_request

    def current_pipeline(self) -> Pipeline:
        """The processing and spectrogram of the app, as a Pipeline."""
        return self.processing.current_pipeline()

    def open_pipeline(self, path: str | Path | Pipeline) -> bool:
        """Use a pipeline's processing steps and spectrogram parameters (undoable)."""
        return self.processing.open_pipeline(path)

    def export_to(self, out: str | Path) -> int:
        """Export the full-resolution spectrogram (compute thread); returns the job id."""
        return self.exports.export_to(out)

    # -- opening -------------------------------------------------------------------
    def open_dialog(self) -> None:
        """Ask for a recording and open it."""
        start = str(self.document.path.parent) if self.document else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open recording", start, OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path, **options) -> None:
        """Open a recording (in the compute thread); its spectrogram follows.

        ``options`` go to ``open_recording`` (sample rate, dtype, ... for raw
        files).  When a headerless file lacks them, the app asks.
        """
        path = Path(path)
        # the processing and the filter chain stay for the next recording
        if not self.unsaved.confirm(lambda: self.open_path(path, **options),
                                    f"opening {path.name}", (ANNOTATIONS, REVIEW)):
            return
        # says so until the first image is drawn (or an error replaces it)
        self._opening_message = f"Opening {path.name}…"
        self.show_message(self._opening_message, 0)
        self.worker.submit("open", lambda control: self._open_checked(path, options),
                           label=f"Opening {path.name}", callbacks=JobCallbacks(
                               done=lambda r: self._document_opened(r.value, options),
                               failed=lambda e: self._open_failed(path, options, e)))

    @staticmethod
    def _open_checked(path: Path, options: dict) -> Recording:
        """Open in the compute thread; a file without samples fails, so the open one stays."""
        rec = open_recording(path, **options)
        if rec.n_samples == 0:
            rec.close()
            kind = f"{rec.format} file" if rec.format else "file"
            raise RecordingError(f"{path.name}: the {kind} holds no samples; nothing to show")
        return rec

    def open_recording(self, recording: Recording) -> None:
        """Show an already open Recording (e.g. an array from a notebook)."""
        self.worker.submit("open", lambda control: recording, label="Opening",
                           callbacks=JobCallbacks(
                               done=lambda r: self._document_opened(r.value, {}),
                               failed=lambda e: self.show_error(e.message)))

    def _open_failed(self, path: Path, options: dict, error: JobError) -> None:
        """A file that needs an option the person can give: ask for it, else say why."""
        exc = error.exception
        if isinstance(exc, MissingOption) and self._interactive:
            if exc.option in ("dataset", "variable") and exc.choices:
                self._ask_dataset(path, options, exc)
                return
            if exc.option in ("sample_rate", "dtype"):
                self._ask_recording_options(path, options, exc)
                return
        self.show_error(error.message)

    def _ask_dataset(self, path: Path, options: dict, missing: MissingOption) -> None:
        """An HDF5/MAT file with several signals: let the person choose one, then retry."""
        labels = list(missing.labels)
        choice, ok = QInputDialog.getItem(self, f"Open {path.name}",
                                          "This file holds several signals; open which?",
                                          labels, 0, False)
        if ok:
            picked = missing.choices[labels.index(choice)]
            self.open_path(path, **{**options, missing.option: picked})

    def _ask_recording_options(self, path: Path, options: dict,
                               missing: MissingOption) -> None:
        """For raw, .npy, HDF5/MAT or SigMF files: ask for sample type and rate, then retry."""
        spec = next((r for r in readers() if r.accepts(path)), None)
        raw = missing.option == "dtype" or (spec is not None and spec.name == "raw")
        dlg = RecordingOptionsDialog(path.name, option_message(missing), need_dtype=raw,
                                     parent=self)
        if dlg.exec() == RecordingOptionsDialog.DialogCode.Accepted:
            self.open_path(path, **{**options, **dlg.options()})

    def _fill_recent_menu(self) -> None:
        """File › Recent files: the last recordings opened; vanished ones are dropped."""
        files, dropped = recent_files()
        if dropped:
            self.show_message("Dropped from the recent files (no longer there): "
                              + ", ".join(p.name for p in dropped), 10000)
        self.recent_menu.clear()
        for path in files:
            act = self.recent_menu.addAction(path.name, self.open_recent)
            act.setData(str(path))
            act.setStatusTip(str(path))
        if not files:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def open_recent(self) -> None:
        """Open the recent file whose menu entry was chosen."""
        act = self.sender()
        path = Path(act.data()) if act is not None and act.data() else None
        if path is None:
            return
        if not path.is_file():
            forget_recent(path)
            self.show_error(f"{path}: no longer there; dropped from the recent files",
                            dialog=False)
            return
        self.open_path(path)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            path = Path(urls[0].toLocalFile())
            if path.is_dir():  # a folder of recordings: one timeline
                self.deployment.open_folder(path)
            else:
                self.open_path(path)
            event.acceptProposedAction()

    def _document_opened(self, rec: Recording, options: dict) -> None:
        if self.document is not None:
            self.document.recording.close()
        channel = self.settings.channel if self.settings.channel < rec.n_channels else 0
        self.settings = self.settings.with_changes(channel=channel)
        self.document = Document(rec, self.settings, dict(options))
        self.controls.set_channel_count(rec.n_channels)
        self.designer_panel.document_opened(rec.sample_rate)
        self.processing.editor.set_sample_rate(rec.sample_rate)
        self.playback.document_opened(rec)
        self.controls.set_params({"channel": channel})
        self.file_label.setText(self.document.summary())
        # "[*]": the "*" of setWindowModified while something is unsaved
        self.setWindowTitle(f"{rec.path.name.replace('[*]', '[*][*]')}[*] — specscope")
        for spec in ACTIONS:
            if spec.needs_document:
                self.menu_actions[spec.id].setEnabled(True)
        if rec.path.is_file():
            remember_recent(rec.path)
        self.undo_stack.clear()
        self.last_error = None
        self.annotations.document_opened(rec)
        self.regions.document_opened(rec)
        self.detection.document_opened()
        self.unsaved.opened()
        # nothing of the previous recording stays in the readout
        self.view.clear_reference()
        self.cursor_label.setText("")
        reserve_readout(self.cursor_label, False)
        self.menu_actions["save_annotations"].setEnabled(self.annotations.is_sigmf())
        self.deployment.document_opened(rec)
        self.levels.document_opened(rec)
        if not self.views.document_opened():
            return
        scale = usable_freq_scale(self.settings.freq_scale, two_sided=self.engine.two_sided)
        if scale != self.settings.freq_scale:
            self.set_frequency_scale(scale)
        self._apply_pending_session()

    # -- settings --------------------------------------------------------------------
    def _show_settings(self, s: ViewSettings) -> None:
        self.controls.set_params({"nfft": s.stft.nfft, "hop": s.stft.hop,
                                  "window": s.stft.window, "scaling": s.stft.scaling,
                                  "channel": s.channel, "reduce": s.reduce})

    def _on_params_changed(self, p: dict) -> None:
        try:
            stft = StftParams(p["nfft"], p["hop"], p["window"], p["scaling"])
        except InputError as exc:
            self.show_error(str(exc), dialog=False)
            return
        new = self.settings.with_changes(stft=stft, channel=p["channel"], reduce=p["reduce"])
        scale = usable_freq_scale(new.freq_scale, two_sided=self.engine.two_sided,
                                  stacked=new.channel < 0)
        self.change_settings(new.with_changes(freq_scale=scale))

    def change_settings(self, new: ViewSettings, *, undoable: bool = True) -> None:
        """Make ``new`` the settings, as one undoable step (nothing when unchanged), or
        with ``undoable=False`` quietly (the view is recomputed)."""
        if not undoable:
            self.settings = new
            if self.document is not None:
                self.document.settings = new
            self.views.schedule()
        elif new != self.settings:
            self.undo_stack.push(SettingsChange(self, self.settings, new))

    def apply_settings(self, settings: ViewSettings) -> None:
        """Make ``settings`` current: controls, axis and a recomputation (undo uses it too)."""
        old = self.settings
        self.settings = settings
        self._show_settings(settings)
        if settings.processing != old.processing:
            self.processing.editor.set_steps(settings.base_steps)
        if (settings.chain, settings.chain_on, settings.chain_index, settings.compare) != (
                old.chain, old.chain_on, old.chain_index, old.compare):
            self.designer_panel.sync()
            self.regions.settings_changed()
        if settings.representation != old.representation:
            self.view.clear_background()
            self.views.levels_set = False
            self.processing.representation_changed()
        if settings.freq_scale != old.freq_scale:
            self.set_frequency_scale(settings.freq_scale, record=False)
        if settings.stft.nfft != old.stft.nfft:
            self.annotations.show_resolution()
        if self.document is not None:
            if settings.stft.scaling != old.stft.scaling:
                self.views.levels_set = False  # other units: fit the range again
            self.document.settings = self.settings
            self.views.schedule()

    def set_frequency_scale(self, scale: str, record: bool = True) -> None:
        """Linear, log or mel frequency axis: re-renders, never recomputes the pyramid."""
        stacked = self.settings.channel < 0
        engine = self.views.engine
        problem = freq_scale_problem(scale, two_sided=engine.two_sided, stacked=stacked) \
            if engine is not None else ""
        if problem:
            self.show_error(problem, dialog=False)
            self.controls.set_freq_scale(self.settings.freq_scale)
            return
        if record and scale != self.settings.freq_scale:
            self.change_settings(self.settings.with_changes(freq_scale=scale))
            return
        self.settings = self.settings.with_changes(freq_scale=scale)
        if self.document is not None:
            self.document.settings = self.settings
        self.controls.set_freq_scale(scale)
        t0, t1, _, _ = self.view.visible_range() if engine is not None else (0, 0, 0, 0)
        self.view.set_frequency_scale(scale)
        self.views.rescale(t0, t1)

    # -- sessions --------------------------------------------------------------------
    def session(self) -> dict:
        """The state a session file keeps: file, analysis, view, display, listening."""
        state = session_state(self.document.path if self.document else None, self.settings,
                              self.view.visible_range(), self.view.levels(),
                              self.view.colormap_name, self.annotations.annotations,
                              self.detection.session_state())
        state["listening"] = self.playback.listening().to_dict()
        return state

    def save_session_dialog(self) -> bool:
        """Ask for a file and save the session to it; whether it was written."""
        path, _ = QFileDialog.getSaveFileName(self, "Save session", "session.specscope.json",
                                              SESSION_FILTER)
        return bool(path) and self.save_session(path)

    def save_session(self, path: str | Path) -> bool:
        """Save the session: file, analysis, view, display and the work (annotations,
        processing, filter chain, review); nothing is unsaved after it."""
        try:
            write_session(path, self.session())
            self.unsaved.mark_saved()  # the session holds everything
        except SpecscopeError as exc:  # names the file and the cause (no space, read-only)
            self.show_error(f"could not save the session: {exc}")
            return False
        except OSError as exc:
            self.show_error(f"{path}: could not save the session ({exc.strerror})")
            return False
        self.show_message(f"Session saved to {path}")
        return True

    def open_session_dialog(self) -> None:
        """Ask for a session file and reopen it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open session", "", SESSION_FILTER)
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Reopen a session: its file, analysis settings, view and display."""
        if not self.unsaved.confirm(lambda: self.open_session(path), "opening the session"):
            return False
        try:
            state = load_session(path)
        except InputError as exc:
            self.show_error(str(exc))
            return False
        a, d = state["analysis"], state["display"]
        self.settings = settings_from_session(state)
        self.playback.set_listening(listening_from_session(state))
        self.processing.editor.set_steps(self.settings.base_steps)
        self.processing.representation_changed()
        self.designer_panel.sync()
        self.regions.settings_changed()
        self.controls.set_params(a)
        self.controls.set_freq_scale(a["freq_scale"])
        self.view.set_frequency_scale(a["freq_scale"])
        self.view.set_colormap(d["colormap"])
        self.controls.colormap.setCurrentText(d["colormap"])
        self.calibration.restore()
        self._pending_session = state
        self.open_path(state["file"])
        return True

    def _apply_pending_session(self) -> None:
        state, self._pending_session = self._pending_session, None
        if state is None:
            return
        v, d = state["view"], state["display"]
        kept = annotations_from_session(state)
        if kept is not None:
            self.annotations.set_annotations(kept)
        self.detection.restore(state.get("detections"))
        self.view.set_levels(d["db_low"], d["db_high"])
        self.controls.set_levels(d["db_low"], d["db_high"])
        self.views.levels_set = True
        self.view.set_time_range(v["t0"], v["t1"])
        self.view.set_frequency_range(v["f0"], v["f1"])
        self.unsaved.restored()  # as the session file keeps it: nothing unsaved

    # -- jobs ------------------------------------------------------------------------
    def cancel_jobs(self) -> None:
        """Cancel whatever the compute thread is doing (Esc)."""
        self.worker.cancel()

    def _on_started(self, job_id: int, kind: str, label: str) -> None:
        if kind in BACKGROUND_KINDS:  # idle-time work the person did not ask for
            self._on_idle()
            return
        self._running_job = job_id
        if label:
            self._jobs_shown[job_id] = (label, time.monotonic())
        # busy (no percentage) until the job reports how far it is
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setValue(0)
        self.progress_bar.setToolTip(label)
        self.progress_label.setText(label)
        self.progress_label.setVisible(bool(label))
        self.progress_bar.setVisible(True)
        self.cancel_button.setVisible(True)
        self._fit_progress_label()

    def _on_progress(self, job_id: int, kind: str, fraction: float) -> None:
        if job_id != self._running_job:
            return  # a late report of a job that has ended
        if self.progress_bar.maximum() == 0:
            self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(int(fraction * 1000))

    def _on_idle(self) -> None:
        self._running_job = 0
        self.progress_label.setVisible(False)
        self.progress_bar.setVisible(False)
        self.cancel_button.setVisible(False)

    def _job_finished(self, job_id: int, _kind: str, _result: object) -> None:
        self._job_ended(job_id, "")

    def _job_failed(self, job_id: int, _kind: str, _error: object) -> None:
        self._job_ended(job_id, ", failed")

    def _job_cancelled(self, job_id: int, _kind: str) -> None:
        self._job_ended(job_id, ", cancelled")

    def _job_ended(self, job_id: int, how: str) -> None:
        """A job that ran long enough to be watched goes in the log with its time (what
        it ended with is a message of its own)."""
        shown = self._jobs_shown.pop(job_id, None)
        if shown is None:
            return
        label, start = shown
        took = time.monotonic() - start
        if took >= LOGGED_JOB_S:
            self.message_log.add(f"{label} ({took:.1f} s{how})")

    def _backends_found(self, result: JobResult) -> None:
        found: FoundBackends = result.value
        text = "numpy (CPU)" + (f" · GPU: {found.gpu}" if found.gpu else "")
        self.backend_label.setText(f"compute: {text}")
        self.backend_label.setToolTip(f"compute: {text}\nOperators run where View › "
                                      "Compute says: Auto chooses CPU or GPU per operator by "
                                      "timing them")
        gpu = self.compute_actions["cupy"]
        if found.gpu:
            gpu.setEnabled(True)
            gpu.setToolTip(found.gpu)
        else:
            gpu.setToolTip(f"No GPU: {compute_backend.cupy_unavailable_reason()}")

    def _build_compute_menu(self) -> None:
        """View › Compute: Auto / CPU / GPU, GPU enabled once the probe finds a device."""
        group = QActionGroup(self)
        group.setExclusive(True)
        self.compute_actions = {}
        for name, text in (("auto", "&Auto"), ("numpy", "&CPU"), ("cupy", "&GPU")):
            act = self.compute_menu.addAction(text)
            act.setCheckable(True)
            act.setChecked(name == compute_backend.preference())
            act.triggered.connect(lambda _=False, n=name: self.set_compute_backend(n))
            group.addAction(act)
            self.compute_actions[name] = act
        self.compute_menu.setToolTipsVisible(True)
        self.compute_actions["cupy"].setEnabled(False)
        self.compute_actions["cupy"].setToolTip("Looking for a GPU…")
        self.gpuFallback.connect(lambda message: self.show_message(message, 10000))
        # removed on close: a report after the window is deleted would reach a dead object
        self._forget_fallback = compute_backend.add_fallback_listener(self.gpuFallback.emit)

    def set_compute_backend(self, name: str) -> None:
        """Run operators on ``name``: ``"auto"``, ``"numpy"`` (CPU) or ``"cupy"`` (GPU)."""
        try:
            compute_backend.set_preference(name)
        except InputError as exc:
            self.compute_actions[compute_backend.preference()].setChecked(True)
            self.show_error(str(exc), dialog=False)
            return
        self.compute_actions[name].setChecked(True)
        where = {"auto": "CPU or GPU, timed per operator", "numpy": "the CPU",
                 "cupy": "the GPU"}[name]
        self.show_message(f"Operators compute on {where}", 5000)

    def _view_failed(self, message: str) -> None:
        self.show_error(message, dialog=False)

    # -- messages --------------------------------------------------------------------
    def _clear_message(self) -> None:
        self.message_label.setText("")
        self._tip_saved = None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.StatusTip:
            # menu hints go to the message label: QMainWindow would show them as a
            # temporary status bar message, which hides the readout and file info
            self._show_status_tip(event.tip())
            return True
        return super().event(event)

    def _show_status_tip(self, tip: str) -> None:
        if tip:
            if self._tip_saved is None:
                self._tip_saved = self.message_label.text()
            self.message_label.setText(tip)
        elif self._tip_saved is not None:
            self.message_label.setText(self._tip_saved)
            self._tip_saved = None

    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        """A transient message in the status bar (file info and readout stay), kept whole
        with its time in View › Messages."""
        self.message_log.add(text, error=error)
        self._tip_saved = None
        self.message_label.setStyleSheet("color: #c00000;" if error else "")
        self.message_label.setText(text)
        self.message_label.setToolTip(text)
        if timeout_ms > 0:
            self._message_timer.start(timeout_ms)
        else:
            self._message_timer.stop()

    def _plugin_slow(self, _job: int, _kind: str, text: str) -> None:
        if text:  # "plugin op x.y running for 31 s…", every second: one line of the log
            self.show_message(text, 3000)

    def show_messages(self) -> None:
        """View › Messages: the session's messages, whole, with their times."""
        if self.messages_dialog is None:
            self.messages_dialog = MessagesDialog(self.message_log, self)
        self.messages_dialog.show()
        self.messages_dialog.raise_()
        self.messages_dialog.activateWindow()

    def show_error(self, message: str, *, dialog: bool = True) -> None:
        """Show a one-line error; the window keeps working."""
        self.last_error = message
        self.show_message(f"Error: {message}", 20000, error=True)
        self.errorShown.emit(message)
        if dialog and self._interactive:
            box = QMessageBox(QMessageBox.Icon.Warning, "specscope", message,
                              QMessageBox.StandardButton.Ok, self)
            box.open()

    # -- display ---------------------------------------------------------------------
    def _on_levels_from_controls(self, lo: float, hi: float) -> None:
        if hi > lo:
            self.view.set_levels(lo, hi)

    def _first_image_shown(self) -> None:
        if self._opening_message and self.message_label.text() == self._opening_message:
            self._clear_message()
        self._opening_message = ""

    def show_cursor(self, t: float, f: float, level: float) -> None:
        """The readout of the cursor at ``t`` s, ``f`` Hz (and Δ to the reference), as
        :meth:`SpectrogramView.readout_text` writes it."""
        text = self.view.readout_text(t, f, level)
        ref = self.view.reference
        before = self.cursor_label.minimumWidth()
        reserve_readout(self.cursor_label, ref is not None)
        if self.cursor_label.minimumWidth() != before:
            self._fit_progress_label()  # the readout took (or gave back) room
        self.cursor_label.setText(text)

    def set_harmonic_cursors(self, on: bool) -> None:
        """Show cursors at 2f, 3f, ... of the cursor's frequency."""
        self.view.set_harmonic_count(7 if on else 0)

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab and Shift+Tab visit only what can be seen, each stop showing its focus:
        Qt's focus chain, minus the panels behind another dock's tab (Qt keeps them
        shown, off the window), scroll areas holding controls (the controls take the
        focus, the area scrolls to them) and empty lists."""
        from PyQt6.QtWidgets import QAbstractItemView, QScrollArea

        def takes_tab(w: QWidget) -> bool:
            # unbound calls: a subclass may name an attribute "window" or "isVisible"
            if (QWidget.window(w) is not self or not QWidget.isVisible(w)
                    or not QWidget.isEnabled(w) or QWidget.focusProxy(w) is not None
                    or not QWidget.focusPolicy(w).value & Qt.FocusPolicy.TabFocus.value
                    or (isinstance(w, QScrollArea) and w.widget() is not None)
                    or (isinstance(w, QAbstractItemView) and w.model() is not None
                        and w.model().rowCount(w.rootIndex()) == 0)):
                return False
            part = w
            while QWidget.parentWidget(part) not in (self, None):
                part = QWidget.parentWidget(part)
            return self.rect().intersects(QWidget.geometry(part))  # a part on the window

        start = self.focusWidget() or self
        w = start
        for _ in range(100000):  # the chain is a ring
            w = QWidget.nextInFocusChain(w) if next else QWidget.previousInFocusChain(w)
            if w is start:
                break
            if takes_tab(w):
                w.setFocus(Qt.FocusReason.TabFocusReason if next
                           else Qt.FocusReason.BacktabFocusReason)
                return True
        return super().focusNextPrevChild(next)

    def show_shortcuts(self) -> None:
        """The F1 list: the menus' shortcuts (read from their actions) and the view's keys."""
        dlg = ShortcutsDialog(shortcut_rows(self.menuBar()), self)
        dlg.open()
        self.shortcuts_dialog = dlg

    def show_about(self) -> None:
        """Name and version."""
        QMessageBox.about(self, "About specscope",
                          f"specscope {__version__}\nExplore recordings spectrally.")

    def closeEvent(self, event) -> None:
        if not self.unsaved.confirm(self.close, "quitting"):
            event.ignore()
            return
        if self.document is not None and self._interactive:
            try:
                path = last_session_path()
                path.parent.mkdir(parents=True, exist_ok=True)
                write_session(path, self.session())
            except (OSError, SpecscopeError):
                pass  # remembering the session is a convenience
        self.playback.close()
        self.worker.shutdown()
        self._forget_fallback()
        if self.document is not None:
            self.document.recording.close()
        super().closeEvent(event)


class FoundBackends(NamedTuple):
    """What the backend probe found: the GPU's name, or None."""

    gpu: str | None


def _probe_backends(control: TaskControl) -> FoundBackends:
    """The GPU CuPy finds, if any (in the compute thread: importing CuPy takes a while)."""
    from specscope.compute.backend import describe_backends

    for b in describe_backends():
        if b["name"] == "cupy" and b.get("available"):
            return FoundBackends(str(b.get("device", "CUDA")))
    return FoundBackends(None)
