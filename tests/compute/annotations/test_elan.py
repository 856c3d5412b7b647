"""ELAN .eaf files in and out."""

from __future__ import annotations

import pytest
from specscope.compute.annotations import (
    Annotation,
    detect_format,
    read_annotations,
    write_annotations,
)
from specscope.compute.annotations.elan import read_eaf, write_eaf
from specscope.compute.errors import InputError

ITEMS = [
    Annotation(0.1, 0.5, label="a & <b>", tier="words"),
    Annotation(0.5, 0.9, label="  two spaces ", tier="words"),
    Annotation(0.25, 1.125, label="ünïcode", tier="notes"),
    Annotation(0.3, 0.3, label="point", tier="notes"),
]

HAND = """<?xml version="1.0" encoding="UTF-8"?>
<ANNOTATION_DOCUMENT AUTHOR="" DATE="2024-01-01T00:00:00+00:00" FORMAT="3.0" VERSION="3.0">
    <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds">
        <MEDIA_DESCRIPTOR MEDIA_URL="file:///tmp/a.wav" MIME_TYPE="audio/x-wav"/>
    </HEADER>
    <TIME_ORDER>
        <TIME_SLOT TIME_SLOT_ID="ts1" TIME_VALUE="250"/>
        <TIME_SLOT TIME_SLOT_ID="ts2" TIME_VALUE="1000"/>
        <TIME_SLOT TIME_SLOT_ID="ts3" TIME_VALUE="1500"/>
        <TIME_SLOT TIME_SLOT_ID="ts4"/>
    </TIME_ORDER>
    <TIER LINGUISTIC_TYPE_REF="utterance" PARTICIPANT="A" TIER_ID="speaker A">
        <ANNOTATION>
            <ALIGNABLE_ANNOTATION ANNOTATION_ID="a1" TIME_SLOT_REF1="ts1" TIME_SLOT_REF2="ts2">
                <ANNOTATION_VALUE>hello there</ANNOTATION_VALUE>
            </ALIGNABLE_ANNOTATION>
        </ANNOTATION>
        <ANNOTATION>
            <ALIGNABLE_ANNOTATION ANNOTATION_ID="a2" TIME_SLOT_REF1="ts2" TIME_SLOT_REF2="ts4">
                <ANNOTATION_VALUE>not aligned</ANNOTATION_VALUE>
            </ALIGNABLE_ANNOTATION>
        </ANNOTATION>
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="utterance" TIER_ID="speaker B">
        <ANNOTATION>
            <ALIGNABLE_ANNOTATION ANNOTATION_ID="a3" TIME_SLOT_REF1="ts2" TIME_SLOT_REF2="ts3">
                <ANNOTATION_VALUE>bye</ANNOTATION_VALUE>
            </ALIGNABLE_ANNOTATION>
        </ANNOTATION>
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="translation" PARENT_REF="speaker B" TIER_ID="gloss">
        <ANNOTATION>
            <REF_ANNOTATION ANNOTATION_ID="a4" ANNOTATION_REF="a3">
                <ANNOTATION_VALUE>au revoir</ANNOTATION_VALUE>
            </REF_ANNOTATION>
        </ANNOTATION>
    </TIER>
    <LINGUISTIC_TYPE LINGUISTIC_TYPE_ID="utterance" TIME_ALIGNABLE="true"/>
    <LINGUISTIC_TYPE CONSTRAINTS="Symbolic_Association" LINGUISTIC_TYPE_ID="translation"
        TIME_ALIGNABLE="false"/>
</ANNOTATION_DOCUMENT>
"""


def spans(items):
    return [(a.tier, a.start_s, a.stop_s, a.label) for a in items]


def test_round_trip_keeps_times_labels_and_tiers(tmp_path):
    path = write_eaf(tmp_path / "a.eaf", ITEMS)
    items = read_eaf(path)
    assert spans(items) == sorted(spans(ITEMS), key=lambda s: (s[0] != "words", s[1]))
    again = read_eaf(write_eaf(tmp_path / "b.eaf", items))
    assert again == items


def test_times_are_kept_to_the_millisecond(tmp_path):
    items = read_eaf(write_eaf(tmp_path / "ms.eaf", [Annotation(0.12345, 1.0006)]))
    assert spans(items) == [("default", 0.123, 1.001, "")]


def test_a_hand_written_file_with_two_tiers(tmp_path):
    path = tmp_path / "hand.eaf"
    path.write_text(HAND, encoding="utf-8")
    assert detect_format(path) == "eaf"
    items = read_annotations(path)
    # the untimed annotation and the symbolic (REF) one are skipped
    assert spans(items) == [("speaker A", 0.25, 1.0, "hello there"),
                            ("speaker B", 1.0, 1.5, "bye")]
    hidden = tmp_path / "hand.xml"
    hidden.write_text(HAND, encoding="utf-8")
    assert detect_format(hidden) == "eaf"


@pytest.mark.parametrize("declaration", [
    '<!DOCTYPE lolz [<!ENTITY lol "lol">]>',
    '<!ENTITY x SYSTEM "file:///etc/passwd">',
])
def test_doctype_and_entities_are_refused(tmp_path, declaration):
    path = tmp_path / "bad.eaf"
    path.write_text(HAND.replace("?>\n", "?>\n" + declaration + "\n", 1), encoding="utf-8")
    with pytest.raises(InputError, match="line 2: .*DOCTYPE or entities"):
        read_annotations(path)


def test_broken_xml_names_its_line(tmp_path):
    path = tmp_path / "broken.eaf"
    path.write_text(HAND.replace("</TIER>", "</TIRE>", 1), encoding="utf-8")
    with pytest.raises(InputError, match="line 23: not well-formed XML") as e:
        read_annotations(path)
    assert "\n" not in str(e.value)


def test_a_missing_time_slot_is_named(tmp_path):
    path = tmp_path / "slot.eaf"
    path.write_text(HAND.replace('TIME_SLOT_REF2="ts3"', 'TIME_SLOT_REF2="ts9"'),
                    encoding="utf-8")
    with pytest.raises(InputError, match="'speaker B': annotation 'a3': time slot 'ts9'"):
        read_annotations(path)


def test_eaf_to_textgrid_and_back(tmp_path):
    path = write_annotations(tmp_path / "a.eaf", ITEMS[:3])
    tg = write_annotations(tmp_path / "a.TextGrid", read_annotations(path))
    assert spans(read_annotations(tg)) == spans(read_annotations(path))
