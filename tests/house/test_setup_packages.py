"""``./scripts/test`` installs the packages the tests start, as ``.ci/run`` did alone.

scripts/_setup.sh's ``_test_system_packages`` (run for the dev extra, so by
``./scripts/test`` and through it ``.ci/run``) installs the missing Debian packages of
.ci/apt-packages.txt as root with apt, and otherwise says which suites skip.  Here it
runs in its dry-run mode (``SPECSCOPE_SETUP_DRY_RUN=1``: the apt-get commands are
printed, not run) against stand-ins of ``id``, ``dpkg-query``, ``apt-cache`` and
``apt-get`` that make the machine look fresh, or really as user nobody.  Its apt step
waits, bounded, for another apt that holds the package lists' lock.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bash") is None,
                                reason="scripts/_setup.sh: bash on Linux")

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "_setup.sh"
PACKAGES = [line.split("#")[0].strip()
            for line in (ROOT / ".ci" / "apt-packages.txt").read_text().splitlines()
            if line.split("#")[0].strip()]
SUITES = {"tests/journeys": "xvfb", "tests/browser": "chromium",
          "tests/compute/playback/test_sound_server.py": "pulseaudio"}
LOCKED = "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)"


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


@pytest.fixture
def fresh():
    """A copy of scripts/_setup.sh and .ci/apt-packages.txt in a scratch tree whose venv
    is up to date (so no sourcing of it can install anything), and a PATH on which nothing
    of the list is installed and every package is in the archive; ``apt-get`` logs its
    arguments (and fails ``update`` while ``lists.lock`` exists), ``id -u`` says $FAKE_UID.
    Readable by every user (the test as user nobody)."""
    with tempfile.TemporaryDirectory(prefix="specscope-setup-") as scratch:
        tmp = Path(scratch)
        tmp.chmod(0o755)
        (tmp / "scripts").mkdir()
        (tmp / ".ci").mkdir()
        shutil.copy(SETUP, tmp / "scripts" / "_setup.sh")
        shutil.copy(ROOT / ".ci" / "apt-packages.txt", tmp / ".ci" / "apt-packages.txt")
        (tmp / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        (tmp / ".venv" / "bin").mkdir(parents=True)
        _stub(tmp / ".venv" / "bin", "python", "exit 0\n")
        want = hashlib.sha256((tmp / "pyproject.toml").read_bytes() + b"gpu=\n").hexdigest()
        (tmp / ".venv" / ".specscope-installed").write_text(f"{want}\ndev\n")
        bin_ = tmp / "bin"
        bin_.mkdir()
        _stub(bin_, "nvidia-smi", "exit 1\n")  # no GPU flavour in the stamp
        _stub(bin_, "id", '[ "$1" = -u ] && { echo "${FAKE_UID:-0}"; exit 0; }\n'
                          'exec /usr/bin/id "$@"\n')
        _stub(bin_, "dpkg-query", 'echo "dpkg-query: no packages found matching $3" >&2; exit 1\n')
        _stub(bin_, "apt-cache", '[ "$1" = policy ] || exit 100; shift\n'
                                 'for p in "$@"; do printf "%s:\\n  Candidate: 1.0\\n" "$p"; done\n')
        _stub(bin_, "apt-get", f'echo "$*" >>"{tmp}/apt-get.log"\n'
                               f'case " $* " in *" update "*)\n'
                               f'  [ -e "{tmp}/lists.lock" ] && {{ echo "{LOCKED}" >&2; exit 100; }}\n'
                               f'esac\nexit 0\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith("SPECSCOPE_")}
        env.update(PATH=f"{bin_}:{os.environ['PATH']}", SPECSCOPE_SETUP_FUNCTIONS_ONLY="1",
                   SPECSCOPE_SETUP_DRY_RUN="1", SPECSCOPE_EXTRAS="dev")
        yield tmp, env


def _packages(tmp: Path, env: dict, *, user: list[str] | None = None,
              call: str = "_test_system_packages") -> subprocess.CompletedProcess:
    setup = tmp / "scripts" / "_setup.sh"
    return subprocess.run([*(user or []), "bash", "-c", f'source "{setup}"; {call}'], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _apt_log(tmp: Path) -> list[str]:
    log = tmp / "apt-get.log"
    return log.read_text().splitlines() if log.exists() else []


def test_root_installs_every_package_of_the_ci_list(fresh):
    tmp, env = fresh
    done = _packages(tmp, env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    said = [line for line in lines if "installing the packages the tests start" in line]
    assert len(said) == 1, done.stderr  # one line, before installing
    command = [line for line in lines if line.startswith("specscope setup: dry run: apt-get")]
    assert len(command) == 2, done.stderr
    assert command[0].endswith("update -qq")
    assert "-o DPkg::Lock::Timeout=300 " in command[1]  # waits for another apt, bounded
    installed = command[1].split("--no-install-recommends ", 1)[1].split()
    assert installed == PACKAGES
    assert said[0].split(": ", 2)[2].split() == PACKAGES
    assert lines.index(said[0]) < lines.index(command[1])
    assert _apt_log(tmp) == []  # a dry run runs no apt-get


def test_root_installs_only_the_missing_ones(fresh):
    tmp, env = fresh
    have = ("xvfb", "chromium")
    _stub(tmp / "bin", "dpkg-query",
          f'case "$3" in {"|".join(have)}) printf "ii "; exit 0 ;; esac; exit 1\n')
    done = _packages(tmp, env)
    install = [line for line in done.stderr.splitlines() if " install " in line]
    assert install[0].split("--no-install-recommends ", 1)[1].split() == [
        p for p in PACKAGES if p not in have]


def test_nothing_to_do_when_all_are_installed(fresh):
    tmp, env = fresh
    _stub(tmp / "bin", "dpkg-query", 'printf "ii "\n')
    done = _packages(tmp, env)
    assert (done.returncode, done.stderr) == (0, "")


def _check_skip_line(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert line.startswith("specscope setup: not root, so not installing ")
    for suite, package in SUITES.items():
        assert f"{suite} (without " in line, (suite, line)
        assert package in line.split(suite, 1)[1].split(")", 1)[0], (suite, line)
    assert line.endswith("to run them: sudo apt-get install " + " ".join(PACKAGES))
    assert "dry run" not in line


def test_not_root_says_which_suites_skip(fresh):
    tmp, env = fresh
    done = _packages(tmp, {**env, "FAKE_UID": "1000"})
    _check_skip_line(done)
    assert _apt_log(tmp) == []


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="runs as user nobody through setpriv: needs root")
def test_really_not_root(fresh):
    tmp, env = fresh
    (tmp / "bin" / "id").unlink()  # the real id: uid 65534
    done = _packages(tmp, env, user=["setpriv", "--reuid=65534", "--regid=65534",
                                     "--clear-groups"])
    _check_skip_line(done)


def test_the_dev_extra_runs_it(fresh):
    """Sourced as scripts/test sources it (SPECSCOPE_EXTRAS=dev), with an up-to-date venv:
    the packages are installed; without the dev extra (scripts/run) they are not."""
    tmp, env = fresh
    env = {k: v for k, v in env.items() if k != "SPECSCOPE_SETUP_FUNCTIONS_ONLY"}
    for extras, runs in (("dev", True), ("", False)):
        done = _packages(tmp, {**env, "SPECSCOPE_EXTRAS": extras}, call="true")
        assert done.returncode == 0, done.stderr
        assert "installing specscope" not in done.stderr  # the stamp matched: no pip
        assert ("installing the packages the tests start" in done.stderr) is runs, done.stderr


def test_ci_run_leaves_it_to_scripts_test():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./scripts/test" in ci
    assert "apt-get" not in ci


@pytest.mark.slow
def test_waits_for_another_apts_lock(fresh):
    """Another apt holds the package lists: ``apt-get update`` is tried again until it
    lets go (the install then runs with DPkg::Lock::Timeout for the dpkg lock)."""
    tmp, env = fresh
    env = {k: v for k, v in env.items() if k != "SPECSCOPE_SETUP_DRY_RUN"}
    (tmp / "lists.lock").touch()
    setup = tmp / "scripts" / "_setup.sh"
    proc = subprocess.Popen(["bash", "-c", f'source "{setup}"; _test_system_packages'],
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        assert "another apt holds the package lists; waiting up to 300 s" in first, first
        tries = _apt_log(tmp)
        assert tries and all(t.endswith("update -qq") for t in tries), tries
        (tmp / "lists.lock").unlink()  # the other apt is done
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 0, rest
    finally:
        proc.kill()
        proc.wait()
    log = _apt_log(tmp)
    assert len(log) >= 3 and log[-2].endswith("update -qq"), log
    assert log[-1].startswith("-o DPkg::Lock::Timeout=300 install -y"), log
    assert log[-1].split("--no-install-recommends ", 1)[1].split() == PACKAGES
    assert "installing the packages the tests start" in rest


@pytest.mark.slow
def test_lock_wait_is_bounded(fresh):
    """A lock that never goes: after SPECSCOPE_APT_LOCK_WAIT_S the update gives up with
    one line and the install still runs on the lists there are."""
    tmp, env = fresh
    env = {k: v for k, v in env.items() if k != "SPECSCOPE_SETUP_DRY_RUN"}
    env["SPECSCOPE_APT_LOCK_WAIT_S"] = "1"
    (tmp / "lists.lock").touch()
    start = time.monotonic()
    done = _packages(tmp, env)
    assert time.monotonic() - start < 60
    assert done.returncode == 0, done.stderr
    assert f"apt-get update failed: {LOCKED}; using the package lists there are" in done.stderr
    log = _apt_log(tmp)
    assert log[-1].startswith("-o DPkg::Lock::Timeout=1 install -y"), log
