"""The events table: annotations, annotation files through the existing writers, rows,
the detector operators' schemas, one-line errors, progress and cancellation."""

import threading

import numpy as np
import pytest
from specscope.compute import Cancelled, InputError, operators, read_annotations
from specscope.compute.detect import (
    COLUMNS,
    Events,
    detect,
    detector_names,
    make_detector,
    read_events,
    synth,
)
from specscope.compute.io import ArrayRecording

FS = 48000.0


def table():
    return Events(np.array([4800, 96000, 150001]), np.array([9600, 100800, 150001]), FS,
                  np.array([3000.0, 2500.5, np.nan]), np.array([9000.0, 12500.25, np.nan]),
                  np.array([12.345678901234567, 0.1 + 0.2, 7.0]), ("bat", "", "x"),
                  np.array([0, 1, -1]), "detect.energy", {"snr_db": 4.0, "band_low_hz": None})


def test_rows_and_annotations_carry_every_field():
    ev = table()
    rows = ev.to_rows()
    assert list(rows[0]) == list(COLUMNS)
    assert rows[0]["start_s"] == 0.1 and rows[0]["stop_s"] == 0.2
    assert rows[2]["low_hz"] is None and rows[2]["channel"] is None
    notes = ev.to_annotations()
    assert [a.generator for a in notes] == ["detect.energy"] * 3
    assert notes[0].freq_low_hz == 3000.0 and notes[2].freq_low_hz is None
    assert notes[0].comment == "score=12.345678901234567"
    assert notes[1].channel == 1 and notes[2].channel is None
    # the same detection gives the same uuid in every run
    assert [a.uuid for a in table().to_annotations()] == [a.uuid for a in notes]
    back = Events.from_annotations(notes, FS)
    for col in ("start_sample", "stop_sample", "low_hz", "high_hz", "score", "channel"):
        np.testing.assert_array_equal(getattr(back, col), getattr(ev, col))
    assert back.label == ev.label and back.detector == "detect.energy"
    assert "params=" in ev.to_annotations(with_params=True)[0].comment


@pytest.mark.parametrize("name", ["x.selections.txt", "x.csv", "x.labels.txt", "x.h5"])
def test_annotation_files_round_trip(tmp_path, name):
    ev = table()
    path = ev.write(tmp_path / name)
    notes = read_annotations(path, sample_rate=FS)
    assert len(notes) == 3
    back = read_events(path, FS)
    order = np.argsort(back.start_sample, kind="stable")
    back = back.take(order)
    np.testing.assert_array_equal(back.start_sample, ev.start_sample)
    np.testing.assert_array_equal(back.stop_sample, ev.stop_sample)
    assert [v.rstrip() for v in back.label] == list(ev.label)
    if name.endswith(".labels.txt"):  # 6 decimals, the score in the label
        np.testing.assert_allclose(back.score, ev.score, rtol=1e-12)
        np.testing.assert_allclose(back.low_hz[:2], ev.low_hz[:2], atol=1e-6)
    else:  # the shortest round-trip numbers: exact
        np.testing.assert_array_equal(back.score, ev.score)
        np.testing.assert_array_equal(back.low_hz[:2], ev.low_hz[:2])
        assert back.detector == "detect.energy"


def test_dataframe_has_the_columns():
    pd = pytest.importorskip("pandas")
    frame = table().to_dataframe()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(COLUMNS)
    assert frame.attrs["detector"] == "detect.energy" and frame["score"].iloc[0] == 12.345678901234567


def test_detectors_are_operators_with_schemas():
    assert detector_names() == ["detect.bursts", "detect.energy", "detect.template"]
    for name in detector_names():
        d = operators.describe_operator(name)
        assert d["family"] == "detect" and d["streamable"] and d["reference"]
        names = {p["name"] for p in d["params"]}
        assert {"nfft", "hop", "window", "label"} <= names
    energy = {p["name"]: p for p in operators.describe_operator("detect.energy")["params"]}
    assert energy["snr_db"]["unit"] == "dB" and energy["band_low_hz"]["unit"] == "Hz"


