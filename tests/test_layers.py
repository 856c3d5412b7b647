"""The layering of DESIGN.md: compute is Qt-free; import-linter contracts hold."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_compute_imports_no_qt_in_a_fresh_interpreter():
    code = ("import sys, specscope.compute, specscope.compute.io, specscope.compute.output.spectrogram\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PyQt6', 'PySide6', 'pyqtgraph') or m.startswith(('specscope.app', "
            "'specscope.widgets')))\n"
            "print(','.join(bad))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "", f"compute imported GUI modules: {r.stdout}"


def test_cli_info_imports_no_qt(example_path):
    code = ("import sys, io, contextlib\nfrom specscope.app.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()): main(['info', r'{example_path}'])\n"
            "print('PyQt6' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                              os.environ.get("PATH", "")]))
    assert exe, "lint-imports (import-linter) is not installed: install the dev extra"
    r = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-2000:]
    assert "0 broken" in r.stdout
