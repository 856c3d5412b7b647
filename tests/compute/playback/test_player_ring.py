"""The player's ring and controls on a fake output: volume, mute, a loop's last pass, stereo."""

from __future__ import annotations

import time

import numpy as np
from specscope.compute.io import ArrayRecording
from specscope.compute.playback import FakeOutput, Looping, Player, Renderer, SampleRing


def tone(seconds: float = 0.5, fs: int = 48000) -> ArrayRecording:
    t = np.arange(round(seconds * fs)) / fs
    return ArrayRecording((0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[:, None], fs)


def test_volume_scales_what_the_device_gets_and_zero_mutes():
    r = Renderer(tone())
    ref = r.render()
    for volume in (0.25, 0.0):
        out = FakeOutput(latency_s=0.0, rate=0)
        with Player(r, output=out, block=256, volume=volume) as p:
            p.start()
            assert p.wait(30)
        np.testing.assert_allclose(out.samples()[:ref.size], volume * ref, atol=1e-7)


def test_a_loop_switched_off_ends_at_the_end_of_the_pass_being_heard():
    r = Renderer(tone(0.1))
    src = Looping(r, loop=True)
    out = FakeOutput(latency_s=0.0, rate=4.0)
    p = Player(src, output=out, block=256, buffer_s=2.0)  # ring: many passes ahead
    p.start()
    while out.consumed < 2.5 * r.length:
        time.sleep(0.001)
    src.loop = False
    at = out.consumed
    p.end_after(r.length)
    assert p.wait(30)
    p.stop()
    y = out.samples()
    assert p.ahead_s * r.sample_rate > r.length  # passes rendered ahead were not played
    heard = int(np.flatnonzero(np.abs(y) > 1e-6)[-1]) + 1
    passes = -(-heard // r.length)
    assert passes * r.length - heard < 64  # it ended at a pass's end (its fade-out)
    assert at <= passes * r.length <= at + r.length + 2 * 256  # the pass being heard
    np.testing.assert_allclose(y[(passes - 1) * r.length:passes * r.length], r.render(),
                               atol=1e-7)


def test_a_stereo_ring_keeps_its_channels_and_copies_mono_to_both():
    ring = SampleRing(8, channels=2)
    ring.write(np.array([[1, 2], [3, 4]], np.float32))
    ring.write(np.array([5, 6], np.float32))
    out = np.zeros((4, 2), np.float32)
    assert ring.read_into(out) == 4
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 5], [6, 6]])


def stereo() -> ArrayRecording:
    fs = 16000
    t = np.arange(fs) / fs
    x = np.stack([0.5 * np.sin(2 * np.pi * 1000 * t), 0.25 * np.sin(2 * np.pi * 3000 * t),
                  0.1 * np.sin(2 * np.pi * 500 * t)], 1)
    return ArrayRecording(x.astype(np.float32), fs)


def test_stereo_plays_in_stereo_and_each_choice_is_its_channels():
    rec = stereo()
    both = Renderer(rec, channel="all").render()
    assert both.shape == (Renderer(rec, channel=0).length, 2)
    np.testing.assert_array_equal(both[:, 0], Renderer(rec, channel=0).render())
    np.testing.assert_array_equal(both[:, 1], Renderer(rec, channel=1).render())
    np.testing.assert_array_equal(Renderer(rec, channel="left").render(), both[:, 0])
    np.testing.assert_array_equal(Renderer(rec, channel="right").render(), both[:, 1])
    mixed = ArrayRecording(rec.read(0, rec.n_samples).mean(axis=1, keepdims=True), 16000)
    np.testing.assert_allclose(Renderer(rec, channel="mix").render(),
                               Renderer(mixed).render(), atol=1e-6)
    # a clock (twice real time): an output that takes samples as fast as it can would
    # outrun the render-ahead thread on a busy machine and hear silence, as a device would
    out = FakeOutput(latency_s=0.0, rate=2.0)
    r = Renderer(rec, channel="all")
    with Player(r, output=out, block=256) as p:
        assert p.channels == 2
        p.start()
        assert p.wait(30)
    np.testing.assert_allclose(out.samples()[:r.length], both, atol=1e-7)


def test_a_channel_choice_that_does_not_exist_is_one_line():
    import pytest
    from specscope.compute.errors import InputError
    with pytest.raises(InputError, match=r"channel='both': expected a channel number or one "
                                         r"of all, left, right, mix"):
        Renderer(stereo(), channel="both")


class Opener:
    """A backend that opens FakeOutputs (on a real-time clock) and keeps them."""

    def __init__(self):
        self.opened: list[FakeOutput] = []

    def __call__(self, sample_rate, blocksize, callback, channels=1):
        out = FakeOutput(latency_s=0.0, rate=1.0)(sample_rate, blocksize or 256, callback,
                                                 channels=channels)
        self.opened.append(out)
        return out


def test_a_held_output_lends_one_stream_and_opens_another_only_when_needed():
    from specscope.compute.playback.held import HeldOutput

    opener = Opener()
    held = HeldOutput(opener)
    held.prepare(48000.0)
    assert len(opener.opened) == 1 and held.is_open and not held.lent
    r = Renderer(tone(0.2))
    ref = r.render()
    for _ in range(2):  # played twice on the stream opened ahead, in stereo
        with Player(r, output=held, block=256) as p:
            p.start()
            assert held.lent
            assert p.wait(30)
        assert not held.lent and len(opener.opened) == 1
    y = opener.opened[0].samples()
    assert y.shape[1] == 2
    np.testing.assert_array_equal(y[:, 0], y[:, 1])
    k = int(np.flatnonzero(y[:, 0])[0] - np.flatnonzero(ref)[0])
    np.testing.assert_allclose(y[k:k + ref.size, 0], ref, atol=1e-7)
    # while the stream is lent, a second player waits for it, then gets a stream of its own
    first = Player(Renderer(tone(5.0)), output=held, block=256)
    first.start()
    try:
        second = Player(r, output=held, block=256)
        t0 = time.monotonic()
        second.start()
        assert time.monotonic() - t0 >= 0.5  # it waited for the first to give it back
        assert len(opener.opened) == 2 and opener.opened[1] is not opener.opened[0]
        assert second.wait(30)
        second.stop()
    finally:
        first.stop()
    assert not held.lent and len(opener.opened) == 2
    held.close()
    assert not held.is_open
