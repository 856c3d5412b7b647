"""Journey: remove a whistle over speech with a lasso, listen, undo, redo, export.

A person opens a recording of speech (ALSA's "Front Center", or syllables made in the
test where it is not installed) with a 3 kHz whistle over the second word, presses O
(Edit › Region tool › Lasso), drags around the whistle and chooses Edit › Region ›
Remove.  The whistle leaves the view; Space plays the edit through a private PulseAudio
(tests/sound_server.py), whose monitor has no whistle; Ctrl+Z brings it back, Ctrl+Shift+Z
takes it away again; File › Export range… writes a WAV without the whistle whose
samples before the region are the recording's, bit for bit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile
from harness import wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sound_server

FS = 48000
SPEECH = Path("/usr/share/sounds/alsa/Front_Center.wav")
WHISTLE_HZ, T0, T1 = 3000.0, 0.85, 1.15


def _recording(path: Path) -> np.ndarray:
    if SPEECH.is_file():
        x, fs = soundfile.read(str(SPEECH), dtype="float64")
        assert fs == FS
    else:
        from signals import speech_like
        x = speech_like(FS, 1.5, np.random.default_rng(5))
    t = np.arange(x.size) / FS
    ramp = np.clip(np.minimum(t - T0, T1 - t) / 0.01, 0.0, 1.0)
    x = (x + 0.3 * np.sin(2 * np.pi * WHISTLE_HZ * t) * ramp).astype(np.float32)
    soundfile.write(str(path), x, FS, subtype="FLOAT")
    return x.astype(np.float64)


def _tone_db(y: np.ndarray, fs: float, a: float, b: float) -> float:
    """The whistle's level (dB re 1) in ``a .. b`` s of ``y``."""
    seg = y[int(a * fs):int(b * fs)]
    k = np.arange(seg.size)
    return float(20 * np.log10(2 * abs(np.dot(seg, np.exp(-2j * np.pi * WHISTLE_HZ / fs * k)))
                               / seg.size + 1e-12))


def _brightness(shot, app, r, t: float, f: float) -> float:
    """How bright the spectrogram is around (t s, f Hz): the mean of a 5x3 pixel patch."""
    x, y = app.to_px(t, f, r)
    return float(shot.rgb[y - 1:y + 2, x - 2:x + 3].astype(float).mean())


def _lasso(app, r) -> None:
    """Press, drag an ellipse around the whistle a few pixels at a time, release."""
    pts = [app.to_px((T0 + T1) / 2 + 0.25 * np.cos(a), WHISTLE_HZ * (1 + 0.2 * np.sin(a)), r)
           for a in np.linspace(0.0, 2 * np.pi, 48)]
    app.move(pts[0][0] + 2, pts[0][1] - 1)
    app.x("mousedown", "1")
    for x, y in pts[1:]:
        app.move(x + 2, y - 1)
    app.x("mouseup", "1")


def test_lasso_remove_play_undo_redo_export(launch, tmp_path):
    if not sound_server.available():
        pytest.skip(sound_server.MISSING)
    wav = tmp_path / "whistle.wav"
    x = _recording(wav)
    assert _tone_db(x, FS, T0 + 0.05, T1 - 0.05) > -12
    server = sound_server.SoundServer(tmp_path / "pulse")
    try:
        env = server.env()
        app = launch(wav, env={"PULSE_SERVER": env["PULSE_SERVER"],
                               "SPECSCOPE_AUDIO_DEVICE": "pulse", "SPECSCOPE_AUDIO_OUTPUT": ""})
        app.wait_window(r"^whistle\.wav — specscope$")
        app.wait_image()
        r = app.settle()
        opened = app.screenshot("opened")
        lit = _brightness(opened, app, r, (T0 + T1) / 2, WHISTLE_HZ)

        app.key("o")                                           # Edit › Region tool › Lasso
        app.wait_report(lambda q: any("Lasso" in m for m in q["status_seen"]),
                        "the status to say the lasso is on")
        _lasso(app, r)
        # the region's outline (yellow) on the ellipse's top and bottom
        drawn = app.settle()
        shot = app.screenshot("lasso-drawn")
        top = app.to_px((T0 + T1) / 2, WHISTLE_HZ * 1.2, drawn)
        patch = shot.rgb[top[1] - 4:top[1] + 5, top[0] - 3:top[0] + 4].astype(int)
        yellow = (patch[..., 0] > 200) & (patch[..., 1] > 180) & (patch[..., 2] < 90)
        assert yellow.any(), "no outline drawn where the lasso went"

        app.menu("e", "g", "r")                                # Edit › Region › Remove
        app.wait_image(after=drawn["images"])
        r2 = app.settle()
        removed = app.screenshot("removed")
        dark = _brightness(removed, app, r2, (T0 + T1) / 2, WHISTLE_HZ)
        # the whistle's line is gone: no brighter than the speech just below the region
        below = _brightness(removed, app, r2, (T0 + T1) / 2, WHISTLE_HZ * 0.75)
        assert dark < lit - 15 and dark <= below + 25, (lit, dark, below)

        # Space plays the edit: the sink hears no whistle
        with server.record(tmp_path / "monitor.f32") as rec:
            app.key("space")
            app.wait_report(lambda q: any("Playing" in m for m in q["status_seen"]),
                            "the status to say it plays")
            rec.wait_for(int(sound_server.RATE * (x.size / FS + 1.0)), timeout=120)
            heard = rec.samples()[:, 0].astype(np.float64)
        a, b = sound_server.sound_span(heard)
        assert (b - a) / sound_server.RATE > 1.2, (a, b)
        start = a / sound_server.RATE
        assert _tone_db(heard, sound_server.RATE, start + T0 + 0.05, start + T1 - 0.05) < -45
        app.screenshot("played")

        app.key("ctrl+z")
        app.wait_change(r2["plot"], removed.crop(r2["plot"]), "undo to bring the whistle back")
        r3 = app.settle()
        undone = app.screenshot("undone")
        assert _brightness(undone, app, r3, (T0 + T1) / 2, WHISTLE_HZ) > lit - 20
        app.key("ctrl+shift+z")
        app.wait_change(r3["plot"], undone.crop(r3["plot"]), "redo to take it away again")
        r4 = app.settle()
        redone = app.screenshot("redone")
        assert _brightness(redone, app, r4, (T0 + T1) / 2, WHISTLE_HZ) == pytest.approx(
            dark, abs=3)  # as it was after the remove

        out = tmp_path / "no-whistle.wav"
        app.menu("f", "r")                                     # File › Export range…
        dlg = app.wait_window(r"^Export range$")
        app.activate(dlg)
        app.screenshot("export-range-dialog")
        app.key("ctrl+a")
        app.type(str(out))
        app.key("Return")
        app.wait_file(out, timeout=120)
        app.wait_no_window(r"^Export range$")
        wait_for(lambda: not any(w[1].startswith("Export") for w in app.windows()),
                 "the export dialog gone")
        app.settle()
        app.screenshot("exported")
    finally:
        server.close()
    y, fs = soundfile.read(str(out), dtype="float64")
    assert fs == FS and y.shape[0] == x.size
    assert _tone_db(y, FS, T0 + 0.05, T1 - 0.05) < -45
    # before the region's frames: the recording's own samples
    np.testing.assert_array_equal(y[:int(0.5 * FS)], x[:int(0.5 * FS)])


