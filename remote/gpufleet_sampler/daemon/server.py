"""The running daemon: one thread that samples, keeps the ring and feeds attached clients
through non-blocking sockets; the lock that makes it one per key.

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import errno
import fcntl
import json
import os
import selectors
import signal
import socket
import sys
import time
from collections import deque
from types import FrameType
from typing import Any, Deque, Dict, List, Optional

from gpufleet_sampler import protocol, protocol_schema, stream
from gpufleet_sampler import watchdog as wd
from gpufleet_sampler.daemon import keeper
from gpufleet_sampler.loop import Sampler
from gpufleet_sampler.procs import procfs
from gpufleet_sampler.ring import Ring
from gpufleet_sampler.state_dir import (
    Paths,
    sock_addr,
)

EXIT_USAGE = 2
EXIT_BACKEND = 3


def say(message: str) -> None:
    sys.stderr.write("gpufleet_sampler: {}\n".format(message))
    sys.stderr.flush()


# A client may lag this many bytes of live data behind before it is dropped (at 8 GPUs and
# 1 Hz about three quarters of an hour); its backlog at attach time comes on top.
CLIENT_LIVE_LIMIT = 4 << 20
# An attach that names no run and whose from-seq is at most this far ahead of the ring's head
# is an early client of this run; further ahead, one from a run whose numbering was lost.
EARLY_SLACK = 1000


SEND_CHUNK = 256 << 10


REQUEST_MAX = protocol.REQUEST_MAX_BYTES


STATE_EVERY_S = 10.0


XIDS_KEPT = 1000


def _log(message: str) -> None:
    sys.stderr.write("{} {}\n".format(time.strftime("%Y-%m-%dT%H:%M:%S"), message))
    sys.stderr.flush()


class _Client(object):
    """One connection: a request line first, then (for attach) a queue of lines to send."""

    __slots__ = ("after_seq", "limit", "mode", "out", "queue", "queued", "rbuf", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rbuf = b""
        self.mode = ""  # "" until the request line arrived, then "attach" or "reply"
        self.queue: Deque[bytes] = deque()
        self.queued = 0  # bytes in queue
        self.out = b""  # the chunk being sent
        self.limit = CLIENT_LIVE_LIMIT
        # An early client of this run (its N is ahead of the ring): live messages up to N
        # are not sent to it again; 0 = no filter.
        self.after_seq = 0

    def push(self, lines: List[bytes]) -> None:
        self.queue.extend(lines)
        self.queued += sum(len(x) for x in lines)

    def pending(self) -> bool:
        return bool(self.out) or bool(self.queue)

    def flush(self) -> None:
        """Send what the socket takes now; raises OSError when the peer is gone."""
        while True:
            if not self.out:
                if not self.queue:
                    return
                parts = []
                n = 0
                while self.queue and n < SEND_CHUNK:
                    x = self.queue.popleft()
                    parts.append(x)
                    n += len(x)
                self.queued -= n
                self.out = b"".join(parts)
            try:
                sent = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return
            self.out = self.out[sent:]


class Daemon(object):
    """The sampling loop, the ring and the clients, on one thread."""

    def __init__(self, args: argparse.Namespace, p: Paths, lock_fd: int) -> None:
        self.args = args
        self.p = p
        self.lock_fd = lock_fd
        self.interval = float(args.interval)
        self.idle_exit = float(args.idle_exit)
        self.ring = Ring(interval=self.interval)
        self.sel = selectors.DefaultSelector()
        self.clients: Dict[int, _Client] = {}
        self.stopping = False
        self.started_t = time.time()
        self.last_client_mono = time.monotonic()
        self.xids: List[Dict[str, Any]] = []
        self.xid_count = 0
        self.xids_since = self.started_t
        self.errors = 0
        self.state_due = 0.0
        self.sampler: Any = None
        self.backend: Any = None
        self.hello_line = b""
        self.hello_msg: Dict[str, Any] = {}
        self.watchdog: Optional[wd.Watchdog] = None
        # While the watchdog is armed, a keeper restarts this daemon if it is killed.
        self.keeper = keeper.Ensurer(args, p)
        self.links_watched_until = 0.0
        self.listener: Optional[socket.socket] = None
        self.wake_r: Optional[socket.socket] = None
        self.wake_w: Optional[socket.socket] = None
        self.old_handlers: Dict[int, Any] = {}
        self.old_wakeup_fd = -1

    # -- setup / teardown --

    def open(self) -> None:

        prev = _read_json(self.p.state)
        start_seq = 1
        if prev is not None and isinstance(prev.get("last_seq"), int):
            # Go on from the previous run's numbers: a client's from-seq stays meaningful
            # and what the restart lost shows as a gap.
            start_seq = int(prev["last_seq"]) + 1
            if prev.get("running"):
                # It died without writing its last seq (SIGKILL, OOM, reboot): the file may
                # be STATE_EVERY_S old. Jump past anything it could have emitted since, so
                # no number is ever used twice.
                start_seq += int(STATE_EVERY_S / self.interval + 1) * 16 + 1000
        if prev is not None and prev.get("boot_id") == procfs.boot_id():
            # Xids are facts about this boot of the GPUs: a restarted daemon keeps what the
            # previous one saw, so ``check`` still reports them.
            self.xids = [x for x in prev.get("xids") or [] if isinstance(x, dict)]
            self.xid_count = len(self.xids)
            since = prev.get("xids_since")
            if isinstance(since, (int, float)):
                self.xids_since = float(since)
        self.backend = stream.open_backend(self.args)
        self.sampler = Sampler(
            self.backend,
            self.interval,
            procs_interval=float(self.args.procs_interval),
            start_seq=start_seq,
        )
        self.hello_msg = self.sampler.hello()
        mem_totals = {}
        for g in self.hello_msg.get("gpus") or []:
            total = (g.get("nominal") or {}).get("mem_total_bytes")
            if isinstance(g.get("index"), int) and total:
                mem_totals[g["index"]] = float(total)
        self.watchdog = wd.Watchdog(wd.state_path(self.p.dir, self.p.key), mem_totals)
        self._build_hello()
        # The nvml backend's CPU plan settles over the first ticks (hello's cpu_budget says
        # so): the hello sent on attach is written again once it has.
        self.hello_settled = bool(
            (self.hello_msg.get(protocol.CPU_BUDGET_KEY) or {}).get("settled", True)
        )
        # And again whenever the plan changes later (its reads measured off the budget).
        self.hello_plan = self._plan_version()
        # We hold the lock, so a socket file left here is stale.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.p.sock)
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            ls.bind(sock_addr(self.p.sock))
        finally:
            os.umask(old_umask)
        ls.listen(16)
        ls.setblocking(False)
        self.listener = ls
        self.sel.register(ls, selectors.EVENT_READ, None)
        # Signals wake the select through a socketpair instead of interrupting a tick.
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.wake_w.setblocking(False)
        self.old_wakeup_fd = signal.set_wakeup_fd(self.wake_w.fileno())
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.old_handlers[sig] = signal.signal(sig, self._on_signal)
        self.old_handlers[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self.sel.register(self.wake_r, selectors.EVENT_READ, None)
        self.write_state(running=True)
        _log(
            "daemon {} started: pid {}, run {}, seq from {}, interval {} s".format(
                self.p.key, os.getpid(), self.sampler.run_id, start_seq, self.interval
            )
        )

    def _plan_version(self) -> Optional[int]:
        """The backend's CPU plan number (None: a backend that does not plan)."""
        v = getattr(self.sampler.backend, "plan_version", None)
        return v if isinstance(v, int) else None

    def _build_hello(self) -> None:
        # While armed, hello says so: the laptop then leaves the alert's action to it.
        msg = dict(self.hello_msg)
        if self.watchdog is not None and self.watchdog.armed:
            msg["watchdog"] = self.watchdog.summary()
        self.hello_line = (protocol.encode(msg) + "\n").encode("utf-8")
        if self.watchdog is not None:
            self.watchdog.changed = False

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        self.stopping = True

    def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.wait(30.0)  # a provider stop under way is let finish
        for c in list(self.clients.values()):
            self._drop(c, None)
        if self.listener is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.p.sock)
            self.listener.close()
        for s in (self.wake_r, self.wake_w):
            if s is not None:
                s.close()
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(self.old_wakeup_fd)
        if self.backend is not None:
            # Closing ends simulated processes; a second signal must not interrupt it.
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            try:
                self.backend.close()
            except Exception as e:  # closing must not hide the state write below
                _log("closing the backend failed: {}".format(e))
        for signum, handler in self.old_handlers.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)
        if self.sampler is not None:
            self.write_state(running=False)
            _log("daemon {} stopped".format(self.p.key))

    # -- the loop --

    def serve(self) -> None:
        mono0 = time.monotonic()
        k = 0
        while not self.stopping:
            now = time.monotonic()
            deadline = mono0 + k * self.interval
            if now >= deadline:
                if now - deadline > self.interval:
                    # Fell behind (stalled driver, suspended VM): skip, do not burst, and
                    # count what was skipped (each sample says how many so far).
                    k_now = int((now - mono0) / self.interval)
                    self.sampler.skip(k_now - k)
                    k = k_now
                self.tick(now, time.time())
                k += 1
                continue
            if self.clients_attached():
                self.last_client_mono = now
            elif now - self.last_client_mono >= self.idle_exit and not self._watching():
                _log("no client for {:.0f} s: exiting".format(self.idle_exit))
                break
            timeout = deadline - now
            if not self.clients_attached():
                timeout = min(timeout, max(0.0, self.last_client_mono + self.idle_exit - now))
            for key, mask in self.sel.select(timeout):
                self.handle(key, mask)

    def _watching(self) -> bool:
        # An armed watchdog keeps the daemon up: it is what watches while no one is attached.
        w = self.watchdog
        return w is not None and w.phase in ("watching", "pending", "cancelled", "acting")

    def clients_attached(self) -> bool:
        return any(c.mode == "attach" for c in self.clients.values())

    def tick(self, mono: float, wall: float) -> None:
        try:
            msgs = self.sampler.step(mono, wall)
        except Exception as e:  # the daemon outlives a bad tick; the gap shows in seq
            self.errors += 1
            if self.errors <= 10 or self.errors % 1000 == 0:
                _log("tick failed ({} so far): {!r}".format(self.errors, e))
            return
        new_hello = False
        w = self.watchdog
        if w is not None:
            for ev in w.take_queued():
                msgs.append(self.sampler.extra(ev, wall))
        if w is not None and w.armed:
            for m in list(msgs):
                if m.get("kind") == protocol.KIND_SAMPLE:
                    for ev in w.observe(m.get("gpus") or [], mono, wall):
                        msgs.append(self.sampler.extra(ev, wall))
            if w.changed:
                self._build_hello()
                new_hello = True
        said = self.keeper.tick(self._watching(), mono)
        if said:
            _log(said)
        plan = self._plan_version()
        if not self.hello_settled or plan != self.hello_plan:
            hello = self.sampler.hello()
            if (hello.get(protocol.CPU_BUDGET_KEY) or {}).get("settled", True):
                self.hello_msg = hello
                self._build_hello()
                self.hello_settled = True
                self.hello_plan = plan
                new_hello = True
        # A hello rewritten on this tick (the CPU plan settled or changed, the watchdog moved)
        # goes to the attached clients too, ahead of the tick's lines: it carries no seq, and
        # a client takes a hello of its own run as news, not as a restart.
        head = [self.hello_line] if new_hello else []
        lines = []
        seqs = []
        xid_seen = False
        for m in msgs:
            lines.append(self._append(m))
            seqs.append(int(m["seq"]))
            if m.get("kind") == protocol.KIND_EVENT and m.get("type") == protocol.EVENT_XID:
                xid_seen = True
                self.xid_count += 1
                self.xids.append({k: m.get(k) for k in ("seq", "t", "gpu", "code", "message")})
                del self.xids[:-XIDS_KEPT]
        for c in list(self.clients.values()):
            if c.mode != "attach":
                continue
            if c.after_seq:
                c.push(head + [lines[i] for i, s in enumerate(seqs) if s > c.after_seq])
                if seqs and seqs[-1] >= c.after_seq:
                    c.after_seq = 0
            else:
                c.push(head + lines)
            if c.queued > c.limit:
                self._drop(c, "too slow: {} bytes queued".format(c.queued))
                continue
            self._flush(c)
        if xid_seen or mono >= self.state_due:
            self.state_due = mono + STATE_EVERY_S
            self.write_state(running=True)

    def _append(self, m: Dict[str, Any]) -> bytes:
        seq = int(m["seq"])
        try:
            line = (protocol.encode(m) + "\n").encode("utf-8")
        except (TypeError, ValueError) as e:
            # Keep the seq: a message that cannot be encoded becomes a note, not a gap.
            text = "a {} message could not be encoded: {}".format(m.get("kind"), e)
            note = protocol_schema.numbered(
                seq, m.get("t"), protocol_schema.event(protocol.EVENT_NOTE, None, None, text)
            )
            line = (protocol.encode(note) + "\n").encode("utf-8")
        kind = str(m.get("kind"))
        fp = None
        if kind == protocol.KIND_PROCS:
            fp = ",".join(
                sorted(
                    "{}:{}:{}".format(p.get("gpu"), p.get("pid"), p.get("start_ticks"))
                    for p in m.get("procs") or ()
                )
            )
        self.ring.append(seq, float(m.get("t") or 0.0), kind, line, fp)
        return line

    # -- sockets --

    def handle(self, key: "selectors.SelectorKey", mask: int) -> None:
        sock = key.fileobj
        if sock is self.listener:
            self._accept()
            return
        if sock is self.wake_r:
            try:
                while self.wake_r.recv(512):
                    pass
            except OSError:
                pass
            return
        c = self.clients.get(key.fd)
        if c is None:
            return
        if mask & selectors.EVENT_READ:
            try:
                data = c.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                data = b""
            if data == b"":
                self._drop(c, None)
                return
            if data and c.mode != "reply":
                # The request line; then, from an attached client, ``watch_links`` lines
                # (the per-link view opened on the laptop). A reply client's further bytes
                # are ignored: only its EOF matters.
                c.rbuf += data
                while b"\n" in c.rbuf and c.mode != "reply" and self.clients.get(key.fd) is c:
                    line, c.rbuf = c.rbuf.split(b"\n", 1)
                    if c.mode:
                        self._attached_request(line)
                    else:
                        self._request(c, line)
                if len(c.rbuf) > REQUEST_MAX:
                    self._drop(c, "request too long")
                    return
        # The read above may have dropped it.
        if mask & selectors.EVENT_WRITE and self.clients.get(key.fd) is c:
            self._flush(c)

    def _accept(self) -> None:
        assert self.listener is not None
        while True:
            try:
                s, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                _log("accept failed: {}".format(e))
                return
            s.setblocking(False)
            c = _Client(s)
            self.clients[s.fileno()] = c
            self.sel.register(s, selectors.EVENT_READ, None)

    def _request(self, c: _Client, raw: bytes) -> None:
        try:
            req = json.loads(raw.decode("utf-8"))
            op = req.get("op") if isinstance(req, dict) else None
        except (UnicodeDecodeError, ValueError):
            req, op = {}, None
        if op == "attach":
            self._watch_links(req.get(protocol.WATCH_LINKS_KEY))
        elif op == "watch_links":
            self._watch_links(req.get("seconds"))
        if op == "attach":
            c.mode = "attach"
            from_seq = req.get("from_seq", 0)
            if isinstance(from_seq, bool) or not isinstance(from_seq, int) or from_seq < 0:
                from_seq = 0
            run_id = req.get("run_id")
            backlog = [self.hello_line, *self._backlog(c, from_seq, run_id)]
            c.push(backlog)
            # The backlog was produced at the client's request: only live data counts
            # toward the slow-client limit.
            c.limit = c.queued + CLIENT_LIVE_LIMIT
            self.last_client_mono = time.monotonic()
            self._flush(c)
            return
        c.mode = "reply"
        if op == "status":
            reply = self.status()
        elif op == "watchdog" and self.watchdog is not None:
            cfg = req.get("config")
            try:
                state = self.watchdog.request(
                    str(req.get("cmd")), cfg if isinstance(cfg, dict) else None
                )
                reply = {"ok": True, "watchdog": state}
            except ValueError as e:
                reply = {"ok": False, "message": str(e), "watchdog": self.watchdog.summary()}
            if self.watchdog.changed:
                self._build_hello()
        elif op == "watch_links":
            reply = {"ok": True}
        elif op == "stop":
            reply = {"ok": True, "pid": os.getpid(), "run_id": self.sampler.run_id}
            self.keeper.stop()  # a deliberate stop: not undone by the keeper
            self.stopping = True
        else:
            reply = {"ok": False, "message": "unknown request"}
        c.push([(json.dumps(reply) + "\n").encode("utf-8")])
        self._flush(c)
        if not c.pending():
            self._drop(c, None)

    def _attached_request(self, raw: bytes) -> None:
        """A line from an attached client: only ``watch_links`` means anything there."""
        try:
            req = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return
        if isinstance(req, dict) and req.get("op") == "watch_links":
            self._watch_links(req.get("seconds"))

    def _watch_links(self, secs: Any) -> None:
        """Someone looks at the per-link NVLink values (the laptop's per-link view, or a link
        alert it is judging): read them at their wanted period for that long (capped: a
        client that forgets cannot pin it)."""
        if isinstance(secs, (int, float)) and not isinstance(secs, bool) and secs > 0:
            now = time.monotonic()
            secs = min(float(secs), protocol.WATCH_LINKS_MAX_S)
            self.links_watched_until = max(self.links_watched_until, now + secs)
            self.sampler.backend.watch_links(secs, now)

    def _backlog(self, c: _Client, from_seq: int, run_id: Any = None) -> List[bytes]:
        ring = self.ring
        last = ring.last_seq
        first = ring.first_seq
        head = last if last is not None else self.sampler.next_seq - 1
        if from_seq > head and self._same_run(run_id, from_seq - head):
            # The client is early (it asked for numbers of this run not made yet): nothing
            # to backfill, and live data starts after its N.
            c.after_seq = from_seq
            return []
        if last is not None and from_seq > last:
            # A number from the future: the client's N belongs to another run whose state
            # file is gone. Send all we have, and say so.
            lines, _ = ring.since(0)
            note = self._gap_note(
                from_seq,
                first if first is not None else 1,
                last,
                "restart",
                "the sampler daemon restarted and lost the previous run's numbering; "
                "sending everything this run holds",
            )
            return [note, *lines]
        lines, gap = ring.since(from_seq)
        if not gap:
            return lines
        raw_first = ring.raw_first_seq() or (last or 0) + 1
        if first is not None and from_seq + 1 < first and from_seq == 0:
            # A client that has nothing (a fresh attach, ``gpufleet stream``): the numbers
            # of an earlier run are no loss to it, and saying so would be a false alarm.
            return lines
        if first is not None and from_seq + 1 < first:
            note = self._gap_note(
                from_seq,
                from_seq + 1,
                first - 1,
                "restart",
                "the sampler daemon restarted: messages {} to {} of the previous run are "
                "lost".format(from_seq + 1, first - 1),
            )
        else:
            note = self._gap_note(
                from_seq,
                from_seq + 1,
                raw_first - 1,
                "ring",
                "messages {} to {} are older than the sampler's raw ring: only one sample "
                "a minute, every event and every process change are kept".format(
                    from_seq + 1, raw_first - 1
                ),
            )
        return [note, *lines]

    def _same_run(self, run_id: Any, ahead: int) -> bool:
        """Whether a from-seq ahead of the ring's head by ``ahead`` messages belongs to this
        run: the client says so (its hello's run id); a client that names no run is taken
        at its word while it is not far ahead (numbers are never reused on one host), and as
        one from a run whose state was lost beyond that."""
        if isinstance(run_id, str) and run_id:
            return bool(run_id == self.sampler.run_id)
        return ahead <= EARLY_SLACK

    def _gap_note(self, seq: int, gap_from: int, gap_to: int, reason: str, text: str) -> bytes:
        # seq is the client's own N: it neither advances nor rewinds the client's counter.
        ev = protocol_schema.event(
            protocol.EVENT_NOTE, None, None, text, gap_from=gap_from, gap_to=gap_to, reason=reason
        )
        note = protocol_schema.numbered(seq, round(time.time(), 3), ev)
        return (protocol.encode(note) + "\n").encode("utf-8")

    def _flush(self, c: _Client) -> None:
        try:
            c.flush()
        except OSError:
            self._drop(c, None)
            return
        want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.pending() else 0)
        try:
            if self.sel.get_key(c.sock).events != want:
                self.sel.modify(c.sock, want, None)
        except (KeyError, ValueError):
            pass
        if c.mode == "reply" and not c.pending():
            self._drop(c, None)

    def _drop(self, c: _Client, why: Optional[str]) -> None:
        if why:
            _log("client dropped: {}".format(why))
        fd = c.sock.fileno()
        self.clients.pop(fd, None)
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(c.sock)
        c.sock.close()

    # -- state --

    def status(self) -> Dict[str, Any]:
        return {
            "ok": True,
            "pid": os.getpid(),
            "key": self.p.key,
            "run_id": self.sampler.run_id,
            "backend": self.args.backend,
            "scenario": getattr(self.backend, "scenario", None),
            "seed": self.args.seed,
            "interval_s": self.interval,
            "started_t": round(self.started_t, 3),
            "first_seq": self.ring.first_seq,
            "raw_first_seq": self.ring.raw_first_seq(),
            "last_seq": self.ring.last_seq,
            "clients": sum(1 for c in self.clients.values() if c.mode == "attach"),
            "ring_lines": len(self.ring),
            "xid_count": self.xid_count,
            "socket": self.p.sock,
            "watchdog": self.watchdog.summary() if self.watchdog is not None else None,
            # Seconds the per-link NVLink values are still read at their wanted period for.
            "links_watched_s": round(max(0.0, self.links_watched_until - time.monotonic()), 1),
        }

    def write_state(self, running: bool) -> None:
        state = self.status()
        state.pop("ok", None)
        last = self.ring.last_seq
        if last is None:
            last = self.sampler.next_seq - 1
        state.update(
            {
                "running": running,
                "updated_t": round(time.time(), 3),
                "last_seq": last,
                "xids": self.xids,
                "xids_since": round(self.xids_since, 3),
                "boot_id": procfs.boot_id(),
                "tick_errors": self.errors,
            }
        )
        tmp = "{}.{}.tmp".format(self.p.state, os.getpid())
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(state, f)
            os.replace(tmp, self.p.state)
        except OSError as e:
            _log("cannot write {}: {}".format(self.p.state, e))


