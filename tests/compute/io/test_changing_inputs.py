"""Inputs that change while they are read: a shrink or a removal is one line, never a crash.

A recorder still writing, a network share and a copy in progress all change a file
under a reader.  Raw samples, ``.npy`` arrays and SigMF data are read by offset
through one descriptor (no memory map, so no ``SIGBUS``):

* a file truncated while ``export`` or ``spectrogram`` reads it ends the command
  with exit 2, one line naming the file and both sizes, and no output, no
  temporary file;
* a file removed or replaced while it is read is named the same way; a file that
  grows is read up to its size at open;
* a SigMF recording of 5,000 captures reads through one descriptor, under
  ``ulimit -n 256``.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from specscope.compute import open_recording
from specscope.compute.errors import RecordingError
from specscope.compute.io.base import FileChangedError

BIG = 400 * 1000 * 1000  # bytes of the sparse inputs: seconds to read, no disk used


def start(*args: str | os.PathLike[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "specscope.app", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_partial(folder: Path, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Wait until the command has begun its output (its temporary file is there)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.name.endswith(".partial") for p in folder.iterdir()):
            return
        assert proc.poll() is None, f"ended before writing: {proc.communicate()}"
        time.sleep(0.02)
    proc.kill()
    pytest.fail("the command wrote no temporary file in time")


def sparse_raw(path: Path) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(BIG)
    return path


def sparse_npy(path: Path) -> Path:
    """A ``.npy`` of complex64 zeros, BIG bytes of data, the data left sparse."""
    n = BIG // 8
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(
            fh, {"descr": "<c8", "fortran_order": False, "shape": (n,)})
        fh.truncate(fh.tell() + n * 8)
    return path


CASES = {
    "raw-export": (sparse_raw, "t.cf32", ["export", "{src}", "--sample-rate", "1M",
                                          "-o", "{out}.h5"]),
    "npy-export": (sparse_npy, "t.npy", ["export", "{src}", "--sample-rate", "1M",
                                         "-o", "{out}.h5"]),
    "raw-spectrogram": (sparse_raw, "t.cf32", ["spectrogram", "{src}", "--sample-rate", "1M",
                                               "-o", "{out}.h5"]),
    "npy-spectrogram": (sparse_npy, "t.npy", ["spectrogram", "{src}", "--sample-rate", "1M",
                                              "-o", "{out}.h5"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_an_input_truncated_while_read_is_one_line_and_no_output(tmp_path, case):
    make, name, argv = CASES[case]
    src = make(tmp_path / name)
    size = src.stat().st_size
    out = tmp_path / "out"
    proc = start(*[a.format(src=src, out=out) for a in argv])
    wait_for_partial(tmp_path, proc)
    os.truncate(src, 1000)
    _, err = proc.communicate(timeout=300)
    lines = err.strip().splitlines()
    assert proc.returncode == 2, err
    assert lines == [f"specscope: error: {src} shrank from {size / 1e6:.1f} MB to 1000 B "
                     "while being read"], err
    # no output, no temporary file: the input alone
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_shrink_removal_and_growth_in_process(tmp_path):
    x = (np.arange(40_000, dtype=np.float32) % 1000).astype(np.float32)
    src = tmp_path / "rec.rf32"
    x.tofile(src)
    with open_recording(src, sample_rate=8000) as rec:
        with open(src, "ab") as fh:  # grows: read up to its size at open
            fh.write(np.ones(5000, np.float32).tobytes())
        assert rec.n_samples == 40_000
        np.testing.assert_array_equal(rec.read(39_000, 50_000)[:, 0], x[39_000:])
        os.truncate(src, 80_000)  # shrinks below the part read: named with both sizes
        with pytest.raises(FileChangedError) as e:
            rec.read(0, 10)  # the samples read are still there; the file is not
        assert str(e.value) == f"{src} shrank from 160.0 kB to 80.0 kB while being read"
        assert (e.value.size_at_open, e.value.size_now) == (160_000, 80_000)
    x.tofile(src)
    with open_recording(src, sample_rate=8000) as rec:
        src.unlink()
        with pytest.raises(FileChangedError, match=r"rec.rf32 was removed or replaced while "
                                                   r"being read "
                                                   r"\(160.0 kB at open\)") as e:
            rec.read(0, 10)
        assert e.value.size_now is None
    x.tofile(src)
    with open_recording(src, sample_rate=8000) as rec:
        other = tmp_path / "other.rf32"
        x.tofile(other)
        os.replace(other, src)  # an atomic rewrite: the name holds another file now
        with pytest.raises(FileChangedError, match=r"rec.rf32 was removed or replaced"):
            rec.read(0, 10)
    # errors of batch tasks cross processes with their fields
    back = pickle.loads(pickle.dumps(e.value))
    assert isinstance(back, FileChangedError) and isinstance(back, RecordingError)
    assert (str(back), back.size_at_open, back.size_now) == (str(e.value), 160_000, None)


def test_a_few_bytes_less_shows_exact_sizes(tmp_path):
    src = tmp_path / "rec.cf32"
    np.zeros(300_000, np.complex64).tofile(src)
    with open_recording(src, sample_rate=8000) as rec:
        os.truncate(src, 2_399_992)
        with pytest.raises(FileChangedError, match=r"shrank from 2400000 B to 2399992 B"):
            rec.read(299_990, 300_000)


def test_npy_and_sigmf_inputs_shrinking_in_process(tmp_path):
    z = (np.arange(6000) + 1j).astype(np.complex64)
    npy = tmp_path / "a.npy"
    np.save(npy, z)
    meta = tmp_path / "b.sigmf-meta"
    meta.write_text(json.dumps({"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e3,
                                           "core:version": "1.0.0"}, "captures": []}))
    z.tofile(tmp_path / "b.sigmf-data")
    for path, data in ((npy, npy), (meta, tmp_path / "b.sigmf-data")):
        with open_recording(path, sample_rate=1e3) as rec:
            np.testing.assert_array_equal(rec.read(100, 200)[:, 0], z[100:200])
            os.truncate(data, 16)
            with pytest.raises(FileChangedError, match=rf"{data.name} shrank from 4\d\.\d kB "
                                                        r"to 16 B while being read"):
                rec.read(5000, 6000)


def test_sigmf_of_5000_captures_reads_under_ulimit_256(tmp_path):
    """One descriptor per file, however many captures (each used to map its own)."""
    n_caps, per, header = 5000, 10, 8
    rng = np.random.default_rng(38)
    z = (rng.standard_normal(n_caps * per) + 1j * rng.standard_normal(n_caps * per)
         ).astype(np.complex64)
    with open(tmp_path / "many.sigmf-data", "wb") as fh:
        for k in range(n_caps):
            fh.write(b"H" * header)
            fh.write(z[k * per:(k + 1) * per].tobytes())
    captures = [{"core:sample_start": k * per, "core:header_bytes": header}
                for k in range(n_caps)]
    (tmp_path / "many.sigmf-meta").write_text(json.dumps({
        "global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6,
                   "core:version": "1.0.0"}, "captures": captures}))
    np.save(tmp_path / "expected.npy", z)
    script = textwrap.dedent("""
        import resource, sys
        import numpy as np
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        from specscope.compute import open_recording
        folder = sys.argv[1]
        with open_recording(folder + "/many.sigmf-meta") as rec:
            x = rec.read()[:, 0]
            segments = len(rec._map.segments)
        assert np.array_equal(x, np.load(folder + "/expected.npy"))
        print(segments, len(x))
    """)
    res = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                         text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(n_caps), str(n_caps * per)]
