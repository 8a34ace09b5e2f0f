"""The small HTTP server behind every ``/metrics`` endpoint: the sampler's exporter and the
laptop's fleet exporter both serve through it.

Python 3.8, stdlib only.
"""

import contextlib
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

        def setup(self) -> None:
            super().setup()
            # A response is one small write; without this a keep-alive client's next request
            # can wait out its delayed ACK (~40 ms) behind Nagle's algorithm.
            with contextlib.suppress(OSError):  # not a TCP socket: nothing to delay
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, code: int, ctype: str, body: bytes) -> None:
            # Status line, headers and body in one send: written apart (send_response and
            # end_headers flush the headers first), the body of a small response waited
            # for the client's delayed ACK of the headers, 40 ms a scrape on loopback.
            reason = self.responses.get(code, ("",))[0]
            head = (
                "{} {} {}\r\n"
                "Server: {}\r\n"
                "Date: {}\r\n"
                "Content-Type: {}\r\n"
                "Content-Length: {}\r\n"
                "\r\n".format(
                    self.protocol_version,
                    code,
                    reason,
                    self.version_string(),
                    self.date_time_string(),
                    ctype,
                    len(body),
                )
            )
            self.wfile.write(head.encode("latin-1") + body)

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
