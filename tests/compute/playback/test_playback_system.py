"""PortAudio's lines kept off file descriptor 2 (into the log) while everything else still
reaches it, in order; the device's threads started in the real-time class where permitted."""

from __future__ import annotations

import os
import threading

import pytest
from specscope.compute.playback.system import REALTIME_PRIORITY, QuietStderr, realtime_children


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


def _rr_permitted() -> bool:
    out: list[bool] = []

    def probe() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(REALTIME_PRIORITY))
        except (OSError, AttributeError):
            out.append(False)
        else:
            out.append(True)

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return out[0]


@pytest.mark.skipif(not _rr_permitted(), reason="real-time scheduling is not permitted here")
def test_threads_started_inside_realtime_children_are_real_time_and_the_caller_is_put_back():
    seen: list[tuple[int, int]] = []

    def child() -> None:
        seen.append((os.sched_getscheduler(0), os.sched_getparam(0).sched_priority))

    def caller() -> None:
        before = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
        with realtime_children():
            t = threading.Thread(target=child)
            t.start()
            t.join()
        seen.append(before)
        seen.append((os.sched_getscheduler(0), os.sched_getparam(0).sched_priority))

    t = threading.Thread(target=caller)
    t.start()
    t.join()
    (child_policy, child_prio), before, after = seen
    assert (child_policy, child_prio) == (os.SCHED_RR, REALTIME_PRIORITY)
    assert after == before and before[0] != os.SCHED_RR
