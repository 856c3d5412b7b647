"""A local HTTP server with Range support (tests of recordings given as URLs).

:class:`RangeServer` serves one folder on 127.0.0.1 from a thread; it answers
``HEAD`` with the size, ``GET`` with ``Range: bytes=a-b`` with 206 and those
bytes only, and counts what it sent (``bytes_sent``, ``requests``), so a test
can check that a short read fetched a part of a file, not all of it.
"""

from __future__ import annotations

import http.server
import os
import re
import threading
from pathlib import Path
from typing import Self
from urllib.parse import quote, unquote, urlsplit

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _file(self) -> Path | None:
        rel = unquote(urlsplit(self.path).path).lstrip("/")
        p = (self.server.root / rel).resolve()
        if not p.is_relative_to(self.server.root) or not p.is_file():
            self.send_error(404)
            return None
        return p

    def do_HEAD(self) -> None:
        p = self._file()
        if p is None:
            return
        self.send_response(200)
        self.send_header("Content-Length", str(p.stat().st_size))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()

    def do_GET(self) -> None:
        p = self._file()
        if p is None:
            return
        size = p.stat().st_size
        want = self.headers.get("Range")
        a, b, status = 0, size - 1, 200
        if want:
            m = _RANGE.match(want.strip())
            if m is None or (not m.group(1) and not m.group(2)):
                self.send_error(416)
                return
            if m.group(1):
                a = int(m.group(1))
                b = min(size - 1, int(m.group(2))) if m.group(2) else size - 1
            else:  # the last N bytes
                a, b = max(0, size - int(m.group(2))), size - 1
            if a >= size or b < a:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Length", str(b - a + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        if status == 206:
            self.send_header("Content-Range", f"bytes {a}-{b}/{size}")
        self.end_headers()
        with open(p, "rb") as fh:
            fh.seek(a)
            left = b - a + 1
            while left:
                chunk = fh.read(min(left, 1 << 16))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)
                with self.server.count_lock:
                    self.server.bytes_sent += len(chunk)
        with self.server.count_lock:
            self.server.requests.append((p.name, a, b, status))


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root.resolve()
        self.bytes_sent = 0
        self.requests: list[tuple[str, int, int, int]] = []
        self.count_lock = threading.Lock()


class RangeServer:
    """``with RangeServer(folder) as srv: srv.url("a.wav")`` ... ``srv.bytes_sent``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._server = _Server(Path(root))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{quote(name)}"

    @property
    def bytes_sent(self) -> int:
        with self._server.count_lock:
            return self._server.bytes_sent

    @property
    def requests(self) -> list[tuple[str, int, int, int]]:
        with self._server.count_lock:
            return list(self._server.requests)

    def reset(self) -> None:
        with self._server.count_lock:
            self._server.bytes_sent = 0
            self._server.requests.clear()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
