"""Real speech for the track tests: alsa-utils' voices and espeak-ng's, male and female."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ALSA = Path("/usr/share/sounds/alsa")
VOICES = ["Front_Center", "Front_Left", "Rear_Right"]
ESPEAK = {"espeak_male": [], "espeak_female": ["-v", "en+f3"]}
TEXT = "The quick brown fox jumps over the lazy dog, and a rainbow appears after the rain."


def _espeak(tmp: Path, name: str) -> Path:
    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.skip("espeak-ng is not installed (apt install espeak-ng): no generated speech")
    out = tmp / f"{name}.wav"
    subprocess.run([exe, *ESPEAK[name], "-w", str(out), TEXT], check=True,
                   capture_output=True, timeout=60)
    return out


@pytest.fixture(params=[*VOICES, *ESPEAK], scope="module")
def speech_file(request, tmp_path_factory) -> Path:
    """A WAV file of real speech (skipped, with the reason, where it is not at hand)."""
    name = request.param
    if name in ESPEAK:
        return _espeak(tmp_path_factory.mktemp("speech"), name)
    path = ALSA / f"{name}.wav"
    if not path.exists():
        pytest.skip(f"{path} is missing (Debian's alsa-utils provides it)")
    return path
