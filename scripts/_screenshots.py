"""Make the documentation's screenshots: drive the real app under Xvfb, write docs/images/.

Started by ``scripts/screenshots``.  The app runs as its own process on an Xvfb
display with openbox, driven only by X input (``xdotool``) through the desktop
journeys' harness (``tests/journeys/harness.py``: :class:`App`, :class:`Display`);
where the parts of the window sit comes from the app's geometry report and from the
pixels of the screen.  Each picture is the main window's client area at
1600x1000 (no window frame), cropped from the screen; pictures above
:data:`MAX_BYTES` are reduced to 256 colours (pngquant, else ImageMagick).

    scripts/screenshots [--out DIR] [--keep DIR] [NAME ...]

NAME picks pictures by name (``window``, ``live``, ...; all by default); ``--keep``
keeps the apps' folders (their logs and geometry reports) in DIR.  When something
does not come in time, the screen at that moment and the app's log are kept and
named, and the script fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "journeys"))

from harness import SPECSCOPE, App, Display, missing_tools, write_png  # noqa: E402

#: size of every picture: the main window's client area
WIDTH, HEIGHT = 1600, 1000
#: room on the screen around the window for openbox's frame
MARGIN = 60
EXAMPLE = ROOT / "assets" / "examples" / "scene.wav"
OUT = ROOT / "docs" / "images"
#: a picture larger than this is reduced to 256 colours
MAX_BYTES = 400_000
#: the pictures, in the order they are made
NAMES = ("window", "layout-annotated", "transport", "filter-designer", "export-range",
         "selection", "review", "live", "deployment")
#: the chirp the selection is drawn over: 8.0-9.0 s, 6000 Hz down to 2200 Hz
#: (``CHIRPS`` in scripts/make_examples.py); the box leaves a margin around it
SELECT_BOX = ((7.85, 9.15), (1700.0, 6800.0))
#: an annotation made before: the down-sweep at 2.4-2.9 s, 7500 Hz down to 3000 Hz
ANNOTATE_BOX = ((2.3, 3.0), (2600.0, 8200.0), "down-sweep")
#: the lower edge of the Detect panel's band: above the example's hum (Hz)
DETECT_LOW_HZ = "1800"
#: the decisions taken before the review picture (accept, accept, reject)
REVIEW_KEYS = ("a", "a", "r")
#: the mains hum of the example (Hz), notched in the designer picture
HUM_HZ = 50.0
#: the designer picture's view: 0 Hz to this (the hum's harmonics apart)
DESIGNER_TOP_HZ = 3000.0
#: the speed typed into the transport bar, and the play cursor's time (s) at least
PLAY_SPEED, PLAY_TO_S = "0.5", 1.0
#: the live window's source
LIVE_SOURCE = "generator:chirp"
#: the generated deployment: files of this many seconds at this rate, the files after
#: which a gap (s) comes, and where the pointer rests (axis seconds)
SITE_FILE_S, SITE_RATE, SITE_FILES = 20, 16000, 36
SITE_GAPS = {11: 2 * 3600 + 13 * 60, 23: 26 * 3600}
SITE_POINTER_S = 261.0


# -- pictures ---------------------------------------------------------------------
@dataclass
class Picture:
    """A finished picture: its path and its pixels."""

    path: Path
    rgb: np.ndarray


class Pictures:
    """Writes the cropped pictures into ``out``, small, and remembers them."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.written: list[Path] = []
        out.mkdir(parents=True, exist_ok=True)

    def save(self, name: str, rgb: np.ndarray) -> Picture:
        if rgb.shape[:2] != (HEIGHT, WIDTH):
            raise RuntimeError(f"{name}: the picture is {rgb.shape[1]}x{rgb.shape[0]}, "
                               f"not {WIDTH}x{HEIGHT}")
        path = self.out / f"{name}.png"
        write_png(path, rgb)
        self.add(path)
        return Picture(path, rgb)

    def add(self, path: Path) -> None:
        """A picture written at ``path``: made small, said."""
        shrink(path)
        self.written.append(path)
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, flush=True)


