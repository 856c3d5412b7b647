"""Playback: rendered samples measured against the figures they must meet."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
import soundfile as sf
from scipy.signal import hilbert
from specscope.app import cli
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.io.memory import ArrayRecording
from specscope.compute.playback import FakeOutput, Player, Renderer, render
from specscope.compute.playback import player as player_module

DEV = 48000.0


def spectrum(y: np.ndarray, fs: float = DEV) -> tuple[np.ndarray, np.ndarray]:
    """Hann-windowed magnitude spectrum (dB re its peak) and its frequencies."""
    Y = np.abs(np.fft.rfft(y.astype(float) * np.hanning(y.size)))
    return 20 * np.log10(Y / Y.max() + 1e-300), np.fft.rfftfreq(y.size, 1 / fs)


def peak_hz(y: np.ndarray, fs: float = DEV) -> float:
    db, f = spectrum(y, fs)
    return float(f[np.argmax(db)])


def level_near(db: np.ndarray, f: np.ndarray, hz: float, bins: int = 5) -> float:
    i = int(np.argmin(np.abs(f - hz)))
    return float(db[max(0, i - bins):i + bins + 1].max())


def middle(y: np.ndarray, margin: float = 0.05) -> np.ndarray:
    """Without the fades and the filters' start."""
    k = int(margin * y.size)
    return y[k:y.size - k]


@pytest.fixture(scope="module")
def bat() -> ArrayRecording:
    fs = 192000
    t = np.arange(int(0.5 * fs)) / fs
    return ArrayRecording(0.5 * np.sin(2 * np.pi * 42000 * t), fs)


def test_time_expansion_lasts_ten_times_longer_and_plays_a_tenth_of_the_pitch(bat):
    y = render(bat, 0, 0.5, speed=0.1)
    assert y.dtype == np.float32
    assert y.size == pytest.approx(0.5 / 0.1 * DEV, abs=1)  # 5 s of output
    bin_hz = DEV / y.size  # 0.2 Hz: one bin of this long FFT
    assert abs(peak_hz(y) - 4200.0) <= bin_hz


def test_heterodyne_gives_the_difference_tone_and_nothing_above_10_khz(bat):
    y = render(bat, 0, 0.5, heterodyne=40000)
    assert y.size == pytest.approx(0.5 * DEV, abs=1)
    m = middle(y)
    db, f = spectrum(m)
    assert abs(peak_hz(m) - 2000.0) <= DEV / m.size
    assert db[f > 10000].max() <= -40.0


def test_band_keeps_only_the_tone_inside_it():
    fs = 48000
    t = np.arange(fs) / fs
    rec = ArrayRecording(sum(0.3 * np.sin(2 * np.pi * f * t) for f in (500, 2000, 8000)), fs)
    y = middle(render(rec, band=(1000, 3000)), 0.1)
    db, f = spectrum(y)
    assert abs(peak_hz(y) - 2000) <= DEV / y.size
    assert level_near(db, f, 500) <= -40.0
    assert level_near(db, f, 8000) <= -40.0


IQ_FS = 240000
CF = 100e6


def iq(signal: np.ndarray) -> ArrayRecording:
    return ArrayRecording(signal.astype(np.complex64), IQ_FS, center_frequency=CF)


