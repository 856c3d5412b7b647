"""The README's benchmark tables are the recorded figures, rendered by scripts/perf_pages.py."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import perf_pages  # noqa: E402


def test_readme_tables_equal_the_records():
    text = (ROOT / "README.md").read_text()
    for name in perf_pages.README_BLOCKS:
        assert f"<!-- perf:{name} -->" in text, name
    assert text == perf_pages.readme_with_tables(text), (
        "a README table differs from its record: run python scripts/perf_pages.py --readme")


def test_a_changed_record_changes_the_readme(tmp_path):
    import json

    data = tmp_path / "data"
    data.mkdir()
    for p in perf_pages.DATA.glob("*.json"):
        d = json.loads(p.read_text())
        if d["name"] == "bench_levels":
            d["tables"][0]["rows"][0]["time (s)"] = 123.0
        (data / p.name).write_text(json.dumps(d))
    text = (ROOT / "README.md").read_text()
    changed = perf_pages.readme_with_tables(text, data)
    assert changed != text and "| specscope | 123 |" in changed
