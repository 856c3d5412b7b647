"""The specscope command line, end to end, in subprocesses."""

import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest
from specscope.compute import __version__, spectrogram


def run(*args, cwd=None):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
                          check=False)


def test_version():
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"specscope {__version__}"


def test_info_json(example_path):
    r = run("info", example_path, "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["format"] == "WAV"
    assert info["sample_rate"] == 48000
    assert info["n_samples"] == 960000
    assert info["n_channels"] == 1
    assert info["duration_s"] == pytest.approx(20.0)
    assert info["is_complex"] is False


def test_info_text(stereo_wav):
    r = run("info", stereo_wav[0])
    assert r.returncode == 0
    assert "n_channels" in r.stdout and " 2" in r.stdout


def test_spectrogram_to_hdf5_and_back(stereo_wav, tmp_path):
    path, x, fs = stereo_wav
    out = tmp_path / "s.h5"
    r = run("spectrogram", path, "-o", out, "--nfft", 500, "--hop", 123, "--window", "kaiser,6",
            "--scaling", "spectrum", "--channel", 1)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out)
    _, t, s = spectrogram(x[:, 1], fs, nfft=500, hop=123, window=("kaiser", 6.0),
                          scaling="spectrum")
    with h5py.File(out, "r") as h:
        np.testing.assert_array_equal(h["spectrogram"][...], s.T)
        np.testing.assert_allclose(h["time"][...], t)
        assert h["spectrogram"].attrs["channel"] == 1


@pytest.mark.parametrize("args,message", [
    (["info", "{missing}"], r"missing\.wav: no such file"),
    (["info", "{text}"], r"notes\.wav: not a WAV file \(no RIFF/RIFX/RF64 header\)"),
    (["spectrogram", "{wav}", "-o", "{out}", "--window", "nope"], r"window='nope' is not a window"),
    (["spectrogram", "{wav}", "-o", "{out}", "--hop", "0"], r"hop=0 must be an integer >= 1"),
    (["spectrogram", "{wav}", "-o", "{out}", "--hop", "-3"], r"hop=-3 must be an integer >= 1"),
    (["spectrogram", "{wav}", "-o", "{out}", "--nfft", "4000000"],
     r"nfft=4000000 is larger than stereo\.wav \(32000 samples\)"),
    (["spectrogram", "{wav}", "-o", "{out}", "--nfft", "99999999"],
     r"nfft=99999999 is too large \(at most 4194304\)"),
    (["spectrogram", "{wav}", "-o", "{out}", "--channel", "5"], r"channel=5 is out of range"),
    (["open", "{missing}", "--screenshot", "{png}"], r"missing\.wav: no such file"),
])
def test_bad_input_exits_2_with_one_line(args, message, stereo_wav, tmp_path):
    import re

    text = tmp_path / "notes.wav"
    text.write_text("not audio\n" * 30)
    subs = {"missing": tmp_path / "missing.wav", "text": text, "wav": stereo_wav[0],
            "out": tmp_path / "o.h5", "png": tmp_path / "o.png"}
    r = run(*[a.format(**subs) for a in args])
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("specscope: error: ")
    assert re.search(message, lines[0]), lines[0]
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "o.h5").exists()


def test_debug_shows_traceback(tmp_path):
    r = run("--debug", "info", tmp_path / "missing.wav")
    assert r.returncode != 0
    assert "Traceback" in r.stderr


def test_screenshot_is_a_real_picture(example_path, tmp_path):
    from PyQt6.QtGui import QImage

    png = tmp_path / "shot.png"
    r = run("open", example_path, "--screenshot", png, "--nfft", 2048, "--hop", 512)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = QImage(str(png))
    assert img.width() >= 800 and img.height() >= 500
    # a real spectrogram has many distinct colours; a black or blank window has few
    colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
    assert len(colours) > 200


def test_output_into_a_closed_pipe_ends_quietly(example_path):
    """`specscope ops --json | head -c 64` (350 kB, more than a pipe holds): no traceback."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "-m", "specscope.app", "ops", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = proc.stdout.read(64)  # the reader takes a little and goes away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert first, "ops printed nothing"
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == 141, (proc.returncode, err)


def test_a_path_the_file_system_refuses_is_one_line(tmp_path):
    long_name = tmp_path / ("x" * 10_000 + ".wav")
    r = run("info", long_name)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "File name too long" in lines[0] and len(lines[0]) < 400


def test_a_nul_in_an_argument_is_one_line(capsys):
    from specscope.app.cli import main

    assert main(["spectrogram", "a.wav", "-o", "a\0b.h5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["specscope: error: an argument holds a NUL character"]
