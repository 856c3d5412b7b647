"""The main window: open a recording, look at its spectrogram, export it.

The GUI thread only draws.  Opening, computing and exporting are jobs for the
compute thread (:mod:`specscope.app.worker`); their results arrive as signals.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
from PyQt6.QtCore import QObject, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QAction, QKeySequence, QUndoCommand, QUndoStack
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)
from specscope.compute import __version__
from specscope.compute.batch import export_recording
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.extensions import plugins
from specscope.compute.filters import core as filters
from specscope.compute.filters.formats import write_coefficients
from specscope.compute.io.base import Recording, open_recording, readers
from specscope.compute.operators import registry
from specscope.compute.output.range import export as export_any
from specscope.compute.output.spectrogram import export_spectrogram
from specscope.compute.paths import cache_dir
from specscope.compute.pipeline.core import Pipeline
from specscope.compute.spectral import StftParams
from specscope.compute.view.tiles import (
    DisplayImage,
    StackedEngine,
    TileEngine,
    plugin_image,
    render_progressive,
)
from specscope.widgets.filter_designer import FilterDesigner
from specscope.widgets.param_form import ParamForm
from specscope.widgets.pipeline_editor import PipelineEditor
from specscope.widgets.plugins_dialog import PluginsDialog
from specscope.widgets.recording_options import RecordingOptionsDialog
from specscope.widgets.spectrogram_controls import SpectrogramControls
from specscope.widgets.spectrogram_view import SpectrogramView

from .document import Document, ViewSettings
from .worker import ComputeWorker, JobResult, TaskControl

#: columns of the whole-recording background image
OVERVIEW_COLUMNS = 2048
#: the waveform row appears when the visible span holds at most this many samples
WAVEFORM_MAX_SAMPLES = 48_000
#: a plugin view (scalogram, CQT, ...) is computed for spans of at most this many samples
PLUGIN_VIEW_MAX_SAMPLES = 1 << 21
ENVELOPE_POINTS = 4000

OPEN_FILTER = ("Recordings (*.wav *.wave *.flac *.ogg *.oga *.aif *.aiff *.w64 *.rf64 *.caf "
               "*.sigmf-meta *.sigmf-data *.h5 *.hdf5 *.npy *.mat *.cf32 *.cfile *.cs16 *.ci16 "
               "*.cs8 *.cu8 *.iq *.raw *.bin *.dat);;All files (*)")
SHORTCUTS = [
    ("Ctrl+O", "Open a recording"),
    ("Ctrl+S / Ctrl+Shift+O", "Save / open a session"),
    ("Ctrl+E", "Export the spectrogram of the whole recording to HDF5"),
    ("Ctrl+Shift+E", "Export the values of the view to HDF5"),
    ("Ctrl+P", "Export the view as PNG"),
    ("Ctrl+Z / Ctrl+Shift+Z", "Undo / redo a parameter change"),
    ("Home / Ctrl+0", "Show the whole recording"),
    ("Left / Right", "Pan in time"),
    ("+ / -", "Zoom in / out in time"),
    ("Up / Down", "Pan in frequency (with Shift: zoom)"),
    ("Z", "Zoom box: drag a rectangle to zoom into it"),
    ("Click / double-click", "Set / clear the measurement reference (Δt, Δf, ΔdB)"),
    ("H", "Harmonic cursors at 2f, 3f, ... of the cursor"),
    ("Ctrl+F", "Show / hide the filter designer"),
    ("N", "Click a spectral line to notch it (filter designer)"),
    ("Ctrl+L", "Fit the dB range to the image"),
    ("Esc", "Cancel the running computation"),
    ("Mouse drag / wheel", "Pan / zoom (right-drag zooms each axis)"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
]


class MainWindow(QMainWindow):
    """specscope's main window.

    Signals
    -------
    imageShown()
        A computed spectrogram was drawn (used by ``--screenshot`` and tests).
    errorShown(str)
        An error message was shown to the person.
    """

    imageShown = pyqtSignal()
    errorShown = pyqtSignal(str)

    def __init__(self, settings: ViewSettings | None = None, *, interactive: bool = True,
                 backend_name: str = "numpy (CPU)") -> None:
        super().__init__()
        self.setWindowTitle("specscope")
        self.resize(1280, 760)
        self.setAcceptDrops(True)
        self._interactive = interactive  # False: no modal dialogs (screenshots, tests)
        self.document: Document | None = None
        self.settings = settings or ViewSettings()
        self.last_image: DisplayImage | None = None
        self.last_request: tuple | None = None
        self.last_error: str | None = None
        self.engine: TileEngine | None = None
        self._levels_set = False
        self._overview_ready = False
        self._viewport: tuple[float, float, int] | None = None

        self.worker = ComputeWorker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.worker.progress.connect(self._on_progress)
        self.worker.started.connect(self._on_started)
        self.worker.cancelled.connect(self._on_cancelled)
        self.worker.partial.connect(self._on_partial)

        self.view = SpectrogramView(self)
        self.overview = self.view.overview
        self.setCentralWidget(self.view)
        self.controls = SpectrogramControls(self)
        self.controls.set_params({"nfft": self.settings.stft.nfft, "hop": self.settings.stft.hop,
                                  "window": self.settings.stft.window,
                                  "scaling": self.settings.stft.scaling,
                                  "channel": self.settings.channel,
                                  "reduce": self.settings.reduce})
        scroll = QScrollArea()
        scroll.setWidget(self.controls)
        scroll.setWidgetResizable(True)
        dock = QDockWidget("Spectrogram", self)
        dock.setObjectName("spectrogram-settings")
        dock.setWidget(scroll)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self._dock = dock
        self.processing_editor = PipelineEditor([], plugins.describe_operator, self)
        self.processing_editor.stepsChanged.connect(self._on_steps_changed)
        pdock = QDockWidget("Processing", self)
        pdock.setObjectName("processing")
        pdock.setWidget(self.processing_editor)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, pdock)
        self.tabifyDockWidget(dock, pdock)
        dock.raise_()
        self._processing_dock = pdock
        self._view_box = QGroupBox("View")
        self._view_box.setLayout(QVBoxLayout())
        self._view_box.setVisible(False)
        self.controls.layout().insertWidget(2, self._view_box)
        self._view_form: ParamForm | None = None
        self._preview_engine: TileEngine | None = None
        self.base_engine: TileEngine | None = None
        self._build_designer()

        self._recompute_timer = QTimer(self)
        self._recompute_timer.setSingleShot(True)
        self._recompute_timer.setInterval(150)
        self._recompute_timer.timeout.connect(self._request_spectrogram)
        self.controls.paramsChanged.connect(self._on_params_changed)
        self.controls.levelsChanged.connect(self._on_levels_from_controls)
        self.controls.colormapChanged.connect(self.view.set_colormap)
        self.controls.gammaChanged.connect(self.view.set_gamma)
        self.controls.autoLevelsRequested.connect(self.auto_levels)
        self.controls.freqScaleChanged.connect(self.set_frequency_scale)
        self.view.levelsChanged.connect(self.controls.set_levels)
        self.view.cursorMoved.connect(self._on_cursor)
        self.view.viewportChanged.connect(self._on_viewport)
        self.overview.regionChanged.connect(self.view.set_time_range)

        self.undo_stack = QUndoStack(self)
        self._build_menus()
        self._build_status_bar(backend_name)
        self.show_message("Open a recording with File › Open (Ctrl+O) or drop a file here", 0)
        self.worker.submit("backends", _probe_backends, label="Looking for a GPU")
        self._load_catalogue()

    # -- construction ------------------------------------------------------
    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        self.act_open = self._action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.act_export = self._action("&Export HDF5…", self.export_dialog, "Ctrl+E")
        self.act_export.setEnabled(False)
        act_quit = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.act_export_view = self._action("Export &view values to HDF5…",
                                            self.export_view_dialog, "Ctrl+Shift+E")
        self.act_png = self._action("Export view as &PNG…", self.export_png_dialog, "Ctrl+P")
        self.act_save_session = self._action("&Save session…", self.save_session_dialog,
                                             QKeySequence.StandardKey.Save)
        act_open_session = self._action("Open sess&ion…", self.open_session_dialog,
                                        "Ctrl+Shift+O")
        for act in (self.act_export, self.act_export_view, self.act_png, self.act_save_session):
            act.setEnabled(False)
        file_menu.addActions([self.act_open, act_open_session, self.act_save_session])
        file_menu.addSeparator()
        file_menu.addAction(self._action("Open p&ipeline…", self.open_pipeline_dialog))
        file_menu.addAction(self._action("Save pipeli&ne…", self.save_pipeline_dialog))
        file_menu.addSeparator()
        file_menu.addActions([self.act_export, self.act_export_view, self.act_png])
        file_menu.addSeparator()
        file_menu.addAction(act_quit)
        edit_menu = mb.addMenu("&Edit")
        act_undo = self.undo_stack.createUndoAction(self, "&Undo")
        act_undo.setShortcut(QKeySequence.StandardKey.Undo)
        act_redo = self.undo_stack.createRedoAction(self, "&Redo")
        act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        edit_menu.addActions([act_undo, act_redo])
        view_menu = mb.addMenu("&View")
        view_menu.addAction(self._action("&Home (whole recording)", self.view.reset_view,
                                         ["Home", "Ctrl+0"]))
        view_menu.addAction(self._action("&Auto levels", self.auto_levels, "Ctrl+L"))
        self.act_zoom_box = self._action("&Zoom box (drag a rectangle)",
                                         self._toggle_zoom_box, "Z")
        self.act_zoom_box.setCheckable(True)
        self.act_harmonics = self._action("&Harmonic cursors", self._toggle_harmonics, "H")
        self.act_harmonics.setCheckable(True)
        act_clear_ref = self._action("Clear &measurement reference",
                                     self.view.clear_reference, "Backspace")
        view_menu.addActions([self.act_zoom_box, self.act_harmonics, act_clear_ref])
        self.representation_menu = view_menu.addMenu("&Representation")
        view_menu.addAction(self._dock.toggleViewAction())
        view_menu.addAction(self._processing_dock.toggleViewAction())
        act_designer = self._designer_dock.toggleViewAction()
        act_designer.setShortcut(QKeySequence("Ctrl+F"))
        view_menu.addAction(act_designer)
        self.act_cancel = self._action("&Cancel computation", self.cancel_jobs, "Esc")
        view_menu.addAction(self.act_cancel)
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self._action("&Keyboard shortcuts", self._show_shortcuts, "F1"))
        help_menu.addAction(self._action("&Plugins…", self.show_plugins_dialog))
        help_menu.addAction(self._action("&About specscope", self._show_about))

    def _action(self, text: str, slot, shortcut=None) -> QAction:
        act = QAction(text, self)
        if isinstance(shortcut, list):
            act.setShortcuts([QKeySequence(s) for s in shortcut])
        elif shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(_Caller(slot, act))
        self.addAction(act)
        return act

    def cancel_jobs(self) -> None:
        """Cancel whatever the compute thread is doing (Esc)."""
        self.worker.cancel()

    def _clear_message(self) -> None:
        self.message_label.setText("")

    def _build_status_bar(self, backend_name: str) -> None:
        sb = self.statusBar()
        self.file_label = QLabel("no recording")
        self.cursor_label = QLabel("")
        self.cursor_label.setMinimumWidth(300)
        self.message_label = QLabel("")
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._clear_message)
        self.backend_label = QLabel(f"compute: {backend_name}")
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(160)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_jobs)
        sb.addWidget(self.file_label)
        sb.addWidget(self.cursor_label)
        sb.addWidget(self.message_label, 1)
        for w in (self.progress_bar, self.cancel_button, self.backend_label):
            sb.addPermanentWidget(w)

    # -- opening -----------------------------------------------------------
    def open_dialog(self) -> None:
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
        self._opening = (path, options)

        def job(control: TaskControl) -> Recording:
            return open_recording(path, **options)

        self.worker.submit("open", job, label=f"Opening {path.name}")

    def open_recording(self, recording: Recording) -> None:
        """Show an already open Recording (e.g. an array from a notebook)."""
        self._opening = (recording.path, {})
        self.worker.submit("open", lambda control: recording, label="Opening")

    def _ask_dataset(self, message: str) -> bool:
        """An HDF5/MAT file with several signals: let the person choose one, then retry."""
        path, options = getattr(self, "_opening", (None, {}))
        if path is None or not self._interactive:
            return False
        from specscope.compute.io import list_datasets

        try:
            items = [d for d in list_datasets(path) if d.plausible]
        except SpecscopeError:
            return False
        if not items:
            return False
        labels = [f"{d.path}   ({'x'.join(map(str, d.shape))} {d.dtype}"
                  + (f", {d.sample_rate:g} Hz)" if d.sample_rate else ")") for d in items]
        choice, ok = QInputDialog.getItem(self, f"Open {path.name}",
                                          "This file holds several signals; open which?",
                                          labels, 0, False)
        if ok:
            self.open_path(path, **{**options, "dataset": items[labels.index(choice)].path})
        return True

    def _ask_recording_options(self, message: str) -> bool:
        """For raw or .npy files: ask for sample type and rate, then retry."""
        path, options = getattr(self, "_opening", (None, {}))
        if path is None or not self._interactive:
            return False
        spec = next((r for r in readers() if r.accepts(path)), None)
        if spec is None or spec.name not in ("raw", "npy", "hdf5", "mat"):
            return False
        dlg = RecordingOptionsDialog(path.name, message, need_dtype=spec.name == "raw",
                                     parent=self)
        if dlg.exec() != RecordingOptionsDialog.DialogCode.Accepted:
            return True
        self.open_path(path, **{**options, **dlg.options()})
        return True

    def dragEnterEvent(self, event) -> None:  # noqa: N802 (Qt API)
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 (Qt API)
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.open_path(urls[0].toLocalFile())
            event.acceptProposedAction()

    # -- computing ---------------------------------------------------------
    def _on_params_changed(self, p: dict) -> None:
        try:
            if p["nfft"] < 0:
                raise InputError("FFT size must be a whole number of samples")
            stft = StftParams(p["nfft"], p["hop"], p["window"], p["scaling"])
        except InputError as exc:
            self.show_error(str(exc), dialog=False)
            return
        new = self.settings.with_changes(stft=stft, channel=p["channel"], reduce=p["reduce"])
        if new.channel < 0 and new.freq_scale != "linear":
            new = new.with_changes(freq_scale="linear")  # stacked bands are linear
        if new != self.settings:
            self.undo_stack.push(_SettingsChange(self, self.settings, new))

    def apply_settings(self, settings: ViewSettings) -> None:
        """Make ``settings`` current: controls, axis and a recomputation (undo uses it too)."""
        old = self.settings
        self.settings = settings
        self.controls.set_params({"nfft": settings.stft.nfft, "hop": settings.stft.hop,
                                  "window": settings.stft.window,
                                  "scaling": settings.stft.scaling,
                                  "channel": settings.channel, "reduce": settings.reduce})
        if settings.processing != old.processing:
            self.processing_editor.set_steps(settings.base_steps)
        if settings.designer != old.designer or settings.compare != old.compare:
            self._sync_designer_controls()
        if settings.representation != old.representation:
            self._sync_representation_menu()
            self.view.clear_background()
            self._levels_set = False
            self._show_view_params()
        if settings.freq_scale != old.freq_scale:
            self.set_frequency_scale(settings.freq_scale, record=False)
        if self.document is not None:
            if settings.stft.scaling != old.stft.scaling:
                self._levels_set = False  # other units: fit the range again
            self.document.settings = self.settings
            self._recompute_timer.start()

    def _engine_for(self, steps: list[dict]) -> TileEngine:
        """A tile engine applying ``steps`` (cheap: nothing is computed yet)."""
        assert self.document is not None
        rec, s = self.document.recording, self.document.settings
        block_fn = None
        if steps:
            try:
                block_fn = Pipeline.from_steps(steps).block_function(rec.sample_rate,
                                                                     rec.is_complex)
            except SpecscopeError as exc:
                self.view_note = (f"the view shows the recording without processing ({exc}); "
                                  "the export applies it")
                self.show_message(self.view_note, 15000)
        channels = range(rec.n_channels) if s.channel < 0 else [s.channel]
        engines = [TileEngine(rec, nfft=s.stft.nfft, hop=s.stft.hop, window=s.stft.window,
                              scaling=s.stft.scaling, channel=c, pipeline=block_fn,
                              disk_cache=cache_dir("tiles")) for c in channels]
        return StackedEngine(engines) if s.channel < 0 else engines[0]

    def _make_engine(self) -> bool:
        """The engines of the document's settings: with all processing, and without the
        designer's filter (for before/difference)."""
        s = self.document.settings
        self.view_note = ""
        try:
            self.engine = self._engine_for(s.steps)
            self.base_engine = self._engine_for(s.base_steps) if s.designer else self.engine
        except InputError as exc:
            self.engine = None
            self.show_error(str(exc), dialog=False)
            return False
        return True

    def _request_spectrogram(self) -> None:
        """(Re)compute the background of the whole recording, then the visible detail."""
        if self.document is None:
            return
        key = (self.document.settings.stft, self.document.settings.channel,
               self.document.settings.processing, self.document.settings.designer)
        if self.engine is None or getattr(self, "_engine_key", None) != key:
            was_stacked = isinstance(self.engine, StackedEngine)
            if not self._make_engine():
                return
            self._engine_key = key
            if isinstance(self.engine, StackedEngine) != was_stacked:
                t0, t1, _, _ = self.view.visible_range()
                self._set_extent_from_engine()
                self.view.reset_view()
                if t1 > t0 and self.view.image_data is not None:
                    self.view.set_time_range(t0, t1)
        if self.settings.representation != "stft":  # a plugin view: the visible span only
            self.view.clear_background()
            self._overview_ready = True
            self._request_detail()
            return
        engine, reduce = self.engine, self.document.settings.reduce
        scale, n_rows = self.settings.freq_scale, self._n_rows()
        n_cols = min(OVERVIEW_COLUMNS, max(1, engine.n_frames))
        duration = engine.duration
        self._overview_ready = False
        self.last_image = None  # imageShown waits for the new detail too

        def job(control: TaskControl) -> DisplayImage:
            return render_progressive(engine, 0.0, duration, n_cols, reduce,
                                      freq_scale=scale, n_rows=n_rows,
                                      partial=control.partial, progress=control.progress,
                                      cancelled=control.cancelled)

        self.worker.submit("overview", job, label="Computing overview")
        self._request_detail()

    def _on_viewport(self, t0: float, t1: float, f0: float, f1: float, w: int, h: int) -> None:
        self.overview.set_region(t0, t1)
        self._viewport = (t0, t1, w)
        self._request_detail()

    def _request_detail(self) -> None:
        if self.engine is None or self._viewport is None or self.document is None:
            return
        if self.settings.representation != "stft":
            self._request_plugin_view()
            return
        t0, t1, w = self._viewport
        engine = self.engine
        t0, t1 = max(t0, 0.0), min(t1, engine.duration)
        if not t1 > t0:
            return
        compare = self.settings.compare if self.settings.designer else "after"
        shown = self._preview_engine or engine
        if compare == "before":
            shown, other = self.base_engine, None
        elif compare == "difference":
            other = self.base_engine
        else:
            other = None
        reduce = self.document.settings.reduce
        scale, n_rows = self.settings.freq_scale, self._n_rows()
        request = (id(engine), t0, t1, w, reduce, scale)
        self.last_request = (t0, t1, w, reduce)

        preview = shown is not engine and compare == "after"

        def job(control: TaskControl) -> tuple[tuple, DisplayImage, tuple | None]:
            kw = dict(freq_scale=scale, n_rows=n_rows, cancelled=control.cancelled)
            img = render_progressive(shown, t0, t1, w, reduce,
                                     partial=None if (preview or other is not None) else
                                     (lambda im: control.partial((request, im))),
                                     progress=control.progress, **kw)
            if other is not None:  # after minus before, in dB
                before = render_progressive(other, t0, t1, w, reduce, **kw)
                img = dataclasses.replace(img, db=img.db - before.db)
            s0, s1 = int(t0 * engine.fs), int(np.ceil(t1 * engine.fs)) + 1
            wave = None
            if s1 - s0 <= WAVEFORM_MAX_SAMPLES:  # zoomed in to samples
                wave = (s0 / engine.fs, engine.recording.read(s0, s1, engine.channel)[:, 0])
            return request, img, wave

        self.worker.submit("detail", job, label="Computing view")

    def _request_plugin_view(self) -> None:
        """An alternative view (a plugin's image operator) of the visible span."""
        t0, t1, w = self._viewport
        engine, s = self.engine, self.settings
        t0, t1 = max(t0, 0.0), min(t1, engine.duration)
        fs = engine.fs
        if (t1 - t0) * fs > PLUGIN_VIEW_MAX_SAMPLES:
            self.show_message(f"{s.representation}: zoom in to at most "
                              f"{PLUGIN_VIEW_MAX_SAMPLES / fs:.0f} s to compute this view", 8000)
            return
        op, params = s.representation, json.loads(s.view_params)
        scale, n_rows = s.freq_scale, self._n_rows()
        request = (id(engine), t0, t1, w, s.reduce, s.representation, s.freq_scale)
        self.last_request = (t0, t1, w, s.reduce)
        rec, channel = engine.recording, engine.channel
        pipeline_fn = engine.pipeline

        def job(control: TaskControl):
            x = rec.read(int(t0 * fs), int(np.ceil(t1 * fs)), channel)[:, 0]
            if pipeline_fn is not None:
                x = np.asarray(pipeline_fn(x, fs))
            control.check()
            img = plugin_image(op, x, fs, t0, params, freq_scale=scale, n_rows=n_rows)
            return request, img, None

        self.worker.submit("detail", job, label=f"Computing {op}")

    def set_representation(self, name: str) -> None:
        """Show the STFT (tile engine) or a plugin's image operator."""
        if name == self.settings.representation:
            return
        params = "{}"
        if name != "stft":
            try:
                schema = plugins.describe_operator(name)["params"]
            except SpecscopeError as exc:
                self.show_error(str(exc))
                self._sync_representation_menu()
                return
            params = json.dumps({p["name"]: p["default"] for p in schema
                                 if not p.get("required")})
        self.undo_stack.push(_SettingsChange(
            self, self.settings, self.settings.with_changes(representation=name,
                                                            view_params=params)))

    def _sync_representation_menu(self) -> None:
        for act in self.representation_menu.actions():
            act.setChecked(act.data() == self.settings.representation)

    def _show_view_params(self) -> None:
        """The generated form of the current plugin view's parameters."""
        if self._view_form is not None:
            self._view_form.setParent(None)
            self._view_form.deleteLater()
            self._view_form = None
        name = self.settings.representation
        self._view_box.setVisible(name != "stft")
        if name == "stft":
            return
        try:
            schema = plugins.describe_operator(name)["params"]
        except SpecscopeError as exc:
            self.show_error(str(exc), dialog=False)
            return
        self._view_box.setTitle(f"View: {name}")
        self._view_form = ParamForm(schema, json.loads(self.settings.view_params))
        self._view_form.changed.connect(self._view_params_edited)
        self._view_box.layout().addWidget(self._view_form)

    def _view_params_edited(self) -> None:
        try:
            values = self._view_form.values()
        except SpecscopeError as exc:
            self.show_error(str(exc), dialog=False)
            return
        self.settings = self.settings.with_changes(view_params=json.dumps(values))
        if self.document is not None:
            self.document.settings = self.settings
        self._recompute_timer.start()

    # -- filter designer -------------------------------------------------------
    def _build_designer(self) -> None:
        self.designer = FilterDesigner(48000.0, self)
        box = QWidget(self)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.designer_apply = QCheckBox("Apply to the recording")
        self.designer_apply.setToolTip("Filter the view and the export with this design "
                                       "(the last step of the processing)")
        self.designer_apply.toggled.connect(self._designer_toggled)
        self.compare = QComboBox()
        self.compare.addItems(["after", "before", "difference"])
        self.compare.setToolTip("Show the recording after the filter, before it, or the "
                                "difference in dB")
        self.compare.currentTextChanged.connect(self._compare_changed)
        self.notch_mode = QPushButton("Click a line to notch (N)")
        self.notch_mode.setCheckable(True)
        self.notch_mode.setShortcut(QKeySequence("N"))
        self.notch_mode.setToolTip("Then click a spectral line (e.g. mains hum) in the "
                                   "spectrogram: a notch is placed on it")
        self.notch_mode.toggled.connect(self._notch_mode_toggled)
        self.notch_harmonics = QCheckBox("with harmonics")
        self.notch_harmonics.setChecked(True)
        export = QPushButton("Export coefficients…")
        export.clicked.connect(self.export_coefficients_dialog)
        row.addWidget(self.designer_apply)
        row.addWidget(QLabel("Show"))
        row.addWidget(self.compare)
        row.addWidget(self.notch_mode)
        row.addWidget(self.notch_harmonics)
        row.addStretch(1)
        row.addWidget(export)
        lay.addLayout(row)
        lay.addWidget(self.designer, 1)
        dock = QDockWidget("Filter designer", self)
        dock.setObjectName("filter-designer")
        dock.setWidget(box)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        dock.setVisible(False)
        dock.visibilityChanged.connect(self._designer_shown)
        self._designer_dock = dock
        self.designer.specChanged.connect(self._designer_changed)
        self.designer.specCommitted.connect(self._designer_committed)
        self.view.notchRequested.connect(self.notch_at)
        self.view.filterLineMoved.connect(self._filter_line_moved)

    def _designer_shown(self, visible: bool) -> None:
        if visible:  # leave the spectrogram most of the height
            self.resizeDocks([self._designer_dock], [max(260, self.height() // 3)],
                             Qt.Orientation.Vertical)

    def _sync_designer_controls(self) -> None:
        s = self.settings
        for w, v in ((self.designer_apply, bool(s.designer)),):
            w.blockSignals(True)
            w.setChecked(v)
            w.blockSignals(False)
        self.compare.blockSignals(True)
        self.compare.setCurrentText(s.compare)
        self.compare.blockSignals(False)
        if s.designer and json.loads(s.designer) != self.designer.params():
            self.designer.set_spec(json.loads(s.designer), emit=False)
        self._update_filter_lines()

    def _update_filter_lines(self) -> None:
        edges = []
        if self.settings.designer or self._preview_engine is not None:
            spec = self.designer.spec
            for name in ("cutoff", "passband", "stopband", "frequency"):
                v = getattr(spec, name, None)
                if v is None or name not in filters.DESIGNS[spec.design][1]:
                    continue
                for i, f in enumerate(np.atleast_1d(np.asarray(v, dtype=float)).tolist()):
                    edges.append((name, i, f))
        self.view.set_filter_lines(edges)

    def _designer_toggled(self, on: bool) -> None:
        params = json.dumps(self.designer.params()) if on else ""
        self.undo_stack.push(_SettingsChange(self, self.settings,
                                             self.settings.with_changes(designer=params)))

    def _compare_changed(self, mode: str) -> None:
        self.undo_stack.push(_SettingsChange(self, self.settings,
                                             self.settings.with_changes(compare=mode)))
        self._levels_set = False  # a difference in dB needs other levels than a level

    def _designer_changed(self, params: dict) -> None:
        """Every change while dragging: re-filter only the visible span (fast preview)."""
        if not self.settings.designer or self.document is None:
            return
        steps = [*self.settings.base_steps, {"op": "filter", "params": params}]
        try:
            self._preview_engine = self._engine_for(steps)
        except SpecscopeError as exc:
            self.designer.error.setText(str(exc))
            return
        self._update_filter_lines()
        self._request_detail()

    def _designer_committed(self, params: dict) -> None:
        """A finished change: the whole recording is filtered (background and export)."""
        self._preview_engine = None
        if not self.settings.designer:
            self._update_filter_lines()
            return
        new = self.settings.with_changes(designer=json.dumps(params))
        if new != self.settings:
            self.undo_stack.push(_SettingsChange(self, self.settings, new))

    def _filter_line_moved(self, name: str, index: int, f: float, finished: bool) -> None:
        self.designer.move_edge(name, index, f, commit=finished)

    def _notch_mode_toggled(self, on: bool) -> None:
        self.view.click_mode = "notch" if on else "reference"
        if on:
            self._designer_dock.setVisible(True)
            self.show_message("Click a spectral line to notch it", 8000)

    def notch_at(self, frequency: float) -> bool:
        """Place a notch (with harmonics when asked) on the line at ``frequency`` Hz."""
        if self.document is None:
            return False
        fs = self.document.recording.sample_rate
        try:
            spec = filters.notch_from_click(
                frequency, fs, harmonics="nyquist" if self.notch_harmonics.isChecked()
                else None)
        except SpecscopeError as exc:
            self.show_error(str(exc), dialog=False)
            return False
        self.notch_mode.setChecked(False)
        if not self.designer.set_spec(spec, emit=False):
            return False
        self.undo_stack.push(_SettingsChange(
            self, self.settings, self.settings.with_changes(designer=json.dumps(
                self.designer.params()))))
        self.show_message(f"Notch at {frequency:.1f} Hz ({spec.design})", 8000)
        return True

    def export_coefficients_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export filter coefficients", "filter.json",
            "JSON (*.json);;CSV (*.csv);;NumPy (*.npz);;C header (*.h);;Python (*.py)")
        if path:
            self.export_coefficients(path)

    def export_coefficients(self, path: str | Path) -> bool:
        if self.designer.design is None:
            return False
        try:
            write_coefficients(self.designer.design, path)
        except (SpecscopeError, OSError) as exc:
            self.show_error(f"{path}: {exc}")
            return False
        self.show_message(f"Coefficients written to {path}")
        return True

    # -- processing ------------------------------------------------------------
    def _on_steps_changed(self, steps: list) -> None:
        """Processing steps from the editor: validated, then undoable like any setting."""
        if self.document is not None:
            rec = self.document.recording
            try:
                Pipeline.from_steps(steps).bind(rec.sample_rate, rec.is_complex)
            except SpecscopeError as exc:
                self.processing_editor.show_error(str(exc))
                return
        new = self.settings.with_changes(processing=json.dumps(steps))
        if new != self.settings:
            self.undo_stack.push(_SettingsChange(self, self.settings, new))

    def current_pipeline(self) -> Pipeline:
        """The processing and spectrogram of the app, as a Pipeline."""
        return Pipeline.from_dict(self.settings.pipeline_dict())

    def save_pipeline_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save pipeline", "pipeline.json",
                                              "Pipelines (*.json)")
        if path:
            self.save_pipeline(path)

    def save_pipeline(self, path: str | Path) -> None:
        try:
            self.current_pipeline().save(path)
        except (SpecscopeError, OSError) as exc:
            self.show_error(f"{path}: could not save the pipeline ({exc})")
            return
        self.show_message(f"Pipeline saved to {path}")

    def open_pipeline_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open pipeline", "", "Pipelines (*.json)")
        if path:
            self.open_pipeline(path)

    def open_pipeline(self, path: str | Path | Pipeline) -> bool:
        """Use a pipeline's processing steps and spectrogram parameters (undoable)."""
        try:
            pipe = path if isinstance(path, Pipeline) else Pipeline.load(path)
            stft = pipe.stft_params or self.settings.stft
            steps = pipe.signal_part().to_dict()["steps"]
            if self.document is not None:
                rec = self.document.recording
                pipe.signal_part().bind(rec.sample_rate, rec.is_complex)
        except SpecscopeError as exc:
            self.show_error(str(exc))
            return False
        new = self.settings.with_changes(stft=stft, processing=json.dumps(steps))
        if new != self.settings:
            self.undo_stack.push(_SettingsChange(self, self.settings, new))
        return True

    def _load_catalogue(self) -> None:
        """Operators for the processing editor and plugin views (compute thread: loading
        the plugins imports them)."""
        def job(control: TaskControl):
            ops = [o.to_dict() for o in registry.list_operators()]
            catalogue = [{"name": o["name"], "family": o["family"], "summary": o["summary"]}
                         for o in ops if o.get("takes_input")
                         and plugins.output_kind(o["name"]) in ("array", "same")]
            return catalogue, plugins.views()

        self.worker.submit("catalogue", job, label="Loading operators")

    def _catalogue_ready(self, catalogue: list, views: list) -> None:
        self.processing_editor.set_catalogue(catalogue)
        menu = self.representation_menu
        menu.clear()
        for name in ["stft", *views]:
            act = menu.addAction("Spectrogram (STFT)" if name == "stft" else name)
            act.setData(name)
            act.setCheckable(True)
            act.triggered.connect(_Caller(lambda n=name: self.set_representation(n), act))
        self._sync_representation_menu()

    def show_plugins_dialog(self) -> None:
        def fetch():
            return ([p.to_dict(traceback=True) for p in plugins.list_plugins()],
                    plugins.problems())

        dlg = PluginsDialog(*fetch(), refresh=lambda: (plugins.rescan(), fetch())[1],
                            parent=self)
        dlg.open()
        self._plugins_dialog = dlg

    # -- exporting ---------------------------------------------------------
    def export_dialog(self) -> None:
        if self.document is None:
            return
        default = str(self.document.path.with_suffix(".spectrogram.h5"))
        path, _ = QFileDialog.getSaveFileName(self, "Export spectrogram to HDF5", default,
                                              "HDF5 (*.h5 *.hdf5)")
        if path:
            self.export_to(path)

    def export_to(self, out: str | Path) -> int:
        """Export the full-resolution spectrogram of the current channel (compute thread)."""
        if self.document is None:
            raise RuntimeError("nothing is open")
        rec, s = self.document.recording, self.document.settings
        out = Path(out)
        pipeline = Pipeline.from_dict(s.pipeline_dict()) if s.steps else None
        options = dict(getattr(self, "_opening", (None, {}))[1])

        if s.channel < 0:  # every channel, through the pipeline of the app

            def job(control: TaskControl) -> Path:
                return export_any(rec, out, pipeline=Pipeline.from_dict(s.pipeline_dict()),
                                  options=options, progress=control.progress,
                                  cancelled=control.cancelled)

            return self.worker.submit("export", job, label=f"Exporting {out.name}")

        def job(control: TaskControl) -> Path:
            if pipeline is not None:  # the processing, then the spectrogram, with provenance
                return export_recording(pipeline, rec, out, channel=s.channel, options=options,
                                        progress=control.progress, cancelled=control.cancelled)
            return export_spectrogram(rec, out, s.stft, channel=s.channel,
                                      progress=control.progress, cancelled=control.cancelled)

        return self.worker.submit("export", job, label=f"Exporting {out.name}")

    def export_png_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export view as PNG", "view.png", "PNG (*.png)")
        if path:
            self.export_png(path)

    def export_png(self, path: str | Path) -> None:
        """Save the spectrogram view (with axes and colour bar) as PNG."""
        if not self.view.grab().save(str(path), "PNG"):
            self.show_error(f"{path}: could not write the PNG")
        else:
            self.show_message(f"Saved {path}")

    def export_view_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export view values to HDF5", "view.h5",
                                              "HDF5 (*.h5 *.hdf5)")
        if path:
            self.export_view(path)

    def export_view(self, out: str | Path) -> int | None:
        """Write the values of the view (dB image and its axes) to HDF5 (compute thread)."""
        img, doc = self.last_image, self.document
        if img is None or doc is None:
            self.show_error("nothing to export yet: wait for the view to be drawn", dialog=False)
            return None
        s, out = doc.settings, Path(out)

        def job(control: TaskControl) -> Path:
            return img.to_hdf5(out, doc.recording, s.stft, channel=s.channel,
                               freq_scale=s.freq_scale)

        return self.worker.submit("export", job, label=f"Exporting {out.name}")

    # -- sessions ------------------------------------------------------------
    def session(self) -> dict:
        """The state a session file keeps: file, analysis, view, display."""
        s = self.settings
        t0, t1, f0, f1 = self.view.visible_range()
        lo, hi = self.view.levels()
        return {"specscope": SESSION_FORMAT,
                "file": str(self.document.path.resolve()) if self.document else None,
                "analysis": {"nfft": s.stft.nfft, "hop": s.stft.hop,
                             "window": _window_to_json(s.stft.window),
                             "scaling": s.stft.scaling, "channel": s.channel,
                             "reduce": s.reduce, "freq_scale": s.freq_scale},
                "view": {"t0": t0, "t1": t1, "f0": f0, "f1": f1},
                "display": {"db_low": lo, "db_high": hi, "colormap": self.view.colormap_name}}

    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save session", "session.specscope.json",
                                              "Sessions (*.json)")
        if path:
            self.save_session(path)

    def save_session(self, path: str | Path) -> None:
        data = json.dumps(self.session(), indent=2)
        tmp = Path(str(path) + ".partial")
        try:
            tmp.write_text(data)
            tmp.replace(path)
        except OSError as exc:
            self.show_error(f"{path}: could not save the session ({exc.strerror})")
            return
        self.show_message(f"Session saved to {path}")

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", "", "Sessions (*.json)")
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Reopen a session: its file, analysis settings, view and display."""
        try:
            state = load_session(path)
        except InputError as exc:
            self.show_error(str(exc))
            return False
        a, d = state["analysis"], state["display"]
        self.settings = ViewSettings(
            stft=StftParams(a["nfft"], a["hop"], a["window"], a["scaling"]),
            channel=a["channel"], reduce=a["reduce"], freq_scale=a["freq_scale"])
        self.controls.set_params(a)
        self.controls.set_freq_scale(a["freq_scale"])
        self.view.set_frequency_scale(a["freq_scale"])
        self.view.set_colormap(d["colormap"])
        self.controls.colormap.setCurrentText(d["colormap"])
        self._pending_session = state
        self.open_path(state["file"])
        return True

    def _apply_pending_session(self) -> None:
        state = getattr(self, "_pending_session", None)
        if state is None:
            return
        self._pending_session = None
        v, d = state["view"], state["display"]
        self.view.set_levels(d["db_low"], d["db_high"])
        self.controls.set_levels(d["db_low"], d["db_high"])
        self._levels_set = True
        self.view.set_time_range(v["t0"], v["t1"])
        self.view.set_frequency_range(v["f0"], v["f1"])

    # -- results -------------------------------------------------------------
    def _on_started(self, job_id: int, kind: str, label: str) -> None:
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat(f"{label} %p%" if label else "%p%")
        self.progress_bar.setVisible(True)
        self.cancel_button.setVisible(True)

    def _on_progress(self, job_id: int, kind: str, fraction: float) -> None:
        self.progress_bar.setValue(int(fraction * 1000))

    def _job_done(self) -> None:
        if not self.worker.is_busy():
            self.progress_bar.setVisible(False)
            self.cancel_button.setVisible(False)

    def _on_finished(self, job_id: int, kind: str, result: JobResult) -> None:
        self._job_done()
        if kind == "open":
            self._document_opened(result.value)
        elif kind == "overview":
            self._show_overview(result.value)
            self._overview_ready = True
            self._maybe_image_shown()
        elif kind == "detail":
            request, img, wave = result.value
            if not self._current(request):
                return  # for an engine or axis that has been replaced
            self._show_detail(img, final=True)
            differs = self.settings.designer and self.settings.compare == "difference"
            if differs:
                self.view.clear_background()  # another quantity: dB of after over before
            if not self._levels_set and (self.settings.representation != "stft" or differs):
                self.auto_levels()
                self._levels_set = True
            if wave is None:
                self.view.set_waveform(0.0, 1.0, None)
            else:
                self.view.set_waveform(wave[0], self.engine.fs, wave[1])
            self.last_result = result
            agg = (f", {img.frames_per_column:.1f} frames/column ({img.reduce}, "
                   f"level {img.level})" if img.frames_per_column > 1.0 else "")
            self.show_message(f"{img.db.shape[1]} columns × {img.db.shape[0]} bins in "
                              f"{result.seconds * 1000:.0f} ms{agg}", 5000)
            self._detail_ready = True
            self._maybe_image_shown()
        elif kind == "catalogue":
            self._catalogue_ready(*result.value)
        elif kind == "backends":
            self.backend_label.setText(f"compute: {result.value}")
            self.backend_label.setToolTip("The spectrogram view computes on the CPU; "
                                          "operators choose CPU or GPU automatically")
        elif kind == "envelope":
            self.overview.set_envelope(*result.value)
        elif kind == "export":
            self.show_message(f"Exported {result.value}", 10000)

    def _on_partial(self, job_id: int, kind: str, value: object) -> None:
        if kind == "overview":
            self._show_overview(value)
        elif kind == "detail":
            request, img = value
            if self._current(request):
                self._show_detail(img)

    def _current(self, request: tuple) -> bool:
        rep = request[5] if len(request) > 6 else "stft"
        return (self.engine is not None and request[0] == id(self.engine)
                and request[-1] == self.settings.freq_scale
                and rep == self.settings.representation)

    def _n_rows(self) -> int:
        """Rows of a log or mel image: the plot's height in pixels."""
        return min(1024, max(64, self.view.plot_size_px()[1]))

    def _set_extent_from_engine(self) -> None:
        e = self.engine
        if e is None:
            return
        if isinstance(e, StackedEngine):
            self.view.set_stack(e.n_channels, e.f0, e.band, e.span, e.split)
        else:
            self.view.set_stack(0, 0.0, 0.0, 0.0, None)
        df = e.fs / e.params.nfft
        f_edges = e._freq_axis()[1]
        f0, f1 = float(f_edges[0]), float(f_edges[-1])
        if self.settings.freq_scale == "log":
            f0 = df / 2
        elif self.settings.freq_scale == "mel":
            f0 = 0.0
        self.view.set_extent(0.0, e.duration, f0, f1,
                             min_dt=4 * e.params.hop / e.fs, min_df=4 * df)

    def set_frequency_scale(self, scale: str, record: bool = True) -> None:
        """Linear, log or mel frequency axis: re-renders, never recomputes the pyramid."""
        stacked = self.settings.channel < 0
        if self.engine is not None and (self.engine.two_sided or stacked) and scale != "linear":
            self.show_error("log and mel frequency axes need a real recording and one "
                            "channel" + ("; this one is complex (IQ)" if not stacked else
                                         "; channels are stacked"), dialog=False)
            self.controls.set_freq_scale(self.settings.freq_scale)
            return
        if record and scale != self.settings.freq_scale:
            new = self.settings.with_changes(freq_scale=scale)
            self.undo_stack.push(_SettingsChange(self, self.settings, new))
            return
        self.settings = self.settings.with_changes(freq_scale=scale)
        if self.document is not None:
            self.document.settings = self.settings
        self.controls.set_freq_scale(scale)
        t0, t1, _, _ = self.view.visible_range() if self.engine is not None else (0, 0, 0, 0)
        self.view.set_frequency_scale(scale)
        if self.engine is None:
            return
        self._set_extent_from_engine()
        self.view.reset_view()
        if t1 > t0:
            self.view.set_time_range(t0, t1)
        self._request_spectrogram()

    def _document_opened(self, rec: Recording) -> None:
        if self.document is not None:
            self.document.recording.close()
        channel = self.settings.channel if self.settings.channel < rec.n_channels else 0
        self.settings = self.settings.with_changes(channel=channel)
        self.document = Document(rec, self.settings)
        self.engine = None
        self.controls.set_channel_count(rec.n_channels)
        self.designer.set_sample_rate(rec.sample_rate)
        self._preview_engine = None
        self.controls.set_params({"channel": channel})
        self.file_label.setText(self.document.summary())
        self.setWindowTitle(f"{rec.path.name} — specscope")
        for act in (self.act_export, self.act_export_view, self.act_png, self.act_save_session):
            act.setEnabled(True)
        self.undo_stack.clear()
        self._levels_set = False
        self._detail_ready = False
        self.last_image = None
        self.view.clear_image()
        self.overview.clear_envelope()
        self.last_error = None
        self._request_spectrogram()
        if self.engine is None:
            return
        e = self.engine
        if e.two_sided and self.settings.freq_scale != "linear":
            self.set_frequency_scale("linear")
        self._set_extent_from_engine()
        self.view.reset_view()
        self.overview.set_region(0.0, e.duration)
        self._apply_pending_session()

        def envelope(control: TaskControl):
            return e.envelope(ENVELOPE_POINTS, cancelled=control.cancelled)

        self.worker.submit("envelope", envelope, label="Reading waveform")

    def _show_overview(self, img: DisplayImage) -> None:
        if self.settings.designer and self.settings.compare == "difference":
            return  # the difference view has no whole-recording background
        self.view.set_background(img.db, img.column_edges, img.frequency_edges)
        if not self._levels_set and not img.preview:
            self.auto_levels()
            self._levels_set = True

    def _show_detail(self, img: DisplayImage, final: bool = False) -> None:
        self.view.set_image(img.db, img.column_edges, img.frequency_edges)
        if final:
            self.last_image = img

    def _maybe_image_shown(self) -> None:
        if self._overview_ready and self.last_image is not None:
            self.imageShown.emit()

    def _on_failed(self, job_id: int, kind: str, message: str) -> None:
        self._job_done()
        if kind == "open" and "pick one with dataset=" in message \
                and self._ask_dataset(message):
            return
        if kind == "open" and ("sample_rate" in message or "dtype" in message) \
                and self._ask_recording_options(message):
            return
        self.show_error(message, dialog=kind in ("open", "export"))

    def _on_cancelled(self, job_id: int, kind: str) -> None:
        self._job_done()
        if kind == "export":
            self.show_message("Export cancelled; nothing was written", 5000)

    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        """A transient message in the status bar (file info and readout stay)."""
        self.message_label.setStyleSheet("color: #c00000;" if error else "")
        self.message_label.setText(text)
        self.message_label.setToolTip(text)
        if timeout_ms > 0:
            self._message_timer.start(timeout_ms)
        else:
            self._message_timer.stop()

    def show_error(self, message: str, *, dialog: bool = True) -> None:
        """Show a one-line error; the window keeps working."""
        self.last_error = message
        self.show_message(f"Error: {message}", 20000, error=True)
        self.errorShown.emit(message)
        if dialog and self._interactive:
            box = QMessageBox(QMessageBox.Icon.Warning, "specscope", message,
                              QMessageBox.StandardButton.Ok, self)
            box.open()

    # -- display -------------------------------------------------------------
    def auto_levels(self) -> None:
        lo, hi = self.view.auto_levels()
        self.controls.set_levels(lo, hi)

    def _on_levels_from_controls(self, lo: float, hi: float) -> None:
        if hi > lo:
            self.view.set_levels(lo, hi)

    def _on_cursor(self, t: float, f: float, level: float) -> None:
        lvl = "" if level != level else f"   {level:.1f} dB"
        ch = (f"ch {self.view.cursor_channel}   " if self.settings.channel < 0
              and self.view.cursor_channel is not None else "")
        text = f"{ch}t = {t:.4f} s   f = {f:.1f} Hz{lvl}"
        ref = self.view.reference
        if ref is not None:
            dt, df = t - ref[0], f - ref[1]
            dl = level - ref[2]
            text += f"   |   Δt = {dt * 1000:+.1f} ms   Δf = {df:+.1f} Hz"
            if dl == dl:
                text += f"   ΔL = {dl:+.1f} dB"
            if abs(dt) > 0:
                text += f"   (1/Δt = {1 / abs(dt):.2f} Hz)"
        self.cursor_label.setText(text)

    def _toggle_zoom_box(self) -> None:
        self.view.set_zoom_box(self.act_zoom_box.isChecked())

    def _toggle_harmonics(self) -> None:
        self.view.set_harmonic_count(7 if self.act_harmonics.isChecked() else 0)

    def _show_shortcuts(self) -> None:
        text = "\n".join(f"{k:<22}{v}" for k, v in SHORTCUTS)
        QMessageBox.information(self, "Keyboard shortcuts", text)

    def _show_about(self) -> None:
        QMessageBox.about(self, "About specscope",
                          f"specscope {__version__}\nExplore recordings spectrally.")

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        if self.document is not None and self._interactive:
            try:
                path = last_session_path()
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(self.session(), indent=2))
            except OSError:
                pass  # remembering the session is a convenience
        self.worker.shutdown()
        if self.document is not None:
            self.document.recording.close()
        super().closeEvent(event)




