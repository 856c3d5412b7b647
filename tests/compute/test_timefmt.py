"""Times as people write and read them (compute/timefmt.py), and the command line's seconds."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile
from hypothesis import given
from hypothesis import strategies as st
from specscope.compute.errors import InputError
from specscope.compute.timefmt import (
    TIME_FORMS,
    TimeFormatError,
    format_time,
    parse_time,
    time_style,
)


@pytest.mark.parametrize("text,seconds", [
    ("12.5", 12.5), ("12.5 s", 12.5), ("12.5s", 12.5), ("250 ms", 0.25), ("250ms", 0.25),
    (" 1:05 ", 65.0), ("1:5", 65.0), ("75:00", 4500.0), ("0:39:04.25", 2344.25),
    ("2:00:00", 7200.0), ("-0:30", -30.0), ("-1:00:00.5", -3600.5), ("1e3", 1000.0),
    (".5", 0.5), ("0", 0.0), ("+3", 3.0), ("0:00:01", 1.0),
])
def test_parse_the_forms_people_write(text, seconds):
    assert parse_time(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize("text", ["", "abc", "1:2:3:4", "0:60", "0:61:00", "1:00:60",
                                  "1::2", "inf", "nan", "1 h", "1:-2", "--1", "0:00:0x"])
def test_bad_text_names_the_forms_accepted(text):
    with pytest.raises(TimeFormatError) as info:
        parse_time(text, "start")
    msg = str(info.value)
    assert msg.startswith("start=") and "\n" not in msg
    assert TIME_FORMS in msg
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)


def test_numbers_are_seconds_and_must_be_finite():
    assert parse_time(2.5) == 2.5
    with pytest.raises(TimeFormatError, match="finite"):
        parse_time(math.inf)
    with pytest.raises(TimeFormatError, match="1e999"):
        parse_time("1e999")


def test_format_follows_the_axis_rule():
    assert time_style(2000.0, 1.0) == "clock" and time_style(59.9, 1.0) == "s"
    assert time_style(0.5, 0.01) == "ms" and time_style(0.5, 1.0) == "s"
    assert format_time(2000.0, 1.0) == "0:33:20"          # the axis' tick
    assert format_time(2000.0) == "0:33:20.000"           # file information's duration
    assert format_time(12.5) == "12.500 s"
    assert format_time(0.02, 0.001) == "20 ms"
    assert format_time(59.9996, 0.001, "clock") == "0:01:00.000"
    assert format_time(-90.0, 1.0, "clock") == "-0:01:30"
    with pytest.raises(InputError, match="style='hours'"):
        format_time(1.0, 1.0, "hours")


def test_the_file_summary_reads_as_the_axis():
    from specscope.app.session import Document
    from specscope.compute.io import ArrayRecording

    rec = ArrayRecording(np.zeros(2000 * 10, np.float32), 10.0, name="long")
    assert rec.duration == 2000.0
    assert Document(rec).summary().endswith(", 0:33:20.000")


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_format_then_parse_round_trips(t):
    for style in ("clock", "s", "ms"):
        for spacing in (1.0, 1e-3, 1e-6):
            text = format_time(t, spacing, style)
            # what is shown is ``t`` to the shown precision
            assert parse_time(text) == pytest.approx(t, abs=spacing / 2 + 1e-9 * abs(t))


@given(st.integers(min_value=0, max_value=10 ** 8))
def test_whole_milliseconds_round_trip_exactly(ms):
    t = ms / 1000.0
    assert parse_time(format_time(t, 1e-3, "clock")) == pytest.approx(t, abs=1e-9)
    assert format_time(parse_time(format_time(t)), 1e-3) == format_time(t)


# -- the command line: every option taking seconds reads the same forms ---------------------

def _cli(*args):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=180, check=False)


@pytest.fixture
def wav(tmp_path):
    fs = 8000
    x = (0.3 * np.random.default_rng(5).standard_normal((fs * 3, 1))).astype(np.float32)
    path = tmp_path / "in.wav"
    soundfile.write(str(path), x, fs, subtype="FLOAT")
    return path, x, fs


@pytest.mark.slow
def test_export_start_as_a_clock_equals_plain_seconds(wav, tmp_path):
    path, x, fs = wav
    outs = []
    for i, start in enumerate(("0:00:01", "1", "1000 ms")):
        out = tmp_path / f"o{i}.wav"
        r = _cli("export", path, "-o", out, "--start", start, "--stop", "0:02.5", "-q")
        assert r.returncode == 0, r.stderr
        outs.append(soundfile.read(str(out), dtype="float32")[0].reshape(-1, 1))
    np.testing.assert_array_equal(outs[0], x[fs:int(2.5 * fs)])
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


@pytest.mark.parametrize("command,option", [
    (["export", "{wav}", "-o", "{out}"], "--start"),
    (["export", "{wav}", "-o", "{out}"], "--stop"),
    (["measure", "{wav}", "--start", "0", "--stop", "1"], "--start"),
    (["play", "{wav}", "-o", "{out}"], "--stop"),
    (["filter", "notch", "{wav}", "--near", "50"], "--start"),
    (["live", "--source", "generator:tone", "--no-gui"], "--duration"),
])
@pytest.mark.slow
def test_bad_time_is_one_line_naming_the_option_and_the_forms(command, option, wav, tmp_path):
    subs = {"wav": wav[0], "out": tmp_path / "o.wav"}
    args = [a.format(**subs) for a in command]
    if option in args:  # the option's value replaced by bad text
        args[args.index(option) + 1] = "1:6o"
    else:
        args += [option, "1:6o"]
    r = _cli(*args)
    assert r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert f"argument {option}: '1:6o' is not a time" in last, r.stderr
    assert TIME_FORMS in last
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "o.wav").exists()


def test_negative_times_are_refused_after_parsing(wav, tmp_path):
    r = _cli("export", wav[0], "-o", tmp_path / "o.wav", "--start=-0:01")
    assert r.returncode == 2
    assert "argument --start" in r.stderr and ">= 0" in r.stderr, r.stderr


@pytest.mark.slow
def test_other_seconds_options_take_a_clock(wav, tmp_path):
    path = wav[0]
    r = _cli("measure", path, "--start", "0:00.5", "--stop", "0:00:02.25", "--json")
    r2 = _cli("measure", path, "--start", "0.5", "--stop", "2250 ms", "--json")
    assert r.returncode == r2.returncode == 0, r.stderr
    assert r.stdout == r2.stdout
    got = json.loads(r.stdout)
    assert (got["start_s"], got["stop_s"], got["duration_s"]) == (0.5, 2.25, 1.75)
