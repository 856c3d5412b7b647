"""The template-matching kernel: float32 views in the detector's layout, one thread, both scales."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.signal
from specscope.compute import operators
from specscope.compute.detect import synth

FS = 48000.0


def brute_ncc(d, t):
    """Pearson correlation of the template with the patch under it, lag by lag."""
    k = t.shape[1]
    return np.array([np.corrcoef(d[:, m:m + k].ravel(), t.ravel())[0, 1]
                     for m in range(d.shape[1] - k + 1)])


def test_ncc_of_float32_frame_rows_equals_the_float64_brute_force():
    # the detector keeps (frames, bins) float32 levels and passes the transposed view
    rng = np.random.default_rng(4)
    rows = (rng.standard_normal((2, 700, 9)) * 4 - 60).astype(np.float32)
    t = rng.standard_normal((9, 31))
    rows[0, 200:231] += 5 * t.T.astype(np.float32)
    view = rows.transpose(0, 2, 1)  # (2, bins, frames), not C-contiguous
    got = operators.call("detect.ncc", view, template=t)
    assert got.shape == (2, 700 - 31 + 1) and got.dtype == np.float64
    for i in range(2):
        ref = brute_ncc(view[i].astype(np.float64), t)
        np.testing.assert_allclose(got[i], ref, rtol=0, atol=1e-9)
    same = operators.call("detect.ncc", np.ascontiguousarray(view, dtype=np.float64), template=t)
    np.testing.assert_allclose(got, same, rtol=0, atol=1e-12)
    assert int(np.argmax(got[0])) == 200 and got[0, 200] > 0.7


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_ncc_starts_no_thread_pool():
    # scipy.fft with workers > 1 starts its pool on the calling thread (the compute thread)
    code = (
        "import os, numpy as np\n"
        "from specscope.compute import operators\n"
        "n = lambda: len(os.listdir('/proc/self/task'))\n"
        "rng = np.random.default_rng(0)\n"
        "d = rng.standard_normal((60, 9000)).astype(np.float32)\n"
        "t = rng.standard_normal((60, 25))\n"
        "before = n()\n"
        "operators.call('detect.ncc', d, template=t)\n"
        "operators.call('detect.ncc', d.T.copy().T, template=t)\n"
        "print(before, n())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout.split()
    assert out[0] == out[1], f"threads before and after the kernel: {out}"


def test_template_on_the_power_scale_is_the_brute_force_ncc_of_the_power_spectrogram():
    plan = synth.plan_calls(30.0, FS, 8, n_template=3, seed=3, snr_db=(10.0, 20.0))
    x = synth.render_all(plan).astype(np.float64)
    c = max((c for c in plan.calls if c.kind == "template"), key=lambda c: c.snr_db)
    lo, hi = c.low_hz - 300, c.high_hz + 300
    result = operators.call("detect.template", x, fs=FS, template_start_s=c.start / FS,
                            template_stop_s=c.stop / FS, template_low_hz=lo,
                            template_high_hz=hi, threshold=0.2, scale="power")

    def spec(y):
        return scipy.signal.spectrogram(y, FS, window="hann", nperseg=512, noverlap=256,
                                        detrend=False, scaling="spectrum", mode="psd")

    s0 = c.start - 256
    f, _, st = spec(x[s0:c.stop + 256])
    rows = (f >= lo) & (f <= hi)
    centres = s0 + np.arange(st.shape[1]) * 256 + 256
    cols = np.flatnonzero((centres >= c.start) & (centres <= c.stop))
    scores = brute_ncc(spec(x)[2][rows], st[rows][:, cols])
    lags = (result["sample"] - (c.start - (s0 + cols[0] * 256))) // 256
    assert len(lags) >= 2
    np.testing.assert_allclose(result["score"], scores[lags], rtol=0, atol=1e-6)
