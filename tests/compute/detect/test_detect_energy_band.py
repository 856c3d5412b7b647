"""The energy detector's event bands: generated tones, sweeps and whistles with known bands."""

import dataclasses

import numpy as np
import pytest
import scipy.signal
from specscope.compute.detect import detect, synth
from specscope.compute.detect.energy import event_band
from specscope.compute.io import ArrayRecording

FS = 48000.0
DF = FS / 512  # the detector's bin spacing (nfft 512)
SEARCH = {"band_low_hz": 2500.0, "band_high_hz": 12500.0, "snr_db": 4.0}


def _call(t0, dur, kind, f0, f1, low, high, amplitude):
    a = round(t0 * FS)
    return synth.Call(a, a + round(dur * FS), low, high, 15.0, kind, f0, f1, amplitude)


@pytest.fixture(scope="module", params=[1.0, 0.1], ids=["loud", "10dB"])
def calls(request):
    """Known bands in pink noise with hum: (call, true low Hz, true high Hz).

    Loud: peak SNRs of 27-38 dB; ``10dB``: the same calls 20 dB quieter (8-19 dB).
    """
    g = request.param
    base = synth.plan_calls(20.0, FS, 2, seed=21)
    truth = [
        # a tone on a bin centre and one halfway between bins (whistles without vibrato)
        (_call(1.0, 0.25, "whistle", 4031.25, 4031.25, 4031.25, 4031.25, 0.08), 4031.25, 4031.25),
        (_call(3.0, 0.2, "whistle", 9421.875, 9421.875, 9421.875, 9421.875, 0.06),
         9421.875, 9421.875),
        # linear upsweep; exponential downsweep (the template call's shape)
        (_call(5.0, 0.3, "chirp", 5000.0, 8000.0, 5000.0, 8000.0, 0.2), 5000.0, 8000.0),
        (_call(7.0, 0.15, "chirp", 11000.0, 6000.0, 6000.0, 11000.0, 0.25), 6000.0, 11000.0),
        # a whistle's vibrato: 7000 +- 250 Hz, 8 Hz (two whole periods)
        (_call(9.0, 0.25, "whistle", 7000.0, 7000.0, 6750.0, 7250.0, 0.08), 6750.0, 7250.0),
        # a short sweep near the bottom of the search band
        (_call(11.0, 0.06, "chirp", 3000.0, 4500.0, 3000.0, 4500.0, 0.2), 3000.0, 4500.0),
    ]
    truth = [(dataclasses.replace(c, amplitude=g * c.amplitude), lo, hi) for c, lo, hi in truth]
    plan = dataclasses.replace(base, calls=tuple(c for c, _, _ in truth))
    return synth.render_all(plan), truth


def _found(ev, call):
    hit = np.flatnonzero((ev.start_sample < call.stop) & (ev.stop_sample > call.start))
    assert hit.size == 1, (call, ev.start_sample, ev.stop_sample)
    return int(hit[0])


def test_event_bands_are_the_calls_bands_within_two_bins(calls):
    x, truth = calls
    ev = detect(ArrayRecording(x, FS), "detect.energy", SEARCH)
    assert len(ev) == len(truth), (ev.start_s, ev.low_hz)
    for call, lo, hi in truth:
        i = _found(ev, call)
        assert ev.score[i] > 6, (call, ev.score[i])
        # the window's main lobe spreads a line over about +-1.5 bins
        assert abs(ev.low_hz[i] - lo) <= 2 * DF, (call.f0, ev.low_hz[i], lo)
        assert abs(ev.high_hz[i] - hi) <= 2 * DF, (call.f0, ev.high_hz[i], hi)
    # the bands are the detector's bins' edges: whole bins from 0 Hz, half a bin off
    edges = np.concatenate([ev.low_hz, ev.high_hz]) / DF - 0.5
    np.testing.assert_allclose(edges, np.round(edges), rtol=0, atol=1e-9)


