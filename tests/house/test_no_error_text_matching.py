"""No code decides by matching the text of an error or a result: errors are typed.

A message is for people and may be reworded; code that looks for a word in it
("GPU:" in a result, "No space" in an error) breaks silently when it is.  The check
reads every module of the package and reports a ``"..." in str(x)`` / ``in x.message``
/ ``str(x).startswith(...)`` where ``x`` is an error or a job result.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("app", "compute", "widgets", "plugins")
#: names that hold an error or a job's result
SUBJECTS = {"exc", "err", "error", "e", "result", "res", "failure", "problem"}


def _subject(node: ast.AST) -> str | None:
    """The error/result a text is taken of: ``str(exc)``, ``exc.message``, ``result.value``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "str" and node.args:
        node = node.args[0]
    while isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id in SUBJECTS:
            return node.value.id
        node = node.value
    if isinstance(node, ast.Name) and node.id in SUBJECTS:
        return None  # a bare name may be a string already; only str()/attributes count
    return None


def matches(tree: ast.AST) -> list[int]:
    """Lines that look for a literal text in an error's or a result's text."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 \
                and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and (_subject(node.comparators[0])
                     or (isinstance(node.comparators[0], ast.Call)
                         and isinstance(node.comparators[0].func, ast.Name)
                         and node.comparators[0].func.id == "str"
                         and node.comparators[0].args
                         and isinstance(node.comparators[0].args[0], ast.Name)
                         and node.comparators[0].args[0].id in SUBJECTS)):
            found.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith") \
                and isinstance(node.func.value, ast.Call) \
                and isinstance(node.func.value.func, ast.Name) \
                and node.func.value.func.id == "str" and node.func.value.args \
                and isinstance(node.func.value.args[0], (ast.Name, ast.Attribute)) \
                and (_subject(node.func.value) or getattr(node.func.value.args[0], "id", "")
                     in SUBJECTS):
            found.append(node.lineno)
    return found


def test_the_checker_finds_a_text_match():
    tree = ast.parse('if "GPU:" in str(result.value):\n    pass\n'
                     'x = str(exc).startswith("No space")\n'
                     'y = " ".join(str(exc).split())\n')
    assert matches(tree) == [1, 3]


def test_no_code_matches_the_text_of_an_error_or_a_result():
    hits = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            for line in matches(ast.parse(path.read_text(encoding="utf-8"))):
                hits.append(f"{path.relative_to(ROOT)}:{line}")
    assert hits == [], f"decides by an error's or result's text (type it instead): {hits}"