def test_bad_input_gives_one_line_errors():
    x = np.zeros(48000, np.float32)
    with pytest.raises(InputError, match="unknown parameter 'snr'; did you mean 'snr_db'"):
        detect(x, "energy", {"snr": 3}, fs=FS)
    with pytest.raises(InputError, match=r"gives 'array' results, not events"):
        detect(x, "gain", fs=FS)
    with pytest.raises(InputError, match="holds no frequency bin"):
        detect(x, "energy", {"band_low_hz": 30000.0, "band_high_hz": 31000.0}, fs=FS)
    with pytest.raises(InputError, match="band_high_hz=1000.0 must be >= band_low_hz=2000.0"):
        detect(x, "energy", {"band_low_hz": 2000.0, "band_high_hz": 1000.0}, fs=FS)
    with pytest.raises(InputError, match="template_stop_s=0.1 must be > template_start_s=0.2"):
        detect(x, "template", {"template_start_s": 0.2, "template_stop_s": 0.1}, fs=FS)
    with pytest.raises(InputError, match="the template box is flat"):
        detect(x, "template", {"template_start_s": 0.2, "template_stop_s": 0.4}, fs=FS)
    with pytest.raises(InputError, match="chunk=0 must be a whole number"):
        detect(x, "energy", fs=FS, chunk=0)
    with pytest.raises(InputError, match=r"detector='nope' is not a detector; built-in: "
                       r"detect.bursts, detect.energy, detect.template, or bled, burst"):
        detect(x, "nope", fs=FS)
    with pytest.raises(InputError, match="an array needs fs="):
        detect(x, "energy")
    det = make_detector("energy", fs=FS)
    det.push(x, final=True)
    with pytest.raises(InputError, match="the stream is finished"):
        det.push(x)
    with pytest.raises(InputError, match="push one channel"):
        make_detector("energy", fs=FS).push(np.zeros((10, 2)))
    y = x.copy()
    y[30000] = np.nan
    with pytest.raises(InputError, match="sample 30000 of the stream is NaN or infinite"):
        detect(y, "energy", fs=FS, chunk=7000)
    for err in (InputError,):
        with pytest.raises(err) as info:
            detect(x, "energy", {"snr_db": -1}, fs=FS)
        assert "\n" not in str(info.value) and "snr_db=-1" in str(info.value)


def test_progress_reaches_one_and_cancel_stops():
    plan = synth.plan_calls(20.0, FS, 4, seed=1)
    rec = ArrayRecording(np.stack([synth.render_all(plan)] * 2, axis=1), FS)
    seen = []
    ev = detect(rec, "energy", {"band_low_hz": 2500.0, "band_high_hz": 12500.0},
                chunk=100_000, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 10
    assert sorted(set(ev.channel)) == [0, 1] and len(ev) == 2 * len(plan.calls)
    np.testing.assert_array_equal(ev.start_sample[ev.channel == 0],
                                  ev.start_sample[ev.channel == 1])
    one = detect(rec, "energy", {"band_low_hz": 2500.0, "band_high_hz": 12500.0}, channels=1,
                 start_s=5.0, stop_s=15.0)
    assert set(one.channel) == {1} and np.all(one.start_s >= 5.0) and len(one) >= 1
    stop = threading.Event()
    calls = []

    def progress(f):
        calls.append(f)
        if len(calls) == 2:
            stop.set()

    with pytest.raises(Cancelled):
        detect(rec, "energy", chunk=100_000, progress=progress, cancel=stop)
    assert len(calls) == 2


def test_channel_streams_are_the_event_step_of_a_stream():
    from specscope.compute.detect import ChannelStreams

    plan = synth.plan_calls(12.0, FS, 3, seed=2)
    x = synth.render_all(plan)
    two = np.stack([x, np.roll(x, 24000)], axis=1)
    params = {"band_low_hz": 2500.0, "band_high_hz": 12500.0}
    streams = make_detector("energy", params, fs=FS).for_channels([3, 5])
    assert isinstance(streams, ChannelStreams) and streams.lookahead > 0
    rows = two.T
    got = Events.concat([streams.push(rows[:, a:a + 7000], final=a + 7000 >= len(two))
                         for a in range(0, len(two), 7000)], fs=FS).sorted()
    want = detect(ArrayRecording(np.stack([np.zeros_like(x)] * 3 + [two[:, 0], x * 0,
                                           two[:, 1]], axis=1), FS), "energy", params,
                  channels=[3, 5])
    np.testing.assert_array_equal(got.start_sample, want.start_sample)
    np.testing.assert_array_equal(got.channel, want.channel)
    assert set(got.channel) == {3, 5} and len(got) == 6
    with pytest.raises(InputError, match=r"push chunks shaped \(2, samples\) for channels"):
        streams.push(np.zeros((3, 10)))
    # the stream protocol: a spawned stage is fresh and independent
    again = streams.spawn()
    first = again.push(rows, final=True)
    np.testing.assert_array_equal(first.sorted().start_sample, got.start_sample)
    np.testing.assert_array_equal(
        make_detector("energy", params, fs=FS).whole(rows).sorted().start_sample,
        got.start_sample)
