"""Regions of time and frequency in the app, and the edits made with them.

:class:`RegionsController` owns the regions drawn over the open recording and the
current one:

* a region comes from a tool of Edit › Region tool (:class:`~specscope.widgets.region_layer.RegionLayer`:
  Lasso O, Brush B (Shift erases), Box with harmonics Shift+H; Box is the selection,
  the same mode as Select box, S), from the selection (a Ctrl+drag in any mode makes
  the box the current region), or from an annotation (Edit › Region › Region from
  annotation);
* the regions are listed with their areas in the Regions panel
  (:class:`~specscope.widgets.region_panel.RegionPanel`), the current one drawn with its
  feather as a second, fainter outline;
* an operation on the current region (Edit › Region › Attenuate… / Gain… / Remove /
  Isolate, or the panel's buttons) adds one processing step ``{"op": "edit", ...}``,
  checked against the recording on the compute thread (outside it, of zero area or
  above Nyquist: one line in the status bar, nothing applied), then one undoable change
  of the settings: listed in the Processing panel, kept in sessions and pipeline files,
  shown in the view and played by Space;
* the panel's Show (after, before, difference) is the settings' comparison: before the
  region edits, or while the filter designer's filters are applied, before them.

Regions are in seconds from the recording's start and Hz; an IQ capture's in Hz from
its centre frequency (the view shows absolute Hz: the layer and the panel add it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PyQt6.QtCore import QObject
from PyQt6.QtWidgets import QInputDialog
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.compute.edit import Box, Brush, Harmonics, Region, RegionEdit
from specscope.compute.pipeline import Pipeline
from specscope.widgets.region_layer import RegionLayer
from specscope.widgets.region_panel import RegionPanel
from specscope.widgets.region_shapes import edit_text, region_text

if TYPE_CHECKING:
    from PyQt6.QtGui import QAction
    from specscope.app.desktop.controllers.annotations import AnnotationsController, Selection
    from specscope.app.qt.shell import Shell
    from specscope.compute.io import Recording

__all__ = ["MAX_REGIONS", "TOOL_ACTIONS", "RegionsController"]

#: regions the list keeps (the oldest go first)
MAX_REGIONS = 50
#: the Edit › Region tool entries, by tool ("": pan)
TOOL_ACTIONS = {"": "region_pan", "box": "region_box", "lasso": "region_lasso",
                "brush": "region_brush", "harmonics": "region_harmonics"}
#: what a person is told when a tool is chosen
_TOOL_MESSAGES = {
    "": "Drag pans the spectrogram again",
    "box": "Box: drag a box on the spectrogram; it is the selection and the region",
    "lasso": "Lasso: drag around the region; the release closes it",
    "brush": "Brush: drag to paint the region, Shift+drag to erase",
    "harmonics": "Harmonics: drag a box around the fundamental; its harmonics follow",
}


class RegionsController(QObject):
    """The regions over a :class:`Shell`'s view and the edits made with them.

    Parameters
    ----------
    shell : Shell
        The window: settings, document, worker, view, messages and undo stack.
    annotations : AnnotationsController
        The selection and the annotations (each can be a region).
    parent : QObject
        The Qt parent.
    interactive : bool
        False: never ask with a dialog (Attenuate… and Gain… take the panel's dB).
    """

    def __init__(self, shell: Shell, annotations: AnnotationsController, parent: QObject,
                 *, interactive: bool = True) -> None:
        super().__init__(parent)
        self.shell = shell
        self.annotations = annotations
        self._interactive = interactive
        #: the regions drawn, oldest first
        self.regions: list[Region] = []
        #: the index of the current region, None when there is none
        self.current: int | None = None
        #: the tool plain drags use ("": pan)
        self.tool = ""
        #: added to a region's Hz on the view (an IQ capture's centre frequency)
        self.offset_hz = 0.0
        # installed after the annotation layer: it sees a drag first and leaves the
        # selection's (Ctrl, or the box tool) to it
        self.layer = RegionLayer(shell.view, self)
        self.panel = RegionPanel()
        self.db_dialog: QInputDialog | None = None
        self._texts: dict[Region, str] = {}
        self._actions: dict[str, QAction] = {}
        self._syncing = False
        self.layer.regionDrawn.connect(self._drawn)
        self.layer.refused.connect(lambda text: self.shell.show_message(text, 8000))
        self.panel.toolChosen.connect(self.set_tool)
        self.panel.regionChosen.connect(self.choose)
        self.panel.forgetRequested.connect(self.forget)
        self.panel.operationRequested.connect(self.apply)
        self.panel.featherChanged.connect(self.layer.set_feather)
        self.panel.harmonicsChanged.connect(self._harmonics_changed)
        self.panel.brushChanged.connect(self._brush_changed)
        self.panel.compareChanged.connect(self._compare_changed)
        annotations.selectionChanged.connect(self._selection_changed)

    # -- the current region --------------------------------------------------------------
    def region(self) -> Region | None:
        """The current region (None when there is none)."""
        return None if self.current is None else self.regions[self.current]

    def add_region(self, region: Region) -> None:
        """Make ``region`` (seconds, Hz from the centre of an IQ capture) the current one,
        at the end of the list."""
        self.regions.append(region)
        del self.regions[:-MAX_REGIONS]
        self._texts = {r: t for r, t in self._texts.items() if r in self.regions}
        self.current = len(self.regions) - 1
        self._show()

    def choose(self, index: int) -> None:
        """Make the region of row ``index`` the current one."""
        if 0 <= index < len(self.regions):
            self.current = index
            self._show()

    def forget(self, index: int) -> None:
        """Take the region of row ``index`` off the list (edits made with it stay)."""
        if not 0 <= index < len(self.regions):
            return
        del self.regions[index]
        self.current = min(index, len(self.regions) - 1) if self.regions else None
        self._show()

    def _show(self) -> None:
        self.layer.set_region(self.region())
        self.panel.set_regions([self._text(r) for r in self.regions], self.current)

    def _text(self, region: Region) -> str:
        """The region's line in the list, made once (a brush's area is sampled)."""
        text = self._texts.get(region)
        if text is None:
            text = self._texts[region] = region_text(region, self.offset_hz)
        return text

    def _drawn(self, region: Region) -> None:
        old = self.region()
        if isinstance(region, Brush) and isinstance(old, Brush) and (
                region.radius_s, region.radius_hz) == (old.radius_s, old.radius_hz):
            self.regions[self.current] = region  # a stroke more of the same brush region
            self._show()
            return
        self.add_region(region)

    def _selection_changed(self, selection: Selection | None) -> None:
        rec = self._recording()
        if selection is None or rec is None:
            return
        self.add_region(self._box(rec, selection.start_s, selection.stop_s,
                                  selection.freq_low_hz, selection.freq_high_hz))

    def _box(self, rec: Recording, t0: float, t1: float, f0: float | None,
             f1: float | None) -> Box:
        """A box of absolute Hz (None: the whole band) as a region."""
        if f0 is None or f1 is None:
            half = rec.sample_rate / 2
            return Box(t0, t1, -half if rec.is_complex else 0.0, half)
        return Box(t0, t1, f0 - self.offset_hz, f1 - self.offset_hz)

    def from_annotation(self) -> None:
        """Edit › Region › Region from annotation: the current annotation's box."""
        ann = self.annotations
        uuid = ann.list.current() or ann.current
        a = ann.annotation(uuid) if uuid else None
        rec = self._recording()
        if a is None or rec is None:
            self.shell.show_message("No annotation chosen: click one in the list or the "
                                    "view, or N / P", 5000)
            return
        self.add_region(self._box(rec, a.start_s, a.stop_s, a.freq_low_hz, a.freq_high_hz))
        self.shell.show_message(f"Region from annotation '{a.label}'" if a.label
                                else "Region from the annotation", 5000)

    def _harmonics_changed(self, count: int) -> None:
        self.layer.harmonics = int(count)
        r = self.region()
        if isinstance(r, Harmonics) and r.count != count:
            self.regions[self.current] = Harmonics(r.t0, r.t1, r.f0, r.f1, int(count))
            self._show()

    def _brush_changed(self, px: float) -> None:
        self.layer.brush_px = float(px)

    # -- tools ---------------------------------------------------------------------------
    def bind_actions(self, actions: dict[str, QAction]) -> None:
        """The Edit menu's tool entries (checked as the tool changes) and Select box (S),
        which is the Box tool."""
        self._actions = actions
        select = actions.get("select_mode")
        if select is not None:
            select.toggled.connect(self._select_toggled)
        self._sync_tool()

    def set_tool(self, tool: str) -> None:
        """Plain drags on the spectrogram use ``tool``: ``"box"``, ``"lasso"``,
        ``"brush"``, ``"harmonics"``, or ``""`` (they pan)."""
        self.tool = tool
        self.layer.set_tool(tool)
        self.annotations.layer.select_mode = tool == "box"
        self._sync_tool()
        self.shell.show_message(_TOOL_MESSAGES[tool], 5000)

    def set_pan(self, on: bool = True) -> None:
        """Edit › Region tool › Pan: no tool."""
        self.set_tool("")

    def set_box(self, on: bool) -> None:
        self.set_tool("box" if on else "")

    def set_lasso(self, on: bool) -> None:
        self.set_tool("lasso" if on else "")

    def set_brush(self, on: bool) -> None:
        self.set_tool("brush" if on else "")

    def set_harmonics(self, on: bool) -> None:
        self.set_tool("harmonics" if on else "")

    def _sync_tool(self) -> None:
        self._syncing = True
        try:
            self.panel.set_tool(self.tool)
            for tool, name in TOOL_ACTIONS.items():
                act = self._actions.get(name)
                if act is not None:
                    act.setChecked(tool == self.tool)
            select = self._actions.get("select_mode")
            if select is not None:
                select.setChecked(self.tool == "box")
        finally:
            self._syncing = False

    def _select_toggled(self, on: bool) -> None:
        """Select box (S) is the Box tool."""
        if self._syncing:
            return
        if on and self.tool != "box":
            self.tool = "box"
            self.layer.set_tool("box")
            self._sync_tool()
        elif not on and self.tool == "box":
            self.tool = ""
            self.layer.set_tool("")
            self._sync_tool()

    # -- edits ---------------------------------------------------------------------------
    def attenuate_dialog(self) -> None:
        """Edit › Region › Attenuate…: by how many dB (the panel's by default)."""
        self._ask_db("attenuate", "Attenuate the region by")

    def gain_dialog(self) -> None:
        """Edit › Region › Gain…: by how many dB (the panel's by default)."""
        self._ask_db("gain", "Raise the region by")

    def remove(self) -> None:
        """Edit › Region › Remove."""
        self.apply("remove")

    def isolate(self) -> None:
        """Edit › Region › Isolate."""
        self.apply("isolate")

    def _ask_db(self, operation: str, label: str) -> None:
        if self.region() is None:
            self._no_region()
            return
        if not self._interactive:
            self.apply(operation)
            return
        dlg = QInputDialog(self.shell.dialog_parent())
        dlg.setWindowTitle("Region edit")
        dlg.setInputMode(QInputDialog.InputMode.DoubleInput)
        dlg.setDoubleRange(-200.0, 200.0)
        dlg.setDoubleDecimals(1)
        dlg.setDoubleValue(self.panel.db.value())
        dlg.setLabelText(f"{label} (dB):")

        def chosen(db: float) -> None:
            self.panel.db.setValue(db)
            self.apply(operation)

        dlg.doubleValueSelected.connect(chosen)
        dlg.open()
        self.db_dialog = dlg

    def _no_region(self) -> None:
        self.shell.show_message("No region: draw one with Lasso (O), Brush (B), Box (S) or "
                                "Harmonics (Shift+H), or Ctrl+drag a box", 8000)

    def edit_for(self, operation: str) -> dict:
        """The step an operation on the current region adds, with the panel's fields."""
        region = self.region()
        assert region is not None
        v = self.panel.values()
        return {"op": "edit", "params": {"region": region.to_dict(), "operation": operation,
                                         "db": v["db"], "feather_ms": v["feather_ms"],
                                         "feather_hz": v["feather_hz"]}}

    def apply(self, operation: str) -> int | None:
        """Add ``operation`` on the current region as a processing step: checked against
        the recording on the compute thread, then one undoable change; returns the job id."""
        doc = self.shell.document
        if doc is None:
            return None
        if self.region() is None:
            self._no_region()
            return None
        step = self.edit_for(operation)
        rec, before = doc.recording, self.shell.settings.base_steps

        def check(control: TaskControl) -> dict:
            edit = RegionEdit.from_dict(step["params"], "the region edit")
            edit.check(rec.sample_rate, two_sided=rec.is_complex, n_samples=rec.n_samples)
            full = {"op": "edit", "params": edit.to_dict()}
            Pipeline.from_steps([*before, full]).bind(rec.sample_rate, rec.is_complex)
            return full

        return self.shell.worker.submit(
            "region-edit", check, label="Checking the region edit",
            callbacks=JobCallbacks(done=self._checked, failed=self._refused))

    def _checked(self, result: JobResult) -> None:
        step = result.value
        s = self.shell.settings
        self.shell.change_settings(s.with_changes(
            processing=json.dumps([*s.base_steps, step])))
        self.shell.show_message(f"Region edit: {edit_text(step['params'], self.offset_hz)} "
                                "(a processing step; Ctrl+Z undoes it)", 8000)

    def _refused(self, error: JobError) -> None:
        self.shell.show_error(f"Region edit not applied: {error.message}", dialog=False)

    def _compare_changed(self, mode: str) -> None:
        self.shell.change_settings(self.shell.settings.with_changes(compare=mode))

    # -- the window ------------------------------------------------------------------------
    def _recording(self) -> Recording | None:
        doc = self.shell.document
        return None if doc is None else doc.recording

    def document_opened(self, rec: Recording) -> None:
        """A new recording: no regions; its centre frequency (IQ) offsets the view's Hz."""
        self.offset_hz = float(rec.center_frequency or 0.0) if rec.is_complex else 0.0
        self.layer.set_offset(self.offset_hz)
        self.regions, self.current = [], None
        self._texts.clear()
        self._show()

    def settings_changed(self) -> None:
        """Show the settings' comparison (after undo, redo, a session)."""
        self.panel.set_compare(self.shell.settings.compare)
