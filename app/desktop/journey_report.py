"""Where the spectrogram's axes are on the screen, written to a file for desktop journeys.

With ``SPECSCOPE_JOURNEY_GEOMETRY=PATH`` set, the window replaces the JSON file ``PATH``
each time the view settles, each time an image is drawn and each time a dock is shown,
hidden, moved or its tab chosen, so that a test driving the app from outside can turn a
time or a frequency into a pixel and check that every dock's buttons are on the screen
(``docks``, ``tabs``, ``screen``, ``window_rect``); nothing in it sets state.

See docs/explanation/rooms/app.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ENV = "SPECSCOPE_JOURNEY_GEOMETRY"
#: polls (50 ms each) after the docks moved when the report is written again: their
#: contents are laid out by then
LATE_WRITE_POLLS = 6
#: the docks' part of the report is made again at most this often (s), unless they moved
DOCKS_EVERY_S = 0.5


def _shown_title(window) -> str:
    """The title as the window manager shows it: Qt's ``[*]`` as ``*`` while modified."""
    mark = "*" if window.isWindowModified() else ""
    return window.windowTitle().replace("[*][*]", "\0").replace("[*]", mark).replace("\0", "[*]")


def _screen_rect(view, item) -> list[int]:
    """An item's bounding rectangle in screen pixels (x, y, width, height)."""
    rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    top_left = view.mapToGlobal(rect.topLeft())
    return [top_left.x(), top_left.y(), rect.width(), rect.height()]


