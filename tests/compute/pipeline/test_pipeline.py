"""Pipelines: JSON schema, validation, numbers against scipy, chunked == whole."""

import itertools
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.signal as ss
from specscope.compute import InputError, RecordingError
from specscope.compute.io import ArrayRecording
from specscope.compute.pipeline import SETTLE_TOL, Pipeline

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "assets" / "pipelines" / "hum_bandpass.json"
FS = 8000


def _signal(n=3 * FS, channels=None, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n,) if channels is None else (n, channels)
    t = np.arange(n) / FS
    hum = 0.5 * np.sin(2 * np.pi * 50 * t)
    x = rng.standard_normal(shape) * 0.1 + (hum if channels is None else hum[:, None])
    return x.astype(np.float32)


def _pipe(*steps, name="t"):
    return Pipeline.from_steps([{"op": op, "params": params} for op, params in steps], name)


class CountingRecording(ArrayRecording):
    """Counts reads: validation must happen before any data is read."""

    reads = 0

    def _read(self, start, stop):
        type(self).reads += 1
        return super()._read(start, stop)


# -- the example, against scipy ---------------------------------------------------------


def test_example_pipeline_matches_scipy():
    p = Pipeline.load(EXAMPLE)
    x = _signal()
    S = p(x, FS)
    b, a = ss.iircomb(50.0, 30, ftype="notch", fs=FS)
    sos = ss.butter(4, [300.0, 3000.0], btype="bandpass", fs=FS, output="sos")
    y = ss.sosfilt(sos, ss.lfilter(b, a, x))
    _, _, ref = ss.spectrogram(y, FS, window="hann", nperseg=1024, noverlap=1024 - 256,
                               detrend=False, scaling="density", mode="psd")
    assert S.shape == ref.shape
    # float64 all the way: agreement to rounding (relative to the peak)
    np.testing.assert_allclose(S, ref, rtol=0, atol=1e-10 * ref.max())
    bound = p.bind(FS)
    np.testing.assert_array_equal(bound.coefficients()[0].coefficients["b"], b)
    np.testing.assert_array_equal(bound.coefficients()[0].coefficients["a"], a)
    np.testing.assert_array_equal(bound.coefficients()[1].coefficients["sos"], sos)
    assert p.operators() == ["butter", "iircomb", "sosfilt", "spectrogram"]


def test_example_file_round_trips(tmp_path):
    p = Pipeline.load(EXAMPLE)
    assert p.to_dict() == json.loads(EXAMPLE.read_text())
    out = p.save(tmp_path / "copy.json")
    assert Pipeline.load(out) == p
    assert Pipeline.from_dict(p.to_dict()).to_json() == p.to_json()