@pytest.fixture(scope="module")
def t_iq() -> np.ndarray:
    return np.arange(IQ_FS // 2) / IQ_FS


def test_fm_demodulates_to_the_modulating_tone(t_iq):
    # carrier 20 kHz above the centre, 5 kHz deviation by a 1 kHz tone
    z = np.exp(1j * (2 * np.pi * 20000 * t_iq + 5.0 * np.sin(2 * np.pi * 1000 * t_iq)))
    for deemphasis in ("none", "50us"):
        y = middle(render(iq(z), tune=CF + 20000, demod="fm", bandwidth=20000,
                          deemphasis=deemphasis))
        assert abs(peak_hz(y) - 1000.0) <= DEV / y.size


def test_am_demodulates_to_the_envelope(t_iq):
    z = (1 + 0.5 * np.sin(2 * np.pi * 1000 * t_iq)) * np.exp(-2j * np.pi * 30000 * t_iq)
    y = middle(render(iq(z), tune=CF - 30000, demod="am"))
    assert abs(peak_hz(y) - 1000.0) <= DEV / y.size


def test_usb_and_lsb_hear_their_side_only(t_iq):
    # one line 1 kHz above 10 kHz: USB tuned to 10 kHz and LSB tuned to 12 kHz hear 1 kHz
    rec = iq(0.5 * np.exp(2j * np.pi * 11000 * t_iq))
    usb = middle(render(rec, tune=CF + 10000, demod="usb"))
    lsb = middle(render(rec, tune=CF + 12000, demod="lsb"))
    assert abs(peak_hz(usb) - 1000.0) <= DEV / usb.size
    assert abs(peak_hz(lsb) - 1000.0) <= DEV / lsb.size
    # the wrong sideband: the line is outside the channel, >= 60 dB down
    wrong = middle(render(rec, tune=CF + 12000, demod="usb"))
    assert 20 * np.log10(np.abs(wrong).max() / np.abs(usb).max()) <= -60.0


def test_ranges_have_the_right_length(bat):
    for start, stop, speed in ((0.1, 0.3, 1.0), (0.0, 0.25, 0.5), (0.05, 0.45, 4.0),
                               (0.2, 0.2013, 0.37)):
        r = Renderer(bat, start, stop, speed=speed)
        y = r.render()
        assert y.size == r.length
        assert y.size == pytest.approx((stop - start) / speed * DEV, abs=2)
        # the end, to one output sample
        assert r.position_of(r.length) == pytest.approx(stop, abs=r.speed / DEV)


def test_streamed_rendering_equals_whole_rendering(bat):
    for opts in ({"speed": 0.1}, {"heterodyne": 40000}, {"band": (30000, 50000), "speed": 0.37},
                 {"speed": 3.3, "gain_db": 12.0}):
        whole = Renderer(bat, 0.01, 0.3, chunk=1 << 20, **opts).render()
        streamed = np.concatenate(list(Renderer(bat, 0.01, 0.3, chunk=997, **opts).blocks(333)))
        assert streamed.shape == whole.shape
        np.testing.assert_allclose(streamed, whole, rtol=0, atol=1e-6)


def test_gain_is_limited_and_the_ends_fade(bat):
    y = render(bat, 0, 0.02, speed=0.1, gain_db=40.0)  # 4.2 kHz, 100 times too loud
    assert np.abs(y).max() <= 1.0
    assert np.abs(y).max() >= 0.9  # loud, not silenced
    assert abs(y[0]) < 1e-3 and abs(y[-1]) < 1e-3  # faded: no click
    assert np.abs(y[:48]).max() < 0.2


def test_options_are_checked_and_name_the_parameter(bat):
    with pytest.raises(InputError, match="speed"):
        Renderer(bat, speed=10)
    with pytest.raises(InputError, match="band"):
        Renderer(bat, band=(3000, 1000))
    with pytest.raises(InputError, match="demod"):
        Renderer(bat, demod="fm")
    with pytest.raises(InputError, match="stop_s"):
        Renderer(bat, 0.3, 0.2)


class _ReachingOutput(FakeOutput):
    """A FakeOutput that sets ``reached`` once it has consumed ``target`` samples."""

    def __init__(self, target: float, **kw):
        super().__init__(**kw)
        self.target = target
        self.reached = threading.Event()

    def __call__(self, sample_rate, blocksize, callback, channels=1):
        def counted(buf, n, *rest):
            callback(buf, n, *rest)
            if self.consumed + n >= self.target:
                self.reached.set()
        return super().__call__(sample_rate, blocksize, counted, channels)


def test_fake_output_position_maps_back_to_recording_time():
    fs = 48000
    t = np.arange(4 * fs) / fs
    # a chirp whose frequency says the time: 1 kHz + 2 kHz per second
    rec = ArrayRecording(0.5 * np.sin(2 * np.pi * (1000 * t + 1000 * t ** 2)), fs)
    r = Renderer(rec, 0.5, 3.5, speed=0.5)
    out = _ReachingOutput(0.6 * r.length, latency_s=0.05, rate=4.0, device_name="fake")
    with Player(r, output=out, block=512) as p:
        p.start()
        assert p.device_name == "fake" and p.latency_s == 0.05
        assert out.reached.wait(30), f"{out.consumed} of {r.length} samples consumed"
        out.stop()  # freeze its clock: what is heard now is consumed - latency
        heard_at = out.consumed - round(0.05 * DEV)
        cursor = p.position_s
        y = out.samples()
    assert p.underruns == 0
    inst = np.diff(np.unwrap(np.angle(hilbert(y.astype(float))))) * DEV / (2 * np.pi)
    f_out = float(np.median(inst[heard_at - 240:heard_at + 240]))
    t_heard = (f_out / r.speed - 1000.0) / 2000.0  # the chirp's law, in recording time
    assert abs(cursor - t_heard) <= 0.020


def test_player_plays_everything_to_the_end(bat):
    r = Renderer(bat, 0, 0.1, speed=0.5)
    out = FakeOutput(latency_s=0.0, rate=0)
    p = Player(r, output=out, block=256)
    p.start()
    assert p.wait(20)
    p.stop()
    np.testing.assert_array_equal(out.samples()[:r.length], r.render())


def test_no_sounddevice_is_one_error_line(monkeypatch, bat):
    def missing():
        raise SpecscopeError("playback needs the sounddevice package: pip install "
                             "'specscope[audio]'")
    monkeypatch.setattr(player_module, "load_sounddevice", missing)
    with pytest.raises(SpecscopeError, match="sounddevice"):
        Player(Renderer(bat, 0, 0.1))


@pytest.fixture()
def wav(tmp_path):
    fs = 44100
    t = np.arange(int(0.6 * fs)) / fs
    path = tmp_path / "in.wav"
    sf.write(path, 0.4 * np.sin(2 * np.pi * 3000 * t), fs, subtype="FLOAT")
    return path


@pytest.mark.parametrize("why", ["missing", "no device"])
def test_cli_play_without_a_device_says_one_line_and_exits_2(monkeypatch, capsys, wav, why):
    class NoDevices:
        class PortAudioError(Exception):
            pass

        def query_devices(self, device, kind):
            raise self.PortAudioError("Error querying device -1")

    def missing():
        raise SpecscopeError("playback needs the sounddevice package: pip install "
                             "'specscope[audio]'")
    monkeypatch.setattr(player_module, "load_sounddevice",
                        missing if why == "missing" else NoDevices)
    assert cli.main(["play", str(wav), "--stop", "0.2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("specscope: error:")
    assert ("sounddevice" if why == "missing" else "no audio output device") in err[0]


def test_cli_play_writes_what_it_would_play(wav, tmp_path, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    out = tmp_path / "out.wav"
    assert cli.main(["play", str(wav), "--start", "0.1", "--stop", "0.5", "--speed", "0.5",
                     "--band", "2000", "4000", "-q", "-o", str(out)]) == 0
    got, fs = sf.read(out, dtype="float32")
    assert fs == 48000
    with ArrayRecording(sf.read(wav)[0], 44100) as rec:
        want = render(rec, 0.1, 0.5, speed=0.5, band=(2000, 4000))
    np.testing.assert_array_equal(got, want)
    assert not list(tmp_path.glob(".*partial"))


@pytest.mark.parametrize("tone_hz", [500.0, 8000.0])
def test_band_stopband_is_at_least_60_db_down(tone_hz):
    fs = 48000
    t = np.arange(fs) / fs
    rec = ArrayRecording(0.5 * np.sin(2 * np.pi * tone_hz * t), fs)
    full = middle(render(rec), 0.1).astype(float)
    cut = middle(render(rec, band=(1000, 3000)), 0.1).astype(float)
    ratio_db = 20 * np.log10(np.sqrt(np.mean(cut ** 2)) / np.sqrt(np.mean(full ** 2)))
    assert ratio_db <= -60.0


def test_the_limiter_says_the_gain_it_applied_per_block():
    """Renderer.block_gain, block by block, against the gain the output shows (output over
    the input times the gain setting), within 0.1 dB where the gain is steady; 1 when quiet;
    the player reports the deepest reduction heard."""
    fs = 48000
    t = np.arange(2 * fs) / fs
    amp = np.where(t < 1.0, 0.3, 0.6)  # +12 dB: 1.2 then 2.4 before the limiter
    x = amp * np.sin(2 * np.pi * 441.3 * t)
    rec = ArrayRecording(x.astype(np.float32)[:, None], fs)
    r = Renderer(rec, gain_db=12.0, fade_s=0.0)
    gain = 10 ** (12 / 20)
    pos, rows = 0, []
    for b in r.blocks(2400):
        seg = slice(pos, pos + b.shape[0])
        applied = np.sqrt(np.mean(b.astype(float) ** 2)) / np.sqrt(np.mean((gain * x[seg]) ** 2))
        rows.append((pos / fs, r.block_gain, applied))
        pos += b.shape[0]
    steady = [(g, a) for at, g, a in rows if 0.2 < at < 0.9 or 1.2 < at < 1.9]
    np.testing.assert_allclose([20 * np.log10(g) for g, _ in steady],
                               [20 * np.log10(a) for _, a in steady], atol=0.1)
    assert 20 * np.log10(steady[0][0]) == pytest.approx(20 * np.log10(0.98 / (0.3 * gain)),
                                                        abs=0.1)
    assert 20 * np.log10(steady[-1][0]) == pytest.approx(20 * np.log10(0.98 / (0.6 * gain)),
                                                         abs=0.1)
    quiet = Renderer(rec, 0, 0.9, gain_db=-6.0)
    assert all(quiet.block_gain == 1.0 for _ in quiet.blocks(2400))
    out = FakeOutput(latency_s=0.0, rate=0.0)
    p = Player(Renderer(rec, gain_db=12.0), output=out, block=512)
    p.start()
    assert p.wait(30)
    # the end was heard: the last 0.3 s were limited by 20 log10(0.98 / 2.4)
    assert p.limiting
    assert p.limiter_db == pytest.approx(20 * np.log10(0.98 / (0.6 * gain)), abs=0.5)
    p.stop()
