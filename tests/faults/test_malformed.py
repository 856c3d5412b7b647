"""A corpus of malformed files, generated here, through ``specscope info`` and ``spectrogram``.

Each case runs both commands in its own process (forked from one helper that
imported specscope once, so the corpus stays fast) with a timeout: exit
status 2 and exactly one stderr line, or 0 where the file is legitimately
readable.  In-process cases already covered by ``test_io_formats.py`` (their
messages) are not repeated here; this adds the cases it lacks and the CLI
contract.  A bounded mutation fuzz test opens damaged copies of valid files:
they open and read, or raise ``SpecscopeError``, never anything else.
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import soundfile
from specscope.compute import SpecscopeError, open_recording

ROOT = Path(__file__).resolve().parents[2]
FS = 8000

DRIVER = r"""
import json, os, signal, sys, time
sys.argv = [sys.argv[0]]
import specscope.app.cli as cli
jobs = json.loads(sys.stdin.read())
results = []
for job in jobs:
    pid = os.fork()
    if pid == 0:
        out = os.open(job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err = os.open(job["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(err, 2)
        code = 99
        try:
            code = cli.main(job["argv"])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code if isinstance(code, int) else 98)
    t0 = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - t0 > job["timeout"]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = None
            break
        time.sleep(0.005)
    if status is None:
        results.append("timeout")
    elif os.WIFSIGNALED(status):
        results.append(f"signal {os.WTERMSIG(status)}")
    else:
        results.append(os.WEXITSTATUS(status))
print(json.dumps(results))
"""


# -- the corpus ---------------------------------------------------------------------------

def _wav_bytes(x: np.ndarray, subtype: str = "PCM_16") -> bytes:
    import io

    buf = io.BytesIO()
    soundfile.write(buf, x, FS, format="WAV", subtype=subtype)
    return buf.getvalue()


def _data_size_offset(raw: bytes) -> int:
    i = raw.index(b"data")
    return i + 4


def _sigmf(folder: Path, name: str, data: bytes, glob: dict, captures=None,
           annotations=None) -> Path:
    g = {"core:datatype": "cf32_le", "core:sample_rate": 1e6, "core:version": "1.0.0"}
    g.update(glob)
    g = {k: v for k, v in g.items() if v is not None}
    (folder / f"{name}.sigmf-data").write_bytes(data)
    meta = folder / f"{name}.sigmf-meta"
    meta.write_text(json.dumps({"global": g, "captures": captures or [{"core:sample_start": 0}],
                                "annotations": annotations or []}))
    return meta


def build_corpus(d: Path) -> list[tuple[str, Path, list[str], int, int]]:
    """(name, path, extra CLI options, expected info status, expected spectrogram status)."""
    rng = np.random.default_rng(9)
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(4000) / FS)).astype(np.float32)
    wav = _wav_bytes(tone)
    cases = []

    def add(name, data, opts=(), info=2, spec=2):
        p = d / name
        if data is not None:
            p.write_bytes(data)
        cases.append((name, p, list(opts), info, spec))

    off = _data_size_offset(wav)
    # a zero data size, as a killed recorder leaves it: the samples after it are read
    add("zero_size.wav", wav[:off] + struct.pack("<I", 0) + wav[off + 4:], info=0, spec=0)
    # a wrapped (0xFFFFFFFF) data size, as streaming writers leave it: read to the end
    add("wrapped_size.wav", wav[:off] + struct.pack("<I", 0xFFFFFFFF) + wav[off + 4:],
        info=0, spec=0)
    add("truncated_header.wav", wav[:30])
    # the header promises 8000 bytes, none follow: libsndfile clamps to 0 frames
    add("header_only.wav", wav[:off + 4], info=0, spec=2)
    # chunks after "data" (LIST/INFO, as editors append): readable
    info_chunk = b"LIST" + struct.pack("<I", 12) + b"INFOISFT" + struct.pack("<I", 0) + b""
    body = wav + info_chunk
    body = body[:4] + struct.pack("<I", len(body) - 8) + body[8:]
    add("chunk_after_data.wav", body, info=0, spec=0)
    # wrong extensions: a WAV named .flac is sniffed; raw IQ named .wav is refused
    add("really_wav.flac", wav, info=0, spec=0)
    add("really_iq.wav", rng.standard_normal(2000).astype("<f4").tobytes())
    # raw samples whose length is not a multiple of the sample size
    add("cut.cf32", bytes(8 * 100 + 5), ["--sample-rate", "1e6"])
    iq = (rng.standard_normal(4000) + 1j * rng.standard_normal(4000)).astype("<c8").tobytes()
    # SigMF
    _sigmf(d, "no_rate", iq, {"core:sample_rate": None})
    # info reports what is known (shape, type, "sample rate: unknown"); a spectrogram needs the rate
    cases.append(("no_rate.sigmf-meta", d / "no_rate.sigmf-meta", [], 0, 2))
    _sigmf(d, "unsorted", iq, {}, captures=[{"core:sample_start": 100},
                                            {"core:sample_start": 50}])
    cases.append(("unsorted.sigmf-meta", d / "unsorted.sigmf-meta", [], 2, 2))
    _sigmf(d, "past_end", iq, {}, annotations=[{"core:sample_start": 10**9,
                                                "core:sample_count": 5}])
    cases.append(("past_end.sigmf-meta", d / "past_end.sigmf-meta", [], 0, 0))
    # a wrong checksum: info does not read the data (0); an export does and refuses (2)
    _sigmf(d, "bad_sha", iq, {"core:sha512": hashlib.sha512(b"other").hexdigest()})
    cases.append(("bad_sha.sigmf-meta", d / "bad_sha.sigmf-meta", [], 0, 2))
    _sigmf(d, "bad_type", iq, {"core:datatype": "cq7_le"})
    cases.append(("bad_type.sigmf-meta", d / "bad_type.sigmf-meta", [], 2, 2))
    # HDF5
    good = d / "good_src.h5"
    with h5py.File(good, "w") as f:
        f.create_dataset("x", data=rng.standard_normal(20000)).attrs["sample_rate"] = 1000.0
    add("truncated.h5", good.read_bytes()[:2500])
    outside = d / "elsewhere"
    outside.mkdir()
    with h5py.File(outside / "secret.h5", "w") as f:
        f.create_dataset("data", data=np.ones(5000)).attrs["sample_rate"] = 1.0
    with h5py.File(d / "link.h5", "w") as f:
        f["ext"] = h5py.ExternalLink(str(outside / "secret.h5"), "/data")
    cases.append(("link.h5", d / "link.h5", [], 2, 2))
    # NaN / Inf samples: legitimately readable; the spectrogram holds NaN where they are
    nan = tone.copy()
    nan[1000], nan[2000] = np.nan, np.inf
    add("nan.wav", _wav_bytes(nan, "FLOAT"), info=0, spec=0)
    # empty and one-sample files
    add("empty.wav", b"")
    add("empty.cf32", b"", ["--sample-rate", "1e6"])
    add("one.wav", _wav_bytes(tone[:1]), info=0, spec=2)
    add("one.cf32", iq[:8], ["--sample-rate", "1e6"], info=0, spec=2)
    return cases


def test_corpus_through_the_cli(tmp_path):
    cases = build_corpus(tmp_path)
    jobs, keys = [], []
    for name, path, opts, info, spec in cases:
        for cmd, want in (("info", info), ("spectrogram", spec)):
            argv = [cmd, str(path), *opts]
            if cmd == "spectrogram":
                argv += ["-o", str(tmp_path / f"{name}.out.h5"), "--nfft", "256", "--hop",
                         "128", "-q"]
            stem = tmp_path / f"{name}.{cmd}"
            jobs.append({"argv": argv, "out": f"{stem}.stdout", "err": f"{stem}.stderr",
                         "timeout": 20})
            keys.append((name, cmd, want, stem))
    res = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(jobs),
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    codes = json.loads(res.stdout)
    problems = []
    for (name, cmd, want, stem), code in zip(keys, codes, strict=True):
        err = Path(f"{stem}.stderr").read_text()
        if code != want:
            problems.append(f"{name} {cmd}: exit {code}, expected {want}: {err.strip()}")
        elif code == 2 and (len(err.splitlines()) != 1 or not
                            err.startswith("specscope: error: ")):
            problems.append(f"{name} {cmd}: stderr is not one line: {err!r}")
        elif code == 0 and "Traceback" in err:
            problems.append(f"{name} {cmd}: traceback on stderr")
        elif code == 2 and name.split(".")[0] not in err:
            problems.append(f"{name} {cmd}: the message does not name the file: {err!r}")
    assert not problems, "\n".join(problems)
    # what the readable ones produced
    with h5py.File(tmp_path / "nan.wav.out.h5", "r") as f:
        s = f["spectrogram"][...]
        t = f["time"][...]
    bad = ~np.isfinite(s).all(axis=1)
    assert bad.any() and not bad.all()  # frames over the NaN/Inf are NaN, the others not
    hit = t[bad] * FS
    assert np.all((np.abs(hit - 1000) <= 128) | (np.abs(hit - 2000) <= 128))
    with open_recording(tmp_path / "chunk_after_data.wav") as rec:
        assert rec.n_samples == 4000
    with open_recording(tmp_path / "wrapped_size.wav") as rec:
        assert rec.n_samples == 4000
    with open_recording(tmp_path / "zero_size.wav") as rec:
        assert rec.n_samples == 4000 and "0 bytes" in rec.warnings[0]
    with open_recording(tmp_path / "past_end.sigmf-meta") as rec:
        assert rec.annotations == [] and any("past the" in w for w in rec.warnings)


@pytest.mark.parametrize("argv,code", [
    (["info", "{d}/truncated_header.wav"], 2),
    (["spectrogram", "{d}/cut.cf32", "--sample-rate", "1e6", "-o", "{d}/x.h5"], 2),
    (["info", "{d}/nan.wav"], 0),
])
def test_a_few_cases_in_a_fresh_interpreter(tmp_path, argv, code):
    build_corpus(tmp_path)
    res = subprocess.run([sys.executable, "-m", "specscope.app",
                          *[a.format(d=tmp_path) for a in argv]],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == code, res.stderr
    if code == 2:
        assert len(res.stderr.splitlines()) == 1 and "Traceback" not in res.stderr


# -- fuzz ---------------------------------------------------------------------------------

def _seeds(d: Path) -> list[tuple[Path, dict]]:
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((300, 2)) * 0.3).astype(np.float32)
    out = []
    for name, sub in (("a.wav", "PCM_16"), ("b.wav", "FLOAT")):
        soundfile.write(str(d / name), x, FS, subtype=sub)
        out.append((d / name, {}))
    soundfile.write(str(d / "c.flac"), x, FS, subtype="PCM_16")
    out.append((d / "c.flac", {}))
    with h5py.File(d / "d.h5", "w") as f:
        f.create_dataset("sig", data=x, chunks=(100, 2), compression="gzip").attrs[
            "sample_rate"] = 100.0
    out.append((d / "d.h5", {}))
    np.save(d / "e.npy", x)
    out.append((d / "e.npy", {"sample_rate": 100}))
    iq = x.view(np.complex64)
    meta = _sigmf(d, "f", iq.tobytes(), {"core:frequency": None},
                  captures=[{"core:sample_start": 0, "core:frequency": 1e8}],
                  annotations=[{"core:sample_start": 5, "core:sample_count": 10}])
    out.append((meta, {}))
    import scipy.io
    scipy.io.savemat(d / "g.mat", {"sig": x, "fs": 100.0})
    out.append((d / "g.mat", {}))
    return out


def _mutate(data: bytes, r: random.Random) -> bytes:
    b = bytearray(data)
    kind = r.randrange(4)
    if kind == 0 or not b:  # flip bytes, mostly in the header
        for _ in range(r.randint(1, 8)):
            if b:
                i = r.randrange(min(len(b), 256)) if r.random() < 0.7 else r.randrange(len(b))
                b[i] = r.randrange(256)
    elif kind == 1:  # truncate
        del b[r.randrange(len(b)):]
    elif kind == 2:  # insert junk
        i = r.randrange(len(b) + 1)
        b[i:i] = bytes(r.randrange(256) for _ in range(r.randint(1, 16)))
    else:  # overwrite a 4-byte field with an extreme value
        i = r.randrange(max(1, min(len(b), 128) - 4))
        b[i:i + 4] = struct.pack("<I", r.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000]))
    return bytes(b)


def test_mutation_fuzz_opens_or_raises_specscope_error(tmp_path):
    seeds = _seeds(tmp_path)
    r = random.Random(1234)
    work = tmp_path / "fuzz"
    work.mkdir()
    unexpected = []
    for i in range(200):
        src, opts = seeds[i % len(seeds)]
        target = src
        if src.name.endswith(".sigmf-meta") and r.random() < 0.5:
            target = src.with_name(src.name.replace("-meta", "-data"))
        folder = work / str(i)
        folder.mkdir()
        for sib in src.parent.glob(src.name.split(".")[0] + ".*"):
            if sib.is_file():
                (folder / sib.name).write_bytes(sib.read_bytes())
        victim = folder / target.name
        victim.write_bytes(_mutate(target.read_bytes(), r))
        try:
            with open_recording(folder / src.name, **opts) as rec:
                rec.info()
                json.dumps(rec.info(), default=str)
                y = rec.read(0, min(rec.n_samples, 10_000))
                assert y.shape[0] == min(rec.n_samples, 10_000)
                if rec.n_samples > 10:
                    rec.read(rec.n_samples - 10, None)
        except SpecscopeError as exc:
            msg = str(exc)
            if not msg or "\n" in msg:
                unexpected.append(f"{i} {victim.name}: message not one line: {msg!r}")
        except Exception as exc:  # noqa: BLE001 - what the test looks for
            unexpected.append(f"{i} {victim.name}: {type(exc).__name__}: {exc}")
    assert not unexpected, "\n".join(unexpected[:20])
    # a few of the damaged files through the CLI, each in its own process
    picks = [work / str(i) / seeds[i % len(seeds)][0].name for i in range(0, 200, 23)]
    jobs = [{"argv": ["info", str(p), *(["--sample-rate", "100"] if p.suffix == ".npy"
                                         else [])],
             "out": f"{p}.stdout", "err": f"{p}.stderr", "timeout": 20} for p in picks]
    res = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(jobs),
                         capture_output=True, text=True, timeout=120, check=False)
    for p, code in zip(picks, json.loads(res.stdout), strict=True):
        err = Path(f"{p}.stderr").read_text()
        assert code in (0, 2), (p, code, err)
        assert "Traceback" not in err and (code == 0 or len(err.splitlines()) == 1), err
