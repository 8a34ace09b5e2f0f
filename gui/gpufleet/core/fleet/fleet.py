"""The fleet: one HostSession per host, all running at once, and their events fanned out.

Subscribers get a bounded ``queue.Queue`` each. A slow subscriber never blocks a session: when
its queue is full the oldest event is dropped and counted (``dropped(q)``). Commands go the
other way as one-shot remote calls on a connection of their own (``kill``, ``check``), never
through the stream, so they work while a stream reconnects.
"""

from __future__ import annotations

import getpass
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_state_dir, is_demo_host
from gpufleet.core.fleet.events import (
    CONNECTING,
    STOPPED,
    FleetEvent,
    HostGap,
    HostMessage,
    HostStatus,
)
from gpufleet.core.fleet.session import HostSession, Opener
from gpufleet.core.history.audit import append_audit
from gpufleet.core.link import sampler_argv as samplercmd
from gpufleet.core.link.channel import Transport, TransportError, last_line
from gpufleet.core.link.deploy import undeploy as undeploy_sampler
from gpufleet.core.link.nvidia_smi_link import with_collector
from gpufleet.core.link.transport import open_transport
from gpufleet.core.model.errors import ErrorKind, GpufleetError
from gpufleet.core.wire.messages import Proc

__all__ = [
    "Fleet",
    "FleetError",
    "FleetEvent",
    "HostGap",
    "HostMessage",
    "HostStatus",
    "KillResult",
]

log = logging.getLogger(__name__)

KILL_RESULTS = ("exited", "still_running", "refused", "not_found", "permission_denied", "error")


class FleetError(GpufleetError):
    """A fleet command failed; ``kind`` as in TransportError, plus ``unknown_host`` and
    ``no_process``."""

    def __init__(self, message: str, kind: ErrorKind = "error") -> None:
        super().__init__(message, kind)


@dataclass(frozen=True)
class KillResult:
    host: str
    pid: int
    result: str  # one of KILL_RESULTS ("error": the host could not be asked)
    message: str
    signal: str
    # What NVML said of the killed processes' GPU memory afterwards (the sampler's
    # ``memory`` object: ``freed``, ``released_bytes``, ``message``), when it was watched.
    memory: Mapping[str, Any] | None = None
    # A tree kill: each member's pid, name and result.
    tree: tuple[Mapping[str, Any], ...] = ()


class _Subscriber:
    __slots__ = ("dropped", "q")

    def __init__(self, maxsize: int) -> None:
        self.q: queue.Queue[FleetEvent] = queue.Queue(maxsize)
        self.dropped = 0

    def put(self, ev: FleetEvent) -> None:
        q = self.q
        while True:
            try:
                q.put_nowait(ev)
                return
            except queue.Full:
                try:
                    q.get_nowait()
                    self.dropped += 1
                except queue.Empty:
                    pass


