"""The explorer and the filter designer inline in a Jupyter notebook, with or without a display.

:func:`explore` returns an :class:`Explorer`: the desktop app's spectrogram view
(:class:`~specscope.widgets.spectrogram_view.SpectrogramView`, driven by the
app's :class:`~.view_controller.ViewController` and compute thread) rendered
offscreen and streamed to the notebook as frames of a ``jupyter_rfb`` remote
frame buffer.  Pointer, wheel and key events from the browser come back as Qt
events, so wheel zoom, drag pan, the readout, the colour bar and the overview
behave as on the desktop.  :func:`design_filter` does the same for the filter
designer (:class:`~specscope.widgets.filter_designer.FilterDesigner`).

Why a frame buffer of the real widgets rather than ``pyqtgraph.jupyter``: the
latter builds its own ``GraphicsLayout``, so the spectrogram view (and the
designer, which is a QWidget with tabs and forms, not one graphics view) would
have to be built a second time.  Rendering the existing widgets keeps one view
and one designer.

No Qt event loop runs in a kernel.  Qt's posted events (layouts, queued results
of the compute thread) and due timers (the view's debounce) are processed on the
kernel's asyncio loop for a short while after each interaction and whenever the
compute thread finishes a job; :meth:`Explorer.snapshot` processes them until the
view is complete, so it also works in a script without any loop.

On Linux without ``DISPLAY`` or ``WAYLAND_DISPLAY`` this module sets
``QT_QPA_PLATFORM=offscreen`` before Qt starts, so a kernel on a remote server or
a JupyterHub needs no display.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import ipywidgets
    import jupyter_rfb
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("the notebook explorer needs the notebook extra: "
                      "pip install 'specscope[notebook]'") from exc

import pyqtgraph as pg
from PyQt6 import sip
from PyQt6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PyQt6.QtGui import QImage, QKeyEvent, QMouseEvent, QPainter, QWheelEvent
from PyQt6.QtWidgets import QApplication, QGraphicsRectItem, QWidget
from specscope.compute.annotations import Annotation
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.filters import FilterSpec
from specscope.compute.io import ArrayRecording, Recording, open_recording
from specscope.compute.pipeline import Pipeline
from specscope.widgets.filter_designer import METHODS, FilterDesigner
from specscope.widgets.frequency_axis import SCALES, forward, inverse
from specscope.widgets.spectrogram_view import COLORMAPS, SpectrogramView

from .session import Document, ViewSettings
from .view_controller import ViewController
from .worker import ComputeWorker

__all__ = ["DesignerWidget", "Explorer", "FrameCanvas", "NotebookShell", "design_filter",
           "explore", "qt_app"]

#: size of a new explorer's plot area in CSS pixels (the browser resizes it)
EXPLORER_SIZE = (900, 460)
#: size of a new designer widget in CSS pixels
DESIGNER_SIZE = (900, 380)
#: how long Qt's events keep being processed after an interaction (s): the view's
#: debounce timers fire in that time
ACTIVE_S = 0.4
#: interval of that processing (s)
TICK_S = 0.025

_MOUSE_BUTTONS = {0: Qt.MouseButton.NoButton, 1: Qt.MouseButton.LeftButton,
                  2: Qt.MouseButton.RightButton, 3: Qt.MouseButton.MiddleButton}
_MODIFIERS = {"Shift": Qt.KeyboardModifier.ShiftModifier,
              "Control": Qt.KeyboardModifier.ControlModifier,
              "Alt": Qt.KeyboardModifier.AltModifier, "Meta": Qt.KeyboardModifier.MetaModifier}
_MOUSE_EVENTS = {"pointer_down": QEvent.Type.MouseButtonPress,
                 "pointer_up": QEvent.Type.MouseButtonRelease,
                 "pointer_move": QEvent.Type.MouseMove,
                 "double_click": QEvent.Type.MouseButtonDblClick}
#: browser key names (KeyboardEvent.key) that have no single character
_KEYS = {"ArrowLeft": Qt.Key.Key_Left, "ArrowRight": Qt.Key.Key_Right,
         "ArrowUp": Qt.Key.Key_Up, "ArrowDown": Qt.Key.Key_Down, "Enter": Qt.Key.Key_Return,
         "Backspace": Qt.Key.Key_Backspace, "Delete": Qt.Key.Key_Delete,
         "Tab": Qt.Key.Key_Tab, "Escape": Qt.Key.Key_Escape, "Home": Qt.Key.Key_Home,
         "End": Qt.Key.Key_End, "+": Qt.Key.Key_Plus, "-": Qt.Key.Key_Minus,
         "=": Qt.Key.Key_Equal}


def _headless() -> None:
    """Qt's offscreen platform where there is no display (before the QApplication exists)."""
    if "QT_QPA_PLATFORM" in os.environ:
        return
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def qt_app() -> QApplication:
    """The QApplication of the kernel (created offscreen when there is no display).

    Raises
    ------
    TypeError
        When a Qt application without widgets (QCoreApplication) already runs.
    """
    app = QApplication.instance()
    if app is None:
        _headless()
        app = QApplication(["specscope"])
    if not isinstance(app, QApplication):
        raise TypeError("a QCoreApplication without widgets is running; the notebook "
                           "widgets need a QApplication")
    return app


