"""The bundled example recording: deterministic, small, and showing what it promises."""

import subprocess
import sys

import numpy as np
import pytest
from specscope.compute import open_recording, spectrogram

ROOT_SCRIPT = "scripts/make_examples.py"


def test_regenerates_byte_identical(example_path, tmp_path):
    root = example_path.parents[2]
    subprocess.run([sys.executable, str(root / ROOT_SCRIPT), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    assert (tmp_path / "scene.wav").read_bytes() == example_path.read_bytes()


def test_small_enough_to_commit(example_path):
    assert example_path.stat().st_size < 3 * 1024 * 1024


def test_scene_contents(example_path):
    with open_recording(example_path) as rec:
        assert rec.duration == pytest.approx(20.0) and rec.sample_rate == 48000
        x = rec.read()[:, 0]
    f, t, s = spectrogram(x, 48000, nfft=8192, hop=4096)
    mean = s.mean(axis=1)
    floor = np.median(mean)
    for hz in (50, 100, 150, 200):  # hum and harmonics stand far above the noise
        assert mean[np.argmin(np.abs(f - hz))] > 1000 * floor, hz
    # chirps: energy between 2 and 8 kHz at 1.2 s (a chirp) far above 0.5 s (none)
    band = (f > 2000) & (f < 8000)
    at = lambda sec: s[band, np.argmin(np.abs(t - sec))].sum()
    assert at(1.2) > 30 * at(0.5)
    # clicks: a broadband jump in a short frame at 3.2 s
    f2, t2, s2 = spectrogram(x, 48000, nfft=256, hop=64)
    hi = (f2 > 10000)
    click = s2[hi, np.argmin(np.abs(t2 - 3.2012))].sum()
    assert click > 100 * np.median(s2[hi].sum(axis=0))
