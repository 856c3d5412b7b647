"""Time to first sound and the play cursor's error, through a private PulseAudio null sink.

Run: ``.venv/bin/python scripts/listening_figures.py`` (needs pulseaudio, parec,
libportaudio2, libasound2-plugins and sounddevice).  The monitor's recording is
read while it grows: its frame count at a moment, less the frames at the start,
is the sink's clock; parec's own latency (20 ms asked) is not subtracted, so the
figures are upper bounds.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from sound_server import RATE, SoundServer, align, sound_span


def main() -> None:
    root = Path(tempfile.mkdtemp())
    srv = SoundServer(root / "pulse")
    os.environ.update(srv.env())
    from specscope.compute.io import ArrayRecording
    from specscope.compute.playback import Player, Renderer

    fs = 96000
    t = np.arange(2 * fs) / fs
    x = sum(0.2 * np.sin(2 * np.pi * f / 0.1 * t + k) for k, f in enumerate((441.3, 1003.7)))
    rec = ArrayRecording(x.astype(np.float32)[:, None], fs)
    firsts, errors = [], []
    for trial in range(3):
        r = Renderer(rec, 0.0, 0.3 if trial else 2.0, speed=0.1)
        with srv.record(root / f"m{trial}.raw") as mon:
            n0 = mon.samples().shape[0]
            t0 = time.monotonic()
            p = Player(r)
            p.start()
            marks = []  # (frames recorded, cursor s) sampled while playing
            while not p.finished:
                marks.append((mon.samples().shape[0], p.position_s))
                time.sleep(0.016)
            p.stop()
            mon.wait_for(mon.samples().shape[0] + RATE // 4)
        y = mon.samples()[:, 0].astype(float)
        a, _ = sound_span(y)
        k = align(y[max(0, a - 4800):], r.render()) + max(0, a - 4800)
        firsts.append((k - n0) / RATE)
        if trial == 0:
            m = np.array(marks[5:-5], float)
            heard = r.position_of(np.clip(m[:, 0] - k, 0, r.length))
            errors = np.abs(m[:, 1] - heard) / r.speed * 1e3  # output ms
            print(f"latency reported {p.latency_s * 1e3:.0f} ms, dropouts {p.dropouts}")
        print(f"trial {trial}: first sound {firsts[-1] * 1e3:.0f} ms after Player() "
              f"(the first in a process opens PortAudio); {time.monotonic() - t0:.1f} s in all")
    srv.close()
    print(f"time to first sound: median {np.median(firsts) * 1e3:.0f} ms "
          f"(max {max(firsts) * 1e3:.0f} ms)")
    out_ms = errors
    print(f"cursor vs sound over a x0.1 playback: median {np.median(out_ms):.1f} ms, "
          f"95th percentile {np.percentile(out_ms, 95):.1f} ms, max {out_ms.max():.1f} ms "
          "(output time; parec's latency included)")


if __name__ == "__main__":
    main()
