"""Hostile input: malformed files of every format and bad parameters, through the CLI.

A corpus of malformed files (:func:`hostile_corpus.build_corpus`, generated in
``tmp_path`` at test time) and a seeded mutation fuzzer
(:func:`hostile_corpus.mutations`; ``SPECSCOPE_FUZZ_CASES`` cases, 500 by
default, or ``--fuzz-cases N``) run through ``specscope info``, ``spectrogram``,
``export``, ``run``, ``annotations list`` and ``filter``: each command in a
child process under a 1 GiB address-space limit and a 30 s timeout, many per
driver process.  Each must exit 0, or with one error line (argparse's usage
block aside) and no traceback; none may hang, crash, run out of memory or
change its input.  The campaign table (tried / clean / traceback / hang / crash
/ lost / noisy) is printed, and written as JSON to ``SPECSCOPE_HOSTILE_REPORT``
when that names a file.

The in-process tests below pin the individual rules with their messages.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import hostile_corpus
import numpy as np
import pytest
from specscope.compute import InputError, RecordingError, SpecscopeError, jsonsafe
from specscope.compute.errors import MAX_ECHO, MAX_MESSAGE, MissingOption, shown
from specscope.compute.io import open_recording
from specscope.compute.params import MAX_FRAME, Param, check_bytes, check_frame
from specscope.compute.spectral import StftParams, get_window

DRIVER = Path(hostile_corpus.__file__)
MEMORY = 1 << 30
TIMEOUT = 30
COLUMNS = ("tried", "clean", "traceback", "hang", "crash", "lost", "noisy")


def fuzz_cases(config) -> int:
    given = config.getoption("--fuzz-cases", default=None) if config else None
    return int(given or os.environ.get("SPECSCOPE_FUZZ_CASES", "500"))


# -- running and judging -------------------------------------------------------------------

def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               MALLOC_ARENA_MAX="2", HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "cfg"),
               XDG_CACHE_HOME=str(tmp / "cache"), XDG_DATA_HOME=str(tmp / "data"),
               QT_QPA_PLATFORM="offscreen", SPECSCOPE_PLUGINS="", PYTHONWARNINGS="ignore")
    env.pop("SPECSCOPE_MEMORY_BUDGET", None)
    (tmp / "home").mkdir(exist_ok=True)
    return env


def run_campaign(cases: list[hostile_corpus.Case], tmp: Path,
                 drivers: int = 2) -> list[tuple[str, list[str], dict]]:
    """Every command of every case through the driver, ``drivers`` processes at a time."""
    logs = tmp / "logs"
    logs.mkdir(exist_ok=True)
    jobs, keys = [], []
    for case in cases:
        for k, argv in enumerate(case.argvs):
            stem = logs / f"{len(jobs):05d}"
            jobs.append({"argv": argv, "inputs": case.inputs, "out": f"{stem}.out",
                         "err": f"{stem}.err", "timeout": TIMEOUT, "memory": MEMORY})
            keys.append((f"{case.name}#{k}", argv))
    parts = [jobs[i::drivers] for i in range(drivers)]
    env = _env(tmp)
    procs = [subprocess.Popen([sys.executable, str(DRIVER)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env, cwd=tmp) for _ in parts]
    outs = []
    for proc, part in zip(procs, parts, strict=True):
        out, err = proc.communicate(json.dumps(part), timeout=60 + len(part) * TIMEOUT)
        assert proc.returncode == 0, err[-3000:]
        outs.append(json.loads(out))
    results: list[dict] = [{}] * len(jobs)
    for i, out in enumerate(outs):
        results[i::drivers] = out
    return [(name, argv, res) for (name, argv), res in zip(keys, results, strict=True)]


def _error_lines(stderr: str) -> list[str]:
    """The stderr lines less argparse's usage block."""
    lines = stderr.splitlines()
    if lines and lines[0].startswith("usage:"):
        k = 1
        while k < len(lines) and lines[k].startswith(" "):
            k += 1
        lines = lines[k:]
    return lines


