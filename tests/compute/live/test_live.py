"""Live mode: streamed == offline, sources, ring drops, history spill, crash-safe recording, CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.signal as ss
from specscope.compute.errors import InputError, RecordingError, SpecscopeError
from specscope.compute.io import ArrayRecording
from specscope.compute.live import (
    BlockRing,
    FileSource,
    GeneratorSource,
    History,
    LatencyStats,
    LiveSession,
    Source,
    open_source,
    recover_recording,
    register_source,
    source_schemes,
)
from specscope.compute.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "assets" / "examples" / "scene.wav"
FS = 16000.0


def _signal(n: int = 40000, channels: int = 2) -> np.ndarray:
    rng = np.random.default_rng(7)
    t = np.arange(n) / FS
    x = 0.3 * np.sin(2 * np.pi * 1200 * t)[:, None] + 0.1 * rng.standard_normal((n, channels))
    return x.astype(np.float32)


PIPELINES = {
    "iir": [{"op": "filter", "params": {"design": "butter", "order": 4,
                                        "cutoff": [300.0, 3000.0], "btype": "bandpass"}},
            {"op": "spectrogram", "params": {"nfft": 1024, "hop": 256}}],
    "fir": [{"op": "filter", "params": {"design": "firwin", "numtaps": 63,
                                        "cutoff": 2000.0}},
            {"op": "gain", "params": {"factor": 2.0}},
            {"op": "spectrogram", "params": {"nfft": 512, "hop": 192, "window": "hamming"}}],
}


def _stream(source: Source, pipeline: Pipeline | None, **kw) -> LiveSession:
    s = LiveSession(source, pipeline, **kw)
    s.start()
    assert s.wait(30), "the stream did not finish"
    s.stop()
    s.raise_error()
    return s


# -- streamed == offline ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("block", [100, 256, 1000, 1023])
def test_streamed_equals_offline(name, block):
    """Frames streamed block by block equal Pipeline.run over the same samples, bit for bit.

    Exact (float64 history): the live engine drives the same stages with the same
    carried state as Pipeline.run; none of the block sizes but 256 divides the hop.
    """
    x = _signal()
    rec = ArrayRecording(x, FS)
    pipe = Pipeline.from_steps(PIPELINES[name])
    offline = pipe.run(rec, chunk_samples=len(x)).data  # (channels, freq, frames)
    s = _stream(FileSource(rec, block=block, rate=0), pipe, history_dtype=np.float64)
    first, live = s.read(0, s.frame_count)
    assert first == 0 and s.stats().blocks_dropped == 0
    assert live.shape == offline.transpose(2, 0, 1).shape
    np.testing.assert_array_equal(live, offline.transpose(2, 0, 1))
    # the float32 display history is the same numbers rounded once
    s32 = _stream(FileSource(rec, block=block, rate=0), pipe)
    _, live32 = s32.read(0, s32.frame_count, channel=1)
    np.testing.assert_array_equal(live32, offline[1].T.astype(np.float32))
    assert live32.flags.c_contiguous and live32.dtype == np.float32
    # and the whole-array call agrees to rounding (a different STFT routine)
    whole = pipe(x.T, FS)
    np.testing.assert_allclose(live.transpose(1, 2, 0), whole, rtol=1e-9,
                               atol=1e-12 * float(np.max(whole)))


def test_streamed_signal_pipeline_equals_whole():
    x = _signal(9001, 1)
    pipe = Pipeline.from_steps([{"op": "filter", "params": {"design": "cheby1", "order": 3,
                                                            "rp": 1.0, "cutoff": 2500.0}}])
    s = _stream(FileSource(ArrayRecording(x, FS), block=1023, rate=0), pipe,
                history_dtype=np.float64)
    _, y = s.read(0, s.frame_count, channel=0)
    np.testing.assert_array_equal(y, pipe(x[:, 0], FS))
    assert s.kind == "signal" and s.frame_count == 9001


def test_whole_signal_step_is_refused():
    pipe = Pipeline.from_steps([{"op": "detrend", "params": {}}])
    with pytest.raises(SpecscopeError, match=r"steps\[0\].*cannot run live"):
        LiveSession(GeneratorSource("tone", sample_rate=FS), pipe)


# -- generators ------------------------------------------------------------------------


@pytest.mark.parametrize("block", [100, 1023])
def test_tone_and_chirp_match_their_formulas(block):
    n = 3 * 8000 + 17
    n_ = np.arange(n)
    tone = GeneratorSource("tone", sample_rate=FS, block=block, frequency=440.0,
                           amplitude=0.7, phase=0.3, channels=2).blocks(n)
    ref = 0.7 * np.cos(2 * np.pi * 440.0 * n_ / FS + 0.3)
    assert tone.shape == (n, 2) and tone.dtype == np.float32
    np.testing.assert_allclose(tone[:, 1], ref, atol=1e-7)

    ch = GeneratorSource("chirp", sample_rate=FS, block=block, f0=50.0, f1=6000.0,
                         period=0.5, method="quadratic").blocks(n)[:, 0]
    period = 8000
    ref = 0.5 * ss.chirp(n_[:period] / FS, 50.0, 0.5, 6000.0, method="quadratic")
    np.testing.assert_allclose(ch[:period], ref, atol=1e-7)
    np.testing.assert_array_equal(ch[period:2 * period], ch[:period])  # periodic


@pytest.mark.parametrize("block", [100, 1023])
def test_noise_and_clicks(block):
    n = 20000
    white = GeneratorSource("white", sample_rate=FS, block=block, amplitude=0.2, seed=5,
                            channels=2).blocks(n)
    ref = (0.2 * np.random.default_rng(5).standard_normal((n, 2))).astype(np.float32)
    np.testing.assert_array_equal(white, ref)

    clicks = GeneratorSource("clicks", sample_rate=FS, block=block, interval=0.1).blocks(n)
    np.testing.assert_array_equal(np.flatnonzero(clicks[:, 0]), np.arange(0, n, 1600))


def test_pink_noise_slope():
    fs = 48000.0
    x = GeneratorSource("pink", sample_rate=fs, block=1000, amplitude=1.0, seed=1).blocks(
        1 << 19)[:, 0].astype(np.float64)
    f, p = ss.welch(x, fs, nperseg=8192)
    band = (f > 20) & (f < 10000)
    slope = np.polyfit(np.log10(f[band]), np.log10(p[band]), 1)[0]
    assert abs(slope + 1.0) < 0.1, slope
    assert abs(x.std() - 1.0) < 0.1


def test_generator_bad_parameters():
    with pytest.raises(InputError, match=r"did you mean 'chirp'"):
        open_source("generator:chrip")
    with pytest.raises(InputError, match=r"unknown parameter 'freq'"):
        open_source("generator:tone,freq=3")
    with pytest.raises(InputError, match=r"generator:chirp: period='x' is not a number"):
        open_source("generator:chirp,period=x")
    with pytest.raises(InputError, match=r"unknown scheme 'sdr'"):
        open_source("sdr:rtl0")
    for setting in ("rate", "block", "duration", "kind"):  # session settings, not options
        with pytest.raises(InputError, match=rf"generator:tone: {setting}= is not a generator"):
            open_source(f"generator:tone,{setting}=2")


def test_device_without_sounddevice_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # import fails
    with pytest.raises(SpecscopeError, match=r"pip install 'specscope\[audio\]'") as e:
        open_source("device:USB mic")
    assert "\n" not in str(e.value)


def test_a_plugin_can_register_a_source():
    class Counter(GeneratorSource):
        def __init__(self, **kw):
            super().__init__("clicks", **kw)

        def read_block(self, start, n):
            return np.arange(start, start + n, dtype=np.float32)[:, None]

    register_source("counter", lambda target, loop, **kw: Counter(sample_rate=FS, **kw),
                    summary="test", replace=True)
    assert "counter" in source_schemes()
    s = _stream(open_source("counter:", block=300, rate=0, duration=0.1), None)
    np.testing.assert_array_equal(s.read(0, 10**6, channel=0)[1], np.arange(1600))


# -- file pacing, looping ------------------------------------------------------------------


class _TimedFileSource(FileSource):
    """A FileSource noting when it reads each block (time.perf_counter, its own clock)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.read_at: list[float] = []

    def read_block(self, start, n):
        self.read_at.append(time.perf_counter())
        return super().read_block(start, n)


