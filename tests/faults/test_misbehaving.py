"""Files and plugins that misbehave: damaged headers, noise named like audio."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest
import soundfile
from specscope.compute import RecordingError, open_recording

FS = 8000


def _zero_data_size_wav(path, x):
    """A WAV as a killed recorder leaves it: data and RIFF sizes never filled in."""
    soundfile.write(path, x, FS, subtype="PCM_16")
    raw = bytearray(path.read_bytes())
    at = raw.index(b"data")
    raw[at + 4:at + 8] = struct.pack("<I", 0)
    raw[4:8] = struct.pack("<I", at + 8 - 8)
    path.write_bytes(bytes(raw) + b"\x01")  # and half a frame at the end
    return at + 8


def test_wav_with_zero_data_size_reads_the_samples_that_follow(tmp_path):
    x = (0.2 * np.random.default_rng(0).standard_normal((34300, 2))).astype(np.float32)
    good = tmp_path / "good.wav"
    soundfile.write(good, x, FS, subtype="PCM_16")
    expected = soundfile.read(good, dtype="float32", always_2d=True)[0]
    path = tmp_path / "crashed.wav"
    _zero_data_size_wav(path, x)
    assert path.stat().st_size >= 137_000
    with open_recording(path) as rec:
        assert rec.n_samples == 34300 and rec.n_channels == 2
        assert len(rec.warnings) == 1 and "0 bytes" in rec.warnings[0]
        assert "34300 samples" in rec.warnings[0]
        np.testing.assert_array_equal(rec.read(), expected)
        np.testing.assert_array_equal(rec.read(30000, 34300), expected[30000:])


def test_random_bytes_named_wav_give_one_line_and_a_quiet_stderr(tmp_path, capfd):
    # these bytes make libsndfile's MPEG decoder print notes on fd 2
    path = tmp_path / "x.wav"
    path.write_bytes(np.random.default_rng(1).bytes(20000))
    with pytest.raises(RecordingError) as err:
        open_recording(path)
    msg = str(err.value)
    assert msg == f"{path}: not a WAV file (no RIFF/RIFX/RF64 header)"
    out, errout = capfd.readouterr()
    assert errout == "" and out == ""


def test_libsndfile_notes_are_silenced_even_past_the_header_check(tmp_path, capfd):
    # a RIFF header over noise still reaches libsndfile: nothing on fd 2
    path = tmp_path / "y.wav"
    path.write_bytes(b"RIFF" + np.random.default_rng(1).bytes(20000))
    with pytest.raises(RecordingError, match="y.wav"):
        open_recording(path)
    assert capfd.readouterr().err == ""


# -- the raw-samples dialog -----------------------------------------------------------

@pytest.mark.parametrize("name,expected", [
    ("x.ci16", "ci16"), ("x.cs16", "ci16"), ("x.cu8", "cu8"), ("x.cs8", "ci8"),
    ("x.cfile", "cf32"), ("x.cf32", "cf32"), ("x.ci32", "ci32")])
def test_raw_dialog_takes_the_sample_type_from_the_extension(qtbot, tmp_path, name, expected):
    from PyQt6.QtWidgets import QLabel
    from specscope.compute.errors import MissingOption
    from specscope.widgets.recording_options import RecordingOptionsDialog, option_message

    path = tmp_path / name
    path.write_bytes(bytes(64))
    with pytest.raises(MissingOption) as err:  # what the app shows the dialog
        open_recording(path)
    assert err.value.option == "sample_rate"
    dlg = RecordingOptionsDialog(path.name, option_message(err.value))
    qtbot.addWidget(dlg)
    assert dlg.dtype.currentText() == expected
    qtbot.keyClicks(dlg.sample_rate, "2.4M")
    assert dlg.options()["dtype"] == expected
    note = " ".join(w.text() for w in dlg.findChildren(QLabel))
    assert "give the sample rate (e.g. 2.4M)" in note
    assert "--" not in note and "sample_rate=" not in note
    assert "Sample rate (Hz)" in note
    with open_recording(path, **dlg.options()) as rec:
        assert rec.sample_rate == 2.4e6 and rec.is_complex


def test_raw_dialog_without_a_typed_extension_keeps_the_first_type(qtbot):
    from specscope.widgets.recording_options import SAMPLE_TYPES, RecordingOptionsDialog

    dlg = RecordingOptionsDialog("x.iq", "x.iq: give the sample type")
    qtbot.addWidget(dlg)
    assert dlg.dtype.currentText() == SAMPLE_TYPES[0]


# -- specscope info without a sample rate -------------------------------------------

def test_info_describes_an_npy_without_a_sample_rate(tmp_path, capsys):
    from specscope.app.cli import main

    path = tmp_path / "x.npy"
    np.save(path, np.zeros((1000, 3), np.int16))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln.split(None, 1)[1] for ln in out.splitlines()}
    assert lines["sample_rate"] == "unknown (give --sample-rate)"
    assert lines["shape"] == "[1000, 3]" and lines["dtype"] == "int16"
    assert lines["n_channels"] == "3" and lines["n_samples"] == "1000"
    assert main(["info", str(path), "--json"]) == 0
    import json

    info = json.loads(capsys.readouterr().out)
    assert info["sample_rate"] is None and info["shape"] == [1000, 3]
    # a given rate is used; a bad file still fails in one line
    assert main(["info", str(path), "--sample-rate", "8k"]) == 0
    assert "8000.0" in capsys.readouterr().out
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    assert main(["info", str(tmp_path / "bad.npy")]) == 2
    assert "bad.npy" in capsys.readouterr().err


# -- plugins ---------------------------------------------------------------------------

@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """An empty plugin folder (given with --plugins), an empty user folder, a clean state."""
    from specscope.compute import extensions

    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.delenv("SPECSCOPE_PLUGINS", raising=False)
    monkeypatch.setenv("SPECSCOPE_DATA_DIR", str(tmp_path / "data"))
    extensions.reset()
    yield folder
    extensions.reset()


BAD_IMPORT = """\
from specscope.compute.operators import operator
import no_such_module_xyz  # noqa

