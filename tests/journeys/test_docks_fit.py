"""Journey: every dock shows its controls whole, or scrolls to them, on both screen sizes.

A person opens a recording at 1600x1000 and at 1280x800 and opens the docks one after
another as the View menu, the Detect menu and the dock tabs offer them: the default
layout, the Processing tab, the Detect panel (Ctrl+Shift+D), the filter designer beside
it (Ctrl+F), the Profiler (View › Profiler) and the Spectrogram tab with everything open.
At each step the app's geometry report (``app/desktop/journey_report.py``) gives every
dock's rectangle and every push button's, in screen pixels; each visible button lies
inside the screen and inside its dock, or sits in a scroll area that lies so and can
scroll the whole button into view.  The buttons of the Detect and Selection panels
never scroll: they stay in view under the form they act on.  The Detect panel's form
shows at least three rows in every layout and eight at 1600x1000, where the Spectrogram
settings show whole at their default height.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from specscope.app.desktop.actions import ACTIONS, VIEW
from specscope.widgets.detect_panel import CONTROLS_MIN_HEIGHT

#: docks whose buttons act on the panel and stay outside its scroll area
PINNED = {"detect": {"Run", "Cancel", "Find similar", "Review", "Compare", "Export…",
                     "Clear"},
          "selection": {"Zoom", "Export…", "Annotate"}}


#: pixels a window or dock may reach past the screen's edge: the window manager's border
#: (the app sizes the window's inside, not its frame, to the screen)
FRAME_SLACK = 2
#: the least height of the Detect form's strip at 1600x1000 beside the Selection (pixels):
#: the detector, the search and eight rows of the form; it was 98 px, one and a half rows
DETECT_FORM_LARGE = 240


def _inside(inner, outer, slack: int = 0) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return (ox - slack <= x and oy - slack <= y and x + w <= ox + ow + slack
            and y + h <= oy + oh + slack)


def _dock(r, name):
    return next(d for d in r["docks"] if d["name"] == name)


def _problems(r, screen) -> list[str]:
    """What a person would find cut or out of reach, one line each."""
    found = []
    if not _inside(r["window_rect"], screen, FRAME_SLACK):
        found.append(f"the window {r['window_rect']} is not inside the screen {screen}")
    for dock in r["docks"]:
        if not dock["shown"]:
            continue
        where = f"{dock['title']} {dock['rect']}"
        if not _inside(dock["rect"], screen, FRAME_SLACK):
            found.append(f"the dock {where} is not inside the screen")
        for b in dock["buttons"]:
            if not b["visible"]:
                continue
            what = f"{dock['title']}: {b['text']!r} {b['rect']}"
            if b["text"] in PINNED.get(dock["name"], ()) and "scroll" in b:
                found.append(f"{what} scrolls with the form (it should stay in view)")
            if "scroll" in b:
                if not (_inside(b["scroll"], dock["rect"]) and _inside(b["scroll"], screen)):
                    found.append(f"{what}: its scroll area {b['scroll']} is cut")
                elif not b["reachable"]:
                    found.append(f"{what} cannot be scrolled into view")
            elif not (_inside(b["rect"], dock["rect"]) and _inside(b["rect"], screen)):
                found.append(f"{what} is not whole inside its dock and the screen")
    return found


def _form_strip(r):
    """The Detect panel's scrolling strip (detector, form, labels): its viewport and
    content."""
    dock = _dock(r, "detect")
    # the tallest content is the form's strip (the scores' strip is hidden until a compare)
    return max(dock["scrolls"], key=lambda s: s["content"][1])


#: View entries greyed out, which the arrow keys skip: the Spectrogram dock cannot close
GREYED = {"settings_dock"}


def _view_entry_downs(entry_id: str) -> int:
    """Down presses from the View menu's first entry to ``entry_id`` (the keys skip
    separators and greyed entries; the rest are enabled once a recording is open)."""
    ids = [a.id for a in ACTIONS if a.menu == VIEW and a.id not in GREYED]
    return ids.index(entry_id)


def _tab(r, text):
    return next((t for t in r["tabs"] if t["text"] == text), None)


def _click_tab(app, text):
    r = app.wait_report(lambda q: _tab(q, text) is not None, f"the {text!r} tab")
    x, y, w, h = _tab(r, text)["rect"]
    app.click(x + w // 2 + 3, y + h // 2 + 1)  # a few pixels off its centre, as a hand
    app.wait_report(lambda q: (_tab(q, text) or {}).get("current"), f"the {text!r} tab shown")


def _step(app, name, screen, shown_docks):
    app.wait_report(lambda q: all(_dock(q, d)["shown"] for d in shown_docks),
                    f"{', '.join(shown_docks)} shown")
    app.settle()
    r = app.report()
    app.screenshot(name)
    problems = _problems(r, screen)
    assert not problems, f"{name}:\n" + "\n".join(problems)
    return r


@pytest.mark.parametrize("small", [False, True], ids=["1600x1000", "1280x800"])
def test_every_dock_shows_its_buttons(launch, display, display_small, tmp_path, small):
    disp = display_small if small else display
    screen = [0, 0, disp.width, disp.height]
    path = tmp_path / "noise.wav"
    x = 0.05 * np.random.default_rng(3).standard_normal(48000 * 20)
    soundfile.write(str(path), x.astype(np.float32), 48000)
    app = launch(path, display=disp)
    app.wait_window(r"^noise\.wav — specscope$")
    app.wait_image()

    r = _step(app, "default", screen, ["spectrogram-settings", "selection", "annotations"])
    settings = max(_dock(r, "spectrogram-settings")["scrolls"], key=lambda s: s["content"][1])
    if not small:  # every row of the settings in view, none cut in half
        assert settings["rect"][3] >= settings["content"][1], settings

    _click_tab(app, "Processing")
    _step(app, "processing-tab", screen, ["processing", "selection"])

    app.activate()
    app.key("ctrl+shift+d")                                  # Detect › Detect panel
    r = _step(app, "detect", screen, ["detect", "selection"])
    strip = _form_strip(r)
    assert strip["rect"][3] >= CONTROLS_MIN_HEIGHT, strip
    if not small:  # most of the form at once, the table and the Selection beside it
        assert strip["rect"][3] >= min(DETECT_FORM_LARGE, strip["content"][1]), strip

    app.key("ctrl+f")                                        # View › Filter designer
    r = _step(app, "detect-designer", screen, ["detect", "selection", "filter-designer"])
    assert _form_strip(r)["rect"][3] >= CONTROLS_MIN_HEIGHT, _form_strip(r)

    app.menu("v")                                            # View › Profiler, by the keys
    app.key(*["Down"] * _view_entry_downs("profiler_dock"), "Return")
    app.wait_report(lambda q: _tab(q, "Profiler") is not None, "the Profiler's tab")
    _click_tab(app, "Profiler")
    r = _step(app, "all-docks", screen, ["detect", "selection", "filter-designer",
                                         "profiler"])
    assert _form_strip(r)["rect"][3] >= CONTROLS_MIN_HEIGHT, _form_strip(r)

    _click_tab(app, "Spectrogram")
    _step(app, "all-docks-spectrogram", screen, ["spectrogram-settings", "selection",
                                                 "filter-designer", "profiler"])
    _click_tab(app, "Annotations")
    _step(app, "all-docks-annotations", screen, ["spectrogram-settings", "annotations"])