def _timed_stream(rec, rate):
    """The stream of ``rec`` in 400-sample blocks at ``rate``: (session, source, seconds)."""
    src = _TimedFileSource(rec, block=400, rate=rate)
    t0 = time.perf_counter()
    s = _stream(src, None)
    return s, src, time.perf_counter() - t0


def test_file_source_pacing_and_loop():
    x = _signal(16000, 1)  # 1 s
    rec = ArrayRecording(x, FS)
    # the same stream unpaced, before and after: what reading and processing it costs
    # under the load of this moment (the paced run's time beyond its schedule is that)
    _, _, before = _timed_stream(rec, 0)
    s, src, took = _timed_stream(rec, 5.0)  # a 0.2 s schedule
    _, _, after = _timed_stream(rec, 0)
    assert s.stats().blocks_processed == 40 and s.stats().blocks_dropped == 0
    # never early, counted per block: block k is read once block k-1 was due, at
    # k * 400 / (16000 * 5) s after the start (a busy machine only makes it later)
    period = 400 / (FS * 5.0)
    early = [k for k, t in enumerate(src.read_at[:40])
             if t < src.started_at + k * period - 1e-4]
    assert len(src.read_at) >= 40 and early == [], early
    assert took >= 40 * period - 1e-4
    # not slower than the schedule: beyond it, at most a few times what the unpaced
    # stream took just before or after (rate 1 would add 0.8 s to the schedule)
    ref = max(before, after)
    assert took - 40 * period < 0.3 + 4 * ref, (took, before, after)

    looped = FileSource(rec, block=700, rate=0, loop=True, duration=2.5)
    s = _stream(looped, None)
    _, y = s.read(0, 10**9, channel=0)
    np.testing.assert_array_equal(y, np.tile(x[:, 0], 3)[:40000])


