"""The core's messages name parameters and functions, never a command of the CLI or a flag.

The same error reaches the notebook, the desktop app and the CLI; the CLI words
flags itself (``OptionError.text(flag)``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = re.compile(r"specscope (ops|run|detect|export|info|index|levels|rerun|filter|"
                      r"plugins|open|live|edit|track)\b|(?<![\w-])--[a-z][a-z-]+")


def _raised_texts(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found.append((node.lineno, part.value))
    return found


def test_no_error_of_the_core_names_a_command_or_a_flag():
    bad = [f"{p.relative_to(ROOT)}:{line}: {text!r}"
           for p in sorted((ROOT / "compute").rglob("*.py"))
           for line, text in _raised_texts(p) if COMMANDS.search(text)]
    assert bad == []


def test_the_check_finds_a_command_in_a_message(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    raise ValueError(f'x={1}: see \\'specscope ops\\'')\n"
                   "def g():\n    raise ValueError('give --sample-rate')\n")
    assert {line for line, t in _raised_texts(src) if COMMANDS.search(t)} == {2, 4}
