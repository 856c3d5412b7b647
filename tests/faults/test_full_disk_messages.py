"""A write onto a full disk names the cause, whatever library did the writing.

libsndfile says "System error." when it cannot write a header; the command must say
"No space left on device", in one line, and leave nothing behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _faults import fill, mount, umount

ROOT = Path(__file__).resolve().parents[2]
SCENE = ROOT / "assets" / "examples" / "scene.wav"


@pytest.fixture
def full_disk(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    try:
        mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder))
    except (subprocess.CalledProcessError, FileNotFoundError, PermissionError) as exc:
        pytest.skip(f"cannot mount a tmpfs here ({exc})")
    try:
        fill(folder, 0)
        yield folder
    finally:
        umount(folder)


@pytest.mark.parametrize("argv", [
    ("export", SCENE, "--stop", 2, "-o", "x.wav"),
    ("export", SCENE, "--stop", 2, "-o", "x.flac"),
    ("export", SCENE, "--stop", 2, "-o", "x.h5"),
    ("export", SCENE, "--stop", 2, "-o", "x.sigmf-meta"),
    ("play", SCENE, "--stop", 1, "-o", "y.wav"),
    ("spectrogram", SCENE, "-o", "s.h5"),
], ids=["wav", "flac", "hdf5", "sigmf", "play", "spectrogram"])
def test_a_full_disk_is_named(full_disk, argv):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SPECSCOPE_AUDIO_OUTPUT="fake")
    r = subprocess.run([sys.executable, "-m", "specscope.app", *map(str, argv)],
                       cwd=full_disk, env=env, capture_output=True, text=True, timeout=300,
                       check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and "No space left on device" in lines[0], r.stderr
    assert "System error" not in r.stderr and "subtype" not in r.stderr
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]
