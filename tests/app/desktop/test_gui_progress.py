"""Progress and Cancel in the status bar tell the truth; messages leave the readout alone.

A 150 s, 48 kHz recording analysed with a hop of 64 samples takes a few
seconds to summarise (about 2.7 s on an idle core), long enough to watch its
progress and to cancel it.  What a loaded machine stretches is not timed: Cancel is
"at once" when the job reports no progress from the compute thread after the one
block it was computing, and the bar is "steady" when no stretch without news is a
large part of the whole computation.
"""

import threading
import time

import numpy as np
import pytest
from _gui import TIMEOUT_MS
from PyQt6.QtCore import QPoint, Qt, QTimer
from specscope.app.desktop.main_window import MainWindow
from specscope.compute.io import ArrayRecording

#: progress reports a job may make once Cancel was pressed: the block it is computing
#: ends (and says so), the next check stops it
REPORTS_AFTER_CANCEL = 1


@pytest.fixture
def window(make_window):
    return make_window(nfft=1024, hop=64)


class ReportsAfter:
    """Progress reports of job kind ``kind`` made on the compute thread (counted as they
    are emitted, not as they reach the GUI) after :meth:`mark` was called."""

    def __init__(self, w: MainWindow, kind: str):
        self.kind = kind
        self.marked = threading.Event()
        self.after: list[float] = []
        w.worker.progress.connect(self._report, Qt.ConnectionType.DirectConnection)

    def _report(self, job_id: int, kind: str, fraction: float) -> None:
        if kind == self.kind and self.marked.is_set():
            self.after.append(fraction)

    def mark(self) -> None:
        self.marked.set()


def long_recording(seconds: float = 600.0, fs: float = 48000.0) -> ArrayRecording:
    x = np.random.default_rng(1).standard_normal(int(seconds * fs)).astype(np.float32)
    return ArrayRecording(0.1 * x, fs)


def status_clean(w: MainWindow) -> bool:
    return not w.progress_bar.isVisible() and not w.cancel_button.isVisible()


def watch_bar(w: MainWindow, samples: list) -> QTimer:
    """Sample what the progress bar shows every 10 ms, as a person would see it."""
    timer = QTimer(w)
    timer.timeout.connect(lambda: samples.append(
        (time.perf_counter(), w.progress_bar.isVisible(), w.progress_label.text(),
         w.progress_bar.value(), w.progress_bar.maximum())))
    timer.start(10)
    return timer


def overview_job(w: MainWindow, qtbot) -> int:
    """Open the long recording and wait until its overview is being computed."""
    ids = {}
    w.worker.started.connect(lambda i, kind, label: ids.setdefault(kind, i))
    w.open_recording(long_recording())
    qtbot.waitUntil(lambda: "overview" in ids, timeout=TIMEOUT_MS)
    return ids["overview"]


def test_progress_bar_advances_while_the_overview_computes(qtbot, window):
    samples: list = []
    timer = watch_bar(window, samples)
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "overview") as b:
        window.open_recording(long_recording())
    timer.stop()
    assert b.args[2].seconds > 1.0, "the recording must take a while to summarise"
    shown = [(t, v) for t, vis, fmt, v, top in samples
             if vis and fmt.startswith("Computing overview") and top > 0]
    values = [v for _, v in shown]
    assert values == sorted(values), "the bar never goes back"
    # how many values a 10 ms sampler sees depends on the load (the GUI thread coalesces
    # progress signals); the steadiness check below is the one that matters
    assert len(set(values)) >= 10, f"the bar moved only {len(set(values))} times"
    assert values[-1] >= 900
    # it moves steadily: no stretch without news is a fifth of the whole computation
    # (on an idle core the longest is about a twentieth; a loaded machine stretches both)
    changes = [t for (t, v), (_, prev) in zip(shown[1:], shown[:-1]) if v != prev]
    gaps = np.diff([shown[0][0], *changes])
    whole = b.args[2].seconds
    assert gaps.max() < whole / 5, (f"the bar stood still for {gaps.max():.2f} s of "
                                    f"{whole:.2f} s")
    qtbot.waitUntil(lambda: window.worker.active() == 0, timeout=TIMEOUT_MS)
    assert status_clean(window)