SESSION_FORMAT = "specscope/session/1"


def _probe_backends(control: TaskControl) -> str:
    """'numpy (CPU)' and, where CuPy finds a device, its name (in the compute thread:
    importing CuPy takes a while)."""
    from specscope.compute.backend import describe_backends

    text = "numpy (CPU)"
    for b in describe_backends():
        if b["name"] == "cupy" and b.get("available"):
            text += f" · GPU: {b.get('device', 'CUDA')}"
    return text


def last_session_path() -> Path:
    """Where the app remembers the last session (reopened by ``specscope open``)."""
    return cache_dir("last-session.json")


def _window_to_json(window):
    return list(window) if isinstance(window, tuple) else window


def load_session(path: str | Path) -> dict:
    """Read and check a session file; InputError names what is wrong."""
    p = Path(path)
    try:
        state = json.loads(p.read_text())
    except OSError as exc:
        raise InputError(f"{p}: cannot read the session ({exc.strerror})") from None
    except ValueError as exc:
        raise InputError(f"{p}: not a session file (invalid JSON: {exc})") from None
    if not isinstance(state, dict) or state.get("specscope") != SESSION_FORMAT:
        raise InputError(f"{p}: not a specscope session (expected \"specscope\": "
                         f"\"{SESSION_FORMAT}\")")
    try:
        a, v, d = state["analysis"], state["view"], state["display"]
        if isinstance(a["window"], list):
            a["window"] = tuple(a["window"])
        StftParams(int(a["nfft"]), int(a["hop"]), a["window"], a["scaling"])
        if a.get("reduce", "mean") not in ("mean", "max"):
            raise InputError(f"{p}: analysis.reduce={a['reduce']!r} must be mean or max")
        if a.get("freq_scale", "linear") not in ("linear", "log", "mel"):
            raise InputError(f"{p}: analysis.freq_scale={a['freq_scale']!r} must be "
                             "linear, log or mel")
        a.setdefault("reduce", "mean")
        a.setdefault("freq_scale", "linear")
        a.setdefault("channel", 0)
        for k in ("t0", "t1", "f0", "f1"):
            float(v[k])
        float(d["db_low"]), float(d["db_high"])
        d.setdefault("colormap", "inferno")
        if not state.get("file"):
            raise InputError(f"{p}: the session names no recording")
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{p}: incomplete session ({type(exc).__name__}: {exc})") from None
    return state


class _SettingsChange(QUndoCommand):
    """One undoable change of the analysis settings."""

    def __init__(self, window: MainWindow, old: ViewSettings, new: ViewSettings) -> None:
        super().__init__(_describe_change(old, new))
        self._window, self._old, self._new = window, old, new

    def redo(self) -> None:
        self._window.apply_settings(self._new)

    def undo(self) -> None:
        self._window.apply_settings(self._old)


def _describe_change(old: ViewSettings, new: ViewSettings) -> str:
    parts = []
    for name in ("nfft", "hop", "window", "scaling"):
        if getattr(old.stft, name) != getattr(new.stft, name):
            parts.append(f"{name} {getattr(new.stft, name)}")
    for name in ("channel", "reduce", "freq_scale"):
        if getattr(old, name) != getattr(new, name):
            parts.append(f"{name} {getattr(new, name)}")
    return "change " + ", ".join(parts) if parts else "change settings"


class _Caller(QObject):
    """Calls ``slot()`` for a signal with arguments; lives (and dies) with ``parent``,
    so a queued signal can never reach a deleted window."""

    def __init__(self, slot, parent: QObject) -> None:
        super().__init__(parent)
        self._slot = slot

    def __call__(self, *_: object) -> None:
        self._slot()
