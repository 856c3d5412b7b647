"""Errors cross layers as types: the core names its keywords, each front-end its own words.

The core raises :class:`MissingOption` / :class:`BadOption` with their fields; the CLI
prints the option as its flag, the GUI chooses a dialog from the type and the fields
(a dataset chooser, the raw-format dialog); no code anywhere reads an error's text.
"""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io
from _gui import TIMEOUT_MS, wait_until
from specscope.app.cli import main
from specscope.app.cli.common import error_text
from specscope.compute.errors import BadOption, InputError, MissingOption, OptionError
from specscope.compute.io import open_recording

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def sources(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py")
                  if "__pycache__" not in p.parts)


# -- the core's errors ----------------------------------------------------------------------

def test_missing_option_names_the_keyword_and_carries_the_choices():
    e = MissingOption("dataset", "holds 3 datasets", path="/d/rec.h5", choices=["/a", "/b"],
                      labels=["/a (100 float64)", "/b (100x2 int16)"], also="rec.h5:NAME",
                      action="pick one with")
    assert isinstance(e, InputError) and isinstance(e, ValueError)
    assert str(e) == ("/d/rec.h5: holds 3 datasets; pick one with dataset= or rec.h5:NAME, "
                      "one of: /a (100 float64), /b (100x2 int16)")
    assert e.text("--dataset", "NAME") == ("/d/rec.h5: holds 3 datasets; pick one with "
                                           "--dataset NAME or rec.h5:NAME, one of: "
                                           "/a (100 float64), /b (100x2 int16)")
    assert (e.option, e.path, e.choices) == ("dataset", "/d/rec.h5", ("/a", "/b"))
    many = MissingOption("dataset", "holds 30 datasets", choices=[f"/d{i}" for i in range(30)])
    assert str(many).endswith("/d11 and 18 more") and len(many.choices) == 30


def test_option_errors_survive_pickling_with_their_fields():
    # a batch task's error crosses a process (or a Dask worker) boundary
    for e in (MissingOption("sample_rate", "raw samples carry no sample rate", path="a.iq",
                            example="2.4M"),
              BadOption("dask", "tcp://10.0.0.1:8786", "cannot reach the scheduler")):
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e)
        assert back.__dict__ == e.__dict__
        assert back.text("--flag", "X") == e.text("--flag", "X")


def test_bad_option_says_the_value_and_what_was_expected():
    e = BadOption("plugins", "/x/nowhere", "no such folder", label="plugin folder",
                  expected="a folder of plugin modules or packages")
    assert str(e) == ("plugin folder /x/nowhere: no such folder (a folder of plugin modules "
                      "or packages was expected)")
    assert error_text(e).startswith("--plugins /x/nowhere: no such folder")
    e = BadOption("dask", "tcp://h:1\nx", "the scheduler has no workers")
    assert str(e) == "dask='tcp://h:1\\nx': the scheduler has no workers"
    assert error_text(e) == "--dask tcp://h:1 x: the scheduler has no workers"


def test_readers_raise_missing_option_with_the_candidates(tmp_path):
    raw = tmp_path / "capture.cf32"
    raw.write_bytes(bytes(80))
    with pytest.raises(MissingOption) as e:
        open_recording(raw)
    assert (e.value.option, e.value.path, e.value.choices) == ("sample_rate", str(raw), ())
    mat = tmp_path / "two.mat"
    scipy.io.savemat(mat, {"x": np.ones((50, 2)), "z": np.arange(40.0), "fs": 100.0})
    with pytest.raises(MissingOption) as e:
        open_recording(mat)
    assert e.value.option == "variable" and sorted(e.value.choices) == ["x", "z"]
    assert sorted(e.value.labels) == ["x (50x2 double)", "z (1x40 double)"]
    with open_recording(mat, **{e.value.option: "z"}) as rec:  # a choice opens as given
        assert rec.n_samples == 40 and rec.sample_rate == 100


# -- the command line says flags ------------------------------------------------------------

