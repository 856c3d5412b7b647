"""Qt's xcb platform plugin finds every system library it links (scripts/_setup.sh installs them).

Without them a desktop with a display fails at start with 'Could not load the Qt
platform plugin "xcb"'; offscreen tests never notice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("ldd") is None,
                                reason="ldd on the xcb plugin: Linux only")


def _qt_dir() -> Path:
    import PyQt6

    return Path(PyQt6.__file__).parent / "Qt6"


def test_xcb_plugin_links_every_library():
    qt = _qt_dir()
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    assert plugin.is_file(), f"PyQt6 has no xcb platform plugin at {plugin}"
    libs = [plugin, *sorted((qt / "plugins" / "xcbglintegrations").glob("*.so"))]
    missing = {}
    for lib in libs:
        out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=False, timeout=60).stdout
        assert "=>" in out, f"ldd read nothing from {lib}: {out!r}"
        gone = [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]
        if gone:
            missing[lib.name] = gone
    assert not missing, (f"Qt's xcb plugin cannot load {missing}; run scripts/_setup.sh as root "
                         f"(it installs them on Debian)")


def test_setup_lists_every_library_the_plugin_links():
    """Every libxcb*/libxkb* library libqxcb.so loads from the system is one _setup.sh installs."""
    qt = _qt_dir()
    out = subprocess.run(["ldd", str(qt / "plugins" / "platforms" / "libqxcb.so")],
                         capture_output=True, text=True, check=False, timeout=60).stdout
    wanted = {line.split()[0] for line in out.splitlines()
              if line.strip().startswith(("libxcb", "libxkbcommon", "libX11"))}
    assert wanted, out
    setup = (Path(__file__).resolve().parents[2] / "scripts" / "_setup.sh").read_text()
    listed = set()
    for word in setup.split():
        if ".so." in word and ":" in word:
            listed.add(word.split(":")[0])
    assert wanted <= listed, f"scripts/_setup.sh does not install {sorted(wanted - listed)}"
