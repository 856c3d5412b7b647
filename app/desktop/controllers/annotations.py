"""Selecting, measuring and annotating in the app.

:class:`AnnotationsController` owns the annotations of the open recording and
the selection:

* the selection is a time-frequency box dragged on the spectrogram (Ctrl+drag
  in any mode, a plain drag in select mode (S); with Alt a time range over the
  whole band).  It is public (:attr:`AnnotationsController.selection` and the
  ``selectionChanged`` signal) for whatever wants to act on it; the
  measurement panel shows :func:`~specscope.compute.annotations.measure` of it,
  computed on the compute thread;
* every change of the annotations (add, delete, move an edge, relabel,
  import) is one step of the window's undo stack, named after the annotation
  ("Undo add annotation 'bat'");
* the annotations are drawn by :class:`~specscope.widgets.annotation_layer.AnnotationLayer`,
  listed by :class:`~specscope.widgets.annotation_list.AnnotationList`, read and
  written in every format of :mod:`specscope.compute.annotations`, and kept on
  the recording (``Recording.annotations``), so range exports carry the ones
  the person sees.

N and P (next and previous annotation) are keys of the spectrogram view and
of the list: they are taken there only while there are annotations to step
through, so elsewhere (and in an empty recording) N stays the filter
designer's notch key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PyQt6.QtCore import QEvent, QObject, Qt, pyqtSignal
from PyQt6.QtGui import QKeyEvent, QUndoCommand, QUndoStack
from PyQt6.QtWidgets import QFileDialog
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.compute.annotations import (
    FORMATS,
    Annotation,
    annotations_of_recording,
    measure,
    read_annotations,
    write_annotations,
)
from specscope.compute.annotations.sigmf_meta import meta_path
from specscope.compute.errors import SpecscopeError
from specscope.widgets.annotation_layer import AnnotationLayer
from specscope.widgets.annotation_list import AnnotationList
from specscope.widgets.export_dialog import FormatFileDialog
from specscope.widgets.frequency_axis import forward, inverse
from specscope.widgets.measurement_panel import MeasurementPanel

if TYPE_CHECKING:
    from specscope.app.qt.shell import Shell
    from specscope.compute.io import Recording

__all__ = ["EXPORT_FILTERS", "IMPORT_FILTER", "AnnotationsController", "Selection",
           "export_format"]

#: File › Export annotations… choices: (filter text, format)
EXPORT_FILTERS = (
    ("Raven selection table (*.selections.txt *.tsv)", "raven"),
    ("Audacity labels (*.txt *.labels.txt)", "audacity"),
    ("CSV (*.csv)", "csv"),
    ("SigMF metadata (*.sigmf-meta)", "sigmf"),
    ("HDF5 annotation table (*.h5 *.hdf5)", "hdf5"),
    ("Praat TextGrid (*.TextGrid)", "textgrid"),
    ("ELAN annotations (*.eaf)", "eaf"),
)
IMPORT_FILTER = ("Annotations (*.txt *.tsv *.csv *.sigmf-meta *.h5 *.hdf5 *.TextGrid *.textgrid "
                 "*.eaf);;All files (*)")
_NAV_KEYS = {Qt.Key.Key_N.value: 1, Qt.Key.Key_P.value: -1}


def _n(n: int, word: str = "annotation") -> str:
    """``n`` and ``word``, plural unless there is one: "1 annotation", "3 annotations"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Selection:
    """A box of the recording: seconds from its first sample, absolute Hz.

    Parameters
    ----------
    start_s, stop_s : float
        The time span, seconds from the recording's first sample.
    freq_low_hz, freq_high_hz : float or None
        The band in absolute Hz; both None for a time selection (the whole band).
    channel : int, optional
        The channel the box was drawn on.
    """

    start_s: float
    stop_s: float
    freq_low_hz: float | None
    freq_high_hz: float | None
    channel: int = 0

    @property
    def span(self) -> tuple[float, float]:
        return self.start_s, self.stop_s


def _same_mark(a: Annotation) -> tuple:
    """What makes two annotations the same mark, whatever their uuids and channels: span,
    band and label, to the 1 µs and 1 µHz that Audacity's six decimals keep."""
    def r(v: float | None) -> float | None:
        return None if v is None else round(v, 6)
    return r(a.start_s), r(a.stop_s), r(a.freq_low_hz), r(a.freq_high_hz), a.label


