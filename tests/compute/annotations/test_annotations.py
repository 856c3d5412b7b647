"""Annotations: the model, the SigMF / Raven / Audacity / CSV formats, measure()."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.signal
import soundfile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specscope.compute import files as files_module
from specscope.compute.annotations import (
    FIELDS,
    FORMATS,
    Annotation,
    Measurement,
    annotations_of_recording,
    detect_format,
    measure,
    measure_annotation,
    read_annotations,
    write_annotations,
)
from specscope.compute.errors import InputError, RecordingError, SpecscopeError
from specscope.compute.io import ArrayRecording, open_recording

DATA = Path(__file__).resolve().parents[2] / "data" / "annotations"
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def carried(a: Annotation, *fields: str) -> tuple:
    return tuple(getattr(a, f) for f in fields)


def one_line_error(exc: BaseException, *parts: str) -> str:
    text = str(exc)
    assert "\n" not in text
    for part in parts:
        assert part in text, f"{part!r} not in {text!r}"
    return text


# -- the model ---------------------------------------------------------------------------


def test_annotation_defaults_and_derived_values():
    a = Annotation(1, 2.5, 100, 400, label="bat")
    assert (a.start_s, a.stop_s, a.freq_low_hz, a.freq_high_hz) == (1.0, 2.5, 100.0, 400.0)
    assert isinstance(a.start_s, float) and isinstance(a.freq_low_hz, float)
    assert a.duration_s == 1.5 and a.bandwidth_hz == 300.0 and a.has_band
    assert a.generator == "person" and a.comment == "" and a.channel is None
    assert len(a.uuid) == 36 and a.uuid != Annotation(1, 2.5).uuid
    t = Annotation(0, 0)
    assert t.bandwidth_hz is None and not t.has_band and t.duration_s == 0


def test_annotation_to_dict_uses_exactly_the_field_names_and_round_trips():
    a = Annotation(0.25, 0.5, 10.0, 20.0, label="x", comment="long text", generator="detector",
                   channel=1)
    d = a.to_dict()
    assert tuple(d) == FIELDS
    assert json.loads(json.dumps(d)) == d
    assert Annotation.from_dict(d) == a
    b = Annotation.from_dict({"start_s": 1, "stop_s": 2})
    assert b.freq_low_hz is None and b.generator == "person" and b.uuid


def test_replace_validates_and_keeps_identity():
    a = Annotation(1, 2, label="a")
    b = a.replace(label="b", stop_s=3)
    assert (b.label, b.stop_s, b.uuid) == ("b", 3.0, a.uuid)
    with pytest.raises(InputError, match="stop_s"):
        a.replace(stop_s=0.5)
    with pytest.raises(InputError, match="unknown field"):
        a.replace(colour="red")


@pytest.mark.parametrize("kwargs, words", [
    ({"start_s": 2, "stop_s": 1}, ["stop_s=1", "start_s=2"]),
    ({"start_s": -1, "stop_s": 1}, ["start_s=-1", ">= 0"]),
    ({"start_s": float("nan"), "stop_s": 1}, ["start_s", "finite"]),
    ({"start_s": 0, "stop_s": float("inf")}, ["stop_s", "finite"]),
    ({"start_s": 0, "stop_s": 1, "freq_low_hz": 5}, ["both", "freq_high_hz"]),
    ({"start_s": 0, "stop_s": 1, "freq_low_hz": 5, "freq_high_hz": 1}, ["freq_high_hz=1", ">="]),
    ({"start_s": "0", "stop_s": 1}, ["start_s", "number"]),
    ({"start_s": True, "stop_s": 1}, ["start_s", "number"]),
    ({"start_s": 0, "stop_s": 1, "channel": -1}, ["channel=-1"]),
    ({"start_s": 0, "stop_s": 1, "channel": True}, ["channel=True"]),
    ({"start_s": 0, "stop_s": 1, "label": None}, ["label", "text"]),
    ({"start_s": 0, "stop_s": 1, "uuid": ""}, ["uuid"]),
])
def test_annotation_rejects_invalid_boxes_with_one_line(kwargs, words):
    with pytest.raises(InputError) as info:
        Annotation(**kwargs)
    one_line_error(info.value, *words)


def test_from_dict_rejects_unknown_and_missing_keys():
    with pytest.raises(InputError, match="unknown key.*colour"):
        Annotation.from_dict({"start_s": 0, "stop_s": 1, "colour": "red"})
    with pytest.raises(InputError, match="stop_s is missing"):
        Annotation.from_dict({"start_s": 0})


# -- files written by the tools ----------------------------------------------------------


def test_audacity_label_file_imports_exactly():
    got = read_annotations(DATA / "birds.labels.txt")
    fields = ("start_s", "stop_s", "freq_low_hz", "freq_high_hz", "label", "channel")
    assert [carried(a, *fields) for a in got] == [
        (0.5, 1.25, 18000.0, 42000.0, "bat call", None),
        (2.0, 2.0, None, None, "click", None),             # a point label
        (3.1, 4.9, None, None, "song of a wren", None),    # spectral line of -1: no band
        (5.0, 6.5, None, None, "", None),                  # no label text
        (7.25, 7.75, 0.0, 900.5, "low buzz", None),        # undefined low edge: 0 Hz
    ]
    # no uuid in the file: derived from position and content, so stable
    assert [a.uuid for a in got] == [a.uuid for a in read_annotations(DATA / "birds.labels.txt")]
    assert len({a.uuid for a in got}) == len(got)


def test_raven_table_collapses_views_and_keeps_measurement_columns():
    got = read_annotations(DATA / "Table.1.selections.txt")
    fields = ("start_s", "stop_s", "freq_low_hz", "freq_high_hz", "label", "channel")
    assert [carried(a, *fields) for a in got] == [
        (0.512345678, 1.23456789, 18000.0, 42000.0, "bat", 0),  # the spectrogram row wins
        (2.0, 2.5, 500.0, 2500.0, "frog", 1),                   # Raven channel 2 -> 1
        (3.0, 3.1, 0.0, 48000.0, "", 0),
    ]
    assert dict(got[0].extra) == {"Delta Time (s)": "0.722222212", "Peak Freq (Hz)": "31250.000"}
    # with the recording's rate known, a whole-band box is a time-only annotation
    got = read_annotations(DATA / "Table.1.selections.txt", sample_rate=96000)
    assert got[2].freq_low_hz is None and got[0].freq_high_hz == 42000.0


def test_sigmf_meta_imports_exactly():
    got = read_annotations(DATA / "burst.sigmf-meta")
    fields = ("start_s", "stop_s", "freq_low_hz", "freq_high_hz", "label", "comment",
              "generator", "channel")
    assert [carried(a, *fields) for a in got] == [
        (0.001, 0.0035, 914.9e6, 914.95e6, "burst A", "LoRa-like chirp", "inspectrum", None),
        (0.004, 0.0045, 915.1e6, 915.2e6, "burst B", "", "", None),
        (0.006, 0.0075, None, None, "all-band noise", "", "", None),
    ]
    assert got[0].uuid == "0b6b2f7e-9c7e-4a8e-8f63-1b2f5f6a7c01"
    assert dict(got[1].extra) == {"signal:detail": {"modulation": "FSK", "symbol_rate": 9600}}
    # a recording's sample rate takes precedence over the meta's
    slow = ArrayRecording(np.zeros(20000, np.complex64), 500000.0, center_frequency=915e6)
    assert read_annotations(DATA / "burst.sigmf-meta", recording=slow)[0].start_s == 0.002


def test_format_detection_by_name_and_content(tmp_path):
    assert detect_format(DATA / "birds.labels.txt") == "audacity"
    assert detect_format(DATA / "Table.1.selections.txt") == "raven"
    assert detect_format(DATA / "burst.sigmf-meta") == "sigmf"
    assert detect_format(tmp_path / "x.sigmf-data", reading=False) == "sigmf"
    # a Raven table saved as plain .txt, and Audacity labels under another name
    shutil.copy(DATA / "Table.1.selections.txt", tmp_path / "mine.txt")
    shutil.copy(DATA / "birds.labels.txt", tmp_path / "labels.dat")
    assert detect_format(tmp_path / "mine.txt") == "raven"
    assert detect_format(tmp_path / "labels.dat") == "audacity"
    assert len(read_annotations(tmp_path / "mine.txt")) == 3
    with pytest.raises(InputError) as info:
        detect_format(tmp_path / "out.xyz", reading=False)
    one_line_error(info.value, "out.xyz", "sigmf", "raven", "audacity", "csv")
    assert set(FORMATS) == {"sigmf", "raven", "audacity", "csv", "hdf5", "textgrid", "eaf"}


# -- round trips -------------------------------------------------------------------------

ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
# tab-separated formats have no quoting: no tabs or line breaks in texts
CELL_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                           blacklist_characters="\t\r\n"), max_size=12)
TIMES = st.floats(0, 1e5, allow_nan=False, allow_infinity=False)


@st.composite
def annotation_lists(draw, *, text=ANY_TEXT, band=(-1e9, 1e9), times=TIMES, channels=True,
                     max_size=6):
    out = []
    for _ in range(draw(st.integers(0, max_size))):
        start = draw(times)
        stop = start + draw(st.floats(0, 1e3, allow_nan=False))
        lo = hi = None
        if draw(st.booleans()):
            lo, hi = sorted(draw(st.floats(*band, allow_nan=False)) for _ in range(2))
        out.append(Annotation(
            start, stop, lo, hi, label=draw(text), comment=draw(text),
            uuid=str(draw(st.uuids())), generator=draw(text),
            channel=draw(st.none() | st.integers(0, 7)) if channels else None))
    return out


@SETTINGS
@given(items=annotation_lists())
def test_csv_round_trip_is_exact(tmp_path, items):
    path = write_annotations(tmp_path / "a.csv", items)
    back = read_annotations(path)
    assert back == items
    assert [a.to_dict() for a in back] == [a.to_dict() for a in items]


@st.composite
def on_samples(draw, fs):
    return draw(st.integers(0, 10**9)) / fs


@SETTINGS
@given(items=annotation_lists(times=on_samples(48000.0)), data=st.data())
def test_sigmf_round_trip_is_exact_to_the_sample(tmp_path, items, data):
    import sigmf.validate

    fs = 48000.0
    # times on samples come back exactly; durations are whole samples too
    items = [a.replace(stop_s=(round(a.start_s * fs) + data.draw(st.integers(0, 10**6))) / fs)
             for a in items]
    rec = ArrayRecording(np.zeros(16, np.float32), fs)
    path = tmp_path / "new.sigmf-meta"
    path.unlink(missing_ok=True)
    write_annotations(path, items, recording=rec)
    doc = json.loads(path.read_text())
    starts = [o["core:sample_start"] for o in doc["annotations"]]
    assert starts == sorted(starts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # undeclared extensions warn: must not happen
        sigmf.validate.validate(doc)
    back = read_annotations(path)
    key = lambda a: (a.start_s, a.uuid)
    assert sorted(back, key=key) == sorted(items, key=key)


@SETTINGS
@given(items=annotation_lists(max_size=3))
def test_sigmf_round_trip_moves_times_to_the_nearest_sample(tmp_path, items):
    fs = 1000.0
    rec = ArrayRecording(np.zeros(16, np.float32), fs)
    path = tmp_path / "near.sigmf-meta"
    path.unlink(missing_ok=True)
    write_annotations(path, items, recording=rec)
    back = {a.uuid: a for a in read_annotations(path)}
    for a in items:
        b = back[a.uuid]
        assert abs(b.start_s - a.start_s) <= 0.5 / fs + 1e-9
        assert abs(b.stop_s - a.stop_s) <= 0.5 / fs + 1e-9
        assert carried(b, "freq_low_hz", "freq_high_hz", "label", "comment", "generator",
                       "channel") == carried(a, "freq_low_hz", "freq_high_hz", "label",
                                             "comment", "generator", "channel")


@SETTINGS
@given(items=annotation_lists(text=CELL_TEXT, band=(0.0, 23999.0)))
def test_raven_round_trip_is_exact(tmp_path, items):
    # times and frequencies exact; channel None is written as Raven channel 1 (0 back);
    # time-only annotations are written as the whole band and come back time-only
    path = write_annotations(tmp_path / "t.selections.txt", items, sample_rate=48000.0)
    back = read_annotations(path, sample_rate=48000.0)
    expected = [a.replace(channel=a.channel or 0) for a in items]
    key = lambda a: (a.start_s, a.stop_s, a.uuid)
    assert sorted(back, key=key) == sorted(expected, key=key)


@SETTINGS
@given(items=annotation_lists(text=CELL_TEXT, band=(0.0, 1e9), channels=False))
def test_audacity_round_trip_within_a_microsecond_and_microhertz(tmp_path, items):
    path = write_annotations(tmp_path / "l.txt", items)
    back = read_annotations(path)
    assert len(back) == len(items)
    # written to the microsecond, two annotations may read back with equal times: the
    # band tells them apart
    key = lambda a: (round(a.start_s, 6), round(a.stop_s, 6), a.label, a.freq_low_hz is None,
                     round(a.freq_low_hz or 0.0, 6), round(a.freq_high_hz or 0.0, 6))
    for a, b in zip(sorted(items, key=key), sorted(back, key=key), strict=True):
        assert b.label == a.label
        for name in ("start_s", "stop_s", "freq_low_hz", "freq_high_hz"):
            x, y = getattr(a, name), getattr(b, name)
            if x is None:
                assert y is None
            else:
                assert abs(x - y) <= 1e-6 + 1e-15 * abs(x), name


def test_audacity_file_is_written_like_audacity(tmp_path):
    items = [Annotation(1, 2.5, 100, 2000.25, label="a"), Annotation(0.125, 0.5, label="b")]
    text = write_annotations(tmp_path / "x.txt", items).read_text()
    assert text == ("0.125000\t0.500000\tb\n"
                    "1.000000\t2.500000\ta\n\\\t100.000000\t2000.250000\n")


# -- SigMF: rewriting an existing meta -----------------------------------------------------


@pytest.fixture
def sigmf_pair(tmp_path):
    """burst.sigmf-meta with 10000 cf32 samples next to it (a 1 MHz IQ capture at 915 MHz)."""
    meta = tmp_path / "burst.sigmf-meta"
    shutil.copy(DATA / "burst.sigmf-meta", meta)
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(10000) + 1j * rng.standard_normal(10000)).astype(np.complex64)
    x.tofile(tmp_path / "burst.sigmf-data")
    return meta


def test_sigmf_rewrite_keeps_everything_but_the_annotations(sigmf_pair):
    import sigmf.validate

    before = json.loads(sigmf_pair.read_text())
    items = read_annotations(sigmf_pair)
    new = [items[1].replace(label="burst B (FSK)"), items[0],
           Annotation(0.0095, 0.01, 915.3e6, 915.31e6, label="late", generator="detector",
                      channel=0)]
    rec = open_recording(sigmf_pair)
    write_annotations(sigmf_pair, new, recording=rec)
    text = sigmf_pair.read_text()
    after = json.loads(text)
    assert list(after) == list(before)
    for key in before:
        if key != "annotations":
            assert after[key] == before[key]
            assert json.dumps(after[key]) == json.dumps(before[key])  # order too
    assert text.startswith('{\n    "global": {\n        "core:datatype"')  # 4-space indent kept
    objs = after["annotations"]
    assert [o["core:sample_start"] for o in objs] == [1000, 4000, 9500]  # sorted
    assert objs[1]["signal:detail"] == {"modulation": "FSK", "symbol_rate": 9600}
    assert objs[1]["core:label"] == "burst B (FSK)"
    assert objs[0] == before["annotations"][0]
    assert objs[2]["core:sample_count"] == 500 and objs[2]["specscope:channel"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the file does not declare specscope:channel
        sigmf.validate.validate(after)
    # the reader of recordings still opens it and sees the annotations
    reopened = open_recording(sigmf_pair)
    assert [r.label for r in reopened.annotations] == ["burst A", "burst B (FSK)", "late"]
    assert [round(a.start_s, 9) for a in annotations_of_recording(reopened)] == [
        0.001, 0.004, 0.0095]


def test_sigmf_segment_without_count_runs_to_the_end(sigmf_pair):
    doc = json.loads(sigmf_pair.read_text())
    del doc["annotations"][2]["core:sample_count"]
    sigmf_pair.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        read_annotations(sigmf_pair)  # the length is the recording's
    one_line_error(info.value, "annotations[2]", "core:sample_count", "recording=")
    got = read_annotations(sigmf_pair, recording=open_recording(sigmf_pair))
    assert got[2].stop_s == 10000 / 1e6
    rec = ArrayRecording(np.zeros(8000, np.complex64), 1e6)
    assert read_annotations(sigmf_pair, recording=rec)[2].stop_s == 8000 / 1e6


def test_sigmf_failed_write_leaves_the_file_untouched(sigmf_pair, monkeypatch):
    original = sigmf_pair.read_bytes()
    with pytest.raises(InputError):
        write_annotations(sigmf_pair, [Annotation(0, 1), "not an annotation"])
    assert sigmf_pair.read_bytes() == original

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files_module.os, "replace", fail)
    with pytest.raises(RecordingError) as info:
        write_annotations(sigmf_pair, [Annotation(0, 0.001)])
    one_line_error(info.value, "burst.sigmf-meta", "No space left")
    assert sigmf_pair.read_bytes() == original
    assert sorted(p.name for p in sigmf_pair.parent.iterdir()) == [
        "burst.sigmf-data", "burst.sigmf-meta"]  # no temporary file left


def test_new_sigmf_meta_is_minimal_and_valid(tmp_path):
    import sigmf.validate

    rec = ArrayRecording(np.zeros((100, 2), np.complex64), 2e6, center_frequency=433.92e6)
    path = write_annotations(tmp_path / "cap.sigmf-meta",
                             [Annotation(1e-5, 2e-5, 433.9e6, 433.95e6, label="key fob")],
                             recording=rec)
    doc = json.loads(path.read_text())
    assert list(doc) == ["global", "captures", "annotations"]
    g = doc["global"]
    assert (g["core:datatype"], g["core:sample_rate"], g["core:version"],
            g["core:num_channels"]) == ("cf32_le", 2e6, "1.2.0", 2)
    assert g["core:metadata_only"] is True  # no .sigmf-data next to it
    assert doc["captures"] == [{"core:sample_start": 0, "core:frequency": 433.92e6}]
    assert doc["annotations"][0]["core:sample_start"] == 20
    assert doc["annotations"][0]["core:sample_count"] == 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigmf.validate.validate(doc)
    with pytest.raises(InputError, match="needs the recording"):
        write_annotations(tmp_path / "other.sigmf-meta", [Annotation(0, 1)])
    assert not (tmp_path / "other.sigmf-meta").exists()


# -- Raven: the band -------------------------------------------------------------------------


def test_raven_high_freq_never_above_nyquist(tmp_path):
    rec = ArrayRecording(np.zeros(100, np.float32), 44100.0)
    items = [Annotation(0, 1, 1000, 30000, label="over"), Annotation(1, 2, label="time only"),
             Annotation(2, 3, 10, 200, label="inside")]
    path = write_annotations(tmp_path / "t.selections.txt", items, recording=rec)
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    header = rows[0]
    lo_col, hi_col = header.index("Low Freq (Hz)"), header.index("High Freq (Hz)")
    highs = [float(r[hi_col]) for r in rows[1:]]
    assert max(highs) <= 22050.0
    assert [(float(r[lo_col]), float(r[hi_col])) for r in rows[1:]] == [
        (1000.0, 22050.0), (0.0, 22050.0), (10.0, 200.0)]
    assert header[:7] == ["Selection", "View", "Channel", "Begin Time (s)", "End Time (s)",
                          "Low Freq (Hz)", "High Freq (Hz)"]
    back = read_annotations(path, recording=rec)
    assert back[1].freq_low_hz is None and back[1].label == "time only"
    with pytest.raises(InputError) as info:
        write_annotations(tmp_path / "u.selections.txt", [Annotation(0, 1, 30000, 40000)],
                          recording=rec)
    one_line_error(info.value, "above Nyquist")
    with pytest.raises(InputError) as info:
        write_annotations(tmp_path / "v.selections.txt", [Annotation(0, 1, label="t")])
    one_line_error(info.value, "needs them", "sample rate")
    assert not (tmp_path / "u.selections.txt").exists()
    assert not (tmp_path / "v.selections.txt").exists()


def test_raven_iq_band_is_centred_on_the_rf_frequency(tmp_path):
    rec = ArrayRecording(np.zeros(100, np.complex64), 1e6, center_frequency=100e6)
    path = write_annotations(tmp_path / "iq.selections.txt",
                             [Annotation(0, 1), Annotation(0, 1, 100.2e6, 101e6)], recording=rec)
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:]]
    assert [(float(r[5]), float(r[6])) for r in rows] == [(99.5e6, 100.5e6), (100.2e6, 100.5e6)]


# -- malformed input ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, words", [
    ("a.selections.txt", "Selection\tView\tChannel\tEnd Time (s)\n1\tS\t1\t2\n",
     ["a.selections.txt", "line 1", "Begin Time (s)"]),
    ("b.selections.txt", "Selection\tBegin Time (s)\tEnd Time (s)\tLow Freq (Hz)\n",
     ["b.selections.txt", "line 1", "High Freq (Hz)"]),
    ("c.selections.txt", "Selection\tBegin Time (s)\tEnd Time (s)\n1\t0.5\tabc\n",
     ["c.selections.txt", "line 2", "End Time (s)", "'abc'"]),
    ("d.selections.txt", "Selection\tBegin Time (s)\tEnd Time (s)\n\n1\t2\t1\n",
     ["d.selections.txt", "line 3", "before"]),
    ("e.selections.txt", "Selection\tChannel\tBegin Time (s)\tEnd Time (s)\n1\t0\t0\t1\n",
     ["line 2", "Channel", "from 1"]),
    ("f.txt", "0.5\t1.5\tok\n2.0\tx\tbad\n", ["f.txt", "line 2", "end", "'x'"]),
    ("g.txt", "3.0\t1.0\tbackwards\n", ["g.txt", "line 1", "before start"]),
    ("h.txt", "0\t1\tx\n\\\t500\tlow\n", ["h.txt", "line 2", "high frequency"]),
    ("i.txt", "0\t1\tx\n\\\t900\t100\n", ["i.txt", "line 2", "below"]),
    ("j.txt", "\\\t1\t2\n", ["j.txt", "line 1", "must follow a label"]),
    ("k.csv", "stop_s,label\n1,a\n", ["k.csv", "line 1", "start_s"]),
    ("l.csv", "start_s,stop_s,freq_low_hz,freq_high_hz\n0,1,5,\n",
     ["l.csv", "line 2", "freq_high_hz"]),
    ("m.csv", "start_s,stop_s\n0,1\n2,1e\n", ["m.csv", "line 3", "stop_s", "'1e'"]),
    ("n.csv", "start_s,stop_s\n5,1\n", ["n.csv", "line 2", "stop_s=1.0"]),
    ("o.csv", "start_s,stop_s,channel\n0,1,1.5\n", ["o.csv", "line 2", "channel"]),
    ("p.sigmf-meta", '{"global": {"core:sample_rate": 8000}, "captures": []}',
     ["p.sigmf-meta", "annotations"]),
    ("q.sigmf-meta", '{"global": {"core:sample_rate": 8000}, "annotations": {}}',
     ["q.sigmf-meta", "not a list"]),
    ("r.sigmf-meta", ('{"global": {"core:sample_rate": 8000}, "annotations": '
                      '[{"core:sample_start": 0, "core:sample_count": -5}]}'),
     ["r.sigmf-meta", "annotations[0]", "core:sample_count=-5"]),
    ("s.sigmf-meta", ('{"global": {"core:sample_rate": 8000}, "annotations": '
                      '[{"core:sample_start": 0, "core:sample_count": 5, '
                      '"core:freq_lower_edge": 10}]}'),
     ["s.sigmf-meta", "annotations[0]", "both"]),
    ("t.sigmf-meta", '{"global": {}, "annotations": [{"core:sample_start": 1}]}',
     ["t.sigmf-meta", "core:sample_rate"]),
    ("u.sigmf-meta", '{"global": {"core:sample_rate": 8000}, "annotations": [}',
     ["u.sigmf-meta", "invalid JSON", "line 1"]),
    ("v.sigmf-meta", ('{"global": {"core:sample_rate": 8000}, "annotations": '
                      '[{"core:sample_start": 1.5}]}'),
     ["v.sigmf-meta", "annotations[0]", "core:sample_start=1.5"]),
])
def test_malformed_files_give_one_line_naming_the_problem(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SpecscopeError) as info:
        read_annotations(path)
    one_line_error(info.value, *words)


def test_missing_file_and_unknown_format():
    with pytest.raises(RecordingError, match="no such file"):
        read_annotations(DATA / "nope.csv")
    with pytest.raises(InputError, match="not an annotation format"):
        read_annotations(DATA / "birds.labels.txt", format="praat")


# -- measure ---------------------------------------------------------------------------------


def brute_force(x, fs, start, stop, lo, hi, nfft, hop, window, fc=0.0):
    """Every number of measure() from one scipy.signal.spectrogram of the whole signal."""
    is_iq = np.iscomplexobj(x)
    x = x.astype(np.complex128 if is_iq else np.float64)
    f, t, S = scipy.signal.spectrogram(x, fs, window=window, nperseg=nfft, noverlap=nfft - hop,
                                       detrend=False, return_onesided=not is_iq,
                                       scaling="density", mode="psd")
    if is_iq:
        f, S = np.fft.fftshift(f) + fc, np.fft.fftshift(S, axes=0)
    inbox = (t >= start) & (t <= stop)
    if not inbox.any():
        inbox[np.argmin(np.abs(t - (start + stop) / 2))] = True
    band = np.ones(f.size, bool) if lo is None else (f >= lo) & (f <= hi)
    if not band.any():
        band[np.argmin(np.abs(f - (lo + hi) / 2))] = True
    df = fs / nfft
    power = S[band].sum(axis=0) * df
    box = S[band][:, inbox]
    i, j = np.unravel_index(np.argmax(box), box.shape)
    i0 = round(start * fs)
    i1 = max(round(min(stop, x.size / fs) * fs), i0 + 1)
    out = {"band_power_db": 10 * np.log10(power[inbox].mean()),
           "peak_frequency_hz": f[band][i], "peak_time_s": t[inbox][j],
           "rms_db": 10 * np.log10(np.mean(np.abs(x[i0:i1]) ** 2)),
           "n_frames": int(inbox.sum()), "n_bins": int(band.sum())}
    if (~inbox).any():
        out["noise_power_db"] = 10 * np.log10(power[~inbox].mean())
        out["snr_db"] = out["band_power_db"] - out["noise_power_db"]
    return out


def _scene(fs=8000.0, seconds=3.0):
    rng = np.random.default_rng(7)
    n = int(fs * seconds)
    t = np.arange(n) / fs
    x = 0.01 * rng.standard_normal((n, 2))
    burst = (t >= 1.0) & (t < 1.5)
    x[burst, 0] += 0.5 * np.sin(2 * np.pi * 1000 * t[burst])
    x[:, 1] += 0.2 * np.sin(2 * np.pi * 2500 * t)
    return x.astype(np.float32)


@pytest.mark.parametrize("start, stop, lo, hi, nfft, hop, window, channel", [
    (1.0, 1.5, 900.0, 1100.0, 256, 64, "hann", 0),        # the burst in its band
    (0.5, 2.0, None, None, 512, 128, "hamming", 0),       # time-only: the whole spectrum
    (1.1, 1.4, 1000.2, 1000.3, 256, 64, "hann", 0),       # band narrower than a bin
    (1.2, 1.2001, 950.0, 1050.0, 256, 64, "hann", 0),     # box shorter than a hop
    (0.1, 2.9, 2000.0, 3000.0, 64, 16, "blackman", 1),    # > 2048 frames: several blocks
    (2.5, 9.0, 0.0, 4000.0, 256, 100, "kaiser,8", 1),     # stop beyond the end is clipped
])
def test_measure_equals_brute_force_scipy(start, stop, lo, hi, nfft, hop, window, channel):
    fs = 8000.0
    x = _scene(fs)
    rec = ArrayRecording(x, fs)
    m = measure(rec, start, stop, lo, hi, nfft=nfft, hop=hop, window=window, channel=channel)
    win = ("kaiser", 8.0) if window == "kaiser,8" else window
    ref = brute_force(x[:, channel], fs, start, stop, lo, hi, nfft, hop, win)
    # float64 on both sides: agreement to rounding (stated tolerance 1e-9 dB, 1e-9 relative)
    for key in ("band_power_db", "rms_db", "noise_power_db", "snr_db"):
        assert getattr(m, key) == pytest.approx(ref[key], abs=1e-9), key
    assert m.peak_frequency_hz == ref["peak_frequency_hz"]
    assert m.peak_time_s == pytest.approx(ref["peak_time_s"], rel=1e-12)
    assert (m.n_frames, m.n_bins) == (ref["n_frames"], ref["n_bins"])
    assert m.duration_s == pytest.approx(min(stop, 3.0) - start)
    assert m.bandwidth_hz == (4000.0 if lo is None else hi - lo)
    assert m.channel == channel


def test_measure_finds_the_burst():
    rec = ArrayRecording(_scene(), 8000.0)
    m = measure(rec, 1.0, 1.5, 900, 1100, nfft=256, hop=64)
    assert abs(m.peak_frequency_hz - 1000) <= 8000 / 256 / 2 + 1e-9
    assert 1.0 <= m.peak_time_s <= 1.5
    assert m.snr_db > 30
    assert m.band_power_db == pytest.approx(10 * np.log10(0.5 ** 2 / 2), abs=0.5)
    d = m.to_dict()
    for key in ("duration_s", "bandwidth_hz", "band_power_db", "peak_frequency_hz",
                "peak_time_s", "rms_db", "snr_db"):
        assert isinstance(d[key], float), key
    json.dumps(d)


def test_measure_iq_uses_absolute_frequencies():
    fs, fc = 1e6, 915e6
    rng = np.random.default_rng(3)
    n = 50000
    t = np.arange(n) / fs
    x = 0.01 * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
    on = (t > 0.02) & (t < 0.03)
    x[on] += 0.3 * np.exp(2j * np.pi * -150e3 * t[on])
    x = x.astype(np.complex64)
    rec = ArrayRecording(x, fs, center_frequency=fc)
    m = measure(rec, 0.02, 0.03, fc - 160e3, fc - 140e3, nfft=1024, hop=256)
    ref = brute_force(x, fs, 0.02, 0.03, fc - 160e3, fc - 140e3, 1024, 256, "hann", fc)
    assert m.band_power_db == pytest.approx(ref["band_power_db"], abs=1e-9)
    assert m.snr_db == pytest.approx(ref["snr_db"], abs=1e-9)
    assert m.peak_frequency_hz == ref["peak_frequency_hz"]
    assert abs(m.peak_frequency_hz - (fc - 150e3)) < fs / 1024
    whole = measure(rec, 0.0, 0.01, nfft=1024, hop=256)
    assert (whole.freq_low_hz, whole.freq_high_hz) == (fc - fs / 2, fc + fs / 2)


class CountingRecording(ArrayRecording):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.samples_read = 0

    def _read(self, start, stop):
        self.samples_read += stop - start
        return super()._read(start, stop)


def test_measure_bounds_the_noise_work_on_long_recordings():
    fs = 8000.0
    rng = np.random.default_rng(5)
    x = (0.1 * rng.standard_normal(int(fs * 60))).astype(np.float32)   # 60 s of noise
    rec = CountingRecording(x, fs)
    full = measure(rec, 10.0, 10.5, 500, 1500, nfft=64, hop=16)
    rec.samples_read = 0
    capped = measure(rec, 10.0, 10.5, 500, 1500, nfft=64, hop=16, max_noise_frames=2048)
    assert rec.samples_read < 2048 * 16 * 3 + 0.5 * fs * 2
    # stationary noise: the sampled estimate is close to the full one
    assert capped.noise_power_db == pytest.approx(full.noise_power_db, abs=0.3)
    assert capped.band_power_db == full.band_power_db


def test_measure_annotation_uses_its_channel():
    rec = ArrayRecording(_scene(), 8000.0)
    a = Annotation(0.5, 1.0, 2400, 2600, channel=1)
    assert measure_annotation(rec, a, nfft=256, hop=64) == measure(
        rec, 0.5, 1.0, 2400, 2600, nfft=256, hop=64, channel=1)


@pytest.mark.parametrize("args, kwargs, words", [
    ((5.0, 6.0), {}, ["start_s=5.0", "[0, 3"]),
    ((1.0, 1.0), {}, ["stop_s=1.0", "after"]),
    ((1.0, 2.0, 100.0, None), {}, ["both"]),
    ((1.0, 2.0, 300.0, 100.0), {}, ["freq_high_hz=100.0"]),
    ((1.0, 2.0, 5000.0, 6000.0), {}, ["outside the spectrum"]),
    ((1.0, 2.0), {"channel": 2}, ["channel=2"]),
    ((1.0, 2.0), {"nfft": 1}, ["nfft=1"]),
    ((1.0, 2.0), {"window": "nope"}, ["window='nope'"]),
    ((float("nan"), 2.0), {}, ["start_s", "finite"]),
])
def test_measure_rejects_bad_boxes(args, kwargs, words):
    rec = ArrayRecording(_scene(), 8000.0)
    with pytest.raises(InputError) as info:
        measure(rec, *args, **kwargs)
    one_line_error(info.value, *words)


def test_measure_needs_a_frame():
    rec = ArrayRecording(np.zeros(100, np.float32), 8000.0)
    with pytest.raises(InputError, match="nfft=1024 is larger"):
        measure(rec, 0, 0.01)
    assert isinstance(measure(rec, 0, 0.01, nfft=64, hop=16), Measurement)


# -- the command line ------------------------------------------------------------------------


def run_cli(capsys, *argv):
    from specscope.app.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bird_wav(tmp_path):
    fs = 96000
    x = _scene(fs, 3.0)
    path = tmp_path / "birds.wav"
    soundfile.write(str(path), x, fs, subtype="FLOAT")
    return path, x, float(fs)


def test_cli_list_json(capsys, sigmf_pair):
    code, out, _ = run_cli(capsys, "annotations", "list", DATA / "birds.labels.txt", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["format"] == "audacity"
    assert [a["label"] for a in doc["annotations"]] == [
        "bat call", "click", "song of a wren", "", "low buzz"]
    assert list(doc["annotations"][0]) == list(FIELDS)
    # a SigMF recording's own annotations, named by its data file
    code, out, _ = run_cli(capsys, "annotations", "list",
                           sigmf_pair.with_suffix(".sigmf-data"), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["format"] == "sigmf"
    assert [a["start_s"] for a in doc["annotations"]] == [0.001, 0.004, 0.006]
    # a segment without core:sample_count runs to the end of the recording's own data
    doc = json.loads(sigmf_pair.read_text())
    del doc["annotations"][2]["core:sample_count"]
    sigmf_pair.write_text(json.dumps(doc))
    code, out, _ = run_cli(capsys, "annotations", "list", sigmf_pair, "--json")
    assert code == 0 and json.loads(out)["annotations"][2]["stop_s"] == 0.01
    code, out, _ = run_cli(capsys, "annotations", "list", DATA / "Table.1.selections.txt")
    assert code == 0 and "3 annotations (raven)" in out and "'frog'" in out


def test_cli_list_of_a_plain_recording(capsys, bird_wav):
    code, out, _ = run_cli(capsys, "annotations", "list", bird_wav[0], "--json")
    assert code == 0
    assert json.loads(out)["annotations"] == []


def test_cli_convert_between_formats(capsys, tmp_path, bird_wav, sigmf_pair):
    wav = bird_wav[0]
    raven = tmp_path / "birds.selections.txt"
    code, out, _ = run_cli(capsys, "annotations", "convert", DATA / "birds.labels.txt", raven,
                           "--recording", wav)
    assert code == 0 and "5 annotations (raven)" in out
    back = read_annotations(raven, recording=open_recording(wav))
    assert [a.label for a in back] == ["bat call", "click", "song of a wren", "", "low buzz"]
    assert back[1].freq_low_hz is None  # time-only survives via the whole band
    csv_path = tmp_path / "birds.csv"
    code, _, _ = run_cli(capsys, "annotations", "convert", raven, csv_path, "--recording", wav)
    assert code == 0
    assert read_annotations(csv_path) == back
    # into an existing SigMF meta: only its annotations change
    before = json.loads(sigmf_pair.read_text())
    code, _, _ = run_cli(capsys, "annotations", "convert", csv_path, sigmf_pair, "-q")
    assert code == 0
    after = json.loads(sigmf_pair.read_text())
    assert after["global"] == before["global"] and after["captures"] == before["captures"]
    assert len(after["annotations"]) == 5
    # the sample rate alone is enough for Raven's band
    code, out, _ = run_cli(capsys, "annotations", "convert", DATA / "birds.labels.txt",
                           tmp_path / "rate.selections.txt", "--sample-rate", "96k")
    assert code == 0
    assert read_annotations(tmp_path / "rate.selections.txt", sample_rate=96000) == back
    # without the recording Raven cannot hold the time-only labels
    code, _, err = run_cli(capsys, "annotations", "convert", DATA / "birds.labels.txt",
                           tmp_path / "x.selections.txt")
    assert code == 2 and err.count("\n") == 1 and "needs them" in err


def test_cli_measure_json_equals_the_library(capsys, bird_wav):
    path, x, fs = bird_wav
    code, out, _ = run_cli(capsys, "measure", path, "--start", "1.0", "--stop", "1.5",
                           "--fmin", "900", "--fmax", "1.1k", "--nfft", "512", "--hop", "128",
                           "--json")
    assert code == 0
    got = json.loads(out)
    m = measure(ArrayRecording(x, fs), 1.0, 1.5, 900, 1100, nfft=512, hop=128)
    assert got == json.loads(json.dumps(m.to_dict()))
    for key in ("duration_s", "bandwidth_hz", "band_power_db", "peak_frequency_hz",
                "peak_time_s", "rms_db", "snr_db"):
        assert key in got
    code, out, _ = run_cli(capsys, "measure", path, "--start", "0", "--stop", "1",
                           "--channel", "1")
    assert code == 0 and "band_power_db" in out


@pytest.mark.parametrize("argv, words", [
    (["measure", "{wav}", "--start", "1", "--stop", "0.5"], ["stop_s"]),
    (["measure", "{wav}", "--start", "1", "--stop", "2", "--fmin", "100"],
     ["both --fmin and --fmax"]),
    (["measure", "{wav}", "--start", "1", "--stop", "2", "--channel", "5"], ["channel=5"]),
    (["annotations", "list", "{bad}"], ["bad.selections.txt", "line 2", "End Time (s)"]),
    (["annotations", "list", "{meta}"], ["nolist.sigmf-meta", "annotations"]),
    (["annotations", "convert", "{bad}", "{out}"], ["bad.selections.txt", "line 2"]),
    (["annotations", "convert", "{labels}", "{tmp}/x.unknown"], ["x.unknown", "format"]),
])
def test_cli_bad_input_exits_2_with_one_line(capsys, tmp_path, bird_wav, argv, words):
    bad = tmp_path / "bad.selections.txt"
    bad.write_text("Selection\tBegin Time (s)\tEnd Time (s)\n1\t0\tlate\n")
    meta = tmp_path / "nolist.sigmf-meta"
    meta.write_text('{"global": {"core:datatype": "rf32_le", "core:sample_rate": 8000}}')
    names = {"wav": bird_wav[0], "bad": bad, "meta": meta, "out": tmp_path / "o.csv",
             "labels": DATA / "birds.labels.txt", "tmp": tmp_path}
    code, _out, err = run_cli(capsys, *[a.format(**names) for a in argv])
    assert code == 2
    assert err.startswith("specscope: error: ") and err.count("\n") == 1
    for word in words:
        assert word in err
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.slow
def test_compute_package_imports_no_qt():
    import subprocess
    import sys

    code = ("import sys, specscope.compute.annotations; "
            "assert not any(m.startswith(('PyQt6', 'pyqtgraph', 'specscope.app', "
            "'specscope.widgets')) for m in sys.modules), 'Qt imported'")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})