def verdict(res: dict) -> str:
    """clean, traceback, hang, crash (signal or out of memory), lost (input changed) or noisy."""
    err = res["stderr"]
    if res["lost"]:
        return "lost"
    if res["hung"]:
        return "hang"
    if "signal" in res or "MemoryError" in err or res["maxrss"] >= MEMORY:
        return "crash"
    if "Traceback" in err or res.get("code") in (96, 97, 98):
        return "traceback"
    code = res.get("code")
    if code == 0:
        return "clean"
    lines = _error_lines(err)
    # exit 2: "specscope: error: ..."; 1: a batch's "specscope: failed: INPUT: ..."
    if (code in (1, 2) and len(lines) == 1 and ("error: " in lines[0] or "failed: " in lines[0])
            and lines[0].startswith("specscope") and res["stderr_bytes"] < 4000):
        return "clean"
    return "noisy"


def table(results: list[tuple[str, list[str], dict]]) -> dict[str, int]:
    counts = Counter(verdict(r) for _, _, r in results)
    return {"tried": len(results), **{c: counts.get(c, 0) for c in COLUMNS[1:]}}


def _report(label: str, row: dict[str, int], results) -> None:
    line = " ".join(f"{c}={row[c]}" for c in COLUMNS)
    print(f"\nhostile campaign {label}: {line}")
    slowest = max(results, key=lambda t: t[2]["seconds"])
    biggest = max(results, key=lambda t: t[2]["maxrss"])
    print(f"  slowest {slowest[2]['seconds']:.2f} s ({slowest[0]}); largest "
          f"{biggest[2]['maxrss'] / 2**20:.0f} MiB ({biggest[0]})")
    target = os.environ.get("SPECSCOPE_HOSTILE_REPORT")
    if target:
        path = Path(target)
        old = json.loads(path.read_text()) if path.is_file() else {}
        old[label] = {**row, "slowest_s": slowest[2]["seconds"],
                      "largest_mib": round(biggest[2]["maxrss"] / 2**20)}
        path.write_text(json.dumps(old, indent=1))


def _problems(results) -> list[str]:
    out = []
    for name, argv, res in results:
        v = verdict(res)
        if v != "clean":
            shown_argv = " ".join(a if len(a) < 80 else a[:60] + "..." for a in argv)
            out.append(f"{v}: {name}: specscope {shown_argv}: "
                       f"{res.get('code', res.get('signal'))}: {res['stderr'][-600:]!r}")
    return out


# -- the campaign ---------------------------------------------------------------------------

def test_corpus_of_malformed_files_through_the_cli(tmp_path):
    cases = hostile_corpus.build_corpus(tmp_path)
    files = {p for c in cases for p in c.inputs[:1] if "good.wav" not in p}
    assert len(files) >= 150
    results = run_campaign(cases, tmp_path)
    row = table(results)
    _report("corpus", row, results)
    problems = _problems(results)
    assert not problems, f"{len(problems)} unclean:\n" + "\n".join(problems[:40])
    by_name = {name: res for name, _, res in results}
    # the rules the corpus pins, by their messages
    for name, words in {
            "count_all_ones.flac#0": None,  # opens: the samples that decode are counted
            "rate_nan.aiff#0": "sample rate nan",
            "rate_zero.aiff#0": "sample rate 0",
            "rate_negative.h5#0": "is not a sample rate (negative)",
            "loop_a.wav#0": "symbolic link loop",
            "data_folder.sigmf-meta#0": "is a folder",
            "rate_huge_int.sigmf-meta#0": "too long",
            "rate_5000_digits.sigmf-meta#0": "too long",
            "deep.sigmf-meta#0": "nested",
            "deep.json#0": "nested",
            "not_utf8.json#0": "not UTF-8",
            "zeros_bomb.mat#1": "budget",
            "arg_nfft_bomb#0": "nfft=1073741824 is too large",
            "arg_kaiser_neg#0": "not finite",
            "fifo.wav#0": "FIFO"}.items():
        res = by_name[name]
        if words is None:
            assert res["code"] == 0, (name, res["stderr"])
        else:
            assert res["code"] == 2 and words in res["stderr"], (name, res["stderr"])
    cell = by_name["cell_10mb.txt#0"]["stderr"]
    assert cell.count("9") < 2 * MAX_ECHO + 100, len(cell)


