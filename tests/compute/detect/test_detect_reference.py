"""Detectors against references: an independent BLED written on scipy.signal.spectrogram,
brute-force NCC, generated calls with known truth, IQ bursts with known bands, the onset
plugin's own output."""

import numpy as np
import pytest
import scipy.signal
from specscope.compute import operators
from specscope.compute.detect import Events, detect, ncc, synth
from specscope.compute.extensions import check_result
from specscope.compute.io import ArrayRecording

FS = 48000.0


@pytest.fixture(scope="module")
def survey():
    """300 s, 60 calls (15 copies of the template call) at 0-20 dB in pink noise with hum."""
    plan = synth.plan_calls(300.0, FS, 60, n_template=15, seed=7)
    return plan, synth.render_all(plan)


def _by_snr(plan, m, lo, hi=99.0):
    snr = np.array([c.snr_db for c in plan.calls])
    sel = (snr >= lo) & (snr < hi)
    return sel, m.found[sel] >= 0


# -- the energy detector against an independent implementation ------------------------


def reference_bled(x, fs, *, band, snr_db, nfft, hop, block_s, window_s, percentile,
                   min_duration_s, max_duration_s, min_gap_s):
    """Raven's band-limited energy detector, whole-array, on scipy.signal.spectrogram."""
    f, _, s = scipy.signal.spectrogram(x, fs, window="hann", nperseg=nfft,
                                       noverlap=nfft - hop, detrend=False,
                                       scaling="spectrum", mode="psd")
    inside = (f >= band[0]) & (f <= band[1])
    e = s[inside].sum(axis=0)
    block = max(1, round(block_s * fs / hop))
    half = max(0, round((window_s / block_s - 1) / 2))
    q = [np.percentile(e[j:j + block], percentile) for j in range(0, e.size, block)]
    floor = np.array([np.median(q[max(0, j - half):j + half + 1]) for j in range(len(q))])
    snr = 10 * np.log10(e / np.repeat(floor, block)[:e.size])
    on = np.flatnonzero(snr >= snr_db)
    events = []
    if on.size:
        runs = [[on[0], on[0]]]
        for k in on[1:]:
            if (k - runs[-1][1] - 1) * hop < min_gap_s * fs:
                runs[-1][1] = k
            else:
                runs.append([k, k])
        for a, b in runs:
            dur = (b - a + 1) * hop / fs
            if dur >= min_duration_s and (max_duration_s is None or dur <= max_duration_s):
                events.append((a * hop + (nfft - hop) // 2, b * hop + (nfft + hop) // 2,
                               snr[a:b + 1].max()))
    return events


def test_energy_detector_matches_an_independent_bled(survey):
    _, x = survey
    x = x[:int(60 * FS)].astype(np.float64)
    params = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0, "nfft": 512,
              "hop": 256, "noise_block_s": 0.5, "noise_window_s": 5.0,
              "noise_percentile": 20.0, "min_duration_s": 0.01, "max_duration_s": 0.3,
              "min_gap_s": 0.02, "whiten": False}
    ref = reference_bled(x, FS, band=(2500.0, 12500.0), snr_db=4.0, nfft=512, hop=256,
                         block_s=0.5, window_s=5.0, percentile=20.0, min_duration_s=0.01,
                         max_duration_s=0.3, min_gap_s=0.02)
    # through the operator core: the detector's operator gives an `events` result
    result = operators.call("detect.energy", x, fs=FS, **params)
    assert check_result("events", result) is None
    assert len(ref) >= 8
    np.testing.assert_array_equal(result["sample"], [r[0] for r in ref])
    np.testing.assert_array_equal(result["stop_sample"], [r[1] for r in ref])
    np.testing.assert_allclose(result["score"], [r[2] for r in ref], rtol=0, atol=1e-9)
    # each event's own band (tests/compute/detect/test_detect_energy_band.py), inside the search band
    assert np.all((result["low_hz"] >= 2500.0) & (result["high_hz"] <= 12500.0))
    assert np.all(result["high_hz"] - result["low_hz"] >= 2 * FS / 512)