def process_qt_events() -> None:
    """Deliver Qt's posted events and run its due timers, once (on the kernel's thread)."""
    QApplication.sendPostedEvents()
    QApplication.processEvents()


def _modifiers(names: Any) -> Qt.KeyboardModifier:
    mods = Qt.KeyboardModifier.NoModifier
    for name in names or ():
        mods |= _MODIFIERS.get(name, Qt.KeyboardModifier.NoModifier)
    return mods


def _buttons(numbers: Any) -> Qt.MouseButton:
    buttons = Qt.MouseButton.NoButton
    for n in numbers or ():
        buttons |= _MOUSE_BUTTONS.get(n, Qt.MouseButton.NoButton)
    return buttons


class _Pump:
    """Processes Qt's events on the kernel's asyncio loop while something is going on.

    ``wake`` may be called from any thread (the compute thread calls it when a job
    ends); the loop then processes Qt's events every ``TICK_S`` for ``ACTIVE_S`` and
    asks the canvases for a new frame.  Without a running loop (a script) it does
    nothing: :meth:`NotebookShell.settle` processes the events instead.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.canvases: weakref.WeakSet[FrameCanvas] = weakref.WeakSet()
        self.shells: weakref.WeakSet[NotebookShell] = weakref.WeakSet()
        self._until = 0.0
        self._scheduled = False

    def attach(self) -> None:
        """Use the running loop of the calling (kernel) thread, if there is one."""
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            pass

    def wake(self, *_: object) -> None:
        """Process Qt's events for a while from now (thread-safe)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._extend)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _extend(self) -> None:
        self._until = max(self._until, time.monotonic() + ACTIVE_S)
        if not self._scheduled:
            self._scheduled = True
            self.loop.call_soon(self._tick)

    def _tick(self) -> None:
        self._scheduled = False
        process_qt_events()
        for shell in list(self.shells):
            shell.sync_viewport()
        for canvas in list(self.canvases):
            canvas.request_draw()
        busy = any(shell.busy() for shell in list(self.shells))
        if busy or time.monotonic() < self._until:
            self._scheduled = True
            self.loop.call_later(TICK_S, self._tick)


_PUMP = _Pump()


