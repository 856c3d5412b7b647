"""Spectrogram parity with scipy.signal.spectrogram."""

import numpy as np
import pytest
import scipy.signal
from specscope.compute import InputError, StftParams, spectrogram

SCIPY_MODES = {
    "psd": {"scaling": "density", "mode": "psd"},
    "spectrum": {"scaling": "spectrum", "mode": "psd"},
    "magnitude": {"scaling": "spectrum", "mode": "magnitude"},
}
# float32 arithmetic against scipy's float64: relative to the largest value
RTOL32 = 2e-6
RTOL64 = 1e-12


def reference(x, fs, nfft, hop, window, scaling, **kw):
    return scipy.signal.spectrogram(np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x)
                                               else np.float64), fs,
                                    window=window, nperseg=nfft, noverlap=nfft - hop,
                                    detrend=False, **SCIPY_MODES[scaling], **kw)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, RTOL32), (np.float64, RTOL64)])
@pytest.mark.parametrize("nfft,hop,window", [
    (1024, 256, "hann"), (255, 100, "hamming"), (64, 64, "boxcar"), (513, 7, ("kaiser", 8.0)),
    (100, 33, "blackmanharris"), (7, 3, "hann"),
])
@pytest.mark.parametrize("scaling", ["psd", "spectrum", "magnitude"])
def test_matches_scipy(dtype, rtol, nfft, hop, window, scaling):
    rng = np.random.default_rng(nfft * 1000 + hop)
    fs = 8000.0
    x = rng.standard_normal(10007).astype(dtype)  # prime length
    f, t, s = spectrogram(x, fs, nfft=nfft, hop=hop, window=window, scaling=scaling)
    f2, t2, s2 = reference(x, fs, nfft, hop, window, scaling)
    assert s.dtype == dtype
    assert s.shape == s2.shape
    np.testing.assert_allclose(f, f2, rtol=1e-12)
    np.testing.assert_allclose(t, t2, rtol=1e-12)
    np.testing.assert_allclose(s, s2, rtol=0, atol=rtol * np.abs(s2).max())


def test_times_are_frame_centres():
    _f, t, s = spectrogram(np.zeros(1000), 100.0, nfft=100, hop=30)
    np.testing.assert_allclose(t, (np.arange(s.shape[-1]) * 30 + 50) / 100.0)


def test_complex_input_is_two_sided_and_centred():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(5000) + 1j * rng.standard_normal(5000)).astype(np.complex64)
    f, _t, s = spectrogram(x, 1000.0, nfft=256, hop=64)
    f2, _t2, s2 = reference(x, 1000.0, 256, 64, "hann", "psd", return_onesided=False)
    np.testing.assert_allclose(f, np.fft.fftshift(f2))
    assert f[0] < 0 < f[-1]
    np.testing.assert_allclose(s, np.fft.fftshift(s2, axes=0), atol=RTOL32 * s2.max())


def test_tone_lands_in_its_bin():
    fs, f0 = 48000.0, 3000.0
    x = np.sin(2 * np.pi * f0 * np.arange(48000) / fs).astype(np.float32)
    f, _t, s = spectrogram(x, fs, nfft=960, hop=480, scaling="magnitude")
    peak = f[np.argmax(s.mean(axis=1))]
    assert peak == pytest.approx(f0)
    # amplitude spectrum: a unit sine shows 1/2 at its bin with this scaling
    assert s.mean(axis=1).max() == pytest.approx(0.5, rel=1e-3)


def test_multichannel_along_leading_axes():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2, 4001)).astype(np.float32)
    _f, _t, s = spectrogram(x, 1000.0, nfft=256, hop=100, window="hann")
    _f2, _t2, s2 = reference(x, 1000.0, 256, 100, "hann", "psd")
    assert s.shape == s2.shape == (3, 2, 129, 38)
    np.testing.assert_allclose(s, s2, atol=RTOL32 * s2.max())
    # each frame's spectrum is contiguous (the layout librosa and torch return)
    assert s.strides[-2] == s.itemsize and s[1, 0, :, 7].flags.c_contiguous


def test_axis_argument_for_samples_by_channels():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3000, 2))
    _, _, s = spectrogram(x, 1000.0, nfft=128, hop=50, axis=0)
    _, _, s2 = reference(x.T, 1000.0, 128, 50, "hann", "psd")
    np.testing.assert_allclose(s, s2, rtol=1e-12, atol=1e-15)


def test_blocks_equal_whole(monkeypatch):
    """Frame blocks of any size give the numbers of a single block."""
    import specscope.compute.ops.timefreq as tf
    import specscope.compute.spectral as sp

    x = np.random.default_rng(4).standard_normal(50000).astype(np.float32)
    whole = spectrogram(x, 1.0, nfft=300, hop=77)[2]
    monkeypatch.setattr(tf, "SPECTROGRAM_BLOCK", 13)
    monkeypatch.setattr(sp, "KERNEL_FRAMES", 5)
    monkeypatch.setattr(sp, "TASK_BLOCKS", 3)
    blocks = spectrogram(x, 1.0, nfft=300, hop=77, cancelled=lambda: False)[2]
    assert blocks.shape == whole.shape and blocks.strides == whole.strides
    np.testing.assert_array_equal(blocks, whole)


