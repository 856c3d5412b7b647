"""A Jupyter server and a notebook page in headless Chromium, for the browser suite.

``Server`` starts JupyterLab or Notebook 7 on 127.0.0.1 with a token, a private
root, home and settings, and no display; ``Page`` drives a notebook in Chromium
through selenium: run a cell, read a cell's output, read what an element shows
(its screenshot as RGB pixels), wait for a condition.  Nothing here is timed
against a clock: every wait polls a condition up to a timeout.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
from PyQt6.QtGui import QImage
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
#: what a kernel that crashed or restarted leaves in the server's log, and what a Qt
#: object touched from the wrong thread prints before it crashes
CRASH_NEEDLES = ("different thread", "QPainter", "Segmentation", "Kernel restarted",
                 "KernelRestarter", "restarting kernel", "propagateSizeHints")
#: the front-ends: the module that serves them and the path of a notebook in them
FRONTENDS = {"lab": ("jupyterlab", "lab/tree"), "notebook": ("notebook", "notebooks")}


def wait(condition, timeout_s: float, what: str, interval_s: float = 0.05):
    """Poll ``condition()`` until it is truthy (returned), or fail naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(interval_s)


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells with a Python 3 kernel."""
    items = [{"cell_type": "code", "execution_count": None, "id": f"c{k}", "metadata": {},
              "outputs": [], "source": src} for k, src in enumerate(cells)]
    nb = {"cells": items, "metadata": {"kernelspec": {"name": "python3",
                                                      "display_name": "Python 3",
                                                      "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A Jupyter server (``frontend`` "lab" or "notebook") in ``tmp`` serving ``root``.

    Its settings are the front-end's defaults: JupyterLab and Notebook 7 send widget
    comms over kernel subshells.
    """

    def __init__(self, frontend: str, root: Path, tmp: Path) -> None:
        module, self.notebook_path = FRONTENDS[frontend]
        self.frontend = frontend
        self.token = secrets.token_hex(16)
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = tmp / f"{frontend}.log"
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
        for name, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                          ("IPYTHONDIR", "ipython"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                          ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")):
            env[name] = str(tmp / sub)
        args = [sys.executable, "-m", module, "--no-browser", "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}"]
        if frontend == "lab":
            args += ["--LabApp.news_url=",
                     "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--allow-root")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, cwd=root)
        try:
            wait(self._up, 90, f"{module} to answer")
            assert self.proc.poll() is None, self.log()[-3000:]
        except BaseException:
            self.stop()
            raise

    def api(self, path: str):
        with urllib.request.urlopen(f"{self.base}/api/{path}?token={self.token}",
                                    timeout=5) as r:
            return json.loads(r.read())

    def _up(self) -> bool:
        try:
            self.api("status")
            return True
        except OSError:
            return self.proc.poll() is not None  # exited: fails in __init__

    def kernel_states(self) -> list[str]:
        """The execution state of each session's kernel ("idle", "busy", "starting")."""
        return [s["kernel"]["execution_state"] for s in self.api("sessions")]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def assert_no_crash(self) -> None:
        """Nothing in the log says that a kernel crashed, restarted or touched Qt wrongly."""
        text = self.log()
        for needle in CRASH_NEEDLES:
            assert needle not in text, f"{needle!r} in the server's log:\n{text[-3000:]}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(15)
        self._log.close()


def chrome(profile: Path, scale: float = 1) -> webdriver.Chrome:
    """Headless Debian Chromium through chromedriver, 1400 x 1100 CSS pixels at ``scale``."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1100",
                 f"--force-device-scale-factor={scale}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(90)
    return driver


def pixels(element) -> np.ndarray:
    """What the browser shows of an element: RGB uint8, (height, width, 3)."""
    image = QImage.fromData(element.screenshot_as_png, "PNG").convertToFormat(
        QImage.Format.Format_RGB888)
    w, h, stride = image.width(), image.height(), image.bytesPerLine()
    rows = np.frombuffer(image.constBits().asstring(h * stride), np.uint8).reshape(h, stride)
    return rows[:, :w * 3].reshape(h, w, 3).copy()


def changed(element, before: np.ndarray, fraction: float = 0.01):
    """A condition: the element shows something else than ``before`` (``fraction`` of it)."""
    def check():
        now = pixels(element)
        return now.shape != before.shape or (now != before).any(axis=2).mean() > fraction
    return check


class Page:
    """A notebook open in the browser (see the module docs)."""

    def __init__(self, driver: webdriver.Chrome, server: Server, name: str) -> None:
        self.driver = driver
        self.server = server
        driver.get(f"{server.base}/{server.notebook_path}/{name}?token={server.token}")
        wait(lambda: len(self.cells()) > 0, 90, "the notebook's cells")
        wait(lambda: server.kernel_states() == ["idle"], 90, "an idle kernel")

    def cells(self) -> list:
        return self.driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")

    def text(self) -> str:
        """The notebook's visible text (outputs and widgets included)."""
        return self.driver.find_element(By.CSS_SELECTOR, ".jp-Notebook").text

    def run(self, index: int) -> None:
        """Run cell ``index`` (Shift+Enter in its editor)."""
        cell = self.cells()[index]
        cell.find_element(By.CSS_SELECTOR, ".jp-InputArea-editor").click()
        webdriver.ActionChains(self.driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER) \
            .key_up(Keys.SHIFT).perform()

    def output(self, index: int) -> str:
        """The text of cell ``index``'s output area."""
        found = self.cells()[index].find_elements(By.CSS_SELECTOR, ".jp-OutputArea")
        return "\n".join(o.text for o in found)

    def frames(self, timeout_s: float = 90, count: int = 1) -> list:
        """The widgets' frame images (<img> of jupyter_rfb) once there are ``count``."""
        return wait(lambda: (found := self.driver.find_elements(
            By.CSS_SELECTOR, ".renderview-wrapper img")) and len(found) >= count and found,
            timeout_s, f"{count} widget frame(s)")

    def json_line(self, index: int, marker: str, call: int, timeout_s: float = 90) -> dict:
        """Run cell ``index`` and read the JSON after ``marker`` in its output, once that
        reports ``call`` (the cell's run count, kept in the kernel: a restarted kernel
        would start again at 1)."""
        self.run(index)

        def found():
            text = self.output(index)
            if marker in text:
                value = json.loads(text.split(marker, 1)[1].splitlines()[0])
                return value if value["call"] == call else None
            if "Error" in text:
                raise AssertionError(f"cell {index} failed: {text[-2000:]}")
            return None
        return wait(found, timeout_s, f"cell {index}'s report (run {call})")
