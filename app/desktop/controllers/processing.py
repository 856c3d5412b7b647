"""Processing of the view: the steps editor, pipeline files, plugin views, the plugins list.

The processing steps run before the spectrogram (``ViewSettings.processing``);
they are checked against the recording before they become an undoable
change.  Steps applied from the editor are checked on the compute thread,
where their filters are designed, so editing a filter step's field never
designs on the GUI thread.  A pipeline file gives the steps and the spectrogram parameters.  The
operator catalogue (which loads the plugins) is fetched in the compute thread;
it fills the steps editor and the View › Representation menu, whose plugin
views get a parameter form generated from their schema.
"""

from __future__ import annotations

import json
from pathlib import Path

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QFileDialog, QGroupBox, QMenu, QVBoxLayout, QWidget
from specscope.app.qt.shell import Shell
from specscope.app.qt.worker import JobCallbacks, JobResult, TaskControl
from specscope.compute import extensions
from specscope.compute.errors import SpecscopeError
from specscope.compute.operators import describe_operator, list_operators
from specscope.compute.pipeline import Pipeline
from specscope.widgets.param_form import ParamForm
from specscope.widgets.pipeline_editor import PipelineEditor
from specscope.widgets.plugins_dialog import PluginsDialog

__all__ = ["PIPELINE_FILTER", "ProcessingController"]

PIPELINE_FILTER = "Pipelines (*.json)"


def with_mnemonics(titles: list[str]) -> list[str]:
    """Each title with an Alt key of its own (``&``): the first letter not taken yet,
    trying word starts first, so a person can pick a view with the keyboard."""
    taken: set[str] = set()
    out = []
    for title in titles:
        text = title.replace("&", "&&")
        starts = [i for i, ch in enumerate(title) if ch.isalnum()
                  and (i == 0 or not title[i - 1].isalnum())]
        rest = [i for i, ch in enumerate(title) if ch.isalnum() and i not in starts]
        pick = next((i for i in starts + rest if title[i].lower() not in taken), None)
        if pick is not None:
            taken.add(title[pick].lower())
            text = title[:pick].replace("&", "&&") + "&" + title[pick:].replace("&", "&&")
        out.append(text)
    return out


