"""``gpufleet kill HOST PID``: end a GPU process on a host, safely.

The process is looked up in a fresh process snapshot from the host's sampler: its start time
(clock ticks since boot) goes with the kill, so that a PID reused by another process in the
meantime is refused on the host instead of killed. It shows what it is about to kill and asks
(``--yes`` without a terminal). Exit codes: 0 ended, 5 refused, 6 permission denied, 7 still
running after the grace period, 8 no such process; every attempt is in the audit log.

Inside a container NVML reports the host's PIDs: PID is the process's PID there (the table's
``PID``), and the listing shows how each was matched to NVML's entry (exact, probable). An
NVML entry of a process that is not in the container (another tenant, the host) cannot be
killed from it, and the command says so. ``--tree`` ends the process's children and orphaned
process group too; the GPU memory NVML listed for them is then watched until it is released
(``--watch`` seconds).
"""

from __future__ import annotations

import argparse
import queue
import sys
import time
from typing import Any

from gpufleet_sampler import protocol

from gpufleet.cli import argtypes
from gpufleet.cli.demodaemons import demo_daemons_stopped
from gpufleet.cli.errors import (
    EXIT_CONNECT,
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_PERMISSION,
    EXIT_REFUSED,
    EXIT_STILL_RUNNING,
    EXIT_USAGE,
    CliError,
)
from gpufleet.cli.hostarg import (
    add_live_host_args,
    exit_code_for,
    hostkey_hint,
    resolve_host,
    unknown_key_callback,
)
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import GAVE_UP_STATES
from gpufleet.core.fleet.fleet import Fleet, HostMessage, HostStatus
from gpufleet.core.text.sanitize import clean
from gpufleet.core.wire.messages import Proc, Procs

RESULT_EXIT = {
    "exited": EXIT_OK,
    "refused": EXIT_REFUSED,
    "permission_denied": EXIT_PERMISSION,
    "still_running": EXIT_STILL_RUNNING,
    "not_found": EXIT_NOT_FOUND,
    "error": EXIT_CONNECT,
}
SNAPSHOT_TIMEOUT_S = 30.0
WATCH_S = 15.0
MAPPING_TEXT = {
    protocol.MAP_EXACT: "exact",
    protocol.MAP_PROBABLE: "probable (by creation order)",
    protocol.MAP_NOT_HERE: "not in this container (another tenant or the host)",
    protocol.MAP_NO_MEMORY: "holds the GPU device but no memory NVML can see",
}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "kill",
        help="end a GPU process on a host (checked by PID and start time)",
        description="End a process that uses a GPU on HOST. It is identified by PID and start "
        "time from a fresh process snapshot, so a reused PID is never hit. Exit codes: 0 "
        "ended, 5 refused (the PID now belongs to another process), 6 permission denied, "
        "7 still running after the grace period, 8 no such process.",
    )
    add_live_host_args(p)
    p.add_argument("pid", metavar="PID", type=argtypes.pid)
    p.add_argument("--signal", choices=("TERM", "KILL"), default="TERM")
    p.add_argument(
        "--grace", type=argtypes.non_negative, default=5.0, help="seconds to wait for the exit"
    )
    p.add_argument(
        "--tree",
        action="store_true",
        help="also end its children and its orphaned process group (dataloader workers)",
    )
    p.add_argument(
        "--watch",
        type=argtypes.non_negative,
        default=WATCH_S,
        help="seconds to watch NVML for its GPU memory to be released (0: do not)",
    )
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=run)


def fresh_procs(fleet: Fleet, host: HostConfig, timeout: float) -> Procs:
    """The newest process snapshot: the first one stamped after we asked (the ring's older
    ones come first), or the newest there was when ``timeout`` ran out."""
    events = fleet.subscribe()
    asked = time.time()
    latest: Procs | None = None
    deadline = time.monotonic() + timeout
    fleet.start()
    while time.monotonic() < deadline:
        try:
            ev = events.get(timeout=0.25)
        except queue.Empty:
            continue
        if isinstance(ev, HostStatus) and ev.state in GAVE_UP_STATES:
            raise CliError(
                f"{host.name}: {ev.reason}{hostkey_hint(ev.kind)}", exit_code_for(ev.kind)
            )
        if isinstance(ev, HostStatus) and ev.kind == "refused" and latest is None:
            # Nothing listens there: waiting out the timeout would not change that.
            raise CliError(f"{host.name}: {ev.reason}", exit_code_for(ev.kind))
        if isinstance(ev, HostMessage) and isinstance(ev.msg, Procs):
            latest = ev.msg
            # Clocks of a remote host may be off by a little: a second of slack.
            if ev.msg.t >= asked - 1.0:
                return ev.msg
    if latest is None:
        st = fleet.status(host.name)
        why = f": {st.reason}" if st.reason else ""
        raise CliError(
            f"{host.name}: no process list within {timeout:g} s ({st.state}{why})", EXIT_CONNECT
        )
    stamp = time.strftime("%H:%M:%S", time.localtime(latest.t))
    print(f"gpufleet: using the process list from {stamp} (the host's clock)", file=sys.stderr)
    return latest


