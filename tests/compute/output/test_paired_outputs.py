"""A SigMF pair is published as one unit: a reader never meets halves of two writes.

* Eight exports race to the same ``race.sigmf-meta`` (ten rounds, seeded stop times),
  with a reader opening the pair all along: each round leaves a consistent pair (the
  metadata's ``specscope:data_bytes`` and ``core:sha512`` are the data file's),
  ``info`` accepts it, and the reader never met a torn pair.
* A pair torn by hand (another export's data put next to the metadata) is refused
  in one line giving both sizes and SHA-512s.
* A writer killed between the moves of its files leaves a journal; the next reader
  finishes the moves and finds the new pair.  One killed before its journal leaves
  the old pair; its staged files go at the next publication.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile
from specscope.app.cli import main
from specscope.compute import open_recording
from specscope.compute.io.sigmf import TornPairError
from specscope.compute.output import export_range
from specscope.compute.publish import JOURNAL, publish_together, reading_together

FS = 16000

# forks one child per job after importing specscope once; the children start together
DRIVER = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from specscope.app.cli import main
    from specscope.compute import open_recording
    from specscope.compute.errors import RecordingError
    from specscope.compute.io.sigmf import TornPairError

    jobs, meta, done = json.loads(sys.argv[1]), sys.argv[2], Path(sys.argv[3])

    def read_all_along():
        opened = 0
        while not done.exists():
            try:
                with open_recording(meta) as rec:
                    rec.read(0, rec.n_samples)
                    opened += 1
            except TornPairError as exc:
                print(exc, file=sys.stderr)
                return 3
            except RecordingError:
                pass  # no pair yet
        Path(str(done) + ".reads").write_text(str(opened))
        return 0

    r, w = os.pipe()
    pids = []
    for job in [*jobs, "reader"]:
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            code = read_all_along() if job == "reader" else main(job)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code or 0)
        pids.append(pid)
    os.close(r)
    os.write(w, b"x" * len(pids))
    os.close(w)
    codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids[:-1]]
    done.touch()
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pids[-1], 0)[1]))
    print(json.dumps(codes))
""")


def scene(path: Path, seconds: float = 6.0) -> Path:
    x = np.random.default_rng(38).standard_normal(int(FS * seconds)).astype(np.float32) * 0.1
    soundfile.write(str(path), x, FS, subtype="FLOAT")
    return path


def pair_state(meta: Path) -> tuple[int, int, str, str]:
    """(bytes recorded, bytes in the data file, SHA-512 recorded, SHA-512 of the data)."""
    glob = json.loads(meta.read_text())["global"]
    data = meta.with_name(meta.name.replace(".sigmf-meta", ".sigmf-data")).read_bytes()
    return (glob.get("specscope:data_bytes", -1), len(data), glob["core:sha512"],
            hashlib.sha512(data).hexdigest())


def test_eight_concurrent_exports_leave_a_consistent_pair(tmp_path, capsys):
    src = scene(tmp_path / "scene.wav")
    out = tmp_path / "out"
    out.mkdir()
    meta = out / "race.sigmf-meta"
    rng = random.Random(38)
    sizes, reads = set(), 0
    for round_ in range(10):
        stops = [rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0]) for _ in range(8)]
        jobs = [["export", str(src), "-o", str(meta), "--stop", str(k), "-q"] for k in stops]
        done = tmp_path / f"done{round_}"
        res = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(jobs), str(meta),
                              str(done)], capture_output=True, text=True, timeout=600,
                             check=False)
        assert res.returncode == 0, res.stderr
        codes = json.loads(res.stdout.splitlines()[-1])
        assert codes == [0] * 9, (round_, codes, res.stderr)
        reads += int(Path(f"{done}.reads").read_text())
        recorded, held, sha_recorded, sha_held = pair_state(meta)
        assert recorded == held and sha_recorded == sha_held, (round_, recorded, held)
        assert held in {round(k * FS) * 4 for k in stops}
        sizes.add(held)
        capsys.readouterr()
        assert main(["info", str(meta)]) == 0
        assert f"n_samples         {held // 4}" in capsys.readouterr().out
        # nothing left behind: the pair and nothing else
        assert sorted(p.name for p in out.iterdir()) == ["race.sigmf-data", "race.sigmf-meta"]
    assert len(sizes) > 1  # the rounds did end on different writers
    assert reads > 0  # the reader did open the pair while it was being replaced