def test_mutation_fuzz_through_the_cli(tmp_path, request):
    n = fuzz_cases(request.config)
    cases = hostile_corpus.mutations(tmp_path, n)
    assert len(cases) == n
    results = run_campaign(cases, tmp_path)
    row = table(results)
    _report(f"fuzz ({n} mutations)", row, results)
    problems = _problems(results)
    assert not problems, f"{len(problems)} unclean:\n" + "\n".join(problems[:40])


# -- the rules, in process -------------------------------------------------------------------

@pytest.mark.parametrize("text,words", [
    ('{"a": 1' + "0" * 400 + "}", "401 characters"),
    ("[" + "7" * 5000 + "]", "5000 characters"),
    ("[1e400]", "beyond the range of a float"),
    ("[NaN]", "NaN is not a number JSON allows"),
    ("[-Infinity]", "-Infinity is not a number JSON allows"),
    ("[" * 200_000 + "]" * 200_000, "nested 200000 levels deep (at most 100)"),
    (b'{"a": "\xff"}', "byte 0xff at offset 7 is not UTF-8"),
    ('{"a": [}', "invalid JSON at line 1, column 8"),
    ('"' + '\\"' * 100_000, "invalid JSON"),  # an unclosed string: the depth scan stays linear
])
def test_safe_json_refuses_in_one_line(text, words):
    with pytest.raises(InputError) as e:
        jsonsafe.loads(text, "f.json")
    msg = str(e.value)
    assert msg.startswith("f.json: ") and words in msg and "\n" not in msg
    assert len(msg) < 300


def test_safe_json_reads_what_json_reads():
    doc = {"a": [1, 2.5, -3e-7, {"b": None, "c": True}], "d": "[[[[{{{", "e": "x\\\"y"}
    text = json.dumps(doc)
    assert jsonsafe.loads(text, "f") == json.loads(text)
    assert jsonsafe.loads(("\ufeff" + text).encode("utf-8"), "f") == doc
    deep = "[" * 100 + "]" * 100  # the limit itself is allowed
    assert jsonsafe.loads(deep, "f") == json.loads(deep)
    with pytest.raises(InputError, match="nested 101"):
        jsonsafe.loads("[" + deep + "]", "f")
    with pytest.raises(InputError, match="appears twice"):
        jsonsafe.loads('{"a": 1, "a": 2}', "f", unique_keys=True)
    assert jsonsafe.loads('{"a": 1, "a": 2}', "f") == {"a": 2}
    with pytest.raises(RecordingError, match="too large"):
        jsonsafe.loads("[1]" * 10, "f", max_bytes=8, error=RecordingError)


def test_one_frame_rule_on_every_entry_point():
    from specscope.compute import spectrogram
    from specscope.compute.pipeline import Pipeline

    with pytest.raises(InputError, match=r"nfft=1073741824 is too large \(at most 4194304\)"):
        StftParams(1 << 30, 256)
    with pytest.raises(InputError, match="nfft=1073741824 is too large"):
        spectrogram(np.zeros(4096, np.float32), 8000.0, nfft=1 << 30)
    with pytest.raises(InputError, match="nfft"):
        Pipeline.from_dict({"specscope": "pipeline/1", "steps": [
            {"op": "spectrogram", "params": {"nfft": 1 << 30}}]}).bind(8000.0)
    with pytest.raises(InputError, match="hop"):
        StftParams(256, 1 << 40)
    assert StftParams(MAX_FRAME, 256).nfft == MAX_FRAME
    # operator schemas: frame lengths take the cap unless they give a smaller one
    assert Param("nperseg", int, 256, min=1).max == MAX_FRAME
    assert Param("numtaps", int, 11, min=1, max=1 << 20).max == 1 << 20
    assert Param("factor", float, 1.0).max is None
    with pytest.raises(InputError, match="nperseg"):
        Param("nperseg", int, 256, min=1).validate(1 << 30)
    assert check_frame(np.int64(1024)) == 1024
    with pytest.raises(InputError, match="must be an integer"):
        check_frame(1024.0)


