"""TransportBar: play / stop, loop and how a range is heard (speed, band, heterodyne, IQ).

The bar only holds what the person chose: :meth:`TransportBar.settings`
reads the fields into a :class:`TransportSettings` (numbers as people write
them, ``40k`` or ``40 kHz``; a bad field raises a one-line ``InputError``
naming it), and the signals say what was clicked.  Who plays, and on which
thread, is for the app to decide.
"""

from __future__ import annotations

from dataclasses import dataclass

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QStyle,
    QToolBar,
    QWidget,
)
from specscope.compute.errors import InputError
from specscope.compute.params import parse_number
from specscope.compute.playback import DEMODS

__all__ = ["SPEEDS", "TransportBar", "TransportSettings", "parse_speed"]

#: the speeds offered, as shown and as factors
SPEEDS: tuple[tuple[str, float], ...] = (("×1", 1.0), ("×½", 0.5), ("×¼", 0.25),
                                         ("×⅒", 0.1), ("×2", 2.0))


def parse_speed(text: str) -> float:
    """A speed as written: ``×½``, ``0.1``, ``x0.1``, ``1/10``.

    Parameters
    ----------
    text : str
        The speed as typed or chosen, with or without a leading ``×``, ``x`` or ``*``.

    Returns
    -------
    float
        The playback speed factor (0.1: ten times slower).

    Raises
    ------
    InputError
        When ``text`` is not a factor (one line).

    Examples
    --------
    >>> parse_speed("×½"), parse_speed("x0.1"), parse_speed("1/10")
    (0.5, 0.1, 0.1)
    """
    t = text.strip().lstrip("×xX*").strip()
    for label, value in SPEEDS:
        if t == label[1:]:
            return value
    try:
        if "/" in t:
            num, _, den = t.partition("/")
            value = parse_number(num, "speed") / parse_number(den, "speed")
        else:
            value = parse_number(t, "speed")
    except (InputError, ZeroDivisionError):
        raise InputError(f"speed {text!r}: write a factor such as 0.1, ×½ or 1/10") from None
    return float(value)


#: the channel choices offered for two channels or more, as shown and as
#: TransportSettings.channels
CHANNEL_CHOICES = (("Stereo", "all"), ("Left", "left"), ("Right", "right"),
                   ("Mix to mono", "mix"), ("Shown channel", "shown"))
#: the one choice of a one-channel recording
MONO_CHOICE = ("Mono", "all")


def channel_choices(n_channels: int) -> tuple[tuple[str, str], ...]:
    """The channel choices a recording of ``n_channels`` offers, as shown and as
    TransportSettings.channels: "Mono" alone for one channel; with more, stereo from
    the first two ("Ch 0 + 1 (stereo)", "Ch 0", "Ch 1" beyond two), the mix and the
    channel shown."""
    if n_channels <= 1:
        return (MONO_CHOICE,)
    if n_channels == 2:
        return CHANNEL_CHOICES
    names = {"all": "Ch 0 + 1 (stereo)", "left": "Ch 0", "right": "Ch 1"}
    return tuple((names.get(value, label), value) for label, value in CHANNEL_CHOICES)


@dataclass(frozen=True)
class TransportSettings:
    """What the transport bar says about how to listen.

    ``band`` is the band typed into the fields, before or after the band box
    was ticked (None when the box is off, or when nothing was typed since the
    app last filled the fields, or both were emptied: the app then takes the
    selection's or the view's frequency range when ``band_on``); an edge left
    empty is None (the app takes that edge from the view).

    Parameters
    ----------
    speed : float, optional
        Playback speed factor (0.1: ten times slower, a tenth of the pitch).
    loop : bool, optional
        Start again at the end of the range.
    band_on : bool, optional
        Hear only a band (real recordings).
    band : tuple of (float or None) or None, optional
        The typed band, low and high (Hz); None for an empty field.
    heterodyne : float or None, optional
        The local oscillator's frequency (Hz) when heterodyning is on.
    processed : bool, optional
        Hear the signal after the processing steps (False: as recorded).
    tune : float or None, optional
        IQ: the absolute frequency listened to (Hz).
    demod : {"am", "fm", "usb", "lsb"} or None, optional
        IQ: the demodulator; None: none.
    channels : {"all", "left", "right", "mix", "shown"}, optional
        What is heard: stereo, one channel, all mixed to mono, or the channel shown.
    """

    speed: float = 1.0
    loop: bool = False
    band_on: bool = False
    band: tuple[float | None, float | None] | None = None
    heterodyne: float | None = None
    processed: bool = True
    tune: float | None = None
    demod: str | None = None
    #: what is heard: "all" (stereo), "left", "right", "mix" or "shown" (the shown channel)
    channels: str = "all"


def _field(placeholder: str, tip: str, width: int = 80) -> QLineEdit:
    f = QLineEdit()
    f.setPlaceholderText(placeholder)
    f.setToolTip(tip)
    f.setMaximumWidth(width)
    return f


