"""The live window: a scrolling spectrogram of a LiveSession, with pause and scroll-back.

The session processes blocks on its own thread; this window only polls what
the view gained (``LiveSession.view``) on a timer and draws it.  Pausing
freezes the view while capture goes on; the scroll bar moves through the
history the session keeps (spilled to disk beyond its memory budget).  The
Monitor button plays the processed signal on the audio output
(:class:`~specscope.compute.live.LiveMonitor`); :attr:`LiveWindow.monitor_output`
chooses the backend (the sound card when None).
"""

from __future__ import annotations

import sys

import numpy as np
from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import (
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QScrollBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.errors import SpecscopeError
from specscope.compute.live import LiveMonitor, LiveSession
from specscope.compute.spectral import to_db
from specscope.widgets.spectrogram_view import COLORMAPS, SpectrogramView

#: frames shown at once (the waterfall's width)
WIDTH_FRAMES = 900
REFRESH_MS = 33


class LiveWindow(QMainWindow):
    """Waterfall, pause (Space), scroll-back (Left/Right, the scroll bar), live (End)."""

    def __init__(self, session: LiveSession, *, width_frames: int = WIDTH_FRAMES) -> None:
        super().__init__()
        self.session = session
        #: the monitor's audio backend (a Player output); None: the sound card
        self.monitor_output = None
        #: the running LiveMonitor, or None
        self.monitor: LiveMonitor | None = None
        self.width_frames = int(width_frames)
        self.setWindowTitle(f"specscope live — {getattr(session.source, 'name', 'source')}")
        self.resize(1280, 720)
        self.view = SpectrogramView(self)
        self.view.overview.setVisible(False)
        central = QWidget(self)
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.pause_button = QPushButton("Pause (Space)")
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self.set_paused)
        live = QPushButton("Live (End)")
        live.clicked.connect(lambda: self.set_paused(False))
        self.channel = QSpinBox()
        self.channel.setRange(0, max(0, session.n_channels - 1))
        self.channel.setPrefix("channel ")
        self.channel.setEnabled(session.n_channels > 1)
        auto = QPushButton("Auto levels")
        auto.clicked.connect(self.view.auto_levels)
        self.colormap = QComboBox()
        self.colormap.addItems(COLORMAPS)
        self.colormap.currentTextChanged.connect(self.view.set_colormap)
        self.gamma = QDoubleSpinBox()
        self.gamma.setRange(0.2, 5.0)
        self.gamma.setSingleStep(0.1)
        self.gamma.setValue(1.0)
        self.gamma.setPrefix("gamma ")
        self.gamma.valueChanged.connect(self.view.set_gamma)
        self.stats_label = QLabel("")
        self.monitor_button = QPushButton("Monitor")
        self.monitor_button.setCheckable(True)
        self.monitor_button.setToolTip("Hear the processed signal of the channel shown")
        self.monitor_button.toggled.connect(self.set_monitor)
        for w in (self.pause_button, live, self.channel, auto, self.colormap, self.gamma,
                  self.monitor_button):
            bar.addWidget(w)
        bar.addStretch(1)
        bar.addWidget(self.stats_label)
        lay.addLayout(bar)
        lay.addWidget(self.view, 1)
        self.scroll = QScrollBar(Qt.Orientation.Horizontal)
        self.scroll.setToolTip("Scroll back through what was captured (pauses the view)")
        self.scroll.sliderMoved.connect(self._scrolled)
        # clicks on the track and the arrows move the view too, not only drags
        self.scroll.actionTriggered.connect(self._scroll_action)
        lay.addWidget(self.scroll)
        # window-wide keys: whichever child has the focus (a button, the scroll bar,
        # the plot), Left/Right scroll and Space pauses
        self._keys = []
        for key, slot in ((Qt.Key.Key_Space, self._toggle_paused),
                          (Qt.Key.Key_Left, self.scroll_back),
                          (Qt.Key.Key_Right, self.scroll_forward),
                          (Qt.Key.Key_End, lambda: self.set_paused(False))):
            sc = QShortcut(QKeySequence(key), self)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(slot)
            self._keys.append(sc)
        self.setCentralWidget(central)
        self.cursor_label = QLabel("")
        self.statusBar().addWidget(self.cursor_label)
        self.view.cursorMoved.connect(self._on_cursor)
        self._levels_set = False
        self.last_first = -1
        self.last_frames: np.ndarray | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        if session.kind != "spectrogram":
            self.statusBar().showMessage("This pipeline ends without a spectrogram: only the "
                                         "statistics are shown")

    # -- control ---------------------------------------------------------------
    def start(self) -> None:
        self.session.start()
        self.timer.start()

    def set_monitor(self, on: bool) -> None:
        """Hear (or stop hearing) the processed signal; no device: one status line."""
        if not on:
            monitor, self.monitor = self.monitor, None
            if monitor is not None:
                monitor.stop()
            self._show_monitor_button(False)
            return
        if self.monitor is not None:
            return
        try:
            self.monitor = LiveMonitor(self.session, channel=self.channel.value(),
                                       output=self.monitor_output).start()
        except SpecscopeError as exc:
            self.statusBar().showMessage(f"Monitor: {exc}", 20000)
            self._show_monitor_button(False)
            return
        self._show_monitor_button(True)
        self.statusBar().showMessage(f"Monitoring on {self.monitor.device_name} (latency "
                                     f"{self.monitor.latency_s * 1e3:.0f} ms)", 10000)

    def _show_monitor_button(self, on: bool) -> None:
        self.monitor_button.blockSignals(True)
        self.monitor_button.setChecked(on)
        self.monitor_button.blockSignals(False)

    def set_paused(self, paused: bool) -> None:
        if paused:
            self.session.pause()
        else:
            self.session.resume()
        self.pause_button.blockSignals(True)
        self.pause_button.setChecked(paused)
        self.pause_button.setText("Resume (Space)" if paused else "Pause (Space)")
        self.pause_button.blockSignals(False)
        self.refresh()

    def scroll_by(self, frames: int) -> None:
        """Move the frozen view (pauses); negative goes back in time."""
        self.session.scroll(frames)
        self.set_paused(True)

    def scroll_back(self) -> None:
        """Left: a quarter of the view back in time (pauses)."""
        self.scroll_by(-max(1, self.width_frames // 4))

    def scroll_forward(self) -> None:
        """Right: a quarter of the view forward (pauses; End goes live)."""
        self.scroll_by(max(1, self.width_frames // 4))

    def _toggle_paused(self) -> None:
        self.set_paused(not self.session.paused)

    def _scroll_action(self, action: int) -> None:
        if action != QScrollBar.SliderAction.SliderMove.value:
            # the bar's value is the one the action leads to
            self.session.scroll_to(self.scroll.sliderPosition())
            self.set_paused(True)

    def _scrolled(self, value: int) -> None:
        self.session.scroll_to(value)
        self.set_paused(True)

    # -- drawing ---------------------------------------------------------------
    def refresh(self) -> None:
        s = self.session
        st = s.stats()
        self.stats_label.setText(
            f"{st.blocks_processed} blocks, {st.blocks_dropped} dropped, latency p99 "
            f"{st.latency_ms_p99:.2f} ms" + ("  ● REC" if s.recorder is not None else "")
            + ("  PAUSED" if s.paused else "")
            + (f"  ♪ {self.monitor.device_name}" if self.monitor is not None else ""))
        if s.error is not None:
            self.statusBar().showMessage(f"Error: {s.error}")
        first_held, end = s.history_range
        if not self.scroll.isSliderDown():
            # while dragged, the thumb stays under the mouse; otherwise it sits at the
            # frame the view ends at, wherever the growing history puts that frame
            self.scroll.blockSignals(True)
            self.scroll.setRange(first_held + min(self.width_frames, end - first_held), end)
            self.scroll.setPageStep(self.width_frames)
            self.scroll.setSingleStep(max(1, self.width_frames // 4))
            self.scroll.setValue(s.view_end)
            self.scroll.blockSignals(False)
        if s.kind != "spectrogram":
            return
        first, frames = s.view(self.width_frames, self.channel.value())
        if frames.size == 0 or (first == self.last_first and self.last_frames is not None
                                and len(frames) == len(self.last_frames)):
            return
        self.last_first, self.last_frames = first, frames
        db = to_db(np.ascontiguousarray(frames.T))
        n = frames.shape[0]
        hop_t = s.stft.hop / s.sample_rate
        centres = s.item_time(np.arange(first, first + n))
        t_edges = np.concatenate([centres - hop_t / 2, [centres[-1] + hop_t / 2]])
        f = s.frequencies
        df = s.sample_rate / s.stft.nfft
        f_edges = np.concatenate([f - df / 2, [f[-1] + df / 2]])
        t0 = float(t_edges[-1]) - self.width_frames * hop_t
        self.view.set_extent(min(t0, float(t_edges[0])), float(t_edges[-1]),
                             float(f_edges[0]), float(f_edges[-1]))
        self.view.set_image(db, t_edges, f_edges)
        self.view.plot.getViewBox().setXRange(min(t0, float(t_edges[0])), float(t_edges[-1]),
                                             padding=0)
        if not self._levels_set and n > 10:
            self.view.auto_levels()
            self._levels_set = True

    def _on_cursor(self, t: float, f: float, level: float) -> None:
        # as the main window reads it: Hz / kHz / MHz to the digits a pixel tells
        self.cursor_label.setText(self.view.readout_text(t, f, level))

    def closeEvent(self, event) -> None:
        self.timer.stop()
        self.set_monitor(False)
        self.session.stop()
        super().closeEvent(event)


def run_live(session: LiveSession, *, monitor: bool = False) -> int:
    """Show the live window for ``session`` (started here) until it is closed.

    With ``monitor`` the processed signal is heard from the start (a missing
    audio device is said in the status bar; the window still runs).
    """
    from specscope.app.desktop.gui import check_system_libraries, has_display

    if not has_display():
        print("specscope: error: the live window needs a display; use --no-gui --stats",
              file=sys.stderr)
        return 2
    if QApplication.instance() is None:
        check_system_libraries()  # before Qt loads its platform plugin (or aborts)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = LiveWindow(session)
    win.show()
    if monitor:
        win.set_monitor(True)
    win.start()
    app.exec()
    return 0


