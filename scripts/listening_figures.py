"""Time to first sound from Space and the play cursor's error, through a private PulseAudio.

Run: ``.venv/bin/python scripts/listening_figures.py`` (needs pulseaudio, parec,
libportaudio2, libasound2-plugins and sounddevice; the window is drawn offscreen).
``--busy`` keeps both cores busy meanwhile (two ``yes > /dev/null``), as the tests do.

The app's window opens a recording (which opens the sound card ahead, on a
thread of its own) and Space is pressed; the null sink's monitor is recorded.
The monitor's clock is read off the recording as it grows
(``sound_server.MonitorClock``: the earliest arrival of its frames over the run
places frame 0 on the monotonic clock).  parec records with a 5 ms latency: the
null sink renders that far ahead of its clock, so the monitor hears each frame
up to 5 ms before it is played; that is not corrected for.

* first sound: the first frame above 1e-3 after the press, less the press, for
  the first playback in the process and for later ones; then the same with a
  stream opened at each Space (the output not held), for comparison;
* cursor: over a whole x0.1 playback, the recording time the play cursor was
  drawn at, against the recording time heard at that moment (the renderer's
  output found in the monitor by cross-correlation), in output milliseconds.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from sound_server import RATE, MonitorClock, SoundServer, align, longest_gap, sound_span

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
#: parec's latency (ms): the null sink renders that far ahead, so the monitor hears
#: each frame up to that much before it is played (20 ms shifts the cursor by 20 ms)
MONITOR_MS = 5
#: presses of Space measured for the first sound
N_FIRST = 12


def load() -> str:
    """The machine's load averages (1, 5, 15 min), for the figures' context."""
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def main() -> None:
    import subprocess

    root = Path(tempfile.mkdtemp())
    srv = SoundServer(root / "pulse")
    hogs = ([subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)]
            if "--busy" in sys.argv[1:] else [])
    try:
        measure(srv, root)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        srv.close()


def measure(srv: SoundServer, root: Path) -> None:
    """The figures (see the module), on the sound server ``srv``."""
    os.environ.update(srv.env())
    os.environ.pop("SPECSCOPE_AUDIO_OUTPUT", None)
    import soundfile
    from PyQt6.QtCore import Qt
    from PyQt6.QtTest import QTest
    from PyQt6.QtWidgets import QApplication
    from specscope.app.desktop.main_window import MainWindow
    from specscope.app.session import ViewSettings
    from specscope.compute import StftParams
    from specscope.compute.playback import Renderer, SoundDeviceOutput

    fs = 96000
    t = np.arange(2 * fs) / fs
    x = sum(0.2 * np.sin(2 * np.pi * f / 0.1 * t + k) for k, f in enumerate((441.3, 1003.7)))
    wav = root / "tones.wav"
    soundfile.write(str(wav), x.astype(np.float32), fs, subtype="FLOAT")
    app = QApplication.instance() or QApplication([])
    w = MainWindow(ViewSettings(stft=StftParams(1024, 256)), interactive=False)
    w.show()
    shown = []
    w.imageShown.connect(lambda *_: shown.append(1))
    w.open_path(str(wav))
    pb = w.playback

    def spin(until, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not until():
            app.processEvents()
            time.sleep(0.002)
            if time.monotonic() > deadline:
                raise RuntimeError("timed out")

    spin(lambda: bool(shown), 120.0)
    pb.prepare_output().join(30)  # opened when the recording opened: returns at once
    if not pb.backend().is_open:
        raise RuntimeError("the sound card did not open")
    drawn: list[tuple[float, float]] = []
    what: list = []

    dropouts = [0]

    def on_cursor(pos: float) -> None:
        drawn.append((time.monotonic(), pos))
        dropouts[0] = pb.player.dropouts
        if not what:
            what.append((pb.range, pb.renderer.speed))
    pb.cursorMoved.connect(on_cursor)

    def trial(name: str, seconds: float | None) -> tuple[float, np.ndarray, float]:
        """Space, play ``seconds`` (None: to the end), Space; first sound (s), monitor, zero."""
        drawn.clear()
        what.clear()
        with srv.record(root / f"{name}.raw", MONITOR_MS) as mon:
            clock = MonitorClock(mon)
            n0 = mon.samples().shape[0]
            w.view.setFocus()
            t_press = time.monotonic()
            QTest.keyClick(w.view, Qt.Key.Key_Space)
            spin(lambda: pb.player is not None)
            if seconds is None:
                spin(lambda: pb.player is None, 120.0)
            else:
                t_end = time.monotonic() + seconds
                spin(lambda: time.monotonic() > t_end)
                QTest.keyClick(w.view, Qt.Key.Key_Space)
            spin(lambda: pb.backend() is None or not getattr(pb.backend(), "lent", False))
            mon.wait_for(mon.samples().shape[0] + RATE // 4)
            zero = clock.stop()
            y = mon.samples()[:, 0].astype(float)
        a, _ = sound_span(y[n0:])
        return zero + (n0 + a) / RATE - t_press, y, zero

    print(f"load before: {load()}")
    pb.transport.speed.setEditText("×1")
    firsts = [trial(f"first{i}", 0.6)[0] for i in range(N_FIRST)]
    ms = np.array(firsts) * 1e3
    print(f"first sound after Space, output held open: first playback in the process "
          f"{ms[0]:.0f} ms, later ones " + ", ".join(f"{f:.0f}" for f in ms[1:])
          + f" ms; median {np.median(ms):.0f} ms, max {ms.max():.0f} ms (load {load()})")
    held = pb.output
    pb.output = SoundDeviceOutput()  # a stream opened at each Space
    opened = [trial(f"open{i}", 0.6)[0] for i in range(3)]
    pb.output = held
    print("first sound after Space, a stream opened at each Space (later playbacks): "
          + ", ".join(f"{f * 1e3:.0f}" for f in opened) + " ms")

    pb.transport.speed.setEditText("0.1")
    _, y, zero = trial("cursor", None)
    (rng, speed), = what
    r = Renderer(w.document.recording, rng.start_s, rng.stop_s, channel=rng.channel,
                 options=rng.options)
    ref = r.render()
    ref = ref if ref.ndim == 1 else ref[:, 0]
    k = align(y, ref)
    m = np.array(drawn[5:-5], float)
    heard = r.position_of(np.clip((m[:, 0] - zero) * RATE - k, 0, r.length))
    signed = (m[:, 1] - heard) / speed * 1e3
    err = np.abs(signed)
    print(f"cursor minus sound: mean {signed.mean():+.1f} ms, sd {signed.std():.1f} ms")
    print(f"play cursor vs sound over a x{speed:g} playback ({len(m)} cursor draws): median "
          f"{np.median(err):.1f} ms, 95th percentile {np.percentile(err, 95):.1f} ms, "
          f"max {err.max():.1f} ms (output time); dropouts {dropouts[0]}")
    print(f"x{speed:g} playback of {r.duration_s:.1f} s from the app: longest gap "
          f"{longest_gap(y) / RATE * 1e3:.1f} ms (load {load()})")
    w.close()


if __name__ == "__main__":
    main()
