"""HDF5 outputs on a disk that fills mid-write: one clean error, no crash, nothing left.

HDF5 cannot recover from a failed write; the writes go through a file object that
takes the refusal itself (``compute.files``).  The disk is simulated here by a
budget of bytes the file system accepts, so the test runs without root; the tiny
tmpfs of the campaign (``tests/faults/campaign_faults.py``) is the real one.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import errno, os, sys
    import numpy as np
    from specscope.compute import files
    from specscope.compute.errors import RecordingError
    from specscope.compute.output import atomic_h5

    budget = [int(sys.argv[2])]
    real = os.pwrite

    def pwrite(fd, data, offset):
        if os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:"):
            return real(fd, data, offset)  # memory, not the disk
        if budget[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = min(len(data), budget[0])
        budget[0] -= n
        return real(fd, bytes(memoryview(data)[:n]), offset)

    files.os.pwrite = pwrite
    out = sys.argv[1]
    try:
        with atomic_h5(out) as f:
            d = f.create_dataset("s", shape=(20000, 257), dtype="f4", chunks=(64, 257),
                                 fletcher32=True)
            for k in range(0, 20000, 500):
                d[k:k + 500] = np.ones((500, 257), "f4")
                f.attrs[f"a{k}"] = "x" * 100
                files.check_writes(f)
    except RecordingError as exc:
        print("ERROR", exc)
    else:
        print("WROTE")
""")


@pytest.mark.parametrize("budget", [0, 2_000, 60_000, 1_000_000, 15_000_000])
def test_a_disk_filling_mid_write_gives_one_error_and_no_crash(tmp_path, budget):
    out = tmp_path / "o.h5"
    res = subprocess.run([sys.executable, "-c", CHILD, str(out), str(budget)],
                         check=False, capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Exception ignored" not in res.stderr and "Traceback" not in res.stderr, \
        res.stderr[-2000:]
    assert res.stdout.startswith("ERROR "), res.stdout + res.stderr[-1000:]
    assert "No space left on device" in res.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing published or left


def test_a_disk_with_room_writes_the_same_file(tmp_path):
    out = tmp_path / "o.h5"
    res = subprocess.run([sys.executable, "-c", CHILD, str(out), str(1 << 40)],
                         check=False, capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert res.stdout.strip() == "WROTE", res.stderr[-2000:]
    import h5py
    import numpy as np
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["s"][...], 1.0)
        assert f.attrs["a19500"] == "x" * 100
