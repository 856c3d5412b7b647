"""A long input split into part tasks gives the whole run's detections.

Each part owns the events starting in its range and computes them with the
margins its detector declares (grid, part_lookback, settled); the parts
joined in order equal the whole run (same rows and edges, scores bit for
bit) for the energy, template and burst detectors, with part edges that cut
events and an event longer than a part.  Through run_detect, split tables
are the bytes of unsplit ones in this process, on 2 processes and on a real
Dask scheduler with 2 workers.
"""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
import soundfile
from specscope.compute.batch import run_detect
from specscope.compute.batch.parts import part_events, plan_parts
from specscope.compute.detect import Events, synth, template
from specscope.compute.io import ArrayRecording
from specscope.compute.pipeline import Pipeline

FS = 48000.0
ENERGY = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0}


@pytest.fixture(scope="module")
def calls():
    plan = synth.plan_calls(60.0, FS, 40, n_template=10, seed=11, snr_db=(6.0, 20.0))
    return plan, synth.render_all(plan)


def _template(plan, threshold=0.3):
    c = max((c for c in plan.calls if c.kind == "template"), key=lambda c: c.snr_db)
    return {"template_start_s": c.start / FS, "template_stop_s": c.stop / FS,
            "template_low_hz": c.low_hz - 300, "template_high_hz": c.high_hz + 300,
            "threshold": threshold}


def _merged(pipe, rec, part_samples, chunk=1 << 16):
    """The parts' events joined in order, and the owned ranges."""
    own = plan_parts(pipe, rec, 0, rec.n_samples, part_samples)
    assert own is not None and len(own) >= 3
    parts = [part_events(pipe, rec, 0, rec.n_samples, rec.channel_list(None), o,
                         chunk_samples=chunk, last=i == len(own) - 1)[0]
             for i, o in enumerate(own)]
    for (p0, p1), ev in zip(own, parts, strict=True):
        assert np.all((ev.start_sample >= p0) & (ev.start_sample < p1))
    return Events.concat(parts, fs=rec.sample_rate).sorted(), own


def _same(a, b):
    assert len(a) == len(b)
    np.testing.assert_array_equal(a.start_sample, b.start_sample)
    np.testing.assert_array_equal(a.stop_sample, b.stop_sample)
    np.testing.assert_array_equal(a.channel, b.channel)
    np.testing.assert_allclose(a.score, b.score, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(a.score, b.score)  # the same blocks: bit for bit
    np.testing.assert_array_equal(a.low_hz, b.low_hz)
    np.testing.assert_array_equal(a.high_hz, b.high_hz)
    assert a.label == b.label


def _cut(events, own):
    """Events that cross a part edge (start in one part, stop in the next)."""
    edges = np.array([p0 for p0, _ in own[1:]])
    return int(sum(np.any((s < edges) & (e > edges))
                   for s, e in zip(events.start_sample, events.stop_sample, strict=True)))


def _cutting(pipe, rec, whole, sizes, want=2):
    """Part lengths among ``sizes`` whose edges cut events of ``whole`` (``want`` of them)."""
    picked = [n for n in sizes
              if _cut(whole, plan_parts(pipe, rec, 0, rec.n_samples, n) or [(0, 0)]) > 0]
    assert len(picked) >= want, "no part length cuts an event"
    return picked[:want]


def test_energy_parts_equal_the_whole_run(calls):
    _plan, x = calls
    rec = ArrayRecording(x, FS)
    pipe = Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}])
    whole = pipe.detect(rec)
    assert len(whole) >= 30
    cuts = 0
    for part_samples in (150_001, 240_000, 700_000):
        got, own = _merged(pipe, rec, part_samples)
        _same(got, whole)
        cuts += _cut(whole, own)
    assert cuts >= 2


def test_template_parts_equal_the_whole_run(calls, monkeypatch):
    plan, x = calls
    # blocks of 16 lags (4096 samples): part edges on a fine grid, some cutting matches
    monkeypatch.setattr(template, "BLOCK_LAGS", 16)
    rec = ArrayRecording(x, FS)
    pipe = Pipeline.from_steps([{"op": "detect.template", "params": _template(plan)}])
    whole = pipe.detect(rec)
    assert len(whole) >= 8
    for part_samples in (300_000, *_cutting(pipe, rec, whole, range(100_000, 1_400_000, 7_919))):
        got, _own = _merged(pipe, rec, part_samples)
        _same(got, whole)