class ProcessingController(QObject):
    """The steps editor (``editor``), pipeline files and plugin views of a :class:`Shell`.

    ``view_box`` is the group box of the plugin view's parameters; the shell
    places it.  :meth:`set_menu` hands over the Representation menu.

    Parameters
    ----------
    shell : Shell
        The window: settings, document, messages and undo stack.
    parent : QWidget
        The parent of the controller and of the steps editor.

    Signals
    -------
    pipelineSaved(ViewSettings)
        A pipeline file was written from these settings.
    pipelineLoaded()
        A pipeline file gave the processing steps.
    """

    pipelineSaved = pyqtSignal(object)
    pipelineLoaded = pyqtSignal()

    def __init__(self, shell: Shell, parent: QWidget) -> None:
        super().__init__(parent)
        self.shell = shell
        self.editor = PipelineEditor([], describe_operator, parent)
        self.editor.stepsChanged.connect(self.apply_steps)
        self.view_box = QGroupBox("View")
        self.view_box.setLayout(QVBoxLayout())
        self.view_box.setVisible(False)
        self.view_form: ParamForm | None = None
        self.plugins_dialog: PluginsDialog | None = None
        self.menu: QMenu | None = None
        self._views: list[str] = []

    # -- processing steps ----------------------------------------------------------
    def set_steps(self, steps: list) -> bool:
        """Use these processing steps: checked against the recording, then undoable."""
        doc = self.shell.document
        if doc is not None:
            rec = doc.recording
            try:
                Pipeline.from_steps(steps).bind(rec.sample_rate, rec.is_complex)
            except SpecscopeError as exc:
                self.editor.show_error(str(exc))
                return False
        self.shell.change_settings(self.shell.settings.with_changes(
            processing=json.dumps(steps)))
        return True

    def apply_steps(self, steps: list) -> None:
        """Use these steps once checked against the recording on the compute thread (their
        filters designed there; a newer call supersedes an older one)."""
        doc = self.shell.document
        if doc is None:
            self.set_steps(steps)
            return
        rec = doc.recording

        def check(control: TaskControl) -> list:
            Pipeline.from_steps(steps).bind(rec.sample_rate, rec.is_complex)
            return steps

        self.shell.worker.submit("processing", check, label="Designing the processing",
                                 callbacks=JobCallbacks(done=self._checked,
                                                        failed=lambda e: self.editor.show_error(
                                                            e.message)))

    def _checked(self, result: JobResult) -> None:
        self.shell.change_settings(self.shell.settings.with_changes(
            processing=json.dumps(result.value)))

    def current_pipeline(self) -> Pipeline:
        """The processing and spectrogram of the app, as a Pipeline."""
        return Pipeline.from_dict(self.shell.settings.pipeline_dict())

    def save_pipeline_dialog(self) -> None:
        """Ask for a file and save the pipeline to it."""
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(), "Save pipeline",
                                              "pipeline.json", PIPELINE_FILTER)
        if path:
            self.save_pipeline(path)

    def save_pipeline(self, path: str | Path) -> bool:
        """Save the processing and spectrogram as a pipeline file."""
        settings = self.shell.settings
        try:
            Pipeline.from_dict(settings.pipeline_dict()).save(path)
        except (SpecscopeError, OSError) as exc:
            self.shell.show_error(f"{path}: could not save the pipeline ({exc})")
            return False
        self.pipelineSaved.emit(settings)
        self.shell.show_message(f"Pipeline saved to {path}")
        return True

    def open_pipeline_dialog(self) -> None:
        """Ask for a pipeline file and use it."""
        path, _ = QFileDialog.getOpenFileName(self.shell.dialog_parent(), "Open pipeline", "",
                                              PIPELINE_FILTER)
        if path:
            self.open_pipeline(path)

    def open_pipeline(self, path: str | Path | Pipeline) -> bool:
        """Use a pipeline's processing steps and spectrogram parameters (undoable)."""
        settings = self.shell.settings
        try:
            pipe = path if isinstance(path, Pipeline) else Pipeline.load(path)
            stft = pipe.stft_params or settings.stft
            steps = pipe.signal_part().to_dict()["steps"]
            if self.shell.document is not None:
                rec = self.shell.document.recording
                pipe.signal_part().bind(rec.sample_rate, rec.is_complex)
        except SpecscopeError as exc:
            self.shell.show_error(str(exc))
            return False
        self.shell.change_settings(settings.with_changes(stft=stft,
                                                         processing=json.dumps(steps)))
        if not isinstance(path, Pipeline):  # a file keeps these steps
            self.pipelineLoaded.emit()
        return True

    # -- catalogue and plugin views ------------------------------------------------
    def set_menu(self, menu: QMenu) -> None:
        """The View › Representation menu, filled once the catalogue is loaded."""
        self.menu = menu

    def load_catalogue(self) -> None:
        """Operators for the steps editor and plugin views (in the compute thread: loading
        the plugins imports them)."""
        def job(control: TaskControl) -> tuple[list[dict], list[str]]:
            ops = [o.to_dict() for o in list_operators()]
            catalogue = [{"name": o["name"], "family": o["family"], "summary": o["summary"]}
                         for o in ops if o.get("takes_input")
                         and extensions.output_kind(o["name"]) in ("array", "same")]
            return catalogue, [(v, extensions.view_title(v)) for v in extensions.views()]

        self.shell.worker.submit("catalogue", job, label="Loading operators",
                                 callbacks=JobCallbacks(done=self._catalogue_ready))

    def _catalogue_ready(self, result: JobResult) -> None:
        catalogue, views = result.value
        self.editor.set_catalogue(catalogue)
        self._views = [name for name, _ in views]
        if self.menu is None:
            return
        self.menu.clear()
        # by name, so each keeps its place (and its Alt key) whatever the plugins' order
        entries = [("stft", "Spectrogram (STFT)"), *sorted(views, key=lambda v: v[1].lower())]
        for (name, _), text in zip(entries, with_mnemonics([t for _, t in entries]),
                                   strict=True):
            act = self.menu.addAction(text)
            act.setData(name)
            act.setToolTip(name)
            act.setCheckable(True)
            act.triggered.connect(lambda _=False, n=name: self.set_representation(n))
        self._sync_menu()

    def set_representation(self, name: str) -> None:
        """Show the STFT (tile engine) or a plugin's image operator (undoable)."""
        settings = self.shell.settings
        if name == settings.representation:
            return
        params = "{}"
        if name != "stft":
            try:
                schema = describe_operator(name)["params"]
            except SpecscopeError as exc:
                self.shell.show_error(str(exc))
                self._sync_menu()
                return
            params = json.dumps({p["name"]: p["default"] for p in schema
                                 if not p.get("required")})
        self.shell.change_settings(settings.with_changes(representation=name,
                                                         view_params=params))

    def representation_changed(self) -> None:
        """The settings show another representation: menu and parameter form follow."""
        self._sync_menu()
        self._show_view_params()

    def _sync_menu(self) -> None:
        if self.menu is None:
            return
        for act in self.menu.actions():
            act.setChecked(act.data() == self.shell.settings.representation)

    def _show_view_params(self) -> None:
        """The generated form of the current plugin view's parameters."""
        if self.view_form is not None:
            self.view_form.setParent(None)
            self.view_form.deleteLater()
            self.view_form = None
        name = self.shell.settings.representation
        self.view_box.setVisible(name != "stft")
        if name == "stft":
            return
        try:
            schema = describe_operator(name)["params"]
        except SpecscopeError as exc:
            self.shell.show_error(str(exc), dialog=False)
            return
        self.view_box.setTitle(f"View: {extensions.view_title(name)}")
        self.view_form = ParamForm(schema, json.loads(self.shell.settings.view_params))
        self.view_form.changed.connect(self._view_params_edited)
        self.view_box.layout().addWidget(self.view_form)

    def _view_params_edited(self) -> None:
        try:
            values = self.view_form.values()
        except SpecscopeError as exc:
            self.shell.show_error(str(exc), dialog=False)
            return
        self.shell.change_settings(
            self.shell.settings.with_changes(view_params=json.dumps(values)), undoable=False)

    # -- plugins -------------------------------------------------------------------
    def show_plugins_dialog(self) -> None:
        """The list of plugins: found, loaded, failed and why."""
        def fetch():
            return ([p.to_dict(traceback=True) for p in extensions.list_plugins()],
                    extensions.problems())

        dlg = PluginsDialog(*fetch(), refresh=lambda: (extensions.rescan(), fetch())[1],
                            parent=self.shell.dialog_parent())
        dlg.open()
        self.plugins_dialog = dlg
