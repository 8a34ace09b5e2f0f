"""A test-owned TCP proxy 127.0.0.1:port → target, that can cut the link.

Killing sshd's listener does not cut established connections (each session has its own sshd
process), so outage tests put this proxy between client and server:

- ``cut()`` blackholes: bytes stop flowing both ways on every connection (nothing is read,
  nothing is lost: like a network partition, TCP keeps it all), and new connections are
  accepted but not forwarded (``cut(refuse_new=True)``: closed at once instead);
- ``restore()`` heals the partition: held connections resume where they stopped, pending
  new ones are forwarded;
- ``drop()`` closes every connection now (an RST to both sides).

One thread runs everything through a selector; ``close()`` stops it.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import struct
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, 0))
        self._listener.listen(128)
        self._listener.setblocking(False)
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._lock = threading.Lock()
        self._cut = False
        self._refuse_new = False
        self._drop_requested = False
        self._stopping = False
        # client socket -> upstream socket and back; "pending" clients wait for a restore.
        self._peer: dict[socket.socket, socket.socket] = {}
        self._pending: list[socket.socket] = []
        self.connections_accepted = 0
        self._thread = threading.Thread(target=self._run, name="tcpproxy", daemon=True)
        self._thread.start()

    # -- control (any thread) -------------------------------------------------------------

    def cut(self, refuse_new: bool = False) -> None:
        with self._lock:
            self._cut = True
            self._refuse_new = refuse_new
        self._wake()

    def restore(self) -> None:
        with self._lock:
            self._cut = False
            self._refuse_new = False
        self._wake()

    def drop(self) -> None:
        with self._lock:
            self._drop_requested = True
        self._wake()

    @property
    def active_connections(self) -> int:
        with self._lock:
            return len(self._peer) // 2

    def close(self) -> None:
        with self._lock:
            self._stopping = True
        self._wake()
        self._thread.join(timeout=5.0)
        for s in (self._listener, self._wake_r, self._wake_w):
            s.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    # -- the proxy thread -----------------------------------------------------------------

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._listener, selectors.EVENT_READ, "listen")
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        registered: set[socket.socket] = set()
        try:
            while True:
                with self._lock:
                    stopping = self._stopping
                    cut = self._cut
                    refuse = self._refuse_new
                    drop = self._drop_requested
                    self._drop_requested = False
                if stopping:
                    break
                if drop:
                    self._drop_all(sel, registered)
                if not cut:
                    for client in self._pending:
                        self._connect_upstream(client)
                    self._pending.clear()
                # While cut, nothing is read: the data stays in kernel buffers, undamaged.
                want = set() if cut else set(self._peer)
                for s in registered - want:
                    sel.unregister(s)
                for s in want - registered:
                    sel.register(s, selectors.EVENT_READ, "conn")
                registered = want
                for key, _ in sel.select(timeout=1.0):
                    if key.data == "wake":
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                    elif key.data == "listen":
                        self._accept(cut, refuse)
                    else:
                        sock = key.fileobj
                        assert isinstance(sock, socket.socket)
                        if sock in self._peer:
                            self._forward(sock, sel, registered)
        finally:
            self._drop_all(sel, registered)
            sel.close()

    def _accept(self, cut: bool, refuse: bool) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except (BlockingIOError, OSError):
                return
            self.connections_accepted += 1
            if cut and refuse:
                _reset(client)
            elif cut:
                self._pending.append(client)
            else:
                self._connect_upstream(client)

    def _connect_upstream(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=5.0)
        except OSError:
            _reset(client)
            return
        client.setblocking(True)
        upstream.setblocking(True)
        with self._lock:
            self._peer[client] = upstream
            self._peer[upstream] = client

    def _forward(
        self, sock: socket.socket, sel: selectors.BaseSelector, registered: set[socket.socket]
    ) -> None:
        other = self._peer[sock]
        try:
            data = sock.recv(65536)
            if data:
                other.sendall(data)
                return
        except OSError:
            pass
        # EOF or error on one side: close the pair.
        self._close_pair(sock, sel, registered)

    def _close_pair(
        self, sock: socket.socket, sel: selectors.BaseSelector, registered: set[socket.socket]
    ) -> None:
        with self._lock:
            other = self._peer.pop(sock, None)
            if other is not None:
                self._peer.pop(other, None)
        for s in (sock, other):
            if s is None:
                continue
            if s in registered:
                sel.unregister(s)
                registered.discard(s)
            s.close()

    def _drop_all(self, sel: selectors.BaseSelector, registered: set[socket.socket]) -> None:
        with self._lock:
            socks = list(self._peer)
            self._peer.clear()
        for s in socks + self._pending:
            if s in registered:
                sel.unregister(s)
                registered.discard(s)
            _reset(s)
        self._pending.clear()


def _reset(s: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a middlebox dropping the flow would."""
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