class Fleet:
    """Many host sessions at once (see the module docstring)."""

    def __init__(
        self,
        hosts: Sequence[HostConfig],
        *,
        on_unknown_key: Callable[[str, str, str], bool] | None = None,
        accept_new: bool = False,
        demo: bool | None = None,
        state_dir: str | None = None,
        opener: Opener | None = None,
        connect_timeout: float = 8.0,
    ) -> None:
        if accept_new:

            def on_unknown_key(label: str, key_type: str, fingerprint: str) -> bool:
                return True

        self._on_unknown_key = on_unknown_key
        self._hosts: dict[str, HostConfig] = {}
        for h in hosts:
            if h.name in self._hosts:
                raise FleetError(f"two hosts are named {h.name!r}", "config")
            self._hosts[h.name] = h
        # The demo fleet keeps its own audit log and sampler state (DESIGN: never mixed with
        # real data); a fleet made only of demo hosts is a demo fleet.
        self.demo = demo if demo is not None else bool(hosts) and all(map(is_demo_host, hosts))
        self._state_dir = state_dir
        self._opener = opener
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._sessions: dict[str, HostSession] = {}
        self._subs: list[_Subscriber] = []
        self._started = False
        # Hosts not to connect to (host -> why): stopped at the provider, paying for storage
        # or ended. Connecting would only fail, again and again, as "unreachable".
        self._parked: dict[str, str] = {}

    # ---------------------------------------------------------------------------- events

    def subscribe(self, maxsize: int = 100_000) -> queue.Queue[FleetEvent]:
        sub = _Subscriber(maxsize)
        with self._lock:
            self._subs = [*self._subs, sub]
        return sub.q

    def unsubscribe(self, q: queue.Queue[FleetEvent]) -> None:
        with self._lock:
            self._subs = [s for s in self._subs if s.q is not q]

    def dropped(self, q: queue.Queue[FleetEvent]) -> int:
        """Events dropped from this subscriber's queue because it was full."""
        for s in self._subs:
            if s.q is q:
                return s.dropped
        return 0

    def _publish(self, ev: FleetEvent) -> None:
        for s in self._subs:  # a copy-on-write list: no lock on the hot path
            s.put(ev)

    # ---------------------------------------------------------------------------- sessions

    def _state_dir_for(self, host: HostConfig) -> str | None:
        if self._state_dir is not None:
            return self._state_dir
        if is_demo_host(host):
            return str(demo_state_dir())
        return None

    def _new_session(self, host: HostConfig) -> HostSession:
        return HostSession(
            host,
            self._publish,
            opener=self._opener,
            on_unknown_key=self._on_unknown_key,
            state_dir=self._state_dir_for(host),
            connect_timeout=self._connect_timeout,
        )

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            for h in self._hosts.values():
                if h.name not in self._parked:
                    self._sessions[h.name] = self._new_session(h)
            sessions = list(self._sessions.values())
        for s in sessions:
            s.start()

    def stop(self, timeout: float = 10.0) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
            self._started = False
        # Ask everyone first, then wait: the slowest stop bounds the total, not the sum.
        for s in sessions:
            s.request_stop()
        deadline = time.monotonic() + timeout
        for s in sessions:
            s.join(max(0.0, deadline - time.monotonic()))

    def stop_samplers(self, hosts: Sequence[str] | None = None) -> dict[str, str | None]:
        """Stop the sampler daemons of these hosts (default: all), e.g. the demo fleet's when
        the app quits: a demo has no reason to keep sampling for a day. Blocking; returns
        host -> None when stopped, else why not (one line)."""
        out: dict[str, str | None] = {}
        for name in hosts if hosts is not None else list(self._hosts):
            h = self._host(name)
            try:
                transport = self._open(h)
                try:
                    argv = samplercmd.stop_argv(
                        transport.ensure_sampler(), h, self._state_dir_for(h)
                    )
                    rc, out_b, err = transport.run(argv, timeout=30.0)
                finally:
                    transport.close()
            except TransportError as e:
                out[name] = str(e)
                continue
            out[name] = None if rc == 0 else (last_line(err) or last_line(out_b) or f"exit {rc}")
        return out

    def hosts(self) -> list[HostConfig]:
        with self._lock:
            return list(self._hosts.values())

    def add_host(self, h: HostConfig) -> None:
        with self._lock:
            if h.name in self._hosts:
                raise FleetError(f"a host named {h.name!r} is already in the fleet", "config")
            self._hosts[h.name] = h
            live = self._started and h.name not in self._parked
            session = self._new_session(h) if live else None
            if session is not None:
                self._sessions[h.name] = session
        if session is not None:
            session.start()

    def park(self, name: str, reason: str) -> None:
        """Stop connecting to ``name`` (its instance is stopped or gone at the provider):
        its session ends and the host shows as stopped, with ``reason``, until ``unpark``."""
        with self._lock:
            self._host(name)
            self._parked[name] = reason
            session = self._sessions.pop(name, None)
        if session is not None:
            session.stop()
        self._publish(HostStatus(name, STOPPED, reason, time.time()))

    def unpark(self, name: str) -> None:
        """Connect to ``name`` again (its instance runs again)."""
        with self._lock:
            if self._parked.pop(name, None) is None:
                return
            host = self._hosts.get(name)
            session = self._new_session(host) if host is not None and self._started else None
            if session is not None:
                self._sessions[name] = session
        if session is not None:
            session.start()

    def parked(self, name: str) -> str | None:
        """Why ``name`` is not connected to, when it is parked."""
        return self._parked.get(name)

    def remove_host(self, name: str, *, undeploy: bool = False) -> None:
        """Stop watching a host; with ``undeploy`` also stop its sampler and delete what was
        uploaded there."""
        with self._lock:
            host = self._hosts.pop(name, None)
            session = self._sessions.pop(name, None)
            self._parked.pop(name, None)
        if host is None:
            raise FleetError(f"no host named {name!r} in the fleet", "unknown_host")
        if session is not None:
            session.stop()
        if undeploy:
            transport = self._open(host)
            try:
                undeploy_sampler(transport, host, self._state_dir_for(host))
            finally:
                transport.close()

    def session(self, host: str) -> HostSession | None:
        return self._sessions.get(host)

    def status(self, host: str) -> HostStatus:
        s = self._sessions.get(host)
        if s is not None:
            return s.status()
        if host not in self._hosts:
            raise FleetError(f"no host named {host!r} in the fleet", "unknown_host")
        parked = self._parked.get(host)
        if parked is not None:
            return HostStatus(host, STOPPED, parked, time.time())
        return HostStatus(host, CONNECTING if self._started else "stopped", None, time.time())

    # ---------------------------------------------------------------------------- commands

    def _host(self, name: str) -> HostConfig:
        h = self._hosts.get(name)
        if h is None:
            raise FleetError(f"no host named {name!r} in the fleet", "unknown_host")
        return h

    def _open(self, host: HostConfig) -> Transport:
        if self._opener is not None:
            return self._opener(host)
        return with_collector(
            open_transport(
                host, on_unknown_key=self._on_unknown_key, connect_timeout=self._connect_timeout
            ),
            host,
        )

    def watch_links(self, host: str, seconds: float) -> bool:
        """Per-link NVLink values at their full rate from ``host`` for ``seconds`` (see
        ``HostSession.watch_links``); False for a host with no session."""
        s = self._sessions.get(host)
        return s is not None and s.watch_links(seconds)

    def find_proc(self, host: str, pid: int) -> Proc | None:
        """The process with this PID in the host's latest process snapshot, if any."""
        s = self._sessions.get(host)
        procs = s.latest_procs if s is not None else None
        if procs is None:
            return None
        for p in procs.procs:
            # An NVML entry of another container may carry the same number as a process
            # here: only a process here is the one a kill addresses.
            if p.pid == pid and p.here:
                return p
        return None

    def check(self, host: str) -> dict[str, Any]:
        """The raw health facts from the sampler's ``check`` (verdicts: core.health)."""
        h = self._host(host)
        try:
            transport = self._open(h)
            try:
                prefix = transport.ensure_sampler()
                argv = samplercmd.check_argv(prefix, h, self._state_dir_for(h))
                rc, out, err = transport.run(argv, timeout=120.0)
            finally:
                transport.close()
        except TransportError as e:
            raise FleetError(str(e), e.kind) from e
        obj = _last_json_object(out)
        if obj is None:
            detail = last_line(err) or last_line(out) or f"exit status {rc}"
            raise FleetError(f"{h.name}: the sampler's check gave no result: {detail}", "sampler")
        return obj

    def bench(
        self,
        host: str,
        on_line: Callable[[bytes], None],
        gpus: list[int] | None = None,
        seconds: float = 60.0,
        force: bool = False,
    ) -> int:
        """Run the arrival benchmark on ``host``, handing each line to ``on_line`` as it comes
        (progress). Blocking; an exception in ``on_line`` or a KeyboardInterrupt closes the
        stream, and the end of its stdin makes the instance end the benchmark's processes.
        Returns the number of lines."""
        h = self._host(host)
        n = 0
        try:
            transport = self._open(h)
            try:
                prefix = transport.ensure_sampler()
                stream = transport.stream(samplercmd.bench_argv(prefix, h, gpus, seconds, force))
                try:
                    for line in stream:
                        n += 1
                        on_line(line)
                finally:
                    stream.close()
            finally:
                transport.close()
        except TransportError as e:
            raise FleetError(str(e), e.kind) from e
        return n

    def watchdog(
        self, host: str, cmd: str, options: list[str] | None = None, timeout: float = 60.0
    ) -> dict[str, Any]:
        """The on-instance watchdog's ``arm|disarm|status|cancel`` (its JSON reply). Arming
        starts the daemon first: it is the daemon that watches. Blocking."""
        h = self._host(host)
        try:
            transport = self._open(h)
            try:
                prefix = transport.ensure_sampler()
                sd = self._state_dir_for(h)
                if cmd == "arm":
                    transport.run(samplercmd.daemon_argv(prefix, h, sd), timeout=timeout)
                argv = samplercmd.watchdog_argv(prefix, h, cmd, options, sd)
                rc, out, err = transport.run(argv, timeout=timeout)
            finally:
                transport.close()
        except TransportError as e:
            raise FleetError(str(e), e.kind) from e
        obj = _last_json_object(out)
        if obj is None:
            detail = last_line(err) or last_line(out) or f"exit status {rc}"
            raise FleetError(
                f"{h.name}: the sampler's watchdog gave no answer: {detail}", "sampler"
            )
        return obj

    def run_shell(self, host: str, command: str, timeout: float = 120.0) -> tuple[int, str]:
        """Run a shell command line on a host (a rule's remote action, e.g. ``sudo shutdown
        -h now``): (exit status, output). Blocking: call it off the GUI thread. The caller
        writes the audit line (``gpufleet.core.alerts.actions``)."""
        h = self._host(host)
        try:
            transport = self._open(h)
            try:
                rc, out, err = transport.run(["sh", "-c", command], timeout=timeout)
            finally:
                transport.close()
        except TransportError as e:
            raise FleetError(str(e), e.kind) from e
        return rc, (out + err).decode("utf-8", "replace")

    def kill(
        self,
        host: str,
        pid: int,
        start_ticks: int | None = None,
        signal: str = "TERM",
        grace_s: float = 5.0,
        tree: bool = False,
        watch_s: float = 0.0,
        seen: Proc | None = None,
    ) -> KillResult:
        """Signal a process on a host only if it is still the one with ``start_ticks`` (its
        start time: when None, the one in the latest process snapshot). ``pid`` is the PID in
        the sampler's namespace (``Proc.pid``; never an NVML host PID of a process that is not
        here). ``tree`` ends its descendants and orphaned process group too; ``watch_s`` > 0
        waits that long for NVML to show its GPU memory released. Blocking: call it off the
        GUI thread. Every attempt is appended to the audit log, with what the process was
        (``seen``: the caller's snapshot of it, for a caller whose session has ended)."""
        h = self._host(host)
        if h.backend == "sim":
            watch_s = 0.0  # simulated GPUs: there is no NVML to watch
        proc = self.find_proc(host, pid) or seen
        if start_ticks is None:
            if proc is None or proc.start_ticks is None:
                raise FleetError(
                    f"PID {pid} is not in the latest process list of {host}: nothing to check "
                    "its identity against, so it is not killed",
                    "no_process",
                )
            start_ticks = proc.start_ticks
        entry: dict[str, Any] = {
            "action": "kill",
            "by": getpass.getuser(),  # who at the laptop: the bundle's "who killed it"
            "host": host,
            "pid": pid,
            "start_ticks": start_ticks,
            "signal": signal,
            "grace_s": grace_s,
            "sudo": h.allow_sudo_kill,
            "tree": tree,
        }
        if proc is not None:
            entry.update(gpu=proc.gpu, user=proc.user, name=proc.name, cmd=proc.cmd)
            if proc.mapping is not None:
                entry.update(host_pid=proc.host_pid, mapping=proc.mapping)
        memory: Mapping[str, Any] | None = None
        members: tuple[Mapping[str, Any], ...] = ()
        try:
            transport = self._open(h)
            try:
                prefix = transport.ensure_sampler()
                argv = samplercmd.kill_argv(
                    prefix, pid, start_ticks, signal, grace_s, h.allow_sudo_kill, tree, watch_s
                )
                rc, out, err = transport.run(argv, timeout=grace_s + watch_s + 60.0)
            finally:
                transport.close()
        except TransportError as e:
            result, message = "error", str(e)
        else:
            obj = _last_json_object(out)
            if obj is not None and obj.get("result") in KILL_RESULTS:
                result = str(obj["result"])
                message = str(obj.get("message") or result.replace("_", " "))
                if isinstance(obj.get("memory"), dict):
                    memory = obj["memory"]
                if isinstance(obj.get("tree"), list):
                    members = tuple(m for m in obj["tree"] if isinstance(m, dict))
            else:
                result = "error"
                message = f"the sampler's kill gave no result (exit status {rc}): " + (
                    last_line(err) or last_line(out) or "no output"
                )
        if memory is not None:
            entry["memory"] = dict(memory)
        if members:
            entry["tree_pids"] = [m.get("pid") for m in members]
        entry.update(result=result, message=message)
        append_audit(entry, self.demo)
        return KillResult(
            host=host,
            pid=pid,
            result=result,
            message=message,
            signal=signal,
            memory=memory,
            tree=members,
        )


def _last_json_object(out: bytes) -> dict[str, Any] | None:
    """The last line of ``out`` that is a JSON object (one-shot commands print one)."""
    for raw in reversed(out.splitlines()):
        raw = raw.strip()
        if not raw.startswith(b"{"):
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return None
