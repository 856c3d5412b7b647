"""Region edits against a direct reference and on real speech.

The reference is ``scipy.signal.ShortTimeFFT`` with the same window and hop: its
spectrum multiplied cell by cell by the edit's gains (the mask applied by hand) and
synthesised with its own dual window.  The speech is Debian's alsa-utils voices
("Front, center", "Front, left", "Front, right") with a whistle, a tone and clicks
added.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.signal as ss
import soundfile
from specscope.compute.edit import (
    Box,
    Brush,
    Harmonics,
    Lasso,
    RegionEdit,
    apply_edit,
    region_from_dict,
)
from specscope.compute.errors import InputError
from specscope.compute.io import ArrayRecording
from specscope.compute.pipeline import Pipeline

VOICES = Path("/usr/share/sounds/alsa")
FS = 16000


def _reference(x: np.ndarray, fs: float, edit: RegionEdit) -> np.ndarray:
    """The edit computed on scipy's STFT grid, the gains applied by hand."""
    nfft, hop = edit.nfft, edit.hop
    sft = ss.ShortTimeFFT(ss.get_window("hann", nfft), hop, fs,
                          fft_mode="centered" if x.dtype.kind == "c" else "onesided")
    spec = sft.stft(x)
    t, f = sft.t(x.shape[-1]), sft.f
    w = edit.weight(t, f, hop / fs, fs / nfft)
    if edit.operation == "remove" and edit.fills_along(fs) == "frequency":
        # the bins below and above the region and its feather, frame by frame
        _, _, f_lo, f_hi = edit.region.bounds()
        reach = edit.feather_hz + 2 * fs / nfft
        rows = np.flatnonzero((f >= f_lo - reach) & (f <= f_hi + reach))
        a, b = rows[0], rows[-1] + 1
        nb = edit.context_bins(fs)
        gains = np.ones(spec.shape)
        gains[a:b] = edit.gains(spec[a:b], w[a:b], below=spec[max(0, a - nb):a],
                                above=spec[b:b + nb])
    elif edit.operation == "remove":
        k = np.round(t * fs / hop).astype(int) - nfft // (2 * hop)  # frames by their start
        n0, n1 = edit.near(fs)
        c = edit.context_frames(fs)
        mine = (k >= n0) & (k < n1)
        gains = np.ones(spec.shape)
        where = (k[mine] - n0 + 1.0) / (n1 - n0 + 1.0)
        gains[:, mine] = edit.gains(spec[:, mine], w[:, mine],
                                    spec[:, (k >= n0 - c) & (k < n0)],
                                    spec[:, (k >= n1) & (k < n1 + c)], where)
    else:
        gains = edit.gains(spec, w)
    return sft.istft(gains * spec, k1=x.shape[-1])


def _noise_and_tone(n: int, complex_: bool = False) -> np.ndarray:
    rng = np.random.default_rng(7)
    t = np.arange(n) / FS
    if complex_:
        return 0.05 * (rng.standard_normal(n) + 1j * rng.standard_normal(n)) + \
            0.5 * np.exp(2j * np.pi * -1500 * t)
    return 0.05 * rng.standard_normal(n) + 0.5 * np.sin(2 * np.pi * 1000 * t)


REGIONS = {
    "box": Box(1.0, 1.7, 700, 1400),
    "lasso": Lasso(((0.9, 600.0), (1.8, 900.0), (1.5, 2600.0), (1.0, 2000.0))),
    "brush": Brush(((1.0, 1000.0), (1.05, 1000.0), (1.1, 1050.0)), 0.05, 150.0,
                   erased=((1.05, 1000.0),)),
    "harmonics": Harmonics(1.0, 1.5, 900, 1100, 3),
}


@pytest.mark.parametrize("shape", sorted(REGIONS))
@pytest.mark.parametrize(("operation", "fill"), [
    ("attenuate", "auto"), ("gain", "auto"), ("remove", "time"), ("remove", "frequency"),
    ("isolate", "auto")])
def test_an_edit_equals_scipys_stft_with_the_mask_applied_by_hand(shape, operation, fill):
    x = _noise_and_tone(3 * FS)
    edit = RegionEdit(REGIONS[shape], operation, db=25, feather_ms=20, feather_hz=80,
                      nfft=512, fill=fill)
    y = apply_edit(x, FS, edit)
    assert np.abs(y - _reference(x, FS, edit)).max() < 1e-9


