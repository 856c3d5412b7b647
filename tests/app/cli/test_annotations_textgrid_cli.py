"""``specscope annotations convert|list`` with Praat TextGrids and ELAN files."""

from __future__ import annotations

import json

from specscope.app.cli import main
from specscope.compute.annotations import Annotation, read_annotations, write_annotations


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_convert_to_and_from_textgrid(capsys, tmp_path):
    items = [Annotation(0.25, 0.5, label="a", tier="words"),
             Annotation(0.5, 1.0, label="b", tier="words"),
             Annotation(0.75, 0.75, label="p", tier="marks")]
    grid = write_annotations(tmp_path / "in.TextGrid", items)
    raven = tmp_path / "out.selections.txt"
    code, out, _ = run(capsys, "annotations", "convert", grid, raven, "--to", "raven",
                       "--sample-rate", "16k")
    assert code == 0 and "3 annotations (raven)" in out
    assert [(a.start_s, a.stop_s, a.label) for a in read_annotations(raven)] == [
        (0.25, 0.5, "a"), (0.5, 1.0, "b"), (0.75, 0.75, "p")]
    csv = tmp_path / "out.csv"
    code, _, _ = run(capsys, "annotations", "convert", grid, csv)
    assert code == 0
    back = tmp_path / "back.TextGrid"
    code, out, _ = run(capsys, "annotations", "convert", csv, back)
    assert code == 0 and "3 annotations (textgrid)" in out
    assert read_annotations(back) == read_annotations(grid)
    eaf = tmp_path / "out.eaf"
    code, out, _ = run(capsys, "annotations", "convert", back, eaf)
    assert code == 0 and "(eaf)" in out
    code, out, _ = run(capsys, "annotations", "list", eaf, "--json")
    doc = json.loads(out)
    assert doc["format"] == "eaf"
    assert [(a["tier"], a["label"]) for a in doc["annotations"]] == [
        ("words", "a"), ("words", "b"), ("marks", "p")]
    code, out, _ = run(capsys, "annotations", "list", grid)
    assert code == 0 and "tier 'words'" in out


def test_a_bad_textgrid_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.TextGrid"
    bad.write_text('File type = "ooTextFile"\nObject class = "TextGrid"\nxmin = 0\nxmax = ?\n',
                   encoding="utf-8")
    code, _, err = run(capsys, "annotations", "convert", bad, tmp_path / "x.csv")
    assert code == 2 and err.count("\n") == 1 and "line 4" in err
    assert not (tmp_path / "x.csv").exists()
