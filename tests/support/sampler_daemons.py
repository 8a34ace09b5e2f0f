"""Test helpers around real sampler daemons: find one's pid, stop them all at teardown, and
wait for conditions on a Fleet's event queue (no fixed sleeps)."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterable
from typing import Any

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import FleetEvent, HostMessage
from gpufleet.core.link import sampler_argv as samplercmd
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.wire.messages import Event, Links, Procs, Sample
from gpufleet_sampler.state_dir import read_state


def daemon_pid(host: HostConfig, state_dir: str) -> int | None:
    st = read_state(host.backend, host.scenario, host.seed, state_dir)
    pid = st.get("pid") if st else None
    return pid if isinstance(pid, int) else None


def stop_daemons(hosts: Iterable[HostConfig], state_dir: str) -> None:
    """Stop the sampler daemons these hosts started (tests must not leave them running)."""
    t = LocalTransport()
    prefix = t.ensure_sampler()
    # Every backend's daemon (an nvml one on the fake NVML too): ``stop`` only talks to the
    # daemon through its state dir, and needs no backend.
    for h in hosts:
        t.run(samplercmd.stop_argv(prefix, h, state_dir), timeout=30.0)


class Recorder:
    """Drains a fleet queue into per-host lists while waiting for a condition."""

    def __init__(self, q: queue.Queue[FleetEvent]) -> None:
        self.q = q
        self.events: list[FleetEvent] = []

    def pump(self, timeout: float = 0.1) -> None:
        try:
            ev = self.q.get(timeout=timeout)
        except queue.Empty:
            return
        self.events.append(ev)
        while True:
            try:
                self.events.append(self.q.get_nowait())
            except queue.Empty:
                return

    def wait(self, cond: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            self.pump()

    def of(self, host: str, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if getattr(e, "host", None) == host and isinstance(e, kind)]

    def msgs(self, host: str, kind: type[Any] = object) -> list[Any]:
        return [
            e.msg
            for e in self.events
            if isinstance(e, HostMessage) and e.host == host and isinstance(e.msg, kind)
        ]

    def seqs(self, host: str) -> list[int]:
        # The daemon's gap notes carry the client's own N, not a seq of their own.
        return [
            m.seq
            for m in self.msgs(host)
            if isinstance(m, (Sample, Procs, Event, Links)) and not is_gap_note(m)
        ]

    def samples(self, host: str) -> list[Sample]:
        return self.msgs(host, Sample)


def is_gap_note(m: Any) -> bool:
    return isinstance(m, Event) and "gap_from" in m.raw


def contiguous(seqs: list[int]) -> bool:
    return bool(seqs) and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
