"""A real local webhook receiver for the notification tests (core and GUI alike); the
``webhook_sink`` fixture in tests/conftest.py starts one."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class WebhookSink:
    """An HTTP server on 127.0.0.1 that records the JSON bodies POSTed to it.

    ``fail_first`` answers that many attempts with 500 (and records nothing of them);
    ``status`` and ``reply`` are what every later attempt gets. The URL's path carries a
    token, as real chat webhooks' do, so a test can check the token never leaks.
    """

    def __init__(
        self,
        fail_first: int = 0,
        status: int = 200,
        reply: bytes = b"ok",
        path: str = "/hook/secret-token",
    ) -> None:
        self.fail_first = fail_first
        self.status = status
        self.reply = reply
        self.attempts = 0
        self.requests: list[tuple[str, dict[str, Any]]] = []
        # The bodies alone, as one list kept up to date, so a test may hold it and poll it.
        self.bodies: list[dict[str, Any]] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n))
                sink.attempts += 1
                if sink.attempts <= sink.fail_first:
                    self.send_response(500)
                    self.end_headers()
                    return
                sink.requests.append((self.path, body))
                sink.bodies.append(body)
                self.send_response(sink.status)
                self.end_headers()
                self.wfile.write(sink.reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def __enter__(self) -> WebhookSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