def cli(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("other", [(0, FS), (2 * FS, 4 * FS)], ids=["other-size", "same-size"])
def test_a_pair_torn_by_hand_is_named_in_one_line(tmp_path, other):
    src = scene(tmp_path / "scene.wav")
    export_range(src, tmp_path / "a.sigmf-meta", stop=2 * FS)
    export_range(src, tmp_path / "b.sigmf-meta", start=other[0], stop=other[1])
    (tmp_path / "a.sigmf-data").write_bytes((tmp_path / "b.sigmf-data").read_bytes())
    recorded, held, sha_recorded, sha_held = pair_state(tmp_path / "a.sigmf-meta")
    res = cli("info", tmp_path / "a.sigmf-meta")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0] == (
        f"specscope: error: {tmp_path / 'a.sigmf-meta'} and a.sigmf-data are halves of two "
        f"writes (a torn pair): the metadata records {recorded} bytes, SHA-512 "
        f"{sha_recorded[:16]}...; the data file has {held} bytes, SHA-512 {sha_held[:16]}...")
    with pytest.raises(TornPairError) as e:
        open_recording(tmp_path / "a.sigmf-data")
    assert (e.value.recorded_bytes, e.value.data_bytes) == (recorded, held)
    assert (e.value.recorded_sha512, e.value.data_sha512) == (sha_recorded, sha_held)
    back = pickle.loads(pickle.dumps(e.value))  # errors of batch tasks cross processes
    assert (type(back), str(back), back.data_bytes) == (TornPairError, str(e.value), held)


# a child that publishes a new pair over the old one and is killed as it is about to
# move a file into the place named by the suffix
KILLED = textwrap.dedent("""
    import os, signal, sys
    from specscope.compute import publish
    folder, suffix = sys.argv[1], sys.argv[2]
    real = os.replace
    def replace(a, b):
        if str(b).endswith(suffix):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(a, b)
    os.replace = replace
    with publish.publish_together([folder + "/p.sigmf-data", folder + "/p.sigmf-meta"]) as (d, m):
        d.write_bytes(b"new data")
        m.write_bytes(b"new meta")
""")


@pytest.mark.parametrize(("suffix", "expect"), [(JOURNAL, b"old"), (".sigmf-data", b"new"),
                                                (".sigmf-meta", b"new")],
                         ids=["before-the-journal", "before-the-data", "between-the-two"])
def test_a_writer_killed_at_any_move_leaves_one_whole_pair(tmp_path, suffix, expect):
    data, meta = tmp_path / "p.sigmf-data", tmp_path / "p.sigmf-meta"
    data.write_bytes(b"old data")
    meta.write_bytes(b"old meta")
    res = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path), suffix],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == -signal.SIGKILL, res.stderr
    journaled = suffix != JOURNAL
    assert (tmp_path / JOURNAL).exists() == journaled
    assert data.read_bytes() == (b"new data" if suffix == ".sigmf-meta" else b"old data")
    with reading_together(tmp_path):  # what a reader does before it opens the pair
        pass
    assert (data.read_bytes(), meta.read_bytes()) == (expect + b" data", expect + b" meta")
    assert not (tmp_path / JOURNAL).exists()
    staged = [p.name for p in tmp_path.iterdir() if p.name.endswith(".staged")]
    assert len(staged) == (0 if journaled else 2)
    # the next publication removes what the dead writer left
    with publish_together([data, meta]) as (d, m):
        d.write_bytes(b"third data")
        m.write_bytes(b"third meta")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sigmf-data", "p.sigmf-meta"]
    assert data.read_bytes() == b"third data"