def shrink(path: Path) -> None:
    """Rewrite ``path`` without metadata; to 256 colours when above :data:`MAX_BYTES`."""
    subprocess.run(["convert", str(path), "-strip", "-define", "png:compression-level=9",
                    str(path)], check=True, timeout=120)
    if path.stat().st_size <= MAX_BYTES:
        return
    if shutil.which("pngquant"):
        subprocess.run(["pngquant", "--force", "--strip", "--speed", "1", "--output", str(path),
                        "256", str(path)], check=True, timeout=120)
    else:
        subprocess.run(["convert", str(path), "-strip", "-colors", "256", str(path)],
                       check=True, timeout=120)


# -- the window -------------------------------------------------------------------
def client_rect(app: App, wid: str | None = None) -> tuple[int, int, int, int]:
    """Where a window's client area is on the screen (x, y, w, h), from ``xwininfo``.

    (``xdotool getwindowgeometry`` adds the window manager's frame offset to the
    position of a reparented window; ``xwininfo`` gives the absolute one.)
    """
    out = subprocess.run(["xwininfo", "-id", wid or app.window], capture_output=True,
                         text=True, check=True, timeout=30,
                         env={**os.environ, "DISPLAY": app.display.name}).stdout

    def value(label: str) -> int:
        return int(re.search(rf"{label}:\s*(-?\d+)", out).group(1))
    return (value("Absolute upper-left X"), value("Absolute upper-left Y"), value("Width"),
            value("Height"))


def crop(app: App, rgb: np.ndarray | None = None) -> np.ndarray:
    """The main window's client area, from ``rgb`` (a grab of the screen) or a new grab."""
    x, y, w, h = client_rect(app)
    rgb = app.grab() if rgb is None else rgb
    return np.ascontiguousarray(rgb[y:y + h, x:x + w])


