"""Nothing lost: writers never hurt their inputs, and survive full, read-only and closed disks.

Every writer of the command line is run as a subprocess:

* into outputs that resolve to one of its inputs (the same path, a symbolic
  link, a hard link, the output folder of ``run`` holding the inputs under the
  output names): exit 2, one line naming the output, the input byte for byte;
* into a 4 MiB tmpfs filled to the brim (``ENOSPC``), a read-only bind mount
  (``EROFS``) and a folder without write permission with root's
  ``CAP_DAC_OVERRIDE`` dropped (``EACCES``): exit 2 (1 for ``run``), one line
  naming the file and the cause, no traceback, no temporary file left, the
  previous output byte for byte.

Mounting needs root; those tests are skipped with the reason otherwise.
Temporary files of a SIGKILLed export are removed by the next write to the
folder (the pid and host in their name), FIFOs, devices and sockets are refused
as recordings and as outputs, and file names that are not UTF-8 work.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import _faults
import h5py
import numpy as np
import pytest
import soundfile
from specscope.compute.annotations import Annotation, write_annotations
from specscope.compute.errors import RecordingError
from specscope.compute.files import (
    OutputIsInputError,
    atomic_file,
    clean_stale_partials,
    owner_tag,
    refuse_overwriting_inputs,
    write_failure,
)
from specscope.compute.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "assets" / "pipelines" / "hum_bandpass.json"
FS = 16000
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SETPRIV = shutil.which("setpriv")
CAUSE = {"enospc": "No space left", "erofs": "Read-only", "eacces": "Permission denied"}


def cli(*args: str | os.PathLike[str] | bytes, timeout: float = 120,
        prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [*(prefix or []), sys.executable, "-m", "specscope.app",
            *[a if isinstance(a, bytes) else str(a) for a in args]]
    return subprocess.run(argv, capture_output=True, text=True, errors="replace",
                          timeout=timeout, check=False)


def one_line_error(res: subprocess.CompletedProcess[str], code: int, *names: str) -> str:
    """The single stderr line of a failed command, checked."""
    lines = res.stderr.strip().splitlines()
    assert res.returncode == code, (res.returncode, res.stderr)
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def noise_wav(path: Path, n: int, seed: int = 0) -> Path:
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * 0.1
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), x, FS, subtype="FLOAT")
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# -- one rule: an output never resolves to an input ----------------------------------------


@pytest.fixture
def h5_input(tmp_path) -> Path:
    src = noise_wav(tmp_path / "scene.wav", FS)
    res = cli("export", src, "-o", tmp_path / "d.h5")
    assert res.returncode == 0, res.stderr
    return tmp_path / "d.h5"


def _aliases(target: Path) -> dict[str, Path]:
    """The same file by its path, a relative detour, a symbolic link and a hard link."""
    folder = target.parent
    (folder / "sub").mkdir(exist_ok=True)
    link = folder / "link.h5"
    link.symlink_to(target.name)
    hard = folder / "hard.h5"
    os.link(target, hard)
    return {"same": target, "detour": folder / "sub" / ".." / target.name,
            "symlink": link, "hardlink": hard}


COMMANDS = ["spectrogram", "export", "export-wav", "filter-apply", "annotations", "play"]


@pytest.mark.parametrize(("command", "how"), [
    *[(c, h) for c in COMMANDS for h in ("same", "symlink", "hardlink")],
    ("spectrogram", "detour"), ("export-wav", "detour"), ("run", "same")])
def test_an_output_that_is_an_input_is_refused(tmp_path, h5_input, command, how):
    before = h5_input.read_bytes()
    out = _aliases(h5_input)[how]
    if command == "spectrogram":
        res = cli("spectrogram", h5_input, "-o", out)
    elif command == "export":
        res = cli("export", h5_input, "-o", out)
    elif command == "export-wav":  # the input is a WAV, the output a link to it
        wav = tmp_path / "scene.wav"
        out = {"same": wav, "detour": tmp_path / "sub" / ".." / "scene.wav",
               "symlink": tmp_path / "l.wav", "hardlink": tmp_path / "h.wav"}[how]
        if how == "symlink":
            out.symlink_to(wav)
        elif how == "hardlink":
            os.link(wav, out)
        before, h5_input = wav.read_bytes(), wav
        res = cli("export", wav, "-o", out)
    elif command == "run":  # the input is named like its output, in the output folder
        res = cli("run", PIPELINE, h5_input, "-o", tmp_path)
        out = h5_input
    elif command == "filter-apply":
        res = cli("filter", "apply", PIPELINE, h5_input, "-o", out)
    elif command == "play":
        wav = tmp_path / "scene.wav"
        before, h5_input = wav.read_bytes(), wav
        if how == "symlink":
            out = tmp_path / "pl.wav"
            out.symlink_to(wav)
        else:
            out = wav
        res = cli("play", wav, "-o", out)
    else:
        table = tmp_path / "a.csv"
        write_annotations(table, [Annotation(0.1, 0.2, label="x")], format="csv",
                          sample_rate=FS)
        before, h5_input = table.read_bytes(), table
        out = {"same": table, "detour": tmp_path / "sub" / ".." / "a.csv",
               "symlink": tmp_path / "l.csv", "hardlink": tmp_path / "h.csv"}[how]
        if how == "symlink":
            out.symlink_to(table)
        elif how == "hardlink":
            os.link(table, out)
        res = cli("annotations", "convert", table, out, "--to", "csv")
    line = one_line_error(res, 2, out.name)
    assert "input" in line
    assert h5_input.read_bytes() == before
    assert not [p for p in h5_input.parent.iterdir() if "partial" in p.name]


def test_rerun_and_session_refuse_their_inputs(tmp_path):
    src = noise_wav(tmp_path / "in.wav", FS)
    link = tmp_path / "in.h5"
    link.symlink_to(src)  # a run output whose name resolves to its source
    with pytest.raises(OutputIsInputError, match="in.h5"):
        refuse_overwriting_inputs([link], [src])
    from specscope.app.session import write_session

    before = src.read_bytes()
    with pytest.raises(OutputIsInputError, match="in.wav"):
        write_session(src, {"specscope": "session/1", "file": str(src)})
    assert src.read_bytes() == before
    # an input named FILE.h5:/dataset counts as FILE.h5; a missing output is fine
    with pytest.raises(OutputIsInputError):
        refuse_overwriting_inputs([link], [f"{src}:/signal"])
    refuse_overwriting_inputs([tmp_path / "new.h5", None], [src, None])


def test_annotations_into_their_recording_update_it_but_replacing_is_refused(tmp_path):
    src = noise_wav(tmp_path / "in.wav", FS)
    res = cli("export", src, "-o", tmp_path / "rec.h5")
    assert res.returncode == 0, res.stderr
    table = tmp_path / "a.csv"
    write_annotations(table, [Annotation(0.1, 0.2, label="x")], format="csv", sample_rate=FS)
    rec = tmp_path / "rec.h5"
    with h5py.File(rec, "r") as f:
        signal_before = f["signal"][...]
    # HDF5 keeps the recording and adds the table: an update, allowed
    res = cli("annotations", "convert", table, rec, "--recording", rec)
    assert res.returncode == 0, res.stderr
    with h5py.File(rec, "r") as f:
        np.testing.assert_array_equal(f["signal"][...], signal_before)
        assert "annotations" in f
    before = rec.read_bytes()
    res = cli("annotations", "convert", table, rec, "--recording", rec, "--to", "csv")
    one_line_error(res, 2, "rec.h5")
    assert rec.read_bytes() == before


# -- faults of the file system --------------------------------------------------------------




class Fault:
    """A folder where writes fail for one cause, with a previous output inside."""

    def __init__(self, kind: str, base: Path) -> None:
        self.kind = kind
        self.base = base
        self.folder = base / "m"
        self.folder.mkdir()
        self.mounted: list[Path] = []
        self.prefix: list[str] | None = None
        if kind == "enospc":
            try:
                _faults.mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(self.folder))
            except (subprocess.CalledProcessError, OSError) as exc:
                pytest.skip(f"cannot mount a tmpfs: {exc}")
            self.mounted.append(self.folder)
        elif kind == "erofs":
            self.src = base / "src"
            self.src.mkdir()

    @property
    def where(self) -> Path:
        """The folder to prepare the previous output in."""
        return self.src if self.kind == "erofs" else self.folder

    def apply(self, room: int) -> None:
        if self.kind == "enospc":
            _faults.fill(self.folder, room)
        elif self.kind == "erofs":
            try:
                _faults.mount("--bind", str(self.src), str(self.folder))
                self.mounted.append(self.folder)
                _faults.mount("-o", "remount,ro,bind", str(self.folder))
            except (subprocess.CalledProcessError, OSError) as exc:
                pytest.skip(f"cannot make a read-only bind mount: {exc}")
        else:
            if SETPRIV is None:
                pytest.skip("setpriv (util-linux) is needed to drop CAP_DAC_OVERRIDE")
            for p in [self.folder, *self.folder.rglob("*")]:
                if p.is_dir():
                    p.chmod(0o555)
            self.prefix = [SETPRIV, "--inh-caps=-dac_override,-dac_read_search",
                           "--bounding-set=-dac_override,-dac_read_search"]

    def close(self) -> None:
        for p in reversed(self.mounted):
            _faults.umount(p)
        for p in [self.folder, *self.folder.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)


@pytest.fixture(params=["enospc", "erofs", "eacces"])
def fault(request, tmp_path) -> Iterator[Fault]:
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs / read-only bind mount and dropping capabilities "
                    "need root")
    f = Fault(request.param, tmp_path)
    try:
        yield f
    finally:
        f.close()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("inputs")
    small = noise_wav(d / "small" / "in.wav", FS // 4, seed=1)
    big = noise_wav(d / "big" / "in.wav", 1 << 20, seed=2)  # 4 MiB of float32
    table = d / "big.csv"
    write_annotations(table, [Annotation(i * 1e-3, i * 1e-3 + 5e-4, label=f"call {i}")
                              for i in range(20000)], format="csv", sample_rate=FS)
    small_table = d / "small.csv"
    write_annotations(small_table, [Annotation(0.1, 0.2, label="x")], format="csv",
                      sample_rate=FS)
    spec = d / "spec.json"
    spec.write_text(json.dumps({"design": "butter", "order": 4, "cutoff": 1000.0}))
    return {"small": small, "big": big, "table": table, "small_table": small_table}


#: writer -> (arguments given the input and the folder, exit status of a failure, name in it)
WRITERS: dict[str, tuple[Callable[[dict[str, Path], Path, str], list[object]], int, str]] = {
    "spectrogram": (lambda i, d, k: ["spectrogram", i[k], "-o", d / "s.h5"], 2, "s.h5"),
    "export-h5": (lambda i, d, k: ["export", i[k], "-o", d / "e.h5"], 2, "e.h5"),
    "export-wav": (lambda i, d, k: ["export", i[k], "-o", d / "e.wav"], 2, "e.wav"),
    "export-flac": (lambda i, d, k: ["export", i[k], "-o", d / "e.flac"], 2, "e.flac"),
    "export-sigmf": (lambda i, d, k: ["export", i[k], "-o", d / "e.sigmf-meta"], 2,
                     "e.sigmf"),
    "run": (lambda i, d, k: ["run", "-q", PIPELINE, i[k], "-o", d / "r"], 1, "in.h5"),
    "filter-apply": (lambda i, d, k: ["filter", "apply", PIPELINE, i[k], "-o", d / "f.h5"],
                     2, "f.h5"),
    "play": (lambda i, d, k: ["play", "-q", i[k], "-o", d / "p.wav"], 2, "p.wav"),
    "annotations": (lambda i, d, k: ["annotations", "convert", i["table" if k == "big"
                                                                  else "small_table"],
                                     d / "a.txt", "--to", "audacity"], 2, "a.txt"),
    "coefficients": (lambda i, d, k: ["filter", "design", "--design", "butter", "--fs",
                                      str(FS), "--order", "4", "--cutoff", "1000", "-o",
                                      d / "c.json"], 2, "c.json"),
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_writer_survives_the_fault(fault, inputs, writer):
    args, code, name = WRITERS[writer]
    res = cli(*args(inputs, fault.where, "small"))  # the previous output
    assert res.returncode == 0, res.stderr
    before = snapshot(fault.where)
    assert before
    # room for a few blocks: the writer starts and fails midway (the HDF5 crash)
    fault.apply(room=160 << 10 if writer != "coefficients" else 0)
    res = cli(*args(inputs, fault.folder, "big"), prefix=fault.prefix)
    assert res.returncode not in (-11, -6, 134, 139), res.stderr  # no crash
    line = one_line_error(res, code, name)
    assert CAUSE[fault.kind] in line, line
    after = snapshot(fault.folder)
    after.pop("filler", None)
    assert after == before  # old files byte for byte, no temporary file left


def test_session_survives_a_full_disk(fault, inputs):
    """Sessions are written by the app (no subcommand): the API raises one line."""
    target = fault.where / "s.specscope.json"
    script = ("import sys\nfrom specscope.app.session import write_session\n"
              "from specscope.compute.errors import SpecscopeError\n"
              "try:\n    write_session(sys.argv[1], {'specscope': 'session/1', "
              "'file': None, 'pad': 'x' * (1 << 20)})\n"
              "except SpecscopeError as e:\n    print(e, file=sys.stderr); sys.exit(2)\n")
    target.write_text("{}")
    before = snapshot(fault.where)
    fault.apply(room=64 << 10)
    argv = [*(fault.prefix or []), sys.executable, "-c", script,
            str(fault.folder / target.name)]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    line = one_line_error(res, 2, target.name)
    assert CAUSE[fault.kind] in line
    after = snapshot(fault.folder)
    after.pop("filler", None)
    assert after == before


def test_rerun_survives_the_fault(fault, inputs):
    res = cli("run", "-q", PIPELINE, inputs["small"], "-o", fault.where)
    assert res.returncode == 0, res.stderr
    before = snapshot(fault.where)
    fault.apply(room=0)
    res = cli("rerun", fault.folder / "in.h5", prefix=fault.prefix)
    line = one_line_error(res, 2, "in.h5")
    assert CAUSE[fault.kind] in line
    after = snapshot(fault.folder)
    after.pop("filler", None)
    assert after == before


def test_run_into_a_folder_it_cannot_create(tmp_path, inputs):
    if not IS_ROOT:
        pytest.skip("a read-only bind mount needs root")
    f = Fault("erofs", tmp_path)
    try:
        f.apply(0)
        res = cli("run", PIPELINE, inputs["small"], "-o", f.folder / "new" / "deeper")
        line = one_line_error(res, 2, "new", "cannot create the output folder")
        assert "Read-only" in line
    finally:
        f.close()


def test_write_failure_names_quota_and_keeps_the_old_file(tmp_path):
    """EDQUOT cannot be made without quotas; the same path as ENOSPC, raised by the body."""
    dest = tmp_path / "o.bin"
    dest.write_bytes(b"old")
    with pytest.raises(RecordingError, match=r"o\.bin: cannot write \(Disk quota exceeded\)"), \
            atomic_file(dest) as tmp:
        tmp.write_bytes(b"new")
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
    assert dest.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["o.bin"]
    assert write_failure(dest, ValueError("a bug")) is None  # not the file system's


# -- temporary files of killed writers -------------------------------------------------------


def test_partials_of_a_killed_export_go_at_the_next_write_to_the_folder(tmp_path, inputs):
    big = noise_wav(tmp_path / "long.wav", 24 << 20, seed=3)  # 96 MiB: seconds to export
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, SPECSCOPE_STALE_PARTIAL_S="86400")  # age plays no part
    proc = subprocess.Popen([sys.executable, "-m", "specscope.app", "export", str(big),
                             "-o", str(out / "long.h5")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    partial: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        partial = [p for p in out.iterdir() if p.name.endswith(".partial")]
        if partial and partial[0].stat().st_size > (1 << 20):
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the export ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert len(partial) == 1 and partial[0].exists()
    assert f".{proc.pid}@" in partial[0].name  # the writer's pid and host in the name
    # a temporary file of a live writer of this host and one of another host stay
    alive = out / f".x.h5.{owner_tag()}.abcd1234.partial"
    foreign = out / f".x.h5.{proc.pid}@elsewhere.abcd1234.partial"
    alive.write_bytes(b"x")
    foreign.write_bytes(b"x")
    res = subprocess.run([sys.executable, "-m", "specscope.app", "export", str(inputs["small"]),
                          "-o", str(out / "other.h5")], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert not partial[0].exists()
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["other.h5", alive.name, foreign.name])
    assert clean_stale_partials(out / "x.h5", max_age_s=0) == [foreign]


# -- inputs that are no files; names that are not UTF-8 --------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
@pytest.mark.parametrize("command", ["info", "spectrogram", "export"])
def test_fifos_sockets_and_devices_are_refused(tmp_path, kind, command):
    if kind == "fifo":
        path = tmp_path / "f.wav"
        os.mkfifo(path)
    elif kind == "socket":
        path = tmp_path / "s.wav"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    else:
        path = Path("/dev/zero")
    args = [command, path] + ([] if command == "info" else ["-o", tmp_path / "o.h5"])
    res = cli(*args, timeout=60)  # a FIFO used to block here forever
    line = one_line_error(res, 2, path.name)
    assert {"fifo": "FIFO", "socket": "socket", "device": "device"}[kind] in line
    assert not (tmp_path / "o.h5").exists()


def test_a_fifo_is_refused_as_an_output(tmp_path, inputs):
    fifo = tmp_path / "o.wav"
    os.mkfifo(fifo)
    res = cli("export", inputs["small"], "-o", fifo, timeout=60)
    one_line_error(res, 2, "o.wav", "not a regular file")
    assert Path(fifo).is_fifo()


def test_names_that_are_not_utf8(tmp_path, inputs):
    folder = os.fsencode(tmp_path)
    name = folder + b"/caf\xe9.wav"
    try:
        with open(name, "wb") as fh:
            fh.write(Path(inputs["small"]).read_bytes())
    except (OSError, UnicodeError) as exc:
        pytest.skip(f"the file system refuses a non-UTF-8 name: {exc}")
    x, _ = soundfile.read(str(inputs["small"]), dtype="float32")
    res = cli("info", "--json", name)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["n_samples"] == x.size
    for out in (b"/sp\xe9.h5", b"/ex\xe9.h5", b"/ex\xe9.wav"):
        command = "spectrogram" if out.startswith(b"/sp") else "export"
        res = cli(command, name, "-o", folder + out)
        assert res.returncode == 0, res.stderr
        assert os.path.isfile(folder + out)
    y, fs = soundfile.read(folder + b"/ex\xe9.wav", dtype="float32")
    assert fs == FS
    np.testing.assert_array_equal(y, x)
    with h5py.File(folder + b"/ex\xe9.h5", "r") as f:
        np.testing.assert_array_equal(f["signal"][:, 0], x)
        assert os.fsencode(os.fsdecode(f.attrs["source_path"])).endswith(b"caf\xe9.wav")
    with h5py.File(folder + b"/sp\xe9.h5", "r") as f:
        assert f["spectrogram"].shape[0] > 0
    res = cli("rerun", "--verify", folder + b"/ex\xe9.h5")
    assert res.returncode == 0, res.stderr


def test_process_file_touches_no_other_file_of_its_folder(tmp_path, inputs):
    """``filter apply P.json in.wav -o dir/x.h5`` once wrote dir/in.h5 first."""
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    bystander = out_dir / "in.h5"
    bystander.write_bytes(b"someone else's file")
    res = cli("filter", "apply", PIPELINE, inputs["small"], "-o", out_dir / "x.h5")
    assert res.returncode == 0, res.stderr
    assert bystander.read_bytes() == b"someone else's file"
    assert sorted(p.name for p in out_dir.iterdir()) == ["in.h5", "x.h5"]
    pipe = Pipeline.load(PIPELINE)
    with h5py.File(out_dir / "x.h5", "r") as f:
        assert json.loads(f.attrs["pipeline"])["steps"] == json.loads(pipe.to_json(None))["steps"]
