"""``specscope open`` names the missing system library and its packages before Qt aborts.

Qt's xcb platform plugin links system libraries (libxcb-cursor0 the one a pip install
most often lacks); without one, Qt prints a generic "Could not load the Qt platform
plugin" and aborts.  The desktop start-up checks them first and stops with one line
naming the library and the Debian and Fedora packages, exit status 2.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from specscope.app.desktop import gui

ROOT = Path(__file__).resolve().parents[3]
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb plugin: Linux")
NEEDS_LDD = pytest.mark.skipif(shutil.which("ldd") is None or gui.xcb_plugin() is None,
                               reason="ldd and PyQt6's xcb plugin")
X11 = {"DISPLAY": ":5"}
CURSOR_LINE = ("the desktop needs libxcb-cursor.so.0: install libxcb-cursor0 (Debian/Ubuntu) "
               "or xcb-util-cursor (Fedora)")


def _ldd_says(monkeypatch, text: str) -> None:
    monkeypatch.setattr(gui, "_ldd", lambda program, plugin: text)


LDD_CURSOR_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffc1e3f2000)
\tlibQt6XcbQpa.so.6 => /venv/PyQt6/Qt6/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x7f0)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => /lib/x86_64-linux-gnu/libxcb-icccm.so.4 (0x00007f6838500000)
"""


@LINUX
def test_missing_cursor_library_names_its_packages(monkeypatch):
    _ldd_says(monkeypatch, LDD_CURSOR_MISSING)
    with pytest.raises(gui.MissingSystemLibrary) as err:
        gui.check_system_libraries(X11)
    assert str(err.value) == CURSOR_LINE
    assert err.value.problems == {"libxcb-cursor.so.0": "not found"}
    assert (err.value.debian, err.value.fedora) == (["libxcb-cursor0"], ["xcb-util-cursor"])
    assert isinstance(err.value, gui.SpecscopeError)  # the CLI's one line and exit status 2


@LINUX
def test_several_missing_libraries_in_one_line(monkeypatch):
    _ldd_says(monkeypatch, "\tlibxcb-cursor.so.0 => not found\n"
                           "\tlibxcb-randr.so.0 => not found\n"
                           "\tlibxcb-shape.so.0 => not found\n"
                           "\tlibglib-2.0.so.0 => not found\n"
                           "\tlibweird.so.7 => not found\n")
    with pytest.raises(gui.MissingSystemLibrary) as err:
        gui.check_system_libraries(X11)
    line = str(err.value)
    assert "\n" not in line
    assert line == ("the desktop needs libxcb-cursor.so.0, libxcb-randr.so.0, libxcb-shape.so.0, "
                    "libglib-2.0.so.0, libweird.so.7: install libxcb-cursor0 libxcb-randr0 "
                    "libxcb-shape0 libglib2.0-0t64 or libglib2.0-0 (Debian/Ubuntu) or "
                    "xcb-util-cursor libxcb glib2 (Fedora); install the package that provides "
                    "libweird.so.7")


