"""Praat TextGrids and ELAN files through File › Import / Export annotations."""

import pytest
from _gui import idle, open_and_wait
from PyQt6.QtWidgets import QFileDialog
from specscope.compute import open_recording
from specscope.compute.annotations import Annotation, read_annotations, write_annotations
from specscope.widgets.export_dialog import FormatFileDialog

parselmouth = pytest.importorskip("parselmouth", reason="praat-parselmouth (test reference)")
call = parselmouth.praat.call


def test_a_praat_textgrid_imports_and_exports_again(qtbot, make_window, example_path,
                                                    tmp_path, monkeypatch):
    w = make_window(size=(1300, 900))
    open_and_wait(w, example_path)
    idle(w)
    with open_recording(example_path) as rec:
        end = rec.n_samples / rec.sample_rate
    tg = call("Create TextGrid", 0, end, "words tones", "tones")
    call(tg, "Insert boundary", 1, 1.0)
    call(tg, "Insert boundary", 1, 2.5)
    call(tg, "Set interval text", 1, 2, "wörd")
    call(tg, "Insert point", 2, 3.0, "H*")
    src = tmp_path / "praat.TextGrid"
    call(tg, "Save as text file", str(src))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(src), ""))
    w.menu_actions["import_annotations"].trigger()
    idle(w)
    got = w.annotations.annotations
    assert [(a.tier, a.start_s, a.stop_s, a.label) for a in got] == [
        ("words", 1.0, 2.5, "wörd"), ("tones", 3.0, 3.0, "H*")]
    for name, fmt in (("out.TextGrid", "textgrid"), ("out.eaf", "eaf")):
        out = tmp_path / name
        monkeypatch.setattr(FormatFileDialog, "ask", lambda *a, out=out, fmt=fmt, **k: (out, fmt))
        w.menu_actions["export_annotations"].trigger()
        idle(w)
        back = read_annotations(out)
        assert [(a.tier, a.start_s, a.stop_s, a.label) for a in back] == [
            (a.tier, a.start_s, a.stop_s, a.label) for a in got]
    exported = parselmouth.read(str(tmp_path / "out.TextGrid"))
    assert call(exported, "Get end time") == pytest.approx(end)  # the grid covers the recording


def test_a_textgrid_past_the_recording_is_refused_whole(qtbot, make_window, example_path,
                                                       tmp_path, monkeypatch):
    w = make_window(size=(1300, 900))
    open_and_wait(w, example_path)
    idle(w)
    with open_recording(example_path) as rec:
        end = rec.n_samples / rec.sample_rate
    src = write_annotations(tmp_path / "long.TextGrid",
                            [Annotation(0.5, 1.0, label="a", tier="t"),
                             Annotation(end + 1, end + 2, label="b", tier="t")])
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(src), ""))
    w.menu_actions["import_annotations"].trigger()
    idle(w)
    assert w.annotations.annotations == []
