"""Fixtures of the desktop journeys: an X display, the app as its own process, a busy core.

See ``harness.py`` for the API of :class:`~harness.App` and :class:`~harness.Display`,
and ``README.md`` beside this file for how to run the journeys.

Fixtures
--------
``display``
    Xvfb at 1600x1000x24 with a window manager (openbox when installed), one per session.
``display_small``
    The same at 1280x800x24.
``launch``
    ``launch(path=None, *args, display=None, env=None, wait=True) -> App``: starts
    ``specscope open [path]`` with a private HOME and XDG folders (no user
    configuration leaks in or out), ``QT_QPA_PLATFORM=xcb`` and the geometry
    report on; waits for its main window.  ``launch.again(app, path, ...)`` starts the
    same HOME again (after a quit or a kill), so what the app keeps beside the
    user configuration carries over.  Every app still running is stopped at the end;
    a failed journey gets a last screenshot and the app's log in its report.
``shots``
    The folder screenshots go to: ``$SPECSCOPE_JOURNEY_SHOTS/<test name>`` when
    that is set (to look at them afterwards), else a temporary folder.

Journeys are skipped (with the reason) when Xvfb, xdotool or ImageMagick's
``import`` is missing.  ``SPECSCOPE_JOURNEY_BUSY=1`` keeps one core busy with
another process for the whole session (the journeys must pass so);
``SPECSCOPE_JOURNEY_TIMEOUT_SCALE`` scales every wait's timeout.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import App, Display, missing_tools

_MISSING = missing_tools()


def pytest_collection_modifyitems(config, items):
    if not _MISSING:
        return
    skip = pytest.mark.skip(reason=f"desktop journeys need {', '.join(_MISSING)} "
                                   f"(Debian: xvfb xdotool imagemagick)")
    here = Path(__file__).parent
    for item in items:
        uses_x = {"display", "display_small", "launch"} & set(getattr(item, "fixturenames", ()))
        if here in Path(str(item.fspath)).parents and uses_x:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture(scope="session", autouse=True)
def _busy_core():
    """With SPECSCOPE_JOURNEY_BUSY=1, another process spins on one core meanwhile."""
    if os.environ.get("SPECSCOPE_JOURNEY_BUSY", "") in ("", "0"):
        yield None
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def display():
    disp = Display.start(1600, 1000)
    try:
        yield disp
    finally:
        disp.stop()


@pytest.fixture(scope="session")
def display_small():
    disp = Display.start(1280, 800)
    try:
        yield disp
    finally:
        disp.stop()


@pytest.fixture
def shots(request, tmp_path) -> Path:
    root = os.environ.get("SPECSCOPE_JOURNEY_SHOTS")
    name = re.sub(r"[^\w.-]+", "_", request.node.name)
    path = Path(root) / name if root else tmp_path / "shots"
    if root and path.is_dir():
        for old in path.glob("*.png"):  # the shots of an earlier run of the same test
            old.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


class _Launcher:
    def __init__(self, display: Display, tmp_path: Path, shots: Path) -> None:
        self.display, self.tmp_path, self.shots = display, tmp_path, shots
        self.apps: list[App] = []

    def __call__(self, path=None, *args: str, display: Display | None = None,
                 env: dict | None = None, wait: bool = True) -> App:
        work = self.tmp_path / f"app{len(self.apps)}"
        work.mkdir(parents=True, exist_ok=True)
        app = App(display or self.display, work, self.shots)
        self.apps.append(app)
        return app.start(path, *args, env=env, wait=wait)

    def again(self, app: App, path=None, *args: str, env: dict | None = None,
              wait: bool = True) -> App:
        """Start the app again with the same HOME (after it quit or was killed)."""
        app.stop()
        return app.start(path, *args, env=env, wait=wait)


@pytest.fixture
def launch(request, display, tmp_path, shots):
    launcher = _Launcher(display, tmp_path, shots)
    yield launcher
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for app in launcher.apps:
        if failed and app.alive():
            try:
                shot = app.screenshot("at-failure")
                request.node.add_report_section("call", "journey", f"screenshot: {shot.path}")
            except (OSError, subprocess.SubprocessError):
                pass
        app.stop()
        if failed:
            request.node.add_report_section("call", "app log", app.log()[-4000:])