def fit(app: App, wid: str | None = None) -> None:
    """Give a window's client area :data:`WIDTH` x :data:`HEIGHT` pixels, all on the screen."""
    wid = wid or app.window
    app.x("windowsize", "--sync", wid, str(WIDTH), str(HEIGHT), check=False)
    app.x("windowmove", "--sync", wid, str(MARGIN // 2), str(MARGIN // 2), check=False)

    def fitted():
        x, y, w, h = client_rect(app, wid)
        disp = app.display
        return ((w, h) == (WIDTH, HEIGHT) and x >= 0 and y >= 0
                and x + w <= disp.width and y + h <= disp.height)
    app.wait_for(fitted, f"the window to be {WIDTH}x{HEIGHT} on the screen")


def open_example(app: App, env: dict[str, str]) -> dict:
    """Start the app on the example, fit its window, wait for the image of the new size."""
    app.start(EXAMPLE, env=env)
    app.wait_window(r"^scene\.wav — specscope$")
    app.wait_image()
    before = app.settle()
    fit(app)
    app.wait_report(lambda q: q["plot"][2] != before["plot"][2],
                    "the spectrogram to fill the resized window")
    app.wait_image(after=before["images"])
    return quiet(app)


def quiet(app: App, timeout: float | None = None) -> dict:
    """Wait until the window's pixels are still (twice: a late repaint is waited for too)."""
    app.settle(timeout)
    return app.settle(timeout)


def status_seen(app: App, text: str, what: str) -> dict:
    """Wait until the status bar shows (or showed) a message containing ``text``."""
    return app.wait_report(lambda q: any(text in s for s in [q["status"], *q["status_seen"]]),
                           what)


def grab_box(app: App, box) -> np.ndarray:
    """The pixels of ``box`` (x, y, w, h, screen pixels) now."""
    x, y, w, h = box
    return app.grab()[y:y + h, x:x + w]


def drag_box(app: App, r: dict, span, band) -> None:
    """Ctrl+drag a box from (t0, f1) to (t1, f0) on the spectrogram."""
    (t0, t1), (f0, f1) = span, band
    app.drag(app.to_px(t0, f1, r), app.to_px(t1, f0, r), modifiers=("ctrl",))


def click_widget(app: App, name: str) -> None:
    """Click the middle of a control the geometry report knows, once it is on the screen."""
    q = app.wait_report(lambda q: (q["widgets"].get(name) or [-1, -1])[1] >= 0,
                        f"the control {name} to show")
    x, y, w, h = q["widgets"][name]
    app.click(x + w // 2, y + h // 2)


#: the play cursor's colour (widgets/spectrogram_view.py)
PLAY_CURSOR = (255, 90, 60)


def play_cursor_x(rgb: np.ndarray, box) -> int | None:
    """Screen x of the play cursor in ``rgb`` (the pixels of ``box``), or None."""
    near = (np.abs(rgb.astype(int) - PLAY_CURSOR).sum(axis=2) < 15).mean(axis=0)
    cols = np.flatnonzero(near > 0.5)
    return int(box[0] + cols.mean()) if cols.size else None


# -- where the parts of the window are ------------------------------------------
Box = tuple[int, int, int, int]


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of the runs of True in a 1-D mask."""
    m = np.concatenate([[0], np.asarray(mask, np.int8), [0]])
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(),
                    strict=True))


def _first(runs: list[tuple[int, int]], default: tuple[int, int]) -> tuple[int, int]:
    return runs[0] if runs else default


def layout(rgb: np.ndarray, r: dict, origin: tuple[int, int]) -> dict[str, Box]:
    """The parts of the main window in the picture ``rgb`` (x, y, w, h in its pixels).

    The spectrogram, the overview, the transport bar, the annotation list and the
    status bar come from the geometry report ``r`` (screen pixels; ``origin`` is
    where the picture's top left is on the screen); the parts the report does not
    name are found from the pixels beside those: the colour bar (the coloured
    columns right of the spectrogram), the spectrum (its axis line), the docks on
    the right (where the black of the central area ends, and the empty rows
    between the docks).
    """
    h_img, w_img, _ = rgb.shape
    img = rgb.astype(int)

    def local(box) -> Box:
        x, y, w, h = box
        return x - origin[0], y - origin[1], w, h

    px, py, pw, ph = local(r["plot"])
    ox, oy, ow, oh = local(r["overview"])
    _, ty, _, th = local(r["widgets"]["play"])
    toolbar = (ty - 5, ty + th + 5)
    _, ry, _, _ = local(r["readout_rect"])
    status_top = ry - 3
    band = img[py + ph // 8:py + ph - ph // 8]
    # the central area is black; the docks right of it and below it are a light grey
    light = (band.min(axis=2) > 170).mean(axis=0) > 0.9
    right = next((x for x in range(px + pw, w_img - 8) if light[x:x + 8].all()), w_img - 360)
    below = img[oy + oh:status_top, px + pw // 2].min(axis=1) > 170
    bottom = oy + oh + _first(_runs(below), (h_img - oy - oh, 0))[0]
    # the colour bar: the widest run of columns right of the plot coloured nearly all
    # the way down
    coloured = (band.max(axis=2) > 40).mean(axis=0) > 0.97
    runs = [(a, b) for a, b in _runs(coloured[:right]) if a >= px + pw]
    cb0, cb1 = max(runs, key=lambda ab: ab[1] - ab[0], default=(px + pw + 20, px + pw + 46))
    # ... and as tall as its coloured rows round the plot's middle
    bar = _runs((img[:, cb0 + 2:cb1 - 2].max(axis=2) > 0).all(axis=1))
    cby0, cby1 = next(((a, b) for a, b in bar if a <= py + ph // 2 < b), (py, py + ph))
    # the spectrum: its bottom axis is a grey line at the plot's bottom (the two share
    # the frequency axis), the longest right of the colour bar
    rows = img[py + ph - 3:py + ph + 3, cb1 + 10:right].max(axis=2) > 100
    axis = max(_runs(rows.any(axis=0)), key=lambda ab: ab[1] - ab[0],
               default=(20, right - cb1 - 14))
    sp0, sp1 = cb1 + 10 + axis[0], cb1 + 10 + axis[1]
    # the docks on the right: the first rows empty all across between the top dock
    # (Spectrogram, Processing, Detect) and the Selection dock
    column = img[:, right:]
    empty = (np.abs(column - column[:, :1]).max(axis=2) <= 2).all(axis=1)
    top = toolbar[1]
    gaps = [(a, b) for a, b in _runs(empty[top:bottom]) if b - a >= 3
            and 0.2 < a / (bottom - top) < 0.9]
    split0 = top + gaps[0][0] if gaps else (top + bottom) // 2
    split1 = split0
    for a, b in gaps:                                   # the splitter's handle parts the run
        if top + a - split1 <= 4:
            split1 = top + b
    return {
        "Menu bar": (0, 0, w_img, toolbar[0]),
        "Transport bar": (0, toolbar[0], w_img, toolbar[1] - toolbar[0]),
        "Spectrogram": (px, py, pw, ph),
        "Colour bar": (cb0, cby0, cb1 - cb0, cby1 - cby0),
        "Spectrum": (sp0, py, sp1 - sp0, ph),
        "Overview": (ox, oy, ow, oh),
        "Parameter panel": (right, top, w_img - right, split0 - top),
        "Selection": (right, split1, w_img - right, bottom - split1),
        "Annotations": (0, bottom, w_img, status_top - bottom),
        "Status bar": (0, status_top, w_img, h_img - status_top),
    }


#: the colour of the callouts; a white edge keeps them apart from any background
CALLOUT = "#d81b60"
FONT = "DejaVu-Sans-Bold"
FONT_SIZE = 14
#: height of a label
LABEL_H = FONT_SIZE + 10
#: height of a dock's title row (the label of a dock goes there, beside the title)
TITLE_H = 20
#: the parts labelled in their title row or their empty part, not in a corner
BESIDE = {"Menu bar", "Transport bar", "Parameter panel", "Selection", "Annotations",
          "Status bar"}


def _text_width(text: str) -> int:
    out = subprocess.run(["convert", "-font", FONT, "-pointsize", str(FONT_SIZE),
                          f"label:{text}", "-format", "%w", "info:"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return int(out)


def _free_spot(rgb: np.ndarray, box: Box, width: int, start: int = 8,
               margin: int = 12) -> int | None:
    """Left edge of the first ``width`` columns of ``box`` whose rows are each plain
    (``margin`` columns more either side), or None."""
    x0, y0, w, h = box
    rows = rgb[y0:y0 + h].astype(int)
    for x in range(x0 + start, x0 + w - width - 2 * margin, 2):
        patch = rows[:, x:x + width + 2 * margin]
        if patch.size and np.abs(patch - patch[:, :1]).max() <= 3:
            return x + margin
    return None


def callouts(rgb: np.ndarray, parts: dict[str, Box]) -> list[str]:
    """ImageMagick ``-draw`` arguments: a frame round each part, a numbered label on it.

    A bar's or a dock's label goes in the first empty stretch of the bar or of the
    dock's title row; a narrow part's across its middle; the others' in their top
    left corner.
    """
    height, width, _ = rgb.shape
    frames: list[str] = []
    labels: list[str] = []
    for n, (name, (x, y, w, h)) in enumerate(parts.items(), start=1):
        text = f"{n}  {name}"
        lw = _text_width(text) + 16
        if name in BESIDE:
            band = (x, y + 1, w, min(h - 2, TITLE_H))
            lx = _free_spot(rgb, band, lw)
            lx = x + 8 if lx is None else lx
            ly = band[1] + band[3] // 2 - LABEL_H // 2
        elif w < lw + 12:                               # across a narrow part, high up
            lx, ly = x + w // 2 - lw // 2, y + h // 4 - LABEL_H // 2
        else:
            lx, ly = x + 8, y + 8
        # round the part, on its edge: a frame inside would cover a dock's title
        x0, y0 = max(x - 2, 1), max(y - 2, 1)
        x1, y1 = min(x + w + 1, width - 2), min(y + h + 1, height - 2)
        frames += ["-fill", "none", "-stroke", "white", "-strokewidth", "4",
                   "-draw", f"rectangle {x0},{y0} {x1},{y1}",
                   "-stroke", CALLOUT, "-strokewidth", "2",
                   "-draw", f"rectangle {x0},{y0} {x1},{y1}"]
        labels += ["-fill", CALLOUT, "-stroke", "white", "-strokewidth", "1.5",
                   "-draw", f"roundrectangle {lx},{ly} {lx + lw},{ly + LABEL_H} 7,7",
                   "-fill", "white", "-stroke", "none", "-font", FONT,
                   "-pointsize", str(FONT_SIZE),
                   "-draw", f"text {lx + 8},{ly + FONT_SIZE + 4} '{text}'"]
    return frames + labels                              # the labels over every frame


# -- the pictures -----------------------------------------------------------------
class Session:
    """One run: the display, the apps started on it, the pictures written."""

    def __init__(self, pictures: Pictures, work: Path, wanted: set[str]) -> None:
        self.pictures, self.work, self.wanted = pictures, work, wanted
        self.display: Display | None = None
        self.apps: list[App] = []
        #: the environment that gives the apps a sound output (see :func:`sound_output`)
        self.sound_env: dict[str, str] = {"SPECSCOPE_AUDIO_OUTPUT": "fake"}

    def app(self) -> App:
        work = self.work / f"app{len(self.apps)}"
        work.mkdir(parents=True, exist_ok=True)
        app = App(self.display, work, work / "screens")
        self.apps.append(app)
        return app

    def want(self, *names: str) -> bool:
        return bool(self.wanted & set(names))

    def shot(self, app: App, name: str) -> Picture:
        """Save the main window as it is now as ``name``.png."""
        return self.pictures.save(name, crop(app))


def main_window(s: Session) -> None:
    """The pictures of the main window on the example, one after the other in one app."""
    app = s.app()
    r = open_example(app, s.sound_env)
    # the pointer over the down-sweep at 8 s: the readout, the crosshair, the spectrum
    app.move(*app.to_px(8.45, 3600.0, r))
    app.wait_report(lambda q: q["readout"].startswith("t ="), "the readout at the pointer")
    quiet(app)
    window = s.shot(app, "window")
    if s.want("layout-annotated"):
        annotate_layout(s, app, window, r)
    if s.want("export-range"):
        app.menu("f", "r")                                  # File › Export range…
        dlg = app.wait_window(r"^Export range")
        app.activate(dlg)
        quiet(app)
        s.shot(app, "export-range")
        app.key("Escape")
        app.wait_no_window(r"^Export range")
    if s.want("transport"):
        transport(s, app, r)
    if s.want("selection"):
        selection(s, app, r)
    app.stop()


def transport(s: Session, app: App, r: dict) -> None:
    """Playing at half speed: the transport bar, the play cursor, the status."""
    x, y, w, h = r["widgets"]["speed"]
    app.click(x + w // 3, y + h // 2, repeat=3)             # the speed's text
    app.type(PLAY_SPEED)
    app.key("Return")
    app.key("space")                                        # View › Play / stop
    status_seen(app, "Playing", "the playback to start")
    box = r["plot"]
    goal = app.to_px(PLAY_TO_S, 0.0, r)[0]
    app.wait_for(lambda: (play_cursor_x(grab_box(app, box), box) or 0) >= goal,
                 f"the play cursor to pass {PLAY_TO_S} s", interval=0.05)
    s.shot(app, "transport")
    app.key("space")
    app.wait_for(lambda: play_cursor_x(grab_box(app, box), box) is None,
                 "the playback to stop")
    quiet(app)


def selection(s: Session, app: App, r: dict) -> None:
    """An annotation made with Enter, then a box selected and measured."""
    span, band, label = ANNOTATE_BOX
    box = client_rect(app)
    before = grab_box(app, box)
    drag_box(app, r, span, band)
    app.key("Return")                                       # Edit › Annotate selection
    app.type(label)
    app.key("Return")
    app.wait_change(box, before, "the annotation to be drawn and listed")
    quiet(app)
    span, band = SELECT_BOX
    before = grab_box(app, box)
    drag_box(app, r, span, band)
    app.wait_change(box, before, "the selection to be drawn and measured")
    app.move(*app.to_px(8.3, 4300.0, r))                    # on the chirp in the box
    quiet(app)
    s.shot(app, "selection")


def designer(s: Session) -> None:
    """The filter designer with a notch on the hum, clicked on its line in a zoomed view."""
    app = s.app()
    r = open_example(app, s.sound_env)
    x0, _, w, _ = r["plot"]
    app.key("z")                                            # View › Zoom box
    app.drag((x0 + 2, app.to_px(0.0, DESIGNER_TOP_HZ, r)[1]),
             (x0 + w - 2, app.to_px(0.0, 0.0, r)[1]))
    r = app.wait_report(lambda q: q["f"][1] < 1.5 * DESIGNER_TOP_HZ,
                        f"the view to show 0-{DESIGNER_TOP_HZ:g} Hz")
    app.key("z")                                            # back to panning
    quiet(app)
    app.key("ctrl+f")                                       # View › Filter designer
    r = app.wait_report(lambda q: q["plot"][3] < r["plot"][3] - 50, "the designer to open")
    r = quiet(app)
    n = r["images"]
    app.key("n")                                            # click a line to notch it
    app.click(*app.to_px(12.5, HUM_HZ, r))
    status_seen(app, "harmonics", "the notch to be added")
    n = app.wait_image(after=n)["images"]                  # the view after the notch
    app.key("Home")                                         # View › Home (whole recording)
    r = app.wait_report(lambda q: q["f"][1] > 20000.0 and q["images"] > n,
                        "the whole recording's image")
    app.move(*app.to_px(10.9, 3000.0, r))                   # on the hook at 10.5 s
    quiet(app)
    s.shot(app, "filter-designer")
    app.stop()


def review(s: Session) -> None:
    """Detections of the energy detector on the example, reviewed by keys."""
    app = s.app()
    open_example(app, s.sound_env)
    app.key("ctrl+shift+d")                                 # Detect › Detect panel
    click_widget(app, "detect_band_low")
    app.key("ctrl+a")
    app.type(DETECT_LOW_HZ)
    app.key("Tab")
    click_widget(app, "detect_run")
    q = status_seen(app, "detections by detect.energy", "the detections")
    seen = " ".join([q["status"], *q["status_seen"]])
    n = int(re.search(r"(\d+) detections by detect\.energy", seen).group(1))
    quiet(app)
    app.key("ctrl+r")                                       # Detect › Review detections
    app.wait_report(lambda q: f"detection 1 of {n}" in q["status"], "review to start")
    for k, key in enumerate(REVIEW_KEYS):
        app.key(key)
        app.wait_report(lambda q, k=k: f"detection {k + 2} of {n}" in q["status"],
                        f"review to show detection {k + 2} of {n}")
    quiet(app)
    s.shot(app, "review")
    app.stop()


def make_site(folder: Path) -> Path:
    """A generated deployment: :data:`SITE_FILES` files named by their start times, calls
    (down-sweeps and whistles) in noise, with the gaps of :data:`SITE_GAPS`."""
    from datetime import datetime, timedelta

    import soundfile

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(40)
    n = SITE_FILE_S * SITE_RATE
    t0, gap = datetime(2024, 5, 1, 5, 40, 0), 0
    for k in range(SITE_FILES):
        x = 0.01 * rng.standard_normal(n)
        for _ in range(rng.integers(2, 6)):
            dur = rng.uniform(0.15, 0.6)
            m = int(dur * SITE_RATE)
            i = rng.integers(0, n - m)
            tt = np.arange(m) / SITE_RATE
            f0, f1 = rng.uniform(2500, 6500), rng.uniform(1500, 5000)
            phase = 2 * np.pi * (f0 * tt + (f1 - f0) * tt ** 2 / (2 * dur))
            x[i:i + m] += rng.uniform(0.05, 0.3) * np.sin(phase) * np.hanning(m)
        when = t0 + timedelta(seconds=k * SITE_FILE_S + gap)
        soundfile.write(str(folder / when.strftime("%Y%m%d_%H%M%S.wav")),
                        x.astype(np.float32), SITE_RATE, subtype="PCM_16")
        gap += SITE_GAPS.get(k, 0)
    return folder


def deployment(s: Session) -> None:
    """A folder of recordings opened as one timeline: dates, gaps, the file under the
    pointer."""
    app = s.app()
    site = make_site(s.work / "site")
    app.start(site, env=s.sound_env)
    app.wait_window(r"^site — specscope$")
    app.wait_image()
    before = app.settle()
    fit(app)
    app.wait_report(lambda q: q["plot"][2] != before["plot"][2],
                    "the spectrogram to fill the resized window")
    app.wait_image(after=before["images"])
    r = quiet(app)
    app.move(*app.to_px(SITE_POINTER_S, 3000.0, r))
    app.wait_report(lambda q: ".wav +" in q["readout"], "the readout naming the file")
    quiet(app)
    s.shot(app, "deployment")
    app.stop()


def live(s: Session) -> None:
    """``specscope live --source generator:chirp``, once its waterfall is full."""
    app = s.app()
    cmd = [SPECSCOPE, "live", "--source", LIVE_SOURCE]
    with open(app.log_path, "ab") as log:
        app.proc = subprocess.Popen(cmd, env=app.env(s.sound_env), stdout=log, stderr=log,
                                    cwd=str(app.workdir))
    app.window = app.wait_window(r"^specscope live")
    fit(app)
    seen = {"left": None}

    def full() -> bool:
        # the waterfall grows from the right until it spans the plot: its left edge
        # stops moving (the view's black is (0, 0, 0), the image's darkest (0, 0, 4))
        left = waterfall_left(crop(app))
        was, seen["left"] = seen["left"], left
        return left is not None and left == was
    app.wait_for(full, "the live waterfall to fill the window", interval=0.5)
    # the pointer on the sweep: the crosshair, and the readout in the status bar
    x, y, w, h = client_rect(app)
    status = (x, y + h - 24, w, 24)
    before = grab_box(app, status)
    app.move(x + w * 0.45, y + h * 0.45)
    app.wait_change(status, before, "the readout at the pointer")
    s.shot(app, "live")
    app.stop()


def waterfall_left(rgb: np.ndarray) -> int | None:
    """Left edge of the live waterfall in a picture of the live window, or None."""
    h, w, _ = rgb.shape
    drawn = (rgb[h // 4:3 * h // 4].max(axis=2) > 0).mean(axis=0) > 0.98
    runs = [(a, b) for a, b in _runs(drawn) if b - a > w // 4]
    return runs[0][0] if runs else None


def sound_output(work: Path):
    """A private sound server (tests/sound_server.py) to play to, or None without one."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import sound_server
    except ImportError:
        return None
    if not sound_server.available():
        return None
    try:
        return sound_server.SoundServer(work / "pulse")
    except (OSError, RuntimeError, subprocess.SubprocessError):
        return None


def annotate_layout(s: Session, app: App, window: Picture, r: dict) -> None:
    """window.png with its parts framed and labelled (layout-annotated.png)."""
    x, y, _, _ = client_rect(app)
    parts = layout(window.rgb, r, (x, y))
    raw = s.work / "window-raw.png"
    write_png(raw, window.rgb)
    out = s.pictures.out / "layout-annotated.png"
    subprocess.run(["convert", str(raw), *callouts(window.rgb, parts), str(out)],
                   check=True, timeout=120)
    s.pictures.add(out)


# -- the run ----------------------------------------------------------------------
STEPS: tuple[tuple[tuple[str, ...], Callable[[Session], None]], ...] = (
    (("window", "layout-annotated", "transport", "export-range", "selection"), main_window),
    (("filter-designer",), designer),
    (("review",), review),
    (("live",), live),
    (("deployment",), deployment),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(NAMES)}")
    ap.add_argument("--out", type=Path, default=OUT, help="folder of the pictures (docs/images)")
    ap.add_argument("--keep", type=Path, help="keep the apps' logs and screens here")
    args = ap.parse_args(argv)
    unknown = set(args.names) - set(NAMES)
    if unknown:
        ap.error(f"no picture named {', '.join(sorted(unknown))} (of {', '.join(NAMES)})")
    missing = missing_tools()
    if missing:
        print(f"screenshots: {', '.join(missing)} missing (Debian: apt-get install xvfb "
              "xdotool imagemagick x11-utils openbox)", file=sys.stderr)
        return 2
    wanted = set(args.names or NAMES)
    if "layout-annotated" in wanted:
        wanted.add("window")
    started = time.monotonic()
    work = args.keep or Path(tempfile.mkdtemp(prefix="specscope-screenshots-"))
    work.mkdir(parents=True, exist_ok=True)
    s = Session(Pictures(args.out), work, wanted)
    s.display = Display.start(WIDTH + MARGIN, HEIGHT + MARGIN)
    server = sound_output(work) if s.want("transport") else None
    if server is not None:      # a sound output named as on a desktop, not "fake output"
        s.sound_env = {"PULSE_SERVER": server.env()["PULSE_SERVER"],
                       "SPECSCOPE_AUDIO_DEVICE": "pulse", "SPECSCOPE_AUDIO_OUTPUT": ""}
    failed = True
    try:
        for names, step in STEPS:
            if wanted & set(names):
                step(s)
        failed = False
    except Exception:
        for app in s.apps:
            if app.alive():
                shot = app.screenshot("at-failure")
                print(f"screenshots: the screen when it failed: {shot.path}", file=sys.stderr)
            print(f"screenshots: the app's log: {app.log_path}\n{app.log()[-3000:]}",
                  file=sys.stderr)
        raise
    finally:
        for app in s.apps:
            app.stop()
        s.display.stop()
        if server is not None:
            server.close()
        if args.keep is None and not failed:
            shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots: {len(s.pictures.written)} pictures in "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
