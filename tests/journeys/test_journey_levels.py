"""Journey: long-term sound levels of a deployment in the Levels panel.

A person opens a deployment (48 ten-second WAVs an hour apart over two days, a 500 Hz
tone louder by day than by night), opens View › Compute levels… with the mouse (the View
menu on the menu bar, then the entry), clicks Compute, looks at the LTSA, the band levels,
the SPD and the day x hour plot in turn (each a different picture, none washed out), and
exports the day x hour plot as CSV through the save dialog: its first line names the
unit, its rows are the 48 hours recorded.  Both at 1600x1000 and
at 1280x800.
"""

from __future__ import annotations

import csv
from datetime import datetime, timedelta

import numpy as np
import pytest
import soundfile
from harness import App
from specscope.app.desktop.actions import ACTIONS, VIEW

RATE = 8000
N_FILES = 48
T0 = datetime(2024, 5, 1, 12, 0, 0)
#: grey level below which a pixel is taken as text (menus: dark text on a light ground)
DARK = 150


def _loud(hour: int) -> bool:
    return 8 <= hour < 20


def _site(folder):
    folder.mkdir()
    rng = np.random.default_rng(5)
    t = np.arange(10 * RATE) / RATE
    for k in range(N_FILES):
        when = T0 + timedelta(hours=k)
        amp = 0.3 if _loud(when.hour) else 0.003
        x = amp * np.sin(2 * np.pi * 500 * t) + 0.002 * rng.standard_normal(t.size)
        soundfile.write(str(folder / when.strftime("%Y%m%d_%H%M%S.wav")),
                        x.astype(np.float32), RATE, subtype="FLOAT")
    return folder