def test_cli_names_the_flag_of_a_missing_option(tmp_path, capsys):
    raw = tmp_path / "capture.iq"
    raw.write_bytes(bytes(80))
    assert main(["info", str(raw)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"specscope: error: {raw}: the extension .iq does not say how "
                          "samples are stored; give --dtype TYPE (e.g. cf32")
    assert "dtype=" not in err
    assert main(["spectrogram", str(raw), "-o", str(tmp_path / "o.h5"), "--dtype", "cf32"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"specscope: error: {raw}: raw samples carry no sample rate; give "
                           "--sample-rate HZ (e.g. 2.4M)")
    mat = tmp_path / "two.mat"
    scipy.io.savemat(mat, {"x": np.ones((50, 2)), "z": np.arange(40.0), "fs": 100.0})
    assert main(["info", str(mat)]) == 2
    err = capsys.readouterr().err
    assert "holds 2 signals; pick one with --dataset NAME or two.mat:NAME, one of: x (50x2 " \
           "double), z (1x40 double)" in err
    assert "variable=" not in err


def test_every_reader_option_has_the_flag_the_cli_defines():
    import argparse

    from specscope.app.cli import common

    ap = argparse.ArgumentParser()
    common.add_plugin_option(ap)
    common.add_recording_options(ap)
    given = ap.parse_args(["--format", "raw", "--sample-rate", "1", "--dtype", "cf32",
                           "--center-freq", "2", "--dataset", "/a", "--offset", "3",
                           "--raw-channels", "2"])
    keywords = set(common.recording_options(given))
    assert keywords == {"format", "sample_rate", "dtype", "center_frequency", "dataset",
                        "offset", "n_channels"}
    help_text = ap.format_help()
    for keyword in keywords | {"plugins", "variable"}:
        flag, metavar = common.OPTION_FLAGS[keyword]
        assert f"{flag} {metavar}" in help_text, keyword


# -- the GUI branches on the type -----------------------------------------------------------

def _answer_modal(kind, answer):
    """Answer the next modal dialog of ``kind`` when it opens; returns what it saw."""
    from PyQt6.QtCore import QTimer
    from PyQt6.QtWidgets import QApplication

    seen: list = []

    def poll() -> None:
        w = QApplication.activeModalWidget()
        if isinstance(w, kind):
            seen.append(answer(w))
        elif not seen:
            QTimer.singleShot(10, poll)

    QTimer.singleShot(0, poll)
    return seen


def _pick(dialog, wanted: str) -> list[str]:
    items = dialog.comboBoxItems()
    dialog.setTextValue(next(i for i in items if i.startswith(wanted)))
    dialog.accept()
    return items


@pytest.mark.parametrize("window", [{"interactive": True}], indirect=True)
def test_two_variable_mat_file_opens_the_chooser(qtbot, window, tmp_path):
    from PyQt6.QtWidgets import QInputDialog

    path = tmp_path / "two.mat"
    x = np.sin(np.arange(4000) / 7.0)
    z = np.cos(np.arange(3000) / 3.0)
    scipy.io.savemat(path, {"x": x, "z": z, "fs": 8000.0})
    seen = _answer_modal(QInputDialog, lambda d: _pick(d, "z"))
    window.open_path(path)
    wait_until(lambda: window.document is not None and window.last_image is not None,
               TIMEOUT_MS, "the chosen variable opened")
    assert seen == [["x (1x4000 double)", "z (1x3000 double)"]]
    rec = window.document.recording
    assert (rec.variable, rec.n_samples, rec.sample_rate) == ("z", 3000, 8000)
    np.testing.assert_allclose(rec.read()[:, 0], z, rtol=1e-6)  # read as float32
    assert window.last_error is None


@pytest.mark.parametrize("window", [{"interactive": True}], indirect=True)
def test_hdf5_file_with_several_datasets_opens_the_chooser(qtbot, window, tmp_path):
    from PyQt6.QtWidgets import QInputDialog

    path = tmp_path / "multi.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.ones(2000)).attrs["fs"] = 1000.0
        f.create_dataset("grp/b", data=np.arange(6000.0).reshape(3000, 2)).attrs["fs"] = 500.0
    seen = _answer_modal(QInputDialog, lambda d: _pick(d, "/grp/b"))
    window.open_path(path)
    wait_until(lambda: window.document is not None and window.last_image is not None,
               TIMEOUT_MS, "the chosen dataset opened")
    assert seen == [["/a (2000 float64)", "/grp/b (3000x2 float64)"]]
    rec = window.document.recording
    assert (rec.dataset, rec.n_channels, rec.sample_rate) == ("/grp/b", 2, 500)


@pytest.mark.parametrize("window", [{"interactive": True}], indirect=True)
def test_raw_file_without_a_rate_opens_the_format_dialog(qtbot, window, tmp_path):
    from PyQt6.QtWidgets import QLabel
    from specscope.widgets.recording_options import RecordingOptionsDialog

    path = tmp_path / "capture.cf32"
    iq = (np.exp(2j * np.pi * 0.05 * np.arange(20000))).astype(np.complex64)
    path.write_bytes(iq.tobytes())

    def answer(dlg):
        note = " ".join(w.text() for w in dlg.findChildren(QLabel))
        dlg.sample_rate.setText("2.4M")
        dlg.accept()
        return note

    seen = _answer_modal(RecordingOptionsDialog, answer)
    window.open_path(path)
    wait_until(lambda: window.document is not None and window.last_image is not None,
               TIMEOUT_MS, "the raw file opened with the rate given")
    assert "raw samples carry no sample rate; give the sample rate (e.g. 2.4M)" in seen[0]
    rec = window.document.recording
    assert rec.sample_rate == 2.4e6 and rec.is_complex and rec.n_samples == 20000


def test_a_missing_option_without_dialogs_is_shown_as_its_line(qtbot, window, tmp_path):
    path = tmp_path / "two.mat"
    scipy.io.savemat(path, {"x": np.ones(100), "z": np.ones(200), "fs": 10.0})
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as b:
        window.open_path(path)
    assert b.args[0] == (f"{path}: holds 2 signals; pick one with variable= or two.mat:NAME, "
                         "one of: x (1x100 double), z (1x200 double)")
    assert window.document is None


# -- no code reads an error's text; no core message names a flag ----------------------------

_TEXT_CALLS = {"startswith", "endswith", "find", "rfind", "search", "match", "fullmatch",
               "findall", "sub"}


#: an exception's fields: comparing them is branching on the type's data, not its text
_FIELDS = {"option", "choices", "labels", "path", "value", "errno", "is_bug", "field",
           "status", "stated"}


def _names(node: ast.AST) -> set[str]:
    """The names in ``node``, less those only read for a field (``exc.option``,
    ``getattr(exc, "status", None)``)."""
    owners = [n.value for n in ast.walk(node) if isinstance(n, ast.Attribute)
              and n.attr in _FIELDS]
    owners += [n.args[0] for n in ast.walk(node) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Name) and n.func.id == "getattr" and len(n.args) >= 2
               and isinstance(n.args[1], ast.Constant) and n.args[1].value in _FIELDS]
    skip = {id(n) for owner in owners for n in ast.walk(owner)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in skip}


def _reads_text(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` looks into the text of a tainted name (``in``, startswith, re)."""
    if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn))
                                             for o in node.ops):
        return bool(_names(node) & tainted)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _TEXT_CALLS:
            inside = _names(f.value) | {n for a in node.args for n in _names(a)}
            return bool(inside & tainted)
    return False


_ERROR_TYPES = {"JobError", "SpecscopeError", "InputError", "RecordingError", "OptionError",
                "MissingOption", "BadOption", "BaseException", "Exception"}


def _scope_reads(body: list[ast.stmt], tainted: set[str]) -> list[int]:
    module = ast.Module(body=body, type_ignores=[])
    for _ in range(3):  # names computed from the error, then from those
        for sub in ast.walk(module):
            if isinstance(sub, ast.Assign) and _names(sub.value) & tainted:
                tainted |= {t.id for t in sub.targets if isinstance(t, ast.Name)}
    return [sub.lineno for sub in ast.walk(module) if _reads_text(sub, tainted)]


def _text_matches(tree: ast.AST) -> list[int]:
    """Lines that look into an error's text: inside ``except ... as exc`` (exc and names
    computed from it), and in functions given an error (a JobError, ``message``)."""
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.name:
            bad += _scope_reads(node.body, {node.name})
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            args = node.args.args + node.args.kwonlyargs
            errors = {a.arg for a in args if isinstance(a.annotation, ast.Name)
                      and a.annotation.id in _ERROR_TYPES}
            errors |= {a.arg for a in args if a.arg in ("error", "exc", "err")}
            body = node.body if isinstance(node.body, list) else [ast.Expr(node.body)]
            if errors:
                bad += _scope_reads(body, errors)
    return sorted(set(bad))


#: none left: operator errors carry the operator and the bare message as fields
#: (compute.errors.operator_error / operator_detail)
KNOWN: set[tuple[str, str]] = set()


def _function_at(tree: ast.AST, line: int) -> str:
    inside = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(inside, key=lambda n: n.lineno).name if inside else ""


def test_no_code_matches_error_text():
    found = set()
    for path in sources("app", "widgets", "compute", "plugins"):
        tree = ast.parse(path.read_text(), str(path))
        for line in _text_matches(tree):
            found.add((str(path.relative_to(ROOT)), _function_at(tree, line)))
    assert found <= KNOWN, "code that reads an error's text:\n" + "\n".join(
        f"{f}: {fn}()" for f, fn in sorted(found - KNOWN))
    old = ("pick one with dataset=", "pick one with variable=", '"sample_rate" in message',
           '"dtype" in message', "in str(exc)", "in str(e)")
    for path in sources("app", "widgets", "compute"):
        text = path.read_text()
        assert not [o for o in old if o in text], path


def test_the_text_scan_finds_what_it_looks_for():
    caught = ast.parse('def f(error):\n    if "pick one with dataset=" in error.message:\n'
                       '        pass\n'
                       'try:\n    pass\nexcept OSError as exc:\n    msg = str(exc).lower()\n'
                       '    if "locking" in msg:\n        pass\n'
                       '    if msg.startswith("x"):\n        pass\n'
                       'def g(error: JobError):\n    text = error.message\n'
                       '    return re.search("dtype", text)\n')
    assert _text_matches(caught) == [2, 8, 10, 14]
    fine = ast.parse('def f(error: JobError):\n    exc = error.exception\n'
                     '    if exc.option in ("dataset", "variable") and exc.choices:\n'
                     '        return exc.choices.index("a")\n'
                     'try:\n    pass\nexcept OSError as exc:\n'
                     '    if exc.errno in (2, 13):\n        pass\n'
                     '    status = getattr(exc.__cause__, "status", None)\n'
                     '    if status in (404, 410):\n        pass\n')
    assert _text_matches(fine) == []


def test_no_core_message_names_a_command_line_flag():
    found = []
    for path in sources("compute", "plugins"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                for sub in ast.walk(node.exc):
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str) \
                            and FLAG.search(sub.value):
                        found.append(f"{path.relative_to(ROOT)}:{sub.lineno}: {sub.value!r}")
    assert found == [], "core messages that name a CLI flag:\n" + "\n".join(found)


def test_option_errors_are_input_errors_the_cli_exits_2_on(capsys, tmp_path):
    assert issubclass(OptionError, InputError)
    assert main(["--plugins", str(tmp_path / "nowhere"), "plugins", "list"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"specscope: error: --plugins {tmp_path / 'nowhere'}: no such folder (a folder of "
        "plugin modules or packages was expected)")


def test_operator_errors_carry_the_operator_and_the_bare_message():
    import pickle

    from specscope.compute import operators
    from specscope.compute.errors import operator_detail

    with pytest.raises(InputError) as info:
        operators.call("gain", np.ones(8), factor=-1)
    exc = info.value
    assert (exc.operator, exc.detail) == ("gain", "factor=-1 must be a number >= 0.0")
    assert str(exc) == "gain: factor=-1 must be a number >= 0.0"
    assert operator_detail(exc, "gain") == exc.detail
    assert operator_detail(exc, "clip") == str(exc)  # another operator's: the whole text
    again = pickle.loads(pickle.dumps(exc))  # from a pool or Dask worker
    assert (again.operator, again.detail) == (exc.operator, exc.detail)
    assert operator_detail(InputError("clip: lo=2 must be <= hi=1"), "clip").startswith("clip:")
