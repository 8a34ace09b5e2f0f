"""A local HTTP server that plays a provider's API for the tests: each route answers from a
script of replies (the last one repeats), and every request is recorded (method, path,
query, headers, JSON body) so a test can check what the adapter sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-encoded unless bytes
    headers: dict[str, str] = field(default_factory=dict)
    hang_s: float = 0.0  # wait this long before answering (a server that does not answer)
    drip_s: float = 0.0  # send the body one byte at a time, this long apart
    size: int = 0  # send this many zero bytes as the body (a huge answer), in pieces


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    t: float


# What the real providers answer on their retired endpoints: 410 Gone (RunPod's REST v1 since
# 2026-11-15; vast's v0 list for new accounts).
RETIRED = ("/v1/", "/api/v0/instances/")


class ProviderServer:
    """``retired``: path prefixes answered 410 Gone where no route is set (an exact match
    for paths ending in '/', so vast's per-instance v0 paths stay current)."""

    def __init__(self, retired: tuple[str, ...] = ()) -> None:
        self.retired = retired
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.seen: list[Seen] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                parts = urlsplit(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                with server._lock:
                    server.seen.append(
                        Seen(
                            self.command,
                            parts.path,
                            parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            time.monotonic(),
                        )
                    )
                    script = server.routes.get((self.command, parts.path))
                    if script is None and server._is_retired(parts.path):
                        reply = Reply(410, {"detail": "Gone", "status": 410, "title": "Gone"})
                    elif script is None:
                        reply = Reply(404, {"error": f"no route {self.command} {parts.path}"})
                    else:
                        reply = script.pop(0) if len(script) > 1 else script[0]
                if reply.hang_s:
                    server._stop.wait(reply.hang_s)
                    if server._stop.is_set():
                        return
                data = (
                    reply.body
                    if isinstance(reply.body, bytes)
                    else b""
                    if reply.body is None
                    else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    if not isinstance(reply.body, bytes):
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(reply.size or len(data)))
                    self.end_headers()
                    server._write(self.wfile, data, reply)
                except OSError:
                    pass  # the client gave up (a timeout or size test)

            do_GET = do_PUT = do_POST = do_DELETE = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def _is_retired(self, path: str) -> bool:
        return any(path == p if p.endswith("/") else path.startswith(p) for p in self.retired)

    def _write(self, out: Any, data: bytes, reply: Reply) -> None:
        if reply.size:
            piece = bytes(64 * 1024)
            left = reply.size
            while left > 0 and not self._stop.is_set():
                out.write(piece[: min(left, len(piece))])
                left -= len(piece)
            return
        if reply.drip_s:
            for i in range(len(data)):
                if self._stop.wait(reply.drip_s):
                    return
                out.write(data[i : i + 1])
                out.flush()
            return
        out.write(data)

    def route(self, method: str, path: str, *replies: Reply) -> None:
        self.routes[(method, path)] = list(replies)

    def calls(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.seen if s.method == method and s.path == path]

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


def serve(retired: tuple[str, ...] = ()) -> Iterator[ProviderServer]:
    s = ProviderServer(retired)
    try:
        yield s
    finally:
        s.close()
