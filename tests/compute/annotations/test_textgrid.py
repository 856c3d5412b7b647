"""Praat TextGrids in and out, checked against praatio and Praat itself (parselmouth)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specscope.compute.annotations import (
    Annotation,
    detect_format,
    read_annotations,
    write_annotations,
)
from specscope.compute.annotations.common import Timebase
from specscope.compute.annotations.textgrid import read_textgrid, write_textgrid
from specscope.compute.errors import InputError

praatio_textgrid = pytest.importorskip("praatio.textgrid", reason="praatio (test reference)")
parselmouth = pytest.importorskip("parselmouth", reason="praat-parselmouth (test reference)")
call = parselmouth.praat.call

ITEMS = [
    Annotation(0.1, 0.5, label='hello "you"', tier="words"),
    Annotation(0.5, 0.875, label="wörld", tier="words"),
    Annotation(1.25, 1.75, label="again", tier="words"),
    Annotation(0.3, 0.3, label="H*", tier="tones"),
    Annotation(1.5, 1.5, label="", tier="tones"),
    Annotation(0.0, 0.4, label="ph", tier="phones"),
]


def spans(items: list[Annotation]) -> list[tuple]:
    return [(a.tier, a.start_s, a.stop_s, a.label) for a in items]


def praat_items(path: Path) -> list[tuple]:
    """What Praat reads: (tier, start, stop, label) of labelled intervals and all points."""
    tg = parselmouth.read(str(path))
    out = []
    for t in range(1, call(tg, "Get number of tiers") + 1):
        name = call(tg, "Get tier name", t)
        if call(tg, "Is interval tier", t):
            for i in range(1, call(tg, "Get number of intervals", t) + 1):
                label = call(tg, "Get label of interval", t, i)
                if label:
                    out.append((name, call(tg, "Get start time of interval", t, i),
                                call(tg, "Get end time of interval", t, i), label))
        else:
            for i in range(1, call(tg, "Get number of points", t) + 1):
                x = call(tg, "Get time of point", t, i)
                out.append((name, x, x, call(tg, "Get label of point", t, i)))
    return out


def praatio_items(path: Path) -> list[tuple]:
    tg = praatio_textgrid.openTextgrid(str(path), includeEmptyIntervals=False)
    out = []
    for name in tg.tierNames:
        tier = tg.getTier(name)
        for entry in tier.entries:
            if tier.entryType.__name__ == "Interval":
                out.append((name, entry.start, entry.end, entry.label))
            else:
                out.append((name, entry.time, entry.time, entry.label))
    return out


@pytest.mark.parametrize("short", [False, True])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_written_textgrids_read_back_by_praat_and_praatio(tmp_path, short, encoding):
    path = write_textgrid(tmp_path / "a.TextGrid", ITEMS, Timebase(1000.0, n_samples=2000),
                          short=short, encoding=encoding)
    want = spans(ITEMS)
    assert praat_items(path) == want
    # praatio leaves out unlabelled points as well as gaps
    assert praatio_items(path) == [w for w in want if w[3]]
    tg = parselmouth.read(str(path))
    assert call(tg, "Get end time") == 2.0  # the grid covers the recording
    assert call(tg, "Get number of intervals", 1) == 6  # three gaps filled: 0-0.1, ..., 1.75-2
    back = read_textgrid(path)
    assert spans(back) == want


@pytest.mark.parametrize("short", [False, True])
def test_round_trip_is_lossless(tmp_path, short):
    first = write_textgrid(tmp_path / "a.TextGrid", ITEMS, short=short)
    items = read_textgrid(first)
    second = write_textgrid(tmp_path / "b.TextGrid", items, short=short)
    assert read_textgrid(second) == items
    assert second.read_bytes() == first.read_bytes()
    assert [a.generator for a in items] == [""] * len(items)
    assert len({a.uuid for a in items}) == len(items)


def _praat_grid():
    tg = call("Create TextGrid", 0, 2, "words phones", "phones")
    call(tg, "Insert boundary", 1, 0.5)
    call(tg, "Insert boundary", 1, 1.25)
    call(tg, "Set interval text", 1, 2, "héllo")
    call(tg, "Insert point", 2, 0.7, "p")
    call(tg, "Insert point", 2, 1.7, "")
    return tg


@pytest.mark.parametrize("command", ["Save as text file", "Save as short text file"])
def test_textgrids_saved_by_praat_read_equal(tmp_path, command):
    path = tmp_path / "praat.TextGrid"
    call(_praat_grid(), command, str(path))
    assert path.read_bytes()[:2] in (b"\xfe\xff", b"\xff\xfe")  # Praat: UTF-16 for "é"
    items = read_annotations(path)
    assert spans(items) == [("words", 0.5, 1.25, "héllo"), ("phones", 0.7, 0.7, "p"),
                            ("phones", 1.7, 1.7, "")]
    assert spans(items) == praat_items(path)
    again = write_annotations(tmp_path / "again.TextGrid", items)
    assert read_annotations(again) == items
    assert call(parselmouth.read(str(again)), "Get end time") == 2.0


@pytest.mark.parametrize("fmt", ["long_textgrid", "short_textgrid"])
def test_textgrids_saved_by_praatio_read_equal(tmp_path, fmt):
    from praatio.data_classes.interval_tier import IntervalTier
    from praatio.data_classes.point_tier import PointTier

    tg = praatio_textgrid.Textgrid()
    tg.addTier(IntervalTier("words", [(0.25, 0.5, "a"), (0.75, 1.0, 'b "q"')], 0, 1.5))
    tg.addTier(PointTier("marks", [(0.6, "x")], 0, 1.5))
    path = tmp_path / "praatio.TextGrid"
    tg.save(str(path), format=fmt, includeBlankSpaces=True)
    items = read_textgrid(path)
    assert spans(items) == praatio_items(path)
    assert spans(items) == [("words", 0.25, 0.5, "a"), ("words", 0.75, 1.0, 'b "q"'),
                            ("marks", 0.6, 0.6, "x")]


def test_annotations_without_tiers_are_laid_on_tiers(tmp_path):
    loose = [Annotation(0.0, 1.0, label="a"), Annotation(0.5, 1.5, label="b"),
             Annotation(0.2, 0.2, label="p")]
    path = write_textgrid(tmp_path / "l.TextGrid", loose)
    assert spans(read_textgrid(path)) == [("annotations", 0.0, 1.0, "a"),
                                          ("annotations 2", 0.5, 1.5, "b"),
                                          ("points", 0.2, 0.2, "p")]
    assert praat_items(path) == spans(read_textgrid(path))


def test_format_found_from_name_and_content(tmp_path):
    path = write_textgrid(tmp_path / "a.TextGrid", ITEMS, encoding="utf-16")
    assert detect_format(path) == "textgrid"
    hidden = tmp_path / "a.dat"
    hidden.write_bytes(path.read_bytes())
    assert detect_format(hidden) == "textgrid"


def test_tiers_that_cannot_be_written(tmp_path):
    with pytest.raises(InputError, match="both intervals and points"):
        write_textgrid(tmp_path / "m.TextGrid", [Annotation(0, 1, label="a", tier="t"),
                                                 Annotation(2, 2, label="b", tier="t")])
    with pytest.raises(InputError, match="overlap"):
        write_textgrid(tmp_path / "o.TextGrid", [Annotation(0, 1, label="a", tier="t"),
                                                 Annotation(0.5, 2, label="b", tier="t")])
    assert not list(tmp_path.iterdir())


LONG = """File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 2
tiers? <exists>
size = 1
item []:
    item [1]:
        class = "IntervalTier"
        name = "words"
        xmin = 0
        xmax = 2
        intervals: size = 2
        intervals [1]:
            xmin = 0
            xmax = 1.5
            text = "a"
        intervals [2]:
            xmin = {second}
            xmax = 2
            text = "b"
