"""The main window: open a recording, look at its spectrogram, export it.

The GUI thread only draws.  Opening, computing and exporting are jobs for the
compute thread (:mod:`specscope.app.worker`); their results arrive as signals.
"""

from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QObject, Qt, QTimer, pyqtSignal
from PyQt6.QtGui import QAction, QKeySequence
from PyQt6.QtWidgets import (QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox,
                             QProgressBar, QPushButton, QScrollArea)

from specscope.compute import __version__
from specscope.compute.errors import InputError
from specscope.compute.export import export_spectrogram
from specscope.compute.io.base import Recording, open_recording
from specscope.compute.paths import cache_dir
from specscope.compute.spectral import StftParams
from specscope.compute.tiles import DisplayImage, TileEngine, render_progressive
from specscope.widgets.spectrogram_controls import SpectrogramControls
from specscope.widgets.spectrogram_view import SpectrogramView

from .document import Document, ViewSettings
from .worker import ComputeWorker, JobResult, TaskControl

#: columns of the whole-recording background image
OVERVIEW_COLUMNS = 2048
ENVELOPE_POINTS = 4000

OPEN_FILTER = ("Recordings (*.wav *.wave *.flac *.ogg *.oga *.aif *.aiff *.w64 *.rf64 "
               "*.caf);;All files (*)")
