"""Unsaved annotations: asked about before they would be lost, autosaved, offered back.

(The desktop journey tests/journeys/test_annotations_kept.py does the same with real
keys and a SIGKILL; this runs in-process, offscreen, with the questions answered.)
"""

from __future__ import annotations

import json

import numpy as np
import soundfile
from _gui import TIMEOUT_MS, open_and_wait
from specscope.app.desktop.unsaved import AUTOSAVE_DELAY_MS, autosave_path
from specscope.compute.annotations import Annotation


def _wav(path, seed):
    fs = 8000
    x = 0.05 * np.random.default_rng(seed).standard_normal(fs * 3)
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    return path


def _window(make_window, path):
    """An interactive window (it asks about unsaved annotations), not shown, ``path`` open."""
    w = make_window(nfft=256, hop=64, interactive=True, show=False)
    open_and_wait(w, path)
    return w


def _asker(answer, asked):
    def ask(parent, name, count, action):
        asked.append((name, count, action))
        return answer
    return ask


def test_unsaved_annotations_are_asked_about_autosaved_and_recovered(qtbot, make_window,
                                                                     tmp_path):
    first, second = _wav(tmp_path / "first.wav", 1), _wav(tmp_path / "second.wav", 2)
    w = _window(make_window, first)
    assert not w.unsaved.dirty()
    mark = Annotation(0.5, 1.0, 100.0, 900.0, label="kept")
    w.annotations.recover([mark])  # an edit (one undoable step) like any other
    assert w.unsaved.dirty()
    asked: list = []
    w.unsaved.ask_save = _asker("cancel", asked)
    w.open_path(second)                     # another file: asked, cancelled, nothing opens
    w.open_path(first)                      # the same file again: asked too
    assert [a[2] for a in asked] == ["opening second.wav", "opening first.wav"]
    assert asked[0][:2] == ("first.wav", "1 annotation")
    assert w.document.recording.path.name == "first.wav" and w.annotations.annotations == [mark]
    # the autosave follows a few seconds after the edit, beside the user config
    path = autosave_path(first)
    qtbot.waitUntil(path.exists, timeout=AUTOSAVE_DELAY_MS + TIMEOUT_MS)
    data = json.loads(path.read_text())
    assert [Annotation.from_dict(a) for a in data["annotations"]] == [mark]
    # closing is asked about too; Cancel keeps the window open
    assert not w.close()

    # a later run (the first was killed): the recording offers them back, still unsaved
    other = _window(make_window, second)
    offered: list = []
    other.unsaved.ask_recover = lambda parent, name, count, written: offered.append(count) or True
    with qtbot.waitSignal(other.annotations.annotationsChanged, timeout=TIMEOUT_MS):
        other.open_path(first)
    qtbot.waitUntil(lambda: other.annotations.annotations == [mark], timeout=TIMEOUT_MS)
    assert offered == [1] and other.unsaved.dirty()
    # Discard: no question again, and no autosave left behind
    other.unsaved.ask_save = _asker("discard", asked)
    assert other.close()
    assert not path.exists()
    w.unsaved.ask_save = _asker("discard", asked)
    assert w.close()
