"""The tracebacks the hostile campaign left: each bad input ends in one line, exit status 2.

The command lines run through the campaign's driver (:func:`hostile_corpus.drive`:
each in a forked child under a 1 GiB address-space limit and a timeout), all in
one driver process.  Each case must exit 2 with one line on stderr (argparse's
usage block aside), no traceback, naming the parameter or the file.  The unit
tests below pin the function at the root of each.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import h5py
import hostile_corpus
import numpy as np
import pytest
import soundfile
from specscope.compute import InputError, SpecscopeError

DRIVER = Path(hostile_corpus.__file__)
MEMORY = 1 << 30
TIMEOUT = 60
FS = 8000
#: the undecodable file name of the encoding cases
BAD_NAME = b"bad_\xff\xfe.wav"


# -- the material ------------------------------------------------------------------------

def _deep_sum(terms: int) -> str:
    return "+".join(["1"] * terms)


def _material(d: Path) -> dict[str, str]:
    """The files the cases read, in ``d``."""
    from specscope.compute.batch import run_batch
    from specscope.compute.pipeline import Pipeline

    d.mkdir(parents=True, exist_ok=True)
    wav = d / "tone.wav"
    t = np.arange(2 * FS) / FS
    soundfile.write(str(wav), (0.3 * np.sin(2 * np.pi * 50 * t)).astype(np.float32), FS,
                    subtype="FLOAT")
    files = {"wav": str(wav), "out": str(d / "out")}
    (d / "out").mkdir()
    # a coefficient file of np.array(1+1+...) a million terms, and one of a million rows
    deep = d / "deep.py"
    head = "import numpy as np\nfs = 8000.0\n"
    deep.write_text(f"{head}b_stored = np.array({_deep_sum(10**6)})\n")
    rows = ",\n".join(["[0.1, 0.2, 0.3, 1.0, 0.5, 0.25]"] * 450_000)  # 15 MB
    (d / "rows.py").write_text(f"{head}sos_stored = np.array([{rows}])\n")
    sos65 = [[1, 0, 0, 1, 0, 0]] * 65
    (d / "rows65.json").write_text(json.dumps({"sample_rate": FS, "sos": sos65}))
    files.update(deep=str(deep), rows=str(d / "rows.py"), rows65=str(d / "rows65.json"))
    # a pipeline whose name holds a NUL
    nul = d / "nul.json"
    nul.write_text('{"specscope": "pipeline/1", "name": "a\\u0000b", "steps": '
                   '[{"op": "filter", "params": {"design": "butter", "btype": "highpass", '
                   '"order": 2, "cutoff": 20}}]}')
    files["nul"] = str(nul)
    # an output whose start_sample attribute is 'nan'
    summary = run_batch(Pipeline.from_steps([{"op": "filter", "params": {
        "design": "butter", "btype": "highpass", "order": 2, "cutoff": 20}}]), [wav], d / "run")
    assert summary.ok, summary.text()
    bad = d / "nan_start.h5"
    bad.write_bytes(Path(summary.results[0].output).read_bytes())
    with h5py.File(bad, "a") as f:
        f.attrs["start_sample"] = "nan"
    files["nan_start"] = str(bad)
    # a plugin folder: one good plugin, one of a million-term expression, one whose
    # plugin.toml is nested 100,000 deep
    plug = d / "plug"
    plug.mkdir()
    (plug / "deepexpr.py").write_text(f'"""Deep."""\nX = {_deep_sum(10**6)}\n')
    (plug / "deeptoml").mkdir()
    (plug / "deeptoml" / "__init__.py").write_text('"""Deep manifest."""\n')
    (plug / "deeptoml" / "plugin.toml").write_text("x = " + "[" * 10**5 + "]" * 10**5 + "\n")
    (plug / "good.py").write_text(
        '"""A good plugin."""\nfrom specscope.compute.operators import operator\n\n\n'
        '@operator("good.twice", summary="twice the signal")\ndef twice(x):\n    return 2 * x\n')
    files["plug"] = str(plug)
    bad_wav = os.path.join(os.fsencode(d), BAD_NAME)
    with open(bad_wav, "wb") as fh:
        fh.write(wav.read_bytes())
    files["bad_wav"] = os.fsdecode(bad_wav)
    files["bad_missing"] = os.fsdecode(os.path.join(os.fsencode(d), b"nope_\xff.wav"))
    return files


#: (id, argv, words the error line names); ``{name}`` is a file of :func:`_material`
CASES = [
    ("export_stop_huge", ["export", "{wav}", "-o", "{out}/x.wav", "--stop", "1e308"],
     ["--stop"]),
    ("export_start_huge", ["export", "{wav}", "-o", "{out}/x.wav", "--start", "1e308"],
     ["--start"]),
    ("export_stop_past_end", ["export", "{wav}", "-o", "{out}/x.h5", "--stop", "30"],
     ["--stop", "past the end"]),
    ("play_stop_huge", ["play", "{wav}", "--stop", "1e308", "-o", "{out}/p.wav"], ["stop_s"]),
    ("play_start_huge", ["play", "{wav}", "--start", "1e308", "-o", "{out}/p.wav"],
     ["start_s"]),
    ("notch_stop_huge", ["filter", "notch", "{wav}", "--near", "50", "--stop", "1e308",
                         "-o", "{out}/n.json"], ["--stop"]),
    ("live_duration_huge", ["live", "--no-gui", "--source", "generator:chirp", "--duration",
                            "1e308"], ["duration"]),
    ("window_chebwin", ["spectrogram", "{wav}", "-o", "{out}/s.h5", "--window", "chebwin,1e9"],
     ["window", "chebwin"]),
    ("window_taylor", ["spectrogram", "{wav}", "-o", "{out}/s.h5", "--window",
                       "taylor,1000000,1e300"], ["window", "taylor", "nbar"]),
    ("param_deep", ["detect", "{wav}", "-o", "{out}/d", "--detector", "energy", "--param",
                    "snr_db=" + "[" * 1000], ["--param snr_db", "nested"]),
    ("coefficients_deep", ["filter", "apply", "{deep}", "{wav}", "-o", "{out}/f.h5"],
     ["deep.py"]),
    ("coefficients_rows", ["filter", "apply", "{rows}", "{wav}", "-o", "{out}/f.h5"],
     ["rows.py"]),
    ("coefficients_65_sections", ["filter", "apply", "{rows65}", "{wav}", "-o", "{out}/f.h5"],
     ["rows65.json", "sos", "65 sections"]),
    ("pipeline_name_nul", ["export", "{wav}", "-o", "{out}/e.h5", "--pipeline", "{nul}"],
     ["nul.json", "name", "NUL"]),
    ("rerun_start_nan", ["rerun", "{nan_start}"], ["nan_start.h5", "start_sample"]),
    ("usage_10k_digits", ["spectrogram", "{wav}", "-o", "{out}/s.h5", "--channel",
                          "9" * 10**4], ["--channel", "10002 characters"]),
    ("command_10k_digits", ["9" * 10**4], ["COMMAND", "10002 characters"]),
]


def _argv(argv: list[str], files: dict[str, str]) -> list[str]:
    return [a.format(**files) if "{" in a and "}" in a and len(a) < 200 else a for a in argv]


def _drive(jobs: list[dict], tmp: Path, **env: str) -> list[dict]:
    """Run ``jobs`` through the campaign's driver, one process."""
    environ = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MALLOC_ARENA_MAX="2", HOME=str(tmp / "home"), QT_QPA_PLATFORM="offscreen",
                   SPECSCOPE_PLUGINS="", PYTHONWARNINGS="ignore", **env)
    environ.pop("SPECSCOPE_MEMORY_BUDGET", None)
    (tmp / "home").mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, str(DRIVER)], input=json.dumps(jobs), text=True,
                          capture_output=True, env=environ, cwd=tmp,
                          timeout=120 + len(jobs) * TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _job(tmp: Path, key: str, argv: list[str], inputs: list[str]) -> dict:
    return {"argv": argv, "inputs": inputs, "out": str(tmp / f"{key}.out"),
            "err": str(tmp / f"{key}.err"), "timeout": TIMEOUT, "memory": MEMORY}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """Every case of :data:`CASES`, the plugin listings and the encoding cases, run once."""
    tmp = tmp_path_factory.mktemp("tracebacks")
    files = _material(tmp / "in")
    inputs = [v for k, v in files.items() if k not in ("out", "plug", "bad_missing")]
    logs = tmp / "logs"
    logs.mkdir()
    jobs = [_job(logs, key, _argv(argv, files), inputs) for key, argv, _ in CASES]
    jobs += [_job(logs, "plugins_list", ["--plugins", files["plug"], "plugins", "list"], []),
             _job(logs, "ops", ["--plugins", files["plug"], "ops"], [])]
    results = dict(zip([c[0] for c in CASES] + ["plugins_list", "ops"],
                       _drive(jobs, tmp), strict=True))
    strict = [_job(logs, "info_bad_name", ["info", files["bad_wav"]], [files["bad_wav"]]),
              _job(logs, "info_missing_bad_name", ["info", files["bad_missing"]], [])]
    for key, res in zip(["info_bad_name", "info_missing_bad_name"],
                        _drive(strict, tmp, PYTHONIOENCODING="utf-8:strict"), strict=True):
        results[key] = res
    for key, res in results.items():
        res["stdout"] = (logs / f"{key}.out").read_text(encoding="utf-8", errors="replace")
    return results


