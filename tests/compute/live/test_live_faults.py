"""Live ``--record`` survives full, read-only, forbidden and over-quota disks.

``specscope live --record`` is run as a subprocess into a tiny tmpfs filled to
the brim (``ENOSPC``), a read-only bind mount (``EROFS``) and a folder without
write permission with root's ``CAP_DAC_OVERRIDE`` dropped (``EACCES``): exit 2,
one line naming the file and the cause, no traceback, no crash, no temporary
file left, the previous file at the path byte for byte.  A disk that fills
after the recording was published leaves a file every HDF5 tool opens, holding
what was flushed before.  Mounting needs root; those tests are skipped with the
reason otherwise.  ``EDQUOT`` (no quota on tmpfs) is injected in-process: the
recorder then keeps exactly the samples flushed before the refusal.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import _faults
import h5py
import numpy as np
import pytest
from specscope.compute.errors import RecordingError
from specscope.compute.live import LiveRecorder

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SETPRIV = shutil.which("setpriv")
CAUSE = {"enospc": "No space left on device", "erofs": "Read-only file system",
         "eacces": "Permission denied"}


def live(record: Path, *, duration: float, prefix: list[str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    argv = [*(prefix or []), sys.executable, "-m", "specscope.app", "live",
            "--source", "generator:chirp,channels=2", "--block", "256", "--rate", "0",
            "--duration", str(duration), "--no-gui", "--record", str(record)]
    return subprocess.run(argv, capture_output=True, text=True, errors="replace",
                          timeout=timeout, check=False)


def one_line_error(res: subprocess.CompletedProcess[str], *names: str) -> str:
    """The single stderr line of a command that exited 2, checked."""
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def previous_recording(path: Path) -> bytes:
    """A small valid HDF5 file at ``path`` (what an earlier recording left); its bytes."""
    with h5py.File(path, "w") as f:
        f.create_dataset("samples", data=np.arange(512, dtype=np.float32).reshape(256, 2))
        f["samples"].attrs["sample_rate"] = 48000.0
    return path.read_bytes()




class Fault:
    """A folder ``folder`` where writes fail for one cause; mounts undone by :meth:`close`."""

    def __init__(self, kind: str, base: Path, size: str = "1m") -> None:
        self.kind = kind
        self.folder = base / "m"
        self.folder.mkdir()
        self.src = base / "src"
        self.mounted: list[Path] = []
        self.prefix: list[str] | None = None
        if kind == "enospc":
            try:
                _faults.mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(self.folder))
            except (subprocess.CalledProcessError, OSError) as exc:
                pytest.skip(f"cannot mount a tmpfs: {exc}")
            self.mounted.append(self.folder)
        elif kind == "erofs":
            self.src.mkdir()

    @property
    def where(self) -> Path:
        """The folder to prepare the previous file in (the bind mount's source for EROFS)."""
        return self.src if self.kind == "erofs" else self.folder

    def apply(self, room: int = 0) -> None:
        if self.kind == "enospc":
            _faults.fill(self.folder, room)
        elif self.kind == "erofs":
            try:
                _faults.mount("--bind", str(self.src), str(self.folder))
                self.mounted.append(self.folder)
                _faults.mount("-o", "remount,ro,bind", str(self.folder))
            except (subprocess.CalledProcessError, OSError) as exc:
                pytest.skip(f"cannot make a read-only bind mount: {exc}")
        else:
            if SETPRIV is None:
                pytest.skip("setpriv (util-linux) is needed to drop CAP_DAC_OVERRIDE")
            self.folder.chmod(0o555)
            self.prefix = [SETPRIV, "--inh-caps=-dac_override,-dac_read_search",
                           "--bounding-set=-dac_override,-dac_read_search"]

    def close(self) -> None:
        for p in reversed(self.mounted):
            _faults.umount(p)
        self.folder.chmod(0o755)


@pytest.fixture
def fault_base(tmp_path) -> Path:
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs / read-only bind mount and dropping capabilities "
                    "need root")
    return tmp_path


@pytest.fixture(params=["enospc", "erofs", "eacces"])
def fault(request, fault_base) -> Iterator[Fault]:
    f = Fault(request.param, fault_base)
    try:
        yield f
    finally:
        f.close()


