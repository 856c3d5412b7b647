"""Filter design, analysis, verdict, export/import and CLI, against scipy."""

import dataclasses
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.signal as ss
from specscope.compute import InputError
from specscope.compute.filters import (
    FORMATS,
    MAX_NOTCH_HARMONICS,
    Design,
    FilterSpec,
    FilterSpecError,
    analyze,
    block_filter,
    design,
    export_coefficients,
    notch_from_click,
    parse_coefficients,
    read_coefficients,
    verify,
    write_coefficients,
)
from specscope.compute.io import ArrayRecording
from specscope.compute.output import filter_recording
from specscope.compute.pipeline import Pipeline

FS = 48000.0
# SOS from the same scipy calls: identical up to float rounding in the design
SOS_RTOL, SOS_ATOL = 1e-12, 1e-14

IIR_CASES = [
    ({"design": "butter", "order": 4, "cutoff": 1000.0},
     lambda: ss.butter(4, 1000.0, fs=FS, output="sos")),
    ({"design": "butter", "order": 3, "cutoff": 2000.0, "btype": "highpass"},
     lambda: ss.butter(3, 2000.0, btype="highpass", fs=FS, output="sos")),
    ({"design": "butter", "order": 4, "cutoff": (300.0, 3000.0), "btype": "bandpass"},
     lambda: ss.butter(4, [300.0, 3000.0], btype="bandpass", fs=FS, output="sos")),
    ({"design": "cheby1", "order": 5, "cutoff": (500.0, 1500.0), "btype": "bandstop", "rp": 1.0},
     lambda: ss.cheby1(5, 1.0, [500.0, 1500.0], btype="bandstop", fs=FS, output="sos")),
    ({"design": "cheby2", "order": 6, "cutoff": 2000.0, "btype": "highpass", "rs": 40.0},
     lambda: ss.cheby2(6, 40.0, 2000.0, btype="highpass", fs=FS, output="sos")),
    ({"design": "ellip", "order": 4, "cutoff": 800.0, "rp": 0.5, "rs": 60.0},
     lambda: ss.ellip(4, 0.5, 60.0, 800.0, fs=FS, output="sos")),
    ({"design": "bessel", "order": 5, "cutoff": (1000.0, 4000.0), "btype": "bandpass", "norm": "mag"},
     lambda: ss.bessel(5, [1000.0, 4000.0], btype="bandpass", norm="mag", fs=FS,
                       output="sos")),
    ({"design": "iirnotch", "frequency": 60.0, "q": 20.0},
     lambda: ss.tf2sos(*ss.iirnotch(60.0, 20.0, fs=FS))),
    ({"design": "iirpeak", "frequency": 440.0, "q": 10.0},
     lambda: ss.tf2sos(*ss.iirpeak(440.0, 10.0, fs=FS))),
    ({"design": "notches", "frequency": 60.0, "q": 30.0, "harmonics": 4},
     lambda: np.vstack([ss.tf2sos(*ss.iirnotch(60.0 * k, 30.0 * k, fs=FS))
                        for k in range(1, 5)])),
]

MIN_ORDER = [("butter", ss.buttord), ("cheby1", ss.cheb1ord), ("cheby2", ss.cheb2ord),
             ("ellip", ss.ellipord)]
BANDS = [("lowpass", 1000.0, 1500.0), ("highpass", 1500.0, 1000.0),
         ("bandpass", (1000.0, 3000.0), (700.0, 3500.0)),
         ("bandstop", (1000.0, 3000.0), (1300.0, 2500.0))]


@pytest.mark.parametrize("kw,reference", IIR_CASES)
def test_iir_sos_equal_scipy(kw, reference):
    d = design(FilterSpec(**kw), FS)
    assert d.form == "sos" and d.stable
    np.testing.assert_allclose(d.sos, reference(), rtol=SOS_RTOL, atol=SOS_ATOL)


@pytest.mark.parametrize("name,ordfn", MIN_ORDER)
@pytest.mark.parametrize("btype,wp,ws", BANDS)
def test_minimum_order_equals_scipy_ord_and_iirdesign(name, ordfn, btype, wp, ws):
    spec = FilterSpec(name, btype=btype, passband=wp, stopband=ws, rp=1.0, rs=50.0)
    d = design(spec, FS)
    n, _ = ordfn(wp, ws, 1.0, 50.0, fs=FS)
    assert d.order == n * (2 if btype.startswith("band") else 1)
    ref = ss.iirdesign(wp, ws, 1.0, 50.0, ftype=name, fs=FS, output="sos")
    np.testing.assert_allclose(d.sos, ref, rtol=1e-9, atol=1e-12)
    assert verify(d).passed  # a minimum-order design meets its own tolerance