def test_memory_budget_refuses_before_allocating(monkeypatch):
    monkeypatch.setenv("SPECSCOPE_MEMORY_BUDGET", "1M")
    with pytest.raises(InputError, match=r"x: the array would take 2 MB of memory, more than "
                                         r"the budget of 1 MB"):
        check_bytes(2e6, "the array", "x")
    check_bytes(1e5, "the array")


def test_windows_must_be_finite():
    for w in ("kaiser,-1e308", "kaiser,1e308", "gaussian,0"):
        with pytest.raises(InputError, match="not finite"):
            get_window(w, 256)
    with pytest.raises(InputError, match="finite numbers"):
        StftParams(256, 64, "kaiser,nan")
    assert np.all(np.isfinite(get_window("kaiser,8", 256)))


def test_flac_count_beyond_the_file_is_recounted(tmp_path):
    import scipy.signal
    import soundfile

    x = (0.25 * scipy.signal.chirp(np.arange(8000) / 8000, 100, 1, 3000)).astype(np.float32)
    good = tmp_path / "good.flac"
    soundfile.write(good, x, 8000, subtype="PCM_16")
    body = bytearray(good.read_bytes())
    body[21] |= 0x0F
    body[22:26] = b"\xff\xff\xff\xff"
    bomb = tmp_path / "bomb.flac"
    bomb.write_bytes(bytes(body))
    with open_recording(bomb) as rec, open_recording(good) as ref:
        assert rec.n_samples == ref.n_samples == 8000
        assert "68719476735" in rec.warnings[0]
        np.testing.assert_array_equal(rec.read(1234, 5678), ref.read(1234, 5678))
        np.testing.assert_allclose(rec.read()[:, 0], x, atol=1 / 32768)


def _aiff_with_rate(tmp_path: Path, ext: bytes) -> Path:
    import soundfile

    p = tmp_path / "r.aiff"
    soundfile.write(p, np.zeros(100, np.float32), 8000, subtype="PCM_16")
    body = bytearray(p.read_bytes())
    comm = body.find(b"COMM") + 8
    body[comm + 8:comm + 18] = ext
    p.write_bytes(bytes(body))
    return p


@pytest.mark.parametrize("ext,shown_rate", [(b"\x7f\xff\xc0" + bytes(7), "nan"),
                                            (b"\x7f\xff\x80" + bytes(7), "inf"),
                                            (bytes(10), "0")])
def test_aiff_rates_that_are_no_rates(tmp_path, ext, shown_rate):
    p = _aiff_with_rate(tmp_path, ext)
    with pytest.raises(RecordingError, match=rf"r.aiff: the AIFF header gives sample rate "
                                             rf"{shown_rate} Hz"):
        open_recording(p)


def test_aiff_rate_read_as_written(tmp_path):
    # 44100 as an 80-bit float: exponent 16383 + 15, mantissa 44100 << 48
    ext = struct.pack(">H", 16383 + 15) + struct.pack(">Q", 44100 << 48)
    with open_recording(_aiff_with_rate(tmp_path, ext)) as rec:
        assert rec.sample_rate == 44100


def test_compressed_mat_is_described_from_its_header(tmp_path, monkeypatch):
    import scipy.io

    x = np.random.default_rng(5).standard_normal((3000, 2))
    p = tmp_path / "m.mat"
    scipy.io.savemat(p, {"sig": x, "fs": 1000.0, "note": "text"}, do_compression=True)
    with open_recording(p) as rec:
        assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (3000, 2, 1000.0)
        assert rec._arr is None  # nothing decompressed yet
        np.testing.assert_allclose(rec.read(100, 200), x[100:200].astype(np.float32))
    bomb = tmp_path / "bomb.mat"
    bomb.write_bytes(hostile_corpus._zeros_bomb(200_000_000))
    assert bomb.stat().st_size < 1_000_000
    with open_recording(bomb) as rec:  # info needs the headers only
        assert rec.n_samples == 25_000_000
    monkeypatch.setenv("SPECSCOPE_MEMORY_BUDGET", "100M")
    with pytest.raises(InputError, match=r"bomb.mat: variable 'x' \(25000000x1 double\) would "
                                         r"take 200 MB of memory, more than the budget"):
        open_recording(bomb)