#: the Regions panel's buttons that act on the region: never cut, never scrolled away
PANEL_BUTTONS = {"Box", "Lasso", "Brush", "Harmonics", "Attenuate", "Gain", "Remove",
                 "Isolate", "Forget"}


def _inside(inner, outer) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


@pytest.mark.parametrize("small", [False, True], ids=["1600x1000", "1280x800"])
def test_brush_erase_and_attenuate_from_the_regions_panel(launch, display, display_small,
                                                          tmp_path, small):
    disp = display_small if small else display
    wav = tmp_path / "whistle.wav"
    _recording(wav)
    app = launch(wav, display=disp)
    app.wait_window(r"^whistle\.wav — specscope$")
    app.wait_image()
    r = app.settle()
    # the Regions tab beside the Selection
    tab = wait_for(lambda: next((t for t in app.report()["tabs"] if t["text"] == "Regions"),
                                None), "the Regions tab")
    x, y, w, h = tab["rect"]
    app.click(x + w // 2 + 2, y + h // 2 + 1)
    q = app.wait_report(lambda q: next((d for d in q["docks"] if d["name"] == "regions"),
                                       {}).get("shown"), "the Regions panel shown")
    dock = next(d for d in q["docks"] if d["name"] == "regions")
    screen = [0, 0, disp.width, disp.height]
    buttons = {b["text"]: b for b in dock["buttons"] if b["visible"]}
    assert PANEL_BUTTONS <= set(buttons), sorted(buttons)
    for text in PANEL_BUTTONS:
        b = buttons[text]
        assert "scroll" not in b, f"{text} scrolls with the fields"
        assert _inside(b["rect"], dock["rect"]) and _inside(b["rect"], screen), (text, b, dock)
    app.screenshot("regions-panel")

    bx, by, bw, bh = buttons["Brush"]["rect"]
    app.click(bx + bw // 2 + 3, by + bh // 2 - 1)              # the panel's Brush
    app.wait_report(lambda q: any("Brush" in m for m in q["status_seen"]),
                    "the status to say the brush is on")
    a, b = app.to_px(0.9, WHISTLE_HZ, r), app.to_px(1.1, WHISTLE_HZ, r)
    app.drag((a[0], a[1] + 1), (b[0], b[1] - 1), steps=24)
    app.settle()
    shot = app.screenshot("painted")
    # Shift+drag erases the middle: the outline now crosses the whistle there
    m0, m1 = app.to_px(0.99, WHISTLE_HZ * 0.7, r), app.to_px(0.99, WHISTLE_HZ * 1.3, r)
    app.drag(m0, m1, modifiers=("shift",), steps=24)
    app.wait_change(r["plot"], shot.crop(r["plot"]), "the erased cells to leave the outline")
    erased = app.settle()
    erased_shot = app.screenshot("erased")

    ax, ay, aw, ah = buttons["Attenuate"]["rect"]
    app.click(ax + aw // 2 - 2, ay + ah // 2 + 1)              # 20 dB, the default
    app.wait_image(after=erased["images"])
    done = app.settle()
    shot = app.screenshot("attenuated")
    assert any("attenuate" in m for m in done["status_seen"]), done["status_seen"]
    # the whistle 20 dB down where painted (the colour scale spans 120 dB); in the erased gap
    # (a few frames wide, reached by the feather and the frames around it) far less
    def drop(t: float) -> float:
        return (_brightness(erased_shot, app, erased, t, WHISTLE_HZ)
                - _brightness(shot, app, done, t, WHISTLE_HZ))

    assert drop(0.93) > 10 and drop(0.99) < drop(0.93) - 5, (drop(0.93), drop(0.99))