def _error_lines(stderr: str) -> list[str]:
    """The stderr lines less argparse's usage block."""
    lines = stderr.splitlines()
    if lines and lines[0].startswith("usage:"):
        k = 1
        while k < len(lines) and lines[k].startswith(" "):
            k += 1
        lines = lines[k:]
    return lines


@pytest.mark.slow
@pytest.mark.parametrize(("key", "words"), [(c[0], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(campaign, key, words):
    res = campaign[key]
    assert not res["hung"] and "signal" not in res, res
    assert "Traceback" not in res["stderr"], res["stderr"][-2000:]
    assert res["code"] == 2, res["stderr"][-2000:]
    lines = _error_lines(res["stderr"])
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("specscope") and "error: " in line, line
    assert len(line) < 600, line[:300]
    for word in words:
        assert word in line, line
    assert not res["lost"], res["lost"]  # no input changed


@pytest.mark.slow
def test_a_bad_plugin_file_fails_alone_named_in_the_listing(campaign):
    res = campaign["plugins_list"]
    assert res["code"] == 0 and "Traceback" not in res["stderr"], res["stderr"][-2000:]
    out = res["stdout"]
    rows = {line.split()[0]: line for line in out.splitlines() if line and line[0] != " "}
    assert "failed" in rows["deepexpr"] and "failed" in rows["deeptoml"], out
    assert "not loaded yet" in rows["good"], out  # the others are still listed
    assert "operators: good.twice" in out
    # too deep to parse, or (under the driver's memory limit) too large to try
    assert "plugin 'deepexpr': cannot read its metadata (deepexpr.py): " in out, out
    assert "plugin 'deeptoml': cannot read its metadata (plugin.toml): " in out, out
    ops = campaign["ops"]
    assert ops["code"] == 0 and "Traceback" not in ops["stderr"], ops["stderr"][-2000:]
    assert "operators" in ops["stdout"].splitlines()[-1]


@pytest.mark.slow
def test_undecodable_names_are_printed_escaped_under_a_strict_encoding(campaign):
    res = campaign["info_bad_name"]
    assert res["code"] == 0 and "Traceback" not in res["stderr"], res["stderr"][-2000:]
    assert "bad_\\xff\\xfe.wav" in res["stdout"].splitlines()[0], res["stdout"]
    res = campaign["info_missing_bad_name"]
    assert res["code"] == 2 and "Traceback" not in res["stderr"], res["stderr"][-2000:]
    lines = res["stderr"].splitlines()
    assert len(lines) == 1 and lines[0].startswith("specscope: error: "), lines
    assert lines[0].endswith("nope_\\xff.wav: no such file"), lines


# -- the roots -----------------------------------------------------------------------------

def test_window_parameters_out_of_range_are_input_errors():
    from specscope.compute.spectral import get_window

    with pytest.raises(InputError, match="window="):
        get_window("chebwin,1e9", 256)
    with pytest.raises(InputError, match="window="):
        get_window("taylor,4,1e300", 256)
    # taylor's loop is quadratic in nbar: bounded before scipy is called
    with pytest.raises(InputError, match="nbar=2000 must be at most 1000"):
        get_window(("taylor", 2000, 30), 16384)
    assert get_window(("taylor", 4, 30), 256).shape == (256,)


def test_param_values_are_read_by_the_safe_json_reader():
    from specscope.app.cli.commands.detect import detector_params

    with pytest.raises(InputError, match=r"--param snr_db: .*nested 1000 levels"):
        detector_params(["snr_db=" + "[" * 1000])
    with pytest.raises(InputError, match="NaN"):
        detector_params(["snr_db=NaN"])
    assert detector_params(["a=[1, 2]", "b=hann", "c=[1,", "d=6"]) == {
        "a": [1, 2], "b": "hann", "c": "[1,", "d": 6}


def test_coefficient_file_nested_too_deep_is_an_input_error():
    from specscope.compute.filters import parse_coefficients

    text = f"import numpy as np\nfs = 8000.0\nb_stored = np.array({_deep_sum(20_000)})\n"
    with pytest.raises(InputError, match="nested too deep"):
        parse_coefficients(text, "python")


def test_coefficient_files_are_held_to_the_limits_of_a_design(tmp_path, monkeypatch):
    from specscope.compute.filters import parse_coefficients, read_coefficients
    from specscope.compute.filters.formats import MAX_PYTHON_BYTES

    # a size cap read before parsing: 5 MiB of comments would parse (to nothing)
    big = tmp_path / "big.py"
    big.write_text("# x\n" * ((MAX_PYTHON_BYTES + (1 << 20)) // 4))
    with pytest.raises(InputError, match=r"big\.py: \d+ bytes is too large"):
        read_coefficients(big)
    # the order limit on the rows, in every format
    sos = [[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]] * 65
    with pytest.raises(InputError, match="sos has 65 sections"):
        parse_coefficients(json.dumps({"sample_rate": FS, "sos": sos}), "json")
    with pytest.raises(InputError, match="sos_stored has 65 sections"):
        parse_coefficients(f"fs = 8000.0\nsos_stored = np.array({sos!r})\n", "python")
    csv = "# sample_rate=8000\nb0,b1,b2,a0,a1,a2\n" + "1,0,0,1,0,0\n" * 65
    with pytest.raises(InputError, match="64 rows of sections"):
        parse_coefficients(csv, "csv")
    # b/a that would be factored (roots cost the cube of the order)
    ba = {"sample_rate": FS, "b": [1.0] * 3000, "a": [1.0] + [1e-3] * 2999}
    with pytest.raises(InputError, match="order 2999"):
        parse_coefficients(json.dumps(ba), "json")
    # an npz member declaring more taps than a filter has is refused from its header
    buf = io.BytesIO()
    np.savez_compressed(buf, b=np.zeros(5_000_000), sample_rate=np.float64(FS))
    with pytest.raises(InputError, match="b has 5000000 values"):
        parse_coefficients(buf.getvalue(), "npz")
    # the memory budget: parsing Python takes ~250 bytes per byte
    small = tmp_path / "small.py"
    small.write_text(f"fs = 8000.0\nb_stored = np.array({[0.5] * 4000!r})\n")
    assert read_coefficients(small).numtaps == 4000
    monkeypatch.setenv("SPECSCOPE_MEMORY_BUDGET", "1M")
    with pytest.raises(InputError, match="SPECSCOPE_MEMORY_BUDGET"):
        read_coefficients(small)


def test_coefficients_that_are_not_numbers_are_input_errors():
    from specscope.compute.filters import parse_coefficients

    for doc in ({"sample_rate": FS, "b": ["x"]}, {"sample_rate": FS, "sos": [[1, 2], [3]]},
                {"sample_rate": "fast", "b": [1.0]}):
        with pytest.raises(InputError):
            parse_coefficients(json.dumps(doc), "json")


def test_nul_in_a_pipeline_is_refused_naming_the_field():
    from specscope.compute.pipeline import Pipeline

    steps = [{"op": "filter", "params": {"design": "butter", "btype": "highpass",
                                         "order": 2, "cutoff": 20}}]
    with pytest.raises(InputError, match=r"^name: .*NUL"):
        Pipeline.from_dict({"specscope": "pipeline/1", "name": "a\x00b", "steps": steps})
    with pytest.raises(InputError, match=r"^steps\[0\]\.params\.btype: .*NUL"):
        Pipeline.from_dict({"specscope": "pipeline/1", "steps": [
            {"op": "filter", "params": {**steps[0]["params"], "btype": "high\x00pass"}}]})
    with pytest.raises(InputError, match="description"):
        Pipeline(Pipeline.from_steps(steps).steps, "ok", "x\x00y")


@pytest.mark.parametrize(("attr", "value", "words"), [
    ("start_sample", "nan", "start_sample='nan' must be a whole number"),
    ("stop_sample", 2.5, "stop_sample=2.5 must be a whole number"),
    ("chunk_samples", 0, "chunk_samples=0 must be >= 1"),
    ("chunk_samples", None, "chunk_samples is missing"),
    ("channels", '["x"]', "channels=['x'] must be a list of channel numbers"),
    ("source_path", np.arange(3), "source_path=array"),
])
def test_rerun_reads_provenance_attributes_with_checks(tmp_path, attr, value, words):
    from specscope.compute.batch import rerun, run_batch
    from specscope.compute.pipeline import Pipeline

    wav = tmp_path / "tone.wav"
    soundfile.write(str(wav), np.zeros(FS, np.float32), FS, subtype="FLOAT")
    summary = run_batch(Pipeline.from_steps([{"op": "filter", "params": {
        "design": "butter", "btype": "highpass", "order": 2, "cutoff": 20}}]), [wav],
        tmp_path / "run")
    out = Path(summary.results[0].output)
    with h5py.File(out, "a") as f:
        if value is None:
            del f.attrs[attr]
        else:
            f.attrs[attr] = value
    before = out.read_bytes()
    with pytest.raises(SpecscopeError, match="^" + re.escape(f"tone.h5: attribute {words}")):
        rerun(out)
    assert out.read_bytes() == before


def test_plugin_files_too_deep_fail_alone(tmp_path, monkeypatch):
    from specscope.compute import extensions

    monkeypatch.setenv("SPECSCOPE_PLUGINS", str(tmp_path))
    monkeypatch.setenv("SPECSCOPE_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "deepexpr.py").write_text(f'"""Deep."""\nX = {_deep_sum(20_000)}\n')
    (tmp_path / "deeptoml").mkdir()
    (tmp_path / "deeptoml" / "__init__.py").write_text('"""Deep manifest."""\n')
    (tmp_path / "deeptoml" / "plugin.toml").write_text("x = " + "[" * 5000 + "]" * 5000)
    (tmp_path / "fine.py").write_text('"""Fine."""\n')
    extensions.reset()
    try:
        found = {p.name: p for p in extensions.list_plugins() if p.source == "path"}
        assert found["fine"].status == "available"
        assert found["deepexpr"].status == "failed"
        assert "(deepexpr.py): an expression nested too deep" in found["deepexpr"].error
        assert found["deeptoml"].status == "failed"
        assert "(plugin.toml): nested too deep" in found["deeptoml"].error
    finally:
        extensions.reset()


def test_usage_errors_cut_the_values_they_repeat(capsys):
    from specscope.app import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["spectrogram", "x.wav", "-o", "s.h5", "--scaling", "z" * 10**4])
    assert exc.value.code == 2
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("specscope spectrogram: error: argument --scaling: invalid choice")
    assert "zzz... (10002 characters)" in line and len(line) < 400, line[:400]


def test_output_streams_escape_undecodable_names():
    from specscope.app.cli.common import escape_unprintable

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    escape_unprintable(stream)
    print(os.fsdecode(BAD_NAME), "\u2013", file=stream)
    stream.flush()
    assert raw.getvalue() == b"bad_\\xff\\xfe.wav \xe2\x80\x93\n"
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    escape_unprintable(stream)
    print("\u2013", file=stream)
    stream.flush()
    assert raw.getvalue() == b"\\u2013\n"


def test_a_time_beyond_the_recording_names_the_parameter():
    from specscope.compute.timefmt import time_to_sample

    assert time_to_sample("1.5", 48000.0, "start") == 72000
    assert time_to_sample(20.0, 48000.0, "stop", n_samples=960_000) == 960_000
    for seconds, n, words in [(1e308, None, "stop=1e+308 s is beyond any recording"),
                              (30.0, 960_000, "stop=30 s is past the end"),
                              (float("inf"), None, "stop=inf is not a finite time"),
                              ("nan", None, "stop='nan' is not a time"),
                              (-1.0, None, "stop=-1 s must be >= 0")]:
        with pytest.raises(InputError, match=re.escape(words)):
            time_to_sample(seconds, 48000.0, "stop", n_samples=n)
    with pytest.raises(InputError, match="duration=1e\\+15 s is beyond any recording"):
        time_to_sample(1e15, 48000.0, "duration")


def test_renderer_and_live_sources_refuse_times_that_overflow(tmp_path):
    from specscope.compute.io import open_recording
    from specscope.compute.live.generator import GeneratorSource
    from specscope.compute.playback import Renderer

    wav = tmp_path / "tone.wav"
    soundfile.write(str(wav), np.zeros(2 * FS, np.float32), FS, subtype="FLOAT")
    with open_recording(wav) as rec:
        with pytest.raises(InputError, match=r"stop_s=1e\+308 s is past the end"):
            Renderer(rec, 0.0, 1e308)
        with pytest.raises(InputError, match=r"start_s=1e\+308 s is past the end"):
            Renderer(rec, 1e308)
        assert Renderer(rec, 0.5, 2.0).stop_sample == 2 * FS
    with pytest.raises(InputError, match=r"duration=1e\+308 s is beyond any recording"):
        GeneratorSource("chirp", duration=1e308)