def export_format(path: str, selected_filter: str = "") -> str | None:
    """The annotation format for a file chosen to export to.

    Parameters
    ----------
    path : str
        The file name.
    selected_filter : str
        The file dialog's chosen filter (one of :data:`EXPORT_FILTERS`).

    Returns
    -------
    str or None
        A format name; None when the name and the filter leave it open (a plain
        ``.txt`` is Audacity or Raven).
    """
    lower = path.lower()
    by_filter = next((f for text, f in EXPORT_FILTERS if text == selected_filter), None)
    if lower.endswith((".selections.txt", ".tsv")):
        return "raven"
    if lower.endswith(".labels.txt"):
        return "audacity"
    if lower.endswith(".txt"):
        return by_filter if by_filter in ("raven", "audacity") else None
    for f in FORMATS.values():
        if f.name != "audacity" and lower.endswith(f.suffixes):
            return f.name
    return by_filter


def _quoted(a: Annotation) -> str:
    return f"'{a.label}'" if a.label else "(no label)"


class _Change(QUndoCommand):
    """One undoable change of the annotations: ``remove`` replaced by ``add``.

    The first label given to a new annotation right after its add (typed after
    Enter) merges into the add, so one Undo removes the new annotation.
    """

    MERGE_ID = 4711

    def __init__(self, ctl: AnnotationsController, text: str, remove: Sequence[Annotation],
                 add: Sequence[Annotation], kind: str) -> None:
        super().__init__(text)
        self._ctl, self.remove, self.add, self.kind = ctl, list(remove), list(add), kind

    def id(self) -> int:
        single = len(self.add) == 1 and len(self.remove) <= 1
        return self.MERGE_ID if single and self.kind in ("add", "relabel") else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not (isinstance(other, _Change) and self.kind == "add" and other.kind == "relabel"
                and other.remove[0] == self.add[0] and not self.add[0].label):
            return False
        self.add = list(other.add)
        self.setText(f"add annotation {_quoted(self.add[0])}")
        return True

    def redo(self) -> None:
        self._ctl.apply_change(self.remove, self.add)

    def undo(self) -> None:
        self._ctl.apply_change(self.add, self.remove)


