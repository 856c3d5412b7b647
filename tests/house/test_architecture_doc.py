"""docs/explanation/architecture.md names every module, in the row of its folder, and the four data flows."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "explanation" / "architecture.md"
PACKAGES = ("compute", "app", "widgets", "plugins")


def _sections() -> dict[str, str]:
    """The text under each '## <package>' heading (up to the next '## ')."""
    text = DOC.read_text()
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    found = {}
    for part in parts[1:]:
        first = part.split(None, 1)[0].rstrip(":")
        if first in PACKAGES:
            found[first] = part
    return found


def _missing(package: str, section: str, root: Path = ROOT) -> list[str]:
    lines = section.splitlines()
    missing = []
    for path in sorted((root / package).rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root / package)
        name = f"`{rel.name}`"
        if rel.parent == Path("."):
            ok = any(name in line or f"`{rel.stem}`" in line for line in lines)
        else:
            folder = f"`{rel.parent.as_posix()}/`"
            ok = any(folder in line and name in line for line in lines)
        if not ok:
            missing.append(rel.as_posix())
    return missing


def test_every_module_is_in_the_row_of_its_folder():
    sections = _sections()
    assert set(sections) == set(PACKAGES), f"sections found: {sorted(sections)}"
    missing = {p: m for p in PACKAGES if (m := _missing(p, sections[p]))}
    assert not missing, f"modules docs/explanation/architecture.md does not name: {missing}"


def test_the_four_data_flows_are_described():
    text = DOC.read_text().lower()
    for flow in ("a view request", "a pipeline run", "a playback", "a live block"):
        assert re.search(rf"^###? .*{flow}", text, flags=re.MULTILINE), f"no section on {flow}"


def test_the_check_finds_a_module_left_out(tmp_path):
    section = "| `filters/` | `spec.py` (the spec) |\n| `params.py` | parameters |\n"
    (tmp_path / "compute" / "filters").mkdir(parents=True)
    for rel in ("filters/spec.py", "filters/apply.py", "params.py", "files.py"):
        (tmp_path / "compute" / rel).write_text("")
    assert _missing("compute", section, tmp_path) == ["files.py", "filters/apply.py"]
