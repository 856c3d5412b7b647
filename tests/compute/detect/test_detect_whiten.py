"""The energy detector's per-bin whitening: the bundled example with loud beating hum, generated
surveys in white and pink noise with hum, and the noise level it normalises to (0 dB)."""

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.integrate
import scipy.signal
import scipy.stats
from specscope.compute import open_recording
from specscope.compute.detect import detect, make_detector, synth
from specscope.compute.detect.energy import noise_floor_scale
from specscope.compute.io import ArrayRecording

ROOT = Path(__file__).resolve().parents[3]
FS = 48000.0


def _example_truth():
    """The chirps' and clicks' times from the script that generates the example."""
    spec = importlib.util.spec_from_file_location("make_examples", ROOT / "scripts" /
                                                  "make_examples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [(a, a + d) for a, d, *_ in mod.CHIRPS], list(mod.CLICKS)


def test_noise_floor_scale_is_the_mean_of_mu_over_the_floor():
    """Against the order statistic's own law: the 20th percentile of 21 values is the 5th
    smallest, -ln(1 - U) with U ~ Beta(5, 17); with one block the floor is that."""
    exact = scipy.integrate.quad(
        lambda u: scipy.stats.beta.pdf(u, 5, 17) / -np.log1p(-u), 0.0, 1.0)[0]
    np.testing.assert_allclose(noise_floor_scale(20.0, 21, 1), exact, rtol=0.01)
    # many values: the distribution's own percentile, -1 / ln(0.8) = 4.48
    np.testing.assert_allclose(noise_floor_scale(20.0, 1000, 1), -1 / np.log(0.8), rtol=0.01)
    with pytest.raises(ValueError, match="percentile=0.0"):
        noise_floor_scale(0.0, 24, 11)


def test_the_example_with_loud_hum_gives_its_calls_not_one_long_event():
    rec = open_recording(ROOT / "assets" / "examples" / "scene.wav")
    chirps, clicks = _example_truth()
    ev = detect(rec, "energy")  # the whole band, whitened (the default)
    dur = ev.stop_s - ev.start_s
    assert len(ev) >= len(chirps) and dur.max() <= 2.0, (len(ev), dur.max())
    # every chirp is found by one detection; every detection is a chirp or a click
    for a, b in chirps:
        hit = np.flatnonzero((ev.start_s < b) & (ev.stop_s > a))
        assert hit.size == 1, ((a, b), ev.start_s[hit], ev.stop_s[hit])
    for s, e in zip(ev.start_s, ev.stop_s, strict=True):
        assert any(s < b and e > a for a, b in chirps) or any(
            s - 0.02 < c < e + 0.02 for c in clicks), (s, e)
    # the same detections as the band total above the hum (band_low_hz=1000), to a frame
    above = detect(rec, "energy", {"band_low_hz": 1000.0, "whiten": False})
    assert len(above) == len(ev)
    hop = 256 / FS
    np.testing.assert_allclose(ev.start_s, above.start_s, rtol=0, atol=2 * hop + 1e-9)
    np.testing.assert_allclose(ev.stop_s, above.stop_s, rtol=0, atol=2 * hop + 1e-9)
    # the band total over the whole band: the beating hum makes the recording one event
    total = detect(rec, "energy", {"whiten": False})
    assert len(total) <= 2 and (total.stop_s - total.start_s).max() > 15.0


def _survey(noise):
    """180 s, 40 calls at 0-20 dB with hum, in drifting pink noise or white noise of the same
    power in the calls' 2.5-12.5 kHz band (so the calls' SNRs hold for both)."""
    plan = synth.plan_calls(180.0, FS, 40, seed=3)
    if noise == "pink":
        return plan, synth.render_all(plan)
    quiet = dataclasses.replace(plan, noise_rms=0.0)  # hum and calls only
    x = synth.render_all(quiet).astype(np.float64)
    # white noise of the pink noise's power in the band: one-sided PSD 2 s^2 / fs
    f = np.linspace(2500.0, 12500.0, 4097)
    band = _band_power(dataclasses.replace(plan, calls=()), f)
    sigma = np.sqrt(band * FS / (2 * (f[-1] - f[0])))
    t = np.arange(x.size) / FS
    drift = 10.0 ** (plan.drift_db / 20 * np.sin(2 * np.pi * t / plan.drift_period_s))
    x += np.random.default_rng(4).standard_normal(x.size) * sigma * drift
    return plan, x.astype(np.float32)


def _band_power(plan, f):
    """The generated pink noise's power in ``f[0]..f[-1]``, measured on a long render."""
    long = dataclasses.replace(plan, n_samples=int(60 * FS), hum_amplitude=0.0, drift_db=0.0)
    x = synth.render_all(long).astype(np.float64)
    ff, p = scipy.signal.welch(x, FS, nperseg=4096)
    inside = (ff >= f[0]) & (ff <= f[-1])
    return float(np.trapezoid(p[inside], ff[inside]))


@pytest.mark.parametrize("noise", ["pink", "white"])
def test_whitening_keeps_the_recall_without_false_detections(noise):
    plan, x = _survey(noise)
    rec = ArrayRecording(x, FS)
    snr = np.array([c.snr_db for c in plan.calls])
    params = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0}
    out = {}
    for whiten in (True, False):
        ev = detect(rec, "energy", {**params, "whiten": whiten})
        m = synth.match(ev, plan.calls, FS)
        out[whiten] = (np.mean(m.found[snr >= 6] >= 0), m.n_false / max(1, len(ev)), len(ev))
    assert (snr >= 6).sum() >= 20
    recall, false, n = out[True]
    assert recall >= out[False][0] and recall >= 0.95, out
    assert false <= 0.05 and n >= 0.9 * (snr >= 6).sum(), out


@pytest.mark.parametrize("percentile", [20.0, 50.0])
def test_noise_alone_is_0_db_after_whitening(percentile):
    """Frames of white noise are above 0 dB about half the time (the whitened level's mean
    is the noise's: the bins' floors are scaled by the exponential's mean over percentile),
    and above 3 dB almost never."""
    x = np.random.default_rng(9).standard_normal(int(30 * FS)).astype(np.float32)
    n_frames = (x.size - 512) // 256 + 1
    share = {}
    for thr in (0.0, 3.0):
        det = make_detector("detect.energy", {"snr_db": thr, "min_gap_s": 0.0,
                                              "min_duration_s": 0.0,
                                              "noise_percentile": percentile}, fs=FS)
        ev = det.run(x)
        share[thr] = float(np.sum(ev.stop_sample - ev.start_sample)) / (256 * n_frames)
    assert 0.3 <= share[0.0] <= 0.7, share
    assert share[3.0] <= 0.01, share
