"""Where the spectrogram's axes are on the screen, written to a file for desktop journeys.

With ``SPECSCOPE_JOURNEY_GEOMETRY=PATH`` set, the window replaces the JSON file ``PATH``
each time the view settles and each time an image is drawn, so that a test driving the app
from outside can turn a time or a frequency into a pixel; nothing in it sets state.

See docs/explanation/rooms/app.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ENV = "SPECSCOPE_JOURNEY_GEOMETRY"


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

    def _texts(self) -> tuple[str, str, str]:
        w = self.window
        return (w.message_label.text(), w.cursor_label.text(), w.file_label.text())

    def _watch_status(self) -> None:
        texts = self._texts()
        if texts != self._last_texts:
            self._last_texts = texts
            if texts[0] and (not self.status_seen or self.status_seen[-1] != texts[0]):
                self.status_seen = [*self.status_seen[-19:], texts[0]]
            self.write()

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
            "title": self.window.windowTitle(),
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
        data.update({
            "status": w.message_label.text(), "readout": label.text(),
            "file_info": w.file_label.text(),
            "readout_rect": [top_left.x(), top_left.y(), label.width(), label.height()],
            "readout_text_px": label.fontMetrics().horizontalAdvance(label.text()),
            "status_seen": list(self.status_seen),
            "widgets": self._widget_rects(),
        })
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a report that cannot be written changes nothing in the app


def _rect_of(widget) -> list[int] | None:
    if widget is None or not widget.isVisible():
        return None
    top_left = widget.mapToGlobal(widget.rect().topLeft())
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]


def install(window) -> JourneyReport | None:
    """Start reporting when :data:`ENV` names a file; None otherwise."""
    path = os.environ.get(ENV)
    if not path:
        return None
    report = JourneyReport(window, path)
    report.write()
    return report
