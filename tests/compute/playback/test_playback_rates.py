"""IQ playback at the common capture rates: every demodulator with its default bandwidth.

A synthetic signal (FM: 5 kHz deviation by a 1 kHz tone; AM: a 1 kHz envelope;
USB/LSB: a line 1 kHz above/below the tuned frequency) must come out as a
1 kHz tone standing well above everything else, at every rate, with a
bandwidth too wide for the rate narrowed with a note instead of an error.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from specscope.compute.io import ArrayRecording
from specscope.compute.playback import Renderer
from specscope.compute.playback.options import DEFAULT_BANDWIDTH

RATES = (240e3, 250e3, 1.024e6, 2.048e6, 2.4e6)
CF = 100e6
DEV = 48000.0
OFFSET = 20e3  # the station, above the centre
TONE = 1000.0


def signal(demod: str, fs: float, seconds: float = 0.25) -> np.ndarray:
    t = np.arange(round(seconds * fs)) / fs
    w = 2 * np.pi * OFFSET * t
    if demod == "fm":
        return np.exp(1j * (w + 5.0 * np.sin(2 * np.pi * TONE * t)))
    if demod == "am":
        return (1 + 0.5 * np.sin(2 * np.pi * TONE * t)) * np.exp(1j * w)
    side = TONE if demod == "usb" else -TONE
    return 0.5 * np.exp(1j * (w + 2 * np.pi * side * t))


def tone_and_rest_db(y: np.ndarray) -> tuple[float, float]:
    """Frequency of the strongest line and its level over the strongest other (dB)."""
    y = y[y.size // 5: -y.size // 10]  # past the fades and filter settling
    spec = np.abs(np.fft.rfft(y * np.hanning(y.size)))
    f = np.fft.rfftfreq(y.size, 1 / DEV)
    k = int(np.argmax(spec))
    rest = spec.copy()
    rest[max(0, k - 8):k + 9] = 0
    rest[f < 50] = 0  # the DC block's settling
    return float(f[k]), float(20 * np.log10(spec[k] / rest.max()))


@pytest.mark.parametrize("demod", ["am", "fm", "usb", "lsb"])
@pytest.mark.parametrize("fs", RATES)
def test_every_demodulator_hears_the_tone_at_every_rate(fs, demod):
    rec = ArrayRecording(signal(demod, fs).astype(np.complex64), fs, center_frequency=CF)
    r = Renderer(rec, tune=CF + OFFSET, demod=demod)
    y = r.render()
    hz, over_db = tone_and_rest_db(y)
    print(f"{fs / 1e3:g} kHz {demod}: {hz:.1f} Hz, {over_db:.1f} dB over the rest; {r.notes}")
    assert abs(hz - TONE) <= 2 * DEV / y.size
    assert over_db >= 30.0
    wide = DEFAULT_BANDWIDTH[demod] > 0.95 * fs / 1.2
    assert bool(r.notes) == wide
    if wide:
        assert len(r.notes) == 1 and "narrowed" in r.notes[0] and f"{fs:g} Hz" in r.notes[0]


def test_a_tuning_outside_the_band_is_still_one_error_line():
    fs = 240e3
    rec = ArrayRecording(signal("fm", fs).astype(np.complex64), fs, center_frequency=CF)
    with pytest.raises(Exception, match=r"tune=1\.0013e\+08 Hz is outside the recording's band"):
        Renderer(rec, tune=CF + 130e3, demod="fm")


@pytest.mark.slow
def test_cli_plays_fm_at_240_khz_with_a_note(tmp_path):
    fs = 240e3
    z = signal("fm", fs, 0.2).astype(np.complex64)
    data = tmp_path / "fm.sigmf-data"
    np.stack([z.real, z.imag], 1).astype(np.float32).tofile(data)
    meta = tmp_path / "fm.sigmf-meta"
    meta.write_text('{"global": {"core:datatype": "cf32_le", "core:sample_rate": 240000, '
                    '"core:version": "1.0.0"}, "captures": [{"core:sample_start": 0, '
                    '"core:frequency": 100000000}], "annotations": []}')
    out = tmp_path / "out.wav"
    p = subprocess.run([sys.executable, "-m", "specscope.app", "play", str(meta), "--tune",
                        "100.02e6", "--demod", "fm", "-o", str(out)], check=False,
                       capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "FM bandwidth narrowed from 200000 Hz to 190000 Hz" in p.stderr
    assert "Nyquist" not in p.stderr and out.exists()