@pytest.mark.parametrize("params,reference", [
    ({"design": "butter", "order": 5, "cutoff": 1000.0},
     lambda: ss.butter(5, 1000.0, fs=FS, output="sos")),
    ({"design": "cheby1", "order": 4, "cutoff": [500.0, 1500.0], "btype": "bandstop", "rp": 1},
     lambda: ss.cheby1(4, 1, [500.0, 1500.0], btype="bandstop", fs=FS, output="sos")),
    ({"design": "cheby2", "order": 6, "cutoff": 2000.0, "btype": "highpass", "rs": 40},
     lambda: ss.cheby2(6, 40, 2000.0, btype="highpass", fs=FS, output="sos")),
    ({"design": "ellip", "order": 4, "cutoff": 800.0, "rp": 0.5, "rs": 60},
     lambda: ss.ellip(4, 0.5, 60, 800.0, fs=FS, output="sos")),
    ({"design": "bessel", "order": 3, "cutoff": 700.0, "norm": "mag"},
     lambda: ss.bessel(3, 700.0, fs=FS, norm="mag", output="sos")),
    ({"design": "iirnotch", "frequency": 60.0, "q": 20},
     lambda: ss.tf2sos(*ss.iirnotch(60.0, 20, fs=FS))),
    ({"design": "iirpeak", "frequency": 440.0, "q": 10},
     lambda: ss.tf2sos(*ss.iirpeak(440.0, 10, fs=FS))),
])
def test_iir_designs_match_sosfilt(params, reference):
    p = _pipe(("filter", params))
    x = _signal(seed=3)
    sos = reference()
    np.testing.assert_array_equal(p.bind(FS).coefficients()[0].coefficients["sos"], sos)
    ref = ss.sosfilt(sos, x)
    np.testing.assert_allclose(p(x, FS), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    # chunked with carried sosfilt state: identical to the whole run
    r = p.run(ArrayRecording(x, FS), chunk_samples=777)
    np.testing.assert_array_equal(r.data[0], p(x, FS))


@pytest.mark.parametrize("params,taps", [
    ({"design": "firwin", "numtaps": 101, "cutoff": [300.0, 3000.0], "btype": "bandpass"},
     lambda: ss.firwin(101, [300.0, 3000.0], pass_zero="bandpass", fs=FS)),
    ({"design": "remez", "numtaps": 63, "bands": [0, 1000, 1500, 4000], "desired": [1, 0]},
     lambda: ss.remez(63, [0, 1000, 1500, 4000], [1, 0], fs=FS)),
])
def test_fir_designs_match_lfilter(params, taps):
    p = _pipe(("filter", params))
    x = _signal(seed=4)
    b = taps()
    np.testing.assert_array_equal(p.bind(FS).coefficients()[0].coefficients["b"], b)
    ref = ss.lfilter(b, 1.0, x)
    np.testing.assert_allclose(p(x, FS), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    r = p.run(ArrayRecording(x, FS), chunk_samples=50)
    np.testing.assert_array_equal(r.data[0], p(x, FS))


# -- chunked == whole --------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1000, 4099, 65537])
def test_chunked_run_equals_whole_run(chunk):
    """Chunk sizes that do not divide the hop (256): the numbers are identical (tolerance 0)."""
    p = Pipeline.load(EXAMPLE)
    x = _signal(n=5 * FS, channels=2, seed=1)
    rec = ArrayRecording(x, FS)
    whole = p(x.T, FS)
    r = p.run(rec, chunk_samples=chunk)
    assert r.kind == "spectrogram"
    np.testing.assert_array_equal(r.data, whole)
    params = p.stft_params
    np.testing.assert_allclose(r.times, params.frame_times(x.shape[0], FS))
    np.testing.assert_allclose(r.frequencies, params.frequencies(FS))


def test_run_of_a_range_equals_the_whole_call_on_that_range():
    p = Pipeline.load(EXAMPLE)
    x = _signal(n=4 * FS, seed=2)
    start, stop = 1234, 3 * FS + 17
    r = p.run(ArrayRecording(x, FS), start, stop, chunk_samples=3001)
    np.testing.assert_array_equal(r.data[0], p(x[start:stop], FS))
    assert r.times[0] == pytest.approx((start + 512) / FS)


@pytest.mark.filterwarnings("ignore:kernel_size exceeds")
def test_generic_steps_stream_exactly():
    """Sample-wise (gain), centred (medfilt, history 3) and valid (moving_average, history 7)."""
    p = _pipe(("gain", {"factor": 2.0}), ("medfilt", {"kernel_size": 7}),
              ("moving_average", {"n": 8}))
    x = _signal(n=20000, seed=5)  # float32, as recordings read
    ref = np.convolve(ss.medfilt(2.0 * x.astype(np.float64), 7), np.ones(8) / 8, mode="valid")
    whole = p(x, FS)
    np.testing.assert_allclose(whole, ref, rtol=0, atol=1e-6)  # float32 arithmetic
    for chunk in (5, 333, 4096):
        r = p.run(ArrayRecording(x, FS), chunk_samples=chunk)
        np.testing.assert_array_equal(r.data[0], whole)
        assert r.first_sample == 7  # a valid-mode output is attributed to its last input


def test_zero_phase_fir_streams_exactly_and_iir_within_the_settling_tolerance():
    x = _signal(n=6 * FS, seed=6)  # float32, as recordings read (filters compute in float64)
    fir = _pipe(("filter", {"design": "firwin", "numtaps": 31, "cutoff": 1000.0,
                            "zero_phase": True}))
    b = ss.firwin(31, 1000.0, fs=FS)
    np.testing.assert_allclose(fir(x, FS), ss.filtfilt(b, 1.0, x), rtol=0, atol=1e-12)
    r = fir.run(ArrayRecording(x, FS), chunk_samples=1000)
    np.testing.assert_allclose(r.data[0], fir(x, FS), rtol=0, atol=1e-13)

    iir = _pipe(("filter", {"design": "butter", "order": 4, "cutoff": [300.0, 3000.0],
                            "btype": "bandpass", "zero_phase": True}))
    sos = ss.butter(4, [300.0, 3000.0], btype="bandpass", fs=FS, output="sos")
    whole = iir(x, FS)
    np.testing.assert_allclose(whole, ss.sosfiltfilt(sos, x), rtol=0, atol=1e-12)
    bound = iir.bind(FS)
    assert not bound.exact_split and 0 < bound.lookback < 2000
    r = iir.run(ArrayRecording(x, FS), chunk_samples=2500)
    err = np.max(np.abs(r.data[0] - whole))
    # the documented bound: about SETTLE_TOL * max|x| (here 1e-12 * 1.4)
    assert err <= 10 * SETTLE_TOL * np.abs(x).max()


def test_cold_start_lookback_early_is_exact_for_fir_and_settled_for_iir():
    """What the runner's part tasks rely on: start `lookback` samples early and discard."""
    x = _signal(n=40000, seed=7).astype(np.float64)
    for design, exact in [({"design": "firwin", "numtaps": 65, "cutoff": 1000.0}, True),
                          ({"design": "butter", "order": 4, "cutoff": 1000.0}, False)]:
        p = _pipe(("filter", design))
        bound = p.bind(FS)
        whole = p(x, FS)
        a, b = 20000, 30000
        r0 = a - bound.lookback

        def read(i, j):
            return x[i:j, None]
        blocks = list(bound.stream(read, r0, b, chunk_samples=999, skip=a - r0, take=b - a))
        part = np.concatenate(blocks, axis=-1)[0]
        if exact:
            np.testing.assert_array_equal(part, whole[a:b])
        else:
            assert np.max(np.abs(part - whole[a:b])) <= SETTLE_TOL * np.abs(x).max() * 10


def test_whole_signal_steps_fail_before_reading_when_chunked():
    p = _pipe(("detrend", {}))
    x = _signal(n=10000, seed=8)
    CountingRecording.reads = 0
    with pytest.raises(InputError, match=r"steps\[0\] \(detrend\): needs the whole signal"):
        p.run(CountingRecording(x, FS), chunk_samples=1000)
    assert CountingRecording.reads == 0
    r = p.run(CountingRecording(x, FS), chunk_samples=10000)
    np.testing.assert_allclose(r.data[0], ss.detrend(x), atol=1e-6)


def test_bad_nyquist_fails_at_bind_before_reading():
    p = _pipe(("filter", {"design": "butter", "order": 4, "cutoff": [300.0, 5000.0],
                          "btype": "bandpass"}))
    CountingRecording.reads = 0
    with pytest.raises(InputError, match=r"steps\[0\] \(filter butter\): cutoff=\[300.0, "
                                         r"5000.0\] Hz must be below the Nyquist frequency "
                                         r"4000 Hz"):
        p.run(CountingRecording(_signal(), FS))
    assert CountingRecording.reads == 0


# -- validation ---------------------------------------------------------------------------


def _doc(*steps, **top):
    d = {"specscope": "pipeline/1", "steps": list(steps)}
    d.update(top)
    return d


@pytest.mark.parametrize("doc,message", [
    (_doc({"op": "fliter", "params": {}}),
     r"steps\[0\] \(fliter\): op='fliter' is not an operator; did you mean filter"),
    (_doc({"op": "filter", "params": {"design": "butter", "order": 0, "cutoff": 100.0}}),
     r"steps\[0\] \(filter butter\): order=0 must be an integer in \[1, 64\]"),
    (_doc({"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": [300.0],
                                      "btype": "bandpass"}}),
     r"steps\[0\] \(filter butter\): cutoff=\[300.0\] must be two frequencies"),
    (_doc({"op": "filter", "params": {"design": "butter", "order": 4}}),
     r"steps\[0\] \(filter butter\): parameter 'cutoff' is required"),
    (_doc({"op": "filter", "params": {"order": 4}}),
     r"steps\[0\] \(filter\): parameter 'design' is required"),
    (_doc({"op": "filter", "params": {"design": "chebby"}}),
     r"steps\[0\] \(filter\): design='chebby' must be one of butter"),
    (_doc({"op": "spectrogram", "params": {"nfft": 256, "hopp": 64}}),
     r"steps\[0\] \(spectrogram\): unknown parameter 'hopp'; did you mean 'hop'"),
    (_doc({"op": "spectrogram", "params": {}}, {"op": "gain", "params": {}}),
     r"steps\[0\] \(spectrogram\): the spectrogram must be the last step"),
    (_doc({"op": "gain", "params": {"factor": -1}}),
     r"steps\[0\] \(gain\): factor=-1 must be a number >= 0"),
    (_doc({"op": "welch", "params": {}}), None),  # rejected at bind, see below
    (_doc({"op": "gain", "code": "print(1)"}), r"steps\[0\]: unknown field 'code'"),
    (_doc({"op": "nosuchplugin.op", "params": {}}),
     (r"steps\[0\] \(nosuchplugin.op\): operator 'nosuchplugin.op' needs the plugin "
      r"'nosuchplugin', which is not installed")),
    ({"steps": []}, r"missing field 'specscope'"),
    ({"specscope": "pipeline/2", "steps": []},
     r"specscope='pipeline/2' is a pipeline schema version this specscope does not read"),
    ({"specscope": "pipeline/1"}, r"missing field 'steps'"),
    (_doc(exec="import os"), r"unknown field 'exec'"),
    (_doc({"op": "__import__('os').system('true')"}),
     r"op=\"__import__\('os'\).system\('true'\)\" is not an operator name"),
])
def test_invalid_pipelines_are_rejected_with_the_step_and_parameter(doc, message):
    if message is None:
        p = Pipeline.from_dict(doc)
        with pytest.raises(InputError, match=r"steps\[0\] \(welch\): returns tuple"):
            p.bind(FS)
        return
    with pytest.raises(InputError, match=message):
        Pipeline.from_dict(doc)


def test_files_with_code_are_just_rejected(tmp_path):
    marker = tmp_path / "ran"
    py = tmp_path / "evil.json"
    py.write_text(f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n")
    with pytest.raises(InputError, match=r"evil.json: not a JSON pipeline file"):
        Pipeline.load(py)
    pk = tmp_path / "evil.pkl"
    pk.write_bytes(pickle.dumps({"specscope": "pipeline/1", "steps": []}))
    with pytest.raises(InputError, match=r"evil.pkl: not a JSON pipeline file \(binary content"):
        Pipeline.load(pk)
    nan = tmp_path / "nan.json"
    nan.write_text('{"specscope": "pipeline/1", "steps": [{"op": "gain", '
                   '"params": {"factor": NaN}}]}')
    with pytest.raises(InputError, match=r"NaN is not a number JSON allows"):
        Pipeline.load(nan)
    dup = tmp_path / "dup.json"
    dup.write_text('{"specscope": "pipeline/1", "steps": [], "steps": []}')
    with pytest.raises(InputError, match=r"field 'steps' appears twice"):
        Pipeline.load(dup)
    with pytest.raises(RecordingError, match=r"no such pipeline file"):
        Pipeline.load(tmp_path / "missing.json")
    assert not marker.exists()


def test_messages_from_files_name_the_file(tmp_path):
    f = tmp_path / "mine.json"
    f.write_text(json.dumps(_doc({"op": "filter", "params": {"design": "iirnotch", "q": 3}})))
    with pytest.raises(InputError, match=r"^mine.json: steps\[0\] \(filter iirnotch\): "
                                         r"parameter 'frequency' is required"):
        Pipeline.load(f)


def test_comb_needs_a_whole_number_of_teeth():
    p = _pipe(("filter", {"design": "iircomb", "frequency": 70.0, "q": 30}))
    with pytest.raises(InputError, match=r"frequency=70 Hz must divide the sample rate 48000"):
        p.bind(48000)


# -- tile engine and backends -------------------------------------------------------------


def test_block_function_for_the_tile_engine():
    p = _pipe(("gain", {"factor": 3.0}), ("spectrogram", {"nfft": 256, "hop": 64}))
    f = p.block_function(FS)
    x = _signal(n=1000)
    np.testing.assert_array_equal(f(x, FS), 3.0 * x)
    assert f.context == (0, 0)
    # filters run with the samples they need before each block
    g = Pipeline.load(EXAMPLE).block_function(48000)
    assert g.context[0] > 1000 and g.context[1] == 0
    with pytest.raises(InputError, match=r"steps\[0\] \(medfilt\): needs history "
                                         r"across blocks"):
        _pipe(("medfilt", {"kernel_size": 5})).block_function(FS)


def test_tile_engine_with_filters_matches_the_filtered_signal():
    from specscope.compute.io import ArrayRecording
    from specscope.compute.view import TileEngine

    fs = 8000.0
    x = _signal(n=40000)
    p = _pipe(("filter", {"design": "butter", "btype": "highpass", "order": 4,
                          "cutoff": 1000.0}), ("gain", {"factor": 2.0}))
    y = p(x, fs)
    eng = TileEngine(ArrayRecording(x, fs), nfft=256, hop=64, pipeline=p.block_function(fs))
    ref = TileEngine(ArrayRecording(y, fs), nfft=256, hop=64)
    a, b = eng.render(0, 5, 300).image, ref.render(0, 5, 300).image
    ok = np.isfinite(b)
    # filter state settled to 1e-7 of its impulse response before each block
    np.testing.assert_allclose(a[ok], b[ok], rtol=1e-4, atol=1e-6 * np.nanmax(b))


def test_tile_engine_accepts_a_samplewise_pipeline():
    from specscope.compute.view import TileEngine

    x = _signal(n=20000)
    p = _pipe(("gain", {"factor": 2.0}))
    rec = ArrayRecording(x, FS)
    a = TileEngine(rec, nfft=256, hop=64, pipeline=p.block_function(FS))
    b = TileEngine(ArrayRecording(2.0 * x, FS), nfft=256, hop=64)
    ia = a.render(0.0, rec.duration, 100).image
    ib = b.render(0.0, rec.duration, 100).image
    np.testing.assert_allclose(ia, ib, rtol=1e-6)


@pytest.mark.gpu
def test_cupy_arrays_give_the_numpy_numbers():
    from specscope.compute import backend

    if "cupy" not in backend.available_backends():
        pytest.skip("no CuPy device")
    import cupy

    p = Pipeline.load(EXAMPLE)
    x = _signal(n=4 * 48000)
    ref = p(x, 48000)
    got = p(cupy.asarray(x), 48000)
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(got), ref, rtol=1e-6, atol=1e-9 * ref.max())


# -- several channels at once (for_channels) == channel by channel (spawn) -------------------


@pytest.mark.parametrize("steps", [
    [("filter", {"design": "butter", "order": 4, "cutoff": [300.0, 3000.0],
                 "btype": "bandpass"})],
    [("filter", {"design": "firwin", "numtaps": 31, "cutoff": 1000.0})],
    [("filter", {"design": "iircomb", "frequency": 50.0, "q": 30})],
    [("filter", {"design": "butter", "order": 2, "cutoff": 1000.0, "zero_phase": True})],
    [("gain", {"factor": 2.0}), ("medfilt", {"kernel_size": 7}),
     ("moving_average", {"n": 8})],
    [("gain", {"factor": 0.5}), ("spectrogram", {"nfft": 256, "hop": 100})],
    [("filter", {"design": "cheby1", "order": 3, "rp": 1.0, "cutoff": 900.0}),
     ("spectrogram", {"nfft": 255, "hop": 64, "scaling": "magnitude"})],
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_stages_for_channels_equal_one_stage_per_channel_bit_for_bit(steps, dtype):
    if np.dtype(dtype).kind == "c" and any(op == "medfilt" for op, _ in steps):
        pytest.skip("medfilt takes real samples only")
    x = _signal(FS, channels=3).astype(np.float64)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _signal(FS, channels=3, seed=1)
    x = x.astype(dtype)
    bound = _pipe(*steps).bind(FS, np.dtype(dtype).kind == "c")
    rows = bound.chain(3)
    ones = [bound.chain() for _ in range(3)]
    spec = bound.spectrogram
    spec_rows = spec.for_channels(3) if spec else None
    spec_one = [spec.spawn() if spec else None for _ in range(3)]
    edges = [0, 1, 7, 300, 301, 2048, 5000, FS]
    for a, b in itertools.pairwise(edges):
        final = b == FS
        y = rows.push(x[a:b].T, final)
        frames = spec_rows.push(y, final) if spec is not None else None
        for c in range(3):
            yc = ones[c].push(x[a:b, c], final)
            assert y[c].dtype == yc.dtype
            np.testing.assert_array_equal(y[c], yc)
            if spec is not None:
                fc = spec_one[c].push(yc, final)
                assert frames[c].dtype == fc.dtype
                np.testing.assert_array_equal(frames[c], fc)


def test_sos_rows_without_scipy_kernel_carry_the_same_state(monkeypatch):
    """The wrapper path (no private scipy kernel) and a switch in mid-stream agree."""
    from specscope.compute.filters import apply as filter_apply

    x = _signal(FS, channels=2)
    bound = _pipe(("filter", {"design": "butter", "order": 4, "cutoff": 800.0})).bind(FS)
    stage = bound.stages[0]
    want = np.stack([stage.whole(x[:, c]) for c in range(2)])
    rows = stage.for_channels(2)
    first = rows.push(x[:3000].T, False)
    monkeypatch.setattr(filter_apply, "_SOS_KERNEL", [None])
    rest = rows.push(x[3000:].T, True)
    np.testing.assert_array_equal(np.concatenate([first, rest], axis=1), want)


def test_stft_frames_of_rows_equal_each_row():
    from specscope.compute.spectral import StftParams, stft_frame_rows, stft_frames

    x = _signal(3000, channels=3).T.copy()
    for scaling in ("psd", "spectrum", "magnitude"):
        for nfft, hop in ((256, 100), (255, 64)):
            p = StftParams(nfft, hop, "hann", scaling)
            for xx in (x, x.astype(np.float64), x + 0.5j * x[::-1]):
                many = stft_frames(xx, p, FS, first=2, last=9)
                rows = stft_frame_rows(xx, p, FS, first=2, last=9)
                assert many.shape[0] == 3 and many.flags.c_contiguous
                for c in range(3):
                    one = stft_frames(xx[c], p, FS, first=2, last=9)
                    assert one.dtype == many.dtype
                    np.testing.assert_array_equal(many[c], one)
                    np.testing.assert_array_equal(rows[c], one.T)
    assert stft_frames(x[0], StftParams(256, 100), FS, first=5, last=5).shape == (129, 0)


@pytest.mark.parametrize("op, kind", [("scalogram.morlet", "image")])
def test_a_step_that_gives_no_signal_is_refused_before_any_read(op, kind):
    with pytest.raises(InputError, match=rf"steps\[0\] \({op}\): {op} gives {kind}, not a signal"):
        Pipeline.from_steps([{"op": op}])


def test_an_events_step_is_taken_only_as_the_last_step():
    # a plugin operator declaring events ends a pipeline (tests/compute/detect/test_detect_pipeline.py)
    assert Pipeline.from_steps([{"op": "onsets.detect"}]).event_step.op == "onsets.detect"
    with pytest.raises(InputError, match=r"steps\[0\] \(onsets.detect\): a detector must be "
                                         r"the last step.*steps\[1\] \(gain\)"):
        Pipeline.from_steps([{"op": "onsets.detect"}, {"op": "gain", "params": {"factor": 2}}])
