"""The explorer and the filter designer inline in a Jupyter notebook, with or without a display.

:func:`explore` returns an :class:`Explorer`: the desktop app's spectrogram view, rendered
offscreen and streamed to the notebook as the frames of a ``jupyter_rfb`` remote frame
buffer, the browser's events coming back as Qt events; :func:`design_filter` does the same
for the filter designer.  Every callback runs on the Qt thread (:mod:`.pump`).

See docs/explanation/rooms/app.md.
"""

from __future__ import annotations

import html
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import ipywidgets
    import jupyter_rfb  # noqa: F401 - the notebook extra
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("the notebook explorer needs the notebook extra: "
                      "pip install 'specscope[notebook]'") from exc

from PyQt6 import sip
from PyQt6.QtCore import QPointF, Qt
from PyQt6.QtWidgets import QWidget
from specscope.app.notebook.canvas import FrameCanvas
from specscope.app.notebook.designer import DesignerWidget, design_filter
from specscope.app.notebook.pump import PUMP, process_qt_events, qt_app, qt_thread
from specscope.app.qt.view_controller import BACKGROUND_KINDS, ViewController
from specscope.app.qt.worker import ComputeWorker
from specscope.app.session import Document, ViewSettings
from specscope.compute.annotations import Annotation
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.io import ArrayRecording, Recording, open_recording
from specscope.compute.pipeline import Pipeline
from specscope.compute.view.scales import check_freq_scale
from specscope.widgets.annotation_layer import AnnotationLayer
from specscope.widgets.frequency_axis import SCALES, forward
from specscope.widgets.spectrogram_view import COLORMAPS, SpectrogramView

__all__ = ["DesignerWidget", "Explorer", "FrameCanvas", "NotebookShell", "design_filter",
           "explore", "qt_app"]

#: size of a new explorer's plot area in CSS pixels (the browser resizes it)
EXPLORER_SIZE = (900, 460)
#: the status line of a new explorer until the first click into its view: the browser
#: sends wheel events only to a canvas that has the focus
WHEEL_HINT = "Click the view, then the wheel zooms (before that it scrolls the page); drag pans"


