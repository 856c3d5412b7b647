"""One engine: every spectrogram runs the ``stft_power`` operator, and a profile sees it."""

import numpy as np
import pytest
import scipy.signal
from specscope.compute import (
    ArrayRecording,
    InputError,
    Pipeline,
    StftParams,
    TileEngine,
    export_spectrogram,
    operators,
    spectrogram,
)
from specscope.compute.live.processor import BlockProcessor
from specscope.compute.ops import timefreq
from specscope.compute.spectral import stft_kernel

FS = 8000.0
# float32 arithmetic against scipy's float64, relative to the largest value
RTOL32 = 2e-6


def _scipy(x, nfft, hop, scaling, two_sided=False):
    mode = {"psd": {"scaling": "density", "mode": "psd"},
            "spectrum": {"scaling": "spectrum", "mode": "psd"},
            "magnitude": {"scaling": "spectrum", "mode": "magnitude"}}[scaling]
    x64 = np.asarray(x, np.complex128 if np.iscomplexobj(x) else np.float64)
    _, _, s = scipy.signal.spectrogram(x64, FS, window="hann", nperseg=nfft,
                                       noverlap=nfft - hop, detrend=False,
                                       return_onesided=not two_sided, **mode)
    return np.fft.fftshift(s, axes=-2) if two_sided else s


@pytest.mark.parametrize("scaling", ["psd", "spectrum", "magnitude"])
@pytest.mark.parametrize("nfft,hop", [(1024, 256), (255, 100), (64, 64)])
@pytest.mark.parametrize("kind", ["real", "complex", "real-two-sided"])
def test_kernel_matches_scipy_in_both_layouts_and_xp_form(scaling, nfft, hop, kind):
    rng = np.random.default_rng(nfft + hop)
    x = rng.standard_normal((2, 20011)).astype(np.float32)  # more frames than one task
    if kind == "complex":
        x = (x + 1j * rng.standard_normal(x.shape)).astype(np.complex64)
    two_sided = kind != "real"
    p = StftParams(nfft, hop, "hann", scaling)
    ref = _scipy(x, nfft, hop, scaling, two_sided)
    freq = operators.call("stft_power", x, backend="numpy", fs=FS, layout="freq",
                          two_sided=two_sided, **p.operator_params())
    rows = operators.call("stft_power", x, backend="numpy", fs=FS, layout="frames",
                          two_sided=two_sided, **p.operator_params())
    generic = timefreq.stft_power_xp(x, p, FS, two_sided=two_sided, layout="freq", xp=np)
    assert freq.dtype == rows.dtype == np.float32 and freq.flags.c_contiguous
    np.testing.assert_allclose(freq, ref, rtol=0, atol=RTOL32 * ref.max())
    np.testing.assert_array_equal(rows, np.swapaxes(freq, -1, -2))
    np.testing.assert_allclose(generic, ref, rtol=0, atol=RTOL32 * ref.max())
    for c in range(2):  # each channel equals its 1-D transform, bit for bit
        np.testing.assert_array_equal(stft_kernel(x[c], p, FS, two_sided=two_sided), rows[c])


def test_kernel_float64_and_short_input():
    x = np.random.default_rng(0).standard_normal(5000)
    p = StftParams(256, 100)
    s = stft_kernel(x, p, FS, layout="freq")
    assert s.dtype == np.float64
    np.testing.assert_allclose(s, _scipy(x, 256, 100, "psd"), rtol=1e-12, atol=0)
    assert stft_kernel(x[:100], p, FS).shape == (0, 129)


def test_threads_and_task_size_do_not_change_numbers(monkeypatch):
    from specscope.compute import spectral

    x = np.random.default_rng(5).standard_normal(60000).astype(np.float32)
    p = StftParams(300, 77)
    whole = stft_kernel(x, p, FS)
    monkeypatch.setattr(spectral, "KERNEL_FRAMES", 13)
    monkeypatch.setenv("SPECSCOPE_THREADS", "1")
    np.testing.assert_array_equal(stft_kernel(x, p, FS), whole)


