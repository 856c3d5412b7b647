"""Build hooks of the documentation site (``hooks:`` in mkdocs.yml)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def on_startup(command: str, dirty: bool) -> None:
    """Lay out ``build/docs-src/specscope/`` before mkdocstrings looks for the sources.

    griffe reads the files; it does not follow the editable install's mapping of
    ``specscope.compute`` to ``compute/``, so the import names are laid out as links.
    """
    home = ROOT / "build" / "docs-src" / "specscope"
    home.mkdir(parents=True, exist_ok=True)
    for name in ("app", "compute", "widgets", "plugins"):
        link = home / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name, target_is_directory=True)
