"""SigMF as sigmf-python reads and checks it: captures that share a start, exports that validate."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile
from specscope.compute import open_recording
from specscope.compute.annotations import Annotation
from specscope.compute.output import export_range

sigmf = pytest.importorskip("sigmf")
from sigmf import sigmffile  # noqa: E402
from sigmf import validate as sigmf_validate  # noqa: E402


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def test_captures_that_start_at_the_same_sample_read_as_sigmf_python_reads_them(tmp_path):
    # two captures both at sample 0 (the spec asks only for non-decreasing starts): the
    # first holds no samples, the second all of them and the frequency
    rng = np.random.default_rng(3)
    rng.integers(0, 256, size=(1200, 2), dtype=np.uint8).tofile(tmp_path / "u8.sigmf-data")
    meta = tmp_path / "u8.sigmf-meta"
    meta.write_text(json.dumps({
        "global": {"core:datatype": "cu8", "core:sample_rate": 250000.0,
                   "core:version": sigmf.__specification__},
        "captures": [{"core:sample_start": 0},
                     {"core:sample_start": 0, "core:frequency": 433.9e6}],
        "annotations": []}))
    reference = sigmffile.fromfile(str(meta)).read_samples()
    rec = open_recording(meta)
    assert rec.n_samples == reference.shape[0] == 1200
    x = np.ravel(rec.read(0, rec.n_samples))
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-6)


def test_a_sigmf_range_export_validates_and_declares_its_namespace(tmp_path):
    fs = 8000
    t = np.arange(fs * 2) / fs
    src = tmp_path / "tone.wav"
    soundfile.write(str(src), np.stack([np.sin(2 * np.pi * 440 * t),
                                        0.5 * np.sin(2 * np.pi * 880 * t)], 1), fs,
                    subtype="FLOAT")
    rec = open_recording(src)
    rec.annotations = [Annotation(0.5, 1.0, 400.0, 500.0, label="A", channel=1)]
    out = export_range(rec, tmp_path / "cut.sigmf-meta", start=fs // 4, stop=fs * 3 // 2)
    doc = json.loads(out.read_text())
    sigmf_validate.validate(doc)  # raises on anything the schema refuses
    assert _minor(doc["global"]["core:version"]) == _minor(sigmf.__specification__)
    used = {k.split(":")[0] for k in doc["global"]} | {
        k.split(":")[0] for a in doc["annotations"] for k in a}
    declared = {e["name"] for e in doc["global"].get("core:extensions", [])}
    assert used - {"core"} <= declared, (used, declared)
    # and it reads back as sigmf-python reads it
    back = sigmffile.fromfile(str(out)).read_samples()
    ours = open_recording(out).read(0, fs * 5 // 4)
    np.testing.assert_allclose(ours, back.reshape(ours.shape), rtol=0, atol=1e-6)