def test_public_spectrogram_in_blocks_equals_one_call(monkeypatch):
    x = np.random.default_rng(4).standard_normal(50000).astype(np.float32)
    whole = spectrogram(x, FS, nfft=300, hop=77)[2]
    monkeypatch.setattr(timefreq, "SPECTROGRAM_BLOCK", 13)
    seen = []
    blocked = spectrogram(x, FS, nfft=300, hop=77, progress=seen.append)[2]
    np.testing.assert_array_equal(blocked, whole)
    assert seen[-1] == 1.0 and len(seen) == -(-whole.shape[-1] // 13)


def _kernel_calls(prof):
    row = prof.operators.get("stft_power")
    return 0 if row is None else row["calls"]


@pytest.fixture()
def recording():
    x = np.random.default_rng(1).standard_normal(int(FS * 20)).astype(np.float32)
    return ArrayRecording(x[:, None], FS)


def test_profile_sees_a_tile_render(recording):
    eng = TileEngine(recording, nfft=256, hop=64)
    with operators.profile() as prof:
        eng.render(0.0, recording.n_samples / FS, 400)
    assert _kernel_calls(prof) > 0
    rows = [r for r in prof.by_backend() if r["operator"] == "stft_power"]
    assert rows and rows[0]["backend"] == "numpy" and rows[0]["seconds"] > 0
    assert "stft_power" in str(prof)


def test_profile_sees_an_export(recording, tmp_path):
    with operators.profile() as prof:
        export_spectrogram(recording, tmp_path / "s.h5", StftParams(256, 64))
    assert _kernel_calls(prof) > 0


def test_profile_sees_a_pipeline_run_and_live_blocks(recording):
    pipe = Pipeline.from_dict({"specscope": "pipeline/1", "steps": [
        {"op": "gain", "params": {"factor": 2.0}},
        {"op": "spectrogram", "params": {"nfft": 256, "hop": 64}}]})
    with operators.profile() as prof:
        r = pipe.run(recording, chunk_samples=10000)
    assert _kernel_calls(prof) > 0
    x = recording.read(0, recording.n_samples, 0)[:, 0]
    np.testing.assert_allclose(r.data[0], spectrogram(2 * x, FS, nfft=256, hop=64)[2],
                               rtol=0, atol=RTOL32 * r.data.max())
    live = BlockProcessor(pipe.bind(FS), 1)
    with operators.profile() as prof:
        live.push(x[:4000, None], final=False)
    assert _kernel_calls(prof) > 0


def test_public_spectrogram_is_an_operator_call():
    x = np.random.default_rng(2).standard_normal(10000).astype(np.float32)
    with operators.profile() as prof:
        spectrogram(x, FS, nfft=256, hop=64)
    assert _kernel_calls(prof) == 1


@pytest.mark.parametrize("layout", ["frames", "freq"])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_stft_power_out_gives_the_same_numbers_in_the_callers_array(layout, kind):
    rng = np.random.default_rng(21)
    x = rng.standard_normal(30011).astype(np.float32)
    if kind == "complex":
        x = (x + 1j * rng.standard_normal(x.size)).astype(np.complex64)
    p = StftParams(512, 128, "hann", "psd").operator_params()
    plain = operators.call("stft_power", x, backend="numpy", fs=FS, layout=layout, **p)
    out = np.full_like(plain, np.nan)
    got = operators.call("stft_power", x, backend="numpy", fs=FS, layout=layout, out=out, **p)
    assert got is out
    np.testing.assert_array_equal(out, plain)
    ref = _scipy(x, 512, 128, "psd", two_sided=kind == "complex")
    mine = out if layout == "freq" else out.T
    np.testing.assert_allclose(mine, ref, rtol=0, atol=RTOL32 * ref.max())


def test_stft_power_out_of_the_wrong_shape_or_kind_is_refused():
    x = np.zeros(4096, np.float32)
    p = StftParams(1024, 256).operator_params()
    with pytest.raises(InputError, match=r"out= must be a C-contiguous float32 array of "
                                         r"shape \(13, 513\)"):
        operators.call("stft_power", x, backend="numpy", fs=FS, out=np.empty((13, 512),
                                                                            np.float32), **p)
    with pytest.raises(InputError, match="out= must be an array"):
        operators.call("stft_power", x, backend="numpy", fs=FS, out="buffer", **p)
