"""The PyPAM reference (tests/reference/) reads tones of known level right.

Before specscope's levels are compared with PyPAM's, PyPAM's own numbers are checked here
against analytic levels: a calibrated tone inside one band reads its band power, the PSD
integrates to the signal power, and the time bins and band edges are PyPAM's documented
ones. Skipped, with the reason, where ``.venv-pypam`` is not built (scripts/pypam_venv).
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from reference.pypam import PyPAMReferenceError, pypam_available, run_pypam, skip_reason

FS = 16000
SECONDS = 130  # two 60 s bins; PyPAM joins the last 10 s to the second one
F1, A1 = 1000.0, 0.25  # inside the decidecade and octave bands centred on 1 kHz
F2, A2 = 5017.0, 0.5  # inside the millidecade band [10^3.700, 10^3.701) = [5011.9, 5023.4)
CAL = {"sensitivity": -170.0, "gain": 10.0, "vpp": 5.0}
CAL_DB = 20 * np.log10(5.0 / 2) + 170.0 - 10.0  # dB re 1 uPa of a full-scale signal
START = "2024-03-01T12:00:00"


def tone_db(amplitude: float) -> float:
    """Level in dB re 1 uPa^2 of a sine of ``amplitude`` (full scale) after ``CAL``."""
    return 10 * np.log10(amplitude**2 / 2) + CAL_DB


@pytest.fixture(scope="module")
def ref_dir(tmp_path_factory):
    """A folder with the two-tone 16-bit WAV; skips where the reference is not built."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("pypam")
    t = np.arange(FS * SECONDS) / FS
    x = A1 * np.sin(2 * np.pi * F1 * t) + A2 * np.sin(2 * np.pi * F2 * t)
    pcm = np.round(x * 32768).astype(np.int16)  # read back as pcm / 32768, PyPAM's full scale
    soundfile.write(folder / "tones.wav", pcm, FS, subtype="PCM_16")
    return folder


def request(folder, **extra) -> dict:
    return {
        "files": [str(folder / "tones.wav")], "start_times": [START], "sample_rate": FS,
        "nfft": FS, "overlap": 0.5, "window": "hann", "binsize": 60, "calibration": CAL,
        **extra,
    }


@pytest.fixture(scope="module")
def hmd(ref_dir):
    return run_pypam(request(ref_dir, bands="hmd"), ref_dir / "hmd")


def band_of(res, freq):
    """Index of the band holding ``freq``."""
    (index,) = np.nonzero((res["band_low"] <= freq) & (res["band_high"] > freq))
    assert index.size == 1
    return int(index[0])


def test_hmd_band_of_a_tone_reads_its_calibrated_level(hmd):
    j = band_of(hmd, F2)
    assert hmd["band_low"][j] == pytest.approx(10**3.700, abs=1e-6)
    assert hmd["band_high"][j] == pytest.approx(10**3.701, abs=1e-6)
    width = hmd["band_high"][j] - hmd["band_low"][j]
    # PyPAM's band value is the band-mean PSD (dB re 1 uPa^2/Hz at 1 Hz bins): x width = power
    level = hmd["band_db"][:, j] + 10 * np.log10(width)
    assert hmd["band_db"].shape == (2, hmd["band_centre"].size)
    np.testing.assert_allclose(level, tone_db(A2), atol=0.01)
    assert float(hmd["calibration_db"]) == pytest.approx(CAL_DB, abs=1e-9)


def test_hmd_psd_integrates_to_the_signal_power(hmd):
    w = float(hmd["fft_bin_width"])
    assert w == 1.0
    total = 10 * np.log10(np.sum(10 ** (hmd["psd_db"] / 10), axis=1) * w)
    expected = 10 * np.log10((A1**2 + A2**2) / 2) + CAL_DB
    np.testing.assert_allclose(total, expected, atol=0.01)
    np.testing.assert_array_equal(hmd["psd_freq"], np.arange(FS // 2 + 1))


def test_hmd_bins_and_edges_are_pypams(hmd):
    t0 = np.datetime64(START, "s").astype(np.int64)
    np.testing.assert_array_equal(hmd["time"], [t0, t0 + 60])
    np.testing.assert_array_equal(hmd["start_sample"], [0, 60 * FS])
    np.testing.assert_array_equal(hmd["end_sample"], [60 * FS, SECONDS * FS])  # 70 s bin
    c = hmd["band_centre"]
    assert c.size == 1701
    np.testing.assert_array_equal(c[:435], np.arange(435.0))  # 1 Hz bands up to 434 Hz
    assert c[435] == pytest.approx(10**2.6385, abs=1e-6)  # then millidecades
    assert hmd["band_high"][434] == pytest.approx(10**2.638, abs=1e-6)
    np.testing.assert_array_equal(hmd["band_low"][1:], hmd["band_high"][:-1])
    assert (c[-1], hmd["band_high"][-1]) == (FS / 2, FS / 2)


def test_signal_path_equals_acufile_path(ref_dir, hmd):
    res = run_pypam(request(ref_dir, bands="hmd", method="signal"), ref_dir / "signal")
    np.testing.assert_array_equal(res["band_centre"], hmd["band_centre"])
    np.testing.assert_allclose(res["band_db"], hmd["band_db"], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(res["time"], hmd["time"])


def test_octave_band_of_a_tone_reads_its_calibrated_level(ref_dir):
    res = run_pypam(
        request(ref_dir, bands="octave", band_limits=[20, 8000]), ref_dir / "octave"
    )
    np.testing.assert_allclose(
        res["band_centre"][:6], 1000 * 10 ** (0.3 * np.arange(-5, 1)), rtol=1e-12
    )
    j = band_of(res, F1)
    assert res["band_centre"][j] == pytest.approx(1000.0)
    level = res["band_db"][:, j] + 10 * np.log10(res["band_high"][j] - res["band_low"][j])
    np.testing.assert_allclose(level, tone_db(A1), atol=0.01)


def test_decidecade_level_lacks_the_bin_width_when_nfft_is_not_fs(ref_dir):
    # nfft = fs / 4: 4 Hz bins; PyPAM's band value is then the band-mean PSD - 10 log10(4)
    res = run_pypam(request(ref_dir, bands="decidecade", nfft=FS // 4), ref_dir / "dd")
    assert float(res["fft_bin_width"]) == 4.0
    j = band_of(res, F1)
    assert res["band_centre"][j] == pytest.approx(1000.0)
    assert res["band_low"][j] == pytest.approx(10**2.95, rel=1e-12)
    width = res["band_high"][j] - res["band_low"][j]
    level = res["band_db"][:, j] + 10 * np.log10(width) + 10 * np.log10(4.0)
    np.testing.assert_allclose(level, tone_db(A1), atol=0.01)


def test_a_bad_request_is_one_line_naming_the_value(ref_dir):
    with pytest.raises(PyPAMReferenceError) as info:
        run_pypam(request(ref_dir, bands="hmd", sample_rate=48000), ref_dir / "bad")
    assert str(info.value) == (
        "pypam reference: tones.wav: sample rate 16000 Hz, the request says 48000"
    )


def test_missing_venv_gives_a_skip_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECSCOPE_PYPAM_VENV", str(tmp_path / "absent"))
    assert not pypam_available()
    assert skip_reason() == (
        f"PyPAM reference venv {tmp_path / 'absent'} is not built (run scripts/pypam_venv)"
    )
    with pytest.raises(PyPAMReferenceError, match="is not built"):
        run_pypam({"files": []}, tmp_path)