def test_energy_detector_finds_the_calls(survey):
    plan, x = survey
    ev = detect(ArrayRecording(x, FS), "detect.energy",
                {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0})
    m = synth.match(ev, plan.calls, FS)
    sel, found = _by_snr(plan, m, 6.0)
    assert sel.sum() >= 30
    assert found.mean() >= 0.95, found.mean()
    # false: overlapping no call; duplicates: fragments of a call found already
    assert m.n_false + m.n_duplicate <= 0.05 * len(ev), (m.n_false, m.n_duplicate, len(ev))
    sel10, found10 = _by_snr(plan, m, 10.0)
    err = np.abs(m.edge_error_s[sel10][found10])
    assert err.size >= 0.95 * sel10.sum() and err.max() <= 0.010, err.max()
    assert list(ev.label) == ["energy"] * len(ev) and ev.detector == "detect.energy"


# -- template matching -----------------------------------------------------------------


def brute_ncc(d, t):
    """Pearson correlation of the template with the patch under it, lag by lag."""
    k = t.shape[1]
    return np.array([np.corrcoef(d[:, m:m + k].ravel(), t.ravel())[0, 1]
                     for m in range(d.shape[1] - k + 1)])


def test_ncc_operator_matches_brute_force_and_correlate():
    rng = np.random.default_rng(2)
    d = rng.standard_normal((12, 400)) * 3 - 50
    t = rng.standard_normal((12, 17))
    d[:, 100:117] += 4 * t
    got = operators.call("detect.ncc", d, template=t)
    np.testing.assert_allclose(got, brute_ncc(d, t), rtol=0, atol=1e-6)
    tz = t - t.mean()
    num = sum(scipy.signal.correlate(d[i], tz[i], mode="valid") for i in range(12))
    win = np.lib.stride_tricks.sliding_window_view(d, 17, axis=1)
    den = win.std(axis=(0, 2)) * np.sqrt(d.shape[0] * 17) * np.linalg.norm(tz)
    np.testing.assert_allclose(got, num / den, rtol=0, atol=1e-6)
    assert int(np.argmax(got)) == 100 and got[100] > 0.7
    assert ncc.function is not None  # the declared xp function (runs on CuPy alike)


def test_template_scores_are_the_brute_force_ncc_of_the_db_spectrogram(survey):
    plan, x = survey
    x = x[:int(60 * FS)].astype(np.float64)
    c = max((c for c in plan.calls if c.kind == "template" and c.stop < x.size),
            key=lambda c: c.snr_db)
    lo, hi = c.low_hz - 300, c.high_hz + 300
    params = {"template_start_s": c.start / FS, "template_stop_s": c.stop / FS,
              "template_low_hz": lo, "template_high_hz": hi, "threshold": 0.3}
    result = operators.call("detect.template", x, fs=FS, **params)
    assert check_result("events", result) is None
    def spec(y):
        return scipy.signal.spectrogram(y, FS, window="hann", nperseg=512, noverlap=256,
                                        detrend=False, scaling="spectrum", mode="psd")

    # the template: frames of the box's samples (from nfft/2 before it) centred in it
    s0, s1 = c.start - 256, c.stop + 256
    f, _, st = spec(x[s0:s1])
    rows = (f >= lo) & (f <= hi)
    centres = s0 + np.arange(st.shape[1]) * 256 + 256
    cols = np.flatnonzero((centres >= c.start) & (centres <= c.stop))
    eps = st[rows][:, cols].max() * 1e-12
    t = 10 * np.log10(st[rows][:, cols] + eps)
    _, _, s = spec(x)
    scores = brute_ncc(10 * np.log10(s[rows] + eps), t)
    offset = c.start - (s0 + cols[0] * 256)
    lags = (result["sample"] - offset) // 256
    np.testing.assert_array_equal((result["sample"] - offset) % 256, 0)
    np.testing.assert_allclose(result["score"], scores[lags], rtol=0, atol=1e-6)
    # the matches are the lags >= threshold that top their neighbours within the template
    w = t.shape[1] - 1
    peaks = [m for m in range(scores.size) if scores[m] >= 0.3
             and all(scores[m] > scores[max(0, m - w):m])
             and all(scores[m] >= scores[m + 1:m + 1 + w])]
    np.testing.assert_array_equal(lags, peaks)
    # the box itself, on the recording's frame grid (within half a hop of the box)
    i = int(np.argmin(np.abs(result["sample"] - c.start)))
    assert abs(int(result["sample"][i]) - c.start) <= 128 and result["score"][i] > 0.8


