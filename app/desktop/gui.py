"""Start the desktop app: QApplication, main window, optional screenshot."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from specscope.app.session import ViewSettings
from specscope.compute.errors import SpecscopeError

SCREENSHOT_TIMEOUT_S = 120

#: Shared libraries Qt's xcb platform plugin loads from the system (``ldd`` on
#: ``PyQt6/Qt6/plugins/platforms/libqxcb.so``), and the packages that bring them:
#: (Debian/Ubuntu, Fedora); "a|b": the first the release knows (Debian 13 renamed some
#: with t64).  scripts/_setup.sh installs the same sonames on Debian.
XCB_SYSTEM_LIBS: dict[str, tuple[str, str]] = {
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libpng16.so.16": ("libpng16-16t64|libpng16-16", "libpng"),
    "libexpat.so.1": ("libexpat1", "expat"),
    "libz.so.1": ("zlib1g", "zlib"),
    "libzstd.so.1": ("libzstd1", "libzstd"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0t64|libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0t64|libglib2.0-0", "glib2"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
}

#: seconds ``ldd`` may take on the plugin before the check gives up (and lets Qt try)
LDD_TIMEOUT_S = 20


class MissingSystemLibrary(SpecscopeError):
    """The desktop cannot start: Qt's platform plugin needs system libraries that do not load.

    Parameters
    ----------
    problems : dict of str to str
        Each soname that does not load and why ("not found", or the loader's reason).
    """

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        #: the packages that bring them, in the order named
        self.debian = _packages(self.problems, 0)
        self.fedora = _packages(self.problems, 1)
        self.unknown = [lib for lib in self.problems if lib not in XCB_SYSTEM_LIBS]
        needs = ", ".join(lib if why == "not found" else f"{lib} ({why})"
                          for lib, why in self.problems.items())
        fixes = []
        if self.debian:
            fixes.append(f"install {' '.join(self.debian)} (Debian/Ubuntu) or "
                         f"{' '.join(self.fedora)} (Fedora)")
        if self.unknown:
            fixes.append(f"install the package that provides {', '.join(self.unknown)}")
        super().__init__(f"the desktop needs {needs}: {'; '.join(fixes)}")


def _packages(problems: Mapping[str, str], column: int) -> list[str]:
    names: list[str] = []
    for lib in problems:
        if lib in XCB_SYSTEM_LIBS:
            name = XCB_SYSTEM_LIBS[lib][column].replace("|", " or ")
            if name not in names:
                names.append(name)
    return names


def wants_xcb(env: Mapping[str, str] | None = None) -> bool:
    """Whether Qt will start on its xcb (X11) platform plugin.

    Parameters
    ----------
    env : mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    bool
        True on Linux when ``QT_QPA_PLATFORM`` names xcb first, or is unset with
        ``DISPLAY`` set outside a Wayland session.
    """
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return False
    platform = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if platform:
        return platform == "xcb"
    wayland = env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland"
    return bool(env.get("DISPLAY")) and not wayland


def xcb_plugin() -> Path | None:
    """PyQt6's xcb platform plugin (``libqxcb.so``), found without loading Qt; None if absent."""
    found = os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    dirs = [Path(found)] if found else []
    spec = importlib.util.find_spec("PyQt6")
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        dirs.append(Path(root) / "Qt6" / "plugins" / "platforms")
    return next((d / "libqxcb.so" for d in dirs if (d / "libqxcb.so").is_file()), None)


def _ldd(ldd: str, plugin: Path) -> str:
    """What ``ldd`` says of ``plugin``: stdout and stderr together."""
    done = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, check=False,
                          timeout=LDD_TIMEOUT_S)
    return done.stdout + done.stderr


_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
# glibc: "...: error while loading shared libraries: /x/libfoo.so.1: file too short";
# musl: "Error loading shared library libfoo.so.1: No such file or directory (needed by ...)"
_NOT_LOADED = re.compile(r"(?:error while loading shared libraries|Error loading shared library)"
                         r":? (\S+?): (.*?)(?: \(needed by .*)?$", re.MULTILINE)


def unloadable_libraries(plugin: Path | None = None,
                         ldd: str | None = "ldd") -> dict[str, str]:
    """The system libraries Qt's xcb plugin needs that the dynamic loader cannot load.

    Asks ``ldd`` on the plugin (it follows ``LD_LIBRARY_PATH`` and the plugin's own
    search path as Qt's loading does); without ``ldd``, opens each soname of
    :data:`XCB_SYSTEM_LIBS` with :mod:`ctypes`.

    Parameters
    ----------
    plugin : Path, optional
        The plugin (default :func:`xcb_plugin`).
    ldd : str or None, optional
        The ``ldd`` program; None (or one not on ``PATH``) opens the sonames instead.

    Returns
    -------
    dict of str to str
        Soname to why it does not load ("not found", or the loader's reason); empty
        when all load or when the check cannot tell.
    """
    plugin = xcb_plugin() if plugin is None else plugin
    program = shutil.which(ldd) if ldd else None
    if plugin is None:
        return {}
    if program is None:
        return _open_each(XCB_SYSTEM_LIBS)
    try:
        text = _ldd(program, plugin)
    except (OSError, subprocess.SubprocessError):
        return {}
    problems = {m.group(1): "not found" for m in _NOT_FOUND.finditer(text)}
    for m in _NOT_LOADED.finditer(text):
        path, why = m.group(1), m.group(2).strip()
        if "no such file" in why.lower():
            problems.setdefault(Path(path).name, "not found")
        else:
            problems.setdefault(Path(path).name, f"{path}: {why}")
    return problems