def test_an_iq_edit_equals_the_reference_on_both_sides_of_zero():
    x = _noise_and_tone(2 * FS, complex_=True)
    edit = RegionEdit(Box(0.5, 1.2, -1800, -1200), "attenuate", db=30, nfft=256)
    y = apply_edit(x, FS, edit)
    assert np.abs(y - _reference(x, FS, edit)).max() < 1e-9
    assert not np.array_equal(y, x)


def test_outside_the_frames_it_reaches_the_signal_is_returned_bit_for_bit():
    x = _noise_and_tone(3 * FS).astype(np.float32)
    edit = RegionEdit(Box(1.0, 1.5, 800, 1200), "remove", feather_ms=10, nfft=512)
    y = apply_edit(x, FS, edit)
    s0, s1, _, _ = edit.span(FS)
    assert y.dtype == np.float32
    assert np.array_equal(y[:s0], x[:s0]) and np.array_equal(y[s1:], x[s1:])
    assert not np.array_equal(y[s0:s1], x[s0:s1])
    # 0 dB changes nothing anywhere
    same = RegionEdit(Box(1.0, 1.5, 800, 1200), "attenuate", db=0.0, nfft=512)
    assert np.array_equal(apply_edit(x, FS, same), x)


@pytest.mark.parametrize("db", [6.0, 20.0, 40.0])
def test_an_attenuation_of_a_stationary_tone_measures_its_db(db):
    t = np.arange(4 * FS) / FS
    x = 0.5 * np.sin(2 * np.pi * 1000 * t)
    y = apply_edit(x, FS, RegionEdit(Box(1.0, 3.0, 900, 1100), "attenuate", db=db, nfft=1024))
    inside = slice(int(1.3 * FS), int(2.7 * FS))
    drop = 20 * np.log10(np.std(y[inside]) / np.std(x[inside]))
    assert abs(drop + db) < 0.5, drop


@pytest.fixture(scope="module")
def speech():
    """About 4.4 s of Debian's voices at 16 kHz, with a 3 kHz whistle (1.0-2.2 s), a
    1 kHz tone (2.0-4.0 s; 2 s long) and a burst of clicks (0.4-0.6 s) added."""
    names = ["Front_Center", "Front_Left", "Front_Right"]
    if not all((VOICES / f"{n}.wav").exists() for n in names):
        pytest.skip("Debian's alsa-utils voices are not installed (apt install alsa-utils)")
    parts = []
    for n in names:
        v, fs = soundfile.read(VOICES / f"{n}.wav", dtype="float64")
        parts.append(ss.resample_poly(v, FS, fs))
    voice = 0.5 * np.concatenate(parts)  # 6 dB below full scale, with room for the rest
    n = voice.size
    t = np.arange(n) / FS
    # 0.1 s raised-cosine ramps: a switched tone would spread over every frequency
    ramp = np.sin(np.pi / 2 * np.clip(np.minimum(t - 2.0, 4.0 - t) / 0.1, 0, 1)) ** 2
    whistle = np.where((t >= 1.0) & (t < 2.2), 0.3 * np.sin(2 * np.pi * (3000 * t + 40 *
                                                                        np.sin(2 * np.pi *
                                                                               t))), 0.0)
    tone = 0.5 * np.sin(2 * np.pi * 1000 * t) * ramp
    clicks = np.zeros(n)
    clicks[np.arange(int(0.4 * FS), int(0.6 * FS), 400)] = 0.8
    return {"voice": voice, "whistle": whistle, "tone": tone, "clicks": clicks,
            "x": (voice + whistle + tone + clicks).astype(np.float32)}


def _band_db(x: np.ndarray, lo: float, hi: float, t0: float, t1: float) -> float:
    sos = ss.butter(6, [lo, hi], "bandpass", fs=FS, output="sos")
    y = ss.sosfiltfilt(sos, x)[int(t0 * FS):int(t1 * FS)]
    return 10 * np.log10(np.mean(y ** 2) + 1e-30)


WHISTLE = Lasso(((0.95, 2880.0), (2.25, 2880.0), (2.25, 3120.0), (0.95, 3120.0)))