class JourneyReport:
    """Writes the view's geometry to ``path`` whenever it may have changed."""

    def __init__(self, window, path: str | Path) -> None:
        self.window = window
        self.path = Path(path)
        self.seq = 0
        self.images = 0
        view = window.view
        view.viewportChanged.connect(self.write)
        window.imageShown.connect(self._image_shown)
        window.windowTitleChanged.connect(self.write)
        self.status_seen: list[str] = []
        self._last_texts: tuple[str, ...] = ()
        self._last_docks: tuple = ()
        self._late_write = 0
        self._docks_at = -DOCKS_EVERY_S
        self._docks_cache: dict[str, list[dict]] = {}
        from PyQt6.QtWidgets import QDockWidget

        self._docks = window.findChildren(QDockWidget)
        from PyQt6.QtCore import QTimer

        # every message as it is shown, too: one that lasts less than a poll (a short
        # file's "Opening NAME…" before its first image) is seen all the same
        shown = window.show_message

        def show_message(text: str, *args, **kwargs) -> None:
            shown(text, *args, **kwargs)
            self._watch_status()
        window.show_message = show_message
        self._poll = QTimer(window)
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._watch_status)
        self._poll.start()

    def _texts(self) -> tuple[str, str, str, str, int]:
        """What the status bar and the review banner say, and the status line's width
        (laid out after its text changed): a change of any is written."""
        w = self.window
        banner = _review_banner(w)
        return (w.message_label.text(), w.cursor_label.text(), w.file_label.text(),
                banner["text"] if banner else "", w.message_label.width())

    def _watch_status(self) -> None:
        texts = self._texts()
        docks = self._dock_fingerprint()
        if docks != self._last_docks:
            # the docks moved: written now, and again once their contents are laid out
            self._last_docks = docks
            self._late_write = LATE_WRITE_POLLS
        elif self._late_write:
            self._late_write -= 1
            if not self._late_write:
                self._docks_at = -DOCKS_EVERY_S  # laid out now: look again
                self.write()
        if texts != self._last_texts or self._late_write == LATE_WRITE_POLLS:
            if texts != self._last_texts:
                self._last_texts = texts
                if texts[0] and (not self.status_seen or self.status_seen[-1] != texts[0]):
                    self.status_seen = [*self.status_seen[-19:], texts[0]]
            self.write()

    def _dock_fingerprint(self) -> tuple:
        """What changes when a dock is shown, hidden, moved, resized or its tab chosen
        (cheap: looked at every poll)."""
        from PyQt6.QtCore import Qt
        from PyQt6.QtWidgets import QTabBar

        bars = self.window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
        return (tuple((d.isVisible(), d.geometry().getRect()) for d in self._docks),
                tuple((b.isVisible(), b.currentIndex(), b.count()) for b in bars),
                self.window.geometry().getRect())

    def _dock_rects(self) -> dict[str, list[dict]]:
        """The docks' and tabs' report: made again after the docks moved, else at most
        every :data:`DOCKS_EVERY_S` (it takes milliseconds; the readout changes with every
        move of the mouse)."""
        import time

        now = time.monotonic()
        if self._late_write or now - self._docks_at >= DOCKS_EVERY_S:
            self._docks_at = now
            self._docks_cache = {"docks": dock_report(self.window),
                                 "tabs": tab_report(self.window)}
        return self._docks_cache

    def _image_shown(self) -> None:
        self.images += 1
        self.write()

    def _widget_rects(self) -> dict[str, list[int] | None]:
        """Where a person finds the controls the journeys use (screen pixels)."""
        w = self.window
        bar = getattr(getattr(w, "playback", None), "transport", None)
        found = {"speed": getattr(bar, "speed", None), "loop": getattr(bar, "loop_box", None),
                 "play": getattr(bar, "play_button", None),
                 "annotation_search": getattr(getattr(w, "annotations", None), "list", None)}
        if found["annotation_search"] is not None:
            found["annotation_search"] = found["annotation_search"].search
        panel = getattr(getattr(w, "detection", None), "panel", None)
        if panel is not None:
            form = panel.form
            found.update({"detect_run": panel.run_button,
                          "detect_band_low": form and form.field("band_low_hz"),
                          "detect_band_high": form and form.field("band_high_hz")})
        return {name: _rect_of(widget) for name, widget in found.items()}

    def write(self, *_: object) -> None:
        view = self.window.view
        vb = view.plot.getViewBox()
        (t0, t1), (y0, y1) = vb.viewRange()
        _, _, f0, f1 = view.visible_range()
        ov = view.overview
        ovb = ov.getViewBox()
        self.seq += 1
        data = {
            "seq": self.seq,
            "images": self.images,
            "title": _shown_title(self.window),
            "plot": _screen_rect(view, vb),
            "t": [float(t0), float(t1)],
            "y": [float(y0), float(y1)],
            "f": [float(f0), float(f1)],
            "scale": view.freq_scale,
            "overview": _screen_rect(view, ovb),
            "overview_t": [float(v) for v in ovb.viewRange()[0]],
        }
        w = self.window
        label = w.cursor_label
        top_left = label.mapToGlobal(label.rect().topLeft())
        status = w.message_label
        data.update({
            "status": status.text(), "readout": label.text(),
            "status_rect": _global_rect(status, status.contentsRect()),
            "status_text_px": status.fontMetrics().horizontalAdvance(status.text()),
            "review_banner": _review_banner(w),
            "file_info": w.file_label.text(),
            "readout_rect": [top_left.x(), top_left.y(), label.width(), label.height()],
            "readout_text_px": label.fontMetrics().horizontalAdvance(label.text()),
            "status_seen": list(self.status_seen),
            "widgets": self._widget_rects(),
            "screen": _screen_of(w),
            "window_rect": _frame_of(w),
            **self._dock_rects(),
        })
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a report that cannot be written changes nothing in the app


def _review_banner(window) -> dict | None:
    """The banner over the plot in review mode: its text, where it is (screen pixels) and
    its widest line (pixels); None while it is hidden."""
    banner = getattr(getattr(getattr(window, "detection", None), "layer", None), "banner",
                     None)
    if banner is None or not banner.isVisible():
        return None
    fm = banner.fontMetrics()
    return {"text": banner.text(), "rect": _rect_of(banner),
            "text_px": max(fm.horizontalAdvance(s) for s in banner.text().split("\n")),
            "room_px": banner.contentsRect().width()}


def _rect_of(widget) -> list[int] | None:
    if widget is None or not widget.isVisible():
        return None
    top_left = widget.mapToGlobal(widget.rect().topLeft())
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]


def _global_rect(widget, rect=None) -> list[int]:
    rect = widget.rect() if rect is None else rect
    top_left = widget.mapToGlobal(rect.topLeft())
    return [top_left.x(), top_left.y(), rect.width(), rect.height()]