FIR_CASES = [
    ({"design": "firwin", "numtaps": 101, "cutoff": (300.0, 3000.0), "btype": "bandpass"},
     lambda: ss.firwin(101, [300.0, 3000.0], pass_zero="bandpass", fs=FS)),
    ({"design": "firwin", "numtaps": 63, "cutoff": 2000.0, "btype": "highpass", "window": "blackman"},
     lambda: ss.firwin(63, 2000.0, pass_zero="highpass", window="blackman", fs=FS)),
    ({"design": "firwin", "numtaps": 81, "cutoff": (500.0, 1000.0, 2000.0, 3000.0),
          "btype": "bandpass", "window": "kaiser,8"},  # multiband
     lambda: ss.firwin(81, [500.0, 1000.0, 2000.0, 3000.0], pass_zero=False,
                       window=("kaiser", 8.0), fs=FS)),
    ({"design": "remez", "numtaps": 63, "bands": (0, 1000, 1500, 24000), "desired": (1, 0)},
     lambda: ss.remez(63, [0, 1000, 1500, 24000], [1, 0], fs=FS)),
    ({"design": "remez", "numtaps": 65, "btype": "bandstop", "passband": (1000.0, 4000.0),
          "stopband": (1500.0, 3000.0)},
     lambda: ss.remez(65, [0, 1000, 1500, 3000, 4000, 24000], [1, 0, 1], fs=FS)),
    ({"design": "firls", "numtaps": 61, "bands": (0, 1000, 1500, 24000), "desired": (1, 0),
          "weight": (1, 10)},
     lambda: ss.firls(61, [0, 1000, 1500, 24000], [1, 1, 0, 0], weight=[1, 10], fs=FS)),
    ({"design": "firwin2", "numtaps": 51, "freq": (0, 1000, 2000, 24000), "gain": (1, 1, 0, 0)},
     lambda: ss.firwin2(51, [0, 1000, 2000, 24000], [1, 1, 0, 0], fs=FS)),
]


@pytest.mark.parametrize("kw,reference", FIR_CASES)
def test_fir_taps_equal_scipy(kw, reference):
    d = design(FilterSpec(**kw), FS)
    assert d.form == "fir"
    np.testing.assert_allclose(d.b, reference(), rtol=1e-12, atol=1e-15)


def test_kaiser_from_spec_follows_kaiserord():
    spec = FilterSpec("firwin", btype="highpass", passband=1500.0, stopband=1000.0, rs=60.0)
    d = design(spec, FS)
    n, beta = ss.kaiserord(60.0, 500.0 / (FS / 2))
    n += n % 2 == 0  # high-pass: odd length
    np.testing.assert_allclose(d.b, ss.firwin(n, 1250.0, window=("kaiser", beta),
                                              pass_zero="highpass", fs=FS), rtol=1e-12)
    assert verify(d).passed


def test_remez_minimum_length_meets_the_tolerance():
    d = design(FilterSpec("remez", passband=1000.0, stopband=1500.0, rp=1.0, rs=60.0), FS)
    v = verify(d)
    assert v.passed, v.text()
    shorter = design(FilterSpec("remez", numtaps=d.numtaps - 40, passband=1000.0,
                                stopband=1500.0, rp=1.0, rs=60.0), FS)
    assert verify(shorter).passed is False


def test_comb_keeps_scipy_ba_and_analyses_analytically():
    spec = notch_from_click(50.0, FS, harmonics="nyquist")
    assert spec.design == "iircomb"
    d = design(spec, FS)
    b, a = ss.iircomb(50.0, 30.0, fs=FS)
    np.testing.assert_array_equal(d.b, b)
    np.testing.assert_array_equal(d.a, a)
    an = analyze(d, 4001)
    _, h = ss.freqz(b, a, worN=an.f, fs=FS)
    np.testing.assert_allclose(an.h, h, rtol=1e-9, atol=1e-10)  # freqz: 1e-12 noise at nulls
    imp = ss.lfilter(b, a, np.r_[1.0, np.zeros(5000)])
    np.testing.assert_allclose(d.impulse_response(5001), imp, rtol=1e-12, atol=1e-15)
    z, p, _ = an.zpk
    assert z.size == p.size == 960 and np.all(np.abs(p) < 1)


