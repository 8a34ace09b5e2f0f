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


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    t: float


class ProviderServer:
    def __init__(self) -> None:
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
                    if script is None:
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
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

            do_GET = do_PUT = do_POST = do_DELETE = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def route(self, method: str, path: str, *replies: Reply) -> None:
        self.routes[(method, path)] = list(replies)

    def calls(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.seen if s.method == method and s.path == path]

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


def serve() -> Iterator[ProviderServer]:
    s = ProviderServer()
    try:
        yield s
    finally:
        s.close()
