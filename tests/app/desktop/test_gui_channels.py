"""Stacked channels: a box stays on the band it was started on, annotations carry their
channel and are drawn on its band, the list says the channel, imported Raven channels
land on theirs."""

import pytest
from _gui import TIMEOUT_MS, idle
from PyQt6.QtCore import Qt
from specscope.compute.annotations import read_annotations
from specscope.widgets.annotation_list import CHANNEL_COLUMN, COLUMNS
from test_gui_annotations import CTRL, focus_view, open_idle, select_box


@pytest.fixture
def stacked(qtbot, window, stereo_wav):
    path = stereo_wav[0]
    w = window
    open_idle(w, path)
    w.controls.channel.setValue(-1)  # all (stacked)
    qtbot.waitUntil(lambda: w.engine.__class__.__name__ == "StackedEngine"
                    and w.last_image is not None and not w.worker.is_busy(),
                    timeout=TIMEOUT_MS)
    idle(w)
    return w


def y_of(w, channel, f):
    e = w.engine
    return channel * e.band + (f - e.f0)


def test_a_box_dragged_across_bands_stays_on_its_channel(qtbot, stacked):
    w = stacked
    e = w.engine
    # from 2 kHz on channel 1 down to 500 Hz on channel 0
    select_box(qtbot, w, 0.5, y_of(w, 1, 2000.0), 1.2, y_of(w, 0, 500.0))
    s = w.annotations.selection
    assert s.channel == 1
    assert s.freq_low_hz == pytest.approx(max(e.f0, 0.0))  # the bottom of channel 1's band
    assert s.freq_high_hz == pytest.approx(2000.0, abs=2 * e.df)
    # the box drawn is inside channel 1's band
    rect = w.annotations.layer._selection_item.rect()
    assert e.band - 1e-6 <= rect.top() and rect.bottom() <= e.band + e.span + 1e-6
    focus_view(qtbot, w)
    qtbot.keyClick(w.view, Qt.Key.Key_Return)  # annotate it
    qtbot.waitUntil(lambda: len(w.annotations.annotations) == 1, timeout=TIMEOUT_MS)
    a = w.annotations.annotations[0]
    assert a.channel == 1 and a.freq_low_hz == pytest.approx(max(e.f0, 0.0))
    r = w.annotations.layer.rect_of(a.uuid)
    assert r is not None and e.band - 1e-6 <= r.top() and r.bottom() <= e.band + e.span + 1e-6
    model = w.annotations.list.model
    assert COLUMNS[CHANNEL_COLUMN] == "Channel"
    assert model.data(model.index(0, CHANNEL_COLUMN)) == "1"


def test_a_box_upwards_across_bands_stays_on_channel_0(qtbot, stacked):
    w = stacked
    e = w.engine
    select_box(qtbot, w, 0.5, y_of(w, 0, 3000.0), 1.2, y_of(w, 1, 4000.0), CTRL)
    s = w.annotations.selection
    assert s.channel == 0
    assert s.freq_low_hz == pytest.approx(3000.0, abs=2 * e.df)
    assert s.freq_high_hz == pytest.approx(min(e.f0 + e.span, e.fs / 2))


def test_raven_channels_land_on_their_band(qtbot, stacked, tmp_path):
    w = stacked
    table = tmp_path / "two.selections.txt"
    table.write_text("Selection\tView\tChannel\tBegin Time (s)\tEnd Time (s)\tLow Freq (Hz)"
                     "\tHigh Freq (Hz)\tAnnotation\n"
                     "1\tSpectrogram 1\t1\t0.2\t0.6\t800\t1200\tleft\n"
                     "2\tSpectrogram 1\t2\t0.8\t1.4\t2500\t3500\tright\n")
    assert [a.channel for a in read_annotations(table)] == [0, 1]
    w.annotations.import_from(table)
    qtbot.waitUntil(lambda: len(w.annotations.annotations) == 2, timeout=TIMEOUT_MS)
    by_label = {a.label: a for a in w.annotations.annotations}
    for label, c, (lo, hi) in (("left", 0, (800, 1200)), ("right", 1, (2500, 3500))):
        a = by_label[label]
        assert a.channel == c
        r = w.annotations.layer.rect_of(a.uuid)
        assert r.top() == pytest.approx(y_of(w, c, lo)) and r.bottom() == pytest.approx(
            y_of(w, c, hi))
    model = w.annotations.list.model
    chans = sorted(model.data(model.index(i, CHANNEL_COLUMN)) for i in range(2))
    assert chans == ["0", "1"]


def test_reimporting_an_exported_audacity_file_adds_nothing(qtbot, stacked, tmp_path):
    w = stacked
    e = w.engine
    select_box(qtbot, w, 0.3137, y_of(w, 0, 1234.5), 0.9071, y_of(w, 0, 2345.6))
    focus_view(qtbot, w)
    qtbot.keyClick(w.view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(w.annotations.annotations) == 1, timeout=TIMEOUT_MS)
    made = w.annotations.annotations[0]
    out = tmp_path / "marks.txt"
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        w.annotations.export_to(out, "audacity")
    back = read_annotations(out, recording=w.document.recording)
    assert len(back) == 1 and back[0].uuid != made.uuid  # Audacity keeps no ids
    w.annotations.import_from(out)
    idle(w)
    assert len(w.annotations.annotations) == 1
    assert e is w.engine