# -- ring buffer and drops ------------------------------------------------------------------


def test_ring_drops_when_full_and_never_blocks():
    ring = BlockRing(4)
    blocks = [np.full((10, 1), i, np.float32) for i in range(10)]
    # a put into a full ring returns (False) instead of waiting for room: run in a thread
    # that nothing empties the ring for, it ends (a blocking put would never end)
    accepted: list = []
    putter = threading.Thread(target=lambda: accepted.extend(ring.put(b) for b in blocks))
    putter.start()
    putter.join(30)
    assert not putter.is_alive(), "a put into the full ring blocked"
    assert accepted == [True] * 4 + [False] * 6
    assert ring.dropped_blocks == 6 and ring.dropped_samples == 60
    assert [ring.get(0)[0][0, 0] for _ in range(4)] == [0, 1, 2, 3]
    assert ring.get(0.01) is None
    ring.close()
    assert ring.get(None) is None  # closed and empty: returns at once


def test_session_counts_drops_when_the_consumer_stalls(monkeypatch):
    src = GeneratorSource("tone", sample_rate=FS, block=160, rate=20.0, duration=2.0)
    s = LiveSession(src, None, ring_blocks=8)
    real_append = s.history.append

    def slow(items):
        time.sleep(0.02)  # 20 ms per 0.5 ms-of-time block: the consumer falls behind
        real_append(items)

    monkeypatch.setattr(s.history, "append", slow)
    s.start()
    assert s.wait(30)
    st = s.stop()
    assert st.blocks_dropped > 0
    assert st.blocks_processed + st.blocks_dropped == 200
    assert st.samples_dropped == 160 * st.blocks_dropped
    assert st.ring_high_water == 8