class NotebookShell:
    """The explorer's Qt side: what the app's view controller needs of a window.

    It holds the document, its :class:`~.session.ViewSettings`, the compute worker
    and the spectrogram view (the :class:`~specscope.app.qt.shell.Shell` protocol), and lets the
    :class:`~specscope.app.qt.view_controller.ViewController` drive the view as in the desktop app.

    Parameters
    ----------
    recording : Recording
        The recording to show.
    settings : ViewSettings, optional
        Analysis settings (processing, STFT, frequency axis).
    """

    def __init__(self, recording: Recording, settings: ViewSettings | None = None) -> None:
        qt_app()
        PUMP.attach()
        self.settings = settings or ViewSettings()
        self.document: Document | None = None
        #: the last message the view controller gave, and the last error
        self.message = ""
        self.last_error: str | None = None
        #: called with each message (the explorer's status line)
        self.on_message: Callable[[str], None] | None = None
        self.worker = ComputeWorker()
        for signal in (self.worker.finished, self.worker.partial, self.worker.failed,
                       self.worker.cancelled):
            # runs in the compute thread: only schedules event processing on the kernel
            signal.connect(PUMP.wake, Qt.ConnectionType.DirectConnection)
        self.view = SpectrogramView()
        self.views = ViewController(self)
        self._viewport: tuple[float, float, int] | None = None
        self.view.viewportChanged.connect(self._viewport_changed)
        self.view.overview.regionChanged.connect(self.view.set_time_range)
        PUMP.shells.add(self)
        self.open(recording)

    # -- the Shell protocol --------------------------------------------------------
    def change_settings(self, new: ViewSettings, *, undoable: bool = True) -> None:
        """Make ``new`` the settings (a notebook has no undo stack)."""
        if new != self.settings:
            self.apply_settings(new)

    def apply_settings(self, settings: ViewSettings) -> None:
        """Make ``settings`` current and recompute what they change."""
        old = self.settings
        if settings.freq_scale != old.freq_scale and self.views.engine is not None:
            check_freq_scale(settings.freq_scale, two_sided=self.views.engine.two_sided,
                             stacked=settings.channel < 0)
        self.settings = settings
        if self.document is None:
            return
        self.document.settings = settings
        if settings.stft.scaling != old.stft.scaling:
            self.views.levels_set = False  # other units: fit the range again
        if settings.freq_scale != old.freq_scale:
            t0, t1, _, _ = self.view.visible_range()
            self.view.set_frequency_scale(settings.freq_scale)
            self.views.rescale(t0, t1)  # recomputes too
        else:
            self.views.request_spectrogram()
        PUMP.wake()

    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        """Keep the message for the status line."""
        self.message = text
        if self.on_message is not None:
            self.on_message(text)

    def show_error(self, message: str, *, dialog: bool = True) -> None:
        """Keep the error for the status line (a notebook has no dialogs)."""
        self.last_error = message
        self.show_message(f"Error: {message}", error=True)

    def dialog_parent(self) -> QWidget:
        """The view (no dialog opens from a notebook)."""
        return self.view

    # -- recording and view ----------------------------------------------------------
    def open(self, recording: Recording) -> None:
        """Show ``recording`` from its beginning, with the current settings."""
        if self.document is not None and self.document.recording is not recording:
            self.document.recording.close()
        channel = self.settings.channel if self.settings.channel < recording.n_channels else 0
        self.settings = self.settings.with_changes(channel=channel)
        self.document = Document(recording, self.settings)
        self._viewport = None
        if not self.views.document_opened():
            if self.views.error is not None:
                raise self.views.error  # the core's own error, with its type and fields
            raise InputError(f"{recording.path.name}: cannot be shown")
        PUMP.wake()

    def _viewport_changed(self, t0: float, t1: float, f0: float, f1: float, width: int,
                          height: int) -> None:
        self._set_viewport(t0, t1, width)

    def _set_viewport(self, t0: float, t1: float, width: int) -> None:
        key = (t0, t1, width)
        if key != self._viewport:
            self._viewport = key
            self.views.set_viewport(t0, t1, width)

    def sync_viewport(self) -> None:
        """Render what the view shows now, without waiting for its debounce."""
        if self.views.engine is None:
            return
        t0, t1, _, _ = self.view.visible_range()
        self._set_viewport(t0, t1, self.view.plot_size_px()[0])

    def busy(self) -> bool:
        """Whether a render is queued, running or waiting to be shown (tiles built ahead
        in idle time do not count: nothing on screen waits for them)."""
        return self.worker.is_busy(ignore=BACKGROUND_KINDS) or self.views.recompute_pending()

    def settle(self, timeout_s: float = 60.0) -> None:
        """Process events until the view shows everything asked of it.

        Raises
        ------
        TimeoutError
            When the compute thread is still busy after ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            process_qt_events()
            self.sync_viewport()
            if not self.busy():
                process_qt_events()  # results queued by the last job
                if not self.busy():
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the view was still computing after {timeout_s:g} s")
            time.sleep(0.002)

    def close(self) -> None:
        """Stop the compute thread and close the recording."""
        PUMP.shells.discard(self)
        self.worker.shutdown()
        if self.document is not None:
            self.document.recording.close()
        # deleted now, not closed: the view's pending timers must not fire on a torn-down
        # scene, and no event loop would run a deferred deletion
        sip.delete(self.view)


def _as_recording(source: Any, fs: float | None, options: dict) -> Recording:
    if isinstance(source, Recording):
        return source
    if isinstance(source, (str, os.PathLike)):
        return open_recording(source, **options)
    if fs is None:
        raise InputError("explore(array): give the sample rate, e.g. explore(x, fs=48000)")
    return ArrayRecording(np.asarray(source), float(fs), name="array")


def _as_pipeline(pipeline: Any) -> Pipeline:
    if isinstance(pipeline, Pipeline):
        return pipeline
    if isinstance(pipeline, dict):
        return Pipeline.from_dict(pipeline)
    if isinstance(pipeline, (str, os.PathLike)):
        return Pipeline.load(pipeline)
    raise InputError(f"pipeline={pipeline!r}: give a Pipeline, its dict or a pipeline file")


class Explorer(ipywidgets.VBox):
    """The spectrogram explorer as a notebook widget (see :func:`explore`).

    A toolbar (frequency axis, colour map, fit levels, whole recording, box
    selection), the view, and a line with the cursor readout and the last message.

    Parameters
    ----------
    recording : Recording
        The open recording to show.
    pipeline : Pipeline, dict or path, optional
        Processing before the spectrogram (and its STFT parameters).
    size : tuple of int, optional
        The frame's width and height (pixels).

    Raises
    ------
    SpecscopeError
        When ``pipeline`` cannot be read or cannot run on this recording.
    """

    def __init__(self, recording: Recording, *, pipeline: Any = None,
                 size: tuple[int, int] = EXPLORER_SIZE) -> None:
        super().__init__()
        self.shell = NotebookShell(recording)
        self.view = self.shell.view
        self.canvas = FrameCanvas(self.view, *size)
        self._selection: Annotation | None = None
        self._annotations: list[Annotation] = []
        #: the annotations and the selection over the view: the desktop app's layer, whose
        #: gestures arrive as the canvas's Qt events (Select on, or Ctrl: a drag selects;
        #: a drag on an annotation's edge moves it)
        self.layer = AnnotationLayer(self.view)
        self.layer.selectionDrawn.connect(self._selection_drawn)
        self.layer.selectionCleared.connect(self._selection_cleared)
        self.layer.edgeMoved.connect(self._edge_moved)
        narrow = ipywidgets.Layout(width="190px")
        #: the toolbar: frequency axis, colour map, box selection (on: a drag selects)
        self.freq_picker = ipywidgets.Dropdown(options=list(SCALES), description="Frequency",
                                               value=self.shell.settings.freq_scale,
                                               layout=narrow)
        self.colormap_picker = ipywidgets.Dropdown(options=list(COLORMAPS), description="Colours",
                                                   value=self.view.colormap_name, layout=narrow)
        fit = ipywidgets.Button(description="Fit levels", layout=ipywidgets.Layout(width="90px"))
        home = ipywidgets.Button(description="Whole", tooltip="Show the whole recording",
                                 layout=ipywidgets.Layout(width="70px"))
        self.select_button = ipywidgets.ToggleButton(description="Select",
                                               tooltip="Drag a box to select (else drag pans)",
                                               layout=ipywidgets.Layout(width="70px"))
        self.freq_picker.observe(self._freq_picked, names="value")
        self.colormap_picker.observe(self._cmap_picked, names="value")
        fit.on_click(lambda _: self._fit_levels())
        home.on_click(lambda _: self._whole())
        self.select_button.observe(self._select_toggled, names="value")
        self.readout = ipywidgets.HTML("")
        self.status = ipywidgets.HTML("")
        self.view.cursorMoved.connect(self._cursor)
        self.shell.on_message = self._message
        tools = [self.freq_picker, self.colormap_picker, fit, home, self.select_button]
        self.children = [ipywidgets.HBox(tools),
                         self.canvas, ipywidgets.HBox([self.readout, self.status])]
        self._clip_frequencies()
        # the waveform row appears at deep zoom: the canvas grows by its height, so the
        # spectrogram keeps its own
        self.view.waveform.visibleChanged.connect(self._waveform_toggled)
        self._last_message = ""
        self.canvas.on_first_click = lambda: self._message(self._last_message)
        self._message("")
        if pipeline is not None:
            self.pipeline = pipeline

    # -- public API ------------------------------------------------------------------
    @property
    def recording(self) -> Recording:
        """The recording shown."""
        return self.shell.document.recording

    @property
    def pipeline(self) -> Pipeline:
        """The processing and spectrogram shown, as a Pipeline; setting one re-renders.

        Raises
        ------
        SpecscopeError
            When a Pipeline set cannot run on this recording.
        """
        return Pipeline.from_dict(self.shell.settings.pipeline_dict())

    @pipeline.setter
    @qt_thread
    def pipeline(self, value: Any) -> None:
        pipe = _as_pipeline(value)
        rec = self.recording
        signal = pipe.signal_part()
        signal.bind(rec.sample_rate, rec.is_complex)  # refused here, not in the view
        settings = self.shell.settings
        self.shell.change_settings(settings.with_changes(
            stft=pipe.stft_params or settings.stft,
            processing=json.dumps(signal.to_dict()["steps"])))
        self.canvas.request_draw()

    @qt_thread
    def set_view(self, t0: float | None = None, t1: float | None = None,
                 f0: float | None = None, f1: float | None = None) -> None:
        """Show ``t0 .. t1`` s and ``f0 .. f1`` Hz; None keeps that edge where it is."""
        v0, v1, g0, g1 = self.view.visible_range()
        t0, t1 = v0 if t0 is None else float(t0), v1 if t1 is None else float(t1)
        f0, f1 = g0 if f0 is None else float(f0), g1 if f1 is None else float(f1)
        if not (t1 > t0 and f1 > f0):
            raise InputError(f"set_view: the span {t0}..{t1} s, {f0}..{f1} Hz is empty")
        self.view.set_time_range(t0, t1)
        self.view.set_frequency_range(f0, f1)
        self.shell.sync_viewport()
        self._changed()

    @property
    def visible_range(self) -> tuple[float, float, float, float]:
        """The visible time span (s) and frequency span (Hz)."""
        return self.view.visible_range()

    def to_pixel(self, t: float, f: float) -> tuple[float, float]:
        """Where time ``t`` (s) and frequency ``f`` (Hz) lie in :meth:`snapshot`, as (x, y)
        pixels (at pixel ratio 1), e.g. to measure a band of the image."""
        self.shell.settle()
        vb = self.view.plot.getViewBox()
        scene = vb.mapViewToScene(QPointF(float(t), float(forward(self.view.freq_scale, f))))
        p = self.view.viewport().mapTo(self.view, self.view.mapFromScene(scene))
        return float(p.x()), float(p.y())

    @property
    def freq_scale(self) -> str:
        """The frequency axis: "linear", "log" or "mel"."""
        return self.shell.settings.freq_scale

    @freq_scale.setter
    @qt_thread
    def freq_scale(self, scale: str) -> None:
        check_freq_scale(scale)
        self.shell.change_settings(self.shell.settings.with_changes(freq_scale=scale))
        self._clip_frequencies()
        self.freq_picker.value = scale
        self._draw_boxes()
        self._changed()

    @property
    def levels(self) -> tuple[float, float]:
        """The dB range of the colour scale; setting it re-levels without recomputing."""
        return self.view.levels()

    @levels.setter
    @qt_thread
    def levels(self, value: tuple[float, float]) -> None:
        self.view.set_levels(float(value[0]), float(value[1]))
        self.shell.views.levels_set = True
        self._changed()

    @property
    def colormap(self) -> str:
        """The colour map's name (one of the app's)."""
        return self.view.colormap_name

    @colormap.setter
    @qt_thread
    def colormap(self, name: str) -> None:
        self.view.set_colormap(name)
        self.colormap_picker.value = name
        self._changed()

    @property
    def selection(self) -> Annotation | None:
        """The selected box (drawn with Select on, or set here), or None."""
        return self._selection

    @selection.setter
    @qt_thread
    def selection(self, value: Annotation | None) -> None:
        if value is not None and not isinstance(value, Annotation):
            raise InputError("selection: give an Annotation or None")
        self._selection = value
        self._draw_boxes()
        self._changed()

    def edit(self, operation: str = "attenuate", region: Any = None, **params: Any) -> None:
        """Add a region edit to the processing shown (see :mod:`specscope.compute.edit`).

        Parameters
        ----------
        operation : {"attenuate", "gain", "remove", "isolate", "filter"}
        region : Region, dict or None
            Where; None takes the selection (its box, the whole band when it has none).
        **params
            The edit's other fields (``db``, ``feather_ms``, ``feather_hz``, ``nfft``...).

        Raises
        ------
        SpecscopeError
            No region and no selection, or an edit that cannot run on this recording.
        """
        from specscope.compute.edit import Box, RegionEdit, region_from_dict

        if region is None:
            sel = self._selection
            if sel is None:
                raise InputError("edit: give a region or select a box first")
            fs = self.recording.sample_rate
            low = sel.freq_low_hz if sel.freq_low_hz is not None else 0.0
            high = sel.freq_high_hz if sel.freq_high_hz is not None else fs / 2
            cf = (self.recording.center_frequency or 0.0) if self.recording.is_complex else 0.0
            region = Box(sel.start_s, sel.stop_s, low - cf, high - cf)
        elif isinstance(region, dict):
            region = region_from_dict(region)
        edit = RegionEdit(region, operation, **params)
        edit.check(self.recording.sample_rate, two_sided=self.recording.is_complex,
                   n_samples=self.recording.n_samples)
        steps = self.pipeline.signal_part().to_dict()["steps"]
        self.pipeline = Pipeline.from_steps(steps + [{"op": "edit",
                                                      "params": edit.to_dict()}])

    @property
    def annotations(self) -> list[Annotation]:
        """Annotations drawn over the view (a copy; set a list to change them)."""
        return list(self._annotations)

    @annotations.setter
    @qt_thread
    def annotations(self, value: list[Annotation]) -> None:
        items = list(value)
        if not all(isinstance(a, Annotation) for a in items):
            raise InputError("annotations: give a list of Annotation")
        self._annotations = items
        self._draw_boxes()
        self._changed()

    def wait(self, timeout_s: float = 60.0) -> None:
        """Block until the view shows everything asked of it (see :meth:`snapshot`)."""
        self.shell.settle(timeout_s)

    def snapshot(self, *, wait: bool = True) -> np.ndarray:
        """The image the widget shows: RGBA uint8 shaped (height, width, 4).

        Parameters
        ----------
        wait : bool
            First wait until the computed images of the current view are shown.
        """
        if wait:
            self.shell.settle()
        return self.canvas.frame()

    @qt_thread
    def resize(self, width: int, height: int) -> None:
        """Make the widget ``width`` × ``height`` CSS pixels."""
        self.canvas.css_width, self.canvas.css_height = f"{int(width)}px", f"{int(height)}px"
        self.canvas.set_size(width, height)
        self._changed()

    @qt_thread
    def close(self) -> None:
        """Stop the compute thread, close the recording and the widget (once: the widget's
        finaliser closes it again)."""
        if not getattr(self, "_closed", False):
            self._closed = True
            self.canvas.close()
            self.shell.close()
        super().close()

    # -- toolbar and readout ---------------------------------------------------------
    def _changed(self) -> None:
        self.canvas.request_draw()
        PUMP.wake()

    @qt_thread
    def _freq_picked(self, change: dict) -> None:
        try:
            self.freq_scale = change["new"]
        except SpecscopeError as exc:
            self._message(f"Error: {exc}")
            self.freq_picker.value = change["old"]

    @qt_thread
    def _cmap_picked(self, change: dict) -> None:
        self.colormap = change["new"]

    @qt_thread
    def _fit_levels(self) -> None:
        self.shell.views.auto_levels()
        self._changed()

    @qt_thread
    def _whole(self) -> None:
        self.view.reset_view()
        self._clip_frequencies()
        self._changed()

    def _waveform_toggled(self) -> None:
        extra = int(self.view.waveform.maximumHeight()
                    + self.view.ci.layout.verticalSpacing())
        width, height = self.canvas.size
        height += extra if self.view.waveform.isVisible() else -extra
        self.resize(width, max(height, extra + 100))

    def _clip_frequencies(self) -> None:
        """The frequency axis within the data: 0 .. fs/2 (two-sided: -fs/2 .. fs/2), not
        out to the outer edges of the first and last frequency bins."""
        engine = self.shell.views.engine
        if engine is None or self.shell.settings.channel < 0:  # stacked channels
            return
        nyquist = self.recording.sample_rate / 2
        _, _, f0, f1 = self.view.visible_range()
        lo, hi = max(f0, -nyquist if engine.two_sided else 0.0), min(f1, nyquist)
        if (lo, hi) != (f0, f1) and hi > lo:
            self.view.set_frequency_range(lo, hi)

    def _cursor(self, t: float, f: float, level: float) -> None:
        # as the desktop reads it: Hz / kHz / MHz to the digits a pixel tells
        text = html.escape(self.view.readout_text(t, f, level)).replace("  ", " &nbsp;")
        self.readout.value = f"<code>{text}</code>"

    def _message(self, text: str) -> None:
        # the wheel hint stays beside every message until the first click into the view:
        # a render's summary arriving before the page is drawn must not take away the one
        # thing a new user needs to know, and once clicked it has been done
        self._last_message = text
        if not self.canvas.clicked:
            text = f"{text} · {WHEEL_HINT}" if text else WHEEL_HINT
        self.status.value = f"&nbsp; <small>{text}</small>"

    # -- selection and annotations -----------------------------------------------------
    @qt_thread
    def _select_toggled(self, change: dict) -> None:
        self.layer.select_mode = bool(change["new"])

    def _selection_drawn(self, t0: float, t1: float, f0: float | None,
                         f1: float | None) -> None:
        """A box dragged on the layer: the selection, its times inside the recording."""
        duration = self.recording.duration
        t0, t1 = (min(max(t, 0.0), duration) for t in (t0, t1))
        self._selection = Annotation(t0, t1, f0, f1, label="selection")
        self._draw_boxes()
        self._changed()

    def _selection_cleared(self) -> None:
        self._selection = None
        self._draw_boxes()
        self._changed()

    def _edge_moved(self, uuid: str, edge: str, value: float) -> None:
        """An annotation's edge dragged on the layer: that annotation, the edge moved (kept
        inside the recording and on its side of the box)."""
        rec = self.recording
        for k, a in enumerate(self._annotations):
            if a.uuid != uuid:
                continue
            if edge == "start":
                new = a.replace(start_s=min(max(value, 0.0), a.stop_s))
            elif edge == "stop":
                new = a.replace(stop_s=max(min(value, rec.duration), a.start_s))
            elif not a.has_band:
                return
            elif edge == "low":
                new = a.replace(freq_low_hz=min(value, a.freq_high_hz))
            else:
                new = a.replace(freq_high_hz=max(value, a.freq_low_hz))
            self._annotations[k] = new
            self._draw_boxes()
            self._changed()
            return

    def _draw_boxes(self) -> None:
        """The annotations and the selection, drawn by the app's annotation layer."""
        self.layer.set_annotations(self._annotations)
        sel = self._selection
        self.layer.set_selection(None if sel is None else (
            sel.start_s, sel.stop_s, sel.freq_low_hz, sel.freq_high_hz))


