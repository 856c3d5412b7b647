"""Notching a measured spectral line: find_line, notch_for_line, ``specscope filter notch``.

The recording: 20 s at 48 kHz, hum at 49.93 Hz with harmonics 1-7 (amplitude
0.2/k) under white noise (standard deviation 0.05), tones at 700, 1500 and
3100 Hz and a chirp sweeping 0.5-5 kHz.  Levels are measured with Welch PSDs
(Hann, 2**18 samples: 0.18 Hz bins) on the part after the notches have settled
(from 2 s: a 1.7 Hz wide notch decays by e**-10 within 2 s).
"""

import json
import subprocess
import sys

import h5py
import numpy as np
import pytest
import scipy.signal as ss
import soundfile
from specscope.compute import InputError
from specscope.compute.filters import (
    MAX_NOTCH_HARMONICS,
    LineFit,
    design,
    find_line,
    notch_for_line,
)

FS = 48000
F0 = 49.93
TONES = (700.0, 1500.0, 3100.0)


def hum_recording(fs=FS, dur=20.0, f0=F0, harmonics=7, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(fs * dur)) / fs
    x = 0.05 * rng.standard_normal(t.size)
    for k in range(1, harmonics + 1):
        x += 0.2 / k * np.sin(2 * np.pi * k * f0 * t + 0.3 * k)
    for a, f in zip((0.1, 0.08, 0.05), TONES, strict=True):
        x += a * np.sin(2 * np.pi * f * t)
    x += 0.05 * np.sin(2 * np.pi * (500.0 * t + 4500.0 / (2 * dur) * t ** 2))
    return x


@pytest.fixture(scope="module")
def hum_wav(tmp_path_factory):
    path = tmp_path_factory.mktemp("hum") / "hum.wav"
    soundfile.write(str(path), hum_recording().astype(np.float32), FS, subtype="FLOAT")
    return path


def cli(*args):
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)],
                          capture_output=True, text=True, timeout=120, check=False)


def welch_db(x, fs=FS):
    f, p = ss.welch(x[2 * fs:], fs, window="hann", nperseg=1 << 18)
    return f, 10 * np.log10(p)


def peak_db(f, p_db, hz, half_bins=3):
    i = round(hz / f[1])
    return float(np.max(p_db[i - half_bins:i + half_bins + 1]))


# -- the measurement -----------------------------------------------------------------------

@pytest.mark.parametrize("near,tol", [(48.0, None), (68.19, 65.0), (52.8, 10.0)])
def test_find_line_refines_a_rough_click(near, tol):
    fit = find_line(hum_recording(), FS, near, tolerance_hz=tol)
    assert fit.frequency_hz == pytest.approx(F0, abs=0.02)
    assert fit.harmonics == tuple(range(1, 8))
    assert fit.describe() == "49.93 Hz, harmonics 1–7 above the floor"
    assert all(lv - fl >= fit.threshold_db for lv, fl in
               zip(fit.levels_db, fit.floor_db, strict=True))


def test_find_line_on_a_short_span_and_without_a_line():
    x = hum_recording(dur=3.0)
    fit = find_line(x, FS, 45.0)          # 3 s: coarser bins, still a few hundredths of a Hz
    assert fit.frequency_hz == pytest.approx(F0, abs=0.03)
    noise = np.random.default_rng(3).standard_normal(FS * 5)
    with pytest.raises(InputError, match="above the noise floor"):
        find_line(noise, FS, 50.0)
    with pytest.raises(InputError, match="near="):
        find_line(noise, FS, 30000.0)


def test_notch_for_line_comb_cap_and_single():
    # a buzz at exactly 50 Hz with 30 harmonics: the comb (one recursion), at fs/960
    t = np.arange(FS * 10) / FS
    buzz = sum(0.1 / np.sqrt(k) * np.sin(2 * np.pi * 50.0 * k * t + k) for k in range(1, 31))
    buzz = buzz + 0.01 * np.random.default_rng(1).standard_normal(t.size)
    fit = find_line(buzz, FS, 47.0)
    assert len(fit.harmonics) >= 30
    comb = notch_for_line(fit, FS)
    assert comb.design == "iircomb" and comb.frequency == 50.0
    # the same line, not dividing the sample rate: notches, capped
    off = LineFit(49.3, 1e-3, tuple(range(1, 61)), (), (), (), 0.18, 49.0)
    spec = notch_for_line(off, FS)
    assert spec.design == "notches" and spec.harmonics == MAX_NOTCH_HARMONICS
    assert design(spec, FS).sections == MAX_NOTCH_HARMONICS
    assert notch_for_line(off, FS, harmonics=3).harmonics == 3
    assert notch_for_line(off, FS, harmonics=None).design == "iirnotch"


