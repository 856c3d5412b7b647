"""PortAudio's lines kept off file descriptor 2 (into the log) while everything else still
reaches it, in order."""

from __future__ import annotations

import os

from specscope.compute.playback.system import QuietStderr


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
