"""Listening in the app: the transport bar, Space, the play cursor.

:class:`PlaybackController` plays what the person sees: the selection when
there is one, else the visible span, from the measurement cursor when it is
inside, at the transport bar's speed, band, heterodyne or IQ tuning, with or
without the processing steps.  The renderer (which designs its filters) and
the player are made and started on a thread of their own (not queued behind
the compute thread's tiles, so the first sound comes at once); the player
feeds the audio output from its own thread.  The GUI thread only polls
``player.position_s`` from a timer and moves the play cursor over the
spectrogram and the overview.

The audio backend is :attr:`PlaybackController.output`: None plays on the
sound card (``SPECSCOPE_AUDIO_DEVICE`` chooses it; ``SPECSCOPE_AUDIO_OUTPUT=fake``
a silent fake), or any backend a ``Player`` accepts, such as ``FakeOutput``.
The sound card is opened ahead, on a background thread when a recording is
opened, and kept open between playbacks (a :class:`HeldOutput`), so Space only
starts rendering into a stream that is already open.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Any

from PyQt6.QtCore import QObject, QTimer, pyqtSignal
from PyQt6.QtGui import QAction
from specscope.app.qt.shell import Shell
from specscope.app.session import Listening
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.freqfmt import format_frequency
from specscope.compute.playback import (
    AUDIO_OUTPUT_ENV,
    DEFAULT_CHUNK,
    Looping,
    PlaybackOptions,
    Player,
    Renderer,
)
from specscope.compute.playback.held import HeldOutput
from specscope.compute.playback.system import raise_priority
from specscope.widgets.transport import TransportBar

__all__ = ["PlayRange", "PlaybackController"]

#: how often the play cursor moves (ms): about 60 times a second
POLL_MS = 16
#: samples per output callback: short, so the position is fine-grained
BLOCK = 512
#: seconds of output each chunk of the recording gives at most: the first chunk is
#: rendered between Space and the first sound, so it is kept short
CHUNK_OUT_S = 0.1
#: recording samples per chunk at least (fewer would cost more in overhead than they save)
MIN_CHUNK = 4096


def playback_chunk(sample_rate: float, speed: float) -> int:
    """Recording samples per rendered chunk: :data:`CHUNK_OUT_S` of output, within
    :data:`MIN_CHUNK` and the renderer's default."""
    return int(min(DEFAULT_CHUNK, max(MIN_CHUNK, round(sample_rate * speed * CHUNK_OUT_S))))


#: seconds of the recording the warm-up renders
WARM_UP_S = 0.02


def warm_up(recording: Any) -> None:
    """Render the first :data:`WARM_UP_S` of ``recording`` once, through the chain Play
    uses (IQ: demodulated), so that Play's first render finds it loaded."""
    stop = min(float(recording.duration), WARM_UP_S)
    if stop <= 0:
        return
    opts = {"demod": "fm"} if recording.is_complex else {}
    for speed in (1.0, 0.1):
        Renderer(recording, 0.0, stop, options=PlaybackOptions.of({**opts, "speed": speed}),
                 chunk=playback_chunk(recording.sample_rate, speed)).render()


@dataclass(frozen=True)
class PlayRange:
    """What a press of Play plays: a range of one channel with its options.

    Parameters
    ----------
    start_s, stop_s : float
        The range, seconds from the recording's first sample.
    channel : int or str
        A channel number, or ``"all"`` (stereo), ``"left"``, ``"right"``, ``"mix"``.
    options : PlaybackOptions
        Speed, band, demodulation and the other options of the render.
    """

    start_s: float
    stop_s: float
    #: a channel number, or "all" (stereo), "left", "right", "mix"
    channel: int | str
    options: PlaybackOptions


def _halt(player: Player) -> None:
    """Stop a player away from the GUI thread (the fade-out takes a few blocks)."""
    threading.Thread(target=player.stop, name="specscope-playback-stop", daemon=True).start()


