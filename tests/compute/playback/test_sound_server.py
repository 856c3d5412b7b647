"""Listening through a real sound server: a private PulseAudio, its null sink's monitor recorded.

``specscope play`` plays into the null sink through sounddevice/PortAudio
(ALSA's pulse plugin); ``parec`` records the monitor; the recording is compared
with the renderer's output (cross-correlation for alignment, then level and
spectrum) and searched for gaps.  Skipped, with the reason, where pulseaudio
or PortAudio is missing (see tests/sound_server.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import sound_server as ss_
import soundfile
from sound_server import RATE, SoundServer, align, gap_at, longest_gap, sound_span
from specscope.compute.io import open_recording
from specscope.compute.playback import Renderer

pytestmark = pytest.mark.skipif(not ss_.available(), reason=ss_.MISSING)

SPECSCOPE = [sys.executable, "-m", "specscope.app"]
#: the longest silence allowed inside a playback (s)
MAX_GAP_S = 0.005
#: the tones played (Hz): no common period, so alignment is unambiguous
PLAYED_HZ = (441.3, 1003.7, 2297.1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = SoundServer(tmp_path_factory.mktemp("pulse"))
    yield srv
    srv.close()


@pytest.fixture
def busy_cores():
    """Two processes that keep both cores of the machine busy."""
    hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)]
    yield
    for h in hogs:
        h.kill()
        h.wait()


def tones(path: Path, seconds: float, speed: float, fs: int = 96000) -> Path:
    """Three tones that play at :data:`PLAYED_HZ` at ``speed``: never silent."""
    t = np.arange(round(seconds * fs)) / fs
    x = sum(0.2 * np.sin(2 * np.pi * f / speed * t + k) for k, f in enumerate(PLAYED_HZ))
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


def play(server: SoundServer, args: list[str], rec_path: Path) -> tuple[np.ndarray, str]:
    """``specscope play ARGS`` into the null sink; (the monitor's recording, stderr)."""
    with server.record(rec_path) as rec:
        p = subprocess.run([*SPECSCOPE, "play", *args], check=False, env=server.env(),
                           capture_output=True,
                           text=True, timeout=300)
        # the monitor lags the sink by its latency: wait for the tail to arrive
        rec.wait_for(rec.samples().shape[0] + RATE // 2)
    assert p.returncode == 0, p.stderr
    return rec.samples(), p.stderr


def test_what_is_heard_is_what_the_renderer_makes(server, tmp_path):
    wav = tones(tmp_path / "t.wav", 0.6, 0.25)
    y, err = play(server, [str(wav), "--speed", "0.25"], tmp_path / "rec.raw")
    assert "underrun" not in err
    with open_recording(wav) as rec:
        ref = Renderer(rec, speed=0.25).render()
    assert ref.size == round(0.6 * RATE / 0.25)
    left, right = y[:, 0].astype(float), y[:, 1].astype(float)
    np.testing.assert_allclose(right, left, atol=1e-4)  # mono on both channels
    k = align(left, ref)
    heard = left[k:k + ref.size]
    # the same samples, to the sink's 16-bit resolution
    assert np.max(np.abs(heard - ref)) < 2e-4
    corr = np.corrcoef(heard, ref)[0, 1]
    assert corr > 0.9999
    level_db = 20 * np.log10(np.std(heard) / np.std(ref))
    assert abs(level_db) < 0.05
    f = np.fft.rfftfreq(ref.size, 1 / RATE)
    peaks = sorted(f[np.argsort(np.abs(np.fft.rfft(heard * np.hanning(ref.size))))[-3:]])
    np.testing.assert_allclose(peaks, PLAYED_HZ, atol=1.0)


@pytest.mark.parametrize("speed", [0.1, 0.25, 1.0, 4.0])
def test_twenty_seconds_play_without_a_gap_while_both_cores_are_busy(server, tmp_path, speed,
                                                                    busy_cores):
    wav = tones(tmp_path / "t.wav", 20 * speed, speed)
    y, err = play(server, [str(wav), "--speed", str(speed)], tmp_path / "rec.raw")
    left = y[:, 0]
    gap = longest_gap(left) / RATE
    a, b = sound_span(left)
    with open_recording(wav) as rec:
        ref = Renderer(rec, speed=speed).render()
    ra, rb = sound_span(ref)
    print(f"x{speed}: longest gap {gap * 1e3:.2f} ms, heard {(b - a) / RATE:.3f} s "
          f"of {(rb - ra) / RATE:.3f} s")
    assert gap <= MAX_GAP_S, (f"a gap of {gap * 1e3:.1f} ms at x{speed}, "
                              f"{gap_at(left) / RATE:.3f} s into the sound; the player said: {err!r}")
    # a gap that is not silence (a repeat, a skip) changes the length heard
    assert abs((b - a) - (rb - ra)) <= MAX_GAP_S * RATE
    assert "underrun" not in err and "ALSA" not in err


def test_a_stereo_recording_is_heard_in_stereo(server, tmp_path):
    fs = 48000
    t = np.arange(round(0.5 * fs)) / fs
    x = np.stack([0.4 * np.sin(2 * np.pi * 441.3 * t), 0.2 * np.sin(2 * np.pi * 1703.9 * t)], 1)
    wav = tmp_path / "stereo.wav"
    soundfile.write(str(wav), x.astype(np.float32), fs, subtype="FLOAT")
    y, _ = play(server, [str(wav)], tmp_path / "rec.raw")
    with open_recording(wav) as rec:
        ref = Renderer(rec, channel="all").render()
    assert ref.shape[1] == 2
    for side in (0, 1):
        heard = y[:, side].astype(float)
        k = align(heard, ref[:, side])
        np.testing.assert_allclose(heard[k:k + ref.shape[0]], ref[:, side], atol=2e-4)


#: the play cursor's error allowed against the sound heard (output s)
CURSOR_S = 0.020
#: parec's latency for the clock tests (ms): the monitor hears each frame up to this early
MONITOR_MS = 5


def test_the_play_cursor_follows_the_device_clock_and_a_held_stream_is_reused(
        server, tmp_path, monkeypatch):
    """Over a x0.1 playback the position, sampled, is within 20 ms of what the monitor
    heard at that moment; the output opened ahead plays twice without opening again."""
    from sound_server import MonitorClock
    from specscope.compute.io import ArrayRecording
    from specscope.compute.playback import Player
    from specscope.compute.playback.held import HeldOutput

    server.apply(monkeypatch)
    fs = 96000
    t = np.arange(round(0.3 * fs)) / fs
    x = sum(0.2 * np.sin(2 * np.pi * f / 0.1 * t + k) for k, f in enumerate(PLAYED_HZ))
    rec = ArrayRecording(x.astype(np.float32)[:, None], fs)
    held = HeldOutput()
    held.prepare(48000.0)
    assert held.opens == 1 and held.is_open
    for trial in range(2):
        r = Renderer(rec, speed=0.1)
        with server.record(tmp_path / f"m{trial}.raw", MONITOR_MS) as mon:
            clock = MonitorClock(mon)
            p = Player(r, output=held, block=512)
            p.start()
            marks = []
            while not p.finished:
                now = time.monotonic()
                marks.append((now, p.position))
                time.sleep(0.01)
            p.stop()
            mon.wait_for(mon.frames() + RATE // 4)
            zero = clock.stop()
            y = mon.samples()[:, 0].astype(float)
        assert held.opens == 1 and not held.lent  # the same stream, started again
        assert p.dropouts == 0
        k = align(y, r.render())
        m = np.array(marks[10:-10], float)
        heard = np.clip((m[:, 0] - zero) * RATE - k, 0, r.length)
        err = np.abs(m[:, 1] - heard) / RATE
        print(f"trial {trial}: cursor error median {np.median(err) * 1e3:.1f} ms, "
              f"95th percentile {np.percentile(err, 95) * 1e3:.1f} ms")
        assert np.percentile(err, 95) < CURSOR_S
    held.close()
    assert not held.is_open


def test_a_device_that_goes_away_mid_playback_is_one_status_line(
        qtbot, tmp_path, monkeypatch, capfd):
    """The null sink is unloaded while the app plays into it: one status line, playback
    stops, no traceback; without a sink Space says so in one line; with one again it plays."""
    from PyQt6.QtCore import Qt
    from specscope.app.desktop.main_window import MainWindow
    from specscope.app.session import ViewSettings
    from specscope.compute import StftParams
    from specscope.compute.playback.system import quiet_stderr

    srv = SoundServer(tmp_path / "pulse")
    try:
        srv.apply(monkeypatch)
        wav = tones(tmp_path / "t.wav", 4.0, 1.0, fs=48000)
        w = MainWindow(ViewSettings(stft=StftParams(1024, 256)), interactive=False)
        qtbot.addWidget(w)
        w.show()
        with qtbot.waitSignal(w.imageShown, timeout=30000):
            w.open_path(wav)
        pb = w.playback
        qtbot.waitUntil(lambda: pb.backend().is_open, timeout=30000)

        def space():
            w.view.setFocus()
            qtbot.keyClick(w.view, Qt.Key.Key_Space)

        space()
        qtbot.waitUntil(lambda: pb.player is not None and pb.player.position > 4800,
                        timeout=30000)
        modules = subprocess.run(["pactl", "list", "short", "modules"], env=srv.env(),
                                 check=True, capture_output=True, text=True).stdout
        sink_module = next(line.split()[0] for line in modules.splitlines()
                           if "module-null-sink" in line)
        with qtbot.waitSignal(w.errorShown, timeout=10000):
            subprocess.run(["pactl", "unload-module", sink_module], env=srv.env(), check=True)
        assert w.last_error.startswith("Playback stopped: the audio output")
        assert "went away" in w.last_error and "\n" not in w.last_error
        assert pb.player is None and not pb.playing
        assert w.transport_bar.play_button.text().endswith("Play")
        # no sink at all: Space is one line, nothing plays
        with qtbot.waitSignal(w.errorShown, timeout=30000):
            space()
        assert w.last_error.startswith("Playback: ") and "\n" not in w.last_error
        assert pb.player is None and not pb.playing
        # a sink again: the app plays into it
        subprocess.run(["pactl", "load-module", "module-null-sink", f"sink_name={ss_.SINK}",
                        f"rate={RATE}", "channels=2"], env=srv.env(), check=True,
                       capture_output=True)
        with srv.record(tmp_path / "again.raw") as mon:
            space()
            qtbot.waitUntil(lambda: pb.player is not None and pb.player.position > 9600,
                            timeout=30000)
            qtbot.waitUntil(lambda: np.abs(mon.samples()[:, 0]).max(initial=0) > 0.1,
                            timeout=30000)
        pb.stop()
        w.worker.shutdown()
    finally:
        srv.close()
    # PortAudio's "Expression '...' failed" lines (its thread on the loss, its open without a
    # sink) went to the log, not to file descriptor 2
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Expression" not in err and "pa_linux_alsa" not in err, err
    assert any("pa_linux_alsa" in line for line in quiet_stderr.kept)


def test_the_volume_is_applied_after_the_limiter_and_mute_is_silence(
        server, tmp_path, monkeypatch):
    """A tone limited to the ceiling, played at 0, -6.02 and -20 dB and muted: the monitor's
    level follows the volume to within 0.5 dB (so it acts after the limiter: the limited
    peak comes down with it), and mute records silence."""
    from specscope.compute.io import ArrayRecording
    from specscope.compute.playback import Player

    server.apply(monkeypatch)
    fs = 48000
    t = np.arange(round(0.6 * fs)) / fs
    rec = ArrayRecording((0.5 * np.sin(2 * np.pi * 441.3 * t)).astype(np.float32)[:, None], fs)
    levels = {}
    for db in (0.0, -6.02, -20.0, None):  # None: muted
        r = Renderer(rec, gain_db=12.0)  # 2.0 before the limiter, 0.98 after
        with server.record(tmp_path / f"v{db}.raw") as mon:
            p = Player(r, volume=0.0 if db is None else 10 ** (db / 20))
            p.start()
            assert p.wait(30)
            p.stop()
            mon.wait_for(mon.frames() + RATE // 4)
            y = mon.samples()[:, 0].astype(float)
        levels[db] = y
    ref = Renderer(rec, gain_db=12.0).render()
    assert np.abs(ref).max() == pytest.approx(0.98, abs=0.005)  # the limiter acted
    full = levels[0.0]
    k = align(full, ref)
    core = slice(k + 4800, k + ref.size - 4800)
    rms0 = np.sqrt(np.mean(full[core] ** 2))
    for db in (-6.02, -20.0):
        y = levels[db]
        kk = align(y, ref)
        rms = np.sqrt(np.mean(y[kk + 4800:kk + ref.size - 4800] ** 2))
        assert 20 * np.log10(rms / rms0) == pytest.approx(db, abs=0.5)
        assert np.abs(y).max() == pytest.approx(0.98 * 10 ** (db / 20), rel=0.06)
    assert np.abs(levels[None]).max() < 1e-4


def test_every_thread_of_the_server_runs_in_the_real_time_class(server):
    """PulseAudio leaves its main thread (which asks the clients for sound and hands it to
    the sink's thread) at nice -11 in a session of its own; on a loaded machine it waited
    seconds to run and the sink played silence with the player's ring full."""
    probe = subprocess.run(["chrt", "-r", "1", "true"], check=False, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("the real-time class is not permitted here")
    tids = [int(t.name) for t in Path(f"/proc/{server.proc.pid}/task").iterdir()]
    policies = {tid: os.sched_getscheduler(tid) for tid in tids}
    assert server.proc.pid in policies
    assert all(p & ~os.SCHED_RESET_ON_FORK == os.SCHED_RR for p in policies.values()), policies


def test_the_apps_slow_playback_after_several_presses_has_no_gap_while_both_cores_are_busy(
        qtbot, server, tmp_path, monkeypatch, busy_cores):
    """Space pressed four times at x1, then a 20 s x0.1 playback of a 2 s 96 kHz recording
    from the window: no silence longer than 5 ms in the monitor, no dropout counted."""
    from PyQt6.QtCore import Qt
    from specscope.app.desktop.main_window import MainWindow
    from specscope.app.session import ViewSettings
    from specscope.compute import StftParams

    server.apply(monkeypatch)
    wav = tones(tmp_path / "t.wav", 2.0, 0.1)
    w = MainWindow(ViewSettings(stft=StftParams(1024, 256)), interactive=False)
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.imageShown, timeout=60000):
        w.open_path(wav)
    pb = w.playback
    qtbot.waitUntil(lambda: pb.backend().is_open, timeout=30000)

    def space():
        w.view.setFocus()
        qtbot.keyClick(w.view, Qt.Key.Key_Space)

    pb.transport.speed.setEditText("×1")
    for _ in range(4):
        space()
        qtbot.waitUntil(lambda: pb.player is not None and pb.player.position > 9600,
                        timeout=30000)
        space()
        qtbot.waitUntil(lambda: not pb.backend().lent, timeout=30000)
    pb.transport.speed.setEditText("0.1")
    dropouts = []
    with server.record(tmp_path / "slow.raw", MONITOR_MS) as mon:
        space()
        qtbot.waitUntil(lambda: pb.player is not None, timeout=30000)
        player = pb.player
        qtbot.waitUntil(lambda: pb.player is None, timeout=120000)
        dropouts.append(player.dropouts)
        mon.wait_for(mon.frames() + RATE // 2)
        left = mon.samples()[:, 0]
    w.worker.shutdown()
    gap = longest_gap(left) / RATE
    a, b = sound_span(left)
    print(f"app x0.1: longest gap {gap * 1e3:.2f} ms, heard {(b - a) / RATE:.3f} s, "
          f"dropouts {dropouts[0]}")
    assert gap <= MAX_GAP_S, f"a gap of {gap * 1e3:.1f} ms, {gap_at(left) / RATE:.3f} s in"
    assert abs((b - a) / RATE - 20.0) < 0.05
    assert dropouts == [0]