class FrameCanvas(jupyter_rfb.RemoteFrameBuffer):
    """A QWidget rendered offscreen and streamed to the notebook as frames.

    Browser events (pointer, wheel, keys, resize) become Qt events of the child
    widget under the pointer; a pressed button keeps sending to the widget it was
    pressed on, as a mouse grab does.  ``intercept``, when set, sees each event
    first and consumes it by returning True.

    Parameters
    ----------
    widget : QWidget
        The widget to show; it is shown without a window and sized to the canvas.
    width, height : int
        Initial size in CSS pixels.
    """

    def __init__(self, widget: QWidget, width: int, height: int, **kwargs: Any) -> None:
        super().__init__(css_width=f"{int(width)}px", css_height=f"{int(height)}px", **kwargs)
        self.widget = widget
        self.size = (int(width), int(height))
        self.pixel_ratio = 1.0
        #: milliseconds the last frame took to render
        self.render_ms = 0.0
        self.intercept: Callable[[dict], bool] | None = None
        self._grab: QWidget | None = None
        widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        widget.resize(*self.size)
        widget.show()
        _PUMP.canvases.add(self)

    # -- frames ------------------------------------------------------------------
    def frame(self) -> np.ndarray:
        """The widget as it looks now: RGBA uint8, (height, width, 4) in device pixels."""
        process_qt_events()  # layouts wait as posted events
        t = time.perf_counter()
        w, h = self.size
        r = self.pixel_ratio
        buf = np.zeros((max(1, round(h * r)), max(1, round(w * r)), 4), np.uint8)
        # a QImage over the array's memory (not a copy): the painter draws into ``buf``
        image = pg.functions.ndarray_to_qimage(buf, QImage.Format.Format_RGBA8888)
        image.setDevicePixelRatio(r)
        painter = QPainter(image)
        self.widget.render(painter)
        painter.end()
        self.render_ms = (time.perf_counter() - t) * 1000.0
        return buf

    def close(self) -> None:
        """Close the canvas's views; it draws no more frames."""
        _PUMP.canvases.discard(self)
        super().close()

    def get_frame(self) -> np.ndarray:
        """The frame jupyter_rfb sends (see :meth:`frame`)."""
        return self.frame()

    # -- events ------------------------------------------------------------------
    def handle_event(self, event: dict) -> None:
        """Turn a jupyter_rfb event into Qt events of the widget (see the class docs)."""
        kind = event.get("event_type") or event.get("type")
        if self.intercept is not None and self.intercept(event):
            self._changed()
            return
        if kind == "resize":
            self.pixel_ratio = float(event.get("pixel_ratio") or event.get("ratio") or 1.0)
            self.set_size(int(event["width"]), int(event["height"]))
        elif kind in _MOUSE_EVENTS:
            self._mouse(kind, event)
        elif kind == "wheel":
            self._wheel(event)
        elif kind in ("key_down", "key_up"):
            self._key(kind, event)
        else:
            return
        self._changed()

    def set_size(self, width: int, height: int) -> None:
        """Resize the widget to ``width`` × ``height`` CSS pixels."""
        self.size = (max(1, int(width)), max(1, int(height)))
        self.widget.resize(*self.size)

    def _changed(self) -> None:
        self.request_draw()
        _PUMP.wake()

    def _target(self, pos: QPointF) -> tuple[QWidget, QPointF]:
        if self._grab is not None:
            target = self._grab
        else:
            target = self.widget.childAt(pos.toPoint()) or self.widget
        return target, target.mapFrom(self.widget, pos)

    def _mouse(self, kind: str, event: dict) -> None:
        pos = QPointF(float(event["x"]), float(event["y"]))
        target, local = self._target(pos)
        button = _MOUSE_BUTTONS.get(int(event.get("button", 0)), Qt.MouseButton.NoButton)
        buttons = _buttons(event.get("buttons"))
        if kind == "pointer_move":
            button = Qt.MouseButton.NoButton  # Qt: a move names no button of its own
        qevent = QMouseEvent(_MOUSE_EVENTS[kind], local, pos, button, buttons,
                             _modifiers(event.get("modifiers")))
        if kind == "pointer_down":
            self._grab = target
        QApplication.sendEvent(target, qevent)
        if kind == "pointer_up" and buttons == Qt.MouseButton.NoButton:
            self._grab = None

    def _wheel(self, event: dict) -> None:
        pos = QPointF(float(event["x"]), float(event["y"]))
        target, local = self._target(pos)
        # the browser gives pixels (about 100 a notch), Qt eighths of a degree (120 a
        # notch), with the opposite sign
        angle = QPoint(int(-float(event.get("dx", 0.0)) * 1.2),
                       int(-float(event.get("dy", 0.0)) * 1.2))
        qevent = QWheelEvent(local, pos, QPoint(), angle, _buttons(event.get("buttons")),
                             _modifiers(event.get("modifiers")), Qt.ScrollPhase.NoScrollPhase,
                             False)
        QApplication.sendEvent(target, qevent)

    def _key(self, kind: str, event: dict) -> None:
        name = str(event.get("key", ""))
        key = _KEYS.get(name)
        text = name if len(name) == 1 else ""
        if key is None:
            if len(name) != 1:
                return
            key = Qt.Key(ord(name.upper()))
        typ = QEvent.Type.KeyPress if kind == "key_down" else QEvent.Type.KeyRelease
        target = QApplication.focusWidget() or self.widget
        QApplication.sendEvent(target, QKeyEvent(typ, key, _modifiers(event.get("modifiers")),
                                                 text))


