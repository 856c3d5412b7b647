"""Events as a pipeline output: a pipeline ending in a detector.

References: :func:`specscope.compute.detect.detect` (the detector alone, itself
tested against its reference in test_detect_reference.py) over the signal the
pipeline's steps give; chunked pipeline runs against whole runs, for chunk
sizes that cut events.
"""

import json

import numpy as np
import pytest
from specscope.compute.detect import Events, detect, synth
from specscope.compute.errors import InputError
from specscope.compute.io import ArrayRecording
from specscope.compute.pipeline import Pipeline

FS = 48000.0
HIGHPASS = {"op": "filter", "params": {"design": "butter", "btype": "highpass", "order": 4,
                                       "cutoff": 1000.0}}
ENERGY = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0}


@pytest.fixture(scope="module")
def calls():
    plan = synth.plan_calls(40.0, FS, 12, n_template=4, seed=11, snr_db=(6.0, 20.0))
    return plan, synth.render_all(plan)


def _template(plan):
    c = max((c for c in plan.calls if c.kind == "template"), key=lambda c: c.snr_db)
    return {"template_start_s": c.start / FS, "template_stop_s": c.stop / FS,
            "template_low_hz": c.low_hz - 300, "template_high_hz": c.high_hz + 300,
            "threshold": 0.3}


def _same(a, b, score_tol=0.0):
    assert len(a) == len(b)
    np.testing.assert_array_equal(a.start_sample, b.start_sample)
    np.testing.assert_array_equal(a.stop_sample, b.stop_sample)
    np.testing.assert_array_equal(a.channel, b.channel)
    np.testing.assert_array_equal(a.low_hz, b.low_hz)
    np.testing.assert_array_equal(a.high_hz, b.high_hz)
    np.testing.assert_allclose(a.score, b.score, rtol=0, atol=score_tol)
    assert a.label == b.label


