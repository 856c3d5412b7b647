"""Drive the real specscope app on a real X server, as a person would.

The journeys start ``specscope open FILE`` as its own process on an Xvfb
display with a small window manager (openbox when installed), and act on it
only through X input events (``xdotool``): key presses, typing, clicks, drags
and the wheel at pixel positions.  They check what a person would check:
files written, values in them, and the pixels of screenshots.

API (stable; the fixtures in ``conftest.py`` hand these out)
-------------------------------------------------------------
:class:`Display`
    ``Display.start(width, height)`` starts Xvfb on a free display number
    (``-displayfd``) and the window manager; ``.name`` (":93"), ``.env``,
    ``.width``, ``.height``, ``.stop()``.
:class:`App` (from the ``launch`` fixture: ``launch(path=None, *args, display=None,
env=None)``)
    ``.window`` (X id of the main window), ``.wait_window(pattern)`` (a dialog by
    title regex; returns its id), ``.windows()`` ([(id, title)] of visible windows),
    ``.window_geometry(wid)`` (x, y, w, h), ``.title(wid=None)``,
    ``.activate(wid=None)``;
    input: ``.key("ctrl+q", "Return")``, ``.type("text")``, ``.click(x, y,
    button=1, modifiers=())``, ``.double_click(x, y)``, ``.drag((x0, y0), (x1, y1),
    modifiers=())``, ``.wheel(x, y, clicks)`` (positive up), ``.move(x, y)``,
    ``.menu("f", "r")`` (Alt+F, then the entry's mnemonic letters);
    the view (from the app's read-only geometry report, see
    ``app/desktop/journey_report.py``): ``.report()`` (the latest dict),
    ``.wait_report(pred, what)``, ``.wait_image(after=None)`` (a new image drawn),
    ``.settle()`` (the window's pixels stopped changing; the report then),
    ``.to_px(t, f)`` (screen pixel of time ``t`` s and frequency ``f`` Hz),
    ``.from_px(x, y)`` ((t, f) at a pixel), ``.overview_px(t)``;
    pixels: ``.screenshot(name)`` (a :class:`Shot`: ``.rgb`` HxWx3 uint8 array of
    the whole screen, ``.path`` PNG under ``app.shots``), ``.wait_change(box,
    before)``, ``.wait_still(box)``;
    waiting: ``.wait_for(cond, what, timeout=None)``, ``.wait_file(path)``,
    ``.wait_exit()``; process: ``.alive()``, ``.kill(sig)``, ``.log()`` (its
    stdout+stderr so far), ``.home`` (its private HOME; ``.config_dir``,
    ``.data_dir``).
:func:`wait_for` (module-level), :func:`scaled` (a timeout scaled by
``SPECSCOPE_JOURNEY_TIMEOUT_SCALE``), :func:`write_png`, :func:`read_png_rgb`.

Waiting is always for a condition with a timeout, polling a few times a second,
never a fixed sleep: the journeys must pass on a loaded machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: the app's entry point (the project's venv)
SPECSCOPE = str(Path(sys.executable).with_name("specscope"))
#: the default timeout of every wait (s), before SPECSCOPE_JOURNEY_TIMEOUT_SCALE
DEFAULT_TIMEOUT_S = 60.0
#: the tools the journeys need
TOOLS = ("Xvfb", "xdotool", "import")


def missing_tools() -> list[str]:
    """Which of :data:`TOOLS` are not on PATH."""
    return [t for t in TOOLS if shutil.which(t) is None]


def scaled(timeout: float | None) -> float:
    """``timeout`` (default :data:`DEFAULT_TIMEOUT_S`) times the scale from the environment."""
    scale = float(os.environ.get("SPECSCOPE_JOURNEY_TIMEOUT_SCALE", "1") or 1)
    return (DEFAULT_TIMEOUT_S if timeout is None else timeout) * scale


class JourneyTimeout(AssertionError):
    """A condition a journey waited for did not come true in time."""


def wait_for(cond: Callable[[], object], what: str, timeout: float | None = None,
             interval: float = 0.1):
    """Poll ``cond`` until it returns something truthy; return that.

    Raises :class:`JourneyTimeout` naming ``what`` after ``timeout`` seconds.
    """
    deadline = time.monotonic() + scaled(timeout)
    last_exc: Exception | None = None
    while True:
        try:
            value = cond()
            if value.size > 0 if isinstance(value, np.ndarray) else value:
                return value
        except (OSError, ValueError, subprocess.CalledProcessError) as exc:
            last_exc = exc
        if time.monotonic() > deadline:
            extra = f" (last error: {last_exc})" if last_exc else ""
            raise JourneyTimeout(f"timed out after {scaled(timeout):.0f} s waiting for {what}{extra}")
        time.sleep(interval)


# -- images ------------------------------------------------------------------
def write_png(path: str | Path, rgb: np.ndarray) -> None:
    """Write an HxWx3 uint8 array as a PNG (no imaging library needed)."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[i].tobytes() for i in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n"
                           + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw, 3)) + chunk(b"IEND", b""))


