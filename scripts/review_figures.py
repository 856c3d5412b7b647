"""How fast review mode draws the next detection: key press to the next image drawn.

Opens a generated 40 s, 32 kHz recording with 25 calls in the desktop window (offscreen,
or on the X display in $DISPLAY with ``--xcb``), runs the energy detector, starts review
and presses N (next) for every detection, waiting each time for the view's next image.
Prints the time from the key press to that image (median, 90th percentile, worst) as
review mode measures it (``ReviewMode.draw_ms``), and the same through the key event.

    .venv/bin/python scripts/review_figures.py [--xcb]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xcb", action="store_true", help="draw on $DISPLAY instead of offscreen")
    args = ap.parse_args()
    os.environ["QT_QPA_PLATFORM"] = "xcb" if args.xcb else "offscreen"
    os.environ.setdefault("SPECSCOPE_AUDIO_OUTPUT", "fake")
    import soundfile
    from PyQt6.QtCore import Qt
    from PyQt6.QtTest import QTest
    from PyQt6.QtWidgets import QApplication
    from specscope.app.desktop.main_window import MainWindow
    from specscope.app.session import ViewSettings
    from specscope.compute.detect import synth
    from specscope.compute.spectral import StftParams

    app = QApplication.instance() or QApplication(sys.argv)
    fs = 32000
    plan = synth.plan_calls(40.0, float(fs), 25, snr_db=(10.0, 20.0), seed=11,
                            hum_amplitude=0.05)
    folder = Path(tempfile.mkdtemp())
    path = folder / "calls.wav"
    soundfile.write(str(path), synth.render_all(plan).astype(np.float32), fs, subtype="FLOAT")
    w = MainWindow(ViewSettings(stft=StftParams(1024, 256)), interactive=False)
    w.resize(1400, 900)
    w.show()
    images = []
    w.imageShown.connect(lambda: images.append(time.perf_counter()))

    def wait(cond, what, timeout=60.0):
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise SystemExit(f"timed out waiting for {what}")
            QTest.qWait(1)

    w.open_path(path)
    wait(lambda: images, "the first image")
    det = w.detection
    det.run("detect.energy", {"band_low_hz": 2500.0, "band_high_hz": 12500.0})
    wait(lambda: det.review is not None, "the detections")
    wait(lambda: not w.worker.is_busy() and w.worker.active() == 0, "the compute thread")
    n = len(det.review)
    det.mode.start(0)
    wait(lambda: det.mode.draw_ms, "the first detection drawn")
    det.mode.draw_ms.clear()
    outside = []
    for _ in range(n - 1):
        before = len(images)
        t0 = time.perf_counter()
        QTest.keyClick(w.view, Qt.Key.Key_N)
        wait(lambda b=before: len(images) > b, "the next image")
        outside.append((images[before] - t0) * 1e3)
        QTest.qWait(20)  # a person's next key comes later than this
    inside = np.array(det.mode.draw_ms)
    out = np.array(outside)
    print(f"{n} detections, {len(out)} steps, platform {os.environ['QT_QPA_PLATFORM']}")
    for name, v in (("show() to image", inside), ("key press to image", out)):
        print(f"  {name:20s} median {np.median(v):6.1f} ms  p90 {np.percentile(v, 90):6.1f} ms"
              f"  max {v.max():6.1f} ms")
    w.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
