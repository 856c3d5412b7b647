"""A deployment run per contiguous segment: ``run_batch``, ``Pipeline.run`` and ``detect``,
measurements and the spectrogram export never let a filter's history or a frame cross a
gap, and give the numbers of each segment run as a file of its own."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
from _deployments import snapshot, write_wav
from specscope.compute.annotations import measure
from specscope.compute.batch import run_batch
from specscope.compute.deployment import open_deployment
from specscope.compute.io import open_recording
from specscope.compute.output import export_spectrogram
from specscope.compute.pipeline import Pipeline
from specscope.compute.spectral import StftParams
from test_deployment_batch import ENERGY, RATE, _deploy, _signal

HIGHPASS = {"op": "filter", "params": {"design": "firwin", "btype": "highpass", "numtaps": 63,
                                       "cutoff": 500.0}}
STFT = {"op": "spectrogram", "params": {"nfft": 512, "hop": 200}}
#: a gap of 30 s after 10 s of samples: segments 0..10 s and 10..20 s
STARTS = [0, 5, 40, 45]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def site(tmp_path):
    """A deployment with a gap at 10 s, a 3 kHz tone across it, and each segment as a file
    of its own (outside the folder)."""
    x = _signal(20, [(9.5, 10.5)])
    _deploy(tmp_path / "site", x, STARTS)
    write_wav(tmp_path / "seg_a.wav", x[:10 * RATE], RATE)
    write_wav(tmp_path / "seg_b.wav", x[10 * RATE:], RATE)
    return tmp_path


def _h5(path: Path, name: str) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return np.asarray(f[name])


@pytest.mark.slow
@pytest.mark.parametrize("steps", [[HIGHPASS], [HIGHPASS, STFT]], ids=["signal", "stft"])
@pytest.mark.parametrize("task_samples", [None, 3 * RATE + 17])
def test_run_batch_equals_each_segment_run_alone(site, steps, task_samples):
    pipe = Pipeline.from_steps(steps)
    before = snapshot(site / "site")
    s = run_batch(pipe, [str(site / "site")], site / "dep", task_samples=task_samples)
    assert s.ok, s.text()
    ref = run_batch(pipe, [str(site / "seg_a.wav"), str(site / "seg_b.wav")], site / "ref")
    assert ref.ok, ref.text()
    name = "signal" if len(steps) == 1 else "spectrogram"
    got = _h5(site / "dep" / "site.h5", name)
    a, b = _h5(site / "ref" / "seg_a.h5", name), _h5(site / "ref" / "seg_b.h5", name)
    # the same numbers, bit for bit, for any split into part tasks
    np.testing.assert_array_equal(got, np.concatenate([a, b]))
    with h5py.File(site / "dep" / "site.h5", "r") as f:
        g = f["deployment"]
        assert g.attrs["format"] == "specscope/deployment/1"
        assert g.attrs["start_utc"] == "2024-05-01T12:00:00.000000Z"
        assert g["segment_samples"][...].tolist() == [[0, 10 * RATE], [10 * RATE, 20 * RATE]]
        assert g["segment_outputs"][...].tolist() == [[0, len(a)], [len(a), len(a) + len(b)]]
        assert [t.decode() for t in g["segment_start_utc"][...]] == [
            "2024-05-01T12:00:00.000000Z", "2024-05-01T12:00:40.000000Z"]
        assert g["file_first_sample"][...].tolist() == [0, 5 * RATE, 10 * RATE, 15 * RATE]
        assert f.attrs["start_utc"] == "2024-05-01T12:00:00.000000Z"
        t = f["time"][...]
    # /time: each output's place on the deployment's sample axis
    ta, tb = _h5(site / "ref" / "seg_a.h5", "time"), _h5(site / "ref" / "seg_b.h5", "time")
    np.testing.assert_allclose(t, np.concatenate([ta, tb + 10.0]), rtol=0, atol=1e-12)
    assert snapshot(site / "site") == before  # nothing written into the folder
    assert not (site / "dep" / ".specscope-resume").exists()  # no parts left once written


def test_pipeline_run_and_detect_on_a_deployment_work_per_segment(site):
    dep = open_deployment(site / "site")
    seg_a, seg_b = open_recording(site / "seg_a.wav"), open_recording(site / "seg_b.wav")
    for steps in ([HIGHPASS], [HIGHPASS, STFT]):
        pipe = Pipeline.from_steps(steps)
        got = pipe.run(dep, chunk_samples=7 * RATE // 3)
        ra, rb = pipe.run(seg_a), pipe.run(seg_b)
        np.testing.assert_array_equal(got.data, np.concatenate([ra.data, rb.data], axis=-1))
        np.testing.assert_allclose(got.times, np.concatenate([ra.times, rb.times + 10.0]))
    det = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy", "params": ENERGY}])
    ev = det.detect(dep, chunk_samples=RATE)
    ea, eb = det.detect(seg_a), det.detect(seg_b)
    want = sorted([*ea.start_sample.tolist(), *(eb.start_sample + 10 * RATE).tolist()])
    assert ev.start_sample.tolist() == want
    # the tone's halves: one detection ends at the gap, the next starts after it
    assert all(b <= 10 * RATE or a >= 10 * RATE for a, b in zip(ev.start_sample,
                                                                 ev.stop_sample, strict=True))
    assert any(0 <= 10 * RATE - b < 0.05 * RATE for b in ev.stop_sample)
    assert any(0 <= a - 10 * RATE < 0.05 * RATE for a in ev.start_sample)


def test_a_box_across_the_gap_measures_each_sides_frames(site):
    dep = open_deployment(site / "site")
    cat = open_recording(site / "seg_a.wav")  # the first segment alone
    # a box on the first segment only: the same numbers as that segment as a file
    m = measure(dep, 2.0, 3.0, 2500.0, 3500.0, nfft=512, hop=128)
    ref = measure(cat, 2.0, 3.0, 2500.0, 3500.0, nfft=512, hop=128, max_noise_frames=1)
    assert (m.band_power_db, m.peak_time_s) == (ref.band_power_db, ref.peak_time_s)
    # across the gap: every frame lies on one side; the tone (9.5..10.5 s) is in all
    box = measure(dep, 9.6, 10.4, 2500.0, 3500.0, nfft=512, hop=128)
    x = _signal(20, [(9.5, 10.5)]).astype(np.float64) / 32768
    frames = [k * 128 for k in range((10 * RATE - 512) // 128 + 1)]
    frames += [10 * RATE + k * 128 for k in range((10 * RATE - 512) // 128 + 1)]
    inside = [s for s in frames if 9.6 <= (s + 256) / RATE <= 10.4]
    assert box.n_frames == len(inside)
    assert all(s + 512 <= 10 * RATE or s >= 10 * RATE for s in inside)
    assert abs(box.peak_frequency_hz - 3000.0) < RATE / 512
    assert box.band_power_db > m.band_power_db + 30  # the tone, not noise
    rms = 10 * np.log10(np.mean(x[round(9.6 * RATE):round(10.4 * RATE)] ** 2))
    assert box.rms_db == pytest.approx(rms, abs=1e-9)


def test_the_spectrogram_export_frames_each_segment(site):
    dep = open_deployment(site / "site")
    params = StftParams(512, 200)
    export_spectrogram(dep, site / "dep.h5", params)
    export_spectrogram(open_recording(site / "seg_a.wav"), site / "a.h5", params)
    export_spectrogram(open_recording(site / "seg_b.wav"), site / "b.h5", params)
    got = _h5(site / "dep.h5", "spectrogram")
    a, b = _h5(site / "a.h5", "spectrogram"), _h5(site / "b.h5", "spectrogram")
    np.testing.assert_array_equal(got, np.concatenate([a, b]))
    np.testing.assert_allclose(_h5(site / "dep.h5", "time"), np.concatenate(
        [_h5(site / "a.h5", "time"), _h5(site / "b.h5", "time") + 10.0]))


def test_the_steps_view_of_a_detector_takes_history_from_its_segment(site):
    from specscope.compute.pipeline.events import ProcessedView

    pipe = Pipeline.from_steps([HIGHPASS, {"op": "detect.energy", "params": ENERGY}])
    dep = open_deployment(site / "site")
    view = ProcessedView(pipe.bind(RATE), dep)
    got = view.read(9 * RATE, 11 * RATE)  # a box across the gap
    a = ProcessedView(pipe.bind(RATE), open_recording(site / "seg_a.wav"))
    b = ProcessedView(pipe.bind(RATE), open_recording(site / "seg_b.wav"))
    np.testing.assert_array_equal(got, np.concatenate([a.read(9 * RATE, 10 * RATE),
                                                       b.read(0, RATE)]))


def test_a_deployment_opened_by_a_relative_path_reopens_from_another_folder(site,
                                                                            monkeypatch):
    import pickle

    monkeypatch.chdir(site)
    dep = open_deployment("site")
    blob = pickle.dumps(dep)
    monkeypatch.chdir(site / "site")  # a worker's working folder is elsewhere
    back = pickle.loads(blob)
    assert back.fingerprint() == dep.fingerprint()
    np.testing.assert_array_equal(back.read(4 * RATE, 6 * RATE), dep.read(4 * RATE, 6 * RATE))
