"""The review of detections without Qt (app/review.py) and its place in session files."""

import json

import numpy as np
import pytest
from specscope.app.review import ACCEPTED, REJECTED, Review
from specscope.app.session import ViewSettings, load_session, session_state, write_session
from specscope.compute.annotations import read_annotations
from specscope.compute.detect import Events
from specscope.compute.errors import InputError


def _events():
    return Events([100, 4000, 9000], [900, 4800, 9600], 8000.0, [500.0, np.nan, 1000.0],
                  [1500.0, np.nan, 2000.0], [12.5, 7.25, 3.0], ("e", "e", "e"), [0, 0, 0],
                  "detect.energy", {"snr_db": 5.0})


def test_round_trip_and_annotations():
    r = Review(_events(), label_list=["bat", "bird"])
    r.decide(0, ACCEPTED, "bat")
    r.decide(1, REJECTED)
    back = Review.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.states == [ACCEPTED, REJECTED, ""] and back.labels == ["bat", "e", "e"]
    assert back.label_list == ["bat", "bird"]
    np.testing.assert_array_equal(back.events.start_sample, [100, 4000, 9000])
    assert np.isnan(back.events.low_hz[1]) and back.events.params == {"snr_db": 5.0}
    (a,) = back.accepted_annotations()
    assert (a.start_s, a.stop_s, a.label) == (100 / 8000, 900 / 8000, "bat")
    assert a.uuid == r.annotation(0).uuid  # the same detection, the same annotation
    assert back.counts() == {"accepted": 1, "rejected": 1, "pending": 1}


def test_bad_review_names_the_field():
    d = Review(_events()).to_dict()
    d["review"] = ["accepted", "maybe", ""]
    with pytest.raises(InputError, match="decision 'maybe'"):
        Review.from_dict(d)
    d = Review(_events()).to_dict()
    del d["score"]
    with pytest.raises(InputError, match="detections: 'score' is missing"):
        Review.from_dict(d)
    d = Review(_events()).to_dict()
    d["low_hz"] = [1.0]
    with pytest.raises(InputError, match=r"detections\.low_hz must be a list of 3"):
        Review.from_dict(d)


def test_session_keeps_the_review(tmp_path):
    rec = tmp_path / "a.wav"
    rec.write_bytes(b"")
    r = Review(_events())
    r.decide(2, ACCEPTED, "x")
    state = session_state(rec, ViewSettings(), (0, 1, 0, 4000), (-90, 0), "inferno",
                          detections=r.to_dict())
    write_session(tmp_path / "s.json", state)
    back = Review.from_dict(load_session(tmp_path / "s.json")["detections"])
    assert back.states == ["", "", ACCEPTED] and back.labels[2] == "x"
    state["detections"]["review"] = ["no"] * 3
    write_session(tmp_path / "bad.json", state)
    with pytest.raises(InputError, match=r"bad\.json: detections: review: decision 'no'"):
        load_session(tmp_path / "bad.json")


def test_tables_carry_score_and_review(tmp_path):
    r = Review(_events())
    r.decide(0, ACCEPTED, "bat")
    r.decide(2, REJECTED)
    raven = r.write_table(tmp_path / "t.selections.txt")
    rows = read_annotations(raven, sample_rate=8000.0)
    assert [x.extra["Review"] for x in rows] == ["accepted", "pending", "rejected"]
    assert [float(x.extra["Score"]) for x in rows] == [12.5, 7.25, 3.0]
    assert rows[0].label == "bat" and rows[1].freq_low_hz is None  # whole band: time only
    rows = read_annotations(r.write_table(tmp_path / "t.csv"))
    assert [x.extra["review"] for x in rows] == ["accepted", "pending", "rejected"]
    # formats without extra columns carry the review in the comment
    rows = read_annotations(r.write_table(tmp_path / "t.h5"))
    assert rows[2].comment == "score=3.0; review=rejected"


def test_annotations_are_built_when_asked_for_and_equal_the_tables():
    e = _events()
    r = Review(e)
    full = e.to_annotations()
    r.decide(2, ACCEPTED, "owl")
    a = r.annotation(2)
    assert a == full[2].replace(label="owl")  # the same uuid, box, comment and extra
    assert r.annotation(2) is not a and r.annotation(2) == a  # kept, relabelled on request
    assert r.accepted_annotations() == [a]
    rows = r.table_annotations()
    assert [x.uuid for x in rows] == [x.uuid for x in full]
    assert rows[2].label == "owl" and rows[2].comment == "score=3.0; review=accepted"
