"""The app's actions as data: one table builds the menus, their shortcuts and the F1 list.

Each :class:`ActionSpec` names its menu, text, shortcuts, help line and the
window method it calls; :func:`build_menus` turns the table into the menu
bar's QActions, and :func:`shortcut_rows` reads the F1 list back from those
QActions, so the list shows exactly the shortcuts the menus have.  Keys the
spectrogram view and the filter designer handle themselves (arrows, wheel,
clicks) are listed in :data:`VIEW_GESTURES`.

:class:`ShortcutGuard` decides who gets a key that is both a shortcut and
something a field understands: a single key (Z, H, Backspace, ...) typed
into a text field goes to the field, never to the action; Undo and Redo go to
the app's undo stack wherever the focus is, except in a free text field that
has typing of its own to undo.  Spin boxes and combo boxes are settings: each
value they take is already one step of the app's undo stack, and Space plays
from them as from anywhere but a text field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PyQt6.QtCore import QEvent, QObject, Qt
from PyQt6.QtGui import QAction, QKeyEvent, QKeySequence
from PyQt6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)
from specscope.widgets.shortcuts_dialog import ShortcutRow

__all__ = ["ACTIONS", "VIEW_GESTURES", "ActionSpec", "ShortcutGuard", "build_menus",
           "keys_text", "menu_actions", "plain", "shortcut_rows"]

Std = QKeySequence.StandardKey
Shortcut = str | QKeySequence.StandardKey


@dataclass(frozen=True)
class ActionSpec:
    """One entry of a menu.

    Parameters
    ----------
    id : str
        Key of the QAction in the dict :func:`build_menus` returns.
    menu : str
        Title of the top-level menu (with its ``&`` mnemonic).
    text : str
        The entry's text (with its ``&`` mnemonic).
    handler : str
        ``kind="call"``: the window method called when the entry is chosen (with
        the checked state when ``checkable``), a dotted path for a method of one
        of the window's controllers (``"exports.export_dialog"``);
        ``kind="dock"``: the window attribute holding the dock widget the entry
        shows and hides; ``kind="submenu"``: the window attribute that receives
        the submenu.
    shortcuts : tuple
        Key sequences (``"Ctrl+E"``) or standard keys (``QKeySequence.StandardKey``).
    help : str
        What the entry does: the status tip, and the F1 list's last column.
    kind : {"call", "undo", "redo", "dock", "submenu"}
        Where the QAction comes from: a new one, the undo stack, a dock's
        toggle action, or a submenu filled later.
    checkable : bool
        An on/off entry.
    needs_document : bool
        Disabled until a recording is open.
    separator_before : bool
        A separator line above the entry.
    submenu : str
        Title of the submenu of ``menu`` the entry is in (with its ``&`` mnemonic); ""
        for the menu itself.  The entries of a submenu follow each other in the table.
    """

    id: str
    menu: str
    text: str
    handler: str = ""
    shortcuts: tuple[Shortcut, ...] = ()
    help: str = ""
    kind: Literal["call", "undo", "redo", "dock", "submenu"] = "call"
    checkable: bool = False
    needs_document: bool = False
    separator_before: bool = False
    submenu: str = ""


FILE, EDIT, VIEW, DETECT, HELP = "&File", "&Edit", "&View", "&Detect", "&Help"
#: the Edit menu's submenus of region tools and of operations on the current region
REGION_TOOL, REGION = "Region &tool", "Re&gion"

ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("open", FILE, "&Open…", "open_dialog", (Std.Open,), "Open a recording"),
    ActionSpec("recent", FILE, "Recent &files", "recent_menu",
               help="Reopen one of the last recordings opened", kind="submenu"),
    ActionSpec("open_folder", FILE, "Open fol&der…", "deployment.open_folder_dialog",
               ("Ctrl+Shift+O",), "Open a folder of recordings as one timeline (a "
               "deployment: files in time order, gaps shown as gaps)"),
    ActionSpec("open_session", FILE, "Open sess&ion…", "open_session_dialog",
               ("Ctrl+Alt+O",), "Open a saved session: the recording, its annotations, "
               "processing, filter chain, detections and review, the view"),
    ActionSpec("save_session", FILE, "&Save session…", "save_session_dialog", (Std.Save,),
               "Save the session: the recording, its annotations, processing, filter chain, "
               "detections and review, the view (nothing is left unsaved)",
               needs_document=True),
    ActionSpec("open_pipeline", FILE, "Open pipe&line…", "processing.open_pipeline_dialog",
               help="Use a pipeline file's processing and spectrogram parameters",
               separator_before=True),
    ActionSpec("save_pipeline", FILE, "Save pipeli&ne…", "processing.save_pipeline_dialog",
               help="Save the processing and spectrogram parameters as a pipeline file"),
    ActionSpec("export", FILE, "&Export HDF5…", "exports.export_dialog", ("Ctrl+E",),
               "Export the spectrogram of the whole recording to HDF5", needs_document=True,
               separator_before=True),
    ActionSpec("export_range", FILE, "Export &range…", "exports.export_range_dialog",
               ("Ctrl+Shift+R",), "Export a time range and channels to HDF5, WAV, FLAC or "
               "SigMF, as recorded or through the processing", needs_document=True),
    ActionSpec("export_view", FILE, "Export &view values to HDF5…", "exports.export_view_dialog",
               ("Ctrl+Shift+E",), "Export the values of the view to HDF5",
               needs_document=True),
    ActionSpec("export_png", FILE, "Export view as &PNG…", "exports.export_png_dialog", ("Ctrl+P",),
               "Export the view as PNG", needs_document=True),
    ActionSpec("import_annotations", FILE, "Import anno&tations…", "annotations.import_dialog",
               ("Ctrl+I",), "Add the annotations of a file (SigMF, Raven, Audacity, CSV, "
               "HDF5)", needs_document=True, separator_before=True),
    ActionSpec("export_annotations", FILE, "Export annot&ations…", "annotations.export_dialog",
               help="Write the annotations as Raven, Audacity, CSV, SigMF or HDF5 (by the "
               "file's extension)", needs_document=True),
    ActionSpec("save_annotations", FILE, "Save annotations to the recordin&g",
               "annotations.save_to_recording", ("Ctrl+Shift+S",),
               "Write the annotations into the SigMF recording's .sigmf-meta",
               needs_document=True),
    ActionSpec("quit", FILE, "&Quit", "close", (Std.Quit,), "Quit", separator_before=True),
    ActionSpec("undo", EDIT, "&Undo", shortcuts=(Std.Undo,),
               help="Undo the last change of settings, processing or filter design",
               kind="undo"),
    ActionSpec("redo", EDIT, "&Redo", shortcuts=("Ctrl+Shift+Z", "Ctrl+Y"),
               help="Redo the change undone last", kind="redo"),
    ActionSpec("select_mode", EDIT, "&Select box (drag)", "annotations.set_select_mode", ("S",),
               "Drags on the spectrogram select a box instead of panning (Ctrl+drag selects "
               "in any mode; with Alt: a time range)", checkable=True, separator_before=True),
    ActionSpec("annotate", EDIT, "&Annotate selection", "annotations.annotate_selection",
               ("A", "Return", "Enter"), "Make the selection an annotation, then type its "
               "label", needs_document=True),
    ActionSpec("rename_annotation", EDIT, "Re&name annotation", "annotations.rename_current",
               ("F2",), "Type a new label for the current annotation (after N / P, a click "
               "in the list or the view)", needs_document=True),
    ActionSpec("delete_annotation", EDIT, "&Delete annotation", "annotations.delete_current",
               ("Delete",), "Delete the annotation chosen in the list or the view",
               needs_document=True),
    ActionSpec("region_pan", EDIT, "&Pan (no region tool)", "regions.set_pan",
               help="Drags on the spectrogram pan again", checkable=True,
               separator_before=True, submenu=REGION_TOOL),
    ActionSpec("region_box", EDIT, "&Box (the selection)", "regions.set_box",
               help="Drags select a box, which is the region (the same as Select box, S)",
               checkable=True, submenu=REGION_TOOL),
    ActionSpec("region_lasso", EDIT, "&Lasso", "regions.set_lasso", ("O",),
               "Drag around a region of time and frequency; the release closes it",
               checkable=True, submenu=REGION_TOOL),
    ActionSpec("region_brush", EDIT, "B&rush", "regions.set_brush", ("B",),
               "Drag to paint a region (the radius is set in the Regions panel); Shift+drag "
               "erases", checkable=True, submenu=REGION_TOOL),
    ActionSpec("region_harmonics", EDIT, "Box with &harmonics", "regions.set_harmonics",
               ("Shift+H",), "Drag a box around a fundamental; the region takes its harmonics "
               "too (how many: the Regions panel)", checkable=True, submenu=REGION_TOOL),
    ActionSpec("region_attenuate", EDIT, "&Attenuate…", "regions.attenuate_dialog",
               help="Lower the current region by some dB (a processing step: undoable, "
               "saved in sessions and pipelines, heard in playback and exports)",
               needs_document=True, submenu=REGION),
    ActionSpec("region_gain", EDIT, "&Gain…", "regions.gain_dialog",
               help="Raise the current region by some dB (a processing step)",
               needs_document=True, submenu=REGION),
    ActionSpec("region_remove", EDIT, "&Remove", "regions.remove",
               help="Lower the current region to the level around it, keeping the "
               "background (a processing step)", needs_document=True, submenu=REGION),
    ActionSpec("region_isolate", EDIT, "&Isolate", "regions.isolate",
               help="Keep only the current region; the rest becomes silence (a processing "
               "step)", needs_document=True, submenu=REGION),
    ActionSpec("region_from_annotation", EDIT, "Region from a&nnotation",
               "regions.from_annotation", help="The current annotation's box (time and "
               "band) becomes the current region", needs_document=True,
               separator_before=True, submenu=REGION),
    ActionSpec("home", VIEW, "&Home (whole recording)", "view.reset_view",
               ("Home", "Ctrl+0"), "Show the whole recording"),
    ActionSpec("auto_levels", VIEW, "&Auto levels", "views.auto_levels", ("Ctrl+L",),
               "Fit the dB range to the image"),
    ActionSpec("zoom_box", VIEW, "&Zoom box (drag a rectangle)", "view.set_zoom_box", ("Z",),
               "Drag a rectangle to zoom into it", checkable=True),
    ActionSpec("zoom_selection", VIEW, "Zoom to &selection", "annotations.zoom_to_selection",
               ("Shift+Z",), "Show the selected box", needs_document=True),
    ActionSpec("harmonics", VIEW, "Harmo&nic cursors", "set_harmonic_cursors", ("H",),
               "Harmonic cursors at 2f, 3f, ... of the cursor", checkable=True),
    ActionSpec("clear_reference", VIEW, "Clear &measurement reference", "view.clear_reference",
               ("Backspace",), "Clear the reference of the Δt, Δf, ΔdB readout"),
    ActionSpec("representation", VIEW, "&Representation", "representation_menu",
               help="Show the STFT or a plugin's image of the signal", kind="submenu"),
    ActionSpec("settings_dock", VIEW, "Spectrogram", "settings_dock",
               help="Show / hide the spectrogram settings", kind="dock"),
    ActionSpec("processing_dock", VIEW, "Processing", "processing_dock",
               help="Show / hide the processing steps", kind="dock"),
    ActionSpec("designer_dock", VIEW, "Filter designer", "designer_dock", ("Ctrl+F",),
               "Show / hide the filter designer", kind="dock"),
    ActionSpec("annotations_dock", VIEW, "Annotations", "annotations_dock",
               help="Show / hide the list of annotations", kind="dock"),
    ActionSpec("measurement_dock", VIEW, "Selection", "measurement_dock",
               help="Show / hide the measurements of the selection", kind="dock"),
    ActionSpec("regions_dock", VIEW, "Regions", "regions_dock",
               help="Show / hide the regions: tools, the regions drawn with their areas, "
               "attenuate, gain, remove, isolate", kind="dock"),
    ActionSpec("profiler_dock", VIEW, "Profiler", "profiler_dock",
               help="Show / hide time per operator and backend of the last jobs",
               kind="dock"),
    ActionSpec("diel_dock", VIEW, "Detections per hour", "deployment.dock",
               help="Show / hide the detections counted by date and hour of day (the "
               "diel plot), with its CSV and PNG export", kind="dock"),
    ActionSpec("levels_dock", VIEW, "Levels", "levels.dock",
               help="Show / hide the long-term sound levels: LTSA, band levels, SPD with "
               "percentiles, day x hour; each exports PNG and CSV", kind="dock"),
    ActionSpec("compute_levels", VIEW, "Compute le&vels…", "levels.show_panel",
               help="Long-term sound levels of the recording or deployment: bands, interval, "
               "statistic and calibration in the Levels panel, then Compute",
               needs_document=True),
    ActionSpec("calibration", VIEW, "Cali&bration…", "calibration.dialog",
               help="The recording's calibration (sensitivity, gain, full-scale voltage, "
               "response; or a file): levels, readout, colour bar and exports in dB re "
               "1 µPa or 20 µPa; nothing is recomputed", needs_document=True),
    ActionSpec("go_to", VIEW, "Go to &date/time…", "deployment.go_to_dialog", ("Ctrl+G",),
               "Centre the view on a date and time (or a time into the recording)",
               needs_document=True),
    ActionSpec("messages", VIEW, "Messa&ges…", "show_messages", ("Ctrl+M",),
               "The session's messages with their times, each whole (the status bar "
               "shows the last one for a few seconds)"),
    ActionSpec("cancel", VIEW, "Cancel computat&ion", "cancel_jobs", ("Esc",),
               "Cancel the running computation"),
    ActionSpec("play", VIEW, "&Play / stop", "playback.toggle", ("Space",),
               "Play the selection, else the visible span, from the cursor when it is "
               "inside; again: stop", separator_before=True),
    ActionSpec("loop", VIEW, "&Loop", "playback.set_loop", ("L",),
               "Start again at the end of the range", checkable=True),
    ActionSpec("tune_mode", VIEW, "&Tune on click (IQ)", "playback.set_tune_mode", ("T",),
               "Click a carrier on the spectrogram to listen to it", checkable=True),
    ActionSpec("transport_bar", VIEW, "Transport bar", "transport_bar",
               help="Show / hide the transport bar", kind="dock"),
    ActionSpec("compute", VIEW, "&Compute", "compute_menu",
               help="Where operators run: Auto (timed per operator), CPU or GPU",
               kind="submenu"),
    ActionSpec("detect_dock", DETECT, "Detect &panel", "detection.show_panel",
               ("Ctrl+Shift+D",), "Show the Detect panel: detectors, their detections and "
               "scores"),
    ActionSpec("run_detector", DETECT, "&Run detector", "detection.run_from_panel", ("Ctrl+D",),
               "Run the Detect panel's detector with its parameters (compute thread; Esc "
               "cancels)", needs_document=True),
    ActionSpec("find_similar", DETECT, "Find &similar", "detection.find_similar_from_panel",
               ("Ctrl+Shift+F",), "Template matching: the selected box or annotation as "
               "template, over the recording", needs_document=True),
    ActionSpec("review", DETECT, "Re&view detections", "detection.mode.start", ("Ctrl+R",),
               "Each detection zoomed: A accept, R reject, 1–9 label, N / P next / previous, "
               "Space play, Ctrl+Z undo, Esc leave", needs_document=True),
    ActionSpec("compare_detections", DETECT, "&Compare with annotations", "detection.compare",
               help="Precision, recall and F1 per label of the detections against the "
               "annotations (matched by overlap)", needs_document=True, separator_before=True),
    ActionSpec("export_detections", DETECT, "&Export detections…", "detection.export_dialog",
               help="Write every detection with its score and review (Raven, Audacity, CSV, "
               "SigMF, HDF5)", needs_document=True),
    ActionSpec("clear_detections", DETECT, "C&lear detections", "detection.clear",
               help="Remove the detections (annotations made from them stay)",
               needs_document=True),
    ActionSpec("shortcuts", HELP, "&Keyboard shortcuts", "show_shortcuts", ("F1",),
               "This list"),
    ActionSpec("plugins", HELP, "&Plugins…", "processing.show_plugins_dialog",
               help="Which plugins were found, loaded or failed"),
    ActionSpec("about", HELP, "&About specscope", "show_about", help="Version"),
)

#: keys and gestures handled by the spectrogram view and the filter designer themselves
VIEW_GESTURES: tuple[ShortcutRow, ...] = (
    ShortcutRow("Left / Right", "Pan in time", "Spectrogram view"),
    ShortcutRow("+ / -", "Zoom in / out in time", "Spectrogram view"),
    ShortcutRow("Up / Down", "Pan in frequency (with Shift: zoom)", "Spectrogram view"),
    ShortcutRow("Click / double-click", "Set / clear the measurement reference (Δt, Δf, ΔdB)",
                "Spectrogram view"),
    ShortcutRow("Mouse drag / wheel", "Pan / zoom time around the cursor (right-drag zooms "
                "each axis)", "Spectrogram view"),
    ShortcutRow("Shift+wheel", "Zoom frequency around the cursor", "Spectrogram view"),
    ShortcutRow("Ctrl+drag", "Select a time-frequency box (a plain drag in select mode, S); "
                "it is measured in the Selection panel", "Spectrogram view"),
    ShortcutRow("Ctrl+Alt+drag", "Select a time range over the whole band", "Spectrogram view"),
    ShortcutRow("Drag an annotation's edge", "Move that edge (undoable)", "Spectrogram view"),
    ShortcutRow("Drag (a region tool)", "Draw a lasso, paint with the brush or draw a box with "
                "harmonics (Edit › Region tool); Ctrl+drag still selects", "Spectrogram view"),
    ShortcutRow("Shift+drag", "Erase from the brush region (Brush, B)", "Spectrogram view"),
    ShortcutRow("N / P", "Next / previous annotation: the view centres on it (while there "
                "are annotations)", "Spectrogram view, annotation list"),
    ShortcutRow("Click / double-click a row", "Jump to the annotation / edit its label (F2)",
                "Annotation list"),
    ShortcutRow("N", "Click a spectral line to notch it", "Filter designer"),
    ShortcutRow("A / R", "Accept / reject the detection, then the next", "Review mode"),
    ShortcutRow("1 … 9", "Accept with that label of the label list", "Review mode"),
    ShortcutRow("N / P, Right / Left", "Next / previous detection", "Review mode"),
    ShortcutRow("Space", "Play the detection in its band", "Review mode"),
    ShortcutRow("Ctrl+Z / Esc", "Undo the last decision / leave review", "Review mode"),
)


class _Slot(QObject):
    """Calls ``slot`` for a triggered QAction; lives (and dies) with the action, so a
    queued signal can never reach a deleted window."""

    def __init__(self, slot: Callable[..., Any], checkable: bool, parent: QObject) -> None:
        super().__init__(parent)
        self._slot = slot
        self._checkable = checkable

    def __call__(self, checked: bool = False) -> None:
        if self._checkable:
            self._slot(checked)
        else:
            self._slot()


def _key(s: Shortcut) -> QKeySequence:
    return QKeySequence(s)


def plain(text: str) -> str:
    """A menu text without its ``&`` mnemonic.

    Parameters
    ----------
    text : str
        A menu text; ``&&`` stands for a literal ``&``.

    Returns
    -------
    str
        The text as people read it.

    Examples
    --------
    >>> plain("&Open…"), plain("Drag && drop")
    ('Open…', 'Drag & drop')
    """
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _resolve(window: object, path: str) -> Any:
    for name in path.split("."):
        window = getattr(window, name)
    return window


def build_menus(window: QMainWindow, menubar: QMenuBar,
                specs: Sequence[ActionSpec] = ACTIONS) -> dict[str, QAction]:
    """Fill ``menubar`` from ``specs``, calling methods of ``window``.

    ``window.undo_stack`` provides the undo and redo entries.  Entries that
    need a document start disabled.

    Parameters
    ----------
    window : QMainWindow
        The window whose methods (and controllers' methods) the entries call; it
        also receives the submenus and the actions, so their shortcuts work while
        the menu bar is hidden.
    menubar : QMenuBar
        The menu bar to fill.
    specs : sequence of ActionSpec, optional
        The entries, in menu order; by default :data:`ACTIONS`.

    Returns
    -------
    dict
        The QAction of each spec, by id (a submenu's menuAction for ``kind="submenu"``).
    """
    menus: dict[str, QMenu] = {}
    actions: dict[str, QAction] = {}
    for spec in specs:
        menu = menus.get(spec.menu)
        if menu is None:
            menu = menus[spec.menu] = menubar.addMenu(spec.menu)
        if spec.submenu:
            key = f"{spec.menu} › {spec.submenu}"
            if key not in menus:  # a separator before its first entry goes above it
                if spec.separator_before:
                    menu.addSeparator()
                menus[key] = menu.addMenu(spec.submenu)
            elif spec.separator_before:
                menus[key].addSeparator()
            menu = menus[key]
        elif spec.separator_before:
            menu.addSeparator()
        if spec.kind == "submenu":
            sub = menu.addMenu(spec.text)
            setattr(window, spec.handler, sub)
            actions[spec.id] = sub.menuAction()
            continue
        if spec.kind in ("undo", "redo"):
            # the stack names the step: "Undo FFT size 2048"
            make = (window.undo_stack.createUndoAction if spec.kind == "undo"
                    else window.undo_stack.createRedoAction)
            act = make(window, spec.text)
            window.addAction(act)  # the shortcut works while the menu bar is hidden too
        elif spec.kind == "dock":
            act = _resolve(window, spec.handler).toggleViewAction()
        else:
            act = QAction(spec.text, window)
            act.setCheckable(spec.checkable)
            act.triggered.connect(_Slot(_resolve(window, spec.handler), spec.checkable, act))
            window.addAction(act)  # the shortcut works while the menu bar is hidden too
        if spec.shortcuts:
            act.setShortcuts([_key(s) for s in spec.shortcuts])
        if spec.help:
            act.setStatusTip(spec.help)
        act.setData(spec.id)
        if spec.needs_document:
            act.setEnabled(False)
        menu.addAction(act)
        actions[spec.id] = act
    return actions


def _walk(menu: QMenu, path: str) -> list[tuple[QAction, str]]:
    found = []
    for act in menu.actions():
        if act.isSeparator():
            continue
        if act.menu() is not None:
            found += _walk(act.menu(), f"{path} › {plain(act.text())}")
        else:
            found.append((act, path))
    return found


def menu_actions(menubar: QMenuBar) -> list[tuple[QAction, str]]:
    """Every entry of the menu bar with its menu path (``"View › Representation"``).

    Parameters
    ----------
    menubar : QMenuBar
        The menu bar to read.

    Returns
    -------
    list of (QAction, str)
        Each entry that is not a separator or a submenu, with the path of the menu
        it is in, in menu order.
    """
    found = []
    for top in menubar.actions():
        if top.menu() is not None:
            found += _walk(top.menu(), plain(top.text()))
    return found


def keys_text(act: QAction) -> str:
    """The shortcuts of an action as shown to people: ``"Home / Ctrl+0"``.

    Parameters
    ----------
    act : QAction
        The action.

    Returns
    -------
    str
        Its shortcuts in the platform's native text, joined by ``" / "``; empty
        when it has none.
    """
    return " / ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                      for k in act.shortcuts() if not k.isEmpty())


def shortcut_rows(menubar: QMenuBar) -> list[ShortcutRow]:
    """The F1 list: every menu entry that has a shortcut, then :data:`VIEW_GESTURES`.

    Read from the QActions of ``menubar``, so it cannot differ from the menus.

    Parameters
    ----------
    menubar : QMenuBar
        The menu bar :func:`build_menus` filled.

    Returns
    -------
    list of ShortcutRow
        Keys, entry, menu path and help line of each entry with a shortcut, then the
        view's own gestures.
    """
    helps = {s.id: s.help for s in ACTIONS}
    rows = [ShortcutRow(keys_text(act), plain(act.text()), where, helps.get(act.data(), ""))
            for act, where in menu_actions(menubar) if keys_text(act)]
    return rows + list(VIEW_GESTURES)


#: keys a text field uses for itself even without a modifier
_EDITING_KEYS = frozenset(k.value for k in (
    Qt.Key.Key_Backspace, Qt.Key.Key_Delete, Qt.Key.Key_Home, Qt.Key.Key_End,
    Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Space, Qt.Key.Key_Return,
    Qt.Key.Key_Enter))


def _text_field(w: QWidget | None) -> QLineEdit | QTextEdit | QPlainTextEdit | None:
    """The line or text edit of ``w`` when ``w`` is a field one types into, else None."""
    while w is not None:
        if isinstance(w, (QLineEdit, QTextEdit, QPlainTextEdit)):
            return None if w.isReadOnly() else w
        if isinstance(w, QAbstractSpinBox) or (isinstance(w, QComboBox) and w.isEditable()):
            return w.findChild(QLineEdit)
        if w.isWindow():
            return None
        w = w.parentWidget()
    return None


def _is_setting(field: QWidget) -> bool:
    """Whether ``field`` is the editor of a spin box or an editable combo box."""
    parent = field.parentWidget()
    return isinstance(parent, (QAbstractSpinBox, QComboBox))


def _undo_available(field: QLineEdit | QTextEdit | QPlainTextEdit) -> bool:
    if isinstance(field, QLineEdit):
        return field.isUndoAvailable()
    return field.document().isUndoAvailable()


class ShortcutGuard(QObject):
    """Routes the keys that are both shortcuts and typing, for the widgets of ``window``.

    Installed on the application; it acts on the ``ShortcutOverride`` event Qt
    sends to the focused widget before a shortcut fires: accepting it gives
    the key to the widget, filtering it out unaccepted lets the shortcut fire.

    Parameters
    ----------
    window : QWidget
        The window whose widgets are guarded; the guard is its child and leaves the
        application with it.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)  # removed from the application with the window
        self._window = window
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        # only where Qt asks first, the focused widget (unaccepted, it climbs to the parents)
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(obj, QWidget) \
                or obj is not QApplication.focusWidget() \
                or QWidget.window(obj) is not self._window:
            return False
        field = _text_field(obj)
        if field is None:
            return False
        assert isinstance(event, QKeyEvent)
        if event.matches(QKeySequence.StandardKey.Undo) or \
                event.matches(QKeySequence.StandardKey.Redo) or _is_redo(event):
            if not _is_setting(field) and _undo_available(field):
                event.accept()  # the field undoes its own typing
                return True
            return True  # not accepted: the app's Undo / Redo fires
        mods = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier
                                     | Qt.KeyboardModifier.KeypadModifier)
        if event.key() == Qt.Key.Key_Space and mods == Qt.KeyboardModifier.NoModifier \
                and _is_setting(field):
            return True  # not accepted: Space plays from a spin or combo box too
        if mods == Qt.KeyboardModifier.NoModifier and (
                (event.text() and event.text().isprintable())
                or event.key() in _EDITING_KEYS):
            event.accept()  # typed into the field, never a single-key shortcut
            return True
        return False


def _is_redo(event: QKeyEvent) -> bool:
    """Ctrl+Y and Ctrl+Shift+Z, the redo keys of the Edit menu on every platform."""
    combo = event.keyCombination()
    ctrl = Qt.KeyboardModifier.ControlModifier
    shift = Qt.KeyboardModifier.ShiftModifier
    mods = combo.keyboardModifiers() & ~Qt.KeyboardModifier.KeypadModifier
    return (combo.key() == Qt.Key.Key_Y and mods == ctrl) or \
        (combo.key() == Qt.Key.Key_Z and mods == ctrl | shift)
