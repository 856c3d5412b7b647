"""``specscope edit``: regions from the command line and from a file, outputs that reopen,
the edits kept as a pipeline that ``run`` and ``rerun --verify`` repeat."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile
from specscope.app.cli import main
from specscope.compute.edit import Box, Lasso, RegionEdit, apply_edit

FS = 16000


@pytest.fixture
def scene(tmp_path: Path) -> Path:
    t = np.arange(3 * FS) / FS
    rng = np.random.default_rng(3)
    x = 0.05 * rng.standard_normal(t.size) + 0.4 * np.sin(2 * np.pi * 1000 * t) + \
        np.where((t > 1.0) & (t < 2.0), 0.3 * np.sin(2 * np.pi * 3000 * t), 0.0)
    path = tmp_path / "scene.wav"
    soundfile.write(path, np.stack([x, x[::-1]], 1).astype(np.float32), FS, subtype="FLOAT")
    return path


def _read(path: Path) -> np.ndarray:
    y, fs = soundfile.read(path, dtype="float32", always_2d=True)
    assert fs == FS
    return y.T


def test_an_attenuated_box_equals_the_core_and_the_rest_is_unchanged(scene, tmp_path, capsys):
    out = tmp_path / "out.wav"
    assert main(["edit", str(scene), "--attenuate", "30", "--region", "1.0,2.0,2800,3200",
                 "--feather-ms", "5", "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    x, y = _read(scene), _read(out)
    edit = RegionEdit(Box(1.0, 2.0, 2800, 3200), "attenuate", db=30, feather_ms=5)
    assert np.array_equal(y, apply_edit(x, FS, edit))
    s0, s1, _, _ = edit.span(FS)
    assert np.array_equal(y[:, :s0], x[:, :s0]) and np.array_equal(y[:, s1:], x[:, s1:])


def test_a_region_file_and_a_kept_pipeline_that_run_repeats(scene, tmp_path, capsys):
    regions = tmp_path / "r.json"
    lasso = [[0.9, 2700], [2.1, 2700], [2.1, 3300], [0.9, 3300]]
    regions.write_text(json.dumps([{"shape": "lasso", "points": lasso},
                                   {"region": {"shape": "box", "t0": 0.2, "t1": 0.5,
                                               "f0": 900, "f1": 1100},
                                    "operation": "attenuate", "db": 12}]))
    out, pipe = tmp_path / "out.h5", tmp_path / "edits.json"
    assert main(["edit", str(scene), "--remove", "--region-file", str(regions), "-o", str(out),
                 "--save-pipeline", str(pipe), "-q"]) == 0
    steps = json.loads(pipe.read_text())["steps"]
    assert [s["params"]["operation"] for s in steps] == ["remove", "attenuate"]
    x = _read(scene)
    want = apply_edit(apply_edit(x, FS, RegionEdit(Lasso(tuple(map(tuple, lasso))), "remove")),
                      FS, RegionEdit(Box(0.2, 0.5, 900, 1100), "attenuate", db=12))
    with h5py.File(out, "r") as f:
        got = f["signal"][()].T
        assert "edit" in f["provenance/pipeline"][()].decode()
    assert np.abs(got - want).max() <= 1e-6
    # the kept pipeline through run, and the output's own pipeline again
    assert main(["run", str(pipe), str(scene), "-o", str(tmp_path / "ran"), "-q"]) == 0
    with h5py.File(tmp_path / "ran" / "scene.h5", "r") as f:
        assert np.array_equal(f["signal"][()].T, got)
    assert main(["rerun", str(out), "--verify"]) == 0
    assert "identical" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "words"), [
    (["--remove", "--region", "1,2,9000,9500"], "9000 to 9500 Hz lie outside 0 to 8000 Hz"),
    (["--remove", "--region", "5,6,100,200"], "5 to 6 s lie outside the recording"),
    (["--attenuate", "10", "--region", "1,1,100,200"], "zero area"),
    (["--isolate"], "no region given"),
])
def test_a_bad_region_is_one_line_and_writes_nothing(scene, tmp_path, capsys, args, words):
    out = tmp_path / "out.wav"
    assert main(["edit", str(scene), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_the_output_may_not_be_the_input(scene, capsys):
    before = scene.read_bytes()
    assert main(["edit", str(scene), "--remove", "--region", "1,2,2800,3200",
                 "-o", str(scene)]) == 2
    assert "scene.wav" in capsys.readouterr().err
    assert scene.read_bytes() == before


def test_a_pipelines_steps_applied_inside_the_region_only(scene, tmp_path):
    lowpass = tmp_path / "lp.json"
    lowpass.write_text(json.dumps({"specscope": "pipeline/1", "steps": [
        {"op": "filter", "params": {"design": "butter", "btype": "lowpass", "order": 6,
                                    "cutoff": 2000.0}}]}))
    out = tmp_path / "out.wav"
    assert main(["edit", str(scene), "--apply", str(lowpass), "--region", "1.0,2.0,0,8000",
                 "-o", str(out), "-q"]) == 0
    x, y = _read(scene), _read(out)
    import scipy.signal as ss

    def band(z, t0, t1):
        sos = ss.butter(6, [2700, 3300], "bandpass", fs=FS, output="sos")
        return 10 * np.log10(np.mean(ss.sosfiltfilt(sos, z[0])[int(t0 * FS):int(t1 * FS)] ** 2))

    # inside the region the whistle's band is the low-passed signal's, outside it is not
    lowpassed = ss.sosfilt(ss.butter(6, 2000.0, fs=FS, output="sos"), x)
    assert abs(band(y, 1.2, 1.8) - band(lowpassed, 1.2, 1.8)) < 1.0
    assert band(y, 1.2, 1.8) - band(x, 1.2, 1.8) < -20
    assert np.array_equal(y[:, int(2.5 * FS):], x[:, int(2.5 * FS):])