def test_a_smaller_level_gives_a_band_inside_the_larger_one(calls):
    x, truth = calls
    rec = ArrayRecording(x, FS)
    narrow = detect(rec, "detect.energy", {**SEARCH, "event_band_db": 3.0})
    wide = detect(rec, "detect.energy", {**SEARCH, "event_band_db": 30.0})
    base = detect(rec, "detect.energy", SEARCH)
    np.testing.assert_array_equal(narrow.start_sample, base.start_sample)  # edges in time kept
    np.testing.assert_array_equal(wide.stop_sample, base.stop_sample)
    assert np.all(narrow.low_hz >= base.low_hz) and np.all(narrow.high_hz <= base.high_hz)
    assert np.all(wide.low_hz <= base.low_hz) and np.all(wide.high_hz >= base.high_hz)
    # 3 dB: a tone is at most its two strongest bins
    i = _found(narrow, truth[1][0])
    assert narrow.high_hz[i] - narrow.low_hz[i] <= 2 * DF


def test_event_band_grows_from_the_peak_over_short_dips():
    e = np.array([0.0, 3.0, 0.0, 0.0, 0.0, 2.0, 9.0, 1.0, 10.0, 0.5, 0.5, 4.0, 0.0, 0.0])
    # 10 dB under the peak is 1.0: bins 5..8, then the dip of two bins to 11; bin 1 is
    # three bins past a dip and stays out
    assert event_band(e, 10.0) == (5, 11)
    assert event_band(e, 10.0, gap=1) == (5, 8)
    assert event_band(e, 0.3) == (8, 8)  # bin 6 (9.0) is under 10 * 10**-0.03
    assert event_band(e, 3.0) == (6, 8)


def test_iq_bursts_get_their_bands_in_absolute_hz():
    x, truth = synth.iq_bursts(FS)
    fc = 2.4e9
    ev = detect(ArrayRecording(x, FS, center_frequency=fc), "detect.energy",
                {"band_low_hz": fc - 20000, "band_high_hz": fc + 20000, "nfft": 1024,
                 "hop": 512})
    assert len(ev) == len(truth)
    df = FS / 1024
    for e, (_, _, lo, hi) in zip(ev, truth, strict=True):
        assert abs(e.low_hz - (fc + lo)) <= df and abs(e.high_hz - (fc + hi)) <= df


#: a search band holding the hum; clicks of 2-4 ms may be one frame of 5.3 ms
WIDE = {"band_low_hz": 20.0, "band_high_hz": 20000.0, "min_duration_s": 0.0}


def _hum_scene(seed):
    """Pink-ish noise, beating hum, three clicks, a tone and a sweep: (x, clicks, calls).

    The noise's power falls as 1/f (white shaped in frequency, 0.01 rms); the
    hum is 8 harmonics of a mains frequency 50 +- 0.05 Hz with random phases,
    several to a bin, so they beat inside a bin from frame to frame; a click
    is 2-4 ms of random signs under an exponential decay (0.25-0.6 ms), a
    flat spectrum on average with the nulls of a random one; the tone and the
    linear sweep are tapered (5 ms) and fall between bins.
    """
    rng = np.random.default_rng(seed)
    n = round(12.5 * FS)
    t = np.arange(n) / FS
    f = np.fft.rfftfreq(n, 1 / FS)
    spec = np.fft.rfft(rng.standard_normal(n)) * np.maximum(f, 20.0) ** -0.5
    x = np.fft.irfft(spec, n)
    x *= 0.01 / x.std()
    mains = 50.0 + rng.uniform(-0.05, 0.05)
    for h in range(1, 9):
        x += 0.15 / h * np.sin(2 * np.pi * mains * h * t + rng.uniform(0, 2 * np.pi))
    clicks = []
    for t0 in (1.37, 4.61, 9.83):
        a = round((t0 + rng.uniform(0, 0.4)) * FS)
        m = int(rng.integers(96, 192))
        click = np.exp(-np.arange(m) / rng.uniform(12, 29)) * rng.choice([-1.0, 1.0], m)
        x[a:a + m] += 0.6 * click
        clicks.append((a, a + m))
    calls = []
    for t0, dur, f0, f1 in ((2.71, 0.2, 3617.3, 3617.3), (6.93, 0.25, 5230.0, 8770.0)):
        a = round((t0 + rng.uniform(0, 0.2)) * FS)
        m = round(dur * FS)
        tt = np.arange(m) / FS
        wave = np.sin(2 * np.pi * (f0 * tt + 0.5 * (f1 - f0) / dur * tt * tt)
                      + rng.uniform(0, 2 * np.pi))
        x[a:a + m] += 0.05 * wave * scipy.signal.windows.tukey(m, 2 * 0.005 / dur)
        calls.append((a, a + m, min(f0, f1), max(f0, f1)))
    return x, clicks, calls


