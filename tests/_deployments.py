"""Deployments written here: WAV files with the time chunks of each format (bext, GUANO,
AudioMoth's comment), folders of time-stamped files, and a snapshot of a folder tree.

Shared by the deployment, levels, view, CLI and desktop tests.
"""

from __future__ import annotations

import hashlib
import struct
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

T0 = datetime(2024, 5, 1, 12, 0, 0)


# -- files with the byte layout of each format ---------------------------------------------


def _chunk(cid: bytes, data: bytes) -> bytes:
    return cid + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")


def bext(when: datetime, time_reference: int = 0) -> bytes:
    """A BWF bext chunk body (EBU Tech 3285 v1, 602 bytes)."""
    b = bytearray(602)
    b[0:11] = b"deployment "
    b[320:330] = when.strftime("%Y-%m-%d").encode()
    b[330:338] = when.strftime("%H:%M:%S").encode()
    b[338:346] = struct.pack("<Q", time_reference)
    b[346:348] = struct.pack("<H", 1)
    return bytes(b)


def guano(timestamp: str) -> bytes:
    return f"GUANO|Version: 1.0\nMake: Wildlife Acoustics\nTimestamp: {timestamp}\n".encode()


def audiomoth(comment: str) -> bytes:
    text = comment.encode("latin-1") + b"\0"
    return b"INFO" + _chunk(b"ICMT", text)


def write_wav(path: Path, x: np.ndarray, rate: int, chunks: list[tuple[bytes, bytes]] = (),
              after_data: list[tuple[bytes, bytes]] = ()) -> np.ndarray:
    """16-bit PCM WAV with extra chunks before (and after) the data; returns the samples."""
    x = np.asarray(x, np.int16)
    if x.ndim == 1:
        x = x[:, None]
    ch = x.shape[1]
    fmt = struct.pack("<HHIIHH", 1, ch, rate, rate * 2 * ch, 2 * ch, 16)
    body = b"WAVE" + _chunk(b"fmt ", fmt)
    for cid, data in chunks:
        body += _chunk(cid, data)
    body += _chunk(b"data", x.tobytes())
    for cid, data in after_data:
        body += _chunk(cid, data)
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return x.astype(np.float32) / 32768


def noise(n: int, ch: int = 1, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-8000, 8000, (n, ch))


def stamped(folder: Path, starts: list[float], n: int = 1000, rate: int = 1000,
            ch: int = 1, prefix: str = "rec") -> list[np.ndarray]:
    """WAV files with bext times at T0 + starts[k] seconds; returns their samples."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k, s in enumerate(starts):
        when = T0 + timedelta(seconds=s)
        out.append(write_wav(folder / f"{prefix}{k:04d}.wav", noise(n, ch, k), rate,
                             [(b"bext", bext(when))]))
    return out


def snapshot(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry of a folder tree: size, mtime and content hash."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.stat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns, digest)
    return out
