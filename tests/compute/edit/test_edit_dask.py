"""Region edits on a real Dask cluster (a scheduler and two worker processes) equal the
edit computed in this process, for whole files and for part tasks of a long file."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

pytest.importorskip("distributed", reason="dask.distributed is not installed")

from _dask_cluster import Cluster
from specscope.compute import open_recording
from specscope.compute.batch import run_batch
from specscope.compute.edit import Box, Lasso, RegionEdit, apply_edit
from specscope.compute.pipeline import Pipeline

FS = 16000


def test_edits_on_a_cluster_equal_the_edit_here(tmp_path):
    rng = np.random.default_rng(11)
    x = (0.1 * rng.standard_normal((2, 8 * FS))).astype(np.float32)
    wavs = []
    for i in range(2):
        path = tmp_path / "in" / f"rec{i}.wav"
        path.parent.mkdir(exist_ok=True)
        soundfile.write(path, x.T * (i + 1), FS, subtype="FLOAT")
        wavs.append(path)
    edits = [RegionEdit(Lasso(((1.5, 500.0), (3.0, 700.0), (2.5, 2500.0))), "remove", nfft=512),
             RegionEdit(Box(3.9, 4.2, 0, 8000), "attenuate", db=20, nfft=256)]
    pipe = Pipeline.from_steps([{"op": "edit", "params": e.to_dict()} for e in edits])
    with Cluster(2, root=tmp_path / "cluster") as c:
        # parts of 2 s: the regions cross the parts' borders
        s = run_batch(pipe, wavs, tmp_path / "out", dask=c.address, task_samples=2 * FS)
    assert s.ok, s.text()
    assert all(r.parts > 1 for r in s.results)
    for i, path in enumerate(wavs):
        want = x * (i + 1)
        for e in edits:
            want = apply_edit(want, FS, e)
        with open_recording(tmp_path / "out" / f"{path.stem}.h5") as rec:
            got = rec.read(0, rec.n_samples).T
        assert np.array_equal(got, want)
