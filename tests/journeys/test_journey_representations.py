"""Journey 5: every representation renders.

A person opens a 20 s, 48 kHz recording and walks View › Representation through every
shipped view (Constant-Q, Mel spectrogram, MFCC, Multitaper, Reassigned, Morlet
scalogram) with the keyboard.  Each must show its image (the app's geometry report
counts the images drawn) and the plot's pixels must change from the previous view.
The time from the key press to the image is measured and printed, never asserted
strictly (the machine may be loaded); the bound is the harness's generous timeout.
"""

from __future__ import annotations

import time

import numpy as np
import soundfile

FS = 48000
#: View › Representation: each view and its Alt key in the menu
VIEWS = {"Constant-Q": "c", "Mel spectrogram": "m", "MFCC": "f",
         "Multitaper spectrogram": "u", "Reassigned spectrogram": "r", "Morlet scalogram": "o"}


def _sweep(path):
    t = np.arange(20 * FS) / FS
    x = 0.3 * np.sin(2 * np.pi * (200 + 400 * t) * t) \
        + 0.02 * np.random.default_rng(0).standard_normal(t.size)
    soundfile.write(str(path), x.astype(np.float32), FS, subtype="FLOAT")


def test_every_representation_renders(launch, tmp_path):
    path = tmp_path / "sweep20.wav"
    _sweep(path)
    app = launch(path)
    app.wait_window(r"^sweep20\.wav — specscope$")
    r = app.wait_image()
    r = app.settle()
    x, y, w, h = r["plot"]
    box = (x, y, w, h)
    before = app.screenshot("stft").crop(box)
    figures = []
    for title, key in VIEWS.items():
        n = app.report()["images"]
        app.menu("v", "r")                      # View › Representation
        start = time.perf_counter()
        app.key(key)
        app.wait_image(after=n, timeout=120)
        seconds = time.perf_counter() - start
        now = app.wait_change(box, before, f"the {title} image to differ from the last")
        shot = app.screenshot(title.replace(" ", "-").lower())
        figures.append(f"{title} {seconds:.2f} s")
        # an image fills the plot: not one colour
        crop = shot.crop(box)
        assert crop.reshape(-1, 3).std(axis=0).max() > 5, title
        before = now
    print("time to first image: " + ", ".join(figures))