class NotebookShell:
    """The explorer's Qt side: what the app's view controller needs of a window.

    It holds the document, its :class:`~.session.ViewSettings`, the compute worker
    and the spectrogram view (the :class:`~.shell.Shell` protocol), and lets the
    :class:`~.view_controller.ViewController` drive the view as in the desktop app.

    Parameters
    ----------
    recording : Recording
        The recording to show.
    settings : ViewSettings, optional
        Analysis settings (processing, STFT, frequency axis).
    """

    def __init__(self, recording: Recording, settings: ViewSettings | None = None) -> None:
        qt_app()
        _PUMP.attach()
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
            signal.connect(_PUMP.wake, Qt.ConnectionType.DirectConnection)
        self.view = SpectrogramView()
        self.views = ViewController(self)
        self._viewport: tuple[float, float, int] | None = None
        self.view.viewportChanged.connect(self._viewport_changed)
        self.view.overview.regionChanged.connect(self.view.set_time_range)
        _PUMP.shells.add(self)
        self.open(recording)

    # -- the Shell protocol --------------------------------------------------------
    def change_settings(self, new: ViewSettings, *, undoable: bool = True) -> None:
        """Make ``new`` the settings (a notebook has no undo stack)."""
        if new != self.settings:
            self.apply_settings(new)

    def apply_settings(self, settings: ViewSettings) -> None:
        """Make ``settings`` current and recompute what they change."""
        old = self.settings
        if settings.freq_scale != old.freq_scale and self.views.engine is not None \
                and (self.views.engine.two_sided or settings.channel < 0) \
                and settings.freq_scale != "linear":
            raise InputError("log and mel frequency axes need a real recording and one "
                             "channel")
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
        _PUMP.wake()

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
            raise InputError(self.last_error or f"{recording.path.name}: cannot be shown")
        _PUMP.wake()

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
        """Whether a render is queued, running or waiting to be shown."""
        return self.worker.is_busy() or self.views.recompute_pending()

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
        _PUMP.shells.discard(self)
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
    """

    def __init__(self, recording: Recording, *, pipeline: Any = None,
                 size: tuple[int, int] = EXPLORER_SIZE) -> None:
        super().__init__()
        self.shell = NotebookShell(recording)
        self.view = self.shell.view
        self.canvas = FrameCanvas(self.view, *size)
        self._selection: Annotation | None = None
        self._annotations: list[Annotation] = []
        self._boxes: list[Any] = []
        self._drag_from: tuple[float, float] | None = None
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
    def freq_scale(self, scale: str) -> None:
        if scale not in SCALES:
            raise InputError(f"freq_scale={scale!r}: choose one of {', '.join(SCALES)}")
        self.shell.change_settings(self.shell.settings.with_changes(freq_scale=scale))
        self.freq_picker.value = scale
        self._draw_boxes()
        self._changed()

    @property
    def levels(self) -> tuple[float, float]:
        """The dB range of the colour scale; setting it re-levels without recomputing."""
        return self.view.levels()

    @levels.setter
    def levels(self, value: tuple[float, float]) -> None:
        self.view.set_levels(float(value[0]), float(value[1]))
        self.shell.views.levels_set = True
        self._changed()

    @property
    def colormap(self) -> str:
        """The colour map's name (one of the app's)."""
        return self.view.colormap_name

    @colormap.setter
    def colormap(self, name: str) -> None:
        self.view.set_colormap(name)
        self.colormap_picker.value = name
        self._changed()

    @property
    def selection(self) -> Annotation | None:
        """The selected box (drawn with Select on, or set here), or None."""
        return self._selection

    @selection.setter
    def selection(self, value: Annotation | None) -> None:
        if value is not None and not isinstance(value, Annotation):
            raise InputError("selection: give an Annotation or None")
        self._selection = value
        self._draw_boxes()
        self._changed()

    @property
    def annotations(self) -> list[Annotation]:
        """Annotations drawn over the view (a copy; set a list to change them)."""
        return list(self._annotations)

    @annotations.setter
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

    def resize(self, width: int, height: int) -> None:
        """Make the widget ``width`` × ``height`` CSS pixels."""
        self.canvas.css_width, self.canvas.css_height = f"{int(width)}px", f"{int(height)}px"
        self.canvas.set_size(width, height)
        self._changed()

    def close(self) -> None:
        """Stop the compute thread, close the recording and the widget."""
        self.canvas.close()
        self.shell.close()
        super().close()

    # -- toolbar and readout ---------------------------------------------------------
    def _changed(self) -> None:
        self.canvas.request_draw()
        _PUMP.wake()

    def _freq_picked(self, change: dict) -> None:
        try:
            self.freq_scale = change["new"]
        except SpecscopeError as exc:
            self._message(f"Error: {exc}")
            self.freq_picker.value = change["old"]

    def _cmap_picked(self, change: dict) -> None:
        self.colormap = change["new"]

    def _fit_levels(self) -> None:
        self.shell.views.auto_levels()
        self._changed()

    def _whole(self) -> None:
        self.view.reset_view()
        self._changed()

    def _cursor(self, t: float, f: float, level: float) -> None:
        lvl = "" if math.isnan(level) else f" &nbsp; {level:.1f} dB"
        self.readout.value = f"<code>t = {t:.4f} s &nbsp; f = {f:.1f} Hz{lvl}</code>"

    def _message(self, text: str) -> None:
        self.status.value = f"&nbsp; <small>{text}</small>"

    # -- selection and annotations -----------------------------------------------------
    def _select_toggled(self, change: dict) -> None:
        self.canvas.intercept = self._select_event if change["new"] else None

    def _to_data(self, event: dict) -> tuple[float, float]:
        """Time (s) and frequency (Hz) under a canvas event's pointer."""
        vp = self.view.viewport()
        p = vp.mapFrom(self.view, QPoint(int(event["x"]), int(event["y"])))
        q = self.view.plot.getViewBox().mapSceneToView(self.view.mapToScene(p))
        return float(q.x()), float(inverse(self.view.freq_scale, q.y()))

    def _select_event(self, event: dict) -> bool:
        kind = event.get("event_type") or event.get("type")
        if kind == "pointer_down" and int(event.get("button", 0)) == 1:
            self._drag_from = self._to_data(event)
            return True
        if kind in ("pointer_move", "pointer_up") and self._drag_from is not None:
            (ta, fa), (tb, fb) = self._drag_from, self._to_data(event)
            duration = self.recording.duration
            t0, t1 = sorted((min(max(ta, 0.0), duration), min(max(tb, 0.0), duration)))
            f0, f1 = sorted((fa, fb))
            self._selection = Annotation(t0, t1, f0, f1, label="selection")
            if kind == "pointer_up":
                self._drag_from = None
            self._draw_boxes()
            return True
        return False

    def _draw_boxes(self) -> None:
        for item in self._boxes:
            self.view.plot.removeItem(item)
        self._boxes = []
        plot, scale = self.view.plot, self.view.freq_scale
        _, _, g0, g1 = self.view.visible_range()
        shown = [(a, (120, 220, 255)) for a in self._annotations]
        if self._selection is not None:
            shown.append((self._selection, (255, 255, 255)))
        for a, color in shown:
            lo = a.freq_low_hz if a.freq_low_hz is not None else g0
            hi = a.freq_high_hz if a.freq_high_hz is not None else g1
            y0, y1 = (float(v) for v in forward(scale, [max(lo, 1e-3) if scale == "log" else lo,
                                                       hi]))
            rect = QGraphicsRectItem(QRectF(a.start_s, y0, a.stop_s - a.start_s, y1 - y0))
            rect.setPen(pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine
                                 if a is self._selection else Qt.PenStyle.SolidLine))
            plot.addItem(rect, ignoreBounds=True)
            self._boxes.append(rect)
            if a.label and a is not self._selection:
                text = pg.TextItem(a.label, color=color, anchor=(0, 1))
                text.setPos(a.start_s, y1)
                plot.addItem(text, ignoreBounds=True)
                self._boxes.append(text)


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