def _open_each(sonames) -> dict[str, str]:
    import ctypes
    import ctypes.util

    problems = {}
    for lib in sonames:
        try:
            ctypes.CDLL(lib)
        except OSError as e:
            # found by the loader's cache but not loadable: the loader's reason
            stem = lib.removeprefix("lib").split(".so")[0]
            problems[lib] = ("not found" if ctypes.util.find_library(stem) is None
                             else " ".join(str(e).split())[:200])
    return problems


def _qt_started() -> bool:
    widgets = sys.modules.get("PyQt6.QtWidgets")
    return widgets is not None and widgets.QApplication.instance() is not None


def check_system_libraries(env: Mapping[str, str] | None = None) -> None:
    """Stop before Qt aborts when its xcb plugin's system libraries do not load.

    Parameters
    ----------
    env : mapping, optional
        The environment that decides the platform (default ``os.environ``).

    Raises
    ------
    MissingSystemLibrary
        Naming each library and the Debian and Fedora packages that bring it.
    """
    if not wants_xcb(env):
        return
    problems = unloadable_libraries()
    if problems:
        raise MissingSystemLibrary(problems)


def has_display() -> bool:
    """Whether a window can be shown (not needed for offscreen screenshots)."""
    if os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal"):
        return False
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


_QUIET = ("propagateSizeHints",)


def _qt_messages(kind, context, message: str) -> None:
    """Pass Qt's messages to stderr, minus the offscreen platform's harmless noise."""
    if not any(q in message for q in _QUIET):
        print(message, file=sys.stderr)


def run_app(path: str | None, settings: ViewSettings, screenshot: str | None = None,
            session: str | Path | None = None, options: dict | None = None) -> int:
    """Run the app; with ``screenshot`` save the window once the spectrogram is drawn."""
    if not _qt_started():
        check_system_libraries()  # before Qt loads its platform plugin (or aborts)
    from PyQt6.QtCore import QEvent, QTimer, qInstallMessageHandler
    from PyQt6.QtWidgets import QApplication
    from specscope.app.desktop.main_window import MainWindow

    qInstallMessageHandler(_qt_messages)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("specscope")
    win = MainWindow(settings, interactive=screenshot is None)
    screen = app.primaryScreen()
    if screenshot is None and screen is not None:
        # the spectrogram, its panels and docks want room: most of the screen
        area = screen.availableGeometry()
        win.resize(min(area.width(), max(win.width(), int(0.9 * area.width()))),
                   min(area.height(), max(win.height(), int(0.9 * area.height()))))
    win.show()
    from specscope.app.desktop.journey_report import install as report_geometry
    win.journey_report = report_geometry(win)  # only with SPECSCOPE_JOURNEY_GEOMETRY set
    status = {"code": 0}

    if screenshot is not None:
        out = Path(screenshot)

        def save() -> None:
            app.processEvents()
            if not win.grab().save(str(out), "PNG"):
                print(f"specscope: error: could not write {out}", file=sys.stderr)
                status["code"] = 2
            app.quit()

        def on_error(msg: str) -> None:
            print(f"specscope: error: {msg}", file=sys.stderr)
            status["code"] = 2
            QTimer.singleShot(50, save)

        def on_timeout() -> None:
            print(f"specscope: error: the spectrogram was not drawn within "
                  f"{SCREENSHOT_TIMEOUT_S} s", file=sys.stderr)
            status["code"] = 1
            save()

        win.imageShown.connect(lambda: QTimer.singleShot(200, save))
        win.errorShown.connect(on_error)
        QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, on_timeout)
        if path is None:
            on_error("--screenshot needs a recording to open")
    if path is not None:
        win.open_path(path, **(options or {}))
    elif session is not None:
        win.open_session(session)
    try:
        app.exec()
    finally:
        win.worker.shutdown()
        # the window (and every pyqtgraph item in it) goes before the application
        # object does: Python's teardown order at exit is arbitrary and Qt crashes
        # when a widget outlives its QApplication
        win.close()
        win.deleteLater()
        app.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        win = None  # the last reference: the window goes before the application
    return status["code"]