def _cut(events, chunk):
    """Events spanning a chunk boundary."""
    return int(np.sum(events.start_sample // chunk != (events.stop_sample - 1) // chunk))


def test_a_detector_alone_is_the_detector(calls):
    plan, x = calls
    rec = ArrayRecording(x, FS)
    for name, params in (("detect.energy", ENERGY), ("detect.template", _template(plan))):
        got = Pipeline.from_steps([{"op": name, "params": params}]).detect(rec)
        ref = detect(rec, name, params, chunk=None)
        assert len(ref) >= 4
        _same(got, ref)
        assert got.detector == name and got.params == ref.params


@pytest.mark.slow
@pytest.mark.parametrize("name", ["detect.energy", "detect.template", "onsets.detect"])
def test_chunked_event_pipelines_equal_whole_runs(calls, name):
    plan, x = calls
    rec = ArrayRecording(x, FS)
    params = {"detect.energy": ENERGY, "detect.template": _template(plan),
              "onsets.detect": {}}[name]
    p = Pipeline.from_steps([HIGHPASS, {"op": "gain", "params": {"factor": 3.0}},
                             {"op": name, "params": params}])
    whole = p.detect(rec, chunk_samples=x.size)
    assert len(whole) >= 4
    shortest = int(np.min(whole.stop_sample - whole.start_sample))
    for chunk in (997, 4099, 65536, 300_007):
        _same(p.detect(rec, chunk_samples=chunk), whole)
        if name != "onsets.detect" and chunk < shortest:
            assert _cut(whole, chunk) == len(whole)  # every event crosses a boundary
    if name != "onsets.detect":
        assert _cut(whole, 65536) >= 1


@pytest.mark.parametrize("name", ["detect.energy", "detect.template"])
def test_steps_then_detector_equal_the_detector_on_the_processed_signal(calls, name):
    plan, x = calls
    params = ENERGY if name == "detect.energy" else _template(plan)
    p = Pipeline.from_steps([HIGHPASS, {"op": name, "params": params}])
    y = p.signal_part()(x, FS)  # the whole signal through the steps, one call
    ref = detect(ArrayRecording(y, FS), name, params, chunk=None)
    got = p.detect(ArrayRecording(x, FS), chunk_samples=65536)
    # same edges; scores to the rounding of the filter's blocks (float32 signal)
    _same(got, ref, score_tol=1e-5)


def test_a_valid_mode_step_keeps_recording_times(calls):
    _plan, x = calls
    # moving_average drops its first h samples: events stay at recording samples
    p = Pipeline.from_steps([{"op": "moving_average", "params": {"n": 9}},
                             {"op": "detect.energy", "params": ENERGY}])
    bound = p.bind(FS)
    assert bound.drop == 8
    y = p.signal_part()(x, FS)
    assert y.size == x.size - 8
    ref = detect(ArrayRecording(y, FS), "detect.energy", ENERGY, chunk=None).shifted(8)
    got = p.detect(ArrayRecording(x, FS), chunk_samples=4099)
    _same(got, ref, score_tol=1e-9)


def test_iq_bursts_through_a_pipeline_keep_absolute_frequencies():
    x, truth = synth.iq_bursts()
    rec = ArrayRecording(x, FS, center_frequency=1e8)
    params = {"band_low_hz": 1e8 - 20000, "band_high_hz": 1e8 + 20000}
    p = Pipeline.from_steps([{"op": "gain", "params": {"factor": 2.0}},
                             {"op": "detect.bursts", "params": params}])
    whole = p.detect(rec, chunk_samples=x.size)
    assert len(whole) == len(truth)
    ref = detect(ArrayRecording(2 * x, FS, center_frequency=1e8), "detect.bursts", params,
                 chunk=None)
    _same(whole, ref, score_tol=1e-9)
    assert np.all(whole.low_hz > 1e8 - 25000) and np.all(whole.high_hz < 1e8 + 25000)
    _same(p.detect(rec, chunk_samples=1001), whole)


def test_channels_each_have_their_detector(calls):
    _plan, x = calls
    two = np.stack([x, 0.5 * x[::-1]], axis=1)
    rec = ArrayRecording(two, FS)
    p = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy", "params": ENERGY}])
    both = p.detect(rec, chunk_samples=4099)
    assert set(both.channel.tolist()) == {0, 1}
    for c in (0, 1):
        alone = p.detect(rec, channels=[c], chunk_samples=x.size)
        _same(both.take(both.channel == c), alone)
    # an array through pipeline(x, fs): the rows are the channels
    _same(p(two.T, FS), p.detect(rec, chunk_samples=x.size), score_tol=0.0)


def test_run_of_an_event_pipeline_gives_the_events(calls):
    _plan, x = calls
    rec = ArrayRecording(x, FS)
    p = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy", "params": ENERGY}])
    r = p.run(rec, chunk_samples=65536)
    assert r.kind == "events" and p.bind(FS).kind == "events"
    _same(r.events, p.detect(rec))
    r = p.run(rec, start=int(10 * FS), stop=int(30 * FS))
    assert len(r.events) and r.events.start_sample.min() >= 10 * FS
    assert r.events.stop_sample.max() <= 30 * FS


def test_json_round_trip_and_annotations(calls, tmp_path):
    _plan, x = calls
    p = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy", "params": ENERGY}],
                            name="calls")
    path = p.save(tmp_path / "detect.json")
    doc = json.loads(path.read_text())
    assert doc["steps"][-1] == {"op": "detect.energy", "params": ENERGY}
    back = Pipeline.load(path)
    assert back == p and back.event_step is not None and back.event_step.op == "detect.energy"
    assert back.signal_part().to_dict()["steps"] == [HIGHPASS]
    rec = ArrayRecording(x, FS)
    ev = back.detect(rec)
    _same(ev, p.detect(rec))
    notes = ev.to_annotations()
    assert len(notes) == len(ev) and {a.generator for a in notes} == {"detect.energy"}
    np.testing.assert_allclose([a.start_s for a in notes], ev.start_s)
    assert isinstance(ev, Events)


@pytest.mark.parametrize(("steps", "words"), [
    ([{"op": "detect.energy", "params": ENERGY}, {"op": "gain", "params": {"factor": 2}}],
     ["steps[0] (detect.energy)", "last step", "steps[1] (gain)"]),
    ([HIGHPASS, {"op": "detect.energy", "params": {"snr_db": -1}}],
     ["steps[1] (detect.energy)", "snr_db"]),
    ([{"op": "detect.template", "params": {"threshold": 0.5}}],
     ["steps[0] (detect.template)", "template_start_s"]),
    ([{"op": "detect.energy", "params": {"band_low": 3}}],
     ["steps[0] (detect.energy)", "band_low"]),
    ([{"op": "detect.energy"}, {"op": "spectrogram"}],
     ["steps[0] (detect.energy)", "steps[1] (spectrogram)"]),
])
def test_validation_errors_name_the_step(steps, words):
    with pytest.raises(InputError) as info:
        Pipeline.from_steps(steps)
    for w in words:
        assert w in str(info.value)


def test_a_detector_error_at_bind_time_names_the_step(calls):
    _plan, x = calls
    p = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy",
                                        "params": {"band_low_hz": 30000.0,
                                                   "band_high_hz": 40000.0}}])
    with pytest.raises(InputError, match=r"steps\[1\] \(detect\.energy\): .*band"):
        p.detect(ArrayRecording(x, FS))


def test_detect_refuses_a_pipeline_without_a_detector(calls):
    with pytest.raises(InputError, match="does not end in a detector"):
        Pipeline.from_steps([HIGHPASS]).detect(ArrayRecording(calls[1], FS))


def test_the_notebook_path_gives_a_dataframe(calls, tmp_path):
    pd = pytest.importorskip("pandas")
    import soundfile
    from specscope.compute.detect import Events
    from specscope.compute.detect import detect as detect_function

    _plan, x = calls
    path = tmp_path / "calls.wav"
    soundfile.write(path, x.astype(np.float32), int(FS), subtype="FLOAT")
    # the notebook's call: a path, an alias, the parameters
    ev = detect_function(str(path), "energy", ENERGY)
    assert isinstance(ev, Events)
    _same(ev, detect(ArrayRecording(x.astype(np.float32), FS), "detect.energy", ENERGY))
    frame = ev.to_dataframe()
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(ev) >= 4
    np.testing.assert_array_equal(frame["start_sample"].to_numpy(), ev.start_sample)
    np.testing.assert_array_equal(frame["score"].to_numpy(), ev.score)
    assert (frame["detector"] == "detect.energy").all()
    assert frame.attrs["params"] == ev.params
    # a pipeline file's detections from a path, as a table
    p = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy", "params": ENERGY}])
    table = p.detect(path).to_dataframe()
    assert list(table.columns)[:4] == ["start_sample", "stop_sample", "start_s", "stop_s"]
    np.testing.assert_allclose(table["stop_s"] - table["start_s"],
                               (table["stop_sample"] - table["start_sample"]) / FS)
