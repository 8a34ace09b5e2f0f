"""Talking to a running daemon: connect to its socket, one request and its reply, relay an
attached stream to stdout, and the Xids it saw (for ``check``).

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import json
import os
import selectors
import socket
import stat
from typing import Any, Dict, Optional

from gpufleet_sampler import protocol
from gpufleet_sampler.state_dir import (
    Paths,
    read_state,
    sock_addr,
)

EXIT_NO_DAEMON = 1


def xid_facts(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """For ``check``: the Xids the running daemon of this identity saw, as
    ``{"seen": bool, "events": [{seq, t, gpu, code, message}], "since": t, "run_id": ...}``;
    None when no daemon runs (then Xids are unknown)."""
    st = read_state(args.backend, args.scenario, int(args.seed), getattr(args, "state_dir", None))
    if st is None:
        return None
    events = [x for x in st.get("xids") or [] if isinstance(x, dict)]
    return {
        "seen": bool(events),
        "events": events,
        "since": st.get("xids_since", st.get("started_t")),
        "run_id": st.get("run_id"),
        "last_seq": st.get("last_seq"),
    }


def connect(p: Paths, timeout: float = 5.0) -> Optional[socket.socket]:
    """A socket connected to the running daemon, or None when none answers."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock_addr(p.sock))
    except OSError:
        s.close()
        return None
    return s


def request(p: Paths, req: Dict[str, Any], timeout: float = 5.0) -> Optional[Dict[str, Any]]:
    """One request, one JSON line back; None when no daemon answers."""
    s = connect(p, timeout)
    if s is None:
        return None
    try:
        s.sendall((json.dumps(req) + "\n").encode("utf-8"))
        buf = b""
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        line = buf.split(b"\n", 1)[0]
        data = json.loads(line.decode("utf-8")) if line else None
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        s.close()


def _stdin_watchable() -> bool:
    """Watch stdin for EOF only where EOF means "the client went away": a pipe or a socket
    (an SSH channel, a subprocess pipe). /dev/null, a file or a terminal do not say that."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def error_line(message: str, code: str) -> None:
    try:
        msg = {"kind": protocol.KIND_ERROR, "message": message, "code": code}
        _write_all((protocol.encode(msg) + "\n").encode("utf-8"))
    except OSError:
        pass


def _forward(sock: socket.socket, buf: bytes) -> bytes:
    """Send the complete request lines of ``buf`` (the client's ``watch_links``) on to the
    daemon; returns what is left of an unfinished line (dropped when over-long)."""
    *lines, rest = buf.split(b"\n")
    for line in lines:
        if 0 < len(line) <= protocol.REQUEST_MAX_BYTES:
            # A full socket buffer drops it: the client renews its request anyway.
            with contextlib.suppress(BlockingIOError, InterruptedError):
                sock.sendall(line + b"\n")
    return rest if len(rest) <= protocol.REQUEST_MAX_BYTES else b""


def relay(sock: socket.socket) -> int:
    """Copy the daemon's lines to stdout until stdin closes, stdout breaks or the daemon
    goes away; request lines on stdin go on to the daemon."""
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ, "sock")
    if _stdin_watchable():
        sel.register(0, selectors.EVENT_READ, "stdin")
    pending = b""
    try:
        while True:
            for key, _ in sel.select():
                if key.data == "stdin":
                    try:
                        data = os.read(0, 65536)
                    except OSError:
                        data = b""
                    if not data:
                        return 0
                    pending = _forward(sock, pending + data)
                    continue
                try:
                    data = sock.recv(1 << 18)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    error_line("the sampler daemon closed the stream", "daemon_exit")
                    return EXIT_NO_DAEMON
                _write_all(data)
    finally:
        sel.close()
