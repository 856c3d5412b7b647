"""A private PulseAudio sound server for tests: a null sink whose monitor is recorded.

:class:`SoundServer` starts ``pulseaudio`` in user mode with its own
``HOME``/``XDG_RUNTIME_DIR`` in a temporary directory (so it works as root and
next to a person's own server), a null sink named ``specscope_test`` as the
default sink and an anonymous unix socket.  :meth:`SoundServer.env` is the
environment a player needs to reach it (``PULSE_SERVER``, and
``SPECSCOPE_AUDIO_DEVICE=pulse``: PortAudio's ALSA backend through the pulse
ALSA plugin).  :meth:`SoundServer.record` records the sink's monitor with
``parec`` (float32 at 48 kHz, stereo) while something plays.

The analysis helpers compare a recording with the renderer's output:
:func:`align` (cross-correlation), :func:`longest_gap` (the longest run of
silence inside the sound), :func:`sound_span`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from scipy import signal as ss

SINK = "specscope_test"
RATE = 48000
#: the server and the recorder run before ordinary work, as a desktop's sound server does
#: (its real-time threads): ``nice`` runs them unchanged where lowering is not permitted,
#: so that the machine's load tests the player, not the fixture
SERVER_PRIORITY = ["nice", "-n", "-11"] if shutil.which("nice") else []
#: the real-time priority (SCHED_RR) the server's threads get where permitted: a sound
#: server's own (its I/O thread asks for 5 itself)
SERVER_REALTIME = 5


def realtime_server(pid: int) -> None:
    """Put every thread of the server ``pid`` in the real-time class where permitted.

    PulseAudio makes only its I/O thread real time; its main thread, which relays the
    clients' sound to that thread and asks them for more, stays at nice -11, and that
    counts only within its own session: the server runs in a session of its own, whose
    group of threads gets one share of the machine against every other session's, and
    on a loaded 2-core machine that main thread waited 0.4-2.4 s to run while it
    was ready, longer than the 0.2 s a client's stream holds there, and the null sink
    played silence (the player's ring stayed full, its callback was simply not asked).
    The tests give every thread the priority so that the load tests the player.
    """
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return
    for tid in tids:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(tid, os.SCHED_RR, os.sched_param(SERVER_REALTIME))


#: what the tests skip with when there is no sound server to start
MISSING = ("needs pulseaudio, pulseaudio-utils (parec), libportaudio2, libasound2-plugins "
           "and sounddevice (.ci/apt-packages.txt, the audio extra)")


def available() -> bool:
    """Whether a sound server can be started and played into here."""
    if not (shutil.which("pulseaudio") and shutil.which("parec") and shutil.which("pactl")):
        return False
    try:
        import sounddevice  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


class SoundServer:
    """A running private PulseAudio with a null sink (see the module)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.runtime = self.root / "run"
        self.runtime.mkdir(parents=True, exist_ok=True)
        os.chmod(self.runtime, 0o700)
        self.socket = self.root / "native"
        conf = self.root / "server.pa"
        conf.write_text(
            f"load-module module-null-sink sink_name={SINK} rate={RATE} channels=2\n"
            f"load-module module-native-protocol-unix auth-anonymous=1 socket={self.socket}\n"
            f"set-default-sink {SINK}\n")
        self.log = self.root / "pulseaudio.log"
        base = {k: v for k, v in os.environ.items() if not k.startswith("PULSE")}
        self._base_env = {**base, "HOME": str(self.root), "XDG_RUNTIME_DIR": str(self.runtime),
                          "PULSE_SERVER": f"unix:{self.socket}"}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [*SERVER_PRIORITY, "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1",
                 "--disallow-exit", "--use-pid-file=no", "--log-target=stderr",
                 "--high-priority=yes", "--realtime=yes", "-F", str(conf)],
                env=self._base_env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            ok = self.socket.exists() and subprocess.run(
                ["pactl", "list", "short", "sinks"], check=False, env=self._base_env,
                capture_output=True, text=True, timeout=10).stdout.find(SINK) >= 0
            if ok:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("pulseaudio did not start: "
                                   + self.log.read_text(errors="replace")[-2000:])
            time.sleep(0.05)
        realtime_server(self.proc.pid)

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a process that plays into the null sink."""
        return {**self._base_env, "SPECSCOPE_AUDIO_DEVICE": "pulse", **extra}

    def apply(self, monkeypatch) -> None:
        """Point this process's playback at the server (PortAudio reads it at start)."""
        for k in ("HOME", "XDG_RUNTIME_DIR", "PULSE_SERVER"):
            monkeypatch.setenv(k, self._base_env[k])
        monkeypatch.setenv("SPECSCOPE_AUDIO_DEVICE", "pulse")
        monkeypatch.delenv("SPECSCOPE_AUDIO_OUTPUT", raising=False)
        restart_portaudio()


    @contextmanager
    def record(self, path: Path, latency_ms: int = 20) -> Iterator[Recorder]:
        """Record the sink's monitor into ``path`` (raw float32, stereo) while inside.

        ``latency_ms`` is parec's: the null sink renders that far ahead of its clock,
        so the monitor hears each frame up to that much before it is played.
        """
        rec = Recorder(self, Path(path), latency_ms)
        try:
            yield rec
        finally:
            rec.stop()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def restart_portaudio() -> None:
    """Start PortAudio again (sounddevice's documented way) so it lists the devices of the
    environment now; it read them when sounddevice was first imported."""
    import sounddevice as sd

    sd._terminate()
    sd._initialize()


class Recorder:
    """``parec`` on the monitor of the null sink; :meth:`samples` reads what it has."""

    def __init__(self, server: SoundServer, path: Path, latency_ms: int = 20) -> None:
        self.path = path
        self._fh = open(path, "wb")
        self.proc = subprocess.Popen(
            [*SERVER_PRIORITY, "parec", f"--device={SINK}.monitor", "--format=float32le", f"--rate={RATE}",
             "--channels=2", "--raw", f"--latency-msec={int(latency_ms)}"],
            env=server.env(), stdout=self._fh, stderr=subprocess.DEVNULL)
        # the monitor runs on the sink's clock: wait for its first samples
        deadline = time.monotonic() + 10
        while path.stat().st_size < 8 * RATE // 50:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("parec did not record the monitor")
            time.sleep(0.01)
        self.started = time.monotonic()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._fh.close()

    def wait_for(self, frames: int, timeout: float = 30.0) -> None:
        """Wait until ``frames`` frames were recorded (the monitor runs on the sink's clock)."""
        deadline = time.monotonic() + timeout
        while self.path.stat().st_size < 8 * frames:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"parec recorded {self.path.stat().st_size // 8} of "
                                   f"{frames} frames")
            time.sleep(0.01)

    def frames(self) -> int:
        """Frames recorded so far."""
        return self.path.stat().st_size // 8

    def samples(self) -> np.ndarray:
        """Everything recorded so far, ``(n, 2)`` float32."""
        raw = np.fromfile(self.path, np.float32)
        return raw[:raw.size // 2 * 2].reshape(-1, 2)


class MonitorClock:
    """Where the monitor's frames fall on ``time.monotonic()``.

    A thread samples (time, frames recorded) every 2 ms while inside; frames
    reach the file only after they were rendered, so the earliest arrival over
    the run, ``min(t - frames / RATE)``, is the time of frame 0 (parec's
    remaining latency not subtracted: an upper bound).
    """

    def __init__(self, recorder: Recorder) -> None:
        import threading

        self.recorder, self.marks = recorder, []
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._halt.is_set():
            self.marks.append((time.monotonic(), self.recorder.frames()))
            time.sleep(0.002)

    def stop(self) -> float:
        """Stop sampling; the monotonic time of the monitor's frame 0."""
        self._halt.set()
        self._thread.join()
        m = np.array(self.marks, float)
        return float(np.min(m[:, 0] - m[:, 1] / RATE))


# -- analysis ------------------------------------------------------------------------------


def sound_span(x: np.ndarray, thresh: float = 1e-3) -> tuple[int, int]:
    """First and one-past-last sample of ``x`` above ``thresh`` in magnitude."""
    idx = np.flatnonzero(np.abs(x) > thresh)
    if not idx.size:
        return 0, 0
    return int(idx[0]), int(idx[-1]) + 1


def _quiet_runs(x: np.ndarray, thresh: float) -> tuple[np.ndarray, np.ndarray]:
    """Starts (after the first sound) and lengths of the runs within ``thresh`` of zero
    between the first and last sound."""
    a, b = sound_span(x, thresh)
    quiet = np.abs(x[a:b]) <= thresh
    d = np.diff(np.concatenate([[0], quiet.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    return starts, stops - starts


def longest_gap(x: np.ndarray, thresh: float = 1e-3) -> int:
    """The longest run of samples within ``thresh`` of zero between the first and last sound."""
    _, lengths = _quiet_runs(x, thresh)
    return int(lengths.max()) if lengths.size else 0


def gap_at(x: np.ndarray, thresh: float = 1e-3) -> int:
    """Where the longest gap (:func:`longest_gap`) starts, in samples after the first sound."""
    starts, lengths = _quiet_runs(x, thresh)
    return int(starts[np.argmax(lengths)]) if lengths.size else 0


def align(recorded: np.ndarray, reference: np.ndarray) -> int:
    """The offset of ``reference`` in ``recorded`` (samples) by cross-correlation."""
    c = ss.correlate(recorded, reference, mode="valid", method="fft")
    return int(np.argmax(c))
