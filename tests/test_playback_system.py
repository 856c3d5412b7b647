"""What playback asks of the system: every thread's priority while it plays, and PortAudio's
lines kept off file descriptor 2 (into the log) while everything else still reaches it."""

from __future__ import annotations

import os
import threading

import pytest
from specscope.compute.playback.system import SOUND_NICE, QuietStderr, SoundPriority


def test_library_lines_go_to_the_log_and_the_rest_reaches_stderr_in_order(capfd):
    quiet = QuietStderr()
    with quiet:
        os.write(2, b"before\n")
        os.write(2, b"Expression 'r' failed in 'src/hostapi/alsa/pa_linux_alsa.c', "
                    b"line: 2097\n")
        with open(2, "w", closefd=False) as fd2:  # a Python stream on descriptor 2
            print("from python", file=fd2, flush=True)
        os.write(2, b"ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred\nafter\n")
    os.write(2, b"outside\n")
    err = capfd.readouterr().err
    assert err == "before\nfrom python\nafter\noutside\n"
    assert quiet.kept == ["Expression 'r' failed in 'src/hostapi/alsa/pa_linux_alsa.c', "
                          "line: 2097", "ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred"]


def _nice(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def _permitted() -> bool:
    t = threading.Thread(target=lambda: out.append(_try()))
    out: list[bool] = []
    t.start()
    t.join()
    return out[0]


def _try() -> bool:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SOUND_NICE)
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _permitted(), reason="lowering a nice value is not permitted here")
def test_every_thread_runs_at_the_sound_priority_while_held_and_is_put_back():
    started, halt = threading.Event(), threading.Event()
    tids: list[int] = []

    def idle() -> None:
        tids.append(threading.get_native_id())
        started.set()
        halt.wait()

    other = threading.Thread(target=idle)
    other.start()
    started.wait()
    main = threading.get_native_id()
    before = {main: _nice(main), tids[0]: _nice(tids[0])}
    prio = SoundPriority()
    try:
        with prio:
            assert _nice(main) == SOUND_NICE and _nice(tids[0]) == SOUND_NICE
            with prio:  # counted: an inner release keeps it
                pass
            assert _nice(tids[0]) == SOUND_NICE
        assert {main: _nice(main), tids[0]: _nice(tids[0])} == before
    finally:
        halt.set()
        other.join()