def _screen_of(window) -> list[int] | None:
    screen = window.screen()
    if screen is None:
        return None
    g = screen.geometry()
    return [g.x(), g.y(), g.width(), g.height()]


def _frame_of(window) -> list[int]:
    g = window.frameGeometry()
    return [g.x(), g.y(), g.width(), g.height()]


def _scroll_of(widget, stop):
    """The nearest scroll area holding ``widget`` inside ``stop`` (None: none)."""
    from PyQt6.QtWidgets import QAbstractScrollArea

    w = widget.parentWidget()
    while w is not None and w is not stop:
        if isinstance(w, QAbstractScrollArea) and w.viewport().isAncestorOf(widget):
            return w
        w = w.parentWidget()
    return None


def _reachable(widget, scroll) -> bool:
    """Whether scrolling ``scroll`` brings the whole of ``widget`` into its viewport."""
    port = scroll.viewport()
    top_left = widget.mapTo(port, widget.rect().topLeft())
    for pos, size, room, bar in (
            (top_left.x(), widget.width(), port.width(), scroll.horizontalScrollBar()),
            (top_left.y(), widget.height(), port.height(), scroll.verticalScrollBar())):
        if size > room:
            return False
        if pos >= 0 and pos + size <= room:
            continue  # whole in view along this axis now
        if not bar.isVisible():
            return False
        # the bar must move by ``need`` (negative: back) to show the whole of it
        need = pos if pos < 0 else pos + size - room
        if not bar.minimum() <= bar.value() + need <= bar.maximum():
            return False
    return True


def dock_report(window) -> list[dict]:
    """Each dock of ``window`` with its push buttons and scroll areas, in screen pixels.

    A dock: ``name``, ``title``, ``visible``, ``shown`` (visible and not behind another
    dock's tab), ``floating``, ``rect`` ``[x, y, w, h]``; ``buttons``, each with ``text``,
    ``rect``, ``visible``, and when it sits in a scroll area ``scroll`` (that viewport's
    rect) and ``reachable`` (whether scrolling shows the whole of it); ``scrolls``, each
    scroll area's ``rect`` (its viewport) and ``content`` ``[w, h]`` (what scrolls in it).
    """
    from PyQt6.QtWidgets import QDockWidget, QPushButton, QScrollArea

    docks = []
    for dock in window.findChildren(QDockWidget):
        buttons = []
        for b in dock.findChildren(QPushButton):
            scroll = _scroll_of(b, dock)
            row = {"text": b.text(), "name": b.objectName(), "rect": _global_rect(b),
                   "visible": b.isVisible()}
            if scroll is not None:
                row["scroll"] = _global_rect(scroll.viewport())
                row["reachable"] = _reachable(b, scroll)
            buttons.append(row)
        scrolls = [{"rect": _global_rect(a.viewport()),
                    "content": [a.widget().width(), a.widget().height()]}
                   for a in dock.findChildren(QScrollArea)
                   if a.isVisible() and a.widget() is not None]
        docks.append({"name": dock.objectName(), "title": dock.windowTitle(),
                      "visible": dock.isVisible(),
                      "shown": dock.isVisible() and not dock.visibleRegion().isEmpty(),
                      "floating": dock.isFloating(), "rect": _global_rect(dock),
                      "buttons": buttons, "scrolls": scrolls})
    return docks


def tab_report(window) -> list[dict]:
    """The tabs of the docks that share a place: ``text``, ``rect`` (screen pixels),
    ``current``."""
    from PyQt6.QtWidgets import QTabBar

    tabs = []
    for bar in window.findChildren(QTabBar):
        if bar.parentWidget() is not window or not bar.isVisible():
            continue
        for i in range(bar.count()):
            tabs.append({"text": bar.tabText(i), "rect": _global_rect(bar, bar.tabRect(i)),
                         "current": i == bar.currentIndex()})
    return tabs


def install(window) -> JourneyReport | None:
    """Start reporting when :data:`ENV` names a file; None otherwise."""
    path = os.environ.get(ENV)
    if not path:
        return None
    report = JourneyReport(window, path)
    report.write()
    return report