@pytest.mark.slow
def test_a_backlog_is_processed_in_one_go_and_gives_the_same_numbers(monkeypatch):
    """After a stall the blocks waiting in the ring are joined: fewer calls, same frames."""
    x = _signal(20000)
    rec = ArrayRecording(x, FS)
    pipe = Pipeline.from_steps(PIPELINES["iir"])
    offline = pipe.run(rec, chunk_samples=len(x)).data
    s = LiveSession(FileSource(rec, block=100, rate=0), pipe, history_dtype=np.float64)
    pushes: list[int] = []
    real_push = s._proc.push
    gate = threading.Event()

    def push(block, final):
        if not pushes:
            gate.wait(30)  # the first block stalls until the ring is full behind it
        pushes.append(block.shape[0])
        return real_push(block, final)

    monkeypatch.setattr(s._proc, "push", push)
    s.start()
    deadline = time.monotonic() + 30
    while len(s.ring) < s.ring.capacity and time.monotonic() < deadline:
        time.sleep(0.01)
    gate.set()
    assert s.wait(30)
    st = s.stop()
    assert st.blocks_dropped == 0 and st.blocks_processed == 200
    assert len(pushes) < 200 and max(pushes) > 100  # the backlog went in joined blocks
    _, live = s.read(0, s.frame_count)
    np.testing.assert_array_equal(live, offline.transpose(2, 0, 1))


def test_the_ring_holds_two_seconds_of_signal():
    src = GeneratorSource("tone", sample_rate=48000.0, block=256, rate=1.0, duration=0.1)
    s = LiveSession(src, None)
    assert s.ring.capacity * 256 / 48000.0 >= 2.0
    assert LiveSession(GeneratorSource("tone", block=1 << 16, duration=0.1),
                       None).ring.capacity == 64


def test_latency_histogram_percentiles():
    lat = LatencyStats()
    values = np.linspace(1e-4, 1e-2, 1001)
    for v in values:
        lat.add(float(v))
    assert lat.percentile(50) == pytest.approx(np.percentile(values, 50), rel=0.02)
    assert lat.percentile(99) == pytest.approx(np.percentile(values, 99), rel=0.02)
    assert lat.max == values[-1]


# -- history: spill to disk, scroll back ---------------------------------------------------------


def _coded(a: int, b: int) -> np.ndarray:
    """Item i is filled with i (shape (n, 2, 3))."""
    return np.repeat(np.arange(a, b, dtype=np.float32)[:, None, None], 6, 1).reshape(-1, 2, 3)


def test_history_spills_and_reads_back(tmp_path):
    item_bytes = 2 * 3 * 4
    h = History((2, 3), np.float32, memory_bytes=3 * 100 * item_bytes,
                disk_bytes=10 * 100 * item_bytes + 10_000, spill_dir=tmp_path, chunk_items=100)
    for a in range(0, 2000, 37):
        h.append(_coded(a, min(a + 37, 2000)))
    h.flush()
    assert h.end == 2000
    assert h.memory_in_use <= 4 * 100 * item_bytes  # budget + the chunk being filled
    assert h.disk_in_use > 0 and h.spill_dir is not None
    assert h.disk_in_use <= 10 * 100 * item_bytes + 10_000
    files = sorted(h.spill_dir.glob("*.npy"))
    first = h.start
    assert files[0].name == f"{first:014d}.npy" and len(files) == 1700 // 100 - first // 100
    assert 300 <= first <= 700  # the oldest were forgotten beyond the disk budget
    for a, b in [(first, first + 250), (first + 90, 1990), (0, 2000), (1950, 2500)]:
        got_first, got = h.read(a, b)
        assert got_first == max(a, first)
        np.testing.assert_array_equal(got, _coded(got_first, min(b, 2000)))
    h.close()
    assert not h.spill_dir.exists()


