"""How fast review mode draws the next detection: key press to the next image drawn.

Opens a generated 97 s, 32 kHz recording with 60 calls in the desktop window (offscreen,
or on the X display in $DISPLAY with ``--xcb``), runs the energy detector, starts review
and presses N (next) for every detection, waiting each time for the view's next image
and then for the view to be painted with it.  A person's next key comes ``--pause`` ms
after the image (20 ms: faster than anyone reads a detection, so the next detection's
view, which review renders ahead while one is looked at, is often still being
rendered when the key comes).  Prints, over the steps (median, 90th percentile,
slowest):

* show() to image: review mode's own measure (``ReviewMode.draw_ms``), from showing a
  detection to the view controller's ``imageShown``;
* key press to image: the same from the key event;
* key press to painted: from the key event to the end of the view's first paint
  after the image (the view's ``paintEvent`` is timed by wrapping it);
* paints of the view per step, from a key to the next (one when nothing is drawn twice);

and the load of the machine (``/proc/loadavg``) before and after.

    .venv/bin/python scripts/review_figures.py [--xcb] [--calls N] [--pause MS]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _load() -> str:
    with open("/proc/loadavg", encoding="ascii") as f:
        return " ".join(f.read().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xcb", action="store_true", help="draw on $DISPLAY instead of offscreen")
    ap.add_argument("--calls", type=int, default=60, help="calls in the recording (60)")
    ap.add_argument("--pause", type=float, default=20.0,
                    help="ms between an image and the next key (20)")
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
    from specscope.widgets.spectrogram_view import SpectrogramView

    painted: list[float] = []
    paint = SpectrogramView.paintEvent

    def timed_paint(view, event):
        paint(view, event)
        painted.append(time.perf_counter())

    SpectrogramView.paintEvent = timed_paint
    app = QApplication.instance() or QApplication(sys.argv)
    fs = 32000
    duration = 1.6 * args.calls + 1.0
    plan = synth.plan_calls(duration, float(fs), args.calls, snr_db=(10.0, 20.0), seed=11,
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
    load_before = _load()
    to_image, to_paint, paints = [], [], []
    QTest.qWait(int(args.pause))  # the first key comes as late after its image as the others
    for _ in range(n - 1):
        before, painted_before = len(images), len(painted)
        t0 = time.perf_counter()
        QTest.keyClick(w.view, Qt.Key.Key_N)
        wait(lambda b=before: len(images) > b, "the next image")
        shown = images[before]
        wait(lambda s=shown: painted and painted[-1] > s, "the view painted")
        to_image.append((shown - t0) * 1e3)
        to_paint.append((next(p for p in painted if p > shown) - t0) * 1e3)
        QTest.qWait(int(args.pause))  # a person's next key comes later than this
        paints.append(len(painted) - painted_before)
    print(f"{n} detections, {len(to_image)} steps, platform {os.environ['QT_QPA_PLATFORM']}, "
          f"window {w.width()}x{w.height()}, pause {args.pause:g} ms, "
          f"load {load_before} before, {_load()} after (/proc/loadavg, 2 cores)")
    for name, v in (("show() to image", np.array(det.mode.draw_ms)),
                    ("key press to image", np.array(to_image)),
                    ("key press to painted", np.array(to_paint))):
        print(f"  {name:22s} median {np.median(v):6.1f} ms  p90 {np.percentile(v, 90):6.1f} ms"
              f"  max {v.max():6.1f} ms")
    print(f"  paints of the view per step: {np.mean(paints):.2f} (most {max(paints)})")
    w.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
