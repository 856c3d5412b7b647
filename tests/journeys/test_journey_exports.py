"""Journey 8: the overview and the exports.

A person opens a stereo recording, zooms in and clicks the overview strip: the view
moves there.  File › Export range… with a WAV name exports every channel (the view
shows channel 0) as 32-bit float; the next Export range… starts in the same folder
with the same format, so accepting it at once writes a second WAV beside the first.
Export view as PNG twice, with the mouse at two places over the spectrogram, gives
the same picture: no cursor is baked in.
"""

from __future__ import annotations

import numpy as np
import soundfile
from harness import read_png_rgb

FS = 16000


def _export_range(app, name=None):
    app.menu("f", "r")                          # File › Export range…
    dlg = app.wait_window(r"^Export range")
    app.activate(dlg)
    if name is not None:
        app.key("ctrl+a")
        app.type(str(name))
    app.key("Return")
    app.wait_no_window(r"^Export range")


def _export_png(app, path):
    app.key("ctrl+p")                           # File › Export view as PNG…
    dlg = app.wait_window(r"PNG")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(path))
    app.key("Return")
    app.wait_no_window(r"PNG")
    return app.wait_file(path)


def test_overview_and_exports(launch, tmp_path):
    t = np.arange(4 * FS) / FS
    x = np.stack([0.5 * np.sin(2 * np.pi * 1000 * t), 0.25 * np.sin(2 * np.pi * 3000 * t)], 1)
    path = tmp_path / "stereo.wav"
    soundfile.write(str(path), x.astype(np.float32), FS, subtype="FLOAT")
    app = launch(path)
    app.wait_window(r"^stereo\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    px, py = app.to_px(0.5, 2000.0, r)
    app.wheel(px, py, 4)                        # zoom in
    r = app.wait_report(lambda q: q["t"][1] - q["t"][0] < 3.0, "the view to zoom in")
    width = r["t"][1] - r["t"][0]
    app.click(*app.overview_px(3.0, r))          # a click on the overview at 3 s
    r = app.wait_report(lambda q: abs((q["t"][0] + q["t"][1]) / 2 - min(3.0, 4 - width / 2))
                        < 0.05 * width, "the view to move to 3 s")
    print(f"overview click at 3.00 s: view {r['t'][0]:.2f}–{r['t'][1]:.2f} s")
    app.screenshot("moved")

    folder = tmp_path / "exports"
    folder.mkdir()
    first = folder / "part.wav"
    _export_range(app, first)
    app.wait_file(first)
    info = soundfile.info(str(first))
    assert (info.channels, info.subtype) == (2, "FLOAT")
    back, _ = soundfile.read(str(first), always_2d=True)
    # the visible span, as the dialog writes it (to the millisecond)
    a = round(round(r["t"][0], 3) * FS)
    assert abs(len(back) - width * FS) <= 0.002 * FS + 1
    np.testing.assert_allclose(back[:100], x[a:a + 100], atol=1e-6)
    _export_range(app)                          # accepted as it opens
    second = app.wait_file(folder / "stereo-range.wav")
    assert soundfile.info(str(second)).channels == 2

    r = app.settle()
    app.move(*app.to_px(r["t"][0] + 0.3 * width, 1000.0, r))
    one = _export_png(app, folder / "one.png")
    app.move(*app.to_px(r["t"][0] + 0.7 * width, 5000.0, r))
    two = _export_png(app, folder / "two.png")
    a, b = read_png_rgb(one), read_png_rgb(two)
    assert a.shape == b.shape
    differ = np.any(a != b, axis=-1).mean()
    print(f"PNG exports with the mouse at two places differ in {differ * 100:.3f} % of pixels")
    assert differ < 0.001
