"""A QWidget streamed to a notebook as the frames of a ``jupyter_rfb`` remote frame buffer.

Browser events (pointer, wheel, keys, resize) become Qt events of the widget.
Each entry from jupyter_rfb (an event, a draw) runs on the Qt thread (see
:mod:`.pump`), whichever thread the kernel delivered the message on.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

import jupyter_rfb
import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PyQt6.QtGui import QImage, QKeyEvent, QMouseEvent, QPainter, QWheelEvent
from PyQt6.QtWidgets import QApplication, QGraphicsView, QLayout, QWidget
from specscope.app.notebook import frontend
from specscope.app.notebook.pump import PUMP, on_qt_thread, process_qt_events, qt_thread, run_on_qt

__all__ = ["FrameCanvas"]

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



def _modifiers(names: Any) -> Qt.KeyboardModifier:
    mods = Qt.KeyboardModifier.NoModifier
    for name in names or ():
        mods |= _MODIFIERS.get(name, Qt.KeyboardModifier.NoModifier)
    return mods


def _digest(frame: np.ndarray) -> tuple:
    """What tells two frames apart: their shape and a hash of their pixels."""
    return frame.shape, hashlib.blake2b(frame, digest_size=16).digest()


def _buttons(numbers: Any) -> Qt.MouseButton:
    buttons = Qt.MouseButton.NoButton
    for n in numbers or ():
        buttons |= _MOUSE_BUTTONS.get(n, Qt.MouseButton.NoButton)
    return buttons




class FrameCanvas(jupyter_rfb.RemoteFrameBuffer):
    """A QWidget rendered offscreen and streamed to the notebook as frames.

    Browser events (pointer, wheel, keys, resize) become Qt events of the child
    widget under the pointer; a pressed button keeps sending to the widget it was
    pressed on, as a mouse grab does.  ``intercept``, when set, sees each event
    first and consumes it by returning True.  ``on_first_click`` is called once, at
    the first button press in the canvas (from then on the browser sends it the
    wheel, see the explorer's hint).

    In the browser an input that no frame follows within
    :data:`~.frontend.WAIT_MS` (a busy kernel) shows a "kernel busy" overlay
    until the next frame (see :mod:`.frontend`).

    Parameters
    ----------
    widget : QWidget
        The widget to show; it is shown without a window and sized to the canvas.
    width, height : int
        Initial size in CSS pixels.
    """

    _esm = frontend.ESM
    _css = frontend.CSS

    def __init__(self, widget: QWidget, width: int, height: int, **kwargs: Any) -> None:
        super().__init__(css_width=f"{int(width)}px", css_height=f"{int(height)}px", **kwargs)
        self.widget = widget
        self.size = (int(width), int(height))
        self.pixel_ratio = 1.0
        #: milliseconds the last frame took to render
        self.render_ms = 0.0
        self.intercept: Callable[[dict], bool] | None = None
        #: whether a button was pressed in the canvas (the browser's wheel reaches it)
        self.clicked = False
        self.on_first_click: Callable[[], None] | None = None
        self._grab: QWidget | None = None
        #: the digest of the last frame handed to jupyter_rfb (None before the first)
        self._sent: tuple | None = None
        #: frames handed to jupyter_rfb to send
        self.frames_sent = 0
        widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        if widget.layout() is not None:
            # the canvas sets the size: a top-level layout's minimum size would be passed
            # to the (offscreen) window as size hints, which Qt's offscreen platform
            # answers with a warning on stderr
            widget.layout().setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        widget.resize(*self.size)
        widget.show()
        PUMP.canvases.add(self)

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
        if isinstance(self.widget, QGraphicsView):
            # a graphics view renders its scene into a target rectangle, by default the
            # device's in device pixels: at a pixel ratio of 2 that is twice the widget,
            # magnified and cropped.  The target in the widget's own (CSS) pixels.
            self.widget.render(painter, QRectF(0.0, 0.0, float(w), float(h)),
                               self.widget.viewport().rect())
        else:
            self.widget.render(painter)
        painter.end()
        self.render_ms = (time.perf_counter() - t) * 1000.0
        return buf

    def close(self) -> None:
        """Close the canvas's views; it draws no more frames."""
        PUMP.canvases.discard(self)
        super().close()

    def request_draw(self) -> None:
        """Schedule a new frame (from any thread: the frame is drawn on the Qt thread)."""
        run_on_qt(super().request_draw)

    def draw_if_changed(self) -> bool:
        """Schedule a new frame only when the widget looks different from the last frame
        sent (Qt thread); whether it does.

        The pump calls this on each of its ticks: a still view (the compute thread
        busy with work that changes nothing on screen) sends no frames, and the
        lossless redraw jupyter_rfb sends after a JPEG frame is not cancelled.  Nothing
        is rendered to find out while a frame is asked for already, or while no view of
        the canvas is visible (the frame is then asked for: it is drawn when one shows).
        """
        if self._rfb_draw_requested:  # a frame comes anyway (when the browser is ready)
            return True
        if not self._has_visible_views:
            super().request_draw()
            return True
        if _digest(self.frame()) == self._sent:
            return False
        super().request_draw()
        return True

    def get_frame(self) -> np.ndarray | None:
        """The frame jupyter_rfb sends (see :meth:`frame`).

        jupyter_rfb asks for it from the thread that delivered the browser's frame
        feedback; off the Qt thread nothing is drawn there: None (jupyter_rfb then
        sends nothing) and the draw is asked for again on the Qt thread, once.  That
        does not wake the pump: a woken pump asks every canvas for a frame on each
        tick, so each frame's feedback would wake it again and the frames would
        never stop (a draw pending whenever the feedback of the last one arrives).
        """
        if not on_qt_thread():
            PUMP.call_soon(super().request_draw)
            return None
        buf = self.frame()
        self._sent = _digest(buf)
        self.frames_sent += 1
        return buf

    # -- events ------------------------------------------------------------------
    @qt_thread
    def handle_event(self, event: dict) -> None:
        """Turn a jupyter_rfb event into Qt events of the widget (see the class docs).

        Runs on the Qt thread: called on another one, the event is queued for it."""
        kind = event.get("event_type") or event.get("type")
        if kind == "pointer_down" and not self.clicked:
            self.clicked = True
            if self.on_first_click is not None:
                self.on_first_click()
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

    @qt_thread
    def set_size(self, width: int, height: int) -> None:
        """Resize the widget to ``width`` × ``height`` CSS pixels."""
        self.size = (max(1, int(width)), max(1, int(height)))
        self.widget.resize(*self.size)

    def _changed(self) -> None:
        self.request_draw()
        PUMP.wake()

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