def _parse_ppm(data: bytes) -> np.ndarray:
    m = re.match(rb"P6\s+(?:#[^\n]*\s+)*(\d+)\s+(\d+)\s+(\d+)\s", data)
    if m is None:
        raise ValueError("not a binary PPM")
    w, h, maxval = (int(g) for g in m.groups())
    if maxval != 255:
        raise ValueError(f"PPM with maxval {maxval}")
    return np.frombuffer(data, np.uint8, count=w * h * 3, offset=m.end()).reshape(h, w, 3)


def read_png_rgb(path: str | Path) -> np.ndarray:
    """An image file (PNG, ...) as an HxWx3 uint8 array, through ImageMagick."""
    out = subprocess.run(["convert", str(path), "-depth", "8", "ppm:-"], check=True,
                         capture_output=True, timeout=60).stdout
    return _parse_ppm(out)


@dataclass
class Shot:
    """A screenshot: the whole screen as an array, and where its PNG is."""

    rgb: np.ndarray
    path: Path

    def crop(self, box: Sequence[int]) -> np.ndarray:
        """The pixels of ``box`` = (x, y, w, h), screen coordinates."""
        x, y, w, h = (round(v) for v in box)
        return self.rgb[max(0, y):y + h, max(0, x):x + w]


# -- the X server ------------------------------------------------------------------
class Display:
    """An Xvfb server on a free display number, with a window manager when one is installed."""

    def __init__(self, name: str, width: int, height: int, procs: list[subprocess.Popen]):
        self.name, self.width, self.height = name, width, height
        self._procs = procs
        self.window_manager = ""

    @property
    def env(self) -> dict[str, str]:
        return {"DISPLAY": self.name}

    @classmethod
    def start(cls, width: int = 1600, height: int = 1000, depth: int = 24) -> Display:
        r, w = os.pipe()
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0", f"{width}x{height}x{depth}",
             "-nolisten", "tcp", "-noreset"],
            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        buf = b""
        deadline = time.monotonic() + scaled(30)
        with os.fdopen(r, "rb", buffering=0) as f:
            while not buf.endswith(b"\n"):
                if time.monotonic() > deadline or xvfb.poll() is not None:
                    xvfb.kill()
                    raise RuntimeError("Xvfb did not start")
                chunk = f.read(16)
                if not chunk:
                    break
                buf += chunk
        disp = cls(f":{int(buf.strip())}", width, height, [xvfb])
        env = {**os.environ, "DISPLAY": disp.name}
        wait_for(lambda: subprocess.run(["xdotool", "getdisplaygeometry"], env=env,
                                        capture_output=True, check=False,
                                        timeout=10).returncode == 0,
                 f"the X server {disp.name} to answer", timeout=30)
        disp._start_window_manager(env)
        return disp

    def _start_window_manager(self, env: dict[str, str]) -> None:
        wm = shutil.which("openbox")
        if wm is None:
            return
        home = Path(os.environ.get("TMPDIR", "/tmp")) / f"specscope-wm-{os.getpid()}-{self.name[1:]}"
        home.mkdir(parents=True, exist_ok=True)
        wm_env = {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
        proc = subprocess.Popen([wm, "--sm-disable"], env=wm_env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._procs.append(proc)

        def running() -> bool:
            if shutil.which("xprop") is None:
                return True
            out = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env,
                                 capture_output=True, text=True, check=False,
                                 timeout=10).stdout
            return "window id" in out

        wait_for(running, "the window manager to start", timeout=30)
        self.window_manager = "openbox"

    def stop(self) -> None:
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


# -- the app ---------------------------------------------------------------------
#: title of the main window: "NAME — specscope" or "specscope"
MAIN_TITLE = r"(^| — )specscope$"


class App:
    """A specscope process on a :class:`Display`, driven with X events."""

    def __init__(self, display: Display, workdir: Path, shots: Path) -> None:
        self.display = display
        self.workdir = workdir
        self.home = workdir / "home"
        self.config_dir = self.home / ".config"
        self.data_dir = self.home / ".local" / "share"
        self.shots = shots
        self.report_path = workdir / "geometry.json"
        self.log_path = workdir / "app.log"
        self.proc: subprocess.Popen | None = None
        self.window: str = ""
        self._shot_count = 0
        for d in (self.home, self.config_dir, self.data_dir, self.home / ".cache",
                  self.home / ".local" / "state", self.shots):
            d.mkdir(parents=True, exist_ok=True)

    # -- process ---------------------------------------------------------------
    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("QT_", "XDG_", "SPECSCOPE_"))}
        env.update({
            "DISPLAY": self.display.name, "QT_QPA_PLATFORM": "xcb", "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_dir), "XDG_DATA_HOME": str(self.data_dir),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_RUNTIME_DIR": str(self.workdir / "run"),
            "SPECSCOPE_JOURNEY_GEOMETRY": str(self.report_path),
            "PYTHONUNBUFFERED": "1",
        })
        (self.workdir / "run").mkdir(mode=0o700, exist_ok=True)
        env.update(extra or {})
        return env

    def start(self, path: str | Path | None = None, *args: str,
              env: dict[str, str] | None = None, wait: bool = True) -> App:
        """Start ``specscope open [path] [args]``; with ``wait`` find its main window."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("the app is already running")
        self.report_path.unlink(missing_ok=True)
        cmd = [SPECSCOPE, "open", *([str(path)] if path is not None else []), *args]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, env=self.env(env), stdout=log, stderr=log,
                                         cwd=str(self.workdir))
        self.window = ""
        if wait:
            self.window = self.wait_window(MAIN_TITLE)
            self.wait_report(lambda r: True, "the app's geometry report")
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.alive():
            self.proc.send_signal(sig)
            self.proc.wait(scaled(30))

    def wait_exit(self, timeout: float | None = None) -> int:
        wait_for(lambda: not self.alive(), "the app to exit", timeout)
        return self.proc.returncode

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    # -- X helpers ---------------------------------------------------------------
    def x(self, *args: str, check: bool = True) -> str:
        """Run ``xdotool ARGS`` on the display; its stdout."""
        res = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": self.display.name},
                             capture_output=True, text=True, check=False, timeout=scaled(30))
        if check and res.returncode != 0:
            raise subprocess.CalledProcessError(res.returncode, ["xdotool", *args],
                                                res.stdout, res.stderr)
        return res.stdout

    def windows(self) -> list[tuple[str, str]]:
        """Visible windows of this app: (X id, title)."""
        if self.proc is None:
            return []
        out = self.x("search", "--onlyvisible", "--pid", str(self.proc.pid), "--name", ".",
                     check=False)
        rows = []
        for wid in out.split():
            name = self.x("getwindowname", wid, check=False).strip()
            rows.append((wid, name))
        return rows

    def wait_window(self, pattern: str, timeout: float | None = None) -> str:
        """The X id of a visible window of this app whose title matches ``pattern``."""
        rx = re.compile(pattern)

        def find() -> str:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"the app exited ({self.proc.returncode}) before a window "
                                     f"titled /{pattern}/ showed:\n{self.log()[-3000:]}")
            for wid, name in self.windows():
                if rx.search(name):
                    return wid
            return ""

        return wait_for(find, f"a window titled /{pattern}/", timeout)

    def wait_no_window(self, pattern: str, timeout: float | None = None) -> None:
        rx = re.compile(pattern)
        wait_for(lambda: not any(rx.search(n) for _, n in self.windows()),
                 f"the window /{pattern}/ to close", timeout)

    def title(self, wid: str | None = None) -> str:
        return self.x("getwindowname", wid or self.window).strip()

    def window_geometry(self, wid: str | None = None) -> tuple[int, int, int, int]:
        out = self.x("getwindowgeometry", "--shell", wid or self.window)
        g = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return int(g["X"]), int(g["Y"]), int(g["WIDTH"]), int(g["HEIGHT"])

    def activate(self, wid: str | None = None) -> None:
        """Raise and focus a window (what a click on its title bar does)."""
        wid = wid or self.window
        if self.display.window_manager:
            self.x("windowactivate", "--sync", wid, check=False)
        else:
            self.x("windowfocus", "--sync", wid, check=False)

    def focused_window(self) -> str:
        return self.x("getwindowfocus", check=False).strip()

    # -- input ---------------------------------------------------------------------
    def key(self, *keys: str, delay_ms: int = 40) -> None:
        """Press keys (xdotool names: "ctrl+q", "Return", "F2", "space") on the focused window."""
        self.x("key", "--clearmodifiers", "--delay", str(delay_ms), *keys)

    def type(self, text: str, delay_ms: int = 30) -> None:
        """Type text into whatever has the keyboard focus."""
        self.x("type", "--clearmodifiers", "--delay", str(delay_ms), text)

    def menu(self, *mnemonics: str) -> None:
        """Open a menu by its Alt mnemonic and walk entries by their mnemonics: menu("f", "r")."""
        first, *rest = mnemonics
        self.key(f"alt+{first}")
        for m in rest:
            self.key(m)

    def move(self, x: float, y: float) -> None:
        self.x("mousemove", "--sync", str(round(x)), str(round(y)))

    def click(self, x: float, y: float, button: int = 1, modifiers: Sequence[str] = (),
              repeat: int = 1) -> None:
        """Move the pointer to (x, y) screen pixels and click (with modifier keys held)."""
        self.move(x, y)
        for m in modifiers:
            self.x("keydown", m)
        try:
            self.x("click", "--repeat", str(repeat), "--delay", "80", str(button))
        finally:
            for m in reversed(modifiers):
                self.x("keyup", m)

    def double_click(self, x: float, y: float) -> None:
        self.click(x, y, repeat=2)

    def drag(self, start: Sequence[float], end: Sequence[float], button: int = 1,
             modifiers: Sequence[str] = (), steps: int = 12) -> None:
        """Press at ``start``, move in ``steps`` to ``end``, release (modifiers held throughout)."""
        (x0, y0), (x1, y1) = start, end
        self.move(x0, y0)
        for m in modifiers:
            self.x("keydown", m)
        try:
            self.x("mousedown", str(button))
            for i in range(1, steps + 1):
                a = i / steps
                self.move(x0 + a * (x1 - x0), y0 + a * (y1 - y0))
            self.x("mouseup", str(button))
        finally:
            for m in reversed(modifiers):
                self.x("keyup", m)

    def wheel(self, x: float, y: float, clicks: int = 1, modifiers: Sequence[str] = ()) -> None:
        """Turn the wheel at (x, y): positive clicks away from the person (button 4)."""
        if clicks:
            self.click(x, y, button=4 if clicks > 0 else 5, modifiers=modifiers,
                       repeat=abs(clicks))

    # -- the view's geometry ---------------------------------------------------------
    def report(self) -> dict:
        """The latest geometry report the app wrote (see app/desktop/journey_report.py)."""
        return json.loads(self.report_path.read_text())

    def wait_report(self, pred: Callable[[dict], object], what: str,
                    timeout: float | None = None) -> dict:
        def ok():
            r = self.report()
            return r if pred(r) else None
        return wait_for(ok, what, timeout)

    def wait_image(self, after: int | None = None, timeout: float | None = None) -> dict:
        """Wait until the app drew an image (a new one when ``after`` is a count seen before)."""
        n = 0 if after is None else after
        return self.wait_report(lambda r: r["images"] > n, "a spectrogram image", timeout)

    def settle(self, timeout: float | None = None) -> dict:
        """Wait until the window's pixels stop changing; the geometry report then."""
        self.wait_still(self.window_geometry(), "the window to settle", timeout)
        return self.report()

    def _yv(self, f: float, scale: str) -> float:
        if scale == "linear":
            return float(f)
        from specscope.widgets.frequency_axis import forward
        return float(forward(scale, [f])[0])

    def to_px(self, t: float, f: float, report: dict | None = None) -> tuple[int, int]:
        """Screen pixel of time ``t`` (s) and frequency ``f`` (Hz) in the spectrogram."""
        r = report or self.report()
        x, y, w, h = r["plot"]
        (t0, t1), (y0, y1) = r["t"], r["y"]
        yv = self._yv(f, r["scale"])
        return (round(x + (t - t0) / (t1 - t0) * w),
                round(y + h - (yv - y0) / (y1 - y0) * h))

    def from_px(self, px: float, py: float, report: dict | None = None) -> tuple[float, float]:
        """(time s, frequency Hz) at a screen pixel of the spectrogram (linear axis)."""
        r = report or self.report()
        x, y, w, h = r["plot"]
        (t0, t1), (f0, f1) = r["t"], r["f"]
        if r["scale"] != "linear":
            raise ValueError("from_px reads linear axes only")
        return t0 + (px - x) / w * (t1 - t0), f0 + (y + h - py) / h * (f1 - f0)

    def overview_px(self, t: float, report: dict | None = None) -> tuple[int, int]:
        """Screen pixel of time ``t`` on the overview strip (its vertical middle)."""
        r = report or self.report()
        x, y, w, h = r["overview"]
        t0, t1 = r["overview_t"]
        return round(x + (t - t0) / (t1 - t0) * w), round(y + h / 2)

    # -- pixels -------------------------------------------------------------------
    def screenshot(self, name: str | None = None) -> Shot:
        """The whole screen now, also written as a PNG under :attr:`shots`."""
        out = subprocess.run(["import", "-display", self.display.name, "-window", "root",
                              "-depth", "8", "ppm:-"], check=True, capture_output=True,
                             timeout=scaled(60)).stdout
        rgb = _parse_ppm(out)
        self._shot_count += 1
        path = self.shots / f"{self._shot_count:02d}-{name or 'screen'}.png"
        write_png(path, rgb)
        return Shot(rgb, path)

    def grab(self) -> np.ndarray:
        """The whole screen now as an array (no PNG written)."""
        out = subprocess.run(["import", "-display", self.display.name, "-window", "root",
                              "-depth", "8", "ppm:-"], check=True, capture_output=True,
                             timeout=scaled(60)).stdout
        return _parse_ppm(out)

    def wait_change(self, box: Sequence[int], before: np.ndarray, what: str = "the screen to change",
                    timeout: float | None = None, min_fraction: float = 0.001) -> np.ndarray:
        """Wait until the pixels of ``box`` differ from ``before`` (a crop of the same box)."""
        def changed():
            now = Shot(self.grab(), Path()).crop(box)
            if now.shape != before.shape:
                return now
            diff = np.any(now != before, axis=-1).mean()
            return now if diff >= min_fraction else None
        return wait_for(changed, what, timeout, interval=0.2)

    def wait_still(self, box: Sequence[int], what: str = "the screen to settle",
                   timeout: float | None = None) -> np.ndarray:
        """Wait until two grabs in a row show the same pixels in ``box``."""
        last = {"img": None}

        def still():
            now = Shot(self.grab(), Path()).crop(box)
            prev, last["img"] = last["img"], now
            return now if prev is not None and np.array_equal(prev, now) else None
        return wait_for(still, what, timeout, interval=0.3)

    def wait_for(self, cond: Callable[[], object], what: str,
                 timeout: float | None = None, interval: float = 0.1):
        """:func:`wait_for`, failing early with the app's log when the app exited."""
        def check():
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"the app exited ({self.proc.returncode}) while waiting "
                                     f"for {what}:\n{self.log()[-3000:]}")
            return cond()
        return wait_for(check, what, timeout, interval)

    def wait_file(self, path: str | Path, what: str | None = None,
                  timeout: float | None = None) -> Path:
        """Wait until ``path`` exists and its size stopped changing."""
        p = Path(path)
        seen = {"size": -1}

        def ready():
            if not p.exists():
                return None
            size = p.stat().st_size
            prev, seen["size"] = seen["size"], size
            return p if size > 0 and size == prev else None
        return wait_for(ready, what or f"{p} to be written", timeout, interval=0.25)