def test_pause_and_scroll_back(tmp_path):
    pipe = Pipeline.from_steps([{"op": "spectrogram", "params": {"nfft": 256, "hop": 128}}])
    src = GeneratorSource("chirp", sample_rate=FS, block=512, rate=4.0, duration=3.0)
    s = LiveSession(src, pipe, history_bytes=200_000, spill_dir=tmp_path,
                    history_dtype=np.float64)
    s.start()
    while s.frame_count < 100:
        time.sleep(0.01)
    s.pause()
    frozen = s.view_end
    first, got = s.frames_since(0)
    n_seen = first + len(got)
    assert n_seen == frozen
    time.sleep(0.2)
    assert s.frame_count > frozen  # capture goes on
    assert s.view_end == frozen and len(s.frames_since(n_seen)[1]) == 0
    assert s.scroll(-40) == frozen - 40
    s.resume()
    assert s.wait(30)
    s.stop()
    s.history.flush()
    assert s.stats().history_disk_bytes > 0  # spilled
    total = s.frame_count
    assert total == (48000 - 256) // 128 + 1
    # scroll back over spilled and in-memory frames: equal to the offline spectrogram
    offline = pipe(src.blocks(48000)[:, 0], FS).T
    assert s.scroll_to(300) == 300
    a, v = s.view(250, channel=0)
    assert a == 50 and v.shape == (250, 129)
    np.testing.assert_array_equal(v, offline[50:300])
    a, _rest = s.frames_since(n_seen, channel=0)
    assert a == n_seen
    s.resume()
    a, tail = s.frames_since(total - 10, channel=0, limit=5)
    assert a == total - 5
    np.testing.assert_array_equal(tail, offline[-5:])
    s.close()


# -- recording -------------------------------------------------------------------------------------


def test_recording_complete_file(tmp_path):
    import h5py
    from specscope.compute.io import open_recording

    out = tmp_path / "rec.h5"
    pipe = Pipeline.from_steps([{"op": "spectrogram", "params": {"nfft": 512, "hop": 128}}])
    src = GeneratorSource("tone", sample_rate=FS, block=1000, rate=0, duration=1.5,
                          channels=2, frequency=500.0)
    s = _stream(src, pipe, record=out, record_flush_seconds=0.1)
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"]) and f.attrs["format"] == "specscope/live/1"
        assert f["spectrogram"].shape == (2, s.frame_count, 257)
        np.testing.assert_array_equal(f["spectrogram"][0], s.read(0, 10**9, channel=0)[1])
    with open_recording(out) as rec:
        assert rec.sample_rate == FS and rec.n_samples == 24000 and rec.n_channels == 2
        np.testing.assert_array_equal(rec.read(0, 24000), src.blocks(24000))


_WRITER = textwrap.dedent("""
    import sys, time
    from specscope.compute.live import GeneratorSource, LiveSession
    src = GeneratorSource("tone", sample_rate=16000.0, block=400, rate=1.0, frequency=300.0)
    s = LiveSession(src, None, record=sys.argv[1], record_flush_seconds=0.05)
    s.start()
    print("started", flush=True)
    time.sleep(60)
""")


