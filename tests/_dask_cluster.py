"""A real Dask cluster on 127.0.0.1: one ``dask scheduler`` and separate ``dask worker`` processes.

:class:`Cluster` starts the scheduler on a random free port (``--port 0``; the
address is read from its ``--scheduler-file``), then each worker as its own
process, in its own working directory with its own ``HOME``, and an
environment without the parent's ``SPECSCOPE_*`` variables, so nothing reaches
a worker except through Dask.  It waits (by polling the scheduler, no fixed
sleeps) until the scheduler has registered every worker, and ends the processes
it started on :meth:`close`.  ``scripts/bench_pipeline.py`` uses it too.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Self

DASK = str(Path(sys.executable).with_name("dask"))
# a mount namespace of its own (as root; else as root of a user namespace)
_UNSHARE = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--map-root-user",
                                                              "--mount"]


def can_hide() -> bool:
    """Whether a worker can be started with folders hidden from it (``unshare`` allowed)."""
    if shutil.which("unshare") is None:
        return False
    probe = tempfile.mkdtemp(prefix="specscope-hide-")
    try:
        r = subprocess.run([*_UNSHARE, "sh", "-c", f"mount -t tmpfs none {probe}"],
                           capture_output=True, timeout=30, check=False)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        os.rmdir(probe)


def clean_env(home: Path) -> dict[str, str]:
    """The parent's environment less specscope's and Dask's variables, with its own HOME."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPECSCOPE_", "DASK_", "PYTHONPATH"))}
    env.update(HOME=str(home), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return env


class Cluster:
    """A scheduler and ``n_workers`` worker processes (1 process, 1 thread each)."""

    def __init__(self, n_workers: int = 2, root: Path | None = None,
                 timeout: float = 120.0, preload: str | None = None,
                 hide: tuple[Path, ...] = ()) -> None:
        self.preload = preload
        #: folders the workers do not see: an empty file system is mounted over each in
        #: the workers' own mount namespace (``unshare``; see :func:`can_hide`)
        self.hide = tuple(Path(h) for h in hide)
        self.root = Path(root or tempfile.mkdtemp(prefix="specscope-dask-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        self._logs: list[Any] = []
        self.killed: set[int] = set()
        self.workers: list[subprocess.Popen] = []
        self.worker_dirs: list[Path] = []
        sched_dir = self.root / "scheduler"
        sched_dir.mkdir(exist_ok=True)
        self.scheduler_file = sched_dir / "scheduler.json"
        self.scheduler = subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
             "--dashboard-address", ":0", "--no-show",
             "--scheduler-file", str(self.scheduler_file)],
            cwd=sched_dir, env=clean_env(sched_dir), stdout=subprocess.DEVNULL,
            stderr=self._log(sched_dir), start_new_session=True)
        try:
            self.address = self._read_address()
            for _ in range(n_workers):
                self.add_worker()
            self.wait_for_workers(n_workers)
        except BaseException:
            self.close()
            raise

    def _log(self, folder: Path) -> Any:
        f = open(folder / "log.txt", "wb")
        self._logs.append(f)
        return f

    def _read_address(self) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                raise RuntimeError("dask scheduler exited: " + self.log("scheduler"))
            try:
                return json.loads(self.scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.05)
        raise TimeoutError("dask scheduler wrote no scheduler file")

    def log(self, name: str) -> str:
        try:
            return (self.root / name / "log.txt").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def add_worker(self) -> subprocess.Popen:
        """Start one more worker (own folder, HOME and environment)."""
        i = len(self.workers)
        home = self.root / f"worker{i}"
        home.mkdir(exist_ok=True)
        cmd = [DASK, "worker", self.address, "--nworkers", "1", "--nthreads", "1",
               "--no-dashboard", "--name", f"w{i}", "--local-directory", str(home / "dask"),
               *(["--preload", self.preload] if self.preload else [])]
        if self.hide:
            cmd = [*_UNSHARE, "sh", "-c", " && ".join(
                [f"mount -t tmpfs none {shlex.quote(str(h))}" for h in self.hide]
                + ['exec "$@"']), "sh", *cmd]
        proc = subprocess.Popen(
            cmd, cwd=home, env=clean_env(home), stdout=subprocess.DEVNULL,
            stderr=self._log(home), start_new_session=True)
        self.workers.append(proc)
        self.worker_dirs.append(home)
        return proc

    def n_registered(self) -> int:
        from distributed import Client

        with Client(self.address, timeout=10) as c:
            return len(c.scheduler_info(n_workers=-1)["workers"])

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        deadline = time.monotonic() + self.timeout
        with Client(self.address, timeout=self.timeout) as c:
            while time.monotonic() < deadline:
                dead = [p for p in self.workers if p.poll() is not None
                        and p.pid not in self.killed]
                if dead:
                    raise RuntimeError("dask worker exited: " + self.log(
                        f"worker{self.workers.index(dead[0])}"))
                if len(c.scheduler_info(n_workers=-1)["workers"]) >= n:
                    return
                time.sleep(0.1)
        raise TimeoutError(f"the scheduler registered fewer than {n} workers")

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker ``i`` (its nanny and the worker process under it)."""
        self.killed.add(self.workers[i].pid)
        os.killpg(self.workers[i].pid, signal.SIGKILL)
        self.workers[i].wait()

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                with _quiet():
                    os.killpg(p.pid, signal.SIGTERM)
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with _quiet():
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for f in self._logs:
            f.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, tp: object, *rest: object) -> bool:
        return tp is ProcessLookupError