class DesignerWidget(ipywidgets.VBox):
    """The filter designer as a notebook widget (see :func:`design_filter`)."""

    def __init__(self, fs: float, spec: FilterSpec | dict | None = None, *,
                 size: tuple[int, int] = DESIGNER_SIZE, target: Explorer | None = None) -> None:
        super().__init__()
        qt_app()
        _PUMP.attach()
        self.designer = FilterDesigner(fs)
        if spec is not None and not self.designer.set_spec(spec, emit=False):
            raise InputError(self.designer.error.text())
        self.canvas = FrameCanvas(self.designer, *size)
        #: an explorer whose pipeline follows each finished change of the design
        self.target = target
        #: the design method (a combo box's popup cannot open in a frame)
        self.method_picker = ipywidgets.Dropdown(
            options=[(label, key) for key, label in METHODS.items()],
            value=self.designer.spec.design, description="Method")
        self.method_picker.observe(self._method_picked, names="value")
        self.summary = ipywidgets.HTML("")
        self.designer.specChanged.connect(self._spec_changed)
        self.designer.specCommitted.connect(self._spec_committed)
        self.children = [self.method_picker, self.canvas, self.summary]
        self._spec_changed(self.designer.params())
        if target is not None:
            target.pipeline = self.pipeline

    @property
    def spec(self) -> FilterSpec:
        """The current design's specification; set a FilterSpec or filter params."""
        return self.designer.spec

    @spec.setter
    def spec(self, value: FilterSpec | dict) -> None:
        if not self.designer.set_spec(value):
            raise InputError(self.designer.error.text())
        self.canvas.request_draw()

    @property
    def pipeline_step(self) -> dict:
        """The design as a pipeline step: ``{"op": "filter", "params": {...}}``."""
        return {"op": "filter", "params": self.designer.params()}

    @property
    def pipeline(self) -> Pipeline:
        """The design as a one-step Pipeline."""
        return Pipeline.from_steps([self.pipeline_step], name="designed filter")

    def snapshot(self) -> np.ndarray:
        """The image the widget shows: RGBA uint8 shaped (height, width, 4)."""
        return self.canvas.frame()

    def close(self) -> None:
        """Close the designer and the widget."""
        self.canvas.close()
        sip.delete(self.designer)
        super().close()

    def _method_picked(self, change: dict) -> None:
        combo = self.designer.method
        combo.setCurrentIndex(combo.findData(change["new"]))  # the designer converts
        if self.designer.spec.design != change["new"]:  # refused: the error is shown
            self.method_picker.value = self.designer.spec.design
        self.canvas.request_draw()

    def _spec_changed(self, params: dict) -> None:
        text = ", ".join(f"{k}={v}" for k, v in params.items() if v is not None)
        error = self.designer.error.text()
        self.summary.value = f"<code>{text}</code>" + (
            f"<br><span style='color:#c00'>{error}</span>" if error else "")
        if self.method_picker.value != self.designer.spec.design:
            self.method_picker.value = self.designer.spec.design

    def _spec_committed(self, params: dict) -> None:
        self._spec_changed(params)  # a finished change is a change too: summary and method
        if self.target is not None:
            self.target.pipeline = self.pipeline


def design_filter(fs: float = 48000.0, spec: FilterSpec | dict | None = None, *,
                  target: Explorer | None = None) -> DesignerWidget:
    """The filter designer inline in the notebook: drag band edges, read the design back.

    Parameters
    ----------
    fs : float
        Sample rate the filter is designed for.
    spec : FilterSpec or dict, optional
        The design to start from (a FilterSpec or pipeline filter-step params).
    target : Explorer, optional
        An explorer whose pipeline becomes this filter after each finished change.

    Returns
    -------
    DesignerWidget
        The widget; ``spec`` / ``pipeline_step`` / ``pipeline`` give the design.

    Raises
    ------
    InputError
        When ``spec`` cannot be designed at ``fs``.
    """
    return DesignerWidget(fs, spec, target=target)