def test_hdf5_rate_problems_are_named(tmp_path):
    import h5py

    p = tmp_path / "n.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.zeros(100)).attrs["sample_rate"] = -48000.0
    with pytest.raises(MissingOption, match=r"/x@sample_rate=-48000.0 is not a sample rate "
                                            r"\(negative\); give sample_rate=") as e:
        open_recording(p)
    assert (e.value.option, e.value.stated) == ("sample_rate", -48000.0)  # the GUI asks for it


def test_file_system_oddities_are_named(tmp_path):
    (tmp_path / "a.wav").symlink_to(tmp_path / "b.wav")
    (tmp_path / "b.wav").symlink_to(tmp_path / "a.wav")
    with pytest.raises(RecordingError, match="a.wav: is a symbolic link loop"):
        open_recording(tmp_path / "a.wav")
    (tmp_path / "d.wav").symlink_to(tmp_path / "nowhere.wav")
    with pytest.raises(RecordingError, match="d.wav: is a symbolic link to .*nowhere.wav.*, "
                                             "which does not exist"):
        open_recording(tmp_path / "d.wav")
    meta = tmp_path / "s.sigmf-meta"
    meta.write_text(json.dumps(hostile_corpus._sigmf_meta()))
    (tmp_path / "s.sigmf-data").mkdir()
    with pytest.raises(RecordingError, match=r"the data file s.sigmf-data is a folder"):
        open_recording(meta)


def test_sigmf_numbers_beyond_floats(tmp_path):
    meta = tmp_path / "s.sigmf-meta"
    (tmp_path / "s.sigmf-data").write_bytes(bytes(800))
    text = json.dumps(hostile_corpus._sigmf_meta())
    meta.write_text(text.replace("1000000.0", "1" + "0" * 400))
    with pytest.raises(RecordingError, match=r"s.sigmf-meta: a number of 401 characters"):
        open_recording(meta)
    meta.write_text(text.replace("1000000.0", "1" + "0" * 60))  # within the digits: a rate
    with open_recording(meta) as rec:
        assert rec.sample_rate == 1e60


def test_echoed_values_are_cut():
    assert len(shown("x" * 10_000_000)) <= MAX_ECHO
    assert shown("x" * 10_000_000).endswith("(10000002 characters)")
    assert shown("ab") == "'ab'"
    assert "\n" not in shown(np.zeros((50, 50)))
    err = InputError("f: " + "y" * 5_000_000 + " must be a number")
    assert len(str(err)) <= MAX_MESSAGE and str(err).endswith("must be a number")
    assert "\n" not in str(RecordingError("a\nb\r\nc"))
    from specscope.compute.params import parse_number

    with pytest.raises(InputError) as e:
        parse_number("9" * 1_000_000 + "x", "sample_rate")
    assert len(str(e.value)) < 400
    with pytest.raises(InputError, match="beyond the range of a float"):
        parse_number(10 ** 400, "sample_rate")


def test_raven_cell_of_10_mb_is_one_short_line(tmp_path):
    from specscope.compute.annotations import read_annotations

    p = tmp_path / "t.txt"
    p.write_text(hostile_corpus.RAVEN_HEAD + "1\tSpectrogram 1\t1\t" + "9" * 10_000_000
                 + "x\t0.2\t100\t200\n")
    with pytest.raises(SpecscopeError) as e:
        read_annotations(p, format="raven", sample_rate=8000.0)
    msg = str(e.value)
    assert "t.txt" in msg and "Begin Time" in msg and len(msg) < 2 * MAX_ECHO + 200


def test_filter_spec_files_read_within_limits(tmp_path):
    from specscope.compute.filters import FilterSpec

    p = tmp_path / "s.json"
    p.write_bytes(b'{"design": "butter", "order": 4, "cutoff": 100, "x": "\xff"}')
    with pytest.raises(InputError, match=r"s.json: not a JSON filter spec \(binary content"):
        FilterSpec.load(p)
    p.write_text('{"design": "butter", "x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(InputError, match="nested 200001 levels deep"):
        FilterSpec.load(p)
    p.write_text('{"design": "butter", "order": 4, "cutoff": 100}')
    assert FilterSpec.load(p) == FilterSpec.from_params(
        {"design": "butter", "order": 4, "cutoff": 100})
