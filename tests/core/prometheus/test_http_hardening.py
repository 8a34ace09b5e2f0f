"""The HTTP servers (the /metrics server the sampler's exporter and the app's exporter share,
and the Alertmanager receiver) against hostile clients: idle and half-sent connections time
out, threads stay bounded however many connect, a negative or malformed Content-Length is
refused, and a client reset leaves no traceback."""

from __future__ import annotations

import socket
import struct
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest
from gpufleet.core.prometheus import am_receiver
from gpufleet.core.prometheus.am_receiver import AlertmanagerReceiver
from gpufleet_sampler import metrics_http

TOKEN = "t0ken-for-tests"


class Body:
    def render(self) -> bytes:
        return b"# HELP x x\n# TYPE x gauge\nx 1\n"


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # Handlers read the timeout when they are made: set it first.
    monkeypatch.setattr(metrics_http, "CONNECTION_TIMEOUT_S", 1.0)
    monkeypatch.setattr(am_receiver, "CONNECTION_TIMEOUT_S", 1.0)


@pytest.fixture
def metrics(short_timeout: None) -> Iterator[metrics_http.BoundedHTTPServer]:
    srv = metrics_http.make_server(Body(), "127.0.0.1", 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    t.join(5)


@pytest.fixture
def receiver(short_timeout: None) -> Iterator[AlertmanagerReceiver]:
    rx = AlertmanagerReceiver(lambda alerts: None, token=TOKEN, listen="127.0.0.1:0")
    rx.start()
    yield rx
    rx.stop()


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def closed_by_server(s: socket.socket, within: float = 8.0) -> bool:
    s.settimeout(within)
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def scrape(port: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        body: bytes = r.read()
        return body


def test_idle_and_half_sent_connections_are_closed(
    metrics: metrics_http.BoundedHTTPServer,
) -> None:
    port = metrics.server_address[1]
    idle = connect(port)
    half = connect(port)
    half.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
    assert closed_by_server(idle) and closed_by_server(half)
    assert b"x 1" in scrape(port)


def test_many_connections_hold_bounded_threads_and_scrapes_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Idle connections hold their slot long enough for the rest to find none free.
    monkeypatch.setattr(metrics_http, "CONNECTION_TIMEOUT_S", 5.0)
    metrics = metrics_http.make_server(Body(), "127.0.0.1", 0)
    t = threading.Thread(target=metrics.serve_forever, daemon=True)
    t.start()
    try:
        _many_connections(metrics)
    finally:
        metrics.shutdown()
        metrics.server_close()
        t.join(5)


def _many_connections(metrics: metrics_http.BoundedHTTPServer) -> None:
    port = metrics.server_address[1]
    before = threading.active_count()
    socks = [connect(port) for _ in range(metrics_http.MAX_CONNECTIONS + 40)]
    deadline = time.monotonic() + 20
    while metrics.refused < 40 and time.monotonic() < deadline:
        assert threading.active_count() - before <= metrics_http.MAX_CONNECTIONS
        time.sleep(0.05)
    assert metrics.refused >= 40
    assert threading.active_count() - before <= metrics_http.MAX_CONNECTIONS
    for s in socks:
        s.close()
    # Once the idle ones time out, the server serves again.
    deadline = time.monotonic() + 15
    while True:
        try:
            assert b"x 1" in scrape(port)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_client_reset_leaves_no_traceback(
    metrics: metrics_http.BoundedHTTPServer, capfd: pytest.CaptureFixture[str]
) -> None:
    port = metrics.server_address[1]
    for _ in range(5):
        s = connect(port)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        # RST instead of FIN, while the server writes its answer.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    time.sleep(0.5)
    assert b"x 1" in scrape(port)
    err = capfd.readouterr().err
    assert "Traceback" not in err, err


def post(port: int, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
    s = connect(port)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    s.sendall(f"POST /alertmanager HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode() + body)
    data = b""
    s.settimeout(10)
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data


@pytest.mark.parametrize(
    ("length", "status"),
    [("-5", 400), ("-1", 400), ("+5", 400), ("5 5", 400), ("0x10", 400), ("abc", 400),
     (None, 411), (str(am_receiver.MAX_BODY + 1), 413), ("٣", 400)],
)  # fmt: skip
def test_the_receiver_refuses_a_bad_content_length(
    receiver: AlertmanagerReceiver, length: str | None, status: int
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if length is not None:
        headers["Content-Length"] = length
    got, _ = post(receiver.port, headers, b'{"alerts": []}')
    assert got == status
    # And it still takes a good one.
    body = b'{"version": "4", "status": "firing", "alerts": []}'
    ok, _ = post(receiver.port, {**headers, "Content-Length": str(len(body))}, body)
    assert ok == 200


def test_the_receiver_drops_a_body_that_never_arrives(receiver: AlertmanagerReceiver) -> None:
    s = connect(receiver.port)
    s.sendall(
        f"POST /alertmanager HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Length: 1000\r\n\r\n{".encode()
    )
    assert closed_by_server(s)