def test_notch_from_click_variants():
    assert notch_from_click(60.0, FS).design == "iirnotch"
    s = notch_from_click(49.3, FS, harmonics="nyquist")
    # 486 harmonics lie below Nyquist: capped, never hundreds of sections
    assert s.design == "notches" and s.harmonics == MAX_NOTCH_HARMONICS
    assert design(s, FS).sections == MAX_NOTCH_HARMONICS
    with pytest.raises(FilterSpecError) as e:
        design(FilterSpec("notches", frequency=49.3, q=30.0), FS)
    assert e.value.field == "harmonics" and "486 harmonics" in str(e.value)
    assert design(FilterSpec("notches", frequency=1000.0, q=30.0), FS).sections == 23
    s10 = notch_from_click(60.0, FS, harmonics=10)
    d10 = design(s10, FS)
    an = analyze(d10, 24001)  # 1 Hz grid: every harmonic is a grid point
    assert np.all(an.magnitude_db[np.arange(60, 601, 60)] < -100)
    with pytest.raises(FilterSpecError) as e:
        notch_from_click(30000.0, FS)
    assert e.value.field == "frequency"


# -- analysis -----------------------------------------------------------------------


def test_response_phase_and_zpk_match_scipy():
    d = design(FilterSpec("ellip", order=5, cutoff=(1000.0, 3000.0), btype="bandpass",
                          rp=0.5, rs=50.0), FS)
    an = analyze(d)
    _, h = ss.sosfreqz(d.sos, worN=an.f, fs=FS)
    np.testing.assert_allclose(an.h, h, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(an.phase, np.angle(h), atol=1e-9)
    assert np.max(np.abs(np.diff(an.phase_unwrapped))) < np.pi
    z, p, k = ss.sos2zpk(d.sos)
    z2, p2, k2 = an.zpk
    def key(v):  # order roots robustly (conjugates with equal real parts)
        return v[np.lexsort((np.round(v.imag, 6), np.round(v.real, 6)))]
    np.testing.assert_allclose(key(z2), key(z), atol=1e-9)
    np.testing.assert_allclose(key(p2), key(p), atol=1e-12)
    assert k2 == pytest.approx(k, rel=1e-12)
    t, y = an.impulse
    np.testing.assert_allclose(y, ss.sosfilt(d.sos, np.r_[1.0, np.zeros(t.size - 1)]))
    np.testing.assert_allclose(an.step[1], np.cumsum(y))
    assert d.minimum_phase is True


@pytest.mark.parametrize("ba", [
    ss.butter(4, 0.2, output="ba"),
    ss.ellip(4, 1, 50, 0.3, output="ba"),
    ss.cheby1(3, 1, [0.2, 0.5], btype="bandpass", output="ba"),
])
def test_group_delay_from_sections_matches_tf_where_well_conditioned(ba):
    b, a = ba
    d = Design.from_coefficients(2.0, b=b, a=a)
    an = analyze(d, 1024)
    w = an.f[1:-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # only points scipy computes without warning
        _, gd = ss.group_delay((b, a), w=w, fs=2.0)
    # well conditioned: away from the zeros on the unit circle
    z = np.roots(b)
    zf = np.angle(z[np.abs(np.abs(z) - 1) < 1e-6]) / np.pi
    ok = np.all(np.abs(w[:, None] - np.abs(zf)[None, :]) > 0.02, axis=1) if zf.size else \
        np.ones(w.size, bool)
    np.testing.assert_allclose(an.group_delay[1:-1][ok], gd[ok], rtol=1e-4, atol=1e-6)


def test_group_delay_is_finite_at_zeros_on_the_unit_circle():
    # a notch has zeros exactly on the circle: the tf formula is 0/0 there
    d = design(FilterSpec("iirnotch", frequency=1000.0, q=5.0), FS)
    f = np.array([0.0, 999.0, 1000.0, 1001.0, 5000.0])
    an = analyze(d, 48001)
    gd = an.group_delay[np.searchsorted(an.f, f)]
    assert np.all(np.isfinite(gd))
    fir = design(FilterSpec("firwin", numtaps=31, cutoff=1000.0), FS)
    assert np.all(analyze(fir).group_delay == 15.0) and fir.delay_samples == 15.0


def test_zero_phase_response_is_squared_with_no_delay():
    spec = FilterSpec("butter", order=4, cutoff=1000.0, zero_phase=True)
    d = design(spec, FS)
    an = analyze(d)
    _, h = ss.sosfreqz(d.sos, worN=an.f, fs=FS)
    np.testing.assert_allclose(an.magnitude, np.abs(h) ** 2, rtol=1e-10, atol=1e-14)
    assert np.all(an.phase == 0) and np.all(an.group_delay == 0) and d.delay_samples == 0
    t, y = an.impulse
    assert t[np.argmax(y)] == 0.0


# -- verdict --------------------------------------------------------------------------


def test_verdict_pass_and_fail_with_the_worst_violation():
    tol = {"passband": 1000.0, "stopband": 2000.0, "rp": 1.0, "rs": 40.0}
    good = design(FilterSpec("butter", order=12, cutoff=1200.0, **tol), FS)
    bad = design(FilterSpec("butter", order=2, cutoff=1200.0, **tol), FS)
    assert verify(good).passed
    v = verify(bad)
    assert v.passed is False
    w = v.worst
    assert w.kind == "stop" and w.worst_hz == 2000.0 and w.margin_db < 0
    gain = 20 * np.log10(np.abs(ss.sosfreqz(bad.sos, worN=[2000.0], fs=FS)[1][0]))
    assert w.worst_db == pytest.approx(gain) and w.margin_db == pytest.approx(-40 - gain)
    assert verify(design(FilterSpec("butter", order=2, cutoff=1200.0), FS)).passed is None


# -- impossible specifications ---------------------------------------------------------


@pytest.mark.parametrize("kw,fs,field,message", [
    ({"design": "butter", "order": 4, "cutoff": (300.0, 30000.0), "btype": "bandpass"}, FS, "cutoff",
     r"cutoff=\[300.0, 30000.0\] Hz must be below the Nyquist frequency 24000 Hz"),
    ({"design": "ellip", "passband": 1000.0, "stopband": 900.0, "rp": 1, "rs": 60}, FS, "stopband",
     r"stopband=900.0 Hz must lie above the passband edge"),
    ({"design": "cheby1", "btype": "bandpass", "passband": (1000.0, 2000.0),
          "stopband": (1200.0, 3000.0), "rp": 1, "rs": 60}, FS, "stopband",
     r"stopband=\[1200.0, 3000.0\] Hz must lie outside the passband"),
    ({"design": "butter", "passband": 1000.0, "stopband": 1001.0, "rp": 0.01, "rs": 200}, FS,
     "stopband", r"needs order \d+ > 64"),
    ({"design": "ellip", "order": 64, "cutoff": 3.0, "rp": 1, "rs": 100}, FS, "order",
     r"order=64: the designed filter is unstable"),
    ({"design": "cheby1", "order": 4, "cutoff": 100.0}, FS, "rp", r"parameter 'rp' is required"),
    ({"design": "butter", "order": 0, "cutoff": 100.0}, FS, "order",
     r"order=0 must be an integer in \[1, 64\]"),
    ({"design": "firls", "numtaps": 60, "bands": (0, 1, 2, 3), "desired": (1, 0)}, FS, "numtaps",
     r"numtaps=60 must be odd"),
    ({"design": "iircomb", "frequency": 70.0, "q": 30}, FS, "frequency",
     r"frequency=70 Hz must divide the sample rate"),
    ({"design": "butter", "passband": 1000.0, "stopband": 2000.0, "rp": 3, "rs": 2}, FS, "rs",
     r"rs=2 dB must be larger than rp=3 dB"),
])
def test_impossible_specs_name_the_field(kw, fs, field, message):
    with pytest.raises(FilterSpecError, match=message) as e:
        design(FilterSpec(**kw), fs)
    assert e.value.field == field
    assert "\n" not in str(e.value)
    assert isinstance(e.value, InputError)


# -- JSON and the pipeline --------------------------------------------------------------


def test_spec_json_round_trip_is_the_pipeline_step():
    spec = FilterSpec("butter", btype="bandpass", order=4, cutoff=(300.0, 3000.0),
                      zero_phase=True)
    params = spec.to_params()
    assert params == {"design": "butter", "order": 4, "cutoff": [300.0, 3000.0],
                      "btype": "bandpass", "zero_phase": True}
    assert FilterSpec.from_json(json.dumps(params)) == spec
    p = Pipeline.from_steps([{"op": "filter", "params": params}])
    assert p.steps[0].params == params
    np.testing.assert_array_equal(p.bind(FS).coefficients()[0].coefficients["sos"],
                                  design(spec, FS).sos)
    moved = dataclasses.replace(spec, cutoff=(350.0, 3000.0))  # a drag
    assert moved != spec and moved.to_params()["cutoff"] == [350.0, 3000.0]
    switched = dataclasses.replace(spec, design="cheby1", rp=1.0)
    assert switched.to_params()["rp"] == 1.0
    kaiser = FilterSpec("firwin", numtaps=31, cutoff=1000.0, window=("kaiser", 8.0))
    assert FilterSpec.from_params(json.loads(kaiser.to_json())) == dataclasses.replace(
        kaiser, window="kaiser,8")


def test_new_designs_run_in_a_pipeline_chunked_equal_whole():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(30000).astype(np.float32)  # what the recording returns
    for spec in (FilterSpec("ellip", passband=1000.0, stopband=1500.0, rp=1, rs=50),
                 notch_from_click(60.0, FS, harmonics=5),
                 FilterSpec("remez", passband=1000.0, stopband=3000.0, rp=1, rs=40)):
        p = Pipeline.from_steps([{"op": "filter", "params": spec.to_params()}])
        whole = p(x, FS)
        rec = ArrayRecording(x, FS)
        chunked = p.run(rec, chunk_samples=4096).data[0]
        np.testing.assert_allclose(chunked, whole, atol=1e-9)
        d = design(spec, FS)
        x64 = x.astype(np.float64)
        ref = ss.sosfilt(d.sos, x64) if d.form == "sos" else ss.lfilter(d.b, 1.0, x64)
        np.testing.assert_allclose(whole, ref, atol=1e-9)


# -- export and import --------------------------------------------------------------------

EXPORT_SPECS = [
    FilterSpec("butter", btype="bandpass", order=4, cutoff=(300.0, 3000.0)),
    FilterSpec("ellip", passband=1000.0, stopband=1500.0, rp=1, rs=60),
    FilterSpec("firwin", btype="highpass", passband=1500.0, stopband=1000.0, rs=40),
    FilterSpec("remez", numtaps=41, bands=(0, 1000, 2000, 24000), desired=(1, 0)),
    notch_from_click(50.0, FS, harmonics="nyquist"),
    notch_from_click(60.0, FS, harmonics=3),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("spec", EXPORT_SPECS, ids=lambda s: s.design)
def test_export_import_round_trip(fmt, spec, tmp_path):
    d = design(spec, FS)
    suffix = {"json": ".json", "csv": ".csv", "npz": ".npz", "c": ".h", "python": ".py"}[fmt]
    path = write_coefficients(d, tmp_path / f"f{suffix}")
    back = read_coefficients(path)
    assert back.form == d.form and back.sample_rate == FS and back.spec == spec
    for k, v in d.coefficients.items():
        np.testing.assert_array_equal(back.coefficients[k], v)


def test_c_header_float32_and_python_code_rebuild_the_filter():
    d = design(FilterSpec("cheby2", order=6, cutoff=(1000.0, 3000.0), btype="bandpass",
                          rs=50.0), FS)
    header = export_coefficients(d, "c", name="bp")
    import re
    body = re.search(r"bp_sos_f32\[\d+\]\[6\] = \{(.*?)\};", header, re.DOTALL).group(1)
    f32 = np.array([float(x) for x in re.findall(r"[-+]?[\d.]+(?:e[-+]?\d+)?", body)])
    np.testing.assert_array_equal(f32.reshape(-1, 6), d.sos.astype(np.float32))
    assert "#define BP_SECTIONS 6" in header
    code = export_coefficients(d, "python", name="bp")
    ns: dict = {}
    exec(compile(code, "bp.py", "exec"), ns)
    np.testing.assert_allclose(ns["sos"], d.sos, rtol=1e-12, atol=1e-15)
    comb = design(notch_from_click(100.0, FS, harmonics="nyquist"), FS)
    ns = {}
    exec(export_coefficients(comb, "python"), ns)
    np.testing.assert_array_equal(ns["b"], comb.b)
    np.testing.assert_array_equal(ns["a"], comb.a)


def test_import_ba_and_zpk_from_json():
    b, a = ss.butter(3, 0.3)
    d = parse_coefficients(json.dumps({"b": b.tolist(), "a": a.tolist()}), "json", fs=FS)
    np.testing.assert_allclose(d.sos, ss.tf2sos(b, a), rtol=1e-12, atol=1e-15)
    z, p, k = ss.butter(3, 0.3, output="zpk")
    doc = {"zeros": [[x.real, x.imag] for x in z], "poles": [[x.real, x.imag] for x in p],
           "gain": k, "sample_rate": FS}
    d2 = parse_coefficients(json.dumps(doc), "json")
    np.testing.assert_allclose(d2.sos, ss.zpk2sos(z, p, k), rtol=1e-12, atol=1e-15)
    with pytest.raises(InputError, match="no sample rate"):
        parse_coefficients(json.dumps({"b": [1.0]}), "json")


def test_filter_recording_to_hdf5_with_spec_and_coefficients(tmp_path):
    import h5py
    import soundfile

    rng = np.random.default_rng(2)
    x = (0.1 * rng.standard_normal(int(FS))).astype(np.float32)
    wav = tmp_path / "in.wav"
    soundfile.write(wav, x, int(FS), subtype="FLOAT")
    spec = FilterSpec("butter", btype="bandpass", order=4, cutoff=(300.0, 3000.0))
    out = filter_recording(spec, wav, tmp_path / "out.h5")
    with h5py.File(out, "r") as f:
        y = f["signal"][:, 0]
        steps = json.loads(f.attrs["pipeline"])["steps"]
        sos = f["pipeline/coefficients/step_0/sos"][...]
        assert "source_sha256" in f.attrs
    assert steps[0]["params"] == spec.to_params()
    np.testing.assert_array_equal(sos, design(spec, FS).sos)
    np.testing.assert_allclose(y, ss.sosfilt(sos, x.astype(np.float64)), atol=1e-5)


def test_block_filter_with_context_matches_whole_filtering():
    from specscope.compute.view import TileEngine

    rng = np.random.default_rng(3)
    x = rng.standard_normal(200000).astype(np.float64)
    rec = ArrayRecording(x, FS)
    spec = FilterSpec("butter", order=4, cutoff=2000.0)
    bf = block_filter(spec, FS)
    engine = TileEngine(rec, nfft=512, hop=128, pipeline=bf)
    ref = TileEngine(ArrayRecording(bf(x, FS), FS), nfft=512, hop=128)
    a = engine.render(0.5, 3.5, 300).image
    b = ref.render(0.5, 3.5, 300).image
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-7 * np.nanmax(b))  # float32 image


# -- CLI ----------------------------------------------------------------------------------


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "specscope.app", "filter", *map(str, args)],
                          check=False, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_cli_design_prints_scipy_sos_and_rejects_bad_input(tmp_path):
    r = _cli("design", "--design", "butter", "--btype", "bandpass", "--order", 4,
             "--cutoff", 300, 3000, "--fs", 48000)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    np.testing.assert_allclose(doc["sos"], ss.butter(4, [300, 3000], btype="bandpass",
                                                     fs=48000, output="sos"), rtol=1e-15)
    r = _cli("design", "--design", "ellip", "--passband", 1000, "--stopband", 1500, "--rp", 1,
             "--rs", 60, "--fs", 48000, "--format", "c", "-o", tmp_path / "f.h")
    assert r.returncode == 0, r.stderr
    assert read_coefficients(tmp_path / "f.h").order == 6
    r = _cli("design", "--design", "butter", "--order", 4, "--cutoff", 30000, "--fs", 48000)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "Nyquist" in r.stderr


def test_cli_functions_in_process(tmp_path, capsys):
    from specscope.app.cli import main

    assert main(["filter", "design", "--design", "firwin", "--numtaps", "11", "--cutoff",
                            "1000", "--fs", "8000", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "b,a"
    assert main(["filter", "design", "--design", "cheby1", "--order", "4", "--cutoff",
                            "100", "--fs", "8000"]) == 2
    assert "--rp" in capsys.readouterr().err
