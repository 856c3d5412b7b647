"""Every file a command reads is an input, and no writer writes over one.

A SigMF recording is two files; an HDF5 file may link others; a pipeline, a filter spec
and a session are inputs too.  Each command line below reads one of them and names
another of its files as the output: it must exit 2 with one line naming the input, and
leave every input byte for byte as it was.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from specscope.compute.files import (
    OutputIsInputError,
    atomic_write_text,
    input_files,
    input_scope,
    note_inputs,
    refuse_overwriting_inputs,
)

ROOT = Path(__file__).resolve().parents[2]
SCENE = ROOT / "assets" / "examples" / "scene.wav"


def _cli(*args, cwd):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SPECSCOPE_AUDIO_OUTPUT="fake")
    return subprocess.run([sys.executable, "-m", "specscope.app", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def sigmf_pair(tmp_path_factory):
    """``rec.sigmf-meta`` + ``rec.sigmf-data`` exported from the example, and a pipeline."""
    folder = tmp_path_factory.mktemp("pair")
    r = _cli("export", SCENE, "--stop", 2, "-o", "rec.sigmf-meta", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert (folder / "rec.sigmf-data").stat().st_size == 2 * 48000 * 4
    r = _cli("filter", "design", "--design", "butter", "--btype", "lowpass", "--order", 4,
             "--cutoff", 3000, "--fs", 48000, "-o", "p.json", cwd=folder)
    assert r.returncode == 0, r.stderr
    pipeline = {"specscope": "pipeline/1", "name": "low-pass",
                "steps": [{"op": "filter", "params": {"design": "butter", "btype": "lowpass",
                                                      "order": 4, "cutoff": 3000.0}}]}
    (folder / "pipe.json").write_text(json.dumps(pipeline))
    return folder


COMMANDS = {
    "annotations convert into the data file":
        ("annotations", "convert", "rec.sigmf-meta", "rec.sigmf-data", "--to", "csv"),
    "filter notch into the data file":
        ("filter", "notch", "rec.sigmf-meta", "--near", 50, "-o", "rec.sigmf-data"),
    "filter apply into the data file":
        ("filter", "apply", "p.json", "rec.sigmf-meta", "-o", "rec.sigmf-data"),
    "play into the data file":
        ("play", "rec.sigmf-meta", "--stop", 1, "-o", "rec.sigmf-data"),
    "export into the meta file from the data file":
        ("export", "rec.sigmf-data", "-o", "rec.sigmf-meta.wav", "--stop", 1),
    "track into the data file":
        ("track", "intensity", "rec.sigmf-meta", "-o", "rec.sigmf-data"),
    "live records over its pipeline":
        ("live", "--no-gui", "--source", "generator:chirp", "--duration", 0.2,
         "--pipeline", "pipe.json", "--record", "pipe.json"),
}


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_command_refuses_to_write_over_a_file_it_reads(sigmf_pair, argv):
    before = _digests(sigmf_pair)
    r = _cli(*argv, cwd=sigmf_pair)
    after = _digests(sigmf_pair)
    if argv[0] == "export":  # a new file beside the pair is no input: allowed
        after.pop("rec.sigmf-meta.wav", None)
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2, (r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "input" in lines[0], r.stderr
        assert "Traceback" not in r.stderr
    assert after == before, "an input changed"


def test_a_session_is_not_written_over_its_recordings_data(sigmf_pair):
    from specscope.app.session import write_session

    data = sigmf_pair / "rec.sigmf-data"
    before = data.read_bytes()
    with pytest.raises(OutputIsInputError, match="rec.sigmf-data"):
        write_session(data, {"specscope": "session/1",
                             "file": str(sigmf_pair / "rec.sigmf-meta")})
    assert data.read_bytes() == before


def test_companions_of_an_input(tmp_path):
    assert [p.name for p in input_files(tmp_path / "a.sigmf-data")] == \
        ["a.sigmf-data", "a.sigmf-meta"]
    assert input_files("https://example.org/a.wav") == []
    with h5py.File(tmp_path / "target.h5", "w") as f:
        f["x"] = np.arange(4.0)
    np.arange(8, dtype="<f4").tofile(tmp_path / "samples.raw")
    with h5py.File(tmp_path / "main.h5", "w") as f:
        f["linked"] = h5py.ExternalLink("target.h5", "/x")
        f.create_dataset("ext", shape=(8,), dtype="<f4", external=[("samples.raw", 0, 32)])
    names = [p.name for p in input_files(f"{tmp_path / 'main.h5'}:/linked")]
    assert names == ["main.h5", "target.h5", "samples.raw"]
    for target in ("target.h5", "samples.raw"):
        with pytest.raises(OutputIsInputError, match=target):
            refuse_overwriting_inputs([tmp_path / target], [tmp_path / "main.h5"])


def test_a_link_to_the_other_half_is_refused(tmp_path):
    (tmp_path / "r.sigmf-meta").write_text("{}")
    (tmp_path / "r.sigmf-data").write_bytes(b"\0" * 8)
    (tmp_path / "alias.bin").symlink_to(tmp_path / "r.sigmf-data")
    os.link(tmp_path / "r.sigmf-data", tmp_path / "hard.bin")
    for out in ("alias.bin", "hard.bin"):
        with pytest.raises(OutputIsInputError):
            refuse_overwriting_inputs([tmp_path / out], [tmp_path / "r.sigmf-meta"])


def test_inputs_noted_in_a_scope_are_refused_to_every_writer(tmp_path):
    read = tmp_path / "read.json"
    read.write_text("{}")
    atomic_write_text(read, "[]")  # outside a scope nothing is noted
    with input_scope():
        note_inputs(read)
        with pytest.raises(OutputIsInputError, match="read.json"):
            atomic_write_text(read, "lost")
        atomic_write_text(tmp_path / "other.json", "{}")  # any other file is written
        atomic_write_text(read, "updated", updates_input=True)  # on purpose
    assert read.read_text() == "updated"
    atomic_write_text(read, "[]")  # the scope ended


# ------------------------------------------------------------------ every writer, found

#: places that write a file without :func:`atomic_file` (or ``publish_together``, its
#: form for several files) yielding its name, and why that is safe; a new writer must go
#: through them or be added here with its reason
OTHER_WRITERS = {
    "compute/files.py:atomic_file": "the one place: publishes the temporary file",
    "compute/batch/process.py:process_file": "moves a part written by atomic_file in a private "
                                     "folder, after refuse_overwriting_inputs",
    "compute/output/range.py:_write_audio": "writes the temporary file of its caller's "
                                            "atomic_file or publish_together",
    "compute/batch/rerun.py:rerun": "moves a rerun's output, after refuse_overwriting_inputs",
    "compute/batch/cluster.py:install_plugin_folders": "a worker's private plugin folder",
    "compute/batch/fetch.py:workers_see": "a probe file with a random name",
    "compute/filters/formats.py:_to_npz": "an in-memory buffer, written by atomic_write_bytes",
    "compute/levels/run.py:levels_task": "an in-memory buffer, written by atomic_write_bytes "
                                         "into the user cache",
    "compute/operators/autotune.py:_save": "the user cache's wisdom file",
    "compute/live/history.py:History._spill_loop": "the session's private spill folder",
    "compute/live/recorder.py:LiveRecorder.__init__": "a temporary file, published by "
                                                      "_publish after its first flush",
    "compute/live/recorder.py:LiveRecorder._publish": "refuses its inputs when it starts",
    "compute/publish.py:settle": "publishes files written by atomic_file's rules",
    "compute/publish.py:_seal": "the lock and seal files of a pair being published",
    "compute/publish.py:publish_together": "publishes a pair of temporary files as one",
    "app/desktop/journey_report.py:JourneyReport.write": "a test harness's report file",
    "app/desktop/unsaved.py:UnsavedWork.autosave": "the user state folder's autosave",
}

_WRITE_MODES = set("wax+")


def _mode(call, pos):
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return kw.value.value
    if len(call.args) > pos and isinstance(call.args[pos], ast.Constant):
        return call.args[pos].value
    return None


def _unwrapped(node):
    """``tmp`` out of ``os.fsencode(tmp)``, ``str(tmp)``, ``Path(tmp)``."""
    while isinstance(node, ast.Call) and ast.unparse(node.func) in (
            "os.fsencode", "os.fspath", "str", "Path") and node.args:
        node = node.args[0]
    return node


def _written(call):
    """The expression a call writes to, when it writes a file; else None."""
    target = _target(call)
    return None if target is None else _unwrapped(target)


def _target(call):
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    base = ast.unparse(f.value) if isinstance(f, ast.Attribute) else ""
    first = call.args[0] if call.args else None
    if name == "open" and base in ("", "io", "builtins"):
        mode = _mode(call, 1)
        return first if isinstance(mode, str) and set(mode) & _WRITE_MODES else None
    if name == "open":
        mode = _mode(call, 0)
        return f.value if isinstance(mode, str) and set(mode) & _WRITE_MODES else None
    if (name == "File" and "h5py" in base) or name == "SoundFile":
        mode = _mode(call, 1)
        return first if isinstance(mode, str) and mode != "r" else None
    if name in ("write_text", "write_bytes", "tofile"):
        return f.value
    if (name in ("save", "savez", "savez_compressed") and base in ("np", "numpy")) or \
            (name == "write" and base == "soundfile"):
        return first
    if (name in ("replace", "rename") and base == "os") or \
            (name in ("move", "copy", "copy2", "copyfile") and base == "shutil"):
        return call.args[1] if len(call.args) > 1 else call
    return None


def _writers() -> dict[str, list[str]]:
    """Every place in the code that writes a file not yielded by atomic_file."""
    found: dict[str, list[str]] = {}
    for folder in ("compute", "app", "widgets", "plugins"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text())
            module = path.relative_to(ROOT)

            def walk(node, where, safe, module=module):
                for child in ast.iter_child_nodes(node):
                    here, names = where, safe
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        here = f"{where}.{child.name}" if where else child.name
                        names = set()
                    if isinstance(child, ast.With):
                        names = set(safe)
                        for item in child.items:
                            call, bound = item.context_expr, item.optional_vars
                            if isinstance(call, ast.Call) and ast.unparse(call.func).endswith(
                                    ("atomic_file", "publish_together")):
                                targets = bound.elts if isinstance(bound, ast.Tuple) else [bound]
                                names.update(t.id for t in targets if isinstance(t, ast.Name))
                    if isinstance(child, ast.Call):
                        target = _written(child)
                        if target is not None and not (isinstance(target, ast.Name)
                                                       and target.id in names):
                            key = f"{module}:{here}"
                            found.setdefault(key, []).append(ast.unparse(child)[:60])
                    walk(child, here, names, module)

            walk(tree, "", set())
    return found


def test_every_writer_goes_through_the_input_check():
    found = _writers()
    unknown = {k: v for k, v in found.items() if k not in OTHER_WRITERS}
    assert not unknown, ("files written without atomic_file (so without the input check); "
                         "write through compute.files.atomic_file, or add the place to "
                         f"OTHER_WRITERS with why it is safe: {unknown}")
    gone = sorted(set(OTHER_WRITERS) - set(found))
    assert not gone, f"OTHER_WRITERS names places that no longer write: {gone}"


def test_the_writer_scan_sees_a_writer():
    tree = ast.parse("def f(p):\n    with open(p, 'wb') as fh:\n        fh.write(b'')\n")
    call = tree.body[0].body[0].items[0].context_expr
    assert isinstance(_written(call), ast.Name)
    tree = ast.parse("h5py.File(p, 'r')")
    assert _written(tree.body[0].value) is None