@operator("first", family="basic", summary="s", reference="x")
def first(x):
    return x
"""


def test_plugins_list_shows_a_plugin_whose_import_fails_as_failed(plugin_dir, capsys):
    import json
    import sys

    from specscope.app.cli import main

    (plugin_dir / "badimport.py").write_text(BAD_IMPORT)
    (plugin_dir / "raises.py").write_text('raise RuntimeError("at import")\n')
    assert main(["--plugins", str(plugin_dir), "plugins", "list"]) == 0
    out = capsys.readouterr().out
    assert f"badimport  [path]  failed  {plugin_dir / 'badimport.py'}" in out
    assert (f"    error: plugin 'badimport' ({plugin_dir / 'badimport.py'}) cannot be "
            "imported: no module named 'no_such_module_xyz' (badimport.py, line 2)") in out
    # an import that fails only when run is not claimed to work
    assert f"raises  [path]  not loaded yet  {plugin_dir / 'raises.py'}" in out
    assert "available" not in out
    last = out.splitlines()[-1]
    assert re.fullmatch(r"\d+ plugins: 0 loaded, 1 failed, \d+ not loaded yet \(listing does "
                        r"not import them; --load does\)", last), last
    assert "specscope_plugin_raises" not in sys.modules  # listing imported nothing
    assert main(["--plugins", str(plugin_dir), "plugins", "list", "--json"]) == 0
    rows = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    assert rows["badimport"]["status"] == "failed"
    assert "no_such_module_xyz" in rows["badimport"]["error"]
    # --load imports: every failure is known
    assert main(["--plugins", str(plugin_dir), "plugins", "list", "--load"]) == 0
    out = capsys.readouterr().out
    assert "error: plugin 'raises'" in out and "RuntimeError: at import" in out
    n, loaded = re.fullmatch(r"(\d+) plugins: (\d+) loaded, 2 failed",
                             out.splitlines()[-1]).groups()
    assert int(n) == int(loaded) + 2


def test_optional_imports_do_not_fail_a_plugin(plugin_dir):
    from specscope.compute import extensions

    (plugin_dir / "opt.py").write_text("try:\n    import no_such_module_xyz\nexcept ImportError:"
                                       "\n    pass\nimport numpy\nfrom . import x\n")
    extensions.add_search_path(plugin_dir)
    assert extensions.missing_imports(extensions.get_plugin("opt")) is None


TWICE = '''
"""Scales its input."""
from specscope.compute.operators import Param, operator

SPECSCOPE_PLUGIN = {"outputs": {"scale": "same"}}


@operator("scale", family="basic", summary="Scaled input",
          params=[Param("factor", float, 2.0, min=0.0)], reference="x * factor")
def scale(x, *, factor, xp):
    return x * factor
'''


@pytest.mark.slow
def test_run_with_workers_finds_plugins_given_with_the_option(plugin_dir, tmp_path):
    import json
    import os
    import subprocess
    import sys

    import h5py

    (plugin_dir / "twice.py").write_text(TWICE)
    x = (0.1 * np.random.default_rng(2).standard_normal(4000)).astype(np.float32)
    inputs = []
    for i in range(2):
        inputs.append(tmp_path / f"in{i}.wav")
        soundfile.write(inputs[-1], x, FS, subtype="FLOAT")
    pipe = tmp_path / "pipe.json"
    pipe.write_text(json.dumps({"specscope": "pipeline/1", "steps": [
        {"op": "twice.scale", "params": {"factor": 3.0}}]}))
    env = {k: v for k, v in os.environ.items() if k != "SPECSCOPE_PLUGINS"}
    env.update(SPECSCOPE_DATA_DIR=str(tmp_path / "data"), SPECSCOPE_NO_AUTOTUNE="1")
    res = subprocess.run([sys.executable, "-m", "specscope.app", "--plugins", str(plugin_dir),
                          "run", str(pipe), *map(str, inputs), "-o", str(tmp_path / "out"),
                          "--workers", "2", "-q"],
                         env=env, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    for i in range(2):
        with h5py.File(tmp_path / "out" / f"in{i}.h5", "r") as f:
            np.testing.assert_allclose(f["signal"][:, 0], 3.0 * x, rtol=1e-6)


# -- operators that mirror scipy keep scipy's parameter names --------------------------

#: parameters of filtering operators that cannot carry scipy's name, and why
NOT_SCIPY_NAMES = {
    ("lfiltic", "past_x"): "scipy's x; here x is the operator's input (b)",
    ("order_filter", "size"): "a neighbourhood length, where scipy takes a domain array",
}


def test_filtering_operators_use_scipys_parameter_names():
    import inspect

    import scipy.signal as ss
    from specscope.compute import operators

    checked, wrong = 0, []
    for op in operators.list_operators():
        if op.family != "filtering" or not (op.reference or "").startswith("scipy.signal."):
            continue
        fn = getattr(ss, op.reference.removeprefix("scipy.signal."))
        names = set(inspect.signature(fn).parameters)
        checked += 1
        wrong += [f"{op.name}.{p.name}" for p in op.params
                  if p.name not in names and (op.name, p.name) not in NOT_SCIPY_NAMES]
    assert checked >= 10 and not wrong, wrong


def test_oaconvolve_takes_in2_like_scipy():
    import scipy.signal as ss
    from specscope.compute import InputError, operators

    x, k = np.arange(50.0), np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(operators.call("oaconvolve", x, in2=k), ss.oaconvolve(x, k))
    np.testing.assert_allclose(operators.call("correlate", x, in2=k), ss.correlate(x, k))
    with pytest.raises(InputError, match="kernel"):
        operators.call("oaconvolve", x, kernel=k)


# -- rerun of a range export ------------------------------------------------------------

def test_rerun_verify_of_a_range_export_with_an_iir_band_pass_is_identical(tmp_path, capsys):
    import h5py
    from specscope.app.cli import main
    from specscope.compute.output import export_range
    from specscope.compute.pipeline import Pipeline

    fs = 16000
    x = (0.3 * np.random.default_rng(0).standard_normal(3 * fs)).astype(np.float32)
    src = tmp_path / "src.wav"
    soundfile.write(src, x, fs, subtype="FLOAT")
    pipe = Pipeline.from_steps([{"op": "filter", "params": {
        "design": "butter", "order": 4, "cutoff": [300.0, 3000.0], "btype": "bandpass"}}])
    out = export_range(src, tmp_path / "range.h5", pipeline=pipe, start=20000, stop=30000)
    with h5py.File(out, "r") as f:
        stored = f["signal"][...]
        assert f.attrs["range_read_start"] < 20000  # the export warmed up before its start
    assert main(["rerun", "--verify", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"{out}: identical"
    assert main(["rerun", str(out)]) == 0
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["signal"][...], stored)
        assert int(f.attrs["start_sample"]) == 20000


# -- the app keeps its recording when a file has no samples ----------------------------

def test_app_keeps_the_open_recording_when_a_file_holds_no_samples(qtbot, tmp_path, opened):
    from _gui import TIMEOUT_MS

    empty = tmp_path / "empty.wav"
    soundfile.write(empty, np.zeros((0, 1), np.float32), FS)
    w = opened
    before = w.document.recording
    with qtbot.waitSignal(w.errorShown, timeout=TIMEOUT_MS) as shown:
        w.open_path(empty)
    message = "empty.wav: the WAV file holds no samples; nothing to show"
    assert shown.args == [message] and w.last_error == message
    assert w.message_label.text() == f"Error: {message}"
    assert w.message_label.toolTip() == f"Error: {message}"
    # the recording that was open stays open and shown
    assert w.document.recording is before and before.path.name == "scene.wav"
    assert before.read(0, 10).shape == (10, before.n_channels)
    assert "scene.wav" in w.windowTitle()