@pytest.mark.slow
@pytest.mark.real
def test_killed_recording_is_readable(tmp_path):
    import h5py
    from specscope.compute.io import open_recording

    out = tmp_path / "killed.h5"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(out)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 20
        n = 0
        while n < 8000 and time.monotonic() < deadline:  # half a second of signal flushed
            time.sleep(0.05)
            try:
                with h5py.File(out, "r", swmr=True) as f:
                    n = f["samples"].shape[0]
            except (OSError, KeyError):
                pass
        assert n >= 8000
        time.sleep(0.17)  # kill it somewhere between two flushes
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    # any HDF5 tool opens it: plain h5py, no SWMR, no recovery
    with h5py.File(out, "r") as f:
        samples = f["samples"][...]
        assert not bool(f.attrs["complete"])
    assert samples.shape[0] >= n and samples.shape[0] % 400 == 0
    ref = GeneratorSource("tone", sample_rate=FS, frequency=300.0).blocks(samples.shape[0])
    np.testing.assert_array_equal(samples, ref)
    # the killed file itself opens as a recording
    with open_recording(out, dataset="/samples") as rec:
        assert rec.n_samples == samples.shape[0] and rec.sample_rate == FS
        np.testing.assert_array_equal(rec.read(0, 400), ref[:400])
    fixed = recover_recording(out, tmp_path / "fixed.h5")
    with open_recording(fixed) as rec:
        assert rec.n_samples == samples.shape[0]
        np.testing.assert_array_equal(rec.read(0, 400), ref[:400])


_SWMR_WRITER = textwrap.dedent("""
    import os, sys
    import h5py, numpy as np
    f = h5py.File(sys.argv[1], "w", libver="latest")
    d = f.create_dataset("x", shape=(0,), maxshape=(None,), dtype="f4", chunks=(64,))
    f.swmr_mode = True
    d.resize((100,))
    d[:] = np.arange(100)
    f.flush()
    os.kill(os.getpid(), 9)
""")


def test_clear_write_flags_opens_a_killed_swmr_file_everywhere(tmp_path):
    import h5py
    from specscope.compute.live.recorder import clear_write_flags

    out = tmp_path / "swmr.h5"
    proc = subprocess.run([sys.executable, "-c", _SWMR_WRITER, str(out)], timeout=60,
                          check=False)
    assert proc.returncode == -signal.SIGKILL
    with pytest.raises(OSError, match="already open for write"):
        h5py.File(out, "r")
    assert clear_write_flags(out) is True
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(100))
    assert clear_write_flags(out) is False  # nothing left to clear
    (tmp_path / "x.bin").write_bytes(b"0" * 64)
    with pytest.raises(RecordingError, match="not an HDF5 file"):
        clear_write_flags(tmp_path / "x.bin")