def test_burst_parts_equal_the_whole_run():
    x, truth = synth.iq_bursts(FS)
    rec = ArrayRecording(x, FS, center_frequency=1e8)
    params = {"band_low_hz": 1e8 - 20000, "band_high_hz": 1e8 + 20000}
    pipe = Pipeline.from_steps([{"op": "detect.bursts", "params": params}])
    whole = pipe.detect(rec)
    assert len(whole) == len(truth)
    cuts = 0
    for part_samples in (20_000, 45_000, 61_440):
        got, own = _merged(pipe, rec, part_samples, chunk=7001)
        _same(got, whole)
        cuts += _cut(whole, own)
    assert cuts >= 2


def test_an_event_longer_than_a_part_is_found_whole():
    # a 12 s tone in noise: its part reads on until the event has ended (no cap)
    rng = np.random.default_rng(3)
    t = np.arange(int(30 * FS)) / FS
    x = 0.01 * rng.standard_normal(t.size)
    on = (t >= 6.0) & (t < 18.0)
    x[on] += 0.2 * np.sin(2 * np.pi * 5000 * t[on])
    x[(t >= 24.0) & (t < 24.3)] += 0.2 * np.sin(2 * np.pi * 4000 * t[(t >= 24.0) & (t < 24.3)])
    rec = ArrayRecording(x.astype(np.float32), FS)
    # a floor window over the whole recording, so the tone stays one event
    params = dict(ENERGY, noise_block_s=1.0, noise_window_s=59.0)
    pipe = Pipeline.from_steps([{"op": "detect.energy", "params": params}])
    whole = pipe.detect(rec)
    long = whole.take(whole.duration_s > 10)
    assert len(long) == 1 and abs(long.start_s[0] - 6.0) < 0.02
    got, own = _merged(pipe, rec, 2 * int(FS))
    assert sum(p0 > whole.start_sample[0] and p0 < whole.stop_sample[0] for p0, _ in own) >= 4
    _same(got, whole)


def test_parts_through_a_fir_filter_on_two_channels_equal_the_whole_run():
    # a FIR filter starts cold its lookback before each part's stream: exact; each channel's
    # detector settles on its own and the part reads on until both have
    xs = [synth.render_all(synth.plan_calls(30.0, FS, 15, n_template=0, seed=s,
                                            snr_db=(6.0, 20.0))) for s in (1, 2)]
    rec = ArrayRecording(np.stack(xs, axis=1), FS)
    pipe = Pipeline.from_steps([
        {"op": "filter", "params": {"design": "firwin", "btype": "highpass", "numtaps": 101,
                                    "cutoff": 1000.0}},
        {"op": "detect.energy", "params": ENERGY}])
    assert pipe.bind(FS, False).lookback == 100
    whole = pipe.detect(rec)
    assert len(whole) >= 20 and set(whole.channel) == {0, 1}
    for part_samples in _cutting(pipe, rec, whole, range(100_000, 400_000, 6_007)):
        got, _own = _merged(pipe, rec, part_samples, chunk=50_000)
        _same(got, whole)


def test_a_pipeline_that_cannot_split_runs_whole(calls):
    _plan, x = calls
    rec = ArrayRecording(x, FS)
    iir = Pipeline.from_steps([
        {"op": "filter", "params": {"design": "butter", "btype": "highpass", "order": 4,
                                    "cutoff": 1000.0}},
        {"op": "detect.energy", "params": ENERGY}])
    assert plan_parts(iir, rec, 0, rec.n_samples, 100_000) is None  # IIR: not exact
    onsets = Pipeline.from_steps([{"op": "onsets.detect", "params": {}}])
    assert plan_parts(onsets, rec, 0, rec.n_samples, 100_000) is None  # the whole signal
    energy = Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}])
    assert plan_parts(energy, rec, 0, rec.n_samples, 0) is None
    assert plan_parts(energy, rec, 0, rec.n_samples, rec.n_samples) is None


# -- through run_detect: the executors ------------------------------------------------------