def _runs(mask: np.ndarray, least_gap: int) -> list[tuple[int, int]]:
    """Runs of True in ``mask`` joined over gaps below ``least_gap``: (start, stop)."""
    idx = np.flatnonzero(mask)
    runs: list[tuple[int, int]] = []
    for i in idx:
        if runs and i - runs[-1][1] < least_gap:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _menu_bar_items(app: App) -> list[tuple[int, int]]:
    """The screen x centres and the y of the menu bar's titles (File, Edit, View, ...),
    found as runs of dark text on the bar at the top of the window."""
    x, y, w, _ = app.window_geometry()
    rgb = app.grab().astype(int)
    seen = []
    for top in range(max(y - 30, 0), y + 60):
        strip = rgb[top:top + 12, x:x + min(w, 500)].mean(axis=2)
        dark = (strip < DARK).any(axis=0)
        runs = _runs(dark, 12)
        seen.append(len(runs))
        if len(runs) == 5 and all(b - a < 80 for a, b in runs):
            return [(x + (a + b) // 2, top + 6) for a, b in runs]
    raise AssertionError(f"the menu bar's five titles not found under {x, y, w}: {seen}")


def _menu_entry_rows(app: App, before: np.ndarray, bar_y: int) -> list[int]:
    """The screen y centre of each entry of the menu that just opened (the rows of text in
    the part of the screen that changed under the menu bar)."""
    now = app.grab().astype(int)
    changed = np.any(now != before, axis=2)
    changed[:bar_y + 8] = False
    ys, xs = np.nonzero(changed)
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    box = now[y0:y1 + 1, x0 + 4:x1 - 4].mean(axis=2)
    text = (box < DARK).sum(axis=1) >= 2
    return [y0 + (a + b) // 2 for a, b in _runs(text, 3) if b - a >= 5]


def _button(r: dict, dock: str, name: str) -> tuple[int, int]:
    d = next(d for d in r["docks"] if d["name"] == dock)
    b = next(b for b in d["buttons"] if b["name"] == name)
    x, y, w, h = b["rect"]
    return x + w // 2 + 3, y + h // 2 - 2   # a few pixels off the middle, as a hand clicks


def _levels_dock(r: dict) -> dict | None:
    d = next((d for d in r["docks"] if d["name"] == "levels"), None)
    return d if d is not None and d["shown"] else None


def _journey(app: App, site, out, tag: str) -> None:
    app.wait_window(r"^site — specscope$")
    app.wait_image()
    app.settle()
    app.activate()
    # View › Compute levels… with the mouse
    items = _menu_bar_items(app)
    before = app.grab().astype(int)
    app.click(*items[2])
    rows = app.wait_for(lambda: (lambda r: r if len(r) >= 10 else None)(
        _menu_entry_rows(app, before, items[2][1])), "the View menu open")
    entries = [a.id for a in ACTIONS if a.menu == VIEW]
    assert len(rows) == len(entries), (len(rows), len(entries))
    app.screenshot(f"{tag}-view-menu")
    app.click(items[2][0] + 40, rows[entries.index("compute_levels")] + 1)
    r = app.wait_report(_levels_dock, "the Levels dock shown")
    dock = _levels_dock(r)
    x, y, w, h = dock["rect"]
    screen = r["screen"]
    assert x >= 0 and y >= 0 and x + w <= screen[2] and y + h <= screen[3], (dock, screen)
    for b in dock["buttons"]:
        bx, by, bw, bh = b["rect"]
        assert b["visible"] and x <= bx and bx + bw <= x + w and by + bh <= y + h, b
    app.click(*_button(r, "levels", "levels_compute"))
    r = app.wait_report(lambda q: any(s.startswith("Levels: 48 interval(s)")
                                      for s in q["status_seen"]), "the levels computed")
    plot_box = (x, y + 60, w, h - 90)
    shots = {}
    for key in ("ltsa", "bands", "spd", "diel"):
        if key != "ltsa":
            before = app.grab()[plot_box[1]:plot_box[1] + plot_box[3],
                                plot_box[0]:plot_box[0] + plot_box[2]]
            app.click(*_button(app.report(), "levels", f"levels_plot_{key}"))
            app.wait_change(plot_box, before, f"the {key} plot drawn", min_fraction=0.05)
        app.wait_still(plot_box, f"the {key} plot still")
        shot = app.screenshot(f"{tag}-levels-{key}")
        shots[key] = shot.crop(plot_box).astype(float)
        # not washed out: dark background and bright marks, a spread of tones
        grey = shots[key].mean(axis=2)
        assert np.percentile(grey, 5) < 40 and np.percentile(grey, 99.5) > 150, key
        if key == "ltsa":  # the 500 Hz tone: a bright row across the image
            means = grey.mean(axis=1)
            assert means.max() > np.median(means) + 40, (means.max(), np.median(means))
    # the CSV of the day x hour plot, through the save dialog
    app.click(*_button(app.report(), "levels", "levels_export_csv"))
    dlg = app.wait_window(r"^Export the Day × hour plot as CSV$")
    app.activate(dlg)
    app.key("ctrl+a")
    app.type(str(out))
    app.key("Return")
    app.wait_no_window(r"^Export the Day × hour plot as CSV$")
    app.wait_file(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# median level of the ") and "dB re 1 FS²/Hz" in lines[0]
    rows = list(csv.reader(lines[1:]))
    assert rows[0] == ["date", "hour", "median level (dB re 1 FS²/Hz)", "intervals"]
    assert len(rows) == 1 + N_FILES
    levels = {(d, int(h)): float(v) for d, h, v, _ in rows[1:]}
    assert set(levels) == {((T0 + timedelta(hours=k)).date().isoformat(),
                            (T0 + timedelta(hours=k)).hour) for k in range(N_FILES)}
    app.screenshot(f"{tag}-exported")


@pytest.mark.parametrize("screen", ["1600x1000", "1280x800"])
def test_levels_journey(launch, request, tmp_path, screen):
    site = _site(tmp_path / "site")
    display = request.getfixturevalue("display_small") if screen == "1280x800" else None
    app = launch(site, display=display)
    _journey(app, site, tmp_path / f"day_hour_{screen}.csv", screen)
