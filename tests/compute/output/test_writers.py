"""Writers: HDF5 layout and provenance, range == whole run cut afterwards, audio, SigMF, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile
from specscope.compute import InputError, open_recording
from specscope.compute.output import (
    audio_container,
    clean_stale_partials,
    export_range,
    plan_range,
    write_provenance,
)
from specscope.compute.pipeline import SETTLE_TOL, Pipeline

ROOT = Path(__file__).resolve().parents[3]
FS = 8000
FIR = {"op": "filter", "params": {"design": "firwin", "numtaps": 101, "cutoff": 1000.0,
                                  "btype": "lowpass"}}
IIR = {"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": 800.0,
                                  "btype": "lowpass"}}
STFT = {"op": "spectrogram", "params": {"nfft": 256, "hop": 64}}


@pytest.fixture
def wav(tmp_path) -> tuple[Path, np.ndarray]:
    x = (np.random.default_rng(7).standard_normal((30000, 3)) * 0.2).astype(np.float32)
    p = tmp_path / "in.wav"
    soundfile.write(str(p), x, FS, subtype="FLOAT")
    return p, x


def _read(path: Path, name: str) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f[name][...]


@pytest.mark.parametrize("steps,name", [([FIR], "signal"), ([FIR, STFT], "spectrogram"),
                                        ([STFT], "spectrogram"), ([], "signal")])
@pytest.mark.parametrize("start,stop", [(3001, 12000), (0, 777), (64 * 40, None)])
def test_range_equals_whole_run_cut_afterwards(tmp_path, wav, steps, name, start, stop):
    path, _ = wav
    p = Pipeline.from_steps(steps)
    whole = export_range(path, tmp_path / "whole.h5", pipeline=p, channels=[2, 0])
    part = export_range(path, tmp_path / "part.h5", pipeline=p, start=start, stop=stop,
                        channels=[2, 0], chunk_samples=1000)
    w, r = _read(whole, name), _read(part, name)
    wt, rt = _read(whole, "time"), _read(part, "time")
    stop_ = 30000 if stop is None else stop
    if name == "signal":
        keep = (wt * FS >= start - 1e-6) & (wt * FS < stop_ - 1e-6)
        np.testing.assert_array_equal(r, w[keep])
    else:  # (channel, time, frequency); frames wholly inside the range
        hop, nfft = 64, 256
        k = np.arange(w.shape[1])
        keep = (k * hop >= start) & (k * hop + nfft <= stop_)
        assert keep.sum() == r.shape[1] > 0
        np.testing.assert_array_equal(r, w[:, keep])
    np.testing.assert_array_equal(rt, wt[keep])
    with h5py.File(part, "r") as f:
        assert bool(f.attrs["exact_range"])
        assert json.loads(f.attrs["channels"]) == [2, 0]
        assert list(f["channel"][...]) == [2, 0]


def test_iir_range_is_carried_from_a_warm_up(tmp_path, wav):
    path, x = wav
    p = Pipeline.from_steps([IIR])
    whole = _read(export_range(path, tmp_path / "w.h5", pipeline=p, channels=0), "signal")
    plan = plan_range(p.bind(FS), 30000, 20000, 25000)
    assert plan.read_start == 20000 - p.bind(FS).lookback and not plan.exact
    part_path = export_range(path, tmp_path / "p.h5", pipeline=p, channels=0, start=20000,
                             stop=25000)
    part = _read(part_path, "signal")
    diff = np.abs(part - whole[20000:25000]).max()
    assert 0 < diff <= 10 * SETTLE_TOL * np.abs(x).max() + 1e-6
    with h5py.File(part_path, "r") as f:
        assert not bool(f.attrs["exact_range"])
    # a range whose warm-up reaches the first sample is exact
    head = _read(export_range(path, tmp_path / "h.h5", pipeline=p, channels=0, stop=500), "signal")
    np.testing.assert_array_equal(head, whole[:500])


def test_hdf5_layout_provenance_and_checksums(tmp_path, wav):
    path, _ = wav
    p = Pipeline.from_steps([FIR])
    out = export_range(path, tmp_path / "o.h5", pipeline=p, start=100, stop=5000, channels=[1])
    with h5py.File(out, "r") as f:
        prov = f["provenance"]
        for key in ("source_path", "source_sha256", "created_utc", "backend",
                    "version_numpy", "version_scipy", "version_h5py", "version_specscope"):
            assert key in prov.attrs, key
        assert prov.attrs["backend"] == "numpy"
        assert prov.attrs["created_utc"].endswith("+00:00")
        assert Pipeline.from_json(prov["pipeline"][()].decode()) == p
        import hashlib
        assert prov.attrs["source_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert f.attrs["source_sha256"] == prov.attrs["source_sha256"]  # kept on the root
        sig = f["signal"]
        assert sig.fletcher32 and sig.compression == "gzip" and sig.shuffle and sig.chunks
        assert sig.dims[0][0].name == "/time" and sig.dims[1][0].name == "/channel"
        assert f["time"].attrs["units"] == "s"
        np.testing.assert_allclose(f["time"][:3] * FS, [100, 101, 102])
        coef = f["pipeline/coefficients/step_0/b"]
        assert coef.fletcher32 and coef.shape == (101,)
        offset = sig.id.get_chunk_info(0).byte_offset
    # a flipped byte inside a data chunk is caught by the checksum on read
    raw = bytearray(out.read_bytes())
    raw[offset + 10] ^= 0xFF
    bad = tmp_path / "bad.h5"
    bad.write_bytes(bytes(raw))
    with h5py.File(bad, "r") as f, pytest.raises(OSError):
        f["signal"][...]
    # the export reopens as a recording
    with open_recording(out) as rec:
        assert rec.sample_rate == FS and rec.n_samples == 4900


def test_provenance_group_for_old_paths_too(tmp_path, wav):
    from specscope.compute import StftParams, export_spectrogram

    path, _ = wav
    with open_recording(path) as rec:
        out = export_spectrogram(rec, tmp_path / "s.h5", StftParams(256, 128))
    with h5py.File(out, "r") as f:
        assert "pipeline" in f["provenance"] and f["spectrogram"].fletcher32
        assert f.attrs["format"] == "specscope/spectrogram/1"
    f = h5py.File(tmp_path / "g.h5", "w")
    with f:
        g = write_provenance(f, {"source_path": "x"}, pipeline_json="{}" * 50000)
        assert g["pipeline"][()].decode() == "{}" * 50000  # > 64 KiB: a dataset, not an attr


def test_hdf5_reads_back_with_xarray(tmp_path, wav):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    path, _ = wav
    out = export_range(path, tmp_path / "o.h5", pipeline=Pipeline.from_steps([FIR, STFT]),
                       channels=[0])
    ds = xr.open_dataset(out, engine="h5netcdf", phony_dims="sort")
    assert ds["spectrogram"].dims == ("time", "frequency")


def test_wav_flac_and_rf64_switch(tmp_path, wav):
    path, x = wav
    p = Pipeline.from_steps([FIR])
    ref = _read(export_range(path, tmp_path / "r.h5", pipeline=p, channels=[0, 1]), "signal")
    out = export_range(path, tmp_path / "o.wav", pipeline=p, channels=[0, 1])
    assert soundfile.info(str(out)).format == "WAV"
    y, fs = soundfile.read(str(out), dtype="float32")
    assert fs == FS
    np.testing.assert_array_equal(y, ref.astype(np.float32))  # the WAV holds float32
    big = export_range(path, tmp_path / "big.wav", pipeline=p, channels=[0, 1],
                       rf64_threshold=100_000)
    assert soundfile.info(str(big)).format == "RF64"
    np.testing.assert_array_equal(soundfile.read(str(big), dtype="float32")[0], y)
    assert audio_container(".wav", 2**30, 2, "FLOAT") == "RF64"  # 8 GiB
    assert audio_container(".wav", 2**20, 2, "FLOAT") == "WAV"
    assert audio_container(".flac", 2**31, 2, "PCM_24") == "FLAC"
    fl = export_range(path, tmp_path / "o.flac", start=1000, stop=2000)
    z, _ = soundfile.read(str(fl), dtype="float32")
    np.testing.assert_allclose(z, x[1000:2000], atol=2.0 ** -22)
    with pytest.raises(InputError, match="spectrogram can only be written to HDF5"):
        export_range(path, tmp_path / "s.wav", pipeline=Pipeline.from_steps([STFT]))
    assert not (tmp_path / "s.wav").exists()


def test_sigmf_iq_round_trip(tmp_path):
    from specscope.compute.io import SigMFRecording

    rng = np.random.default_rng(3)
    iq = (rng.standard_normal(5000) + 1j * rng.standard_normal(5000)).astype(np.complex64)
    src = tmp_path / "cap.sigmf-data"
    src.write_bytes(iq.tobytes())
    (tmp_path / "cap.sigmf-meta").write_text(json.dumps({
        "global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, "core:version": "1.0.0"},
        "captures": [{"core:sample_start": 0, "core:frequency": 433.9e6,
                      "core:datetime": "2024-05-01T12:00:00Z"}],
        "annotations": [{"core:sample_start": 1500, "core:sample_count": 1000,
                         "core:label": "burst"}]}))
    out = export_range(tmp_path / "cap.sigmf-meta", tmp_path / "cut.sigmf-meta", start=1000,
                       stop=3000)
    with open_recording(out) as rec:
        assert isinstance(rec, SigMFRecording)
        assert rec.is_complex and rec.sample_rate == 1e6 and rec.n_samples == 2000
        assert rec.center_frequency == 433.9e6
        assert rec.start_time == "2024-05-01T12:00:00.001000Z"
        assert rec.metadata["datatype"] == "cf32_le"
        assert round(rec.annotations[0].start_s * 1e6) == 500
        assert rec.annotations[0].label == "burst"
        np.testing.assert_array_equal(rec.read()[:, 0], iq[1000:3000])
        assert rec.verify_checksum() is True
    with pytest.raises(InputError, match="complex"):
        export_range(tmp_path / "cap.sigmf-meta", tmp_path / "iq.wav")


def test_stale_partials_are_cleaned_only_for_their_destination(tmp_path, wav):
    path, _ = wav
    dest = tmp_path / "o.h5"
    stale = tmp_path / ".o.h5.abc123.partial"
    other = tmp_path / ".other.h5.abc123.partial"
    fresh = tmp_path / ".o.h5.zzz999.partial"
    for f in (stale, other, fresh):
        f.write_bytes(b"x")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    export_range(path, dest, channels=0, stop=100)
    assert not stale.exists() and other.exists() and fresh.exists() and dest.exists()
    assert clean_stale_partials(dest, max_age_s=0) == [fresh]


@pytest.mark.slow
def test_cli_export(tmp_path, wav):
    path, _ = wav
    pipe = tmp_path / "p.json"
    Pipeline.from_steps([FIR]).save(pipe)
    res = subprocess.run([sys.executable, "-m", "specscope.app", "export", str(path), "-o",
                          str(tmp_path / "o.h5"), "--start", "0.5", "--stop", "1.5",
                          "--channels", "2,0", "--pipeline", str(pipe)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(tmp_path / "o.h5") and res.stderr == ""
    with h5py.File(tmp_path / "o.h5", "r") as f:
        assert f["signal"].shape == (8000, 2)
        assert list(f["channel"][...]) == [2, 0]
    res = subprocess.run([sys.executable, "-m", "specscope.app", "export", str(path), "-o",
                          str(tmp_path / "o.xyz")], capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    assert "o.xyz" in res.stderr and "Traceback" not in res.stderr
