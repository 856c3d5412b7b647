"""An empty path is no recording: refused in one line, never taken for the working folder
(which would open it, and every folder below it, as a deployment)."""

from __future__ import annotations

import pytest
from specscope.app.cli import main
from specscope.compute.errors import InputError
from specscope.compute.io import open_recording


@pytest.mark.parametrize("path", ["", "  ", b""])
def test_open_recording_refuses_an_empty_path(path):
    with pytest.raises(InputError, match="is empty; give a recording's file"):
        open_recording(path)


@pytest.mark.parametrize("command", [["info"], ["levels", "-o", "x.nc"], ["track", "pitch"]])
def test_commands_refuse_it_in_one_line(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = [*command, ""] if command[0] != "track" else ["track", "pitch", "", "-o", "x.csv"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "is empty" in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