SHORTCUTS = [
    ("Ctrl+O", "Open a recording"),
    ("Ctrl+E", "Export the spectrogram to HDF5"),
    ("Home / Ctrl+0", "Show the whole recording"),
    ("Ctrl+L", "Fit the dB range to the image"),
    ("Esc", "Cancel the running computation"),
    ("Mouse drag / wheel", "Pan / zoom (right-drag zooms each axis)"),
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

        self._recompute_timer = QTimer(self)
        self._recompute_timer.setSingleShot(True)
        self._recompute_timer.setInterval(150)
        self._recompute_timer.timeout.connect(self._request_spectrogram)
        self.controls.paramsChanged.connect(self._on_params_changed)
        self.controls.levelsChanged.connect(self._on_levels_from_controls)
        self.controls.colormapChanged.connect(self.view.set_colormap)
        self.controls.autoLevelsRequested.connect(self.auto_levels)
        self.controls.freqScaleChanged.connect(self.set_frequency_scale)
        self.view.levelsChanged.connect(self.controls.set_levels)
        self.view.cursorMoved.connect(self._on_cursor)
        self.view.viewportChanged.connect(self._on_viewport)
        self.overview.regionChanged.connect(self.view.set_time_range)

        self._build_menus()
        self._build_status_bar(backend_name)
        self.show_message("Open a recording with File › Open (Ctrl+O) or drop a file here", 0)

    # -- construction ------------------------------------------------------
    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        self.act_open = self._action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.act_export = self._action("&Export HDF5…", self.export_dialog, "Ctrl+E")
        self.act_export.setEnabled(False)
        act_quit = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        file_menu.addActions([self.act_open, self.act_export])
        file_menu.addSeparator()
        file_menu.addAction(act_quit)
        view_menu = mb.addMenu("&View")
        view_menu.addAction(self._action("&Home (whole recording)", self.view.reset_view,
                                         ["Home", "Ctrl+0"]))
        view_menu.addAction(self._action("&Auto levels", self.auto_levels, "Ctrl+L"))
        view_menu.addAction(self._dock.toggleViewAction())
        self.act_cancel = self._action("&Cancel computation", self.cancel_jobs, "Esc")
        view_menu.addAction(self.act_cancel)
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self._action("&Keyboard shortcuts", self._show_shortcuts, "F1"))
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

    def open_path(self, path: str | Path) -> None:
        """Open a recording (in the compute thread); its spectrogram follows."""
        path = Path(path)

        def job(control: TaskControl) -> Recording:
            return open_recording(path)

        self.worker.submit("open", job, label=f"Opening {path.name}")

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
        old = self.settings
        self.settings = self.settings.with_changes(stft=stft, channel=p["channel"],
                                                   reduce=p["reduce"])
        if self.document is not None:
            if stft.scaling != old.stft.scaling:
                self._levels_set = False  # other units: fit the range again
            self.document.settings = self.settings
            self._recompute_timer.start()

    def _make_engine(self) -> bool:
        """A tile engine for the document's settings (cheap: nothing is computed)."""
        assert self.document is not None
        rec, s = self.document.recording, self.document.settings
        try:
            self.engine = TileEngine(rec, nfft=s.stft.nfft, hop=s.stft.hop,
                                     window=s.stft.window, scaling=s.stft.scaling,
                                     channel=s.channel, disk_cache=cache_dir("tiles"))
        except InputError as exc:
            self.engine = None
            self.show_error(str(exc), dialog=False)
            return False
        return True

    def _request_spectrogram(self) -> None:
        """(Re)compute the background of the whole recording, then the visible detail."""
        if self.document is None:
            return
        key = (self.document.settings.stft, self.document.settings.channel)
        if self.engine is None or getattr(self, "_engine_key", None) != key:
            if not self._make_engine():
                return
            self._engine_key = key
        engine, reduce = self.engine, self.document.settings.reduce
        scale, n_rows = self.settings.freq_scale, self._n_rows()
        n_cols = min(OVERVIEW_COLUMNS, max(1, engine.n_frames))
        duration = engine.duration
        self._overview_ready = False

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
        t0, t1, w = self._viewport
        engine = self.engine
        t0, t1 = max(t0, 0.0), min(t1, engine.duration)
        if not t1 > t0:
            return
        reduce = self.document.settings.reduce
        scale, n_rows = self.settings.freq_scale, self._n_rows()
        request = (id(engine), t0, t1, w, reduce, scale)
        self.last_request = (t0, t1, w, reduce)

        def job(control: TaskControl) -> tuple[tuple, DisplayImage]:
            img = render_progressive(engine, t0, t1, w, reduce, freq_scale=scale, n_rows=n_rows,
                                     partial=lambda im: control.partial((request, im)),
                                     progress=control.progress, cancelled=control.cancelled)
            return request, img

        self.worker.submit("detail", job, label="Computing view")

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

        def job(control: TaskControl) -> Path:
            return export_spectrogram(rec, out, s.stft, channel=s.channel,
                                      progress=control.progress, cancelled=control.cancelled)

        return self.worker.submit("export", job, label=f"Exporting {out.name}")

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
            request, img = result.value
            if not self._current(request):
                return  # for an engine or axis that has been replaced
            self._show_detail(img, final=True)
            self.last_result = result
            agg = (f", {img.frames_per_column:.1f} frames/column ({img.reduce}, "
                   f"level {img.level})" if img.frames_per_column > 1.0 else "")
            self.show_message(f"{img.db.shape[1]} columns × {img.db.shape[0]} bins in "
                              f"{result.seconds * 1000:.0f} ms{agg}", 5000)
            self._detail_ready = True
            self._maybe_image_shown()
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
        return (self.engine is not None and request[0] == id(self.engine)
                and request[-1] == self.settings.freq_scale)

    def _n_rows(self) -> int:
        """Rows of a log or mel image: the plot's height in pixels."""
        return min(1024, max(64, self.view.plot_size_px()[1]))

    def _set_extent_from_engine(self) -> None:
        e = self.engine
        if e is None:
            return
        df = e.fs / e.params.nfft
        f_edges = e._freq_axis()[1]
        f0, f1 = float(f_edges[0]), float(f_edges[-1])
        if self.settings.freq_scale == "log":
            f0 = df / 2
        elif self.settings.freq_scale == "mel":
            f0 = 0.0
        self.view.set_extent(0.0, e.duration, f0, f1,
                             min_dt=4 * e.params.hop / e.fs, min_df=4 * df)

    def set_frequency_scale(self, scale: str) -> None:
        """Linear, log or mel frequency axis: re-renders, never recomputes the pyramid."""
        if self.engine is not None and self.engine.two_sided and scale != "linear":
            self.show_error("log and mel frequency axes need a real recording; "
                            "this one is complex (IQ)", dialog=False)
            self.controls.set_freq_scale(self.settings.freq_scale)
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
        self.controls.set_params({"channel": channel})
        self.file_label.setText(self.document.summary())
        self.setWindowTitle(f"{rec.path.name} — specscope")
        self.act_export.setEnabled(True)
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

        def envelope(control: TaskControl):
            return e.envelope(ENVELOPE_POINTS, cancelled=control.cancelled)

        self.worker.submit("envelope", envelope, label="Reading waveform")

    def _show_overview(self, img: DisplayImage) -> None:
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
        self.cursor_label.setText(f"t = {t:.4f} s   f = {f:.1f} Hz{lvl}")

    def _show_shortcuts(self) -> None:
        text = "\n".join(f"{k:<22}{v}" for k, v in SHORTCUTS)
        QMessageBox.information(self, "Keyboard shortcuts", text)

    def _show_about(self) -> None:
        QMessageBox.about(self, "About specscope",
                          f"specscope {__version__}\nExplore recordings spectrally.")

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        self.worker.shutdown()
        if self.document is not None:
            self.document.recording.close()
        super().closeEvent(event)




class _Caller(QObject):
    """Calls ``slot()`` for a signal with arguments; lives (and dies) with ``parent``,
    so a queued signal can never reach a deleted window."""

    def __init__(self, slot, parent: QObject) -> None:
        super().__init__(parent)
        self._slot = slot

    def __call__(self, *_: object) -> None:
        self._slot()
