"""Outputs written by the client of a Dask run: the workers hand their files back in pieces.

When the workers cannot see the output folder (they run on other machines, or
the folder is not shared with them), a task writes its output into a private
folder of its worker (``<worker local directory>/specscope-out/<task key>``,
through the same atomic writers as everywhere else) and returns the names and
sizes of what it wrote, never the data.  The client then pulls each file
through Dask in pieces of ``PIECE_BYTES`` (:func:`fetch_outputs`), writes it
into the output folder with :func:`~specscope.compute.files.atomic_file` (a
temporary file moved into place: whole or not at all), and has the worker
drop its copy.  The bytes are the worker's own, so the output equals what the
worker would have written in place.

:func:`workers_see` decides the default: a probe file written by the client
into the output folder, which every worker must read back with the same
content and be allowed to write beside.

Nothing here imports Qt.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError, RecordingError
from ..files import atomic_file
from ..types import WriteOn, choices
from .tasks import renamed

__all__ = ["PIECE_BYTES", "WRITE_ON", "WorkerLost", "fetch_outputs", "workers_see",
           "write_here"]

#: bytes moved per call while a worker's output is fetched
PIECE_BYTES = 8 << 20
#: who writes the outputs of a Dask run: ``auto`` asks the workers (:func:`workers_see`)
WRITE_ON = choices(WriteOn)
#: the spec keys a task writes (its output and, for a part, its part file)
_WRITTEN = ("out", "part_path")


def check_write_on(write_on: str) -> str:
    """``write_on`` itself when it is one of :data:`WRITE_ON`."""
    if write_on not in WRITE_ON:
        raise InputError(f"write_on={write_on!r} must be one of {', '.join(WRITE_ON)}")
    return write_on


class WorkerLost(RecordingError):
    """A worker went away before the client had fetched what it wrote."""


# -- on the worker ------------------------------------------------------------------------


def _private(key: str, worker: Any = None) -> Path:
    if worker is None:
        from distributed import get_worker

        worker = get_worker()
    return Path(worker.local_directory) / "specscope-out" / key


def write_here(task: Callable[[dict[str, Any]], dict[str, Any]],
               spec: dict[str, Any]) -> dict[str, Any]:
    """(On a worker) run ``task`` writing into a private folder; say what it wrote there.

    Parameters
    ----------
    task : callable
        The batch task function, ``task(spec) -> dict``.
    spec : dict
        The task's spec; ``spec["fetch_key"]`` names the private folder, and its
        ``out`` and ``part_path`` are redirected into it.

    Returns
    -------
    dict
        The task's value, with ``fetch``: the worker's address, the key and the
        ``(name, size)`` of each file written.

    Raises
    ------
    Exception
        What the task raised, its message naming the client's file rather than the
        private copy.
    """
    from distributed import get_worker

    worker = get_worker()
    folder = _private(spec["fetch_key"], worker)
    shutil.rmtree(folder, ignore_errors=True)  # a run of this key before: nothing is kept
    folder.mkdir(parents=True)
    here = dict(spec)
    for k in _WRITTEN:
        if here.get(k):
            here[k] = str(folder / Path(here[k]).name)
    try:
        res = task(here)
    except Exception as exc:  # noqa: BLE001 - raised again, renamed
        shutil.rmtree(folder, ignore_errors=True)
        # the client's file is named, not the worker's private copy
        raise renamed(exc, {here[k]: spec[k] for k in _WRITTEN if here.get(k)}) from None
    res["fetch"] = {"worker": worker.address, "key": spec["fetch_key"],
                    "files": sorted((p.name, p.stat().st_size) for p in folder.iterdir()
                                    if p.is_file() and not p.name.endswith(".partial"))}
    return res


def read_piece(key: str, name: str, offset: int, count: int,
               dask_worker: Any = None) -> bytes:
    """(On a worker, through ``Client.run``) ``count`` bytes at ``offset`` of a written file."""
    with open(_private(key, dask_worker) / name, "rb") as fh:
        fh.seek(offset)
        return fh.read(count)


def drop(key: str, dask_worker: Any = None) -> bool:
    """(On a worker) remove a task's private folder once its files were fetched."""
    shutil.rmtree(_private(key, dask_worker), ignore_errors=True)
    return True


