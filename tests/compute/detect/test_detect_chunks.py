"""Chunked detector runs equal whole runs: same events, same edges, scores within 1e-9."""

import numpy as np
import pytest
from specscope.compute.detect import Events, detect, make_detector, synth
from specscope.compute.io import ArrayRecording

FS = 48000.0


@pytest.fixture(scope="module")
def calls():
    plan = synth.plan_calls(40.0, FS, 12, n_template=4, seed=11, snr_db=(6.0, 20.0))
    return plan, synth.render_all(plan)


def _params(name, plan):
    if name == "detect.energy":
        return {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0}
    if name == "detect.template":
        c = max((c for c in plan.calls if c.kind == "template"), key=lambda c: c.snr_db)
        return {"template_start_s": c.start / FS, "template_stop_s": c.stop / FS,
                "template_low_hz": c.low_hz - 300, "template_high_hz": c.high_hz + 300,
                "threshold": 0.3}
    return {}


def _same(a, b):
    assert len(a) == len(b)
    np.testing.assert_array_equal(a.start_sample, b.start_sample)
    np.testing.assert_array_equal(a.stop_sample, b.stop_sample)
    np.testing.assert_array_equal(a.channel, b.channel)
    np.testing.assert_allclose(a.score, b.score, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(a.low_hz, b.low_hz)
    np.testing.assert_array_equal(a.high_hz, b.high_hz)


def _cut(events, chunk):
    """How many events span a chunk boundary."""
    return int(np.sum(events.start_sample // chunk != (events.stop_sample - 1) // chunk))


@pytest.mark.parametrize("name", ["detect.energy", "detect.template", "onsets.detect"])
def test_chunked_runs_equal_the_whole_run(calls, name):
    plan, x = calls
    rec = ArrayRecording(x, FS)
    params = _params(name, plan)
    whole = detect(rec, name, params, chunk=None)
    assert len(whole) >= 4, len(whole)
    shortest = int(np.min(whole.stop_sample - whole.start_sample))
    # 997 and 4099: shorter than every event of length (each is cut); others cut some
    for chunk in (997, 4099, 65536, 300_007, 1 << 20):
        got = detect(rec, name, params, chunk=chunk)
        _same(got, whole)
        if name != "onsets.detect" and chunk < shortest:
            assert _cut(whole, chunk) == len(whole)
    if name != "onsets.detect":
        assert _cut(whole, 65536) >= 1


def test_irregular_pushes_equal_one_push(calls):
    plan, x = calls
    rng = np.random.default_rng(5)
    for name in ("detect.energy", "detect.template"):
        det = make_detector(name, _params(name, plan), fs=FS)
        det.prepare(x)
        whole = det.run(x)
        det.reset()
        parts, pos = [], 0
        while pos < x.size:
            n = int(rng.integers(1, 40000))
            parts.append(det.push(x[pos:pos + n], final=pos + n >= x.size))
            pos += n
        _same(Events.concat(parts, fs=FS), whole)


def test_bursts_chunked_equal_whole():
    x, truth = synth.iq_bursts(FS)
    rec = ArrayRecording(x, FS, center_frequency=1e8)
    params = {"band_low_hz": 1e8 - 20000, "band_high_hz": 1e8 + 20000}
    whole = detect(rec, "bursts", params, chunk=None)
    assert len(whole) == len(truth)
    for chunk in (1001, 8192, 100_003):
        _same(detect(rec, "bursts", params, chunk=chunk), whole)
    assert _cut(whole, 1001) == len(whole)



CLICKS = '''
import numpy as np
from specscope.compute.operators import Param, operator

SPECSCOPE_PLUGIN = {"summary": "clicks over a level", "outputs": {"find": "events"}}


@operator("find", family="analysis", summary="samples where a 32-sample mean of |x| peaks",
          params=[Param("level", float, 0.5)], history=64)
def find(x, *, level, fs):
    m = np.convolve(np.abs(x), np.ones(32) / 32, mode="same")
    k = np.flatnonzero((m[1:-1] >= level) & (m[1:-1] > m[:-2]) & (m[1:-1] >= m[2:])) + 1
    return {"times": k / fs, "sample": k.astype(np.int64), "strength": m[k]}
'''


def test_an_events_plugin_with_history_runs_in_blocks_like_a_whole_run(tmp_path, monkeypatch):
    from specscope.compute import extensions
    from specscope.compute.detect import plugin

    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "clicks.py").write_text(CLICKS)
    monkeypatch.setenv("SPECSCOPE_PLUGINS", str(folder))
    monkeypatch.setenv("SPECSCOPE_DATA_DIR", str(tmp_path / "data"))
    extensions.reset()
    monkeypatch.setattr(plugin, "BLOCK", 5000)  # blocks that cut clicks
    try:
        rng = np.random.default_rng(4)
        x = rng.standard_normal(60_000).astype(np.float32) * 0.05
        at = rng.choice(np.arange(100, 59_000, 150), 40, replace=False)
        at = np.concatenate([at, [4990, 5003, 9999, 10_001]])  # on the block edges
        for k in at:
            x[k:k + 20] += 1.5
        direct = operators_call("clicks.find", x)
        rec = ArrayRecording(x, FS)
        for chunk in (None, 777, 5000, 12_345):
            ev = detect(rec, "clicks.find", {"level": 0.5}, chunk=chunk)
            np.testing.assert_array_equal(ev.start_sample, direct["sample"])
            np.testing.assert_allclose(ev.score, direct["strength"], rtol=0, atol=1e-9)
        assert len(ev) >= 40 and ev.detector == "clicks.find" and ev.label[0] == "find"
    finally:
        extensions.reset()


def operators_call(name, x):
    from specscope.compute import operators

    return operators.call(name, x, fs=FS, level=0.5)
