"""Start the desktop app: QApplication, main window, optional screenshot."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from specscope.app.session import ViewSettings

SCREENSHOT_TIMEOUT_S = 120


def has_display() -> bool:
    """Whether a window can be shown (not needed for offscreen screenshots)."""
    if os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal"):
        return False
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


_QUIET = ("propagateSizeHints",)


def _qt_messages(kind, context, message: str) -> None:
    """Pass Qt's messages to stderr, minus the offscreen platform's harmless noise."""
    if not any(q in message for q in _QUIET):
        print(message, file=sys.stderr)


def run_app(path: str | None, settings: ViewSettings, screenshot: str | None = None,
            session: str | Path | None = None, options: dict | None = None) -> int:
    """Run the app; with ``screenshot`` save the window once the spectrogram is drawn."""
    from PyQt6.QtCore import QEvent, QTimer, qInstallMessageHandler
    from PyQt6.QtWidgets import QApplication
    from specscope.app.desktop.main_window import MainWindow

    qInstallMessageHandler(_qt_messages)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("specscope")
    win = MainWindow(settings, interactive=screenshot is None)
    screen = app.primaryScreen()
    if screenshot is None and screen is not None:
        # the spectrogram, its panels and docks want room: most of the screen
        area = screen.availableGeometry()
        win.resize(min(area.width(), max(win.width(), int(0.9 * area.width()))),
                   min(area.height(), max(win.height(), int(0.9 * area.height()))))
    win.show()
    from specscope.app.desktop.journey_report import install as report_geometry
    win.journey_report = report_geometry(win)  # only with SPECSCOPE_JOURNEY_GEOMETRY set
    status = {"code": 0}

    if screenshot is not None:
        out = Path(screenshot)

        def save() -> None:
            app.processEvents()
            if not win.grab().save(str(out), "PNG"):
                print(f"specscope: error: could not write {out}", file=sys.stderr)
                status["code"] = 2
            app.quit()

        def on_error(msg: str) -> None:
            print(f"specscope: error: {msg}", file=sys.stderr)
            status["code"] = 2
            QTimer.singleShot(50, save)

        def on_timeout() -> None:
            print(f"specscope: error: the spectrogram was not drawn within "
                  f"{SCREENSHOT_TIMEOUT_S} s", file=sys.stderr)
            status["code"] = 1
            save()

        win.imageShown.connect(lambda: QTimer.singleShot(200, save))
        win.errorShown.connect(on_error)
        QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, on_timeout)
        if path is None:
            on_error("--screenshot needs a recording to open")
    if path is not None:
        win.open_path(path, **(options or {}))
    elif session is not None:
        win.open_session(session)
    try:
        app.exec()
    finally:
        win.worker.shutdown()
        # the window (and every pyqtgraph item in it) goes before the application
        # object does: Python's teardown order at exit is arbitrary and Qt crashes
        # when a widget outlives its QApplication
        win.close()
        win.deleteLater()
        app.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        win = None  # the last reference: the window goes before the application
    return status["code"]