def sees(path: str, token: str, dask_worker: Any = None) -> bool:
    """(On a worker) whether the probe at ``path`` holds ``token`` and its folder is writable."""
    try:
        with open(path, encoding="ascii") as fh:
            ok = fh.read() == token
    except (OSError, UnicodeError):
        return False
    return ok and os.access(os.path.dirname(path), os.W_OK)


# -- on the client ------------------------------------------------------------------------


def workers_see(client: Any, folder: Path) -> bool:
    """Whether every worker reads a probe the client writes into ``folder`` and can write there.

    Parameters
    ----------
    client : distributed.Client
        The client of the run.
    folder : Path
        The output folder.

    Returns
    -------
    bool
        True when every worker read the probe's random token back and may write in
        its folder; False when the probe cannot be written, a worker cannot answer,
        or there are no workers.
    """
    token = secrets.token_hex(16)
    probe = folder.resolve() / f".specscope-probe-{token}"
    try:
        probe.write_text(token, encoding="ascii")
    except OSError:
        return False
    try:
        answers = client.run(sees, str(probe), token)
    except Exception:  # noqa: BLE001 - a worker that cannot answer cannot see it
        return False
    finally:
        probe.unlink(missing_ok=True)
    return bool(answers) and all(answers.values())


def fetch_outputs(client: Any, spec: dict[str, Any], fetch: dict[str, Any], *,
                  stop: Callable[[], bool] | None = None) -> None:
    """Pull the files a task wrote on its worker into the folder of ``spec["out"]``.

    ``stop()`` is asked before each piece; once true the file being moved is
    discarded (the run has ended: nothing is published after it).

    Each file arrives through an atomic write; on any failure (the worker was
    lost meanwhile) what was already moved stays whole, the file being moved
    is discarded and :class:`RecordingError` says which output was lost.  The
    worker's private copy is dropped in every case.

    Parameters
    ----------
    client : distributed.Client
        The client of the run.
    spec : dict
        The task's spec; the files go into the folder of ``spec["out"]``.
    fetch : dict
        What the task wrote (``worker``, ``key``, ``files``), as
        :func:`write_here` returns it.
    stop : callable, optional
        ``stop() -> bool``, asked before each piece of ``PIECE_BYTES`` bytes.

    Raises
    ------
    WorkerLost
        The worker went away before a file was fetched, gave a short piece, or the
        run stopped.
    RecordingError
        The destination cannot be written.
    """
    addr, key = fetch["worker"], fetch["key"]
    folder = Path(spec["out"]).parent
    try:
        for name, size in fetch["files"]:
            dest = folder / name
            with atomic_file(dest) as tmp, open(tmp, "wb") as fh:
                offset = 0
                while offset < size:
                    if stop is not None and stop():
                        raise WorkerLost(f"{dest}: not fetched, the run stopped")
                    n = min(PIECE_BYTES, size - offset)
                    try:
                        piece = client.run(read_piece, key, name, offset, n,
                                           workers=[addr])[addr]
                    except Exception as exc:  # noqa: BLE001 - the worker went away
                        raise WorkerLost(
                            f"{dest}: lost with worker {addr} before it reached this "
                            f"machine ({type(exc).__name__})") from None
                    if len(piece) != n:
                        raise WorkerLost(f"{dest}: worker {addr} gave {len(piece)} bytes "
                                             f"at {offset}, expected {n}")
                    fh.write(piece)
                    offset += n
                if stop is not None and stop():
                    raise WorkerLost(f"{dest}: not fetched, the run stopped")
    finally:
        try:
            client.run(drop, key, workers=[addr])
        except Exception:  # noqa: BLE001 - a lost worker's folder went with it
            pass
