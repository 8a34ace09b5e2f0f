"""Which local sampler daemons are running now: so that a command stops only the daemons it
started itself.

The demo fleet's daemons run on this computer and are shared: the desktop app and
``gpufleet serve-metrics`` attach to the same daemon of a demo host (one per backend,
scenario and seed). Each stops, when it exits, the demo daemons that were not running when
it started (they would otherwise sample on for a day); a daemon someone else started is
left to its owner. A daemon holds an flock on its lock file for its whole life, so the test
is the sampler's own ``lock_holder``, with no process spawned and no socket opened.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gpufleet_sampler.state_dir import LOCKS_SUPPORTED, Paths, daemon_key, lock_holder

from gpufleet.core.config.hostconfig import HostConfig


def running_local_daemons(hosts: Iterable[HostConfig], state_dir: str | Path) -> set[str] | None:
    """The names of the local hosts whose sampler daemon runs now under ``state_dir``;
    None where this cannot be told (no flock on this platform)."""
    if not LOCKS_SUPPORTED:  # flock is POSIX-only
        return None
    sd = str(Path(state_dir).expanduser())
    out: set[str] = set()
    for h in hosts:
        if h.transport != "local":
            continue
        if lock_holder(Paths(sd, daemon_key(h.backend, h.scenario, int(h.seed)))) is not None:
            out.add(h.name)
    return out


def started_here(hosts: Iterable[HostConfig], running_before: set[str] | None) -> list[str]:
    """The local hosts whose daemons this process may stop: those not running before it
    started (all of them when that could not be told, as before this check existed)."""
    before = running_before or set()
    return [h.name for h in hosts if h.transport == "local" and h.name not in before]
