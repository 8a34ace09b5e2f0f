"""The small HTTP server behind every ``/metrics`` endpoint: the sampler's exporter and the
laptop's fleet exporter both serve through it.

Python 3.8, stdlib only.
"""

import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from gpufleet_sampler import metric_names as pn

INDEX_PAGE = (
    b"<html><head><title>gpufleet sampler exporter</title></head><body>"
    b'<h1>gpufleet sampler exporter</h1><p><a href="/metrics">Metrics</a></p></body></html>'
)


class Renderer(Protocol):
    """What the HTTP handler needs: the app's fleet exporter serves through it too."""

    def render(self) -> bytes: ...


def make_handler(state: Renderer) -> Any:
    class Handler(BaseHTTPRequestHandler):
        server_version = "gpufleet-sampler"
        protocol_version = "HTTP/1.1"  # keep-alive: Prometheus reuses its connection

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, pn.CONTENT_TYPE, state.render())
            elif path == "/":
                self._send(200, "text/html; charset=utf-8", INDEX_PAGE)
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found: try /metrics\n")

        def _send(self, code: int, ctype: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per scrape on stderr would be noise

    return Handler


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def make_server(state: Renderer, host: str, port: int) -> ThreadingHTTPServer:
    """The HTTP server (not yet serving); raises OSError when the address is unusable."""
    cls = _V6Server if ":" in host else ThreadingHTTPServer
    server = cls((host, port), make_handler(state))
    server.daemon_threads = True
    return server
