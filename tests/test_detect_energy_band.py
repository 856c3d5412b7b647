"""The energy detector's event bands: generated tones, sweeps and whistles with known bands."""

import dataclasses

import numpy as np
import pytest
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