# -- the command line ------------------------------------------------------------------------

@pytest.mark.slow
def test_cli_notch_then_apply_removes_the_hum_and_keeps_the_band(hum_wav, tmp_path):
    spec_path = tmp_path / "spec.json"
    r = cli("filter", "notch", hum_wav, "--near", 48, "--harmonics", "all", "-o", spec_path)
    assert r.returncode == 0, r.stderr
    assert "49.93 Hz, harmonics 1–7 above the floor" in r.stderr
    spec = json.loads(spec_path.read_text())
    assert spec["frequency"] == pytest.approx(F0, abs=0.02)
    out = tmp_path / "out.h5"
    r = cli("filter", "apply", spec_path, hum_wav, "-o", out)
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as h:
        y = h["signal"][:, 0].astype(np.float64)
        sections = h["pipeline/coefficients/step_0/sos"].shape[0]
    assert sections <= 40
    x = soundfile.read(str(hum_wav))[0]
    f, before = welch_db(x)
    _, after = welch_db(y)
    for k in range(1, 8):
        drop = peak_db(f, before, k * F0) - peak_db(f, after, k * F0)
        assert drop >= 30.0, f"harmonic {k}: only {drop:.1f} dB removed"
    band = (f >= 500) & (f <= 5000)
    change = 10 * np.log10(np.sum(10 ** (after[band] / 10)) / np.sum(10 ** (before[band] / 10)))
    assert abs(change) < 1.0, f"0.5-5 kHz band changed by {change:.2f} dB"
    for tone in TONES:  # the tones themselves: within 0.2 dB
        assert abs(peak_db(f, after, tone) - peak_db(f, before, tone)) < 0.2


@pytest.mark.slow
def test_cli_notch_errors_name_the_option(hum_wav):
    r = cli("filter", "notch", hum_wav, "--near", 48, "--start", 5, "--stop", 2)
    assert r.returncode == 2 and "--start" in r.stderr and r.stderr.count("\n") == 1
    r = cli("filter", "notch", hum_wav, "--near", 48, "--harmonics", "many")
    assert r.returncode == 2 and "--harmonics" in r.stderr


# -- the designer --------------------------------------------------------------------------

def test_a_click_on_the_hum_in_the_designer_notches_the_measured_line(qtbot, make_window,
                                                                      hum_wav):
    from _gui import TIMEOUT_MS, open_designer
    from PyQt6.QtCore import QPoint, QPointF, Qt
    from specscope.widgets.frequency_axis import forward

    w = open_designer(make_window, hum_wav)
    vb = w.view.plot.getViewBox()
    hz_per_pixel = vb.viewPixelSize()[1]
    assert hz_per_pixel > 10  # normal zoom: a pixel is far wider than the accuracy asked
    qtbot.mouseClick(w.designer_panel.notch_mode, Qt.MouseButton.LeftButton)
    assert w.view.click_mode == "notch"
    # the pixel row drawn over the hum, clicked where a person would: on the line
    scene = vb.mapViewToScene(QPointF(8.0, float(forward(w.view.freq_scale, F0))))
    p = w.view.mapFromScene(scene)
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(round(p.x()), round(p.y())))
    qtbot.waitUntil(lambda: w.settings.designer != "" and not w.designer.busy(),
                    timeout=TIMEOUT_MS)
    spec = json.loads(w.settings.designer)
    assert spec["frequency"] == pytest.approx(F0, abs=0.05)
    assert spec["design"] == "notches" and spec["harmonics"] == 7
    assert w.designer.design.sections <= 40
    assert w.designer_panel.line_info.text() == "49.93 Hz, harmonics 1–7 above the floor"


def test_a_notch_from_a_line_carries_the_digits_its_measurement_tells():
    """A line measured to ±3 mHz gives a notch at 50.000 Hz, not 50.0000070989344 Hz (the
    designer's field shows what the filter holds)."""
    fit = find_line(hum_recording(), FS, 48.0)
    step = 10.0 ** np.floor(np.log10(fit.stderr_hz))
    for harmonics in (None, 3):
        spec = notch_for_line(fit, FS, harmonics=harmonics)
        assert spec.frequency == pytest.approx(fit.frequency_hz, abs=step)
        assert spec.frequency == round(spec.frequency, int(-np.log10(step)))
        assert len(repr(spec.frequency)) <= 8, spec.frequency
