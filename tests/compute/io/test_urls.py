"""Recordings given as URLs: read by range through fsspec from a local HTTP server.

The server (tests/_http_range.py) serves a folder on 127.0.0.1, answers ranged
GETs with 206 and counts the bytes it sends.  Every reader that can read from
a file object (soundfile for WAV/FLAC, h5py, SigMF, raw, .npy) gives the same
samples through a URL as through the local path; a short read fetches a part
of the file; the batch (in process and on a Dask cluster) and the CLI write
the same numbers from URLs as from paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile as sf
from _http_range import RangeServer
from specscope.compute import open_recording
from specscope.compute.batch import output_path, run_batch
from specscope.compute.errors import RecordingError
from specscope.compute.io.remote import BLOCK_BYTES, RangeArray, UrlPath

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "assets" / "pipelines" / "hum_bandpass.json"
RATE = 48_000
SECONDS = 30  # 2 channels: WAV 5.8 MB, raw cf32 11.5 MB: many blocks of BLOCK_BYTES


def _signal() -> np.ndarray:
    rng = np.random.default_rng(7)
    t = np.arange(RATE * SECONDS) / RATE
    x = np.stack([0.3 * np.sin(2 * np.pi * 50 * t), 0.2 * np.cos(2 * np.pi * 440 * t)], 1)
    return (x + 0.05 * rng.standard_normal(x.shape)).astype(np.float32)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(folder, server, {name: options}) with a recording of every kind."""
    d = tmp_path_factory.mktemp("served")
    x = _signal()
    iq = (x[:, 0] + 1j * x[:, 1]).astype(np.complex64)
    sf.write(d / "a.wav", x, RATE, subtype="PCM_16")
    sf.write(d / "a.flac", x, RATE, subtype="PCM_16")
    with h5py.File(d / "a.h5", "w") as f:
        ds = f.create_dataset("signal", data=x, chunks=(65536, 2))
        ds.attrs["sample_rate"] = RATE
    np.save(d / "a.npy", x)
    np.save(d / "wide.npy", np.ascontiguousarray(x.T))  # (channels, samples)
    np.save(d / "fortran.npy", np.asfortranarray(x))
    iq.tofile(d / "a.cf32")
    (d / "s.sigmf-meta").write_text(json.dumps({
        "global": {"core:datatype": "cf32_le", "core:sample_rate": RATE,
                   "core:version": "1.0.0"},
        "captures": [{"core:sample_start": 0}],
        "annotations": [{"core:sample_start": 48000, "core:sample_count": 4800,
                         "core:label": "tone"}]}))
    iq.tofile(d / "s.sigmf-data")
    kinds = {"a.wav": {}, "a.flac": {}, "a.h5": {}, "a.npy": {"sample_rate": RATE},
             "wide.npy": {"sample_rate": RATE}, "fortran.npy": {"sample_rate": RATE},
             "a.cf32": {"sample_rate": RATE}, "s.sigmf-meta": {}}
    with RangeServer(d) as srv:
        yield d, srv, kinds


def _data_file(folder: Path, name: str) -> Path:
    return folder / ("s.sigmf-data" if name.endswith(".sigmf-meta") else name)


@pytest.mark.parametrize("name", ["a.wav", "a.flac", "a.h5", "a.npy", "wide.npy",
                                  "fortran.npy", "a.cf32", "s.sigmf-meta"])
def test_a_url_reads_the_same_samples_as_the_path_and_fetches_a_part(served, name):
    folder, srv, kinds = served
    opts = kinds[name]
    size = _data_file(folder, name).stat().st_size
    srv.reset()
    with open_recording(srv.url(name), **opts) as remote, \
            open_recording(folder / name, **opts) as local:
        assert isinstance(remote.path, UrlPath)
        assert (remote.format, remote.n_samples, remote.n_channels, remote.sample_rate,
                remote.is_complex) == (local.format, local.n_samples, local.n_channels,
                                       local.sample_rate, local.is_complex)
        for a, b in ((0, 1000), (700_001, 712_345), (local.n_samples - 999, local.n_samples)):
            got, want = remote.read(a, b), local.read(a, b)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)  # exact: the same bytes decoded
        assert [x.to_dict() for x in remote.annotations] == \
            [x.to_dict() for x in local.annotations]
    sent = srv.bytes_sent
    ranged = [r for r in srv.requests if r[3] == 206]
    # three short reads and the header: a few blocks, never the whole file
    assert 0 < sent < size, (sent, size)
    assert ranged and len(ranged) == len(srv.requests), srv.requests
    assert sent <= 8 * BLOCK_BYTES