class TransportBar(QToolBar):
    """The transport: Play/Stop, Loop, speed, band, heterodyne, processing, IQ tuning.

    Parameters
    ----------
    parent : QWidget or None, optional
        The parent widget.

    Signals
    -------
    playClicked()
        Play/Stop was clicked.
    loopToggled(bool)
        Loop was switched.
    tuneModeToggled(bool)
        "Pick" was switched: a click on the spectrogram gives the tune frequency.
    """

    playClicked = pyqtSignal()
    loopToggled = pyqtSignal(bool)
    tuneModeToggled = pyqtSignal(bool)
    #: the output gain changed: linear, 0 when muted
    volumeChanged = pyqtSignal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Transport", parent)
        self.setObjectName("transport")
        box = QWidget(self)
        lay = QHBoxLayout(box)
        lay.setContentsMargins(4, 0, 4, 0)
        self.play_button = QPushButton("▶ Play")
        self.play_button.setToolTip("Play the visible span or the selection (Space)")
        self.play_button.clicked.connect(self.playClicked)
        self.loop_box = QCheckBox("Loop")
        self.loop_box.setToolTip("Start again at the end (L)")
        self.loop_box.toggled.connect(self.loopToggled)
        self.speed = QComboBox()
        self.speed.setEditable(True)
        self.speed.addItems([label for label, _ in SPEEDS])
        self.speed.setToolTip("Speed: ×⅒ plays ten times slower, a tenth of the pitch "
                              "(type any factor from 0.05 to 4)")
        self.band_box = QCheckBox("Band")
        self.band_box.setToolTip("Hear only a band: a selection box's, else the one typed "
                                 "beside (before or after ticking), else the visible "
                                 "frequencies")
        self.band_lo = _field("low Hz", "Lowest frequency heard with Band ticked (Hz; 20k = "
                              "20 kHz; empty: the visible band's)")
        self.band_hi = _field("high Hz", "Highest frequency heard with Band ticked (Hz; "
                              "empty: the visible band's)")
        # typed values win over the view's band, whenever the box is ticked, until the app
        # fills the fields with another band heard (a selection's, or the view's once both
        # fields were emptied)
        self._band_typed = False
        for f in (self.band_lo, self.band_hi):
            f.textEdited.connect(self._band_edited)
        self.het_box = QCheckBox("Heterodyne")
        self.het_box.setToolTip("Mix with a local oscillator: ultrasound near it is heard "
                                "as the difference")
        self.het_freq = _field("Hz", "Local oscillator frequency (Hz; 40k = 40 kHz)")
        self.processed_box = QCheckBox("Processed")
        self.processed_box.setChecked(True)
        self.processed_box.setToolTip("On: hear the signal after the processing steps; "
                                      "off: as recorded")
        self.tune_label = QLabel("Tune")
        self.tune_freq = _field("Hz", "IQ: absolute frequency to listen to", 110)
        self.tune_pick = QPushButton("Pick")
        self.tune_pick.setCheckable(True)
        self.tune_pick.setToolTip("Click a carrier on the spectrogram to tune to it (T)")
        self.tune_pick.toggled.connect(self.tuneModeToggled)
        self.demod = QComboBox()
        self.demod.addItems(["no demod", *(d.upper() for d in DEMODS)])
        self.demod.setToolTip("IQ: demodulator")
        self.channels = QComboBox()
        self.channels.setToolTip("What is heard: both channels in stereo, one of them, all "
                                 "down-mixed to one, or the channel shown")
        self.set_channel_count(2)
        # the style's own speaker icons: an emoji glyph is a box where no colour-emoji
        # font is installed (most Linux desktops without one)
        self.mute = QPushButton()
        self.mute.setAccessibleName("Mute")
        self.mute.setCheckable(True)
        self.mute.setToolTip("Mute (the sound goes on, silent)")
        self.volume = QSlider(Qt.Orientation.Horizontal)
        self.volume.setRange(0, 100)
        self.volume.setValue(100)
        self.volume.setFixedWidth(90)
        self.volume.setToolTip("Volume, after the limiter (applied at once, also while "
                               "playing); 50 is -12 dB")
        self.volume.valueChanged.connect(self._emit_volume)
        self.mute.toggled.connect(self._emit_volume)
        self._mute_icon()
        self.limiter_label = QLabel("")
        self.limiter_label.setToolTip("The limiter holds the sound below full scale: it "
                                      "was too loud (lower the gain or the band's level)")
        self.device_label = QLabel("")
        self.device_label.setToolTip("Audio output and its latency")
        self._iq_widgets = (self.tune_label, self.tune_freq, self.tune_pick, self.demod)
        self._real_widgets = (self.band_box, self.band_lo, self.band_hi, self.het_box,
                              self.het_freq)
        for w in (self.play_button, self.loop_box, self.speed, *self._real_widgets,
                  self.processed_box, *self._iq_widgets):
            lay.addWidget(w)
        lay.addWidget(self.channels)
        lay.addStretch(1)
        lay.addWidget(self.mute)
        lay.addWidget(self.volume)
        lay.addWidget(self.limiter_label)
        lay.addWidget(self.device_label)
        self.addWidget(box)
        self.set_complex(False)

    def gain(self) -> float:
        """The output gain the volume slider and mute give: 0..1 (slider squared, a level taper)."""
        return 0.0 if self.mute.isChecked() else (self.volume.value() / 100.0) ** 2

    def _emit_volume(self, *_: object) -> None:
        self._mute_icon()
        self.volumeChanged.emit(self.gain())

    def _mute_icon(self) -> None:
        icon = (QStyle.StandardPixmap.SP_MediaVolumeMuted if self.mute.isChecked()
                else QStyle.StandardPixmap.SP_MediaVolume)
        self.mute.setIcon(self.style().standardIcon(icon))

    def set_complex(self, iq: bool) -> None:
        """Show the IQ controls (tune, demodulator) or the real ones (band, heterodyne)."""
        for w in self._iq_widgets:
            w.setVisible(iq)
        for w in self._real_widgets:
            w.setVisible(not iq)

    def set_channel_count(self, n_channels: int) -> None:
        """Offer the channel choices a recording of ``n_channels`` has
        (:func:`channel_choices`), keeping the one chosen where it is still offered;
        a one-channel recording shows "Mono", and nothing to choose."""
        choices = channel_choices(n_channels)
        kept = self.channels.currentData()
        self.channels.blockSignals(True)
        self.channels.clear()
        for label, value in choices:
            self.channels.addItem(label, value)
        index = self.channels.findData(kept)
        self.channels.setCurrentIndex(max(index, 0))
        self.channels.blockSignals(False)
        self.channels.setEnabled(len(choices) > 1)

    def set_playing(self, playing: bool) -> None:
        """Show Play or Stop on the button."""
        self.play_button.setText("■ Stop" if playing else "▶ Play")

    def set_limiting(self, on: bool, reduction_db: float | None = None) -> None:
        """Say that the limiter acts on what is heard, with its gain reduction in dB
        when known ("Limiting −4.5 dB"; empty when it does not act)."""
        text = ""
        if on:
            text = "Limiting" if reduction_db is None or reduction_db > -0.05 else \
                f"Limiting −{abs(reduction_db):.1f} dB"
        if self.limiter_label.text() != text:
            self.limiter_label.setText(text)

    def set_device(self, name: str, latency_s: float) -> None:
        """Show the output device and its latency (empty name: nothing)."""
        self.device_label.setText(f"♪ {name}, {latency_s * 1e3:.0f} ms" if name else "")

    def _band_edited(self) -> None:
        self._band_typed = True

    def set_band(self, lo: float, hi: float, *, typed: bool = False) -> None:
        """Show the band heard in the band fields.

        ``typed``: the band came from the fields; a field stays as typed when it
        says the same (``1k`` for 1000 Hz) and shows the edge heard otherwise
        (one left empty, or beyond Nyquist), and the band stays a typed one.
        """
        for field, value in ((self.band_lo, lo), (self.band_hi, hi)):
            if typed:
                try:
                    if float(parse_number(field.text().strip(), "band")) == value:
                        continue
                except (InputError, ValueError):
                    pass
            field.setText(f"{value:.6g}")
        self._band_typed = bool(typed)

    def band_fields(self) -> tuple[str, str, bool]:
        """The band fields as they are: low and high text, and whether they were typed
        (a typed band is played; a shown one is not): what :meth:`set_band_fields` restores."""
        return self.band_lo.text(), self.band_hi.text(), self._band_typed

    def set_band_fields(self, fields: tuple[str, str, bool]) -> None:
        """Put back what :meth:`band_fields` returned."""
        lo, hi, typed = fields
        self.band_lo.setText(lo)
        self.band_hi.setText(hi)
        self._band_typed = bool(typed)

    def set_tune(self, hz: float) -> None:
        """Put ``hz`` in the tune field and leave pick mode."""
        self.tune_freq.setText(f"{hz:.9g}")
        self.tune_pick.setChecked(False)

    def settings(self) -> TransportSettings:
        """The fields as settings; a bad field raises a one-line InputError naming it."""

        def number(field: QLineEdit, name: str) -> float | None:
            text = field.text().strip()
            return None if not text else float(parse_number(text, name))

        band = None
        if self.band_box.isChecked() and self._band_typed:
            lo, hi = number(self.band_lo, "band low"), number(self.band_hi, "band high")
            if lo is not None or hi is not None:
                band = (lo, hi)
        het = number(self.het_freq, "heterodyne") if self.het_box.isChecked() else None
        if self.het_box.isChecked() and het is None:
            raise InputError("heterodyne: type the local oscillator's frequency (Hz)")
        demod = self.demod.currentText().lower()
        return TransportSettings(
            speed=parse_speed(self.speed.currentText()), loop=self.loop_box.isChecked(),
            band_on=self.band_box.isChecked(), band=band, heterodyne=het,
            processed=self.processed_box.isChecked(), tune=number(self.tune_freq, "tune"),
            demod=demod if demod in DEMODS else None,
            channels=str(self.channels.currentData() or "all"))
