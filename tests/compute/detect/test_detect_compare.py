"""Detections against annotations (compute.detect.compare): matches and scores worked by hand."""

import math

import pytest
from specscope.compute.annotations import Annotation
from specscope.compute.detect import Events
from specscope.compute.detect.compare import Box, compare, match_boxes, overlap
from specscope.compute.errors import InputError


def test_overlap_is_time_iou_where_the_bands_meet():
    a = Box(0.0, 1.0, 1000.0, 2000.0)
    b = Box(0.5, 1.5, 1500.0, 2500.0)
    # time: 0.5 s shared of 1.5 s spanned; the bands meet
    assert overlap(a, b) == pytest.approx(0.5 / 1.5, rel=1e-12)
    assert overlap(a, Box(0.5, 1.5)) == pytest.approx(0.5 / 1.5, rel=1e-12)  # time only
    assert overlap(a, Box(0.5, 1.5, 2000.0, 3000.0)) == 0.0  # bands touch, do not meet
    assert overlap(a, Box(1.0, 2.0, 1000.0, 2000.0)) == 0.0  # spans touch


def test_matching_is_one_to_one_by_largest_overlap():
    truth = [Box(0.0, 1.0), Box(2.0, 3.0)]
    # detection 0 overlaps truth 0 by 0.5, detection 1 overlaps it by 0.9: 1 takes it
    det = [Box(0.0, 0.5), Box(0.0, 0.9), Box(2.2, 3.0), Box(5.0, 6.0)]
    pairs = match_boxes(det, truth, min_overlap=0.3)
    assert [(i, j) for i, j, _ in pairs] == [(1, 0), (2, 1)]
    assert pairs[0][2] == pytest.approx(0.9)
    assert pairs[1][2] == pytest.approx(0.8)


def test_precision_recall_f1_per_label():
    # truth: 3 'bat', 2 'bird'; detections: 2 bats right, 1 bat labelled bird, 1 false 'bat'
    truth = [Annotation(0, 1, 1000, 2000, label="bat"), Annotation(2, 3, 1000, 2000, label="bat"),
             Annotation(4, 5, 1000, 2000, label="bat"), Annotation(6, 7, 3000, 4000, label="bird"),
             Annotation(8, 9, 3000, 4000, label="bird")]
    det = [Box(0.05, 1.0, 1000, 2000, "bat"), Box(2.0, 2.9, 1000, 2000, "bat"),
           Box(4.0, 5.0, 1000, 2000, "bird"), Box(10.0, 11.0, 1000, 2000, "bat"),
           Box(6.0, 7.0, 3000, 4000, "bird")]
    rows = {r.label: r for r in compare(det, truth)}
    assert list(rows) == ["*", "bat", "bird"]
    allr = rows["*"]  # 4 matches of 5 detections, 4 of 5 truths
    assert (allr.tp, allr.fp, allr.fn) == (4, 1, 1)
    assert allr.precision == pytest.approx(0.8) and allr.recall == pytest.approx(0.8)
    bat = rows["bat"]  # 2 right; fp: the one at 10 s; fn: the one called bird
    assert (bat.tp, bat.fp, bat.fn) == (2, 1, 1)
    assert bat.precision == pytest.approx(2 / 3) and bat.recall == pytest.approx(2 / 3)
    assert bat.f1 == pytest.approx(2 / 3)
    bird = rows["bird"]  # 1 right; fp: the bat called bird; fn: the one at 8 s
    assert (bird.tp, bird.fp, bird.fn) == (1, 1, 1)
    assert bird.f1 == pytest.approx(0.5)


def test_events_compare_and_empty_rows():
    ev = Events([0, 48000], [4800, 52800], 48000.0, [1000, 1000], [2000, 2000], [10.0, 3.0],
                ("bat", "bat"))
    rows = compare(ev, [Annotation(0.0, 0.1, 1000, 2000, label="bat")])
    assert (rows[1].tp, rows[1].fp, rows[1].fn) == (1, 1, 0)
    empty = compare([], [])
    assert len(empty) == 1 and math.isnan(empty[0].precision) and math.isnan(empty[0].f1)


def test_bad_overlap_is_refused():
    with pytest.raises(InputError, match="min_overlap"):
        compare([], [], min_overlap=0.0)
