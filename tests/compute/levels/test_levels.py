"""Long-term levels: bands, known levels, calibration, statistics, runs, NetCDF."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from _deployments import T0, bext, snapshot, write_wav
from specscope.app.cli import main
from specscope.compute.errors import BadOption, InputError
from specscope.compute.files import OutputIsInputError
from specscope.compute.io import open_recording
from specscope.compute.levels import (
    Calibration,
    CalibrationError,
    SpectrumParams,
    band_power,
    compute_levels,
    exceedance_levels,
    load_calibration,
    make_bands,
    spectral_probability_density,
    write_levels,
    write_netcdf,
)
from specscope.compute.levels import run as run_mod
from specscope.compute.levels.spectra import Interval, interval_spectrum

FS = 8000


def _tone(seconds: float, f: float, amp: float, fs: int = FS, noise: float = 0.0,
          seed: int = 0) -> np.ndarray:
    t = np.arange(int(seconds * fs)) / fs
    x = amp * np.sin(2 * np.pi * f * t)
    if noise:
        x = x + np.random.default_rng(seed).normal(0, noise, t.size)
    return x.astype(np.float32)


# -- bands ------------------------------------------------------------------------------------


def test_hybrid_bands_are_bins_then_millidecades_where_a_millidecade_is_a_bin_wide():
    b = make_bands("hmd", 48000, 48000)
    assert np.all(np.diff(b.edges) > 0)
    lin = b.centres[b.centres < 434.6]
    np.testing.assert_array_equal(lin, np.arange(435.0))  # 1 Hz bands centred on the bins
    np.testing.assert_allclose(b.edges[:3], [-0.5, 0.5, 1.5])
    md = b.centres[435:-1]
    # millidecade centres 10**((m + 0.5) / 1000), edges on 10**(m / 1000)
    m = np.log10(md) * 1000 - 0.5
    np.testing.assert_allclose(m, np.round(m), atol=1e-6)
    np.testing.assert_allclose(np.log10(b.edges[436:-1]) * 1000,
                               np.round(np.log10(b.edges[436:-1]) * 1000), atol=1e-6)
    np.testing.assert_allclose(b.widths[:434], 1.0)
    assert b.widths[435] >= 1.0 > b.widths[433] / 1.0001  # the first millidecade: a bin wide
    assert b.edges[-1] == 24000 and b.centres[-1] == 24000


def test_fractional_bands_are_the_base_10_bands_inside_the_range():
    d = make_bands("decidecade", 48000, 48000, 10, 20000)
    np.testing.assert_allclose(d.centres, 1000 * 10 ** (np.arange(-20, 13) / 10))
    np.testing.assert_allclose(d.edges[1:-1], np.sqrt(d.centres[:-1] * d.centres[1:]))
    o = make_bands("octave", 48000, 48000, 10, 24000)
    np.testing.assert_allclose(o.centres, 1000 * 10 ** (0.3 * np.arange(-6, 5)))
    with pytest.raises(BadOption) as info:
        make_bands("thirds", 48000, 48000)
    assert info.value.option == "bands"
    with pytest.raises(BadOption) as info:
        make_bands("hmd", 48000, 48000, 100, 30000)
    assert info.value.option == "band"


def test_band_power_splits_each_bin_by_overlap_and_keeps_the_total():
    rng = np.random.default_rng(1)
    psd = rng.random((3, 4097))
    df = 48000 / 8192
    b = make_bands("hmd", 48000, 8192)
    dens = band_power(psd, df, b)
    # the bands cover [-df/2, fs/2]: every bin whole but half the Nyquist bin
    total = (dens * b.widths).sum(axis=1)
    np.testing.assert_allclose(total, psd.sum(axis=1) * df - psd[:, -1] * df / 2, rtol=1e-12)
    # a flat density reads the same in every band, whatever its edges
    for kind in ("hmd", "decidecade", "octave"):
        bands = make_bands(kind, 48000, 8192)
        np.testing.assert_allclose(band_power(np.full(4097, 3.0), df, bands), 3.0, rtol=1e-9)


# -- known levels ---------------------------------------------------------------------------


def test_white_noise_reads_its_spectral_density(tmp_path):
    sigma = 0.05
    x = np.random.default_rng(3).normal(0, sigma, FS * 120).astype(np.float32)
    sf.write(tmp_path / "n.wav", x, FS, subtype="FLOAT")
    lv = compute_levels(tmp_path / "n.wav", bands="decidecade", cache=False, low=50)
    expected = 10 * np.log10(2 * sigma**2 / FS)  # one-sided density of white noise
    db = lv.db()
    # a band of B bins averages about B * 60 independent values: sd 4.34 / sqrt(60 B) dB
    wide = lv.bands.widths > 100
    assert db.shape == (2, len(lv.bands)) and wide.sum() >= 6
    np.testing.assert_allclose(db[:, wide], expected, atol=0.3)
    assert abs(db[:, wide].mean() - expected) < 0.05
    np.testing.assert_array_equal(lv.effort, [60.0, 60.0])
    np.testing.assert_array_equal(lv.time, [0.0, 60.0])
    # the power of all the hybrid bands is the signal's (every bin but half the Nyquist bin)
    hmd = compute_levels(tmp_path / "n.wav", cache=False)
    np.testing.assert_allclose(hmd.broadband(), 10 * np.log10(sigma**2), atol=0.02)
    np.testing.assert_allclose(hmd.band_levels(), hmd.db() + 10 * np.log10(hmd.bands.widths))
    one = hmd.between(30.0, 90.0)
    np.testing.assert_array_equal(one.time, [60.0])
    np.testing.assert_array_equal(one.power, hmd.power[1:])


@pytest.mark.parametrize("kind,offset", [("hydrophone", 0.0),
                                         ("microphone", -20 * np.log10(20e-6))])
def test_a_calibrated_tone_reads_its_level(tmp_path, kind, offset):
    amp, sens, gain, vfs = 0.25, -165.0 if kind == "hydrophone" else -40.0, 12.0, 2.5
    sf.write(tmp_path / "t.wav", _tone(60, 1250, amp), FS, subtype="FLOAT")
    cal = Calibration(kind=kind, sensitivity_db=sens, gain_db=gain, full_scale_v=vfs)
    lv = compute_levels(tmp_path / "t.wav", calibration=cal, cache=False)
    pressure = amp * vfs / 10 ** ((sens + gain) / 20)  # peak, in µPa or Pa
    expected = 20 * np.log10(pressure / np.sqrt(2)) + offset
    near = (lv.bands.centres > 1200) & (lv.bands.centres < 1300)
    band_power_db = 10 * np.log10(np.sum(10 ** (lv.db()[0, near] / 10) * lv.bands.widths[near]))
    assert abs(band_power_db - expected) < 0.1
    assert lv.unit == ("dB re 1 µPa²/Hz" if kind == "hydrophone" else "dB re 20 µPa²/Hz")


def test_calibration_is_an_offset_per_band_never_a_recomputation(tmp_path):
    sf.write(tmp_path / "t.wav", _tone(60, 700, 0.1, noise=0.01), FS, subtype="FLOAT")
    lv = compute_levels(tmp_path / "t.wav", cache=False)
    raw = lv.db()
    resp = ((10.0, 1000.0, 4000.0), (0.0, -3.0, 6.0))
    lv.calibration = Calibration(sensitivity_db=-170, full_scale_v=1.0, response=resp)
    shift = lv.db() - raw
    expected = 170 - np.interp(lv.bands.centres, resp[0], resp[1])
    np.testing.assert_allclose(shift[0, lv.bands.centres > 10], expected[lv.bands.centres > 10])


# -- calibration files ------------------------------------------------------------------------


def _cal(tmp_path: Path, d: dict, name: str = "c.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return p


def test_calibration_file_round_trip_and_csv_response(tmp_path):
    (tmp_path / "r.csv").write_text("frequency,db\n10,0\n1000,-1.5\n20000,2\n")
    c = load_calibration(_cal(tmp_path, {"unit": "dB re 1 V/uPa", "sensitivity_db": -172.5,
                                         "gain_db": 6, "full_scale_v": 1.5,
                                         "response": "r.csv"}))
    assert c.kind == "hydrophone" and c.response == ((10.0, 1000.0, 20000.0), (0.0, -1.5, 2.0))
    assert Calibration.from_dict(c.to_dict()) == c
    # a CSV alone is the sensitivity per frequency
    (tmp_path / "s.csv").write_text("10,-170\n20000,-168\n")
    alone = load_calibration(tmp_path / "s.csv")
    np.testing.assert_allclose(alone.offset_db([10.0, 10005.0, 20000.0]), [170, 169, 168])


@pytest.mark.parametrize("d,field", [
    ({"unit": "dB re 1 V/Pa/Hz", "sensitivity_db": -40}, "unit"),
    ({"kind": "hydrophone", "unit": "dB re 1 V/Pa", "sensitivity_db": -40}, "unit"),
    ({"sensitivity_db": "loud"}, "sensitivity_db"),
    ({"gain_db": 3}, "sensitivity_db"),
    ({"sensitivity_db": -170, "full_scale_v": 0}, "full_scale_v"),
    ({"sensitivity_db": -170, "response": {"frequency_hz": [10, 5, 20], "db": [0, 0, 0]}},
     "response"),
    ({"sensitivity_db": -170, "gian_db": 3}, "gian_db"),
])
def test_a_bad_calibration_names_the_value(tmp_path, d, field):
    p = _cal(tmp_path, d)
    with pytest.raises(CalibrationError) as info:
        load_calibration(p)
    assert info.value.field == field
    assert info.value.path == str(p)
    assert len(str(info.value).splitlines()) == 1


def test_a_response_that_does_not_cover_the_bands_is_refused(tmp_path):
    sf.write(tmp_path / "t.wav", _tone(2, 700, 0.1), FS, subtype="FLOAT")
    cal = Calibration(sensitivity_db=-170, response=((100.0, 2000.0), (0.0, 1.0)))
    with pytest.raises(CalibrationError) as info:
        compute_levels(tmp_path / "t.wav", calibration=cal, cache=False,
                       params=SpectrumParams(interval=1))
    assert info.value.field == "response"


def test_cli_bad_calibration_is_exit_2_and_one_line(tmp_path, capsys):
    sf.write(tmp_path / "t.wav", _tone(2, 700, 0.1), FS, subtype="FLOAT")
    p = _cal(tmp_path, {"unit": "dB re 1 uPa", "sensitivity_db": -170})
    assert main(["levels", str(tmp_path / "t.wav"), "-o", str(tmp_path / "o.nc"),
                 "--calibration", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unit='dB re 1 uPa'" in err[0]
    assert not (tmp_path / "o.nc").exists()


# -- statistics -----------------------------------------------------------------------------


def test_exceedance_levels_are_the_complementary_percentiles():
    db = np.random.default_rng(5).normal(80, 6, (1000, 3))
    db[::7, 1] = np.nan  # failed intervals are skipped
    got = exceedance_levels(db, (10, 50, 90))
    for j in range(3):
        col = db[:, j][np.isfinite(db[:, j])]
        np.testing.assert_allclose(got[:, j], np.percentile(col, [90, 50, 10]))
    assert got[0, 0] > got[2, 0]  # L10 is above L90
    with pytest.raises(BadOption):
        exceedance_levels(db, (120,))


def test_spectral_probability_density_integrates_to_one():
    db = np.random.default_rng(6).normal(60, 4, (500, 4))
    edges, dens = spectral_probability_density(db, 0.5)
    np.testing.assert_allclose(dens.sum(axis=0) * 0.5, 1.0)
    assert edges[0] <= db.min() and edges[-1] > db.max()
    h, _ = np.histogram(db[:, 2], bins=edges)
    np.testing.assert_allclose(dens[:, 2], h / (500 * 0.5))


# -- runs: split, parallel, cached and whole are equal ---------------------------------------


@pytest.mark.slow
def test_tasks_pool_and_cache_give_the_numbers_of_one_whole_run(tmp_path, monkeypatch):
    sf.write(tmp_path / "t.wav", _tone(50, 900, 0.1, noise=0.02), FS, subtype="FLOAT")
    p = SpectrumParams(interval=5, nfft=2048, overlap=0.5)
    whole = compute_levels(tmp_path / "t.wav", params=p, cache=False)
    monkeypatch.setattr(run_mod, "TASK_SECONDS", 10.0)
    assert len(run_mod.plan_tasks(open_recording(tmp_path / "t.wav"), p)) == 5
    split = compute_levels(tmp_path / "t.wav", params=p, cache=False)
    pool = compute_levels(tmp_path / "t.wav", params=p, cache=False, workers=2)
    np.testing.assert_array_equal(split.power, whole.power)
    np.testing.assert_array_equal(pool.power, whole.power)
    first = compute_levels(tmp_path / "t.wav", params=p)
    calls = []
    monkeypatch.setattr(run_mod, "interval_spectrum",
                        lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(AssertionError))
    again = compute_levels(tmp_path / "t.wav", params=p)  # every task read from the cache
    assert calls == []
    np.testing.assert_array_equal(again.power, first.power)
    np.testing.assert_array_equal(first.power, whole.power)


def test_median_statistic_resists_a_loud_click(tmp_path):
    x = _tone(10, 500, 0.01, noise=0.001)
    x[FS * 4: FS * 4 + 200] += 0.9  # a click in one frame
    sf.write(tmp_path / "c.wav", x, FS, subtype="FLOAT")
    p = {"interval": 10.0, "nfft": 1024}
    mean = compute_levels(tmp_path / "c.wav", params=SpectrumParams(**p), cache=False,
                          bands="octave").db()
    med = compute_levels(tmp_path / "c.wav", params=SpectrumParams(**p, statistic="median"),
                         cache=False, bands="octave").db()
    top = -1  # the highest octave holds no tone: the click dominates its mean only
    assert mean[0, top] - med[0, top] > 10


# -- deployments ----------------------------------------------------------------------------


def _deployment(folder: Path, starts_s: list[float], seconds: int = 60) -> list[np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k, s in enumerate(starts_s):
        x = (np.random.default_rng(k).normal(0, 3000, FS * seconds)).astype(np.int16)
        x[:, None] if x.ndim == 1 else x
        write_wav(folder / f"r{k:03d}.wav", x[:, None], FS,
                  [(b"bext", bext(T0 + timedelta(seconds=s)))])
        out.append(x)
    return out


def test_deployment_minutes_on_the_clock_frames_within_stretches(tmp_path):
    # two contiguous files from 12:00:30, a gap, one file at 12:10:00
    xs = _deployment(tmp_path / "d", [30, 90, 600])
    before = snapshot(tmp_path / "d")
    p = SpectrumParams(interval=60, nfft=FS)
    lv = compute_levels(tmp_path / "d", params=p, bands="octave", cache=False)
    t0 = T0.timestamp()  # T0 is read as UTC
    np.testing.assert_allclose(lv.time - t0, [30, 60, 120, 600])
    np.testing.assert_allclose(lv.effort, [30, 60, 30, 60])
    # the minute 12:01 spans the two files: it equals that minute of their concatenation
    joined = np.concatenate(xs[:2]).astype(np.float32) / 32768
    sf.write(tmp_path / "j.wav", joined, FS, subtype="FLOAT")
    with open_recording(tmp_path / "j.wav") as j:
        psd, n = interval_spectrum(j, Interval(30 * FS, 90 * FS, 0.0), p)
    assert n == 119  # frames run across the file boundary
    np.testing.assert_allclose(lv.power[1], band_power(psd, 1.0, lv.bands), rtol=1e-6)
    assert lv.absolute
    assert snapshot(tmp_path / "d") == before  # nothing is written into the folder


def test_a_file_that_fails_is_named_and_the_rest_are_computed(tmp_path):
    _deployment(tmp_path / "d", [0, 60, 300])
    rec = open_recording(tmp_path / "d")
    # the third file shrinks after indexing
    data = (tmp_path / "d" / "r002.wav").read_bytes()
    (tmp_path / "d" / "r002.wav").write_bytes(data[: len(data) // 2])
    out = tmp_path / "o.nc"
    failed = write_levels(rec, out, params=SpectrumParams(nfft=FS), bands="octave",
                          cache=False)
    assert len(failed) == 1 and failed[0].startswith(str(tmp_path / "d" / "r002.wav"))
    xr = pytest.importorskip("xarray")
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert json.loads(ds.attrs["failed_files"]) == failed
        assert np.isfinite(ds.psd.values[:2]).all() and np.isnan(ds.psd.values[2]).all()
        np.testing.assert_array_equal(ds.effort.values, [60, 60, 0])


# -- NetCDF -----------------------------------------------------------------------------------


def test_netcdf_reopens_in_xarray_and_ncdump_with_units(tmp_path):
    xr = pytest.importorskip("xarray")
    _deployment(tmp_path / "d", [0, 60])
    cal = Calibration(sensitivity_db=-170.0, full_scale_v=1.0)
    lv = compute_levels(tmp_path / "d", calibration=cal, bands="decidecade", cache=False,
                        params=SpectrumParams(nfft=FS), low=20)
    out = tmp_path / "l.nc"
    write_netcdf(lv, out)
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        np.testing.assert_allclose(ds.psd.values, lv.db().astype(np.float32))
        assert ds.psd.attrs["units"] == "dB re 1 uPa^2/Hz"
        assert ds.frequency.attrs["units"] == "Hz"
        assert ds.time.values[0] == np.datetime64(T0.isoformat(), "ns")
        assert json.loads(ds.attrs["calibration"])["sensitivity_db"] == -170.0
        np.testing.assert_allclose(ds.broadband_level.values, lv.broadband(), atol=1e-3)
        assert ds.broadband_level.attrs["units"] == "dB re 1 uPa^2"
        np.testing.assert_allclose(ds.exceedance_level.sel(percent=50).values,
                                   np.median(lv.db(), axis=0), rtol=1e-5)
    same = lv.to_xarray()
    np.testing.assert_allclose(same.psd.values, lv.db().astype(np.float32))
    if shutil.which("ncdump"):
        head = subprocess.run(["ncdump", "-h", str(out)], capture_output=True, text=True,
                              check=True).stdout
        assert "float psd(time, frequency)" in head
        assert 'time:units = "seconds since 1970-01-01T00:00:00Z"' in head


def test_cli_levels_writes_netcdf_and_refuses_its_input_as_output(tmp_path, capsys):
    xr = pytest.importorskip("xarray")
    sf.write(tmp_path / "t.wav", _tone(130, 440, 0.1, noise=0.01), FS, subtype="FLOAT")
    out = tmp_path / "o.nc"
    assert main(["levels", str(tmp_path / "t.wav"), "-o", str(out), "--bands", "octave",
                 "--interval", "60", "-q", "--no-cache"]) == 0
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert ds.psd.shape[0] == 3 and ds.attrs["bands"] == "octave"
        np.testing.assert_array_equal(ds.effort.values, [60, 60, 10])
    before = (tmp_path / "t.wav").read_bytes()
    assert main(["levels", str(tmp_path / "t.wav"), "-o", str(tmp_path / "t.wav")]) == 2
    assert (tmp_path / "t.wav").read_bytes() == before
    with pytest.raises(OutputIsInputError):
        write_levels(tmp_path / "t.wav", tmp_path / "t.wav", cache=False)


def test_iq_and_bad_parameters_are_one_line(tmp_path):
    np.zeros(4096, np.complex64).tofile(tmp_path / "x.cf32")
    with pytest.raises(InputError):
        compute_levels(tmp_path / "x.cf32", open_options={"sample_rate": 1e6}, cache=False)
    with pytest.raises(BadOption) as info:
        SpectrumParams(overlap=1.0)
    assert info.value.option == "overlap"


# -- what a review found --------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # floats read with the wrong byte order
def test_reader_options_reach_every_task_and_the_cache_key(tmp_path, capsys):
    x = (np.random.default_rng(9).normal(0, 0.1, FS * 4)).astype("<f4")
    x.tofile(tmp_path / "z.f32")
    p = SpectrumParams(interval=1, nfft=1024)
    raw = {"format": "raw", "sample_rate": FS, "dtype": "float32"}
    ref = compute_levels(tmp_path / "z.f32", params=p, bands="octave", cache=False,
                         open_options=raw)
    assert np.isfinite(ref.power).all()
    two = compute_levels(tmp_path / "z.f32", params=p, bands="octave", cache=False,
                         open_options=raw, workers=2)
    np.testing.assert_array_equal(two.power, ref.power)
    assert main(["levels", str(tmp_path / "z.f32"), "-o", str(tmp_path / "z.nc"), "--format",
                 "raw", "--sample-rate", str(FS), "--dtype", "float32", "--interval", "1",
                 "--nfft", "1024", "-q"]) == 0
    # the same bytes read another way are another signal: not the cached one
    x.byteswap().tofile(tmp_path / "y.f32")
    a = compute_levels(tmp_path / "y.f32", params=p, bands="octave",
                       open_options=dict(raw, dtype=">f4"))
    b = compute_levels(tmp_path / "y.f32", params=p, bands="octave",
                       open_options=dict(raw, dtype="<f4"))
    np.testing.assert_allclose(a.power, ref.power, rtol=1e-6)
    assert not np.allclose(np.nan_to_num(b.power), a.power)


def test_a_recording_in_memory_is_computed_without_a_cache():
    from specscope.compute.io.memory import ArrayRecording

    x = np.random.default_rng(4).normal(0, 0.1, (FS * 3, 1)).astype(np.float32)
    lv = compute_levels(ArrayRecording(x, FS), params=SpectrumParams(interval=1, nfft=512),
                        bands="octave")
    assert lv.power.shape[0] == 3 and np.isfinite(lv.power).all()


def test_a_run_whose_every_file_fails_has_no_levels_and_no_statistics(tmp_path):
    xr = pytest.importorskip("xarray")
    sf.write(tmp_path / "t.wav", _tone(3, 700, 0.1), FS, subtype="FLOAT")
    rec = open_recording(tmp_path / "t.wav")
    data = (tmp_path / "t.wav").read_bytes()
    (tmp_path / "t.wav").write_bytes(data[:200])  # shrinks after opening
    failed = write_levels(rec, tmp_path / "o.nc", params=SpectrumParams(interval=1, nfft=512),
                          bands="octave", cache=False)
    assert len(failed) == 1
    with xr.open_dataset(tmp_path / "o.nc", engine="h5netcdf") as ds:
        assert np.isnan(ds.psd.values).all()
        assert np.isnan(ds.exceedance_level.values).all()


def test_early_refusals_are_one_line(tmp_path):
    sf.write(tmp_path / "t.wav", _tone(2, 700, 0.1), FS, subtype="FLOAT")
    with pytest.raises(BadOption) as info:
        SpectrumParams(interval=1e-7)
    assert info.value.option == "interval"
    with pytest.raises(InputError):  # no whole frame: refused before any band is made
        compute_levels(tmp_path / "t.wav", params=SpectrumParams(interval=10, nfft=1 << 40),
                       cache=False)
    with pytest.raises(InputError):  # a bad window is the run's error, not each file's
        compute_levels(tmp_path / "t.wav", params=SpectrumParams(window="hannn"), cache=False)
    # a response from 0 Hz covers the hybrid bands (the DC band's lower edge is below 0)
    cal = Calibration(sensitivity_db=-170, response=((0.0, FS / 2), (0.0, 0.0)))
    lv = compute_levels(tmp_path / "t.wav", calibration=cal, cache=False,
                        params=SpectrumParams(interval=1, nfft=FS))
    assert lv.power.shape[0] == 2


def test_response_tables_with_semicolons_and_decimal_commas(tmp_path):
    (tmp_path / "r.csv").write_text("Hz;dB\n100;-165,5\n2000;-166,25\n")
    assert load_calibration(tmp_path / "r.csv").response == ((100.0, 2000.0),
                                                            (-165.5, -166.25))
    (tmp_path / "bad.csv").write_text("100,-165,5\n")
    with pytest.raises(CalibrationError) as info:
        load_calibration(tmp_path / "bad.csv")
    assert info.value.field == "response"


def test_the_median_statistic_is_welchs_median(tmp_path):
    import scipy.signal

    x = np.random.default_rng(8).normal(0, 0.1, FS * 10).astype(np.float32)
    sf.write(tmp_path / "n.wav", x, FS, subtype="FLOAT")
    p = SpectrumParams(interval=10, nfft=1024, statistic="median")
    with open_recording(tmp_path / "n.wav") as rec:
        ours, n = interval_spectrum(rec, Interval(0, FS * 10, 0.0), p)
    _, ref = scipy.signal.welch(x.astype(np.float64), FS, window="hann", nperseg=1024,
                                noverlap=512, detrend=False, average="median")
    assert n == 155
    np.testing.assert_allclose(ours, ref, rtol=2e-5)
