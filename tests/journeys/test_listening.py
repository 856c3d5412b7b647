"""Journey: listen slowed down, through a real sound server.

A person types a speed into the transport bar, presses Space and hears the recording
time-expanded: a private PulseAudio's null sink (tests/sound_server.py) stands in for the
sound card and its monitor is recorded. The recorded sound must be the tone at a quarter
of its pitch, four times as long, with no gap.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from scipy import signal as ss

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sound_server

TONE_HZ = 1000.0
SECONDS = 2.0
SPEED = 0.25


def test_typed_speed_then_space_plays_time_expanded(launch, tmp_path):
    if not sound_server.available():
        pytest.skip(sound_server.MISSING)
    server = sound_server.SoundServer(tmp_path / "pulse")
    try:
        wav = tmp_path / "tone.wav"
        t = np.arange(int(48000 * SECONDS)) / 48000
        soundfile.write(str(wav), (0.3 * np.sin(2 * np.pi * TONE_HZ * t)).astype(np.float32),
                        48000, subtype="FLOAT")
        env = server.env()
        app = launch(wav, env={"PULSE_SERVER": env["PULSE_SERVER"],
                               "SPECSCOPE_AUDIO_DEVICE": "pulse", "SPECSCOPE_AUDIO_OUTPUT": ""})
        app.wait_image()
        q = app.report()
        sx, sy, sw, sh = q["widgets"]["speed"]
        with server.record(tmp_path / "monitor.f32") as rec:
            app.click(sx + sw // 3, sy + sh // 2, repeat=3)   # select the combo's text
            app.type(str(SPEED))
            app.key("Return")
            app.key("space")
            q = app.wait_report(lambda r: any(f"×{SPEED:g}" in m and "Playing" in m
                                              for m in r["status_seen"]),
                                "the status to say it plays at the typed speed")
            played = SECONDS / SPEED
            # the whole expanded sound and a second more, on the sink's own clock
            rec.wait_for(int(sound_server.RATE * (played + 3.0)), timeout=120)
            x = rec.samples()[:, 0].astype(np.float64)
        app.screenshot("after-playing")
    finally:
        server.close()
    a, b = sound_server.sound_span(x)
    heard = (b - a) / sound_server.RATE
    assert abs(heard - played) < 0.1, (heard, played, q["status_seen"])
    f, p = ss.welch(x[a:b], sound_server.RATE, nperseg=1 << 15)
    peak = f[np.argmax(p)]
    assert abs(peak - TONE_HZ * SPEED) < 2.0, peak
    gap_ms = 1000 * sound_server.longest_gap(x) / sound_server.RATE
    assert gap_ms <= 5.0, f"a gap of {gap_ms:.1f} ms in the time-expanded sound"