def test_removing_the_whistle_brings_its_band_40_db_down_and_leaves_the_speech(speech):
    x = speech["x"]
    edit = RegionEdit(WHISTLE, "remove", feather_ms=10, feather_hz=30, nfft=1024)
    y = apply_edit(x, FS, edit)
    before = _band_db(x, 2920, 3080, 1.1, 2.1)
    after = _band_db(y, 2920, 3080, 1.1, 2.1)
    assert before - after >= 40, (before, after)
    # the speech in the same frames, outside the region, is unchanged
    for lo, hi in [(200, 1800), (4000, 6000)]:
        change = _band_db(y, lo, hi, 1.1, 2.1) - _band_db(x, lo, hi, 1.1, 2.1)
        assert abs(change) <= 0.1, (lo, hi, change)
    # samples outside every region: at float32 precision of full scale, bit for bit
    # beyond the frames it reaches
    s0, s1, _, _ = edit.span(FS)
    assert np.array_equal(y[:s0], x[:s0]) and np.array_equal(y[s1:], x[s1:])
    far = (np.arange(x.size) < s0) | (np.arange(x.size) >= s1)
    assert np.abs(y[far] - x[far]).max() <= 1e-6


def test_a_tone_isolated_from_a_box_equals_the_added_tone(speech):
    y = apply_edit(speech["x"], FS, RegionEdit(Box(1.5, 4.5, 980, 1020), "isolate",
                                               feather_ms=50, feather_hz=10, nfft=4096))
    tone = speech["tone"]
    residual = 10 * np.log10(np.sum((y - tone) ** 2) / np.sum(tone ** 2))
    assert residual <= -40, residual


def test_an_attenuated_click_burst_and_the_rest_untouched(speech):
    x = speech["x"]
    y = apply_edit(x, FS, RegionEdit(Box(0.38, 0.62, 0, FS / 2), "attenuate", db=30,
                                     feather_ms=5, feather_hz=0, nfft=256))
    burst = slice(int(0.42 * FS), int(0.58 * FS))
    assert 20 * np.log10(np.abs(y[burst]).max() / np.abs(x[burst]).max()) < -25
    assert np.array_equal(y[int(0.8 * FS):], x[int(0.8 * FS):])


@pytest.mark.parametrize("chunk", [777, 4096, 40000])
def test_a_chunked_run_and_a_range_equal_the_whole_run(speech, chunk):
    x = np.stack([speech["x"], speech["x"][::-1].copy()])
    edit = RegionEdit(WHISTLE, "remove", nfft=512)
    pipe = Pipeline.from_steps([{"op": "edit", "params": edit.to_dict()}])
    rec = ArrayRecording(x.T, FS)
    whole = apply_edit(x, FS, edit)
    assert np.array_equal(np.asarray(pipe.run(rec, chunk_samples=chunk).data), whole)
    # a range that cuts through the region's read span: the samples outside it count as 0
    a, b = int(1.5 * FS), int(3.5 * FS)
    part = np.asarray(pipe.run(rec, a, b, chunk_samples=chunk).data)
    assert np.array_equal(part, apply_edit(x[:, a:b], FS, edit, start=a))


def test_a_pipeline_keeps_the_edit_and_reads_it_back():
    edit = RegionEdit(Harmonics(0.5, 1.0, 95, 105, 5), "attenuate", db=12.5, nfft=4096)
    pipe = Pipeline.from_steps([{"op": "edit", "params": edit.to_dict()}])
    again = Pipeline.from_json(pipe.to_json())
    assert RegionEdit.from_dict(again.steps[0].values) == edit
    assert region_from_dict(edit.region.to_dict()) == edit.region