"""


def _one_line_error(path: Path, line: int, **kw) -> str:
    with pytest.raises(InputError) as e:
        read_annotations(path, **kw)
    text = str(e.value)
    assert "\n" not in text and f"line {line}:" in text, text
    return text


def test_overlapping_intervals_name_their_line(tmp_path):
    path = tmp_path / "o.TextGrid"
    path.write_text(LONG.format(second="1.25"), encoding="utf-8")
    assert "overlap" in _one_line_error(path, 20)


def test_a_tier_past_the_recording_names_its_line(tmp_path):
    path = tmp_path / "p.TextGrid"
    path.write_text(LONG.format(second="1.5"), encoding="utf-8")
    assert len(read_annotations(path, sample_rate=1000.0)) == 2
    assert "past the end of the recording" in _one_line_error(
        path, 13, format="textgrid",
        recording=type("R", (), {"sample_rate": 1000.0, "center_frequency": None,
                                 "is_complex": False, "n_samples": 1000,
                                 "n_channels": 1})())


@pytest.mark.parametrize("bad, line, words", [
    ("xmin = 1.5\n            xmax = abc", 21, "unreadable"),
    ('xmin = 1.5\n            xmax = 2\n            text = "b', 22, "closing quote"),
    ("xmin = 1.5\n            xmax = 1", 21, "before it starts"),
])
def test_unreadable_lines_are_named(tmp_path, bad, line, words):
    text = LONG.replace("xmin = {second}\n            xmax = 2", bad)
    if words == "closing quote":
        text = text.replace('text = "b"', "")
    path = tmp_path / "u.TextGrid"
    path.write_text(text, encoding="utf-16")
    assert words in _one_line_error(path, line)


def test_a_truncated_file_names_its_last_line(tmp_path):
    path = tmp_path / "t.TextGrid"
    path.write_text("\n".join(LONG.format(second="1.5").splitlines()[:17]), encoding="utf-8")
    assert "ends where" in _one_line_error(path, 17)


def test_convert_keeps_other_formats_working(tmp_path):
    items = read_textgrid(write_textgrid(tmp_path / "a.TextGrid", ITEMS))
    csv = write_annotations(tmp_path / "a.csv", items)
    assert [a.tier for a in read_annotations(csv)] == [a.tier for a in items]
    back = write_annotations(tmp_path / "b.TextGrid", read_annotations(csv))
    assert spans(read_annotations(back)) == spans(items)


LABELS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\0"),
                 min_size=1, max_size=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.floats(0, 100, allow_nan=False), st.floats(0, 5),
                          LABELS), min_size=1, max_size=6),
       st.booleans(), st.sampled_from(["utf-8", "utf-16"]))
def test_any_labels_and_times_round_trip(tmp_path, rows, short, encoding):
    items, at = [], 0.0
    for gap, length, label in rows:  # one tier: each interval after the one before
        start = at + gap
        items.append(Annotation(start, start + length, label=label, tier="t"))
        at = start + length
    items = [a for a in items if a.duration_s > 0] or [Annotation(0, 1, label="x", tier="t")]
    path = write_textgrid(tmp_path / "h.TextGrid", items, short=short, encoding=encoding)
    back = read_textgrid(path)
    assert spans(back) == spans(items)
    # Praat reads the other line separators inside a label (a form feed...) as a line break
    if not any(c in BREAKS for a in items for c in a.label):
        assert praat_items(path) == spans(items)


#: characters Python counts as line breaks, other than "\n"
BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@pytest.mark.parametrize("name", ["t.csv", "t.h5", "t.sigmf-meta"])
def test_the_tier_is_kept_by_csv_hdf5_and_sigmf(tmp_path, name):
    items = [Annotation(0.5, 1.0, label="a", tier="words"), Annotation(1.0, 1.5, label="b")]
    path = write_annotations(tmp_path / name, items, sample_rate=1000.0)
    back = read_annotations(path, sample_rate=1000.0)
    assert [a.tier for a in back] == ["words", None]
    assert back == items
    assert Annotation(0, 1, tier="").tier is None
    with pytest.raises(InputError, match="tier"):
        Annotation(0, 1, tier=3)