class AnnotationsController(QObject):
    """The annotations and the selection of a :class:`Shell`'s open recording.

    Parameters
    ----------
    shell : Shell
        The window: document, settings, worker, view, messages, ``undo_stack``.
    export_range : callable
        ``export_range(span)`` opens File › Export range… for a span (s).
    interactive : bool
        False: never ask with a dialog (a plain ``.txt`` export is Audacity).

    Signals
    -------
    selectionChanged(object)
        The new :class:`Selection`, or None when it was cleared.
    annotationsChanged()
        The annotations changed (any edit, undo, import or a new recording).
    annotationsSaved(list)
        These annotations were written to a file (an export, the recording's meta).
    annotationsLoaded(list)
        These annotations were imported from a file, which keeps them.
    """

    selectionChanged = pyqtSignal(object)
    annotationsChanged = pyqtSignal()
    #: the annotations (a list) were written to a file: an export or the recording's meta
    annotationsSaved = pyqtSignal(object)
    #: annotations (a list) were added from a file (an import): that file keeps them
    annotationsLoaded = pyqtSignal(object)

    def __init__(self, shell: Shell, export_range: Callable[[tuple[float, float]], None],
                 parent: QObject | None = None, *, interactive: bool = True) -> None:
        super().__init__(parent)
        self.shell = shell
        self._export_range = export_range
        self._interactive = interactive
        #: the annotations, sorted by start
        self.annotations: list[Annotation] = []
        self._by_uuid: dict[str, Annotation] = {}
        #: the selected box, None when there is none
        self.selection: Selection | None = None
        #: the measurement of the selection (a ``Measurement``), None until it arrives
        self.measurement = None
        #: the annotation the list and the layer highlight
        self.current: str | None = None
        self.layer = AnnotationLayer(shell.view, self)
        self.list = AnnotationList()
        self.panel = MeasurementPanel()
        self.layer.selectionDrawn.connect(self._selection_drawn)
        self.layer.selectionCleared.connect(self.clear_selection)
        self.layer.edgeMoved.connect(self._edge_moved)
        self.layer.annotationClicked.connect(self._clicked)
        self.list.jumpRequested.connect(self.jump_to)
        # after the editor has closed: the model is reset by the change
        self.list.labelEdited.connect(self.relabel, Qt.ConnectionType.QueuedConnection)
        self.panel.zoomRequested.connect(self.zoom_to_selection)
        self.panel.exportRequested.connect(self.export_selection)
        self.panel.annotateRequested.connect(self.annotate_selection)
        for w in (shell.view, self.list.table):
            w.installEventFilter(self)
        #: whether N on the view belongs to someone else now (the filter designer's notch
        #: key while it is open); the list keeps N/P
        self.view_n_taken: Callable[[], bool] = lambda: False

    # -- the model ---------------------------------------------------------------------
    @property
    def undo_stack(self) -> QUndoStack:
        return self.shell.undo_stack

    def _recording(self) -> Recording | None:
        doc = self.shell.document
        return None if doc is None else doc.recording

    def set_annotations(self, annotations: Sequence[Annotation]) -> None:
        """Make ``annotations`` the recording's annotations, not as an undo step
        (a recording opened, a session reopened)."""
        self._by_uuid = {a.uuid: a for a in annotations}
        self.current = None
        self._changed()

    def apply_change(self, remove: Sequence[Annotation], add: Sequence[Annotation]) -> None:
        """Replace ``remove`` by ``add`` (matched by uuid); the undo commands' one entry."""
        for a in remove:
            self._by_uuid.pop(a.uuid, None)
        for a in add:
            self._by_uuid[a.uuid] = a
        if len(add) == 1:
            self.current = add[0].uuid
        elif self.current not in self._by_uuid:
            self.current = None
        self._changed()

    def _changed(self) -> None:
        self.annotations = sorted(self._by_uuid.values(),
                                  key=lambda a: (a.start_s, a.stop_s, a.uuid))
        rec = self._recording()
        if rec is not None:
            rec.annotations = list(self.annotations)  # what range exports carry
        self.list.set_annotations(self.annotations)
        self.list.set_current(self.current)
        self.layer.current = self.current
        self.layer.set_annotations(self.annotations)
        self.annotationsChanged.emit()

    def _push(self, text: str, remove: Sequence[Annotation], add: Sequence[Annotation],
              kind: str) -> None:
        self.undo_stack.push(_Change(self, text, remove, add, kind))

    def annotation(self, uuid: str) -> Annotation | None:
        """The annotation ``uuid`` (None when there is none)."""
        return self._by_uuid.get(uuid)

    # -- a new recording, sessions -------------------------------------------------------
    def document_opened(self, rec: Recording) -> None:
        """Show a recording's own annotations (SigMF, HDF5 exports); no selection."""
        self.clear_selection()
        try:
            own = annotations_of_recording(rec)
        except SpecscopeError as exc:
            self.shell.show_error(str(exc), dialog=False)
            own = []
        self.set_annotations(own)
        self.show_resolution()
        if own:
            self.shell.show_message(f"{_n(len(own))} from {rec.path.name}", 8000)

    def show_resolution(self) -> None:
        """The list's band edges to the digits a frequency bin of the analysis tells."""
        doc, nfft = self.shell.document, self.shell.settings.stft.nfft
        self.list.set_frequency_resolution(
            doc.recording.sample_rate / nfft if doc is not None and nfft else None)

    def session_annotations(self) -> list[dict]:
        """The annotations as a session file keeps them."""
        return [a.to_dict() for a in self.annotations]

    def is_sigmf(self) -> bool:
        """Whether the open recording is SigMF (its meta can keep the annotations)."""
        rec = self._recording()
        return rec is not None and rec.format.lower().startswith("sigmf")

    # -- selection ---------------------------------------------------------------------
    def set_select_mode(self, on: bool) -> None:
        """Plain drags on the spectrogram select a box (on) or pan (off)."""
        self.layer.select_mode = bool(on)
        self.shell.show_message("Select: drag a box on the spectrogram (with Alt: a time "
                                "range)" if on else "Drag pans the spectrogram again", 5000)

    def _band(self, rec: Recording) -> tuple[float, float]:
        cf = rec.center_frequency or 0.0
        half = rec.sample_rate / 2
        return (cf - half, cf + half) if rec.is_complex else (0.0, half)

    def _selection_drawn(self, t0: float, t1: float, f0: float | None,
                         f1: float | None) -> None:
        rec = self._recording()
        if rec is None:
            self.clear_selection()
            return
        t0, t1 = (min(max(t, 0.0), rec.duration) for t in (t0, t1))
        if f0 is not None and f1 is not None:
            lo, hi = self._band(rec)
            f0, f1 = min(max(f0, lo), hi), min(max(f1, lo), hi)
        if t1 <= t0:
            self.clear_selection()
            return
        stacked = self.layer.selection_channel  # the band it was drawn on, when stacked
        self.select(Selection(t0, t1, f0, f1, max(self.shell.settings.channel, 0)
                              if stacked is None else stacked))

    def select(self, selection: Selection) -> None:
        """Make ``selection`` the selection: drawn, measured on the compute thread."""
        doc = self.shell.document
        if doc is None:
            return
        self.selection = selection
        self.measurement = None
        s = selection
        self.layer.set_selection((s.start_s, s.stop_s, s.freq_low_hz, s.freq_high_hz),
                                 s.channel)
        self.panel.set_selection(s.start_s, s.stop_s, s.freq_low_hz, s.freq_high_hz)
        self.selectionChanged.emit(s)
        rec, stft = doc.recording, doc.settings.stft

        def job(control: TaskControl):
            return measure(rec, s.start_s, s.stop_s, s.freq_low_hz, s.freq_high_hz,
                           nfft=stft.nfft, hop=stft.hop, window=stft.window, channel=s.channel)

        self.shell.worker.submit("measure", job, label="Measuring the selection",
                                 callbacks=JobCallbacks(
                                     done=lambda r: self._measured(s, r),
                                     failed=lambda e: self._measure_failed(s, e)))

    def _measured(self, selection: Selection, result: JobResult) -> None:
        if selection is not self.selection:
            return  # a newer box was drawn meanwhile
        self.measurement = result.value
        self.panel.show_measurement(result.value.to_dict())

    def _measure_failed(self, selection: Selection, error: JobError) -> None:
        if selection is self.selection:
            self.panel.show_error(error.message)

    def clear_selection(self) -> None:
        """No selection (a click with Ctrl, or in select mode)."""
        if self.selection is None:
            return
        self.selection = None
        self.measurement = None
        self.layer.set_selection(None)
        self.panel.clear()
        self.selectionChanged.emit(None)

    def selection_span(self) -> tuple[float, float] | None:
        """The selection's time range (s), None without a selection."""
        return None if self.selection is None else self.selection.span

    def zoom_to_selection(self) -> None:
        """Show the selection with a margin around it."""
        s = self.selection
        if s is None:
            self.shell.show_message("Nothing selected: Ctrl+drag a box first", 5000)
            return
        view = self.shell.view
        margin = 0.1 * max(s.stop_s - s.start_s, 1e-3)
        view.set_time_range(s.start_s - margin, s.stop_s + margin)
        if s.freq_low_hz is not None and s.freq_high_hz is not None:
            y0, y1 = (float(v) for v in self._y([s.freq_low_hz, s.freq_high_hz]))
            pad = 0.1 * max(y1 - y0, 1e-6)
            lo, hi = (float(v) for v in inverse(view.freq_scale, [y0 - pad, y1 + pad]))
            view.set_frequency_range(lo, hi)

    def export_selection(self) -> None:
        """File › Export range…, filled with the selection's start and stop."""
        span = self.selection_span()
        if span is None:
            self.shell.show_message("Nothing selected: Ctrl+drag a box first", 5000)
            return
        self._export_range(span)

    def annotate_selection(self) -> None:
        """Make the selection an annotation (one undo step), then edit its label in the list."""
        s = self.selection
        rec = self._recording()
        if s is None or rec is None:
            self.shell.show_message("Nothing selected: Ctrl+drag a box, then A or Enter", 5000)
            return
        # the channel shown, or the stacked band the box was drawn on
        channel = self.shell.settings.channel if self.shell.settings.channel >= 0 \
            else s.channel if self.layer.selection_channel is not None else -1
        a = Annotation(s.start_s, s.stop_s, s.freq_low_hz, s.freq_high_hz,
                       channel=channel if rec.n_channels > 1 and channel >= 0 else None)
        self._push(f"add annotation {_quoted(a)}", [], [a], "add")
        self.clear_selection()
        self.edit_label(a.uuid)

    def edit_label(self, uuid: str) -> None:
        """Open the label of ``uuid`` for typing, in the list."""
        row = self.list.row_of(uuid)
        if row < 0:
            return
        index = self.list.proxy.index(row, 4)
        self.list.table.setFocus()
        self.list.table.setCurrentIndex(index)
        self.list.table.edit(index)

    # -- editing -----------------------------------------------------------------------
    def relabel(self, uuid: str, label: str) -> None:
        """Give ``uuid`` a new label (one undo step)."""
        a = self._by_uuid.get(uuid)
        if a is None or a.label == label:
            return
        new = a.replace(label=label)
        self._push(f"rename annotation {_quoted(a)} to {_quoted(new)}", [a], [new], "relabel")

    def _edge_moved(self, uuid: str, edge: str, value: float) -> None:
        a = self._by_uuid.get(uuid)
        rec = self._recording()
        if a is None or rec is None:
            return
        if edge == "start":
            new = a.replace(start_s=min(max(value, 0.0), a.stop_s))
        elif edge == "stop":
            new = a.replace(stop_s=max(min(value, rec.duration), a.start_s))
        elif a.has_band:
            lo, hi = self._band(rec)
            if edge == "low":
                new = a.replace(freq_low_hz=min(max(value, lo), a.freq_high_hz))
            else:
                new = a.replace(freq_high_hz=max(min(value, hi), a.freq_low_hz))
        else:
            return
        if new != a:
            self._push(f"move {edge} of annotation {_quoted(a)}", [a], [new], "move")

    def rename_current(self) -> None:
        """F2: open the current annotation's label for typing, wherever the focus is."""
        uuid = self.list.current() or self.current
        if uuid is None or uuid not in self._by_uuid:
            self.shell.show_message("No annotation chosen: N / P, or click one in the list "
                                    "or the view", 5000)
            return
        self.edit_label(uuid)

    def delete_current(self) -> None:
        """Delete the current annotation (one undo step)."""
        uuid = self.list.current() or self.current
        a = self._by_uuid.get(uuid) if uuid else None
        if a is None:
            self.shell.show_message("No annotation chosen: click one in the list or the view",
                                    5000)
            return
        self._push(f"delete annotation {_quoted(a)}", [a], [], "delete")

    # -- navigation ----------------------------------------------------------------------
    def _clicked(self, uuid: str) -> None:
        self.current = uuid
        self.layer.set_current(uuid)
        self.list.set_current(uuid)

    def _y(self, f) -> object:
        scale = self.shell.view.freq_scale
        return forward(scale, [max(v, 1e-3) if scale == "log" else v for v in f])

    def jump_to(self, uuid: str) -> None:
        """Make ``uuid`` current and centre the view on it (zooming out if it is larger)."""
        a = self._by_uuid.get(uuid)
        if a is None:
            return
        self._clicked(uuid)
        view = self.shell.view
        t0, t1, _, _ = view.visible_range()
        span = max(t1 - t0, a.duration_s / 0.8)
        c = (a.start_s + a.stop_s) / 2
        view.set_time_range(c - span / 2, c + span / 2)
        if a.has_band:
            (_, _), (vy0, vy1) = view.plot.getViewBox().viewRange()
            y0, y1 = (float(v) for v in self._y([a.freq_low_hz, a.freq_high_hz]))
            if y0 < vy0 or y1 > vy1:
                ys = max(vy1 - vy0, (y1 - y0) / 0.8)
                yc = (y0 + y1) / 2
                lo, hi = (float(v) for v in inverse(view.freq_scale, [yc - ys / 2, yc + ys / 2]))
                view.set_frequency_range(lo, hi)

    def step(self, direction: int) -> None:
        """Jump to the next (1) or previous (-1) annotation of the list's order."""
        order = self.list.ordered()
        if not order:
            return
        if self.current in order:
            i = order.index(self.current) + direction
            if not 0 <= i < len(order):
                self.shell.show_message("Last annotation" if direction > 0
                                        else "First annotation", 3000)
                return
        else:  # from the middle of the view
            t0, t1, _, _ = self.shell.view.visible_range()
            mid = (t0 + t1) / 2
            starts = [self._by_uuid[u].start_s for u in order]
            after = [k for k, s in enumerate(starts) if s >= mid]
            before = [k for k, s in enumerate(starts) if s < mid]
            i = (after[0] if after else len(order) - 1) if direction > 0 else \
                (before[-1] if before else 0)
        self.jump_to(order[i])

    def next_annotation(self) -> None:
        """Jump to the next annotation (N)."""
        self.step(1)

    def previous_annotation(self) -> None:
        """Jump to the previous annotation (P)."""
        self.step(-1)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        assert isinstance(event, QKeyEvent)
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        direction = _NAV_KEYS.get(event.key())
        if direction == 1 and obj is self.shell.view and self.view_n_taken():
            return False
        if direction is None or mods != Qt.KeyboardModifier.NoModifier \
                or self.list.row_count() == 0 \
                or self.list.table.state() == self.list.table.State.EditingState:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the key comes to us as a key press, never as a shortcut
            return True
        self.step(direction)
        return True

    # -- files -------------------------------------------------------------------------
    def import_dialog(self) -> None:
        """File › Import annotations…: read a file (any format) and add its annotations."""
        rec = self._recording()
        if rec is None:
            return
        path, _ = QFileDialog.getOpenFileName(self.shell.dialog_parent(), "Import annotations",
                                              str(rec.path.parent), IMPORT_FILTER)
        if path:
            self.import_from(path)

    def import_from(self, path: str | Path) -> int | None:
        """Read annotations on the compute thread and add them as one undo step."""
        rec = self._recording()
        if rec is None:
            return None
        path = Path(path)

        def job(control: TaskControl) -> list[Annotation]:
            return read_annotations(path, recording=rec)

        return self.shell.worker.submit("annotations", job, label=f"Reading {path.name}",
                                        callbacks=JobCallbacks(
                                            done=lambda r: self._imported(path, r.value),
                                            failed=self._job_failed))

    def _imported(self, path: Path, found: list[Annotation]) -> None:
        # formats without ids (Audacity) get new uuids on every read: a mark already
        # here (same span, band, label and channel) is the same mark
        # (a file without channels, as Audacity's, matches the mark on any channel)
        here: dict[tuple, set] = {}
        for a in self._by_uuid.values():
            here.setdefault(_same_mark(a), set()).add(a.channel)

        def known(a: Annotation) -> bool:
            chans = here.get(_same_mark(a))
            return chans is not None and (a.channel is None or None in chans
                                          or a.channel in chans)
        new = [a for a in found if a.uuid not in self._by_uuid and not known(a)]
        if not new:
            self.shell.show_message(f"{path.name}: no new annotations", 8000)
            return
        if len(new) == 1:
            self._push(f"import annotation {_quoted(new[0])}", [], new, "import")
        else:
            self._push(f"import {len(new)} annotations", [], new, "import")
        self.annotationsLoaded.emit(new)
        self.shell.show_message(f"Imported {_n(len(new))} from {path.name}", 8000)

    def export_dialog(self) -> bool:
        """File › Export annotations…: the type chosen, the name's extension following it
        (:class:`~specscope.widgets.export_dialog.FormatFileDialog`).

        True when a file was chosen (the write runs on the compute thread).
        """
        rec = self._recording()
        if rec is None:
            return False
        default = str(rec.path.with_name(rec.path.stem + ".selections.txt"))
        # the type chosen in the dialog and the name's extension agree, whatever the order
        chosen = FormatFileDialog.ask(self.shell.dialog_parent(), "Export annotations",
                                      default, [(text, fmt, FORMATS[fmt].suffixes)
                                                for text, fmt in EXPORT_FILTERS])
        if chosen is None:
            return False
        path, fmt = chosen
        return self.export_to(path, fmt) is not None

    def export_to(self, path: str | Path, fmt: str | None = None) -> int | None:
        """Write the annotations to ``path`` (compute thread); returns the job id."""
        rec = self._recording()
        if rec is None:
            return None
        path, items = Path(path), list(self.annotations)

        def job(control: TaskControl) -> Path:
            return write_annotations(path, items, format=fmt, recording=rec)

        def done(r: JobResult) -> None:
            self.shell.show_message(f"Wrote {_n(len(items))} to {r.value}", 10000)
            self.annotationsSaved.emit(items)

        return self.shell.worker.submit("annotations", job, label=f"Writing {path.name}",
                                        callbacks=JobCallbacks(done=done,
                                                               failed=self._job_failed))

    def _job_failed(self, error: JobError) -> None:
        self.shell.show_error(error.message)

    def recover(self, items: Sequence[Annotation]) -> None:
        """Put back annotations an earlier run did not save (one undoable step, unsaved)."""
        self._push(f"recover {len(items)} annotations", list(self.annotations), list(items),
                   "recover")
        self.shell.show_message(f"Recovered {len(items)} unsaved annotations", 8000)

    def save_to_recording(self) -> int | None:
        """File › Save annotations: into the SigMF recording's ``.sigmf-meta``."""
        rec = self._recording()
        if rec is None:
            return None
        if not self.is_sigmf():
            self.shell.show_error(f"{rec.path.name} is not SigMF: its file has no place for "
                                  "annotations; use File › Export annotations…", dialog=False)
            return None
        return self.export_to(meta_path(rec.path), "sigmf")