def test_cancel_button_stops_the_overview_at_once(qtbot, window):
    job = overview_job(window, qtbot)
    qtbot.waitUntil(lambda: window.progress_bar.value() > 50, timeout=TIMEOUT_MS)
    assert window.cancel_button.isVisible()
    ended: dict = {}
    window.worker.cancelled.connect(lambda i, kind: ended.setdefault(i, "cancelled"))
    window.worker.finished.connect(lambda i, kind, r: ended.setdefault(i, "finished"))
    hidden: list = []
    window.worker.idle.connect(lambda: hidden.append(True))
    reports = ReportsAfter(window, "overview")
    # after the window's own handler (connected first) asked the job to stop
    window.cancel_button.clicked.connect(reports.mark)
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: job in ended and bool(hidden), timeout=TIMEOUT_MS)
    assert ended[job] == "cancelled"
    assert len(reports.after) <= REPORTS_AFTER_CANCEL, (
        f"the overview went on after Cancel: {len(reports.after)} progress reports "
        f"({reports.after})")
    assert status_clean(window)
    assert window.progress_bar.isHidden()


def settle(qtbot, w: MainWindow, quiet_ms: int = 400) -> None:
    """Wait until no job has been active for ``quiet_ms`` (debounced requests included)."""
    quiet = {"since": None}

    def check() -> bool:
        if w.worker.active() or w.views.recompute_pending():
            quiet["since"] = None
            return False
        quiet["since"] = quiet["since"] or time.perf_counter()
        return time.perf_counter() - quiet["since"] > quiet_ms / 1000

    qtbot.waitUntil(check, timeout=TIMEOUT_MS)


def test_status_bar_is_clean_after_every_job(qtbot, window, example_path):
    # whenever no job is left, the bar and Cancel are gone, sampled every 10 ms
    stale: list = []
    timer = QTimer(window)
    timer.timeout.connect(lambda: stale.append(time.perf_counter())
                          if window.worker.active() == 0 and not status_clean(window) else None)
    timer.start(10)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_path(example_path)
    settle(qtbot, window)
    assert status_clean(window)
    # quick zooms: superseded, cancelled and finished jobs, each one ending
    # (each zoom waits until the view took it, its debounced viewport signal, which asks
    # for its image at once: the next zoom supersedes that job, pending or running)
    for k in range(8):
        with qtbot.waitSignal(window.view.viewportChanged, timeout=TIMEOUT_MS):
            window.view.set_time_range(1.0 + 0.3 * k, 2.0 + 0.5 * k)
    settle(qtbot, window)
    assert status_clean(window)
    # a job that fails ends clean too
    window.worker.submit("probe", lambda control: 1 / 0, label="Failing")
    settle(qtbot, window)
    assert status_clean(window)
    timer.stop()
    assert not stale, f"{len(stale)} times a bar or Cancel showed with no job"


def test_status_bar_is_clean_after_cancel_from_the_view_menu(qtbot, window):
    overview_job(window, qtbot)
    qtbot.waitUntil(lambda: window.progress_bar.isVisible(), timeout=TIMEOUT_MS)
    window.menu_actions["cancel"].trigger()  # View › Cancel computation (Esc)
    qtbot.waitUntil(lambda: window.worker.active() == 0, timeout=TIMEOUT_MS)
    assert status_clean(window)


def test_cursor_readout_survives_status_messages(qtbot, window, example_path):
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_path(example_path)
    viewport = window.view.viewport()
    centre = viewport.rect().center()
    qtbot.mouseMove(viewport, centre)
    qtbot.mouseMove(viewport, centre + QPoint(5, 3))
    qtbot.waitUntil(lambda: "t = " in window.cursor_label.text(), timeout=TIMEOUT_MS)
    readout = window.cursor_label.text()
    window.show_message("Exported something", 5000)
    assert window.cursor_label.text() == readout and window.cursor_label.isVisible()
    # hovering a menu entry shows its status tip, as a message: the readout stays
    menu = next(a.menu() for a in window.menuBar().actions()
                if a.menu() is not None and a.text() == "&View")
    act = window.menu_actions["auto_levels"]
    menu.popup(window.mapToGlobal(QPoint(20, 20)))
    qtbot.waitUntil(menu.isVisible, timeout=TIMEOUT_MS)
    qtbot.mouseMove(menu, menu.actionGeometry(act).center())
    qtbot.waitUntil(lambda: window.message_label.text() == act.statusTip(), timeout=TIMEOUT_MS)
    assert window.cursor_label.isVisible() and window.cursor_label.text() == readout
    assert window.file_label.isVisible()
    menu.close()
    qtbot.waitUntil(lambda: window.message_label.text() == "Exported something",
                    timeout=TIMEOUT_MS)


