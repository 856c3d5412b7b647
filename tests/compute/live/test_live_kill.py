"""`specscope live --record` killed (SIGKILL) at random moments: nothing is lost.

Each kill leaves at the recording's path either the previous file, byte for
byte (killed before the first flush), or the new recording holding samples,
equal to what the source produced, up to its last flush; the file opens in
``h5dump``, in plain h5py (no SWMR, no recovery) and in ``specscope info``.

``SPECSCOPE_KILLS`` sets the number of kills (12 by default; 50 for the
campaign's figure).  The moments are seeded (``SPECSCOPE_KILL_SEED``).
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from specscope.app.cli import main as cli_main
from specscope.compute.live import open_source

ROOT = Path(__file__).resolve().parents[3]
SOURCE = "generator:chirp,channels=2"
BLOCK = 256
KILLS = int(os.environ.get("SPECSCOPE_KILLS", "12"))
SEED = int(os.environ.get("SPECSCOPE_KILL_SEED", "21"))


def _previous(path: Path) -> bytes:
    """A complete earlier recording at ``path`` (what a new one must not destroy)."""
    env = dict(os.environ, PYTHONPATH="")
    subprocess.run([sys.executable, "-m", "specscope.app", "live", "--source", SOURCE,
                    "--block", str(BLOCK), "--no-gui", "--rate", "0", "--duration", "0.3",
                    "--record", str(path)], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)
    return path.read_bytes()


def _partials(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f".{name}.*.partial"))


def _kill_once(folder: Path, prev: bytes, rng: random.Random) -> dict[str, object]:
    out = folder / "rec.h5"
    out.write_bytes(prev)
    env = dict(os.environ, PYTHONPATH="")
    proc = subprocess.Popen([sys.executable, "-m", "specscope.app", "live", "--source", SOURCE,
                             "--block", str(BLOCK), "--no-gui", "--record", str(out)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        if rng.random() < 0.3:  # anywhere in the start: imports, opening, first blocks
            time.sleep(rng.uniform(0.0, 2.0))
        else:  # from the moment the recording exists to several flushes (0.5 s) in
            deadline = time.monotonic() + 60
            while not _partials(folder, out.name) and out.read_bytes() == prev:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 3.0))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    return {"out": out, "previous": out.read_bytes() == prev}


def _check(out: Path, previous: bool) -> dict[str, bool]:
    import h5py

    dump = shutil.which("h5dump")
    r: dict[str, bool] = {}
    r["h5dump"] = dump is None or subprocess.run(
        [dump, "-H", str(out)], capture_output=True, timeout=60, check=False).returncode == 0
    with h5py.File(out, "r") as f:  # plain open: no SWMR, no recovery
        samples = f["samples"][...]
        complete = bool(f.attrs["complete"])
    r["h5py"] = True
    with contextlib.redirect_stdout(io.StringIO()) as text:
        r["info"] = cli_main(["info", str(out)]) == 0
    assert f"n_samples         {samples.shape[0]}" in text.getvalue()
    r["samples"] = samples.shape[0] > 0
    if not previous:
        assert not complete
        # everything flushed is what the source produced, from the first sample on
        ref = open_source(SOURCE, block=BLOCK).blocks(samples.shape[0])
        np.testing.assert_array_equal(samples, ref)
    return r


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (hdf5-tools) not installed")
def test_killed_live_recordings_open_everywhere_and_keep_the_previous_file(tmp_path):
    rng = random.Random(SEED)
    prev = _previous(tmp_path / "previous.h5")
    tally = {"kills": 0, "h5dump": 0, "h5py": 0, "info": 0, "previous": 0, "new": 0,
             "new_empty": 0}
    for i in range(KILLS):
        folder = tmp_path / f"k{i}"
        folder.mkdir()
        k = _kill_once(folder, prev, rng)
        r = _check(k["out"], bool(k["previous"]))
        tally["kills"] += 1
        for key in ("h5dump", "h5py", "info"):
            tally[key] += r[key]
        if k["previous"]:
            tally["previous"] += 1
        else:
            tally["new"] += 1
            tally["new_empty"] += not r["samples"]
    print("kills:", tally)
    assert tally["h5dump"] == tally["h5py"] == tally["info"] == KILLS, tally
    assert tally["new_empty"] == 0, tally
    # the moments cover both sides of the first flush
    if KILLS >= 10:
        assert tally["previous"] and tally["new"], tally


def test_a_recording_that_gets_nothing_leaves_the_previous_file(tmp_path):
    out = tmp_path / "rec.h5"
    prev = _previous(out)
    env = dict(os.environ, PYTHONPATH="")
    r = subprocess.run([sys.executable, "-m", "specscope.app", "live", "--source", SOURCE,
                        "--no-gui", "--rate", "0", "--duration", "0", "--record", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 2 and "nothing was recorded" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert out.read_bytes() == prev
    assert not _partials(tmp_path, out.name)


def test_recording_over_the_played_file_is_refused_before_anything_is_written(tmp_path):
    from specscope.compute.files import OutputIsInputError
    from specscope.compute.live import FileSource, LiveSession

    out = tmp_path / "played.h5"
    prev = _previous(out)
    link = tmp_path / "link.h5"
    link.symlink_to(out)
    for target in (out, link):
        s = LiveSession(FileSource(out, block=BLOCK, rate=0), None, record=target)
        with pytest.raises(OutputIsInputError, match="played.h5"):
            s.start()
        s.close()
        assert out.read_bytes() == prev
        assert not _partials(tmp_path, target.name)