def test_a_failed_body_publishes_nothing(tmp_path):
    data, meta = tmp_path / "p.sigmf-data", tmp_path / "p.sigmf-meta"
    data.write_bytes(b"old data")
    meta.write_bytes(b"old meta")
    os.chmod(meta, 0o640)
    with pytest.raises(RuntimeError), publish_together([data, meta]) as (d, m):
        d.write_bytes(b"new data")
        raise RuntimeError("stop")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sigmf-data", "p.sigmf-meta"]
    assert data.read_bytes() == b"old data"
    with publish_together([data, meta]) as (d, m):
        d.write_bytes(b"new data")
        m.write_bytes(b"new meta")
    assert (os.stat(meta).st_mode & 0o777) == 0o640  # a replaced file keeps its mode


def test_annotations_written_back_after_a_killed_export_keep_the_new_pair(tmp_path):
    """Annotations saved into a pair a killed export left half moved: the export is
    finished first, so the annotations land in its metadata and the pair stays whole."""
    from specscope.compute.annotations import Annotation
    from specscope.compute.annotations.sigmf_meta import read_sigmf, write_sigmf

    src = scene(tmp_path / "in.wav", 2.0)
    meta = tmp_path / "p.sigmf-meta"
    export_range(src, meta, stop=FS)
    old_state = pair_state(meta)
    staged = tmp_path / "new"
    staged.mkdir()
    export_range(src, staged / "p.sigmf-meta", start=FS // 2, stop=2 * FS)
    # the new pair staged, its data moved, the writer killed before the meta's move
    names = [".p.sigmf-data.1@host.ab.staged", ".p.sigmf-meta.1@host.cd.staged"]
    for name, final in zip(names, ["p.sigmf-data", "p.sigmf-meta"], strict=True):
        os.replace(staged / final, tmp_path / name)
    (tmp_path / JOURNAL).write_text(json.dumps(
        {"moves": [[names[0], "p.sigmf-data"], [names[1], "p.sigmf-meta"]]}))
    os.replace(tmp_path / names[0], tmp_path / "p.sigmf-data")
    write_sigmf(meta, [Annotation(start_s=0.1, stop_s=0.2, label="kept")])
    assert not (tmp_path / JOURNAL).exists()
    got, data_bytes, sha, data_sha = pair_state(meta)
    assert (got, sha) == (data_bytes, data_sha) and data_bytes != old_state[1]
    assert [a.label for a in read_sigmf(meta)] == ["kept"]
    with open_recording(meta) as rec:  # a reader accepts the pair
        assert rec.n_samples == FS * 3 // 2


def test_an_audio_export_and_its_labels_publish_as_one_unit(tmp_path):
    """Audio with the labels of its range: both files or neither, never one run's audio
    beside another run's labels."""
    from specscope.compute.annotations import Annotation
    from specscope.compute.annotations.sigmf_meta import write_sigmf
    from specscope.compute.errors import RecordingError

    meta = tmp_path / "rec.sigmf-meta"
    export_range(scene(tmp_path / "in.wav", 2.0), meta)
    write_sigmf(meta, [Annotation(start_s=0.5, stop_s=0.6, label="call")])
    out = tmp_path / "cut.wav"
    (tmp_path / "cut.labels.txt").mkdir()  # the labels cannot be written
    with pytest.raises(RecordingError, match="cut.labels.txt"):
        export_range(meta, out)
    assert not out.exists()  # the audio was not published without its labels
    (tmp_path / "cut.labels.txt").rmdir()
    export_range(meta, out, start=FS // 4)
    assert soundfile.info(str(out)).frames == 2 * FS - FS // 4
    line = (tmp_path / "cut.labels.txt").read_text().split("\t")
    assert [float(line[0]), float(line[1]), line[2].strip()] == [0.25, 0.35, "call"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cut.labels.txt", "cut.wav", "in.wav", "rec.sigmf-data", "rec.sigmf-meta"]