def mapping_text(p: Proc) -> str:
    text = MAPPING_TEXT.get(p.mapping or "", "exact (same PID namespace)")
    return text + ("; orphaned: its job is gone" if p.orphan else "")


def describe(host: HostConfig, entries: list[Proc]) -> str:
    p = entries[0]
    gpus = ", ".join(str(e.gpu) for e in entries)
    mem = sum(e.mem_bytes or 0 for e in entries)
    host_pids = sorted({e.host_pid for e in entries if e.host_pid is not None})
    host_pid = ", ".join(str(h) for h in host_pids) or "unknown"
    # User, name and command line come from the instance: escaped, so that they cannot
    # rewrite the confirmation they are part of.
    return (
        f"host:    {clean(host.label)}\n"
        f"GPU:     {gpus}\n"
        f"PID:     {p.pid} (started at tick {p.start_ticks})\n"
        f"host PID (NVML): {host_pid}\n"
        f"match:   {clean('; '.join(sorted({mapping_text(e) for e in entries})))}\n"
        f"user:    {clean(p.user or '?')}\n"
        f"command: {clean(p.cmd or p.name or '?')}\n"
        f"memory:  {mem / 2**30:.1f} GiB"
    )


def pick(snapshot: Procs, host: HostConfig, pid: int) -> list[Proc]:
    """The entries of process ``pid`` here; a clear error for a PID that is only NVML's."""
    entries = [p for p in snapshot.procs if p.pid == pid and p.here]
    if entries:
        return entries
    away = [p for p in snapshot.procs if p.pid == pid or p.host_pid == pid]
    if away:
        mem = sum(p.mem_bytes or 0 for p in away)
        raise CliError(
            f"PID {pid} is NVML's host PID of a process that is not in this container "
            f"(another tenant or the host) holding {mem / 2**30:.1f} GiB: it cannot be seen "
            "or killed from here. Ask the provider, or restart the instance if it is yours",
            EXIT_REFUSED,
        )
    here = [p for p in snapshot.procs if p.here]
    listed = ", ".join(sorted({str(p.pid) for p in here})) or "none"
    raise CliError(
        f"PID {pid} is not using a GPU on {host.name} (GPU processes: {listed})",
        EXIT_NOT_FOUND,
    )


def report_memory(result: Any) -> str | None:
    mem = result.memory
    if not mem:
        return None
    return str(mem.get("message") or "")


def confirm(question: str) -> bool:
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    host = resolve_host(args.host)
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    with demo_daemons_stopped(fleet):
        return kill_on(fleet, host, args)


def kill_on(fleet: Fleet, host: HostConfig, args: argparse.Namespace) -> int:
    """The command on a fleet of this one host (tests pass one with their own opener)."""
    try:
        snapshot = fresh_procs(fleet, host, SNAPSHOT_TIMEOUT_S)
    finally:
        fleet.stop()
    entries = pick(snapshot, host, args.pid)
    start_ticks = entries[0].start_ticks
    if start_ticks is None:
        raise CliError(
            f"the start time of PID {args.pid} on {host.name} is unknown: not killing it blind",
            EXIT_FAILURE,
        )
    print(describe(host, entries), file=sys.stderr)
    what = "its process tree" if args.tree else f"PID {args.pid}"
    if not args.yes:
        if not sys.stdin.isatty():
            raise CliError("not killing without a confirmation: pass --yes", EXIT_USAGE)
        if not confirm(f"Send SIG{args.signal} to {what} on {host.name}?"):
            print("gpufleet: not killed", file=sys.stderr)
            return EXIT_FAILURE
    result = fleet.kill(
        host.name,
        args.pid,
        start_ticks,
        args.signal,
        args.grace,
        args.tree,
        args.watch,
        seen=entries[0],
    )
    code = RESULT_EXIT.get(result.result, EXIT_FAILURE)
    for m in result.tree:
        print(
            f"  PID {m.get('pid')} ({clean(m.get('name') or '?')}): "
            f"{str(m.get('result', '?')).replace('_', ' ')}",
            file=sys.stderr,
        )
    memory = report_memory(result)
    if code != EXIT_OK:
        message = clean(result.message) + (f"; {memory}" if memory else "")
        raise CliError(f"{host.name}: {message}", code)
    print(f"{host.name}: {clean(result.message)}")
    if memory:
        print(f"{host.name}: {memory}")
    return EXIT_OK
