"""One filter application everywhere: the view, Pipeline.run, live sessions and exports.

For the same filter spec the tile engine's block function, chunked and whole
pipeline runs, a live session fed block by block and a range export read back
from HDF5 give the same samples, and they equal scipy's filters.
"""

import h5py
import numpy as np
import pytest
import scipy.signal as ss
import soundfile
from specscope.compute.filters import (
    VIEW_SETTLE_TOL,
    CombFilter,
    FftFirFilter,
    FilterSpec,
    SosFilter,
    design,
)
from specscope.compute.io.memory import ArrayRecording
from specscope.compute.live import FileSource, LiveSession
from specscope.compute.output import export_range
from specscope.compute.pipeline import SETTLE_TOL, Pipeline

FS = 8000.0
N = 40000

SPECS = {
    "iir_bandpass": FilterSpec("butter", btype="bandpass", order=4, cutoff=(300.0, 1500.0)),
    "long_fir": FilterSpec("firwin", numtaps=1201, cutoff=1000.0),
    "comb_notch": FilterSpec("iircomb", frequency=100.0, q=30.0),
}
KERNELS = {"iir_bandpass": SosFilter, "long_fir": FftFirFilter, "comb_notch": CombFilter}


def _signal() -> np.ndarray:
    """Two channels, float32 (as recordings read): a tone, its harmonics and noise."""
    rng = np.random.default_rng(11)
    t = np.arange(N) / FS
    hum = sum(0.2 / k * np.sin(2 * np.pi * 100.0 * k * t) for k in range(1, 6))
    x = hum[:, None] + 0.3 * rng.standard_normal((N, 2))
    return x.astype(np.float32)


def _reference(spec: FilterSpec, x: np.ndarray) -> np.ndarray:
    """scipy's own filter of the design, in float64, channels first."""
    d = design(spec, FS)
    x64 = x.T.astype(np.float64)
    if d.form == "sos":
        return ss.sosfilt(d.sos, x64, axis=-1)
    return ss.lfilter(d.b, d.a, x64, axis=-1)


def _pipe(spec: FilterSpec) -> Pipeline:
    return Pipeline.from_filter(spec)


def _view(pipe: Pipeline, x: np.ndarray, a: int, b: int) -> np.ndarray:
    """Samples a:b as the tile engine computes them: the block function over a span
    read with its context before (and after) it, then trimmed."""
    f = pipe.block_function(FS)
    before, after = f.context
    a0, b1 = max(0, a - before), min(x.shape[0], b + after)
    return np.asarray(f(x[a0:b1], FS))[a - a0:a - a0 + (b - a)]


def _live(pipe: Pipeline, x: np.ndarray, block: int) -> np.ndarray:
    """A live session fed ``block`` samples at a time; float64 history (the exact output)."""
    s = LiveSession(FileSource(ArrayRecording(x, FS), block=block, rate=0), pipe,
                    history_dtype=np.float64)
    s.start()
    assert s.wait(60), "the stream did not finish"
    s.stop()
    s.raise_error()
    first, y = s.read(0, s.frame_count)
    assert first == 0
    return np.asarray(y).T


def _export(pipe: Pipeline, wav, out, **kw) -> np.ndarray:
    path = export_range(wav, out, pipeline=pipe, chunk_samples=3001, **kw)
    with h5py.File(path, "r") as f:
        return f["signal"][...].T


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    x = _signal()
    wav = tmp_path_factory.mktemp("one_path") / "in.wav"
    soundfile.write(str(wav), x, int(FS), subtype="FLOAT")
    assert np.array_equal(soundfile.read(str(wav), dtype="float32")[0], x)
    return x, wav


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_path_gives_the_same_samples(name, data, tmp_path):
    x, wav = data
    spec = SPECS[name]
    pipe = _pipe(spec)
    whole = pipe(x.T, FS)

    # scipy's filters, to float rounding (long FIRs are summed by FFT blocks)
    ref = _reference(spec, x)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(whole, ref, rtol=0, atol=1e-6 * scale)

    # The recursive filters carry their state exactly: every chunking is identical.
    # The long FIR is summed by FFT blocks that start where a chunk starts, so other
    # chunkings change the rounding of each output (about 1e-16 of the signal), not
    # its value: 1e-13 of the peak is the tightest bound that is not luck.
    exact = name != "long_fir"

    def same(got, want):
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * scale)

    # Pipeline.run, chunked (sizes that divide nothing) and in one chunk
    for chunk in (777, 4096):
        same(pipe.run(ArrayRecording(x, FS), chunk_samples=chunk).data, whole)
    np.testing.assert_array_equal(pipe.run(ArrayRecording(x, FS), chunk_samples=N).data,
                                  whole)
    # live, block by block
    same(_live(pipe, x, 1000), whole)
    # a range export of the whole recording (chunks of 3001), read back from HDF5
    same(_export(pipe, wav, tmp_path / "all.h5"), whole)
    # the view from the first sample: the same filter from rest
    for c in range(2):
        same(_view(pipe, x[:, c], 0, 10000), whole[c, :10000])

    # a span inside: the view starts from rest `context` samples early, so the IIR and
    # comb filters differ by their settled tail (VIEW_SETTLE_TOL of the impulse
    # response's L1 norm); a range export warms up `lookback` samples (SETTLE_TOL)
    a, b = 20000, 26000
    mid = _view(pipe, x[:, 1], a, b)
    ranged = _export(pipe, wav, tmp_path / "mid.h5", start=a, stop=b)
    peak = np.abs(x).max()
    if exact:
        np.testing.assert_allclose(mid, whole[1, a:b], rtol=0, atol=VIEW_SETTLE_TOL * peak)
        np.testing.assert_allclose(ranged, whole[:, a:b], rtol=0,
                                   atol=10 * SETTLE_TOL * peak)
    else:
        same(mid, whole[1, a:b])
        same(ranged, whole[:, a:b])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_view_and_stages_run_the_same_filter_code(name, data, monkeypatch):
    """The tile engine's block function and the pipeline stages both call the one
    stream filter of :mod:`specscope.compute.filters.apply`."""
    x, _ = data
    cls = KERNELS[name]
    calls = {"n": 0}
    inner = cls.push

    def counting(self, chunk, final):
        calls["n"] += 1
        return inner(self, chunk, final)

    monkeypatch.setattr(cls, "push", counting)
    pipe = _pipe(SPECS[name])
    _view(pipe, x[:, 0], 5000, 9000)
    assert calls["n"] == 1
    pipe.run(ArrayRecording(x, FS), chunk_samples=10000)
    assert calls["n"] == 1 + -(-N // 10000)
    pipe(x[:, 0], FS)
    assert calls["n"] == 2 + -(-N // 10000)