# -- CLI -------------------------------------------------------------------------------------------


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH="")
    return subprocess.run([sys.executable, "-m", "specscope.app", "live", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env,
                          check=False)


@pytest.mark.slow
def test_cli_file_stats_no_drops():
    # --rate 0: as fast as the processing goes, lossless (the source waits for room in
    # the ring), so no block is dropped however busy the machine is; a paced rate
    # drops blocks whenever the processing falls behind it (a loaded machine)
    r = _cli("--source", f"file:{EXAMPLE}", "--no-gui", "--stats", "--rate", "0")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["blocks_dropped"] == 0
    assert d["blocks_processed"] == -(-20 * 48000 // 1024)
    for k in ("latency_ms_median", "latency_ms_p99", "latency_ms_max"):
        assert 0 < d[k] < float("inf")
    assert d["latency_ms_median"] <= d["latency_ms_p99"] <= d["latency_ms_max"]
    assert d["frames"] == (20 * 48000 - 1024) // 256 + 1


@pytest.mark.slow
def test_cli_bad_input_and_missing_gui(tmp_path):
    r = _cli("--source", "generator:tone", "--no-gui", "--block", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--block 0" in r.stderr
    r = _cli("--source", f"file:{tmp_path / 'nope.wav'}", "--no-gui")
    assert r.returncode == 2 and "nope.wav" in r.stderr and "Traceback" not in r.stderr
    try:
        from specscope.app.desktop.live_window import run_live  # noqa: F401
    except ImportError:
        r = _cli("--source", "generator:tone", "--duration", "0.1")
        assert r.returncode == 2 and "live window is not available" in r.stderr


# -- the monitor: the processed live signal on an audio output ------------------------------

def _peak_hz(y: np.ndarray, fs: float) -> float:
    spec = np.abs(np.fft.rfft(y * np.hanning(y.size)))
    return float(np.fft.rfftfreq(y.size, 1 / fs)[np.argmax(spec)])


def test_live_renderer_is_the_processed_signal_resampled():
    from specscope.compute.live import LiveRenderer
    from specscope.compute.playback.stages import Resampler, rational

    x = _signal(8000, 2)
    tap = BlockRing(64)
    for a in range(0, x.shape[0], 700):
        tap.put(x[a:a + 700])
    tap.close()
    r = LiveRenderer(tap, FS, channel=1, device_rate=48000.0, prefill=100)
    y = np.concatenate(list(r.blocks()))
    assert np.all(y[:100] == 0) and r.received == x.shape[0]
    ref = Resampler(FS, *rational(48000.0 / FS)).push(x[:, 1].astype(np.float64), False)
    n = min(y.size - 100, ref.size) - 512  # the limiter holds back two segments
    fade = round(0.01 * 48000)
    np.testing.assert_allclose(y[100 + fade:100 + n], ref[fade:n], atol=1e-5)


def test_monitor_plays_the_processed_tone_at_the_device_rate():
    from specscope.compute.live import LiveMonitor
    from specscope.compute.playback import FakeOutput

    src = GeneratorSource("tone", sample_rate=16000.0, block=256, rate=1.0, duration=1.5,
                          frequency=2500.0, amplitude=0.8)
    pipe = Pipeline.from_steps([{"op": "gain", "params": {"factor": 0.5}},
                                {"op": "spectrogram", "params": {"nfft": 512, "hop": 128}}])
    session = LiveSession(src, pipe)
    out = FakeOutput(latency_s=0.02, rate=1.0)
    monitor = LiveMonitor(session, output=out, device_rate=44100.0)
    try:
        monitor.start()
        assert monitor.device_name == "fake output"
        assert 0.02 < monitor.latency_s < 0.1
        session.start()
        assert session.wait(30)
        assert monitor.player.wait(5.0)
    finally:
        monitor.stop()
        session.close()
    y = out.samples()
    assert out.sample_rate == 44100.0
    loud = np.flatnonzero(np.abs(y) > 0.1)
    body = y[loud[0] + 4410:loud[-1] - 4410]  # away from the fades
    assert body.size > 0.8 * 44100
    assert _peak_hz(body, 44100.0) == pytest.approx(2500.0, abs=2.0)
    # the pipeline's gain is heard: 0.8 * 0.5
    assert np.percentile(np.abs(body), 99.9) == pytest.approx(0.4, abs=0.02)


def test_monitor_without_a_device_is_one_line(monkeypatch):
    from specscope.compute.live import LiveMonitor
    from specscope.compute.playback import player as player_module

    def missing():
        raise SpecscopeError("playback needs the sounddevice package")
    monkeypatch.delenv("SPECSCOPE_AUDIO_OUTPUT", raising=False)
    monkeypatch.setattr(player_module, "load_sounddevice", missing)
    session = LiveSession(GeneratorSource("tone", duration=0.1), None)
    with pytest.raises(SpecscopeError, match="sounddevice"):
        LiveMonitor(session).start()
    session.close()


@pytest.mark.slow
def test_cli_live_monitor_plays_on_the_fake_output():
    env_cli = dict(os.environ, PYTHONPATH="", SPECSCOPE_AUDIO_OUTPUT="fake")
    r = subprocess.run([sys.executable, "-m", "specscope.app", "live", "--source",
                        "generator:tone", "--duration", "0.5", "--no-gui", "--monitor",
                        "--stats"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                       env=env_cli, check=False)
    assert r.returncode == 0, r.stderr
    assert "monitoring on fake output (latency" in r.stderr
    assert json.loads(r.stdout)["blocks_processed"] > 0