@pytest.fixture(scope="module")
def long_inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("long")
    paths = []
    for i in range(2):
        plan = synth.plan_calls(40.0, FS, 24, n_template=0, seed=40 + i, snr_db=(6.0, 20.0))
        p = root / f"long{i}.wav"
        soundfile.write(p, synth.render_all(plan).astype(np.float32), int(FS),
                        subtype="FLOAT")
        paths.append(p)
    pipe = Pipeline.from_steps([{"op": "detect.energy", "params": ENERGY}],
                               name="energy").save(root / "energy.json")
    bad = root / "broken.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEnot really")
    return root, paths, pipe, bad


PART = 300_000  # 40 s at 48 kHz: 7 parts per input


def _tables(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.selections.txt"))}


def test_split_tables_are_the_bytes_of_unsplit_ones(long_inputs, tmp_path):
    _root, paths, pipe, bad = long_inputs
    whole = run_detect(pipe, paths, tmp_path / "whole", part_samples=0)
    seen = []
    split = run_detect(pipe, [*paths, bad], tmp_path / "split", part_samples=PART,
                       progress=lambda d, t, r: seen.append((d, t, r)))
    ref = _tables(tmp_path / "whole")
    assert len(ref) == 2 and _tables(tmp_path / "split") == ref
    assert [r.parts for r in whole.results] == [1, 1]
    assert [r.parts for r in split.results[:2]] == [7, 7]
    assert [r.detections for r in split.results[:2]] == [r.detections for r in whole.results]
    # progress counts the parts: 1 failed input at once, then 14 parts, 2 of them finishing
    assert [d for d, _, _ in seen] == list(range(1, 16)) and {t for _, t, _ in seen} == {15}
    assert sum(r is not None for *_, r in seen) == 3
    assert not split.results[2].ok and split.results[2].error


def test_a_failing_part_fails_its_input_alone(long_inputs, tmp_path):
    _root, paths, _pipe, _ = long_inputs
    # the band holds no bin at 16 kHz: every part of this input fails in its task
    low = tmp_path / "low.wav"
    soundfile.write(low, np.zeros(16000 * 40, np.float32), 16000, subtype="FLOAT")
    params = dict(ENERGY, band_low_hz=9000.0)
    pipe = Pipeline.from_steps([{"op": "detect.energy", "params": params}])
    s = run_detect(pipe, [low, paths[0]], tmp_path / "o", part_samples=PART, workers=2)
    bad, good = s.results
    assert not bad.ok and "band" in bad.error and bad.parts > 1
    assert good.ok and good.parts == 7 and good.detections > 0
    assert not (tmp_path / "o" / "low.selections.txt").exists()
    rows = list(csv.DictReader(open(tmp_path / "o" / "summary.csv", newline="")))
    assert [r["status"] for r in rows] == ["failed", "ok"]


@pytest.mark.real
def test_two_processes_and_a_dask_cluster_write_the_same_bytes(long_inputs, tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    from _dask_cluster import Cluster

    _root, paths, pipe, _ = long_inputs
    names = [str(p) for p in paths]
    cli = [sys.executable, "-m", "specscope.app", "detect", str(pipe), *names,
           "--part-samples", str(PART), "--json"]

    def run(out, *extra):
        r = subprocess.run([*cli, "-o", out, *extra], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300, check=False)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    run("inproc")
    info = run("pool", "--workers", "2")
    assert info["executor"] == "2 processes"
    assert [item["parts"] for item in info["inputs"]] == [7, 7]
    with Cluster(2, root=tmp_path / "cluster") as cluster:
        info = run("dask", "--dask", cluster.address)
    assert info["workers"] == 2 and [item["parts"] for item in info["inputs"]] == [7, 7]
    # both workers ran parts (which input's parts each ran depends on timing: under load
    # one worker may do all of the first input's parts while the other imports specscope)
    assert set().union(*(item["workers"] for item in info["inputs"])) == {"w0", "w1"}
    ref = _tables(tmp_path / "inproc")
    assert len(ref) == 2 and all(v.count(b"\n") > 10 for v in ref.values())
    for name in ("pool", "dask"):
        assert _tables(tmp_path / name) == ref, name