def explore(source: Any, *, fs: float | None = None, pipeline: Any = None,
            **recording_options: Any) -> Explorer:
    """An interactive spectrogram of a recording, inline in the notebook.

    The same view as the desktop app (tile engine, wheel zoom and drag pan,
    readout, colour scale, linear/log/mel frequency axis), rendered offscreen in
    the kernel and streamed to the notebook; it works on a remote kernel with no
    display.  Rendering runs in a compute thread: the kernel stays free.

    Parameters
    ----------
    source : path, Recording or array_like
        A file (opened with ``recording_options``), an open Recording, or samples
        shaped (samples,) or (samples, channels), real or complex.
    fs : float, optional
        Sample rate of an array (required then).
    pipeline : Pipeline, dict or path, optional
        Processing before the spectrogram (and its STFT parameters).
    **recording_options
        Reader options (``sample_rate``, ``dtype``, ``dataset``, ...).

    Returns
    -------
    Explorer
        The widget: display it (last expression of a cell).  ``set_view``,
        ``pipeline``, ``selection``, ``annotations``, ``snapshot()`` and
        ``recording`` connect it to code.

    Examples
    --------
    >>> w = explore("assets/examples/scene.wav")              # doctest: +SKIP
    >>> w.set_view(1.0, 2.0, 0, 4000); img = w.snapshot()    # doctest: +SKIP
    """
    options = dict(recording_options)
    size = options.pop("display_size", EXPLORER_SIZE)
    return Explorer(_as_recording(source, fs, options), pipeline=pipeline, size=size)
