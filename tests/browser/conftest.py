"""The browser suite: the notebook widgets in JupyterLab and Notebook 7, driven in Chromium.

Every test here carries the ``browser`` marker (``pytest -m browser`` runs the
suite alone, ``-m "not browser"`` leaves it out) and is skipped, with the reason,
when Debian's ``chromium`` and ``chromium-driver``, selenium, JupyterLab or the
``notebook`` package are missing (``apt install chromium chromium-driver``,
``pip install -e '.[dev]'``).  ``./scripts/test`` runs it with the rest.

Fixtures
--------
``server``
    A Jupyter server in its default settings serving a temporary root; parametrize
    it indirectly with "lab" (the default) or "notebook" (Notebook 7).  The test
    module's ``notebooks(root)`` function, when it has one, writes the notebooks first.
``driver``
    Headless Chromium; indirectly parametrized with a device scale factor (1).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

_MISSING = [what for what, there in (
    ("chromium (apt install chromium)",
     shutil.which("chromium") or shutil.which("chromium-browser")),
    ("chromedriver (apt install chromium-driver)", shutil.which("chromedriver")),
    ("selenium (pip install -e '.[dev]')", importlib.util.find_spec("selenium")),
    ("jupyterlab (pip install -e '.[dev]')", importlib.util.find_spec("jupyterlab")),
    ("jupyter_rfb (pip install -e '.[notebook]')", importlib.util.find_spec("jupyter_rfb")),
) if not there]


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="browser suite needs " + ", ".join(_MISSING)) \
        if _MISSING else None
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.browser)
            if skip is not None:
                item.add_marker(skip)
            elif "[notebook" in item.nodeid and not importlib.util.find_spec("notebook"):
                item.add_marker(pytest.mark.skip(
                    reason="Notebook 7 needs the notebook package (pip install -e '.[dev]')"))


@pytest.fixture
def server(request, tmp_path):
    from jupyter_page import Server
    root = tmp_path / "root"
    root.mkdir()
    frontend = getattr(request, "param", "lab")
    factory = getattr(request.module, "notebooks", None)
    if factory is not None:
        factory(root)
    s = Server(frontend, root, tmp_path)
    yield s
    s.stop()


@pytest.fixture
def driver(request, tmp_path):
    from jupyter_page import chrome
    d = chrome(tmp_path / "chromium", getattr(request, "param", 1))
    yield d
    d.quit()
