"""Where specscope keeps files of its own (caches), overridable for tests and CI."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """The user cache folder (``SPECSCOPE_CACHE_DIR`` overrides it), not created."""
    root = os.environ.get("SPECSCOPE_CACHE_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("specscope", appauthor=False)
    return Path(root).joinpath(*parts)
