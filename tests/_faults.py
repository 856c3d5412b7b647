"""File-system faults for the tests: tiny tmpfs mounts, read-only bind mounts, a full disk.

Mounting needs root; the tests that use these skip with a reason otherwise.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path


def mount(*args: str) -> None:
    """``mount ARGS`` (raises CalledProcessError when the kernel or the sandbox says no)."""
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


def umount(path: Path) -> None:
    """Unmount ``path`` lazily; nothing happens when it is not mounted."""
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30, check=False)


def fill(folder: Path, room: int) -> None:
    """Fill the file system of ``folder`` but ``room`` bytes (a file named ``filler``)."""
    filler = folder / "filler"
    block = b"\xff" * (1 << 16)
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    if room:
        os.truncate(filler, max(0, filler.stat().st_size - room))
