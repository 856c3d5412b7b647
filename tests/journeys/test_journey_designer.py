"""Journey 4: the filter designer docked, at 1600x1000 and at 1280x800.

A person opens a recording and shows the filter designer (Ctrl+F).  The window must
stay on the screen (before, the designer's height pushed the window to 1221 px on a
1000 px screen, its status bar and the designer's verdict off the bottom), and the
dock must not move when the status message changes (it jumped ~80 px, so clicks
landed on the wrong control): the designer's pixels before and after a zoom (which
writes a new status message) are compared, and the vertical shift between them is
measured.  What the verdict and summary say, and that they are whole, is checked on
the real widgets in tests/app/desktop/test_gui_designer_dock.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import Shot

EXAMPLE = Path(__file__).resolve().parents[2] / "assets" / "examples" / "scene.wav"


def _shift(a: np.ndarray, b: np.ndarray, most: int = 150) -> int:
    """The vertical shift (pixels) that best maps ``a`` onto ``b`` (row profiles)."""
    pa, pb = a.astype(float).mean(axis=(1, 2)), b.astype(float).mean(axis=(1, 2))
    best, where = np.inf, 0
    for s in range(-most, most + 1):
        x, y = (pa[s:], pb[:len(pb) - s]) if s >= 0 else (pa[:s], pb[-s:])
        err = np.mean(np.abs(x - y)) if len(x) > len(pa) // 3 else np.inf
        if err < best:
            best, where = err, s
    return where


@pytest.mark.parametrize("small", [False, True], ids=["1600x1000", "1280x800"])
def test_designer_docked_stays_on_screen_and_still(launch, display_small, small):
    disp = display_small if small else None
    app = launch(EXAMPLE, display=disp)
    screen_h = (disp or app.display).height
    app.wait_window(r"^scene\.wav — specscope$")
    app.wait_image()
    app.settle()
    app.key("ctrl+f")                               # View › Filter designer
    r = app.settle()
    x, y, w, h = app.window_geometry()
    shot = app.screenshot("designer-docked")
    assert y + h <= screen_h, f"the window reaches y={y + h} on a {screen_h} px screen"
    # the designer and the annotation list: below the overview strip, above the status bar
    _, oy, _, oh = r["overview"]
    box = (x, oy + oh + 30, w, y + h - 40 - (oy + oh + 30))
    assert box[3] > 100, f"no room under the spectrogram: {box}"
    before = shot.crop(box)
    px, py = app.to_px(3.0, 2000.0, r)
    n = r["images"]
    app.wheel(px, py, 2)                            # zoom: a new status message
    app.wait_image(after=n)
    after_shot = app.screenshot("after-status-message")
    after = Shot(after_shot.rgb, after_shot.path).crop(box)
    shift = _shift(before, after)
    changed = np.any(before != after, axis=-1).mean()
    print(f"{disp.name if disp else app.display.name}: window {w}x{h} at y={y}, dock shift "
          f"{shift} px, {changed * 100:.2f} % of the dock area changed")
    assert shift == 0, f"the docks moved {shift} px when the status message changed"
    assert changed < 0.02
