"""SpectrogramControls: the panel of STFT parameters and display settings.

Parameter changes (nfft, hop, window, scaling, channel, peak-hold) mean a new
computation and are emitted together as ``paramsChanged``; display changes
(dB range, colour map) are emitted separately because they only re-level.
Typed values (FFT size, hop, window) are taken on Enter, on leaving the field,
or after :data:`IDLE_MS` without a keystroke when they are already complete,
never per keystroke: typing "1024" computes once and shows no error for "1".
"""

from __future__ import annotations

from PyQt6.QtCore import QTimer, pyqtSignal
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.errors import InputError
from specscope.compute.spectral import COMMON_WINDOWS, SCALINGS, StftParams, window_text

from .frequency_axis import SCALES as FREQ_SCALES
from .spectrogram_view import COLORMAPS

NFFT_CHOICES = tuple(2 ** k for k in range(5, 17))
#: a typed value is taken after this long without a keystroke (when complete)
IDLE_MS = 300
#: the smallest FFT size taken during a pause in typing (smaller: on Enter)
MIN_IDLE_NFFT = 16


class SpectrogramControls(QWidget):
    """Form for STFT parameters and display levels.

    Signals
    -------
    paramsChanged(dict)
        ``{"nfft", "hop", "window", "scaling", "channel", "reduce"}`` after any of them changed.
    levelsChanged(float, float)
        New dB range.
    colormapChanged(str)
        New colour map name.
    autoLevelsRequested()
        The "Auto" button was pressed.
    freqScaleChanged(str)
        The frequency axis: "linear", "log" or "mel".
    """

    paramsChanged = pyqtSignal(dict)
    levelsChanged = pyqtSignal(float, float)
    colormapChanged = pyqtSignal(str)
    autoLevelsRequested = pyqtSignal()
    freqScaleChanged = pyqtSignal(str)
    gammaChanged = pyqtSignal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._block = False
        stft = QGroupBox("Analysis")
        form = QFormLayout(stft)
        self.nfft = QComboBox()
        self.nfft.setEditable(True)
        for n in NFFT_CHOICES:
            self.nfft.addItem(str(n))
        self.nfft.setToolTip("Frame length in samples (also the FFT size). "
                             "Longer frames: finer frequency, coarser time.")
        self.nfft.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.nfft.setCompleter(None)  # "1" must stay "1" while "1024" is typed, not "128"
        self.hop = QSpinBox()
        self.hop.setRange(1, 1 << 20)
        self.hop.setKeyboardTracking(False)  # typed: on Enter or leaving the field
        self.hop.setToolTip("Samples between frame starts; nfft/4 is a good default")
        self.window = QComboBox()
        self.window.setEditable(True)
        self.window.addItems(COMMON_WINDOWS)
        self.window.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.window.setToolTip("Window function (any scipy.signal.get_window name, "
                               "parameters after a comma: kaiser,8)")
        self.scaling = QComboBox()
        self.scaling.addItems(SCALINGS)
        self.scaling.setToolTip("psd: power density (unit²/Hz); spectrum: power (unit²); "
                                "magnitude: amplitude (unit)")
        self.channel = QSpinBox()
        self.channel.setRange(0, 0)
        self.peak_hold = QCheckBox("Peak hold")
        self.peak_hold.setToolTip("When zoomed out, each column shows the loudest frame "
                                  "instead of the mean: short events stay visible")
        form.addRow("FFT size", self.nfft)
        form.addRow("Hop", self.hop)
        form.addRow("Window", self.window)
        form.addRow("Scaling", self.scaling)
        form.addRow("Channel", self.channel)
        form.addRow("", self.peak_hold)

        disp = QGroupBox("Display")
        dform = QFormLayout(disp)
        self.db_high = QDoubleSpinBox()
        self.db_low = QDoubleSpinBox()
        for box in (self.db_high, self.db_low):
            box.setRange(-400.0, 400.0)
            box.setSingleStep(5.0)
            box.setDecimals(1)
            box.setSuffix(" dB")
        self.colormap = QComboBox()
        self.colormap.addItems(COLORMAPS)
        self.freq_scale = QComboBox()
        self.freq_scale.addItems(FREQ_SCALES)
        self.freq_scale.setToolTip("Frequency axis: linear, logarithmic (hum and its harmonics "
                                   "spread out) or mel (as hearing spaces pitch)")
        self.auto = QPushButton("Auto levels")
        self.auto.setToolTip("Fit the dB range to the image (Ctrl+L)")
        dform.addRow("Top", self.db_high)
        dform.addRow("Bottom", self.db_low)
        dform.addRow("Colour map", self.colormap)
        self.gamma = QDoubleSpinBox()
        self.gamma.setRange(0.2, 5.0)
        self.gamma.setSingleStep(0.1)
        self.gamma.setValue(1.0)
        self.gamma.setToolTip("Gamma of the colour scale: above 1 darkens the noise floor, "
                              "below 1 brings out weak components")
        self.gamma.valueChanged.connect(self.gammaChanged)
        dform.addRow("Gamma", self.gamma)
        dform.addRow("Frequency axis", self.freq_scale)
        dform.addRow("", self.auto)

        lay = QVBoxLayout(self)
        lay.addWidget(stft)
        lay.addWidget(disp)
        lay.addStretch(1)

        self.set_params({"nfft": 1024, "hop": 256, "window": "hann", "scaling": "psd",
                         "channel": 0, "reduce": "mean"})
        self.set_levels(-120.0, 0.0)
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.setInterval(IDLE_MS)
        self._idle.timeout.connect(self._typing_paused)
        for box in (self.nfft, self.window):
            box.currentTextChanged.connect(self._text_changed)
            box.lineEdit().editingFinished.connect(self._typing_finished)
        self.hop.valueChanged.connect(self._emit_params)
        self.scaling.currentTextChanged.connect(self._emit_params)
        self.channel.valueChanged.connect(self._emit_params)
        self.peak_hold.toggled.connect(self._emit_params)
        self.db_high.valueChanged.connect(self._emit_levels)
        self.db_low.valueChanged.connect(self._emit_levels)
        self.colormap.currentTextChanged.connect(self.colormapChanged)
        self.freq_scale.currentTextChanged.connect(self._emit_freq_scale)
        self.auto.clicked.connect(self.autoLevelsRequested)

    def params(self) -> dict:
        """Current analysis parameters; ``nfft`` is -1 when the text is not a number."""
        text = self.nfft.currentText().strip()
        return {"nfft": int(text) if text.isdigit() else -1, "hop": self.hop.value(),
                "window": self.window.currentText().strip(),
                "scaling": self.scaling.currentText(), "channel": self.channel.value(),
                "reduce": "max" if self.peak_hold.isChecked() else "mean"}

    def set_params(self, p: dict) -> None:
        self._block = True
        try:
            if "nfft" in p:
                self.nfft.setCurrentText(str(p["nfft"]))
            if "hop" in p:
                self.hop.setValue(int(p["hop"]))
            if "window" in p:
                self.window.setCurrentText(window_text(p["window"]))
            if "scaling" in p:
                self.scaling.setCurrentText(p["scaling"])
            if "channel" in p:
                self.channel.setValue(int(p["channel"]))
            if "reduce" in p:
                self.peak_hold.setChecked(p["reduce"] == "max")
        finally:
            self._block = False

    def set_channel_count(self, n: int) -> None:
        """Channels 0..n-1, and "all (stacked)" below 0 when there are several."""
        self._block = True
        self.channel.setRange(-1 if n > 1 else 0, max(0, n - 1))
        self.channel.setSpecialValueText("all (stacked)" if n > 1 else "")
        self.channel.setEnabled(n > 1)
        self._block = False

    def set_levels(self, low: float, high: float) -> None:
        self._block = True
        self.db_low.setValue(low)
        self.db_high.setValue(high)
        self._block = False

    def _emit_params(self, *_: object) -> None:
        if not self._block:
            self._idle.stop()
            for box in (self.nfft, self.window):
                box.lineEdit().setModified(False)
            self.paramsChanged.emit(self.params())

    def _text_changed(self, *_: object) -> None:
        """A choice from the list, or set by the program: now; typed: later."""
        if any(box.lineEdit().isModified() for box in (self.nfft, self.window)):
            self._idle.start()
        else:
            self._emit_params()

    def _typing_finished(self) -> None:
        """Enter or leaving the field: take what was typed, complete or not."""
        if self._idle.isActive() or any(box.lineEdit().isModified()
                                        for box in (self.nfft, self.window)):
            self._emit_params()

    def _typing_paused(self) -> None:
        """A pause in typing: take the values only when they are complete."""
        text = self.nfft.currentText().strip()
        if not text.isdigit() or int(text) < MIN_IDLE_NFFT:
            return
        try:
            StftParams(int(text), min(self.hop.value(), int(text)),
                       self.window.currentText().strip())
        except (InputError, ValueError):
            return
        self._emit_params()

    def set_freq_scale(self, scale: str) -> None:
        self._block = True
        self.freq_scale.setCurrentText(scale)
        self._block = False

    def _emit_freq_scale(self, scale: str) -> None:
        if not self._block:
            self.freqScaleChanged.emit(scale)

    def _emit_levels(self, *_: object) -> None:
        if not self._block:
            self.levelsChanged.emit(self.db_low.value(), self.db_high.value())