@pytest.mark.parametrize("kwargs,match", [
    ({"hop": 0}, r"hop=0 must be an integer >= 1"),
    ({"hop": -5}, r"hop=-5"),
    ({"nfft": 1}, r"nfft=1 must be"),
    ({"window": "nope"}, r"window='nope' is not a window"),
    ({"scaling": "db"}, r"scaling='db' must be one of"),
    ({"nfft": 4096}, r"nfft=4096 is larger than the signal \(1000 samples\)"),
])
def test_bad_parameters_name_the_problem(kwargs, match):
    with pytest.raises(InputError, match=match):
        spectrogram(np.zeros(1000), 100.0, **kwargs)


def test_bad_sample_rate():
    with pytest.raises(InputError, match="fs=0"):
        spectrogram(np.zeros(1000), 0)


def test_params_axes_like_shorttimefft():
    p = StftParams(256, 64)
    n = 10000
    assert p.n_frames(n) == len(p.frame_times(n, 1000.0)) == (n - 256) // 64 + 1
    np.testing.assert_allclose(p.frequencies(1000.0), np.fft.rfftfreq(256, 1e-3))
    assert StftParams(256, 64, "kaiser,8").win.shape == (256,)


@pytest.mark.parametrize(("complex_", "layout"), [(False, "freq"), (False, "frames"),
                                                  (True, "freq"), (True, "frames")])
def test_stft_kernel_allocates_nothing_per_task(monkeypatch, complex_, layout) -> None:
    """Workspaces are reused: a call into ``out=`` allocates (almost) nothing, however
    many tasks it runs, and gives scipy's numbers."""
    import tracemalloc

    import scipy.signal
    from specscope.compute.spectral import KERNEL_FRAMES, StftParams, stft_kernel
    monkeypatch.setenv("SPECSCOPE_THREADS", "1")  # the tasks on this thread: deterministic
    rng = np.random.default_rng(4)
    n = 1024 + 256 * (KERNEL_FRAMES * 6 - 1)
    x = rng.standard_normal(n).astype(np.float32)
    if complex_:
        x = (x + 1j * rng.standard_normal(n)).astype(np.complex64)
    p = StftParams(1024, 256)
    out = stft_kernel(x, p, 1000.0, layout=layout)  # workspaces made here
    tracemalloc.start()
    try:
        got = stft_kernel(x, p, 1000.0, layout=layout, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got is out
    # numpy's iterator buffers (casts) only: a task's own arrays are
    # 1 MiB (frames) + 1 MiB (spectra) each
    assert peak < 256 * 1024, f"{peak} bytes allocated by a call of 6 tasks"
    _, _, ref = scipy.signal.spectrogram(x, 1000.0, window="hann", nperseg=1024,
                                         noverlap=768, detrend=False,
                                         return_onesided=not complex_)
    if complex_:
        ref = np.fft.fftshift(ref, axes=0)
    mine = out if layout == "freq" else out.T
    np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-6 * float(ref.max()))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("nfft,hop,scaling", [(1024, 256, "psd"), (255, 100, "magnitude"),
                                              (64, 7, "spectrum")])
def test_stft_kernel_layouts_and_threads_give_the_same_bits(monkeypatch, complex_, nfft, hop,
                                                            scaling) -> None:
    """The ``freq`` layout (spectra written frequency by frame, power straight into the
    rows) holds exactly the ``frames`` layout's numbers, transposed, on one thread or
    several, with a short last task and several channels."""
    from specscope.compute.spectral import KERNEL_FRAMES, TASK_BLOCKS, stft_kernel
    rng = np.random.default_rng(11)
    # several pool tasks of several workspace blocks each, and a short last block
    n = nfft + hop * (KERNEL_FRAMES * (TASK_BLOCKS * 2 + 1) + 17 - 1)
    x = rng.standard_normal((2, n)).astype(np.float32)
    if complex_:
        x = (x + 1j * rng.standard_normal((2, n))).astype(np.complex64)
    p = StftParams(nfft, hop, "hann", scaling)
    runs = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("SPECSCOPE_THREADS", threads)
        runs[threads] = [stft_kernel(x, p, 1000.0, layout=layout) for layout in ("frames", "freq")]
    frames, freq = runs["1"]
    assert freq.shape == (2, frames.shape[2], frames.shape[1])
    np.testing.assert_array_equal(freq, np.swapaxes(frames, 1, 2))
    for a, b in zip(runs["1"], runs["2"]):
        np.testing.assert_array_equal(a, b)
    _, _, ref = reference(x[1], 1000.0, nfft, hop, "hann", scaling,
                          return_onesided=not complex_)
    if complex_:
        ref = np.fft.fftshift(ref, axes=0)
    np.testing.assert_allclose(freq[1], ref, rtol=0, atol=2e-6 * float(ref.max()))
