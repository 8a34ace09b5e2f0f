"""The small HTTP servers: every ``/metrics`` endpoint (the sampler's exporter, the laptop's
fleet exporter) and the laptop's Alertmanager receiver serve through ``BoundedHTTPServer``.

A scraper or a stranger on the network must not be able to exhaust the process: each
connection has a read and idle timeout (``CONNECTION_TIMEOUT_S``: a request that does not
arrive in full, or a kept-alive connection left idle, is closed), at most
``MAX_CONNECTIONS`` are served at once (more are closed at once, without a thread), and a
client that resets or times out costs one closed socket, never a traceback on stderr.

Python 3.8, stdlib only.
"""

import contextlib
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Protocol, Tuple, Type

from gpufleet_sampler import metric_names as pn

INDEX_PAGE = (
    b"<html><head><title>gpufleet sampler exporter</title></head><body>"
    b'<h1>gpufleet sampler exporter</h1><p><a href="/metrics">Metrics</a></p></body></html>'
)
# Prometheus scrapes every 15 s or more and reconnects at once when a kept-alive connection
# was closed; a request of ours takes milliseconds.
CONNECTION_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 32


class Renderer(Protocol):
    """What the HTTP handler needs: the app's fleet exporter serves through it too."""

    def render(self) -> bytes: ...


class BoundedHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer with bounded threads and quiet client errors (see the module
    docstring). Handlers should set ``timeout = CONNECTION_TIMEOUT_S``."""

    daemon_threads = True
    max_connections = MAX_CONNECTIONS
    # Connections beyond the slots are accepted and closed at once rather than left to pile
    # up unseen in the kernel's queue (socketserver's default is 5).
    request_queue_size = 128

    def __init__(self, address: Tuple[str, int], handler: Type[BaseHTTPRequestHandler]) -> None:
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self.refused = 0  # connections closed because all slots were taken
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.refused += 1
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        e = sys.exc_info()[1]
        if isinstance(e, OSError):  # reset, broken pipe, timeout: the client's doing
            return
        sys.stderr.write("gpufleet http: {}: {!r}\n".format(client_address, e))


class _V6Server(BoundedHTTPServer):
    address_family = socket.AF_INET6


def bounded_server(
    host: str, port: int, handler: Type[BaseHTTPRequestHandler]
) -> BoundedHTTPServer:
    """A BoundedHTTPServer on host:port (IPv6 when the host has a colon), not yet serving;
    raises OSError when the address is unusable."""
    cls = _V6Server if ":" in host else BoundedHTTPServer
    return cls((host, port), handler)


def content_length(value: Optional[str], limit: int) -> Tuple[Optional[int], int, str]:
    """A request's Content-Length, strictly: (length, 0, "") when it is a plain decimal
    within ``limit``, else (None, HTTP status, reason): 411 missing, 400 malformed or
    negative, 413 too large."""
    if value is None:
        return None, 411, "Content-Length required"
    text = value.strip()
    if not text.isdigit() or not text.isascii():
        return None, 400, "Content-Length must be a non-negative decimal number"
    n = int(text)
    if n > limit:
        return None, 413, "body over {} bytes".format(limit)
    return n, 0, ""


def make_handler(state: Renderer, ready: Optional[Callable[[], bool]] = None) -> Any:
    """The handler of ``/metrics`` (and ``/``); with ``ready``, also ``/-/ready``: 200 while
    it answers True, 503 otherwise (a supervisor's or a load balancer's health probe)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "gpufleet-sampler"
        protocol_version = "HTTP/1.1"  # keep-alive: Prometheus reuses its connection
        timeout = CONNECTION_TIMEOUT_S

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, pn.CONTENT_TYPE, state.render())
            elif path == "/":
                self._send(200, "text/html; charset=utf-8", INDEX_PAGE)
            elif path == "/-/ready" and ready is not None:
                ok = ready()
                self._send(200 if ok else 503, "text/plain; charset=utf-8",
                           b"ready\n" if ok else b"not ready\n")  # fmt: skip
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


def make_server(
    state: Renderer, host: str, port: int, ready: Optional[Callable[[], bool]] = None
) -> BoundedHTTPServer:
    """The /metrics server (not yet serving); raises OSError when the address is unusable."""
    return bounded_server(host, port, make_handler(state, ready))