def test_live_record_survives_the_fault(fault):
    """Nothing fits (or may be written): one line, exit 2, the previous file untouched."""
    old = previous_recording(fault.where / "x.h5")
    fault.apply(room=64 << 10)
    before = sorted(p.name for p in fault.folder.iterdir())
    res = live(fault.folder / "x.h5", duration=3, prefix=fault.prefix)
    one_line_error(res, str(fault.folder / "x.h5"), CAUSE[fault.kind])
    assert sorted(p.name for p in fault.folder.iterdir()) == before  # no .partial left
    assert (fault.folder / "x.h5").read_bytes() == old


def test_live_record_into_a_disk_that_fills_keeps_what_was_flushed(fault_base):
    """Full after the first flushes: the published file opens everywhere, samples intact."""
    fault = Fault("enospc", fault_base, size="8m")
    try:
        previous_recording(fault.folder / "x.h5")
        fault.apply(room=3 << 20)  # the first flushes fit (a spectrogram chunk is 1 MiB)
        res = live(fault.folder / "x.h5", duration=20)
        line = one_line_error(res, str(fault.folder / "x.h5"), CAUSE["enospc"])
        m = re.search(r"keeps the first (\d+\.\d) s", line)
        assert m, line
        kept = float(m.group(1))
        assert kept > 0, line
        assert sorted(p.name for p in fault.folder.iterdir()) == ["filler", "x.h5"]
        with h5py.File(fault.folder / "x.h5", "r") as f:
            assert f.attrs["format"] == "specscope/live/1"
            assert not f.attrs["complete"]
            s = f["samples"]
            assert s.attrs["sample_rate"] == 48000.0
            assert s.shape[0] >= round((kept - 0.05) * 48000)
            x = s[: int(kept * 48000)]
        # the chirp generator at its default level: every flushed sample is there
        assert np.all(np.isfinite(x)) and np.mean(np.abs(x) > 1e-6) > 0.99
        if shutil.which("h5dump"):
            h = subprocess.run(["h5dump", "-H", str(fault.folder / "x.h5")],
                               capture_output=True, timeout=60, check=False)
            assert h.returncode == 0, h.stderr
        info = subprocess.run([sys.executable, "-m", "specscope.app", "info",
                               str(fault.folder / "x.h5")], capture_output=True, text=True,
                              timeout=120, check=False)
        assert info.returncode == 0, info.stderr
    finally:
        fault.close()


# -- EDQUOT, injected in-process (tmpfs has no quota) -----------------------------------------


def _refuse_writes(monkeypatch, code: int) -> None:
    def pwrite(fd, data, offset):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(os, "pwrite", pwrite)


def _wait_for(cond, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def test_quota_before_the_first_flush_keeps_the_previous_file(tmp_path, monkeypatch):
    old = previous_recording(tmp_path / "x.h5")
    rec = LiveRecorder(tmp_path / "x.h5", sample_rate=1000.0, n_channels=1, flush_seconds=0.1)
    _refuse_writes(monkeypatch, errno.EDQUOT)
    rec.append(np.ones((500, 1), np.float32))
    with pytest.raises(RecordingError) as info:
        rec.close()
    monkeypatch.undo()
    msg = str(info.value)
    assert msg == f"{tmp_path / 'x.h5'}: cannot write (Disk quota exceeded)", msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.h5"]
    assert (tmp_path / "x.h5").read_bytes() == old


def test_quota_after_publishing_keeps_exactly_the_flushed_samples(tmp_path, monkeypatch):
    previous_recording(tmp_path / "x.h5")
    rng = np.random.default_rng(3)
    first = rng.standard_normal((1000, 2)).astype(np.float32)
    rec = LiveRecorder(tmp_path / "x.h5", sample_rate=1000.0, n_channels=2, flush_seconds=1.0)
    rec.append(first)
    _wait_for(lambda: rec.published)
    _refuse_writes(monkeypatch, errno.EDQUOT)
    for _ in range(5):
        rec.append(rng.standard_normal((1000, 2)).astype(np.float32))
    with pytest.raises(RecordingError) as info:
        rec.close(blocks_dropped=0)
    monkeypatch.undo()
    msg = str(info.value)
    assert msg.startswith(f"{tmp_path / 'x.h5'}: cannot write (Disk quota exceeded)"), msg
    assert "keeps the first 1.0 s" in msg and "\n" not in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.h5"]
    with h5py.File(tmp_path / "x.h5", "r") as f:
        assert not f.attrs["complete"]
        np.testing.assert_array_equal(f["samples"][...], first)