@pytest.mark.parametrize("env, xcb", [
    ({"DISPLAY": ":5"}, True),
    ({"DISPLAY": ":5", "QT_QPA_PLATFORM": "xcb"}, True),
    ({"QT_QPA_PLATFORM": "xcb"}, True),
    ({}, False),
    ({"DISPLAY": ":5", "QT_QPA_PLATFORM": "offscreen"}, False),
    ({"DISPLAY": ":5", "QT_QPA_PLATFORM": "wayland;xcb"}, False),
    ({"DISPLAY": ":5", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, False),
    ({"DISPLAY": ":5", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "x11"}, True),
])
@LINUX
def test_checked_only_when_qt_starts_on_xcb(monkeypatch, env, xcb):
    _ldd_says(monkeypatch, LDD_CURSOR_MISSING)
    assert gui.wants_xcb(env) is xcb
    if xcb:
        with pytest.raises(gui.MissingSystemLibrary):
            gui.check_system_libraries(env)
    else:
        gui.check_system_libraries(env)  # offscreen or Wayland: no xcb libraries needed


@LINUX
@NEEDS_LDD
def test_nothing_missing_here():
    """This machine has them all (tests/journeys/test_qt_xcb.py): the check stays quiet."""
    assert gui.unloadable_libraries() == {}
    gui.check_system_libraries(X11)


@LINUX
@NEEDS_LDD
def test_python_table_covers_the_system_libraries_the_plugin_links():
    """Every library the plugin loads from outside the wheel that a desktop may lack has
    its packages here, and every soname scripts/_setup.sh installs is in the table."""
    out = subprocess.run(["ldd", str(gui.xcb_plugin())], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    linked = {line.split()[0] for line in out.splitlines() if "=> /" in line
              and "PyQt6" not in line}
    wanted = {lib for lib in linked if lib.startswith(("libxcb", "libX", "libxkb", "libGL",
                                                       "libEGL", "libfontconfig",
                                                       "libfreetype", "libdbus", "libglib"))}
    assert wanted, out
    assert wanted <= set(gui.XCB_SYSTEM_LIBS), sorted(wanted - set(gui.XCB_SYSTEM_LIBS))
    setup = (ROOT / "scripts" / "_setup.sh").read_text()
    table = setup.split('_QT_SYSTEM_LIBS="', 1)[1].split('"', 1)[0]
    pairs = dict(word.split(":", 1) for word in table.split())
    assert len(pairs) > 20
    for lib, debian in pairs.items():
        assert lib in gui.XCB_SYSTEM_LIBS, lib
        assert gui.XCB_SYSTEM_LIBS[lib][0] == debian, lib


def _broken_cursor_library(tmp_path: Path) -> dict[str, str]:
    """An environment whose loader finds a broken libxcb-cursor.so.0 first."""
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "libxcb-cursor.so.0").write_bytes(b"not a shared library\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE",
                        "QT_QPA_PLATFORM_PLUGIN_PATH")}
    env.update(LD_LIBRARY_PATH=str(libs), DISPLAY=":987", HOME=str(tmp_path))
    return env


@pytest.mark.slow
@LINUX
@NEEDS_LDD
@pytest.mark.parametrize("ldd", ["'ldd'", "None"])
def test_library_the_loader_cannot_load(tmp_path, ldd):
    """Through ldd, and without it (ctypes on each soname), in a process whose loader
    meets a broken libxcb-cursor.so.0."""
    env = _broken_cursor_library(tmp_path)
    code = ("from specscope.app.desktop import gui\n"
            f"print(sorted(gui.unloadable_libraries(ldd={ldd}).items()))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout
    stub = tmp_path / "libs" / "libxcb-cursor.so.0"
    assert out.strip().startswith(f"[('libxcb-cursor.so.0', '{stub}: "), out
    assert out.count("', '") == 1, out


@pytest.mark.slow
@LINUX
@NEEDS_LDD
def test_open_says_which_package_and_exits_2(tmp_path):
    """``specscope open`` on a desktop whose libxcb-cursor.so.0 does not load: one line,
    exit status 2, no Qt abort (before the check: 'Could not load the Qt platform
    plugin "xcb"' and SIGABRT)."""
    env = _broken_cursor_library(tmp_path)
    done = subprocess.run([sys.executable, "-m", "specscope.app", "open", "--no-restore"],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    stub = tmp_path / "libs" / "libxcb-cursor.so.0"
    assert re.fullmatch(
        rf"specscope: error: the desktop needs libxcb-cursor\.so\.0 \({re.escape(str(stub))}: "
        r"[^)]+\): install libxcb-cursor0 \(Debian/Ubuntu\) or xcb-util-cursor \(Fedora\)",
        lines[0]), lines[0]
    assert "platform plugin" not in done.stderr
    assert done.stdout == ""