def test_template_matching_finds_the_copies(survey):
    plan, x = survey
    copies = [c for c in plan.calls if c.kind == "template"]
    c = max(copies, key=lambda c: c.snr_db)
    ev = detect(ArrayRecording(x, FS), "template",
                {"template_start_s": c.start / FS, "template_stop_s": c.stop / FS,
                 "template_low_hz": c.low_hz - 300, "template_high_hz": c.high_hz + 300,
                 "threshold": 0.5})
    m = synth.match(ev, copies, FS)
    snr = np.array([k.snr_db for k in copies])
    assert (snr >= 3).sum() >= 10
    found = m.found[snr >= 3] >= 0
    assert found.mean() >= 0.95, found.mean()
    assert ev.label[0] == "template" and np.all(ev.low_hz == c.low_hz - 300)


# -- IQ bursts ---------------------------------------------------------------------------


def test_bursts_centre_and_bandwidth_within_one_bin():
    x, truth = synth.iq_bursts(FS)
    fc = 2.4e9
    ev = detect(ArrayRecording(x, FS, center_frequency=fc), "detect.bursts",
                {"band_low_hz": fc - 20000, "band_high_hz": fc + 20000})
    df = FS / 1024
    assert len(ev) == len(truth)
    for e, (a, b, lo, hi) in zip(ev, truth, strict=True):
        assert abs(e.centre_hz - (fc + (lo + hi) / 2)) <= df
        assert abs(e.bandwidth_hz - (hi - lo)) <= df
        assert abs(e.start_sample - a) <= 1024 and abs(e.stop_sample - b) <= 1024
        assert e.score > 10


# -- the onset plugin through the same path ------------------------------------------------


def test_onsets_through_the_event_path_are_the_plugins_own(survey):
    _, x = survey
    x = x[:int(20 * FS)]
    direct = operators.call("onsets.detect", x, fs=FS)
    ev = detect(ArrayRecording(x, FS), "onsets", chunk=30000)
    np.testing.assert_array_equal(ev.start_sample, direct["sample"])
    np.testing.assert_array_equal(ev.stop_sample, direct["sample"])
    np.testing.assert_allclose(ev.score, direct["strength"], rtol=0, atol=1e-12)
    assert ev.detector == "onsets.detect" and set(ev.label) <= {"onset"}
    back = Events.from_annotations(ev.to_annotations(), FS)
    np.testing.assert_array_equal(back.start_sample, ev.start_sample)


def test_generated_calls_are_drawn_in_their_boxes():
    """The truth the figures are measured against: each call's instantaneous frequency
    (from the analytic signal of its noise-free shape, tapers cut off) spans the call's
    stored box to within 20 Hz plus what its steepest slope moves in the ends cut off."""
    plan = synth.plan_calls(120.0, FS, 40, n_template=6, seed=3)
    kinds = set()
    for call in plan.calls:
        shape = synth._shape(call, FS)
        phase = np.unwrap(np.angle(scipy.signal.hilbert(shape)))
        inst = np.diff(phase) * FS / (2 * np.pi)
        cut = round(synth.TAPER_S * FS) + 64
        inst = inst[cut:-cut]
        slope = float(np.abs(np.diff(inst)).max()) * FS  # Hz per second
        tol = 20.0 + slope * (cut + 32) / FS  # 32: the analytic signal settling
        assert abs(inst.min() - call.low_hz) <= tol, (call.kind, inst.min(), call.low_hz)
        assert abs(inst.max() - call.high_hz) <= tol, (call.kind, inst.max(), call.high_hz)
        kinds.add(call.kind)
    assert kinds == {"chirp", "whistle", "template"}