def _read_json(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _take_lock(p: Paths) -> Optional[int]:
    """The locked lock fd, or None when another daemon holds it."""
    fd = os.open(p.lock, os.O_RDWR | os.O_CREAT, 0o600)
    # A checker (``stop``, ``check``) may hold a shared lock for an instant: retry briefly.
    for _ in range(20):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if lock_holder_pid_file(fd) is not None:
                os.close(fd)
                return None
            time.sleep(0.025)
    else:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
    return fd


def lock_holder_pid_file(fd: int) -> Optional[int]:
    """The pid a running daemon wrote into the lock file, if it did."""
    data = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    if data.isdigit() and int(data) != os.getpid():
        try:
            os.kill(int(data), 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return int(data)
    return None


def serve_foreground(args: argparse.Namespace, p: Paths) -> int:
    """Run the daemon in this process until stopped, idle or signalled."""
    lock_fd = _take_lock(p)
    if lock_fd is None:
        say("a sampler daemon for {} is already running".format(p.key))
        return 0
    d = Daemon(args, p, lock_fd)
    try:
        try:
            d.open()
        except Exception as e:  # a backend that cannot start: one clear line
            msg = stream.backend_error(args, e)
            say(msg)
            return EXIT_USAGE if isinstance(e, ValueError) else EXIT_BACKEND
        d.serve()
        return 0
    finally:
        d.close()
        os.close(lock_fd)