def test_range_array_reads_every_stored_layout_exactly(tmp_path):
    x = np.arange(5000 * 3, dtype=np.float32).reshape(5000, 3)
    cases = [(x, 0, False), (np.ascontiguousarray(x.T), 1, False),
             (np.asfortranarray(x), 0, True), (np.asfortranarray(x.T), 1, True)]
    for stored, axis, fortran in cases:
        p = tmp_path / "a.bin"
        p.write_bytes(stored.tobytes(order="F" if fortran else "C"))
        with open(p, "rb") as fh:
            arr = RangeArray(fh, 0, stored.dtype, stored.shape, axis, fortran)
            assert arr.shape == (5000, 3)
            np.testing.assert_array_equal(arr[123:4567], x[123:4567])
            np.testing.assert_array_equal(arr[4990:6000], x[4990:])


def test_a_missing_url_and_a_server_that_is_down_fail_in_one_line(served):
    _, srv, _ = served
    with pytest.raises(RecordingError, match=r"missing\.wav: no such file at this URL"):
        open_recording(srv.url("missing.wav"))
    with pytest.raises(RecordingError, match=r"127\.0\.0\.1:9/a\.wav: cannot be read"):
        open_recording("http://127.0.0.1:9/a.wav")


def test_output_names_come_from_the_url_path():
    assert output_path("http://host:1/x/rec%201.flac?sig=abc", "out") == \
        Path("out") / "rec 1.h5"


def _same_outputs(a: Path, b: Path) -> None:
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names: list[str] = []
        fa.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        assert "spectrogram" in names
        for n in names:
            np.testing.assert_array_equal(fa[n][()], fb[n][()], err_msg=n)
        assert fa.attrs["source_sha256"] == fb.attrs["source_sha256"]


def test_the_batch_from_urls_equals_the_batch_from_paths(served, tmp_path):
    folder, srv, _ = served
    url = srv.url("a.wav")
    remote = run_batch(EXAMPLE, [url], tmp_path / "remote", task_samples=400_000)
    local = run_batch(EXAMPLE, [folder / "a.wav"], tmp_path / "local", task_samples=400_000)
    assert remote.ok and local.ok, (remote.text(), local.text())
    assert remote.results[0].parts > 1  # split: each part read its own range
    _same_outputs(tmp_path / "remote" / "a.h5", tmp_path / "local" / "a.h5")
    with h5py.File(tmp_path / "remote" / "a.h5", "r") as f:
        assert f.attrs["source_path"] == url


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "specscope.app", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_cli_info_run_and_export_take_urls(served, tmp_path):
    folder, srv, _ = served
    url = srv.url("a.flac")
    r = _cli("info", url, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert (info["path"], info["format"], info["n_samples"]) == (url, "FLAC", RATE * SECONDS)
    r = _cli("run", str(EXAMPLE), url, "-o", "remote", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("run", str(EXAMPLE), str(folder / "a.flac"), "-o", "local", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _same_outputs(tmp_path / "remote" / "a.h5", tmp_path / "local" / "a.h5")
    r = _cli("rerun", "--verify", "remote/a.h5", cwd=tmp_path)
    assert r.returncode == 0 and "identical" in r.stdout, r.stdout + r.stderr
    srv.reset()
    for src, out in ((url, "r.h5"), (str(folder / "a.flac"), "l.h5")):
        r = _cli("export", src, "--start", "10", "--stop", "10.5", "--pipeline",
                 str(EXAMPLE), "-o", out, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    _same_outputs(tmp_path / "r.h5", tmp_path / "l.h5")
    r = _cli("info", srv.url("nothing.wav"), cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].endswith("nothing.wav: no such file at this URL")