def _hit(ev, a, b):
    hit = np.flatnonzero((ev.start_sample < b) & (ev.stop_sample > a))
    assert hit.size == 1, (a / FS, ev.start_s, ev.stop_s)
    return int(hit[0])


@pytest.mark.parametrize("seed", [5, 17, 24, 42, 318, 2026])
def test_a_click_band_is_broadband_and_not_the_hum(seed):
    """A click's band is the bins it stands out in, not the hum's chance excess.

    The hum bins' noise power is large and swings from frame to frame, so
    over a click's one to three frames their excess power is by chance
    larger than the click's in any other bin; against their own noise it is
    small.  The click's spectrum is flat on average: it stands out of the
    pink noise from a few hundred Hz (above most of the hum) to the top of
    the search band, and the band spans that, over the nulls of its random
    spectrum.  A random click can have a hole a quarter of the band wide
    where it stays under the noise (of 40 seeds, the worst gave 68 % from
    6.4 kHz up), so the band must hold at least 60 % of the search band and
    reach below 7 kHz and above 15 kHz (the hum ends at 400 Hz); a tone's
    and a sweep's bands stay within two bins of theirs.
    """
    x, clicks, calls = _hum_scene(seed)
    ev = detect(ArrayRecording(x, FS), "detect.energy", WIDE)
    assert len(ev) == len(clicks) + len(calls), (ev.start_s, ev.low_hz, ev.high_hz)
    width = WIDE["band_high_hz"] - WIDE["band_low_hz"]
    for a, b in clicks:
        i = _hit(ev, a, b)
        band = (a / FS, ev.low_hz[i], ev.high_hz[i])
        assert ev.high_hz[i] - ev.low_hz[i] >= 0.6 * width, band
        assert ev.low_hz[i] < 7000.0 and ev.high_hz[i] > 15000.0, band  # not the hum's bins
    for a, b, lo, hi in calls:
        i = _hit(ev, a, b)
        assert abs(ev.low_hz[i] - lo) <= 2 * DF, (lo, ev.low_hz[i])
        assert abs(ev.high_hz[i] - hi) <= 2 * DF, (hi, ev.high_hz[i])


def test_event_band_with_noise_counts_each_bin_by_its_own_noise():
    # bins 0-2: loud noise (hum) with a large chance excess; 3-12 a click's bins with a
    # null of 4 bins (7-10) it does not stand out in; 13-15 noise with chance excess
    noise = np.array([1e4, 5e3, 2e3] + [1.0] * 13)
    excess = np.array([3e3, 1e3, 200.0, 40.0, 60.0, 50.0, 45.0, 0.5, 0.2, 1.0, 0.8,
                       55.0, 30.0, 0.9, 0.1, 2.5])
    # in power the hum wins (3e3, 1e3); against their noise (0.3, 0.2) they do not stand out
    assert event_band(excess, 10.0) == (0, 1)
    # 5 dB over the noise: excess >= 2.16 noise; bin 4 peaks (SNR 60); the null of 4 bins
    # is bridged with gap 4, not with 3; bin 15 (2.5) stands out and is reached, but is
    # more than 10 dB under the strongest (60)
    assert event_band(excess, 10.0, 4, noise=noise, min_snr_db=5.0) == (3, 12)
    assert event_band(excess, 10.0, 3, noise=noise, min_snr_db=5.0) == (3, 6)
    # 3 dB: the bins within 3 dB of 60; bin 12 (30) falls out
    assert event_band(excess, 3.0, 4, noise=noise, min_snr_db=5.0) == (3, 11)
    # a hum bin where the excess does stand out (2.5 times its noise) is the event's too
    loud = excess.copy()
    loud[0] = 2.5e4
    assert event_band(loud, 10.0, 4, noise=noise, min_snr_db=5.0) == (0, 12)
    # no bin stands out 20 dB over its noise: the band is the peak bin
    assert event_band(np.array([0.1, 5.0, 0.1]), 10.0, noise=np.ones(3), min_snr_db=20.0) \
        == (1, 1)