def test_a_long_message_ends_in_an_ellipsis(qtbot, window, example_path):
    """A message longer than its room is drawn elided at its end (not cut mid-letter),
    the whole text in its tool tip; the readout and file info keep their room."""
    from PyQt6.QtGui import QImage, QPainter, QRegion
    from PyQt6.QtWidgets import QWidget

    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_path(example_path)
    text = "Review: detection 1 of 17 at 1.021 s, score 33.5 dB, " * 6
    window.show_message(text, 0)
    label = window.message_label
    # at 1280 px the message has room beside the file info and the readout of the cursor
    qtbot.waitUntil(lambda: label.isVisible() and label.width() > 200, timeout=TIMEOUT_MS)
    metrics = label.fontMetrics()
    room = label.contentsRect().width()
    assert metrics.horizontalAdvance(text) > room  # it does not fit
    assert label.text() == text and label.toolTip() == text
    shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
    assert shown.endswith("…") and len(shown) < len(text)

    def drawn(paint) -> QImage:
        img = QImage(label.size(), QImage.Format.Format_ARGB32)
        img.fill(0)
        painter = QPainter(img)
        paint(painter)
        painter.end()
        return img

    got = drawn(lambda p: label.render(p, QPoint(), QRegion(), QWidget.RenderFlag.DrawChildren))
    want = drawn(lambda p: (p.setFont(label.font()), p.setPen(label.palette().windowText().color()),
                            p.drawText(label.contentsRect(), int(label.alignment()), shown)))
    cut = drawn(lambda p: (p.setFont(label.font()), p.setPen(label.palette().windowText().color()),
                           p.drawText(label.contentsRect(), int(label.alignment()), text)))
    assert got != cut  # not the whole text cut at the edge
    assert got == want
    assert window.file_label.isVisible() and window.cursor_label.isVisible()


def test_plugin_view_at_the_views_width_with_progress_and_cancel(qtbot, window, monkeypatch):
    """The Morlet scalogram of 60 s (48 kHz) for the view: at most 2 columns per pixel,
    progress as its chunks go, and the real Cancel button stops it in the chunk it is
    computing.
    (At 48 kHz its lowest rows' wavelets are 38400 samples long, so the view takes long
    enough to watch: it computes only the columns shown.)  The worker's throttle is off,
    so every chunk's report arrives however fast the machine computes them."""
    import specscope.app.qt.worker as worker_mod
    monkeypatch.setattr(worker_mod, "PROGRESS_INTERVAL_S", 0.0)
    rec = ArrayRecording(np.random.default_rng(2).standard_normal(48000 * 60)
                         .astype(np.float32), 48000.0)
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_recording(rec)
    qtbot.waitUntil(lambda: any(a.data() == "scalogram.morlet"
                                for a in window.representation_menu.actions()),
                    timeout=TIMEOUT_MS)
    act = next(a for a in window.representation_menu.actions()
               if a.data() == "scalogram.morlet")
    values: list = []
    window.worker.progress.connect(
        lambda i, kind, f: values.append(f) if kind == "detail" else None)
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "detail"):
        act.trigger()  # View › Representation › scalogram.morlet
    width = window.last_request.width
    assert window.last_request.t1 - window.last_request.t0 == pytest.approx(60.0, abs=0.5)
    assert window.last_image.db.shape[1] <= 2 * width
    assert len(values) >= 5 and values == sorted(values), values
    # again, and cancel it with the button
    started = []
    window.worker.started.connect(lambda i, kind, label: started.append(i))
    ended: dict = {}
    window.worker.cancelled.connect(lambda i, kind: ended.setdefault(i, "cancelled"))
    # new parameters of the view (what its form does) start a new computation
    window.change_settings(window.settings.with_changes(view_params='{"n_freqs": 48}'),
                           undoable=False)
    qtbot.waitUntil(lambda: bool(started) and window.progress_bar.value() > 100,
                    timeout=TIMEOUT_MS)
    reports = ReportsAfter(window, "detail")
    window.cancel_button.clicked.connect(reports.mark)
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: started[-1] in ended, timeout=TIMEOUT_MS)
    assert len(reports.after) <= REPORTS_AFTER_CANCEL, (
        f"the scalogram went on after Cancel: {len(reports.after)} progress reports "
        f"({reports.after})")
    qtbot.waitUntil(lambda: status_clean(window), timeout=TIMEOUT_MS)