class PlaybackController(QObject):
    """Play / stop, loop, tune mode and the play cursor of a :class:`Shell`.

    Parameters
    ----------
    shell : Shell
        The window: document, settings, view and messages.
    parent : QObject or None, optional
        The Qt parent.

    Signals
    -------
    cursorMoved(float)
        The play cursor was drawn at this recording time (s).
    playingChanged(bool)
        Playback started (the output runs) or stopped.
    """

    cursorMoved = pyqtSignal(float)
    playingChanged = pyqtSignal(bool)
    #: a start on its thread: (request, (player, source, renderer)) or (request, message)
    _startDone = pyqtSignal(int, object)
    _startFailed = pyqtSignal(int, str)

    def __init__(self, shell: Shell, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.view = shell.view
        self.transport = TransportBar()
        #: the audio backend given to each Player; None: the sound card, held open
        self.output: Any = None
        self._held: HeldOutput | None = None
        #: the running Player, its looping source and renderer (None while stopped)
        self.player: Player | None = None
        self.source: Looping | None = None
        self.renderer: Renderer | None = None
        #: the range playing or being prepared
        self.range: PlayRange | None = None
        #: the recording time of the play cursor, None while hidden
        self.position: float | None = None
        self.loop = False
        self._request = 0  # bumped by each play and stop: late starts are stopped
        # a player its start thread has handed over (a queued signal) but the GUI thread has
        # not taken yet: stop() halts it, so a window closed meanwhile leaves none playing
        self._lock = threading.Lock()
        self._in_flight: Player | None = None
        self._pending = False
        self._dropouts = 0  # dropouts of the running player already reported
        self._latency = 0.0  # the latency the transport shows (s)
        self._actions: dict[str, QAction] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self._tick)
        self._startDone.connect(self._started)
        self._startFailed.connect(self._failed)
        self.transport.playClicked.connect(self.toggle)
        self.transport.loopToggled.connect(self.set_loop)
        self.transport.tuneModeToggled.connect(self.set_tune_mode)
        self.transport.volumeChanged.connect(self._volume)
        self.view.tuneRequested.connect(self._tuned)
        # a speed chosen from the list (or typed and entered) leaves the keys to the
        # spectrogram again: Space plays, it does not type into the combo
        self.transport.speed.activated.connect(self._give_keys_back)
        if self.transport.speed.lineEdit() is not None:
            self.transport.speed.lineEdit().returnPressed.connect(self._give_keys_back)

    def _give_keys_back(self, *_: object) -> None:
        # after the combo's list has closed (it gives the focus back to the combo first)
        QTimer.singleShot(0, self.view.setFocus)

    def bind_actions(self, actions: dict[str, QAction]) -> None:
        """The menu's Loop and Tune entries, kept in step with the bar's boxes."""
        self._actions = actions

    def _sync(self, action_id: str, on: bool) -> None:
        act = self._actions.get(action_id)
        if act is not None and act.isChecked() != on:
            act.blockSignals(True)
            act.setChecked(on)
            act.blockSignals(False)

    # -- state -------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        """Whether something plays or is being prepared."""
        return self.player is not None or self._pending

    def document_opened(self, recording: Any) -> None:
        """A new recording: stop, show the controls its kind needs, open the output ahead."""
        self.stop()
        self.transport.set_complex(bool(recording.is_complex))
        self.transport.set_channel_count(int(recording.n_channels))
        self.prepare_output(recording)

    def backend(self) -> Any:
        """The output each player gets: :attr:`output` when set, else the held sound card
        (None where ``SPECSCOPE_AUDIO_OUTPUT=fake``: the player's default)."""
        if self.output is not None:
            return self.output
        if os.environ.get(AUDIO_OUTPUT_ENV, "").strip().lower() == "fake":
            return None
        if self._held is None:
            self._held = HeldOutput()
        return self._held

    def prepare_output(self, recording: Any = None) -> threading.Thread | None:
        """Open the output on a background thread (the audio library's first start is
        slow); no device is said by Space, in one line.  With ``recording``, also render
        a few milliseconds of it once (the first render in a process pays for loading and
        first calls: tens of milliseconds Space would otherwise wait).  Returns the thread."""
        prepare = getattr(self.backend(), "prepare", None)
        if prepare is None and recording is None:
            return None
        rate = PlaybackOptions().device_rate

        def run() -> None:
            # the threads the audio library starts for the stream take this one's priority
            raise_priority()
            # no device (or a failing one): Play opens it again and says what is wrong
            if prepare is not None:
                with contextlib.suppress(Exception):
                    prepare(rate)
            if recording is not None:
                with contextlib.suppress(Exception):  # a warm-up: Play says what is wrong
                    warm_up(recording)

        thread = threading.Thread(target=run, name="specscope-output-prepare", daemon=True)
        thread.start()
        return thread

    # -- what to play ------------------------------------------------------------------
    def plan(self) -> PlayRange:
        """The range and options a press of Play means now (InputError in one line)."""
        doc = self.shell.document
        if doc is None:
            raise InputError("open a recording to play it")
        rec = doc.recording
        t0, t1, f0, f1 = self.view.visible_range()
        sel = getattr(getattr(self.shell, "annotations", None), "selection", None)
        if sel is not None:
            t0, t1 = sel.start_s, sel.stop_s
        t0, t1 = max(0.0, t0), min(float(rec.duration), t1)
        if not t1 > t0:
            raise InputError("nothing of the recording is in view to play")
        ref = self.view.reference
        start = ref[0] if ref is not None and t0 <= ref[0] < t1 else t0
        s = self.transport.settings()
        opts: dict[str, Any] = {"speed": s.speed}
        if s.processed:
            pipe = self.shell.current_pipeline()
            if pipe.signal_part().steps:
                opts["pipeline"] = pipe
        if rec.is_complex:
            opts.update(tune=s.tune, demod=s.demod)
        else:
            opts["heterodyne"] = s.heterodyne
            band = self._band(s, sel, f0, f1, rec.sample_rate / 2)
            if band is not None:
                # the fields show what plays; a typed band stays the one typed
                typed = s.band is not None and not self._box_band(sel)
                self.transport.set_band(*band, typed=typed)
                opts["band"] = band
        opts = {k: v for k, v in opts.items() if v is not None}
        channel: int | str = s.channels
        if channel == "shown" or rec.n_channels == 1:
            channel = max(0, self.shell.settings.channel)
        return PlayRange(start, t1, channel, PlaybackOptions.of(opts))

    @staticmethod
    def _box_band(sel: Any) -> bool:
        """Whether the selection is a box (a band of its own)."""
        return sel is not None and sel.freq_low_hz is not None and sel.freq_high_hz is not None

    def _band(self, s: Any, sel: Any, f0: float, f1: float,
              nyquist: float) -> tuple[float, float] | None:
        """The band heard: a selection box's; else with Band ticked the band typed in the
        fields (an edge left empty: the view's), else the view's; else None."""
        if self._box_band(sel):
            lo, hi = sel.freq_low_hz, sel.freq_high_hz
        elif s.band_on:
            typed = s.band if s.band is not None else (None, None)
            lo = f0 if typed[0] is None else typed[0]
            hi = f1 if typed[1] is None else typed[1]
        else:
            return None
        lo, hi = max(0.0, float(lo)), min(float(hi), nyquist)
        if not hi > lo:
            raise InputError(f"band {lo:g}..{hi:g} Hz: the low edge must be below the high "
                             f"one, within 0..{nyquist:g} Hz")
        return lo, hi

    # -- control -----------------------------------------------------------------------
    def toggle(self) -> None:
        """Space: play what is seen, or stop."""
        if self.playing:
            self.stop()
        else:
            self.play()

    def play(self) -> None:
        """Play the selection or the visible span (started on a thread of its own)."""
        if self.playing:
            self.stop()
        try:
            what = self.plan()
        except InputError as exc:
            self.shell.show_error(str(exc), dialog=False)
            return
        with self._lock:
            self._request += 1
            req = self._request
        rec, output, loop = self.shell.document.recording, self.backend(), self.loop
        volume = self.transport.gain()

        def start() -> None:
            raise_priority()  # a loaded machine does not hold up the first sound
            self._start(req, rec, what, output, loop, volume)

        self.range = what
        self._pending = True
        self.transport.set_playing(True)
        # on a thread of its own, not behind the compute thread's jobs: Space is heard at once
        threading.Thread(target=start, name="specscope-playback-start", daemon=True).start()

    def _start(self, req: int, rec: Any, what: PlayRange, output: Any, loop: bool,
               volume: float) -> None:
        """Make the renderer and the player and start it (on the start thread)."""
        try:
            r = Renderer(rec, what.start_s, what.stop_s, channel=what.channel,
                         options=what.options,
                         chunk=playback_chunk(rec.sample_rate, what.options.speed))
            source = Looping(r, loop)
            player = Player(source, output=output, block=BLOCK,  # no device: one line
                            volume=volume)
            player.start()
        except SpecscopeError as exc:
            self._startFailed.emit(req, str(exc))
        except Exception as exc:  # noqa: BLE001 -- one line in the status bar, the app goes on
            self._startFailed.emit(req, f"{type(exc).__name__}: {exc}")
        else:
            with self._lock:
                current = req == self._request
                if current:
                    self._in_flight = player
                    self._startDone.emit(req, (player, source, r))
            if not current:  # stopped while it started: nobody will take it
                _halt(player)

    def _started(self, req: int, result: tuple[Player, Looping, Renderer]) -> None:
        player, source, renderer = result
        with self._lock:
            taken = self._in_flight is player
            if taken:
                self._in_flight = None
        if not taken:  # stop() halted it while the signal was on its way
            return
        if req != self._request:  # stopped (or replaced) while it was being prepared
            _halt(player)
            return
        self._pending = False
        source.loop = self.loop  # switched while it was being prepared
        self.player, self.source, self.renderer = player, source, renderer
        self._dropouts, self._latency = 0, player.latency_s
        player.volume = self.transport.gain()  # moved while it was being prepared
        self.transport.set_device(player.device_name, player.latency_s)
        r = self.range
        self.shell.show_message(
            f"Playing {r.start_s:.3f}–{r.stop_s:.3f} s at ×{renderer.speed:.3g} on "
            f"{player.device_name} (latency {player.latency_s * 1e3:.0f} ms)"
            + "".join(f"; {note}" for note in renderer.notes))
        self.timer.start()
        self.playingChanged.emit(True)
        self._tick()

    def _failed(self, req: int, message: str) -> None:
        if req != self._request:
            return
        self._pending = False
        self.range = None
        self.transport.set_playing(False)
        if message:
            self.shell.show_error(f"Playback: {message}", dialog=False)

    def stop(self) -> None:
        """Stop (with a short fade) and hide the play cursor."""
        with self._lock:
            self._request += 1
            flying, self._in_flight = self._in_flight, None
        if flying is not None:
            _halt(flying)
        was = self.playing
        self._pending = False
        player, self.player = self.player, None
        self.source = self.renderer = None
        self.timer.stop()
        self.position = None
        self.view.set_play_cursor(None)
        self.transport.set_playing(False)
        self.transport.set_limiting(False)
        if player is not None:
            _halt(player)
        if was:
            self.playingChanged.emit(False)

    def listening(self) -> Listening:
        """The volume slider and mute as the session keeps them."""
        return Listening(self.transport.volume.value(), self.transport.mute.isChecked())

    def set_listening(self, listening: Listening) -> None:
        """Set the volume slider and mute (from a session); a player hears it at once."""
        self.transport.volume.setValue(int(listening.volume))
        self.transport.mute.setChecked(bool(listening.muted))

    def close(self) -> None:
        """Stop and close the sound card held open (the window closes)."""
        self.stop()
        for out in {id(o): o for o in (self.output, self._held)}.values():
            if isinstance(out, HeldOutput):
                out.close()

    def _volume(self, gain: float) -> None:
        if self.player is not None:
            self.player.volume = float(gain)  # the device applies it to its next buffer

    def set_loop(self, on: bool) -> None:
        """L: start again at the end of the range (also while playing)."""
        self.loop = bool(on)
        if self.source is not None:
            self.source.loop = self.loop
            if not self.loop and self.player is not None and self.renderer is not None:
                self.player.end_after(self.renderer.length)  # this pass is the last
        box = self.transport.loop_box
        if box.isChecked() != self.loop:
            box.blockSignals(True)
            box.setChecked(self.loop)
            box.blockSignals(False)
        self._sync("loop", self.loop)

    def set_tune_mode(self, on: bool) -> None:
        """T: the next click on the spectrogram tunes to its frequency (IQ recordings)."""
        doc = self.shell.document
        if on and (doc is None or not doc.recording.is_complex):
            self.shell.show_message("Tuning is for IQ recordings; use Band or Heterodyne")
            on = False
        self.view.click_mode = "tune" if on else "reference"
        pick = self.transport.tune_pick
        if pick.isChecked() != on:
            pick.blockSignals(True)
            pick.setChecked(on)
            pick.blockSignals(False)
        self._sync("tune_mode", on)
        if on:
            self.shell.show_message("Click a carrier on the spectrogram to tune to it", 0)

    def _tuned(self, hz: float) -> None:
        self.transport.set_tune(hz)
        self.set_tune_mode(False)
        # to the step of a pixel, where the click was: "Tuned to 100.0530 MHz"
        tuned = format_frequency(hz, self.view.hz_per_pixel(hz))
        self.shell.show_message(f"Tuned to {tuned}; Space plays it")

    # -- the cursor --------------------------------------------------------------------
    def _tick(self) -> None:
        player = self.player
        if player is None:
            return
        if player.lost:  # the device went away while playing
            self.shell.show_error(f"Playback stopped: the audio output {player.device_name} "
                                  "went away", dialog=False)
            self.stop()
            return
        if player.finished:
            try:
                player.wait(0)  # an error of the feeding thread surfaces here
            except SpecscopeError as exc:
                self.shell.show_error(f"Playback: {exc}", dialog=False)
            self.stop()
            return
        if player.dropouts != self._dropouts:  # the sound ran short: say so, once per change
            self._dropouts = n = player.dropouts
            self.shell.show_message(f"Playback: {n} dropout{'' if n == 1 else 's'} (the sound "
                                    "ran short of samples)", 0)
        latency = player.latency_s  # from the device's clock once it plays
        if abs(latency - self._latency) >= 0.001:
            self._latency = latency
            self.transport.set_device(player.device_name, latency)
        self.transport.set_limiting(player.limiting, player.limiter_db)
        self.position = float(player.position_s)
        self.view.set_play_cursor(self.position)
        self.cursorMoved.emit(self.position)