@pytest.mark.parametrize(("params", "words"), [
    ({"region": {"shape": "box", "t0": 1, "t1": 1, "f0": 100, "f1": 200}}, "zero area"),
    ({"region": {"shape": "lasso", "points": [[0, 1], [1, 2]]}}, "at least 3"),
    ({"region": {"shape": "box", "t0": 0, "t1": 1, "f0": 9000, "f1": 9500}},
     "outside 0 to 8000 Hz"),
    ({"region": {"shape": "oval"}}, "shape='oval'"),
    ({"region": {"shape": "box", "t0": 0, "t1": 1, "f0": 1, "f1": 2}, "nfft": 1000},
     "nfft=1000 must be a power of two"),
    ({"region": {"shape": "box", "t0": 0, "t1": 1, "f0": 1, "f1": 2}, "operation": "blur"},
     "operation='blur'"),
    ({"region": {"shape": "box", "t0": 0, "t1": 1, "f0": 1, "f1": 2}, "speed": 2},
     "unknown parameter 'speed'"),
    ({"region": {"shape": "box", "t0": 0, "t1": 1, "f0": 1, "f1": 2}, "fill": "space"},
     "fill='space' must be one of auto, time, frequency"),
])
def test_bad_edits_are_refused_with_one_line_naming_the_value(params, words):
    pipe = None
    with pytest.raises(InputError) as info:
        pipe = Pipeline.from_steps([{"op": "edit", "params": params}])
        pipe.bind(FS, False)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert "steps[0] (edit)" in str(info.value)


def test_a_region_outside_the_recording_is_named():
    edit = RegionEdit(Box(10.0, 11.0, 100, 200))
    with pytest.raises(InputError, match="10 to 11 s lie outside the recording"):
        edit.check(FS, n_samples=2 * FS)


FIR = {"op": "filter", "params": {"design": "firwin", "numtaps": 101, "cutoff": 1500.0,
                                  "btype": "lowpass"}}


def test_a_filter_in_the_region_equals_the_filtered_signals_cells_taken_by_hand():
    """The region's cells come from the filtered signal: X + w (Y - X), synthesised."""
    x = _noise_and_tone(3 * FS)
    edit = RegionEdit(Box(1.0, 1.8, 1000, 6000), "filter", feather_ms=20, feather_hz=100,
                      nfft=512, steps=(FIR,))
    pipe = Pipeline.from_steps([{"op": "edit", "params": edit.to_dict()}])
    y = pipe(x, FS)
    taps = ss.firwin(101, 1500.0, fs=FS)
    filtered = ss.lfilter(taps, 1.0, x)
    sft = ss.ShortTimeFFT(ss.get_window("hann", 512), 128, FS)
    sx, sy = sft.stft(x), sft.stft(filtered)
    w = edit.weight(sft.t(x.size), sft.f, 128 / FS, FS / 512)
    ref = sft.istft(sx + w * (sy - sx), k1=x.size)
    assert np.abs(y - ref).max() < 1e-9
    # chunked, the same bytes
    rec = ArrayRecording(x.astype(np.float32), FS)
    whole = np.asarray(pipe.run(rec, chunk_samples=x.size).data)
    assert np.array_equal(np.asarray(pipe.run(rec, chunk_samples=1111).data), whole)


def test_the_steps_of_a_filter_edit_must_keep_the_signal():
    box = {"shape": "box", "t0": 0, "t1": 1, "f0": 0, "f1": 4000}
    with pytest.raises(InputError, match=r"steps\[0\] \(edit\): in its steps: .*decimate"):
        Pipeline.from_steps([{"op": "edit", "params": {
            "region": box, "operation": "filter",
            "steps": [{"op": "decimate", "params": {"q": 2}}]}}]).bind(FS, False)
    with pytest.raises(InputError, match="cannot be a step of an edit"):
        Pipeline.from_steps([{"op": "edit", "params": {
            "region": box, "operation": "filter", "steps": [{"op": "spectrogram"}]}}])
    with pytest.raises(InputError, match="operation='filter' needs steps"):
        Pipeline.from_steps([{"op": "edit", "params": {"region": box, "operation": "filter"}}])


def test_remove_fills_along_the_regions_longer_side():
    long_band = RegionEdit(Box(0.0, 2.0, 1000, 1200), "remove", nfft=512)  # a whistle
    short_wide = RegionEdit(Box(1.0, 1.05, 0, 8000), "remove", nfft=512)  # a click
    assert long_band.fills_along(FS) == "frequency" and long_band.context_frames(FS) == 0
    assert short_wide.fills_along(FS) == "time" and short_wide.context_bins(FS) == 0
    assert RegionEdit(Box(0.0, 2.0, 1000, 1200), "remove", fill="time").fills_along(FS) == \
        "time"
